"""Imperfect-recall buckets from hand-strength distributions (Johanson et al. 2013).

Pre-flop: the 169 lossless classes. Flop and turn: a holding is described by the
histogram of its *river* hand strength (HS against one random holding once the board is
complete, ties half) over every runout; histograms are clustered by k-means under the
earth mover's distance. In one dimension that distance is the L1 distance between
cumulative histograms, and the L1 centre of a cluster is its coordinate-wise median, so
the clustering here is k-medians on cumulative histograms (seeded the k-means++ way).
River: percentile buckets of river HS, or OCHS buckets (opponent-cluster hand strength,
Johanson, Burch, Valenzano and Bowling 2013): the 169 pre-flop classes are grouped into K
opponent clusters by their river-HS distributions, a river holding is described by its HS
against each cluster (K numbers), and those vectors are clustered by k-means into the
river's buckets (:func:`fit_ochs_river`). Each street's bucket depends on that street's
cards only (imperfect recall), so a street can have hundreds of buckets.

Tables: every flop (1,755 up to a permutation of suits) and every turn board (16,432)
gets its holdings' buckets once, in C (:mod:`evaluator_ext._mccfr`, both cores), stored
per canonical board; a lookup maps the real board to its canonical form and the hole
cards through the same suit permutation. River buckets are computed at once (990
showdowns).

>>> a = DistributionAbstraction.load(SHIPPED_ABSTRACTION)      # doctest: +SKIP
>>> a.buckets((51, 47), (0, 5, 17, 30, 44))                   # doctest: +SKIP
(0, 211, 190, 247)
"""
from __future__ import annotations

import itertools
import json
import math
import os
import time
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from cbr.errors import ConfigError, counted
from cbr.store.durable import atomic_savez

__all__ = ["DistributionAbstraction", "CanonicalBoards", "canonical_boards", "PREFLOP_CLASS", "river_hs",
           "board_histograms", "k_medians_l1", "ABSTRACTION_FORMAT", "native_module", "NO_BUCKET", "river_ochs",
           "opponent_clusters", "k_means_l2", "fit_ochs_river", "OCHSRiver"]

ABSTRACTION_FORMAT = 1
N_COMBOS = 1326
#: The bucket of a holding that shares a card with the board (as in the C tables).
NO_BUCKET = 65535
_PERMS = np.array(list(itertools.permutations(range(4))), dtype=np.int64)  # 24 suit permutations


def native_module() -> Any:
    """The C extension ``evaluator_ext._mccfr``, or a :class:`ConfigError` saying it is not
    built (it has no pure-Python fallback)."""
    try:
        from evaluator_ext import _mccfr
    except ImportError:
        from evaluator_ext import build_hint

        raise ConfigError("the MCCFR extension evaluator_ext._mccfr is not built (it has no pure-Python "
                          f"fallback): {build_hint()}") from None
    return _mccfr


def _combo(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    hi, lo = np.maximum(a, b), np.minimum(a, b)
    return hi * (hi - 1) // 2 + lo


_HI = np.array([h for h in range(1, 52) for _ in range(h)], dtype=np.int64)
_LO = np.array([lo for h in range(1, 52) for lo in range(h)], dtype=np.int64)


def _permute(cards: np.ndarray, perm: np.ndarray) -> np.ndarray:
    return (cards // 4) * 4 + perm[cards % 4]


#: ``_PERM_COMBO[p, c]``: the combo ``c`` with its suits permuted by ``_PERMS[p]``.
_PERM_COMBO = np.stack([_combo(_permute(_LO, p), _permute(_HI, p)) for p in _PERMS])


def _preflop_classes() -> np.ndarray:
    from evaluator_ext import PREFLOP_CLASSES, class_combos, combo_index

    out = np.full(N_COMBOS, 255, dtype=np.uint8)
    for i, name in enumerate(PREFLOP_CLASSES):
        for a, b in class_combos(name):
            out[combo_index(a, b)] = i
    return out


#: The pre-flop class 0..168 (:data:`evaluator_ext.PREFLOP_CLASSES` order) of each combo.
PREFLOP_CLASS = _preflop_classes()


_CHOOSE = np.array([[math.comb(c, k) for c in range(52)] for k in range(6)], dtype=np.int64)


def _colex(sorted_cards: np.ndarray) -> np.ndarray:
    """Colex index of rows of ascending cards."""
    out = np.zeros(sorted_cards.shape[0], dtype=np.int64)
    for i in range(sorted_cards.shape[1]):
        out += _CHOOSE[i + 1][sorted_cards[:, i]]
    return out


@dataclass(frozen=True)
class CanonicalBoards:
    """The boards of ``n`` cards up to a permutation of suits.

    ``boards``: one ascending row per canonical board (the least colex index of its suit
    permutations); ``canon[raw]``/``perm[raw]``: for the raw board of colex index ``raw``,
    its canonical board's row and the suit permutation (index into the 24) that maps it there.
    """

    n: int
    boards: np.ndarray
    canon: np.ndarray
    perm: np.ndarray

    def lookup(self, board: Sequence[int]) -> tuple[int, int]:
        """(canonical row, permutation) of a real board."""
        cards = np.sort(np.asarray(board, dtype=np.int64))[None, :]
        raw = int(_colex(cards)[0])
        return int(self.canon[raw]), int(self.perm[raw])


_CANONICAL: dict[int, CanonicalBoards] = {}


def canonical_boards(n: int) -> CanonicalBoards:
    """:class:`CanonicalBoards` of ``n`` = 3 (1,755) or 4 (16,432) cards (cached).

    >>> canonical_boards(3).boards.shape
    (1755, 3)
    """
    if n not in (3, 4):
        raise ConfigError(f"canonical boards of 3 or 4 cards, not {n}")
    if n not in _CANONICAL:
        raw = np.array(list(itertools.combinations(range(52), n)), dtype=np.int64)
        raw_index = _colex(raw)
        order = np.argsort(raw_index)
        raw = raw[order]  # row i has colex index i
        best = np.full(raw.shape[0], np.iinfo(np.int64).max)
        best_perm = np.zeros(raw.shape[0], dtype=np.uint8)
        for p, perm in enumerate(_PERMS):
            idx = _colex(np.sort(_permute(raw, perm), axis=1))
            better = idx < best
            best[better] = idx[better]
            best_perm[better] = p
        uniq, canon = np.unique(best, return_inverse=True)
        _CANONICAL[n] = CanonicalBoards(n, raw[uniq], canon.astype(np.int32), best_perm)
    return _CANONICAL[n]


def river_hs(board: Sequence[int]) -> np.ndarray:
    """River HS of every combo on a complete board (-1 where a combo shares a card).

    >>> hs = river_hs((0, 5, 17, 30, 44))
    >>> int((hs >= 0).sum()), round(float(hs[hs >= 0].mean()), 3)
    (1081, 0.5)
    """
    out = np.empty(N_COMBOS)
    native_module().river_hs(bytes(int(c) for c in board), out)
    return out


def river_ochs(board: Sequence[int], clusters: np.ndarray, k: int) -> np.ndarray:
    """OCHS of every combo on a complete board: a (1326, k) array of its river HS against
    the opponent holdings of each cluster (``clusters[combo]`` in 0..k-1; card removal exact,
    ties half; a cluster the cards leave empty takes the plain river HS); rows of -1 where a
    combo shares a card with the board. One sort and sweep in C, as :func:`river_hs`.

    >>> one = np.zeros(N_COMBOS, dtype=np.uint8)                 # one cluster: plain river HS
    >>> bool(np.array_equal(river_ochs((0, 5, 17, 30, 44), one, 1)[:, 0], river_hs((0, 5, 17, 30, 44))))
    True
    """
    out = np.empty(N_COMBOS * k)
    native_module().river_ochs(bytes(int(c) for c in board), np.ascontiguousarray(clusters, dtype=np.uint8), int(k),
                               out)
    return out.reshape(N_COMBOS, k)


def board_histograms(board: Sequence[int], n_bins: int) -> np.ndarray:
    """River-HS histograms (1326 x n_bins runout counts) of every combo on a flop or turn."""
    out = np.empty(N_COMBOS * n_bins, dtype=np.uint16)
    native_module().board_histograms(bytes(int(c) for c in board), int(n_bins), out)
    return out.reshape(N_COMBOS, n_bins)


def _cdf(hist: np.ndarray) -> np.ndarray:
    c = np.cumsum(hist, axis=1, dtype=np.float32)
    return np.ascontiguousarray(c / c[:, -1:])


def _assign(points: np.ndarray, centroids: np.ndarray, workers: int = 2) -> tuple[np.ndarray, np.ndarray]:
    n, d = points.shape
    out = np.empty(n, dtype=np.int32)
    dist = np.empty(n, dtype=np.float32)
    cent = np.ascontiguousarray(centroids, dtype=np.float32)
    parts = np.array_split(np.arange(n), max(1, workers))

    def one(ix: np.ndarray) -> None:
        if len(ix):
            o, dd = np.empty(len(ix), np.int32), np.empty(len(ix), np.float32)
            native_module().assign_l1(np.ascontiguousarray(points[ix]), cent, d, o, dd)
            out[ix], dist[ix] = o, dd

    with ThreadPoolExecutor(len(parts)) as pool:
        list(pool.map(one, parts))
    return out, dist


def k_medians_l1(points: np.ndarray, k: int, *, iterations: int = 12, seed: int = 0) -> np.ndarray:
    """k centres of ``points`` (rows) under L1: k-means++-style seeding by L1 distance,
    then alternating nearest-centre assignment and coordinate-wise medians.

    >>> pts = np.array([[0, 0], [0, 1], [10, 10], [10, 11]], dtype=np.float32)
    >>> sorted(k_medians_l1(pts, 2, seed=1)[:, 0].tolist())
    [0.0, 10.0]
    """
    points = np.ascontiguousarray(points, dtype=np.float32)
    n = points.shape[0]
    if not 1 <= k <= n:
        raise ConfigError(f"k-medians needs 1 <= k <= {counted(n, 'point')}, got k={k}")
    rng = np.random.default_rng(seed)
    centres = [points[rng.integers(n)]]
    dist = np.abs(points - centres[0]).sum(axis=1)
    for _ in range(1, k):
        total = float(dist.sum())
        i = int(rng.choice(n, p=dist / total)) if total > 0 else int(rng.integers(n))
        centres.append(points[i])
        dist = np.minimum(dist, np.abs(points - points[i]).sum(axis=1))
    cent = np.array(centres, dtype=np.float32)
    for _ in range(iterations):
        labels, _ = _assign(points, cent)
        order = np.argsort(labels, kind="stable")
        bounds = np.searchsorted(labels[order], np.arange(k + 1))
        for c in range(k):
            members = points[order[bounds[c]:bounds[c + 1]]]
            if len(members):
                cent[c] = np.median(members, axis=0)
    return cent


def opponent_clusters(k: int = 8, *, boards: int = 2000, n_bins: int = 30, seed: int = 0) -> np.ndarray:
    """The 169 pre-flop classes in ``k`` opponent clusters (a uint8 per class, 0 = the
    weakest cluster by mean river HS): each class's histogram of river HS over ``boards``
    random complete boards (every combo of the class the board leaves), clustered by
    k-means under the earth mover's distance (:func:`k_medians_l1` on cumulative histograms).

    >>> from evaluator_ext import PREFLOP_CLASSES
    >>> c = opponent_clusters(8, boards=200)
    >>> int(c[PREFLOP_CLASSES.index("AA")]), int(c[PREFLOP_CLASSES.index("32o")]), len(set(c.tolist()))
    (7, 0, 8)
    """
    if not 1 <= k <= 64:
        raise ConfigError(f"OCHS needs 1 to 64 opponent clusters, got {k}")
    rng = np.random.default_rng(seed)
    hist = np.zeros((169, n_bins))
    hs_sum = np.zeros(169)
    for _ in range(boards):
        hs = river_hs(rng.choice(52, 5, replace=False))
        ok = hs >= 0
        cls = PREFLOP_CLASS[ok].astype(np.int64)
        np.add.at(hist, (cls, np.minimum((hs[ok] * n_bins).astype(np.int64), n_bins - 1)), 1.0)
        np.add.at(hs_sum, cls, hs[ok])
    centres = k_medians_l1(_cdf(hist), k, seed=seed)
    labels, _ = _assign(_cdf(hist), centres, workers=1)
    strength = np.array([hs_sum[labels == j].sum() / max(1.0, hist[labels == j].sum()) for j in range(k)])
    rank = np.empty(k, dtype=np.int64)
    rank[np.argsort(strength, kind="stable")] = np.arange(k)
    return rank[labels].astype(np.uint8)


def k_means_l2(points: np.ndarray, k: int, *, iterations: int = 20, seed: int = 0) -> np.ndarray:
    """k centres of ``points`` (rows, float64) by k-means: k-means++ seeding, then Lloyd's
    iterations (a centre left without points keeps its place).

    >>> pts = np.array([[0, 0], [0, 1], [10, 10], [10, 11]], dtype=np.float64)
    >>> sorted(k_means_l2(pts, 2, seed=1)[:, 1].tolist())
    [0.5, 10.5]
    """
    points = np.ascontiguousarray(points, dtype=np.float64)
    n = points.shape[0]
    if not 1 <= k <= n:
        raise ConfigError(f"k-means needs 1 <= k <= {counted(n, 'point')}, got k={k}")
    rng = np.random.default_rng(seed)
    cent = np.empty((k, points.shape[1]))
    cent[0] = points[rng.integers(n)]
    dist = ((points - cent[0]) ** 2).sum(axis=1)
    for c in range(1, k):
        total = float(dist.sum())
        i = int(rng.choice(n, p=dist / total)) if total > 0 else int(rng.integers(n))
        cent[c] = points[i]
        dist = np.minimum(dist, ((points - cent[c]) ** 2).sum(axis=1))
    for _ in range(iterations):
        labels = _nearest_l2(points, cent)
        sums = np.zeros_like(cent)
        np.add.at(sums, labels, points)
        counts = np.bincount(labels, minlength=k)
        moved = counts > 0
        cent[moved] = sums[moved] / counts[moved, None]
    return cent


def _nearest_l2(points: np.ndarray, cent: np.ndarray, chunk: int = 20_000) -> np.ndarray:
    out = np.empty(points.shape[0], dtype=np.int64)
    c2 = (cent ** 2).sum(axis=1)
    for start in range(0, points.shape[0], chunk):
        p = points[start: start + chunk]
        out[start: start + chunk] = np.argmin(c2[None, :] - 2.0 * p @ cent.T, axis=1)
    return out


@dataclass(frozen=True)
class OCHSRiver:
    """An OCHS river: ``clusters`` (the opponent cluster of each of the 169 pre-flop classes)
    and ``centroids`` (buckets x clusters, ordered by strength: the combos' share of each
    cluster weighs its equities, so bucket 0 is the weakest, as with percentiles)."""

    clusters: np.ndarray
    centroids: np.ndarray

    @property
    def k(self) -> int:
        return int(self.centroids.shape[1])

    def combo_clusters(self) -> np.ndarray:
        """The cluster of each of the 1326 combos (as an opponent holding)."""
        return np.ascontiguousarray(self.clusters[PREFLOP_CLASS], dtype=np.uint8)

    def buckets(self, board: Sequence[int]) -> np.ndarray:
        """The river bucket of every combo on a complete board (:data:`NO_BUCKET` where it
        shares a card): its OCHS vector's nearest centroid, in C (the solver's walk uses the
        same code)."""
        out = np.empty(N_COMBOS, dtype=np.uint16)
        native_module().river_ochs_buckets(bytes(int(c) for c in board), self.combo_clusters(), self.k,
                                           np.ascontiguousarray(self.centroids, dtype=np.float64).ravel(), out)
        return out


def fit_ochs_river(n_buckets: int = 256, k: int = 8, *, fit_boards: int = 400, fit_points: int = 100_000,
                   seed: int = 0, cluster_boards: int = 2000) -> OCHSRiver:
    """Fit an OCHS river: :func:`opponent_clusters` (``k`` of them, ``cluster_boards`` boards),
    then k-means (:func:`k_means_l2`) of ``fit_points`` OCHS vectors of the holdings on
    ``fit_boards`` random river boards into ``n_buckets`` centroids, ordered by strength.

    >>> r = fit_ochs_river(16, 4, fit_boards=20, cluster_boards=100)
    >>> r.centroids.shape, bool(np.all(np.diff(r.centroids @ np.bincount(r.combo_clusters(), minlength=4)) >= 0))
    ((16, 4), True)
    """
    if not 1 <= n_buckets <= 65534:
        raise ConfigError(f"river buckets must be 1..65534, got {n_buckets}")
    clusters = opponent_clusters(k, boards=cluster_boards, seed=seed)
    per_combo = clusters[PREFLOP_CLASS].astype(np.uint8)
    rng = np.random.default_rng(seed + 5)
    pts = []
    for _ in range(fit_boards):
        x = river_ochs(rng.choice(52, 5, replace=False), per_combo, k)
        pts.append(x[x[:, 0] >= 0])
    allp = np.concatenate(pts)
    take = rng.choice(len(allp), min(fit_points, len(allp)), replace=False)
    cent = k_means_l2(allp[take], n_buckets, seed=seed + 5)
    share = np.bincount(per_combo, minlength=k).astype(np.float64)
    order = np.argsort(cent @ share, kind="stable")
    return OCHSRiver(clusters.astype(np.uint8), np.ascontiguousarray(cent[order]))


@dataclass
class DistributionAbstraction:
    """169 pre-flop classes, k-medians buckets of river-HS distributions on the flop and
    turn, river-HS percentiles (or, with ``ochs``, OCHS buckets) on the river (see the
    module docstring).

    ``flop_table[row, combo]`` / ``turn_table[row, combo]``: the bucket of a combo on a
    canonical board (:func:`canonical_boards` rows); :data:`NO_BUCKET` where the combo clashes.
    ``river_edges`` is empty for an OCHS river.
    """

    n_buckets: tuple[int, int, int, int]
    n_bins: int
    flop_centroids: np.ndarray
    turn_centroids: np.ndarray
    river_edges: np.ndarray
    flop_table: np.ndarray
    turn_table: np.ndarray
    meta: dict
    ochs: Optional[OCHSRiver] = None

    @property
    def name(self) -> str:
        base = "emd_{}_{}_{}_{}".format(*self.n_buckets)
        return base if self.ochs is None else f"{base}_ochs{self.ochs.k}"

    def with_ochs_river(self, river: OCHSRiver) -> "DistributionAbstraction":
        """This abstraction with ``river`` in place of its river buckets (the same pre-flop,
        flop and turn buckets; the river's bucket count becomes the centroids')."""
        meta = {**self.meta, "river": {"method": "OCHS", "clusters": river.k, "buckets": int(river.centroids.shape[0])}}
        nb = (*self.n_buckets[:3], int(river.centroids.shape[0]))
        return DistributionAbstraction(nb, self.n_bins, self.flop_centroids, self.turn_centroids, np.zeros(0),  # type: ignore[arg-type]
                                       self.flop_table, self.turn_table, meta, river)

    # -- building ---------------------------------------------------------------
    @classmethod
    def build(cls, flop: int = 256, turn: int = 256, river: int = 256, *, n_bins: int = 30,
              fit_boards: int = 400, fit_points: int = 100_000, seed: int = 0, threads: int = 2,
              ochs_clusters: int = 0,
              progress: Optional[Callable[[str, int, int], None]] = None) -> "DistributionAbstraction":
        """Fit the centres on ``fit_boards`` random boards per street (``fit_points``
        histograms), then bucket every canonical flop and turn (minutes on two cores). With
        ``ochs_clusters`` K > 0 the river is OCHS (:func:`fit_ochs_river`, K clusters) instead
        of percentiles.

        ``progress(stage, done, total)`` is told of every phase as it goes, in this order:
        ``"flop fit"``, ``"turn fit"`` and ``"river fit"`` (boards sampled, of ``fit_boards``),
        then ``"flop buckets"`` and ``"turn buckets"`` (canonical boards bucketed, of 1,755 and
        16,432; from the worker threads, every 200 boards and at the end). A build stopped by an
        exception (a signal) leaves the boards not yet started undone."""
        for s, k in (("flop", flop), ("turn", turn), ("river", river)):
            if not 1 <= k <= 65534:
                raise ConfigError(f"{s} buckets must be 1..65534, got {k}")
        t0 = time.time()
        rng = np.random.default_rng(seed)
        cents = []
        def tell(stage: str, done: int, total: int) -> None:
            if progress is not None:
                progress(stage, done, total)

        for n, k in ((3, flop), (4, turn)):
            pts = []
            for i in range(fit_boards):
                board = rng.choice(52, n, replace=False)
                h = board_histograms(board, n_bins)
                pts.append(_cdf(h[h.sum(axis=1) > 0]))
                tell(("flop fit" if n == 3 else "turn fit"), i + 1, fit_boards)
            allp = np.concatenate(pts)
            take = rng.choice(len(allp), min(fit_points, len(allp)), replace=False)
            cents.append(k_medians_l1(allp[take], k, seed=seed + n))
        # river: HS percentiles over random deals
        samples = []
        for i in range(fit_boards):
            hs = river_hs(rng.choice(52, 5, replace=False))
            samples.append(hs[hs >= 0])
            tell("river fit", i + 1, fit_boards)
        allhs = np.concatenate(samples)
        edges = np.quantile(allhs, np.arange(1, river) / river) if river > 1 else np.zeros(0)
        tables = []
        for n, cent in ((3, cents[0]), (4, cents[1])):
            boards = canonical_boards(n).boards
            table = np.empty((len(boards), N_COMBOS), dtype=np.uint16)
            flat = np.ascontiguousarray(cent, dtype=np.float32).ravel()
            done = [0]

            def one(i: int, table=table, boards=boards, flat=flat, n=n, done=done) -> None:
                native_module().board_buckets(bytes(int(c) for c in boards[i]), n_bins, flat, table[i])
                done[0] += 1
                if done[0] % 200 == 0:
                    tell(("flop buckets" if n == 3 else "turn buckets"), done[0], len(boards))

            pool = ThreadPoolExecutor(threads)
            try:
                list(pool.map(one, range(len(boards))))
            finally:  # stopped (a signal in the main thread): the boards not started are not waited for
                pool.shutdown(wait=True, cancel_futures=True)
            tell(("flop buckets" if n == 3 else "turn buckets"), len(boards), len(boards))
            tables.append(table)
        meta = {"format": ABSTRACTION_FORMAT, "seed": seed, "fit_boards": fit_boards, "fit_points": fit_points,
                "n_bins": n_bins, "build_seconds": round(time.time() - t0, 1),
                "method": "k-medians (EMD = L1 on cumulative river-HS histograms), flop and turn; "
                          "river HS percentiles; 169 pre-flop classes"}
        built = cls((169, flop, turn, river), n_bins, cents[0], cents[1], np.asarray(edges, dtype=np.float64),
                    tables[0], tables[1], meta)
        if ochs_clusters:
            return built.with_ochs_river(fit_ochs_river(river, ochs_clusters, fit_boards=fit_boards,
                                                        fit_points=fit_points, seed=seed))
        return built

    # -- files --------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Write ``abstraction.npz`` (compressed, atomic) into the folder ``path``."""
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        out = folder / "abstraction.npz"
        river = {} if self.ochs is None else {"ochs_clusters": self.ochs.clusters, "ochs_centroids": self.ochs.centroids}
        atomic_savez(out, compress=True, n_buckets=np.array(self.n_buckets), n_bins=np.array(self.n_bins),
                     flop_centroids=self.flop_centroids, turn_centroids=self.turn_centroids,
                     river_edges=self.river_edges, flop_table=self.flop_table, turn_table=self.turn_table,
                     meta=np.array(json.dumps(self.meta)), **river)
        return out

    @classmethod
    def load(cls, path: str | os.PathLike) -> "DistributionAbstraction":
        p = Path(path)
        f = p / "abstraction.npz" if p.is_dir() else p
        if not f.exists():
            raise ConfigError(f"{f}: no abstraction here (build one with `python -m casebases.build_cfr_emd`)")
        try:
            with np.load(f, allow_pickle=False) as z:
                meta = json.loads(str(z["meta"]))
                ochs = OCHSRiver(np.array(z["ochs_clusters"], dtype=np.uint8),
                                 np.array(z["ochs_centroids"], dtype=np.float64)) if "ochs_clusters" in z else None
                a = cls(tuple(int(x) for x in z["n_buckets"]), int(z["n_bins"]), z["flop_centroids"],
                        z["turn_centroids"], z["river_edges"], z["flop_table"], z["turn_table"], meta, ochs)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise ConfigError(f"{f}: not a readable abstraction ({exc})") from None
        if meta.get("format") != ABSTRACTION_FORMAT:
            raise ConfigError(f"{f}: abstraction format {meta.get('format')}, this engine reads {ABSTRACTION_FORMAT}")
        if a.flop_table.shape != (1755, N_COMBOS) or a.turn_table.shape != (16432, N_COMBOS):
            raise ConfigError(f"{f}: the bucket tables have the wrong shape")
        if a.ochs is not None and (a.ochs.clusters.shape != (169,) or a.ochs.centroids.ndim != 2
                                   or a.ochs.centroids.shape[0] != a.n_buckets[3]
                                   or not 1 <= a.ochs.k <= 64 or int(a.ochs.clusters.max()) >= a.ochs.k):
            raise ConfigError(f"{f}: the OCHS river's clusters or centroids have the wrong shape")
        return a

    # -- lookups --------------------------------------------------------------------
    def street_buckets(self, board: Sequence[int]) -> np.ndarray:
        """The current street's bucket of every combo on ``board`` (0, 3, 4 or 5 cards);
        :data:`NO_BUCKET` where a combo shares a card with the board."""
        n = len(board)
        if n == 0:
            return PREFLOP_CLASS.astype(np.uint16)
        if n in (3, 4):
            cb = canonical_boards(n)
            row, p = cb.lookup(board)
            table = self.flop_table if n == 3 else self.turn_table
            return table[row][_PERM_COMBO[p]]
        if n == 5:
            if self.ochs is not None:
                return self.ochs.buckets(board)
            hs = river_hs(board)
            out = np.searchsorted(self.river_edges, hs, side="right").astype(np.uint16)
            out[hs < 0] = NO_BUCKET
            return out
        raise ConfigError(f"a board has 0, 3, 4 or 5 cards, not {n}")

    def holding_buckets(self, board: Sequence[int], holes: Sequence[Sequence[int]],
                        street_buckets: Optional[np.ndarray] = None) -> np.ndarray:
        """The current street's bucket of each holding (rows of two cards) on ``board``,
        :data:`NO_BUCKET` for a holding that shares a card with it; ``street_buckets``: this
        board's :meth:`street_buckets`, when the caller keeps them.

        Raises :class:`ConfigError` for a holding that is not two distinct cards 0..51.
        """
        h = np.asarray(holes, dtype=np.int64).reshape(-1, 2)
        if ((h < 0) | (h > 51)).any() or (h[:, 0] == h[:, 1]).any():
            raise ConfigError("a holding is two distinct cards 0..51")
        table = self.street_buckets(board) if street_buckets is None else street_buckets
        return table[_combo(h[:, 0], h[:, 1])]

    def buckets(self, hole: Sequence[int], board: Sequence[int]) -> tuple[int, ...]:
        """The bucket of every street so far (one per street: pre-flop, flop, ...)."""
        out = []
        for n in (0, 3, 4, 5)[: {0: 1, 3: 2, 4: 3, 5: 4}[len(board)]]:
            b = int(self.holding_buckets(board[:n], [hole])[0])
            if b == NO_BUCKET:
                raise ConfigError(f"hole {tuple(hole)} shares a card with board {tuple(board)}")
            out.append(b)
        return tuple(out)

    def raw_tables(self) -> tuple:
        """The solver's tables: ((169, b1, b2, b3), pre-flop classes, flop and turn buckets
        by raw colex board index (22,100 and 270,725 rows), river edges, and for an OCHS
        river each combo's opponent cluster and the centroids); computed once per object
        (about 1 GB)."""
        cached = self.__dict__.get("_raw_tables")
        if cached is not None:
            return cached
        expanded = []
        for n, table in ((3, self.flop_table), (4, self.turn_table)):
            cb = canonical_boards(n)
            raw = np.empty((len(cb.canon), N_COMBOS), dtype=np.uint16)
            for start in range(0, len(cb.canon), 20_000):  # in slices: the index arrays are int64
                sl = slice(start, start + 20_000)
                raw[sl] = table[cb.canon[sl, None], _PERM_COMBO[cb.perm[sl]]]
            expanded.append(raw.ravel())
        raw = (tuple(int(x) for x in self.n_buckets), PREFLOP_CLASS, expanded[0], expanded[1],
               np.ascontiguousarray(self.river_edges, dtype=np.float64))
        if self.ochs is not None:  # the walk buckets the river as OCHSRiver.buckets does
            raw = (*raw, self.ochs.combo_clusters(), np.ascontiguousarray(self.ochs.centroids, dtype=np.float64).ravel())
        self.__dict__["_raw_tables"] = raw
        return raw
