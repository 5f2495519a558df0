"""The table state machine: one hand of (fixed-limit or no-limit) hold'em, action by action.

Positions are the hand's seats in ACPC order (see :mod:`cbr.game.gamedef`). Every action
has three faces, pokerkit style: :meth:`HandState.verify` raises :class:`GameError` with a
sentence saying why an action is illegal, :meth:`HandState.can` answers a bool, and
:meth:`HandState.act` changes the state and returns the :class:`~cbr.game.actions.Action`
that happened.

>>> from cbr.game import preset
>>> s = HandState(preset("holdem.limit.2p"), hole_cards=[(51, 50), (3, 7)])
>>> s.to_act, s.legal_actions(), s.pot          # the small blind (position 1) opens
(1, 'fcr', 15.0)
>>> s.unit, s.chips.pot                        # counted in whole chips of the game's unit
(1.0, 15)
>>> _ = s.act("r"); _ = s.act("c")
>>> s.needs_board, s.history
(True, 'rc')
>>> s.deal_board([12, 20, 30]); s.to_act, s.history
(0, 'rc/')
>>> s.legal_actions(), s.can("f")              # nothing to call: folding is illegal
('cr', False)
>>> _ = s.act("r"); _ = s.act("f"); s.history, s.is_over, s.payoffs()
('rc/rf', True, (20.0, -20.0))

Chips are integers: the engine counts whole chips of the hand's unit (:attr:`HandState.unit`),
the coarsest of 1, 0.1, 0.01, ... 0.000001 in which the game's blinds, bets, antes and
stack, the starting stacks and the posted blinds are all whole: 1 for ACPC and IRC tables,
0.01 for a PokerStars $0.02/$0.04 table or stacks in cents. Amounts go in and come out in the
log's money (floats, as the game states them: ``pot``, ``committed``, ``payoffs`` ...); the
integer chips themselves are :attr:`HandState.chips`. A no-limit amount that is not a whole
number of chips is refused. So no comparison of chips needs a tolerance.

>>> p = HandState(preset("holdem.limit.2p").replace(blinds=(0.04, 0.02), small_bet=0.04, big_bet=0.08))
>>> p.unit, p.chips.committed, p.committed, p.to_call
(0.01, (4, 2), (0.04, 0.02), 0.02)

Rules this engine follows (documented choices):

- Rounds close when every player not folded and not all-in has acted since the last
  bet/raise and matched it. When at most one player can still bet, the remaining streets
  have no betting: ``needs_board`` until the river is dealt, then ``is_over``.
- Folding when a check is possible is illegal ("cannot fold: nothing to call, check instead").
- Limit: ``r`` raises to the current level plus the street's fixed bet; every ``r`` counts
  toward ``game.raise_cap[street]`` (the big blind does not). A player with too few chips
  goes all-in for less (a *short all-in*). A short all-in raise does not reopen the betting
  for players who already acted since the last full raise: they may call or fold only
  (unless several short raises add up to a full raise). No one may raise when every other
  player has folded or is all-in (nobody could call).
- No-limit: ``r`` needs ``amount``, the actor's total on this street after the raise; at
  least the current level plus the last full raise increment (at least the big blind),
  unless the raise puts the actor all-in. The same short all-in rule applies.
- A blind posted all-in for less still opens the pre-flop betting at the full blind (the
  amount to call is the whole big blind); a player who already covers every chip the
  others can still put in is not asked to act.
- Antes are dead money in the main pot (every player not folded can win them).
- Payoffs: side pots are layered by each player's blinds and bets; each pot goes to the
  best hand among the players not folded who covered it; a split pot is divided in whole
  chips and the odd chips all go to the first winner left of the button (the button is the
  player who acts last after the flop), as pokerkit does.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from cbr.errors import GameError, counted
from cbr.game.actions import ACTION_NAMES, Action
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import BOARD_SIZES, STREETS, GameDef
from evaluator_ext.cards import card_str

Evaluator = Callable[[Sequence[int]], int]
#: Chips behind of a player with no stack limit (the view :attr:`HandState.stacks` shows ``inf``).
_BOTTOMLESS = 1 << 62
#: The finest unit the engine counts in: 10 ** -_FINEST.
_FINEST = 6


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _whole(x: float, scale: int) -> Optional[int]:
    """``x`` in chips of ``1 / scale`` when that is a whole number, else None. The one place
    money meets chips: a decimal amount read from text is not exact in binary (0.07 is
    7.000000000000001 cents), so it is whole when it is within a billionth (relative) of a
    whole number of chips; chips themselves are ints and compared exactly."""
    v = x * scale
    if not math.isfinite(v):
        return None
    r = round(v)
    return int(r) if abs(v - r) <= 1e-9 * max(1.0, abs(v)) else None


def chip_scale(amounts: Sequence[float]) -> int:
    """Chips per unit of money: the smallest of 1, 10, 100, ... 10**6 that makes every
    amount a whole number of chips (``None`` and ``inf``, no stack limit, are left out);
    raises :class:`GameError` when there is none (``nan`` included).

    >>> chip_scale([10, 5, 20]), chip_scale([0.02, 0.04, 1.37]), chip_scale([0.5, 3])
    (1, 100, 10)
    """
    finite = [float(a) for a in amounts if a is not None and a != math.inf]
    for k in range(_FINEST + 1):
        if all(_whole(a, 10 ** k) is not None for a in finite):
            return 10 ** k
    bad = next(a for a in finite if _whole(a, 10 ** _FINEST) is None)
    raise GameError(f"chip amount {bad!r} is not a whole number of chips of {10.0 ** -_FINEST:g}")


_SCALES: dict[tuple, int] = {}


def _hand_scale(game: GameDef, start: tuple[float, ...], posted: tuple[float, ...]) -> int:
    """:func:`chip_scale` of a hand's amounts (memoised: a log repeats a few layouts)."""
    key = (game.blinds, game.antes, game.small_bet, game.big_bet, game.stack, start, posted)
    scale = _SCALES.get(key)
    if scale is None:
        scale = chip_scale([*game.blinds, *game.antes, game.small_bet, game.big_bet, game.stack, *start, *posted])
        if len(_SCALES) > 10_000:
            _SCALES.clear()
        _SCALES[key] = scale
    return scale


@functools.lru_cache(maxsize=1024)
def _game_chips(game: GameDef, scale: int) -> tuple[tuple[int, ...], int, tuple[int, ...], tuple[int, ...]]:
    """The game's bets per street, big blind, blinds and antes in chips of ``1 / scale``."""
    def chips(x: float) -> int:
        c = _whole(x, scale)
        assert c is not None        # scale makes every amount of the game whole
        return c
    return (tuple(chips(game.bet_size(s)) for s in range(4)), chips(game.big_blind),
            tuple(chips(b) for b in game.blinds), tuple(chips(a) for a in game.antes))


@dataclass(frozen=True)
class Chips:
    """The table in whole chips of the hand's unit (:attr:`HandState.chips`): ``committed``
    this street and ``total`` over the hand per position, the ``pot``, the ``level`` a call
    matches, and each position's chips ``behind`` (None: no stack limit)."""

    committed: tuple[int, ...]
    total: tuple[int, ...]
    pot: int
    level: int
    behind: tuple[Optional[int], ...]


def button_position(game: GameDef) -> int:
    """The button: the position acting last after the flop (left of it acts first).

    >>> from cbr.game import preset
    >>> button_position(preset("holdem.limit.2p")), button_position(preset("casper.9p"))
    (1, 8)
    """
    return (game.first_to_act[1] - 1) % game.n_players


def seats_for_hand(seats: Sequence[str], hand_number: int) -> tuple[str, ...]:
    """Who sits at each position in hand ``hand_number`` (0-based) of a match.

    Positions are in blind order, so moving the button one seat per hand means that
    position ``i`` of hand ``k`` is seat ``(i + k) % n``: every player takes every position
    once per ``n`` hands (ACPC rotates its player list the same way).

    >>> seats_for_hand(["a", "b", "c"], 0), seats_for_hand(["a", "b", "c"], 1)
    (('a', 'b', 'c'), ('b', 'c', 'a'))
    """
    n = len(seats)
    if n < 2:
        raise GameError(f"a match needs at least 2 seats, got {n}")
    if hand_number < 0:
        raise GameError(f"hand number must be >= 0, got {hand_number}")
    return tuple(seats[(i + hand_number) % n] for i in range(n))


def _default_evaluate(cards: Sequence[int]) -> int:
    try:
        from evaluator_ext import evaluate  # type: ignore[attr-defined]
    except ImportError as exc:  # pragma: no cover - until the facade lands
        raise GameError(f"no hand evaluator available for the showdown ({exc})") from None
    return evaluate(cards)


class HandState:
    """One hand at one table; see the module docstring for the rules.

    ``stacks``: chips each position starts with (None: ``game.stack`` or unlimited).
    ``posted``: blinds actually posted (default ``game.blinds``); antes come from the game.
    ``hole_cards``: a pair of card ints per position, or None when unknown.
    """

    def __init__(
        self,
        game: GameDef,
        *,
        players: Sequence[str] | None = None,
        stacks: Sequence[float | None] | None = None,
        posted: Sequence[float] | None = None,
        hole_cards: Sequence[tuple[int, int] | None] | None = None,
        hand_id: str = "",
        source: str = "",
    ) -> None:
        n = game.n_players
        self.game = game
        self.hand_id = hand_id
        self.source = source
        self.players: tuple[str, ...] = tuple(players) if players is not None else tuple(f"p{i + 1}" for i in range(n))
        if len(self.players) != n:
            raise GameError(f"{n}-player game but {counted(len(self.players), 'player')} given")
        if stacks is None:
            stacks = [game.stack] * n
        if len(stacks) != n:
            raise GameError(f"{n}-player game but {len(stacks)} stacks given")
        start = [math.inf if s is None else float(s) for s in stacks]
        if any(s < 0 for s in start):
            raise GameError(f"stacks cannot be negative: {list(stacks)}")
        self.starting_stacks: tuple[float, ...] = tuple(start)
        money = game.blinds if posted is None else tuple(float(b) for b in posted)
        if len(money) != n or any(b < 0 for b in money):
            raise GameError(f"posted blinds need {n} non-negative amounts, got {list(money)}")
        self._scale = _hand_scale(game, tuple(start), money)
        self._bets, self._big_blind, game_blinds, antes = _game_chips(game, self._scale)
        blinds = game_blinds if posted is None else [self._to_chips(b) for b in money]
        self.board: tuple[int, ...] = ()
        self.hole_cards: list[Optional[tuple[int, int]]] = [None] * n
        if hole_cards is not None:
            if len(hole_cards) != n:
                raise GameError(f"{n}-player game but {len(hole_cards)} hole-card entries given")
            for p, h in enumerate(hole_cards):
                if h is not None:
                    self.set_hole_cards(p, h)

        # chips behind (whole chips of the unit; _BOTTOMLESS: no limit)
        self._left = [_BOTTOMLESS if s == math.inf else self._to_chips(s) for s in start]
        self._committed = [0] * n                      # this street
        self._total = [0] * n                          # whole hand
        self._folded = [False] * n
        self._all_in = [False] * n
        self._antes = [self._put(p, antes[p], street=False) for p in range(n)]  # dead money
        for p in range(n):
            self._put(p, blinds[p])
            if self._left[p] <= 0:
                self._all_in[p] = True
        # The pre-flop bet opens at the full blind even when its poster is all-in for less.
        opening = max([*self._committed, *(max(game_blinds[p], blinds[p]) for p in range(n)
                                            if self._all_in[p] and blinds[p] > 0)])
        self._blind_bet = 1 if max(blinds) > 0 else 0  # the big blind counts as the first bet pre-flop
        self.street = 0
        self.is_over = False
        self.needs_board = False
        self.to_act: Optional[int] = None
        self.previous_round_bets = 0
        self.actions: list[Action] = []
        self._streets_history: list[str] = [""]
        self._reset_round()
        self._level = opening
        # set while the bet level is a short blind's full amount that no one has matched yet
        self._short_blind = opening > max(self._committed)
        self._start_round()

    # ---------------------------------------------------------------- internals
    def _to_chips(self, x: float) -> int:
        chips = _whole(float(x), self._scale)
        if chips is None:
            raise GameError(f"{_fmt(float(x))} is not a whole number of chips of {self.unit:g}")
        return chips

    def _money(self, chips: int) -> float:
        return chips / self._scale

    def _put(self, p: int, chips: int, street: bool = True) -> int:
        pay = min(chips, self._left[p])
        self._left[p] -= pay
        if self._left[p] <= 0:
            self._left[p] = 0
            if chips > 0 or pay > 0:
                self._all_in[p] = True
        if street:
            self._committed[p] += pay
        self._total[p] += pay
        return pay

    def _reset_round(self) -> None:
        n = self.game.n_players
        self._acted = [False] * n
        self._closed = [False] * n        # acted before an incomplete raise: may not raise
        self._raises = 0
        self._short_sum = 0
        self._level = 0
        self._last_raise = self._big_blind       # no-limit minimum raise increment
        start = self.game.first_to_act[self.street]
        self._order = tuple(p for p in ((start + i) % n for i in range(n)) if not self._folded[p])

    def _can_bet(self, p: int) -> bool:
        return not self._folded[p] and not self._all_in[p]

    def _owes_action(self, p: int, bettors: int) -> bool:
        if not self._can_bet(p):
            return False
        if self._committed[p] < self._level:
            return not self._short_blind or self._contested(p)
        return not self._acted[p] and bettors >= 2

    def _contested(self, p: int) -> bool:
        """Whether another live player can put in more than ``p`` already has (if not, ``p``
        needs no action: nothing he adds could be called)."""
        mine = self._committed[p]
        return any(q != p and not self._folded[q] and self._committed[q] + self._left[q] > mine
                   for q in range(self.n_players))

    def _next_to_act(self, after: int, opening: bool = False) -> Optional[int]:
        """Next position owing an action. A round opens only if two players can bet (or
        someone must still match a bet); once open, everyone who has not acted acts."""
        n = self.game.n_players
        bettors = sum(self._can_bet(p) and not self._acted[p] for p in range(n)) if opening else n
        for i in range(1, n + 1):
            p = (after + i) % n
            if self._owes_action(p, bettors):
                return p
        return None

    def _start_round(self) -> None:
        # A player whose chips nobody can contest any more (everyone else left in has no
        # more behind than he has already matched) is not asked to act, as in pokerkit.
        live_totals = sorted(self._committed[p] + self._left[p] for p in range(self.n_players)
                             if not self._folded[p])
        second = live_totals[-2] if len(live_totals) > 1 else 0
        for p in range(self.n_players):
            if self._can_bet(p) and min(self._left[p], second - self._committed[p]) <= 0:
                self._acted[p] = True
        first = self.game.first_to_act[self.street]
        self.to_act = self._next_to_act(first - 1, opening=True)
        if self.to_act is None:
            self._end_round()

    def _end_round(self) -> None:
        self.to_act = None
        self.previous_round_bets = self.street_bets
        if self.street == 3:
            self.is_over = True
        else:
            self.needs_board = True

    # ---------------------------------------------------------------- views
    @property
    def n_players(self) -> int:
        return self.game.n_players

    @property
    def folded(self) -> tuple[bool, ...]:
        return tuple(self._folded)

    @property
    def all_in(self) -> tuple[bool, ...]:
        return tuple(self._all_in)

    @property
    def acted(self) -> tuple[bool, ...]:
        """Whether each position has acted in this round since the last bet/raise."""
        return tuple(self._acted)

    @property
    def unit(self) -> float:
        """The value of one chip in the game's money (1.0, or 0.01 for cents; see the module)."""
        return 1 / self._scale

    @property
    def chips(self) -> Chips:
        """The table in whole chips of :attr:`unit` (the engine's own numbers)."""
        return Chips(tuple(self._committed), tuple(self._total), sum(self._total), self._level,
                     tuple(None if s == math.inf else left for s, left in zip(self.starting_stacks, self._left)))

    @property
    def committed(self) -> tuple[float, ...]:
        """Chips put in on this street (blinds included)."""
        s = self._scale
        return tuple(c / s for c in self._committed)

    @property
    def total_committed(self) -> tuple[float, ...]:
        """Chips put in over the whole hand (antes and blinds included)."""
        s = self._scale
        return tuple(c / s for c in self._total)

    @property
    def stacks(self) -> tuple[float, ...]:
        """Chips each position still has behind (``inf`` when unlimited)."""
        s = self._scale
        return tuple(math.inf if start == math.inf else left / s
                     for start, left in zip(self.starting_stacks, self._left))

    @property
    def pot(self) -> float:
        return sum(self._total) / self._scale

    @property
    def order(self) -> tuple[int, ...]:
        """This round's betting order: positions not folded when it began, first to act first."""
        return self._order

    @property
    def raises(self) -> int:
        """``r`` actions made this street (the big blind not counted)."""
        return self._raises

    @property
    def street_bets(self) -> int:
        """Bets and raises this street; pre-flop the big blind counts as the first bet."""
        return self._raises + (self._blind_bet if self.street == 0 else 0)

    @property
    def bet_level(self) -> float:
        """The highest commitment on this street (what a call matches)."""
        return self._level / self._scale

    @property
    def to_call(self) -> float:
        """Chips the player to act must add to call (0 when no one is to act)."""
        if self.to_act is None:
            return 0.0
        return max(0, self._level - self._committed[self.to_act]) / self._scale

    @property
    def button(self) -> int:
        return button_position(self.game)

    @property
    def history(self) -> str:
        """ACPC betting string: ``rc/cr``; no-limit raises carry the hand total (``r300``)."""
        return "/".join(self._streets_history)

    def min_raise_to(self) -> Optional[float]:
        """Smallest legal ``r`` amount (street total) for the player to act, None if no raise."""
        if self._raise_blocker() is not None:
            return None
        p = self.to_act
        assert p is not None
        target = self._full_raise_to()
        return min(target, self._committed[p] + self._left[p]) / self._scale

    def max_raise_to(self) -> Optional[float]:
        """Largest legal ``r`` amount (street total): all-in in no-limit, the fixed raise in limit."""
        if self._raise_blocker() is not None:
            return None
        p = self.to_act
        assert p is not None
        if self.game.betting == "limit":
            return min(self._full_raise_to(), self._committed[p] + self._left[p]) / self._scale
        if self.starting_stacks[p] == math.inf:
            return math.inf
        return (self._committed[p] + self._left[p]) / self._scale

    def _full_raise_to(self) -> int:
        if self.game.betting == "limit":
            return self._level + self._bets[self.street]
        return self._level + max(self._last_raise, self._big_blind)

    def legal_actions(self) -> str:
        """The legal kinds for the player to act: a subset of ``"fcr"`` in that order."""
        if self.to_act is None:
            return ""
        out = "f" if self.to_call > 0 else ""
        out += "c"
        if self._raise_blocker() is None:
            out += "r"
        return out

    # ---------------------------------------------------------------- verify / can / act
    def _no_actor_reason(self) -> Optional[str]:
        if self.is_over:
            return "the hand is over"
        if self.needs_board:
            return f"the betting on the {STREETS[self.street]} is closed; deal the next board cards first"
        if self.to_act is None:  # pragma: no cover - defensive
            return "no one is to act"
        return None

    def _raise_blocker(self) -> Optional[str]:
        reason = self._no_actor_reason()
        if reason:
            return reason
        p = self.to_act
        assert p is not None
        cap = self.game.raise_cap[self.street]
        if self._raises >= cap:
            return f"the {STREETS[self.street]} is capped ({cap} raises already made)"
        if self._left[p] <= self._level - self._committed[p]:
            return (f"{_fmt(self._money(self._left[p]))} chips left do not cover more than the "
                    f"{_fmt(self._money(self._level - self._committed[p]))} to call; call all-in instead")
        if self._closed[p]:
            return ("an all-in for less than a full raise does not reopen the betting "
                    "for a player who already acted")
        if not any(q != p and not self._folded[q] and self._committed[q] + self._left[q] > self._level
                   for q in range(self.n_players)):
            return "every other player has folded or is all-in, so no one could call"
        return None

    def verify(self, kind: str, amount: float | None = None) -> None:
        """Raise :class:`GameError` saying why ``kind`` (``f``/``c``/``r``) is illegal now.

        ``amount`` is only read in no-limit: the actor's total on this street after the action.
        """
        reason = self._no_actor_reason()
        if reason:
            raise GameError(f"cannot {ACTION_NAMES[kind].verb if kind in ACTION_NAMES else 'act'}: {reason}")
        p = self.to_act
        assert p is not None
        if kind == "f":
            if self.to_call <= 0:
                raise GameError("cannot fold: nothing to call, check instead")
        elif kind == "c":
            if self.game.betting == "nolimit" and amount is not None:
                expect = min(self._level, self._committed[p] + self._left[p])
                if _whole(float(amount), self._scale) != expect:
                    raise GameError(f"cannot call to {_fmt(float(amount))}: a call brings "
                                    f"position {p} to {_fmt(self._money(expect))} on this street")
        elif kind == "r":
            blocker = self._raise_blocker()
            if blocker:
                raise GameError(f"cannot raise: {blocker}")
            if self.game.betting == "nolimit":
                if amount is None:
                    raise GameError("cannot raise: a no-limit raise needs an amount "
                                    "(the actor's total on this street after the raise)")
                money = float(amount)
                to = _whole(money, self._scale)
                if to is None:
                    raise GameError(f"cannot raise to {_fmt(money)}: not a whole number of chips "
                                    f"of {self.unit:g}")
                all_in_to = self._committed[p] + self._left[p]
                if to > all_in_to:
                    raise GameError(f"cannot raise to {_fmt(money)}: position {p} has only "
                                    f"{_fmt(self._money(all_in_to))} in total on this street (all-in)")
                if to <= self._level:
                    raise GameError(f"cannot raise to {_fmt(money)}: that does not exceed the "
                                    f"current bet of {_fmt(self._money(self._level))}")
                min_to = self._full_raise_to()
                if to < min_to and to != all_in_to:
                    raise GameError(f"cannot raise to {_fmt(money)}: the minimum raise is to "
                                    f"{_fmt(self._money(min_to))} unless all-in")
        else:
            raise GameError(f"unknown action kind {kind!r}; expected 'f', 'c' or 'r'")

    def can(self, kind: str, amount: float | None = None) -> bool:
        """Whether :meth:`act` would accept this action."""
        try:
            self.verify(kind, amount)
        except GameError:
            return False
        return True

    def act(self, kind: str, amount: float | None = None) -> Action:
        """Apply ``f``/``c``/``r`` for the player to act and return the :class:`Action`.

        In limit ``amount`` is ignored; in no-limit a raise needs it (street total after).
        """
        self.verify(kind, amount)
        return self._apply(kind, amount)

    def fold_out(self, position: int | None = None) -> Action:
        """A player leaves the hand (a quit, kick or time-out in a log): he is folded at once.

        ``position`` defaults to the player to act. Unlike ``act("f")`` this is allowed with
        nothing to call, and out of turn (a player who leaves the table while another is to
        act); it is not a decision. An out-of-turn leave is not part of :attr:`history`
        (ACPC betting strings have no place for it); if it leaves one player, the hand ends.

        >>> from cbr.game import preset
        >>> s = HandState(preset("holdem.limit.3p"))     # position 2 is to act
        >>> s.fold_out(1).position, s.to_act, s.is_over
        (1, 2, False)
        """
        if position is None or position == self.to_act:
            reason = self._no_actor_reason()
            if reason:
                raise GameError(f"cannot fold out: {reason}")
            return self._apply("f", None)
        if self.is_over:
            raise GameError("cannot fold out: the hand is over")
        if not 0 <= position < self.n_players:
            raise GameError(f"cannot fold out: no position {position} at a {self.n_players}-player table")
        if self._folded[position]:
            raise GameError(f"cannot fold out: position {position} has already folded")
        self._folded[position] = True
        action = Action(self.street, position, "f")
        self.actions.append(action)
        if self._folded.count(False) == 1:
            self.to_act = None
            self.is_over = True
            self.needs_board = False
            self.previous_round_bets = self.street_bets
        elif self.to_act is not None:
            self.to_act = self._next_to_act(self.to_act - 1)
            if self.to_act is None:
                self._end_round()
        return action

    def _apply(self, kind: str, amount: float | None) -> Action:
        p = self.to_act
        assert p is not None
        n = self.n_players
        street = self.street
        token = kind
        if kind == "f":
            self._folded[p] = True
        elif kind == "c":
            self._put(p, self._level - self._committed[p])
        else:
            level = self._level
            if self.game.betting == "limit":
                target = self._full_raise_to()
                full_step = self._bets[street]
            else:
                target = self._to_chips(amount)  # type: ignore[arg-type]
                full_step = max(self._last_raise, self._big_blind)
            self._put(p, target - self._committed[p])
            new = self._committed[p]
            self._raises += 1
            step = new - level
            if step >= full_step:
                if self.game.betting == "nolimit":
                    self._last_raise = step
                self._closed = [False] * n
                self._short_sum = 0
            else:  # short all-in: no reopening for those who already acted
                self._short_sum += step
                if self._short_sum >= full_step:
                    self._closed = [False] * n
                    self._short_sum = 0
                else:
                    for q in range(n):
                        if q != p and self._acted[q]:
                            self._closed[q] = True
            self._level = new
            self._acted = [False] * n
            if self.game.betting == "nolimit":
                token = "r" + _fmt(self._money(self._total[p]))
        if self._short_blind and self._committed[p] >= self._level:
            self._short_blind = False
        self._acted[p] = True
        self._streets_history[-1] += token
        amt = None
        if self.game.betting == "nolimit" and kind != "f":
            amt = self._money(self._committed[p])
        action = Action(street, p, kind, amt, all_in=kind != "f" and self._all_in[p])  # type: ignore[arg-type]
        self.actions.append(action)
        if self._folded.count(False) == 1:
            self.to_act = None
            self.is_over = True
            self.needs_board = False
            self.previous_round_bets = self.street_bets
            return action
        self.to_act = self._next_to_act(p)
        if self.to_act is None:
            self._end_round()
        return action

    # ---------------------------------------------------------------- cards
    def _known_cards(self) -> set[int]:
        known = set(self.board)
        for h in self.hole_cards:
            if h is not None:
                known.update(h)
        return known

    def set_hole_cards(self, position: int, cards: tuple[int, int]) -> None:
        """Give ``position`` its two hole cards (card ints); raises on duplicates."""
        if not 0 <= position < self.game.n_players:
            raise GameError(f"no position {position} at a {self.game.n_players}-player table")
        hole = tuple(int(c) for c in cards)
        if len(hole) != 2 or not all(0 <= c < 52 for c in hole) or hole[0] == hole[1]:
            raise GameError(f"position {position}: hole cards must be two different cards 0..51, got {cards!r}")
        old = self.hole_cards[position]
        self.hole_cards[position] = None
        dup = set(hole) & self._known_cards()
        if dup:
            self.hole_cards[position] = old
            raise GameError(f"card {card_str(min(dup))} dealt twice (position {position}'s hole cards)")
        self.hole_cards[position] = hole  # type: ignore[assignment]

    def deal_board(self, cards: Sequence[int]) -> None:
        """Deal the next street's board cards (3 for the flop, then 1 and 1) and open its betting."""
        if self.is_over:
            raise GameError("cannot deal board cards: the hand is over")
        if not self.needs_board:
            raise GameError(f"cannot deal board cards: the betting on the {STREETS[self.street]} is still open")
        new = tuple(int(c) for c in cards)
        want = BOARD_SIZES[self.street + 1] - BOARD_SIZES[self.street]
        if len(new) != want:
            raise GameError(f"the {STREETS[self.street + 1]} needs {counted(want, 'board card')}, got {len(new)}")
        if not all(0 <= c < 52 for c in new):
            raise GameError(f"board cards must be card numbers 0..51, got {list(new)}")
        known = self._known_cards()
        for i, c in enumerate(new):
            if c in known or c in new[:i]:
                raise GameError(f"card {card_str(c)} dealt twice (board of the {STREETS[self.street + 1]})")
        self.board += new
        self.street += 1
        self.needs_board = False
        self._committed = [0] * self.n_players
        self._streets_history.append("")
        self._short_blind = False
        self._reset_round()
        self._start_round()

    # ---------------------------------------------------------------- decision points and results
    def decision_point(self) -> DecisionPoint:
        """The table as the player to act sees it, before acting (``action=None``)."""
        reason = self._no_actor_reason()
        if reason:
            raise GameError(f"no decision point: {reason}")
        p = self.to_act
        assert p is not None
        return DecisionPoint(
            game=self.game, street=self.street, position=p, player=self.players[p],
            hole=self.hole_cards[p], board=self.board, folded=self.folded, all_in=self.all_in,
            acted=self.acted, order=self._order, street_bets=self.street_bets,
            committed=self.committed, total_committed=self.total_committed,
            previous_round_bets=self.previous_round_bets, legal=self.legal_actions(),
            hand_id=self.hand_id, source=self.source, history=self.history,
            bet_level=self._money(self._level) if self._short_blind else None,
        )

    def pots(self) -> list[tuple[float, tuple[int, ...]]]:
        """Main pot then side pots: ``(chips, positions not folded that can win it)``.

        Antes are dead money: they go to the main pot, which every player not folded can
        win, and the side pots are layered by blinds and bets only (as pokerkit does for
        antes it does not trim). So an ante never makes a pot only its payer covers.
        """
        return [(chips / self._scale, eligible) for chips, eligible in self._pots()]

    def _pots(self) -> list[tuple[int, tuple[int, ...]]]:
        n = self.n_players
        live = [p for p in range(n) if not self._folded[p]]
        bets = [self._total[p] - self._antes[p] for p in range(n)]
        levels = sorted({b for b in bets if b > 0})
        dead = sum(self._antes)
        out: list[tuple[int, tuple[int, ...]]] = [(dead, tuple(live))] if dead > 0 else []
        prev = 0
        for lvl in levels:
            chips = sum(min(b, lvl) - min(b, prev) for b in bets)
            eligible = tuple(p for p in live if bets[p] >= lvl)
            if not eligible:  # chips only folded players reached: to the deepest live player
                top = max(bets[p] for p in live)
                eligible = tuple(p for p in live if bets[p] >= top)
            if out and out[-1][1] == eligible:
                out[-1] = (out[-1][0] + chips, eligible)
            else:
                out.append((chips, eligible))
            prev = lvl
        return out

    def payoffs(self, evaluate: Evaluator | None = None) -> tuple[float, ...]:
        """Net chips won (+) or lost (-) per position once :attr:`is_over`.

        A showdown needs five board cards and the hole cards of every player not folded;
        ``evaluate`` (7 cards -> int, larger is better) defaults to ``evaluator_ext.evaluate``.
        A split pot is divided in whole chips of :attr:`unit` (the odd chips to the first
        winner left of the button).
        """
        if not self.is_over:
            raise GameError("payoffs are only known once the hand is over")
        n = self.n_players
        won = [0] * n
        live = [p for p in range(n) if not self._folded[p]]
        strength: dict[int, int] = {}
        if len(live) > 1:
            if len(self.board) != 5:
                raise GameError(f"showdown needs 5 board cards, {len(self.board)} dealt")
            missing = [p for p in live if self.hole_cards[p] is None]
            if missing:
                raise GameError(f"showdown needs the hole cards of {counted(len(missing), 'position')}: "
                               f"{', '.join(map(str, missing))}")
            ev = evaluate or _default_evaluate
            for p in live:
                strength[p] = ev(tuple(self.hole_cards[p]) + self.board)  # type: ignore[arg-type]
        seat_order = [(self.button + 1 + i) % n for i in range(n)]
        for chips, eligible in self._pots():
            if len(eligible) == 1:
                won[eligible[0]] += chips
                continue
            best = max(strength[p] for p in eligible)
            winners = [p for p in seat_order if p in eligible and strength[p] == best]
            share, odd = divmod(chips, len(winners))
            for w in winners:
                won[w] += share
            won[winners[0]] += odd
        return tuple((won[p] - self._total[p]) / self._scale for p in range(n))

    def copy(self) -> "HandState":
        """An independent copy (for look-ahead: act on the copy, the original is untouched)."""
        import copy

        return copy.deepcopy(self)

    def __repr__(self) -> str:
        return (f"HandState(street={self.street}, to_act={self.to_act}, history={self.history!r}, "
                f"pot={_fmt(self.pot)}, over={self.is_over})")

