"""faiss as the k-NN backend of exact retrieval: the "filter and refine" scheme.

:class:`FaissBackend` answers exactly what :class:`~cbr.retrieval.brute.BruteForceBackend`
(the definition :func:`cbr.similarity.global_similarity` over all cases) answers, for any
configuration (linear, exponential and exact-match measures, any weights).

What it answers: the k most similar cases (``kneighbors``, and the threshold query's fallback
when no case reaches the threshold) and the listing of every hit of a threshold query
(``retrieve``: explanations, evaluation). The threshold query of play, its triple and its most
similar cases, is the grouped scan's (:mod:`cbr.retrieval.aggregate`), which beats a range
search at every size measured; faiss wins the k-NN from about 100,000 cases on, where the scan
would score every case (``bench/bench_retrieval_engines.py``, figures in ``docs/casebases.md``).

How it stays exact while using faiss:

1. *Bound space.* Each feature is clipped to its domain ``[low, high]``, shifted by
   ``low`` (or mapped by the measure's monotone ``bound_transform``, e.g. rank -> equity)
   and scaled by ``w_i * c_i / sum(w)``, where ``c_i`` is the measure's
   lower-bound slope (see :mod:`cbr.similarity.measures`). The L1 distance of two scaled rows is
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
then id ascending.

Cases appended (``add``) enter the lists lazily: they are in the case rows at once (the
aggregate path, which does not use faiss, sees them), and in the faiss lists and their bounds
before the lists are next searched or saved (:meth:`FaissBackend.pending`), in one batch.
"""
from __future__ import annotations

import math
import threading
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from cbr.errors import CaseBaseError, ConfigError, counted
from cbr.retrieval.brute import BruteForceBackend
from cbr.retrieval.persist import write_atomic
from cbr.similarity import StreetSimilarity

__all__ = ["FaissBackend"]


BUILD_BATCH = 1 << 18  # rows scaled and inserted at a time when an index is built


# float32 rounding in the bound space (values in [0, 1], sums of d terms) stays far below this;
# the margin only widens the candidate set, never the answer.
#: Batches of at most this many rows (a retained hand's, per street) take :meth:`FaissBackend._insert_few`.
FEW_ROWS = 8
#: The first bytes of a saved ``IndexIVFFlat`` (faiss's own tag for it).
IVF_FLAT_FOURCC = b"IwFl"


def _margin(d: int) -> float:
    return 1e-5 + 1e-6 * d


class FaissBackend(BruteForceBackend):
    """Exact retrieval with a faiss ``IndexIVFFlat`` (``METRIC_L1``) in the bound space.

    ``n_lists``: number of inverted lists (``"auto"``: about ``2 * sqrt(n)``); ``seed``: of
    the k-means that places them. See the module docstring for the exactness argument.
    """

    name: ClassVar[str] = "faiss"

    def __init__(self, *, similarity: StreetSimilarity, threshold: float = 0.97, fallback_k: int = 20,
                 n_lists: int | str = "auto", seed: int = 1234, min_cases: int = 1) -> None:
        super().__init__(similarity=similarity, threshold=threshold, fallback_k=fallback_k, min_cases=min_cases)
        self.n_lists = n_lists
        self.seed = seed

    def get_params(self) -> dict[str, Any]:
        return {**super().get_params(), "n_lists": self.n_lists, "seed": self.seed}

    def _backend_params(self) -> dict[str, Any]:
        return {"n_lists": self.n_lists, "seed": self.seed}

    # -- bound space ----------------------------------------------------------------------

    def _scale(self, rows: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(self.similarity.bound_rows(rows), dtype=np.float32)

    def _list_count(self, n: int) -> int:
        if self.n_lists == "auto":
            return int(max(1, min(round(2 * math.sqrt(n)), n // 40)))
        if isinstance(self.n_lists, bool) or not isinstance(self.n_lists, (int, np.integer)) or self.n_lists < 1:
            raise ConfigError(f"n_lists must be 'auto' or a positive integer, got {self.n_lists!r}")
        return int(min(self.n_lists, n))

    def _build(self, rows: np.ndarray) -> None:
        # The k-means is trained on a sample; the rows go to the bound space and into the
        # lists in batches of BUILD_BATCH (the float64 scaling of all rows at once would
        # take several times the cases' memory). Same index whatever the batch size: the
        # list bounds are maxima and minima, faiss appends in id order.
        import faiss

        n, d = rows.shape
        z = self._scale(rows) if n <= BUILD_BATCH else None
        nlist = self._list_count(n)
        if nlist == 1:
            centroids = (z if z is not None else self._scale(rows)).mean(axis=0, keepdims=True).astype(np.float32)
        else:
            rng = np.random.default_rng(self.seed)
            if n <= 64 * nlist:
                sample = z if z is not None else self._scale(rows)
            else:
                sample = self._scale(rows[np.sort(rng.choice(n, 64 * nlist, replace=False))])
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
        self._pending_from = None
        if z is not None:
            self._insert(z, np.arange(n, dtype=np.int64))
            return
        for start in range(0, n, BUILD_BATCH):
            end = min(n, start + BUILD_BATCH)
            self._insert(self._scale(rows[start:end]), np.arange(start, end, dtype=np.int64))

    def _insert(self, z: np.ndarray, ids: np.ndarray) -> None:
        if z.shape[0] <= FEW_ROWS:
            self._insert_few(z, ids)
            return
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
        with _threads(z.shape[0] < 100_000):  # a retained hand's few rows: one thread (a team costs ~10 ms)
            self._index.add_core(z.shape[0], _ptr(z), _ptr(np.ascontiguousarray(ids, dtype=np.int64)),
                                 _ptr(np.ascontiguousarray(assign)))

    def _insert_few(self, z: np.ndarray, ids: np.ndarray) -> None:
        """:meth:`_insert` for a retained hand's few rows: the same lists and bounds (the
        nearest centroid by L2, as the quantizer; any assignment stays exact), without
        grouping arrays or waking faiss's thread team for a one-row search."""
        c = self._centroids
        norms = self.__dict__.get("_centroid_norms")
        if norms is None or norms[0] is not c:
            norms = (c, np.einsum("ij,ij->i", c, c))
            self._centroid_norms = norms
        assign = np.ascontiguousarray((norms[1][:, None] - 2.0 * (c @ z.T)).argmin(axis=0), dtype=np.int64)
        lo, hi = self._lo, self._hi
        for row, a in zip(z, assign.tolist()):
            np.minimum(lo[a], row, out=lo[a])
            np.maximum(hi[a], row, out=hi[a])
            dist = float(np.abs(row.astype(np.float64) - c[a]).sum())
            if dist > self._radius[a]:
                self._radius[a] = dist
            self._sizes[a] += 1
        with _threads(True):
            self._index.add_core(z.shape[0], _ptr(z), _ptr(np.ascontiguousarray(ids, dtype=np.int64)), _ptr(assign))

    def _add(self, rows: np.ndarray, ids: np.ndarray) -> None:
        # deferred: the rows are in the case buffer; the lists take them before their next use
        if ids.shape[0] and self.__dict__.get("_pending_from") is None:
            self._pending_from = int(ids[0])

    @property
    def pending(self) -> int:
        """How many appended cases are not in the faiss lists yet (they enter them before the
        lists are next searched or saved)."""
        start = self.__dict__.get("_pending_from")
        return 0 if start is None else self.n_cases_ - start

    def _flush(self) -> None:
        """Insert the appended cases not yet in the faiss lists (in batches of BUILD_BATCH)."""
        if self.__dict__.get("_pending_from") is None:
            return
        with self.__dict__.setdefault("_flush_lock", threading.Lock()):
            start = self.__dict__.get("_pending_from")
            if start is None:
                return
            end = self.n_cases_
            for a in range(start, end, BUILD_BATCH):
                b = min(end, a + BUILD_BATCH)
                self._insert(self._scale(self._buf[a:b]), np.arange(a, b, dtype=np.int64))
                self._pending_from = b if b < end else None

    def _list_bounds(self, z: np.ndarray) -> np.ndarray:
        """Per query and list a lower bound of the bound-space distance to every member."""
        # box distance: per coordinate max(lo - z, z - hi, 0) (at most one of the two
        # differences is positive, since lo <= hi; empty lists have lo = inf, hi = -inf and
        # get inf); ball: L1 to the centroid minus the covering radius.
        out = np.empty((z.shape[0], self._lo.shape[0]), dtype=np.float32)
        for i, zq in enumerate(z):
            gap = np.subtract(self._lo, zq)
            np.maximum(gap, np.subtract(zq, self._hi), out=gap)
            box = np.maximum(gap, 0, out=gap).sum(axis=1)
            ball = np.abs(np.subtract(self._centroids, zq, out=gap), out=gap).sum(axis=1) - self._radius
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
        # one faiss call per distinct radius (threshold mode: one call for the whole batch);
        # sorted(set()) rather than np.unique, which imports numpy.ma (~10 ms of a cold query)
        for r in sorted(set(radius.tolist())):
            rows = np.nonzero(radius == r)[0]
            sub_keys = np.ascontiguousarray(keys[rows])
            sub_z = np.ascontiguousarray(z[rows])
            coarse = np.zeros(sub_keys.shape, dtype=np.float32)
            res = faiss.RangeSearchResult(len(rows))
            with _threads(len(rows) < 16):
                self._index.range_search_preassigned_c(len(rows), _ptr(sub_z), float(r), _ptr(sub_keys),
                                                       _ptr(coarse), res, False, _probe(width))
            lims = faiss.rev_swig_ptr(res.lims, len(rows) + 1).copy()
            labels = faiss.rev_swig_ptr(res.labels, int(lims[-1])).copy() if lims[-1] else np.zeros(0, np.int64)
            for j, i in enumerate(rows):
                results[i] = labels[lims[j]: lims[j + 1]]
        return results  # type: ignore[return-value]  # unsorted: hits are sorted after filtering

    def _candidates(self, Q: np.ndarray, radius: np.ndarray) -> list[np.ndarray | None]:
        """Per query the ids faiss finds within ``radius + margin`` in bound space, in list
        order (not sorted: only the hits are sorted, after exact scoring)."""
        self._flush()
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
        self._flush()
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
        coarse = np.zeros(keys.shape, dtype=np.float32)
        dist = np.empty((Q.shape[0], want), dtype=np.float32)
        labels = np.empty((Q.shape[0], want), dtype=np.int64)
        with _threads(Q.shape[0] < 16):
            self._index.search_preassigned_c(Q.shape[0], _ptr(z), want, _ptr(keys), _ptr(coarse), _ptr(dist),
                                             _ptr(labels), False, _probe(width))
        out: list[np.ndarray | None] = []
        for row in labels:
            ids = row[row >= 0]
            out.append(ids if ids.shape[0] >= k else None)
        return out

    # -- persistence ----------------------------------------------------------------------

    def _save_extra(self, root: Path) -> None:
        import faiss

        self._flush()
        write_atomic(root / "index.faiss", lambda p: faiss.write_index(self._index, str(p)))

        def write_bounds(p: Path) -> None:
            with open(p, "wb") as fh:
                np.savez(fh, centroids=self._centroids, lo=self._lo, hi=self._hi,
                         radius=self._radius, sizes=self._sizes)

        write_atomic(root / "lists.npz", write_bounds)

    def _load_extra(self, root: Path, meta: dict[str, Any]) -> None:
        # The list bounds now; ``index.faiss`` only when faiss is first needed (a query the
        # aggregate layout answers never needs it, and importing faiss and reading the
        # index is most of a one-shot ``cbr query``'s index time). Its header is checked now,
        # and the file stays open: a generation retired and deleted meanwhile is still read.
        fh = None
        try:
            with np.load(root / "lists.npz") as data:
                self._centroids = data["centroids"]
                self._lo, self._hi = data["lo"], data["hi"]
                self._radius, self._sizes = data["radius"], data["sizes"]
            fh = open(root / "index.faiss", "rb")
            head = fh.read(16)
        except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            if fh is not None:
                fh.close()
            raise CaseBaseError(f"index {root}: cannot read the faiss index ({exc})") from None
        if len(head) < 16 or head[:4] != IVF_FLAT_FOURCC:
            fh.close()
            raise CaseBaseError(f"index {root}: index.faiss does not hold a faiss IndexIVFFlat")
        d, ntotal = int.from_bytes(head[4:8], "little"), int.from_bytes(head[8:16], "little")
        if ntotal != self.n_cases_ or int(self._sizes.sum()) != self.n_cases_ or d != self.n_features_in_:
            fh.close()
            raise CaseBaseError(f"index {root}: faiss index holds {counted(ntotal, 'case')} of {counted(d, 'feature')}, cases.npy "
                                f"{self.n_cases_:,} of {self.n_features_in_}; rebuild the index")
        self.__dict__["_faiss_file"] = (root / "index.faiss", fh, ntotal)
        self.__dict__.pop("_faiss", None)
        if self.memory_mapped:  # mapped from its path: read (map) it now
            self.__dict__["_faiss"] = self._read_faiss(root / "index.faiss", fh, ntotal)

    @property
    def _index(self) -> Any:
        """The faiss ``IndexIVFFlat``: built, or read from the saved file on first use."""
        index = self.__dict__.get("_faiss")
        if index is None:
            with self.__dict__.setdefault("_faiss_lock", threading.Lock()):
                index = self.__dict__.get("_faiss")
                if index is None:
                    index = self._read_faiss(*self.__dict__["_faiss_file"])
                    self.__dict__["_faiss"] = index
        return index

    @_index.setter
    def _index(self, index: Any) -> None:
        self.__dict__["_faiss"] = index

    def _read_faiss(self, path: Path, fh: Any, ntotal: int) -> Any:
        import faiss

        try:
            if self.memory_mapped:  # the inverted lists stay in the file (the page cache), read on demand
                index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
            else:  # from the file opened with the index (it may have been deleted since)
                fh.seek(0)
                index = faiss.read_index(faiss.PyCallbackIOReader(fh.read))
        except (OSError, RuntimeError) as exc:
            raise CaseBaseError(f"index {path.parent}: cannot read the faiss index ({exc})") from None
        finally:
            fh.close()
        if not isinstance(index, faiss.IndexIVFFlat) or index.ntotal != ntotal:
            raise CaseBaseError(f"index {path.parent}: index.faiss no longer holds the {counted(ntotal, 'case')} "
                                "it held when the index was opened; rebuild the index")
        return index


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


def _probe(width: int) -> Any:
    """Per-call search parameters probing ``width`` preassigned lists: the shared index's
    ``nprobe`` is never set, so concurrent queries cannot change each other's probe count."""
    import faiss

    params = faiss.SearchParametersIVF()
    params.nprobe = int(width)
    return params


def _ptr(a: np.ndarray) -> Any:
    import faiss

    return faiss.swig_ptr(a)
