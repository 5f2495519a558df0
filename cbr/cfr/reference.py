"""Pure-numpy reference of the CFR+ solver: the same functions as ``evaluator_ext._cfr``.

Slow and plain, written from the definitions rather than from the C code: the test
oracle for the C kernels (same regrets, averages and best-response values on small
games) and the fallback when the extension is not built. Arguments are the tuples
:class:`cbr.cfr.solver.Solver` builds (tree arrays, bucket-game arrays).

>>> import numpy as np
>>> from cbr.cfr.solver import Solver
>>> from cbr.cfr.tree import build_tree
>>> from cbr.cfr.testing import random_bucket_game
>>> s = Solver(build_tree("holdem.limit.2p"), random_bucket_game(1), native=False)
>>> round(s.exploitability(), 1) > 0
True
"""
from __future__ import annotations

import numpy as np

from cbr.cfr.tree import KIND_CHANCE, KIND_DECISION, KIND_FOLD

__all__ = ["FlatGame", "iterate", "value"]


class FlatGame:
    """The solver's flat tree and bucket-game arrays, with a node's children and table rows."""

    def __init__(self, tree: tuple, game: tuple) -> None:
        (self.kind, self.player, self.street, self.child_start, self.n_children, self.child_index,
         self.stake, self.offset) = tree
        nb = int(game[0])
        self.nb = nb
        self.prior = np.asarray(game[1], dtype=np.float64)
        self.trans = [np.asarray(game[2 + s]).reshape(nb ** (s + 1), nb) for s in range(3)]
        nc = len(game[8]) // nb ** 4
        self.cls = [np.asarray(game[5 + s]).reshape(nb ** (s + 1), nc) for s in range(4)]
        self.equity = np.asarray(game[9]).reshape(nc, nc)

    def kids(self, node: int) -> list[int]:
        s = int(self.child_start[node])
        return [int(c) for c in self.child_index[s: s + int(self.n_children[node])]]

    def rows(self, node: int, table: np.ndarray) -> np.ndarray:
        n = self.nb ** (int(self.street[node]) + 1)
        k = int(self.n_children[node])
        return table[int(self.offset[node]): int(self.offset[node]) + n * k].reshape(n, k)


def _matching(rows: np.ndarray) -> np.ndarray:
    pos = np.maximum(rows.astype(np.float64), 0.0)
    sums = pos.sum(axis=1, keepdims=True)
    uniform = np.full_like(pos, 1.0 / pos.shape[1])
    return np.where(sums > 0, pos / np.where(sums > 0, sums, 1.0), uniform)


def _walk(g: FlatGame, node: int, trav: int, reach_t: np.ndarray, reach_o: np.ndarray, mode: str,
          regret: np.ndarray | None, avg: np.ndarray, t: int) -> np.ndarray:
    kind = int(g.kind[node])
    s = int(g.street[node])
    if kind == KIND_FOLD:
        sign = -1.0 if int(g.player[node]) == trav else 1.0
        return np.full(reach_o.shape, sign * float(g.stake[node]) * reach_o.sum())
    if kind != KIND_DECISION and kind != KIND_CHANCE:  # showdown
        # E[u | mine] = stake * sum_o reach_o[o] * (2 * P(mine beats o) - 1)
        win = g.cls[s] @ g.equity @ g.cls[s].T  # (mine, theirs)
        return float(g.stake[node]) * (2.0 * win @ reach_o - reach_o.sum())
    kids = g.kids(node)
    if kind == KIND_CHANCE:
        tr = g.trans[s]
        v2 = _walk(g, kids[0], trav, (reach_t[:, None] * tr).ravel(), (reach_o[:, None] * tr).ravel(), mode,
                   regret, avg, t)
        return (tr * v2.reshape(tr.shape)).sum(axis=1)
    table = g.rows(node, regret) if mode == "train" else g.rows(node, avg)
    sigma = _matching(table)
    if int(g.player[node]) != trav:
        return sum(_walk(g, c, trav, reach_t, reach_o * sigma[:, a], mode, regret, avg, t)
                   for a, c in enumerate(kids))
    if mode == "train":
        va = np.stack([_walk(g, c, trav, reach_t * sigma[:, a], reach_o, mode, regret, avg, t)
                       for a, c in enumerate(kids)], axis=1)
    else:
        va = np.stack([_walk(g, c, trav, reach_t, reach_o, mode, regret, avg, t) for c in kids], axis=1)
    if mode == "br":
        return va.max(axis=1)
    v = (sigma * va).sum(axis=1)
    if mode == "train":
        r = g.rows(node, regret)
        r[:] = np.maximum(r.astype(np.float64) + va - v[:, None], 0.0)
        a = g.rows(node, avg)
        a[:] = a + (float(t) * reach_t[:, None] * sigma)
    return v


def iterate(tree: tuple, game: tuple, regret: np.ndarray, avg: np.ndarray, t0: int, n: int,
            done: np.ndarray) -> None:
    """CFR+ iterations ``t0 .. t0+n-1`` in place (the reference of ``_cfr.iterate``)."""
    g = FlatGame(tree, game)
    done[0] = 0
    for i in range(n):
        for trav in (0, 1):
            _walk(g, 0, trav, g.prior.copy(), g.prior.copy(), "train", regret, avg, t0 + i)
        done[0] = i + 1


def value(tree: tuple, game: tuple, avg: np.ndarray, player: int, best_response: bool) -> float:
    """``player``'s chips per game, best response or average strategy, against the average."""
    g = FlatGame(tree, game)
    v = _walk(g, 0, int(player), g.prior.copy(), g.prior.copy(), "br" if best_response else "eval", None, avg, 0)
    return float(g.prior @ v)
