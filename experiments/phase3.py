"""Does Phase III beat Phase II? The Waterloo report's finding (section 4.1), duplicate heads-up.

    python3 experiments/phase3.py [--hands 20000] [--tune-hands 10000] [--tune-seed 1] [--seed 2]

The Phase III bots (``phase3`` = Conservative, ``phase3-aggressive`` = Aggressive;
:mod:`cbr.policies.phase3`) start every match knowing nothing and learn the showdown model
of their opponent during it. Each plays ``--hands`` duplicate hands (every deal twice,
seats swapped) of ACPC heads-up limit (``holdem.limit.2p``) against the Phase II ``ehs``
bot with its default constants. One setting is tuned, on ``--tune-seed`` only: whether the
model is also used before the flop (``preflop``). The chosen setting is then reported on
``--seed``, never used for tuning; last, Aggressive against Conservative (section 4.3).

Prints sb/h with 95% confidence intervals (over per-deal averages) and writes
``experiments/scratch/phase3.json``.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import evaluator_ext  # noqa: E402
from cbr.errors import counted  # noqa: E402
from cbr.play.match import run_match  # noqa: E402
from cbr.policies.phase3 import MIN_SAMPLES, Phase3Policy  # noqa: E402
from cbr.policies.rules import EHSPolicy  # noqa: E402


def play(variant: str, preflop: bool, hands: int, seed: int, opponent: str = "ehs",
         opponent_preflop: bool = False) -> dict:
    from common import finite

    bot = Phase3Policy(variant=variant, preflop=preflop)
    other = EHSPolicy() if opponent == "ehs" else Phase3Policy(variant=opponent, preflop=opponent_preflop)
    t0 = time.perf_counter()
    result = run_match([bot, other], hands, duplicate=True, seed=seed)
    me = result.players[0]
    return {"variant": variant, "preflop": preflop, "opponent": opponent, "seed": seed,
            "opponent_preflop": opponent_preflop if opponent != "ehs" else None,
            "sb_per_hand": round(me.sb_per_hand, 4), "sb_ci95": finite(me.sb_ci, 4),
            "mbb_per_hand": round(me.mbb_per_hand, 1), "hands": result.hands, "deals": result.deals,
            "model_share": round(bot.model_decisions / max(1, bot.decisions), 3),
            "seconds": round(time.perf_counter() - t0, 1)}


def show(row: dict) -> None:
    from common import ci_text

    if row["sb_ci95"] is None:  # a match too short for a CI
        verdict = "too few hands to compare with"
    else:
        lo, hi = row["sb_per_hand"] - row["sb_ci95"], row["sb_per_hand"] + row["sb_ci95"]
        verdict = "beats" if lo > 0 else "loses to" if hi < 0 else "no significant difference with"
    print(f"seed {row['seed']} {row['variant']:12s} preflop={str(row['preflop']):5s} vs {row['opponent']:12s}: "
          f"{row['sb_per_hand']:+.3f} ± {ci_text(row['sb_ci95'])} sb/h over {counted(row['hands'], 'hand')} "
          f"(model decided {row['model_share']:.0%} of decisions; {verdict} it) [{row['seconds']}s]", flush=True)


def main() -> None:
    from common import OUT_HELP, help_format, out_file, out_path, positive_int, require_native, seed_int, write_json

    ap = argparse.ArgumentParser(description="Phase III (the showdown model) against Phase II (ehs), duplicate heads-up.",
                                 formatter_class=help_format())
    ap.add_argument("--hands", type=positive_int, default=20_000, help="duplicate hands per reported match")
    ap.add_argument("--tune-hands", type=positive_int, default=10_000, help="duplicate hands per tuning match")
    ap.add_argument("--tune-seed", type=seed_int, default=1, help="deal seed of the tuning matches")
    ap.add_argument("--seed", type=seed_int, default=2, help="deal seed of the reported matches")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="phase3.json"))
    args = ap.parse_args()
    if args.seed == args.tune_seed:
        ap.error("the reported seed must differ from the tuning seed")
    require_native()  # after every usage check: a usage error is one, extensions or not

    report: dict = {"experiment": "Phase III vs Phase II (ehs), duplicate heads-up limit hold'em",
                    "game": "holdem.limit.2p", "min_samples": MIN_SAMPLES, "tune_seed": args.tune_seed,
                    "seed": args.seed, "evaluator": evaluator_ext.IMPLEMENTATION,
                    "python": platform.python_version(), "tuning": [], "results": []}
    chosen: dict[str, bool] = {}
    for variant in ("conservative", "aggressive"):
        rows = []
        for preflop in (False, True):
            row = play(variant, preflop, args.tune_hands, args.tune_seed)
            show(row)
            rows.append(row)
        best = max(rows, key=lambda r: r["sb_per_hand"])
        chosen[variant] = best["preflop"]
        report["tuning"].extend(rows)
    report["chosen_preflop"] = chosen
    print(f"chosen on seed {args.tune_seed}: {chosen}")
    for variant in ("conservative", "aggressive"):
        row = play(variant, chosen[variant], args.hands, args.seed)
        show(row)
        report["results"].append(row)
    row = play("aggressive", chosen["aggressive"], args.hands, args.seed, opponent="conservative",
               opponent_preflop=chosen["conservative"])
    show(row)
    report["results"].append(row)
    out = out_file(args.out, "phase3.json")
    write_json(out, report)
    print(f"written to {out}")


if __name__ == "__main__":
    from common import run

    run(main)
