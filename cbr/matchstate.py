"""ACPC ``MATCHSTATE`` strings: the situation a dealer sends to one seat.

``MATCHSTATE:<position>:<hand number>:<betting>:<cards>`` where ``cards`` holds one hole
pair per position (only the receiver's is shown) and then ``/flop/turn/river``. The
betting is replayed through the rules engine, so the decision point is the one a logged
hand gives at the same moment.

>>> from cbr.game import preset
>>> ms = parse_matchstate("MATCHSTATE:1:7:cr/:|AdQc/3h4cJh", preset("holdem.limit.2p"))
>>> ms.position, ms.hand_number, ms.hole, ms.board
(1, 7, (49, 40), (6, 8, 38))
>>> dp = from_matchstate("MATCHSTATE:1:7:crc/r:|AdQc/3h4cJh", preset("holdem.limit.2p"))
>>> dp.street, dp.position, dp.bets_to_call, dp.legal
(1, 1, 1.0, 'fcr')
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from evaluator_ext.cards import parse_cards
from cbr.errors import GameError
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import BOARD_SIZES, GameDef
from cbr.game.state import HandState



@dataclass(frozen=True)
class MatchState:
    """A parsed ``MATCHSTATE`` line: whose view, which hand, the betting, the cards."""

    position: int
    hand_number: int
    betting: str
    hole: Optional[tuple[int, int]]
    holes: tuple[Optional[tuple[int, int]], ...]
    board: tuple[int, ...]


def parse_matchstate(text: str, game: GameDef) -> MatchState:
    """Parse a ``MATCHSTATE`` line for ``game``; raises :class:`GameError` saying what is wrong."""
    line = text.strip()
    if line.startswith("MATCHSTATE:"):
        line = line[len("MATCHSTATE:"):]
    parts = line.split(":")
    if len(parts) != 4:
        raise GameError(f"a MATCHSTATE has 5 ':'-separated fields "
                        f"(MATCHSTATE:position:hand:betting:cards), got {text.strip()!r}")
    pos_text, hand_text, betting, cards = parts
    try:
        position, hand_number = int(pos_text), int(hand_text)
    except ValueError:
        raise GameError(f"MATCHSTATE position and hand number must be integers: {text.strip()!r}") from None
    if not 0 <= position < game.n_players:
        raise GameError(f"MATCHSTATE position {position} is not a seat of the {game.n_players}-player game {game.name}")
    segments = cards.split("/")
    holes_text = segments[0].split("|")
    if len(holes_text) != game.n_players:
        raise GameError(f"MATCHSTATE shows {len(holes_text)} hole-card slots for a {game.n_players}-player game")
    holes: list[Optional[tuple[int, int]]] = []
    for h in holes_text:
        if not h:
            holes.append(None)
            continue
        pair = parse_cards(h)
        if len(pair) != 2:
            raise GameError(f"hole cards {h!r} are not two cards")
        holes.append((pair[0], pair[1]))
    board = parse_cards("".join(segments[1:]))
    if len(board) not in BOARD_SIZES or len(segments) - 1 > 3:
        raise GameError(f"MATCHSTATE board {'/'.join(segments[1:])!r} is not a flop, turn or river")
    known = [c for h in holes if h for c in h] + list(board)
    parse_cards(known)  # raises when a card appears twice
    return MatchState(position, hand_number, betting, holes[position], tuple(holes), board)


_TOKEN = re.compile(r"([fck])|r(\d*)|(/)")


def betting_tokens(betting: str) -> list[tuple[str, Optional[float]]]:
    """``[(kind, raise-to hand total or None), ...]`` with ``("/", None)`` between streets.

    >>> betting_tokens("cr/r250")
    [('c', None), ('r', None), ('/', None), ('r', 250.0)]
    """
    out: list[tuple[str, Optional[float]]] = []
    pos = 0
    while pos < len(betting):
        m = _TOKEN.match(betting, pos)
        if m is None:
            raise GameError(f"betting {betting!r}: unexpected {betting[pos]!r} at character {pos + 1}")
        if m.group(1):
            out.append(("c" if m.group(1) == "k" else m.group(1), None))
        elif m.group(3):
            out.append(("/", None))
        else:
            out.append(("r", float(m.group(2)) if m.group(2) else None))
        pos = m.end()
    return out


def state_from_matchstate(ms: MatchState, game: GameDef) -> HandState:
    """Replay the betting of ``ms`` and deal its board; the state just after the last action.

    Each action goes through the rules engine, so an illegal or out-of-turn betting string
    raises :class:`GameError` saying which action is wrong.
    """
    state = HandState(game, hole_cards=ms.holes, hand_id=str(ms.hand_number), source="matchstate")
    dealt = 0

    def deal() -> None:
        nonlocal dealt
        need = BOARD_SIZES[state.street + 1] if state.street < 3 else 5
        if len(ms.board) < need:
            raise GameError(f"MATCHSTATE betting reaches street {state.street + 1} "
                            f"but the board has only {len(ms.board)} cards")
        state.deal_board(ms.board[dealt:need])
        dealt = need

    for i, (kind, total) in enumerate(betting_tokens(ms.betting)):
        if kind == "/":
            if not state.needs_board:
                raise GameError(f"betting {ms.betting!r}: a '/' where the {state.street}. round is not over")
            deal()
            continue
        while state.needs_board and not state.is_over:
            deal()
        amount = None
        if kind == "r" and game.betting == "nolimit":
            if total is None:
                raise GameError(f"betting {ms.betting!r}: a no-limit raise needs its amount (rN)")
            p = state.to_act if state.to_act is not None else 0
            amount = total - (state.total_committed[p] - state.committed[p])
        try:
            state.act(kind, amount)
        except GameError as exc:
            raise GameError(f"betting {ms.betting!r}, action {i + 1}: {exc}") from None
    while state.needs_board and not state.is_over and dealt < len(ms.board):
        deal()
    return state


def from_matchstate(text: str, game: GameDef) -> DecisionPoint:
    """The decision point of the receiving seat; raises :class:`GameError` if it is not its turn."""
    ms = parse_matchstate(text, game)
    state = state_from_matchstate(ms, game)
    if state.is_over:
        raise GameError("the hand in this MATCHSTATE is over; there is no decision to make")
    if state.to_act != ms.position:
        raise GameError(f"it is position {state.to_act}'s turn in this MATCHSTATE, not position {ms.position}'s")
    return state.decision_point()
