"""Exact CASPER retrieval on one street of 1,000,000 cases: faiss index vs numpy brute force.

Run:  python3 bench/bench_retrieval.py [--cases 1000000] [--queries 300] [--brute-queries 20]

Cases and queries come from the same generator (queries are fresh draws, not copies of
cases): by default the feature distribution of the shipped default case base's flop
(``--source casebase``), else a synthetic one (``--source synthetic``: counts as small
integers, pot odds from the few values the betting allows, hand strength and potentials
continuous). Both sides compute the same similarity (the CASPER
defaults for the flop) and must return identical ids; the script checks that on every
query it times for the brute force.

Prints per single query (threshold 0.97, else top 20) p50/p99 for both and their ratio,
top-20 k-NN latency, throughput of a batch of 1,000 queries, build time and memory per
million cases, each beside its target.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cbr.errors import counted  # noqa: E402
from cbr.retrieval import CaseIndex  # noqa: E402
from cbr.similarity import default_casper, global_similarity  # noqa: E402


def flop_cases(n: int, seed: int) -> np.ndarray:
    """``n`` flop situations with the 12 CASPER features, float32 ``(n, 12)``."""
    rng = np.random.default_rng(seed)
    dealt = rng.choice([2, 3, 4, 5, 6, 7, 8, 9, 10], n, p=[.22, .04, .05, .06, .25, .05, .05, .13, .15])
    in_hand = np.minimum(dealt, 2 + rng.binomial(np.maximum(dealt - 2, 0), 0.18))
    to_act = rng.integers(0, in_hand)                      # 0 .. in_hand - 1
    rel_pos = 1.0 - to_act / np.maximum(in_hand - 1, 1)
    committed = rng.choice([0, 1, 2], n, p=[.72, .23, .05])
    to_call = rng.choice([0, 1, 2, 3], n, p=[.5, .4, .08, .02])
    preflop_bets = rng.choice([1, 2, 3, 4], n, p=[.45, .35, .15, .05])
    pot = in_hand * preflop_bets + rng.integers(0, 3, n) + committed + to_call  # in small bets
    pot_odds = to_call / (pot + to_call)
    hs = rng.beta(2.0, 2.0, n)
    ppot = rng.beta(1.0, 7.0, n)
    npot = rng.beta(1.0, 5.0, n) * (1 - hs) * 0.8
    return np.column_stack([dealt, rel_pos, in_hand, to_act, committed, to_call, pot_odds, hs,
                            ppot, npot, pot, preflop_bets]).astype(np.float32)


def casebase_cases(n: int, seed: int, casebase: str = "default") -> np.ndarray:
    """``n`` flop situations drawn from the feature distribution of a real case base.

    Each draw takes a real case's row (so the betting features keep their joint
    distribution) and smooths the continuous hand features (hand strength, potentials)
    with a small Gaussian kernel (bandwidth 0.02, clipped to [0, 1]) so that a million draws
    are not copies of the few thousand cases the shipped case base holds.
    """
    return casebase_draw(n, seed, casebase)[0]


def casebase_draw(n: int, seed: int, casebase: str = "default") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`casebase_cases` (the same rows for the same seed) with each drawn case's action
    code (int8 0/1/2) and outcome (NaN = unknown), those of the real case it was drawn from."""
    from cbr.retrieval import action_codes
    from cbr.store import CaseBase, resolve_casebase

    cb = CaseBase.open(resolve_casebase(casebase))
    try:
        arrays = cb.cases("flop")
        names, real = arrays.feature_names, arrays.features
        codes, outcomes = action_codes(arrays.actions), np.asarray(arrays.outcomes, dtype=np.float64)
    finally:
        cb.close()
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, real.shape[0], n)
    X = real[pick].copy()
    for name in ("hand_strength", "positive_potential", "negative_potential"):
        j = names.index(name)
        X[:, j] = np.clip(X[:, j] + rng.normal(0.0, 0.02, n), 0.0, 1.0)
    return X.astype(np.float32), codes[pick], outcomes[pick]


def brute_aggregate(st, X: np.ndarray, q: np.ndarray, t: float, k: int, codes: np.ndarray,
                    outcomes: np.ndarray, top: int) -> dict:
    """What the triple and the explanation need, in plain numpy over every case: the hits (else
    the top ``k``), their count, per-action counts, similarity sums and known-outcome counts
    and sums, and the ``top`` most similar (similarity descending, ties by id)."""
    s = global_similarity(st, q, X)
    ids = np.flatnonzero(s >= t)
    fallback = ids.size == 0
    if fallback:
        ids = brute_retrieve(st, X, q, t, k)
    c = codes[ids].astype(np.int64)
    o = outcomes[ids]
    ok = ~np.isnan(o)
    if fallback or ids.size <= top:
        best = ids[np.lexsort((ids, -s[ids]))][:top]
    else:
        kth = np.partition(s[ids], ids.size - top)[ids.size - top]
        cand = ids[s[ids] >= kth]
        best = cand[np.lexsort((cand, -s[cand]))][:top]
    return {"n": int(ids.size), "fallback": bool(fallback), "counts": np.bincount(c, minlength=3),
            "pos_sims": np.bincount(c, weights=np.maximum(s[ids], 0.0), minlength=3),
            "known": np.bincount(c[ok], minlength=3), "outcome_sums": np.bincount(c[ok], weights=o[ok], minlength=3),
            "top_ids": best, "top_sims": s[best]}


def same_aggregate(agg, ref: dict) -> bool:
    """Whether an :class:`~cbr.retrieval.aggregate.Aggregate` equals the brute-force one: counts,
    ids and similarities exactly, the sums to float rounding (they are added in another order)."""
    return (agg.n == ref["n"] and agg.fallback == ref["fallback"]
            and np.array_equal(agg.counts, ref["counts"]) and np.array_equal(agg.known, ref["known"])
            and np.array_equal(agg.top_ids, ref["top_ids"]) and np.array_equal(agg.top_sims, ref["top_sims"])
            and np.allclose(agg.pos_sims, ref["pos_sims"], rtol=1e-9, atol=1e-9)
            and np.allclose(agg.outcome_sums, ref["outcome_sums"], rtol=1e-9, atol=1e-9))


#: The k of the timed k-NN search (and of the default fallback, the top 20 when nothing reaches the
#: threshold): a street needs at least this many cases.
TOP_K = 20


def percentiles(ts: list[float]) -> tuple[float, float]:
    a = np.array(ts) * 1e3
    return float(np.percentile(a, 50)), float(np.percentile(a, 99))


def brute_retrieve(st, X: np.ndarray, q: np.ndarray, t: float, k: int) -> np.ndarray:
    """The definition in plain numpy: score all cases, threshold, else top k (ties by id)."""
    s = global_similarity(st, q, X)
    ids = np.nonzero(s >= t)[0]
    if ids.size == 0:
        ids = np.argpartition(-s, k)[: 4 * k] if s.shape[0] > 4 * k else np.arange(s.shape[0])
        kth = np.sort(s[ids])[::-1][k - 1]
        ids = np.nonzero(s >= kth)[0]
        return ids[np.lexsort((ids, -s[ids]))][:k]
    return ids[np.lexsort((ids, -s[ids]))]


def main() -> None:
    from native_guard import help_format, number, parse_args, positive_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--cases", type=number(TOP_K, int), default=1_000_000,
                    help=f"cases of the street ({TOP_K} or more: the top-{TOP_K} searches need them)")
    ap.add_argument("--queries", type=positive_int, default=300, help="queries timed one at a time")
    ap.add_argument("--brute-queries", type=positive_int, default=20,
                    help="queries also answered by a brute-force retrieval, to time it and check ours")
    ap.add_argument("--batch", type=positive_int, default=1000, help="queries of the batched retrieval and aggregate")
    ap.add_argument("--top", type=positive_int, default=20, help="cases the aggregate keeps for the explanation")
    ap.add_argument("--source", choices=("casebase", "synthetic"), default="casebase",
                    help="feature distribution of the cases: the default case base's flop or synthetic")
    args = parse_args(ap)

    cfg = default_casper()
    st = cfg.street("flop")
    print(f"street: flop, {len(st)} CASPER features, threshold {cfg.threshold}, fallback top {cfg.fallback_k}")
    print(f"cases: {args.cases:,}; faiss threads: {_threads()}")

    draw = casebase_cases if args.source == "casebase" else flop_cases
    print(f"case distribution: {'the default case base (flop), smoothed' if args.source == 'casebase' else 'synthetic'}")
    if args.source == "casebase":
        X, codes, outcomes = casebase_draw(args.cases, seed=1)
    else:
        X = draw(args.cases, seed=1)
        rng = np.random.default_rng(3)
        codes = rng.integers(0, 3, args.cases).astype(np.int8)
        outcomes = np.where(rng.random(args.cases) < 0.3, np.nan, rng.normal(0.0, 2.0, args.cases))
    Q = draw(max(args.queries, args.batch), seed=2)

    t0 = time.perf_counter()
    index = CaseIndex.for_street(cfg, "flop").fit(X)
    build = time.perf_counter() - t0
    backend = index.backend_
    print(f"build: {build:.1f} s ({backend._lo.shape[0]} inverted lists)")

    index.retrieve(Q[0])  # warm-up
    ours, fallbacks, sizes = [], 0, []
    for q in Q[: args.queries]:
        t0 = time.perf_counter()
        r = index.retrieve(q)
        ours.append(time.perf_counter() - t0)
        fallbacks += r.fallback
        sizes.append(len(r))

    brute, mismatches = [], 0
    for i, q in enumerate(Q[: args.brute_queries]):
        t0 = time.perf_counter()
        ids = brute_retrieve(st, X, q, cfg.threshold, cfg.fallback_k)
        brute.append(time.perf_counter() - t0)
        mismatches += not np.array_equal(ids, index.retrieve(q).ids)

    knn = []
    for q in Q[: args.queries]:
        t0 = time.perf_counter()
        index.kneighbors(q, TOP_K)
        knn.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    index.retrieve_batch(Q[: args.batch])
    batch = time.perf_counter() - t0

    # the aggregate path (what the triple and the explanation need), every timed query checked
    from cbr.retrieval.aggregate import Labels

    labels = Labels(codes, outcomes)  # the actions and outcomes, copied into the layout's order
    index.aggregate(Q[0], labels, None, args.top)  # builds the grouped layout
    agg, agg_id, agg_brute, agg_same = [], [], [], 0
    for q in Q[: args.queries]:
        t0 = time.perf_counter()
        a = index.aggregate(q, labels, None, args.top)
        agg.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        b = index.aggregate(q, codes, outcomes, args.top)   # the labels read by case id
        agg_id.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ref = brute_aggregate(st, X, q, cfg.threshold, cfg.fallback_k, codes, outcomes, args.top)
        agg_brute.append(time.perf_counter() - t0)
        agg_same += same_aggregate(a, ref) and same_aggregate(b, ref)
    t0 = time.perf_counter()
    index.aggregate_batch(Q[: args.batch], labels, None, args.top)
    agg_batch = time.perf_counter() - t0

    p50, p99 = percentiles(ours)
    b50, b99 = percentiles(brute)
    k50, k99 = percentiles(knn)
    feat_bytes = X.nbytes
    ivf_bytes = backend._index.ntotal * (backend._index.code_size + 8)
    lists_bytes = sum(a.nbytes for a in (backend._centroids, backend._lo, backend._hi, backend._radius,
                                         backend._sizes))
    per_million = (feat_bytes + ivf_bytes + lists_bytes) * 1e6 / args.cases / 2**20

    print(f"retrieved per query: median {counted(int(np.median(sizes)), 'case')}, {fallbacks}/{counted(len(ours), 'query', 'queries')} "
          f"fell back to the top {cfg.fallback_k}")
    print(f"identical ids, faiss vs brute force: {len(brute) - mismatches}/{counted(len(brute), 'query', 'queries')}")
    print()
    print(f"{'single query (threshold, else top 20)':40s} {'p50 ms':>9s} {'p99 ms':>9s}")
    print(f"{'  ours (faiss IVF L1 + exact re-rank)':40s} {p50:9.2f} {p99:9.2f}   targets <= 2 / <= 10")
    print(f"{'  numpy brute force':40s} {b50:9.2f} {b99:9.2f}")
    print(f"{'  speed-up (brute p50 / ours p50)':40s} {b50 / p50:9.1f}x             target >= 20x")
    print(f"{'top-20 kneighbors, ours':40s} {k50:9.2f} {k99:9.2f}")
    print(f"batch of {args.batch}: {batch:.2f} s = {args.batch / batch:,.0f} queries/s "
          f"(brute force at its p50: {1e3 / b50:,.0f} queries/s)")
    print(f"memory per million cases: {per_million:.0f} MiB (features {feat_bytes / 2**20 * 1e6 / args.cases:.0f}, "
          f"faiss lists {ivf_bytes / 2**20 * 1e6 / args.cases:.0f}, list bounds "
          f"{lists_bytes / 2**20 * 1e6 / args.cases:.1f})")
    a50, a99 = percentiles(agg)
    i50, i99 = percentiles(agg_id)
    ab50, ab99 = percentiles(agg_brute)
    print()
    print(f"{'triple + top ' + str(args.top) + ' (aggregate)':40s} {'p50 ms':>9s} {'p99 ms':>9s}")
    print(f"{'  ours (grouped layout, C scan)':40s} {a50:9.3f} {a99:9.3f}   targets <= 1 / <= 5")
    print(f"{'  ours, labels read by case id':40s} {i50:9.3f} {i99:9.3f}")
    print(f"{'  numpy brute force, same aggregate':40s} {ab50:9.1f} {ab99:9.1f}")
    print(f"{'  ratio (brute / ours)':40s} {ab50 / a50:8.0f}x {ab99 / a99:8.0f}x")
    print(f"identical aggregates, ours (both) vs brute force: {agg_same}/{len(agg)} timed queries")
    print(f"aggregate batch of {args.batch}: {args.batch / agg_batch:,.0f} queries/s")
    if mismatches:
        raise SystemExit("faiss and brute force disagree")
    if agg_same != len(agg):
        raise SystemExit("the aggregate and brute force disagree")


def _threads() -> int:
    import faiss

    return faiss.omp_get_max_threads()


if __name__ == "__main__":
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from native_guard import run

    run(main)
