"""The CFR bot against our other bots, heads-up limit, duplicate (issue 10, section 3).

    python3 experiments/cfr_vs_bots.py [--seed 2] [--hands 1000] [--bot cfr:strategy=h_hs2_4] [--quick]

``--bot`` (default ``cfr:strategy=h_hs2_4``: the 4-bucket CFR+ strategy; any policy
spec, e.g. ``cfr:strategy=PATH``) plays duplicate heads-up fixed-limit hold'em
(``holdem.limit.2p``) against each of ``hs``, ``ehs``, ``poki``, ``lag`` (the rule bots),
``cbr`` (the case-based bot on the default case base) and ``call``, ``raise``,
``random``: ``--hands`` hands each (a fixed number, so the whole table fits in a few
minutes of CPU; the bucketing of a new flop is the costly part of the CFR bot). Reported:
the bot's sb/h with the 95% CI over per-deal averages (:func:`cbr.play.measure.measure`,
as ``experiments/casper_table.py``) and whether it beats the opponent (the CI's lower end
above 0), loses (upper end below 0) or neither is shown. Seed 2 is the reported run
(nothing here is tuned). Writes ``experiments/scratch/cfr_vs_bots.json`` and
``cfr_vs_bots.png`` (needs ``pip install -e .[plots]``).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Optional

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import OUT_HELP, ci_text, environment, finite, out_file, out_path, pyplot, say, write_json  # noqa: E402

from cbr.errors import counted  # noqa: E402

OPPONENTS = ("hs", "ehs", "poki", "lag", "cbr", "call", "raise", "random")


def verdict(sb: float, ci: Optional[float]) -> str:
    """``beats`` / ``loses to`` / ``not shown`` from a mean and its 95% half-width (None: too few
    hands for one, nothing shown)."""
    if ci is None:
        return "not shown"
    if sb - ci > 0:
        return "beats"
    if sb + ci < 0:
        return "loses to"
    return "not shown"


def plot(cells: list[dict], path: Path, title: str) -> bool:
    plt = pyplot()
    if plt is None:
        return False
    fig, ax = plt.subplots(figsize=(8, 4.2))
    xs = range(len(cells))
    colors = {"beats": "tab:green", "loses to": "tab:red", "not shown": "tab:gray"}
    ax.bar(xs, [c["sb"] for c in cells], yerr=[c["ci"] or 0.0 for c in cells], capsize=5,
           color=[colors[c["verdict"]] for c in cells], edgecolor="black", linewidth=0.6)
    for x, c in zip(xs, cells):
        ax.annotate(f"{c['sb']:+.2f}\n±{ci_text(c['ci'], '.2f')}", (x, max(c["sb"] + (c["ci"] or 0.0), 0)), xytext=(0, 3),
                    textcoords="offset points", ha="center", fontsize=8)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(list(xs), [c["opponent"] for c in cells])
    ax.set_ylabel("CFR bot, small bets per hand")
    ax.set_title(title, fontsize=10)
    top = max(c["sb"] + (c["ci"] or 0.0) for c in cells)
    ax.set_ylim(min(min(c["sb"] - (c["ci"] or 0.0) for c in cells), 0) - 0.2, top * 1.2 + 0.2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv: Optional[list[str]] = None) -> int:
    from common import description, help_format, parse_args, policy_spec, policy_specs, positive_int, seed_int

    from cbr.play.measure import measure

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--seed", type=seed_int, default=2, help="deal seed (2: the reported run)")
    ap.add_argument("--hands", type=positive_int, default=None, help="hands per opponent (default: 1000; 4 with --quick)")
    ap.add_argument("--bot", type=policy_spec, default="cfr:strategy=h_hs2_4", help="the CFR bot's policy spec (default: the 4-bucket CFR+ strategy)")
    ap.add_argument("--opponents", type=policy_specs(), default=",".join(OPPONENTS), help="comma-separated opponents (policy specs)")
    ap.add_argument("--quick", action="store_true", help="4 hands per opponent (for tests)")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="cfr_vs_bots.json"))
    args = parse_args(ap, argv)
    args.out = out_file(args.out, "cfr_vs_bots.json")
    hands = args.hands if args.hands is not None else (4 if args.quick else 1000)
    opponents = args.opponents
    from cbr.game.spec import default_game

    game = default_game(2)
    bb_per_sb = game.small_bet / game.big_blind  # 1 in holdem.limit.2p: the small bet is the big blind
    t0 = time.perf_counter()
    cells = []
    for opp in opponents:
        c = measure(args.bot, [opp], seed=args.seed, hands=hands, label=opp, target=0.0)
        row = {"opponent": opp, "sb": c.sb, "ci": finite(c.ci), "bb100": c.sb * bb_per_sb * 100.0, "hands": c.hands, "deals": c.deals,
               "verdict": verdict(c.sb, finite(c.ci)), "seconds": round(c.seconds, 1)}
        cells.append(row)
        say(f"{args.bot} vs {opp}: {c.sb:+.3f} ± {ci_text(c.ci)} sb/h ({row['verdict']}), {counted(c.hands, 'hand')}, {c.seconds:.0f} s")
    seconds = time.perf_counter() - t0
    lines = ["| opponent | sb/h | 95% CI | bb/100 | hands | result |", "|---|---|---|---|---|---|"]
    lines += [f"| {c['opponent']} | {c['sb']:+.3f} | ±{ci_text(c['ci'])} | {c['bb100']:+.1f} | {c['hands']:,} | "
              f"{c['verdict']} |" for c in cells]
    table = "\n".join(lines)
    beaten = [c["opponent"] for c in cells if c["verdict"] == "beats"]
    report = {"experiment": "the CFR bot vs our bots, duplicate heads-up limit hold'em (holdem.limit.2p)",
              "bot": args.bot, "seed": args.seed, "hands_per_opponent": hands, "seconds": round(seconds, 1),
              "beats": beaten, "not_beaten": [c["opponent"] for c in cells if c["verdict"] != "beats"],
              "environment": environment(), "cells": cells, "markdown": table}
    write_json(args.out, report)
    drew = plot(cells, args.out.with_suffix(".png"),
                f"{args.bot} vs our bots, duplicate limit, seed {args.seed}, 95% CI, {counted(hands, 'hand')} each")
    print(table)
    print(f"beats {len(beaten)} of {len(cells)}; {seconds:.0f} s; wrote {args.out}" +
          (f" and {args.out.with_suffix('.png')}" if drew else ""))
    return 0


if __name__ == "__main__":
    from common import run

    run(main)
