"""Robust counter-strategies to opponent models estimated from logs (issue 36, part 1).

A *restricted Nash response* (Johanson, Zinkevich and Bowling, NIPS 2007) is the exploiter's
half of an equilibrium of a modified game: with probability ``p`` the opponent is forced to
play a fixed model, otherwise it plays freely. ``p = 0`` is plain self-play (an equilibrium),
``p = 1`` a best response to the model; in between the exploiter trades exploitation of the
model against its own exploitability. A *data-biased response* (Johanson and Bowling, AISTATS
2009) forces the model only where the data says something: at an information set seen ``n``
times the opponent plays the model with probability ``P_max * n / (n + c)``, so an information
set the logs never showed costs nothing.

Both run on the teacher's game (:mod:`cbr.cfr.mccfr`: external-sampling MCCFR, real cards,
imperfect-recall buckets) in C (``evaluator_ext/src/rnr_kernels.c``):
:class:`CounterTrainer` keeps the exploiter's tables (what it plays, saved as an ordinary
MCCFR strategy that the ``cfr`` bot plays) and the free opponent's. The model is an
:class:`OpponentModel`: counts per (betting node, current-street bucket, action) of every
decision a player made with known cards in a log (:func:`count_decisions`).

>>> from cbr.cfr.tree import build_tree
>>> m = OpponentModel(build_tree("holdem.limit.2p"), (1, 1, 1, 1))
>>> m.counts[int(m.offset[0]):int(m.offset[0]) + 3] += [0, 1, 3]   # the small blind: call once, raise 3 times
>>> m.probs()[int(m.offset[0]):int(m.offset[0]) + 3].round(2).tolist()
[0.0, 0.25, 0.75]
>>> float(m.confidence(p_max=1.0, c=4.0)[int(m.offset[0])])
0.5
"""
from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Optional

import numpy as np

from cbr.abstraction.distribution import NO_BUCKET, DistributionAbstraction, native_module
from cbr.cfr.mccfr import MCCFRTrainer, layout
from cbr.cfr.translate import map_history
from cbr.cfr.tree import KIND_CHANCE, KIND_DECISION, KIND_FOLD, BettingTree, build_tree
from cbr.errors import ConfigError
from cbr.logs.record import HandRecord
from cbr.logs.replay import replay
from evaluator_ext import evaluate

__all__ = ["OpponentModel", "count_decisions", "CounterTrainer"]


class OpponentModel:
    """Action counts of one opponent, laid out like the solver's tables (:func:`~cbr.cfr.mccfr.layout`):
    ``counts[offset[node] + bucket * k + j]`` is how often it took the ``j``-th action of
    ``node`` holding a hand of ``bucket`` (the current street's)."""

    def __init__(self, tree: BettingTree, n_buckets: tuple[int, ...], counts: Optional[np.ndarray] = None) -> None:
        self.tree = tree
        self.n_buckets = tuple(int(b) for b in n_buckets)
        self.offset, self.size = layout(tree, self.n_buckets)
        self.counts = np.zeros(self.size, dtype=np.float64) if counts is None else np.asarray(counts, np.float64)
        if self.counts.shape != (self.size,):
            raise ConfigError(f"an opponent model of this tree and abstraction has {self.size} counts, "
                              f"not {self.counts.shape}")

    def _rows(self):
        """(node, street, k, first entry, rows x k view of the counts) of every decision node."""
        for node in self.tree.decision_nodes():
            k = int(self.tree.n_children[node])
            lo = int(self.offset[node])
            rows = self.n_buckets[int(self.tree.street[node])]
            yield node, int(self.tree.street[node]), k, lo, self.counts[lo: lo + rows * k].reshape(rows, k)

    def observations(self) -> np.ndarray:
        """How many decisions each row saw, repeated over the row's entries."""
        out = np.zeros(self.size)
        for _, _, k, lo, t in self._rows():
            out[lo: lo + t.size] = np.repeat(t.sum(axis=1), k)
        return out

    def probs(self) -> np.ndarray:
        """Action frequencies per row, float32. A row never seen takes the frequencies of its
        node over every bucket; a node never seen those of the street, facing a bet or not,
        over the node's actions; with nothing at all, uniform."""
        out = np.zeros(self.size, dtype=np.float64)
        street_kind = np.zeros((4, 2, 3))  # street x facing a bet x f/c/r
        nodes = list(self._rows())
        for node, street, k, lo, t in nodes:
            edges = [self.tree.edge[c] for c in self.tree.children(node)]
            for j, e in enumerate(edges):
                street_kind[street, int("f" in edges), "fcr".index(e)] += t[:, j].sum()
        for node, street, k, lo, t in nodes:
            edges = [self.tree.edge[c] for c in self.tree.children(node)]
            pooled = t.sum(axis=0)
            if pooled.sum() <= 0:
                pooled = np.array([street_kind[street, int("f" in edges), "fcr".index(e)] for e in edges])
            if pooled.sum() <= 0:
                pooled = np.ones(k)
            n = t.sum(axis=1, keepdims=True)
            rows = np.where(n > 0, t / np.where(n > 0, n, 1), pooled / pooled.sum())
            out[lo: lo + t.size] = rows.ravel()
        return out.astype(np.float32)

    def confidence(self, *, p_max: float = 1.0, c: float = 0.0) -> np.ndarray:
        """The chance the restricted opponent plays the model at each row (float32, one per
        entry: the solver reads a row's first): ``p_max * n / (n + c)`` for a row seen ``n``
        times (data-biased); ``c = 0`` gives ``p_max`` everywhere (restricted Nash)."""
        if not (0.0 <= p_max <= 1.0) or c < 0:
            raise ConfigError(f"confidence needs 0 <= p_max <= 1 and c >= 0, got {p_max} and {c}")
        if c == 0:
            return np.full(self.size, p_max, dtype=np.float32)
        n = self.observations()
        return (p_max * n / (n + c)).astype(np.float32)

    def save(self, path) -> None:
        """The counts (compressed npz), written atomically: whole or not at all."""
        from cbr.store.durable import atomic_savez

        atomic_savez(path, compress=True, counts=self.counts.astype(np.float32), tree=np.array(self.tree.fingerprint),
                     n_buckets=np.array(self.n_buckets))

    @classmethod
    def load(cls, path, tree: Optional[BettingTree] = None) -> "OpponentModel":
        tree = tree or build_tree("holdem.limit.2p")
        with np.load(path, allow_pickle=False) as z:
            if str(z["tree"]) != tree.fingerprint:
                raise ConfigError(f"{path}: an opponent model of another betting tree")
            return cls(tree, tuple(int(b) for b in z["n_buckets"]), np.array(z["counts"], dtype=np.float64))


def count_decisions(records: Iterable[HandRecord], player: str, abstraction: DistributionAbstraction, *,
                    tree: Optional[BettingTree] = None, model: Optional[OpponentModel] = None) -> OpponentModel:
    """Count every decision ``player`` made with known hole cards in ``records`` (heads-up
    fixed limit) at its (tree node, current-street bucket); adds to ``model`` if given.

    Hands ``player`` did not play, or played without shown cards, add nothing. A history the
    tree does not have raises :class:`~cbr.cfr.translate.TranslationError`.
    """
    tree = tree or build_tree("holdem.limit.2p")
    model = model or OpponentModel(tree, abstraction.n_buckets)
    rng = random.Random(0)  # fixed-limit histories are never translated at random
    boards: dict[tuple[int, ...], np.ndarray] = {}
    for record in records:
        if player not in record.players:
            continue
        for dp in replay(record):
            if dp.player != player or dp.hole is None or dp.action not in ("f", "c", "r"):
                continue
            node = map_history(tree, dp.history, rng)
            key = tuple(int(c) for c in dp.board)
            table = boards.get(key)
            if table is None:
                if len(boards) > 256:
                    boards.clear()
                table = boards[key] = abstraction.street_buckets(key)
            bucket = int(abstraction.holding_buckets(key, [dp.hole], table)[0])
            if bucket == NO_BUCKET:
                raise ConfigError(f"hand {dp.hand_id}: hole {dp.hole} shares a card with the board {key}")
            edges = [tree.edge[c] for c in tree.children(node)]
            k = len(edges)
            model.counts[int(model.offset[node]) + bucket * k + edges.index(dp.action)] += 1
    return model


class CounterTrainer(MCCFRTrainer):
    """A robust counter-strategy to ``model`` (see the module docstring): ``p`` the chance the
    opponent is restricted (per iteration and seat), ``p_max`` and ``c`` the model's confidence
    at an information set (``c = 0``: ``p_max`` everywhere). The saved strategy names
    ``abstraction_folder``, the sibling folder whose ``abstraction.npz`` it was trained on. ``regret``/``avg`` are the
    exploiter's (what :meth:`save_strategy` writes), ``opp_regret``/``opp_avg`` the free
    opponent's. With ``p = 0`` both equal :class:`MCCFRTrainer`'s tables for the same seed."""

    def __init__(self, abstraction: DistributionAbstraction, model: OpponentModel, *, p: float = 1.0,
                 p_max: float = 1.0, c: float = 0.0, name: str = "", abstraction_folder: str = "emd_256",
                 **options) -> None:
        super().__init__(abstraction, **options)
        if not 0.0 <= p <= 1.0:
            raise ConfigError(f"p is a probability, got {p}")
        if model.size != self.size or model.n_buckets != tuple(abstraction.n_buckets):
            raise ConfigError("the opponent model was counted on another tree or abstraction")
        self.p, self.p_max, self.c, self.name = float(p), float(p_max), float(c), name
        self.abstraction_folder = abstraction_folder
        self.model_probs = model.probs()
        self.model_conf = model.confidence(p_max=p_max, c=c)
        self.observations = int(model.counts.sum())
        self.opp_regret = np.zeros(self.size, dtype=np.float64)
        self.opp_avg = np.zeros(self.size, dtype=np.float64)

    def _walk(self, n: int) -> None:
        """:meth:`MCCFRTrainer.run`'s chunks and discount schedule, with this walk: an iteration
        walks each seat of the exploiter once, against the restricted or the free opponent.

        The C call looks for signals every thousand iterations or so: Ctrl-C ends it at once (a
        chunk, :data:`~cbr.cfr.mccfr.CHUNK`, is seconds on the shipped abstraction), and the
        iterations it finished, which the tables hold, are counted before the
        ``KeyboardInterrupt`` goes on (with one thread, a run continued from there is an
        unbroken run's, bit for bit)."""
        done = np.zeros(1, dtype=np.int64)
        try:
            native_module().run_rnr(self._tree, self._tables, self.regret, self.avg, self.opp_regret, self.opp_avg,
                                    self.model_probs, self.model_conf, self.p, self.iterations, n,
                                    self.seed & 0xFFFFFFFFFFFFFFFF, self.threads, done)
        except BaseException:
            self.iterations += int(done[0])  # :meth:`MCCFRTrainer.run` counts a chunk when it returns
            raise

    def _tables_discounted(self) -> tuple[np.ndarray, ...]:
        return self.regret, self.avg, self.opp_regret, self.opp_avg

    def _info(self) -> dict:
        info = super()._info()
        info["abstraction_folder"] = self.abstraction_folder  # a sibling folder: the strategy ships alone
        info["counter"] = {"name": self.name, "p": self.p, "p_max": self.p_max, "c": self.c,
                           "observations": self.observations}
        return info

    def model_value(self, hands: int, *, seed: int = 0, strategy: Optional[np.ndarray] = None) -> tuple[float, float]:
        """The exploiter's mean value against the model over ``hands`` random deals (both seats,
        each deal played from both), in chips, with its standard error: the tree's stakes under
        ``strategy`` (default the average) and the model's rows, enumerated exactly over both
        players' actions for each deal."""
        s = self.strategy() if strategy is None else strategy
        return _value_against(self, s, self.model_probs, hands, seed)


def _value_against(t: MCCFRTrainer, mine: np.ndarray, theirs: np.ndarray, hands: int, seed: int) -> tuple[float, float]:
    """Mean value of ``mine`` against ``theirs`` (probability tables of ``t``'s layout) over
    ``hands`` random deals, each played in both seats; (mean, standard error) in chips."""
    tree = t.tree
    rng = np.random.default_rng(seed)
    vals = np.empty(hands)
    for h in range(hands):
        deck = rng.permutation(52)[:9]
        holes, board = (tuple(deck[0:2]), tuple(deck[2:4])), tuple(int(c) for c in deck[4:9])
        b = [t.deal_buckets(tuple(int(c) for c in hole), board) for hole in holes]
        v = [evaluate([int(c) for c in hole] + list(board)) for hole in holes]
        winner = 0 if v[0] > v[1] else (1 if v[1] > v[0] else -1)
        total = 0.0
        for me in (0, 1):  # seat of `mine`
            total += _walk_value(tree, t.offset, b, winner, me, mine, theirs)
        vals[h] = total / 2
    return float(vals.mean()), float(vals.std(ddof=1) / np.sqrt(hands)) if hands > 1 else 0.0


def _walk_value(tree: BettingTree, offset: np.ndarray, buckets, winner: int, me: int, mine: np.ndarray,
                theirs: np.ndarray, node: int = 0) -> float:
    kind = int(tree.kind[node])
    if kind == KIND_DECISION:
        pl = int(tree.player[node])
        k = int(tree.n_children[node])
        row = int(offset[node]) + int(buckets[pl][int(tree.street[node])]) * k
        probs = (mine if pl == me else theirs)[row: row + k]
        return sum(float(probs[j]) * _walk_value(tree, offset, buckets, winner, me, mine, theirs, c)
                   for j, c in enumerate(tree.children(node)) if probs[j] > 0)
    if kind == KIND_CHANCE:  # the deal is fixed
        return _walk_value(tree, offset, buckets, winner, me, mine, theirs, tree.children(node)[0])
    stake = float(tree.stake[node])
    if kind == KIND_FOLD:
        return -stake if int(tree.player[node]) == me else stake
    return 0.0 if winner < 0 else (stake if winner == me else -stake)
