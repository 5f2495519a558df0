"""Compaction: moving the retention log's cases into Parquet parts, and merging a street's
parts into one.

- :meth:`Compaction.compact` writes the cases of the retention log as new Parquet parts
  (one per street), and starts a new, empty log generation, in one manifest commit; the
  old log is retired. Appends compact by themselves every ``compact_every`` records (so
  opening never reads much log), and a match compacts what it retained when it ends.
- :meth:`Compaction.merge_parts` rewrites a street's parts as one part (many small parts
  make reads slower); the cases, their ids and their order stay the same.

A crash in between leaves an unlisted part that readers ignore and the next writer
deletes; the files a compaction replaces are retired, not deleted, and go when no reader
has the case base open (see :mod:`cbr.store.casebase`).

>>> import tempfile, numpy as np
>>> from cbr.store import CaseBase
>>> from cbr.store.writer import CaseBaseWriter
>>> root = tempfile.mkdtemp()
>>> with CaseBaseWriter(f"{root}/demo", build_index=False) as w:
...     ids = w.add_rows("flop", np.ones((2, 12), np.float32), "cr")
>>> with CaseBase.open(f"{root}/demo") as cb:
...     _ = cb.append("flop", np.zeros((3, 12), np.float32), "fff")
...     moved = cb.compact()                    # the log's 3 cases -> a second flop part
...     parts = len(cb.manifest.parts["flop"])
...     cb.merge_parts("flop")                   # -> one flop part
...     moved, parts, len(cb.manifest.parts["flop"]), cb.count("flop")
(3, 2, 1, 5)

:class:`Compaction` is a layer of :class:`~cbr.store.CaseBase`: it works on the loaded state and
the commit primitives (``_lock``, ``_commit``, ``_collect``) of
:class:`~cbr.store.loaded.LoadedCaseBase`, below it.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS
from cbr.store.loaded import LoadedCaseBase
from cbr.store.manifest import Manifest, now_utc, read_manifest
from cbr.store.parts import (
    PART_RE,
    case_schema,
    count_actions,
    next_part_number,
    part_entry,
    part_file,
    read_part,
    street_name,
    write_part,
)
from cbr.store.retention_log import RetentionLog, start_log

__all__ = ["Compaction"]


class Compaction(LoadedCaseBase):
    """Compaction of the retention log into parts, and merging of parts (a layer of ``CaseBase``)."""

    def compact(self, *, catalog: bool = True) -> int:
        """Move the retention log's cases into Parquet parts (one per street) and start a
        new log generation, in one manifest commit; returns the number of cases moved.
        The old log is retired (deleted when no reader has the case base open). What this
        object has loaded stays valid: the same cases in the same order. ``catalog=False``
        (the compactions appends make by themselves): the on-disk catalog is marked stale
        instead of rewritten, and :meth:`~cbr.store.CaseBase.close` (or the next open)
        rewrites it once, as after appends."""
        with self._lock():
            m = read_manifest(self.path)
            collected = self._collect(m)
            log = self._log_to_compact(m)
            moved = sum(log.rows.values()) if log is not None else 0
            if log is None or moved == 0:
                if collected:  # retired files deleted: commit the manifest that no longer lists them
                    self._commit(m)
                return 0
            written: list[str] = []  # removed again if the commit fails: nothing half written is left
            try:
                for s in STREETS:
                    if not log.rows[s]:
                        continue
                    table = log.table(s, m.features[s])
                    rel = _free_part(self.path, s, m)
                    written.append(rel)
                    m.parts[s].append(part_entry(rel, table.num_rows, write_part(self.path / rel, table)))
                    count_actions(m.counts[s], table.column("action").to_pylist())
                    _count_sources(m, table.column("source").to_pylist())
                m.next_case_id = log.next_id
                rel = start_log(self.path)
                written.append(rel)
                m.retired.append({"file": m.log, "since": now_utc()})
                m.log = rel
                self._commit(m, catalog=catalog)
            except BaseException:
                _remove_uncommitted(self.path, written)
                raise
            if self._collect(m):
                self._commit(m, catalog=None)  # only retired files went: the parts, so the catalog, are the same
            mine = self._logs is not None and [lg.next_id for lg in self._logs][-1:] == [log.next_id]
        if mine:  # this object had read every case moved: keep its tables, follow the new log
            self._logs = [RetentionLog(self.path / rel, m.next_case_id)]
        else:
            self._forget_loaded()
        self.manifest = m
        self._close_sql()
        return moved

    def _log_to_compact(self, m: Manifest) -> RetentionLog | None:
        """The log ``m`` names, read to its end (write lock held): this object's own when it
        reads that log (only the records since it last looked are read, and taken into what
        this object has loaded, which then stays valid), else read anew."""
        if not m.log:
            return None
        own = self._logs[-1] if self._logs else None
        if own is not None and own.path == self.path / m.log:
            self._read_log(own)  # what other processes committed since: into what is loaded too
            return own
        log = RetentionLog(self.path / m.log, m.next_case_id)
        log.refresh()
        return log

    def merge_parts(self, street: int | str | None = None) -> None:
        """Merge a street's Parquet parts into one (every street when ``street`` is None);
        the retention log is left as it is (:meth:`compact` moves it into parts first).

        The merged part is committed; the old parts are retired, not deleted: readers
        that opened before keep reading them (see :mod:`cbr.store.casebase`)."""
        for s in ([street_name(street)] if street is not None else list(STREETS)):
            self._merge_street(s)

    def _merge_street(self, s: str) -> None:
        import pyarrow as pa

        with self._lock():
            m = read_manifest(self.path)
            same_log = (m.log, m.next_case_id) == (self.manifest.log, self.manifest.next_case_id)
            if len(m.parts[s]) <= 1:
                if self._collect(m):
                    self._commit(m)
                return
            schema = case_schema(m.features[s])
            table = pa.concat_tables([read_part(self.path, p, schema) for p in m.parts[s]])
            rel = _free_part(self.path, s, m)
            old = [p["file"] for p in m.parts[s]]
            m.parts[s] = [part_entry(rel, table.num_rows, write_part(self.path / rel, table))]
            m.retired += [{"file": f, "since": now_utc()} for f in old]
            self._commit(m)
            if self._collect(m):  # no other reader open: the old parts go at once
                self._commit(m)
        self.manifest = m
        if same_log:  # the same cases in the same order: only the street's table is read anew
            self._tables.pop(s, None)
            self._tails[s] = []
            self._arrays.pop(s, None)
            self._close_sql()
        else:  # another process compacted meanwhile: read everything anew
            self._forget_loaded()


def _remove_uncommitted(root: Path, written: Sequence[str]) -> None:
    """Remove the files a compaction that failed wrote (its new parts, its new log) unless the
    manifest on disk names them after all (the commit got through and something after it
    failed): else they would lie beside the case base until the next writer's clean-up, an
    unlisted part and an empty log generation that ``cbr casebase verify`` does not report. A
    removal that fails is left to that clean-up (the compaction's own error is raised)."""
    import contextlib

    try:
        m = read_manifest(root)
        listed = {p["file"] for s in STREETS for p in m.parts[s]} | {m.log}
    except (CaseBaseError, OSError):  # the manifest unreadable: remove nothing, the compaction's error is said
        return
    for rel in written:
        if rel not in listed:
            with contextlib.suppress(OSError):
                (root / rel).unlink(missing_ok=True)


def _count_sources(m: Manifest, sources: Sequence[str | None]) -> None:
    """Add cases per source to the manifest's ``sources``."""
    counts: dict[str, int] = {}
    for src in sources:
        counts[src or ""] = counts.get(src or "", 0) + 1
    for src, k in counts.items():
        entry = next((e for e in m.sources if e.get("source") == src), None)
        if entry is None:
            entry = {"source": src, "cases": 0}
            m.sources.append(entry)
        entry["cases"] = int(entry.get("cases", 0)) + k


def _free_part(root: Path, street: str, m: Manifest) -> str:
    """The next part file name of ``street`` not listed, retired or present."""
    taken = [p["file"] for p in m.parts[street]] + [r["file"] for r in m.retired if PART_RE.match(Path(r["file"]).name)
                                                   and r["file"].startswith(f"cases/{street}/")]
    rel = part_file(street, next_part_number([{"file": f} for f in taken]))
    while (root / rel).exists():
        rel = part_file(street, int(PART_RE.match(Path(rel).name).group(1)) + 1)  # type: ignore[union-attr]
    return rel
