"""Issue 18's teacher measured: LBR against training time, then the trained strategy's LBR
and its duplicate results against the house's bots, with 95% CIs.

    python3 experiments/teacher.py --snapshots /tmp/snaps --seed 3 --snapshot-hands 2000 \\
        --hands 20000 --match-hands 10000 --workers 2

1. ``--snapshots DIR`` (strategy files ``strategy-<iterations>.npz`` written by
   ``python -m casebases.build_cfr_emd --snapshots DIR``): LBR of each for
   ``--snapshot-hands`` hands, plotted against its iterations and training seconds.
2. The shipped teacher (``cfr:strategy=emd_256``, plain ``cfr`` until 2026-11-29): LBR over ``--hands`` hands; duplicate matches of
   ``--match-hands`` hands against each opponent of ``--opponents``, ``--workers`` at a time.

Writes ``experiments/scratch/teacher-seed<S>.json``, ``teacher-lbr-seed<S>.png`` and a
Markdown table on stdout. What that file already holds is reused (the snapshots measured with the
same hands, and what a ``--skip`` part or an opponent not played again shows), and a line on
stdout says so, unless ``--redo``. Nothing here was tuned on these seeds: the abstraction's sizes and
the training schedule were fixed before any measurement.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import OUT_FOLDER_HELP, ci_text, duel, finished, out_folder, out_path, write_json  # noqa: E402

from cbr.cfr.policy import SHIPPED_TEACHER  # noqa: E402
from cbr.errors import counted  # noqa: E402
from cbr.exploit.lbr import Variant  # noqa: E402
from cbr.exploit.measure import exploit  # noqa: E402

OPPONENTS = "call,raise,hs,ehs,poki,lag,cfr:strategy=h_hs2_4,cbr:preset=expert"
#: The teacher measured here: the MCCFR strategy as trained (plain ``cfr`` re-solves its river since 2026-11-29).
TEACHER = "cfr:strategy=emd_256"


def snapshot_folders(snaps: Path, work: Path) -> list[tuple[int, Path, dict]]:
    """One strategy folder per snapshot (the shipped abstraction beside each)."""
    out = []
    for f in sorted(snaps.glob("strategy-*.npz"), key=lambda p: int(re.findall(r"\d+", p.name)[0])):
        it = int(re.findall(r"\d+", f.name)[0])
        folder = work / f"s{it}"
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(SHIPPED_TEACHER / "abstraction.npz", folder / "abstraction.npz")
        shutil.copy(f, folder / "strategy.npz")
        import numpy as np

        with np.load(f) as z:
            info = json.loads(str(z["info"]))
        out.append((it, folder, info))
    return out


def plot(points: list[dict], final: dict | None, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    xs = [p["seconds"] / 60 for p in points]
    ys = [p["mbb"] for p in points]
    lo = [p["mbb"] - p["ci"] for p in points]
    hi = [p["mbb"] + p["ci"] for p in points]
    ax.plot(xs, ys, "o-", color="C0", label="MCCFR teacher (LBR, 95% CI band)")
    ax.fill_between(xs, lo, hi, color="C0", alpha=0.2)
    if final is not None:
        ax.errorbar([final["seconds"] / 60], [final["mbb"]], yerr=[final["ci"]], fmt="s", color="C3",
                    label=f"shipped ({counted(final['hands'], 'hand')})")
    ax.axhline(150, color="grey", ls="--", lw=1, label="target 150")
    ax.axhline(254, color="C1", ls=":", lw=1, label="4-bucket cfr:strategy=h_hs2_4 (254 ± 162, yardstick, seed 2)")
    ax.set_xlabel("training time (minutes, two threads)")
    ax.set_ylabel("LBR (mbb/g)")
    ax.set_title("Exploitability of the MCCFR teacher against training time")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    from common import (
        description,
        help_format,
        one_process_stores,
        policy_specs,
        positive_int,
        require_native,
        seed_int,
        worker_pool,
    )

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--snapshots", default="", help="a folder of the training run's strategy snapshots (empty: no LBR against training time)")
    ap.add_argument("--seed", type=seed_int, default=3, help="seed of LBR's deals and the matches")
    ap.add_argument("--snapshot-hands", type=positive_int, default=2000, help="LBR hands per snapshot")
    ap.add_argument("--hands", type=positive_int, default=20000, help="LBR hands against the trained strategy")
    ap.add_argument("--match-hands", type=positive_int, default=10000, help="duplicate hands per match")
    ap.add_argument("--opponents", type=policy_specs(), default=OPPONENTS, help="comma-separated opponents (policy specs)")
    ap.add_argument("--workers", type=positive_int, default=2, help="LBR worker processes")
    ap.add_argument("--skip", default="", help="comma list of parts to skip: snapshots,lbr,matches")
    ap.add_argument("--redo", action="store_true", help="measure everything afresh: reuse nothing of the results file (a part skipped is left out of it)")
    ap.add_argument("--out", type=out_path("folder"), default=None, help=OUT_FOLDER_HELP)
    args = ap.parse_args()
    skip = set(filter(None, (p.strip() for p in args.skip.split(","))))
    parts = ("snapshots", "lbr", "matches")
    if skip - set(parts):  # a usage error, one line, before anything runs
        ap.error(f"argument --skip: {counted(len(skip - set(parts)), 'unknown part')}: "
                 f"{', '.join(sorted(skip - set(parts)))}; "
                 f"choose from: {', '.join(parts)}")
    if args.snapshots and "snapshots" not in skip and not Path(args.snapshots).is_dir():
        ap.error(f"argument --snapshots: {args.snapshots} is not a folder (a training run's strategy snapshots)")
    one_process_stores(ap, args)
    require_native()  # after every usage check: a usage error is one, extensions or not
    results = out_folder(args.out)
    out_json = results / f"teacher-seed{args.seed}.json"
    report = json.loads(out_json.read_text()) if out_json.exists() and not args.redo else {}
    reused: list[str] = []  # what the table shows from out_json, measured by an earlier run

    measured = {"snapshots": 0, "lbr": 0, "matches": 0}  # results this run has written into out_json

    def save() -> None:
        write_json(out_json, report, indent=1)  # the folder with the first result: a run that fails before leaves none

    def written() -> str:
        """What a worker's death leaves: the results this run wrote, and where, or none."""
        n = measured
        done = ([counted(n["snapshots"], "snapshot LBR")] if n["snapshots"] else []) + \
            (["the teacher's LBR"] if n["lbr"] else []) + \
            ([counted(n["matches"], "match", "matches")] if n["matches"] else [])
        if done:
            return f"The results measured by this run ({', '.join(done)}) are in {out_json}."
        return "No result was written" + (f" ({out_json} is as an earlier run left it)." if out_json.exists() else ".")

    report["seed"] = args.seed
    if args.snapshots and "snapshots" not in skip:
        points = [p for p in report.get("snapshots", []) if p.get("hands") == args.snapshot_hands]
        have = {p["iterations"] for p in points}
        with tempfile.TemporaryDirectory() as tmp:
            for it, folder, info in snapshot_folders(Path(args.snapshots), Path(tmp)):
                if it in have:  # measured by an earlier run with the same seed and hands
                    reused.append(f"the LBR of snapshot {it:,}")
                    continue
                t = time.time()
                r = finished(exploit(f"cfr:strategy={folder}", hands=args.snapshot_hands, seed=args.seed,
                                     workers=args.workers, variant=Variant())).to_dict()
                points.append({"iterations": it, "seconds": info["seconds"], "mbb": r["mbb_per_game"],
                               "ci": r["ci95"], "hands": r["hands"], "lbr_seconds": round(time.time() - t)})
                print(f"snapshot {it:,}: {r['mbb_per_game']:.0f} +- {r['ci95']:.0f} mbb/g", file=sys.stderr)
                report["snapshots"] = sorted(points, key=lambda p: p["iterations"])
                save()
                measured["snapshots"] += 1
    if "lbr" not in skip:
        import numpy as np

        t = time.time()
        r = finished(exploit(TEACHER, hands=args.hands, seed=args.seed, workers=args.workers, variant=Variant())).to_dict()
        with np.load(SHIPPED_TEACHER / "strategy.npz") as z:
            info = json.loads(str(z["info"]))
        report["lbr"] = {"mbb": r["mbb_per_game"], "ci": r["ci95"], "hands": r["hands"], "seconds": info["seconds"],
                         "iterations": info["iterations"], "lbr_seconds": round(time.time() - t)}
        print(f"shipped teacher: LBR {r['mbb_per_game']:.0f} +- {r['ci95']:.0f} mbb/g ({counted(r['hands'], 'hand')})",
              file=sys.stderr)
        save()  # now: the matches' workers may die, and an LBR takes hours (it was written only after them)
        measured["lbr"] = 1
    if "matches" not in skip:
        matches = report.get("matches", {})
        opponents = args.opponents
        with worker_pool(args.workers, kept=written) as pool:
            for opp, m in zip(opponents, pool.map(duel, [TEACHER] * len(opponents), opponents, [args.match_hands] * len(opponents),
                                                  [args.seed] * len(opponents))):
                matches[opp] = m
                print(f"cfr vs {opp}: {m['sb_per_hand']:+.3f} ± {ci_text(m['ci'])} sb/h ({counted(m['hands'], 'hand')})",
                      file=sys.stderr)
                report["matches"] = matches
                save()
                measured["matches"] += 1
    save()
    if "lbr" in skip and "lbr" in report:
        reused.append("the LBR")
    old = [opp for opp in report.get("matches", {}) if "matches" in skip or opp not in args.opponents]
    if old:
        reused.append(f"the {counted(len(old), 'match', 'matches')} against {', '.join(old)}")
    if reused:
        print(f"reused {', '.join(reused)} from {out_json}, measured by an earlier run; --redo measures them afresh")
    if report.get("snapshots"):
        plot(report["snapshots"], report.get("lbr"), results / f"teacher-lbr-seed{args.seed}.png")
    print("| measure | result (95% CI) |\n|---|---|")
    if "lbr" in report:
        lb = report["lbr"]
        print(f"| LBR (`cbr exploit cfr`) | {lb['mbb']:.0f} ± {lb['ci']:.0f} mbb/g ({counted(lb['hands'], 'hand')}) |")
    for opp, m in report.get("matches", {}).items():
        print(f"| against `{opp}` | {m['sb_per_hand']:+.3f} ± {ci_text(m['ci'])} sb/h ({counted(m['hands'], 'hand')}) |")
    return 0


if __name__ == "__main__":
    from common import run, so_far

    run(main, so_far("the results measured so far"))
