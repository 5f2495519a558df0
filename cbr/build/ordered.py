"""Opponent-aware case bases: the ordered model pass of a build, and the default similarity.

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

__all__ = ["needs_player_models", "OrderedModels", "table_view", "opponent_similarity",
           "default_similarity_for", "OPPONENT_SIMILARITY"]

#: feature: (measure, weight, low, high) of the opponent columns in the default similarity.
#: Weights chosen on seed 1 of ``experiments/opponent_aware.py --weights``: twice the first
#: guess (30, 10, 30, 10) did best against both opponents (docs/opponent-models.md, opponent-aware cases).
OPPONENT_SIMILARITY: dict[str, tuple[str, float, float, float]] = {
    "opp_aggressiveness": ("linear", 60, 0, 1),
    "opp_tightness": ("linear", 20, 0, 1),
    "opp_riskiness": ("linear", 60, 0, 1),
    "opp_max_aggressiveness": ("linear", 20, 0, 1),
}


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


def opponent_similarity(base: Any = None, scale: float = 1.0) -> Any:
    """The default similarity of ``casper-opp``: CASPER's (or ``base``'s) features and
    weights, then the opponent columns of :data:`OPPONENT_SIMILARITY` (their weights times
    ``scale``; 0 ignores them).

    >>> cfg = opponent_similarity()
    >>> cfg.street("flop").features[-4:], len(cfg.street("preflop"))
    (('opp_aggressiveness', 'opp_tightness', 'opp_riskiness', 'opp_max_aggressiveness'), 12)
    """
    from cbr.similarity import default_casper
    from cbr.similarity.config import FeatureSimilarity, SimilarityConfig, StreetSimilarity

    base = base if base is not None else default_casper()
    extra = tuple(FeatureSimilarity(name, m, weight=w * scale, low=lo, high=hi)
                  for name, (m, w, lo, hi) in OPPONENT_SIMILARITY.items())
    streets = tuple(StreetSimilarity(st.street, st.feature_specs + extra) for st in base.streets)
    return SimilarityConfig(streets=streets, threshold=base.threshold, fallback_k=base.fallback_k,  # type: ignore[arg-type]
                            weighted_triple=base.weighted_triple)


def default_similarity_for(feature_set: Any) -> Any:
    """The similarity a build uses when none is given: :func:`opponent_similarity` for a
    feature set with exactly CASPER's columns plus the opponent columns, else None (the
    writer's default, CASPER's)."""
    if not needs_player_models(feature_set):
        return None
    cfg = opponent_similarity()
    from cbr.game.gamedef import STREETS

    if all(list(cfg.street(s).features) == list(feature_set.feature_names(s)) for s in STREETS):
        return cfg
    return None
