"""Strength check of the EHS bot: duplicate heads-up matches against the baselines.

    python3 experiments/ehs_strength.py [--hands 20000] [--seed 0]

The EHS bot (``cbr.policies.rules.EHSPolicy`` with its default constants) plays
``--hands`` duplicate hands (every deal twice, seats swapped) against always-call and
always-raise in ACPC heads-up limit (``holdem.limit.2p``). Targets: >= +0.9 sb/h against
always-call and >= +3.0 sb/h against always-raise. The constants were tuned on seed 101
(``experiments/tune_ehs.py``), never on the seed reported here (0).

Prints sb/h and mbb/h with 95% confidence intervals (over per-deal averages) and writes
them to ``experiments/scratch/ehs_strength.json``.
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
from cbr.policies.rules import EHSPolicy  # noqa: E402

TARGETS = {"call": 0.9, "raise": 3.0}


def main() -> None:
    from common import (
        OUT_HELP,
        ci_text,
        finite,
        help_format,
        out_file,
        out_path,
        parse_args,
        positive_int,
        seed_int,
        write_json,
    )

    ap = argparse.ArgumentParser(description="The EHS bot against always-call and always-raise, duplicate heads-up.",
                                 formatter_class=help_format())
    ap.add_argument("--hands", type=positive_int, default=20_000, help="duplicate hands per match")
    ap.add_argument("--seed", type=seed_int, default=0, help="deal seed of the matches")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="ehs_strength.json"))
    args = parse_args(ap)

    bot = EHSPolicy()
    params = {k: v for k, v in vars(bot).items() if not k.startswith("_") and k != "seed"}
    report: dict = {
        "experiment": "EHS bot vs baselines, duplicate heads-up limit hold'em",
        "game": "holdem.limit.2p", "hands": args.hands, "seed": args.seed, "tuning_seed": 101,
        "ehs_params": params, "evaluator": evaluator_ext.IMPLEMENTATION,
        "python": platform.python_version(), "results": {},
    }
    print(f"EHS bot {params}")
    for opponent, target in TARGETS.items():
        t0 = time.perf_counter()
        result = run_match([EHSPolicy(), opponent], args.hands, duplicate=True, seed=args.seed)
        ehs = result.players[0]
        ok = ehs.sb_per_hand >= target
        report["results"][opponent] = {
            "sb_per_hand": round(ehs.sb_per_hand, 4), "sb_ci95": finite(ehs.sb_ci, 4),
            "mbb_per_hand": round(ehs.mbb_per_hand, 1), "mbb_ci95": finite(ehs.mbb_ci, 1),
            "hands": result.hands, "deals": result.deals, "target_sb_per_hand": target,
            "meets_target": ok, "seconds": round(time.perf_counter() - t0, 1),
        }
        print(f"ehs vs {opponent:5s}: {ehs.sb_per_hand:+.3f} ± {ci_text(ehs.sb_ci)} sb/h "
              f"({ehs.mbb_per_hand:+.0f} ± {ci_text(ehs.mbb_ci, '.0f')} mbb/h) over {counted(result.hands, 'hand')} "
              f"[target >= {target:+.1f}: {'met' if ok else 'MISSED'}]", flush=True)
    out = out_file(args.out, "ehs_strength.json")
    write_json(out, report)
    print(f"written to {out}")


if __name__ == "__main__":
    from common import run

    run(main)
