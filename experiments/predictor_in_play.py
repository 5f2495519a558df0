"""Poki's neural-network predictor in live play: ``poki-wt`` re-weighting its opponents'
weight tables from the player models (the default) or from the ANN action predictor.

    python3 experiments/predictor_in_play.py [--seed 2] [--hands 4000]

1. The predictor is trained on the default case base's self-play logs
   (``casebases/selfplay/*.log``: the rule bots and simbot, ``cbr train predictor``, seed 0),
   so it has seen the opponents below play (as Poki's networks were trained on an
   opponent's history).
2. ``poki-wt`` and ``poki-wt:predictor=FILE`` play ``--hands`` duplicate heads-up hands
   against each opponent on the same deals (seed ``--seed``); sb/h with 95% CIs over
   per-deal averages and the difference paired by deal.

Nothing is tuned (the mapping from the predicted triple to the re-weighting thresholds is
Poki's), so seed 2 is the only seed run. Writes ``experiments/scratch/predictor_in_play.json``.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cbr.play.match import run_match  # noqa: E402
from cbr.play.measure import deal_means, paired_difference  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OPPONENTS = ("poki", "ehs", "lag", "hs", "simbot")


def train(out: Path, logs: list[str]) -> dict:
    """Train the predictor on ``logs`` and save it to ``out``; returns its report (dict)."""
    from cbr.models.predictor import train_predictor

    _, report = train_predictor(logs, out=out, overwrite=True, folds=5, seed=0)
    return report.to_dict()


def play(bot: str, opponent: str, hands: int, seed: int) -> dict:
    from experiments.common import finite

    t = time.perf_counter()
    r = run_match([bot, opponent], hands, seed=seed, duplicate=True, keep_payoffs=True)
    me = r.players[0]
    return {"sb_per_hand": me.sb_per_hand, "ci": finite(me.sb_ci), "per_deal": deal_means(r),
            "seconds": round(time.perf_counter() - t, 1)}


def markdown(report: dict) -> str:
    from experiments.common import ci_text

    lines = ["| opponent | poki-wt, player models (sb/h ± 95%) | poki-wt, ANN predictor | predictor - models, paired by deal |",
             "|---|---|---|---|"]
    for opponent, row in report["results"].items():
        cells = [f"{row[k]['sb_per_hand']:+.3f} ± {ci_text(row[k]['ci'])}" for k in ("models", "predictor", "difference")]
        lines.append(f"| {opponent} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    from experiments.common import (
        OUT_HELP,
        ci_text,
        description,
        finite,
        help_format,
        out_file,
        out_path,
        parse_args,
        policy_specs,
        positive_int,
        seed_int,
        write_json,
    )

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--seed", type=seed_int, default=2, help="deal seed of the matches")
    ap.add_argument("--hands", type=positive_int, default=4000, help="duplicate hands per match")
    ap.add_argument("--opponents", type=policy_specs(), default=",".join(OPPONENTS), help="comma-separated opponents (policy specs)")
    ap.add_argument("--logs", nargs="*", default=None, help="logs to train on (default: casebases/selfplay/*.log)")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="predictor_in_play.json"))
    args = parse_args(ap, argv)
    logs = args.logs if args.logs is not None else sorted(str(p) for p in (ROOT / "casebases" / "selfplay").glob("*.log"))
    t0 = time.perf_counter()
    args.out = out_file(args.out, "predictor_in_play.json")
    with tempfile.TemporaryDirectory() as tmp:  # the predictor is the run's own: never left beside the result
        predictor = Path(tmp) / args.out.with_suffix(".ann").name
        trained = train(predictor, logs)
        results = {}
        for opponent in args.opponents:
            models = play("poki-wt", opponent, args.hands, args.seed)
            ann = play(f"poki-wt:predictor={predictor}", opponent, args.hands, args.seed)
            mean, ci = paired_difference(ann["per_deal"], models["per_deal"])
            results[opponent] = {"models": models, "predictor": ann, "difference": {"sb_per_hand": mean, "ci": finite(ci)}}
            print(f"{opponent:7s} models {models['sb_per_hand']:+.3f} ± {ci_text(models['ci'])}   predictor "
                  f"{ann['sb_per_hand']:+.3f} ± {ci_text(ann['ci'])}   difference {mean:+.3f} ± {ci_text(ci)}", file=sys.stderr,
                  flush=True)
    shown = [str(Path(p).resolve().relative_to(ROOT)) if Path(p).resolve().is_relative_to(ROOT) else str(p)
             for p in logs]
    report = {"seed": args.seed, "hands": args.hands, "logs": shown,
              "predictor_accuracy": trained.get("overall", {}).get("accuracy"),
              "results": {o: {k: {kk: vv for kk, vv in v.items() if kk != "per_deal"} for k, v in row.items()}
                          for o, row in results.items()},
              "seconds": round(time.perf_counter() - t0, 1)}
    write_json(args.out, report)
    print(markdown(report))
    return report


if __name__ == "__main__":
    from common import run

    run(main)
