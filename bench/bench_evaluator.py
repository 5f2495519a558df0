"""Native hand evaluator beside eval7, same process, same inputs.

Run: ``python3 bench/bench_evaluator.py [--quick]``. Prints every figure (median of several
repeats), the target from the spec and the ratio ours/eval7 where eval7 has a peer.
eval7 peers: ``eval7.evaluate`` (one hand per Python call; its only API), its exact range
equity ``py_hand_vs_range_exact`` with all 1326 holdings (on a flop this is HS, the same
quantity as our ``hand_strength``) and its ``py_hand_vs_range_monte_carlo``.
The last section runs two threads at once to show the GIL is released.
"""
from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable
from itertools import combinations

import numpy as np

from cbr.errors import counted

try:
    from evaluator_ext import native
except ImportError:  # not built: main() stops at its check, after the arguments
    native = None

try:
    import eval7
except ImportError:  # pragma: no cover - eval7 is a test dependency
    eval7 = None

RANKS, SUITS = "23456789TJQKA", "cdhs"
DECK_TEXT = [r + s for r in RANKS for s in SUITS]


def median_seconds(fn: Callable[[], object], repeats: int, number: int = 1) -> float:
    """Median over `repeats` of the mean time of `number` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def random_hands(n: int, seed: int = 0) -> np.ndarray:
    """n random 7-card hands (distinct cards within a row), uint8 (n, 7)."""
    rng = np.random.default_rng(seed)
    hands = rng.integers(0, 52, (n, 7), dtype=np.uint8)
    while True:
        s = np.sort(hands, axis=1)
        bad = (np.diff(s, axis=1) == 0).any(axis=1)
        if not bad.any():
            return hands
        hands[bad] = rng.integers(0, 52, (int(bad.sum()), 7), dtype=np.uint8)


def row(name: str, ours: str, peer: str, ratio: str, target: str) -> None:
    print(f"{name:<34} {ours:>16} {peer:>16} {ratio:>9}   {target}")


def fmt_ratio(x: float) -> str:
    return f"{x:.1f}x"


def main() -> None:
    from native_guard import help_format, parse_args

    from casebases import description

    parser = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    parser.add_argument("--quick", action="store_true", help="fewer repeats and smaller inputs")
    args = parse_args(parser)
    repeats = 3 if args.quick else 7
    n_hands = 1_000_000 if args.quick else 4_000_000

    print(f"eval7: {'present' if eval7 else 'MISSING (no peer figures)'}; medians of {counted(repeats, 'repeat')}")
    row("measure", "ours", "eval7", "speedup", "target")
    print("-" * 100)

    # --- evaluate_batch --------------------------------------------------------------
    hands = random_hands(n_hands)
    t = median_seconds(lambda: native.evaluate_batch(hands), repeats)
    ours_rate = n_hands / t
    peer = ratio = "-"
    if eval7:
        cards = [eval7.Card(c) for c in DECK_TEXT]
        sample = [[cards[c] for c in r] for r in hands[:100_000].tolist()]
        ev = eval7.evaluate
        tp = median_seconds(lambda: [ev(h) for h in sample], max(1, repeats // 2))
        peer_rate = len(sample) / tp
        peer, ratio = f"{peer_rate / 1e6:.2f} M/s", fmt_ratio(ours_rate / peer_rate)
    row("evaluate_batch 7 cards", f"{ours_rate / 1e6:.1f} M/s", peer, ratio, ">= 100 M hands/s")

    # --- category_counts ---------------------------------------------------------------
    t = median_seconds(native.category_counts, max(1, repeats // 2))
    row("category_counts (133,784,560)", f"{t:.3f} s", "-", "-", "<= 3 s")

    # --- hand_strength on a flop ----------------------------------------------------------
    hole, board = "AdQc", "3h4cJh"
    t_text = median_seconds(lambda: native.hand_strength(hole, board), repeats, 2000)
    hole_i, board_i = (49, 40), (6, 8, 38)
    t_int = median_seconds(lambda: native.hand_strength(hole_i, board_i), repeats, 2000)
    peer = ratio = "-"
    if eval7:
        full = eval7.HandRange("AA")
        full.hands = [((eval7.Card(a), eval7.Card(b)), 1.0) for a, b in combinations(DECK_TEXT, 2)]
        h7 = [eval7.Card("Ad"), eval7.Card("Qc")]
        b7 = [eval7.Card(c) for c in ("3h", "4c", "Jh")]
        tp = median_seconds(lambda: eval7.py_hand_vs_range_exact(h7, full, b7), repeats, 50)
        peer, ratio = f"{tp * 1e6:.1f} us", fmt_ratio(tp / t_text)
        theirs = eval7.py_hand_vs_range_exact(h7, full, b7)
        print(f"  (same situation: ours HS={native.hand_strength(hole, board):.6f}, eval7 equity={theirs:.6f})")
    row("hand_strength flop, text cards", f"{t_text * 1e6:.1f} us", peer, ratio, "<= 30 us, >= 5x eval7")
    row("hand_strength flop, int cards", f"{t_int * 1e6:.1f} us", "-", "-", "")

    # --- hand_potential ----------------------------------------------------------------
    t = median_seconds(lambda: native.hand_potential(hole, board), repeats, 5)
    row("hand_potential flop (exact)", f"{t * 1e3:.2f} ms", "-", "-", "<= 10 ms")
    t = median_seconds(lambda: native.hand_potential(hole, board + "8d"), repeats, 50)
    row("hand_potential turn (exact)", f"{t * 1e3:.3f} ms", "-", "-", "<= 0.2 ms")
    t = median_seconds(lambda: native.hand_strength_squared(hole, board), repeats, 5)
    row("hand_strength_squared flop", f"{t * 1e3:.2f} ms", "-", "-", "")

    # --- win_probability Monte Carlo -----------------------------------------------------
    trials = 50_000
    t = median_seconds(lambda: native.win_probability("AdQc", trials=trials, exact=False), repeats, 3)
    peer = ratio = "-"
    if eval7:
        h7 = [eval7.Card("Ad"), eval7.Card("Qc")]
        tp = median_seconds(lambda: eval7.py_hand_vs_range_monte_carlo(h7, full, [], trials), repeats, 3)
        peer, ratio = f"{tp * 1e3:.2f} ms", fmt_ratio(tp / t)
    row("win_probability MC 50k, heads-up", f"{t * 1e3:.2f} ms", peer, ratio, "<= 2 ms, >= 2x eval7")
    t = median_seconds(lambda: native.win_probability("AdQc", "3h4cJh", exact=True), repeats, 3)
    row("win_probability exact flop, HU", f"{t * 1e3:.2f} ms", "-", "-", "")

    # --- two threads ---------------------------------------------------------------------
    print()
    print("GIL release: the same two calls one after the other, then in two threads at once")
    big = hands if n_hands >= 4_000_000 else random_hands(4_000_000, seed=1)
    jobs: list[tuple[str, Callable[[], object]]] = [
        ("win_probability MC 1M trials", lambda: native.win_probability("AdQc", trials=1_000_000, exact=False)),
        ("evaluate_batch 4M hands", lambda: native.evaluate_batch(big)),
        ("hand_potential flop x20", lambda: [native.hand_potential(hole, board) for _ in range(20)]),
    ]
    for name, job in jobs:
        job()  # warm up

        def sequential() -> None:
            job()
            job()

        def parallel() -> None:
            threads = [threading.Thread(target=job) for _ in range(2)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()

        ts = median_seconds(sequential, max(3, repeats // 2))
        tpar = median_seconds(parallel, max(3, repeats // 2))
        print(f"  {name:<32} 1 thread x2: {ts * 1e3:8.1f} ms   2 threads: {tpar * 1e3:8.1f} ms   "
              f"speedup {ts / tpar:.2f} (ideal 2.0 on 2 free cores)")

    # A load-independent view: while a long native call runs in a worker thread, how long
    # is this (pure-Python) thread ever stopped? Holding the GIL would stop it for the
    # whole call; releasing it leaves only scheduler-sized gaps.
    print()
    print("GIL release seen from another Python thread (longest stall during the native call):")
    for name, job in [
        ("category_counts()", native.category_counts),
        ("win_probability MC 2M trials", lambda: native.win_probability("AdQc", trials=2_000_000, exact=False)),
    ]:
        span: list[float] = []

        def worker(job: Callable[[], object] = job) -> None:
            span.append(time.perf_counter())
            job()
            span.append(time.perf_counter())

        thread = threading.Thread(target=worker)
        ticks = []
        thread.start()
        while thread.is_alive():
            ticks.append(time.perf_counter())
        thread.join()
        inside = [t for t in ticks if span[0] <= t <= span[1]]
        edges = [span[0], *inside, span[1]]
        stall = max(b - a for a, b in zip(edges, edges[1:]))
        print(f"  {name:<32} call {1e3 * (span[1] - span[0]):8.1f} ms   longest stall {1e3 * stall:7.2f} ms   "
              f"({len(inside):,} Python iterations ran meanwhile)")


if __name__ == "__main__":
    from native_guard import run

    run(main)
