"""OCHS against percentile HS on the river, small: the teacher's abstraction with either river,
trained by the same MCCFR loop for the same iterations and seed, then measured side by side.

    python -m casebases.build_cfr_ochs --iterations 8000000 --threads 1               # OCHS river
    python -m casebases.build_cfr_ochs --river hs --iterations 8000000 --threads 1    # the control
    python experiments/ochs_river.py --seed 37 --lbr-hands 4000 --hands 20000

Both folders are under ``.cfr-runs/`` (ignored). Measured for each: LBR (``cbr exploit``'s
default variant, the same deals; at most ``--lbr-hands`` hands or ``--lbr-minutes`` minutes)
and a duplicate match against always-raise; then the two head to head (``--hands``
duplicate hands). Writes ``experiments/scratch/ochs-river-seed<S>.json`` and prints a
Markdown table.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from common import OUT_HELP, budgeted_lbr, ci_text, duel, environment, out_file, out_path, say, write_json

from cbr.errors import counted

RUNS = Path(__file__).resolve().parents[1] / ".cfr-runs"


def run_info(folder: Path) -> dict:
    """Iterations and training seconds of a strategy folder (its header)."""
    import numpy as np

    with np.load(folder / "strategy.npz", allow_pickle=False) as z:
        info = json.loads(str(z["info"]))
    return {"iterations": info["iterations"], "seconds": info["seconds"], "seed": info["seed"],
            "threads": info["threads"]}


def main() -> None:
    from common import description, help_format, parse_args, positive_float, positive_int, seed_int

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--ochs", default=str(RUNS / "emd_256_ochs"), help="the OCHS-river run's folder")
    ap.add_argument("--hs", default=str(RUNS / "emd_256_hs"), help="the HS-river run's folder (the control)")
    ap.add_argument("--seed", type=seed_int, default=37, help="seed of LBR's deals and the matches")
    ap.add_argument("--lbr-hands", type=positive_int, default=4000, help="LBR hands per run, at most")
    ap.add_argument("--lbr-minutes", type=positive_float, default=10.0, help="minutes of LBR per run, at most")
    ap.add_argument("--hands", type=positive_int, default=20000, help="duplicate hands of each match")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="ochs-river-seed<SEED>.json"))
    args = parse_args(ap)
    folders = {"ochs": Path(args.ochs), "hs": Path(args.hs)}
    for name, flag in (("ochs", "--ochs"), ("hs", "--hs")):
        if not (folders[name] / "strategy.npz").is_file():
            first = f"python -m casebases.build_cfr_ochs{' --river hs' if name == 'hs' else ''} --iterations 8000000 --threads 1"
            raise SystemExit(f"error: {folders[name]} holds no trained strategy ({flag}): train it first with `{first}`")
    report: dict = {"seed": args.seed, "environment": environment(), "runs": {}}
    for name, folder in folders.items():
        spec = f"cfr:strategy={folder}"
        row = {"folder": str(folder), **run_info(folder)}
        t = time.time()
        lbr = budgeted_lbr(spec, args.lbr_hands, args.seed, 1, args.lbr_minutes * 60)
        row["lbr"] = {"mbb": lbr["mbb_per_game"], "ci": lbr["ci95"], "hands": lbr["hands"],
                      "seconds": round(time.time() - t)}
        say(f"{name}: LBR {lbr['mbb_per_game']:.0f} ± {lbr['ci95']:.0f} mbb/g over {counted(lbr['hands'], 'hand')}")
        row["vs_raise"] = duel(spec, "raise", args.hands, args.seed)
        say(f"{name} vs raise: {row['vs_raise']['sb_per_hand']:+.3f} ± {ci_text(row['vs_raise']['ci'])}")
        report["runs"][name] = row
    report["head_to_head"] = duel(f"cfr:strategy={folders['ochs']}", f"cfr:strategy={folders['hs']}", args.hands,
                                  args.seed)
    h = report["head_to_head"]
    say(f"ochs vs hs: {h['sb_per_hand']:+.3f} ± {ci_text(h['ci'])} sb/h")
    out = out_file(args.out, f"ochs-river-seed{args.seed}.json")
    write_json(out, report)
    say(f"wrote {out}")
    print("| river | iterations | LBR, mbb/g (hands) | against `raise`, sb/h |")
    print("|---|---:|---:|---:|")
    for name, r in report["runs"].items():
        print(f"| {name} | {r['iterations']:,} | {r['lbr']['mbb']:.0f} ± {r['lbr']['ci']:.0f} ({r['lbr']['hands']:,}) "
              f"| {r['vs_raise']['sb_per_hand']:+.3f} ± {ci_text(r['vs_raise']['ci'])} |")
    print(f"| OCHS against HS, head to head | | | {h['sb_per_hand']:+.3f} ± {ci_text(h['ci'])} ({counted(h['hands'], 'hand')}) |")


if __name__ == "__main__":
    from common import run

    run(main)
