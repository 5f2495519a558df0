"""The retention log: an append-only file of the cases retained in play.

Appending a Parquet part per hand would make every append rewrite a manifest that lists
all parts, so its cost would grow with the case base. Retention appends here instead:
one *record* per commit (a hand's decisions, any streets), written with one ``write`` (and
``fsync``, see below); the manifest is not touched. Readers read the parts the manifest lists,
then the log's records. :meth:`~cbr.store.CaseBase.compact` moves the log's cases into
Parquet parts and starts a new log generation (``retained/log-NNNNN.bin``) in one
manifest commit.

A record is ``MAGIC`` (4 bytes), the payload length and the payload's CRC-32 (two
little-endian ``uint32``), then the payload: a JSON header (its length first, ``uint32``)
listing per street the rows' count, first case id (the ids of a street run on within a
record, so every record can be checked to continue the id sequence), actions and
provenance, followed per street by the features (float32) and outcomes (float64) as raw
little-endian arrays. Rows stay numpy until a reader needs Arrow (SQL, a compaction), which is
built once for all records.

Durability: every record is written to the operating system before ``append`` returns,
so a process killed (SIGKILL included) loses at most the hand in flight. ``fsync``, which
also survives an operating-system crash or a power cut, costs milliseconds on many
disks; it runs at most every ``sync_every`` seconds (default 1.0: a power cut loses at
most the last second of hands; 0: every record), and always on :meth:`RetentionLog.sync`
(the case base calls it when it compacts or closes).

Crash rules: a process killed while writing leaves at most a torn *last* record
(incomplete, or failing its CRC). Readers ignore it and the next writer truncates it
away (under the write lock) before appending, so the cases of every committed record
survive and the hand in flight is lost whole. A bad record followed by more data is not
a torn write but damage (as is a bad last record whose
header is not a record's), and raises :class:`~cbr.errors.CaseBaseError`.

>>> import tempfile, numpy as np
>>> from pathlib import Path
>>> from cbr.store.parts import row_batch
>>> path = Path(tempfile.mkdtemp()) / "log-00000.bin"
>>> log = RetentionLog(path, first_id=10)
>>> log.append({"flop": (np.arange(10, 12), row_batch(["x"], [[0.5], [1.0]], "cr"))})
>>> with open(path, "ab") as fh: _ = fh.write(b"CBRL\\x99")   # a torn tail, as after a kill
>>> again = RetentionLog(path, first_id=10); new = again.refresh()
>>> again.rows["flop"], again.next_id, again.torn
(2, 12, True)
"""
from __future__ import annotations

import json
import os
import struct
import time
import zlib
from datetime import datetime
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa

from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS
from cbr.store.durable import fsync_dir
from cbr.store.manifest import LOG_PATH_RE
from cbr.store.parts import RowBatch, batch_table, case_schema

__all__ = ["MAGIC", "RetentionLog", "log_file", "start_log", "chunks_table"]

MAGIC = b"CBRL"
_HEAD = struct.Struct("<4sII")  # magic, payload length, CRC-32 of the payload
_PART = struct.Struct("<BI")  # street number, IPC stream length
#: Largest record accepted (a hand has a few dozen decisions; this is far above).
MAX_RECORD = 64 << 20


def log_file(generation: int) -> str:
    """The relative path of log generation ``generation``.

    >>> log_file(3)
    'retained/log-00003.bin'
    """
    return f"retained/log-{generation:05d}.bin"


def start_log(root: Path) -> str:
    """Create the next log generation of the case base at ``root``, empty and durable (file
    and directory entries synced); returns its relative path (a number above every log
    file present, so a generation is never reused)."""
    d = root / "retained"
    numbers = [int(mt.group(1)) for f in (d.iterdir() if d.is_dir() else ())
               if (mt := LOG_PATH_RE.match(f"retained/{f.name}"))]
    rel = log_file(max(numbers, default=-1) + 1)
    d.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(d)
    fsync_dir(root)
    return rel


Chunk = tuple[np.ndarray, RowBatch]  # case ids and their rows


def _encode(chunks: Mapping[str, Chunk]) -> bytes:
    header, blobs = [], []
    for st in STREETS:
        if st not in chunks or len(chunks[st][1]) == 0:
            continue
        ids, b = chunks[st]
        header.append({"street": st, "n": len(b), "first_id": int(ids[0]), "d": int(b.features.shape[1]),
                       "actions": "".join(b.actions), "meta": b.meta,
                       "retained_at": [None if t is None else t.isoformat() for t in b.retained_at]})
        blobs.append(np.ascontiguousarray(b.features, dtype="<f4").tobytes())
        blobs.append(np.ascontiguousarray(b.outcomes, dtype="<f8").tobytes())
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    return struct.pack("<I", len(head)) + head + b"".join(blobs)


def _decode(payload: bytes, where: str) -> dict[str, Chunk]:
    try:
        (hlen,) = struct.unpack_from("<I", payload, 0)
        header = json.loads(payload[4:4 + hlen].decode("utf-8"))
        pos = 4 + hlen
        out: dict[str, Chunk] = {}
        for h in header:
            st, n, d = h["street"], int(h["n"]), int(h["d"])
            if st not in STREETS or st in out or n < 1 or d < 1:
                raise ValueError(f"bad street entry {st!r}")
            X = np.frombuffer(payload, dtype="<f4", count=n * d, offset=pos).reshape(n, d).astype(np.float32)
            pos += 4 * n * d
            outcomes = np.frombuffer(payload, dtype="<f8", count=n, offset=pos).astype(np.float64)
            pos += 8 * n
            actions = list(h["actions"])
            meta = {k: list(v) for k, v in h["meta"].items()}
            times = [None if t is None else datetime.fromisoformat(t) for t in h["retained_at"]]
            if len(actions) != n or len(times) != n or any(len(v) != n for v in meta.values()):
                raise ValueError("column lengths differ")
            ids = np.arange(int(h["first_id"]), int(h["first_id"]) + n, dtype=np.int64)
            out[st] = (ids, RowBatch(X, actions, outcomes, meta, times))
        if pos != len(payload):
            raise ValueError("trailing bytes")
        return out
    except (ValueError, KeyError, TypeError, struct.error, UnicodeDecodeError) as exc:
        raise CaseBaseError(f"{where}: unreadable record ({exc})") from None


class RetentionLog:
    """One log generation: its committed records, read incrementally.

    ``first_id``: the first case id the log may hold (the manifest's ``next_case_id``).
    After :meth:`refresh`: ``rows`` per street, ``chunks`` (``(case ids, RowBatch)`` per
    record and street, in commit order), ``next_id`` (one above the last case id), ``end`` (bytes of
    valid records) and ``torn`` (whether a torn record follows them).
    """

    def __init__(self, path: Path, first_id: int, *, sync_every: float = 1.0) -> None:
        if not sync_every >= 0:
            raise ValueError(f"sync_every must be at least 0 seconds, got {sync_every!r}")
        self.sync_every = float(sync_every)
        self._synced_at = time.monotonic()
        self._unsynced = False
        self.path = Path(path)
        self.first_id = int(first_id)
        self.next_id = int(first_id)
        self.end = 0
        self.torn = False
        self.records = 0
        self.rows: dict[str, int] = {s: 0 for s in STREETS}
        self.chunks: dict[str, list[Chunk]] = {s: [] for s in STREETS}

    def __repr__(self) -> str:
        return f"RetentionLog({str(self.path)!r}, records={self.records}, next_id={self.next_id})"

    def refresh(self) -> dict[str, list[Chunk]]:
        """Read the records committed since the last call; returns them per street. A
        missing file is an empty log (created by the first append)."""
        new: dict[str, list[Chunk]] = {s: [] for s in STREETS}
        try:
            fh = open(self.path, "rb")
        except FileNotFoundError:
            return new
        except OSError as exc:
            raise CaseBaseError(f"cannot read the retention log {self.path}: {exc.strerror or exc}") from None
        with fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(self.end)
            data = fh.read(size - self.end)
        pos = 0
        self.torn = False
        where = f"retention log {self.path}"
        while pos < len(data):
            at = self.end + pos
            if pos + _HEAD.size > len(data):
                self.torn = True
                break
            magic, n, crc = _HEAD.unpack_from(data, pos)
            body = data[pos + _HEAD.size: pos + _HEAD.size + n]
            last = pos + _HEAD.size + n >= len(data)
            if magic != MAGIC or n > MAX_RECORD or len(body) < n or zlib.crc32(body) != crc:
                if (last and magic == MAGIC) or not data[pos:].strip(b"\0"):
                    self.torn = True  # the last record cut by a crash (or a zero-filled tail): not committed
                    break
                raise CaseBaseError(f"{where}: damaged record at byte {at} with committed records after it; "
                                    f"the case base is damaged")
            chunks = _decode(body, f"{where} (byte {at})")
            ids_all = sorted(int(i) for ids, _ in chunks.values() for i in ids)
            if ids_all != list(range(self.next_id, self.next_id + len(ids_all))):
                raise CaseBaseError(f"{where}: the case ids of the record at byte {at} do not follow "
                                    f"{self.next_id - 1}; the case base is damaged")
            for s, chunk in chunks.items():
                new[s].append(chunk)
                self.chunks[s].append(chunk)
                self.rows[s] += len(chunk[1])
            if ids_all:
                self.next_id = ids_all[-1] + 1
            self.records += 1
            pos += _HEAD.size + n
        self.end += pos
        return new

    def append(self, chunks: Mapping[str, Chunk]) -> None:
        """Commit one record (call with the case base's write lock held, after
        :meth:`refresh`): truncate a torn tail, write, ``fsync`` if ``sync_every`` has passed.
        The case ids (contiguous per street) must run on from :attr:`next_id`."""
        ids = sorted(int(i) for c_ids, _ in chunks.values() for i in c_ids)
        if not ids:
            return
        if ids != list(range(self.next_id, self.next_id + len(ids))):
            raise CaseBaseError(f"retention log {self.path}: a record's case ids must run from {self.next_id}")
        for c_ids, _ in chunks.values():
            if len(c_ids) and list(c_ids) != list(range(int(c_ids[0]), int(c_ids[0]) + len(c_ids))):
                raise CaseBaseError(f"retention log {self.path}: a street's case ids must be contiguous in a record")
        payload = _encode(chunks)
        record = _HEAD.pack(MAGIC, len(payload), zlib.crc32(payload)) + payload
        created = not self.path.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            if os.fstat(fd).st_size != self.end:
                os.ftruncate(fd, self.end)  # drop a torn tail left by a killed writer
            os.lseek(fd, self.end, os.SEEK_SET)
            view = memoryview(record)
            while view:
                view = view[os.write(fd, view):]
            now = time.monotonic()
            if now - self._synced_at >= self.sync_every:
                os.fsync(fd)
                self._synced_at, self._unsynced = now, False
            else:
                self._unsynced = True
        finally:
            os.close(fd)
        if created:
            fsync_dir(self.path.parent)
        for s, chunk in chunks.items():
            if len(chunk[1]):
                self.chunks[s].append(chunk)
                self.rows[s] += len(chunk[1])
        self.next_id = ids[-1] + 1
        self.end += len(record)
        self.records += 1
        self.torn = False

    def sync(self) -> None:
        """``fsync`` the records written since the last one (a no-op when there are none)."""
        if self._unsynced:
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            self._synced_at, self._unsynced = time.monotonic(), False

    def table(self, street: str, feature_names: Sequence[str]) -> pa.Table:
        """All of a street's logged cases as one Arrow table (built once per call)."""
        return chunks_table(self.chunks[street], feature_names)


def chunks_table(chunks: Sequence[Chunk], feature_names: Sequence[str]) -> pa.Table:
    """One Arrow table of logged chunks, in order."""
    if not chunks:
        return case_schema(feature_names).empty_table()
    ids = np.concatenate([c[0] for c in chunks])
    return batch_table(feature_names, ids, RowBatch.concat([c[1] for c in chunks], len(feature_names)))
