"""What an opened case base has loaded, and the commit primitives its reads and writes share.

:class:`LoadedCaseBase` is the bottom of :class:`~cbr.store.CaseBase`: the state an open
handle holds (the manifest as last read, the tables, arrays and indexes loaded per street,
the retention logs read after the listed parts, the SQL connection, the reader lock), the
counts that state answers (:meth:`~LoadedCaseBase.count`,
:attr:`~LoadedCaseBase.next_case_id`), and the commits: the write lock
(:meth:`~LoadedCaseBase._lock`), the manifest commit (:meth:`~LoadedCaseBase._commit`), the
removal of retired files and crash leftovers (:meth:`~LoadedCaseBase._collect`) and the
forgetting of what was loaded (:meth:`~LoadedCaseBase._forget_loaded`).

The case base is built on it in layers, each module importing only those below it:
compaction (:mod:`cbr.store.compaction`), then the retained writes, which compact when
the log grows long (:mod:`cbr.store.retained`), then reading and opening
(:mod:`cbr.store.casebase`, whose :class:`~cbr.store.CaseBase` is the one object users open).

>>> import tempfile, numpy as np
>>> from cbr.store import CaseBase
>>> from cbr.store.writer import CaseBaseWriter
>>> root = tempfile.mkdtemp()
>>> with CaseBaseWriter(f"{root}/demo", build_index=False) as w:
...     ids = w.add_rows("preflop", np.ones((2, 8), np.float32), ["c", "r"])
>>> cb = CaseBase.open(f"{root}/demo")
>>> isinstance(cb, LoadedCaseBase), cb.count(), cb.next_case_id
(True, 2, 2)
"""
from __future__ import annotations

import copy
import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cbr.errors import CaseBaseError, PluginError
from cbr.game.gamedef import STREETS
from cbr.plugins import load_feature_set
from cbr.store import catalog as _catalog
from cbr.store.answer_rows import AnswerRows
from cbr.store.durable import remove_dead_temp
from cbr.store.locks import no_other_readers, write_lock
from cbr.store.manifest import INDEX_PATH_RE, LOG_PATH_RE, Manifest, file_checksum, read_manifest, write_manifest
from cbr.store.parts import street_name, unlisted_parts
from cbr.store.retention_log import Chunk, RetentionLog

if TYPE_CHECKING:
    import pyarrow as pa

    from cbr.retrieval import CaseIndex
    from cbr.similarity import SimilarityConfig

__all__ = ["CaseArrays", "LoadedCaseBase", "catalog_lags"]


@dataclass(frozen=True)
class CaseArrays:
    """A street's cases as arrays: ``features`` (n, d) float32, ``actions`` (n,) ``'f'/'c'/'r'``,
    ``outcomes`` (n,) float64: the hand's net result for the player who acted, in small
    bets, NaN when unknown."""

    street: str
    feature_names: list[str]
    case_ids: np.ndarray
    features: np.ndarray
    actions: np.ndarray
    table: pa.Table
    outcomes: np.ndarray

    def __len__(self) -> int:
        return len(self.case_ids)


class LoadedCaseBase:
    """The loaded state of an opened case base and the commit primitives shared by its reads
    and writes (the base of :class:`~cbr.store.CaseBase`; see the module docstring)."""

    def __init__(self, path: Path, manifest: Manifest, *, reader_lock: int | None = None) -> None:
        self.path = Path(path)
        self.manifest = manifest
        self._tables: dict[str, pa.Table] = {}
        self._arrays: dict[str, CaseArrays] = {}  # built from the table in self._tables
        self._tails: dict[str, list[Chunk]] = {s: [] for s in STREETS}  # retained after self._tables[s] loaded
        self._indexes: dict[str, "CaseIndex"] = {}
        self._answer_rows: dict[str, AnswerRows] = {}  # each valid while it holds count(street) rows
        # the streets' retrieval data users read (cbr.store.street_view), by street and similarity
        # (None: the case base's own); extended with every case taken, dropped with the loaded state
        self._views: dict[tuple[str, str | None], Any] = {}
        self._view_keys: dict[int, tuple[Any, str]] = {}  # id(similarity config) -> (it, its TOML)
        self._dirty_indexes: set[str] = set()
        self._similarity: "SimilarityConfig | None" = None
        self._feature_set: Any = None
        self._con: Any = None
        self._con_streets: set[str] = set()  # the streets whose views self._con has (made each when needed)
        self._con_union = False  # whether it has the view ``cases`` (every street's) too
        self._reader_lock = reader_lock
        # parts whose checksum was checked: file -> its size and modification time then (checked
        # again once they change: CaseBase.check_street)
        self._verified: dict[str, tuple[int, int] | None] = {}
        # retention logs after the listed parts, in order: the manifest's, then newer
        # generations started by another process's compaction (loaded on first use)
        self._logs: list[RetentionLog] | None = None
        self._stamp: tuple[int, int, int] | None = None  # the manifest file as this object last read it
        #: What opening or reading repaired on the way (e.g. a damaged index rebuilt).
        self.notes: list[str] = []
        #: Map the saved indexes instead of loading them (``open(..., memory_map=True)``).
        self.memory_map = False
        #: Rewrite a catalog that lags the manifest on close (``open(..., repair_catalog=False)``: no).
        self.repairs_catalog = True
        #: The parts ``CaseBase.open`` found missing or of another size than listed: file -> the
        #: line a read of it raises (only what reads that part stops: its street, SQL, inspect).
        self.damaged_parts: dict[str, str] = {}
        #: Why ``CaseBase.open`` left a catalog that lags the manifest as it was (a damaged part
        #: keeps its views from being written); None when it did not.
        self.catalog_error: str | None = None
        self._listeners: list[Callable[[str, Chunk], None]] = []  # told of every row taken (subscribe)

    def _close_sql(self) -> None:
        """Release the DuckDB connection (reopened on the next :meth:`sql`, over the current parts)."""
        if self._con is not None:
            self._con.close()
            self._con = None
        self._con_streets = set()
        self._con_union = False

    # ---- what the loaded state answers ------------------------------------------------
    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def writable(self) -> bool:
        return os.access(self.path, os.W_OK)

    def count(self, street: int | str | None = None) -> int:
        """Cases of a street, or of all streets."""
        logs = self._retention_logs()
        streets = STREETS if street is None else (street_name(street),)
        return sum(self.manifest.counts[s]["total"] + sum(log.rows[s] for log in logs) for s in streets)

    def _retention_logs(self) -> list[RetentionLog]:
        """The retention logs this object reads after the listed parts (read once)."""
        if self._logs is None:
            logs = []
            if self.manifest.log:
                log = RetentionLog(self.path / self.manifest.log, self.manifest.next_case_id)
                log.refresh()
                logs.append(log)
            self._logs = logs
        return self._logs

    @property
    def next_case_id(self) -> int:
        """The id the next retained case gets (as far as this object has read)."""
        logs = self._retention_logs()
        return logs[-1].next_id if logs else self.manifest.next_case_id

    def feature_set(self) -> Any:
        """The feature-set plugin this case base was built with (for queries and retention)."""
        if self._feature_set is None:
            try:
                self._feature_set = load_feature_set(self.manifest.feature_set)
            except PluginError:  # another package's feature set, not installed here (or broken)
                from cbr.store.needs import missing_plugins, plugin_needed

                missing = [n for n in missing_plugins(self.path, self.manifest) if n.group == "cbr.features"]
                if not missing:
                    raise
                raise CaseBaseError(plugin_needed(self.path, missing[0])) from None
        return self._feature_set

    # ---- taking what was committed to the retention log ------------------------------
    def _read_log(self, log: RetentionLog) -> None:
        """Take the records committed to ``log`` since this object last read it."""
        for s, chunks in log.refresh().items():
            for chunk in chunks:
                self._absorb(s, chunk)

    def subscribe(self, listener: "Callable[[str, Chunk], None]") -> None:
        """Call ``listener(street, (case_ids, rows))`` with every batch of cases this handle
        takes from now on: its own appends and, on :meth:`refresh`, other processes' (``rows``: a
        :class:`~cbr.store.parts.RowBatch`, with the provenance in ``rows.meta``). What a
        listener raises propagates to the append (it has been committed by then)."""
        self._listeners.append(listener)

    def unsubscribe(self, listener: "Callable[[str, Chunk], None]") -> None:
        """Stop calling ``listener`` (no error if it was not subscribed)."""
        self._listeners = [f for f in self._listeners if f is not listener]

    def _absorb(self, s: str, chunk: Chunk) -> None:
        """Extend what this object has loaded by rows just committed to the log."""
        if len(chunk[1]) == 0:
            return
        for listener in list(self._listeners):
            listener(s, chunk)
        if s in self._tables:
            self._tails[s].append(chunk)
        self._arrays.pop(s, None)
        self._close_sql()
        index = self._indexes.get(s)
        if index is not None:
            index.add(chunk[1].features)
            self._dirty_indexes.add(s)
        for key in [k for k in self._views if k[0] == s]:  # what users retrieve from, extended once
            view = self._views[key]
            if view.index is None:
                del self._views[key]  # the street's first cases: made anew when next asked for
            else:
                view.extend(*chunk)

    # ---- commits (shared by set_similarity, save_indexes, the retained writes and compaction) ----
    @contextmanager
    def _lock(self) -> Iterator[None]:
        if not self.writable:
            raise CaseBaseError(f"{self.path} is read-only; copy it somewhere writable to retain cases")
        with write_lock(self.path):
            yield

    def _commit(self, m: Manifest, catalog: bool | None = True) -> None:
        """Rewrite the on-disk catalog over the parts ``m`` lists and record its checksum
        in ``m``, then replace the manifest (the commit point). With ``catalog=False`` the
        manifest marks the catalog stale instead (``catalog: null``) and :meth:`close`
        rewrites it, since a DuckDB file costs ~0.1-0.2 s to write; an open after a crash
        repairs a stale or mismatched catalog. ``catalog=None``: the parts are those of the
        catalog ``m`` already records (only retired files changed): it is kept as it is.
        Called with the write lock held."""
        if catalog is None:
            pass
        elif catalog:
            _catalog.write_catalog(self.path, m)
            m.catalog = file_checksum(self.path / _catalog.CATALOG)
        else:
            m.catalog = None
        write_manifest(self.path, m)
        self.manifest = m

    def _repair_catalog(self) -> None:
        """Rewrite ``catalog.duckdb`` when the manifest marks it stale (after appends) or it
        does not match the manifest's checksum (a writer died in between)."""
        with self._lock():
            m = read_manifest(self.path)
            if catalog_lags(self.path, m):
                self._commit(m)
            else:
                self.manifest = m

    def _no_other_readers(self) -> bool:
        """Whether no other open :class:`CaseBase` (any process) holds the reader lock.
        Called with the write lock held."""
        return no_other_readers(self._reader_lock)

    def _collect(self, m: Manifest) -> bool:
        """Delete crash leftovers (parts and index directories no manifest lists, temp files
        of dead processes) and, when no other reader is open, the retired files ``m`` lists
        (``m`` is updated and True returned; the caller commits it). Called with the write
        lock held, and only with an ``m`` whose current files are committed already."""
        keep = {r["file"] for r in m.retired} | {p["file"] for s in STREETS for p in m.parts[s]}
        keep |= {e["file"] for e in m.index.values()}
        for s in STREETS:
            remove_dead_temp(self.path / "cases" / s)
        for rel in unlisted_parts(self.path, m):
            (self.path / rel).unlink(missing_ok=True)
        d = self.path / "retained"
        if d.is_dir():
            for f in d.iterdir():
                rel = f"retained/{f.name}"
                if LOG_PATH_RE.match(rel) and rel not in keep and rel != m.log:
                    f.unlink(missing_ok=True)  # a generation a killed compaction created but never committed
        d = self.path / "index"
        remove_dead_temp(d)
        if d.is_dir():
            for f in d.iterdir():
                if INDEX_PATH_RE.match(f"index/{f.name}") and f"index/{f.name}" not in keep and f.is_dir():
                    shutil.rmtree(f, ignore_errors=True)
        stale = [f for f in self.path.glob("similarity*.toml") if SIMILARITY_FILE_RE.match(f.name)
                 and f.name != m.similarity]
        if stale and self._no_other_readers():  # replaced by set_similarity (or left by a crash in it)
            for f in stale:
                f.unlink(missing_ok=True)
        if m.retired and self._no_other_readers():
            for r in m.retired:
                target = self.path / r["file"]
                if target.is_dir():
                    shutil.rmtree(target, ignore_errors=True)
                else:
                    target.unlink(missing_ok=True)
            gone = {(self.path / r["file"]).resolve() for r in m.retired}
            for s in [s for s, rows in self._answer_rows.items() if Path(rows.where).resolve() in gone]:
                del self._answer_rows[s]  # read lazily from its generation's files: read anew
            m.retired = []
            self.manifest = copy.deepcopy(m)  # what this object reads must still exist
            self._close_sql()
            return True
        return False

    def _forget_loaded(self) -> None:
        """Drop everything read from the case base: the next use reads it anew."""
        self._logs = None
        self._tables.clear()
        self._tails = {x: [] for x in STREETS}
        self._arrays.clear()
        self._indexes.clear()
        self._answer_rows.clear()
        self._dirty_indexes.clear()
        self._views.clear()
        self._close_sql()


def catalog_lags(p: Path, m: Manifest) -> bool:
    """Whether ``catalog.duckdb`` is marked stale, missing, or not the one ``m`` records."""
    if m.catalog is None:
        return True
    try:
        return file_checksum(p / _catalog.CATALOG) != m.catalog
    except OSError:
        return True


#: The similarity files of a case base: ``similarity.toml``, then ``similarity-N.toml`` for each
#: configuration set since (:meth:`CaseBase.set_similarity`).
SIMILARITY_FILE_RE = re.compile(r"^similarity(?:-(\d+))?\.toml$")


def next_similarity_name(current: str | None, root: Path) -> str:
    """The file the next similarity configuration of the case base at ``root`` goes to: one
    numbered above the current file and any left over by a crash, never the current one.

    >>> next_similarity_name("similarity.toml", Path("/nonexistent")), next_similarity_name("similarity-4.toml", Path("/x"))
    ('similarity-1.toml', 'similarity-5.toml')
    """
    numbers = [0]
    for name in [current or "", *(f.name for f in root.glob("similarity*.toml"))]:
        found = SIMILARITY_FILE_RE.match(name)
        if found:
            numbers.append(int(found.group(1) or 0))
    return f"similarity-{max(numbers) + 1}.toml"
