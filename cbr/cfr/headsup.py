"""Two CFR strategies against each other on real cards, heads-up (the KTH study's table 2).

Each deal is a real board and two real holdings. Each player maps *its own* cards through
*its own* abstraction (the bucket sequence of every street) and plays its own average
strategy on the shared betting tree (``holdem.limit.2p`` or ``nolimit.fcpa``); the real
showdown is paid with the evaluator's hand values on the full board (an all-in before the
river runs the board out, as the real game does). Chance in the actions is not sampled:
for each deal the value is the exact expectation over both players' mixed strategies,
computed for many deals at once as reach probabilities over every node of the tree.

Duplicate: every deal is played twice with the seats swapped (the same holdings stay on
the same seat of the tree, the players change seats), and a deal's value is the mean of
the two. Deals come ``pairs`` to a board (the per-board metric tables are the costly
part); boards are the independent units, so the 95% confidence interval is over per-board
means (:func:`cbr.stats.mean_ci`). Results are in big blinds per 100 hands (bb/100).

Roles follow the tree: role 0 is the big blind, role 1 the small blind, who acts first
pre-flop.

>>> from cbr.abstraction import Abstraction
>>> from cbr.cfr.tree import build_tree
>>> tree = build_tree("nolimit.fcpa")
>>> a = Abstraction.build("uniform", "hs", n_buckets=2, samples=0)
>>> caller = Contestant.constant("call", tree, a, "c")
>>> r = play_duplicate(tree, caller, caller, seed=1, boards=3, pairs=2)
>>> r.bb100, r.hands
(0.0, 12)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from cbr.cfr.tree import KIND_CHANCE, KIND_DECISION, KIND_FOLD, KIND_SHOWDOWN, BettingTree
from cbr.errors import ConfigError, counted

__all__ = ["Contestant", "DuplicateResult", "deal_boards", "role_values", "play_duplicate", "round_robin"]


@dataclass(frozen=True, eq=False)
class Contestant:
    """A player of the evaluator: a name, a strategy table on ``tree`` (rows sum to 1, the
    layout of :meth:`BettingTree.layout` for ``n_buckets``) and the abstraction that buckets
    its cards (anything with ``n_buckets`` and ``board_sequences(board)``)."""

    name: str
    tree: BettingTree
    probs: np.ndarray
    abstraction: Any
    offset: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        n = int(self.abstraction.n_buckets)
        offset, size = self.tree.layout(n)
        probs = np.ascontiguousarray(self.probs, dtype=np.float64)
        if probs.shape != (size,):
            raise ConfigError(f"{self.name}: strategy has {probs.shape} entries, the {self.tree.name} tree "
                              f"needs {size} for {counted(n, 'bucket')}")
        object.__setattr__(self, "probs", probs)
        object.__setattr__(self, "offset", offset)

    @property
    def n_buckets(self) -> int:
        return int(self.abstraction.n_buckets)

    @classmethod
    def from_strategy(cls, strategy: Any, name: Optional[str] = None) -> "Contestant":
        """From a loaded :class:`cbr.cfr.strategy.Strategy` (its tree, table and abstraction)."""
        return cls(name or str(strategy.abstraction.name), strategy.tree, strategy.probs, strategy.abstraction)

    @classmethod
    def constant(cls, name: str, tree: BettingTree, abstraction: Any, prefer: str) -> "Contestant":
        """A card-blind strategy: at every node the first action of ``prefer`` (letters, in
        order of preference) the node has, e.g. ``"fc"``: fold when facing a bet, else check.

        >>> from cbr.abstraction import Abstraction
        >>> from cbr.cfr.tree import build_tree
        >>> t = build_tree("holdem.limit.2p")
        >>> c = Contestant.constant("raise", t, Abstraction.build("uniform", "hs", 2, samples=0), "rc")
        >>> float(c.probs[c.offset[t.node_of("")] + 2])   # the small blind raises
        1.0
        """
        n = int(abstraction.n_buckets)
        offset, size = tree.layout(n)
        probs = np.zeros(size)
        for node in tree.decision_nodes():
            acts = tree.actions(node)
            pick = next((acts.index(x) for x in prefer if x in acts), None)
            if pick is None:
                raise ConfigError(f"{name}: node {tree.history(node)!r} has none of the actions {prefer!r}")
            k = len(acts)
            rows = n ** (int(tree.street[node]) + 1)
            probs[offset[node] + pick: offset[node] + rows * k: k] = 1.0
        return cls(name, tree, probs, abstraction)


@dataclass
class DuplicateResult:
    """Player ``a``'s result against ``b``: bb/100 with the 95% half-width, over ``hands``
    (each deal counts twice, once per seating) on ``boards`` boards."""

    a: str
    b: str
    bb100: float
    ci: float
    hands: int
    boards: int
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "bb100": self.bb100, "ci": self.ci, "hands": self.hands,
                "boards": self.boards, "seconds": round(self.seconds, 2)}


class _Walk:
    """The tree's structure as arrays for the vectorised walk (cached per tree)."""

    def __init__(self, tree: BettingTree) -> None:
        n = tree.n_nodes
        parent = np.full(n, -1, dtype=np.int64)
        slot = np.zeros(n, dtype=np.int64)
        for node in range(n):
            for j, c in enumerate(tree.children(node)):
                parent[c] = node
                slot[c] = j
        depth = np.zeros(n, dtype=np.int64)
        for node in range(1, n):  # nodes are numbered parents first
            if parent[node] >= node:
                raise ConfigError(f"{tree.name}: tree nodes are not numbered parents first")
            depth[node] = depth[parent[node]] + 1
        self.levels = [np.flatnonzero(depth == d) for d in range(1, int(depth.max()) + 1)]
        self.parent = parent
        moves = np.flatnonzero((parent >= 0) & (tree.kind[np.maximum(parent, 0)] == KIND_DECISION))
        self.moves = []  # per role: (child nodes, their parent, parent's street, parent's n_children, slot)
        for role in (0, 1):
            c = moves[tree.player[parent[moves]] == role]
            p = parent[c]
            self.moves.append((c, p, tree.street[p].astype(np.int64), tree.n_children[p].astype(np.int64), slot[c]))
        self.folds = np.flatnonzero(tree.kind == KIND_FOLD)
        stake = tree.stake.astype(np.float64)
        self.fold_pay = np.where(tree.player[self.folds] == 0, -stake[self.folds], stake[self.folds])
        self.showdowns = np.flatnonzero(tree.kind == KIND_SHOWDOWN)
        self.showdown_stake = stake[self.showdowns]
        assert not np.any(tree.kind[parent[parent >= 0]] == KIND_FOLD)
        assert np.all(np.isin(tree.kind, (KIND_DECISION, KIND_FOLD, KIND_SHOWDOWN, KIND_CHANCE)))


_WALKS: dict[str, _Walk] = {}


def _walk(tree: BettingTree) -> _Walk:
    w = _WALKS.get(tree.fingerprint)
    if w is None:
        w = _WALKS[tree.fingerprint] = _Walk(tree)
    return w


def role_values(tree: BettingTree, role0: Contestant, role1: Contestant, seq0: np.ndarray, seq1: np.ndarray,
                sign: np.ndarray) -> np.ndarray:
    """Expected chips won by role 0 (the big blind) in each of ``D`` deals.

    ``seqK`` is ``(D, 4)``: role K's bucket-sequence index per street (mixed radix in its
    own bucket count, :func:`cbr.cfr.policy.sequence_index` of the first ``s + 1`` buckets);
    ``sign`` is ``(D,)``: +1, 0 or -1 as role 0's holding beats, ties or loses at showdown.
    Role 1 wins the negation (the game is zero-sum).
    """
    w = _walk(tree)
    seqs = (np.asarray(seq0, dtype=np.int64), np.asarray(seq1, dtype=np.int64))
    d = seqs[0].shape[0]
    prob = np.ones((d, tree.n_nodes))
    for role, player in enumerate((role0, role1)):
        c, p, st, k, j = w.moves[role]
        index = player.offset[p] + seqs[role][:, st] * k + j
        prob[:, c] = player.probs[index]
    reach = np.empty_like(prob)
    reach[:, 0] = 1.0
    for nodes in w.levels:
        reach[:, nodes] = reach[:, w.parent[nodes]] * prob[:, nodes]
    return reach[:, w.folds] @ w.fold_pay + np.asarray(sign, dtype=np.float64) * (reach[:, w.showdowns] @ w.showdown_stake)


def deal_boards(seed: int, boards: int, pairs: int) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """``boards`` random boards, each with ``pairs`` deals of two holdings (a ``(pairs, 4)``
    array: holding 0 then holding 1), from an own seeded deck (numpy ``default_rng(seed)``).

    >>> (board, holes), = deal_boards(1, 1, 3)
    >>> len(set(board) | set(holes[0].tolist())), holes.shape
    (9, (3, 4))
    """
    if boards < 1 or pairs < 1:
        raise ConfigError(f"boards and pairs must be >= 1, got {boards} and {pairs}")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(boards):
        deck = rng.permutation(52)
        board, rest = deck[:5], deck[5:]
        holes = np.stack([rng.choice(rest, 4, replace=False) for _ in range(pairs)])
        out.append((tuple(int(x) for x in board), holes))
    return out


def _combo(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    hi, lo = np.maximum(a, b), np.minimum(a, b)
    return hi * (hi - 1) // 2 + lo


def _sequences(abstraction: Any, board: tuple[int, ...]) -> np.ndarray:
    """(1326, 4) mixed-radix sequence index per street of every holding on ``board`` (-1: clashing)."""
    combos, seqs, _ = abstraction.board_sequences(board)
    n = int(abstraction.n_buckets)
    out = np.full((1326, 4), -1, dtype=np.int64)
    idx = seqs[:, 0].astype(np.int64)
    out[combos, 0] = idx
    for s in (1, 2, 3):
        idx = idx * n + seqs[:, s]
        out[combos, s] = idx
    return out


def round_robin(contestants: Sequence[Contestant], *, seed: int, boards: int, pairs: int = 16,
                progress: Optional[Callable[[int, int], None]] = None) -> list[DuplicateResult]:
    """Every pair of ``contestants`` (all on one tree) plays duplicate on the same deals; one
    result per pair ``(i, j)``, ``i < j``, from the point of view of ``i``."""
    import time

    from cbr.abstraction.metrics import river_values

    if len(contestants) < 2:
        raise ConfigError("a round robin needs at least two contestants")
    tree = contestants[0].tree
    if any(c.tree.fingerprint != tree.fingerprint for c in contestants):
        raise ConfigError("all contestants must play the same betting tree")
    pairs_ij = [(i, j) for i in range(len(contestants)) for j in range(i + 1, len(contestants))]
    per_board = {ij: [] for ij in pairs_ij}
    seconds = {ij: 0.0 for ij in pairs_ij}
    deals = deal_boards(seed, boards, pairs)
    for k, (board, holes) in enumerate(deals):
        h0 = _combo(holes[:, 0], holes[:, 1])
        h1 = _combo(holes[:, 2], holes[:, 3])
        values = river_values(board)
        sign = np.sign(values[h0].astype(np.int64) - values[h1].astype(np.int64))
        seqs = [_sequences(c.abstraction, board) for c in contestants]
        for i, j in pairs_ij:
            t = time.perf_counter()
            a, b = contestants[i], contestants[j]
            first = role_values(tree, a, b, seqs[i][h0], seqs[j][h1], sign)  # a holds h0 as role 0
            second = -role_values(tree, b, a, seqs[j][h0], seqs[i][h1], sign)  # seats swapped
            per_board[(i, j)].append(float(np.mean((first + second) / 2.0)))
            seconds[(i, j)] += time.perf_counter() - t
        if progress is not None:
            progress(k + 1, boards)
    return [_result(contestants[i], contestants[j], per_board[(i, j)], pairs, seconds[(i, j)])
            for i, j in pairs_ij]


def _result(a: Contestant, b: Contestant, board_means: list[float], pairs: int, seconds: float) -> DuplicateResult:
    from cbr.stats import mean_ci

    scale = 100.0 / float(a.tree.game.big_blind)  # chips per hand -> bb/100
    mean, ci = mean_ci([v * scale for v in board_means])
    return DuplicateResult(a.name, b.name, mean + 0.0, ci if math.isfinite(ci) else math.inf,
                           hands=2 * pairs * len(board_means), boards=len(board_means), seconds=seconds)


def play_duplicate(tree: BettingTree, a: Contestant, b: Contestant, *, seed: int, boards: int,
                   pairs: int = 16) -> DuplicateResult:
    """``a`` against ``b`` in duplicate on ``boards`` boards of ``pairs`` deals (see the module docstring)."""
    if a.tree.fingerprint != tree.fingerprint or b.tree.fingerprint != tree.fingerprint:
        raise ConfigError(f"both strategies must be for the {tree.name} tree")
    return round_robin([a, b], seed=seed, boards=boards, pairs=pairs)[0]
