"""ACPC ``MATCHSTATE`` strings, parsed and written: the situation a dealer sends to one seat.

``MATCHSTATE:<position>:<hand number>:<betting>:<cards>`` where ``cards`` holds one hole
pair per position (only the receiver's is shown, and every live player's at the end of a
hand that went to a showdown) and then ``/flop/turn/river``. Parsing replays the betting
through the rules engine, so the decision point is the one a logged hand gives at the same
moment; :func:`matchstate_line` writes the line a dealer sends from its table state.

>>> from cbr.game import preset
>>> ms = parse_matchstate("MATCHSTATE:1:7:cr/:|AdQc/3h4cJh", preset("holdem.limit.2p"))
>>> ms.position, ms.hand_number, ms.hole, ms.board
(1, 7, (49, 40), (6, 8, 38))
>>> dp = from_matchstate("MATCHSTATE:1:7:crc/r:|AdQc/3h4cJh", preset("holdem.limit.2p"))
>>> dp.street, dp.position, dp.bets_to_call, dp.legal
(1, 1, 1.0, 'fcr')
>>> s = HandState(preset("holdem.limit.2p"), hole_cards=[(51, 50), (0, 5)], hand_id="7")
>>> s.act("r")
Action(street=0, position=1, kind='r', amount=None, all_in=False)
>>> matchstate_line(s, 7, viewer=0)
'MATCHSTATE:0:7:r:AsAh|'
>>> parse_matchstate(matchstate_line(s, 7, viewer=1), s.game).hole
(0, 5)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from cbr.errors import GameError, counted
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import BOARD_SIZES, STREETS, GameDef
from cbr.game.state import HandState
from evaluator_ext.cards import cards_str, parse_cards


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
    """Parse a ``MATCHSTATE`` line for ``game``; raises :class:`GameError` saying what is wrong.

    The board is given street by street (``/flop/turn/river``: 3, 1 and 1 cards), and the
    receiving position's hole cards must be shown.

    >>> from cbr.game import preset
    >>> parse_matchstate("MATCHSTATE:1:0::|AsAh/2c3c/4c", preset("holdem.limit.2p"))
    Traceback (most recent call last):
    ...
    cbr.errors.GameError: MATCHSTATE flop '2c3c' has 2 cards; the flop has 3
    """
    line = text.strip()
    shown = _shown(line)
    if line.startswith("MATCHSTATE:"):
        line = line[len("MATCHSTATE:"):]
    parts = line.split(":")
    if len(parts) != 4:
        raise GameError(f"a MATCHSTATE has 5 ':'-separated fields "
                        f"(MATCHSTATE:position:hand:betting:cards), got {shown}")
    pos_text, hand_text, betting, cards = parts
    if not (_DIGITS.fullmatch(pos_text) and _DIGITS.fullmatch(hand_text)):
        raise GameError(f"MATCHSTATE position and hand number must be whole numbers >= 0: {shown}")
    position, hand_number = int(pos_text), int(hand_text)
    if not 0 <= position < game.n_players:
        raise GameError(f"MATCHSTATE position {_short(pos_text)} is not a seat of the "
                        f"{game.n_players}-player game {game.name}")
    segments = cards.split("/")
    holes_text = segments[0].split("|")
    if len(holes_text) != game.n_players:
        raise GameError(f"MATCHSTATE shows {counted(len(holes_text), 'hole-card slot')} for a {game.n_players}-player game")
    holes: list[Optional[tuple[int, int]]] = []
    for h in holes_text:
        if not h:
            holes.append(None)
            continue
        pair = parse_cards(h)
        if len(pair) != 2:
            raise GameError(f"hole cards {_short(h)!r} are not two cards")
        holes.append((pair[0], pair[1]))
    if holes[position] is None:
        raise GameError(f"MATCHSTATE shows no hole cards for its own position {position}")
    streets = segments[1:]
    if len(streets) > 3:
        raise GameError(f"MATCHSTATE board has {len(streets)} '/'-separated streets; at most 3 "
                        f"(flop/turn/river)")
    board: list[int] = []
    for street, seg in enumerate(streets, start=1):
        cards_here = parse_cards(seg)
        want = BOARD_SIZES[street] - BOARD_SIZES[street - 1]
        if len(cards_here) != want:
            raise GameError(f"MATCHSTATE {STREETS[street]} {_short(seg)!r} has {counted(len(cards_here), 'card')}; "
                            f"the {STREETS[street]} has {want}")
        board += cards_here
    known = [c for h in holes if h for c in h] + board
    parse_cards(known)  # raises when a card appears twice
    return MatchState(position, hand_number, betting, holes[position], tuple(holes), tuple(board))


_DIGITS = re.compile(r"[0-9]{1,18}")


def _short(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters for a one-line message."""
    return text if len(text) <= limit else text[:limit] + "..."


def _shown(line: str) -> str:
    return repr(_short(line, 120))


_TOKEN = re.compile(r"([fck])|r([0-9]{0,15})|(/)")


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
            raise GameError(f"betting {_short(betting)!r}: unexpected {betting[pos]!r} at character {pos + 1}")
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
    raises :class:`GameError` saying which action is wrong. Each ``/`` deals the next
    street of the board, and the board must show exactly the streets the betting reached.
    """
    tokens = betting_tokens(ms.betting)
    reached = sum(1 for kind, _ in tokens if kind == "/")
    shown = next(s for s, size in enumerate(BOARD_SIZES) if size == len(ms.board))
    if reached != shown:
        raise GameError(f"MATCHSTATE board shows the {STREETS[shown]} ({counted(len(ms.board), 'card')}) but its betting "
                        f"{_short(ms.betting)!r} reaches the {STREETS[min(reached, 3)]}")
    state = HandState(game, hole_cards=ms.holes, hand_id=str(ms.hand_number), source="matchstate")
    for i, (kind, total) in enumerate(tokens):
        where = f"betting {_short(ms.betting)!r}, action {i + 1}"
        if kind == "/":
            if not state.needs_board:
                over = "the hand is over" if state.is_over else f"the {STREETS[state.street]} betting is not over"
                raise GameError(f"{where}: a '/' where {over}")
            state.deal_board(ms.board[BOARD_SIZES[state.street]:BOARD_SIZES[state.street + 1]])
            continue
        if state.needs_board:
            raise GameError(f"{where}: the {STREETS[state.street]} betting is over; a '/' must come first")
        amount = None
        if game.betting == "limit":
            if total is not None:
                raise GameError(f"{where}: a raise in limit hold'em has no amount")
        elif kind == "r":
            if total is None:
                raise GameError(f"{where}: a no-limit raise needs its amount (rN)")
            p = state.to_act if state.to_act is not None else 0
            amount = total - (state.total_committed[p] - state.committed[p])
        try:
            state.act(kind, amount)
        except GameError as exc:
            raise GameError(f"{where}: {exc}") from None
    return state


def from_matchstate(text: str, game: GameDef) -> DecisionPoint:
    """The decision point of the receiving seat; raises :class:`GameError` if it is not its turn."""
    ms = parse_matchstate(text, game)
    state = state_from_matchstate(ms, game)
    if state.is_over:
        raise GameError("the hand in this MATCHSTATE is over; there is no decision to make")
    if state.needs_board:
        raise GameError(f"the {STREETS[state.street]} betting of this MATCHSTATE is over and the next "
                        f"street is not dealt ('/' and its board cards missing); there is no decision to make")
    if state.to_act != ms.position:
        raise GameError(f"it is position {state.to_act}'s turn in this MATCHSTATE, not position {ms.position}'s")
    return state.decision_point()


def showdown_positions(state: HandState) -> set[int]:
    """Positions whose cards everyone sees at the end: those not folded when 2+ remain."""
    if not state.is_over:
        return set()
    live = {p for p in range(state.n_players) if not state.folded[p]}
    return live if len(live) > 1 else set()


def matchstate_line(state: HandState, hand_number: int, viewer: int) -> str:
    """The ``MATCHSTATE`` line position ``viewer`` is sent: its own hole cards, and every
    live player's once the hand is over at a showdown."""
    shown = showdown_positions(state) | {viewer}
    holes = "|".join(cards_str(h) if (p in shown and h is not None) else ""
                     for p, h in enumerate(state.hole_cards))
    b = state.board
    board = "".join("/" + cards_str(b[lo:hi]) for lo, hi in ((0, 3), (3, 4), (4, 5)) if len(b) >= hi)
    return f"MATCHSTATE:{viewer}:{hand_number}:{state.history}:{holes}{board}"
