"""The shipped counter-strategies against their opponents (beside the teacher and the best fixed bot) and the teacher.

Each counter-strategy (``cfr:strategy=counter_<name>``, issue 36 part 1) against the opponent it
was built for, beside the teacher (``cfr:strategy=emd_256``) and the best fixed bot of the house
against that opponent, on the same duplicate deals; and head to head against the teacher (what
their robustness costs).

    python experiments/counter_strategies.py --seed 36 --hands 4000

The opponent models were counted on seeds 3600-3604 (``casebases/build_counters.py``); report
on others. Writes ``experiments/scratch/counters-seed<S>.json`` (``--only``: replacing those
counters' rows) and prints a Markdown table.
"""
from __future__ import annotations

import argparse
import json

from common import OUT_HELP, ci_text, duel, out_file, out_path, say, write_json

#: counter-strategy -> (its opponent, the best fixed bot of the house against it: docs/experiments.md)
#: The teacher the counters are compared with (as trained: plain ``cfr`` re-solves its river since 2026-11-29).
TEACHER = "cfr:strategy=emd_256"
COUNTERS = {"raise": ("raise", "ehs"), "call": ("call", "phase3"), "station": ("station", "phase3"),
            "lag": ("lag", "poki"), "raise_mild": ("raise", "ehs")}


def cells(names: list[str]) -> list[tuple[str, str, str]]:
    """(counter name, bot, opponent) of every match.

    >>> cells(["raise"])[:2]
    [('raise', 'cfr:strategy=counter_raise', 'raise'), ('raise', 'cfr:strategy=emd_256', 'raise')]
    """
    out = []
    for name in names:
        target, best = COUNTERS[name]
        mine = f"cfr:strategy=counter_{name}"
        out += [(name, mine, target), (name, TEACHER, target), (name, best, target), (name, mine, TEACHER)]
    return out


def _one(args: tuple[str, str, str, int, int]) -> dict:
    name, bot, opp, hands, seed = args
    r = duel(bot, opp, hands, seed)
    say(f"{bot} vs {opp}: {r['sb_per_hand']:+.3f} ± {ci_text(r['ci'])} ({r['seconds']} s)")
    return {"counter": name, "bot": bot, "opponent": opp, **r}


def main() -> None:
    from common import description, help_format, parse_args, positive_int, seed_int, worker_pool

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--seed", type=seed_int, default=36, help="deal seed of the matches")
    ap.add_argument("--hands", type=positive_int, default=4000, help="duplicate hands per match")
    ap.add_argument("--only", default="", help="comma-separated counter names (default: all)")
    ap.add_argument("-j", "--workers", type=positive_int, default=1, help="matches played at once")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="counters-seed<SEED>.json"))
    args = parse_args(ap)
    names = [n for n in args.only.split(",") if n] or list(COUNTERS)
    jobs = [(*c, args.hands, args.seed) for c in cells(names)]
    if args.workers > 1:
        with worker_pool(args.workers) as pool:
            rows = list(pool.map(_one, jobs))
    else:
        rows = [_one(j) for j in jobs]
    out = out_file(args.out, f"counters-seed{args.seed}.json")
    if out.exists():  # keep the other counters' rows of an earlier run with the same seed and hands
        old = json.loads(out.read_text())
        if old.get("hands") == args.hands:
            rows = [x for x in old["rows"] if x["counter"] not in names] + rows
    write_json(out, {"seed": args.seed, "hands": args.hands, "rows": rows})
    print("| counter | vs its opponent | the teacher | best fixed bot | vs the teacher |")
    print("|---|---:|---:|---|---:|")
    for name in names:
        r = {(x["bot"], x["opponent"]): x for x in rows if x["counter"] == name}
        target, best = COUNTERS[name]
        mine = f"cfr:strategy=counter_{name}"

        def f(x: dict) -> str:
            return f"{x['sb_per_hand']:+.3f} ± {ci_text(x['ci'])}"

        print(f"| `counter_{name}` (`{target}`) | {f(r[mine, target])} | {f(r[TEACHER, target])} | "
              f"`{best}` {f(r[best, target])} | {f(r[mine, TEACHER])} |")


if __name__ == "__main__":
    from common import run

    run(main, "nothing written")
