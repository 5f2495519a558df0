"""Case bases on disk: open one, validate it, query it, grow it durably.

Layout of ``casebases/<name>/``::

    manifest.json              schema version, feature set, games, sources, counts, parts
    similarity.toml            the similarity configuration used for retrieval
    cases/<street>/part-NNNNN.parquet   the cases of a street, in parts
    catalog.duckdb             SQL views over the parts (relative paths)
    index/<street>/            one retrieval index per street (index.faiss, cases.npy, meta.json)

A case base is written by :class:`~cbr.store.writer.CaseBaseWriter`, then opened here:

>>> import tempfile, numpy as np
>>> from cbr.store.writer import CaseBaseWriter
>>> root = tempfile.mkdtemp()
>>> with CaseBaseWriter(f"{root}/demo", build_index=False) as w:
...     ids = w.add_rows("preflop", np.ones((2, 8), np.float32), ["c", "r"], source="demo")
>>> cb = CaseBase.open(f"{root}/demo")
>>> cb.count("preflop"), cb.sql("select count(*) from cases").fetchone()
(2, (2,))
>>> cb.append("flop", np.zeros(12, np.float32), "f").tolist()     # a retained case
[2]

Each appended batch (retained cases) becomes a new Parquet part written through a temp
file + fsync + rename; the manifest is then replaced atomically and that is the commit.
A crash in between leaves an unlisted part that readers ignore and the next writer
deletes.
"""
from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from cbr.errors import CaseBaseError
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import STREETS, GameDef
from cbr.store import catalog as _catalog
from cbr.store.indexes import (default_similarity, extended_index, index_size, load_index, load_similarity,
                               new_index, save_index, street_similarity)
from cbr.store.manifest import MANIFEST, Manifest, read_manifest, write_manifest
from cbr.store.parts import (PART_RE, build_table, case_schema, count_actions, decision_meta, load_feature_set,
                             next_part_number, part_file, street_name, write_part)

__all__ = ["CaseBase", "CaseArrays"]


@dataclass(frozen=True)
class CaseArrays:
    """A street's cases as arrays: ``features`` (n, d) float32, ``actions`` (n,) ``'f'/'c'/'r'``."""

    street: str
    feature_names: list[str]
    case_ids: np.ndarray
    features: np.ndarray
    actions: np.ndarray
    table: pa.Table

    def __len__(self) -> int:
        return len(self.case_ids)


class CaseBase:
    """An opened case base. Use :meth:`open`; see the module docstring for the layout."""

    def __init__(self, path: Path, manifest: Manifest) -> None:
        self.path = Path(path)
        self.manifest = manifest
        self._tables: dict[str, pa.Table] = {}
        self._indexes: dict[str, Any] = {}
        self._dirty_indexes: set[str] = set()
        self._similarity: Any = None
        self._feature_set: Any = None
        self._con: Any = None

    # ---- opening --------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> "CaseBase":
        """Open and validate a case base (manifest, schema version, listed files).

        Raises :class:`CaseBaseError` with a message naming what is wrong.
        """
        p = Path(path)
        m = read_manifest(p)
        for s in STREETS:
            if not m.parts[s]:
                raise CaseBaseError(f"{p}: the manifest lists no Parquet part for {s}")
            for part in m.parts[s]:
                f = p / part["file"]
                if not f.is_file():
                    raise CaseBaseError(f"{p}: missing file {part['file']} (listed in {MANIFEST}); "
                                        "the case base is incomplete, rebuild it")
                try:
                    rows = pq.read_metadata(f).num_rows
                except (OSError, pa.ArrowException) as exc:
                    raise CaseBaseError(f"{p}: unreadable Parquet part {part['file']}: {exc}") from None
                if rows != int(part["rows"]):
                    raise CaseBaseError(f"{p}: {part['file']} holds {rows} cases, the manifest says {part['rows']}")
            if m.part_rows(s) != m.counts[s]["total"]:
                raise CaseBaseError(f"{p}: {s} counts ({m.counts[s]['total']}) disagree with its parts "
                                    f"({m.part_rows(s)})")
        if m.similarity and not (p / m.similarity).is_file():
            raise CaseBaseError(f"{p}: missing file {m.similarity} (the similarity configuration)")
        return cls(p, m)

    def __repr__(self) -> str:
        counts = ", ".join(f"{s}={self.manifest.counts[s]['total']}" for s in STREETS)
        return f"CaseBase({str(self.path)!r}, {counts})"

    def __enter__(self) -> "CaseBase":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Save indexes grown by appends (when writable) and release the SQL connection."""
        if self._dirty_indexes and self.writable:
            self.save_indexes()
        self._close_sql()

    def _close_sql(self) -> None:
        """Release the DuckDB connection (reopened on the next :meth:`sql`, over the current parts)."""
        if self._con is not None:
            self._con.close()
            self._con = None

    # ---- metadata ---------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def writable(self) -> bool:
        return os.access(self.path, os.W_OK)

    def feature_names(self, street: int | str) -> list[str]:
        return list(self.manifest.features[street_name(street)])

    def count(self, street: int | str | None = None) -> int:
        """Cases of a street, or of all streets."""
        if street is None:
            return self.manifest.total_cases
        return self.manifest.counts[street_name(street)]["total"]

    def games(self) -> list[GameDef]:
        return [GameDef.from_dict(g) for g in self.manifest.games]

    def feature_set(self) -> Any:
        """The feature-set plugin this case base was built with (for queries and retention)."""
        if self._feature_set is None:
            self._feature_set = load_feature_set(self.manifest.feature_set)
        return self._feature_set

    def similarity(self) -> Any:
        """The ``SimilarityConfig`` from ``similarity.toml`` (default CASPER if none)."""
        if self._similarity is None:
            if self.manifest.similarity:
                self._similarity = load_similarity(self.path / self.manifest.similarity)
            else:
                self._similarity = default_similarity()
        return self._similarity

    # ---- cases ---------------------------------------------------------------------
    def table(self, street: int | str) -> pa.Table:
        """All cases of a street as one Arrow table (parts in commit order)."""
        s = street_name(street)
        if s not in self._tables:
            tables = [pq.read_table(self.path / p["file"]) for p in self.manifest.parts[s]]
            schema = case_schema(self.manifest.features[s])
            self._tables[s] = pa.concat_tables([t.cast(schema) for t in tables]) if tables else schema.empty_table()
        return self._tables[s]

    def cases(self, street: int | str) -> CaseArrays:
        """Features (n, d) float32, actions and case ids of a street."""
        s = street_name(street)
        t = self.table(s)
        names = self.manifest.features[s]
        if t.num_rows:
            X = np.column_stack([t.column(f).to_numpy() for f in names]).astype(np.float32, copy=False)
        else:
            X = np.zeros((0, len(names)), np.float32)
        return CaseArrays(s, list(names), t.column("case_id").to_numpy(), np.ascontiguousarray(X),
                          np.asarray(t.column("action").to_pylist(), dtype="<U1"), t)

    def sql(self, query: str) -> Any:
        """Run SQL on the views ``cases`` and ``cases_<street>``; returns a DuckDB result
        (``.fetchall()``, ``.arrow()``, ``.df()``, ``.description``)."""
        import duckdb

        if self._con is None:
            self._con = _catalog.connect(self.path, self.manifest)
        try:
            return self._con.execute(query)
        except duckdb.Error as exc:
            raise CaseBaseError(f"SQL failed: {str(exc).splitlines()[0]}") from None

    # ---- retrieval index ----------------------------------------------------------------
    def index(self, street: int | str) -> Any:
        """The street's ``CaseIndex`` (ids = row numbers of :meth:`table`), loaded on first
        use. A saved index that lags behind appends is extended; one that disagrees with
        the cases or the similarity configuration is rebuilt."""
        s = street_name(street)
        if s in self._indexes:
            return self._indexes[s]
        X = self.cases(s).features
        config = self.similarity()
        entry = self.manifest.index.get(s)
        index = None
        if entry and (self.path / entry["file"]).exists():
            try:
                index = load_index(self.path / entry["file"])
            except Exception:  # the index is only a cache of the cases: rebuild it
                index = None
        if index is not None:
            have = index_size(index)
            same_config = (index.similarity == street_similarity(config, s)
                           and index.threshold == config.threshold and index.fallback_k == config.fallback_k)
            if not same_config or have > len(X) or not np.array_equal(index.cases_[:have], X[:have]):
                index = None
            elif have < len(X):
                index = extended_index(index, X[have:])
                self._dirty_indexes.add(s)
        if index is None:
            index = new_index(config, s)
            if len(X):
                index.fit(X)
                self._dirty_indexes.add(s)
        self._indexes[s] = index
        return index

    def save_indexes(self) -> None:
        """Persist the indexes built or grown since opening (atomic per file)."""
        if not self._dirty_indexes:
            return
        with self._lock():
            m = read_manifest(self.path)
            for s in sorted(self._dirty_indexes):
                index = self._indexes.get(s)
                if index is None:
                    continue
                size = index_size(index)
                if size != m.counts[s]["total"] or size == 0:
                    continue  # someone appended meanwhile, or nothing to index: rebuild later
                m.index[s] = {"file": save_index(index, self.path / "index", s), "cases": size}
            write_manifest(self.path, m)
            self.manifest = m
        self._dirty_indexes.clear()

    # ---- durable appends ----------------------------------------------------------------
    @contextmanager
    def _lock(self) -> Iterator[None]:
        if not self.writable:
            raise CaseBaseError(f"{self.path} is read-only; copy it somewhere writable to retain cases")
        with open(self.path / ".write.lock", "a+") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _remove_orphans(self, m: Manifest) -> None:
        """Delete parts no manifest lists and temp files: the leftovers of a crash."""
        for s in STREETS:
            d = self.path / "cases" / s
            if not d.is_dir():
                continue
            listed = {Path(p["file"]).name for p in m.parts[s]}
            for f in d.iterdir():
                if (f.name.startswith(".") and ".tmp-" in f.name) or (PART_RE.match(f.name) and f.name not in listed):
                    f.unlink(missing_ok=True)

    def append(self, street: int | str, features: np.ndarray, actions: Sequence[str] | str, **meta: Any) -> np.ndarray:
        """Append cases to a street durably; returns their case ids.

        ``features``: one row (d,) or rows (n, d); ``actions``: ``'f'/'c'/'r'`` per row;
        ``meta`` as in :meth:`~cbr.store.writer.CaseBaseWriter.add_rows` (source defaults to ``"retained"``).
        The new part is fsynced and renamed into place, then the manifest is replaced
        atomically (the commit). Loaded indexes are extended in memory and saved on
        :meth:`close`.
        """
        s = street_name(street)
        meta.setdefault("source", "retained")
        with self._lock():
            m = read_manifest(self.path)  # another process may have appended
            self._remove_orphans(m)
            names = m.features[s]
            table = build_table(names, m.next_case_id, features, actions, **meta)
            ids = table.column("case_id").to_numpy()
            if table.num_rows == 0:
                return ids
            rel = part_file(s, next_part_number(m.parts[s]))
            write_part(self.path / rel, table)
            m.parts[s].append({"file": rel, "rows": table.num_rows})
            count_actions(m.counts[s], table.column("action").to_pylist())
            m.next_case_id += table.num_rows
            src_counts = {}
            for src in table.column("source").to_pylist():
                src_counts[src or ""] = src_counts.get(src or "", 0) + 1
            for src, k in src_counts.items():
                entry = next((e for e in m.sources if e.get("source") == src), None)
                if entry is None:
                    entry = {"source": src, "cases": 0}
                    m.sources.append(entry)
                entry["cases"] = int(entry.get("cases", 0)) + k
            write_manifest(self.path, m)  # the commit point
            stale = {x for x in STREETS if x != s and m.part_rows(x) != self.manifest.part_rows(x)}
            self.manifest = m
        self._tables.pop(s, None)
        for x in stale:
            self._tables.pop(x, None)
            self._indexes.pop(x, None)
        self._close_sql()
        if s in self._indexes:
            index = self._indexes[s]
            have = index_size(index)
            grown = None
            if have + table.num_rows == self.count(s):
                grown = extended_index(index, np.asarray(features, dtype=np.float32).reshape(-1, len(names)))
            if grown is None:
                del self._indexes[s]  # rebuilt on next use
            self._dirty_indexes.add(s)
        return ids

    def retain(self, dp: DecisionPoint) -> int:
        """Append one decision made in play (``dp.action`` set), features from this case
        base's own feature set; returns the case id."""
        fs = self.feature_set()
        meta = decision_meta([dp])
        actions = meta.pop("actions")
        meta["source"] = [dp.source or "retained"]
        return int(self.append(dp.street, fs.row(dp), actions, **meta)[0])

    def compact(self, street: int | str) -> None:
        """Merge a street's parts into one (many small parts accumulate from retention)."""
        s = street_name(street)
        with self._lock():
            m = read_manifest(self.path)
            self._remove_orphans(m)
            if len(m.parts[s]) <= 1:
                return
            schema = case_schema(m.features[s])
            table = pa.concat_tables([pq.read_table(self.path / p["file"]).cast(schema) for p in m.parts[s]])
            rel = part_file(s, next_part_number(m.parts[s]))
            old = [p["file"] for p in m.parts[s]]
            write_part(self.path / rel, table)
            m.parts[s] = [{"file": rel, "rows": table.num_rows}]
            write_manifest(self.path, m)
            self.manifest = m
            for f in old:
                (self.path / f).unlink(missing_ok=True)
        self._tables.pop(s, None)
        self._close_sql()
