"""Opponent-aware case bases: the ordered model pass of a build.

A feature set that sets ``needs_player_models`` (``casper-opp``, :mod:`features.casper_opp`)
takes, per decision, the player-model values of the other positions of the hand. A build
(:func:`cbr.build.local.build_casebase`) computes them with :class:`OrderedModels`: the hands are
fed *in input order* to one set of player models (``cbr.models.player_model``); each hand
first gets the values of its players as the models stand *before* it (no look-ahead: a
case's values ignore its own hand and every later one), then the finished hand updates
the models. The pass is sequential in the building process, while the features of the
chunks are computed by the workers, so the case base is the same whatever ``--workers``.

The models see each hand as a player at the table sees it: hole cards only where they
were shown at a showdown (the thesis measures tightness only from shown hands), as the
``cbr`` bot sees the hands it plays (:mod:`cbr.models.tracker`). A build starts from no
model (everyone at :data:`~cbr.models.player_model.DEFAULTS`).

>>> from cbr.game import preset
>>> from cbr.logs.record import Action, HandRecord
>>> rec = HandRecord(source="x", line=1, hand_id="1", game=preset("holdem.limit.2p"),
...     players=("ann", "bob"), hole_cards=((51, 50), (0, 1)), board=(),
...     actions=(Action(0, 1, "r"), Action(0, 0, "f")))
>>> om = OrderedModels()
>>> first, second = om.tables([rec, rec])
>>> first                                                  # before any hand: defaults
{0: (0.14, 0.74, 0.39), 1: (0.14, 0.74, 0.39)}
>>> second[1][0], second[0][2]                             # bob raised; ann folded to a raise
(1.0, 0.0)
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional, Sequence

from cbr.errors import CBRError
from cbr.logs.record import HandRecord
from cbr.models.player_model import PlayerModels
from cbr.models.tracker import model_values

# The default similarity of ``casper-opp``, here as before (the rule is cbr.similarity.default_for's).
from cbr.similarity.config import OPPONENT_SIMILARITY, opponent_similarity

__all__ = ["needs_player_models", "OrderedModels", "table_view", "opponent_similarity", "OPPONENT_SIMILARITY"]


def needs_player_models(feature_set: Any) -> bool:
    """Whether a feature set takes player-model values (its ``needs_player_models`` flag).

    >>> from cbr.plugins import load_feature_set
    >>> needs_player_models(load_feature_set("casper")), needs_player_models(load_feature_set("casper-opp"))
    (False, True)
    """
    return bool(getattr(feature_set, "needs_player_models", False))


def table_view(record: HandRecord) -> HandRecord:
    """``record`` with the hole cards of the players not at a showdown hidden.

    >>> from cbr.game import preset
    >>> from cbr.logs.record import Action
    >>> rec = HandRecord(source="x", line=1, hand_id="0", game=preset("holdem.limit.2p"),
    ...     players=("a", "b"), hole_cards=((51, 50), (0, 1)), board=(), actions=(Action(0, 1, "f"),))
    >>> table_view(rec).hole_cards
    (None, None)
    """
    shown = record.showdown
    holes = tuple(h if p in shown else None for p, h in enumerate(record.hole_cards))
    return replace(record, hole_cards=holes, extra=dict(record.extra))


class OrderedModels:
    """Player models fed hands in order (see the module docstring). ``models``: where to
    start (default: none)."""

    def __init__(self, models: Optional[PlayerModels] = None) -> None:
        self.models = models if models is not None else PlayerModels()
        self.hands = 0

    def table(self, record: HandRecord) -> dict[int, tuple[float, float, float]]:
        """Position -> (aggressiveness, tightness, riskiness) of the hand's players now."""
        return {p: model_values(self.models.model(name)) for p, name in enumerate(record.players)}

    def add(self, record: HandRecord) -> None:
        """A finished hand updates the models (a hand that does not replay is left out:
        the build reports it)."""
        try:
            self.models.update(table_view(record))
        except CBRError:
            return
        self.hands += 1

    def tables(self, records: Sequence[HandRecord]) -> list[dict[int, tuple[float, float, float]]]:
        """Each hand's table (before it), updating the models after each hand, in order."""
        out = []
        for record in records:
            out.append(self.table(record))
            self.add(record)
        return out
