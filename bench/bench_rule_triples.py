"""The rule bots' triples for every hidden holding at a spot (what LBR asks,
:mod:`cbr.exploit.lbr`): their rules one holding at a time vs as array operations
(``RuleBot.triples``), in the same run, one core.

Run:  python3 bench/bench_rule_triples.py [--spots 5] [--bots hs,ehs,poki,lag,station,rock]

For ``--spots`` decision points of each street (pre-flop, flop, turn, river) of generated
heads-up and 6-handed limit hands, each bot answers the triple of every holding that does
not clash with the board (1,326 pre-flop, 1,176 on a flop, 1,128 on a turn, 1,081 on a
river). "One at a time" is what the bots did before: the board's HS and potentials from
one native pass on a flop or turn, then ``triple`` holding by holding (``Policy.triples``);
on a river one HS call per holding. "Batched" is ``bot.triples``. Cold: a fresh bot (its
hand values computed in the call; the pre-flop tables shared by every bot are warm); warm:
asked again (the values cached, the rules alone: what LBR meets at every further decision
on a board). Prints the median per spot as triples per second and the ratio, and checks
that the two give the same triples.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core: before numpy loads

import argparse  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from itertools import combinations  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cbr.errors import counted  # noqa: E402
from cbr.game import preset  # noqa: E402
from cbr.game.state import HandState  # noqa: E402
from cbr.policies.base import Policy, legal_triple, sample_action  # noqa: E402
from cbr.policies.rules import RuleBot  # noqa: E402
from cbr.policies.spec import policy_from_spec  # noqa: E402
from experiments.common import description, policy_spec, policy_specs  # noqa: E402

STREETS = ("pre-flop", "flop", "turn", "river")


def spots(per_street: int, seed: int) -> list[list]:
    """``per_street`` decision points of each street, alternately heads-up and 6-handed."""
    rng = random.Random(seed)
    out: list[list] = [[] for _ in STREETS]
    games = [preset("holdem.limit.2p"), preset("irc.10-20.6p")]
    hand = 0
    while min(len(s) for s in out) < per_street:
        game = games[hand % 2]
        hand += 1
        deck = list(range(52))
        rng.shuffle(deck)
        n = game.n_players
        s = HandState(game, hole_cards=[(deck[2 * i], deck[2 * i + 1]) for i in range(n)])
        board = deck[2 * n:2 * n + 5]
        taken = set()
        while not s.is_over:
            if s.needs_board:
                have = len(s.board)
                s.deal_board(board[have:3 if have == 0 else have + 1])
                continue
            dp = s.decision_point()
            if dp.street not in taken and len(out[dp.street]) < per_street:
                taken.add(dp.street)
                out[dp.street].append(dp)
            s.act(sample_action(legal_triple((0.05, 0.8, 0.15), dp.legal), rng))
    return out


def one_at_a_time(bot, dp, holes) -> np.ndarray:
    """The rule bots' triples before: a flop or turn's values from one native pass, then the
    rules holding by holding."""
    if len(dp.board) in (3, 4):
        bot._prefill(dp, holes)
    return Policy.triples(bot, dp, holes)


def rule_bot(text: str) -> str:
    """``--bots``: a policy spec (:func:`experiments.common.policy_spec`) naming a rule bot, the
    only kind with the one-at-a-time path measured here; else a usage error."""
    spec = policy_spec(text)
    if not isinstance(policy_from_spec(spec), RuleBot):
        raise argparse.ArgumentTypeError(f"{spec!r} is not a rule bot (hs, ehs, poki, lag, station, rock)")
    return spec


def timed(fn) -> tuple[float, np.ndarray]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    from native_guard import help_format, parse_args, positive_int

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--spots", type=positive_int, default=5, help="decision points per street")
    ap.add_argument("--bots", type=policy_specs(each=rule_bot), default="hs,ehs,poki,lag,station,rock",
                    help="comma-separated rule bots (policy specs)")
    args = parse_args(ap)
    by_street = spots(args.spots, seed=11)
    everything = list(combinations(range(52), 2))
    for dp in by_street[0]:   # the pre-flop tables every bot shares (pure functions of the class)
        policy_from_spec("poki").triples(dp, everything)
    print(f"one core; median of {counted(args.spots, 'spot')} a street (heads-up and 6-handed), every open holding; triples/s")
    print(f"{'bot':8} {'street':9} {'cold: one at a time':>20} {'batched':>10} {'ratio':>7}"
          f" {'warm: one at a time':>20} {'batched':>10} {'ratio':>7}")
    mismatches = 0
    for spec in args.bots:
        for name, dps in zip(STREETS, by_street):
            times: dict[str, list[float]] = {"c1": [], "cb": [], "w1": [], "wb": []}
            for dp in dps:
                holes = [h for h in combinations(range(52), 2) if not set(h) & set(dp.board)]
                single, batch = policy_from_spec(spec, seed=1), policy_from_spec(spec, seed=1)
                c1, a = timed(lambda: one_at_a_time(single, dp, holes))
                cb, b = timed(lambda: batch.triples(dp, holes))
                w1, c = timed(lambda: one_at_a_time(single, dp, holes))
                wb, d = timed(lambda: batch.triples(dp, holes))
                mismatches += not (np.array_equal(a, b) and np.array_equal(c, d) and np.array_equal(a, d))
                for key, secs in zip(("c1", "cb", "w1", "wb"), (c1, cb, w1, wb)):
                    times[key].append(len(holes) / secs)
            m = {k: statistics.median(v) for k, v in times.items()}
            print(f"{spec:8} {name:9} {m['c1']:20,.0f} {m['cb']:10,.0f} {m['cb'] / m['c1']:6.1f}x"
                  f" {m['w1']:20,.0f} {m['wb']:10,.0f} {m['wb'] / m['w1']:6.1f}x")
    print("same triples: " + ("yes" if not mismatches else f"NO ({counted(mismatches, 'spot')} differ)"))
    if mismatches:
        raise SystemExit("the batched triples differ from the one-at-a-time ones")


if __name__ == "__main__":
    from native_guard import run

    run(main)
