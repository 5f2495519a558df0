"""The retention log: an append-only file of the cases retained in play.

Appending a Parquet part per hand would make every append rewrite a manifest that lists
all parts, so its cost would grow with the case base. Retention appends here instead:
one *record* per commit (a hand's decisions, any streets), written with one ``write`` (and
``fsync``, see below); the manifest is not touched. Readers read the parts the manifest lists,
then the log's records. :meth:`~cbr.store.CaseBase.fold` moves the log's cases into
Parquet parts and starts a new log generation (``retained/log-NNNNN.bin``) in one
manifest commit.

A record is ``MAGIC`` (4 bytes), the payload length and the payload's CRC-32 (two
little-endian ``uint32``), then the payload: per street with cases, the street number
(``uint8``), a length (``uint32``) and an Arrow IPC stream of that street's case rows
(case ids included, so every record can be checked to continue the id sequence).

Durability: every record is written to the operating system before ``append`` returns,
so a process killed (SIGKILL included) loses at most the hand in flight. ``fsync``, which
also survives an operating-system crash or a power cut, costs milliseconds on many
disks; it runs at most every ``sync_every`` seconds (default 1.0: a power cut loses at
most the last second of hands; 0: every record), and always on :meth:`RetentionLog.sync`
(the case base calls it when it folds or closes).

Crash rules: a process killed while writing leaves at most a torn *last* record
(incomplete, or failing its CRC). Readers ignore it and the next writer truncates it
away (under the write lock) before appending, so the cases of every committed record
survive and the hand in flight is lost whole. A bad record followed by more data is not
a torn write but damage (as is a bad last record whose
header is not a record's), and raises :class:`~cbr.errors.CaseBaseError`.

>>> import tempfile, numpy as np
>>> from pathlib import Path
>>> from cbr.store.parts import build_table
>>> path = Path(tempfile.mkdtemp()) / "log-00000.bin"
>>> log = RetentionLog(path, first_id=10)
>>> log.append({"flop": build_table(["x"], 10, [[0.5], [1.0]], "cr")})
>>> with open(path, "ab") as fh: _ = fh.write(b"CBRL\\x99")   # a torn tail, as after a kill
>>> again = RetentionLog(path, first_id=10); new = again.refresh()
>>> again.rows["flop"], again.next_id, again.torn
(2, 12, True)
"""
from __future__ import annotations

import io
import os
import struct
import time
import zlib
from pathlib import Path
from typing import Mapping

import pyarrow as pa

from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS
from cbr.store.durable import fsync_dir

__all__ = ["MAGIC", "RetentionLog", "log_file"]

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


def _encode(tables: Mapping[str, pa.Table]) -> bytes:
    out = io.BytesIO()
    for s in STREETS:
        t = tables.get(s)
        if t is None or t.num_rows == 0:
            continue
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, t.schema) as w:
            w.write_table(t)
        buf = sink.getvalue().to_pybytes()
        out.write(_PART.pack(STREETS.index(s), len(buf)))
        out.write(buf)
    return out.getvalue()


def _decode(payload: bytes, where: str) -> dict[str, pa.Table]:
    tables: dict[str, pa.Table] = {}
    pos = 0
    while pos < len(payload):
        if pos + _PART.size > len(payload):
            raise CaseBaseError(f"{where}: a record's street header is cut short")
        street, n = _PART.unpack_from(payload, pos)
        pos += _PART.size
        if street >= len(STREETS) or pos + n > len(payload) or STREETS[street] in tables:
            raise CaseBaseError(f"{where}: a record names a bad street or length")
        try:
            tables[STREETS[street]] = pa.ipc.open_stream(payload[pos:pos + n]).read_all()
        except (pa.ArrowException, ValueError) as exc:
            raise CaseBaseError(f"{where}: unreadable record ({str(exc).splitlines()[0]})") from None
        pos += n
    return tables


class RetentionLog:
    """One log generation: its committed records, read incrementally.

    ``first_id``: the first case id the log may hold (the manifest's ``next_case_id``).
    After :meth:`refresh`: ``rows`` per street, ``tables`` (list of Arrow tables per
    street, in commit order), ``next_id`` (one above the last case id), ``end`` (bytes of
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
        self.tables: dict[str, list[pa.Table]] = {s: [] for s in STREETS}

    def __repr__(self) -> str:
        return f"RetentionLog({str(self.path)!r}, records={self.records}, next_id={self.next_id})"

    def refresh(self) -> dict[str, list[pa.Table]]:
        """Read the records committed since the last call; returns them per street. A
        missing file is an empty log (created by the first append)."""
        new: dict[str, list[pa.Table]] = {s: [] for s in STREETS}
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
            tables = _decode(body, f"{where} (byte {at})")
            for s, t in tables.items():
                ids = t.column("case_id").to_numpy()
                if len(ids) and (ids[0] < self.next_id or (len(ids) > 1 and (ids[1:] <= ids[:-1]).any())):
                    raise CaseBaseError(f"{where}: the case ids of the record at byte {at} do not follow "
                                        f"{self.next_id - 1}; the case base is damaged")
            ids_all = [int(t.column("case_id")[-1].as_py()) for t in tables.values() if t.num_rows]
            for s, t in tables.items():
                new[s].append(t)
                self.tables[s].append(t)
                self.rows[s] += t.num_rows
            if ids_all:
                self.next_id = max(ids_all) + 1
            self.records += 1
            pos += _HEAD.size + n
        self.end += pos
        return new

    def append(self, tables: Mapping[str, pa.Table]) -> None:
        """Commit one record (call with the case base's write lock held, after
        :meth:`refresh`): truncate a torn tail, write, ``fsync`` if ``sync_every`` has passed. The tables' case ids
        must start at :attr:`next_id`."""
        ids = sorted(int(i) for t in tables.values() for i in t.column("case_id").to_numpy())
        if not ids:
            return
        if ids[0] != self.next_id or ids != list(range(ids[0], ids[0] + len(ids))):
            raise CaseBaseError(f"retention log {self.path}: a record's case ids must run from {self.next_id}")
        payload = _encode(tables)
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
        for s, t in tables.items():
            if t.num_rows:
                self.tables[s].append(t)
                self.rows[s] += t.num_rows
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

    def table(self, street: str, schema: pa.Schema) -> pa.Table:
        """All of a street's logged cases as one table (``schema``'s columns)."""
        parts = self.tables[street]
        if not parts:
            return schema.empty_table()
        return pa.concat_tables(parts).cast(schema) if not parts[0].schema.equals(schema) else pa.concat_tables(parts)
