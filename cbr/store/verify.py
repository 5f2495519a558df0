"""Checking a case base, and repairing what can be repaired without losing a case
(``cbr casebase verify`` and ``cbr casebase repair``).

:func:`verify_casebase` reads every file the manifest lists and changes nothing: the
manifest's fields, each Parquet part (size, CRC-32, row count), the similarity file, the
DuckDB catalog, each index file (a missing index folder is one problem, not one per file),
the plugins the case base needs (its feature set and
similarity measures, when not built in: :mod:`cbr.store.needs`), and the retention log record by record
(:func:`~cbr.store.retention_log.scan_log`); and it lists the Parquet parts in the streets'
folders that the manifest does not list (nor keeps retired), left by a compaction or merge
that stopped before its commit (:func:`~cbr.store.parts.unlisted_parts`). Each problem names its file and, in the
retention log, the byte offset; states a reader handles by itself (a torn tail, a catalog
marked stale after appends) are notes, not problems.

:func:`repair_casebase` fixes the retention log: it keeps every sound record, before and
after the damage (:func:`~cbr.store.retention_log.salvage_log` resynchronises on the next
record that passes its checksum), and moves only the damaged bytes, each run into a file
beside the log, ``retained/log-NNNNN.bin.damaged-at-<offset>`` (never deleted; a second
damage later gets its own file). The records after a damaged one keep their order and
their cases; their case ids close the gap the lost cases leave (the log's ids run on, as
readers check). The aside files are written and synced first, then the log is replaced
with one rename, so a repair interrupted at any moment leaves the old log or the repaired
one (and at worst aside copies to be reused by the next run). Under the same lock it deletes
the unlisted parts (every listed and retired part stays). It then lets
the case base rewrite a catalog that disagrees with the manifest, and rebuilds damaged
indexes from the cases (both are caches). Damaged parts, manifest or similarity file
cannot be repaired here: they are reported (the case base is rebuilt from its logs), with the
caches they keep from being mended (the index of a damaged part's street); the other caches
are mended all the same.
Repairing a sound case base changes nothing. The shipped case bases (``default`` and
``expert``, :func:`~cbr.store.is_shipped`) are refused, and only those: in an editable
install ``./casebases`` is the package's folder, and the case bases made there are repaired;
the refusal says what mends a shipped one (:func:`~cbr.store.mend_shipped`: in a source
checkout git and its recipe, else a reinstall).

>>> import tempfile, numpy as np
>>> from cbr.store import CaseBase, CaseBaseWriter
>>> root = tempfile.mkdtemp()
>>> with CaseBaseWriter(f"{root}/demo", build_index=False) as w:
...     ids = w.add_rows("flop", np.ones((2, 12), np.float32), "cr")
>>> with CaseBase.open(f"{root}/demo") as cb:
...     for a in "fcr":
...         _ = cb.append("flop", np.zeros(12, np.float32), a)
>>> log = Path(root, "demo", "retained", "log-00000.bin")
>>> with open(log, "ab") as fh:
...     _ = fh.write(b"junk")                      # bytes no crash writes
>>> report = verify_casebase(f"{root}/demo")
>>> report.sound, [(p.file, p.offset == log.stat().st_size - 4) for p in report.problems]
(False, [('retained/log-00000.bin', True)])
>>> fixed = repair_casebase(f"{root}/demo")
>>> fixed.records_kept, fixed.records_lost, fixed.cases_lost, fixed.bytes_moved, fixed.moved_to
(3, 0, 0, 4, 'retained/log-00000.bin.damaged-at-...')
>>> verify_casebase(f"{root}/demo").sound, CaseBase.open(f"{root}/demo").count("flop")
(True, 5)
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cbr.errors import CaseBaseError, counted
from cbr.game.gamedef import STREETS
from cbr.store.durable import atomic_write_bytes, fsync_dir
from cbr.store.locks import WRITE_LOCK, reader_lock, write_lock
from cbr.store.manifest import MANIFEST, Manifest, differs_from_manifest, file_checksum, read_manifest
from cbr.store.parts import PART_MENDS, unlisted_parts
from cbr.store.retention_log import LogScan, record_bytes, salvage_log, scan_log

__all__ = ["Problem", "VerifyReport", "RepairReport", "verify_casebase", "repair_casebase", "aside_name"]

@dataclass(frozen=True)
class Problem:
    """One problem: its ``kind`` (``manifest``, ``part``, ``unlisted``: a Parquet part the
    manifest does not list, ``similarity``, ``plugin``: a plugin
    the case base needs is not installed, ``catalog``, ``index``, ``log``), the ``file`` (relative to the case base), the byte ``offset`` when
    the damage has one place (the retention log), what is wrong and what fixes it (empty when
    the problem says it)."""

    kind: str
    file: str
    offset: int | None
    problem: str
    fix: str

    def line(self, root: str | os.PathLike[str] | None = None) -> str:
        """``file, byte N: problem (fix)``: one line (``file`` under ``root`` when given)."""
        where = (f"{Path(root) / self.file}" if root is not None else self.file) + \
            (f", byte {self.offset}" if self.offset is not None else "")
        return f"{where}: {self.problem}" + (f" ({self.fix})" if self.fix else "")


@dataclass
class VerifyReport:
    """What :func:`verify_casebase` found; ``sound`` when there is no problem."""

    path: str
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cases: dict[str, int] = field(default_factory=dict)
    log: dict[str, Any] | None = None

    @property
    def sound(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "sound": self.sound,
                "problems": [{"kind": p.kind, "file": p.file, "offset": p.offset, "problem": p.problem, "fix": p.fix}
                             for p in self.problems],
                "notes": list(self.notes), "cases": dict(self.cases), "log": self.log}


@dataclass
class RepairReport:
    """What :func:`repair_casebase` did: the log it repaired (None: nothing to repair in
    it), the records and cases kept and lost (``cases_lost`` None: a damaged end of the log
    hides how many), ``moved``: each run of damaged bytes set aside (``offset`` in the old
    log, ``bytes``, ``file``, its ``records`` and ``cases``), with ``bytes_moved`` their
    total and ``moved_from``/``moved_to`` the first; ``renumbered``: the cases kept after a
    lost one (their ids close the gap); what else it did (``notes``) and the problems it
    cannot repair (``left``)."""

    path: str
    log: str | None = None
    records_kept: int = 0
    cases_kept: int = 0
    records_lost: int = 0
    cases_lost: int | None = 0
    bytes_moved: int = 0
    moved_from: int | None = None
    moved_to: str | None = None
    moved: list[dict[str, Any]] = field(default_factory=list)
    renumbered: int = 0
    notes: list[str] = field(default_factory=list)
    left: list[Problem] = field(default_factory=list)

    @property
    def repaired(self) -> bool:
        """Whether anything was changed."""
        return self.moved_to is not None or self.renumbered > 0 or bool(self.notes)

    @property
    def lost(self) -> str:
        """What was set aside, in words: ``"1 damaged record (3 cases)"``."""
        return _lost(self.records_lost, self.cases_lost)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "repaired": self.repaired, "log": self.log, "records_kept": self.records_kept,
                "cases_kept": self.cases_kept, "records_lost": self.records_lost, "cases_lost": self.cases_lost,
                "bytes_moved": self.bytes_moved, "moved_from": self.moved_from, "moved_to": self.moved_to,
                "moved": [dict(m) for m in self.moved], "renumbered": self.renumbered, "notes": list(self.notes),
                "left": [{"kind": p.kind, "file": p.file, "offset": p.offset, "problem": p.problem, "fix": p.fix}
                         for p in self.left]}


_REBUILD = PART_MENDS  # the words of every line on a damaged part (cbr casebase inspect's too)
_REPAIR = "cbr casebase repair fixes it"
_INDEX_FIX = "an index is a cache of the cases: opening the case base rebuilds it, or run cbr casebase repair"
#: What an unlisted part is, and what mends it (:func:`_check_unlisted`).
UNLISTED = ("a Parquet part the manifest does not list, left by a compaction or merge that stopped before its "
            "commit: no reader reads it")
UNLISTED_FIX = "cbr casebase repair removes it, keeping every listed part"


def verify_casebase(path: str | os.PathLike[str]) -> VerifyReport:
    """Check every file of the case base at ``path`` (see the module docstring); changes
    nothing. Raises :class:`CaseBaseError` only when ``path`` is no directory."""
    root = Path(path)
    lock = reader_lock(root)  # no writer deletes a listed file meanwhile
    try:
        return _verify(root)
    finally:
        if lock is not None:
            os.close(lock)


def _verify(root: Path) -> VerifyReport:
    report = VerifyReport(path=str(root))
    try:
        m = read_manifest(root)
    except CaseBaseError as exc:
        what = str(exc).removeprefix(f"{root / MANIFEST}: ")  # the line names the file already
        # a manifest of another schema version says how to upgrade it; anything else: rebuild or restore
        report.problems.append(Problem("manifest", MANIFEST, None, what,
                                       "" if "upgrade" in what else _REBUILD))
        return report
    for s in STREETS:
        report.cases[s] = 0
        for entry in m.parts[s]:
            rows = _check_part(root, entry, report)
            report.cases[s] += rows if rows is not None else entry["rows"]
    _check_unlisted(root, m, report)
    if m.similarity:
        _check_listed(root, m.similarity, m.checksums.get(m.similarity, {}), "similarity", report,
                      "restore it from a copy, or set a similarity configuration again (cbr casebase similarity NAME --from FILE)")
    _check_plugins(root, m, report)
    _check_catalog(root, m, report)
    for s, entry in sorted(m.index.items()):
        files = entry.get("files", {})
        if files and not (root / entry["file"]).exists():  # the folder: one line, not one per file
            report.problems.append(Problem("index", entry["file"], None,
                                           f"missing (listed in {MANIFEST} with {counted(len(files), 'file')})",
                                           _INDEX_FIX))
            continue
        for name, check in sorted(files.items()):
            _check_listed(root, f"{entry['file']}/{name}", check, "index", report, _INDEX_FIX)
    if m.log:
        scan = _scan_listed_log(root, m, report)
        if scan is not None:
            for _, chunks in scan.records:
                for s, (ids, _b) in chunks.items():
                    report.cases[s] += len(ids)
    # an index rebuilt from a damaged part (or with a similarity that cannot be read) waits for it
    damaged_parts = [p.file for p in report.problems if p.kind == "part"]
    similarity_sound = not any(p.kind == "similarity" or (p.kind == "plugin" and p.file != MANIFEST)
                               for p in report.problems)
    report.problems = [_blocked(p, damaged_parts, similarity_sound) if p.kind == "index" else p
                       for p in report.problems]
    return report


def _check_part(root: Path, entry: dict[str, Any], report: VerifyReport) -> int | None:
    """Check a part's size, CRC-32 and row count; its rows, or None when it is damaged."""
    import pyarrow.parquet as pq

    rel = entry["file"]
    if not _check_listed(root, rel, entry, "part", report, _REBUILD):
        return None
    try:
        rows = pq.read_metadata(root / rel).num_rows
    except Exception as exc:  # noqa: BLE001 - any reader error is damage, reported in one line
        report.problems.append(Problem("part", rel, None, f"not a readable Parquet file ({exc})", _REBUILD))
        return None
    if rows != entry["rows"]:
        report.problems.append(Problem("part", rel, None, f"holds {differs_from_manifest(rows, entry['rows'], 'cases')}",
                                       _REBUILD))
        return None
    return rows


def _check_unlisted(root: Path, m: Manifest, report: VerifyReport) -> None:
    """Each Parquet part in a street's folder that ``m`` neither lists nor keeps retired is a
    problem (kind ``unlisted``): a crash mid-compaction left it, and only a writer deletes it.
    A part that a writer at work has just written (the write lock is held) is not one yet: when
    the manifest on disk lists it by now, it is not said; while that writer is still at work, it
    is a note."""
    found = unlisted_parts(root, m)
    if not found:
        return
    try:
        now = read_manifest(root)
    except CaseBaseError:
        now = m
    found = [f for f in found if f in unlisted_parts(root, now)]  # committed meanwhile: listed now
    busy = _writer_at_work(root)
    for rel in found:
        if busy:
            report.notes.append(f"{rel}: not listed in {MANIFEST} while a writer is at work: its part before its "
                                f"commit, or a leftover that cbr casebase repair removes once the writer is done")
        else:
            report.problems.append(Problem("unlisted", rel, None, UNLISTED, UNLISTED_FIX))


def _writer_at_work(root: Path) -> bool:
    """Whether a writer holds the case base's write lock now (without taking it, or making its file)."""
    import fcntl

    try:
        fd = os.open(root / WRITE_LOCK, os.O_RDONLY)
    except OSError:  # no lock file: no writer has ever written here
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:  # pragma: no cover - a file system without flock
        return False
    finally:
        os.close(fd)  # (closing releases a shared lock just taken)
    return False


def _check_listed(root: Path, rel: str, expected: dict[str, Any], kind: str, report: VerifyReport, fix: str) -> bool:
    """Whether the file ``rel`` has the size and CRC-32 the manifest lists (else a problem)."""
    try:
        got = file_checksum(root / rel)
    except FileNotFoundError:
        report.problems.append(Problem(kind, rel, None, f"missing (listed in {MANIFEST})", fix))
        return False
    except OSError as exc:
        report.problems.append(Problem(kind, rel, None, f"cannot be read ({exc.strerror or exc})", fix))
        return False
    if got["bytes"] != expected.get("bytes"):
        report.problems.append(Problem(kind, rel, None, differs_from_manifest(got["bytes"], expected.get("bytes"), "bytes"),
                                       fix))
        return False
    if got["crc32"] != expected.get("crc32"):
        report.problems.append(Problem(kind, rel, None, "its CRC-32 differs from the manifest's: damaged", fix))
        return False
    return True


def _check_plugins(root: Path, m: Manifest, report: VerifyReport) -> None:
    """A plugin the case base needs that is not installed (or fails to load) is a problem:
    no command can use the case base without it."""
    from cbr.store.needs import missing_plugins

    for n in missing_plugins(root, m):
        report.problems.append(Problem("plugin", n.file, None, n.problem, n.fix))


def _check_catalog(root: Path, m: Manifest, report: VerifyReport) -> None:
    from cbr.store.catalog import CATALOG

    if m.catalog is None:
        report.notes.append(f"{CATALOG} is marked stale (cases were appended); the next open by a writer rewrites it")
        return
    _check_listed(root, CATALOG, m.catalog, "catalog", report,
                  "the catalog is rewritten from the manifest by the next open by a writer, or run "
                  "cbr casebase repair")


def _scan_listed_log(root: Path, m: Manifest, report: VerifyReport) -> LogScan | None:
    """Scan the manifest's retention log; problems and notes go to ``report``."""
    assert m.log is not None
    try:
        data = (root / m.log).read_bytes()
    except FileNotFoundError:
        report.problems.append(Problem("log", m.log, None, f"missing (listed in {MANIFEST}): the cases retained "
                                                            "in it are lost", _REPAIR + " (starts an empty log)"))
        return None
    except OSError as exc:
        report.problems.append(Problem("log", m.log, None, f"cannot be read ({exc.strerror or exc})",
                                       "check the file's permissions"))
        return None
    scan = scan_log(data, m.next_case_id)
    report.log = {"file": m.log, "records": len(scan.records), "sound_bytes": scan.end, "bytes": len(data),
                  "torn_bytes": scan.torn}
    if scan.damage is not None:
        at, why = scan.damage
        salvage = salvage_log(data, m.next_case_id)
        report.problems.append(Problem("log", m.log, at, f"damaged record: {why}",
                                       f"{_REPAIR}: keeps the {len(salvage.records):,} sound records "
                                       f"({counted(salvage.cases_kept, 'case')}) and sets aside "
                                       f"{_lost(salvage.records_lost, salvage.cases_lost)}"))
    elif scan.torn:
        report.notes.append(f"{m.log}: a torn tail of {scan.torn:,} bytes at byte {scan.end} (a record cut short: a "
                            "crash, or a write in flight): readers ignore it, the next append cuts it off")
    return scan


def _lost(records: int, cases: int | None) -> str:
    """``"1 damaged record (3 cases)"``: what a repair sets aside, in words.

    >>> _lost(1, 3), _lost(2, None), _lost(0, 0), _lost(1200, 2422)
    ('1 damaged record (3 cases)', '2 damaged records (cases unknown)', 'the damaged bytes (no case)', '1,200 damaged records (2,422 cases)')
    """
    what = counted(records, "damaged record") if records else "the damaged bytes"
    count = "cases unknown" if cases is None else ("no case" if cases == 0 else counted(cases, "case"))
    return f"{what} ({count})"


def aside_name(log_rel: str, offset: int, n: int = 0) -> str:
    """Where :func:`repair_casebase` moves the bytes of ``log_rel`` from ``offset`` on (the
    ``n``-th other name when that one is taken by different bytes).

    >>> aside_name("retained/log-00002.bin", 4096), aside_name("retained/log-00002.bin", 4096, 1)
    ('retained/log-00002.bin.damaged-at-4096', 'retained/log-00002.bin.damaged-at-4096.1')
    """
    return f"{log_rel}.damaged-at-{offset}" + (f".{n}" if n else "")


def repair_casebase(path: str | os.PathLike[str]) -> RepairReport:
    """Repair the case base at ``path`` (see the module docstring); returns what was done.

    Raises :class:`CaseBaseError` for the shipped case bases (``default``, ``expert``) or a
    read-only directory. A
    manifest that cannot be read is a problem left (``left``: there is nothing to repair from)."""
    from cbr.store import is_shipped, mend_shipped, source_checkout

    root = Path(path)
    if not root.is_dir():
        raise CaseBaseError(f"no case base at {root}: the directory does not exist")
    if is_shipped(root):  # only those: in an editable install ./casebases is the package's folder
        raise CaseBaseError(f"{root} is a shipped case base: it is never written to "
                            f"({mend_shipped(root.resolve().name, source_checkout())})")
    if not os.access(root, os.W_OK):
        raise CaseBaseError(f"{root} is read-only; copy it somewhere writable to repair it")
    report = RepairReport(path=str(root))
    if _sound(root, report):  # a sound case base is left as it is: not even the write lock's file
        return report
    with write_lock(root):
        try:
            m = read_manifest(root)
        except CaseBaseError:
            report.left = _verify(root).problems  # the manifest's problem, in verify's words
            return report
        if m.log:
            _repair_log(root, m, report)
        _remove_unlisted(root, m, report)
    _repair_caches(root, report)
    return report


def _sound(root: Path, report: RepairReport) -> bool:
    """Whether verify finds nothing wrong with the case base (and its log, read to its end
    under the reader lock, has no damage either); if so, ``report`` says what the log holds."""
    if verify_casebase(root).problems:
        return False
    try:
        m = read_manifest(root)
        if m.log:
            scan = scan_log((root / m.log).read_bytes(), m.next_case_id)
            if scan.damage is not None:
                return False
            report.log = m.log
            report.records_kept = len(scan.records)
            report.cases_kept = sum(len(ids) for _, chunks in scan.records for ids, _b in chunks.values())
    except (CaseBaseError, OSError):  # changed since: the repair under the write lock sees it
        return False
    return True


def _repair_log(root: Path, m: Manifest, report: RepairReport) -> None:
    """Keep the log's sound prefix, move the rest aside (called with the write lock held)."""
    assert m.log is not None
    log = root / m.log
    report.log = m.log
    try:
        data = log.read_bytes()
    except FileNotFoundError:
        log.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_dir(log.parent)
        report.notes.append(f"{m.log} was missing: started it empty (the cases retained in it are lost)")
        return
    scan = scan_log(data, m.next_case_id)
    if scan.damage is None:
        report.records_kept = len(scan.records)
        report.cases_kept = sum(len(ids) for _, chunks in scan.records for ids, _b in chunks.values())
        return
    salvage = salvage_log(data, m.next_case_id)
    report.records_kept, report.cases_kept = len(salvage.records), salvage.cases_kept
    report.records_lost, report.cases_lost = salvage.records_lost, salvage.cases_lost
    for run in salvage.damaged:  # each run of damaged bytes into its own file, synced, before the commit
        if run.end == run.offset:
            continue
        rest = data[run.offset:run.end]
        n = 0
        while True:  # a name that is free, or holds these very bytes (a repair interrupted before)
            rel = aside_name(m.log, run.offset, n)
            try:
                if (root / rel).read_bytes() == rest:
                    break
            except FileNotFoundError:
                atomic_write_bytes(root / rel, rest)
                break
            n += 1
        report.moved.append({"offset": run.offset, "bytes": len(rest), "file": rel, "records": run.records,
                             "cases": run.cases, "why": run.why})
    kept, expected = [], m.next_case_id
    for at, size, chunks in salvage.records:  # sound records as they are; after a gap, with ids run on
        first = min((int(ids[0]) for ids, _b in chunks.values() if len(ids)), default=expected)
        if first == expected:
            kept.append(data[at:at + size])
        else:
            kept.append(record_bytes({s: (ids - (first - expected), b) for s, (ids, b) in chunks.items()}))
            report.renumbered += sum(len(ids) for ids, _b in chunks.values())
        expected += sum(len(ids) for ids, _b in chunks.values())
    tail = data[len(data) - salvage.torn:] if salvage.torn else b""  # a torn tail: the next writer cuts it
    atomic_write_bytes(log, b"".join(kept) + tail)  # the commit point: one rename
    report.bytes_moved = sum(mv["bytes"] for mv in report.moved)
    if report.moved:
        report.moved_from, report.moved_to = report.moved[0]["offset"], report.moved[0]["file"]


def _remove_unlisted(root: Path, m: Manifest, report: RepairReport) -> None:
    """Delete the Parquet parts ``m`` neither lists nor keeps retired (called with the write lock
    held: no writer has one in flight); every listed part stays."""
    removed = []
    for rel in unlisted_parts(root, m):
        (root / rel).unlink(missing_ok=True)
        removed.append(rel)
    for folder in sorted({(root / rel).parent for rel in removed}):
        fsync_dir(folder)
    report.notes += [f"{rel}: removed, a Parquet part the manifest does not list" for rel in removed]


def _repair_caches(root: Path, report: RepairReport) -> None:
    """Rewrite a catalog that disagrees with the manifest and rebuild damaged indexes (both
    caches), through an open of the case base, and list what is still wrong in
    ``report.left``. A damaged part, similarity file or log does not stop the rest: the
    catalog (views over the parts, which reads none of their rows) is rewritten, and the index
    of each street whose parts are sound is rebuilt (with a sound similarity file); the index
    of a street with a damaged part stays listed, to be rebuilt once that part is."""
    from cbr.store.casebase import CaseBase

    problems = verify_casebase(root).problems
    caches = [p for p in problems if p.kind in ("catalog", "index")]
    if not caches or any(p.kind == "manifest" for p in problems):
        report.left = problems  # nothing to do, or nothing to do it from
        return
    damaged_parts = [p.file for p in problems if p.kind == "part"]
    similarity_sound = not any(p.kind == "similarity" or (p.kind == "plugin" and p.file != MANIFEST) for p in problems)
    try:
        cb = CaseBase.open(root)  # an open by a writer rewrites a catalog that lags the manifest ...
    except CaseBaseError as exc:
        report.left = [_blocked(p, damaged_parts, similarity_sound, str(exc)) for p in problems]
        return
    unwritten = cb.catalog_error  # ... unless a damaged part (missing, cut, its footer) keeps it from it
    with cb:
        for s, entry in cb.manifest.index.items():
            if not any(p.kind == "index" and (p.file == entry["file"] or p.file.startswith(entry["file"] + "/"))
                       for p in caches):  # the folder missing, or a file of it damaged
                continue
            if similarity_sound and not any(f.startswith(f"cases/{s}/") for f in damaged_parts):
                cb.rebuild_index(s)  # the damaged index (or its answer rows) is rebuilt from the cases ...
        cb.save_indexes()  # ... and saved as a new generation
    after = verify_casebase(root).problems
    fixed = {(p.kind, p.file) for p in caches} - {(p.kind, p.file) for p in after}
    for p in caches:
        if (p.kind, p.file) in fixed:
            report.notes.append(f"{p.file}: " + ("rewrote the catalog" if p.kind == "catalog"
                                                 else "rebuilt the index from the cases"))
    report.left = [_blocked(p, damaged_parts, similarity_sound, unwritten if p.kind == "catalog" else None)
                   for p in after]


def _blocked(p: Problem, damaged_parts: list[str], similarity_sound: bool, unopened: str | None = None) -> Problem:
    """``p`` as a problem left after a repair: a cache the repair could not mend says what
    stands in its way (``unopened``: the error that kept it from being mended); another
    problem is as verify words it."""
    if p.kind not in ("catalog", "index"):
        return p
    street = p.file.split("/")[1].split(".")[0] if p.kind == "index" else ""
    blockers = [f for f in damaged_parts if f.startswith(f"cases/{street}/")]
    once = "cbr casebase repair mends it once the damaged parts are rebuilt or restored"
    if unopened is not None:
        why = f"not mended: {unopened.splitlines()[0]}; " + \
            (once if damaged_parts else "mend that first")
    elif blockers:
        why = f"rebuilt from the {street} cases, and {', '.join(blockers)} is damaged: {once}"
    elif p.kind == "index" and not similarity_sound:
        why = ("rebuilt with the similarity file, which is damaged or needs a plugin that is not installed: "
               "cbr casebase repair rebuilds it once that is mended")
    else:
        return p
    return Problem(p.kind, p.file, p.offset, p.problem, why)
