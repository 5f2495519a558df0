"""Benchmark card abstractions: metric kernels, build time per bucketing, bucket lookup per street.

Each figure stands beside a peer measured in the same run:

- metrics of every holding on one board: the native all-holdings kernel
  (``abs_board_metrics``) against the plain way, one holding at a time through the
  evaluator's exact enumeration (``win_probability(exact=True)``, itself C; on the flop
  timed on 40 holdings and scaled to the 1176), and on the river against a pure-numpy peer
  (``evaluate_batch`` of every holding, then a 1081 x 1081 comparison with card removal);
- build: ``Abstraction.build`` of each kind and metric from ``--samples`` boards, with the
  per-board metric cache emptied first (every build pays for its boards);
- lookup: ``bucket_sequence`` per street on a board seen before (table lookups plus a
  searchsorted per street so far), against the peer that computes the holding's metric on
  every street so far by the evaluator (one holding, exact) and searchsorts;
- the bucket game of ``--samples`` boards.

    python3 bench/bench_abstraction.py --samples 20
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import evaluator_ext as ev  # noqa: E402
from cbr.abstraction import Abstraction, metrics  # noqa: E402
from cbr.errors import counted  # noqa: E402
from evaluator_ext import combo_cards  # noqa: E402

try:
    from evaluator_ext import _native
except ImportError:  # not built: main() stops at its check, after the arguments
    _native = None


def timed(fn, repeat: int = 1) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def numpy_river(board: tuple[int, ...]) -> np.ndarray:
    """River HS of every live holding, pure numpy over evaluate_batch (the peer)."""
    live = [i for i in range(1326) if not set(combo_cards(i)) & set(board)]
    cards = np.array([combo_cards(i) for i in live])
    values = ev.evaluate_batch(np.hstack([cards, np.tile(board, (len(live), 1))]).astype(np.uint8))
    disjoint = ~((cards[:, None, 0] == cards[None, :, 0]) | (cards[:, None, 0] == cards[None, :, 1])
                 | (cards[:, None, 1] == cards[None, :, 0]) | (cards[:, None, 1] == cards[None, :, 1]))
    score = (values[:, None] > values[None, :]) + 0.5 * (values[:, None] == values[None, :])
    out = np.full(1326, -1.0)
    out[live] = (score * disjoint).sum(axis=1) / disjoint.sum(axis=1)
    return out


def main() -> int:
    from native_guard import help_format, parse_args, positive_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--samples", type=positive_int, default=20, help="boards per build and for the bucket game")
    args = parse_args(ap)
    rng = np.random.default_rng(7)
    board = tuple(int(c) for c in rng.permutation(52)[:5])
    hs, hs2 = np.empty(1326), np.empty(1326)
    values = np.empty(1326, dtype=np.int32)
    live = [i for i in range(1326) if not set(combo_cards(i)) & set(board)]
    print("| metrics of every holding | native kernel | peer | peer / kernel |")
    print("|---|---|---|---|")
    k = timed(lambda: _native.abs_river_all(board, hs, values), 50)
    p = timed(lambda: numpy_river(board), 3)
    assert np.allclose(numpy_river(board), hs)
    print(f"| river (1081 holdings), peer: numpy | {k * 1e3:.2f} ms | {p * 1e3:.1f} ms | {p / k:.0f}x |")
    k = timed(lambda: _native.abs_board_metrics(board[:4], hs, hs2), 10)
    turn_live = [i for i in range(1326) if not set(combo_cards(i)) & set(board[:4])]
    p = timed(lambda: [ev.win_probability(combo_cards(i), board[:4], exact=True) for i in turn_live]
              + [ev.hand_strength_squared(combo_cards(i), board[:4]) for i in turn_live])
    print(f"| turn (1128 holdings, HS and HS^2), peer: evaluator per holding | {k * 1e3:.1f} ms | {p * 1e3:.0f} ms "
          f"| {p / k:.0f}x |")
    k = timed(lambda: _native.abs_board_metrics(board[:3], hs, hs2), 3)
    few = [i for i in range(1326) if not set(combo_cards(i)) & set(board[:3])][:40]
    p = timed(lambda: [ev.win_probability(combo_cards(i), board[:3], exact=True) for i in few]) * 1176 / len(few)
    print(f"| flop (1176 holdings, HS and HS^2), peer: evaluator per holding, HS only | {k * 1e3:.0f} ms "
          f"| {p:.1f} s | {p / k:.0f}x |")
    del live

    print()
    print(f"| bucketing | build from {counted(args.samples, 'board')} | thresholds per street |")
    print("|---|---|---|")
    built = {}
    for kind in ("uniform", "percentile", "minmax", "history"):
        for metric in ("hs", "hs2"):
            metrics._cache.clear()
            start = time.perf_counter()
            a = Abstraction.build(kind, metric, n_buckets=8, samples=args.samples, seed=1)
            built[a.name] = a
            shapes = "x".join(str(t.size) for t in a.thresholds)
            print(f"| {a.name} | {time.perf_counter() - start:.2f} s | {shapes} |")

    print()
    print("| lookup (h_hs2) | bucket_sequence, board seen before | peer: evaluator metric + searchsorted | ratio |")
    print("|---|---|---|---|")
    a = built["h_hs2"]
    hole = combo_cards([i for i in range(1326) if not set(combo_cards(i)) & set(board)][100])
    peers = {
        0: lambda: np.searchsorted(a.thresholds[0], metrics.preflop_metrics()[1][ev.combo_index(*hole)]),
        1: lambda: np.searchsorted(a.thresholds[1][0], np.mean([
            (lambda r: r[0] + r[1] / 2)(ev.win_probability(hole, board[:3] + (t,), exact=True)) ** 2
            for t in range(52) if t not in board[:3] + hole])),
        2: lambda: np.searchsorted(a.thresholds[2][0], ev.hand_strength_squared(hole, board[:4])),
        3: lambda: np.searchsorted(a.thresholds[3][0], ev.hand_strength(hole, board) ** 2),
    }
    for street, n in enumerate((0, 3, 4, 5)):
        a.bucket_sequence(hole, board[:n])  # warm the board's table
        k = timed(lambda: a.bucket_sequence(hole, board[:n]), 2000)
        # the peer computes the same sequence: every street so far
        p = sum(timed(peers[s], 3 if s == 1 else 200) for s in range(street + 1))
        name = ("pre-flop", "flop", "turn", "river")[street]
        print(f"| {name} | {k * 1e6:.0f} us | {p * 1e6:.0f} us | {p / k:.1f}x |")
    first = timed(lambda: (metrics._cache.clear(), a.bucket_sequence(hole, board)))
    print(f"| all four streets, new board (cold) | {first * 1e3:.0f} ms | | |")

    print()
    metrics._cache.clear()
    start = time.perf_counter()
    game = a.bucket_game(args.samples, seed=2)
    print(f"bucket game of h_hs2 from {counted(args.samples, 'board')} ({counted(game.description['game_deals'], 'holding')}): "
          f"{time.perf_counter() - start:.1f} s, largest equity standard error {game.description['equity_max_se']}")
    return 0


if __name__ == "__main__":
    from native_guard import run

    run(main)
