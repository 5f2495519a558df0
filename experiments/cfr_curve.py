"""LBR of a long MCCFR run's strategy snapshots against training time, with 95% CI bands (issue 37).

    pip install -e ".[plots]"   # matplotlib, once
    python experiments/cfr_curve.py .cfr-runs/emd_2000 --hands 2000 --seed 40 --workers 1

Every snapshot of ``RUN/snapshots/`` (``strategy-<iterations>.npz``, written by
``python -m casebases.build_cfr_big`` every ``--snapshot-minutes`` of training) is measured by
``cbr exploit``'s LBR (its default, best variant) on the same deals (``--hands``, ``--seed``),
beside the run's own abstraction. Points already in the JSON for the same seed and hands are
kept and not measured again, so the curve grows from session to session; the JSON keeps the
points of other ``--hands`` too (a longer measurement of one snapshot, ``--last 1``), and the
plot shows those of ``--hands``. Writes
``experiments/scratch/cfr-curve-<run>-seed<S>.json`` and ``.png`` (x: training hours, the
trainer's clock, that is the wall time spent training summed over sessions; y: LBR in mbb/g
with its 95% band, below 0 too where the band reaches there; the shipped teacher's 276 ± 48
and the 150 target as lines), says where on stderr, and prints a Markdown table on stdout.
The plot needs matplotlib (the ``plots`` extra): without it the script stops at once, with
one line, before measuring anything.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from cbr.errors import counted

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

#: The shipped teacher's LBR (``experiments/teacher.py``, seed 3, 20,000 hands) and issue 37's target.
TEACHER = (276.0, 48.0)
TARGET = 150.0


def snapshots(run: Path) -> list[tuple[int, Path]]:
    """``(iterations, file)`` of each snapshot of a run folder, in training order."""
    out = []
    for f in (run / "snapshots").glob("strategy-*.npz"):
        stem = f.name[len("strategy-"): -len(".npz")]
        if stem.isdigit():
            out.append((int(stem), f))
    return sorted(out)


def measure(run: Path, snapshot: Path, *, hands: int, seed: int, workers: int) -> dict:
    """LBR of one snapshot (a strategy folder made of it and the run's abstraction)."""
    import numpy as np
    from common import finished

    from cbr.exploit.lbr import Variant
    from cbr.exploit.measure import exploit

    with np.load(snapshot) as z:
        info = json.loads(str(z["info"]))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.symlink((run / "abstraction.npz").resolve(), folder / "abstraction.npz")
        os.symlink(snapshot.resolve(), folder / "strategy.npz")
        t = time.time()
        r = finished(exploit(f"cfr:strategy={folder}", hands=hands, seed=seed, workers=workers, variant=Variant())).to_dict()
    return {"iterations": info["iterations"], "training_hours": info["seconds"] / 3600,
            "cpu_hours": info.get("extra", {}).get("cpu_seconds", 0.0) / 3600, "mbb": r["mbb_per_game"],
            "ci": r["ci95"], "hands": r["hands"], "seed": seed, "lbr_seconds": round(time.time() - t)}


#: The x axis: what ``training_hours`` is.
X_LABEL = "training hours (the trainer's clock: wall time spent training, summed over sessions)"


def plot(points: list[dict], path: Path, *, title: str) -> dict:
    """LBR against training hours with the 95% band, the teacher's LBR and the target; the y
    axis reaches below 0 when a band does (an LBR estimate can). Returns the axes' ranges and
    x label."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5.0))
    xs = [p["training_hours"] for p in points]
    ys = [p["mbb"] for p in points]
    ax.fill_between(xs, [p["mbb"] - p["ci"] for p in points], [p["mbb"] + p["ci"] for p in points], color="C0",
                    alpha=0.2, label="95% CI")
    ax.plot(xs, ys, "o-", color="C0", label=f"LBR of the snapshots ({counted(points[0]['hands'], 'hand')} each)")
    ax.errorbar(xs, ys, yerr=[p["ci"] for p in points], fmt="none", ecolor="C0", alpha=0.6, capsize=3)
    for p in points:
        ax.annotate(f"{p['iterations'] / 1e6:.1f}M it.", (p["training_hours"], p["mbb"]), textcoords="offset points",
                    xytext=(4, 6), fontsize=7, color="C0")
    ax.axhspan(TEACHER[0] - TEACHER[1], TEACHER[0] + TEACHER[1], color="C3", alpha=0.08)
    ax.axhline(TEACHER[0], color="C3", ls=":", lw=1.2,
               label=f"the teacher, `cfr:strategy=emd_256`: {TEACHER[0]:.0f} ± {TEACHER[1]:.0f} (20,000 hands)")
    ax.axhline(TARGET, color="grey", ls="--", lw=1.2, label=f"target {TARGET:.0f}")
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xlabel(X_LABEL)
    ax.set_ylabel("LBR (mbb/g)")
    ax.set_xlim(0, max(xs) * 1.12)
    low = min(p["mbb"] - p["ci"] for p in points)
    ax.set_ylim(bottom=min(0.0, low - 0.05 * abs(low)))
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    drawn = {"xlim": ax.get_xlim(), "ylim": ax.get_ylim(), "xlabel": ax.get_xlabel()}
    plt.close(fig)
    return drawn


def main(argv: list[str] | None = None) -> int:
    from common import (
        OUT_FOLDER_HELP,
        description,
        help_format,
        out_folder,
        out_path,
        parse_args,
        positive_int,
        seed_int,
        write_json,
    )

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("run", help="a run folder of casebases/build_cfr_big.py")
    ap.add_argument("--hands", type=positive_int, default=2000, help="LBR hands for each snapshot")
    ap.add_argument("--seed", type=seed_int, default=40, help="seed of LBR's deals, the same for every snapshot")
    ap.add_argument("--workers", type=positive_int, default=1, help="LBR worker processes")
    ap.add_argument("--last", type=seed_int, default=0, help="measure only the last N snapshots not measured yet (0: all)")
    ap.add_argument("--results", "--out", type=out_path("folder"), default=None, help=OUT_FOLDER_HELP.replace("--out", "--results"))
    args = parse_args(ap, argv)
    try:
        import matplotlib  # noqa: F401  (checked before minutes of measuring)
    except ImportError:
        print('error: the plot needs matplotlib: pip install -e ".[plots]"', file=sys.stderr)
        return 1
    run = Path(args.run)
    if not (run / "abstraction.npz").exists():
        print(f"error: {run}: no abstraction.npz here (not a run folder)", file=sys.stderr)
        return 1
    results = out_folder(args.results)
    stem = f"cfr-curve-{run.resolve().name}-seed{args.seed}"
    out_json = results / f"{stem}.json"
    report = json.loads(out_json.read_text()) if out_json.exists() else {}
    kept = report.get("points", [])  # every measurement made, whatever its hands
    points = [p for p in kept if p["hands"] == args.hands and p["seed"] == args.seed]
    have = {p["iterations"] for p in points}
    todo = [(it, f) for it, f in snapshots(run) if it not in have]
    if args.last:
        todo = todo[-args.last:]
    for it, f in todo:
        p = measure(run, f, hands=args.hands, seed=args.seed, workers=args.workers)
        points.append(p)
        points.sort(key=lambda q: q["iterations"])
        kept = sorted([*kept, p], key=lambda q: (q["hands"], q["iterations"]))
        report.pop("hands", None)
        report.update({"run": run.resolve().name, "seed": args.seed, "points": kept})
        write_json(out_json, report, indent=1)  # the folder with the first point: a run that fails before leaves none
        print(f"{counted(it, 'iteration')}, {p['training_hours']:.2f} h: LBR {p['mbb']:.0f} ± {p['ci']:.0f} mbb/g "
              f"({p['lbr_seconds']} s)", file=sys.stderr, flush=True)
    if not points:
        print(f"error: {run}: no snapshots to measure", file=sys.stderr)
        return 1
    png = results / f"{stem}.png"
    plot(points, png, title=f"LBR of {run.resolve().name} against training time (seed {args.seed})")
    print(f"wrote {png} and {out_json}", file=sys.stderr)
    print("| iterations | training hours | CPU hours | LBR, mbb/g (95% CI) |\n|---:|---:|---:|---:|")
    for p in points:
        print(f"| {p['iterations']:,} | {p['training_hours']:.2f} | {p['cpu_hours']:.2f} | {p['mbb']:.0f} ± {p['ci']:.0f} |")
    return 0


if __name__ == "__main__":
    from common import run

    run(main)
