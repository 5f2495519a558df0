"""The brute-force backend: exact retrieval by scoring every case, the definition every
other backend must agree with, and the scaffolding they share (validation, exact
re-ranking of candidates, growing by appends, persistence, and the entry of the grouped
scan, :meth:`BruteForceBackend.aggregate`, the same for every backend: it scans the
:class:`~cbr.retrieval.aggregate.GroupedLayout` and asks the backend only for the
fallback's k most similar).

A backend subclasses :class:`BruteForceBackend` and overrides the hooks ``_build``,
``_add``, ``_candidates`` (a superset of the cases within a radius of ``1 - s``) and
``_seeds`` (some cases, to bound the k-th best similarity); the exact similarities always
come from :func:`cbr.similarity.similarity_into`, the very function
:func:`cbr.similarity.global_similarity` (the definition) consists of, row by row, so the
values are bit-identical whichever subset of the cases is scored. Hits are ordered by
similarity descending, then id ascending (:func:`_sorted`).
"""
from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from cbr.errors import CaseBaseError, CBRError, ConfigError, counted
from cbr.retrieval.persist import INDEX_FORMAT, INDEX_VERSION, street_from_json, street_to_json, write_atomic
from cbr.retrieval.results import ACTIONS, Explanation, QueryError, Retrieval, action_codes, probability_triple
from cbr.similarity import StreetSimilarity, check_min_cases, local_similarities, similarity_into

__all__ = ["BruteForceBackend"]


def _sorted(ids: np.ndarray, sims: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, sims)`` ordered by similarity descending, then id ascending (ids unique, in
    any order).

    One unstable argsort on the similarities, then only the runs of equal similarity (ties)
    are re-ordered by id: a tie run is a contiguous block of the sorted order, so sorting
    the tied positions by (similarity desc, id asc) and writing them back to the same
    positions gives the full (similarity desc, id asc) order, equal to ``np.lexsort((ids,
    -sims))``.

    >>> i, s = _sorted(np.array([7, 3, 5, 1]), np.array([0.5, 0.9, 0.5, 0.5]))
    >>> i.tolist(), s.tolist()
    ([3, 1, 5, 7], [0.9, 0.5, 0.5, 0.5])
    """
    order = np.argsort(-sims)
    s = sims[order]
    if s.shape[0] > 1:
        eq = s[1:] == s[:-1]
        if eq.any():
            tied = np.zeros(s.shape[0], dtype=np.bool_)
            tied[1:] = eq
            tied[:-1] |= eq
            pos = np.flatnonzero(tied)
            sub = order[pos]
            order[pos] = sub[np.lexsort((ids[sub], -sims[sub]))]   # equal sims: s is unchanged
    return ids[order].astype(np.int64, copy=False), s


def _merge_top(ids: list[np.ndarray], sims: list[np.ndarray], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best of top lists (``ids[i]``, ``sims[i]``) by (similarity desc, id asc); each
    list sorted so, and every id of a list below every id of the next (the layout's cases, then
    the tail's, then the raw tail's): a stable sort by similarity alone keeps ties in id order.

    >>> i, s = _merge_top([np.array([4, 9]), np.array([12])], [np.array([0.9, 0.5]), np.array([0.5])], 2)
    >>> i.tolist(), s.tolist()
    ([4, 9], [0.9, 0.5])
    """
    ids = np.concatenate(ids)
    sims = np.concatenate(sims)
    order = np.argsort(-sims, kind="stable")[:k]
    return ids[order], sims[order]


def _top_k(ids: np.ndarray, sims: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best by (similarity desc, id asc); ids in any order."""
    if ids.shape[0] > k:
        kth = np.partition(sims, ids.shape[0] - k)[ids.shape[0] - k]
        keep = sims >= kth
        ids, sims = ids[keep], sims[keep]
    ids, sims = _sorted(ids, sims)
    return ids[:k], sims[:k]


#: The fallback's lowest grouped scan is at similarity 1 - this (:meth:`BruteForceBackend._nearest`).
_LOWEST_GAP = 0.25


class BruteForceBackend:
    """Exact retrieval by computing the similarity to every case (numpy): the definition.

    Keyword-only constructor storing parameters; ``fit`` validates; learned attributes
    end in ``_``. :class:`~cbr.retrieval.faiss_backend.FaissBackend` shares this API and adds an index.

    >>> from cbr.similarity import default_casper
    >>> st = default_casper().street(0)
    >>> X = np.array([[6, 0, 6, 5, 0, 1, 0.3, 10], [6, 0, 6, 5, 0, 1, 0.3, 160]], np.float32)
    >>> b = BruteForceBackend(similarity=st, fallback_k=1).fit(X)
    >>> r = b.retrieve(X[1]); r.ids.tolist(), r.fallback
    ([1], False)
    """

    name: ClassVar[str] = "brute"

    def __init__(self, *, similarity: StreetSimilarity, threshold: float = 0.97, fallback_k: int = 20,
                 min_cases: int = 1) -> None:
        self.similarity = similarity
        self.threshold = threshold
        self.fallback_k = fallback_k
        self.min_cases = min_cases

    # -- parameters and data ------------------------------------------------------------

    def get_params(self) -> dict[str, Any]:
        return {"similarity": self.similarity, "threshold": self.threshold, "fallback_k": self.fallback_k,
                "min_cases": self.min_cases}

    def _check_params(self) -> None:
        if not isinstance(self.similarity, StreetSimilarity):
            raise ConfigError(f"similarity must be a StreetSimilarity, got {type(self.similarity).__name__}")
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, (int, float)) \
                or not 0.0 <= self.threshold <= 1.0:
            raise ConfigError(f"threshold must be a number in [0, 1], got {self.threshold!r}")
        if isinstance(self.fallback_k, bool) or not isinstance(self.fallback_k, (int, np.integer)) \
                or self.fallback_k < 1:
            raise ConfigError(f"fallback_k must be a positive integer, got {self.fallback_k!r}")
        check_min_cases(self.min_cases, self.fallback_k)

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
        for name in ("_layout", "_tail_layout", "_raw_tail"):   # made for the cases fit replaces
            self.__dict__.pop(name, None)
        self._build(rows)
        return self

    #: Whether the case rows (and the backend's lists) are memory-mapped files, read-only
    #: (``CaseIndex.load(path, mmap=True)``).
    memory_mapped: bool = False

    def add(self, X: Any) -> np.ndarray:
        """Append cases (live-play retention); returns their ids."""
        self._check_fitted()
        if self.memory_mapped:
            raise CBRError("this index is memory-mapped from its files and read-only; load it without "
                           "mmap=True to add cases")
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

    def _buffers(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-thread scratch for scoring ``n`` candidates: gathered rows (float32 ``(n, d)``),
        the similarities and a work column (float64 ``(n,)``); grown by doubling, reused."""
        local = self._scratch
        rows = getattr(local, "rows", None)
        if rows is None or rows.shape[0] < n or rows.shape[1] != self.n_features_in_:
            size = max(n, 1024, 0 if rows is None else 2 * rows.shape[0])
            local.rows = rows = np.empty((size, self.n_features_in_), dtype=np.float32)
            local.out = np.empty(size, dtype=np.float64)
            local.work = np.empty(size, dtype=np.float64)
        return rows[:n], local.out[:n], local.work[:n]

    @property
    def _scratch(self) -> threading.local:
        local = self.__dict__.get("_scratch_local")
        if local is None:
            local = self.__dict__.setdefault("_scratch_local", threading.local())
        return local

    def _score(self, q: np.ndarray, ids: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Exact similarities of query ``q`` (float32, checked) to the cases ``ids`` (all if
        None): :func:`cbr.similarity.similarity_into`, the function
        :func:`~cbr.similarity.global_similarity` is made of, so the values are bit-identical
        to the definition's. Candidate rows are gathered with one ``np.take`` into a reused
        buffer; the returned similarities live in a per-thread buffer too, valid until the next
        call (callers filter or sort them, which copies)."""
        if ids is None:
            x = self.cases_
            n = x.shape[0]
            out, work = np.empty(n), np.empty(n)
            ids = np.arange(n, dtype=np.int64)
        else:
            n = ids.shape[0]
            x, buf, work = self._buffers(n)
            np.take(self._buf, ids, axis=0, out=x)
            out = buf
        similarity_into(self.similarity, q, [x[:, i] for i in range(x.shape[1])], out, work)
        return ids, out

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

    def retrieve_batch(self, Q: Any, *, min_cases: int | None = None) -> list[Retrieval]:
        """:meth:`retrieve` for each row of ``Q`` (``(n_queries, d)``); ``min_cases``: this
        call's instead of the index's."""
        least = int(self.min_cases if min_cases is None else min_cases)
        self._check_fitted()
        Q = self._queries(Q)
        t = float(self.threshold)
        results: list[Retrieval | None] = [None] * Q.shape[0]
        cands = self._candidates(Q, np.full(Q.shape[0], 1.0 - t))
        missing = []
        for i, (q, ids) in enumerate(zip(Q, cands)):
            ids, s = self._score(q, ids)
            keep = s >= t
            if np.count_nonzero(keep) >= least:
                results[i] = Retrieval(*_sorted(ids[keep], s[keep]), fallback=False)
            else:
                missing.append(i)
        if missing:
            k = int(self.fallback_k)
            for i, (ids, s) in zip(missing, self._knn(Q[missing], k)):
                results[i] = Retrieval(ids, s, fallback=True)
        return results  # type: ignore[return-value]

    def retrieve(self, q: Any) -> Retrieval:
        """All cases with similarity >= threshold, else (fewer than ``min_cases`` of them, 1:
        none) the ``fallback_k`` most similar."""
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
            raise QueryError(f"{counted(codes.shape[0], 'action')} for {counted(self.n_cases_, 'case')}")
        q32 = np.asarray(q, dtype=np.float32)
        chosen = codes[r.ids]
        labels = tuple(ACTIONS[c] for c in chosen)
        return Explanation(
            street=self.similarity.street, feature_names=self.similarity.features,
            weights=tuple(float(w) for w in self.similarity.weights), query=q32, ids=r.ids,
            similarities=r.similarities, local=local_similarities(self.similarity, q32, self._buf[r.ids]),
            actions=labels, triple=probability_triple(chosen, r.similarities, weighted),
            fallback=r.fallback, weighted=weighted)

    # -- aggregates (cbr.retrieval.aggregate) --------------------------------------------

    def _layout_now(self) -> Any:
        """The grouped layout covering all but a small tail of the cases: built on first use,
        rebuilt when the cases appended since outgrow a quarter of it."""
        from cbr.retrieval import aggregate

        def stale(layout: Any) -> bool:
            return layout is None or self.n_cases_ - layout.n_rows > max(aggregate.REBUILD_TAIL, layout.n_rows // 4)

        layout = self.__dict__.get("_layout")
        if stale(layout):
            lock = self.__dict__.setdefault("_layout_lock", threading.Lock())
            with lock:
                layout = self.__dict__.get("_layout")
                if stale(layout):
                    layout = aggregate.GroupedLayout.build(self.similarity, self.cases_)
                    self._layout = layout
        return layout

    def _tail_layout_now(self, start: int) -> Any:
        """A layout of the cases ``start ..`` appended since the main layout (None while they
        are few): rebuilt when more than :func:`~cbr.retrieval.aggregate.tail_rows_left_raw`
        of them are not in it, so numpy scores at most that many on each query."""
        from cbr.retrieval import aggregate

        def current() -> Any:  # the tail's layout, if it starts where the main layout ends
            tail = self.__dict__.get("_tail_layout")
            return tail[1] if tail is not None and tail[0] == start else None

        def stale(layout: Any) -> bool:
            appended = self.n_cases_ - start
            if appended <= aggregate.RAW_TAIL:
                return False
            return layout is None or appended - layout.n_rows > aggregate.tail_rows_left_raw(appended)

        layout = current()
        if stale(layout):
            with self.__dict__.setdefault("_layout_lock", threading.Lock()):
                layout = current()
                if stale(layout):
                    older = layout
                    layout = aggregate.GroupedLayout.build(self.similarity, self.cases_[start:])
                    layout.ids = layout.ids + start  # case ids, not row numbers of the slice
                    if older is not None:
                        layout.keep_key_tables(older)
                    self._tail_layout = (start, layout)
        return layout

    def _raw_tail_now(self, start: int) -> Any:
        """The cases ``start ..`` appended since the tail's layout: a
        :class:`~cbr.retrieval.aggregate.RawTail` grown by the cases appended since the last
        query, its view and its rows; None when there are none."""
        from cbr.retrieval.aggregate import RawTail

        n = self.n_cases_
        if start >= n:
            return None
        with self.__dict__.setdefault("_layout_lock", threading.Lock()):
            raw = self.__dict__.get("_raw_tail")
            if raw is None or raw.start != start or raw.start + raw.n > n:
                raw = self._raw_tail = RawTail(self.similarity, start)
            if raw.start + raw.n < n:
                raw.extend(self._buf[raw.start + raw.n: n])
            view = raw.view
            return raw, view, self._buf[start: start + view.n]

    def aggregate(self, q: Any, codes: Any, outcomes: Any = None, top: int = 20, *, fallback: bool = True) -> Any:
        """What the cases :meth:`retrieve` returns for ``q`` add up to, computed without listing
        them: an :class:`~cbr.retrieval.aggregate.Aggregate` (hit count, per-action counts,
        similarity and outcome sums, the ``top`` most similar). ``codes``: every case's action
        (by id; int8 0/1/2 or labels), ``outcomes``: every case's outcome (NaN = unknown) or None;
        or ``codes`` a :class:`~cbr.retrieval.aggregate.Labels` (outcomes None), read in the
        layout's order."""
        q = np.asarray(q)
        if q.ndim != 1:
            raise QueryError(f"aggregate takes one query of shape (d,), got {q.shape}; use aggregate_batch")
        return self.aggregate_batch(q[None, :], codes, outcomes, top, fallback=fallback)[0]

    def aggregate_batch(self, Q: Any, codes: Any, outcomes: Any = None, top: int = 20, *,
                        fallback: bool = True) -> list[Any]:
        """:meth:`aggregate` for each row of ``Q``. ``fallback=False``: a query with no case at
        or above the threshold gets an empty aggregate (``n`` 0) instead of the ``fallback_k``
        most similar (a caller that asks only whether any case is that similar)."""
        from cbr.retrieval.aggregate import Aggregate, Labels, aggregate_of, check_labels, native_scan, native_scan_rows

        self._check_fitted()
        Q = self._queries(Q)
        if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1:
            raise QueryError(f"top must be a positive integer, got {top!r}")
        top = int(top)
        bound = codes if isinstance(codes, Labels) else None
        if bound is not None:
            if outcomes is not None:
                raise QueryError("with Labels the outcomes are the labels' own; pass outcomes=None")
            if len(bound) < self.n_cases_:
                raise QueryError(f"labels for {counted(len(bound), 'case')}, the index holds {self.n_cases_}")
            codes, outcomes = bound.codes, bound.outcomes
        else:
            codes, outcomes = check_labels(codes, outcomes, self.n_cases_)
        scan, scan_rows = native_scan(), native_scan_rows()
        if scan is None or scan_rows is None:
            found = [aggregate_of(r.ids, r.similarities, codes, outcomes, top, r.fallback)
                     for r in self.retrieve_batch(Q, min_cases=None if fallback else 1)]
            return found if fallback else [_emptied(a) if a.fallback else a for a in found]
        layout = self._layout_now()
        t = float(self.threshold)
        n0 = layout.n_rows
        tail_layout = self._tail_layout_now(n0)  # most of what was appended since, laid out too
        n1 = n0 + (tail_layout.n_rows if tail_layout is not None else 0)
        raw = self._raw_tail_now(n1)
        scan_codes, scan_outcomes = (codes, outcomes) if bound is None else bound.for_layout(layout)
        if tail_layout is not None:
            tail_codes, tail_outcomes = (codes, outcomes) if bound is None else bound.for_layout(tail_layout)

        def scan_all(q: np.ndarray, t: float, top: int) -> tuple[int, tuple, np.ndarray, np.ndarray]:
            """Every case at or above ``t``: the layout's, the tail layout's and the raw rows'."""
            hits, sums, tids, tsims = layout.scan(scan, q, t, scan_codes, scan_outcomes, top, bound is not None)
            counts, pos, known, osum, sim_sum = sums
            more_ids, more_sims = [tids], [tsims]
            if tail_layout is not None:
                h2, (c2, p2, k2, o2, s2), ids2, sims2 = tail_layout.scan(scan, q, t, tail_codes, tail_outcomes, top,
                                                                         bound is not None)
                if h2:
                    hits += h2
                    counts, pos, known, osum, sim_sum = counts + c2, pos + p2, known + k2, osum + o2, sim_sum + s2
                    more_ids.append(ids2)
                    more_sims.append(sims2)
            if raw is not None:   # the few appended since the tail's layout
                h3, (c3, p3, k3, o3, s3), ids3, sims3 = raw[0].scan(scan_rows, *raw[1:], q, t, codes, outcomes,
                                                                        top)
                if h3:
                    hits += h3
                    counts, pos, known, osum, sim_sum = counts + c3, pos + p3, known + k3, osum + o3, sim_sum + s3
                    more_ids.append(ids3)
                    more_sims.append(sims3)
            if len(more_ids) > 1:
                tids, tsims = _merge_top(more_ids, more_sims, top)
            return hits, (counts, pos, known, osum, sim_sum), tids, tsims

        k = int(self.fallback_k)
        least = int(self.min_cases)
        out: list[Any] = []
        for q in Q:
            hits, (counts, pos, known, osum, sim_sum), tids, tsims = scan_all(q, t, top)
            if hits == 0 and not fallback:
                out.append(Aggregate(0, False, counts, pos, known, osum, sim_sum, tids, tsims))
            elif hits < least and fallback:
                out.append(self._nearest(q, k, t, top, scan_all, codes, outcomes))
            else:
                out.append(Aggregate(hits, False, counts, pos, known, osum, sim_sum, tids, tsims))
        return out

    def _nearest(self, q: np.ndarray, k: int, t: float, top: int, scan_all: Any, codes: np.ndarray,
                 outcomes: Any) -> Any:
        """The fallback's ``k`` most similar as an aggregate: the grouped scan at ever lower
        thresholds, keeping its ``k`` most similar, until ``k`` cases reach one (then they are
        the ``k`` most similar of all, ties by id as :meth:`_knn`); the k-NN search when even a
        threshold of 0.75 leaves fewer (lower, the scan skips few groups: slower than the k-NN at
        a million cases)."""
        from cbr.retrieval.aggregate import aggregate_of

        gap = max(1.0 - t, 1e-3)
        while (gap := gap * 4.0) <= _LOWEST_GAP:  # below that the scan skips few groups: the k-NN is faster
            hits, _, ids, sims = scan_all(q, 1.0 - gap, k)
            if hits >= k:
                return aggregate_of(ids, sims, codes, outcomes, top, True)
        ids, sims = self._knn(q[None, :], k)[0]
        return aggregate_of(ids, sims, codes, outcomes, top, True)

    # -- persistence ----------------------------------------------------------------------

    def _meta(self) -> dict[str, Any]:
        return {"format": INDEX_FORMAT, "version": INDEX_VERSION, "backend": self.name,
                "threshold": float(self.threshold), "fallback_k": int(self.fallback_k),
                "min_cases": int(self.min_cases),
                "n_cases": int(self.n_cases_), "n_features": int(self.n_features_in_),
                "similarity": street_to_json(self.similarity), "backend_params": self._backend_params()}

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

        write_atomic(root / "cases.npy", write_cases)
        self._save_extra(root)
        from cbr.retrieval.aggregate import native_scan

        if native_scan() is not None:
            self._layout_now().save(root, write_atomic)
        else:  # never leave another save's layout beside these cases
            from cbr.retrieval.aggregate import LAYOUT_FILES

            for name in LAYOUT_FILES:
                (root / name).unlink(missing_ok=True)
        text = json.dumps(self._meta(), indent=2)
        write_atomic(meta_path, lambda p: p.write_text(text, encoding="utf-8"))
        return root

    def _save_extra(self, root: Path) -> None:
        pass

    def _load_extra(self, root: Path, meta: dict[str, Any]) -> None:
        self._build(self.cases_)

    @classmethod
    def _from_meta(cls, root: Path, meta: dict[str, Any], mmap: bool = False) -> "BruteForceBackend":
        obj = cls(similarity=street_from_json(meta["similarity"]), threshold=meta["threshold"],
                  fallback_k=meta["fallback_k"], min_cases=meta.get("min_cases", 1),
                  **meta.get("backend_params", {}))
        obj._check_params()
        try:
            cases = np.load(root / "cases.npy", mmap_mode="r" if mmap else None)
        except (OSError, ValueError) as exc:
            raise CaseBaseError(f"index {root}: cannot read cases.npy ({exc})") from None
        if cases.shape != (meta["n_cases"], meta["n_features"]) or cases.dtype != np.float32 \
                or not cases.flags.c_contiguous:
            raise CaseBaseError(f"index {root}: cases.npy holds {cases.shape} {cases.dtype}, "
                                f"meta.json says ({meta['n_cases']}, {meta['n_features']}) float32")
        obj._buf = cases
        obj.memory_mapped = mmap
        obj.n_cases_ = cases.shape[0]
        obj.n_features_in_ = cases.shape[1]
        obj._load_extra(root, meta)
        from cbr.retrieval.aggregate import GroupedLayout

        layout = GroupedLayout.load(root, obj.similarity, obj.n_cases_, mmap)
        if layout is not None:
            obj._layout = layout
        return obj


def _emptied(a: Any) -> Any:
    """An empty aggregate (nothing at or above the threshold) in place of a fallback's."""
    from cbr.retrieval.aggregate import Aggregate

    zero = np.zeros(3)
    return Aggregate(0, False, np.zeros(3, np.int64), zero, zero.copy(), zero.copy(), 0.0,
                     np.zeros(0, np.int64), np.zeros(0))
