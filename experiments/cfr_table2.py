"""The KTH study's table 2: the five bucketings against each other, duplicate, bb/100 (issue 10, section 3).

    python3 experiments/cfr_table2.py [--seed 2] [--boards 1000] [--limit-hands 500] [--quick]

The five strategies (p_hs, mm_hs, mm_hs2, h_hs, h_hs2) come from
``experiments/cfr_strategies.py`` (built here if missing; same bucket count, boards and
CFR+ iterations for all, see its defaults). Three round robins, every pair on the same deals:

- ``nolimit.fcpa``, as the study: :mod:`cbr.cfr.headsup` on real cards (each player
  buckets its own cards with its own abstraction; exact expectation over both players'
  mixed strategies per deal; duplicate), ``--boards`` boards of ``--pairs`` deals;
- ``holdem.limit.2p`` with the same evaluator and deals;
- ``holdem.limit.2p`` through the match runner (``cbr.play.match.run_match``, duplicate, the
  ``cfr`` policy with ``strategy=PATH``, actions sampled), ``--limit-hands`` hands a pair.

Cells are the row's bb/100 against the column with the 95% half-width (per-board means
for the evaluator, per-deal means for the match runner). Seed 2 is the reported run;
nothing is tuned (the numbers of boards and hands only follow the CPU budget). Writes
``experiments/scratch/cfr_table2.json`` and ``cfr_table2.png`` (needs ``pip install -e .[plots]``).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cfr_strategies import BUCKETINGS, CACHE, add_arguments, prepare, settings_from, strategy_path  # noqa: E402
from common import OUT_HELP, ci_text, environment, finite, out_file, out_path, pyplot, say, write_json  # noqa: E402

from cbr.errors import counted  # noqa: E402

NAMES = [b[0] for b in BUCKETINGS]


def evaluator_table(cache: Path, game: str, seed: int, boards: int, pairs: int) -> dict:
    """Round robin of the five strategies for ``game`` with :mod:`cbr.cfr.headsup`."""
    from cbr.cfr.headsup import Contestant, round_robin
    from cbr.cfr.strategy import load_strategy

    players = [Contestant.from_strategy(load_strategy(strategy_path(cache, n, game)), n) for n in NAMES]
    t = time.perf_counter()
    step = max(1, boards // 10)

    def progress(done: int, total: int) -> None:
        if done % step == 0 or done == total:
            say(f"{game} evaluator: {done}/{counted(total, 'board')}")

    results = round_robin(players, seed=seed, boards=boards, pairs=pairs, progress=progress)
    return {"game": game, "method": "cbr.cfr.headsup (exact over actions, duplicate)", "boards": boards,
            "pairs_per_board": pairs, "seconds": round(time.perf_counter() - t, 1),
            "cells": [r.to_dict() for r in results]}


def match_table(cache: Path, seed: int, hands: int) -> dict:
    """Round robin in limit through the match runner with the ``cfr`` policy."""
    from cbr.play.match import run_match

    game = "holdem.limit.2p"
    t0 = time.perf_counter()
    cells = []
    for i, a in enumerate(NAMES):
        for b in NAMES[i + 1:]:
            t = time.perf_counter()
            specs = [f"cfr:strategy={strategy_path(cache, n, game)}" for n in (a, b)]
            r = run_match(specs, hands, duplicate=True, seed=seed)
            me = r.players[0]
            cells.append({"a": a, "b": b, "bb100": me.mbb_per_hand / 10.0, "ci": finite(me.mbb_ci / 10.0), "hands": r.hands,
                          "deals": r.deals, "seconds": round(time.perf_counter() - t, 1)})
            say(f"limit match: {a} vs {b}: {cells[-1]['bb100']:+.1f} ± {ci_text(cells[-1]['ci'], '.1f')} bb/100 "
                f"({counted(r.hands, 'hand')}, {cells[-1]['seconds']:.0f} s)")
    return {"game": game, "method": "cbr.play.match.run_match (cfr policy, duplicate, sampled actions)",
            "hands_per_pair": hands, "seconds": round(time.perf_counter() - t0, 1), "cells": cells}


def matrix(table: dict) -> list[list[Optional[tuple[float, float]]]]:
    """Row-vs-column (bb/100, ci) from the pairwise cells (the column's is the negation)."""
    m: list[list[Optional[tuple[float, float]]]] = [[None] * len(NAMES) for _ in NAMES]
    for c in table["cells"]:
        i, j = NAMES.index(c["a"]), NAMES.index(c["b"])
        m[i][j] = (c["bb100"], c["ci"])
        m[j][i] = (-c["bb100"] + 0.0, c["ci"])
    return m


def markdown(table: dict, title: str) -> str:
    m = matrix(table)
    lines = [f"**{title}**", "", "| row vs column | " + " | ".join(NAMES) + " | mean |",
             "|---" * (len(NAMES) + 2) + "|"]
    for i, n in enumerate(NAMES):
        cells = ["" if v is None else f"{v[0]:+.1f} ± {ci_text(v[1], '.1f')}" for v in m[i]]
        mean = sum(v[0] for v in m[i] if v is not None) / (len(NAMES) - 1)
        lines.append(f"| {n} | " + " | ".join(cells) + f" | {mean:+.1f} |")
    return "\n".join(lines)


def ranking(table: dict) -> list[tuple[str, float]]:
    """Bucketings by their mean result against the other four, best first."""
    m = matrix(table)
    means = [(n, sum(v[0] for v in m[i] if v is not None) / (len(NAMES) - 1)) for i, n in enumerate(NAMES)]
    return sorted(means, key=lambda x: -x[1])


def plot(tables: list[tuple[str, dict]], path: Path) -> bool:
    plt = pyplot()
    if plt is None:
        return False
    fig, axes = plt.subplots(1, len(tables), figsize=(5.2 * len(tables), 4.6))
    axes = [axes] if len(tables) == 1 else list(axes)
    for ax, (title, table) in zip(axes, tables):
        m = matrix(table)
        vals = [[0.0 if v is None else v[0] for v in row] for row in m]
        lim = max(1.0, max(abs(x) for row in vals for x in row))
        im = ax.imshow(vals, cmap="RdBu", vmin=-lim, vmax=lim)
        for i, row in enumerate(m):
            for j, v in enumerate(row):
                if v is not None:
                    ax.text(j, i, f"{v[0]:+.1f}\n±{v[1]:.1f}", ha="center", va="center", fontsize=7)
        ax.set_xticks(range(len(NAMES)), NAMES, fontsize=8)
        ax.set_yticks(range(len(NAMES)), NAMES, fontsize=8)
        ax.set_title(title, fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.046, label="row's bb/100")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv: Optional[list[str]] = None) -> int:
    from common import description, help_format, parse_args, positive_int, seed_int

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    add_arguments(ap)
    ap.add_argument("--seed", type=seed_int, default=2, help="deal seed (2: the reported run)")
    ap.add_argument("--boards", type=positive_int, default=None, help="evaluator boards per game (default: 1000; 3 with --quick)")
    ap.add_argument("--pairs", type=positive_int, default=16, help="evaluator deals per board")
    match = ap.add_mutually_exclusive_group()  # hands for a round robin that is skipped: one or the other
    match.add_argument("--limit-hands", type=positive_int, default=None, help="match-runner hands per pair (default: 500; 4 with --quick)")
    match.add_argument("--no-match", action="store_true", help="skip the match-runner round robin")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="cfr_table2.json"))
    args = parse_args(ap, argv)
    settings = settings_from(args)
    cache = args.cache or CACHE
    boards = args.boards or (3 if args.quick else 1000)
    hands = args.limit_hands or (4 if args.quick else 500)
    out = out_file(args.out, "cfr_table2.json")
    t0 = time.perf_counter()
    strategies = prepare(cache, settings)
    tables: list[tuple[str, dict]] = []
    timing: dict[str, Any] = {"strategies": round(time.perf_counter() - t0, 1)}
    for game in ("nolimit.fcpa", "holdem.limit.2p"):
        tab = evaluator_table(cache, game, args.seed, boards, args.pairs)
        timing[f"evaluator {game}"] = tab["seconds"]
        tables.append((f"{game}, evaluator ({counted(2 * boards * args.pairs, 'hand')} a pair)", tab))
    if not args.no_match:
        tab = match_table(cache, args.seed, hands)
        timing["match holdem.limit.2p"] = tab["seconds"]
        tables.append((f"holdem.limit.2p, match runner ({counted(tab['cells'][0]['hands'], 'hand')} a pair)", tab))
    text = "\n\n".join(markdown(t, title) for title, t in tables)
    report = {"experiment": "KTH table 2: round robin of the five bucketings, duplicate, bb/100 (row vs column)",
              "seed": args.seed, "tuning_seed": 1, "settings": settings, "strategies": strategies,
              "tables": [{"title": title, **t, "ranking": ranking(t)} for title, t in tables],
              "study_finding": "history buckets on HS^2 best",
              "seconds": round(time.perf_counter() - t0, 1), "timing": timing, "environment": environment(),
              "markdown": text}
    write_json(out, report)
    drew = plot(tables, out.with_suffix(".png"))
    print(text)
    for title, t in tables:
        print(f"{title}: ranking " + ", ".join(f"{n} {v:+.1f}" for n, v in ranking(t)))
    print(f"{time.perf_counter() - t0:.0f} s; wrote {out}" + (f" and {out.with_suffix('.png')}" if drew else ""))
    return 0


if __name__ == "__main__":
    from common import run

    run(main)
