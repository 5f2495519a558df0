"""The exact engine and its k-NN backend side by side: the grouped scan and faiss, as a street grows.

Run:  python3 bench/bench_retrieval_engines.py [--sizes 10000,100000,1000000] [--queries 200]

CASPER's retrieval (every case with similarity >= 0.97, else the 20 most similar) has one exact
engine, the **grouped scan** (:mod:`cbr.retrieval.aggregate`: the cases grouped by their betting
columns, the C kernel skipping every group whose bound is below the threshold), and **faiss**
(:mod:`cbr.retrieval.faiss_backend`: IVF lists in a bound space, range search, exact re-rank) as
the backend of the k most similar. Two questions are timed, each answered both ways, at each
size (cases and queries drawn from the shipped default case base's flop, as in
``bench_retrieval.py``; queries are fresh draws):

- **threshold**: the triple and the 20 most similar of the threshold query. The grouped scan
  (``CaseIndex.aggregate``, what ``cbr query`` and the cbr bot use) adds the hits up without
  listing them; faiss (``CaseIndex.retrieve``, what ``--explain``, ``cbr evaluate`` and the
  server's ``top: null`` use) lists every hit, which is then added up the same way
  (``aggregate_of``). A query with no hit falls back to the 20 most similar on both sides (faiss
  k-NN), so the share of such queries is printed.
- **k-NN, k = 20**: faiss (``CaseIndex.kneighbors``, the fallback's path) beside the grouped scan
  with threshold 0 (every case is a hit, no group can be skipped: the kernel scores every case,
  keeping the best 20), the scan's own k-NN.

Both sides must give the same answer on every timed query (counts, top ids and similarities;
the scan's sums to float rounding); the script stops if they do not. Prints p50 / p99 per
engine, the ratio, and which one wins at each size; and both build times (faiss's k-means and
lists, the scan's grouped layout).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_retrieval import casebase_draw, percentiles  # noqa: E402

from cbr.errors import counted  # noqa: E402
from cbr.retrieval import CaseIndex  # noqa: E402
from cbr.retrieval.aggregate import aggregate_of, check_labels, native_scan  # noqa: E402
from cbr.similarity import default_casper  # noqa: E402

K = 20


def timed(fn, queries: np.ndarray) -> tuple[list[float], list]:
    """Each query answered once (after one untimed warm-up): seconds per query, answers."""
    fn(queries[0])
    times, answers = [], []
    for q in queries:
        t0 = time.perf_counter()
        answers.append(fn(q))
        times.append(time.perf_counter() - t0)
    return times, answers


def same(a, b) -> bool:
    """Two :class:`~cbr.retrieval.aggregate.Aggregate` of one query agree (ids, counts exactly)."""
    return (a.n == b.n and a.fallback == b.fallback and np.array_equal(a.counts, b.counts)
            and np.array_equal(a.top_ids, b.top_ids) and np.array_equal(a.top_sims, b.top_sims)
            and np.allclose(a.pos_sims, b.pos_sims, rtol=1e-9, atol=1e-9))


def run_size(n: int, n_queries: int, seed: int) -> dict:
    X, codes, _ = casebase_draw(n, seed)
    Q = casebase_draw(n_queries, seed + 1)[0]
    index = CaseIndex.for_street(default_casper(), "flop")
    t0 = time.perf_counter()
    index.fit(X)
    faiss_build = time.perf_counter() - t0
    backend = index.backend_
    t0 = time.perf_counter()
    layout = backend._layout_now()
    scan_build = time.perf_counter() - t0
    scan = native_scan()
    if scan is None:
        raise SystemExit("the native scan kernel (evaluator_ext._retrieval) is not built")
    labels, _ = check_labels(codes, None, n)

    # threshold: the triple + top 20
    grouped_t, grouped = timed(lambda q: index.aggregate(q, labels, None, K), Q)

    def faiss_threshold(q):
        r = index.retrieve(q)
        return aggregate_of(r.ids, r.similarities, labels, None, K, r.fallback)

    faiss_t, listed = timed(faiss_threshold, Q)
    bad = [i for i, (a, b) in enumerate(zip(grouped, listed)) if not same(a, b)]
    if bad:
        raise SystemExit(f"{counted(n, 'case')}: the engines disagree on the threshold query {bad[0]}")
    hits = np.array([a.n for a in grouped])
    fallback = float(np.mean([a.fallback for a in grouped]))

    # k-NN, k = 20
    def scan_knn(q):
        _, _, ids, sims = layout.scan(scan, q, 0.0, labels, None, K, False)
        return ids, sims

    def faiss_knn(q):
        sims, ids = index.kneighbors(q[None, :], K)
        return ids[0], sims[0]

    scan_knn_t, by_scan = timed(scan_knn, Q)
    faiss_knn_t, by_faiss = timed(faiss_knn, Q)
    bad = [i for i, (a, b) in enumerate(zip(by_scan, by_faiss))
           if not (np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]))]
    if bad:
        raise SystemExit(f"{counted(n, 'case')}: the engines disagree on the k-NN of query {bad[0]}")
    return {"n": n, "faiss_build": faiss_build, "scan_build": scan_build, "hits": float(np.median(hits)),
            "fallback": fallback, "threshold": (percentiles(grouped_t), percentiles(faiss_t)),
            "knn": (percentiles(scan_knn_t), percentiles(faiss_knn_t))}


def line(name: str, scan: tuple[float, float], faiss: tuple[float, float]) -> str:
    winner = "grouped scan" if scan[0] < faiss[0] else "faiss"
    ratio = max(scan[0], faiss[0]) / max(min(scan[0], faiss[0]), 1e-9)
    return (f"  {name:<22} grouped scan p50 {scan[0]:8.3f} ms  p99 {scan[1]:8.3f} ms | "
            f"faiss p50 {faiss[0]:8.3f} ms  p99 {faiss[1]:8.3f} ms | {winner} wins, {ratio:.1f}x")


def main() -> None:
    from native_guard import help_format, number_list, parse_args, positive_int, seed_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--sizes", type=number_list(20), default="10000,100000,1000000",
                    help="comma-separated case counts (each 20 or more: the top-20 searches need them)")
    ap.add_argument("--queries", type=positive_int, default=200, help="queries timed per size")
    ap.add_argument("--seed", type=seed_int, default=7, help="seed of the cases drawn (the queries: seed + 1)")
    args = parse_args(ap)
    print(f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}; {args.queries} queries per size, "
          f"every answer checked equal between the engines")
    for n in args.sizes:
        r = run_size(n, args.queries, args.seed)
        print(f"{counted(n, 'case')}: median {r['hits']:,.0f} hits per threshold query, {r['fallback']:.0%} fall back "
              f"to the top {K}; build: faiss {r['faiss_build']:.2f} s, grouped layout {r['scan_build']:.2f} s")
        print(line("threshold (triple+top)", *r["threshold"]))
        print(line(f"k-NN, k = {K}", *r["knn"]))
        sys.stdout.flush()
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    from native_guard import run

    run(main)
