"""Case bases on disk: open one, validate it, query it, grow it durably.

Each case row holds its features, the action taken, provenance and ``outcome`` (the
hand's net result for the player who acted, in small bets, NULL when unknown; schema 3).

Layout of ``casebases/<name>/``::

    manifest.json              schema version, feature set, games, sources, counts, parts
    similarity.toml            the similarity configuration used for retrieval
    cases/<street>/part-NNNNN.parquet   the cases of a street, in parts
    catalog.duckdb             SQL views over the parts (relative paths)
    index/<street>/            one retrieval index per street (index.faiss, cases.npy, meta.json)
    retained/log-NNNNN.bin     the retention log: cases retained in play, after the parts

A case base is written by :class:`~cbr.store.writer.CaseBaseWriter`, then opened here:

>>> import tempfile, numpy as np
>>> from cbr.store.writer import CaseBaseWriter
>>> root = tempfile.mkdtemp()
>>> with CaseBaseWriter(f"{root}/demo", build_index=False) as w:
...     ids = w.add_rows("preflop", np.ones((2, 8), np.float32), ["c", "r"], source="demo")
>>> cb = CaseBase.open(f"{root}/demo")
>>> cb.count("preflop"), cb.sql("select count(*) from cases").fetchone()
(2, (2,))
>>> cb.append("flop", np.zeros(12, np.float32), "f", outcome=-1.0).tolist()  # a retained case
[2]
>>> cb.cases("flop").outcomes.tolist(), cb.cases("preflop").outcomes.tolist()  # NaN: unknown
([-1.0], [nan, nan])

The case base is one object, :class:`CaseBase`, in three modules of one concept each:

- here, opening and reading: validation, tables and arrays per street, SQL, retrieval
  indexes, and the commit primitives the writes share (the write lock, the manifest
  commit, the removal of retired files);
- :mod:`cbr.store.retained`, retained writes: the cases kept in play go to the retention
  log (:mod:`cbr.store.retention_log`) through one write path,
  :meth:`~CaseBase.append_streets` (:meth:`~CaseBase.append` and
  :meth:`~CaseBase.retain_hand` wrap it): one CRC'd record per commit, at most one
  ``fsync``, the manifest untouched, so an append costs the same however large the case
  base is; and the following of what other processes append (:meth:`~CaseBase.refresh`);
- :mod:`cbr.store.compaction`: :meth:`~CaseBase.compact` moves the log's cases into
  Parquet parts and starts a new log in one manifest commit; :meth:`~CaseBase.merge_parts`
  merges a street's parts into one.

Readers see the listed parts, then the log's committed records (a torn tail, all a crash
can leave, is ignored and cut by the next writer; other damage is an error naming the byte:
``cbr casebase verify`` and ``cbr casebase repair``, :mod:`cbr.store.verify`). Temp files
of dead processes are removed on the next open or write.

Integrity: every file is checked against the size and CRC-32 the manifest lists when it is
first read (Parquet pages also against their page CRCs); damage is a :class:`CaseBaseError`
naming the file. A damaged index, only a cache of the cases, is rebuilt from them (and
noted in :attr:`CaseBase.notes`).

Concurrent readers: an open :class:`CaseBase` holds a shared ``flock`` on the case-base
directory until :meth:`~CaseBase.close`. :meth:`~CaseBase.compact`, :meth:`~CaseBase.merge_parts`
and index saves never delete the files they replace at once: they list them as ``retired`` in the manifest,
and a writer deletes retired files only when it can take that lock exclusively, i.e. when
no reader (in any process) is open, so a reader never loses a file its manifest lists.
"""
from __future__ import annotations

import os
import re
import select
import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cbr.errors import CaseBaseError, ConfigError, counted
from cbr.game.gamedef import STREETS, GameDef
from cbr.store import catalog as _catalog
from cbr.store.answer_rows import PROVENANCE, AnswerRows, AnswerRowsWriter
from cbr.store.compaction import Compaction
from cbr.store.durable import remove_dead_builds, remove_dead_temp
from cbr.store.indexes import default_similarity, load_index, load_similarity, new_index, save_index, street_similarity
from cbr.store.loaded import CaseArrays, catalog_lags, next_similarity_name
from cbr.store.locks import reader_lock
from cbr.store.manifest import (
    MANIFEST,
    Manifest,
    differs_from_manifest,
    file_checksum,
    now_utc,
    read_manifest,
    verify_file,
)
from cbr.store.parts import (
    case_schema,
    part_at_a_glance,
    read_part,
    read_part_column,
    read_part_columns,
    street_name,
    verify_part,
)
from cbr.store.retained import RetainedWrites
from cbr.store.retention_log import RetentionLog, chunks_table
from cbr.store.street_view import StreetView

if TYPE_CHECKING:
    import pyarrow as pa

    from cbr.retrieval import CaseIndex
    from cbr.similarity import SimilarityConfig

__all__ = ["CaseBase", "CaseArrays"]


class CaseBase(RetainedWrites, Compaction):
    """An opened case base. Use :meth:`open`; see the module docstring for the layout.

    Reading is defined here, on top of the retained writes
    (:class:`~cbr.store.retained.RetainedWrites`), compaction
    (:class:`~cbr.store.compaction.Compaction`) and the loaded state with its commit
    primitives (:class:`~cbr.store.loaded.LoadedCaseBase`): one object, so a write extends
    what it has loaded instead of reading it anew."""

    # ---- opening --------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str], *, memory_map: bool = False,
             repair_catalog: bool = True) -> "CaseBase":
        """Open and validate a case base (manifest, schema version, listed files).

        ``memory_map``: for streets larger than memory, :meth:`index` maps each street's
        saved index (case rows and inverted lists stay in their files) instead of loading
        it, and nothing reads a street's whole table to answer a query (see
        :meth:`column`); the saved index must cover every case of the street.
        ``repair_catalog=False``: leave a catalog that lags the manifest as it is, on open and
        on close.

        Takes a shared lock on the directory (held until :meth:`close`) before reading the
        manifest, so no writer deletes the files it lists. Checks every field of the
        manifest and that every listed file exists with its listed size; the checksums
        are checked when a file is first read. Removes temp files of dead processes.
        Raises :class:`CaseBaseError` with a one-line message naming what is wrong.

        A Parquet part that is missing or of another size than listed does not stop the open:
        it is in :attr:`damaged_parts`, and only what reads it (its street's cases and queries,
        SQL, inspect) raises its line; the other streets answer. The on-disk catalog (views
        over every part, which no query of the engine reads) is then left as it is when it lags
        the manifest, as it is when a damaged part's footer keeps its views from being written:
        :attr:`catalog_error` says why (``cbr casebase repair`` rewrites it once the part is
        restored).
        """
        p = Path(path)
        lock = reader_lock(p)
        try:
            if os.access(p, os.W_OK):
                for d in (p, p / "index", p / "retained", *(p / "cases" / s for s in STREETS)):
                    remove_dead_temp(d)
            if os.access(p.resolve().parent, os.W_OK):
                remove_dead_builds(p.resolve().parent)  # builds beside it killed before they finished
            m = read_manifest(p)
            damaged = _check_files(p, m)
            catalog_error = None
            if repair_catalog and os.access(p, os.W_OK) and catalog_lags(p, m):
                if damaged:  # the catalog's views read every part's footer
                    catalog_error = next(iter(damaged.values()))
                else:
                    repair = cls(p, m)
                    try:
                        repair._repair_catalog()
                        m = repair.manifest
                    except _catalog.CatalogViewError as exc:  # a part's footer: it stops its street only
                        catalog_error = str(exc)
        except BaseException:
            if lock is not None:
                os.close(lock)
            raise
        cb = cls(p, m, reader_lock=lock)
        cb.damaged_parts = damaged
        cb.catalog_error = catalog_error
        cb.memory_map = memory_map
        cb.repairs_catalog = repair_catalog and catalog_error is None  # not on close either
        return cb

    def __repr__(self) -> str:
        counts = ", ".join(f"{s}={self.manifest.counts[s]['total']}" for s in STREETS)
        return f"CaseBase({str(self.path)!r}, {counts})"

    def __enter__(self) -> "CaseBase":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """``fsync`` retained records, save indexes grown by appends (when writable), release
        the SQL connection and the reader lock."""
        try:
            for log in self._logs or []:
                log.sync()
            if self._dirty_indexes and self.writable:
                self.save_indexes()
            if self.manifest.catalog is None and self.writable and self.repairs_catalog:
                try:
                    self._repair_catalog()
                except _catalog.CatalogViewError as exc:  # a damaged part (the next open says so again)
                    self.catalog_error = str(exc)
                    self.notes.append(f"{exc}; the catalog is rewritten once the part is restored")
            self._collect_on_close()
        finally:
            self._close_sql()
            if self._reader_lock is not None:
                os.close(self._reader_lock)
                self._reader_lock = None

    def _collect_on_close(self) -> None:
        """The last reader to close deletes the files retired while others had the case base
        open (superseded index generations, merged parts, compacted logs), so they do not stay
        on disk until some later write. Best effort: what cannot be deleted now stays listed,
        for the next write."""
        if self._reader_lock is None or not self.writable or not self._no_other_readers():
            return
        try:
            if not read_manifest(self.path).retired:
                return
            with self._lock():
                m = read_manifest(self.path)
                if self._collect(m):
                    self._commit(m, catalog=None)
        except (OSError, CaseBaseError) as exc:
            self.notes.append(f"retired files of {self.path} not deleted on close: {exc}")

    def __del__(self) -> None:
        if getattr(self, "_reader_lock", None) is not None:
            os.close(self._reader_lock)  # type: ignore[arg-type]
            self._reader_lock = None

    # ---- metadata ---------------------------------------------------------------
    def feature_names(self, street: int | str) -> list[str]:
        return list(self.manifest.features[street_name(street)])

    def games(self) -> list[GameDef]:
        return [GameDef.from_dict(g) for g in self.manifest.games]

    def similarity(self) -> "SimilarityConfig":
        """The ``SimilarityConfig`` from ``similarity.toml`` (default CASPER if none)."""
        if self._similarity is None:
            if self.manifest.similarity:
                f = self.path / self.manifest.similarity
                try:
                    verify_file(f, self.manifest.checksums[self.manifest.similarity], str(self.path))
                except CaseBaseError as exc:
                    raise CaseBaseError(f"{exc}; to change a case base's similarity use `cbr casebase "
                                        "similarity` (CaseBase.set_similarity), not an editor") from None
                try:
                    self._similarity = load_similarity(f)
                except ConfigError:  # a measure of another package, not installed here (or broken)?
                    from cbr.store.needs import missing_plugins, plugin_needed

                    missing = [n for n in missing_plugins(self.path, self.manifest) if n.group == "cbr.similarity"]
                    if not missing:
                        raise
                    raise CaseBaseError(plugin_needed(self.path, missing[0])) from None
            else:
                self._similarity = default_similarity()
        return self._similarity

    def set_similarity(self, config: "SimilarityConfig", *, rebuild_indexes: bool = True) -> list[str]:
        """Replace the case base's similarity configuration (checked against its features), atomically:
        the new configuration goes to a new file (``similarity-N.toml``) and the manifest's commit
        switches to it, so a crash at any point leaves the old configuration or the new one, each
        with its checksum; the old file is removed once no other reader has the case base open
        (else by a later commit). The shipped case bases are refused. Saved indexes built with other settings no longer serve queries:
        with ``rebuild_indexes`` (the default) they are rebuilt from the cases and saved now, and the
        streets rebuilt are returned; without it they are rebuilt on next use.

        >>> import tempfile, numpy as np
        >>> from cbr.similarity import default_casper
        >>> from cbr.store.writer import CaseBaseWriter
        >>> root = tempfile.mkdtemp()
        >>> with CaseBaseWriter(f"{root}/demo") as w:
        ...     ids = w.add_rows("preflop", np.ones((2, 8), np.float32), ["c", "r"])
        >>> with CaseBase.open(f"{root}/demo") as cb:
        ...     cb.set_similarity(default_casper(threshold=0.9))
        ['preflop']
        >>> CaseBase.open(f"{root}/demo").similarity().threshold
        0.9
        """
        from cbr.store import is_shipped
        from cbr.store.indexes import check_similarity, dump_similarity

        if is_shipped(self.path):
            raise CaseBaseError(f"the shipped case base {self.path.name!r} is never written to; set the similarity "
                                f"of a copy of it (copy its folder, {self.path}, e.g. with cp -r, or retain into "
                                f"a copy: a table that retains makes one of its bots' case base on first use)")
        check_similarity(config, self.manifest.features)
        with self._lock():
            m = read_manifest(self.path)
            old = m.similarity
            name = next_similarity_name(old, self.path)
            dump_similarity(config, self.path / name)  # a new file: the manifest still names the old one
            m.similarity = name
            m.checksums[name] = file_checksum(self.path / name)
            if old and old != name:
                m.checksums.pop(old, None)
            self._commit(m, catalog=None)  # the commit point; the parts (and the catalog) are unchanged
            if old and old != name and self._no_other_readers():
                (self.path / old).unlink(missing_ok=True)
        self._similarity = None
        self._indexes.clear()
        self._answer_rows.clear()
        self._dirty_indexes.clear()
        rebuilt: list[str] = []
        if rebuild_indexes and not self.memory_map:
            for s in STREETS:
                if s in self.manifest.index and self.count(s):
                    self.index(s)  # built with other settings: rebuilt from the cases
                    rebuilt.append(s)
            self.save_indexes()
        return rebuilt

    # ---- cases ---------------------------------------------------------------------
    def table(self, street: int | str) -> pa.Table:
        """All cases of a street as one Arrow table (parts in commit order)."""
        import pyarrow as pa

        s = street_name(street)
        if s not in self._tables:
            self._refuse_damaged(s)
            schema = case_schema(self.manifest.features[s])
            tables = []
            for entry in self.manifest.parts[s]:
                seen = _part_stat(self.path / entry["file"])  # before the read: a change after it is seen later
                t = read_part(self.path, entry, schema)
                self._verified[entry["file"]] = seen
                if t.num_rows != entry["rows"]:
                    raise CaseBaseError(f"{self.path}: {entry['file']} holds "
                                        f"{differs_from_manifest(t.num_rows, entry['rows'], 'cases')}")
                tables.append(t)
            tables += [log.table(s, self.manifest.features[s]) for log in self._retention_logs() if log.rows[s]]
            table = pa.concat_tables(tables) if tables else schema.empty_table()
            ids = table.column("case_id").to_numpy()
            if len(ids) and (ids[0] < 0 or ids[-1] >= self.next_case_id or np.any(np.diff(ids) <= 0)):
                raise CaseBaseError(f"{self.path}: the case ids of {s} are not increasing below next_case_id "
                                    f"{self.next_case_id}; the case base is damaged")
            self._tables[s] = table
            self._tails[s] = []
        elif self._tails[s]:
            tail = chunks_table(self._tails[s], self.manifest.features[s])
            self._tables[s] = pa.concat_tables([self._tables[s], tail]).combine_chunks()
            self._tails[s] = []
        return self._tables[s]

    def rows_since(self, street: int | str, start: int) -> CaseArrays:
        """The street's cases from row ``start`` on (retained since a caller last looked):
        costs the new rows only. Rows are in :meth:`table` order (row number = index id)."""
        s = street_name(street)
        base = self._tables.get(s)
        if base is None or start < base.num_rows:
            return _arrays(s, self.manifest.features[s], self.table(s).slice(start))
        names = self.manifest.features[s]
        pieces, end = [], self.count(s)  # the tails hold the last rows: walk back from the end
        for ids, b in reversed(self._tails[s]):
            if end <= start:
                break
            row = end - len(b)
            cut = max(0, start - row)
            pieces.append((ids[cut:], b.features[cut:], b.actions[cut:], b.outcomes[cut:]))
            end = row
        pieces.reverse()
        if not pieces:
            return _arrays(s, names, base.slice(base.num_rows))
        if len(pieces) == 1:  # what one retained hand added: no concatenation
            ids, X, acts, outs = pieces[0]
            return CaseArrays(s, list(names), ids, X, np.array(acts, dtype="<U1"), None, outs)  # type: ignore[arg-type]
        arrays = CaseArrays(s, list(names), np.concatenate([p[0] for p in pieces]),
                            np.concatenate([p[1] for p in pieces]),
                            np.array([a for p in pieces for a in p[2]], dtype="<U1"), None,  # type: ignore[arg-type]
                            np.concatenate([p[3] for p in pieces]))
        return arrays

    def cases(self, street: int | str) -> CaseArrays:
        """Features (n, d) float32, actions, outcomes (NaN = unknown) and case ids of a street.

        Built once per loaded table and shared by later calls (until an append changes
        the street), so the arrays are read-only."""
        s = street_name(street)
        t = self.table(s)
        hit = self._arrays.get(s)
        if hit is not None and hit.table is t:
            return hit
        arrays = self._arrays[s] = _arrays(s, self.manifest.features[s], t)
        return arrays

    def street_view(self, street: int | str, similarity: "SimilarityConfig | None" = None) -> StreetView:
        """The street's retrieval data (:class:`~cbr.store.street_view.StreetView`: index, action
        codes and outcomes, case ids), made on first use and kept current by this object: every
        case it takes later (its appends, what :meth:`refresh` reads) extends it in place, so
        every user of this case base reads one copy and none catches up. ``similarity``: a
        configuration other than the case base's own (:meth:`similarity`); the view then has an
        index of its own, built from the cases and grown with them (one per street and
        configuration: equal configurations share it).

        >>> import tempfile, numpy as np
        >>> from cbr.store.writer import CaseBaseWriter
        >>> root = tempfile.mkdtemp()
        >>> with CaseBaseWriter(f"{root}/demo", build_index=False) as w:
        ...     ids = w.add_rows("flop", np.ones((2, 12), np.float32), "cr")
        >>> cb = CaseBase.open(f"{root}/demo")
        >>> view = cb.street_view("flop")
        >>> view is cb.street_view(1), view.index is cb.index("flop"), view.case_ids.tolist()
        (True, True, [0, 1])
        """
        s = street_name(street)
        key = (s, None if similarity is None else self._similarity_key(similarity))
        view = self._views.get(key)
        if view is None:
            cases = self.cases(s)
            if not len(cases):
                index = None
            elif similarity is None:
                index = self.index(s)
            else:
                index = new_index(similarity, s).fit(cases.features)
            view = self._views[key] = StreetView(s, index, cases, own_index=similarity is not None)
        elif similarity is None and view.index is not None and view.index is not self._indexes.get(s):
            view.index = self.index(s)  # replaced (a new similarity, a rebuild): over the same cases
        return view

    def _similarity_key(self, config: "SimilarityConfig") -> str:
        """What identifies a similarity configuration among the views (its TOML; once per object)."""
        hit = self._view_keys.get(id(config))
        if hit is None or hit[0] is not config:
            hit = self._view_keys[id(config)] = (config, config.to_toml())
        return hit[1]

    def sql(self, query: str) -> Any:
        """Run SQL on the views ``cases`` and ``cases_<street>``; returns a DuckDB result
        (``.fetchall()``, ``.to_arrow_table()``, ``.df()``, ``.description``). Ctrl-C interrupts a
        running query (``KeyboardInterrupt``). Only queries are run: a statement that could
        write or change anything (``COPY ... TO``, ``CREATE``, ``ATTACH``, ``SET``, ``INSTALL``...)
        is refused before any runs (:func:`refuse_writing_sql`), and so is a query of several
        statements (only the last one's result would come back)."""
        return self._sql(query, STREETS)

    def _sql(self, query: str, streets: Sequence[str]) -> Any:
        """:meth:`sql` over the views of ``streets`` only (with every street, ``cases`` too):
        only their parts are checked and read, so a damaged part of another street does not
        stop a query of these (:meth:`rows_by_id`)."""
        con = self._sql_over(streets)
        refuse_writing_sql(con, query, single=True)
        with _sql_call(con):
            result = con.execute(query)
        if result is None:  # DuckDB runs nothing for an empty query or one of comments only
            raise CaseBaseError("SQL failed: no statement to run (the query is empty or only comments)")
        return result

    def _sql_over(self, streets: Sequence[str]) -> Any:
        """The SQL connection, with the views of ``streets`` (each made when first needed, after
        its parts are checked: :meth:`verify_parts`) and, when they are every street, ``cases``."""
        import pyarrow as pa

        if self._con is None:
            self._con = _catalog.connect(self.path, self.manifest, streets=())
        for s in streets:
            if s in self._con_streets:
                continue
            self.verify_parts(s)  # DuckDB reads the parts itself: check them first (once each)
            logged = None
            if any(log.rows[s] for log in self._retention_logs()):
                logged = pa.concat_tables([log.table(s, self.manifest.features[s]) for log in self._retention_logs()])
            _catalog.add_street_view(self._con, self.path, self.manifest, s, logged)
            self._con_streets.add(s)
        if not self._con_union and set(streets) == set(STREETS):
            _catalog.add_union_view(self._con)
            self._con_union = True
        return self._con

    def verify_parts(self, street: int | str) -> None:
        """Raise :class:`CaseBaseError` unless every listed part of ``street`` is whole: not
        missing nor of another size (:attr:`damaged_parts`), and of the size and CRC-32 the
        manifest lists (each part checked once per handle). The line names the part."""
        s = street_name(street)
        self._refuse_damaged(s)
        for entry in self.manifest.parts[s]:
            if entry["file"] not in self._verified:
                seen = _part_stat(self.path / entry["file"])  # before the read: a change after it is seen later
                verify_file(self.path / entry["file"], entry, str(self.path))
                self._verified[entry["file"]] = seen

    def sql_rows(self, query: str, limit: int | None = None) -> tuple[list[str], list[tuple[Any, ...]], bool]:
        """``(columns, rows, truncated)`` of a query: at most ``limit`` rows (None: all);
        ``truncated`` says whether more were left. Ctrl-C interrupts (``KeyboardInterrupt``).

        >>> import tempfile, numpy as np
        >>> from cbr.store.writer import CaseBaseWriter
        >>> root = tempfile.mkdtemp()
        >>> with CaseBaseWriter(f"{root}/demo", build_index=False) as w:
        ...     ids = w.add_rows("flop", np.ones((5, 12), np.float32), "ccrcf")
        >>> CaseBase.open(f"{root}/demo").sql_rows("SELECT case_id FROM cases ORDER BY 1", limit=2)
        (['case_id'], [(0,), (1,)], True)
        """
        result = self.sql_stream(query, limit)
        rows = [row for batch in result.batches() for row in batch]
        return result.columns, rows, result.truncated

    def sql_stream(self, query: str, limit: int | None = None) -> "SqlRows":
        """The rows of a query as DuckDB produces them, at most ``limit`` (None: all), for a
        caller that uses them batch by batch (:meth:`SqlRows.batches`) and never holds them
        all; Ctrl-C interrupts the query and each fetch (``KeyboardInterrupt``)."""
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be at least 0, got {limit}")
        result = self.sql(query)  # (opens the connection the rows are then fetched on)
        return SqlRows(self._con, result, limit)

    # ---- retrieval index ----------------------------------------------------------------
    def index(self, street: int | str) -> "CaseIndex":
        """The street's ``CaseIndex`` (ids = row numbers of :meth:`table`), loaded on first
        use. A saved index that lags behind appends is extended; one that disagrees with
        the cases or the similarity configuration, or whose files are damaged, is rebuilt
        (a damaged one is noted in :attr:`notes`)."""
        s = street_name(street)
        if s in self._indexes:
            return self._indexes[s]
        if self.memory_map:
            self._indexes[s] = self._mapped_index(s)
            return self._indexes[s]
        X = self.cases(s).features
        config = self.similarity()
        entry = self.manifest.index.get(s)
        index: "CaseIndex | None" = None
        if entry:
            try:
                index = load_index(self.path, entry)
            except CaseBaseError as exc:  # only a cache of the cases: rebuild it, and say so
                self.notes.append(f"{exc}; rebuilt the {s} index from the cases")
        if index is not None:
            have = index.n_cases_
            if not _settings_match(index, config, s) or have > len(X) or not np.array_equal(index.cases_[:have], X[:have]):
                index = None
            elif have < len(X):
                index.add(X[have:])
                self._dirty_indexes.add(s)
            elif "rows.json" not in entry["files"]:  # saved before answer rows existed: save it with them
                self._dirty_indexes.add(s)
        if index is None:
            index = new_index(config, s)
            if len(X):
                index.fit(X)
                self._dirty_indexes.add(s)
        self._indexes[s] = index
        return index

    def rebuild_index(self, street: int | str) -> "CaseIndex":
        """Build the street's index anew from its cases; it is saved (with its answer rows) as a
        new generation by the next :meth:`save_indexes` or :meth:`close` (``cbr casebase
        repair`` does this for damaged index files)."""
        s = street_name(street)
        self._indexes.pop(s, None)
        self._answer_rows.pop(s, None)
        X = self.cases(s).features
        index = new_index(self.similarity(), s)
        if len(X):
            index.fit(X)
        self._indexes[s] = index
        self._dirty_indexes.add(s)
        return index

    def answer_rows_damaged(self, street: int | str, error: CaseBaseError) -> None:
        """Note that the street's saved index or answer rows are damaged (``error`` says how) and
        rebuild both from the cases, to be saved as a new generation (as a damaged index is)."""
        s = street_name(street)
        self.notes.append(f"{error}; rebuilt the {s} index and its answer rows from the cases")
        self.rebuild_index(s)

    def answer_source(self, street: int | str) -> "tuple[CaseIndex, AnswerRows] | None":
        """The street's index and answer rows (every case's action, the provenance of any
        case: :mod:`cbr.store.answer_rows`) read from the saved index alone, when it and its
        answer rows cover every case of the street: an answer then reads neither the
        street's Parquet nor pyarrow (only, once per handle, the CRC-32 of its parts:
        :meth:`check_street`, which raises first when one is damaged). None when they do not
        (an index saved before answer rows existed, cases retained since, other similarity
        settings; damaged files, which are rebuilt from the cases and noted in :attr:`notes`);
        then answer from :meth:`cases` and :meth:`index`. Memory-mapped, damaged files raise
        :class:`CaseBaseError` instead.

        >>> cb = CaseBase.open(resolve_casebase("default"))  # doctest: +SKIP
        >>> index, rows = cb.answer_source("flop")  # doctest: +SKIP
        """
        s = street_name(street)
        self.check_street(s)
        n = self.count(s)
        rows = self._answer_rows.get(s)
        index = self._indexes.get(s)
        if rows is not None and len(rows) == n and index is not None and index.n_cases_ == n:
            return index, rows
        entry = self.manifest.index.get(s)
        if not entry or "rows.json" not in entry["files"] or entry["cases"] != n or n == 0:
            return None
        try:
            if index is None or index.n_cases_ != n:
                index = load_index(self.path, entry, mmap=self.memory_map)
                if not _settings_match(index, self.similarity(), s) or index.n_cases_ != n:
                    return None  # saved with other settings: the index is rebuilt from the cases
            rows = AnswerRows.load(self.path / entry["file"], entry["files"], n)
        except CaseBaseError as exc:
            if self.memory_map:
                raise
            self.answer_rows_damaged(s, exc)
            return None
        self._indexes[s] = index
        self._answer_rows[s] = rows
        return index, rows

    def check_street(self, street: int | str) -> None:
        """Raise :class:`CaseBaseError` when a Parquet part of ``street`` is damaged, in one line
        naming the part and what mends it, though an answer may come from the saved index
        alone: missing or of another size (found by :meth:`open`), or unlike the size and
        CRC-32 the manifest lists. Each part's CRC-32 is taken once per handle and again only
        when the part changed on disk since (another size or modification time: one ``stat``
        per part and call, about 2 us), so a part cut or replaced while the case base is open
        (a server running for days) is refused at the next call, not answered from what is
        loaded. Memory-mapped (streets larger than memory) only the size is checked: a CRC
        would read the whole street; damage in place is found when rows are read, or by
        ``cbr casebase verify``. The other streets are unaffected. Costs one CRC-32 of the
        street's parts per handle (about 1 ms a MB), then one ``stat`` per part."""
        s = street_name(street)
        try:
            for entry in self.manifest.parts[s]:
                rel = entry["file"]
                seen = self._verified.get(rel)
                now = None if self.memory_map else _part_stat(f"{self.path}/{rel}")  # (mapped: size alone, below)
                if seen is not None and seen == now:
                    continue
                self._verified.pop(rel, None)  # changed since it was checked (or never checked): checked now
                found = self._still_damaged(entry)
                if found is not None:
                    raise CaseBaseError(found)
                if self.memory_map:
                    found = part_at_a_glance(self.path, entry)
                    if found is not None:
                        raise CaseBaseError(found)
                    continue
                verify_part(self.path, entry)
                if now is not None:
                    self._verified[rel] = now
        except CaseBaseError as exc:
            raise self._street_refused(s, exc) from None

    @staticmethod
    def _street_refused(s: str, exc: CaseBaseError) -> CaseBaseError:
        """:meth:`check_street`'s line for a damaged part of street ``s``: what is wrong, and what mends it."""
        return CaseBaseError(f"{exc}: no {s} query is answered until the part is restored from a copy or "
                             f"the case base rebuilt with cbr build (cbr casebase verify lists every problem, "
                             f"cbr casebase repair mends the rest; the other streets answer)")

    def _check_parts_read(self, s: str) -> None:
        """Before DuckDB reads street ``s``'s parts: :meth:`check_street`, and one ``stat`` of
        each part even when checked already (cut or removed since), so damage is said in the
        library's line, never in DuckDB's (``No magic bytes found ...``)."""
        self.check_street(s)
        for entry in self.manifest.parts[s]:
            found = part_at_a_glance(self.path, entry)
            if found is not None:
                raise self._street_refused(s, CaseBaseError(found))

    def _refuse_damaged(self, s: str) -> None:
        """Raise the line :meth:`open` found for a damaged part of street ``s`` (missing, or of
        another size), if any."""
        for entry in self.manifest.parts[s]:
            found = self._still_damaged(entry)
            if found is not None:
                raise CaseBaseError(found)

    def _still_damaged(self, entry: dict) -> "str | None":
        """What :meth:`open` found wrong with a part, unless one ``stat`` now finds it whole
        again (restored from a copy while the case base was open: then it is forgotten, and
        the part is checked as any other)."""
        found = self.damaged_parts.get(entry["file"])
        if found is not None and part_at_a_glance(self.path, entry) is None:
            del self.damaged_parts[entry["file"]]
            return None
        return found

    def _mapped_index(self, s: str) -> "CaseIndex":
        """The street's saved index, memory-mapped; it must cover every case of the street
        with the case base's similarity settings (it is read-only, so it cannot catch up)."""
        entry = self.manifest.index.get(s)
        if not entry:
            raise CaseBaseError(f"{self.path}: no saved {s} index to map; open it once without memory "
                                f"mapping to build and save one")
        index = load_index(self.path, entry, mmap=True)
        if not _settings_match(index, self.similarity(), s):
            raise CaseBaseError(f"{self.path}: the saved {s} index was built with other similarity settings "
                                f"(its similarity was set with --no-rebuild?); rebuild every street's index: "
                                f"cbr casebase similarity NAME --from FILE with the case base's current similarity "
                                f"file, or open it without memory mapping and query each street")
        if index.n_cases_ != self.count(s):
            raise CaseBaseError(f"{self.path}: the saved {s} index covers {index.n_cases_} of "
                                f"{counted(self.count(s), 'case')} (cases retained since); open it once without memory mapping to extend it")
        return index

    def column(self, street: int | str, name: str) -> np.ndarray:
        """One column of a street's cases as a numpy array, in row order (row number =
        index id): from the loaded table if there is one, else read alone from the parts
        and the retention log, without the other columns.

        >>> import tempfile, numpy as np
        >>> from cbr.store.writer import CaseBaseWriter
        >>> root = tempfile.mkdtemp()
        >>> with CaseBaseWriter(f"{root}/demo", build_index=False) as w:
        ...     ids = w.add_rows("flop", np.ones((3, 12), np.float32), "crf")
        >>> CaseBase.open(f"{root}/demo").column("flop", "action").tolist()
        ['c', 'r', 'f']
        """
        import pyarrow as pa

        s = street_name(street)
        if s in self._tables:
            return self.table(s).column(name).to_numpy()
        self._refuse_damaged(s)
        pieces = [read_part_column(self.path, entry, name) for entry in self.manifest.parts[s]]
        pieces += [log.table(s, self.manifest.features[s]).column(name).combine_chunks()
                   for log in self._retention_logs() if log.rows[s]]
        if not pieces:
            return case_schema(self.manifest.features[s]).empty_table().column(name).to_numpy()
        return pa.chunked_array(pieces).to_numpy()

    def rows_by_id(self, street: int | str, case_ids: Sequence[int], columns: Sequence[str]) -> list[dict[str, Any]]:
        """The ``columns`` (those the street has) of the cases ``case_ids``, as dicts in that
        order, through the catalog: DuckDB reads only what it needs from the parts. A damaged
        part of the street (cut or missing even since it was checked) raises
        :meth:`check_street`'s line first, not DuckDB's.

        >>> import tempfile, numpy as np
        >>> from cbr.store.writer import CaseBaseWriter
        >>> root = tempfile.mkdtemp()
        >>> with CaseBaseWriter(f"{root}/demo", build_index=False) as w:
        ...     ids = w.add_rows("flop", np.ones((3, 12), np.float32), "crf")
        >>> CaseBase.open(f"{root}/demo").rows_by_id("flop", [2, 0], ["action", "no_such"])
        [{'action': 'f'}, {'action': 'c'}]
        """
        import pyarrow as pa

        s = street_name(street)
        if not len(case_ids):
            return []
        self._check_parts_read(s)
        probe = self._sql(f"SELECT * FROM cases_{s} LIMIT 0", (s,))  # this street's parts only
        have = {d[0] for d in probe.description}
        with _sql_call(self._con):
            probe.fetchall()  # finish the result before the next statement
        cols = [c for c in columns if c in have]
        wanted = pa.table({"case_id": pa.array(list(case_ids), pa.int64()),
                           "_order": pa.array(np.arange(len(case_ids), dtype=np.int64))})
        self._con.register("_wanted_cases", wanted)
        try:
            result = self._sql(f"SELECT {', '.join(f'c.{c}' for c in cols) or 'c.case_id'} FROM cases_{s} c "
                               f"JOIN _wanted_cases w USING (case_id) ORDER BY w._order", (s,))
            with _sql_call(self._con):
                rows = result.fetchall()
        finally:
            self._con.unregister("_wanted_cases")
        if len(rows) != len(case_ids):
            raise CaseBaseError(f"{self.path}: {len(case_ids) - len(rows)} of the {s} cases asked for "
                                f"are not in the catalog; the case base is damaged")
        return [dict(zip(cols, row)) for row in rows]

    def save_indexes(self) -> None:
        """Persist the indexes built or grown since opening, each as a new generation
        directory (the one it replaces is retired, see the module docstring)."""
        if not self._dirty_indexes:
            return
        with self._lock():
            m = read_manifest(self.path)
            self._collect(m)
            for s in sorted(self._dirty_indexes):
                index = self._indexes.get(s)
                if index is None:
                    continue
                size = index.n_cases_
                if size != _committed_count(self.path, m, s) or size == 0:
                    continue  # someone appended meanwhile, or nothing to index: rebuild later
                old = m.index.get(s)
                m.index[s] = save_index(index, self.path, s, old,
                                        rows=lambda d, s=s, n=size, old=old: self._write_answer_rows(s, n, d, old))
                if old:
                    m.retired.append({"file": old["file"], "since": now_utc()})
            self._commit(m, catalog=None)  # the parts are unchanged, so is the catalog's view of them
            if self._collect(m):  # the manifest points at the new generations: the old go if no one reads
                self._commit(m, catalog=None)
        self._dirty_indexes.clear()

    def _write_answer_rows(self, s: str, n: int, directory: Path, old: dict[str, Any] | None = None) -> None:
        """The answer rows of the street's first ``n`` cases, into ``directory``. When the
        generation ``old`` (a manifest entry) has answer rows for the first of them, those
        are carried over (:meth:`AnswerRowsWriter.carry`) and only the rows after them are
        read and written: saving after a retained hand costs its rows, not the street's."""
        with AnswerRowsWriter(directory) as writer:
            start = self._carry_answer_rows(writer, s, n, old)
            for ids, actions, columns in self._answer_segments(s, start, n):
                writer.add(ids, actions, columns)

    def _carry_answer_rows(self, writer: AnswerRowsWriter, s: str, n: int, old: dict[str, Any] | None) -> int:
        """Carry ``old``'s answer rows into ``writer`` if they hold the street's first rows
        (the rows are append-only; the last carried case id is checked against the cases);
        the number of rows carried, 0 when they are missing, damaged or do not match."""
        if not old or "rows.json" not in old["files"] or not 0 < old["cases"] <= n:
            return 0
        have = int(old["cases"])
        where = self.path / old["file"]
        try:
            rows = AnswerRows.load(where, old["files"], have)
            for name in ("provenance.bin", "provenance.npy"):  # checked whole before copying
                verify_file(where / name, old["files"][name], f"index {where}")
            piece = next(self._row_pieces(s, have - 1, have, ["case_id"]))  # that row's id only
            last = piece[0][piece[2]] if isinstance(piece, tuple) else piece.column(0)[0].as_py()
            if rows.rows([have - 1])[0]["case_id"] != int(last):
                return 0  # the cases are not those the old rows hold: write every row
            writer.carry(rows)
        except (CaseBaseError, ValueError):
            return 0
        return have

    def _row_pieces(self, s: str, start: int, stop: int, names: Sequence[str]) -> Iterator[Any]:
        """The street's rows ``start:stop`` in order, reading only what holds them: Arrow tables of
        columns ``names`` (sliced from the loaded table, or from the parts that hold the rows,
        those columns only), then the retention log's rows as they are, each piece a tuple
        ``(ids, RowBatch, lo, hi)`` (rows ``lo:hi`` of the chunk)."""
        loaded = self._tables.get(s)
        if loaded is not None:
            tables: list[tuple[int, Any]] = [(loaded.num_rows, lambda: loaded)]
            chunks = self._tails[s]
        else:
            tables = [(int(e["rows"]), lambda e=e: read_part_columns(self.path, e, names)) for e in self.manifest.parts[s]]
            chunks = [c for log in self._retention_logs() for c in log.chunks[s]]
        row = 0
        for rows, read in tables:
            if row + rows > start and row < stop:
                lo = max(0, start - row)
                yield read().select(list(names)).slice(lo, min(row + rows, stop) - row - lo)
            row += rows
        for ids, b in chunks:
            if row + len(b) > start and row < stop:
                yield ids, b, max(0, start - row), min(row + len(b), stop) - row
            row += len(b)

    def _answer_segments(self, s: str, start: int, stop: int) -> Iterator[tuple[Any, Any, dict[str, Any]]]:
        """The case ids, actions and provenance columns of the street's rows ``start:stop``
        (:meth:`_row_pieces`), as :meth:`AnswerRowsWriter.add` takes them; the retention log's
        few rows a hand are gathered into one piece."""
        ids_in: list[Any] = []
        actions: list[str] = []
        columns: dict[str, list[Any]] = {c: [] for c in PROVENANCE}
        for piece in self._row_pieces(s, start, stop, AnswerRowsWriter.COLUMNS):
            if not isinstance(piece, tuple):
                for b in piece.to_batches(max_chunksize=65536):
                    yield AnswerRowsWriter.batch_rows(b)
                continue
            ids, b, lo, hi = piece
            ids_in.append(ids[lo:hi])
            actions += b.actions[lo:hi]
            for c in PROVENANCE:
                columns[c] += b.meta[c][lo:hi]
        if ids_in:
            yield np.concatenate(ids_in), actions, columns

def _settings_match(index: "CaseIndex", config: "SimilarityConfig", street: str) -> bool:
    """Whether a saved index was built with the case base's similarity settings for ``street``."""
    return (index.similarity == street_similarity(config, street) and index.threshold == config.threshold
            and index.fallback_k == config.fallback_k and index.min_cases == config.min_cases)


def _arrays(street: str, names: Sequence[str], t: pa.Table) -> CaseArrays:
    """Read-only numpy arrays of a case table."""
    if t.num_rows:
        X = np.column_stack([t.column(f).to_numpy() for f in names]).astype(np.float32, copy=False)
    else:
        X = np.zeros((0, len(names)), np.float32)
    outcomes = t.column("outcome").to_numpy(zero_copy_only=False).astype(np.float64, copy=False)  # NULL -> NaN
    arrays = CaseArrays(street, list(names), np.array(t.column("case_id").to_numpy()), np.ascontiguousarray(X),
                        np.asarray(t.column("action").to_pylist(), dtype="<U1"), t, np.array(outcomes))
    for a in (arrays.case_ids, arrays.features, arrays.actions, arrays.outcomes):
        a.flags.writeable = False
    return arrays



class SqlRows:
    """The rows of a query (:meth:`CaseBase.sql_stream`): its ``columns``, and the rows batch by
    batch as DuckDB produces them (:meth:`batches`), at most ``limit`` of them (None: all);
    once they are read, ``truncated`` says whether the query had more than ``limit``.

    >>> import duckdb
    >>> con = duckdb.connect()
    >>> rows = SqlRows(con, con.execute("SELECT range AS n FROM range(5)"), limit=3)
    >>> rows.columns, list(rows.batches(size=2)), rows.truncated
    (['n'], [[(0,), (1,)], [(2,)]], True)
    """

    def __init__(self, con: Any, result: Any, limit: int | None) -> None:
        self.columns: list[str] = [d[0] for d in (result.description or [])]
        self.truncated = False
        self._con, self._result, self._limit = con, result, limit

    def batches(self, size: int = 5000) -> Iterator[list[tuple[Any, ...]]]:
        """The rows, at most ``size`` at a time (read once: a second call gives what is left)."""
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        while self._limit is None or self._limit > 0:
            want = size if self._limit is None else min(size, self._limit)
            with _sql_call(self._con):
                rows = self._result.fetchmany(want)
            if not rows:
                return
            if self._limit is not None:
                self._limit -= len(rows)
            yield rows
        with _sql_call(self._con):  # the limit reached: were there more?
            self.truncated = bool(self._result.fetchmany(1))


@contextmanager
def _sql_call(con: Any) -> Iterator[None]:
    """A DuckDB call that Ctrl-C interrupts (``KeyboardInterrupt``) and whose errors are one
    :class:`CaseBaseError` line. DuckDB reports an interrupt as ``InterruptException``, or
    while fetching as ``RuntimeError("Query interrupted")``."""
    import duckdb

    try:
        with _interruptible(con):
            yield
    except duckdb.InterruptException:
        raise KeyboardInterrupt from None
    except RuntimeError as exc:
        if "interrupted" in str(exc).lower():
            raise KeyboardInterrupt from None
        raise
    except duckdb.Error as exc:
        raise CaseBaseError(f"SQL failed: {str(exc).splitlines()[0]}") from None


#: The PRAGMAs that only answer (a table of information), which :meth:`CaseBase.sql` runs;
#: the others change settings (``enable_profiling``, which also prints) or write.
READ_ONLY_PRAGMAS = frozenset({
    "collations", "database_list", "database_size", "functions", "metadata_info", "platform", "show",
    "show_databases", "show_tables", "show_tables_expanded", "storage_info", "table_info", "user_agent",
    "version", "extension_versions"})


def refuse_writing_sql(con: Any, query: str, *, single: bool = False) -> None:
    """Raise :class:`CaseBaseError` (field ``sql``) unless every statement of ``query`` only
    reads: ``SELECT`` (also ``WITH``, ``FROM``, ``VALUES``, ``DESCRIBE``, ``SHOW``, ``SUMMARIZE``),
    ``EXPLAIN`` and the PRAGMAs of :data:`READ_ONLY_PRAGMAS`, by DuckDB's own parse of it. SQL
    DuckDB cannot parse passes (running it says why). ``single``: also refuse a query of
    several statements (DuckDB would answer only the last one's result, the others' dropped).

    >>> from cbr.store import duck
    >>> con = duck.connect()
    >>> refuse_writing_sql(con, "WITH a AS (SELECT 1) SELECT * FROM a; PRAGMA table_info('a'); EXPLAIN SELECT 1")
    >>> refuse_writing_sql(con, "SELECT 1; COPY (SELECT 1) TO 'x.csv'")
    Traceback (most recent call last):
    ...
    cbr.errors.CaseBaseError: statement 2 is a COPY: only queries are run on a case base (SELECT, WITH, DESCRIBE, SHOW, EXPLAIN, PRAGMA table_info...)
    """
    import duckdb

    try:
        statements = con.extract_statements(query)
    except duckdb.Error:
        return
    for number, statement in enumerate(statements, 1):
        kind = statement.type
        if kind in (duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN):
            continue
        if kind == duckdb.StatementType.PRAGMA:
            text = statement.query.strip()
            name = re.match(r"(?i)pragma\s+([a-z_]+)\s*(.*)", text)
            if name and name.group(1).lower() in READ_ONLY_PRAGMAS and not name.group(2).lstrip().startswith("="):
                continue
            what = f"a PRAGMA {name.group(1) if name else text}"
        else:
            word = re.match(r"\s*([A-Za-z]+)", statement.query or "")
            installs = kind == duckdb.StatementType.LOAD and word and word.group(1).upper() in ("INSTALL", "FORCE")
            said = "INSTALL" if installs else kind.name  # DuckDB types an INSTALL as a LOAD
            what = f"{'an' if said[0] in 'AEIOU' else 'a'} {said}"
        where = f"statement {number}" if len(statements) > 1 else "the statement"
        raise CaseBaseError(f"{where} is {what}: only queries are run on a case base (SELECT, WITH, DESCRIBE, "
                            f"SHOW, EXPLAIN, PRAGMA table_info...)", field="sql")
    if single and len(statements) > 1:
        raise CaseBaseError(f"the SQL holds {len(statements)} statements: one query is run at a time (only the "
                            f"last one's result would be shown); run each alone", field="sql")


@contextmanager
def _interruptible(con: Any) -> Iterator[None]:
    """Let Ctrl-C stop a DuckDB call running in C: the signal's wakeup fd wakes a watcher
    thread that calls ``con.interrupt()`` (the Python handler only runs after the call
    returns). Only in the main thread; elsewhere a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    r, w = os.pipe()
    stop_r, stop_w = os.pipe()
    os.set_blocking(w, False)
    try:
        old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except ValueError:  # pragma: no cover - not the main thread after all
        for fd in (r, w, stop_r, stop_w):
            os.close(fd)
        yield
        return

    def watch() -> None:
        while True:
            ready, _, _ = select.select([r, stop_r], [], [])
            if stop_r in ready:
                return
            if {signal.SIGINT, signal.SIGTERM} & set(os.read(r, 64)):
                con.interrupt()
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(old)
        os.write(stop_w, b"x")
        watcher.join()
        for fd in (r, w, stop_r, stop_w):
            os.close(fd)


def _committed_count(root: Path, m: Manifest, street: str) -> int:
    """Cases of ``street`` that manifest ``m`` and its retention log hold now."""
    n = m.counts[street]["total"]
    if m.log:
        log = RetentionLog(root / m.log, m.next_case_id)
        log.refresh()
        n += log.rows[street]
    return n


def _check_files(p: Path, m: Manifest) -> dict[str, str]:
    """Every file the manifest lists exists (cheap: one stat each); returns what is wrong with
    each part missing or of another size than listed, by file (the line a read of it raises,
    :func:`~cbr.store.parts.part_at_a_glance`), which stops only what reads that part, as a
    corrupted one does."""
    for s in STREETS:
        if not m.parts[s]:
            raise CaseBaseError(f"{p}: the manifest lists no Parquet part for {s}")
    # (the similarity file is checked when it is read, CaseBase.similarity: a damaged one leaves
    # the case base open to what does not read it, such as setting a new one, the way out)
    if m.log and not (p / m.log).is_file():
        raise CaseBaseError(f"{p}: missing retention log {m.log} (listed in {MANIFEST}); "
                            "the retained cases in it are lost")
    damaged: dict[str, str] = {}
    for s in STREETS:
        for entry in m.parts[s]:
            found = part_at_a_glance(p, entry)
            if found is not None:
                damaged[entry["file"]] = found
    return damaged


def _part_stat(path: "str | Path") -> "tuple[int, int] | None":
    """A part's size and modification time (ns), which a CRC-32 taken of it stays good for;
    None when it cannot be stat'ed (the check says why)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns
