"""Exact retrieval of similar cases, and the probability triple they vote for.

CASPER retrieves every case of the street whose global similarity to the query is at
least ``threshold`` (0.97); when there is none, the ``fallback_k`` (20) most similar.
:class:`CaseIndex` answers exactly that, with results identical to the brute-force
definition :func:`cbr.similarity.global_similarity` over all cases, for any
configuration (linear, exponential and exact-match measures, any weights).

How it stays exact while using faiss (the "filter and refine" scheme):

1. *Bound space.* Each feature is clipped to its domain ``[low, high]``, shifted by
   ``low`` and scaled by ``w_i * c_i / sum(w)``, where ``c_i`` is the measure's
   lower-bound slope (see :mod:`cbr.similarity`). The L1 distance of two scaled rows is
   then a lower bound of ``1 - global similarity``: ``bound(q, x) <= 1 - s(q, x)``.
2. *Index.* The scaled rows are clustered (k-means, faiss) into inverted lists of a faiss
   ``IndexIVFFlat`` with ``METRIC_L1``. Per list we keep its bounding box and its
   covering radius around the centroid; from them, a lower bound of ``bound(q, x)`` for
   every member ``x`` (box distance, and ``L1(q, centroid) - radius`` by the triangle
   inequality).
3. *Threshold mode.* Every case with ``s >= t`` has ``bound <= 1 - t``: faiss range search
   (``range_search_preassigned``) with radius ``1 - t`` (plus a float32 margin) over the
   lists whose bound allows it yields a superset; the exact similarity is computed for
   those candidates only, and the ones with ``s >= t`` are kept.
4. *Top-k mode.* faiss k-NN in bound space over the closest lists gives seed cases; the
   k-th best exact similarity among them, ``s_k``, is a floor for the true k-th best, so
   every case of the true top k has ``bound <= 1 - s_k``: a range search with that radius
   followed by exact re-ranking gives the top k. Cases outside it have ``s < s_k``, so
   even ties at the k-th place are seen.

Both steps compute the final similarities with the very same function as the brute force,
row by row, so the values are bit-identical; results are sorted by similarity descending,
then id ascending. ``BruteForceBackend`` (``backend="brute"``) is the numpy definition
with the same API. Ids are row numbers of the street's case table (the store joins
provenance through them).

>>> from cbr.similarity import default_casper
>>> rng = np.random.default_rng(0)
>>> st = default_casper().street("preflop")
>>> X = np.column_stack([rng.integers(2, 11, 500), rng.random(500), rng.integers(2, 6, 500),
...     rng.integers(0, 5, 500), rng.integers(0, 3, 500), rng.integers(0, 3, 500),
...     rng.random(500) / 2, rng.integers(1, 170, 500)]).astype(np.float32)
>>> index = CaseIndex(similarity=st).fit(X)
>>> r = index.retrieve(X[0])
>>> int(r.ids[0]), float(r.similarities[0])
(0, 1.0)
>>> brute = CaseIndex(similarity=st, backend="brute").fit(X)
>>> np.array_equal(brute.retrieve(X[0]).ids, r.ids)
True
"""
from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from cbr.errors import CaseBaseError, CBRError, ConfigError, PluginError
from cbr.similarity import FeatureSimilarity, StreetSimilarity, global_similarity, local_similarities

__all__ = [
    "QueryError",
    "Retrieval",
    "Explanation",
    "probability_triple",
    "action_codes",
    "CaseIndex",
    "BruteForceBackend",
    "FaissBackend",
    "backend_class",
]

ACTIONS = ("f", "c", "r")
INDEX_FORMAT = "cbr-case-index"
INDEX_VERSION = 1


class QueryError(CBRError, ValueError):
    """A query, case array or action list of the wrong shape, type or value."""


# ---------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Retrieval:
    """Retrieved cases: ids (row numbers) and global similarities, most similar first
    (ties by id). ``fallback`` is True when no case reached the threshold and the
    ``fallback_k`` most similar were taken instead."""

    ids: np.ndarray
    similarities: np.ndarray
    fallback: bool

    def __len__(self) -> int:
        return int(self.ids.shape[0])


def _sorted(ids: np.ndarray, sims: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((ids, -sims))
    return ids[order].astype(np.int64, copy=False), sims[order]


def _top_k(ids: np.ndarray, sims: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best by (similarity desc, id asc)."""
    if ids.shape[0] > k:
        kth = np.partition(sims, ids.shape[0] - k)[ids.shape[0] - k]
        keep = sims >= kth
        ids, sims = ids[keep], sims[keep]
    ids, sims = _sorted(ids, sims)
    return ids[:k], sims[:k]


def action_codes(actions: Sequence[Any] | np.ndarray) -> np.ndarray:
    """Action labels ``'f'/'c'/'r'`` (or 0/1/2) as int8 codes 0/1/2.

    >>> action_codes(["f", "r", "c"]).tolist(), action_codes([2, 1]).tolist()
    ([0, 2, 1], [2, 1])
    """
    arr = np.asarray(actions)
    if arr.ndim != 1:
        raise QueryError(f"actions must be a 1-d sequence, got shape {arr.shape}")
    if arr.dtype.kind in "US":
        lowered = np.char.lower(arr.astype(str))
        codes = np.full(arr.shape, -1, dtype=np.int8)
        for code, label in enumerate(ACTIONS):
            codes[lowered == label] = code
    elif arr.dtype.kind in "iu":
        codes = arr.astype(np.int64)
    elif arr.dtype.kind == "O" or arr.size == 0:
        return action_codes(np.array([str(a) if isinstance(a, str) else int(a) for a in arr.tolist()])
                            if arr.size else np.zeros(0, dtype=np.int8))
    else:
        raise QueryError(f"actions must be 'f'/'c'/'r' or 0/1/2, got dtype {arr.dtype}")
    bad = (codes < 0) | (codes > 2)
    if bad.any():
        raise QueryError(f"unknown action {arr[bad][0]!r}; actions are 'f', 'c', 'r' (or 0, 1, 2)")
    return codes.astype(np.int8)


def probability_triple(actions: Sequence[Any] | np.ndarray, similarities: np.ndarray | None = None,
                       weighted: bool = False) -> tuple[float, float, float]:
    """``(fold, check/call, bet/raise)`` frequencies of the retrieved cases' actions.

    With ``weighted=True`` each action counts with its case's similarity (cases of
    similarity 0 then count nothing; if all are 0 the plain frequencies are used).

    >>> probability_triple(["r", "r", "c", "r"])
    (0.0, 0.25, 0.75)
    >>> probability_triple(["f", "r"], np.array([0.5, 1.0]), weighted=True)
    (0.3333333333333333, 0.0, 0.6666666666666666)
    """
    codes = action_codes(actions)
    if codes.size == 0:
        raise QueryError("no cases to form a probability triple from")
    weights = np.ones(codes.shape[0], dtype=np.float64)
    if weighted:
        if similarities is None:
            raise QueryError("a weighted triple needs the similarities")
        sims = np.asarray(similarities, dtype=np.float64)
        if sims.shape != codes.shape:
            raise QueryError(f"{codes.shape[0]} actions but {sims.shape} similarities")
        if not np.isfinite(sims).all():
            raise QueryError("similarities must be finite")
        sims = np.maximum(sims, 0.0)
        if sims.sum() > 0:
            weights = sims
    totals = np.bincount(codes, weights=weights, minlength=3)
    total = totals.sum()
    return (float(totals[0] / total), float(totals[1] / total), float(totals[2] / total))


@dataclass(frozen=True)
class Explanation:
    """Why the triple is what it is: every retrieved case with its id, global similarity,
    local similarity per feature and action. ``provenance`` is left for the case store,
    which joins it through the ids (row numbers of the street's case table) with
    :meth:`with_provenance`."""

    street: str
    feature_names: tuple[str, ...]
    weights: tuple[float, ...]
    query: np.ndarray
    ids: np.ndarray
    similarities: np.ndarray
    local: np.ndarray
    actions: tuple[str, ...]
    triple: tuple[float, float, float]
    fallback: bool
    weighted: bool
    provenance: tuple[Any, ...] | None = field(default=None)

    def with_provenance(self, rows: Sequence[Any]) -> "Explanation":
        """A copy with one provenance record per retrieved case (same order as ``ids``)."""
        rows = tuple(rows)
        if len(rows) != len(self.ids):
            raise QueryError(f"{len(rows)} provenance records for {len(self.ids)} cases")
        return replace(self, provenance=rows)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        cases = []
        for j in range(len(self.ids)):
            case = {"id": int(self.ids[j]), "similarity": float(self.similarities[j]),
                    "action": self.actions[j],
                    "local": {n: float(v) for n, v in zip(self.feature_names, self.local[j])}}
            if self.provenance is not None:
                case["provenance"] = self.provenance[j]
            cases.append(case)
        return {"street": self.street, "triple": list(self.triple), "fallback": self.fallback,
                "weighted": self.weighted,
                "query": {n: float(v) for n, v in zip(self.feature_names, self.query)},
                "weights": dict(zip(self.feature_names, self.weights)), "cases": cases}


# ---------------------------------------------------------------------------------------
# Backends
# ---------------------------------------------------------------------------------------


def _write_atomic(path: Path, write: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _street_to_json(st: StreetSimilarity) -> dict[str, Any]:
    return {"street": st.street, "features": st.to_dicts()}


def _street_from_json(data: dict[str, Any]) -> StreetSimilarity:
    return StreetSimilarity(data["street"], tuple(FeatureSimilarity.from_dict(row, where=f"street {data['street']!r}")
                                                  for row in data["features"]))


class BruteForceBackend:
    """Exact retrieval by computing the similarity to every case (numpy): the definition.

    Keyword-only constructor storing parameters; ``fit`` validates; learned attributes
    end in ``_``. :class:`FaissBackend` shares this API and adds an index.

    >>> from cbr.similarity import default_casper
    >>> st = default_casper().street(0)
    >>> X = np.array([[6, 0, 6, 5, 0, 1, 0.3, 10], [6, 0, 6, 5, 0, 1, 0.3, 160]], np.float32)
    >>> b = BruteForceBackend(similarity=st, fallback_k=1).fit(X)
    >>> r = b.retrieve(X[1]); r.ids.tolist(), r.fallback
    ([1], False)
    """

    name: ClassVar[str] = "brute"

    def __init__(self, *, similarity: StreetSimilarity, threshold: float = 0.97, fallback_k: int = 20) -> None:
        self.similarity = similarity
        self.threshold = threshold
        self.fallback_k = fallback_k

    # -- parameters and data ------------------------------------------------------------

    def get_params(self) -> dict[str, Any]:
        return {"similarity": self.similarity, "threshold": self.threshold, "fallback_k": self.fallback_k}

    def _check_params(self) -> None:
        if not isinstance(self.similarity, StreetSimilarity):
            raise ConfigError(f"similarity must be a StreetSimilarity, got {type(self.similarity).__name__}")
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, (int, float)) \
                or not 0.0 <= self.threshold <= 1.0:
            raise ConfigError(f"threshold must be a number in [0, 1], got {self.threshold!r}")
        if isinstance(self.fallback_k, bool) or not isinstance(self.fallback_k, (int, np.integer)) \
                or self.fallback_k < 1:
            raise ConfigError(f"fallback_k must be a positive integer, got {self.fallback_k!r}")

    def _rows(self, X: Any, what: str = "cases") -> np.ndarray:
        arr = np.asarray(X)
        if arr.dtype.kind not in "fiub":
            raise QueryError(f"{what} must be numeric, got dtype {arr.dtype}")
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        d = len(self.similarity)
        if arr.ndim != 2 or arr.shape[1] != d:
            raise QueryError(f"{what} must have shape (n, {d}) for street {self.similarity.street!r} "
                             f"({', '.join(self.similarity.features)}); got {arr.shape}")
        if not np.isfinite(arr).all():
            raise QueryError(f"{what} contain NaN or infinite values")
        return arr

    def _queries(self, Q: Any) -> np.ndarray:
        arr = np.asarray(Q)
        if arr.ndim == 1:
            arr = arr[None, :]
        return self._rows(arr, "queries")

    def _check_fitted(self) -> None:
        if not hasattr(self, "n_cases_"):
            raise CBRError(f"this {type(self).__name__} is not fitted yet; call fit(X) first")

    @property
    def cases_(self) -> np.ndarray:
        """The case rows (float32, ``(n_cases_, d)``); row number = case id."""
        self._check_fitted()
        return self._buf[: self.n_cases_]

    def fit(self, X: Any) -> "BruteForceBackend":
        """Take the street's case rows (``(n, d)``, float32); returns ``self``."""
        self._check_params()
        rows = self._rows(X)
        if rows.shape[0] == 0:
            raise QueryError("cannot fit on zero cases")
        self._buf = rows.copy()
        self.n_cases_ = rows.shape[0]
        self.n_features_in_ = rows.shape[1]
        self._build(rows)
        return self

    def add(self, X: Any) -> np.ndarray:
        """Append cases (live-play retention); returns their ids."""
        self._check_fitted()
        rows = self._rows(X)
        n0, n1 = self.n_cases_, self.n_cases_ + rows.shape[0]
        if n1 > self._buf.shape[0]:
            grown = np.empty((max(n1, 2 * self._buf.shape[0]), rows.shape[1]), dtype=np.float32)
            grown[:n0] = self._buf[:n0]
            self._buf = grown
        self._buf[n0:n1] = rows
        self._add(rows, np.arange(n0, n1, dtype=np.int64))
        self.n_cases_ = n1
        return np.arange(n0, n1, dtype=np.int64)

    # -- hooks for subclasses ---------------------------------------------------------

    def _build(self, rows: np.ndarray) -> None:
        pass

    def _add(self, rows: np.ndarray, ids: np.ndarray) -> None:
        pass

    def _candidates(self, Q: np.ndarray, radius: np.ndarray) -> list[np.ndarray | None]:
        """Per query a superset of the ids with ``1 - s <= radius`` (``None``: all cases)."""
        return [None] * Q.shape[0]

    def _seeds(self, Q: np.ndarray, k: int) -> list[np.ndarray | None]:
        """Per query at least ``k`` ids (any), to bound the k-th best similarity."""
        return [None] * Q.shape[0]

    # -- exact scoring ------------------------------------------------------------------

    def _score(self, q: np.ndarray, ids: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        if ids is None:
            return np.arange(self.n_cases_, dtype=np.int64), global_similarity(self.similarity, q, self.cases_)
        return ids, global_similarity(self.similarity, q, self._buf[ids])

    def _knn(self, Q: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        out: list[tuple[np.ndarray, np.ndarray] | None] = [None] * Q.shape[0]
        if k >= self.n_cases_:
            return [_sorted(*self._score(q, None)) for q in Q]
        seeds = self._seeds(Q, k)
        radius = np.empty(Q.shape[0])
        for i, q in enumerate(Q):
            if seeds[i] is None:
                out[i] = _top_k(*self._score(q, None), k)
                radius[i] = -1.0
            else:
                _, s = self._score(q, seeds[i])
                kth = np.partition(s, s.shape[0] - k)[s.shape[0] - k]
                radius[i] = 1.0 - kth
        todo = np.nonzero(radius >= 0)[0]
        if todo.size:
            cands = self._candidates(Q[todo], radius[todo])
            for i, ids in zip(todo, cands):
                out[i] = _top_k(*self._score(Q[i], ids), k)
        return out  # type: ignore[return-value]

    # -- public queries -----------------------------------------------------------------

    def retrieve_batch(self, Q: Any) -> list[Retrieval]:
        """:meth:`retrieve` for each row of ``Q`` (``(n_queries, d)``)."""
        self._check_fitted()
        Q = self._queries(Q)
        t = float(self.threshold)
        results: list[Retrieval | None] = [None] * Q.shape[0]
        cands = self._candidates(Q, np.full(Q.shape[0], 1.0 - t))
        missing = []
        for i, (q, ids) in enumerate(zip(Q, cands)):
            ids, s = self._score(q, ids)
            keep = s >= t
            if keep.any():
                results[i] = Retrieval(*_sorted(ids[keep], s[keep]), fallback=False)
            else:
                missing.append(i)
        if missing:
            k = int(self.fallback_k)
            for i, (ids, s) in zip(missing, self._knn(Q[missing], k)):
                results[i] = Retrieval(ids, s, fallback=True)
        return results  # type: ignore[return-value]

    def retrieve(self, q: Any) -> Retrieval:
        """All cases with similarity >= threshold, else the ``fallback_k`` most similar."""
        q = np.asarray(q)
        if q.ndim != 1:
            raise QueryError(f"retrieve takes one query of shape (d,), got {q.shape}; use retrieve_batch")
        return self.retrieve_batch(q[None, :])[0]

    def kneighbors(self, Q: Any, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` most similar cases per query: ``(similarities, ids)``, each of shape
        ``(n_queries, k)``, similarity descending then id ascending."""
        self._check_fitted()
        Q = self._queries(Q)
        k = int(self.fallback_k if k is None else k)
        if not 1 <= k <= self.n_cases_:
            raise QueryError(f"k must be within 1..{self.n_cases_} (the number of cases), got {k}")
        found = self._knn(Q, k)
        sims = np.stack([s for _, s in found]) if found else np.zeros((0, k))
        ids = np.stack([i for i, _ in found]) if found else np.zeros((0, k), dtype=np.int64)
        return sims, ids

    def explain(self, q: Any, actions: Sequence[Any] | np.ndarray, weighted: bool = False) -> Explanation:
        """Retrieve for ``q`` and explain the triple; ``actions`` holds the action of every
        case of the street (indexed by id)."""
        r = self.retrieve(q)
        codes = action_codes(actions)
        if codes.shape[0] < self.n_cases_:
            raise QueryError(f"{codes.shape[0]} actions for {self.n_cases_} cases")
        q32 = np.asarray(q, dtype=np.float32)
        chosen = codes[r.ids]
        labels = tuple(ACTIONS[c] for c in chosen)
        return Explanation(
            street=self.similarity.street, feature_names=self.similarity.features,
            weights=tuple(float(w) for w in self.similarity.weights), query=q32, ids=r.ids,
            similarities=r.similarities, local=local_similarities(self.similarity, q32, self._buf[r.ids]),
            actions=labels, triple=probability_triple(chosen, r.similarities, weighted),
            fallback=r.fallback, weighted=weighted)

    # -- persistence ----------------------------------------------------------------------

    def _meta(self) -> dict[str, Any]:
        return {"format": INDEX_FORMAT, "version": INDEX_VERSION, "backend": self.name,
                "threshold": float(self.threshold), "fallback_k": int(self.fallback_k),
                "n_cases": int(self.n_cases_), "n_features": int(self.n_features_in_),
                "similarity": _street_to_json(self.similarity), "backend_params": self._backend_params()}

    def _backend_params(self) -> dict[str, Any]:
        return {}

    def save(self, path: str | Path) -> Path:
        """Write the index to directory ``path`` (created): ``cases.npy``, backend files,
        and ``meta.json`` last, so a crash mid-way never leaves a readable half index."""
        self._check_fitted()
        root = Path(path)
        root.mkdir(parents=True, exist_ok=True)
        meta_path = root / "meta.json"
        if meta_path.exists():
            meta_path.unlink()
        cases = self.cases_

        def write_cases(p: Path) -> None:
            with open(p, "wb") as fh:
                np.save(fh, cases)

        _write_atomic(root / "cases.npy", write_cases)
        self._save_extra(root)
        text = json.dumps(self._meta(), indent=2)
        _write_atomic(meta_path, lambda p: p.write_text(text, encoding="utf-8"))
        return root

    def _save_extra(self, root: Path) -> None:
        pass

    def _load_extra(self, root: Path, meta: dict[str, Any]) -> None:
        self._build(self.cases_)

    @classmethod
    def _from_meta(cls, root: Path, meta: dict[str, Any]) -> "BruteForceBackend":
        obj = cls(similarity=_street_from_json(meta["similarity"]), threshold=meta["threshold"],
                  fallback_k=meta["fallback_k"], **meta.get("backend_params", {}))
        obj._check_params()
        try:
            cases = np.load(root / "cases.npy")
        except (OSError, ValueError) as exc:
            raise CaseBaseError(f"index {root}: cannot read cases.npy ({exc})") from None
        if cases.shape != (meta["n_cases"], meta["n_features"]) or cases.dtype != np.float32:
            raise CaseBaseError(f"index {root}: cases.npy holds {cases.shape} {cases.dtype}, "
                                f"meta.json says ({meta['n_cases']}, {meta['n_features']}) float32")
        obj._buf = np.ascontiguousarray(cases)
        obj.n_cases_ = cases.shape[0]
        obj.n_features_in_ = cases.shape[1]
        obj._load_extra(root, meta)
        return obj


def _read_meta(root: Path) -> dict[str, Any]:
    meta_path = root / "meta.json"
    if not meta_path.exists():
        raise CaseBaseError(f"no case index at {root} (meta.json is missing: never saved, or the save "
                            f"did not finish)")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CaseBaseError(f"index {root}: unreadable meta.json ({exc})") from None
    if meta.get("format") != INDEX_FORMAT:
        raise CaseBaseError(f"index {root}: not a case index (format {meta.get('format')!r})")
    if meta.get("version") != INDEX_VERSION:
        raise CaseBaseError(f"index {root}: index version {meta.get('version')!r}, this program reads "
                            f"version {INDEX_VERSION}; rebuild the index")
    return meta


# float32 rounding in the bound space (values in [0, 1], sums of d terms) stays far below this;
# the margin only widens the candidate set, never the answer.
def _margin(d: int) -> float:
    return 1e-5 + 1e-6 * d


class FaissBackend(BruteForceBackend):
    """Exact retrieval with a faiss ``IndexIVFFlat`` (``METRIC_L1``) in the bound space.

    ``n_lists``: number of inverted lists (``"auto"``: about ``2 * sqrt(n)``); ``seed``: of
    the k-means that places them. See the module docstring for the exactness argument.
    """

    name: ClassVar[str] = "faiss"

    def __init__(self, *, similarity: StreetSimilarity, threshold: float = 0.97, fallback_k: int = 20,
                 n_lists: int | str = "auto", seed: int = 1234) -> None:
        super().__init__(similarity=similarity, threshold=threshold, fallback_k=fallback_k)
        self.n_lists = n_lists
        self.seed = seed

    def get_params(self) -> dict[str, Any]:
        return {**super().get_params(), "n_lists": self.n_lists, "seed": self.seed}

    def _backend_params(self) -> dict[str, Any]:
        return {"n_lists": self.n_lists, "seed": self.seed}

    # -- bound space ----------------------------------------------------------------------

    def _scale(self, rows: np.ndarray) -> np.ndarray:
        st = self.similarity
        lows, highs = st.lows, st.highs
        z = (np.clip(rows.astype(np.float64), lows, highs) - lows) * st.bound_scales()
        return np.ascontiguousarray(z, dtype=np.float32)

    def _list_count(self, n: int) -> int:
        if self.n_lists == "auto":
            return int(max(1, min(round(2 * math.sqrt(n)), n // 40)))
        if isinstance(self.n_lists, bool) or not isinstance(self.n_lists, (int, np.integer)) or self.n_lists < 1:
            raise ConfigError(f"n_lists must be 'auto' or a positive integer, got {self.n_lists!r}")
        return int(min(self.n_lists, n))

    def _build(self, rows: np.ndarray) -> None:
        import faiss

        z = self._scale(rows)
        n, d = z.shape
        nlist = self._list_count(n)
        if nlist == 1:
            centroids = z.mean(axis=0, keepdims=True).astype(np.float32)
        else:
            rng = np.random.default_rng(self.seed)
            sample = z if n <= 64 * nlist else z[np.sort(rng.choice(n, 64 * nlist, replace=False))]
            km = faiss.Kmeans(d, nlist, niter=12, seed=int(self.seed), verbose=False,
                              max_points_per_centroid=64, min_points_per_centroid=1)
            with _threads(sample.shape[0] * nlist < 50_000_000):
                km.train(np.ascontiguousarray(sample))
            centroids = km.centroids.astype(np.float32)
        # Assignment with L2 (BLAS-fast); any assignment is exact since the list bounds
        # below are computed from the actual members.
        quantizer = faiss.IndexFlatL2(d)
        quantizer.add(centroids)
        index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_L1)
        index.is_trained = True
        quantizer.this.disown()
        index.own_fields = True
        self._index = index
        self._centroids = centroids
        self._lo = np.full((nlist, d), np.inf, dtype=np.float32)
        self._hi = np.full((nlist, d), -np.inf, dtype=np.float32)
        self._radius = np.full(nlist, -np.inf, dtype=np.float64)
        self._sizes = np.zeros(nlist, dtype=np.int64)
        self._insert(z, np.arange(n, dtype=np.int64))

    def _insert(self, z: np.ndarray, ids: np.ndarray) -> None:
        with _threads(z.shape[0] * self._lo.shape[0] < 50_000_000):
            _, assign = self._index.quantizer.search(z, 1)
        assign = assign.ravel().astype(np.int64)
        order = np.argsort(assign, kind="stable")
        a_sorted = assign[order]
        lists, starts = np.unique(a_sorted, return_index=True)
        zs = z[order]
        self._lo[lists] = np.minimum(self._lo[lists], np.minimum.reduceat(zs, starts, axis=0))
        self._hi[lists] = np.maximum(self._hi[lists], np.maximum.reduceat(zs, starts, axis=0))
        dist = np.abs(zs.astype(np.float64) - self._centroids[a_sorted]).sum(axis=1)
        self._radius[lists] = np.maximum(self._radius[lists], np.maximum.reduceat(dist, starts))
        self._sizes += np.bincount(assign, minlength=self._sizes.shape[0])
        self._index.add_core(z.shape[0], _ptr(z), _ptr(np.ascontiguousarray(ids, dtype=np.int64)),
                             _ptr(np.ascontiguousarray(assign)))

    def _add(self, rows: np.ndarray, ids: np.ndarray) -> None:
        self._insert(self._scale(rows), ids)

    def _list_bounds(self, z: np.ndarray) -> np.ndarray:
        """Per query and list a lower bound of the bound-space distance to every member."""
        out = np.empty((z.shape[0], self._lo.shape[0]), dtype=np.float32)
        for i, zq in enumerate(z):
            box = (np.maximum(self._lo - zq, 0) + np.maximum(zq - self._hi, 0)).sum(axis=1)
            ball = np.abs(self._centroids - zq).sum(axis=1) - self._radius
            out[i] = np.maximum(box, ball)
        return out

    def _range(self, z: np.ndarray, radius: np.ndarray, lists: list[np.ndarray]) -> list[np.ndarray]:
        import faiss

        width = max((len(x) for x in lists), default=0)
        if width == 0:
            return [np.zeros(0, dtype=np.int64) for _ in lists]
        keys = np.full((len(lists), width), -1, dtype=np.int64)
        for i, sel in enumerate(lists):
            keys[i, : len(sel)] = sel
        results: list[np.ndarray | None] = [None] * len(lists)
        # one faiss call per distinct radius (threshold mode: one call for the whole batch)
        for r in np.unique(radius):
            rows = np.nonzero(radius == r)[0]
            sub_keys = np.ascontiguousarray(keys[rows])
            sub_z = np.ascontiguousarray(z[rows])
            coarse = np.zeros(sub_keys.shape, dtype=np.float32)
            self._index.nprobe = width
            res = faiss.RangeSearchResult(len(rows))
            with _threads(len(rows) < 16):
                self._index.range_search_preassigned_c(len(rows), _ptr(sub_z), float(r), _ptr(sub_keys),
                                                       _ptr(coarse), res)
            lims = faiss.rev_swig_ptr(res.lims, len(rows) + 1).copy()
            labels = faiss.rev_swig_ptr(res.labels, int(lims[-1])).copy() if lims[-1] else np.zeros(0, np.int64)
            for j, i in enumerate(rows):
                results[i] = labels[lims[j]: lims[j + 1]]
        return [np.sort(x) for x in results]  # type: ignore[arg-type]

    def _candidates(self, Q: np.ndarray, radius: np.ndarray) -> list[np.ndarray | None]:
        z = self._scale(Q)
        margin = _margin(z.shape[1])
        bounds = self._list_bounds(z)
        out: list[np.ndarray | None] = [None] * Q.shape[0]
        lists, rows = [], []
        for i in range(Q.shape[0]):
            sel = np.nonzero(bounds[i] <= radius[i] + margin)[0]
            if self._sizes[sel].sum() * 2 > self.n_cases_:
                continue  # most of the case base: scoring all rows is as fast; out[i] = None
            lists.append(sel)
            rows.append(i)
        if rows:
            rows_a = np.array(rows)
            found = self._range(z[rows_a], radius[rows_a] + margin, lists)
            for i, ids in zip(rows, found):
                out[i] = ids
        return out

    def _seeds(self, Q: np.ndarray, k: int) -> list[np.ndarray | None]:
        z = self._scale(Q)
        bounds = self._list_bounds(z)
        want = min(max(16 * k, 256), self.n_cases_)  # more seeds: a tighter floor s_k, fewer candidates
        keys_list = []
        for i in range(Q.shape[0]):
            order = np.argsort(bounds[i], kind="stable")
            count = np.cumsum(self._sizes[order])
            p = int(np.searchsorted(count, want)) + 1
            keys_list.append(order[:p])
        width = max(len(x) for x in keys_list)
        keys = np.full((Q.shape[0], width), -1, dtype=np.int64)
        for i, sel in enumerate(keys_list):
            keys[i, : len(sel)] = sel
        self._index.nprobe = width
        coarse = np.zeros(keys.shape, dtype=np.float32)
        with _threads(Q.shape[0] < 16):
            _, labels = self._index.search_preassigned(z, want, keys, coarse)
        out: list[np.ndarray | None] = []
        for row in labels:
            ids = row[row >= 0]
            out.append(ids if ids.shape[0] >= k else None)
        return out

    # -- persistence ----------------------------------------------------------------------

    def _save_extra(self, root: Path) -> None:
        import faiss

        _write_atomic(root / "index.faiss", lambda p: faiss.write_index(self._index, str(p)))

        def write_bounds(p: Path) -> None:
            with open(p, "wb") as fh:
                np.savez(fh, centroids=self._centroids, lo=self._lo, hi=self._hi,
                         radius=self._radius, sizes=self._sizes)

        _write_atomic(root / "lists.npz", write_bounds)

    def _load_extra(self, root: Path, meta: dict[str, Any]) -> None:
        import faiss

        try:
            index = faiss.read_index(str(root / "index.faiss"))
            with np.load(root / "lists.npz") as data:
                self._centroids = data["centroids"]
                self._lo, self._hi = data["lo"], data["hi"]
                self._radius, self._sizes = data["radius"], data["sizes"]
        except (OSError, RuntimeError, KeyError, ValueError) as exc:
            raise CaseBaseError(f"index {root}: cannot read the faiss index ({exc})") from None
        if index.ntotal != self.n_cases_ or int(self._sizes.sum()) != self.n_cases_:
            raise CaseBaseError(f"index {root}: faiss index holds {index.ntotal} cases, cases.npy "
                                f"{self.n_cases_}; rebuild the index")
        if not isinstance(index, faiss.IndexIVFFlat):
            raise CaseBaseError(f"index {root}: index.faiss holds a {type(index).__name__}, not an IndexIVFFlat")
        self._index = index


@contextmanager
def _threads(small: bool) -> Iterator[None]:
    """Run small faiss calls on one OpenMP thread: waking a team costs more than the work,
    and far more on a busy machine. Large calls keep faiss's default."""
    if not small:
        yield
        return
    import faiss

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def _ptr(a: np.ndarray) -> Any:
    import faiss

    return faiss.swig_ptr(a)


_BUILTIN_BACKENDS: dict[str, type[BruteForceBackend]] = {"brute": BruteForceBackend, "faiss": FaissBackend}


def backend_class(name: str) -> type:
    """A retrieval backend by name: built-in (``faiss``, ``brute``) or a ``cbr.backends`` plugin."""
    if name in _BUILTIN_BACKENDS:
        return _BUILTIN_BACKENDS[name]
    from cbr import plugins

    try:
        return plugins.load("cbr.backends", name)
    except PluginError as exc:
        raise ConfigError(f"unknown retrieval backend {name!r} (built-in: faiss, brute; {exc})") from None


# ---------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------


class CaseIndex:
    """Exact CASPER retrieval over one street's cases, in scikit-learn estimator shape.

    ``similarity``: the street's :class:`~cbr.similarity.StreetSimilarity`; ``threshold``
    and ``fallback_k`` as in CASPER; ``backend``: ``"faiss"`` (default) or ``"brute"``
    (or a ``cbr.backends`` plugin); ``backend_params``: extra keywords for the backend
    (``n_lists``, ``seed`` for faiss).

    >>> from cbr.similarity import default_casper
    >>> st = default_casper().street("river")
    >>> X = np.tile(np.array([[2, 1, 2, 0, 0, 1, 0.25, 0.9, 0, 0, 12, 1]], np.float32), (30, 1))
    >>> X[:, 7] = np.linspace(0, 1, 30)
    >>> sims, ids = CaseIndex(similarity=st).fit(X).kneighbors(X[:1], 3)
    >>> ids.tolist()
    [[0, 1, 2]]
    """

    def __init__(self, *, similarity: StreetSimilarity, threshold: float = 0.97, fallback_k: int = 20,
                 backend: str = "faiss", backend_params: dict[str, Any] | None = None) -> None:
        self.similarity = similarity
        self.threshold = threshold
        self.fallback_k = fallback_k
        self.backend = backend
        self.backend_params = backend_params

    @classmethod
    def for_street(cls, config: Any, street: int | str, **kwargs: Any) -> "CaseIndex":
        """An unfitted index with a :class:`~cbr.similarity.SimilarityConfig`'s settings for ``street``."""
        return cls(similarity=config.street(street), threshold=config.threshold,
                   fallback_k=config.fallback_k, **kwargs)

    def get_params(self) -> dict[str, Any]:
        return {"similarity": self.similarity, "threshold": self.threshold, "fallback_k": self.fallback_k,
                "backend": self.backend, "backend_params": self.backend_params}

    def _make_backend(self) -> BruteForceBackend:
        cls = backend_class(self.backend)
        return cls(similarity=self.similarity, threshold=self.threshold, fallback_k=self.fallback_k,
                   **(self.backend_params or {}))

    def fit(self, X: Any) -> "CaseIndex":
        """Index the street's case rows ``X`` (``(n, d)`` float32; row number = case id)."""
        self.backend_ = self._make_backend().fit(X)
        return self

    def _fitted(self) -> BruteForceBackend:
        if not hasattr(self, "backend_"):
            raise CBRError("this CaseIndex is not fitted yet; call fit(X) or CaseIndex.load(path)")
        return self.backend_

    @property
    def n_cases_(self) -> int:
        return self._fitted().n_cases_

    @property
    def n_features_in_(self) -> int:
        return self._fitted().n_features_in_

    @property
    def cases_(self) -> np.ndarray:
        return self._fitted().cases_

    def add(self, X: Any) -> np.ndarray:
        """Append cases (live-play retention); returns their ids."""
        return self._fitted().add(X)

    def retrieve(self, q: Any) -> Retrieval:
        """All cases with similarity >= threshold, else the ``fallback_k`` most similar."""
        return self._fitted().retrieve(q)

    def retrieve_batch(self, Q: Any) -> list[Retrieval]:
        """:meth:`retrieve` for each row of ``Q``."""
        return self._fitted().retrieve_batch(Q)

    def kneighbors(self, Q: Any, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(similarities, ids)`` of the k most similar cases, each ``(n_queries, k)``."""
        return self._fitted().kneighbors(Q, k)

    def explain(self, q: Any, actions: Sequence[Any] | np.ndarray, weighted: bool = False) -> Explanation:
        """Retrieve for ``q`` and explain the probability triple (``actions``: all cases' actions)."""
        return self._fitted().explain(q, actions, weighted)

    def triple(self, q: Any, actions: Sequence[Any] | np.ndarray, weighted: bool = False) -> tuple[float, float, float]:
        """The probability triple for ``q`` (``actions``: every case's action, by id)."""
        r = self.retrieve(q)
        return probability_triple(action_codes(actions)[r.ids], r.similarities, weighted)

    def save(self, path: str | Path) -> Path:
        """Write to directory ``path``: ``meta.json``, ``cases.npy`` and the backend's files
        (``index.faiss`` via ``faiss.write_index`` and ``lists.npz`` for faiss)."""
        return self._fitted().save(path)

    @classmethod
    def load(cls, path: str | Path) -> "CaseIndex":
        """Read an index written by :meth:`save`; raises :class:`CaseBaseError` if it is
        missing, incomplete or of another version."""
        root = Path(path)
        meta = _read_meta(root)
        backend = backend_class(meta["backend"])._from_meta(root, meta)
        obj = cls(similarity=backend.similarity, threshold=backend.threshold, fallback_k=backend.fallback_k,
                  backend=meta["backend"], backend_params=meta.get("backend_params") or None)
        obj.backend_ = backend
        return obj
