"""Decision time of the simulation bot ``simbot`` beside the ``poki`` formula bot, same run.

Run:  python3 bench/bench_simbot.py [--hands 100] [--trials 60] [--seats 2] [--seed 0]

One match of ``--hands`` duplicate hands (``simbot:trials=T`` against ``poki``, and with
``--seats 3`` a ``lag`` seat as well): every ``act`` call of both bots is timed (wall
clock and CPU time of the process, which is the fair figure on a shared machine), per
street. Prints p50/p99 per bot and street in milliseconds and the ratio simbot / poki of
the p50s. The target: a simbot decision takes at most ~50 ms (p50) here with the default
trial count.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from cbr.errors import counted  # noqa: E402
from cbr.play.match import MAX_HANDS, run_match  # noqa: E402
from cbr.policies.base import Policy  # noqa: E402
from cbr.policies.simbot import DEFAULT_TRIALS, MAX_TRIALS  # noqa: E402
from cbr.policies.spec import policy_from_spec  # noqa: E402

STREETS = ("pre-flop", "flop", "turn", "river")


class Timed(Policy):
    """A bot whose every ``act`` is timed (wall and CPU seconds, by street)."""

    def __init__(self, inner: Policy) -> None:
        super().__init__(seed=inner.seed)
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]
        self.wall: dict[int, list[float]] = {s: [] for s in range(4)}
        self.cpu: dict[int, list[float]] = {s: [] for s in range(4)}

    def triple(self, dp):  # type: ignore[no-untyped-def]
        return self.inner.triple(dp)

    def act(self, dp, rng):  # type: ignore[no-untyped-def]
        w0, c0 = time.perf_counter(), time.process_time()
        kind = self.inner.act(dp, rng)
        self.wall[dp.street].append(time.perf_counter() - w0)
        self.cpu[dp.street].append(time.process_time() - c0)
        return kind

    def observe(self, record, position):  # type: ignore[no-untyped-def]
        self.inner.observe(record, position)

    def reset(self) -> None:
        self.inner.reset()

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1000.0 if values else float("nan")


def main(argv: list[str] | None = None) -> None:
    from native_guard import help_format, number, parse_args, seed_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--hands", type=number(1, int, high=MAX_HANDS), default=100, help="duplicate hands played")
    ap.add_argument("--trials", type=number(1, int, high=MAX_TRIALS), default=DEFAULT_TRIALS,
                    help="simbot's simulated trials per decision")
    ap.add_argument("--seats", type=int, default=2, choices=(2, 3), help="seats: simbot and poki, and lag with 3")
    ap.add_argument("--seed", type=seed_int, default=0, help="deal seed of the match")
    args = parse_args(ap, argv)

    sim = Timed(policy_from_spec(f"simbot:trials={args.trials}", seed=1))
    poki = Timed(policy_from_spec("poki", seed=2))
    seats: list[Policy] = [sim, poki] + ([Timed(policy_from_spec("lag", seed=3))] if args.seats == 3 else [])
    # warm the caches both bots share (pre-flop tables, the evaluator) before timing
    run_match([policy_from_spec("simbot:trials=2", seed=9), "poki"], 2, seed=args.seed + 1)
    w0 = time.perf_counter()
    result = run_match(seats, args.hands, duplicate=True, seed=args.seed)
    wall = time.perf_counter() - w0
    print(f"{result.hands} duplicate hands, {counted(args.seats, 'seat')}, simbot trials={args.trials}, seed {args.seed}: "
          f"{wall:.1f} s")
    print(f"{'bot':8} {'street':9} {'n':>5} {'wall p50':>9} {'wall p99':>9} {'cpu p50':>8} {'cpu p99':>8}  (ms)")
    for bot in (sim, poki):
        rows = [(STREETS[s], bot.wall[s], bot.cpu[s]) for s in range(4)]
        rows.append(("all", sum((bot.wall[s] for s in range(4)), []), sum((bot.cpu[s] for s in range(4)), [])))
        for street, w, c in rows:
            print(f"{bot.name:8} {street:9} {len(w):5d} {pct(w, 50):9.2f} {pct(w, 99):9.2f} "
                  f"{pct(c, 50):8.2f} {pct(c, 99):8.2f}")
    all_sim = sum((sim.wall[s] for s in range(4)), [])
    all_poki = sum((poki.wall[s] for s in range(4)), [])
    ratio50 = pct(all_sim, 50) / pct(all_poki, 50)
    ratio99 = pct(all_sim, 99) / pct(all_poki, 99)
    print(f"simbot / poki: p50 x{ratio50:.0f}, p99 x{ratio99:.0f} (wall)")
    for r in result.players:
        print(f"  {r.name:8} {r.sb_per_hand:+.3f} sb/h +- {r.sb_ci:.3f}")


if __name__ == "__main__":
    from native_guard import run

    run(main)
