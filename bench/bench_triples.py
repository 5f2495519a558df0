"""Triples for every hidden holding at one spot: one ``decide`` per holding vs the batched
``CBRPolicy.triples`` (what LBR asks a bot for, :mod:`cbr.exploit.lbr`).

Run:  python3 bench/bench_triples.py [--spots 5] [--reuse probabilistic]

For ``--spots`` flop decision points of generated hands (``bench_decision.flop_decisions``),
the cbr bot on the embedded ``default`` case base answers the triple of each of the
holdings that do not clash with the board (1,176 on a flop): once holding by holding
(``bot.triple`` on the decision point with that hole), once in one batch (``bot.triples(dp,
holes)``: the hand features of every holding in one enumeration per board, holdings with the
same feature row retrieved once, one batch of aggregate retrievals). The hand-feature cache is
emptied before each, so neither reuses the other's features; then both again with the features
cached, which leaves retrieval and re-use. Prints triples per second of both, their ratio, and checks that the two give the
same triples.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core: before numpy/faiss load

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402
from itertools import combinations  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_decision import flop_decisions  # noqa: E402

from cbr.errors import counted  # noqa: E402
from cbr.policies.cbr_policy import CBRPolicy  # noqa: E402


def main() -> None:
    from native_guard import help_format, parse_args, positive_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--spots", type=positive_int, default=5, help="flop decision points, each answered for every holding")
    ap.add_argument("--reuse", default="probabilistic", choices=("probabilistic", "max-frequency", "best-outcome"),
                    help="the bot's re-use policy")
    args = parse_args(ap)
    dps = flop_decisions(args.spots, seed=4)
    single_t = batched_t = warm_t = warm_single_t = 0.0
    count, same = 0, 0
    with CBRPolicy(casebase="default", reuse=args.reuse) as bot:
        bot.triples(dps[0], [(0, 1)])  # warm-up: open the case base, load the flop index
        for dp in dps:
            holes = [h for h in combinations(range(52), 2) if not set(h) & set(dp.board)]
            bot._fs.cache.clear()
            t0 = time.perf_counter()
            batched = bot.triples(dp, holes)
            batched_t += time.perf_counter() - t0
            bot._fs.cache.clear()
            t0 = time.perf_counter()
            single = np.array([bot.triple(replace(dp, hole=h)) for h in holes], dtype=float)
            single_t += time.perf_counter() - t0
            t0 = time.perf_counter()   # again, features cached: retrieval and re-use alone
            warm = bot.triples(dp, holes)
            warm_t += time.perf_counter() - t0
            t0 = time.perf_counter()
            for h in holes:
                bot.triple(replace(dp, hole=h))
            warm_single_t += time.perf_counter() - t0
            same += int(np.array_equal(warm, batched))
            count += len(holes)
            same += int(np.allclose(single, batched, rtol=0, atol=1e-12))
    print(f"{args.spots} flop spots x {counted(count // len(dps), 'holding')} = {counted(count, 'triple')}, re-use {args.reuse}, default case base")
    print(f"  one decide per holding: {count / single_t:9,.0f} triples/s")
    print(f"  batched bot.triples:    {count / batched_t:9,.0f} triples/s   ({single_t / batched_t:.1f}x)")
    print(f"  hand features cached (retrieval and re-use alone): one by one {count / warm_single_t:,.0f}, "
          f"batched {count / warm_t:,.0f} triples/s ({warm_single_t / warm_t:.1f}x)")
    print(f"  same triples: {same}/{2 * len(dps)} checks")
    if same != 2 * len(dps):
        raise SystemExit("the batched triples differ from the one-by-one ones")


if __name__ == "__main__":
    from native_guard import run

    run(main)
