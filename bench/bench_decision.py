"""Decision latency of the case-based bot on the flop: features + retrieval + re-use, one core.

Run:  python3 bench/bench_decision.py [--decisions 500] [--cases 1000000] [--reuse probabilistic]

Decision points are the flop decisions of generated heads-up hands (random actions),
each a distinct (hole, board) pair, so every decision computes its hand features (hand
strength, exact potentials) from scratch: nothing is served from the feature cache.
Each is timed through ``CBRPolicy.decide`` (``DecisionPoint`` -> features -> retrieval
-> triple -> legal action), against

* the embedded ``default`` case base, and
* a case base whose flop holds ``--cases`` cases drawn from the default case base's flop
  feature distribution (``bench_retrieval.casebase_cases``: real rows, hand features
  smoothed), with those rows' actions, written with ``CaseBaseWriter`` to a temporary
  folder (index built by the writer; the build is timed separately and not counted).

Prints p50/p99 per decision beside the targets (p50 <= 5 ms, p99 <= 20 ms), and the
share of it spent on the features alone (the peer measured in the same run); then both
again for the monotone flops (about 5% of flops, whose exact potentials cost about three
times the others') and the rest.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core: before numpy/faiss load

import argparse  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cbr.game import preset  # noqa: E402
from cbr.game.state import HandState  # noqa: E402
from cbr.play.match import deal_cards  # noqa: E402
from cbr.policies.base import legal_triple, sample_action  # noqa: E402
from cbr.policies.cbr_policy import CBRPolicy  # noqa: E402


def flop_decisions(n: int, seed: int) -> list:
    """``n`` flop decision points with distinct (hole, board), from random heads-up play."""
    game = preset("holdem.limit.2p")
    rng = random.Random(seed)
    out, seen, deal = [], set(), 0
    while len(out) < n:
        holes, board = deal_cards(seed, deal, 2)
        deal += 1
        st = HandState(game, players=["a", "b"], hole_cards=holes)
        while not st.is_over and st.street <= 1:
            if st.needs_board:
                if st.street >= 1:
                    break
                st.deal_board(board[:3])
                continue
            dp = st.decision_point()
            if dp.street == 1:
                key = (tuple(sorted(dp.hole)), tuple(sorted(dp.board)))
                if key not in seen:
                    seen.add(key)
                    out.append(dp)
            # mostly passive play so many hands reach the flop
            st.act(sample_action(legal_triple((0.05, 0.75, 0.2), dp.legal), rng))
    return out[:n]


def time_decisions(bot: CBRPolicy, dps: list) -> tuple[list[float], list[float], int, list[int]]:
    """Per decision: total seconds, seconds of the features alone (fresh feature cache),
    fallbacks, and the number of cases each decision retrieved."""
    from features.casper import CasperFeatures

    rng = random.Random(0)
    bot.decide(dps[-1], rng)  # warm-up: open the case base, load the flop index
    peer = CasperFeatures()
    total, feats, fallbacks, hits = [], [], 0, []
    for dp in dps[:-1]:
        t0 = time.perf_counter()
        d = bot.decide(dp, rng)
        total.append(time.perf_counter() - t0)
        fallbacks += d.fallback
        hits.append(d.retrieved)
        t0 = time.perf_counter()
        peer.row(dp)
        feats.append(time.perf_counter() - t0)
    return total, feats, fallbacks, hits


def pct(ts: list[float]) -> tuple[float, float]:
    a = np.asarray(ts) * 1e3
    return float(np.percentile(a, 50)), float(np.percentile(a, 99))


def big_casebase(root: Path, n: int) -> tuple[Path, float]:
    """A case base of ``n`` flop cases (default case base's distribution) and its build seconds."""
    from bench_retrieval import casebase_cases

    from cbr.store import CaseBase, resolve_casebase
    from cbr.store.writer import CaseBaseWriter

    X = casebase_cases(n, seed=1)
    cb = CaseBase.open(resolve_casebase("default"))
    try:  # the same draw as casebase_cases (seed 1: its first call on the generator) gives the rows' actions
        actions = cb.cases("flop").actions
        rows = np.random.default_rng(1).integers(0, len(actions), n)
        pre = cb.cases("preflop")
    finally:
        cb.close()
    path = root / "flop-1m"
    t0 = time.perf_counter()
    with CaseBaseWriter(path, part_rows=n) as w:
        w.add_rows("preflop", pre.features, list(pre.actions))
        w.add_rows("flop", X, list(actions[rows]))
    return path, time.perf_counter() - t0


def monotone(dp) -> bool:
    """Whether the flop's three cards share a suit (their exact potential costs most: every
    runout with a third card of the suit makes many holdings flush)."""
    return len({c & 3 for c in dp.board[:3]}) == 1


def report(label: str, total: list[float], feats: list[float], fallbacks: int, hits: list[int],
           dps: list | None = None) -> None:
    p50, p99 = pct(total)
    f50, f99 = pct(feats)
    print(f"{label:34s} {p50:8.2f} {p99:8.2f}   features alone {f50:6.2f} {f99:6.2f}   "
          f"fell back to top-k: {fallbacks}/{len(total)}   retrieved (median) {int(statistics.median(hits)):,}")
    if dps:
        mono = [i for i, dp in enumerate(dps[:len(total)]) if monotone(dp)]
        rest = [i for i in range(len(total)) if i not in set(mono)]
        for name, idx in (("monotone flops", mono), ("other flops", rest)):
            if idx:
                d50, d99 = pct([total[i] for i in idx])
                g50, g99 = pct([feats[i] for i in idx])
                print(f"  {name + f' ({len(idx)})':32s} {d50:8.2f} {d99:8.2f}   features alone {g50:6.2f} {g99:6.2f}")


def main() -> None:
    from native_guard import help_format, parse_args, positive_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--decisions", type=positive_int, default=500, help="flop decisions timed against each case base")
    ap.add_argument("--cases", type=positive_int, default=1_000_000, help="flop cases of the generated case base")
    ap.add_argument("--reuse", default="probabilistic", choices=("probabilistic", "max-frequency", "best-outcome"),
                    help="the bot's re-use policy")
    args = parse_args(ap)

    dps = flop_decisions(args.decisions + 1, seed=7)
    print(f"flop decisions: {len(dps) - 1} (distinct hole/board), re-use {args.reuse}, "
          f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}")
    print(f"{'case base':34s} {'p50 ms':>8s} {'p99 ms':>8s}   targets p50 <= 5, p99 <= 20")
    with CBRPolicy(reuse=args.reuse) as bot:
        n_default = bot.open().count("flop")
        report(f"default ({n_default:,} flop cases)", *time_decisions(bot, dps), dps=dps)
    with tempfile.TemporaryDirectory(prefix="bench-decision-") as tmp:
        path, build = big_casebase(Path(tmp), args.cases)
        with CBRPolicy(casebase=str(path), reuse=args.reuse) as bot:
            report(f"generated ({args.cases:,} flop cases)", *time_decisions(bot, dps), dps=dps)
        print(f"(generated case base written and indexed in {build:.1f} s, not counted)")


if __name__ == "__main__":
    from native_guard import run

    run(main)
