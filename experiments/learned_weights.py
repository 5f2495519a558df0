"""Hand-picked (CASPER) against learned similarity weights (issue 9, section 9).

    cbr tune default -g 6 --population 6 --folds 3 --max-decisions 1000 --seed 1 --report-seed 2 \\
        -o experiments/results/learned-similarity.toml
    python3 experiments/learned_weights.py [--seed 2] [--hands 4000]

1. Held-out decisions: the k-fold evaluation of ``cbr evaluate`` on seed ``--seed`` (not the
   tuning seed) with both similarity files, paired per decision: the mean difference of the
   clipped log-loss and of accuracy, with 95% CIs.
2. Play: ``cbr`` with each similarity file against the source bots (poki, ehs, lag, hs),
   duplicate heads-up on the same deals; sb/h with 95% CIs and the paired difference per deal.

Writes ``experiments/scratch/learned-weights-seed<S>.json``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cbr.models.predictor import LOG_LOSS_CLIP  # noqa: E402
from cbr.play.match import run_match  # noqa: E402
from cbr.play.measure import SOURCE_BOTS, deal_means, paired_difference  # noqa: E402
from cbr.query.evaluate import evaluate_casebase  # noqa: E402
from cbr.similarity import SimilarityConfig  # noqa: E402
from cbr.stats import Z95  # noqa: E402
from cbr.store import CaseBase, resolve_casebase  # noqa: E402

#: The committed results (the learned similarity read by default; the report goes to --out)
RESULTS = Path(__file__).resolve().parent / "results"  # read only
ACTIONS = "fcr"


def per_decision(ev) -> dict[tuple, tuple[float, float]]:  # noqa: ANN001
    """(street, row, fold) -> (clipped log-loss, correct) of every evaluated decision."""
    out = {}
    for d in ev.decisions:
        p = np.maximum(np.asarray(d["knn"], dtype=np.float64), LOG_LOSS_CLIP)
        p /= p.sum()
        a = ACTIONS.index(d["action"])
        out[(d["street"], d["row"])] = (-math.log(p[a]), float(int(np.argmax(d["knn"])) == a))
    return out


def main() -> None:
    from common import (
        OUT_HELP,
        description,
        finite,
        help_format,
        out_file,
        out_path,
        parse_args,
        positive_int,
        seed_int,
        write_json,
    )

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--seed", type=seed_int, default=2, help="seed of the folds and the matches")
    ap.add_argument("--hands", type=positive_int, default=4000, help="duplicate hands per match")
    ap.add_argument("--learned", default=str(RESULTS / "learned-similarity.toml"), help="the learned similarity weights (TOML)")  # read only
    ap.add_argument("--max-decisions", type=positive_int, default=1000, help="held-out decisions evaluated per fold, at most")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="learned-weights-seed<SEED>.json"))
    args = parse_args(ap)
    learned = SimilarityConfig.from_toml(Path(args.learned))
    cb = CaseBase.open(resolve_casebase("default"))
    evs = {name: evaluate_casebase(cb, folds=3, similarity=cfg, seed=args.seed, max_decisions=args.max_decisions,
                                   ann=False, details=True)
           for name, cfg in (("hand-picked", cb.similarity()), ("learned", learned))}
    cb.close()
    a, b = per_decision(evs["hand-picked"]), per_decision(evs["learned"])
    keys = sorted(set(a) & set(b))
    report: dict = {"seed": args.seed, "learned": args.learned, "held_out": {}, "play": {}}
    for street in ("preflop", "flop", "turn", "river", "all"):
        ks = [k for k in keys if street == "all" or k[0] == street]
        dl = np.array([b[k][0] - a[k][0] for k in ks])
        da = np.array([b[k][1] - a[k][1] for k in ks])
        report["held_out"][street] = {
            "decisions": len(ks),
            "log_loss": [round(float(np.mean([a[k][0] for k in ks])), 4), round(float(np.mean([b[k][0] for k in ks])), 4)],
            "log_loss_diff": [round(float(dl.mean()), 4), round(float(Z95 * dl.std(ddof=1) / math.sqrt(len(dl))), 4)],
            "accuracy": [round(float(np.mean([a[k][1] for k in ks])), 4), round(float(np.mean([b[k][1] for k in ks])), 4)],
            "accuracy_diff": [round(float(da.mean()), 4), round(float(Z95 * da.std(ddof=1) / math.sqrt(len(da))), 4)],
        }
        print(street, report["held_out"][street], file=sys.stderr)
    for opp in SOURCE_BOTS:
        runs = {}
        for name, spec in (("hand-picked", "cbr:preset=expert"), ("learned", f"cbr:preset=expert:similarity={args.learned}")):
            runs[name] = run_match([spec, opp], args.hands, duplicate=True, seed=args.seed, keep_payoffs=True)
        d, ci = paired_difference(deal_means(runs["learned"]), deal_means(runs["hand-picked"]))
        report["play"][opp] = {name: [round(r.players[0].sb_per_hand, 4), finite(r.players[0].sb_ci, 4)]
                               for name, r in runs.items()}
        report["play"][opp]["learned_minus_hand_picked"] = [round(d, 4), finite(ci, 4)]
        print(opp, report["play"][opp], file=sys.stderr)
    out = out_file(args.out, f"learned-weights-seed{args.seed}.json")
    write_json(out, report)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    from common import run

    run(main)
