"""Exact retrieval as a street grows: 1M, 4M and 10M cases, in memory and memory-mapped.

Run:  python3 bench/bench_retrieval_scale.py [--sizes 1000000,4000000,10000000] [--queries 200]
          [--brute-queries 5] [--no-mmap]

For each size, cases and queries are drawn from the feature distribution of the shipped
default case base's flop (``bench_retrieval.casebase_cases``: real rows, hand features
smoothed), the CASPER flop similarity is indexed (faiss IVF, L1, exact re-rank) and

- a single query (threshold 0.97, else the top 20) is timed: p50 / p99 over ``--queries``;
- numpy brute force (the definition) answers the first ``--brute-queries`` queries beside it,
  and the ids must be identical;
- the median number of cases a query returns is printed: with cases drawn from one
  distribution, the answer itself grows with the street (the cost floor of an exact answer).

For the largest size the index is saved and re-opened with ``CaseIndex.load(path,
mmap=True)`` in a fresh process: the case rows and the inverted lists stay in their files
(the page cache), and the script prints that process's anonymous memory (RssAnon: what it
holds itself, not the file pages the kernel may drop under pressure) beside the files' size,
and the query latency once the pages a query touches are cached (warm) and for the first
queries after opening (the files were just written, so still in the page cache here; a
cold disk adds its seek and read times).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_retrieval import (  # noqa: E402
    brute_aggregate,
    brute_retrieve,
    casebase_cases,
    casebase_draw,
    percentiles,
    same_aggregate,
)

from cbr.errors import counted  # noqa: E402
from cbr.retrieval import CaseIndex  # noqa: E402
from cbr.retrieval.aggregate import Labels  # noqa: E402
from cbr.similarity import default_casper  # noqa: E402


def rss_anon_mib() -> float:
    """This process's anonymous resident memory (MiB), from /proc/self/status."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def timed(index: CaseIndex, Q: np.ndarray) -> tuple[list[float], list[int]]:
    ts, sizes = [], []
    for q in Q:
        t0 = time.perf_counter()
        r = index.retrieve(q)
        ts.append(time.perf_counter() - t0)
        sizes.append(len(r))
    return ts, sizes


def timed_aggregate(index: CaseIndex, Q: np.ndarray, codes: np.ndarray, outcomes: np.ndarray,
                    top: int) -> tuple[list[float], list]:
    ts, out = [], []
    for q in Q:
        t0 = time.perf_counter()
        a = index.aggregate(q, codes, outcomes, top)
        ts.append(time.perf_counter() - t0)
        out.append(a)
    return ts, out


def summary(a) -> list:
    """What must agree between two aggregates, as plain data."""
    return [a.n, a.counts.tolist(), a.known.tolist(), a.top_ids.tolist(), a.top_sims.tolist()]


def mapped_child(path: str, queries: int, top: int) -> None:
    """In a fresh process: open the saved index memory-mapped, query, report as JSON."""
    Q = casebase_cases(queries, seed=2)
    small = CaseIndex.for_street(default_casper(), "flop").fit(Q)
    timed(small, Q[:5])  # warm the code paths, not the data
    timed_aggregate(small, Q[:5], Labels(np.zeros(queries, np.int8), np.zeros(queries)), None, top)
    before = rss_anon_mib()
    t0 = time.perf_counter()
    index = CaseIndex.load(path, mmap=True)
    opened = time.perf_counter() - t0
    codes = np.load(Path(path) / "bench_codes.npy", mmap_mode="r")
    outcomes = np.load(Path(path) / "bench_outcomes.npy", mmap_mode="r")
    t0 = time.perf_counter()
    labels = Labels(codes, outcomes)
    first, _ = timed_aggregate(index, Q[:20], labels, None, top)
    first_s = time.perf_counter() - t0
    warm, aggs = timed_aggregate(index, Q, labels, None, top)
    rfirst, _ = timed(index, Q[:20])
    rwarm, sizes = timed(index, Q)
    print(json.dumps({"open_s": opened, "first20_ms": percentiles(first), "warm_ms": percentiles(warm),
                      "labels_and_first20_s": first_s,
                      "retrieve_first20_ms": percentiles(rfirst), "retrieve_warm_ms": percentiles(rwarm),
                      "median_hits": int(np.median(sizes)), "rss_anon_mib": rss_anon_mib() - before,
                      "aggregates": [summary(a) for a in aggs]}))


def main() -> None:
    from native_guard import help_format, number, number_list, parse_args, positive_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--sizes", type=number_list(20), default="1000000,4000000,10000000",
                    help="comma-separated case counts (each 20 or more: the top-20 searches need them)")
    ap.add_argument("--queries", type=positive_int, default=200, help="queries timed per size")
    ap.add_argument("--brute-queries", type=number(0, int), default=5,
                    help="queries also checked by a full brute-force retrieval (0: none)")
    ap.add_argument("--no-mmap", action="store_true", help="skip the memory-mapped part")
    ap.add_argument("--mapped-child", help=argparse.SUPPRESS)
    ap.add_argument("--top", type=positive_int, default=20, help="cases the aggregate keeps for the explanation")
    args = parse_args(ap)
    if args.mapped_child:
        mapped_child(args.mapped_child, args.queries, args.top)
        return
    cfg = default_casper()
    st = cfg.street("flop")
    sizes = args.sizes
    Q = casebase_cases(args.queries, seed=2)
    print(f"street: flop, CASPER similarity, threshold {cfg.threshold}, fallback top {cfg.fallback_k}; "
          f"cases: the default case base's distribution; {args.queries} queries per size")
    print("aggregate: the triple's per-action totals and outcome sums and the top "
          f"{args.top} (grouped layout, C scan; labels copied into the layout's order, and read by case "
          "id), every query checked against numpy brute force")
    print(f"{'cases':>11s} {'build s':>8s} {'layout s':>8s} {'hits p50':>9s} | {'agg p50':>8s} {'agg p99':>8s} "
          f"{'brute p50':>9s} {'brute p99':>9s} {'x p50':>6s} {'x p99':>6s} {'same':>8s} | "
          f"{'by id p50':>9s} {'p99':>7s} | {'retrieve p50':>12s} {'p99':>7s}")
    last = None
    for n in sizes:
        X, codes, outcomes = casebase_draw(n, seed=1)
        t0 = time.perf_counter()
        index = CaseIndex.for_street(cfg, "flop").fit(X)
        build = time.perf_counter() - t0
        t0 = time.perf_counter()
        index.aggregate(Q[0], codes, outcomes, args.top)  # builds the grouped layout
        layout = time.perf_counter() - t0
        labels = Labels(codes, outcomes)                  # the labels, copied into the layout's order
        index.aggregate(Q[0], labels, None, args.top)
        index.retrieve(Q[0])
        ts, hits = timed(index, Q)
        ats, aggs = timed_aggregate(index, Q, labels, None, args.top)
        its, by_id = timed_aggregate(index, Q, codes, outcomes, args.top)
        if [summary(a) for a in aggs] != [summary(a) for a in by_id]:
            raise SystemExit("labels in layout order and by case id answer differently")
        brute, same = [], 0
        for q, a in zip(Q, aggs):
            t0 = time.perf_counter()
            ref = brute_aggregate(st, X, q, cfg.threshold, cfg.fallback_k, codes, outcomes, args.top)
            brute.append(time.perf_counter() - t0)
            same += same_aggregate(a, ref)
        for q in Q[: args.brute_queries]:  # the full retrieval too, on the first few
            if not np.array_equal(brute_retrieve(st, X, q, cfg.threshold, cfg.fallback_k), index.retrieve(q).ids):
                raise SystemExit("retrieve and brute force disagree")
        p50, p99 = percentiles(ts)
        a50, a99 = percentiles(ats)
        i50, i99 = percentiles(its)
        b50, b99 = percentiles(brute)
        print(f"{n:11,d} {build:8.1f} {layout:8.1f} {int(np.median(hits)):9,d} | {a50:8.2f} {a99:8.2f} "
              f"{b50:9.1f} {b99:9.1f} {b50 / a50:5.0f}x {b99 / a99:5.0f}x {same:>4d}/{len(brute)} | "
              f"{i50:9.2f} {i99:7.2f} | {p50:12.2f} {p99:7.2f}", flush=True)
        if same != len(brute):
            raise SystemExit("the aggregate and brute force disagree")
        last = (n, index, X, codes, outcomes, aggs)
        del X, labels
    if args.no_mmap or last is None:
        return
    n, index, X, codes, outcomes, aggs = last
    with tempfile.TemporaryDirectory(prefix="cbr_mmap_") as tmp:
        path = index.save(Path(tmp) / "flop")
        np.save(Path(path) / "bench_codes.npy", codes)
        np.save(Path(path) / "bench_outcomes.npy", outcomes)
        size = sum(f.stat().st_size for f in Path(path).iterdir()) / 2**20
        expected = [summary(a) for a in aggs]
        del index, X, last, codes, outcomes
        out = subprocess.run([sys.executable, __file__, "--mapped-child", str(path), "--queries", str(args.queries),
                              "--top", str(args.top)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        same = sum(a == b for a, b in zip(r["aggregates"], expected))
        print(f"\nmemory-mapped, {counted(n, 'case')} (files {size:,.0f} MiB), fresh process: open {r['open_s']:.2f} s, "
              f"anonymous memory +{r['rss_anon_mib']:.0f} MiB (the labels' copy included; copying them and "
              f"the first 20 queries {r['labels_and_first20_s']:.2f} s)")
        print(f"  aggregate: first 20 queries p50 {r['first20_ms'][0]:.2f} ms, p99 {r['first20_ms'][1]:.2f} ms; "
              f"warm p50 {r['warm_ms'][0]:.2f} ms, p99 {r['warm_ms'][1]:.2f} ms; "
              f"same as in memory (checked against brute force there): {same}/{len(expected)}")
        print(f"  retrieve (every hit listed): warm p50 {r['retrieve_warm_ms'][0]:.2f} ms, "
              f"p99 {r['retrieve_warm_ms'][1]:.2f} ms")
        if same != len(expected):
            raise SystemExit("the memory-mapped index answers differently")


if __name__ == "__main__":
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from native_guard import run

    run(main)
