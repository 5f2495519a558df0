"""Which house bot beats which opponent, and how each opponent plays: the data an adaptive bot
chooses its expert from (issue: a bot that learns from the table).

For every expert (a fixed house bot) and every opponent: the expert's win rate in a duplicate
heads-up match (sb/h with its 95% CI). For every opponent: its style (:mod:`cbr.models.style`)
as seen over its match against the teacher-imitating ``cbr``.

    python experiments/adaptation_matrix.py --seed 1 --hands 1000 -j 2

writes ``experiments/scratch/adaptation-matrix-seed1.json``; ``casebases/build_styles.py``
turns it into the style cases the ``adapt`` bot reads.
"""
from __future__ import annotations

import argparse
import json
import time

from cbr.errors import counted

EXPERTS = ["cbr:preset=imitate", "cbr:preset=expert", "cbr:preset=casper", "cfr:strategy=emd_256", "ehs", "poki", "hs", "lag", "station", "phase3"]
OPPONENTS = ["hs", "ehs", "poki", "lag", "station", "phase3", "cfr:strategy=emd_256", "cbr:preset=expert", "call", "raise", "random", "rock",
             "simbot"]
SLOW = {"simbot": 200}  # hands for opponents too slow for the full count


class _Styles:
    """A log writer that keeps the opponent's style instead of writing."""

    def __init__(self, name: str) -> None:
        from cbr.models.style import StyleStats

        self.name, self.stats = name, StyleStats()

    def write(self, record) -> None:  # noqa: ANN001
        self.stats.update(record)


def cell(expert: str, opponent: str, hands: int, seed: int) -> dict:
    from common import finite

    from cbr.play.match import run_match

    styles = _Styles(opponent)
    t = time.time()
    r = run_match([expert, opponent], hands, duplicate=True, seed=seed, log=styles)
    me, other = r.players
    out = {"expert": expert, "opponent": opponent, "hands": r.hands, "sb": me.sb_per_hand, "ci": finite(me.sb_ci),
           "seconds": round(time.time() - t, 1)}
    out["style"] = list(styles.stats.vector(other.name))
    return out


def main(argv: list[str] | None = None) -> int:
    from common import (
        OUT_HELP,
        ci_text,
        description,
        help_format,
        out_file,
        out_path,
        parse_args,
        policy_specs,
        positive_int,
        seed_int,
        worker_pool,
        write_json,
    )

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--seed", type=seed_int, default=1, help="deal seed of the matches")
    ap.add_argument("--hands", type=positive_int, default=1000, help="duplicate hands per match")
    ap.add_argument("-j", "--jobs", type=positive_int, default=2, help="matches played at once")
    ap.add_argument("--experts", type=policy_specs(), default=",".join(EXPERTS), help="comma-separated house bots (policy specs)")
    ap.add_argument("--opponents", type=policy_specs(), default=",".join(OPPONENTS), help="comma-separated opponents (policy specs)")
    ap.add_argument("--add", action="store_true",
                    help="add these cells to the seed's matrix file (same --hands), replacing cells measured again")
    ap.add_argument("--out", type=out_path("file"), default=None,
                    help=OUT_HELP.format(name="adaptation-matrix-seed<SEED>.json"))
    args = parse_args(ap, argv)
    experts, opponents = args.experts, args.opponents
    jobs = [(e, o, SLOW.get(o, args.hands), args.seed) for o in opponents for e in experts]
    cells = []
    with worker_pool(args.jobs) as pool:
        for c in pool.map(cell, *zip(*jobs)):
            cells.append(c)
            print(f"{c['expert']:>18} vs {c['opponent']:<8} {c['sb']:+.3f} ± {ci_text(c['ci'])}  ({c['seconds']} s)",
                  flush=True)
    out = out_file(args.out, f"adaptation-matrix-seed{args.seed}.json")
    if args.add and out.exists():
        old = json.loads(out.read_text())
        if old["hands"] != args.hands:
            raise SystemExit(f"error: {out} has {counted(old['hands'], 'hand')} a cell, not {args.hands}")
        new = {(c["expert"], c["opponent"]) for c in cells}
        cells = [c for c in old["cells"] if (c["expert"], c["opponent"]) not in new] + cells
    write_json(out, {"seed": args.seed, "hands": args.hands, "cells": cells}, indent=1)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    from common import run

    run(main, "nothing written")
