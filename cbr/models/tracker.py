"""The ``cbr`` bot's opponent models, for case bases of an opponent-aware feature set
(``casper-opp``, :mod:`features.casper_opp`).

:class:`OpponentTracker` keeps the thesis' player model of every player at the table
(:class:`~cbr.models.player_model.PlayerModels`, the ``thesis`` plugin of ``cbr.models``),
updated after each hand from the record the bot may see
(its own cards and those shown at a showdown, as :func:`cbr.play.match.seen_by` gives it).
:meth:`OpponentTracker.values` answers the feature set's question "the model values per
position of this hand": the models as they were before the hand (the tracker changes
only in :meth:`~OpponentTracker.observe`, after the hand and after retention), so live
rows, retained rows and the rows of an ordered build (:mod:`cbr.build.ordered`) agree.

Who sits where: a decision point names only the actor. The tracker remembers the seat
order of the last hand it saw (the record's players, by position) and assumes seats keep
their cyclic order while positions rotate (as in ``cbr match`` and the ACPC dealer).
Heads-up this is always right. Before the first hand is seen, and for a name missing
from the last hand, the opponents are unknown and take the model's defaults.

>>> from cbr.game import preset
>>> from cbr.logs.record import Action, HandRecord
>>> rec = HandRecord(source="x", line=1, hand_id="1", game=preset("holdem.limit.2p"),
...     players=("ann", "bob"), hole_cards=(None, None), board=(),
...     actions=(Action(0, 1, "r"), Action(0, 0, "r"), Action(0, 1, "f")))
>>> t = OpponentTracker()
>>> t.observe(rec)
>>> t.names(position=0, player="bob", n_players=2)          # next hand: bob moved to position 0
{0: 'bob', 1: 'ann'}
>>> t.value_of("ann")                                      # ann raised once in one action
(1.0, 0.74, 1.0)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from cbr.models.player_model import PlayerModels
from cbr.models.store import load_models

if TYPE_CHECKING:  # pragma: no cover
    from cbr.game.decision import DecisionPoint
    from cbr.logs.record import HandRecord

__all__ = ["OpponentTracker", "model_values", "seated_names"]

def seated_names(seating: tuple[str, ...], position: int, player: str, n_players: int) -> dict[int, str]:
    """Position -> name this hand, from the last hand's ``seating`` (names by position) and the
    actor's ``position`` and name, assuming the seats keep their cyclic order while the positions
    rotate; ``{}`` when the seating is unknown or does not fit.

    >>> seated_names(("ann", "bob", "cy"), 0, "bob", 3)
    {0: 'bob', 1: 'cy', 2: 'ann'}
    >>> seated_names(("ann", "bob"), 0, "zed", 2)
    {}
    """
    if len(seating) != n_players or player not in seating:
        return {}
    k = seating.index(player)
    return {p: seating[(k + p - position) % n_players] for p in range(n_players)}


def model_values(model: Any) -> tuple[float, float, float]:
    """``(aggressiveness, tightness, riskiness)`` of a ``PlayerModel`` (overall values)."""
    return (float(model.aggressiveness), float(model.tightness), float(model.riskiness))


class OpponentTracker:
    """Player models of everyone at the table and the last hand's seating (see the module
    docstring). ``store``: a model-store file to start from (``cbr players build``), read
    once; :meth:`reset` goes back to it (or to no model at all)."""

    def __init__(self, store: Optional[str] = None) -> None:
        self._rows: list[dict] = []
        if store is not None:
            self._rows = [h.to_row() for h in load_models(store).histories.values()]
        self.reset()

    def reset(self) -> None:
        """Back to the models the tracker started from; forget the seating."""
        self.models = PlayerModels()
        for row in self._rows:
            h = self.models.history(str(row["player"]))  # a new, empty history of the right class
            self.models.histories[h.player] = type(h).from_row(row)
        self.seating: tuple[str, ...] = ()

    def observe(self, record: "HandRecord") -> None:
        """A finished hand as the bot saw it: every player's model takes it, and its
        seating becomes the one assumed for the next hand. A hand the rules engine cannot
        replay changes only the seating."""
        from cbr.errors import CBRError

        self.seating = tuple(record.players)
        try:
            self.models.update(record)
        except CBRError:
            pass

    def names(self, position: int, player: str, n_players: int) -> dict[int, str]:
        """Position -> name this hand, from the actor's ``position`` and name and the last
        hand's seating (only the actor when the seating is unknown or does not fit)."""
        return seated_names(self.seating, position, player, n_players) or {position: player}

    def value_of(self, player: str) -> tuple[float, float, float]:
        """The model values of ``player`` (the defaults for a player never seen)."""
        return model_values(self.models.model(player))

    def values(self, dp: "DecisionPoint") -> dict[int, tuple[float, float, float]]:
        """Position -> model values for the hand of ``dp`` (unknown positions left out:
        the feature set gives them the defaults)."""
        names = self.names(dp.position, dp.player, len(dp.folded))
        return {p: self.value_of(name) for p, name in names.items()}
