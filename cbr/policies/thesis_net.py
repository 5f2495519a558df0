"""The thesis' default-strategy network (seed ``itu-adaptive-poker-computer-thesis.txt``,
chapter 2, "ANN 2" / "ANN 3"): a multilayer perceptron with five inputs, one small hidden
layer and two sigmoid outputs, *defensive* (check/call) and *aggressive* (bet/raise),
trained on one player's actions in the hands where his cards were shown ("relevant
players"), and scored by the total network error (TNE) of table 8.

The five inputs (:data:`INPUT_NAMES`), normalised as in section 2.4.3:

==  ==================  =================================================================
 1  ``hand_strength``   win probability (win + half the ties) against one random hand,
                        played to the river ("absolute hand strength", section 2.4.1);
                        pre-flop the class's heads-up win probability
                        (:func:`evaluator_ext.preflop_odds.preflop_win`), after the flop a seeded
                        Monte Carlo (:data:`HS_TRIALS` deals; exact on the turn and river)
 2  ``opponents``       opponents not folded / 9 (``Opp_max``; above 1 at 11-12 seats)
 3  ``chips``           the player's chips left / ``chips_total``
 4  ``cost``            chips to call / ``chips_total``
 5  ``pot``             the pot / ``chips_total``
==  ==================  =================================================================

``chips_total`` is the chips in the game: the sum of the players' stacks at the start of
the hand (pot and bets included). The IRC logs give each player's bankroll; where stacks
are unknown (limit matches have none) every player counts :data:`DEFAULT_STACK_BETS`
small bets, about an IRC bankroll (1,000 at $10/$20).

TNE is Neuroph's total network error (the thesis trained with Neuroph), the mean squared
error halved: ``sum over examples and outputs of (output - target)^2 / (2 * examples)``.
Targets are ``(1, 0)`` for a check/call and ``(0, 1)`` for a bet/raise; relevant players
never fold, so the network has no fold output (section 2.5: "we can not learn the ANN when
to fold"). A network that always answers ``(0.5, 0.5)`` has TNE 0.25; one that answers
the player's raise frequency ``p`` has ``p * (1 - p)``.

>>> import numpy as np
>>> out = np.array([[0.9, 0.1], [0.4, 0.6]]); target = np.array([[1, 0], [1, 0]])
>>> round(total_network_error(out, target), 4)        # (0.01+0.01+0.36+0.36) / (2*2)
0.185
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

import evaluator_ext as ev
from cbr.errors import CBRError, counted
from cbr.models.modelfile import read_model_header, read_model_object, write_model_file
from cbr.policies.base import Policy, Triple, legal_triple
from evaluator_ext.preflop_odds import preflop_win

if TYPE_CHECKING:  # pragma: no cover
    from cbr.game.decision import DecisionPoint

__all__ = [
    "INPUT_NAMES", "OUTPUT_NAMES", "SCHEMA_VERSION", "OPP_MAX", "DEFAULT_STACK_BETS", "HS_TRIALS", "MIN_EXAMPLES",
    "NetworkError", "TooFewExamplesError", "NetExamples", "DefaultNetwork", "TNEReport", "network_inputs",
    "hand_strength_input", "examples_from_logs", "total_network_error", "train_network", "tne_table",
    "ThesisNetPolicy",
]

INPUT_NAMES: tuple[str, ...] = ("hand_strength", "opponents", "chips", "cost", "pot")
OUTPUT_NAMES: tuple[str, ...] = ("defensive", "aggressive")
#: Version of the input schema a saved network carries; another version is refused.
SCHEMA_VERSION = 1
#: ``Opp_max`` of the thesis (section 2.4.1): opponents are divided by 9.
OPP_MAX = 9
#: Stack of every player, in small bets, when the log or game does not give one.
DEFAULT_STACK_BETS = 100
#: Monte Carlo deals of the flop hand strength (its standard error is at most 0.5/sqrt(2000) = 0.011).
HS_TRIALS = 2000
HS_SEED = 20240602
#: Fewest examples :func:`train_network` trains on (and fewest of each action).
MIN_EXAMPLES = 50
MIN_PER_ACTION = 5
_MAGIC = b"CBR-THESIS-NETWORK\n"


class NetworkError(CBRError, ValueError):
    """A network file that cannot be used (not one, damaged, another input schema) or a bad setting."""


class TooFewExamplesError(NetworkError):
    """Too few examples (or too few of one action) to train a network and report its TNE."""


# ---------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------

_HS_CACHE: dict[tuple[tuple[int, ...], tuple[int, ...]], float] = {}


def hand_strength_input(hole: Sequence[int], board: Sequence[int]) -> float:
    """Input 1: win probability against one random hand, ties counting half.

    >>> from evaluator_ext import parse_cards
    >>> hand_strength_input(parse_cards("AsAh"), parse_cards("AdAc2s3h4d"))   # quad aces: always wins
    1.0
    """
    key = (tuple(hole), tuple(board))
    hit = _HS_CACHE.get(key)
    if hit is None:
        if not board:
            hit = float(preflop_win(tuple(hole), 1))  # type: ignore[arg-type]
        else:
            win, tie, _ = ev.win_probability(tuple(hole), tuple(board), n_opponents=1, trials=HS_TRIALS, seed=HS_SEED)
            hit = float(win) + float(tie) / 2.0
        if len(_HS_CACHE) > 100_000:
            _HS_CACHE.clear()
        _HS_CACHE[key] = hit
    return hit


def _stacks(dp: "DecisionPoint", stacks: Optional[Sequence[Optional[float]]]) -> list[float]:
    default = dp.game.stack if dp.game.stack else DEFAULT_STACK_BETS * dp.game.small_bet
    n = dp.game.n_players
    if stacks is None:
        return [float(default)] * n
    return [float(s) if s is not None and s > 0 else float(default) for s in stacks]


def network_inputs(dp: "DecisionPoint", stacks: Optional[Sequence[Optional[float]]] = None) -> np.ndarray:
    """The five inputs of ``dp`` (float64), given the stacks at the start of the hand
    (None: :data:`DEFAULT_STACK_BETS` small bets each).

    >>> from cbr.game import HandState, preset
    >>> from evaluator_ext import parse_cards
    >>> s = HandState(preset("holdem.limit.2p"), hole_cards=[parse_cards("7c2d"), parse_cards("AsAh")])
    >>> dp = s.decision_point()                       # the small blind (AA) to act, stacks 1000 each
    >>> [round(x, 4) for x in network_inputs(dp, stacks=(1000, 1000)).tolist()[1:]]
    [0.1111, 0.4975, 0.0025, 0.0075]
    >>> bool(0.84 < network_inputs(dp)[0] < 0.86)    # AA's heads-up win probability (Monte Carlo)
    True
    """
    if dp.hole is None:
        raise NetworkError("the network needs the actor's hole cards")
    st = _stacks(dp, stacks)
    total = sum(st)
    chips = max(0.0, st[dp.position] - dp.total_committed[dp.position])
    return np.array([
        hand_strength_input(dp.hole, dp.board),
        (dp.players_in_hand - 1) / OPP_MAX,
        chips / total,
        dp.to_call / total,
        dp.pot / total,
    ], dtype=np.float64)


# ---------------------------------------------------------------------------------------
# Examples and TNE
# ---------------------------------------------------------------------------------------


@dataclass
class NetExamples:
    """``X`` (n, 5) inputs, ``Y`` (n, 2) targets (defensive, aggressive), ``groups`` (n,)
    hand numbers, ``players`` (n,) names; ``hands``: hands read; ``skipped``: hands unused;
    ``files_skipped``: files not read (not logs, unreadable)."""

    X: np.ndarray
    Y: np.ndarray
    groups: np.ndarray
    players: np.ndarray
    hands: int = 0
    skipped: list[str] = field(default_factory=list)
    files_skipped: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.Y.shape[0])

    def subset(self, mask: np.ndarray) -> "NetExamples":
        return NetExamples(self.X[mask], self.Y[mask], self.groups[mask], self.players[mask], self.hands,
                           list(self.skipped), list(self.files_skipped))

    def counts(self) -> dict[str, int]:
        """Examples per player, most first."""
        names, n = np.unique(self.players.astype(str), return_counts=True)
        return dict(sorted(zip(names.tolist(), n.tolist()), key=lambda kv: (-kv[1], kv[0])))


def examples_from_logs(paths: Sequence[str], *, player: Optional[str] = None, log_format: Optional[str] = None,
                       progress: Optional[Callable[..., None]] = None) -> NetExamples:
    """Every check/call and bet/raise of a player whose hole cards the log shows (of
    ``player`` only, if given), with its five inputs; hands that do not parse or replay
    are listed in ``skipped``, files not read in ``files_skipped``. Raises
    :class:`TooFewExamplesError` when no hand could be read, saying why."""
    from cbr.logs.replay import ReplayedLogs

    rows: list[np.ndarray] = []
    targets: list[tuple[int, int]] = []
    groups: list[int] = []
    players: list[str] = []
    logs = ReplayedLogs(paths, log_format, progress,
                        keep=lambda hand: hand.known_hole_cards > 0 and (player is None or player in hand.players))
    for item, dps in logs:
        for dp in dps:
            if dp.hole is None or dp.action not in ("c", "r") or (player is not None and dp.player != player):
                continue
            rows.append(network_inputs(dp, item.stacks))
            targets.append((1, 0) if dp.action == "c" else (0, 1))
            groups.append(logs.hands)
            players.append(dp.player)
    why = logs.nothing_read()
    if why is not None:
        raise TooFewExamplesError(why)
    X = np.asarray(rows, dtype=np.float64).reshape(len(rows), len(INPUT_NAMES))
    Y = np.asarray(targets, dtype=np.int8).reshape(len(targets), 2)
    return NetExamples(X, Y, np.asarray(groups, dtype=np.int64), np.asarray(players, dtype=object), logs.hands,
                       logs.skipped, logs.files_skipped)


def total_network_error(outputs: np.ndarray, targets: np.ndarray) -> float:
    """Neuroph's TNE: ``sum((outputs - targets)^2) / (2 * rows)``."""
    outputs = np.asarray(outputs, dtype=np.float64)
    targets = np.asarray(targets, dtype=np.float64)
    if outputs.shape != targets.shape or outputs.ndim != 2 or len(outputs) == 0:
        raise NetworkError(f"outputs {outputs.shape} and targets {targets.shape} must be equal, non-empty (n, 2)")
    return float(((outputs - targets) ** 2).sum() / (2 * len(outputs)))


# ---------------------------------------------------------------------------------------
# The network
# ---------------------------------------------------------------------------------------


class DefaultNetwork:
    """The 5-``hidden``-2 perceptron: logistic hidden units and two logistic outputs
    (scikit-learn's :class:`~sklearn.neural_network.MLPClassifier` on the two-column
    target, i.e. one sigmoid per output), trained by backpropagation (L-BFGS), seeded.

    >>> X = np.array([[0.9, 0.1, 0.5, 0.0, 0.01], [0.2, 0.1, 0.5, 0.01, 0.01]] * 30)
    >>> Y = np.array([[0, 1], [1, 0]] * 30)
    >>> net = DefaultNetwork(hidden=2, seed=0).fit(X, Y)
    >>> net.outputs(X[:2]).round(1).tolist(), net.tne(X, Y) < 0.01
    ([[0.0, 1.0], [1.0, 0.0]], True)
    """

    def __init__(self, *, hidden: int = 2, seed: int = 0, max_iter: int = 2000) -> None:
        if isinstance(hidden, bool) or not isinstance(hidden, int) or not 1 <= hidden <= 64:
            raise NetworkError(f"hidden is a whole number of neurons from 1 to 64, got {hidden!r}")
        self.hidden, self.seed, self.max_iter = hidden, seed, max_iter
        self.info: dict[str, Any] = {}

    def fit(self, X: np.ndarray, Y: np.ndarray) -> "DefaultNetwork":
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPClassifier

        model = MLPClassifier(hidden_layer_sizes=(self.hidden,), activation="logistic", solver="lbfgs",
                              alpha=1e-4, max_iter=self.max_iter, random_state=self.seed)
        from threadpoolctl import threadpool_limits

        # a 5-h-2 network on a few thousand rows: BLAS threads only fight (10x slower on a busy machine)
        with warnings.catch_warnings(record=True) as caught, threadpool_limits(1):
            warnings.simplefilter("always", ConvergenceWarning)
            model.fit(np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.int64))
        self.model_ = model
        self.converged_ = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
        return self

    def outputs(self, X: np.ndarray) -> np.ndarray:
        """``(n, 2)`` outputs (defensive, aggressive), each in (0, 1)."""
        if not hasattr(self, "model_"):
            raise NetworkError("this network is not trained; call fit() or DefaultNetwork.load()")
        X = np.asarray(X, dtype=np.float64).reshape(-1, len(INPUT_NAMES))
        return np.asarray(self.model_.predict_proba(X), dtype=np.float64).reshape(len(X), 2)

    def tne(self, X: np.ndarray, Y: np.ndarray) -> float:
        return total_network_error(self.outputs(X), Y)

    # ---- files ------------------------------------------------------------------
    def header(self) -> dict[str, Any]:
        import sklearn

        return {"format": "cbr-thesis-network", "schema_version": SCHEMA_VERSION, "inputs": list(INPUT_NAMES),
                "outputs": list(OUTPUT_NAMES), "opp_max": OPP_MAX, "default_stack_bets": DEFAULT_STACK_BETS,
                "hs_trials": HS_TRIALS, "hidden": self.hidden, "seed": self.seed, "max_iter": self.max_iter,
                "sklearn": sklearn.__version__, "info": self.info}

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """A magic line, a JSON header with the input schema, then the pickled network
        (atomic; an existing file only with ``overwrite``; :mod:`cbr.models.modelfile`)."""
        if not hasattr(self, "model_"):
            raise NetworkError("this network is not trained; nothing to save")
        return write_model_file(path, _MAGIC, self.header(), self.model_, what="network", overwrite=overwrite)

    @staticmethod
    def read_header(path: str | Path) -> dict[str, Any]:
        """The checked JSON header: another file kind or input schema is refused with
        :class:`NetworkError` before anything is unpickled."""
        path = Path(path)
        header = read_model_header(path, _MAGIC, what="a thesis network", made_by="cbr train network",
                                   error=NetworkError)
        version, inputs = header.get("schema_version"), header.get("inputs")
        if version != SCHEMA_VERSION or inputs != list(INPUT_NAMES) or header.get("opp_max") != OPP_MAX \
                or header.get("default_stack_bets") != DEFAULT_STACK_BETS:
            raise NetworkError(
                f"{path} was saved with input schema version {version} (inputs {', '.join(map(str, inputs or []))}); "
                f"this engine reads version {SCHEMA_VERSION} with inputs {', '.join(INPUT_NAMES)} "
                f"(opponents / {OPP_MAX}, default stacks {DEFAULT_STACK_BETS} small bets): retrain it with "
                f"`cbr train network`")
        return header

    @classmethod
    def load(cls, path: str | Path) -> "DefaultNetwork":
        """Read a network written by :meth:`save` (a trusted file: the network is pickled)."""
        path = Path(path)
        header = cls.read_header(path)
        model = read_model_object(path, _MAGIC, what="network", error=NetworkError)
        net = cls(hidden=int(header.get("hidden", 2)), seed=int(header.get("seed", 0)),
                  max_iter=int(header.get("max_iter", 2000)))
        net.model_ = model
        net.info = dict(header.get("info", {}))
        net.converged_ = bool(net.info.get("converged", True))
        return net


# ---------------------------------------------------------------------------------------
# Training and the TNE report (table 8)
# ---------------------------------------------------------------------------------------


@dataclass
class TNEReport:
    """TNE of one player's network. ``train_tne``: on the training data, as the thesis
    reports it; ``cv_tne``: on held-out hands (``folds``-fold, whole hands per fold);
    ``baseline_tne``: held out, of a constant answer (the training folds' action
    frequencies); ``cv_error``: share of held-out actions whose larger output is wrong."""

    player: Optional[str]
    hidden: int
    examples: int
    hands: int
    raise_share: float
    train_tne: float
    cv_tne: float
    baseline_tne: float
    cv_error: float
    folds: int
    converged: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check_examples(ex: NetExamples, player: Optional[str]) -> None:
    who = f"player {player!r}" if player else "these logs"
    if len(ex) < MIN_EXAMPLES:
        raise TooFewExamplesError(f"{who}: {counted(len(ex), 'action')} with shown cards; the network needs at least "
                                  f"{MIN_EXAMPLES} to train and report a TNE")
    raises = int(ex.Y[:, 1].sum())
    if min(raises, len(ex) - raises) < MIN_PER_ACTION:
        raise TooFewExamplesError(f"{who}: {raises} bets/raises and {len(ex) - raises} checks/calls; the network "
                                  f"needs at least {MIN_PER_ACTION} of each")


def train_network(ex: NetExamples, *, player: Optional[str] = None, hidden: int = 2, folds: int = 5,
                  seed: int = 0, progress: Optional[Callable[..., None]] = None) -> tuple[DefaultNetwork, TNEReport]:
    """Cross-validate, then train on every example; ``ex`` restricted to ``player`` if given.
    Raises :class:`TooFewExamplesError` below :data:`MIN_EXAMPLES` examples. ``progress(1)``
    is called after each network trained: ``folds + 1`` times."""
    from cbr.models.predictor import fold_assignment

    if player is not None:
        ex = ex.subset(ex.players == player)
    _check_examples(ex, player)
    fold = fold_assignment(ex.groups, folds, seed)
    out = np.zeros(ex.Y.shape)
    base = np.zeros(ex.Y.shape)
    for k in range(folds):
        test = fold == k
        train = ~test
        y_train = ex.Y[train]
        if len(np.unique(y_train[:, 1])) < 2:
            raise TooFewExamplesError(f"fold {k} of {player or 'the logs'} holds only one kind of action")
        out[test] = DefaultNetwork(hidden=hidden, seed=seed).fit(ex.X[train], y_train).outputs(ex.X[test])
        base[test] = y_train.mean(axis=0)
        if progress is not None:
            progress(1)
    net = DefaultNetwork(hidden=hidden, seed=seed).fit(ex.X, ex.Y)
    if progress is not None:
        progress(1)
    report = TNEReport(
        player=player, hidden=hidden, examples=len(ex), hands=int(len(np.unique(ex.groups))),
        raise_share=float(ex.Y[:, 1].mean()), train_tne=net.tne(ex.X, ex.Y),
        cv_tne=total_network_error(out, ex.Y), baseline_tne=total_network_error(base, ex.Y),
        cv_error=float(np.mean(np.argmax(out, axis=1) != np.argmax(ex.Y, axis=1))), folds=folds,
        converged=net.converged_)
    net.info = {"player": player, "examples": len(ex), "train_tne": report.train_tne, "cv_tne": report.cv_tne,
                "converged": net.converged_}
    return net, report


def tne_table(ex: NetExamples, players: Sequence[str], hidden: Sequence[int] = (2, 3, 4, 5), *, folds: int = 5,
              seed: int = 0) -> list[TNEReport]:
    """Table 8: one :class:`TNEReport` per player and hidden-layer size."""
    return [train_network(ex, player=p, hidden=h, folds=folds, seed=seed)[1] for p in players for h in hidden]


# ---------------------------------------------------------------------------------------
# The policy
# ---------------------------------------------------------------------------------------


class ThesisNetPolicy(Policy):
    """The default strategy as a bot: the network's two outputs, normalised, give the
    check/call and bet/raise probabilities. The network cannot fold (section 2.5); as the
    thesis suggests, folding is programmed: facing a bet, fold when the hand strength
    (input 1) is below the pot odds.

    Options: ``model`` (a file of :meth:`DefaultNetwork.save`) or ``logs`` with ``player`` and
    ``hidden``, one line each in :attr:`OPTION_HELP`. Building the bot checks them (the model's
    header, the logs' path, the hidden layer's size) and nothing more, so checking a spec is quick;
    the network is read or trained on first use (:attr:`network`).

    >>> ThesisNetPolicy()
    Traceback (most recent call last):
    cbr.policies.thesis_net.NetworkError: thesis-net needs model=PATH (a saved network) or logs=PATH (logs to train on)
    """

    name = "thesis-net"
    #: One line on each option (``cbr plugins list``; :func:`~cbr.policies.spec.policy_option_help`).
    OPTION_HELP = {
        "model": "a network file saved by cbr train network (or give logs)",
        "logs": "a log file or folder to train the network on when the bot first plays",
        "player": "with logs: whose actions to learn (\"\": every shown hand)",
        "hidden": "with logs: neurons in the hidden layer",
    }

    def __init__(self, *, seed: int | None = None, model: str = "", logs: str = "", player: str = "",
                 hidden: int = 2) -> None:
        super().__init__(seed=seed)
        if bool(model) == bool(logs):
            raise NetworkError("thesis-net needs model=PATH (a saved network) or logs=PATH (logs to train on)"
                               if not model else "thesis-net takes model=PATH or logs=PATH, not both")
        # The options are checked now, cheaply (a spec is checked before any work); the network is
        # read or trained on first use (:attr:`network`).
        from cbr.policies.spec import file_option_error

        if model:
            try:
                DefaultNetwork.read_header(model)  # missing, another kind of file or input schema: refused now
            except NetworkError as exc:
                raise file_option_error("model", exc) from None
        elif not Path(logs).exists():
            raise file_option_error("logs", NetworkError(f"{logs}: no such file or folder"))
        DefaultNetwork(hidden=hidden)  # a hidden layer out of range: refused now
        self.model, self.logs, self.player, self.hidden = model, logs, player, hidden
        self._network: Optional[DefaultNetwork] = None
        self._report: Optional[TNEReport] = None

    @property
    def network(self) -> DefaultNetwork:
        """The network: read from ``model``, or trained on ``logs`` on first use."""
        if self._network is None:
            if self.model:
                try:
                    self._network = DefaultNetwork.load(self.model)
                except NetworkError as exc:  # damaged after its header, or gone since the bot was made
                    from cbr.policies.spec import file_option_error

                    raise file_option_error("model", exc, self) from None
            else:
                ex = examples_from_logs([self.logs], player=self.player or None)
                self._network, self._report = train_network(ex, player=self.player or None, hidden=self.hidden,
                                                            seed=self.seed or 0)
        return self._network

    @property
    def report(self) -> Optional[TNEReport]:
        """The TNE report of a network trained on ``logs`` (training it if not yet); None for a ``model``."""
        _ = self.network
        return self._report

    def triple(self, dp: "DecisionPoint") -> Triple:
        x = network_inputs(dp)
        defensive, aggressive = self.network.outputs(x[None, :])[0]
        total = defensive + aggressive
        p_raise = aggressive / total if total > 0 else 0.5
        if dp.to_call > 0 and x[0] < dp.pot_odds:
            return legal_triple((1.0, 0.0, 0.0), dp.legal)
        return legal_triple((0.0, 1.0 - p_raise, p_raise), dp.legal)
