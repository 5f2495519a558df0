"""Playing style from the actions alone: how loose, how aggressive, how stubborn a player is.

Four frequencies, each counted over the decisions where it can be measured, from every hand
a player is seen in (no hole cards needed, so every hand counts, not only showdowns):

- ``vpip``: hands in which the player put chips in voluntarily before the flop (a call or a
  raise when facing a bet; a big blind's free check is not voluntary);
- ``pfr``: hands in which the player raised before the flop;
- ``aggression``: after the flop, bets and raises over all the player's actions;
- ``fold_to_bet``: after the flop, folds over the decisions facing a bet.

Those separate the styles an adaptive bot tells apart (loose/tight by ``vpip``,
passive/aggressive by ``pfr`` and ``aggression``, a calling station by ``fold_to_bet``) and
settle within a hundred hands or so, long before win rates do. Counts are discounted per
hand (``discount``) so that the style follows a player who changes it.

>>> from cbr.game import preset
>>> from cbr.logs.record import Action, HandRecord
>>> g = preset("holdem.limit.2p")          # position 1 (small blind) acts first pre-flop
>>> rec = HandRecord(source="x", line=1, hand_id="1", game=g, players=("bb", "sb"),
...     hole_cards=(None, None), board=(1, 2, 3), actions=(Action(0, 1, "r"), Action(0, 0, "c"),
...     Action(1, 0, "c"), Action(1, 1, "r"), Action(1, 0, "f")))
>>> styles = StyleStats()
>>> styles.update(rec)
>>> styles.vector("sb"), styles.vector("bb")
((1.0, 1.0, 1.0, None), (1.0, 0.0, 0.0, 1.0))
>>> styles.hands("sb"), styles.hands("nobody")
(1.0, 0.0)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from cbr.logs.record import HandRecord

__all__ = ["STYLE_FEATURES", "StyleStats", "style_of_hand"]

#: The style vector's entries, in order.
STYLE_FEATURES = ("vpip", "pfr", "aggression", "fold_to_bet")


@dataclass
class _Counts:
    """Discounted numerators and denominators of the four frequencies, and the hands seen."""

    hands: float = 0.0
    num: list[float] = field(default_factory=lambda: [0.0] * 4)
    den: list[float] = field(default_factory=lambda: [0.0] * 4)


def style_of_hand(record: HandRecord) -> dict[str, tuple[list[int], list[int]]]:
    """Per player of ``record``: the numerators and denominators this hand adds to each of
    :data:`STYLE_FEATURES` (a hand counts once for ``vpip`` and ``pfr``).

    >>> from cbr.game import preset
    >>> from cbr.logs.record import Action, HandRecord
    >>> rec = HandRecord(source="x", line=1, hand_id="1", game=preset("holdem.limit.2p"),
    ...     players=("bb", "sb"), hole_cards=(None, None), board=(), actions=(Action(0, 1, "c"), Action(0, 0, "c")))
    >>> style_of_hand(rec)["bb"]      # the big blind checked: no voluntary chips, no raise
    ([0, 0, 0, 0], [1, 1, 0, 0])
    """
    n = record.n_players
    blinds = record.posted or record.game.blinds
    out = {name: ([0, 0, 0, 0], [0, 0, 0, 0]) for name in record.players}
    put = [False] * n      # put chips in voluntarily before the flop
    raised = [False] * n
    acted = [False] * n
    street = -1
    facing: list[bool] = []  # a bet to call (limit: a check or call clears it, a raise sets it for the others)
    for a in record.actions:
        if a.street != street:
            street = a.street
            facing = [b < max(blinds) for b in blinds] if street == 0 else [False] * n
        p = a.position
        if not 0 <= p < n:
            continue
        num, den = out[record.players[p]]
        if street == 0:
            acted[p] = True
            if a.kind in "cr" and facing[p]:
                put[p] = True
            if a.kind == "r":
                raised[p] = True
                put[p] = True
        else:
            den[2] += 1
            if a.kind == "r":
                num[2] += 1
            if facing[p]:
                den[3] += 1
                if a.kind == "f":
                    num[3] += 1
        if a.kind == "r":
            facing = [q != p for q in range(n)]
        elif a.kind == "c":
            facing[p] = False
    for p, name in enumerate(record.players):
        if acted[p]:
            num, den = out[name]
            den[0] += 1
            den[1] += 1
            num[0] += int(put[p])
            num[1] += int(raised[p])
    return out


class StyleStats:
    """The style of every player seen (:func:`style_of_hand` summed over hands), each hand's
    counts discounted by ``discount`` per later hand of that player (1.0: plain sums)."""

    def __init__(self, discount: float = 1.0) -> None:
        if not 0.0 < discount <= 1.0:
            raise ValueError(f"discount must be in (0, 1], got {discount!r}")
        self.discount = discount
        self._players: dict[str, _Counts] = {}

    def reset(self) -> None:
        """Forget every player."""
        self._players.clear()

    def update(self, record: HandRecord) -> None:
        """One finished hand, as the table saw it."""
        for name, (num, den) in style_of_hand(record).items():
            c = self._players.setdefault(name, _Counts())
            d = self.discount
            c.hands = c.hands * d + 1.0
            for i in range(4):
                c.num[i] = c.num[i] * d + num[i]
                c.den[i] = c.den[i] * d + den[i]

    def hands(self, player: str) -> float:
        """The (discounted) number of hands ``player`` was seen in."""
        c = self._players.get(player)
        return c.hands if c is not None else 0.0

    def vector(self, player: str) -> tuple[Optional[float], ...]:
        """``player``'s :data:`STYLE_FEATURES` (None where never measured)."""
        c = self._players.get(player)
        if c is None:
            return (None,) * 4
        return tuple(c.num[i] / c.den[i] if c.den[i] > 0 else None for i in range(4))

    def measured(self, player: str) -> tuple[float, ...]:
        """The denominators behind :meth:`vector` (how much each frequency rests on)."""
        c = self._players.get(player)
        return tuple(c.den) if c is not None else (0.0,) * 4
