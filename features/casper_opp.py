"""Opponent-aware cases (plugin ``casper-opp``): CASPER's features plus the player models
of the opponents still in the hand.

The columns are CASPER's (:mod:`features.casper`: 8 pre-flop, 12 after) followed by four
opponent columns, the same on every street:

| column | value |
|---|---|
| opp_aggressiveness | mean aggressiveness of the opponents still in the hand |
| opp_tightness | mean tightness of the opponents still in the hand |
| opp_riskiness | mean riskiness of the opponents still in the hand |
| opp_max_aggressiveness | aggressiveness of the most aggressive opponent still in |

"Still in": every position but the actor's that has not folded at the decision. The
attributes are the thesis' *overall* aggressiveness, tightness and riskiness
(``cbr.models.player_model``), as they were before the hand: within a hand the values do
not change. The width is fixed whatever the number of opponents.

This module sits below ``cbr.models`` in the layering, so it never computes a model: the
caller gives the values per *position* of the hand, as a mapping ``position ->
(aggressiveness, tightness, riskiness)``, either per call (``row(dp, values)``, what an
ordered build does) or through :attr:`CasperOpponentFeatures.opponent_values`, a callable
``dp -> mapping`` (what the ``cbr`` bot installs; retention then stores the values the bot
used). A position missing from the mapping (a player never seen, or no mapping at all, as
in ``cbr query``) takes :data:`DEFAULT_VALUES`, the player model's documented defaults.

>>> from cbr.game import preset
>>> from cbr.game.decision import DecisionPoint
>>> dp = DecisionPoint(game=preset("holdem.limit.2p"), street=0, position=1, player="p2",
...     hole=(51, 50), board=(), folded=(False, False), all_in=(False, False),
...     acted=(False, False), order=(1, 0), street_bets=1,
...     committed=(10.0, 5.0), total_committed=(10.0, 5.0), previous_round_bets=0, legal="fcr")
>>> fs = CasperOpponentFeatures()
>>> [round(float(x), 2) for x in fs.row(dp, {0: (0.5, 0.9, 0.25)})[8:]]
[0.5, 0.9, 0.25, 0.5]
>>> [round(float(x), 2) for x in fs.row(dp)[8:]]          # nobody known: the defaults
[0.14, 0.74, 0.39, 0.14]
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional

import numpy as np

from cbr.errors import GameError
from cbr.game.decision import DecisionPoint
from features.base import street_number
from features.casper import CasperFeatures

__all__ = ["CasperOpponentFeatures", "OPPONENT_FEATURES", "MODEL_ATTRIBUTES", "DEFAULT_VALUES",
           "opponent_columns"]

#: The player-model attributes given per opponent, in this order.
MODEL_ATTRIBUTES: tuple[str, ...] = ("aggressiveness", "tightness", "riskiness")
#: The player model's defaults for a player never seen (``cbr.models.player_model.DEFAULTS``;
#: a test keeps the two equal).
DEFAULT_VALUES: tuple[float, float, float] = (0.14, 0.74, 0.39)
OPPONENT_FEATURES: tuple[str, ...] = ("opp_aggressiveness", "opp_tightness", "opp_riskiness",
                                      "opp_max_aggressiveness")

Values = Mapping[int, Sequence[float]]


def opponent_columns(position: int, folded: Sequence[bool], values: Optional[Values]) -> list[float]:
    """The four opponent columns for the actor at ``position``, given who has ``folded``
    and the model values per position (missing: :data:`DEFAULT_VALUES`).

    >>> opponent_columns(0, (False, False, True), {1: (0.6, 0.7, 0.8), 2: (0.9, 0.9, 0.9)})
    [0.6, 0.7, 0.8, 0.6]
    >>> [round(x, 3) for x in opponent_columns(2, (False, False, False), {0: (0.2, 0.5, 0.3)})]
    [0.17, 0.62, 0.345, 0.2]
    """
    values = values or {}
    rows = []
    for q, out in enumerate(folded):
        if q == position or out:
            continue
        v = values.get(q)
        if v is None:
            v = DEFAULT_VALUES
        elif len(v) != len(MODEL_ATTRIBUTES):
            raise GameError(f"opponent values of position {q} must be ({', '.join(MODEL_ATTRIBUTES)}), got {v!r}")
        rows.append(tuple(float(x) for x in v))
    if not rows:  # nobody else in (cannot happen at a real decision): the defaults
        rows = [DEFAULT_VALUES]
    n = len(rows)
    means = [sum(r[i] for r in rows) / n for i in range(len(MODEL_ATTRIBUTES))]
    return means + [max(r[0] for r in rows)]


class CasperOpponentFeatures(CasperFeatures):
    """CASPER's features plus four opponent-model columns (plugin ``casper-opp``; see the
    module docstring). ``opponent_values``: ``dp -> {position: (agg, tight, risk)}`` used
    when :meth:`row` is called without values (None: everyone at the defaults).

    >>> CasperOpponentFeatures().feature_names("flop")[-4:]
    ['opp_aggressiveness', 'opp_tightness', 'opp_riskiness', 'opp_max_aggressiveness']
    >>> len(CasperOpponentFeatures().feature_names(0)), len(CasperOpponentFeatures().feature_names(3))
    (12, 16)
    """

    name = "casper-opp"
    #: Tells builds and the ``cbr`` bot to supply player-model values (see :mod:`cbr.build.ordered`).
    needs_player_models = True

    def __init__(self, *, evaluator: Optional[Any] = None, cache_size: int = 4096,
                 opponent_values: Optional[Callable[[DecisionPoint], Optional[Values]]] = None) -> None:
        super().__init__(evaluator=evaluator, cache_size=cache_size)
        self.opponent_values = opponent_values

    def feature_names(self, street: int | str) -> list[str]:
        """CASPER's columns of the street, then :data:`OPPONENT_FEATURES`."""
        return super().feature_names(street_number(street)) + list(OPPONENT_FEATURES)

    def row(self, dp: DecisionPoint, values: Optional[Values] = None) -> np.ndarray:
        """The row of ``dp``; ``values`` (position -> attributes) defaults to
        ``opponent_values(dp)``, then to :data:`DEFAULT_VALUES` for everyone."""
        if values is None and self.opponent_values is not None:
            values = self.opponent_values(dp)
        base = super().row(dp)
        extra = np.asarray(opponent_columns(dp.position, dp.folded, values), dtype=np.float32)
        return np.concatenate([base, extra])

    def __getstate__(self) -> dict:
        """Picklable for worker processes (a live provider is not sent: builds pass values)."""
        state = super().__getstate__()
        state["opponent_values"] = None
        return state
