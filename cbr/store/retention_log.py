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
little-endian arrays. The payload describes its own size (the header's row and feature
counts), so the length field is checked twice. Rows stay numpy until a reader needs Arrow
(SQL, a compaction), which is built once for all records.

Durability: every record is written to the operating system before ``append`` returns,
so a process killed (SIGKILL included) loses at most the hand in flight. ``fsync``, which
also survives an operating-system crash or a power cut, costs milliseconds on many
disks; it runs at most every ``sync_every`` seconds (default 1.0: a power cut loses at
most the last second of hands, plus the few milliseconds that ``fsync`` takes; 0: every
record, before ``append`` returns), and always on :meth:`RetentionLog.sync` (the case base
calls it when it compacts or closes). With ``sync_every`` above 0 the periodic ``fsync``
runs on a background thread (:class:`BackgroundSync`), so play does not wait for the disk.

What a crash can leave, and nothing else, is a *torn tail*: the file ends inside its last
record (the header cut short, or a complete header whose payload is cut short: a prefix of
a record that was being written), or it ends in zero bytes (a file system that had grown
the file but not written the data at a power cut). Readers ignore a torn tail and the
next writer cuts it off (under the write lock) before appending, so the cases of every
committed record survive and the hand in flight is lost whole. Anything else is damage
and raises one :class:`~cbr.errors.CaseBaseError` naming the file and the byte offset, for
readers and writers alike (a writer never cuts what is not a torn tail): a complete record
whose CRC fails; a length field that disagrees with the payload's own description of its
size (so a flipped length byte is never taken for a torn tail, wherever it points);
bytes that do not start a record. ``cbr casebase repair`` keeps every sound record, before
and after the damage, and moves only the damaged bytes into files beside the log
(:func:`salvage_log`, :mod:`cbr.store.verify`).

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
>>> with open(path, "ab") as fh: _ = fh.write(b"more bytes")   # no crash writes this
>>> RetentionLog(path, first_id=10).refresh()
Traceback (most recent call last):
cbr.errors.CaseBaseError: retention log ...: damaged record at byte 368: impossible record length ...
"""
from __future__ import annotations

import json
import os
import struct
import threading
import time
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from cbr.errors import CaseBaseError, counted
from cbr.game.gamedef import STREETS
from cbr.store.durable import fsync_dir
from cbr.store.manifest import LOG_PATH_RE
from cbr.store.parts import RowBatch, batch_table, case_schema

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["MAGIC", "MAX_RECORD", "RetentionLog", "LogScan", "scan_log", "Salvage", "DamagedRun", "salvage_log",
           "record_bytes", "log_file", "start_log", "chunks_table", "BackgroundSync"]

MAGIC = b"CBRL"
_HEAD = struct.Struct("<4sII")  # magic, payload length, CRC-32 of the payload
_U32 = struct.Struct("<I")
#: Largest record payload (a hand has a few dozen decisions; this is far above). ``append``
#: refuses larger ones, so a reader knows no writer ever wrote a longer length field.
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
    return _U32.pack(len(head)) + head + b"".join(blobs)


def record_bytes(chunks: Mapping[str, Chunk]) -> bytes:
    """One whole record of ``chunks``: the header (magic, payload length, CRC-32), then the payload."""
    payload = _encode(chunks)
    return _HEAD.pack(MAGIC, len(payload), zlib.crc32(payload)) + payload


def _payload_size(header: Any, hlen: int) -> int:
    """The payload size a record's JSON header describes (raises ``ValueError`` if it
    describes none): the header, then per street n*d float32 features and n float64 outcomes."""
    if not isinstance(header, list):
        raise ValueError("the header is not a list of streets")
    size = _U32.size + hlen
    for h in header:
        n, d = h["n"], h["d"]
        if type(n) is not int or type(d) is not int or n < 1 or d < 1:
            raise ValueError("bad row or feature count")
        size += 4 * n * d + 8 * n
    return size


def _decode(payload: bytes) -> dict[str, Chunk]:
    """The chunks of a record's payload; raises ``ValueError`` naming what is wrong."""
    try:
        (hlen,) = _U32.unpack_from(payload, 0)
        header = json.loads(payload[4:4 + hlen].decode("utf-8"))
        if _payload_size(header, hlen) != len(payload):
            raise ValueError("the header describes another size")
        pos = 4 + hlen
        out: dict[str, Chunk] = {}
        for h in header:
            st, n, d = h["street"], int(h["n"]), int(h["d"])
            if st not in STREETS or st in out:
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
        return out
    except (ValueError, KeyError, TypeError, AttributeError, struct.error, UnicodeDecodeError) as exc:
        raise ValueError(f"unreadable record ({exc})") from None


_NOT_A_RECORD = "bytes that are not a record (no record marker)"


def _torn_payload(body: bytes, n: int) -> str | None:
    """None if ``body`` (shorter than ``n``) can be the start of an ``n``-byte payload being
    written; else why not. Checked as far as the bytes go: the header length fits in ``n``,
    and once the JSON header is all there, it reads and describes exactly ``n`` bytes."""
    if len(body) < _U32.size:
        return None
    (hlen,) = _U32.unpack_from(body)
    if _U32.size + hlen > n:
        return f"its length field says {n:,} bytes, less than its own header"
    if len(body) < _U32.size + hlen:
        return None
    try:
        size = _payload_size(json.loads(body[4:4 + hlen].decode("utf-8")), hlen)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return f"its length field says {n:,} bytes, and its header is unreadable"
    if size != n:
        return f"its length field says {n:,} bytes, its header describes {size:,} (a damaged length, not a crash)"
    return None


def _record_at(data: bytes, pos: int) -> int | str | None:
    """What starts at ``data[pos:]``: the size of a complete record whose CRC holds (int),
    None for a torn tail (see the module docstring), or why it is damage (str)."""
    rest = len(data) - pos
    if rest < _HEAD.size or data[pos:pos + 4] != MAGIC:
        if not data[pos:].strip(b"\0"):
            return None  # zeros to the end: grown but never written (a power cut)
        if rest < _HEAD.size and data[pos:pos + 4] == MAGIC[:min(rest, 4)]:
            if rest < 8 or _U32.size <= _U32.unpack_from(data, pos + 4)[0] <= MAX_RECORD:
                return None  # a header cut short
            return f"impossible record length {_U32.unpack_from(data, pos + 4)[0]:,}"
        return _NOT_A_RECORD
    _, n, crc = _HEAD.unpack_from(data, pos)
    if not _U32.size <= n <= MAX_RECORD:
        return f"impossible record length {n:,}"
    body = data[pos + _HEAD.size:pos + _HEAD.size + n]
    if len(body) < n:
        return _torn_payload(body, n)
    if zlib.crc32(body) != crc:
        return "its checksum fails on a complete record (not a crash: damage)"
    return _HEAD.size + n


@dataclass
class LogScan:
    """What :func:`scan_log` found: ``records`` (byte offset and chunks of each sound record,
    in order), ``end`` (the offset after the last of them), ``next_id``, ``torn`` (bytes of
    a torn tail after ``end``) and ``damage`` (``(offset, why)`` of the first damage; the
    records before it are sound, nothing after it is read)."""

    records: list[tuple[int, dict[str, Chunk]]] = field(default_factory=list)
    end: int = 0
    next_id: int = 0
    torn: int = 0
    damage: tuple[int, str] | None = None


def scan_log(data: bytes, next_id: int, *, offset: int = 0) -> LogScan:
    """Walk the records of ``data`` (the log's bytes from byte ``offset``), whose case ids
    must run on from ``next_id``; stops at a torn tail or at the first damage.

    >>> import numpy as np
    >>> from cbr.store.parts import row_batch
    >>> payload = _encode({"flop": (np.arange(3, 4), row_batch(["x"], [[0.5]], "c"))})
    >>> record = _HEAD.pack(MAGIC, len(payload), zlib.crc32(payload)) + payload
    >>> s = scan_log(record + record[:7], next_id=3)
    >>> len(s.records), s.end == len(record), s.torn, s.damage
    (1, True, 7, None)
    >>> bad = bytearray(record); bad[6] ^= 0x10         # a flipped length bit: points past the end
    >>> scan_log(bytes(bad) + record, next_id=3).damage
    (0, 'its length field says 1,048,... bytes, its header describes 2... (a damaged length, not a crash)')
    """
    scan = LogScan(end=offset, next_id=next_id)
    pos = 0
    while pos < len(data):
        at = offset + pos
        size = _record_at(data, pos)
        if size is None:
            scan.torn = len(data) - pos
            break
        if isinstance(size, str):
            scan.damage = (at, size)
            break
        try:
            chunks = _decode(data[pos + _HEAD.size:pos + size])
        except ValueError as exc:
            scan.damage = (at, str(exc))
            break
        ids = sorted(int(i) for c_ids, _ in chunks.values() for i in c_ids)
        if ids != list(range(scan.next_id, scan.next_id + len(ids))):
            scan.damage = (at, f"its case ids do not follow {scan.next_id - 1}")
            break
        scan.records.append((at, chunks))
        scan.next_id += len(ids)
        pos += size
        scan.end = offset + pos
    return scan


@dataclass
class DamagedRun:
    """Bytes :func:`salvage_log` sets aside: ``offset`` and ``end`` in the log, ``why`` the
    first record there is damage, the ``records`` (record markers, at least one when cases
    were lost) and ``cases`` it held (None: unknown, a damaged end of the log whose record
    header cannot be read)."""

    offset: int
    end: int
    why: str
    records: int = 0
    cases: int | None = 0


@dataclass
class Salvage:
    """What :func:`salvage_log` found: ``records`` (byte offset, size and chunks of every sound
    record, with the case ids they were written with), ``damaged`` (the runs of bytes between
    them that are damage), ``torn`` (bytes of a torn tail at the end) and ``next_id`` (one
    above the last id kept)."""

    records: list[tuple[int, int, dict[str, Chunk]]] = field(default_factory=list)
    damaged: list[DamagedRun] = field(default_factory=list)
    torn: int = 0
    next_id: int = 0

    @property
    def cases_kept(self) -> int:
        return sum(len(ids) for _, _, chunks in self.records for ids, _b in chunks.values())

    @property
    def records_lost(self) -> int:
        return sum(r.records for r in self.damaged)

    @property
    def cases_lost(self) -> int | None:
        """Cases of the damaged records (None when a damaged end hides how many)."""
        counts = [r.cases for r in self.damaged]
        return None if None in counts else sum(c for c in counts if c is not None)


def _sound_at(data: bytes, pos: int, least_id: int) -> tuple[int, dict[str, Chunk], int, int] | None:
    """``(size, chunks, first id, cases)`` of a sound record at ``data[pos:]`` (CRC, contents,
    case ids contiguous and from ``least_id`` on), else None."""
    size = _record_at(data, pos)
    if not isinstance(size, int):
        return None
    try:
        chunks = _decode(data[pos + _HEAD.size:pos + size])
    except ValueError:
        return None
    ids = sorted(int(i) for c_ids, _ in chunks.values() for i in c_ids)
    if not ids:  # a record of no case (no writer writes one; readers take it)
        return size, chunks, least_id, 0
    if ids[0] < least_id or ids != list(range(ids[0], ids[0] + len(ids))):
        return None
    return size, chunks, ids[0], len(ids)


def _markers(data: bytes, pos: int, end: int) -> tuple[int, int, bool]:
    """In the damaged run ``data[pos:end]``: the records whose markers follow one another by
    their length fields, the cases their JSON headers count, and whether bytes that may hide
    more cases are left (bytes no marker leads, or a header that cannot be read)."""
    records, cases, p = 0, 0, pos
    while p + _HEAD.size <= end and data[p:p + 4] == MAGIC:
        records += 1
        _, n, _ = _HEAD.unpack_from(data, p)
        try:
            (hlen,) = _U32.unpack_from(data, p + _HEAD.size)
            header = json.loads(data[p + _HEAD.size + 4:p + _HEAD.size + 4 + hlen].decode("utf-8"))
            cases += sum(int(h["n"]) for h in header)
        except (ValueError, KeyError, TypeError, struct.error, UnicodeDecodeError):
            return records, cases, True
        if not _U32.size <= n <= MAX_RECORD or p + _HEAD.size + n >= end:
            return records, cases, False  # the run ends inside this record: its header counted it
        p += _HEAD.size + n
    rest = data[p:end]
    return records, cases, len(rest) >= _HEAD.size + _U32.size and bool(rest.strip(b"\0"))


def salvage_log(data: bytes, next_id: int) -> Salvage:
    """Every sound record of a damaged log ``data`` whose case ids start at ``next_id``, and the
    runs of damaged bytes between them (what ``cbr casebase repair`` keeps and sets aside).

    Where :func:`scan_log` stops at the first damage, this resynchronises on the next record
    that passes its checksum (and whose case ids run on): the one right after a damaged
    payload (its header gives the length), or, when the length field itself is damaged, the
    next record marker found by scanning on whose record is sound. Cases lost in a run are
    the gap in the case ids before the next sound record; in a damaged end of the log, what
    the damaged records' headers count (None if they cannot be read).

    >>> import numpy as np
    >>> from cbr.store.parts import row_batch
    >>> recs = [record_bytes({"flop": (np.arange(i, i + 1), row_batch(["x"], [[0.5]], "c"))}) for i in range(3)]
    >>> bad = bytearray(recs[1]); bad[-1] ^= 0x01            # a flipped payload byte in the middle record
    >>> s = salvage_log(recs[0] + bytes(bad) + recs[2], next_id=0)
    >>> [int(c["flop"][0][0]) for _, _, c in s.records], [(r.offset, r.end, r.records, r.cases) for r in s.damaged]
    ([0, 2], [(294, 588, 1, 1)])
    >>> s = salvage_log(recs[0] + recs[1] + bytes(bad), next_id=0)   # at the end: its header counts its cases
    >>> len(s.records), [(r.offset, r.records, r.cases) for r in s.damaged], s.cases_lost, s.next_id
    (2, [(588, 1, 1)], 1, 2)
    """
    out = Salvage(next_id=next_id)
    pos, expected = 0, next_id
    while pos < len(data):
        found = _sound_at(data, pos, expected)
        if found is not None:
            size, chunks, first, n = found
            if first > expected and out.damaged and out.damaged[-1].end == pos:  # the ids the run took
                run = out.damaged[-1]
                run.cases = first - expected
                run.records = max(run.records, 1)
            elif first > expected:  # a whole record missing, no byte of it left: ids lost all the same
                out.damaged.append(DamagedRun(pos, pos, f"case ids {expected} to {first - 1} are missing",
                                              1, first - expected))
            out.records.append((pos, size, chunks))
            expected = first + n
            pos += size
            continue
        what = _record_at(data, pos)
        if what is None:
            out.torn = len(data) - pos
            break
        inner = None if isinstance(what, str) else scan_log(data[pos:pos + what], expected).damage
        why = what if isinstance(what, str) else inner[1] if inner is not None else "unreadable record"
        q = data.find(MAGIC, pos + 1)
        while q != -1 and _sound_at(data, q, expected) is None:
            q = data.find(MAGIC, q + 1)
        end = len(data) if q == -1 else q
        records, cases, hidden = _markers(data, pos, end)
        if q == -1:  # the end of the log: no later record tells the ids it took
            out.damaged.append(DamagedRun(pos, end, why, max(records, int(hidden)), None if hidden else cases))
        else:  # the next sound record's ids tell the cases (see above)
            out.damaged.append(DamagedRun(pos, end, why, records, 0))
        pos = end
    out.next_id = expected
    return out


def damage_error(path: Path, at: int, why: str, sound: int) -> CaseBaseError:
    """The one-line error of damage at byte ``at`` of the log ``path`` (``sound``: records before it)."""
    root = path.parent.parent if path.parent.name == "retained" else path.parent
    before = "1 record before it is" if sound == 1 else f"{sound:,} records before it are"
    return CaseBaseError(f"retention log {path}: damaged record at byte {at}: {why}; {before} sound: "
                         f"`cbr casebase repair {root}` keeps every sound record and sets the damaged ones aside")


class BackgroundSync:
    """One daemon thread that syncs (``fsync``) the files handed to it, so a writer need not wait for
    the disk; :meth:`wait` blocks until a file handed over has been synced. A file deleted
    before its turn is skipped (a retired log: a compaction synced its cases into parts).
    Errors are not raised here: the synchronous :meth:`RetentionLog.sync` on close reports them.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "f"; _ = path.write_bytes(b"x")
    >>> syncer = BackgroundSync(); syncer.submit(path); syncer.wait(path); syncer.synced
    1
    """

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._pending: list[Path] = []
        self._current: Path | None = None
        self._thread: threading.Thread | None = None
        self.synced = 0  # files synced (a count for tests and benchmarks)

    def submit(self, path: Path) -> None:
        """Have ``path`` synced soon (once, however often it is handed over meanwhile)."""
        with self._cv:
            if path not in self._pending:
                self._pending.append(path)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="cbr-log-fsync", daemon=True)
                self._thread.start()
            self._cv.notify_all()

    def wait(self, path: Path) -> None:
        """Return once ``path`` is neither waiting nor being synced."""
        with self._cv:
            while path in self._pending or self._current == path:
                self._cv.wait()

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._pending:
                    self._cv.wait()
                self._current = self._pending.pop(0)
            path = self._current
            try:
                fd = os.open(path, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError:
                pass
            with self._cv:
                self.synced += 1
                self._current = None
                self._cv.notify_all()

    def _after_fork(self) -> None:
        """In a forked child: no thread runs; start afresh."""
        self._cv = threading.Condition()
        self._pending, self._current, self._thread = [], None, None


#: The process's background syncer (shared by every log it writes).
_SYNCER = BackgroundSync()
os.register_at_fork(after_in_child=_SYNCER._after_fork)


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
        missing file is an empty log (created by the first append). Raises
        :class:`CaseBaseError` at damage (see the module docstring)."""
        new: dict[str, list[Chunk]] = {s: [] for s in STREETS}
        try:
            if os.stat(self.path).st_size == self.end:  # nothing committed since: no need to open it
                return new
            fh = open(self.path, "rb")
        except FileNotFoundError:
            return new
        except OSError as exc:
            raise CaseBaseError(f"cannot read the retention log {self.path}: {exc.strerror or exc}") from None
        with fh:
            size = os.fstat(fh.fileno()).st_size
            if size < self.end:
                raise self._shrunk(size)
            fh.seek(self.end)
            data = fh.read(size - self.end)
        scan = scan_log(data, self.next_id, offset=self.end)
        if scan.damage is not None:
            raise damage_error(self.path, *scan.damage, self.records + len(scan.records))
        for _, chunks in scan.records:
            for s, chunk in chunks.items():
                new[s].append(chunk)
                self.chunks[s].append(chunk)
                self.rows[s] += len(chunk[1])
        self.records += len(scan.records)
        self.next_id = scan.next_id
        self.end = scan.end
        self.torn = scan.torn > 0
        return new

    def _shrunk(self, size: int) -> CaseBaseError:
        return CaseBaseError(f"retention log {self.path}: {size:,} bytes, shorter than the {self.end:,} bytes read "
                             f"before: it was replaced (repaired?) meanwhile; open the case base again")

    def _cut_torn_tail(self, fd: int) -> None:
        """Cut what follows the records read, if it is a torn tail; refuse anything else."""
        size = os.fstat(fd).st_size
        if size == self.end:
            return
        if size < self.end:
            raise self._shrunk(size)
        tail = os.pread(fd, size - self.end, self.end)
        what = _record_at(tail, 0)
        if isinstance(what, int):
            raise CaseBaseError(f"retention log {self.path}: a record at byte {self.end} was committed by another "
                                f"writer and not read by this one; refresh before appending")
        if isinstance(what, str):
            raise damage_error(self.path, self.end, what, self.records)
        os.ftruncate(fd, self.end)  # a torn tail left by a killed writer

    def append(self, chunks: Mapping[str, Chunk]) -> None:
        """Commit one record (call with the case base's write lock held, after
        :meth:`refresh`): cut a torn tail, write, ``fsync`` if ``sync_every`` has passed.
        The case ids (contiguous per street) must run on from :attr:`next_id`; a record
        holds at most :data:`MAX_RECORD` bytes."""
        runs = sorted((np.asarray(c_ids, dtype=np.int64).tolist() for c_ids, _ in chunks.values() if len(c_ids)),
                      key=lambda r: r[0])
        if not runs:
            return
        for r in runs:
            if r != list(range(r[0], r[0] + len(r))):
                raise CaseBaseError(f"retention log {self.path}: a street's case ids must be contiguous in a record")
        ids = [i for r in runs for i in r]
        if ids != list(range(self.next_id, self.next_id + len(ids))):
            raise CaseBaseError(f"retention log {self.path}: a record's case ids must run from {self.next_id}")
        payload = _encode(chunks)
        if len(payload) > MAX_RECORD:
            raise CaseBaseError(f"retention log {self.path}: {counted(len(ids), 'case')} make a record of {len(payload):,} bytes, "
                                f"above the {MAX_RECORD:,} one commit may hold; append fewer cases at a time")
        record = _HEAD.pack(MAGIC, len(payload), zlib.crc32(payload)) + payload
        created = False
        try:  # the usual case, the log exists: one open, no stat or mkdir per commit
            fd = os.open(self.path, os.O_RDWR)
        except FileNotFoundError:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            created = True
        try:
            self._cut_torn_tail(fd)
            os.lseek(fd, self.end, os.SEEK_SET)
            view = memoryview(record)
            while view:
                view = view[os.write(fd, view):]
            now = time.monotonic()
            if self.sync_every == 0:
                os.fsync(fd)
                self._synced_at, self._unsynced = now, False
            else:
                if now - self._synced_at >= self.sync_every:
                    _SYNCER.submit(self.path)
                    self._synced_at = now
                self._unsynced = True  # until sync(): the background fsync may not have run yet
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
        """``fsync`` the records written since the last one (a no-op when there are none).

        A log already deleted has nothing left to sync: a log is deleted only once it was
        retired by a compaction, which wrote its records to parts and synced them."""
        if self._unsynced:
            _SYNCER.wait(self.path)
            try:
                fd = os.open(self.path, os.O_RDONLY)
            except FileNotFoundError:
                self._synced_at, self._unsynced = time.monotonic(), False
                return
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
