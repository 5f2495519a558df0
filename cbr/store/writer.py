"""Writing a case base: :class:`CaseBaseWriter` builds it in a temp directory beside the
target and puts it in place on success (a failure or an interrupt leaves nothing at the
target). The layout it writes is described in :mod:`cbr.store.casebase`.

>>> import os, tempfile, numpy as np
>>> root = tempfile.mkdtemp()
>>> try:
...     with CaseBaseWriter(f"{root}/demo", build_index=False) as w:
...         ids = w.add_rows("flop", np.ones((3, 12), np.float32), "ccr", source="demo")
...         raise KeyboardInterrupt                      # interrupted mid-build
... except KeyboardInterrupt:
...     pass
>>> os.listdir(root)                                     # no case base, no leftovers
[]

A write that fails (a full disk, a file-size limit: whatever DuckDB, faiss, pyarrow or numpy
raise for it) is one :class:`CaseBaseError` naming the case base and the OS's reason
(:func:`write_failure`), and leaves nothing behind either.
"""
from __future__ import annotations

import errno
import hashlib
import os
import resource
import shutil
import sys
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from cbr.errors import CaseBaseError, CBRError, counted, exception_chain
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import STREETS, GameDef
from cbr.plugins import load_feature_set
from cbr.store import catalog as _catalog
from cbr.store.answer_rows import AnswerRowsWriter
from cbr.store.durable import exchange_or_replace_dir, fsync_dir, remove_dead_builds, rename_noreplace
from cbr.store.honesty import action_warnings, game_warnings
from cbr.store.indexes import (
    check_similarity,
    default_similarity,
    dump_similarity,
    load_similarity,
    new_index,
    retrieval_available,
    save_index,
)
from cbr.store.manifest import ACTIONS, MANIFEST, Manifest, file_checksum, write_manifest
from cbr.store.parts import (
    build_table,
    case_schema,
    count_actions,
    decision_meta,
    part_entry,
    part_file,
    street_name,
    write_part,
)

__all__ = ["CaseBaseWriter", "SIMILARITY_FILE", "write_failure"]

SIMILARITY_FILE = "similarity.toml"
#: Free bytes below which a failed write on the target's file system is taken for a full disk.
LOW_SPACE = 1 << 20
#: What the OS answers a write that cannot be done (as in "No space left on device").
_DISK_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS)
_DISK_TEXTS = tuple(os.strerror(e) for e in _DISK_ERRNOS)


def write_failure(exc: BaseException, folder: str | os.PathLike[str]) -> str | None:
    """Why writing files into ``folder`` failed, in the OS's words, when ``exc`` (raised by
    Python, numpy, pyarrow, DuckDB or faiss while writing there) is a failed write: an OS
    error number (no space, quota, file too large...) or its text, else a file system with
    less than :data:`LOW_SPACE` bytes free, else a file-size limit (``ulimit -f``) in force,
    else any ``OSError``'s own reason. None for anything else (not a write failure).

    >>> write_failure(OSError(errno.ENOSPC, "No space left on device"), ".")
    'no space left on device'
    >>> write_failure(KeyError("x"), ".") is None   # plenty of room here, no limit: not a write failure
    True
    """
    chain = list(exception_chain(exc))
    for e in chain:
        if isinstance(e, OSError) and e.errno in _DISK_ERRNOS:
            return os.strerror(e.errno).lower()
    for e in chain:
        text = str(e)
        for known in _DISK_TEXTS:
            if known in text:
                return known.lower()
    if not any(isinstance(e, (OSError, RuntimeError)) or type(e).__module__.startswith(("duckdb", "_duckdb"))
               for e in chain):
        return None
    try:
        st = os.statvfs(folder)
        free = st.f_bavail * st.f_frsize
    except OSError:
        free = None
    if free is not None and free < LOW_SPACE:
        return f"no space left on device ({free:,} bytes free)"
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if soft != resource.RLIM_INFINITY:
        return f"file size limit reached (ulimit -f: {soft:,} bytes)"
    for e in chain:
        if isinstance(e, OSError):
            text = e.strerror or str(e).strip() or type(e).__name__
            return text.splitlines()[0].lower()
    return None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@contextmanager
def _native_stderr_held() -> Iterator[None]:
    """Hold what is written to file descriptor 2 during the block (faiss prints "file ...
    close error: No space left on device" there itself when a write fails): dropped when
    the block fails, as its error says the same in one line; written back when it succeeds.
    Held in memory (``memfd``), never on the disk that may be full; a no-op where that is
    not available."""
    try:
        held = os.memfd_create("cbr-held-stderr")
    except (AttributeError, OSError):
        yield
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        os.close(held)
        yield
        return
    os.dup2(held, 2)
    ok = False
    try:
        yield
        ok = True
    finally:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(saved, 2)
        os.close(saved)
        if ok:
            os.lseek(held, 0, os.SEEK_SET)
            while chunk := os.read(held, 1 << 16):
                os.write(2, chunk)
        os.close(held)


class CaseBaseWriter:
    """Build a case base in a temp directory beside ``path``; put it in place on success.

    Used as a context manager. An exception inside the ``with`` block (or in finishing)
    removes the temp directory and leaves ``path`` as it was. An existing case base at
    ``path`` is refused unless ``overwrite=True``; then it is swapped out in one step at
    the very end. Without ``overwrite`` the target is checked again at that final step
    (an atomic no-replace rename): of two builds racing to the same new name, the second
    fails with :class:`CaseBaseError` instead of replacing the first.

    After a successful build, :attr:`warnings` lists what the case base cannot answer
    honestly (:mod:`cbr.store.honesty`: action kinds missing or rare on a street,
    no-limit games).

    - ``feature_set``: a :class:`~features.base.FeatureSet` or a ``cbr.features`` plugin
      name (default ``"casper"``); used by :meth:`add` / :meth:`add_decisions`.
    - ``similarity``: a ``SimilarityConfig``, a path to a TOML file, or None for the
      feature set's default (``cbr.store.indexes.default_similarity``: CASPER's, SARTRE's, a
      plugin's ``default_similarity()``; a :class:`~cbr.errors.ConfigError` at once for a
      feature set with columns of its own and no default).
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
        if similarity is None:  # the feature set's default, found (or refused) before any case is written
            try:
                similarity = default_similarity(feature_set)
            except ImportError:
                pass
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
        self.warnings: list[str] = []

    # ---- context -------------------------------------------------------------
    def __enter__(self) -> "CaseBaseWriter":
        target = self.path
        if target.exists():
            if not self.overwrite:
                raise CaseBaseError(f"{target} already exists; overwrite to replace it", field="overwrite")
            if not (target / MANIFEST).is_file():
                raise CaseBaseError(f"{target} exists and is not a case base (no {MANIFEST}); refusing to replace it")
        with self._writing():
            target.parent.mkdir(parents=True, exist_ok=True)
            remove_dead_builds(target.parent)  # temp folders of builds killed before they finished
            self._tmp = target.parent / f".{target.name}.building-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            self._tmp.mkdir()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        try:
            if exc_type is None:
                with self._writing():
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

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A failed write (:func:`write_failure`) as one :class:`CaseBaseError` naming the case
        base; the temp directory is removed by the caller (``__exit__``)."""
        try:
            yield
        except CBRError:
            raise
        except Exception as exc:
            reason = write_failure(exc, self.path.parent if self.path.parent.exists() else Path("."))
            if reason is None:
                raise
            kept = "the case base there is unchanged" if (self.path / MANIFEST).is_file() else "nothing was written"
            raise CaseBaseError(f"cannot write case base {self.path}: {reason}; {kept}") from exc

    def _require_open(self) -> Path:
        if self._tmp is None:
            raise CaseBaseError("CaseBaseWriter is not open; use it as `with CaseBaseWriter(path) as w:`")
        return self._tmp

    # ---- input -----------------------------------------------------------------
    def add_game(self, game: GameDef) -> None:
        """Record a game definition in the manifest (once per name)."""
        self._games.setdefault(game.name, game.to_dict())

    @property
    def games(self) -> list[dict[str, Any]]:
        """The game definitions recorded so far (``GameDef.to_dict``), in the order first met."""
        return list(self._games.values())

    def add_source(self, path: str | os.PathLike[str], *, name: Optional[str] = None, **info: Any) -> None:
        """Record a log file with its SHA-256 and size (``name`` = the ``source`` column value)."""
        p = Path(path)
        key = name or str(path)
        entry = self._sources.setdefault(key, {"source": key, "cases": 0})
        entry.update({"path": str(p), "sha256": _sha256(p), "bytes": p.stat().st_size, **info})

    def add(self, dp: DecisionPoint) -> int:
        """Add one logged decision (``dp.action`` set); returns its case id."""
        return int(self.add_decisions([dp])[0])

    def add_decisions(self, dps: Iterable[DecisionPoint], outcomes: Optional[Sequence[Optional[float]]] = None
                      ) -> np.ndarray:
        """Add logged decisions through the feature set; returns their case ids in input order.
        ``outcomes``: per decision, the hand's net result for its player in small bets
        (None/NaN = unknown; default: all unknown)."""
        dps = list(dps)
        if outcomes is not None and len(outcomes) != len(dps):
            raise ValueError(f"outcomes: {counted(len(outcomes), 'value')} for {counted(len(dps), 'decision')}")
        ids = np.empty(len(dps), dtype=np.int64)
        for s_i, s in enumerate(STREETS):
            idx = [i for i, dp in enumerate(dps) if dp.street == s_i]
            if not idx:
                continue
            chosen = [dps[i] for i in idx]
            X = np.vstack([self.feature_set.row(dp) for dp in chosen])
            for dp in chosen:
                self.add_game(dp.game)
            meta = decision_meta(chosen)
            if outcomes is not None:
                meta["outcome"] = [outcomes[i] for i in idx]
            ids[idx] = self.add_rows(s, X, meta.pop("actions"), **meta)
        return ids

    def add_rows(self, street: int | str, features: np.ndarray, actions: Sequence[str], **meta: Any) -> np.ndarray:
        """Add precomputed rows of a street (e.g. from worker processes); returns case ids.

        ``meta``: source, hand_id, player, position, game, hole, board, history, outcome
        (small bets, None/NaN = unknown): each a scalar for all rows or one value per row.
        """
        self._require_open()
        s = street_name(street)
        table = build_table(self._names[s], self._next_id, features, actions, **meta)
        return self._take(s, table)

    def add_table(self, street: int | str, table: pa.Table) -> np.ndarray:
        """Add cases of another case base (an Arrow table of the street's case schema, e.g.
        a Parquet part): new case ids are assigned in row order; returns them."""
        self._require_open()
        s = street_name(street)
        schema = case_schema(self._names[s])
        if table.schema.names != schema.names:
            raise CaseBaseError(f"{s}: the cases have columns {table.schema.names}, this case base {schema.names}")
        ids = np.arange(self._next_id, self._next_id + table.num_rows, dtype=np.int64)
        return self._take(s, table.set_column(0, schema.field(0), pa.array(ids)).cast(schema))

    def _take(self, s: str, table: pa.Table) -> np.ndarray:
        """Buffer a street's table of new cases (ids already assigned from ``_next_id``):
        count its actions and sources, flush a full part; returns the case ids."""
        ids = table.column("case_id").to_numpy()
        self._next_id += table.num_rows
        count_actions(self._counts[s], table.column("action").to_pylist())
        for src in table.column("source").to_pylist():
            key = src or ""
            self._sources.setdefault(key, {"source": key, "cases": 0})["cases"] += 1
        self._buffers[s].append(table)
        self._buffered[s] += table.num_rows
        if self._buffered[s] >= self.part_rows:
            self._flush(s)
        return ids

    def add_source_entry(self, entry: dict[str, Any]) -> None:
        """Record a source as another case base's manifest lists it (hash, size, format;
        its case count is counted again from the cases added)."""
        key = str(entry.get("source", ""))
        mine = self._sources.setdefault(key, {"source": key, "cases": 0})
        mine.update({k: v for k, v in entry.items() if k not in ("source", "cases")})

    # ---- output ---------------------------------------------------------------
    def _flush(self, s: str) -> None:
        tmp = self._require_open()
        if not self._buffers[s] and self._parts[s]:
            return
        table = pa.concat_tables(self._buffers[s]) if self._buffers[s] else case_schema(self._names[s]).empty_table()
        rel = part_file(s, len(self._parts[s]))
        with self._writing():
            written = write_part(tmp / rel, table)
        self._parts[s].append(part_entry(rel, table.num_rows, written))
        self._buffers[s].clear()
        self._buffered[s] = 0

    def _features(self, s: str) -> np.ndarray:
        """The street's feature rows (float32, id order), read part by part from the parts
        written, feature columns only: the provenance columns are never all in memory."""
        tmp = self._require_open()
        names = self._names[s]
        X = np.empty((sum(p["rows"] for p in self._parts[s]), len(names)), dtype=np.float32)
        row = 0
        for entry in self._parts[s]:
            with pq.ParquetFile(tmp / entry["file"]) as pf:
                for batch in pf.iter_batches(batch_size=65536, columns=names):
                    for j, f in enumerate(names):
                        X[row:row + batch.num_rows, j] = batch.column(f).to_numpy(zero_copy_only=False)
                    row += batch.num_rows
        if row != len(X):
            raise CaseBaseError(f"{tmp}: the parts of {s} hold {counted(row, 'case')}, {len(X)} were written")
        return X

    def _answer_rows(self, s: str, directory: Path) -> None:
        """Write the street's answer rows (:mod:`cbr.store.answer_rows`) into ``directory``,
        read part by part from the parts written, as :meth:`_features` reads the features."""
        tmp = self._require_open()
        with AnswerRowsWriter(directory) as writer:
            for entry in self._parts[s]:
                with pq.ParquetFile(tmp / entry["file"]) as pf:
                    writer.add_batches(pf.iter_batches(batch_size=65536, columns=list(AnswerRowsWriter.COLUMNS)))

    def _finish(self) -> None:
        tmp = self._require_open()
        for s in STREETS:
            if self._buffers[s] or not self._parts[s]:
                self._flush(s)
        similarity = self.similarity
        sim_file: Optional[str] = SIMILARITY_FILE
        if similarity is None:
            try:
                similarity = default_similarity(self.feature_set)
            except ImportError:
                similarity, sim_file = None, None
        if similarity is not None:
            dump_similarity(similarity, tmp / SIMILARITY_FILE)
            if isinstance(similarity, (str, os.PathLike)):
                similarity = load_similarity(tmp / SIMILARITY_FILE)
            check_similarity(similarity, self._names)
        checksums = {SIMILARITY_FILE: file_checksum(tmp / SIMILARITY_FILE)} if sim_file else {}
        m = Manifest.new(
            self.name, feature_set=getattr(self.feature_set, "name", type(self.feature_set).__name__),
            features=self._names, similarity=sim_file, games=list(self._games.values()),
            sources=[v for v in self._sources.values() if v.get("cases") or v.get("sha256")],
            counts=self._counts, parts=self._parts, next_case_id=self._next_id, extra=self.extra,
            checksums=checksums,
        )
        if self.build_index and similarity is not None and retrieval_available():
            for s in STREETS:
                X = self._features(s)
                if len(X):
                    index = new_index(similarity, s)
                    index.fit(X)
                    del X  # the index holds its own copy
                    with _native_stderr_held():
                        m.index[s] = save_index(index, tmp, s, rows=lambda d, s=s: self._answer_rows(s, d))
                    del index
        _catalog.write_catalog(tmp, m)
        m.catalog = file_checksum(tmp / _catalog.CATALOG)
        write_manifest(tmp, m)
        fsync_dir(tmp)
        if self.overwrite:
            exchange_or_replace_dir(tmp, self.path)
        else:
            try:
                rename_noreplace(tmp, self.path)
            except FileExistsError:
                raise CaseBaseError(f"{self.path} appeared while this build ran (another build?); nothing was "
                                    "replaced: overwrite to replace it", field="overwrite") from None
        self._tmp = None
        self.manifest = m
        self.warnings = action_warnings(m.counts) + game_warnings(m.games)
