"""Rules-engine speed: our HandState beside PokerKit's state machine, in the
same run.

Run:  python3 bench/bench_state.py [--hands 3000] [--players 2 6]

1. Random legal play (the same seeded choices in both engines, deep stacks,
   showdowns scored: ours by ``evaluator_ext.evaluate``, PokerKit by its own
   evaluator): hands/s.
2. Replay of the ACPC limit example logs
   (``../shared/data/logs/acpc/dealer_example_limit``, when present): our
   ``replay_hand`` (decision points + payoffs) against driving PokerKit
   through the same actions and cards: hands/s.
Prints figures and the ratio ours / PokerKit (> 1 means we are faster).
"""
from __future__ import annotations

import argparse
import functools
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cbr.errors import counted  # noqa: E402
from cbr.game import GameDef, standard_table  # noqa: E402
from cbr.game.gamedef import MAX_SEATS  # noqa: E402
from cbr.game.state import HandState  # noqa: E402
from evaluator_ext.cards import cards_str  # noqa: E402

#: How to get PokerKit, the peer compared with (a dependency of the test extra).
PEER_HINT = ('error: bench_state.py compares with PokerKit, which is not installed: it comes with the test extra, '
             'pip install -e ".[test]"')


def pokerkit() -> Any:
    """The ``pokerkit`` module, or a stop with one line naming the test extra (``--help`` needs
    it not: the script imports it once the arguments are read)."""
    try:
        import pokerkit as pk
    except ImportError:
        raise SystemExit(PEER_HINT) from None
    return pk


@functools.cache
def _peer() -> tuple[Any, tuple]:
    """PokerKit and the automations its states get (looked up once, outside the timed loops)."""
    pk = pokerkit()
    return pk, (pk.Automation.ANTE_POSTING, pk.Automation.BET_COLLECTION, pk.Automation.BLIND_OR_STRADDLE_POSTING,
                pk.Automation.HOLE_CARDS_SHOWING_OR_MUCKING, pk.Automation.HAND_KILLING,
                pk.Automation.CHIPS_PUSHING, pk.Automation.CHIPS_PULLING)


def pk_state(game: GameDef, blinds_pk: tuple[int, ...], stack: int) -> Any:
    """PokerKit's state of ``game``'s fixed-limit hand (a ``pokerkit.State``)."""
    pk, auto = _peer()

    def street(hole: bool, board: int, bet: float, cap: int) -> Any:
        return pk.Street(not hole, (False, False) if hole else (), board, False, pk.Opening.POSITION, int(bet), cap)

    sb, bb = game.small_bet, game.big_bet
    streets = (street(True, 0, sb, game.raise_cap[0]), street(False, 3, sb, game.raise_cap[1]),
               street(False, 1, bb, game.raise_cap[2]), street(False, 1, bb, game.raise_cap[3]))
    return pk.State(auto, pk.Deck.STANDARD, (pk.StandardHighHand,), streets, pk.BettingStructure.FIXED_LIMIT,
                    True, 0, blinds_pk, 0, (stack,) * game.n_players, game.n_players, mode=pk.Mode.TOURNAMENT)


def deals(n: int, hands: int, seed: int) -> list[tuple[list[tuple[int, int]], list[int], list[int], int]]:
    rng = random.Random(seed)
    out = []
    for _ in range(hands):
        deck = list(range(52))
        rng.shuffle(deck)
        out.append(([(deck[2 * i], deck[2 * i + 1]) for i in range(n)], deck[2 * n: 2 * n + 5],
                    deck[2 * n + 5: 2 * n + 8], rng.getrandbits(32)))
    return out


def ours_random(game: GameDef, work) -> float:
    t0 = time.perf_counter()
    for holes, board, _burn, s in work:
        rng = random.Random(s)
        st = HandState(game, hole_cards=holes)
        while not st.is_over:
            if st.needs_board:
                k = 3 if st.street == 0 else 1
                st.deal_board(board[len(st.board): len(st.board) + k])
            else:
                st.act(rng.choice(st.legal_actions()))
        st.payoffs()
    return len(work) / (time.perf_counter() - t0)


def pokerkit_random(game: GameDef, work) -> float:
    n = game.n_players
    t0 = time.perf_counter()
    for holes, board, burn, s in work:
        rng = random.Random(s)
        pk = pk_state(game, (1, 2), 10_000)
        for i in range(n):
            pk.deal_hole(cards_str(holes[i]))
        dealt = burned = 0
        while pk.status:
            if pk.actor_index is not None:
                legal = ("f" if pk.can_fold() else "") + "c" + ("r" if pk.can_complete_bet_or_raise_to() else "")
                k = rng.choice(legal)
                pk.fold() if k == "f" else pk.check_or_call() if k == "c" else pk.complete_bet_or_raise_to()
            elif pk.can_burn_card():
                pk.burn_card(cards_str([burn[burned]])); burned += 1
            elif pk.can_deal_board():
                k = 3 if dealt == 0 else 1
                pk.deal_board(cards_str(board[dealt: dealt + k])); dealt += k
            else:
                break
    return len(work) / (time.perf_counter() - t0)


def replay_bench() -> None:
    logs = Path(__file__).resolve().parent.parent.parent / "shared/data/logs/acpc/dealer_example_limit"
    if not logs.exists():
        print("replay: ACPC example logs not found, skipped")
        return
    from cbr.logs.acpc import AcpcParser
    from cbr.logs.record import HandRecord
    from cbr.logs.replay import replay_hand

    records = [r for f in sorted(logs.glob("2p*.log")) for r in AcpcParser().parse(str(f))
               if isinstance(r, HandRecord)]
    t0 = time.perf_counter()
    decisions = sum(len(replay_hand(r).decisions) for r in records)
    ours = len(records) / (time.perf_counter() - t0)

    game = records[0].game  # ACPC heads-up: position 0 big blind = PokerKit's player 0
    t0 = time.perf_counter()
    for r in records:
        pk = pk_state(game, (5, 10), 20_000)
        for h in r.hole_cards:
            pk.deal_hole(cards_str(h))
        acts = list(r.actions)
        dealt = 0
        while pk.status:
            if pk.actor_index is not None:
                k = acts.pop(0).kind
                pk.fold() if k == "f" else pk.check_or_call() if k == "c" else pk.complete_bet_or_raise_to()
            elif pk.can_burn_card():
                pk.burn_card("??")
            elif pk.can_deal_board():
                k = 3 if dealt == 0 else 1
                pk.deal_board(cards_str(r.board[dealt: dealt + k])); dealt += k
            else:
                break
    peer = len(records) / (time.perf_counter() - t0)
    print(f"replay ACPC 2p limit ({counted(len(records), 'hand')}, {counted(decisions, 'decision')}): ours {ours:,.0f} hands/s, "
          f"PokerKit {peer:,.0f} hands/s, ratio {ours / peer:.2f}")


def main() -> None:
    from native_guard import help_format, number, parse_args, positive_int

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=help_format(raw=True))
    ap.add_argument("--hands", type=positive_int, default=3000, help="random hands per table size")
    ap.add_argument("--players", type=number(2, int, high=MAX_SEATS), nargs="+", default=[2, 6],
                    help=f"table sizes to play (players, 2 to {MAX_SEATS})")
    args = parse_args(ap)
    _peer()  # the peer: one line naming the test extra when it is missing
    for n in args.players:
        if n == 2:  # ACPC layout = PokerKit's heads-up order
            game = GameDef("b2", 2, (2, 1), 2, 4, (3, 4, 4, 4), (1, 0, 0, 0))
        else:
            game = standard_table(f"b{n}", n, (1, 2), 2, 4)
        work = deals(n, args.hands, seed=n)
        a = ours_random(game, work)
        b = pokerkit_random(game, work)
        print(f"random play {counted(n, 'player')} ({counted(args.hands, 'hand')}): ours {a:,.0f} hands/s, "
              f"PokerKit {b:,.0f} hands/s, ratio {a / b:.2f}")
    replay_bench()


if __name__ == "__main__":
    from native_guard import run

    run(main)
