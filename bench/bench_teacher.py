"""The MCCFR teacher's speed (issue 18): bucketing, decisions and training, each beside a peer.

Run:  python3 bench/bench_teacher.py [--decisions 2000] [--boards 1] [--full-tables]

1. Bucketing a board (every holding's river-HS histogram over the runouts, then the
   nearest centre): the C kernel (``evaluator_ext._mccfr``) beside a numpy peer that
   evaluates the same runouts with the evaluator's batch call and sorts in numpy, on
   ``--boards`` flops and turns; the ratio. ``--full-tables`` also times building every
   canonical flop's and turn's table (1,755 + 16,432 boards, two threads: minutes).
2. Decision time of the ``cfr`` bot through ``Policy.act``: the shipped MCCFR teacher
   (a table lookup per street, each board's buckets computed once per hand) beside the
   4-bucket CFR+ strategy (``cfr:strategy=h_hs2_4``, bucket sequences from HS^2 over the
   runouts), mean, median and p99 over the decisions of random heads-up hands (a board's
   buckets are computed at its first decision, later ones are lookups); the ratio of the means.
3. MCCFR iterations per second on one and two threads (the shipped abstraction).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cbr.abstraction import distribution as D  # noqa: E402
from cbr.cfr.policy import SHIPPED_TEACHER  # noqa: E402
from cbr.errors import counted  # noqa: E402


def numpy_histograms(board: tuple[int, ...], n_bins: int) -> np.ndarray:
    """The peer: the same histograms with evaluate_batch and numpy (card removal exact)."""
    import evaluator_ext as ev

    hist = np.zeros((1326, n_bins), dtype=np.int64)
    rest = [c for c in range(52) if c not in board]
    runouts = [(t, r) for i, t in enumerate(rest) for r in rest[i + 1:]] if len(board) == 3 else [(t,) for t in rest]
    for extra in runouts:
        full = board + extra
        left = [c for c in range(52) if c not in full]
        pairs = np.array([(a, b) for i, a in enumerate(left) for b in left[i + 1:]])
        cards = np.concatenate([pairs, np.tile(full, (len(pairs), 1))], axis=1).astype(np.uint8)
        v = np.asarray(ev.evaluate_batch(cards))
        combos = pairs[:, 1] * (pairs[:, 1] - 1) // 2 + pairs[:, 0]
        # wins/ties by exact enumeration against the holdings sharing no card: a matrix
        clash = (pairs[:, None, 0] == pairs[None, :, 0]) | (pairs[:, None, 0] == pairs[None, :, 1]) | \
                (pairs[:, None, 1] == pairs[None, :, 0]) | (pairs[:, None, 1] == pairs[None, :, 1])
        win = ((v[:, None] > v[None, :]) & ~clash).sum(axis=1)
        tie = ((v[:, None] == v[None, :]) & ~clash).sum(axis=1)
        hs = (win + 0.5 * tie) / 990.0
        bins = np.minimum((hs * n_bins).astype(int), n_bins - 1)
        np.add.at(hist, (combos, bins), 1)
    return hist


def decisions(n: int, seed: int) -> list:
    from cbr.game import preset
    from cbr.play.table import dealt_decisions

    game = preset("holdem.limit.2p")
    rng = np.random.default_rng(seed)
    out, deal = [], 0
    while len(out) < n:
        for s, dp in dealt_decisions(game, seed, deal):
            out.append(dp)
            s.act("c" if "r" not in dp.legal or rng.random() < 0.7 else "r")
        deal += 1
    return out[:n]


def time_decisions(spec: str, points: list) -> tuple[float, float, float]:
    import random

    from cbr.policies.spec import policy_from_spec

    bot = policy_from_spec(spec, seed=1)
    # load the strategy and the canonical-board maps (once per process; not timed) of each street the
    # decisions reach (a few decisions may not reach the river: that was a StopIteration)
    for street in sorted({dp.street for dp in points}):
        bot.act(next(dp for dp in points if dp.street == street), random.Random(0))
    times = []
    for dp in points:
        t = time.perf_counter()
        bot.act(dp, random.Random(0))
        times.append(time.perf_counter() - t)
    times.sort()
    return statistics.median(times) * 1e3, times[int(0.99 * (len(times) - 1))] * 1e3, statistics.fmean(times) * 1e3


def main() -> int:
    from native_guard import help_format, parse_args, positive_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--decisions", type=positive_int, default=2000, help="decisions of random hands timed per bot")
    ap.add_argument("--boards", type=positive_int, default=1, help="flops and turns bucketed by both kernels (the median is kept)")
    ap.add_argument("--full-tables", action="store_true",
                    help="also time the tables of every canonical flop and turn (two threads: minutes)")
    args = parse_args(ap)
    a = D.DistributionAbstraction.load(SHIPPED_TEACHER)
    rng = np.random.default_rng(0)
    print("1. bucketing a board (every holding's histogram over the runouts, 30 bins)")
    for n, name in ((3, "flop"), (4, "turn")):
        c_t, np_t = [], []
        for _ in range(args.boards):
            board = tuple(int(c) for c in rng.choice(52, n, replace=False))
            t = time.perf_counter()
            mine = D.board_histograms(board, a.n_bins)
            c_t.append(time.perf_counter() - t)
            t = time.perf_counter()
            peer = numpy_histograms(board, a.n_bins)
            np_t.append(time.perf_counter() - t)
            assert np.array_equal(mine, peer), "the C kernel and the numpy peer disagree"
        c_m, np_m = statistics.median(c_t), statistics.median(np_t)
        print(f"   {name}: C {c_m * 1e3:.1f} ms, numpy {np_m * 1e3:.0f} ms per board: {np_m / c_m:.0f}x "
              f"(median of {args.boards}; same histograms)")
    if args.full_tables:
        t = time.perf_counter()
        D.DistributionAbstraction.build(a.n_buckets[1], a.n_buckets[2], a.n_buckets[3], n_bins=a.n_bins)
        print(f"   every table (fit + 1,755 flops + 16,432 turns, two threads): {time.perf_counter() - t:.0f} s")
    print(f"2. decision time through Policy.act, {counted(args.decisions, 'decision')} of random hands")
    points = decisions(args.decisions, seed=3)
    new = time_decisions("cfr:strategy=emd_256", points)
    plain = time_decisions("cfr", points)
    old = time_decisions("cfr:strategy=h_hs2_4", points)
    print(f"   cfr:strategy=emd_256 (the MCCFR teacher): mean {new[2]:.3f} ms, median {new[0]:.3f} ms, "
          f"p99 {new[1]:.3f} ms")
    print(f"   cfr (emd_2000, its river re-solved): mean {plain[2]:.3f} ms, median {plain[0]:.3f} ms, "
          f"p99 {plain[1]:.3f} ms")
    print(f"   cfr:strategy=h_hs2_4: mean {old[2]:.3f} ms, median {old[0]:.3f} ms, p99 {old[1]:.3f} ms")
    print(f"   ratio of the means (a board's buckets are computed at its first decision): {old[2] / new[2]:.0f}x")
    print("3. MCCFR iterations per second (the shipped abstraction)")
    from cbr.cfr.mccfr import MCCFRTrainer

    for threads in (1, 2):
        tr = MCCFRTrainer(a, seed=1, threads=threads)
        tr.run(20_000)  # warm
        t = time.perf_counter()
        tr.run(200_000)
        print(f"   {counted(threads, 'thread')}: {200_000 / (time.perf_counter() - t):,.0f} iterations/s")
    return 0


if __name__ == "__main__":
    from native_guard import run

    run(main)
