"""Case bases on disk: write one atomically, open it, query it, grow it durably.

Layout of ``casebases/<name>/``::

    manifest.json              schema version, feature set, games, sources, counts, parts
    similarity.toml            the similarity configuration used for retrieval
    cases/<street>/part-NNNNN.parquet   the cases of a street, in parts
    catalog.duckdb             SQL views over the parts (relative paths)
    index/<street>/            one retrieval index per street (index.faiss, cases.npy, meta.json)

Writing a case base (a failure or an interrupt leaves nothing at the target):

>>> import tempfile, numpy as np
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
import hashlib
import os
import re
import shutil
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from cbr.errors import CaseBaseError, ConfigError
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import STREETS, GameDef
from cbr.store import catalog as _catalog
from cbr.store.durable import atomic_write_bytes, atomic_write_with, exchange_or_replace_dir, fsync_dir
from cbr.store.manifest import ACTIONS, MANIFEST, Manifest, read_manifest, write_manifest
from evaluator_ext.cards import cards_str

__all__ = ["CaseBase", "CaseBaseWriter", "CaseArrays", "case_schema", "META_COLUMNS", "street_name"]

SIMILARITY_FILE = "similarity.toml"
META_COLUMNS = ("action", "source", "hand_id", "player", "position", "game", "hole", "board", "history")
_PART_RE = re.compile(r"^part-(\d+)\.parquet$")


def street_name(street: int | str) -> str:
    """``'flop'`` from 1 or ``'flop'``; raises ``ValueError``.

    >>> street_name(2), street_name("River")
    ('turn', 'river')
    """
    if isinstance(street, str):
        s = street.strip().lower()
        if s in STREETS:
            return s
        raise ValueError(f"unknown street {street!r}; streets: {', '.join(STREETS)}")
    i = int(street)
    if not 0 <= i < len(STREETS):
        raise ValueError(f"street must be 0..3, got {street!r}")
    return STREETS[i]


def case_schema(feature_names: Sequence[str]) -> pa.Schema:
    """Arrow schema of a street's cases: case_id, float32 features, action, provenance."""
    fields = [pa.field("case_id", pa.int64(), nullable=False)]
    fields += [pa.field(f, pa.float32(), nullable=False) for f in feature_names]
    fields += [
        pa.field("action", pa.string(), nullable=False),
        pa.field("source", pa.string()),
        pa.field("hand_id", pa.string()),
        pa.field("player", pa.string()),
        pa.field("position", pa.int16()),
        pa.field("game", pa.string()),
        pa.field("hole", pa.string()),
        pa.field("board", pa.string()),
        pa.field("history", pa.string()),
    ]
    return pa.schema(fields)


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


# ---------------------------------------------------------------------------
# Rows: validation and Arrow tables
# ---------------------------------------------------------------------------
def _column(value: Any, n: int, name: str, kind: type) -> list[Any]:
    if value is None or isinstance(value, (str, int, np.integer)):
        v = None if value is None else kind(value)
        return [v] * n
    out = list(value)
    if len(out) != n:
        raise ValueError(f"{name}: {len(out)} values for {n} cases")
    return [None if x is None else kind(x) for x in out]


def _cards_text(cards: Any) -> str | None:
    if cards is None:
        return None
    if isinstance(cards, str):
        return cards
    return cards_str(tuple(int(c) for c in cards))


def _cards_column(value: Any, n: int, name: str) -> list[str | None]:
    """Cards text per row from None, text, a card tuple (all rows) or one value per row."""
    if value is None or isinstance(value, str):
        return [value] * n
    items = list(value)
    if all(isinstance(c, (int, np.integer)) for c in items):  # one card tuple for every row
        return [_cards_text(items)] * n
    if len(items) != n:
        raise ValueError(f"{name}: {len(items)} values for {n} cases")
    return [_cards_text(v) for v in items]


def build_table(
    feature_names: Sequence[str],
    first_id: int,
    features: Any,
    actions: Sequence[str] | str,
    *,
    source: Any = None,
    hand_id: Any = None,
    player: Any = None,
    position: Any = None,
    game: Any = None,
    hole: Any = None,
    board: Any = None,
    history: Any = None,
) -> pa.Table:
    """Validate one batch of cases and make its Arrow table, case ids from ``first_id``.

    ``features``: (d,) or (n, d); ``actions``: one letter per case (a string ``"ccr"`` or a
    list); meta columns: a scalar for every case or one value per case.

    >>> build_table(["x"], 7, [[0.5], [1.0]], "cr", source="demo").column("case_id").to_pylist()
    [7, 8]
    """
    d = len(feature_names)
    X = np.asarray(features, dtype=np.float32)
    if X.ndim == 1 and X.size == d:
        X = X.reshape(1, d)
    if X.ndim != 2 or X.shape[1] != d:
        if X.size == 0:
            X = np.zeros((0, d), np.float32)
        else:
            raise ValueError(f"features must have shape (n, {d}), got {np.shape(features)}")
    n = X.shape[0]
    if not np.isfinite(X).all():
        raise ValueError("features contain NaN or infinity")
    acts = list(actions)
    if len(acts) != n:
        raise ValueError(f"actions: {len(acts)} values for {n} cases")
    bad = sorted({str(a) for a in acts if a not in ACTIONS})
    if bad:
        raise ValueError(f"actions must be 'f', 'c' or 'r', got {bad[:3]}")
    cols: dict[str, Any] = {"case_id": pa.array(np.arange(first_id, first_id + n, dtype=np.int64))}
    for j, f in enumerate(feature_names):
        cols[f] = pa.array(X[:, j], type=pa.float32())
    cols["action"] = pa.array(acts, pa.string())
    cols["source"] = pa.array(_column(source, n, "source", str), pa.string())
    cols["hand_id"] = pa.array(_column(hand_id, n, "hand_id", str), pa.string())
    cols["player"] = pa.array(_column(player, n, "player", str), pa.string())
    cols["position"] = pa.array(_column(position, n, "position", int), pa.int16())
    cols["game"] = pa.array(_column(game, n, "game", str), pa.string())
    cols["hole"] = pa.array(_cards_column(hole, n, "hole"), pa.string())
    cols["board"] = pa.array(_cards_column(board, n, "board"), pa.string())
    cols["history"] = pa.array(_column(history, n, "history", str), pa.string())
    return pa.table(cols, schema=case_schema(feature_names))


def _write_part(path: Path, table: pa.Table) -> None:
    """Write a Parquet part durably (temp file + fsync + rename + directory fsync)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_with(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _count_actions(counts: dict[str, int], actions: Iterable[str]) -> None:
    for a in actions:
        counts[a] += 1
        counts["total"] += 1


# ---------------------------------------------------------------------------
# Similarity configuration and retrieval index (cbr.similarity, cbr.retrieval)
# ---------------------------------------------------------------------------
def _default_similarity() -> Any:
    from cbr.similarity import default_casper

    return default_casper()


def _load_similarity(path: Path) -> Any:
    from cbr.similarity import SimilarityConfig

    return SimilarityConfig.from_toml(Path(path))


def _dump_similarity(config: Any, path: Path) -> None:
    if isinstance(config, (str, os.PathLike)):
        data = Path(config).read_bytes()
        atomic_write_bytes(path, data)
        return
    atomic_write_bytes(path, config.to_toml().encode("utf-8"))


def _street_similarity(config: Any, street: str) -> Any:
    return config.street(street)


def _check_similarity(config: Any, names: dict[str, list[str]]) -> None:
    """The similarity must describe exactly the feature set's columns, in order."""
    for s in STREETS:
        have = list(_street_similarity(config, s).features)
        if have != names[s]:
            raise ConfigError(f"the similarity config for {s} covers {have}, "
                              f"but the feature set gives {names[s]}")


def _new_index(config: Any, street: str) -> Any:
    from cbr.retrieval import CaseIndex

    return CaseIndex(similarity=_street_similarity(config, street), threshold=config.threshold,
                     fallback_k=config.fallback_k)


def _retrieval_available() -> bool:
    try:
        import cbr.retrieval  # noqa: F401
    except ImportError:
        return False
    return True


def _index_size(index: Any) -> int:
    for attr in ("n_cases_", "ntotal", "n_cases"):
        if hasattr(index, attr):
            return int(getattr(index, attr))
    return len(index)


def _save_index(index: Any, directory: Path, street: str) -> str:
    """Save into a scratch directory, then swap it in as ``index/<street>/`` (the directory
    ``CaseIndex.save`` writes: ``index.faiss``, ``cases.npy``, ``meta.json``) in one step."""
    directory.mkdir(parents=True, exist_ok=True)
    scratch = directory / f".tmp-{street}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        index.save(scratch)
        for f in scratch.rglob("*"):
            if f.is_file():
                with open(f, "rb") as fh:
                    os.fsync(fh.fileno())
        fsync_dir(scratch)
        exchange_or_replace_dir(scratch, directory / street)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return f"index/{street}"


def _extended(index: Any, rows: np.ndarray) -> Any:
    """``index`` with ``rows`` added, or None when the backend cannot add (then rebuild)."""
    try:
        index.add(rows)
    except Exception:  # e.g. a backend that cannot grow after loading: a rebuild is exact too
        return None
    return index


def _load_index(path: Path) -> Any:
    from cbr.retrieval import CaseIndex

    return CaseIndex.load(path)


def load_feature_set(name: str) -> Any:
    """A feature-set instance from its ``cbr.features`` plugin name.

    The built-in ``casper`` also works from a checkout whose install metadata predates
    the entry point (``pip install -e .`` refreshes it).
    """
    from cbr.errors import PluginError
    from cbr.plugins import load

    try:
        return load("cbr.features", name)()
    except PluginError:
        if name != "casper":
            raise
        from features.casper import CasperFeatures

        return CasperFeatures()


# ---------------------------------------------------------------------------
# Writer
# ---------------------------------------------------------------------------
def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's live process
        return True
    return True


def _remove_dead_builds(target: Path) -> None:
    """Delete temp directories of builds of ``target`` whose process died (e.g. SIGKILL)."""
    pattern = re.compile(rf"^\.{re.escape(target.name)}\.(?:building|old)-(\d+)(?:-[0-9a-f]+)?$")
    for d in target.parent.iterdir():
        m = pattern.match(d.name)
        if m and d.is_dir() and int(m.group(1)) != os.getpid() and not _pid_alive(int(m.group(1))):
            shutil.rmtree(d, ignore_errors=True)


class CaseBaseWriter:
    """Build a case base in a temp directory beside ``path``; put it in place on success.

    Used as a context manager. An exception inside the ``with`` block (or in finishing)
    removes the temp directory and leaves ``path`` as it was. An existing case base at
    ``path`` is refused unless ``overwrite=True``; then it is swapped out in one step at
    the very end.

    - ``feature_set``: a :class:`~features.base.FeatureSet` or a ``cbr.features`` plugin
      name (default ``"casper"``); used by :meth:`add` / :meth:`add_decisions`.
    - ``similarity``: a ``SimilarityConfig``, a path to a TOML file, or None for
      ``cbr.similarity.default_casper()``.
    - ``build_index``: build and save ``index/<street>.faiss`` (else built on first use).
    - ``part_rows``: cases per Parquet part while building.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        feature_set: Any = "casper",
        similarity: Any = None,
        games: Iterable[GameDef] = (),
        overwrite: bool = False,
        name: Optional[str] = None,
        build_index: bool = True,
        part_rows: int = 200_000,
        extra: Optional[dict[str, Any]] = None,
    ) -> None:
        self.path = Path(path)
        self.name = name or self.path.name
        if part_rows < 1:
            raise ValueError("part_rows must be at least 1")
        if isinstance(feature_set, str):
            feature_set = load_feature_set(feature_set)
        self.feature_set = feature_set
        self.similarity = similarity
        self.overwrite = overwrite
        self.build_index = build_index
        self.part_rows = part_rows
        self.extra = dict(extra or {})
        self._games: dict[str, dict[str, Any]] = {}
        for g in games:
            self.add_game(g)
        self._sources: dict[str, dict[str, Any]] = {}
        self._names = {s: list(feature_set.feature_names(s)) for s in STREETS}
        self._buffers: dict[str, list[pa.Table]] = {s: [] for s in STREETS}
        self._buffered = {s: 0 for s in STREETS}
        self._parts: dict[str, list[dict[str, Any]]] = {s: [] for s in STREETS}
        self._counts = {s: {"total": 0, **{a: 0 for a in ACTIONS}} for s in STREETS}
        self._next_id = 0
        self._tmp: Optional[Path] = None
        self.manifest: Optional[Manifest] = None

    # ---- context -------------------------------------------------------------
    def __enter__(self) -> "CaseBaseWriter":
        target = self.path
        if target.exists():
            if not self.overwrite:
                raise CaseBaseError(f"{target} already exists; pass overwrite=True (or --overwrite) to replace it")
            if not (target / MANIFEST).is_file():
                raise CaseBaseError(f"{target} exists and is not a case base (no {MANIFEST}); refusing to replace it")
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_dead_builds(target)
        self._tmp = target.parent / f".{target.name}.building-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._tmp.mkdir()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        try:
            if exc_type is None:
                self._finish()
        except BaseException:
            self._discard()
            raise
        if exc_type is not None:
            self._discard()
        return False

    def _discard(self) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _require_open(self) -> Path:
        if self._tmp is None:
            raise CaseBaseError("CaseBaseWriter is not open; use it as `with CaseBaseWriter(path) as w:`")
        return self._tmp

    # ---- input -----------------------------------------------------------------
    def add_game(self, game: GameDef) -> None:
        """Record a game definition in the manifest (once per name)."""
        self._games.setdefault(game.name, game.to_dict())

    def add_source(self, path: str | os.PathLike[str], *, name: Optional[str] = None, **info: Any) -> None:
        """Record a log file with its SHA-256 and size (``name`` = the ``source`` column value)."""
        p = Path(path)
        key = name or str(path)
        entry = self._sources.setdefault(key, {"source": key, "cases": 0})
        entry.update({"path": str(p), "sha256": _sha256(p), "bytes": p.stat().st_size, **info})

    def add(self, dp: DecisionPoint) -> int:
        """Add one logged decision (``dp.action`` set); returns its case id."""
        return int(self.add_decisions([dp])[0])

    def add_decisions(self, dps: Iterable[DecisionPoint]) -> np.ndarray:
        """Add logged decisions through the feature set; returns their case ids in input order."""
        dps = list(dps)
        ids = np.empty(len(dps), dtype=np.int64)
        for s_i, s in enumerate(STREETS):
            idx = [i for i, dp in enumerate(dps) if dp.street == s_i]
            if not idx:
                continue
            chosen = [dps[i] for i in idx]
            X = np.vstack([self.feature_set.row(dp) for dp in chosen])
            for dp in chosen:
                self.add_game(dp.game)
            ids[idx] = self.add_rows(s, X, **decision_meta(chosen))
        return ids

    def add_rows(self, street: int | str, features: np.ndarray, actions: Sequence[str], **meta: Any) -> np.ndarray:
        """Add precomputed rows of a street (e.g. from worker processes); returns case ids.

        ``meta``: source, hand_id, player, position, game, hole, board, history: each a
        scalar for all rows or one value per row.
        """
        self._require_open()
        s = street_name(street)
        table = build_table(self._names[s], self._next_id, features, actions, **meta)
        ids = table.column("case_id").to_numpy()
        self._next_id += table.num_rows
        _count_actions(self._counts[s], table.column("action").to_pylist())
        for src in table.column("source").to_pylist():
            key = src or ""
            self._sources.setdefault(key, {"source": key, "cases": 0})["cases"] += 1
        self._buffers[s].append(table)
        self._buffered[s] += table.num_rows
        if self._buffered[s] >= self.part_rows:
            self._flush(s)
        return ids

    # ---- output ---------------------------------------------------------------
    def _flush(self, s: str) -> None:
        tmp = self._require_open()
        if not self._buffers[s] and self._parts[s]:
            return
        table = pa.concat_tables(self._buffers[s]) if self._buffers[s] else case_schema(self._names[s]).empty_table()
        rel = f"cases/{s}/part-{len(self._parts[s]):05d}.parquet"
        _write_part(tmp / rel, table)
        self._parts[s].append({"file": rel, "rows": table.num_rows})
        self._buffers[s].clear()
        self._buffered[s] = 0

    def _finish(self) -> None:
        tmp = self._require_open()
        for s in STREETS:
            if self._buffers[s] or not self._parts[s]:
                self._flush(s)
        similarity = self.similarity
        sim_file: Optional[str] = SIMILARITY_FILE
        if similarity is None:
            try:
                similarity = _default_similarity()
            except ImportError:
                similarity, sim_file = None, None
        if similarity is not None:
            _dump_similarity(similarity, tmp / SIMILARITY_FILE)
            if isinstance(similarity, (str, os.PathLike)):
                similarity = _load_similarity(tmp / SIMILARITY_FILE)
            _check_similarity(similarity, self._names)
        m = Manifest.new(
            self.name, feature_set=getattr(self.feature_set, "name", type(self.feature_set).__name__),
            features=self._names, similarity=sim_file, games=list(self._games.values()),
            sources=[v for v in self._sources.values() if v.get("cases") or v.get("sha256")],
            counts=self._counts, parts=self._parts, next_case_id=self._next_id, extra=self.extra,
        )
        if self.build_index and similarity is not None and _retrieval_available():
            cb = CaseBase(tmp, m)
            for s in STREETS:
                index = _new_index(similarity, s)
                X = cb.cases(s).features
                if len(X):
                    index.fit(X)
                    m.index[s] = {"file": _save_index(index, tmp / "index", s), "cases": int(len(X))}
        _catalog.write_catalog(tmp)
        write_manifest(tmp, m)
        fsync_dir(tmp)
        exchange_or_replace_dir(tmp, self.path)
        self._tmp = None
        self.manifest = m


def decision_meta(dps: Sequence[DecisionPoint]) -> dict[str, Any]:
    """Per-case provenance columns of decision points (for :meth:`CaseBaseWriter.add_rows`)."""
    for dp in dps:
        if dp.action not in ACTIONS:
            raise ValueError(f"decision of {dp.player!r} in hand {dp.hand_id!r} has no action 'f'/'c'/'r' "
                             f"(got {dp.action!r}); only taken decisions become cases")
    return {
        "actions": [dp.action for dp in dps],
        "source": [dp.source for dp in dps],
        "hand_id": [dp.hand_id for dp in dps],
        "player": [dp.player for dp in dps],
        "position": [dp.position for dp in dps],
        "game": [dp.game.name for dp in dps],
        "hole": [cards_str(dp.hole) if dp.hole else None for dp in dps],
        "board": [cards_str(dp.board) for dp in dps],
        "history": [dp.history for dp in dps],
    }


# ---------------------------------------------------------------------------
# Reader (and durable appends)
# ---------------------------------------------------------------------------
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
                self._similarity = _load_similarity(self.path / self.manifest.similarity)
            else:
                self._similarity = _default_similarity()
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
                index = _load_index(self.path / entry["file"])
            except Exception:  # the index is only a cache of the cases: rebuild it
                index = None
        if index is not None:
            have = _index_size(index)
            same_config = (index.similarity == _street_similarity(config, s)
                           and index.threshold == config.threshold and index.fallback_k == config.fallback_k)
            if not same_config or have > len(X) or not np.array_equal(index.cases_[:have], X[:have]):
                index = None
            elif have < len(X):
                index = _extended(index, X[have:])
                self._dirty_indexes.add(s)
        if index is None:
            index = _new_index(config, s)
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
                size = _index_size(index)
                if size != m.counts[s]["total"] or size == 0:
                    continue  # someone appended meanwhile, or nothing to index: rebuild later
                m.index[s] = {"file": _save_index(index, self.path / "index", s), "cases": size}
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
                if (f.name.startswith(".") and ".tmp-" in f.name) or (_PART_RE.match(f.name) and f.name not in listed):
                    f.unlink(missing_ok=True)

    def append(self, street: int | str, features: np.ndarray, actions: Sequence[str] | str, **meta: Any) -> np.ndarray:
        """Append cases to a street durably; returns their case ids.

        ``features``: one row (d,) or rows (n, d); ``actions``: ``'f'/'c'/'r'`` per row;
        ``meta`` as in :meth:`CaseBaseWriter.add_rows` (source defaults to ``"retained"``).
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
            numbers = [int(_PART_RE.match(Path(p["file"]).name).group(1)) for p in m.parts[s]]  # type: ignore[union-attr]
            rel = f"cases/{s}/part-{(max(numbers) + 1) if numbers else 0:05d}.parquet"
            _write_part(self.path / rel, table)
            m.parts[s].append({"file": rel, "rows": table.num_rows})
            _count_actions(m.counts[s], table.column("action").to_pylist())
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
        if self._con is not None:
            self._con.close()
            self._con = None
        if s in self._indexes:
            index = self._indexes[s]
            have = _index_size(index)
            grown = None
            if have + table.num_rows == self.count(s):
                grown = _extended(index, np.asarray(features, dtype=np.float32).reshape(-1, len(names)))
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
            numbers = [int(_PART_RE.match(Path(p["file"]).name).group(1)) for p in m.parts[s]]  # type: ignore[union-attr]
            rel = f"cases/{s}/part-{max(numbers) + 1:05d}.parquet"
            old = [p["file"] for p in m.parts[s]]
            _write_part(self.path / rel, table)
            m.parts[s] = [{"file": rel, "rows": table.num_rows}]
            write_manifest(self.path, m)
            self.manifest = m
            for f in old:
                (self.path / f).unlink(missing_ok=True)
        self._tables.pop(s, None)
        if self._con is not None:
            self._con.close()
            self._con = None
