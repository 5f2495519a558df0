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

from bench_retrieval import brute_retrieve, casebase_cases, percentiles  # noqa: E402

from cbr.retrieval import CaseIndex  # noqa: E402
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


def mapped_child(path: str, queries: int) -> None:
    """In a fresh process: open the saved index memory-mapped, query, report as JSON."""
    Q = casebase_cases(queries, seed=2)
    timed(CaseIndex.for_street(default_casper(), "flop").fit(Q), Q[:5])  # warm the code paths, not the data
    before = rss_anon_mib()
    t0 = time.perf_counter()
    index = CaseIndex.load(path, mmap=True)
    opened = time.perf_counter() - t0
    first, _ = timed(index, Q[:20])
    warm, sizes = timed(index, Q)
    print(json.dumps({"open_s": opened, "first20_ms": percentiles(first), "warm_ms": percentiles(warm),
                      "median_hits": int(np.median(sizes)), "rss_anon_mib": rss_anon_mib() - before,
                      "ids": [index.retrieve(q).ids.tolist() for q in Q[:5]]}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000000,4000000,10000000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--brute-queries", type=int, default=5)
    ap.add_argument("--no-mmap", action="store_true", help="skip the memory-mapped part")
    ap.add_argument("--mapped-child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.mapped_child:
        mapped_child(args.mapped_child, args.queries)
        return
    cfg = default_casper()
    st = cfg.street("flop")
    sizes = [int(x) for x in args.sizes.split(",")]
    Q = casebase_cases(args.queries, seed=2)
    print(f"street: flop, CASPER similarity, threshold {cfg.threshold}, fallback top {cfg.fallback_k}; "
          f"cases: the default case base's distribution")
    print(f"{'cases':>11s} {'build s':>8s} {'hits p50':>9s} {'ours p50':>9s} {'ours p99':>9s} "
          f"{'brute p50':>10s} {'ratio':>7s} {'same ids':>9s}")
    last = None
    for n in sizes:
        X = casebase_cases(n, seed=1)
        t0 = time.perf_counter()
        index = CaseIndex.for_street(cfg, "flop").fit(X)
        build = time.perf_counter() - t0
        index.retrieve(Q[0])
        ts, hits = timed(index, Q)
        brute, same = [], 0
        for q in Q[: args.brute_queries]:
            t0 = time.perf_counter()
            ids = brute_retrieve(st, X, q, cfg.threshold, cfg.fallback_k)
            brute.append(time.perf_counter() - t0)
            same += np.array_equal(ids, index.retrieve(q).ids)
        p50, p99 = percentiles(ts)
        b50, _ = percentiles(brute)
        print(f"{n:11,d} {build:8.1f} {int(np.median(hits)):9,d} {p50:9.2f} {p99:9.2f} {b50:10.1f} "
              f"{b50 / p50:6.0f}x {same:>5d}/{len(brute)}", flush=True)
        if same != len(brute):
            raise SystemExit("faiss and brute force disagree")
        last = (n, index, X)
        del X
    if args.no_mmap or last is None:
        return
    n, index, X = last
    with tempfile.TemporaryDirectory(prefix="cbr_mmap_") as tmp:
        path = index.save(Path(tmp) / "flop")
        size = sum(f.stat().st_size for f in Path(path).iterdir()) / 2**20
        expected = [index.retrieve(q).ids.tolist() for q in Q[:5]]
        del index, X, last
        out = subprocess.run([sys.executable, __file__, "--mapped-child", str(path), "--queries", str(args.queries)],
                             capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        print(f"\nmemory-mapped, {n:,} cases (files {size:,.0f} MiB), fresh process: open {r['open_s']:.2f} s, "
              f"anonymous memory +{r['rss_anon_mib']:.0f} MiB")
        print(f"  first 20 queries p50 {r['first20_ms'][0]:.2f} ms, p99 {r['first20_ms'][1]:.2f} ms; "
              f"warm p50 {r['warm_ms'][0]:.2f} ms, p99 {r['warm_ms'][1]:.2f} ms; "
              f"same ids as in memory: {r['ids'] == expected}")
        if r["ids"] != expected:
            raise SystemExit("the memory-mapped index answers differently")


if __name__ == "__main__":
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    main()
