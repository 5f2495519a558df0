"""Retrieval on a condensed case base beside the full one it was condensed from.

Run:  python3 bench/bench_condensed.py FULL CONDENSED [--queries 2000] [--repeat 3] [--seed 0]

The queries are the bot's own: per street, the feature rows of a seeded sample of the full
base's cases, voted on (`aggregate_votes`, the grouped scan every decision of the `cbr` bot
makes) one query at a time in each case base, after a warm-up that loads the indexes. Prints
per street the median time per vote on each and the ratio full / condensed, then the total;
also the time to open each base and load its indexes (a bot's start-up).

CONDENSED must be a base ``cbr casebase condense`` wrote from FULL: its manifest's
``extra.condensed_from.path`` names FULL's folder. Another pair (a base built from a log, or one
condensed from another base) is one ``error:`` line, exit 1, before any work: its ratios would
compare two unrelated bases.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cbr.game.gamedef import STREETS  # noqa: E402
from cbr.retrieval import action_codes  # noqa: E402
from cbr.retrieval.aggregate import Labels  # noqa: E402
from cbr.retrieval.triple import aggregate_vote  # noqa: E402
from cbr.store import CaseBase, resolve_casebase  # noqa: E402


def load(path: str) -> tuple[CaseBase, dict, float]:
    t = time.perf_counter()
    cb = CaseBase.open(resolve_casebase(path))
    ready = {}
    for s in STREETS:
        c = cb.cases(s)
        ready[s] = (cb.index(s), Labels(action_codes(c.actions), c.outcomes))
    return cb, ready, time.perf_counter() - t


def check_condensed(full: str, condensed: str) -> None:
    """Raise :class:`CaseBaseError` unless ``condensed``'s manifest says it was condensed from
    ``full`` (``extra.condensed_from.path``, which ``cbr casebase condense`` records: the source's
    folder, resolved)."""
    from cbr.errors import CaseBaseError
    from cbr.store.manifest import read_manifest

    full_path = resolve_casebase(full).resolve()
    manifest = read_manifest(resolve_casebase(condensed))
    origin = manifest.extra.get("condensed_from")
    if not isinstance(origin, dict) or not origin.get("path"):
        built = manifest.extra.get("built_by")
        raise CaseBaseError(f"{condensed} was not condensed from a case base (its manifest has no condensed_from"
                            f"{f'; built by {built}' if built else ''}): give one `cbr casebase condense {full}` wrote")
    if Path(origin["path"]) != full_path:
        raise CaseBaseError(f"{condensed} was condensed from {origin['path']}, not from {full} ({full_path})")


def per_vote(ready: dict, street: str, rows: np.ndarray, repeat: int) -> float:
    index, labels = ready[street]
    best = []
    for _ in range(repeat):
        times = []
        for q in rows:
            t = time.perf_counter()
            aggregate_vote(index, q, labels, weighted=False, top=100)
            times.append(time.perf_counter() - t)
        best.append(float(np.median(times)))
    return min(best)


def main() -> None:
    from native_guard import casebase_name, help_format, parse_args, positive_int, seed_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("full", type=casebase_name, help="the full case base (a name or a folder)")
    ap.add_argument("condensed", type=casebase_name, help="the case base condensed from it")
    ap.add_argument("--queries", type=positive_int, default=2000, help="queries per street: cases of the full base drawn at random")
    ap.add_argument("--repeat", type=positive_int, default=3, help="timed passes over the queries (the best median is kept)")
    ap.add_argument("--seed", type=seed_int, default=0, help="seed of the queries drawn")
    args = parse_args(ap)
    check_condensed(args.full, args.condensed)
    full, ready_full, load_full = load(args.full)
    small, ready_small, load_small = load(args.condensed)
    print(f"{'street':8} {'full cases':>10} {'condensed':>10} {'full us':>9} {'cond us':>9} {'ratio':>6}")
    tot_f = tot_s = 0.0
    rng = np.random.default_rng(args.seed)
    for s in STREETS:
        X = full.cases(s).features
        rows = X[rng.choice(len(X), min(args.queries, len(X)), replace=False)]
        per_vote(ready_full, s, rows[:50], 1)  # warm-up
        per_vote(ready_small, s, rows[:50], 1)
        f = per_vote(ready_full, s, rows, args.repeat)
        c = per_vote(ready_small, s, rows, args.repeat)
        tot_f += f
        tot_s += c
        print(f"{s:8} {full.count(s):>10} {small.count(s):>10} {f * 1e6:>9.1f} {c * 1e6:>9.1f} {f / c:>6.2f}")
    print(f"{'all':8} {full.manifest.total_cases:>10} {small.manifest.total_cases:>10} "
          f"{tot_f / 4 * 1e6:>9.1f} {tot_s / 4 * 1e6:>9.1f} {tot_f / tot_s:>6.2f}  (median vote, mean of the streets)")
    print(f"open and load the indexes: full {load_full:.2f} s, condensed {load_small:.2f} s, "
          f"ratio {load_full / load_small:.2f}")
    full.close()
    small.close()


if __name__ == "__main__":
    from native_guard import run

    run(main)
