"""Hand potentials (Poki's 3x3 tables, hence CASPER's HS/PPOT/NPOT) of every holding of a
flop or turn: the all-holdings kernel beside one hole at a time and the old batch.

Each board is timed three ways in the same run (then medians over the boards and the
ratios of the medians):

- ``board_potential_tables(board)``: every holding at once (per runout every holding is
  valued once and the opponents are counted by dominance, card removal by per-card counts);
- singles: ``potential_table(hole, board)`` for each holding, one call each;
- old batch: ``potential_tables(holes, board)`` with all the holdings (the shared
  enumeration, which was what ``CasperFeatures.prepare`` used for every batch);

and the three tables are checked equal for every holding. Then the crossover that sets
``features.casper.BOARD_BATCH_MIN``: for a few batch sizes, the per-hole paths on the same
number of random holes of one board against the all-holdings kernel. The load average is
printed (the machine is shared): quote the ratios, not the absolute times.

    python3 bench/bench_potentials.py [--flops 3] [--turns 5] [--seed 1]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from itertools import combinations
from pathlib import Path

from cbr.errors import counted

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

try:
    from evaluator_ext import _native  # noqa: E402
except ImportError:  # not built: main() stops at its check, after the arguments
    _native = None


def timed(fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def best_of(fn, rounds: int = 3) -> float:  # type: ignore[no-untyped-def]
    return min(timed(fn)[0] for _ in range(rounds))


def holdings_off(board: tuple[int, ...]) -> list[tuple[int, int]]:
    return list(combinations(sorted(set(range(52)) - set(board)), 2))


def all_holdings(boards: list[tuple[int, ...]], name: str) -> None:
    """Times of the three paths per board; prints medians and ratios."""
    new_t, single_t, old_t = [], [], []
    for board in boards:
        holes = holdings_off(board)
        t, new = timed(lambda: _native.board_potential_tables(board))
        new_t.append(t)
        t, single = timed(lambda: [_native.potential_table(h, board) for h in holes])
        single_t.append(t)
        t, old = timed(lambda: _native.potential_tables(holes, board))
        old_t.append(t)
        if [h for h, _ in new] != holes or [x for _, x in new] != single or single != old:
            raise SystemExit(f"tables differ on board {board}")
    n, s, o = (statistics.median(x) * 1e3 for x in (new_t, single_t, old_t))
    print(f"{name}: {counted(len(boards), 'board')} x {counted(len(holdings_off(boards[0])), 'holding')}, medians (tables equal: yes)")
    print(f"  board_potential_tables (all at once): {n:8.1f} ms")
    print(f"  potential_table one hole at a time:   {s:8.1f} ms   ({s / n:5.1f}x the all-holdings kernel)")
    print(f"  potential_tables, old batch:          {o:8.1f} ms   ({o / n:5.1f}x)")


def crossover(board: tuple[int, ...], sizes: list[int], rng: random.Random) -> None:
    kernel = best_of(lambda: _native.board_potential_tables(board)) * 1e3
    print(f"  per-hole paths for n random holes of one board, best of 3 (the all-holdings kernel: {kernel:.1f} ms):")
    for n in sizes:
        holes = rng.sample(holdings_off(board), n)
        ts = best_of(lambda: [_native.potential_table(h, board) for h in holes])
        tb = best_of(lambda: _native.potential_tables(holes, board))
        print(f"    n={n:4d}: one at a time {ts * 1e3:7.1f} ms, old batch {tb * 1e3:7.1f} ms")


def main() -> None:
    from native_guard import help_format, parse_args, positive_int, seed_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--flops", type=positive_int, default=3, help="random flops timed")
    ap.add_argument("--turns", type=positive_int, default=5, help="random turns timed")
    ap.add_argument("--seed", type=seed_int, default=1, help="seed of the boards drawn")
    args = parse_args(ap)
    rng = random.Random(args.seed)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    _native.board_potential_tables((0, 1, 2))  # warm-up
    flops = [tuple(rng.sample(range(52), 3)) for _ in range(args.flops)]
    turns = [tuple(rng.sample(range(52), 4)) for _ in range(args.turns)]
    all_holdings(flops, "flop")
    crossover(flops[0], [10, 30, 60, 90, 120, 150], rng)
    all_holdings(turns, "turn")
    crossover(turns[0], [10, 30, 60, 90, 120, 150], rng)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    from native_guard import run

    run(main)
