"""The fallback of the threshold query: the grouped scan at lower thresholds beside the k-NN search.

Run:  python3 bench/bench_fallback.py [--casebase expert] [--street turn] [--queries 300]
          [--threshold 0.995] [--k 20]

When fewer than ``min_cases`` cases reach the threshold (CASPER: none), retrieval takes the
``k`` most similar. Two ways to find them, timed side by side on the same queries and checked
equal on every one (count, top ids and similarities bit for bit):

- **cascade** (``CaseIndex.aggregate`` since 2026-11-30): the grouped scan again at thresholds
  1 - 4(1 - t), 1 - 16(1 - t), ... down to 0.75, keeping its ``k`` most similar, until ``k`` cases
  reach one (else the k-NN search);
- **k-NN** (before): the backend's exact k most similar (faiss seeds, then a range search and
  an exact re-rank), added up with ``aggregate_of``.

Queries are the street's own case rows with hand strength and the potentials moved a little
(N(0, 0.02)), as a bot's situations fall near but not on its cases; only the queries that fall
back are timed. Prints p50 / p99 per query of each and the ratio of the medians.
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
from cbr.retrieval import action_codes  # noqa: E402
from cbr.retrieval.aggregate import aggregate_of, check_labels  # noqa: E402
from cbr.store import CaseBase, resolve_casebase  # noqa: E402
from experiments.common import description, help_format, number, positive_int, seed_int  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--casebase", default="expert", help="a case base name or folder (default: expert)")
    ap.add_argument("--street", default="turn", choices=["preflop", "flop", "turn", "river"],
                    help="the street whose cases are queried (default: turn)")
    ap.add_argument("--queries", type=positive_int, default=300, help="queries that fall back, timed (default: 300)")
    ap.add_argument("--threshold", type=number(0, high=1), default=0.995, help="the retrieval threshold (default: 0.995)")
    ap.add_argument("--k", type=positive_int, default=20, help="fallback_k and min_cases (default: 20)")
    ap.add_argument("--seed", type=seed_int, default=7, help="seed of the queries' draw (default: 7)")
    from native_guard import parse_args

    args = parse_args(ap)
    from cbr.errors import CBRError

    try:
        cb = CaseBase.open(resolve_casebase(args.casebase))
    except CBRError as exc:
        raise SystemExit(f"error: {exc}") from None
    with cb:
        arrays = cb.cases(args.street)
        X, names = arrays.features, arrays.feature_names
        codes = action_codes(arrays.actions)
        index = cb.index(args.street).with_retrieval(threshold=args.threshold, fallback_k=args.k, min_cases=args.k)
    rng = np.random.default_rng(args.seed)
    Q = X[rng.integers(0, X.shape[0], args.queries * 4)].astype(np.float32)
    for name in ("hand_strength", "positive_potential", "negative_potential"):
        if name in names:
            j = names.index(name)
            Q[:, j] = np.clip(Q[:, j] + rng.normal(0.0, 0.02, Q.shape[0]), 0.0, 1.0)
    labels, _ = check_labels(codes, None, X.shape[0])
    backend = index.backend_
    answers = [index.aggregate(q, labels, None, args.k) for q in Q]
    Q = np.array([q for q, a in zip(Q, answers) if a.fallback][: args.queries])
    if not len(Q):
        raise SystemExit("no query falls back: lower --threshold or raise --k")

    def knn(q: np.ndarray):
        ids, sims = backend._knn(q[None, :], args.k)[0]
        return aggregate_of(ids, sims, labels, None, args.k, True)

    times: dict[str, list[float]] = {"cascade": [], "k-NN": []}
    got: dict[str, list] = {"cascade": [], "k-NN": []}
    ways = {"cascade": lambda q: index.aggregate(q, labels, None, args.k), "k-NN": knn}
    for q in Q:  # interleaved, so load changes touch both alike
        for name, fn in ways.items():
            t0 = time.perf_counter()
            got[name].append(fn(q))
            times[name].append(time.perf_counter() - t0)
    for i, (a, b) in enumerate(zip(got["cascade"], got["k-NN"])):
        if not (a.n == b.n and np.array_equal(a.top_ids, b.top_ids) and np.array_equal(a.top_sims, b.top_sims)
                and np.array_equal(a.counts, b.counts)):
            raise SystemExit(f"query {i}: the two ways disagree")
    print(f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}; case base {args.casebase}, "
          f"{args.street} ({counted(X.shape[0], 'case')}), threshold {args.threshold}, k = min_cases = {args.k}; "
          f"{counted(len(Q), 'query', 'queries')} that fall back, every answer equal both ways")
    p = {name: (1e3 * np.percentile(t, 50), 1e3 * np.percentile(t, 99)) for name, t in times.items()}
    for name, (p50, p99) in p.items():
        print(f"  {name:<8} p50 {p50:8.3f} ms  p99 {p99:8.3f} ms")
    print(f"  k-NN / cascade (medians): {p['k-NN'][0] / p['cascade'][0]:.1f}x")


if __name__ == "__main__":
    from native_guard import run

    run(main)
