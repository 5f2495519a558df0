"""Decision latency of the default ``cbr`` bot (the adaptive bot) in play, beside the case-based
bot alone (``cbr:preset=expert``) on the same deals, in the same run.

Run:  python3 bench/bench_adaptive.py [--hands 600] [--opponents raise,call,ehs,lag] [--seed 5]

Each bot plays ``--hands`` duplicate hands against each opponent (``cbr.play.match.run_match``);
every ``decide`` of the measured seat is timed (choosing the expert, the expert's decision, and
nothing else: the table's own work is not counted), and the style and evidence bookkeeping after
each hand (``observe``) separately. ``cbr --retain`` is the adaptive bot over a copy of the
expert base keeping every hand, so that its table memory (the cases retained against the
opponent) weighs in on every decision. Prints p50/p99 per opponent and over all, and the ratio
of the adaptive bot's p99 to the case-based bot's. Target (issue 36): decision p99 <= 5 ms.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core: before numpy/faiss load

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cbr.play.match import run_match  # noqa: E402
from cbr.policies.spec import policy_from_spec  # noqa: E402
from experiments.common import description, help_format, policy_specs, positive_int, seed_int  # noqa: E402


def timed(spec: str, opponent: str, hands: int, seed: int) -> tuple[list[float], list[float]]:
    """Milliseconds of each decision and of each ``observe`` of ``spec`` against ``opponent``
    (``spec --retain``: over a copy of the expert base, retaining every hand)."""
    retain = spec.endswith(" --retain")
    if retain:
        import tempfile

        from cbr.play.retention import copy_casebase

        root = tempfile.mkdtemp()
        spec = f"{spec.split()[0]}:casebase={copy_casebase('expert', Path(root) / 'mine')}"
    bot = policy_from_spec(spec, seed=seed)
    decide, observe = bot.decide, bot.observe
    ds: list[float] = []
    obs: list[float] = []

    def timed_decide(dp, rng=None):  # noqa: ANN001, ANN202
        t = time.perf_counter()
        out = decide(dp, rng)
        ds.append((time.perf_counter() - t) * 1e3)
        return out

    def timed_observe(record, position):  # noqa: ANN001, ANN202
        t = time.perf_counter()
        observe(record, position)
        obs.append((time.perf_counter() - t) * 1e3)

    bot.decide, bot.observe = timed_decide, timed_observe  # instance attributes: the class is unchanged
    try:
        run_match([bot, opponent], hands, duplicate=True, seed=seed, retain=retain)
    finally:
        bot.close()
        if retain:
            import shutil

            shutil.rmtree(root, ignore_errors=True)
    return ds, obs


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--hands", type=positive_int, default=600, help="duplicate hands per opponent and bot")
    ap.add_argument("--opponents", type=policy_specs(), default="raise,call,ehs,lag",
                    help="comma-separated opponents (policy specs)")
    ap.add_argument("--seed", type=seed_int, default=5, help="deal seed of the matches")
    from native_guard import parse_args

    args = parse_args(ap)
    every: dict[str, list[float]] = {"cbr": [], "cbr --retain": [], "cbr:preset=expert": []}
    print(f"{'bot':<18} {'opponent':<8} {'decisions':>9} {'p50 ms':>7} {'p99 ms':>7} {'observe p99':>11}")
    for opp in args.opponents:
        for spec in every:
            ds, obs = timed(spec, opp, args.hands, args.seed)
            every[spec] += ds
            print(f"{spec:<18} {opp:<8} {len(ds):>9} {pct(ds, 0.5):>7.2f} {pct(ds, 0.99):>7.2f} {pct(obs, 0.99):>11.3f}")
    a, m, b = every["cbr"], every["cbr --retain"], every["cbr:preset=expert"]
    print(f"all: cbr (adaptive) p50 {pct(a, 0.5):.2f} ms, p99 {pct(a, 0.99):.2f} ms; with retention and its table "
          f"memory p50 {pct(m, 0.5):.2f} ms, p99 {pct(m, 0.99):.2f} ms; cbr:preset=expert p50 "
          f"{pct(b, 0.5):.2f} ms, p99 {pct(b, 0.99):.2f} ms; p99 ratio {pct(a, 0.99) / pct(b, 0.99):.2f}; "
          f"target p99 <= 5 ms: {'met' if max(pct(a, 0.99), pct(m, 0.99)) <= 5.0 else 'missed'}")


if __name__ == "__main__":
    from native_guard import run

    run(main)
