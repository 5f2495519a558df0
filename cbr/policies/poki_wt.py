"""``poki-wt``: the Poki formula bot on weighted hand strength (Poki's weight tables).

:class:`~cbr.policies.rules.PokiFormulaPolicy` decides from ``EHS`` against random
holdings. This variant keeps a :class:`~cbr.models.weights.WeightTable` per opponent for
the hand in progress: reset at the start of each hand, re-weighted after every action
the opponent takes (replayed from the decision point's betting ``history``) with the
action distribution predicted from that opponent's player model
(:mod:`cbr.models.player_model`; defaults for a player never seen), or, with
``predictor=FILE``, by Poki's neural-network predictor (:mod:`cbr.models.predictor`, ``cbr
train predictor``): its (fold, call, raise) triple for the opponent's context sets the
thresholds of that action (the top ``P(raise)`` of the range raises, the bottom ``P(fold)``
folds to a bet), the player model still giving the spread. After the flop its
strength is Poki's weighted ``EHS = HS_n + (1 - HS_n) * PPOT`` with
``HS_n = prod_p HS(weights_p)`` over the opponents still in and ``PPOT`` against their
pooled normalised tables; pre-flop it plays as ``poki`` (but still re-weights).

Player models learn from every finished hand (:meth:`observe`); with ``store=PATH`` they
are loaded from and saved to that model store (one transaction per hand), so the bot
remembers an opponent from one match to the next. Opponents are named by the players of
the previous hand, rotated to the seat order (the button moves one seat a hand); when
that cannot be told, every opponent gets the default model.

>>> from cbr.play.match import run_match
>>> r = run_match(["poki-wt", "lag"], 4, seed=1)
>>> r.hands
4
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from cbr.errors import GameError, ModelError
from cbr.game.gamedef import BOARD_SIZES
from cbr.game.state import HandState
from cbr.models.player_model import PlayerModels
from cbr.models.weights import ActionModel, WeightTable, holding_strengths, weighted_ehs
from cbr.policies.base import Triple
from cbr.policies.rules import PokiFormulaPolicy

if TYPE_CHECKING:  # pragma: no cover
    from cbr.game.decision import DecisionPoint
    from cbr.logs.record import HandRecord
    from cbr.models.predictor import ActionPredictor
    from cbr.models.store import ModelStore


class HandTracker:
    """The hand in progress as one player sees it: the betting replayed from
    ``dp.history`` and a weight table per opponent.

    >>> import evaluator_ext as ev
    >>> from cbr.game import preset
    >>> s = HandState(preset("holdem.limit.2p"), hole_cards=[(51, 50), (20, 1)])
    >>> _ = s.act("r")                                    # position 1 raises
    >>> t = HandTracker(s.decision_point(), names=None)   # position 0 (AsAh) to act
    >>> t.sync(s.decision_point(), lambda name, dp: ActionModel(0.2, 0.5, 0.1))
    >>> i, j = ev.combo_index(49, 48), ev.combo_index(16, 3)  # AdAc, 6c2s
    >>> float(t.tables[1].weights[i]) > float(t.tables[1].weights[j])
    True
    """

    def __init__(self, dp: "DecisionPoint", names: Optional[tuple[str, ...]]) -> None:
        self.key = (dp.hand_id, tuple(dp.hole or ()), dp.position, dp.players_dealt)
        self.me = dp.position
        self.names = names
        self.state = HandState(dp.game)
        self.seen = ""
        dead = tuple(dp.hole or ())
        self.tables = {p: WeightTable(dead=dead) for p in range(dp.players_dealt) if p != dp.position}
        self.actions: list[tuple[int, int, str]] = []  # (position, street, kind) of the opponents

    def matches(self, dp: "DecisionPoint") -> bool:
        key = (dp.hand_id, tuple(dp.hole or ()), dp.position, dp.players_dealt)
        return key == self.key and dp.history.startswith(self.seen)

    def name(self, position: int) -> Optional[str]:
        return self.names[position] if self.names is not None else None

    def sync(self, dp: "DecisionPoint", model_of, on_action=None) -> None:
        """Replay the actions of ``dp.history`` not seen yet, re-weighting the actor's
        table (``model_of(name or None, his decision point) -> ActionModel``) and calling
        ``on_action(name or None, street, kind)`` for each opponent action. Raises
        GameError when the history does not replay."""
        for ch in dp.history[len(self.seen):]:
            state = self.state
            if ch == "/":
                while state.needs_board and not state.is_over:
                    street = state.street + 1
                    cards = tuple(dp.board[BOARD_SIZES[street - 1]:BOARD_SIZES[street]])
                    state.deal_board(cards)
                    for t in self.tables.values():
                        t.remove(cards)
                continue
            if ch not in "fcr":
                raise GameError(f"cannot follow betting token {ch!r} (limit betting only)")
            p = state.to_act
            if p is None:
                raise GameError("an action after the hand ended")
            if p != self.me and p in self.tables:
                before = state.decision_point()
                self.tables[p].reweight(ch, holding_strengths(state.board), model_of(self.name(p), before),
                                        facing_bet=before.to_call > 0, can_raise="r" in before.legal)
                self.actions.append((p, state.street, ch))
                if on_action is not None:
                    on_action(self.name(p), state.street, ch)
            state.act(ch)
        self.seen = dp.history

    def live_tables(self, dp: "DecisionPoint") -> list[WeightTable]:
        """Tables of the opponents not folded at ``dp``."""
        return [t for p, t in sorted(self.tables.items()) if not dp.folded[p]]


def predicted_action_model(triple: tuple[float, float, float], spread: float) -> ActionModel:
    """The action model of one decision from a predicted (fold, call, raise) triple: the
    top ``P(raise)`` of the range raises, the bottom ``P(fold)`` folds (Poki: the predictor
    sets the re-weighting thresholds); ``spread`` from the player model.

    >>> predicted_action_model((0.25, 0.5, 0.25), 0.1)
    ActionModel(raise_rate=0.25, fold_rate=0.25, spread=0.1)
    """
    f, c, r = (max(0.0, float(x)) for x in triple)
    total = f + c + r
    if total <= 0:
        raise ValueError(f"a predicted triple needs some probability, got {triple!r}")
    return ActionModel(raise_rate=min(1.0, r / total), fold_rate=min(1.0, f / total), spread=spread)


class PokiWeightTablePolicy(PokiFormulaPolicy):
    """Poki's formula bot on weighted EHS (see the module doc). Options: the formula's and its
    own, one line each in :attr:`OPTION_HELP`.

    Asked for many holdings at once (:meth:`~cbr.policies.rules.RuleBot.triples`) it answers
    holding by holding after the batched hand values: its weight tables leave out the cards of
    the holding it is asked about (one tracker per holding), so its rules do not run as arrays
    as ``poki``'s do."""

    name = "poki-wt"
    #: One line on each option (``cbr plugins list``; :func:`~cbr.policies.spec.policy_option_help`).
    OPTION_HELP = {
        "store": "a model store file to start the weight tables from (\"\": none)",
        "learn": "update the player models after every hand",
        "predictor": "an action-predictor file (\"\": the player models predict the actions)",
    }

    def __init__(self, *, seed: int | None = None, raise_base: float = 0.62, raise_step: float = 0.08,
                 width: float = 0.1, store: str = "", learn: bool = True, predictor: str = "") -> None:
        super().__init__(seed=seed, raise_base=raise_base, raise_step=raise_step, width=width)
        self.store = store
        self.learn = learn
        self.predictor = predictor
        self._predictor: Optional["ActionPredictor"] = None
        if predictor:  # a file that is missing or of another kind is a bad input file, said now
            from cbr.models.predictor import ActionPredictor, PredictorError
            from cbr.policies.spec import file_option_error

            try:
                self._predictor = ActionPredictor.load(predictor)
            except PredictorError as exc:
                raise file_option_error("predictor", exc) from None
        self.models = PlayerModels()
        self._store: Optional["ModelStore"] = None
        self._loaded = False
        self._tracker: Optional[HandTracker] = None
        self._last_players: Optional[tuple[str, ...]] = None
        self._weighted: dict[tuple, tuple[float, float]] = {}
        self._action_models: dict[Optional[str], ActionModel] = {}

    # ---- the model store ----
    def _store_error(self, exc: ModelError) -> Exception:
        """A model store's error (damaged, in use, not a store, a failed write) as the error of
        this bot's ``store=`` option, named by the bot's spec (not ``--store``, which is
        ``cbr players build``'s option)."""
        from cbr.policies.spec import file_option_error

        return file_option_error("store", exc, self)

    def _open_store(self) -> Optional["ModelStore"]:
        if not self.store:
            return None
        if self._store is None:
            from cbr.models.store import ModelStore

            try:
                self._store = ModelStore.open(self.store, create=True)
            except ModelError as exc:
                raise self._store_error(exc) from None
        return self._store

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            store = self._open_store()
            try:
                self.models = store.load() if store is not None else PlayerModels()
            except ModelError as exc:
                raise self._store_error(exc) from None
            self.models.changed.clear()
            self._loaded = True

    def close(self) -> None:
        """Close the model store (a match closes the bots it built)."""
        if self._store is not None:
            self._store.close()
            self._store = None

    def reset(self) -> None:
        super().reset()
        self._loaded = False
        self._tracker = None
        self._last_players = None
        self._weighted.clear()
        self._action_models.clear()

    # ---- per-hand tracking ----
    def _names(self, dp: "DecisionPoint") -> Optional[tuple[str, ...]]:
        """The players at each position of this hand: the last hand's, rotated so that
        this bot's own name sits at its position (None when that cannot be told)."""
        last = self._last_players
        n = dp.players_dealt
        if last is None or len(last) != n or last.count(dp.player) != 1 or len(set(last)) != n:
            return None
        r = (last.index(dp.player) - dp.position) % n
        return tuple(last[(i + r) % n] for i in range(n))

    def action_model(self, player: Optional[str], dp: Optional["DecisionPoint"] = None) -> ActionModel:
        """The predicted-action model of ``player`` (defaults for None or a stranger); with
        a predictor and the player's decision point ``dp``, its rates come from the
        predictor's triple there (:func:`predicted_action_model`)."""
        hit = self._action_models.get(player)
        if hit is None:
            self._ensure_loaded()
            hit = self._action_models[player] = ActionModel.from_player(self.models.model(player or ""))
        if self._predictor is not None and dp is not None:
            return predicted_action_model(self._predictor.predict_decision(dp), hit.spread)
        return hit

    def tracker(self, dp: "DecisionPoint") -> Optional[HandTracker]:
        """The hand in progress, synced to ``dp`` (None if its betting cannot be followed)."""
        if dp.hole is None or dp.game.betting != "limit":
            return None
        t = self._tracker
        if t is None or not t.matches(dp):
            t = self._tracker = HandTracker(dp, self._names(dp))
            self._weighted.clear()
            self._action_models.clear()
        # the store read here, not in sync: a store in use or damaged (a ModelError, a ValueError)
        # is the run's error, not betting that cannot be followed (played as unweighted EHS)
        self._ensure_loaded()
        try:
            t.sync(dp, self.action_model, self._on_action)
        except (GameError, ValueError):
            self._tracker = None
            return None
        return t

    def _on_action(self, name: Optional[str], street: int, kind: str) -> None:
        """An opponent's action in the hand in progress: his current aggressiveness."""
        if name is not None:
            self.models.history(name).observe_action(street, kind)

    def _weighted_values(self, dp: "DecisionPoint") -> Optional[tuple[float, float]]:
        """``(HS_n, PPOT)`` against the opponents' weight tables, or None (no tables)."""
        t = self.tracker(dp)
        if t is None:
            return None
        tables = t.live_tables(dp)
        if not tables:
            return None
        key = (t.key, dp.history, tuple(dp.board))
        hit = self._weighted.get(key)
        if hit is None:
            hs_n, ppot, _ = weighted_ehs(dp.hole, dp.board, tables)  # type: ignore[arg-type]
            hit = self._weighted[key] = (hs_n, ppot)
        return hit

    def ehs(self, dp: "DecisionPoint") -> float:
        """Weighted ``EHS = HS_n + (1 - HS_n) * PPOT`` (unweighted when nothing is tracked)."""
        values = self._weighted_values(dp)
        if values is None:
            return super().ehs(dp)
        hs_n, ppot = values
        return hs_n + (1.0 - hs_n) * ppot

    def ppot(self, dp: "DecisionPoint") -> float:
        values = self._weighted_values(dp)
        return super().ppot(dp) if values is None else values[1]

    def triple(self, dp: "DecisionPoint") -> Triple:
        self.tracker(dp)  # re-weight on every street, pre-flop included
        return super().triple(dp)

    # ---- learning ----
    @property
    def learns(self) -> bool:
        """Unless built with ``learn=False``: its player models take every finished hand."""
        return bool(self.learn)

    def observe(self, record: "HandRecord", position: int) -> None:
        """Learn the finished hand: every opponent's round goes into their model (and the store)."""
        self._last_players = tuple(record.players)
        self._tracker = None
        if not self.learn:
            return
        self._ensure_loaded()
        me = record.players[position] if 0 <= position < record.n_players else None
        try:
            self.models.update(record, skip=(me,) if me is not None else ())
        except GameError:
            return
        store = self._open_store()
        if store is not None and self.models.changed:
            try:
                store.save(self.models, self.models.changed)
            except ModelError as exc:
                raise self._store_error(exc) from None
        self.models.changed.clear()
