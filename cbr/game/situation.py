"""Situations for queries: a :class:`~cbr.game.DecisionPoint` from plain numbers.

``cbr query`` describes the situation either with options (this module's
:func:`situation`) or as an ACPC ``MATCHSTATE`` string replayed by the rules engine
(:func:`cbr.acpc.matchstate.from_matchstate`). Both play actions through
:class:`~cbr.game.state.HandState`: :func:`situation` searches the legal action
sequences (blinds posted, the board dealt street by street) for the first spot that has
the described numbers, so the decision point is one that replaying a real hand gives, and
a description that no legal hand can reach is refused with a :class:`~cbr.errors.GameError`
whose ``field`` is the option to change (by its name here: ``pot``, ``to_call``...; the
message names it in words, and the command line and the server each add their own name for
it: ``--pot``, ``'pot'``).

>>> dp = situation(hole="AdQc", board="3h4cJh", players=2, position=1, to_call=1, pot=5)
>>> dp.street, dp.players_in_hand, dp.relative_position, dp.bets_to_call, dp.small_bets_in_pot
(1, 2, 1.0, 1.0, 5.0)
>>> dp.previous_round_bets, dp.history     # the pot of 5 needs a raised pre-flop
(2, 'rc/r')
>>> dp = situation(hole="AhKd")               # pre-flop: the blinds are posted
>>> dp.game.name, dp.committed                 # cbr query's default game (ACPC: seat 0 the big blind)
('holdem.limit.2p', (10.0, 5.0))
>>> situation(hole="AdQc", board="3h4cJh", players=2, position=1, to_call=1, pot=4)
Traceback (most recent call last):
...
cbr.errors.GameError: no legal hand reaches a pot of 4 small bets with the other options given (a pot of 3 can happen): change the pot
"""
from __future__ import annotations

import heapq
import itertools
import math
from collections import deque
from dataclasses import dataclass, replace
from typing import Optional

from cbr.errors import GameError, counted
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import BOARD_SIZES, MAX_SEATS, STREET_OF_BOARD, STREETS, GameDef
from cbr.game.spec import default_game
from cbr.game.state import HandState
from evaluator_ext.cards import CardLike, parse_hole_and_board

#: Game states a search may visit before giving up (each is one HandState copy).
SEARCH_LIMIT = 50_000
_EPS = 1e-9

# option name in the library (the errors' ``field``) -> what the user changes, in words
_OPTION = {
    "pot": "the pot",
    "previous_round_bets": "the previous round's bets",
    "to_act": "the players still to act",
    "committed": "the bets you committed",
    "to_call": "the bets to call",
    "position": "your position",
    "in_hand": "the players in hand",
}


@dataclass(frozen=True)
class _Target:
    """The described numbers; None = any value."""

    street: int
    in_hand: Optional[int]
    position: Optional[int]
    to_act: Optional[int]
    committed: Optional[float]
    to_call: Optional[float]
    pot: Optional[float]
    previous_round_bets: Optional[int]

    def describe(self, name: str, dp: DecisionPoint) -> str:
        """The value ``dp`` has for option ``name``, as the user would write it."""
        live = [p for p in dp.order if not dp.folded[p]]
        value = {"pot": dp.small_bets_in_pot, "previous_round_bets": dp.previous_round_bets,
                 "to_act": dp.players_to_act, "committed": dp.bets_committed,
                 "to_call": dp.bets_to_call, "position": live.index(dp.position),
                 "in_hand": dp.players_in_hand}[name]
        return f"{value:g}"


class _SearchLimit(Exception):
    """Raised inside the search when it visited :data:`SEARCH_LIMIT` states."""


def _number(name: str, value: Optional[float], *, whole: bool, halves: bool = False) -> Optional[float]:
    """``value`` as a finite float (or None); refuses NaN, infinities, fractions."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise GameError(f"{_OPTION[name]} must be a number, got {value!r}", field=name)
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise GameError(f"{_OPTION[name]} must be a number, got {value!r}", field=name) from None
    if not math.isfinite(x):
        raise GameError(f"{_OPTION[name]} must be a finite number, got {value!r}", field=name)
    if x < 0:
        raise GameError(f"{_OPTION[name]} cannot be negative, got {x:g}", field=name)
    if whole and not x.is_integer():
        if not halves or not (2 * x).is_integer():
            unit = "whole bets (or a half bet for the small blind pre-flop)" if halves else "whole bets"
            raise GameError(f"{_OPTION[name]} counts {unit} in a limit game, got {x:g}", field=name)
    return x


def _count(name: str, value: Optional[int], lo: int, hi: int, what: str, most: str = "{hi}",
           least: str = "{lo}") -> Optional[int]:
    """An integer option in ``lo..hi`` (or None). A value out of range names the bound it
    passed, in words where ``most``/``least`` give them (``"the players dealt ({hi})"``):
    ``must be between 2 and 2`` said nothing.

    >>> _count("in_hand", 5, 2, 2, "", most="the players dealt ({hi})")
    Traceback (most recent call last):
    ...
    cbr.errors.GameError: the players in hand must be at most the players dealt (2), got 5
    """
    if value is None:
        return None
    if isinstance(value, bool) or not float(value).is_integer():
        raise GameError(f"{_OPTION[name]} must be a whole number, got {value!r}", field=name)
    v = int(value)
    if not lo <= v <= hi:
        bound = (f"at least {least.format(lo=lo, hi=hi)}" if v < lo else f"at most {most.format(lo=lo, hi=hi)}")
        raise GameError(f"{_OPTION[name]} must be {bound}{' ' + what if what else ''}, got {v}", field=name)
    return v


def situation(
    *,
    hole: CardLike,
    board: CardLike = (),
    players: Optional[int] = None,
    in_hand: Optional[int] = None,
    position: Optional[int] = None,
    to_act: Optional[int] = None,
    committed: Optional[float] = None,
    to_call: Optional[float] = None,
    pot: Optional[float] = None,
    previous_round_bets: Optional[int] = None,
    game: Optional[GameDef] = None,
) -> DecisionPoint:
    """The decision point of a described situation, reached by legal play.

    The street comes from the board. Counts are in bets of the street (``committed``,
    ``to_call``; pre-flop the small blind is half a bet), the pot in small bets.

    - ``players``: players dealt (default: the game's seats, or 2).
    - ``game``: default the preset ``holdem.limit.<players>p``
      (:func:`~cbr.game.spec.default_game`, what ``cbr query`` and ``cbr match`` play).
    - ``in_hand``: players not folded, the actor included (default: all dealt).
    - ``position``: the actor's place among the players in hand in this round's betting
      order, 0 = first to act .. ``in_hand - 1`` = last.
    - ``to_act``: players still to act after the actor this round.
    - ``pot``: the pot before the action in small bets, this street's bets included.
    - ``previous_round_bets``: bets and raises of the previous street (the big blind is
      the first bet pre-flop, so a limped pre-flop has 1); 0 or None pre-flop.

    Every other option left out (None) takes the value of the spot reached with the fewest
    actions after the blinds (among those, checks and calls come before raises and raises
    before folds): a left-out option means "no more betting than the options given need".
    Raises :class:`GameError` (a ``ValueError``) when no legal hand of the game has the
    described numbers; its ``field`` (``fields``) is the option (options) to change.

    >>> dp = situation(hole="7c2d", players=3, position=0)   # first to act, facing the blind
    >>> dp.bets_to_call, dp.players_to_act, dp.small_bets_in_pot
    (1.0, 2, 1.5)
    """
    h, b = parse_hole_and_board(hole, board)
    street = STREET_OF_BOARD[len(b)]
    if game is None:
        n = 2 if players is None else _count_players(players)
        game = default_game(n)
    n = game.n_players if players is None else _count_players(players)
    if game.n_players != n:
        raise GameError(f"the game {game.name} seats {counted(game.n_players, 'player')} but the situation says "
                        f"{n} are dealt", field="dealt")
    if game.betting != "limit":
        raise GameError(f"situations from options are limit hold'em spots; describe a spot of the "
                        f"{game.betting} game {game.name} as a MATCHSTATE", field="matchstate")
    target = _validated_target(game, street, in_hand, position, to_act, committed, to_call, pot,
                               previous_round_bets)
    try:
        state = _search(game, b, target)
    except _SearchLimit:
        raise GameError(f"no hand found for this spot within {SEARCH_LIMIT:,} game states of the "
                        f"{n}-player game: give fewer or other options (the pot, the players in hand, ...)") from None
    if state is None:
        raise _impossible(game, b, target)
    if state.to_act is None:  # pragma: no cover - the search only stops at a decision
        raise GameError("internal: the search stopped where no one is to act")
    state.set_hole_cards(state.to_act, (h[0], h[1]))
    return replace(state.decision_point(), player="query")


def described_situation(
    game: GameDef,
    *,
    hole: Optional[CardLike],
    board: Optional[CardLike] = None,
    dealt: Optional[int] = None,
    in_hand: Optional[int] = None,
    position: Optional[int] = None,
    to_act: Optional[int] = None,
    committed: Optional[float] = None,
    to_call: Optional[float] = None,
    pot: Optional[float] = None,
    previous_round_bets: Optional[int] = None,
) -> DecisionPoint:
    """The spot ``cbr query``'s options (and the HTTP server's fields) describe in ``game``:
    :func:`situation` with ``dealt`` players (default: the game's seats; another count
    re-seats the game). Raises :class:`GameError` when ``hole`` is missing (``fields``:
    ``hole``, ``matchstate``).

    >>> from cbr.game.gamedef import preset
    >>> described_situation(preset("holdem.limit.2p"), hole="AdQc", dealt=3).game.n_players
    3
    """
    if hole is None:
        raise GameError("no situation: give the hole cards (and the board, the bets to call, ...) or a MATCHSTATE",
                        field=("hole", "matchstate"))
    n = dealt if dealt is not None else game.n_players
    return situation(hole=hole, board=board or "", players=n, in_hand=in_hand, position=position, to_act=to_act,
                     committed=committed, to_call=to_call, pot=pot, previous_round_bets=previous_round_bets,
                     game=game if game.n_players == n else game.with_players(n))


def _count_players(players: int) -> int:
    if isinstance(players, bool) or not float(players).is_integer() or not 2 <= players <= MAX_SEATS:
        raise GameError(f"players dealt must be between 2 and {MAX_SEATS}, got {players!r}", field="dealt")
    return int(players)


def _validated_target(game: GameDef, street: int, in_hand: Optional[int], position: Optional[int],
                      to_act: Optional[int], committed: Optional[float], to_call: Optional[float],
                      pot: Optional[float], prev: Optional[int]) -> _Target:
    """Range checks that need no search, each naming its option."""
    n = game.n_players
    m = _count("in_hand", n if in_hand is None else in_hand, 2, n, "", most="the players dealt ({hi})",
               least="{lo} (you and an opponent)")
    live = m
    pos = _count("position", position, 0, live - 1, "(0 = first to act)",
                 most=f"{{hi}} with {counted(live, 'player')} in hand")
    after = _count("to_act", to_act, 0, live - 1, "", most="{hi} (the other players in hand)")
    cap = game.raise_cap[street] + (1 if street == 0 else 0)  # pre-flop the big blind is a bet
    com = _number("committed", committed, whole=True, halves=street == 0)
    owe = _number("to_call", to_call, whole=True, halves=street == 0)
    for name, value in (("committed", com), ("to_call", owe)):
        if value is not None and value > cap:
            raise GameError(f"{_OPTION[name]}: {value:g} bets exceed the cap of {cap} bets on the "
                            f"{STREETS[street]}", field=name)
    if com is not None and owe is not None and com + owe > cap + _EPS:
        raise GameError(f"{com:g} bets committed and {owe:g} to call exceed the cap of {cap} bets on the "
                        f"{STREETS[street]}: change the bets to call or committed", field=("to_call", "committed"))
    if street == 0:
        if prev not in (None, 0):
            raise GameError(f"pre-flop has no previous round: leave out the previous round's bets, got {prev!r}",
                            field="previous_round_bets")
        prev = None
    else:
        prev_cap = game.raise_cap[street - 1] + (1 if street == 1 else 0)
        prev = _count("previous_round_bets", prev, 1 if street == 1 else 0, prev_cap,
                      f"on the {STREETS[street]} (the {STREETS[street - 1]}'s bets; a limped pre-flop has 1)")
    chips = _number("pot", pot, whole=False)
    if chips is not None:
        most = n * sum((game.raise_cap[k] + (1 if k == 0 else 0)) * game.bet_size(k) for k in range(street + 1))
        most /= game.small_bet
        if chips > most + _EPS:
            raise GameError(f"{_OPTION['pot']}: {chips:g} small bets is more than {counted(n, 'player')} can put in "
                            f"by the {STREETS[street]} (at most {most:g})", field="pot")
    return _Target(street, m, pos, after, com, owe, chips, prev)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-7


def _matches(state: HandState, t: _Target, pot: Optional[float] = None, prev: Optional[int] = None) -> bool:
    """Whether the player to act in ``state`` (on the target street) is the described spot
    (``pot`` in chips and ``prev`` replace the state's own when given)."""
    p = state.to_act
    if p is None:
        return False
    live = [q for q in state.order if not state.folded[q]]
    if t.in_hand is not None and len(live) != t.in_hand:
        return False
    if t.position is not None and live.index(p) != t.position:
        return False
    unit = state.game.bet_size(state.street)
    if t.committed is not None and not _close(state.committed[p] / unit, t.committed):
        return False
    if t.to_call is not None and not _close(state.to_call / unit, t.to_call):
        return False
    chips = state.pot if pot is None else pot
    if t.pot is not None and not _close(chips / state.game.small_bet, t.pot):
        return False
    bets = state.previous_round_bets if prev is None else prev
    if t.previous_round_bets is not None and bets != t.previous_round_bets:
        return False
    if t.to_act is not None:
        i = state.order.index(p)
        waiting = sum(1 for q in state.order[i + 1:] + state.order[:i]
                      if not state.folded[q] and not state.all_in[q] and not state.acted[q])
        if waiting != t.to_act:
            return False
    return True


def _pruned(state: HandState, t: _Target) -> bool:
    """Whether no spot matching ``t`` can follow ``state`` (pots and bet levels only grow)."""
    g = state.game
    live = sum(not f for f in state.folded)
    if t.in_hand is not None and live < t.in_hand:
        return True
    if t.pot is not None and state.pot / g.small_bet > t.pot + 1e-7:
        return True
    if state.street == t.street:
        if t.previous_round_bets is not None and state.previous_round_bets != t.previous_round_bets:
            return True
        if t.committed is not None and t.to_call is not None:
            if state.bet_level / g.bet_size(state.street) > t.committed + t.to_call + 1e-7:
                return True
    elif state.needs_board and state.street == t.street - 1 and t.previous_round_bets is not None:
        return state.street_bets != t.previous_round_bets
    return False


def _key(state: HandState, with_pot: bool) -> tuple:
    """What the rest of the search from ``state`` depends on (seat totals only via the pot)."""
    return (state.street, state.needs_board, state.to_act, state.committed, state.folded, state.acted,
            state.all_in, state.raises, state.previous_round_bets, state.bet_level,
            state.pot if with_pot else None)


def _copy(state: HandState) -> HandState:
    """A copy for the search: HandState keeps its mutable parts in lists of immutable values
    (numbers, flags, frozen actions, card tuples), so copying those lists is a deep copy
    (ten times faster than ``copy.deepcopy``, which the search would spend its time in)."""
    clone = object.__new__(HandState)
    d = clone.__dict__
    d.update(state.__dict__)
    for k, v in d.items():
        if type(v) is list:
            d[k] = v.copy()
    return clone


def _search_flat(game: GameDef, board: tuple[int, ...], t: _Target, limit: int = SEARCH_LIMIT) -> Optional[HandState]:
    """Over whole hands, cheapest first: the cost of a line is its raises and folds (then
    its length), so checks and calls are tried before any bet. The first state whose
    player to act matches ``t``, or None when none can; raises :class:`_SearchLimit`
    after ``limit`` states. Used on big tables and where stacks can run out."""
    seen: set[tuple] = set()
    counter = itertools.count()
    heap: list[tuple[int, int, int, HandState]] = [(0, 0, next(counter), HandState(game, source="situation"))]
    while heap:
        cost, length, _, state = heapq.heappop(heap)
        if state.is_over:
            continue
        if state.needs_board:
            if state.street >= t.street or _pruned(state, t):
                continue
            state.deal_board(board[BOARD_SIZES[state.street]:BOARD_SIZES[state.street + 1]])
            if state.is_over:
                continue
            if state.needs_board:  # nobody can bet any more: no decision on this street
                heapq.heappush(heap, (cost, length, next(counter), state))
                continue
        key = _key(state, t.pot is not None)
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > limit:
            raise _SearchLimit()
        if _pruned(state, t):
            continue
        if state.street == t.street and _matches(state, t):
            return state
        legal = state.legal_actions()
        if t.in_hand is not None and sum(not f for f in state.folded) <= t.in_hand:
            legal = legal.replace("f", "")
        for kind in legal:
            child = _copy(state)
            child.act(kind)
            heapq.heappush(heap, (cost + (kind != "c"), length + 1, next(counter), child))
    return None


def _impossible(game: GameDef, board: tuple[int, ...], t: _Target) -> GameError:
    """The error for a target no hand reaches: the first option whose value alone is wrong."""
    for name in _OPTION:
        if getattr(t, name) is None:
            continue
        relaxed = replace(t, **{name: None})
        try:
            found = _search(game, board, relaxed, limit=SEARCH_LIMIT // 5)
        except _SearchLimit:
            continue
        if found is not None:
            value = getattr(t, name)
            can = _Target.describe(relaxed, name, found.decision_point())
            what = {"pot": f"a pot of {counted(value, 'small bet')}",
                    "previous_round_bets": f"{counted(value, 'bet')} in the previous round",
                    "to_act": f"{counted(value, 'player')} still to act after you",
                    "committed": f"{counted(value, 'bet')} committed", "to_call": f"{counted(value, 'bet')} to call",
                    "position": f"position {value:g}", "in_hand": f"{counted(value, 'player')} in hand"}[name]
            example = {"pot": f"a pot of {can}", "previous_round_bets": f"{can} previous-round bets",
                       "to_act": f"{can} still to act", "committed": f"{can} committed", "to_call": f"{can} to call",
                       "position": f"position {can}", "in_hand": f"{can} in hand"}[name]
            return GameError(f"no legal hand reaches {what} with the other options given "
                             f"({example} can happen): change {_OPTION[name]}", field=name)
    given = tuple(k for k in _SHORT if getattr(t, k) is not None)
    return GameError(f"no legal {game.n_players}-player hand reaches this {STREETS[t.street]} spot "
                     f"(options: {_summary(t)}): change one of them", field=given)


#: The options of a spot, as :func:`_summary` lists them.
_SHORT = {"in_hand": "in hand", "position": "position", "to_act": "to act", "committed": "committed",
          "to_call": "to call", "pot": "pot", "previous_round_bets": "previous-round bets"}


def _summary(t: _Target) -> str:
    return ", ".join(f"{words} {getattr(t, k):g}" for k, words in _SHORT.items() if getattr(t, k) is not None)


# ---------------------------------------------------------------- street by street
# Within a street, what can happen depends only on who has folded (no one can be all-in
# when the stacks cover every bet), not on the pot or the earlier betting. So each street
# is played out once per set of folded players (cached per game), and the search over
# whole hands only adds up pots between streets.
_STREET_LIMIT = 5_000
_street_cache: dict[tuple, "_StreetPlay"] = {}


@dataclass(frozen=True)
class _StreetPlay:
    """A street played from its start: decisions (actions, state) and ends (actions, state),
    fewest actions first; ``start_pot`` is the start state's pot."""

    start_pot: float
    decisions: tuple[tuple[tuple[str, ...], HandState], ...]
    ends: tuple[tuple[tuple[str, ...], HandState], ...]


def _play_street(start: HandState, min_live: int = 2) -> _StreetPlay:
    """Play the street of ``start`` every way (folds only while more than ``min_live``
    players are in), fewest actions first; cached per game, street, folded players."""
    key = (start.game, start.street, start.folded, min_live)
    hit = _street_cache.get(key)
    if hit is not None:
        return hit
    seen: set[tuple] = set()
    decisions, ends = [], []
    queue = deque([((), start)])
    while queue:
        actions, state = queue.popleft()
        if state.is_over or state.needs_board:
            ends.append((actions, state))
            continue
        k = (state.to_act, state.committed, state.folded, state.acted, state.raises, state.bet_level)
        if k in seen:
            continue
        seen.add(k)
        if len(seen) > _STREET_LIMIT:
            raise _SearchLimit()
        decisions.append((actions, state))
        legal = state.legal_actions()
        if sum(not f for f in state.folded) <= min_live:
            legal = legal.replace("f", "")
        for kind in "crf":
            if kind in legal:
                child = _copy(state)
                child.act(kind)
                queue.append((actions + (kind,), child))
    play = _StreetPlay(start.pot, tuple(decisions), tuple(ends))
    if len(_street_cache) > 512:
        _street_cache.clear()
    _street_cache[key] = play
    return play


def _no_all_in(game: GameDef) -> bool:
    if game.stack is None:
        return True
    most = sum((game.raise_cap[k] + 1) * game.bet_size(k) for k in range(4)) + max(game.blinds) + max(game.antes)
    return game.stack > most


def _search(game: GameDef, board: tuple[int, ...], t: _Target, limit: int = SEARCH_LIMIT) -> Optional[HandState]:
    """The state (reached by legal play) whose player to act is the spot ``t``, or None.

    Street by street when no one can be all-in (see :func:`_play_street`), else
    breadth-first over whole hands; both prefer the fewest actions, and at each step
    check/call, then raise, then fold."""
    if not _no_all_in(game):
        return _search_flat(game, board, t, limit)
    key = (game, t)
    path = _PATHS.get(key, _UNKNOWN)
    if path is _UNKNOWN:
        try:
            path = _search_streets(game, board, t)
        except _SearchLimit:  # big tables: too many ways to play a street; fewest bets first
            return _search_flat(game, board, t, limit)
        if len(_PATHS) >= PATH_CACHE:
            _PATHS.clear()
        _PATHS[key] = path
    if path is None:
        return None
    state = _replay(game, board, path)
    if not _matches(state, t):  # pragma: no cover - the street-by-street bookkeeping is exact
        raise GameError("internal: the spot found street by street does not replay to the described numbers")
    return state


#: Spots whose action path was found street by street, by (game, described numbers): without
#: all-ins, the betting a spot needs does not depend on the cards, so a path is searched once
#: and replayed with each query's board (a river spot's search takes 5-15 ms, a replay 0.1 ms).
PATH_CACHE = 4096
_PATHS: dict[tuple[GameDef, _Target], Optional[tuple[tuple[str, ...], ...]]] = {}
_UNKNOWN = object()


def _search_streets(game: GameDef, board: tuple[int, ...], t: _Target) -> Optional[tuple[tuple[str, ...], ...]]:
    """:func:`_search` street by street: the action path (per street) of the spot, or None;
    raises :class:`_SearchLimit` on big tables."""
    sb = game.small_bet
    root = HandState(game, source="situation")
    # boundary: (folded, pot, previous street's bets) -> (actions per street, a state at that street's start)
    boundary: dict[tuple, tuple[tuple[tuple[str, ...], ...], HandState]] = {(root.folded, root.pot, None): ((), root)}
    for k in range(t.street):
        nxt: dict[tuple, tuple[tuple[tuple[str, ...], ...], HandState]] = {}
        for (folded, pot, _), (path, start) in sorted(boundary.items(), key=lambda kv: _length(kv[1][0])):
            play = _play_street(start, t.in_hand or 2)
            for actions, end in play.ends:
                if end.is_over:
                    continue
                live = sum(not f for f in end.folded)
                if t.in_hand is not None and live < t.in_hand:
                    continue
                new_pot = pot + end.pot - play.start_pot
                if t.pot is not None and new_pot / sb > t.pot + 1e-7:
                    continue
                bets = end.street_bets
                if k == t.street - 1 and t.previous_round_bets is not None and bets != t.previous_round_bets:
                    continue
                key = (end.folded, new_pot, bets if k == t.street - 1 else None)
                cand = path + (actions,)
                if key not in nxt or _length(cand) < _length(nxt[key][0]):
                    nxt[key] = (cand, end)
        boundary = {}
        for key, (path, _end) in nxt.items():
            # replayed (not the cached end state, whose board is another query's)
            start = _replay(game, board, path)
            start.deal_board(board[BOARD_SIZES[k]:BOARD_SIZES[k + 1]])
            boundary[key] = (path, start)
    best: Optional[tuple[int, tuple[tuple[str, ...], ...]]] = None
    for (folded, pot, prev), (path, start) in boundary.items():
        play = _play_street(start, t.in_hand or 2)
        for actions, state in play.decisions:
            if best is not None and _length(path) + len(actions) >= best[0]:
                break
            if _matches(state, t, pot=pot + state.pot - play.start_pot, prev=prev):
                best = (_length(path) + len(actions), path + (actions,))
                break
    return None if best is None else best[1]


def _length(path: tuple[tuple[str, ...], ...]) -> int:
    return sum(len(a) for a in path)


def _replay(game: GameDef, board: tuple[int, ...], path: tuple[tuple[str, ...], ...]) -> HandState:
    """Play ``path`` (actions per street) through a fresh HandState, dealing the board."""
    state = HandState(game, source="situation")
    for k, actions in enumerate(path):
        if k:
            state.deal_board(board[BOARD_SIZES[k - 1]:BOARD_SIZES[k]])
        for kind in actions:
            state.act(kind)
    return state
