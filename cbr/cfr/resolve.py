"""Re-solving the river at decision time (issue 37, part 4), from the ranges the blueprint implies.

When the ``cfr`` bot reaches the river it can replace the blueprint's river rows (the
teacher's, under-trained where it faces bets) by a strategy solved for this board and this
betting history:

1. **Ranges** (:func:`blueprint_ranges`): each player's weight on each of the 1,326 holdings
   is the product, over that player's actions before the river, of the blueprint's
   probability of the action at (node, the holding's bucket on that street); holdings that
   share a card with the board weigh 0.
2. **The subgame** (:class:`RiverSubgame`): the river betting subtree from the start of the
   river, with the pot so far (built once per tree and prefix); terminal values by the O(n)
   sweeps of ``evaluator_ext/src/sweep_kernels.c`` (shared with public-chance sampling),
   called from ``resolve_kernels.c`` (holdings sorted by 7-card value once, exact card
   removal by inclusion-exclusion over the two cards, ties half).
3. **A safe gadget** (:func:`resolve_river`): the opponent's counterfactual value of every
   holding under the blueprint is its best response to our blueprint river strategy in this
   subgame (:func:`subgame_best_response`); CFR+ in C then solves the max-margin gadget of
   Moravcik et al. 2016 (default; the opponent picks the holding whose value improves most)
   or the CFR-D gadget of Burch, Johanson & Bowling 2014 (it may take its value instead of
   entering). The blueprint meets every value, so the re-solved strategy gives no opponent
   holding more than the blueprint did, up to the solver's remaining regret
   (:attr:`Resolved.bound`). ``gadget="none"`` is unsafe re-solving: the opponent's root reach is
   its blueprint range, and both strategies are re-solved.

Card removal between the players is in the sweeps, so the solution does not depend on our
own cards: one solve gives the strategy of every holding we might hold (what LBR asks for).

>>> from evaluator_ext.cards import parse_cards
>>> board = bytes(parse_cards("2c7d9hJsKd"))
>>> reach = np.zeros(1326); reach[[combo(12, 13), combo(1, 5)]] = 1.0   # 5c5d, 2d3d
>>> fold, showdown = terminal_values(board, reach)
>>> float(fold[combo(48, 49)]), float(showdown[combo(48, 49)])   # AcAd: beats both
(2.0, 2.0)
>>> float(fold[combo(13, 14)]), float(showdown[combo(13, 14)])   # 5d5h: only 2d3d is left (a pair of deuces)
(1.0, 1.0)
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from cbr.cfr.tree import KIND_CHANCE, KIND_DECISION, BettingTree
from cbr.errors import ConfigError, GameError, counted

if TYPE_CHECKING:  # pragma: no cover
    from cbr.cfr.mccfr import ImperfectStrategy

__all__ = ["GADGETS", "N_COMBOS", "RiverSubgame", "Resolved", "blueprint_ranges", "blueprint_table", "combo",
           "native", "resolve_river", "subgame_best_response", "terminal_values", "river_prefix"]

N_COMBOS = 1326
#: The re-solving gadgets by name (the kernel's codes).
GADGETS = {"none": 0, "cfrd": 1, "margin": 2}
_STREET_CARDS = (0, 3, 4, 5)
#: The river subgames built so far, by (id of the tree, prefix) (a limit tree has a few hundred
#: river prefixes; cleared when full).
_SUBGAMES: dict[tuple[int, str], "RiverSubgame"] = {}
_MAX_SUBGAMES = 4096


def native():
    """The C extension ``evaluator_ext._resolve`` (a :class:`ConfigError` when it is not built)."""
    try:
        from evaluator_ext import _resolve
    except ImportError:
        from evaluator_ext import build_hint

        raise ConfigError("the re-solving extension evaluator_ext._resolve is not built (it has no pure-Python "
                          f"fallback): {build_hint()}") from None
    return _resolve


def combo(a: int, b: int) -> int:
    """The index 0..1325 of the holding of cards ``a`` and ``b`` (colex, as the evaluator's).

    >>> combo(0, 1), combo(51, 50)
    (0, 1325)
    """
    lo, hi = min(a, b), max(a, b)
    return hi * (hi - 1) // 2 + lo


_HI = np.array([hi for hi in range(1, 52) for _ in range(hi)], dtype=np.int64)
_LO = np.array([lo for hi in range(1, 52) for lo in range(hi)], dtype=np.int64)


def clash_mask(cards: Sequence[int]) -> np.ndarray:
    """Which holdings (1326 booleans) share a card with ``cards``.

    >>> int(clash_mask([0, 1, 2, 3, 4]).sum())   # 1326 - C(47, 2)
    245
    """
    dead = np.zeros(52, dtype=bool)
    dead[list(cards)] = True
    return dead[_HI] | dead[_LO]


def terminal_values(board: bytes, reach: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``river_terminal_values`` of the kernel: for each holding, the reach of the opponent
    holdings it shares no card with (``fold``) and the reach it beats minus the reach that
    beats it (``showdown``), against the opponent reach ``reach`` (1326; 0 where a holding
    clashes with the board)."""
    fold, showdown = np.zeros(N_COMBOS), np.zeros(N_COMBOS)
    native().terminal_values(bytes(board), np.ascontiguousarray(reach, dtype=np.float64), fold, showdown)
    return fold, showdown


def river_prefix(history: str) -> str:
    """The part of a river history before the river's first action (through the last ``/``).

    >>> river_prefix("rc/crc/cc/cr")
    'rc/crc/cc/'
    """
    if history.count("/") != 3:
        raise GameError(f"history {history!r} is not on the river")
    return history[: history.rindex("/") + 1]


@dataclass
class RiverSubgame:
    """The river betting subtree of ``tree`` from node ``root`` (the river's first decision),
    renumbered 0.. in preorder, as the flat arrays the kernel takes (:attr:`arrays`).

    >>> from cbr.cfr.tree import build_tree
    >>> g = RiverSubgame.at(build_tree("holdem.limit.2p"), "cc/cc/cc/")
    >>> g.n_nodes, g.size == 1326 * int(g.n_children[g.kind == 0].sum())
    (27, True)
    """

    tree: BettingTree
    root: int
    nodes: np.ndarray  # the full tree's node of each subgame node
    kind: np.ndarray
    player: np.ndarray
    child_start: np.ndarray
    n_children: np.ndarray
    child_index: np.ndarray
    stake: np.ndarray
    offset: np.ndarray  # a decision node's rows in a strategy table (1326 rows of its actions)
    size: int

    @classmethod
    def at(cls, tree: BettingTree, prefix: str) -> "RiverSubgame":
        """The subgame of the river starting at history ``prefix`` (ending in its third ``/``),
        built once per tree and prefix (then kept: treat it as read-only).

        >>> from cbr.cfr.tree import build_tree
        >>> tree = build_tree("holdem.limit.2p")
        >>> RiverSubgame.at(tree, "rc/cc/cc/") is RiverSubgame.at(tree, "rc/cc/cc/")
        True
        """
        kept = _SUBGAMES.get((id(tree), prefix))
        if kept is not None and kept.tree is tree:
            return kept
        game = cls._build(tree, prefix)
        if len(_SUBGAMES) >= _MAX_SUBGAMES:
            _SUBGAMES.clear()
        _SUBGAMES[(id(tree), prefix)] = game
        return game

    @classmethod
    def _build(cls, tree: BettingTree, prefix: str) -> "RiverSubgame":
        root = tree.node_of(prefix)
        if int(tree.street[root]) != 3 or int(tree.kind[root]) != KIND_DECISION:
            raise GameError(f"history {prefix!r} is not the start of the river")
        order: list[int] = []
        stack = [root]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(reversed(tree.children(node)))
        if any(int(tree.kind[n]) == KIND_CHANCE for n in order):
            raise GameError("a river subgame has no chance nodes")
        index = {n: i for i, n in enumerate(order)}
        kids = [[index[c] for c in tree.children(n)] for n in order]
        n = len(order)
        child_start = np.zeros(n, dtype=np.int32)
        flat: list[int] = []
        for i, ks in enumerate(kids):
            child_start[i] = len(flat)
            flat.extend(ks)
        nodes = np.array(order, dtype=np.int64)
        kind = tree.kind[nodes].astype(np.int8)
        n_children = np.array([len(k) for k in kids], dtype=np.int32)
        sizes = np.where(kind == KIND_DECISION, N_COMBOS * n_children, 0).astype(np.int64)
        offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        return cls(tree=tree, root=root, nodes=nodes, kind=kind, player=tree.player[nodes].astype(np.int8),
                   child_start=child_start, n_children=n_children,
                   child_index=np.array(flat, dtype=np.int32), stake=tree.stake[nodes].astype(np.float64),
                   offset=offset, size=int(sizes.sum()))

    @property
    def n_nodes(self) -> int:
        return int(self.kind.shape[0])

    @cached_property
    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For each entry of a strategy table: its full-tree node, the node's number of actions,
        the action and the holding (what :func:`blueprint_table` gathers by)."""
        parts: list[list[np.ndarray]] = [[], [], [], []]
        for local in self.decision_nodes():
            k = int(self.n_children[local])
            parts[0].append(np.full(N_COMBOS * k, int(self.nodes[local]), dtype=np.int64))
            parts[1].append(np.full(N_COMBOS * k, k, dtype=np.int64))
            parts[2].append(np.tile(np.arange(k, dtype=np.int64), N_COMBOS))
            parts[3].append(np.repeat(np.arange(N_COMBOS, dtype=np.int64), k))
        return tuple(np.concatenate(p) for p in parts)  # type: ignore[return-value]

    @property
    def arrays(self) -> tuple:
        """The tree as the kernel takes it."""
        return (self.kind, self.player, self.child_start, self.n_children, self.child_index, self.stake)

    def local(self, node: int) -> int:
        """The subgame's index of the full tree's ``node``."""
        hit = np.flatnonzero(self.nodes == node)
        if hit.size == 0:
            raise GameError(f"node {node} is not in the river subgame of {self.tree.history(self.root)!r}")
        return int(hit[0])

    def rows(self, table: np.ndarray, local: int) -> np.ndarray:
        """A decision node's (1326, actions) block of a strategy table."""
        k = int(self.n_children[local])
        return table[int(self.offset[local]): int(self.offset[local]) + N_COMBOS * k].reshape(N_COMBOS, k)

    def decision_nodes(self, player: Optional[int] = None) -> list[int]:
        return [i for i in range(self.n_nodes) if self.kind[i] == KIND_DECISION
                and (player is None or int(self.player[i]) == player)]


def blueprint_ranges(strategy: "ImperfectStrategy", history: str, board: Sequence[int],
                     buckets: Optional[dict] = None) -> np.ndarray:
    """Each tree player's range (rows 0 and 1; 1326 weights) after ``history``: the product
    over the player's actions of the blueprint's probability of the action at (node, the
    holding's bucket on that street); 0 for holdings sharing a card with ``board``.
    ``buckets``: a cache of :meth:`street_buckets` by board (filled here).

    >>> from cbr.cfr.policy import SHIPPED_TEACHER
    >>> from cbr.cfr.mccfr import load_imperfect_strategy
    >>> s = load_imperfect_strategy(SHIPPED_TEACHER)
    >>> r = blueprint_ranges(s, "cc/", [0, 5, 10])
    >>> r.shape, int((r[0] > 0).sum()) <= 1176, bool(r.max() <= 1.0)
    ((2, 1326), True, True)
    """
    from cbr.abstraction.distribution import NO_BUCKET

    tree = strategy.tree
    board = tuple(int(c) for c in board)
    cache = {} if buckets is None else buckets
    out = np.ones((2, N_COMBOS))
    out[:, clash_mask(board)] = 0.0
    for i, token in enumerate(history):
        if token == "/":
            continue
        node = tree.node_of(history[:i])
        street = int(tree.street[node])
        key = board[: _STREET_CARDS[street]]
        if len(key) != _STREET_CARDS[street]:
            raise GameError(f"history {history!r} reaches street {street} with a board of {counted(len(board), 'card')}")
        b = cache.get(key)
        if b is None:
            b = cache[key] = strategy.abstraction.street_buckets(key)
        b = b.astype(np.int64)
        valid = b != NO_BUCKET
        kids = tree.children(node)
        a = [tree.edge[c] for c in kids].index(token)
        k = len(kids)
        p = np.zeros(N_COMBOS)
        p[valid] = strategy.probs[int(strategy.offset[node]) + b[valid] * k + a]
        out[int(tree.player[node])] *= p
    return out


def blueprint_table(strategy: "ImperfectStrategy", game: RiverSubgame, river_buckets: np.ndarray) -> np.ndarray:
    """The blueprint's river strategy in the subgame's table layout (both players' nodes;
    rows of holdings that clash with the board are 0)."""
    from cbr.abstraction.distribution import NO_BUCKET

    node, k, action, holding = game.entries
    b = river_buckets.astype(np.int64)[holding]
    valid = b != NO_BUCKET
    rows = strategy.offset[node] + np.where(valid, b, 0) * k + action
    return np.where(valid, strategy.probs[rows], 0.0)


def subgame_best_response(game: RiverSubgame, board: bytes, br_player: int, table: np.ndarray,
                          reach: np.ndarray) -> np.ndarray:
    """Counterfactual values (chips, 1326) of ``br_player``'s holdings when it best-responds
    to the other player's rows of ``table`` played from root reach ``reach``."""
    out = np.zeros(N_COMBOS)
    native().best_response(game.arrays, bytes(board), int(br_player), np.ascontiguousarray(table, dtype=np.float64),
                           np.ascontiguousarray(reach, dtype=np.float64), out)
    return out


def normalise_table(game: RiverSubgame, avg: np.ndarray, regret: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Average sums to probabilities; a row with no average takes its regrets' strategy,
    and one with neither the ``fallback`` table's row (then uniform). In C (``normalise`` of
    the kernel): each row's sums in action order, then its entries over the sum."""
    out = np.empty(game.size)
    native().normalise(game.arrays, np.ascontiguousarray(avg, dtype=np.float64),
                       np.ascontiguousarray(regret, dtype=np.float64),
                       np.ascontiguousarray(fallback, dtype=np.float64), out)
    return out


@dataclass
class Resolved:
    """A re-solved river: the strategy of both players in the subgame (rows sum to 1), and
    how it was solved. ``opp_values``: the opponent's blueprint values (the gadget's), ``bound``:
    the kernel's regret bound on the gadget's exploitability (chips, per unit of our range)."""

    game: RiverSubgame
    board: bytes
    us: int
    strategy: np.ndarray
    blueprint: np.ndarray
    reach: np.ndarray  # (2, 1326): the players' normalised blueprint ranges at the river's start
    opp_values: np.ndarray
    gadget: str
    iterations: int
    bound: float
    seconds: float
    mix: float = 0.0  # the mixed gadget's chance of the dealt range (resolve_river)

    def row(self, node: int, hole: Sequence[int]) -> np.ndarray:
        """Our action probabilities at the full tree's ``node`` with hole cards ``hole``."""
        return self.game.rows(self.strategy, self.game.local(node))[combo(int(hole[0]), int(hole[1]))]

    def rows(self, node: int) -> np.ndarray:
        """The (1326, actions) block of the full tree's ``node``."""
        return self.game.rows(self.strategy, self.game.local(node))


def resolve_river(strategy: "ImperfectStrategy", history: str, board: Sequence[int], us: int, *,
                  iterations: int = 200, budget_ms: float = 0.0, gadget: str = "margin", mix: float = 0.0,
                  buckets: Optional[dict] = None) -> Resolved:
    """Re-solve the river of ``history`` (any history on the river: the subgame starts at its
    first river node) on the complete ``board`` for tree player ``us``: ranges from the
    blueprint, the opponent's values from its best response to our blueprint, CFR+ on the
    ``gadget`` (``margin``, ``cfrd`` or ``none``) for ``iterations`` iterations, or fewer
    when ``budget_ms`` (> 0) runs out. Deterministic for a fixed iteration count. ``mix``
    (``margin`` only): the chance the opponent enters with its blueprint range, as in unsafe
    re-solving, instead of the holding max-margin picks (0: max-margin, 1: unsafe)."""
    if gadget not in GADGETS:
        raise ConfigError(f"gadget must be one of {', '.join(GADGETS)}, not {gadget!r}")
    if not 0.0 <= mix <= 1.0 or (mix > 0.0 and gadget != "margin"):
        raise ConfigError(f"mix is a chance from 0 to 1, above 0 with the margin gadget only; got {mix!r} with {gadget}")
    if iterations < 1:
        raise ConfigError(f"iterations must be >= 1, got {iterations}")
    if len(board) != 5:
        raise GameError(f"re-solving the river needs 5 board cards, got {len(board)}")
    start = time.perf_counter()
    prefix = river_prefix(history)
    game = RiverSubgame.at(strategy.tree, prefix)
    cache = {} if buckets is None else buckets
    cards = tuple(int(c) for c in board)
    ranges = blueprint_ranges(strategy, prefix, cards, cache)
    reach = np.zeros((2, N_COMBOS))
    for p in (0, 1):
        total = ranges[p].sum()
        reach[p] = ranges[p] / total if total > 0 else np.where(clash_mask(cards), 0.0, 1.0) / 1081.0
    river = cache.get(cards)
    if river is None:
        river = cache[cards] = strategy.abstraction.street_buckets(cards)
    bp = blueprint_table(strategy, game, river)
    b = bytes(cards)
    opp = 1 - int(us)
    opp_values = subgame_best_response(game, b, opp, bp, reach[us])
    avg, regret = np.zeros(game.size), np.zeros(game.size)
    done, bound = native().resolve(game.arrays, b, int(us), reach[us],
                                   reach[opp] if gadget == "none" or mix > 0.0 else None,
                                   None if gadget == "none" else opp_values, GADGETS[gadget], int(iterations),
                                   float(budget_ms) / 1000.0, avg, regret, float(mix))
    table = normalise_table(game, avg, regret, bp)
    return Resolved(game=game, board=b, us=int(us), strategy=table, blueprint=bp, reach=reach, opp_values=opp_values,
                    gadget=gadget, iterations=int(done), bound=float(bound), seconds=time.perf_counter() - start,
                    mix=float(mix))
