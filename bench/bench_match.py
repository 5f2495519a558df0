"""Match speed: hands per second heads-up, ours beside PokerKit's state machine.

Run:  python3 bench/bench_match.py [--hands 20000] [--ehs-hands 2000]

1. ``random`` vs ``call`` through :func:`cbr.play.match.run_match` (deals, the rules engine,
   decision points, policies, showdowns): this measures the engine. Target >= 2,000 hands/s.
2. The same random-vs-call play driven through PokerKit's fixed-limit hold'em state
   machine (automatic dealing and showdown, the same uniform choice among legal actions):
   the peer, printed as a ratio.
3. The rule bots (``ehs`` and ``poki`` vs ``call``, ``ehs`` vs ``ehs``), which add hand
   evaluation (HS, PPOT/NPOT enumeration) to every post-flop decision.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import evaluator_ext  # noqa: E402
from cbr.play.match import MAX_HANDS, run_match  # noqa: E402


def timed(fn, hands: int) -> tuple[float, float]:
    """(hands per wall-clock second, hands per CPU second of this process).

    On a shared machine the CPU rate is the fair figure: the loop is single-threaded."""
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return hands / (time.perf_counter() - w0), hands / max(time.process_time() - c0, 1e-9)


def ours(players: list[str], hands: int, seed: int = 0) -> tuple[float, float]:
    return timed(lambda: run_match(players, hands, seed=seed), hands)


def pokerkit_random_vs_call(hands: int, seed: int = 0) -> tuple[float, float]:
    return timed(lambda: _pokerkit_loop(hands, seed), hands)


def _pokerkit_loop(hands: int, seed: int) -> None:
    """Hands per second of PokerKit playing random (player ``k % 2``) against always-call."""
    from pokerkit import Automation, FixedLimitTexasHoldem

    automations = (
        Automation.ANTE_POSTING, Automation.BET_COLLECTION, Automation.BLIND_OR_STRADDLE_POSTING,
        Automation.CARD_BURNING, Automation.HOLE_DEALING, Automation.BOARD_DEALING,
        Automation.HOLE_CARDS_SHOWING_OR_MUCKING, Automation.HAND_KILLING,
        Automation.CHIPS_PUSHING, Automation.CHIPS_PULLING,
    )
    rng = random.Random(seed)
    for k in range(hands):
        state = FixedLimitTexasHoldem.create_state(automations, True, 0, (5, 10), 10, 20,
                                                   (10**6, 10**6), 2)
        random_player = k % 2
        while state.status:
            actor = state.actor_index
            if actor is None:  # pragma: no cover - automations deal everything
                break
            legal = []
            if state.can_fold():
                legal.append("f")
            legal.append("c")
            if state.can_complete_bet_or_raise_to():
                legal.append("r")
            kind = rng.choice(legal) if actor == random_player else "c"
            if kind == "f":
                state.fold()
            elif kind == "c":
                state.check_or_call()
            else:
                state.complete_bet_or_raise_to()


def main() -> None:
    from native_guard import help_format, number, parse_args

    from casebases import description

    hands = number(1, int, high=MAX_HANDS)
    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--hands", type=hands, default=20_000, help="hands of random vs call, ours (PokerKit plays a tenth)")
    ap.add_argument("--ehs-hands", type=hands, default=2_000, help="hands of each rule-bot match")
    args = parse_args(ap)
    print(f"evaluator: {evaluator_ext.IMPLEMENTATION}")
    ours(["random", "call"], 500)  # warm-up (imports, caches)
    wall, cpu = ours(["random", "call"], args.hands)
    print(f"ours      random vs call : {cpu:9,.0f} hands/CPU-s ({wall:,.0f}/wall-s)  target >= 2,000")
    try:
        pwall, pcpu = pokerkit_random_vs_call(max(1000, args.hands // 10))
        print(f"pokerkit  random vs call : {pcpu:9,.0f} hands/CPU-s ({pwall:,.0f}/wall-s)  "
              f"-> ours / pokerkit = {cpu / pcpu:.1f}x")
    except ImportError as exc:  # pragma: no cover
        print(f"pokerkit not available ({exc})")
    for players in (["ehs", "call"], ["poki", "call"], ["ehs", "ehs"], ["ehs", "raise"]):
        wall, cpu = ours(players, args.ehs_hands, seed=1)
        print(f"ours      {players[0]:4s} vs {players[1]:5s}  : {cpu:9,.0f} hands/CPU-s ({wall:,.0f}/wall-s)")


if __name__ == "__main__":
    from native_guard import run

    run(main)
