"""How much can an equilibrium take from always-raise? Exactly, on Kuhn poker and Leduc hold'em.

    python3 experiments/equilibrium_vs_raise.py --seed 1

The teacher takes about a tenth of what a best response takes from always-raise (issue 37's
target asks for more than half). Is that the abstraction's fault, or what equilibrium play
does? In a small game the sequence form (:mod:`cbr.cfr.sequence_form`) answers exactly, with
linear programs:

1. for each weak opponent (always-raise, always-call) and each game: what a best response takes,
   and the least and the most that *any* equilibrium strategy takes, both seats averaged (the
   game value cancels);
2. the frontier: the most a strategy can take when it may be exploitable by ``s`` (a share of
   the best response's take), the exact restricted-Nash-response curve, and the exploitability
   needed to take the target's share (2.0 of 3.697 sb/h: 54%);
3. external-sampling MCCFR (the teacher's C walk) after ``--iterations`` on each game: its take
   and its exploitability, next to the frontier.

Writes ``--out`` (default ``experiments/scratch/equilibrium-vs-raise.json``) and Markdown tables on
stdout. Nothing is sampled except MCCFR (``--seed``); the LPs are exact to HiGHS's tolerance.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import OUT_HELP, environment, out_file, out_path, say, write_json  # noqa: E402

from cbr.errors import counted  # noqa: E402

#: What the issue asks of the teacher against always-raise, as a share of a best response's take
#: (full limit hold'em: 2.0 sb/h of 3.697; Johanson et al. 2011 for the best response).
TARGET_SHARE = 2.0 / 3.697
SLACKS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)


def both_seats(sf, opponent, **kw) -> float:  # noqa: ANN001
    """The mean over the two seats of ``best_against`` (the game value cancels)."""
    return sum(sf.best_against(opponent, p, **kw)[0] for p in (0, 1)) / 2.0


def slack_for(sf, opponent, share: float, top: float) -> float:  # noqa: ANN001
    """The least slack (as a share of ``top``) whose frontier reaches ``share`` of ``top``."""
    lo, hi = 0.0, 1.0
    if both_seats(sf, opponent, slack=hi * top) < share * top:
        return float("inf")
    for _ in range(30):
        mid = (lo + hi) / 2.0
        if both_seats(sf, opponent, slack=mid * top) >= share * top:
            hi = mid
        else:
            lo = mid
    return hi


def mccfr_row(game, sf, opponents: dict, iterations: int, seed: int) -> dict:  # noqa: ANN001
    """MCCFR's average strategy: its take from each opponent and its exploitability."""
    from cbr.cfr.small import SmallMCCFR

    t = SmallMCCFR(game, seed=seed)
    start = time.perf_counter()
    t.run(iterations)
    probs = t.strategy()
    value = sf.game_value()
    xs = [sf.realization(probs, p) for p in (0, 1)]
    gaps = [value - sf.guarantee(xs[0], 0), -value - sf.guarantee(xs[1], 1)]
    row = {"iterations": iterations, "seconds": time.perf_counter() - start, "exploitability": sum(gaps) / 2.0}
    for name, opp in opponents.items():
        row[name] = (sf.take(xs[0], 0, opp) + sf.take(xs[1], 1, opp)) / 2.0
    return row


def main() -> None:
    from common import description, help_format, require_native

    from casebases.build_cfr_emd import number
    from cbr.cfr.sequence_form import SequenceForm, always_call, always_raise
    from cbr.cfr.small import kuhn, leduc

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--seed", type=number(0, int), default=1, help="MCCFR's seed")
    ap.add_argument("--iterations", type=number(1, int), nargs="+", default=[100_000, 1_000_000, 10_000_000],
                    help="MCCFR's iterations, one row each")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="equilibrium-vs-raise.json"))
    args = ap.parse_args()
    require_native()  # after every usage check: a usage error is one, extensions or not
    games = []
    for game in (kuhn(), leduc()):
        sf = SequenceForm.of(game)
        opponents = {"raise": always_raise(game), "call": always_call(game)}
        entry = {"game": game.name, "value": sf.game_value(), "opponents": {}, "mccfr": []}
        for name, opp in opponents.items():
            top = both_seats(sf, opp)
            row = {"best_response": top,
                   "equilibria": [both_seats(sf, opp, slack=0.0, sense="min"), both_seats(sf, opp, slack=0.0)],
                   "frontier": [{"slack_share": s, "take": both_seats(sf, opp, slack=s * top)} for s in SLACKS],
                   "slack_share_for_target": slack_for(sf, opp, TARGET_SHARE, top)}
            entry["opponents"][name] = row
            say(f"{game.name} against {name}: a best response takes {top:.4f}, equilibria "
                f"{row['equilibria'][0]:.4f} to {row['equilibria'][1]:.4f}")
        for it in args.iterations:
            entry["mccfr"].append(mccfr_row(game, sf, opponents, it, args.seed))
            say(f"{game.name}: MCCFR {counted(it, 'iteration')}, exploitability {entry['mccfr'][-1]['exploitability']:.4f}")
        games.append(entry)
    out = out_file(args.out, "equilibrium-vs-raise.json")
    write_json(out, {"seed": args.seed, "target_share": TARGET_SHARE, "games": games, "environment": environment()})
    print("| game | opponent | best response takes | equilibria take (least - most) | share of the best response "
          "| exploitability to take 54% (share of the best response) |")
    print("|---|---|---:|---:|---:|---:|")
    for g in games:
        for name, row in g["opponents"].items():
            top, (lo, hi) = row["best_response"], row["equilibria"]
            print(f"| {g['game']} | {name} | {top:.4f} | {lo:.4f} - {hi:.4f} | {100 * lo / top:.1f}% - "
                  f"{100 * hi / top:.1f}% | {100 * row['slack_share_for_target']:.1f}% |")
    print()
    print("| game | opponent | " + " | ".join(f"s = {100 * s:g}%" for s in SLACKS) + " |")
    print("|---|---|" + "---:|" * len(SLACKS))
    for g in games:
        for name, row in g["opponents"].items():
            top = row["best_response"]
            print(f"| {g['game']} | {name} | " + " | ".join(f"{100 * f['take'] / top:.1f}%" for f in row["frontier"]) + " |")
    print()
    print("| game | MCCFR iterations | exploitability (share of raise's best response) | takes from raise | from call |")
    print("|---|---:|---:|---:|---:|")
    for g in games:
        top_r, top_c = g["opponents"]["raise"]["best_response"], g["opponents"]["call"]["best_response"]
        for m in g["mccfr"]:
            print(f"| {g['game']} | {m['iterations']:,} | {m['exploitability']:.4f} ({100 * m['exploitability'] / top_r:.1f}%) "
                  f"| {m['raise']:.4f} ({100 * m['raise'] / top_r:.1f}%) | {m['call']:.4f} ({100 * m['call'] / top_c:.1f}%) |")
    say(f"wrote {out}")


if __name__ == "__main__":
    from common import run

    run(main)
