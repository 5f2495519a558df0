"""CFR+ solver speed and memory: the C kernels beside the numpy reference, in the same run.

Run:  python3 bench/bench_cfr.py [--abstraction DIR] [--target 300] [--budget 45]

1. Iterations per second of the C solver (``evaluator_ext._cfr``) and of the pure-numpy
   reference (:mod:`cbr.cfr.reference`) on heads-up limit with 2 buckets per street (a
   random bucket game; the reference is too slow for more), and the ratio C / numpy.
2. Memory: bytes of solver state (float64 regrets + float64 averages) per information set.
3. Heads-up limit with 8 buckets per street (23.6 million information sets): seconds per
   iteration and the time for the average strategy to reach ``--target`` mbb/g of
   exploitability (exact best response, measured every few iterations, its time not
   counted), stopping at ``--budget`` seconds of training. The bucket game is
   ``--abstraction DIR``'s (its bucket_game.npz; 8 buckets), else a percentile-HS 8-bucket
   abstraction built here from 40 + 60 random boards (seeds 0 and 1).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from cbr.cfr.solver import Solver  # noqa: E402
from cbr.cfr.testing import random_bucket_game  # noqa: E402
from cbr.cfr.tree import build_tree  # noqa: E402
from cbr.errors import counted  # noqa: E402


def rate(solver: Solver, iterations: int) -> float:
    t = time.perf_counter()
    solver.run(iterations)
    return iterations / (time.perf_counter() - t)


def rss_mb() -> float:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def abstraction_folder(text: str) -> tuple[str, Any, Any]:
    """``--abstraction``'s type: the folder, its 8-bucket abstraction and its bucket game, read
    before any work (a folder without them ended the run in a traceback after its first part)."""
    from cbr.abstraction import Abstraction
    from cbr.errors import CBRError

    if not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text}: no such folder (an abstraction folder, made by `cbr abstraction "
                                         f"build` and holding its bucket_game.npz)")
    try:
        a = Abstraction.load(text, n_buckets=8)
        return text, a, a.load_bucket_game(text)
    except CBRError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main() -> int:
    from native_guard import help_format, parse_args, positive_float

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--abstraction", type=abstraction_folder, help="an 8-bucket abstraction directory with bucket_game.npz (default: none: a percentile-HS 8-bucket "
                         "abstraction built here from 40 + 60 random boards)")
    ap.add_argument("--target", type=positive_float, default=300.0, help="exploitability to reach, mbb/g")
    ap.add_argument("--budget", type=positive_float, default=45.0, help="training seconds at most (8 buckets)")
    args = parse_args(ap)

    tree = build_tree("holdem.limit.2p")
    small = random_bucket_game(2, seed=0)
    c = Solver(tree, small)
    py = Solver(tree, small, native=False)
    rc, rp = rate(c, 40), rate(py, 2)
    print(f"limit, 2 buckets ({tree.info_sets(2):,} information sets):")
    print(f"  C solver      {rc:10.1f} iterations/s")
    print(f"  numpy ref.    {rp:10.3f} iterations/s")
    print(f"  ratio C/numpy {rc / rp:10.0f}x")
    for n in (2, 4, 8):
        info = tree.info_sets(n)
        size = tree.layout(n)[1]
        print(f"  {counted(n, 'bucket')}: {info:,} information sets, {counted(size, 'entry', 'entries')}, "
              f"{16 * size / info:.1f} bytes per information set ({16 * size / 2**20:,.0f} MiB)")

    from cbr.abstraction import Abstraction

    if args.abstraction:
        source, a, game = args.abstraction
    else:
        t = time.perf_counter()
        a = Abstraction.build("percentile", "hs", n_buckets=8, samples=40, seed=0)
        game = a.bucket_game(60, seed=1)
        source = f"p_hs, 8 buckets, built here in {time.perf_counter() - t:.0f} s"
    s = Solver(tree, game)
    print(f"limit, 8 buckets ({tree.info_sets(8):,} information sets; bucket game: {source}):")
    trained = 0.0
    reached = None
    step = 1
    while trained < args.budget:
        t = time.perf_counter()
        s.run(step)
        trained += time.perf_counter() - t
        e = s.exploitability()
        print(f"  {counted(s.iteration, 'iteration'):>16}  {trained:6.1f} s  exploitability {e:9.1f} mbb/g", flush=True)
        if e <= args.target:
            reached = trained
            break
        step = min(2 * step, 8)
    print(f"  {trained / s.iteration:.2f} s per iteration; peak memory {rss_mb():,.0f} MiB")
    if reached is None:
        print(f"  {args.target:g} mbb/g not reached within {args.budget:g} s")
    else:
        print(f"  reached {args.target:g} mbb/g after {counted(s.iteration, 'iteration')}, {reached:.1f} s of training")
    return 0


if __name__ == "__main__":
    from native_guard import run

    run(main)
