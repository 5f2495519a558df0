"""Case-base maintenance: condensing a case base, its competence, and two case bases compared.

Every figure here rests on the *vote* of a case base at a feature row: the triple its
retrieval answers there (:func:`~cbr.retrieval.triple.aggregate_votes`, the bot's own path:
every case at or above the threshold, else the ``fallback_k`` most similar). The *triple of a
case* is the vote of the whole base at the case's row.

**Competence** (Smyth & Keane 1995). A case ``j`` *solves* a case ``i`` when ``j`` is among
``i``'s ``k`` nearest cases and their triples agree within a total-variation distance ``eps``
(``TV(p, q) = sum |p - q| / 2``); every case solves itself. The *coverage set* of ``j`` is the
cases it solves, the *reachability set* of ``i`` the cases that solve it; a case only itself
reaches is *pivotal* (removing it loses what it answers).

**Condensing** (:func:`condense`) keeps a subset of the cases, unchanged (their rows, actions,
outcomes and provenance). The vote counts cases (a case carries no count or weight in schema 4),
so a subset keeps a vote only when it keeps the local mix of actions: the methods differ in
how they choose the cases kept.

- ``footprint`` (Smyth & McKenna's footprint, Zhu & Yang's greedy cover): over the street's
  distinct rows (the k nearest found by :func:`bound_neighbours`, in the index's bound space),
  greedily pick the row that solves the most cases not yet solved until every case is; each
  case joins the group of the first picked row that solves it. Then a seeded
  systematic sample of ``keep`` of the cases of each (group, action): the footprint's groups are
  neighbourhoods with one triple, and the sample keeps each one's action mix. A case whose
  window (the cases its vote counts) is sparse is kept with a larger share, so a window keeps
  about ``floor`` cases at least (:func:`keep_shares`), each game (the cases' ``game``: a
  9-player log beside heads-up ones) paying its floors from its own ``keep``. The floor pays
  off where windows are dense (the heads-up expert base) and costs coverage where many are
  sparse (the default base, with its 9-player log): each street keeps the floored sample only
  where it covers more of the street's cases than the flat share (``keep`` of each group and
  action), and the report says which (``floor_per_street``).
- ``sample``: the same systematic sample with one group per street (stratified by action only):
  the control.
- ``merge``: one case per distinct (row, action), the lowest id. Lossless only for a weighted
  vote, which the store cannot carry: the report's coverage says what it costs.

The report's *coverage* of a street is the share of its cases the condensed base still solves:
whose row gets a vote from the condensed base within ``eps`` of the full base's.

>>> import tempfile, numpy as np
>>> from cbr.store.writer import CaseBaseWriter
>>> root = tempfile.mkdtemp()
>>> rng = np.random.default_rng(0)
>>> X = np.tile(np.array([2, 1, 2, 0, 0, 1, 0.25, 0.5, 0.1, 0.1, 5, 1], np.float32), (400, 1))
>>> X[:, 7] = rng.integers(0, 20, 400) / 20
>>> with CaseBaseWriter(f"{root}/full") as w:
...     ids = w.add_rows("flop", X, ["r" if x > 0.5 else "c" for x in X[:, 7]], source="demo")
>>> report = condense(f"{root}/full", f"{root}/small", method="footprint", keep=0.1)
>>> report.kept, report.removed, report.coverage["flop"], report.floor_per_street["flop"]  # the flat share covers more
(40, 360, 1.0, 0)
"""
from __future__ import annotations

import heapq
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from cbr.errors import CaseBaseError, CBRError, counted
from cbr.game.gamedef import STREETS

__all__ = ["METHODS", "CondenseReport", "condense", "tv_distance", "street_votes", "solvers",
           "greedy_footprint", "bound_neighbours", "systematic_keep", "keep_shares", "CompetenceReport", "competence", "DiffReport", "diff", "holdout_rows"]

#: The condensing methods (see the module docstring).
METHODS = ("footprint", "sample", "merge")


def tv_distance(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Total-variation distance of triples, row by row: ``sum |p - q| / 2``.

    >>> tv_distance(np.array([[0.2, 0.5, 0.3]]), np.array([[0.0, 0.5, 0.5]])).round(6).tolist()
    [0.2]
    """
    return np.abs(np.asarray(p, np.float64) - np.asarray(q, np.float64)).sum(axis=-1) / 2.0


def street_votes(cb: Any, street: str, rows: np.ndarray, *, hits: bool = False) -> Any:
    """The triples (an ``(n, 3)`` array) the case base ``cb`` votes at the feature ``rows`` of
    ``street``: the bot's vote (its index, every case's action, its weighting). ``hits``: also
    return how many cases each vote counted at or above the threshold (0 when it fell back to
    the ``fallback_k`` most similar)."""
    from cbr.retrieval import action_codes
    from cbr.retrieval.aggregate import Labels
    from cbr.retrieval.triple import aggregate_votes

    if not len(rows):
        return (np.zeros((0, 3)), np.zeros(0, np.int64)) if hits else np.zeros((0, 3))
    cases = cb.cases(street)
    labels = Labels(action_codes(cases.actions), cases.outcomes)
    weighted = bool(cb.similarity().weighted_triple)
    votes = aggregate_votes(cb.index(street), np.asarray(rows, np.float32), labels, weighted=weighted, top=1)
    triples = np.array([v.triple for v in votes], np.float64)
    if hits:
        return triples, np.array([0 if v.fallback else len(v) for v in votes], np.int64)
    return triples


def keep_shares(hits: np.ndarray, keep: float, floor: int, strata: Optional[np.ndarray] = None) -> np.ndarray:
    """Each case's share kept so that a street keeps ``keep`` of its cases and a window of
    ``h`` cases (``hits``, 0 = none: the vote fell back) keeps about ``max(floor, r h)`` of
    them: ``min(1, max(r, floor / h))``, ``r`` found by bisection (scaled down when the
    floors alone exceed ``keep``). Dense windows keep a flat share; the few cases of a sparse
    window, whose vote a flat share would leave to far neighbours, are kept more.

    >>> keep_shares(np.array([1000] * 90 + [10] * 10), 0.1, 5).round(3).tolist()[88:92]
    [0.056, 0.056, 0.5, 0.5]

    ``strata`` (one label a case, e.g. its game): each stratum keeps ``keep`` of its own cases,
    its floor paid from its own budget, so a stratum of sparse windows (a 9-player log beside
    heads-up ones) cannot spend the others' budget:

    >>> hits, games = np.array([1000] * 90 + [10] * 10), np.array([2] * 90 + [9] * 10)
    >>> keep_shares(hits, 0.1, 20, games).round(3).tolist()[88:92]
    [0.1, 0.1, 0.1, 0.1]
    """
    if strata is not None:
        labels = np.asarray(strata)
        out = np.empty(len(labels), np.float64)
        for label in np.unique(labels):
            mine = labels == label
            out[mine] = keep_shares(np.asarray(hits)[mine], keep, floor)
        return out
    h = np.asarray(hits, np.float64)
    n = len(h)
    if n == 0 or floor <= 0:
        return np.full(n, keep)
    base = np.where(h > 0, np.minimum(1.0, floor / np.maximum(h, 1.0)), 1.0)
    if base.sum() >= keep * n:
        return base * (keep * n / base.sum())
    lo, hi = 0.0, keep
    for _ in range(60):
        mid = (lo + hi) / 2
        if np.minimum(1.0, np.maximum(base, mid)).sum() > keep * n:
            hi = mid
        else:
            lo = mid
    return np.minimum(1.0, np.maximum(base, lo))


def _votes_of(index: Any, codes: np.ndarray, rows: np.ndarray, weighted: bool) -> np.ndarray:
    from cbr.retrieval.triple import aggregate_votes

    if not len(rows):
        return np.zeros((0, 3))
    votes = aggregate_votes(index, np.asarray(rows, np.float32), codes, weighted=weighted, top=1)
    return np.array([v.triple for v in votes], np.float64)


def solvers(triples: np.ndarray, neighbours: np.ndarray, eps: float) -> np.ndarray:
    """Which neighbours solve each row: ``neighbours[i]`` are row ``i``'s k nearest rows (-1:
    none), and ``out[i, j]`` says whether ``neighbours[i, j]`` solves ``i`` (its triple within
    total variation ``eps`` of ``i``'s).

    >>> t = np.array([[0, 1, 0], [0, 0.9, 0.1], [1, 0, 0]], float)
    >>> solvers(t, np.array([[0, 1], [1, 2], [2, 0]]), 0.1).tolist()
    [[True, True], [True, False], [True, False]]
    """
    nb = np.asarray(neighbours)
    ok = nb >= 0
    tv = tv_distance(triples[np.where(ok, nb, 0)], triples[:, None, :])
    return ok & (tv <= eps + 1e-12)


def greedy_footprint(neighbours: np.ndarray, solves: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The greedy cover: rows picked until every row is solved, each time the one that solves
    the most ``weights`` (cases) not yet solved (ties: the lower row); returns each row's group,
    the first picked row that solves it. Every row solves itself.

    >>> nb = np.array([[0, 1], [1, 0], [2, 1]])
    >>> greedy_footprint(nb, np.ones((3, 2), bool), np.array([1, 5, 1])).tolist()
    [1, 1, 1]
    """
    n = len(neighbours)
    cover: list[list[int]] = [[i] for i in range(n)]  # row -> the rows it solves
    for i in range(n):
        for j, ok in zip(neighbours[i].tolist(), solves[i].tolist()):
            if ok and j != i:
                cover[j].append(i)
    w = np.asarray(weights, np.float64).tolist()
    group = np.full(n, -1, np.int64)
    heap = [(-sum(w[i] for i in cover[j]), j) for j in range(n)]
    heapq.heapify(heap)
    left = n
    while left and heap:
        neg, j = heapq.heappop(heap)
        gain = sum(w[i] for i in cover[j] if group[i] < 0)
        if gain < -neg:  # stale: put it back with its gain now
            if gain > 0:
                heapq.heappush(heap, (-gain, j))
            continue
        for i in cover[j]:
            if group[i] < 0:
                group[i] = j
                left -= 1
    return group


def systematic_keep(groups: np.ndarray, codes: np.ndarray, keep: Any, seed: int) -> np.ndarray:
    """The cases (indices, ascending) a seeded systematic sample of ``keep`` takes from each
    (group, action): in a random order within each, one case every ``1 / keep``, so every
    (group, action) of ``m`` cases gives ``floor`` or ``ceil`` of ``keep * m``, and the street
    ``round(keep * n)`` give or take one. ``keep`` may be each case's own share (an array,
    :func:`keep_shares`): the sample then walks their running sum.

    >>> systematic_keep(np.zeros(10, int), np.array([1] * 5 + [2] * 5), 0.4, 0).size
    4
    """
    n = len(groups)
    if n == 0:
        return np.zeros(0, np.int64)
    rng = np.random.default_rng(seed)
    order = np.lexsort((rng.random(n), codes, groups))
    start = rng.random()
    share = np.broadcast_to(np.asarray(keep, np.float64), (n,))[order]
    after = np.cumsum(share)
    take = np.floor(start + after) > np.floor(start + after - share)
    return np.sort(order[take])


@dataclass
class CondenseReport:
    """What :func:`condense` did: the cases kept and removed (per street), the coverage per
    street (the share of the source's cases the condensed base still solves, see the module
    docstring), the mean total variation between the two votes over those cases, the
    footprint's size per street (distinct rows picked; ``footprint`` only), the floor each
    street kept (``floor_per_street``: ``floor`` or 0, the flat share; ``footprint`` only), seconds."""

    source: str
    path: str
    method: str
    keep: Optional[float]
    k: int
    eps: float
    floor: int = 0
    kept: int = 0
    removed: int = 0
    kept_per_street: dict[str, int] = field(default_factory=dict)
    removed_per_street: dict[str, int] = field(default_factory=dict)
    coverage: dict[str, float] = field(default_factory=dict)
    mean_tv: dict[str, float] = field(default_factory=dict)
    footprint: dict[str, int] = field(default_factory=dict)
    floor_per_street: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "path": self.path, "method": self.method, "keep": self.keep, "k": self.k,
                "eps": self.eps, "kept": self.kept, "removed": self.removed,
                "kept_per_street": self.kept_per_street, "removed_per_street": self.removed_per_street,
                "coverage": self.coverage, "mean_tv": self.mean_tv, "footprint": self.footprint,
                "floor": self.floor, "floor_per_street": self.floor_per_street, "seconds": round(self.seconds, 3), "warnings": list(self.warnings)}


def _distinct(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``X`` and each row's place among them."""
    rows, back = np.unique(X, axis=0, return_inverse=True)
    return rows, back.reshape(-1)


def bound_neighbours(similarity: Any, rows: np.ndarray, k: int, *, seed: int = 0) -> np.ndarray:
    """The ``k`` nearest rows of each row (itself among them), found in the index's *bound
    space* (:meth:`~cbr.similarity.StreetSimilarity.bound_rows`: rows scaled so their L1
    distance is a lower bound of ``1 - similarity``, exact for linear measures) by faiss in one
    batch: exact up to 20,000 rows, over inverted lists (k-means, 8 probed) beyond. It ranks as
    the similarity does on the linear features (hand strength, potentials) and approximately on
    the betting counts, at a small fraction of the cost of the exact k-NN (which re-scores
    every candidate): what the footprint's greedy cover needs, not what a query answers.

    >>> from cbr.similarity import default_casper
    >>> X = np.array([[2, 1, 2, 0, 0, 1, 0.25, h, 0, 0, 5, 1] for h in (0.1, 0.5, 0.12, 0.9)], np.float32)
    >>> bound_neighbours(default_casper().street("river"), X, 2).tolist()
    [[0, 2], [1, 2], [2, 0], [3, 1]]
    """
    import faiss

    z = np.ascontiguousarray(similarity.bound_rows(np.asarray(rows, np.float32)), dtype=np.float32)
    n, d = z.shape
    k = min(k, n)
    if n <= 20_000:
        index = faiss.IndexFlat(d, faiss.METRIC_L1)
    else:
        nlist = int(2 * math.sqrt(n))
        index = faiss.IndexIVFFlat(faiss.IndexFlat(d, faiss.METRIC_L1), d, nlist, faiss.METRIC_L1)
        rng = np.random.default_rng(seed)
        index.train(z[np.sort(rng.choice(n, min(n, 64 * nlist), replace=False))])
        index.nprobe = 8
    index.add(z)
    _, ids = index.search(z, k)
    return np.asarray(ids, np.int64)


def _condensed_tv(config: Any, street: str, X: np.ndarray, codes: np.ndarray, chosen: np.ndarray,
                  rows: np.ndarray, full: np.ndarray) -> np.ndarray:
    """At each of the street's distinct ``rows``, the total variation between the full base's
    vote ``full`` and the vote of the cases ``chosen`` (indices into ``X`` and ``codes``) alone
    (1 where none is kept)."""
    from cbr.store.indexes import new_index

    if not len(chosen):
        return np.ones(len(rows))
    small = _votes_of(new_index(config, street).fit(X[chosen]), codes[chosen], rows, bool(config.weighted_triple))
    return tv_distance(full, small)


def _street_groups(cb: Any, street: str, rows: np.ndarray, weights: np.ndarray, triples: np.ndarray, k: int,
                   eps: float) -> tuple[np.ndarray, int]:
    """Each distinct row's footprint group (the row that solves it) and the footprint's size."""
    nb = bound_neighbours(cb.similarity().street(street), rows, k + 1)
    group = greedy_footprint(nb, solvers(triples, nb, eps), weights)
    return group, int(len(np.unique(group)))


def condense(source: str | os.PathLike[str], out: str | os.PathLike[str], *, method: str = "footprint",
             keep: float = 0.1, k: int = 10, eps: float = 0.1, seed: int = 0, floor: int = 20,
             name: Optional[str] = None,
             progress: Optional[Callable[[str], None]] = None) -> CondenseReport:
    """Condense the case base ``source`` into the new case base ``out`` (see the module
    docstring for ``method``; ``keep``: the share of cases kept by ``footprint`` and ``sample``;
    ``k`` and ``eps``: what solves a case; ``floor``: footprint tries keeping about that many
    cases of each window, more than ``keep`` of the sparse ones, :func:`keep_shares`, and keeps
    it on the streets where it covers more than the flat share; 0: the flat share; 20, the
    default, is CASPER's ``fallback_k``).
    ``progress(street)`` is called as each street is
    done. ``out`` appears only when the whole condensed base is written (built in a temp folder
    and renamed); an existing ``out`` is refused. Raises :class:`CaseBaseError` for a damaged or
    foreign ``source`` and an existing ``out``, :class:`CBRError` for bad parameters."""
    from cbr.retrieval import action_codes
    from cbr.store import CaseBase
    from cbr.store.merge import FeatureColumns
    from cbr.store.writer import CaseBaseWriter

    t0 = time.perf_counter()
    if method not in METHODS:
        raise CBRError(f"unknown condensing method {method!r}; choose one of {', '.join(METHODS)}")
    if not (0.0 < keep <= 1.0) or not math.isfinite(keep):
        raise CBRError(f"keep is a share of the cases, 0 < keep <= 1, got {keep}")
    if k < 1:
        raise CBRError(f"k is at least 1, got {k}")
    if floor < 0:
        raise CBRError(f"floor is a number of cases, at least 0, got {floor}")
    if not (0.0 <= eps <= 1.0):
        raise CBRError(f"eps is a total-variation distance, 0..1, got {eps}")
    if Path(out).exists():
        raise CaseBaseError(f"{out} already exists; give a new name for the condensed case base")
    src = CaseBase.open(source)
    try:
        if Path(out).resolve() == src.path.resolve():
            raise CaseBaseError(f"the output {out} is the case base condensed; write it to a new path")
        m = src.manifest
        config = src.similarity()
        report = CondenseReport(source=str(source), path=str(out), method=method,
                                keep=None if method == "merge" else keep, k=k, eps=eps,
                                floor=floor if method == "footprint" else 0)
        extra = {"built_by": "cbr casebase condense",
                 "condensed_from": {"name": m.name, "path": str(src.path.resolve()), "cases": m.total_cases,
                                    "method": method, "keep": report.keep, "k": k, "eps": eps, "seed": seed,
                                    "floor": floor}}
        with CaseBaseWriter(out, feature_set=FeatureColumns(m.feature_set, m.features), similarity=src.path / m.similarity,
                            name=name, extra=extra) as writer:
            for game in m.games:
                from cbr.game.gamedef import GameDef

                writer.add_game(GameDef.from_dict(game))
            for entry in m.sources:
                if entry.get("sha256"):
                    writer.add_source_entry(entry)
            for s in STREETS:
                n = src.count(s)
                if n == 0:
                    report.kept_per_street[s] = report.removed_per_street[s] = 0
                    continue
                cases = src.cases(s)
                X = np.asarray(cases.features, np.float32)
                codes = action_codes(cases.actions)
                rows, back = _distinct(X)
                w = np.bincount(back, minlength=len(rows))
                full, hits = street_votes(src, s, rows, hits=True)
                if method == "merge":
                    _, first = np.unique(np.column_stack([X, codes.astype(np.float32)]), axis=0, return_index=True)
                    candidates = [(0, np.sort(first))]
                elif method == "sample":
                    candidates = [(0, systematic_keep(np.zeros(n, np.int64), codes, keep, seed))]
                else:
                    groups, report.footprint[s] = _street_groups(src, s, rows, w, full, k, eps)
                    candidates = [(0, systematic_keep(groups[back], codes, keep, seed))]  # the flat share
                    if floor > 0:
                        games = src.table(s).column("game").to_numpy(zero_copy_only=False)
                        shares = keep_shares(hits[back], keep, floor, np.array([g or "" for g in games]))
                        candidates.insert(0, (floor, systematic_keep(groups[back], codes, shares, seed)))
                # each candidate's coverage; the street keeps the one that covers most (ties: the first)
                scored = []
                for used, chosen in candidates:
                    tv = _condensed_tv(config, s, X, codes, chosen, rows, full)
                    scored.append((float(w[tv <= eps + 1e-12].sum() / n), -float((tv * w).sum() / n), used, chosen))
                cov, mean, used, chosen = max(scored, key=lambda c: c[:2])  # max keeps the first of equals
                mean = -mean
                if not len(chosen):  # a street of the source with no case would fail at its first decision
                    raise CBRError(_keep_too_small(keep, s, n, {t: src.count(t) for t in STREETS}))
                writer.add_table(s, src.table(s).take(chosen))
                report.kept_per_street[s] = int(len(chosen))
                report.removed_per_street[s] = int(n - len(chosen))
                report.coverage[s] = round(cov, 4)
                report.mean_tv[s] = round(mean, 4)
                if method == "footprint":
                    report.floor_per_street[s] = used
                if progress is not None:
                    progress(s)
            if not sum(report.kept_per_street.values()):
                raise CBRError("the condensed case base would hold no case; keep more (a larger keep)")
        # the writer's warnings guess why folds are missing (showdown-only logs); here it is known
        from cbr.store.honesty import action_warnings, game_warnings

        why = {s: (f" (the source has {m.counts[s].get('f', 0):,} fold cases on the {s} and none was kept: "
                   "a larger keep keeps some)" if m.counts.get(s, {}).get("f", 0) else
                   " (the source has no fold case there either)") for s in STREETS}
        report.warnings.extend(action_warnings(writer.manifest.counts, no_folds=why)
                               + game_warnings(writer.manifest.games))
    finally:
        src.close()
    report.kept = sum(report.kept_per_street.values())
    report.removed = sum(report.removed_per_street.values())
    report.seconds = time.perf_counter() - t0
    return report


def _keep_too_small(keep: float, street: str, n: int, counts: dict[str, int]) -> str:
    """Why ``keep`` is refused: it keeps no case of ``street`` (``n`` cases); the smallest keep
    that keeps at least one case of every street with cases (1 / its fewest), rounded up.

    >>> _keep_too_small(0.0001, "flop", 900, {"preflop": 1000, "flop": 900, "turn": 0, "river": 700})
    'keep 0.0001 keeps no case of the flop (900 cases): a street with cases needs one; keep at least 0.0015 (1 / 700 cases on the river)'
    """
    fewest = min((c, s) for s, c in counts.items() if c > 0)
    need = 1.0 / fewest[0]
    digits = 1 - math.floor(math.log10(need))  # two significant digits, rounded up
    need = math.ceil(need * 10 ** digits) / 10 ** digits
    return (f"keep {keep:g} keeps no case of the {street} ({counted(n, 'case')}): a street with cases needs one; "
            f"keep at least {need:g} (1 / {counted(fewest[0], 'case')} on the {fewest[1]})")


# ---- competence -------------------------------------------------------------------------------

@dataclass
class CompetenceReport:
    """Competence per street on a sample (see the module docstring): ``per_street[s]`` holds
    ``cases``, ``sample``, ``coverage`` (the share of the sampled cases some other case solves,
    with the half-width of its 95% CI), ``pivotal`` (the share only themselves solve, likewise),
    ``reachability`` (the mean size of a sampled case's reachability set among its ``k``
    nearest, with its CI) and ``coverage_size`` (the mean estimated coverage-set size of a case,
    in cases of the street); ``top``: the cases that matter most (largest estimated coverage
    sets): street, case id, action, estimated coverage, source and hand."""

    path: str
    k: int
    eps: float
    per_street: dict[str, dict[str, Any]] = field(default_factory=dict)
    top: list[dict[str, Any]] = field(default_factory=list)
    #: per street, for the plot: the sampled cases' reachability sizes and the estimated
    #: coverage sizes of the cases that solve at least one sampled case
    reach_sizes: dict[str, list[int]] = field(default_factory=dict)
    cover_sizes: dict[str, list[float]] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "k": self.k, "eps": self.eps, "per_street": self.per_street, "top": self.top,
                "seconds": round(self.seconds, 3)}


def _proportion_ci(hits: int, n: int) -> tuple[float, float, float, float]:
    """``hits / n``, half the width of its 95% Wilson score interval, and the interval's ends
    (not degenerate at 0 and 1, where a normal interval has no width)."""
    from cbr.stats import wilson_interval

    if n == 0:
        return (float("nan"), math.inf, float("nan"), float("nan"))
    low, high = wilson_interval(hits, n)
    return (hits / n, (high - low) / 2, low, high)


def competence(path: str | os.PathLike[str], *, sample: int = 2000, k: int = 10, eps: float = 0.1, seed: int = 0,
               top: int = 10) -> CompetenceReport:
    """Coverage and reachability per street on a seeded sample of ``sample`` cases a street,
    with the ``k`` nearest cases of the case base's own index (its k-NN, ties by id) and the
    triples of its vote; the ``top`` cases with the largest estimated coverage sets.

    >>> rep = competence("default", sample=200, k=5)
    >>> sorted(rep.per_street), 0 <= rep.per_street["flop"]["coverage"] <= 1
    (['flop', 'preflop', 'river', 'turn'], True)
    """
    from cbr.retrieval import action_codes
    from cbr.stats import mean_ci
    from cbr.store import CaseBase, resolve_casebase

    t0 = time.perf_counter()
    if sample < 2 or k < 1:
        raise CBRError("competence needs a sample of at least 2 cases and k of at least 1")
    cb = CaseBase.open(resolve_casebase(path))
    try:
        report = CompetenceReport(path=str(cb.path), k=k, eps=eps)
        rng = np.random.default_rng(seed)
        candidates: list[tuple[float, str, int]] = []
        for s in STREETS:
            n = cb.count(s)
            if n == 0:
                continue
            cases = cb.cases(s)
            X = np.asarray(cases.features, np.float32)
            picked = np.sort(rng.choice(n, size=min(sample, n), replace=False))
            kk = min(k + 1, n)
            _, nb = cb.index(s).kneighbors(X[picked], kk)
            nb = np.asarray(nb, np.int64)
            # a case's own id is not one of its solvers (it reaches itself); keep k others
            others = np.full((len(picked), k), -1, np.int64)
            for r, (i, row) in enumerate(zip(picked.tolist(), nb.tolist())):
                mine = [j for j in row if j != i and j >= 0][:k]
                others[r, :len(mine)] = mine
            need = np.unique(np.concatenate([picked, others[others >= 0]]))
            t_need = street_votes(cb, s, X[need])
            where = {int(j): r for r, j in enumerate(need.tolist())}
            triples = t_need[[where[int(i)] for i in picked]]
            nb_t = np.zeros((len(picked), k, 3))
            okn = others >= 0
            nb_t[okn] = t_need[[where[int(j)] for j in others[okn]]]
            solved = okn & (tv_distance(nb_t, triples[:, None, :]) <= eps + 1e-12)
            reach = solved.sum(axis=1)
            covered = int((reach > 0).sum())
            m = len(picked)
            cover_est: dict[int, float] = {}
            for r in range(m):
                for j in others[r][solved[r]].tolist():
                    cover_est[j] = cover_est.get(j, 0.0) + n / m
            cov, cov_h, cov_lo, cov_hi = _proportion_ci(covered, m)
            piv, piv_h, piv_lo, piv_hi = _proportion_ci(m - covered, m)
            rmean, rhalf = mean_ci([float(x) for x in reach])
            report.per_street[s] = {
                "cases": int(n), "sample": m, "coverage": round(cov, 4), "coverage_ci": round(cov_h, 4),
                "coverage_interval": [round(cov_lo, 4), round(cov_hi, 4)],
                "pivotal": round(piv, 4), "pivotal_ci": round(piv_h, 4),
                "pivotal_interval": [round(piv_lo, 4), round(piv_hi, 4)],
                "reachability": round(rmean, 3), "reachability_ci": round(rhalf, 3),
                "coverage_size": round(sum(cover_est.values()) / n, 3),
                "actions": {a: int((action_codes(cases.actions)[picked] == i).sum()) for i, a in enumerate("fcr")}}
            report.reach_sizes[s] = [int(x) for x in reach]
            report.cover_sizes[s] = sorted(cover_est.values(), reverse=True)
            candidates += [(c, s, j) for j, c in cover_est.items()]
        candidates.sort(key=lambda x: (-x[0], STREETS.index(x[1]), x[2]))
        for c, s, j in candidates[:top]:
            cases = cb.cases(s)
            cid = int(cases.case_ids[j])
            info = cb.rows_by_id(s, [cid], ["action", "source", "hand_id"])[0]
            report.top.append({"street": s, "case_id": cid, "action": info["action"], "coverage": round(c, 1),
                               "source": info.get("source"), "hand_id": info.get("hand_id")})
    finally:
        cb.close()
    report.seconds = time.perf_counter() - t0
    return report


# ---- diff -------------------------------------------------------------------------------------

@dataclass
class DiffReport:
    """Two case bases compared (:func:`diff`): ``counts`` (per base, street -> cases),
    ``sources`` (per base, source -> cases), ``only`` (per street: the cases of A not in B and
    of B not in A, as multisets of (feature row, action)), ``answers`` (per street: situations
    sampled, the share where the two votes' most likely actions differ (with its 95% Wilson
    interval, ``differ_max_interval``, and half its width) and the chance that two bots drawing
    from them answer different actions (with the half-width of its normal 95% CI),
    beside that chance for two bots drawing from A alone (mixed votes differ from themselves),
    and the mean total variation), ``origin`` (when one is a copy of the other: which, and what
    the matches added: cases retained per street and action, matches), ``similarity`` (the
    similarity settings that differ, one ``{"setting", "a", "b"}`` a difference: threshold,
    fallback_k, min_cases, weighted_triple, and per street and feature its measure, weight,
    bounds and parameters; empty when both retrieve alike)."""

    a: str
    b: str
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    sources: dict[str, dict[str, int]] = field(default_factory=dict)
    only: dict[str, dict[str, int]] = field(default_factory=dict)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    origin: Optional[dict[str, Any]] = None
    similarity: list[dict[str, Any]] = field(default_factory=list)
    #: where the situations came from: "cases" (rows of both bases' cases) or "holdout" (logs)
    situations: str = "cases"
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "counts": self.counts, "sources": self.sources, "only": self.only,
                "situations": self.situations, "answers": self.answers, "origin": self.origin,
                "similarity": self.similarity, "seconds": round(self.seconds, 3)}


def _flat_similarity(cfg: Any) -> dict[str, Any]:
    """A similarity configuration as ``setting -> value``: the retrieval settings by name and
    each feature's keys as ``street.feature.key`` (the feature's place when it has none)."""
    out: dict[str, Any] = {"threshold": cfg.threshold, "fallback_k": cfg.fallback_k,
                           "min_cases": cfg.min_cases, "weighted_triple": cfg.weighted_triple}
    for st in cfg.streets:
        for i, feat in enumerate(st.to_dicts()):
            name = feat.get("feature") or f"#{i + 1}"
            for key, value in feat.items():
                if key != "feature":
                    out[f"{st.street}.{name}.{key}"] = value
    return out


def similarity_differences(a: Any, b: Any) -> list[dict[str, Any]]:
    """The settings where the similarity configurations ``a`` and ``b`` differ, in ``a``'s
    order (then ``b``'s), one ``{"setting", "a", "b"}`` each (``None`` where one has none).

    >>> from cbr.similarity.config import default_casper
    >>> similarity_differences(default_casper(), default_casper(threshold=0.9))
    [{'setting': 'threshold', 'a': 0.97, 'b': 0.9}]
    """
    fa, fb = _flat_similarity(a), _flat_similarity(b)
    keys = list(fa) + [k for k in fb if k not in fa]
    return [{"setting": k, "a": fa.get(k), "b": fb.get(k)} for k in keys if fa.get(k) != fb.get(k)]


def _row_keys(X: np.ndarray, codes: np.ndarray) -> np.ndarray:
    data = np.ascontiguousarray(np.column_stack([X.astype(np.float32), codes.astype(np.float32)]))
    return data.view(np.dtype((np.void, data.dtype.itemsize * data.shape[1]))).reshape(-1)


def _only(ka: np.ndarray, kb: np.ndarray) -> tuple[int, int]:
    """How many of multiset ``ka`` are not in ``kb`` and the other way round."""
    ua, ca = np.unique(ka, return_counts=True)
    ub, cb_ = np.unique(kb, return_counts=True)
    common, ia, ib = np.intersect1d(ua, ub, assume_unique=True, return_indices=True)
    both = np.minimum(ca[ia], cb_[ib]).sum() if len(common) else 0
    return int(len(ka) - both), int(len(kb) - both)


def _is_copy(copy: Any, base: Any) -> bool:
    """Whether ``copy``'s origin names ``base``: its folder, or the same case base by name and
    content elsewhere (:func:`~cbr.store.manifest.is_copy_of`: the shipped ones move with a reinstall)."""
    from cbr.store.manifest import is_copy_of

    return is_copy_of(copy.manifest, base.path, base.manifest)


def holdout_rows(cb: Any, paths: list[str], log_format: Optional[str] = None) -> dict[str, np.ndarray]:
    """The feature rows (per street) of every decision with known hole cards in the logs
    ``paths``, computed by ``cb``'s feature set: situations neither case base was built from
    when the logs are new to both. Hands that do not read or replay are skipped."""
    from cbr.logs.replay import ReplayedLogs

    fs = cb.feature_set()
    rows: dict[str, list[np.ndarray]] = {s: [] for s in STREETS}
    for _, dps in ReplayedLogs(paths, log_format):
        for dp in dps:
            if dp.hole is not None and dp.action in ("f", "c", "r"):
                rows[STREETS[dp.street]].append(np.asarray(fs.row(dp), np.float32))
    return {s: np.vstack(r) if r else np.zeros((0, len(cb.manifest.features[s])), np.float32) for s, r in rows.items()}


def diff(a: str | os.PathLike[str], b: str | os.PathLike[str], *, sample: int = 1000, seed: int = 0,
         holdout: Optional[list[str]] = None) -> DiffReport:
    """Compare the case bases ``a`` and ``b`` (see :class:`DiffReport`). The situations are a
    seeded sample of ``sample`` feature rows a street, half drawn from the cases of each base
    (each base also answers the rows of the other's cases, which it may not hold); with
    ``holdout`` (log files), a seeded sample of ``sample`` a street of the decisions with known
    cards in those logs (:func:`holdout_rows`): held-out situations when the logs are new to
    both. Raises :class:`CaseBaseError` for a
    damaged or foreign case base and for two of different feature sets.

    >>> rep = diff("default", "default", sample=50)
    >>> rep.only["flop"], rep.answers["flop"]["differ_max"]
    ({'a': 0, 'b': 0}, 0.0)
    """
    from cbr.retrieval import action_codes
    from cbr.stats import mean_ci
    from cbr.store import CaseBase, resolve_casebase

    t0 = time.perf_counter()

    A = CaseBase.open(resolve_casebase(a))
    try:
        B = CaseBase.open(resolve_casebase(b))
    except BaseException:
        A.close()
        raise
    try:
        if A.manifest.features != B.manifest.features:
            raise CaseBaseError(f"cannot compare {A.path} with {B.path}: their feature sets differ "
                                f"({A.manifest.feature_set!r} and {B.manifest.feature_set!r})")
        report = DiffReport(a=str(A.path), b=str(B.path))
        report.similarity = similarity_differences(A.similarity(), B.similarity())
        for tag, cb in (("a", A), ("b", B)):
            report.counts[tag] = {s: cb.count(s) for s in STREETS}
            report.sources[tag] = {str(src or "-"): int(n) for src, n in
                                   cb.sql("SELECT source, count(*) FROM cases GROUP BY source ORDER BY source").fetchall()}
        rng = np.random.default_rng(seed)
        held = holdout_rows(A, list(holdout)) if holdout else None
        if held is not None and not any(len(r) for r in held.values()):
            raise CBRError(f"no decision with known hole cards in {', '.join(map(str, holdout or []))}")
        report.situations = "holdout" if held is not None else "cases"
        for s in STREETS:
            na, nb = A.count(s), B.count(s)
            if not na and not nb:
                continue
            ca = A.cases(s) if na else None
            cbs = B.cases(s) if nb else None
            Xa = np.asarray(ca.features, np.float32) if ca is not None else np.zeros((0, len(A.manifest.features[s])), np.float32)
            Xb = np.asarray(cbs.features, np.float32) if cbs is not None else np.zeros((0, Xa.shape[1]), np.float32)
            codes_a = action_codes(ca.actions) if ca is not None else np.zeros(0, np.int8)
            codes_b = action_codes(cbs.actions) if cbs is not None else np.zeros(0, np.int8)
            only_a, only_b = _only(_row_keys(Xa, codes_a), _row_keys(Xb, codes_b))
            report.only[s] = {"a": only_a, "b": only_b}
            if not na or not nb:
                continue
            if held is not None:
                rows = held[s][np.sort(rng.choice(len(held[s]), size=min(sample, len(held[s])), replace=False))]
                if not len(rows):
                    continue
            else:
                half = sample // 2
                rows = np.concatenate([Xa[rng.choice(na, size=min(half, na), replace=False)],
                                       Xb[rng.choice(nb, size=min(sample - half, nb), replace=False)]])
            ta, tb = street_votes(A, s, rows), street_votes(B, s, rows)
            differ = int((np.argmax(ta, axis=1) != np.argmax(tb, axis=1)).sum())
            p_diff = 1.0 - (ta * tb).sum(axis=1)
            # a share of situations: the Wilson interval, as competence's shares (never "0.000 ± 0.000")
            dm, dh, dlo, dhi = _proportion_ci(differ, len(rows))
            pm, ph = mean_ci(p_diff.tolist())
            report.answers[s] = {"situations": int(len(rows)), "differ_max": round(dm, 4),
                                 "differ_max_ci": round(dh, 4),
                                 "differ_max_interval": [round(dlo, 4), round(dhi, 4)], "differ_drawn": round(pm, 4),
                                 "differ_drawn_ci": round(ph, 4),
                                 "differ_drawn_a_self": round(float((1.0 - (ta * ta).sum(axis=1)).mean()), 4),
                                 "mean_tv": round(float(tv_distance(ta, tb).mean()), 4)}
        for copy, base, tag in ((B, A, "b"), (A, B, "a")):
            if _is_copy(copy, base):
                added = copy.sql("SELECT street, action, count(*), count(DISTINCT match_id) FROM cases "
                                 "WHERE retained_at IS NOT NULL GROUP BY street, action ORDER BY street, action").fetchall()
                matches = copy.sql("SELECT count(DISTINCT match_id) FROM cases WHERE retained_at IS NOT NULL").fetchone()[0]
                found: dict[str, dict[str, int]] = {}
                for street, action, n, _ in added:
                    found.setdefault(str(street), {"f": 0, "c": 0, "r": 0})[str(action)] = int(n)
                per = {s: found[s] for s in STREETS if s in found}  # in street order (SQL sorted them by name)
                report.origin = {"copy": tag, "of": copy.manifest.origin, "retained": per,
                                 "retained_cases": int(sum(sum(v.values()) for v in per.values())),
                                 "matches": int(matches or 0)}
                break
    finally:
        A.close()
        B.close()
    report.seconds = time.perf_counter() - t0
    return report

