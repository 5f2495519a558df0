"""A decision point: the table as one player sees it just before acting.

Replay of a logged hand produces one per action (with ``action`` set); a live table or a
query produces one with ``action=None``. Bots decide from it and the CASPER features
are computed from it, so a logged decision and the same situation met in play give the
same feature row.

Chips are raw; the ``bets_*`` properties convert to bets of the current street (the
fixed bet in limit, the big blind in no-limit).

>>> from cbr.game import preset
>>> dp = DecisionPoint(game=preset("holdem.limit.2p"), street=0, position=1, player="p2",
...     hole=(51, 47), board=(), folded=(False, False), all_in=(False, False),
...     acted=(False, False), order=(1, 0), street_bets=1,
...     committed=(10.0, 5.0), total_committed=(10.0, 5.0), previous_round_bets=0,
...     legal="fcr")
>>> dp.to_call, dp.pot, dp.bets_to_call, dp.players_to_act, dp.relative_position
(5.0, 15.0, 0.5, 1, 0.0)
>>> round(dp.pot_odds, 4)
0.25
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from cbr.game.gamedef import GameDef


@dataclass(frozen=True)
class DecisionPoint:
    """Table state before ``position`` acts on ``street`` (0 pre-flop .. 3 river).

    Per-position tuples (``folded``, ``all_in``, ``acted``, ``committed``,
    ``total_committed``) are indexed by position in the hand.

    - ``order``: this round's betting order, the positions not folded at the start of the
      round, first to act first.
    - ``acted``: whether each position has acted in this round since the last bet/raise
      (blinds are not actions).
    - ``street_bets``: bets and raises so far this street; pre-flop the big blind counts
      as the first bet.
    - ``committed``: chips each position has put in on this street (blinds included);
      ``total_committed``: over the whole hand (antes included).
    - ``previous_round_bets``: bets and raises made on the previous street.
    - ``legal``: the legal action kinds, a subset of ``"fcr"`` in that order.
    - ``action`` / ``amount``: what was done (replay), or None (query, live play).
    - ``hand_id``/``source``: provenance of a logged decision.
    - ``bet_level``: what a call matches this street, when it is above every commitment
      (a big blind posted all-in for less still opens the betting at the full blind);
      None: the highest commitment.
    """

    game: GameDef
    street: int
    position: int
    player: str
    hole: Optional[tuple[int, int]]
    board: tuple[int, ...]
    folded: tuple[bool, ...]
    all_in: tuple[bool, ...]
    acted: tuple[bool, ...]
    order: tuple[int, ...]
    street_bets: int
    committed: tuple[float, ...]
    total_committed: tuple[float, ...]
    previous_round_bets: int
    legal: str
    action: Optional[str] = None
    amount: Optional[float] = None
    hand_id: str = ""
    source: str = ""
    history: str = ""
    bet_level: Optional[float] = None

    def taken(self, action: str) -> "DecisionPoint":
        """This decision point with ``action`` taken: ``replace(self, action=action)`` without
        running the constructor again (play keeps every decision for retention).

        >>> from cbr.game.situation import situation
        >>> dp = situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5)
        >>> from dataclasses import replace
        >>> dp.taken("c") == replace(dp, action="c"), dp.action
        (True, None)
        """
        new = object.__new__(type(self))
        fields = new.__dict__
        fields.update(self.__dict__)
        fields["action"] = action
        return new

    # ---- derived quantities (the raw material of CASPER's features) ----
    @property
    def players_dealt(self) -> int:
        return len(self.folded)

    @property
    def players_in_hand(self) -> int:
        """Players not folded (the actor included)."""
        return sum(not f for f in self.folded)

    @property
    def pot(self) -> float:
        """Chips in the pot before the action, this street's bets included."""
        return float(sum(self.total_committed))

    @property
    def to_call(self) -> float:
        """Chips the actor must add to match the highest commitment this street."""
        level = max(self.committed) if self.bet_level is None else self.bet_level
        return max(0.0, level - self.committed[self.position])

    @property
    def bet_unit(self) -> float:
        """One bet on this street: the fixed bet (limit) or the big blind (no-limit)."""
        if self.game.betting == "limit":
            return self.game.bet_size(self.street)
        return self.game.big_blind

    @property
    def bets_to_call(self) -> float:
        return self.to_call / self.bet_unit

    @property
    def bets_committed(self) -> float:
        """Bets the actor already put in this round (blind included), in bets of the street."""
        return self.committed[self.position] / self.bet_unit

    @property
    def pot_odds(self) -> float:
        """to_call / (pot + to_call); 0 when there is nothing to call."""
        tc = self.to_call
        return tc / (self.pot + tc) if tc > 0 else 0.0

    @property
    def small_bets_in_pot(self) -> float:
        return self.pot / (self.game.small_bet if self.game.betting == "limit" else self.game.big_blind)

    @property
    def players_to_act(self) -> int:
        """Players after the actor in this round's order who are still to act
        (not folded, not all-in, and not yet acted since the last bet)."""
        order = self.order
        if self.position not in order:
            return 0
        i = order.index(self.position)
        return sum(
            1
            for p in order[i + 1 :] + order[:i]
            if not self.folded[p] and not self.all_in[p] and not self.acted[p]
        )

    @property
    def relative_position(self) -> float:
        """The actor's place among the players still in, in this round's order:
        0 = first to act .. 1 = last."""
        live = [p for p in self.order if not self.folded[p]]
        if len(live) <= 1 or self.position not in live:
            return 0.0
        return live.index(self.position) / (len(live) - 1)
