"""The ANN opponent action predictor: an MLP over Davidson's 19 context inputs.

Poki (Billings et al.) and the Waterloo report (table 5, from Davidson's work) predict an
opponent's next action with a feed-forward network over nineteen properties of the
context; its three outputs, normalised, are a ``(fold, call, raise)`` probability triple.
This module computes those inputs from a :class:`~cbr.game.DecisionPoint` (no hole cards
needed, so every decision of a log is an example, folds included), trains a seeded
scikit-learn :class:`~sklearn.neural_network.MLPClassifier`, cross-validates it beside two
baselines, and saves it with its input schema.

The 19 inputs (:data:`INPUT_NAMES`; booleans are 0/1), and how each is computed:

==  =========================  ==================================================================
 1  ``pot_odds``               ``to_call / (pot + to_call)`` (:attr:`DecisionPoint.pot_odds`)
 2  ``bet_ratio``              bets+raises / (bets+raises+checks+calls) over the hand so far, all
                               players (the ``history`` string; blinds are not actions); 0 first
 3  ``pot_ratio``              the actor's chips in the pot (whole hand) / the pot
 4  ``committed_this_round``   the actor has chips in on this street (a posted blind counts)
 5  ``bets_to_call_0``         nothing to call
 6  ``bets_to_call_1``         up to one bet to call (the small blind's half bet counts as 1)
 7  ``bets_to_call_2plus``     more than one bet to call
 8  ``stage_flop``             street is the flop
 9  ``stage_turn``             street is the turn
10  ``stage_river``            street is the river (all three 0: pre-flop)
11  ``last_bets_to_call_pos``  at the actor's previous decision in this hand there was something
                               to call (0 at the actor's first decision)
12  ``last_action_raise``      the actor's previous action in this hand was a bet/raise
13  ``players_dealt``          players dealt in / 10
14  ``players_active``         players not folded / 10
15  ``players_unacted``        players still to act after the actor this round / 10
16  ``flush_possible``         three or more board cards of one suit
17  ``ace_on_board``           an ace on the board
18  ``king_on_board``          a king on the board
19  ``akq_share``              (aces, kings and queens on the board) / board cards; 0 pre-flop
==  =========================  ==================================================================

All nineteen are computable from our decision points; the counts /10 exceed 1 at the
IRC tables of 11-12 players (kept, not clipped). Inputs 11-12 need the actor's earlier
decisions of the hand: :func:`hand_inputs` follows a hand's decisions in order (logs);
:func:`decision_inputs` replays a single decision's ``history`` through the rules engine
(cases of a case base, live play), and both give the same row.

>>> from cbr.game import HandState, preset
>>> s = HandState(preset("holdem.limit.2p"))
>>> first = s.decision_point(); _ = s.act("r")        # the small blind raises
>>> second = s.decision_point(); _ = s.act("r")       # the big blind re-raises
>>> third = s.decision_point()                        # the small blind again
>>> row = decision_inputs(third)
>>> dict(zip(INPUT_NAMES, row.round(3).tolist()))["last_action_raise"], float(row[1])
(1.0, 1.0)
>>> from dataclasses import replace
>>> made = [replace(first, action="r"), replace(second, action="r"), third]
>>> bool((hand_inputs(made)[-1] == row).all())
True
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional

import numpy as np

from cbr.errors import CBRError, counted
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import BOARD_SIZES, STREETS, GameDef
from cbr.game.state import HandState
from cbr.models.modelfile import json_default, read_model_header, read_model_object, write_model_file

__all__ = [
    "INPUT_NAMES", "SCHEMA_VERSION", "ACTIONS", "LOG_LOSS_CLIP", "MIN_EXAMPLES", "MIN_STREET_EXAMPLES",
    "PredictorError", "TooFewExamplesError", "Examples", "ActionPredictor", "TrainReport", "StreetScore",
    "context_inputs", "hand_inputs", "decision_inputs", "prefix_decisions", "examples_from_logs",
    "examples_from_casebase", "fold_assignment", "clipped_log_loss", "context_frequency",
    "cross_validate", "train_predictor", "majority_triples", "score_street", "fit_interruptibly",
]

#: The 19 context inputs of table 5 (Waterloo report; Davidson), in network order.
INPUT_NAMES: tuple[str, ...] = (
    "pot_odds", "bet_ratio", "pot_ratio", "committed_this_round",
    "bets_to_call_0", "bets_to_call_1", "bets_to_call_2plus",
    "stage_flop", "stage_turn", "stage_river",
    "last_bets_to_call_pos", "last_action_raise",
    "players_dealt", "players_active", "players_unacted",
    "flush_possible", "ace_on_board", "king_on_board", "akq_share",
)
#: Version of the input schema a saved predictor carries; another version is refused.
SCHEMA_VERSION = 1
#: Output order of every triple: fold, check/call, bet/raise.
ACTIONS = "fcr"
#: Log-loss clips each probability of a triple to at least this, then renormalises:
#: a triple that gives the action taken probability 0 costs ``-ln(0.001/1.002)`` = 6.91 nats.
LOG_LOSS_CLIP = 1e-3
#: Fewest decisions :func:`train_predictor` trains and cross-validates on.
MIN_EXAMPLES = 100
#: Fewest held-out decisions of a street for which an accuracy is reported (else ``None``):
#: from 100 decisions on, the standard error of an accuracy is at most sqrt(0.25/100) = 0.05.
MIN_STREET_EXAMPLES = 100
_MAGIC = b"CBR-ACTION-PREDICTOR\n"
_RANK_A, _RANK_K, _RANK_Q = 12, 11, 10


class PredictorError(CBRError, ValueError):
    """A predictor file that cannot be used (not one, damaged, or of another input schema)."""


class TooFewExamplesError(PredictorError):
    """Too few decisions (or action kinds) to train and cross-validate a predictor."""


# ---------------------------------------------------------------------------------------
# The 19 inputs
# ---------------------------------------------------------------------------------------


def _bet_ratio(history: str) -> float:
    bets = sum(1 for ch in history if ch == "r")
    calls = sum(1 for ch in history if ch == "c")
    return bets / (bets + calls) if bets + calls else 0.0


def context_inputs(dp: DecisionPoint, last_action: Optional[str] = None,
                   last_bets_to_call: Optional[float] = None) -> np.ndarray:
    """The 19 inputs of ``dp`` (float32), given the actor's previous action in this hand
    and the bets he faced then (None: this is his first decision of the hand).

    >>> from cbr.game import HandState, preset
    >>> dp = HandState(preset("holdem.limit.2p")).decision_point()   # small blind, pre-flop
    >>> {n: v for n, v in zip(INPUT_NAMES, context_inputs(dp).tolist()) if v}
    {'pot_odds': 0.25, 'pot_ratio': 0.3333333432674408, 'committed_this_round': 1.0, 'bets_to_call_1': 1.0, 'players_dealt': 0.20000000298023224, 'players_active': 0.20000000298023224, 'players_unacted': 0.10000000149011612}
    """
    btc = dp.bets_to_call
    pot = dp.pot
    board = dp.board
    suits = [c % 4 for c in board]
    ranks = [c // 4 for c in board]
    n_board = len(board)
    values = (
        dp.pot_odds,
        _bet_ratio(dp.history),
        dp.total_committed[dp.position] / pot if pot > 0 else 0.0,
        float(dp.committed[dp.position] > 0),
        float(btc <= 1e-9),
        float(1e-9 < btc <= 1 + 1e-9),
        float(btc > 1 + 1e-9),
        float(dp.street == 1), float(dp.street == 2), float(dp.street == 3),
        float(last_bets_to_call is not None and last_bets_to_call > 1e-9),
        float(last_action == "r"),
        dp.players_dealt / 10, dp.players_in_hand / 10, dp.players_to_act / 10,
        float(any(suits.count(s) >= 3 for s in range(4))),
        float(_RANK_A in ranks), float(_RANK_K in ranks),
        sum(r in (_RANK_A, _RANK_K, _RANK_Q) for r in ranks) / n_board if n_board else 0.0,
    )
    return np.asarray(values, dtype=np.float32)


def hand_inputs(dps: Sequence[DecisionPoint]) -> np.ndarray:
    """``(n, 19)`` inputs of one hand's decisions, given in the order they were made (each
    with ``action`` set, except possibly the last)."""
    last: dict[int, tuple[Optional[str], float]] = {}
    rows = np.zeros((len(dps), len(INPUT_NAMES)), dtype=np.float32)
    for i, dp in enumerate(dps):
        action, btc = last.get(dp.position, (None, None))  # type: ignore[arg-type]
        rows[i] = context_inputs(dp, action, btc)
        last[dp.position] = (dp.action, dp.bets_to_call)
    return rows


def _tokens(segment: str) -> list[tuple[str, Optional[float]]]:
    out: list[tuple[str, Optional[float]]] = []
    i = 0
    while i < len(segment):
        kind = segment[i]
        if kind not in "fcr":
            raise PredictorError(f"betting history has {kind!r}; expected f, c or r")
        j = i + 1
        while j < len(segment) and (segment[j].isdigit() or segment[j] == "."):
            j += 1
        out.append((kind, float(segment[i + 1:j]) if j > i + 1 else None))
        i = j
    return out


def _replay_history(game: GameDef, history: str, board: Sequence[int]) -> tuple[list[DecisionPoint], HandState]:
    """Replay a betting history (ACPC style, streets split by ``/``) with the game's blinds."""
    state = HandState(game)
    done: list[DecisionPoint] = []
    try:
        for street, segment in enumerate(history.split("/") if history else [""]):
            if street > 0:
                while state.needs_board and not state.is_over:
                    cards = tuple(board[BOARD_SIZES[state.street]:BOARD_SIZES[state.street + 1]])
                    state.deal_board(cards)
            for kind, amount in _tokens(segment):
                if kind == "f" and not state.is_over and not state.can("f") and state.to_call <= 0:
                    state.fold_out()   # a player leaving with nothing to call: no decision (as replay does)
                    continue
                point = state.decision_point()
                act = state.act(kind, amount)
                done.append(replace(point, action=kind, amount=act.amount))
    except PredictorError:
        raise
    except CBRError as exc:
        raise PredictorError(f"history {history!r} does not replay: {exc}") from None
    return done, state


def prefix_decisions(dp: DecisionPoint) -> list[DecisionPoint]:
    """The decisions of ``dp``'s hand before it, rebuilt by replaying ``dp.history`` (and
    ``dp.board``) through the rules engine with the game's blinds. Raises
    :class:`PredictorError` when the replay does not reach ``dp`` (e.g. a player who left
    the table out of turn, which the history string does not show).
    """
    done, state = _replay_history(dp.game, dp.history, dp.board)
    if state.is_over or state.to_act != dp.position or state.street != dp.street:
        raise PredictorError(f"history {dp.history!r} does not lead to position {dp.position} "
                             f"acting on the {STREETS[dp.street]}")
    return done


def decision_inputs(dp: DecisionPoint) -> np.ndarray:
    """The 19 inputs of one decision, its hand's earlier decisions rebuilt from ``dp.history``."""
    return hand_inputs([*prefix_decisions(dp), dp])[-1]


# ---------------------------------------------------------------------------------------
# Examples
# ---------------------------------------------------------------------------------------


@dataclass
class Examples:
    """Training examples: ``X`` (n, 19) float32 inputs, ``y`` (n,) action codes 0/1/2
    (fold, call, raise), ``street`` (n,) 0..3, ``groups`` (n,) hand numbers (folds never
    split a hand), ``players`` (n,) names; ``skipped`` says which hands or cases could not
    be used, ``files_skipped`` which files were not read (not logs, unreadable)."""

    X: np.ndarray
    y: np.ndarray
    street: np.ndarray
    groups: np.ndarray
    players: np.ndarray
    source: str = ""
    hands: int = 0
    skipped: list[str] = field(default_factory=list)
    files_skipped: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.y.shape[0])

    @classmethod
    def from_rows(cls, rows: list[np.ndarray], actions: list[str], streets: list[int], groups: list[int],
                  players: list[str], **kw: Any) -> "Examples":
        X = np.asarray(rows, dtype=np.float32).reshape(len(rows), len(INPUT_NAMES))
        y = np.asarray([ACTIONS.index(a) for a in actions], dtype=np.int8)
        return cls(X, y, np.asarray(streets, dtype=np.int8), np.asarray(groups, dtype=np.int64),
                   np.asarray(players, dtype=object), **kw)

    def subset(self, mask: np.ndarray) -> "Examples":
        return Examples(self.X[mask], self.y[mask], self.street[mask], self.groups[mask], self.players[mask],
                        self.source, self.hands, list(self.skipped), list(self.files_skipped))


def examples_from_logs(paths: Sequence[str], *, player: Optional[str] = None, log_format: Optional[str] = None,
                       progress: Optional[Callable[..., None]] = None) -> Examples:
    """Every decision in the logs (of ``player`` only, if given) as an example; hands that
    do not parse or replay are listed in ``skipped``, files not read in ``files_skipped``.
    Raises :class:`TooFewExamplesError` when no hand could be read, saying why
    (:func:`cbr.logs.record.no_hand_read`).

    >>> ex = examples_from_logs(["../shared/data/logs/acpc/dealer_example_limit"], player="p1")
    >>> len(ex), ex.hands, ex.X.shape, sorted(set(ex.players))
    (10069, 2000, (10069, 19), ['p1'])
    """
    from cbr.logs.replay import ReplayedLogs

    rows: list[np.ndarray] = []
    actions: list[str] = []
    streets: list[int] = []
    groups: list[int] = []
    players: list[str] = []
    logs = ReplayedLogs(paths, log_format, progress)
    for _, dps in logs:
        if not dps:
            continue
        X = hand_inputs(dps)
        for dp, row in zip(dps, X):
            if player is not None and dp.player != player:
                continue
            rows.append(row)
            actions.append(dp.action or "c")
            streets.append(dp.street)
            groups.append(logs.hands)
            players.append(dp.player)
    why = logs.nothing_read()
    if why is not None:
        raise TooFewExamplesError(why)
    return Examples.from_rows(rows, actions, streets, groups, players, source=", ".join(map(str, paths)),
                              hands=logs.hands, skipped=logs.skipped, files_skipped=logs.files_skipped)


def _game_map(games: Iterable[GameDef]) -> dict[str, GameDef]:
    return {g.name: g for g in games}


def _n_tokens(history: str) -> int:
    return sum(1 for ch in history if ch in "fcr")


def _check_case(row: dict[str, Any], dp: DecisionPoint, street: int) -> None:
    if dp.position != int(row["position"]) or dp.street != street:
        raise PredictorError(f"case {row.get('case_id')}: history {row['history']!r} does not lead to "
                             f"position {row['position']} acting on the {STREETS[street]}")
    for name, value in (("bets_to_call", dp.bets_to_call), ("players_in_hand", dp.players_in_hand),
                        ("players_to_act", dp.players_to_act), ("bets_committed", dp.bets_committed)):
        stored = row.get(name)
        if stored is not None and abs(float(stored) - float(value)) > 1e-4:
            raise PredictorError(f"case {row.get('case_id')}: the replayed history gives {name} {value}, "
                                 f"the case has {stored}")


def _hand_rows(cases: list[tuple[int, dict[str, Any]]], games: dict[str, GameDef]) -> list[np.ndarray | str]:
    """Inputs of every case of one hand (``(street, row)`` pairs), or why a case has none.

    The hand is replayed once, along its longest history; each case is the decision after
    as many actions as its own history holds (which must be a prefix of the longest)."""
    from evaluator_ext.cards import parse_cards

    first = cases[0][1]
    game = games.get(first.get("game") or "")
    if game is None:
        return [f"case {r.get('case_id')}: unknown game {r.get('game')!r}" for _, r in cases]
    if any(r.get("history") is None or r.get("position") is None for _, r in cases):
        return [f"case {r.get('case_id')}: no betting history stored" for _, r in cases]
    longest = max((r for _, r in cases), key=lambda r: (_n_tokens(r["history"]), len(r.get("board") or "")))
    try:
        board = parse_cards(longest.get("board") or "")
        done, state = _replay_history(game, longest["history"], board)
    except (ValueError, CBRError) as exc:
        return [f"case {r.get('case_id')}: {exc}" for _, r in cases]
    points = list(done)
    if not state.is_over:
        points.append(state.decision_point())
    X = hand_inputs(points)
    out: list[np.ndarray | str] = []
    history = longest["history"]
    for street, row in cases:
        h = row["history"]
        n = _n_tokens(h)
        try:
            if n >= len(points) or not history.startswith(h.rstrip("/")):
                raise PredictorError(f"case {row.get('case_id')}: history {h!r} is not part of its hand's "
                                     f"betting {history!r}")
            _check_case(row, points[n], street)
        except PredictorError as exc:
            out.append(str(exc))
            continue
        out.append(X[n])
    return out


def examples_from_casebase(casebase: Any, *, player: Optional[str] = None,
                           progress: Optional[Callable[..., None]] = None) -> tuple[Examples, np.ndarray]:
    """Every case (of ``player``, if given) as an example, its decision rebuilt from the
    stored history (the actor's earlier decisions in the hand from the same replay).
    Returns the examples and, per example, ``(street, row number)`` of its case in the
    street table (``(n, 2)`` int64), in street then row order. Cases that cannot be rebuilt
    (or whose rebuilt decision disagrees with their stored CASPER features) are listed in
    ``skipped``; hands are grouped by ``(source, hand_id)``."""
    games = _game_map(casebase.games())
    cols = ["case_id", "action", "source", "hand_id", "player", "position", "game", "board", "history",
            "bets_to_call", "players_in_hand", "players_to_act", "bets_committed"]
    by_hand: dict[tuple[str, str, str], list[tuple[int, int, dict[str, Any]]]] = {}
    for s, name in enumerate(STREETS):
        if casebase.count(name) == 0:
            continue
        table = casebase.table(name)
        present = [c for c in cols if c in table.column_names]
        for i, row in enumerate(table.select(present).to_pylist()):
            if player is not None and row.get("player") != player:
                continue
            key = (row.get("source") or "", row.get("hand_id") or f"case{row.get('case_id')}", row.get("game") or "")
            by_hand.setdefault(key, []).append((s, i, row))
    if progress is not None:
        progress(0, total=len(by_hand))
    found: dict[tuple[int, int], tuple[np.ndarray, str, int, str]] = {}
    skipped: list[str] = []
    for g, cases in enumerate(by_hand.values()):
        for (s, i, row), result in zip(cases, _hand_rows([(s, row) for s, _, row in cases], games)):
            if isinstance(result, str):
                skipped.append(result)
            else:
                found[(s, i)] = (result, row["action"], g, row.get("player") or "")
        if progress is not None:
            progress(1)
    keys = sorted(found)
    ex = Examples.from_rows([found[k][0] for k in keys], [found[k][1] for k in keys], [k[0] for k in keys],
                            [found[k][2] for k in keys], [found[k][3] for k in keys], source=str(casebase.path),
                            hands=len(by_hand), skipped=skipped)
    return ex, np.asarray(keys, dtype=np.int64).reshape(len(keys), 2)


# ---------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------


def clipped_log_loss(P: np.ndarray, y: np.ndarray, eps: float = LOG_LOSS_CLIP) -> float:
    """Mean ``-ln p(action taken)`` of triples ``P`` (n, 3), each probability first raised
    to at least ``eps`` and the triple renormalised (a k-NN triple can hold zeros).

    >>> round(clipped_log_loss(np.array([[0.0, 1.0, 0.0]]), np.array([0])), 3)   # a zero costs ln(1002)
    6.91
    >>> round(clipped_log_loss(np.array([[0.5, 0.5, 0.0]]), np.array([1])), 4)
    0.6941
    """
    P = np.maximum(np.asarray(P, dtype=np.float64), eps)
    P = P / P.sum(axis=1, keepdims=True)
    y = np.asarray(y, dtype=np.int64)
    if len(y) == 0:
        return float("nan")
    return float(-np.mean(np.log(P[np.arange(len(y)), y])))


def fold_assignment(groups: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    """Fold 0..k-1 of each example: whole hands (``groups``) go to one fold, hands dealt
    to folds round-robin in a seeded random order, so fold sizes differ by at most one hand.

    >>> fold_assignment(np.array([7, 7, 3, 9, 3]), 2, seed=1).tolist()
    [1, 1, 0, 0, 0]
    """
    groups = np.asarray(groups)
    if k < 2:
        raise PredictorError(f"cross-validation needs at least 2 folds, got {k}")
    uniq, inverse = np.unique(groups, return_inverse=True)
    if len(uniq) < k:
        raise TooFewExamplesError(f"{counted(len(uniq), 'hand')} cannot be split into {k} folds")
    order = np.random.default_rng(seed).permutation(len(uniq))
    fold_of_group = np.empty(len(uniq), dtype=np.int64)
    fold_of_group[order] = np.arange(len(uniq)) % k
    return fold_of_group[inverse]


def context_frequency(train_y: np.ndarray, train_street: np.ndarray, train_X: np.ndarray,
                      test_street: np.ndarray, test_X: np.ndarray) -> np.ndarray:
    """Poki's frequency-table baseline: the training actions' frequencies in the same
    context (street x bets to call 0 / 1 / 2+); a context unseen in training gets its
    street's frequencies (then the overall ones)."""
    def ctx(street: np.ndarray, X: np.ndarray) -> np.ndarray:
        btc = np.argmax(X[:, 4:7], axis=1)
        return street.astype(np.int64) * 3 + btc

    def freq(y: np.ndarray) -> np.ndarray:
        return np.bincount(y, minlength=3).astype(np.float64) / len(y)

    overall = freq(train_y)
    tr, te = ctx(train_street, train_X), ctx(test_street, test_X)
    out = np.empty((len(te), 3))
    for c in np.unique(te):
        m = tr == c
        if m.any():
            p = freq(train_y[m])
        else:
            ms = train_street == c // 3
            p = freq(train_y[ms]) if ms.any() else overall
        out[te == c] = p
    return out


def majority_triples(train_y: np.ndarray, train_street: np.ndarray, test_street: np.ndarray) -> np.ndarray:
    """The majority-class baseline: each street's training action frequencies (its most
    frequent action is the prediction; the frequencies are the triple scored by log-loss)."""
    out = np.empty((len(test_street), 3))
    overall = np.bincount(train_y, minlength=3) / max(1, len(train_y))
    for s in np.unique(test_street):
        m = train_street == s
        out[test_street == s] = np.bincount(train_y[m], minlength=3) / m.sum() if m.any() else overall
    return out


# ---------------------------------------------------------------------------------------
# The predictor
# ---------------------------------------------------------------------------------------


class ActionPredictor:
    """A seeded scikit-learn MLP from the 19 inputs to a (fold, call, raise) triple.

    ``hidden``: hidden layer sizes (Davidson: one layer of 4 sigmoid nodes, the default);
    ``seed``: weights initialisation and minibatch order; ``max_iter``: epochs.

    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((300, len(INPUT_NAMES))).astype(np.float32)
    >>> y = (X[:, 0] > 0.5).astype(np.int8) * 2          # raise when pot odds are high
    >>> p = ActionPredictor(seed=0).fit(X, y)
    >>> p.predict_proba(X[:2]).shape, float((p.predict(X) == y).mean()) > 0.9
    ((2, 3), True)
    """

    def __init__(self, *, hidden: tuple[int, ...] = (4,), seed: int = 0, max_iter: int = 300) -> None:
        self.hidden = tuple(hidden)
        self.seed = seed
        self.max_iter = max_iter

    def fit(self, X: np.ndarray, y: np.ndarray) -> "ActionPredictor":
        """Train on inputs ``X`` (n, 19) and action codes ``y`` (0/1/2)."""
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPClassifier

        X = np.asarray(X, dtype=np.float32)
        y = np.asarray(y, dtype=np.int64)
        if X.ndim != 2 or X.shape[1] != len(INPUT_NAMES):
            raise PredictorError(f"inputs must be (n, {len(INPUT_NAMES)}), got {X.shape}")
        kinds = np.unique(y)
        if len(kinds) < 2:
            raise TooFewExamplesError(f"every training decision is a {'fold call raise'.split()[int(kinds[0])] if len(kinds) else 'nothing'}: "
                                      "a predictor needs at least two action kinds")
        self.model_ = MLPClassifier(hidden_layer_sizes=self.hidden, activation="logistic", solver="adam",
                                    max_iter=self.max_iter, random_state=self.seed, alpha=1e-4,
                                    batch_size=min(200, len(X)), learning_rate_init=0.01,
                                    early_stopping=len(X) >= 1000, n_iter_no_change=5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            fit_interruptibly(self.model_, X, y)
        self.converged_ = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """``(n, 3)`` triples (fold, call, raise); an action kind never seen in training gets 0."""
        if not hasattr(self, "model_"):
            raise PredictorError("this predictor is not trained; call fit() or ActionPredictor.load()")
        X = np.asarray(X, dtype=np.float32).reshape(-1, len(INPUT_NAMES))
        out = np.zeros((len(X), 3))
        if len(X):
            out[:, self.model_.classes_.astype(np.int64)] = self.model_.predict_proba(X)
        return out

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The most likely action code of each row."""
        return np.argmax(self.predict_proba(X), axis=1)

    def predict_decision(self, dp: DecisionPoint) -> tuple[float, float, float]:
        """The triple for one decision point (its earlier decisions rebuilt from its history)."""
        p = self.predict_proba(decision_inputs(dp)[None, :])[0]
        return (float(p[0]), float(p[1]), float(p[2]))

    # ---- files ------------------------------------------------------------------
    def header(self) -> dict[str, Any]:
        import sklearn

        return {"format": "cbr-action-predictor", "schema_version": SCHEMA_VERSION, "inputs": list(INPUT_NAMES),
                "actions": ACTIONS, "hidden": list(self.hidden), "seed": self.seed, "max_iter": self.max_iter,
                "sklearn": sklearn.__version__, "info": getattr(self, "info_", {})}

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the predictor: a magic line, a JSON header with the input schema, then the
        pickled network (:mod:`cbr.models.modelfile`). Atomic (temp file + rename); an
        existing file only with ``overwrite``."""
        if not hasattr(self, "model_"):
            raise PredictorError("this predictor is not trained; nothing to save")
        return write_model_file(path, _MAGIC, self.header(), self.model_, what="predictor", overwrite=overwrite,
                                default=json_default)

    @classmethod
    def read_header(cls, path: str | Path) -> dict[str, Any]:
        """The JSON header of a predictor file, checked: a file of another input schema or
        feature list is refused with :class:`PredictorError` before anything is unpickled."""
        path = Path(path)
        header = read_model_header(path, _MAGIC, what="an action predictor", made_by="cbr train predictor",
                                   error=PredictorError)
        version = header.get("schema_version")
        inputs = header.get("inputs")
        if version != SCHEMA_VERSION or inputs != list(INPUT_NAMES):
            raise PredictorError(
                f"{path} was saved with input schema version {version} ({len(inputs or [])} inputs"
                f"{'' if inputs == list(INPUT_NAMES) else ': ' + ', '.join(map(str, (inputs or [])[:4])) + '...'}); "
                f"this engine reads version {SCHEMA_VERSION} with the {len(INPUT_NAMES)} inputs of table 5: "
                f"retrain it with `cbr train predictor`")
        return header

    @classmethod
    def load(cls, path: str | Path) -> "ActionPredictor":
        """Read a predictor written by :meth:`save` (a trusted file: the network is pickled)."""
        path = Path(path)
        header = cls.read_header(path)
        model = read_model_object(path, _MAGIC, what="predictor", error=PredictorError)
        obj = cls(hidden=tuple(header.get("hidden", (4,))), seed=int(header.get("seed", 0)),
                  max_iter=int(header.get("max_iter", 300)))
        obj.model_ = model
        obj.info_ = header.get("info", {})
        obj.converged_ = bool(obj.info_.get("converged", True))
        return obj


def fit_interruptibly(model: Any, X: np.ndarray, y: np.ndarray) -> Any:
    """``model.fit(X, y)``, but a ``KeyboardInterrupt`` (Ctrl-C, or SIGTERM raised as one)
    during the epochs comes out as itself. scikit-learn's stochastic solvers catch it, warn
    "Training interrupted by user." and return a half-trained model, which a caller then
    saves as if nothing happened; the warning is turned into an error raised inside their
    ``except KeyboardInterrupt``, whose context is the interrupt re-raised here. Call it
    inside ``warnings.catch_warnings()``."""
    warnings.filterwarnings("error", message="Training interrupted by user", category=UserWarning)
    try:
        return model.fit(X, y)
    except UserWarning as exc:
        if not str(exc).startswith("Training interrupted by user"):
            raise
        stop = exc.__context__
        raise (stop if isinstance(stop, KeyboardInterrupt) else KeyboardInterrupt()) from None


# ---------------------------------------------------------------------------------------
# Cross-validation
# ---------------------------------------------------------------------------------------


@dataclass
class StreetScore:
    """Held-out scores of one street (``None`` when it has fewer than
    :data:`MIN_STREET_EXAMPLES` decisions: no meaningless accuracy)."""

    street: str
    decisions: int
    actions: dict[str, int]
    accuracy: dict[str, Optional[float]]
    log_loss: dict[str, Optional[float]]
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"street": self.street, "decisions": self.decisions, "actions": self.actions,
                "accuracy": self.accuracy, "log_loss": self.log_loss, "note": self.note}


#: The predictors scored side by side.
PREDICTORS = ("ann", "majority", "context")


@dataclass
class TrainReport:
    """What :func:`train_predictor` did: examples, folds, per-street and overall scores."""

    source: str
    player: Optional[str]
    examples: int
    hands: int
    folds: int
    seed: int
    streets: list[StreetScore]
    overall: StreetScore
    skipped: int
    converged: bool
    saved: Optional[str] = None
    clip: float = LOG_LOSS_CLIP
    files_skipped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "player": self.player, "examples": self.examples, "hands": self.hands,
                "folds": self.folds, "seed": self.seed, "inputs": list(INPUT_NAMES),
                "schema_version": SCHEMA_VERSION, "log_loss_clip": self.clip,
                "streets": [s.to_dict() for s in self.streets], "overall": self.overall.to_dict(),
                "skipped": self.skipped, "files_skipped": self.files_skipped, "converged": self.converged,
                "saved": self.saved}


def score_street(name: str, y: np.ndarray, triples: dict[str, np.ndarray]) -> StreetScore:
    """Accuracy of the most likely action and clipped log-loss of each predictor's triples."""
    n = int(len(y))
    counts = {a: int((y == i).sum()) for i, a in enumerate(ACTIONS)}
    if n < MIN_STREET_EXAMPLES:
        return StreetScore(name, n, counts, {k: None for k in triples}, {k: None for k in triples},
                           note=f"too few decisions ({n} < {MIN_STREET_EXAMPLES}) for a meaningful accuracy")
    acc = {k: float(np.mean(np.argmax(P, axis=1) == y)) for k, P in triples.items()}
    loss = {k: clipped_log_loss(P, y) for k, P in triples.items()}
    return StreetScore(name, n, counts, acc, loss)


def cross_validate(ex: Examples, *, folds: int = 5, seed: int = 0, hidden: tuple[int, ...] = (4,),
                   progress: Optional[Callable[..., None]] = None) -> tuple[list[StreetScore], StreetScore, bool]:
    """K-fold cross-validation (folds by hand, :func:`fold_assignment`) of the MLP beside
    the majority-class and per-context frequency baselines, per street and overall."""
    if len(ex) < MIN_EXAMPLES:
        raise TooFewExamplesError(f"only {counted(len(ex), 'decision')} to learn from; at least {MIN_EXAMPLES} are needed "
                                  f"to train and cross-validate a predictor (no accuracy reported)")
    fold = fold_assignment(ex.groups, folds, seed)
    P = {k: np.zeros((len(ex), 3)) for k in PREDICTORS}
    converged = True
    if progress is not None:
        progress(0, total=folds)
    for k in range(folds):
        tr, te = fold != k, fold == k
        net = ActionPredictor(hidden=hidden, seed=seed).fit(ex.X[tr], ex.y[tr])
        converged &= net.converged_
        P["ann"][te] = net.predict_proba(ex.X[te])
        P["majority"][te] = majority_triples(ex.y[tr], ex.street[tr], ex.street[te])
        P["context"][te] = context_frequency(ex.y[tr], ex.street[tr], ex.X[tr], ex.street[te], ex.X[te])
        if progress is not None:
            progress(1)
    streets = [score_street(name, ex.y[ex.street == s], {k: v[ex.street == s] for k, v in P.items()})
               for s, name in enumerate(STREETS)]
    overall = score_street("all", ex.y, P)
    return streets, overall, converged


def train_predictor(source: Sequence[str] | Any, *, player: Optional[str] = None, folds: int = 5, seed: int = 0,
                    hidden: tuple[int, ...] = (4,), out: Optional[str | Path] = None, overwrite: bool = False,
                    log_format: Optional[str] = None,
                    progress: Optional[Callable[..., None]] = None) -> tuple[ActionPredictor, TrainReport]:
    """Train the predictor on logs (a list of paths) or an open case base, cross-validate
    it, then fit it on every example and save it to ``out`` (when given).

    Raises :class:`TooFewExamplesError` below :data:`MIN_EXAMPLES` decisions (of ``player``),
    and when the logs give no hand (saying why: :func:`cbr.logs.record.no_hand_read`). A ``KeyboardInterrupt``
    stops it with nothing saved."""
    if isinstance(source, (str, Path)):
        source = [str(source)]
    if isinstance(source, (list, tuple)):
        ex = examples_from_logs(source, player=player, log_format=log_format)
    else:
        ex, _ = examples_from_casebase(source, player=player)
    if len(ex) < MIN_EXAMPLES:
        who = f" of player {player!r}" if player else ""
        unread = (f"; {counted(len(ex.files_skipped), 'file')} not read, the first "
                  f"{ex.files_skipped[0]}"
                  if ex.files_skipped else "")
        raise TooFewExamplesError(f"only {counted(len(ex), 'decision')}{who} in {ex.source}; at least {MIN_EXAMPLES} are "
                                  f"needed to train and cross-validate a predictor (no accuracy reported){unread}")
    if out is not None:
        from cbr.logs.output import check_output_path

        check_output_path(out, overwrite=overwrite, what="predictor")  # fail before the work, not after
    streets, overall, converged = cross_validate(ex, folds=folds, seed=seed, hidden=hidden, progress=progress)
    net = ActionPredictor(hidden=hidden, seed=seed).fit(ex.X, ex.y)
    report = TrainReport(source=ex.source, player=player, examples=len(ex), hands=ex.hands, folds=folds, seed=seed,
                         streets=streets, overall=overall, skipped=len(ex.skipped),
                         converged=converged and net.converged_, files_skipped=len(ex.files_skipped))
    net.info_ = {"source": ex.source, "player": player, "examples": len(ex), "converged": net.converged_,
                 "cv_accuracy": overall.accuracy.get("ann"), "cv_log_loss": overall.log_loss.get("ann")}
    if out is not None:
        report.saved = str(net.save(out, overwrite=overwrite))
    return net, report

