"""Re-solving the river (issue 37, part 4), measured on its own: ``cfr`` with and without it.

    nice -n 10 python3 experiments/resolve_river.py --seed 52 --part timing
    nice -n 10 python3 experiments/resolve_river.py --seed 52 --part lbr --bot cfr
    nice -n 10 python3 experiments/resolve_river.py --seed 52 --part lbr --bot cfr:resolve=river
    nice -n 10 python3 experiments/resolve_river.py --seed 52 --part raise --bot cfr:resolve=river
    nice -n 10 python3 experiments/resolve_river.py --seed 52 --part h2h --bot cfr:resolve=river

Parts (one process each, each within ``--minutes``):

- ``timing``: the blueprint plays itself (``--timing-hands`` hands, deals of ``--seed``); at
  every river decision the re-solving bot (``--bot``, a fresh hand each hand) is timed on the
  same decision point through :meth:`Policy.triple`, in the seat of the player to act: a seat's
  first river decision of a hand includes its solve, later ones reuse it. p50 / p99 / max in ms, the iterations run, and the
  largest regret bound.
- ``lbr``: ``cbr exploit``'s LBR against ``--bot`` (``--lbr-hands``, stopped at ``--minutes``).
- ``raise``: ``--bot`` against always-raise, duplicate (``--match-hands``).
- ``h2h``: ``--bot`` against the teacher as trained (``cfr:strategy=emd_256``; plain ``cfr`` until it re-solved), duplicate (``--match-hands``).

Each part adds its result to ``experiments/scratch/resolve-river-seed<S>.json`` under a key
naming the part and the bot.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

from common import OUT_HELP, budgeted_lbr, duel, environment, out_file, out_path, say, write_json


def timing(bot: str, hands: int, seed: int) -> dict:
    from cbr.game import preset
    from cbr.play.table import dealt_decisions
    from cbr.policies.spec import policy_from_spec

    game = preset("holdem.limit.2p")
    blueprint = policy_from_spec("cfr:strategy=emd_256", seed=seed)
    resolver = policy_from_spec(bot, seed=seed)
    rng = random.Random(seed)
    first, later, iterations, bounds, solve_ms = [], [], [], [], []
    for deal in range(hands):
        resolver.reset()
        seen: set[int] = set()  # the seats whose river is solved this hand
        for s, dp in dealt_decisions(game, seed, deal):
            if dp.street == 3:
                role = 0 if game.blinds[dp.position] == max(game.blinds) else 1
                t = time.perf_counter()
                resolver.triple(dp)
                ms = 1000.0 * (time.perf_counter() - t)
                (later if role in seen else first).append(ms)
                if role not in seen:
                    solved = resolver._resolved[1][role]
                    iterations.append(solved.iterations)
                    bounds.append(solved.bound)
                    solve_ms.append(1000.0 * solved.seconds)
                seen.add(role)
            s.act(blueprint.act(dp, rng))

    def summary(xs: list[float]) -> dict:
        xs = sorted(xs)
        if not xs:
            return {"n": 0}
        return {"n": len(xs), "p50": round(statistics.median(xs), 3),
                "p99": round(xs[min(len(xs) - 1, int(0.99 * len(xs)))], 3), "max": round(xs[-1], 3),
                "mean": round(statistics.fmean(xs), 3)}

    cold = first.pop(0) if first else None  # the process's first: the abstraction's tables load then
    return {"cold_first_ms": cold, "river_decisions": summary(first + later), "first_river_decision": summary(first),
            "later_river_decisions": summary(later), "solve_ms": summary(solve_ms),
            "iterations": summary([float(i) for i in iterations]), "largest_bound_chips": max(bounds, default=None),
            "hands": hands}


def main(argv: list[str] | None = None) -> int:
    from common import description, help_format, parse_args, policy_spec, positive_float, positive_int, seed_int

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--seed", type=seed_int, default=52, help="seed of the deals")
    ap.add_argument("--part", choices=("timing", "lbr", "raise", "h2h"), required=True, help="which measurement to run")
    ap.add_argument("--bot", type=policy_spec, default="cfr:resolve=river", help="the re-solving bot's policy spec")
    ap.add_argument("--timing-hands", type=positive_int, default=400, help="hands played to time the decisions")
    ap.add_argument("--lbr-hands", type=positive_int, default=4000, help="LBR hands, at most")
    ap.add_argument("--match-hands", type=positive_int, default=2000, help="duplicate hands per match")
    ap.add_argument("--minutes", type=positive_float, default=14.0, help="minutes of LBR, at most")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="resolve-river-seed<SEED>.json"))
    args = parse_args(ap, argv)  # a bad --bot is a usage error, told before any work
    out = out_file(args.out, f"resolve-river-seed{args.seed}.json")
    say(f"{args.part} {args.bot} seed {args.seed}")
    t = time.time()
    if args.part == "timing":
        result = timing(args.bot, args.timing_hands, args.seed)
    elif args.part == "lbr":
        result = budgeted_lbr(args.bot, args.lbr_hands, args.seed, 1, 60.0 * args.minutes)
    elif args.part == "raise":
        result = duel(args.bot, "raise", args.match_hands, args.seed)
    else:
        result = duel(args.bot, "cfr:strategy=emd_256", args.match_hands, args.seed)
    result["seconds"] = round(time.time() - t, 1)
    result["load_average"] = open("/proc/loadavg").read().split()[:3] if Path("/proc/loadavg").exists() else None
    data = json.loads(out.read_text()) if out.exists() else {"environment": environment()}
    data[f"{args.part} {args.bot}"] = result
    write_json(out, data)
    print(json.dumps({f"{args.part} {args.bot}": result}, indent=2))
    return 0


if __name__ == "__main__":
    from common import run

    run(main)
