"""Tune the EHS bot's constants on a *tuning* seed, separate from the seed the strength
experiment reports (``experiments/ehs_strength.py`` uses seed 0; tuning uses 101).

Each variant plays duplicate heads-up matches against always-call and always-raise; the
results (sb/h with 95% CI) go to ``experiments/scratch/ehs_tuning.json``.

    python3 experiments/tune_ehs.py [--hands 2000] [--seed 101]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cbr.play.match import run_match  # noqa: E402
from cbr.policies.rules import EHSPolicy  # noqa: E402

SEED_DEFAULTS = dict(raise_ehs=0.8, bluff_rate=0.5, semibluff_rate=0.5, reraise_step=0.1)
VARIANTS: dict[str, dict] = {
    "seed (waterloo defaults)": SEED_DEFAULTS,
    "conservative bluffing": dict(SEED_DEFAULTS, bluff_rate=0.2, semibluff_rate=0.2),
    "raise 0.7": dict(SEED_DEFAULTS, raise_ehs=0.7),
    "raise 0.6": dict(SEED_DEFAULTS, raise_ehs=0.6),
    "raise 0.6, conservative": dict(SEED_DEFAULTS, raise_ehs=0.6, bluff_rate=0.2, semibluff_rate=0.2),
    "raise 0.6, conservative, reraise 0": dict(SEED_DEFAULTS, raise_ehs=0.6, bluff_rate=0.2,
                                               semibluff_rate=0.2, reraise_step=0.0),
    "raise 0.6, conservative, reraise 0.2": dict(SEED_DEFAULTS, raise_ehs=0.6, bluff_rate=0.2,
                                                 semibluff_rate=0.2, reraise_step=0.2),
}


def variants_named(text: str) -> list[str]:
    """The variants ``--only`` names, comma-separated (a name's own commas kept: the longest
    name that fits is taken); ValueError naming the valid ones for an unknown name.

    >>> variants_named("raise 0.7,raise 0.6, conservative")
    ['raise 0.7', 'raise 0.6, conservative']
    >>> variants_named("nosuch")
    Traceback (most recent call last):
    ...
    ValueError: unknown variant 'nosuch'; choose from: 'seed (waterloo defaults)', ...
    """
    tokens = [t.strip() for t in text.split(",")] if text.strip() else []
    names, i = [], 0
    while i < len(tokens):
        fits = [j for j in range(len(tokens), i, -1) if ", ".join(tokens[i:j]) in VARIANTS]
        if not fits:
            raise ValueError(f"unknown variant {tokens[i]!r}; choose from: {', '.join(map(repr, VARIANTS))}")
        names.append(", ".join(tokens[i:fits[0]]))
        i = fits[0]
    return names


def main() -> None:
    from common import (
        OUT_HELP,
        ci_text,
        description,
        finite,
        help_format,
        out_file,
        out_path,
        positive_int,
        require_native,
        seed_int,
        write_json,
    )

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--hands", type=positive_int, default=2000, help="duplicate hands per match")
    ap.add_argument("--seed", type=seed_int, default=101, help="the tuning seed of the deals")
    ap.add_argument("--only", default="", help="comma-separated variant names (a name may hold commas: "
                    f"{'; '.join(VARIANTS)})")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="ehs_tuning.json"))
    args = ap.parse_args()
    try:
        only = variants_named(args.only)
    except ValueError as exc:  # a usage error, one line, before anything is written or announced
        ap.error(f"argument --only: {exc}")
    require_native()  # after every usage check: a usage error is one, extensions or not
    out = out_file(args.out, "ehs_tuning.json")
    results = json.loads(out.read_text()) if out.exists() else {}
    names = [v for v in VARIANTS if not only or v in only]
    for name in names:
        row = {"params": VARIANTS[name], "hands": args.hands, "seed": args.seed}
        for opp in ("call", "raise"):
            t0 = time.perf_counter()
            r = run_match([EHSPolicy(**VARIANTS[name]), opp], args.hands, duplicate=True, seed=args.seed)
            p = r.players[0]
            row[opp] = {"sb_per_hand": round(p.sb_per_hand, 4), "sb_ci": finite(p.sb_ci, 4)}
            print(f"{name:40s} vs {opp:5s}: {p.sb_per_hand:+.3f} ± {ci_text(p.sb_ci)} sb/h "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
        results[name] = row
        write_json(out, results)


if __name__ == "__main__":
    from common import run, so_far

    run(main, so_far("the variants measured so far"))
