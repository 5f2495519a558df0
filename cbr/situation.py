"""Situations for queries: a :class:`~cbr.game.DecisionPoint` from plain numbers.

``cbr query`` describes the situation either with options (this module's
:func:`situation`) or as an ACPC ``MATCHSTATE`` string replayed by the rules engine
(:func:`cbr.matchstate.from_matchstate`). Both give the same kind of decision point that
replaying a log gives, so the feature rows are computed by the same code.

>>> dp = situation(hole="AdQc", board="3h4cJh", players=2, position=1, to_call=1, pot=4)
>>> dp.street, dp.players_in_hand, dp.relative_position, dp.bets_to_call, dp.small_bets_in_pot
(1, 2, 1.0, 1.0, 4.0)
"""
from __future__ import annotations

import math
from typing import Optional

from evaluator_ext.cards import CardLike, parse_hole_and_board
from cbr.errors import GameError
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import STREET_OF_BOARD, GameDef, standard_table



def situation(
    *,
    hole: CardLike,
    board: CardLike = (),
    players: int = 2,
    in_hand: Optional[int] = None,
    position: int = 0,
    to_act: Optional[int] = None,
    committed: float = 0.0,
    to_call: float = 0.0,
    pot: Optional[float] = None,
    previous_round_bets: int = 0,
    game: Optional[GameDef] = None,
) -> DecisionPoint:
    """Build the decision point for a described situation.

    Counts are in bets of the street (``committed``, ``to_call``), the pot in small bets.

    - ``players``: players dealt; ``in_hand``: players not folded (default all).
    - ``position``: the actor's place among the players in hand in this round's betting
      order, 0 = first to act .. ``in_hand - 1`` = last.
    - ``to_act``: players still to act after the actor this round (default: those after
      him in the order).
    - ``pot``: the pot before the action in small bets, this street's bets included
      (default: the bets on this street plus nothing from earlier streets).
    Raises :class:`GameError` for impossible combinations.
    """
    h, b = parse_hole_and_board(hole, board)
    street = STREET_OF_BOARD[len(b)]
    if game is None:
        game = standard_table(f"limit.{players}p", players, (5, 10), 10, 20)
    if game.n_players != players:
        raise GameError(f"the game seats {game.n_players} players but the situation says {players}")
    n_live = players if in_hand is None else in_hand
    if not 2 <= n_live <= players:
        raise GameError(f"players in hand must be between 2 and {players} (players dealt), got {n_live}")
    if not 0 <= position < n_live:
        raise GameError(f"position must be between 0 (first to act) and {n_live - 1} (last), got {position}")
    after = n_live - 1 - position
    if to_act is None:
        to_act = after
    if not 0 <= to_act <= n_live - 1:
        raise GameError(f"players to act must be between 0 and {n_live - 1}, got {to_act}")
    if committed < 0 or to_call < 0:
        raise GameError("bets committed and bets to call cannot be negative")
    if to_call > 0 and n_live < 2:
        raise GameError("nothing can be owed with no opponent in the hand")
    unit = game.bet_size(street) if game.betting == "limit" else game.big_blind
    cap_bets = game.raise_cap[street] + (1 if street == 0 else 0)
    top = committed + to_call
    if top > cap_bets + 1e-9:
        raise GameError(f"{top:g} bets on this street exceed the cap of {cap_bets} bets")
    if abs(top * 2 - round(top * 2)) > 1e-9 and game.betting == "limit":
        raise GameError("bet counts in a limit game are whole bets (or a half blind)")

    # Seats follow the game's layout: this round's order starts at its first-to-act
    # position; the players who folded are taken to be the first ones in that order.
    start = game.first_to_act[street]
    round_order = [(start + i) % players for i in range(players)]
    order = tuple(round_order[players - n_live:])
    actor = order[position]
    folded = tuple(p not in order for p in range(players))
    # the first `to_act` players after the actor (in turn order) still have to act
    cycle = list(order[position + 1 :]) + list(order[:position])
    acted_set = set(cycle[to_act:])
    acted = tuple(p in acted_set for p in range(players))
    comm = [0.0] * players
    comm[actor] = committed * unit
    if to_call > 0:
        raiser = cycle[-1]  # the player who bet last has acted and sits just before us
        # pre-flop the big blind's post is the first bet: it is owed before anyone acted
        if raiser not in acted_set and street > 0:
            raise GameError("someone must have bet for there to be something to call, "
                            "but every other player is still to act")
        comm[raiser] = top * unit
    street_total = sum(comm)
    pot_chips = street_total if pot is None else pot * game.small_bet
    if pot_chips + 1e-9 < street_total:
        raise GameError(f"a pot of {pot_chips / game.small_bet:g} small bets is smaller than "
                        f"the {street_total / game.small_bet:g} small bets put in on this street")
    earlier = pot_chips - street_total
    total = [c + (0.0 if folded[p] else earlier / n_live) for p, c in enumerate(comm)]
    street_bets = math.ceil(top - 1e-9)
    legal = ("f" if to_call > 0 else "") + "c" + ("r" if street_bets < cap_bets else "")
    return DecisionPoint(
        game=game, street=street, position=actor, player="query", hole=h, board=b,
        folded=folded, all_in=(False,) * players, acted=acted, order=order,
        street_bets=street_bets, committed=tuple(comm), total_committed=tuple(total),
        previous_round_bets=previous_round_bets if street > 0 else 0, legal=legal,
    )
