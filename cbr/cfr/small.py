"""Small poker games the C MCCFR solver is proven on: Kuhn poker and Leduc hold'em.

Each game is a heads-up limit betting tree in the solver's flat layout (the arrays of
:class:`~cbr.cfr.tree.BettingTree`) and a table of equally likely *deals*: both players'
bucket on every street (here the private card, and on Leduc's second street the private
and the public card: perfect recall, since the tree node holds the whole betting) and the
showdown's winner. :class:`SmallMCCFR` runs the same external-sampling walk as the hold'em
teacher (``evaluator_ext._mccfr.run_deals``) on it, so a test can compare its average
strategy with an exact best response (``tests/cfr/test_small_games.py``).

Kuhn poker (Kuhn 1950): cards J Q K, ante 1, one street, bet 1, one bet at most; the game
value for the first player is -1/18. Leduc hold'em (Southey et al. 2005): two each of J Q K,
ante 1, a private card, a betting round (bet 2), a public card, a round (bet 4), at most a
bet and a raise a round; a pair with the public card wins, else the higher card.

>>> k = kuhn()
>>> k.n_nodes, len(k.deals), k.actions(0)
(9, 6, 'cr')
>>> leduc().size     # regret entries: (decision node, bucket, action)
672
>>> t = SmallMCCFR(kuhn(), seed=1)
>>> t.run(2000)
2000
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from cbr.abstraction.distribution import native_module
from cbr.cfr.tree import KIND_CHANCE, KIND_DECISION, KIND_FOLD, KIND_SHOWDOWN
from cbr.errors import ConfigError

#: MCCFR's sampling schemes: a whole deal an iteration, or the public cards only.
SAMPLINGS = ("external", "public")

__all__ = ["PublicChance", "SmallGame", "SmallMCCFR", "kuhn", "leduc"]


@dataclass
class PublicChance:
    """A small game's public chance for public-chance sampling: ``n_public`` equally likely
    outcomes (the public cards) over the holdings both players may hold.

    ``cards`` (holdings x 2, uint8): a holding's cards, both the same for a one-card holding;
    ``buckets`` (outcomes x 4 x holdings, int32): its bucket on each street, -1 on street 0
    where it shares a card with the public cards; ``values`` (outcomes x holdings, int32):
    its showdown strength (higher wins, equal ties)."""

    cards: np.ndarray
    buckets: np.ndarray
    values: np.ndarray


@dataclass
class SmallGame:
    """A heads-up limit game as flat tree arrays plus its deals (see the module docstring)."""

    name: str
    kind: np.ndarray
    player: np.ndarray
    street: np.ndarray
    child_start: np.ndarray
    n_children: np.ndarray
    child_index: np.ndarray
    stake: np.ndarray
    edge: list[str]
    histories: list[str]
    n_buckets: tuple[int, int, int, int]
    deals: np.ndarray  # (n, 9) int32: player 0's 4 buckets, player 1's, winner (-1 a tie)
    public: Optional[PublicChance] = None  # the same game as public outcomes (public-chance sampling)
    offset: np.ndarray = field(init=False)
    size: int = field(init=False)

    def __post_init__(self) -> None:
        rows = np.array([self.n_buckets[s] for s in self.street], dtype=np.int64)
        sizes = np.where(self.kind == KIND_DECISION, rows * self.n_children, 0).astype(np.int64)
        self.offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.size = int(sizes.sum())

    @property
    def n_nodes(self) -> int:
        return int(self.kind.shape[0])

    def children(self, node: int) -> list[int]:
        s = int(self.child_start[node])
        return [int(c) for c in self.child_index[s: s + int(self.n_children[node])]]

    def actions(self, node: int) -> str:
        return "".join(self.edge[c] for c in self.children(node))

    def node_of(self, history: str) -> int:
        return self.histories.index(history)

    def tree_tuple(self) -> tuple:
        """The tree as the C solver reads it (the 8-tuple of ``evaluator_ext._mccfr``)."""
        return (self.kind, self.player, self.street, self.child_start, self.n_children, self.child_index,
                self.stake, self.offset)


def _limit_game(name: str, ante: float, bets: tuple[float, ...], cap: int, n_buckets: tuple[int, int, int, int],
                deals: list[tuple[int, ...]], public: Optional[PublicChance] = None) -> SmallGame:
    """A heads-up limit tree with antes: player 0 acts first on every street, ``cap`` bets
    and raises a street, ``bets[s]`` the bet of street ``s`` (nodes in pre-order)."""
    kind: list[int] = []
    player: list[int] = []
    street: list[int] = []
    stake: list[float] = []
    edge: list[str] = []
    hist: list[str] = []
    kids: list[list[int]] = []

    def new(k: int, p: int, s: int, st: float, e: str, h: str) -> int:
        for lst, v in ((kind, k), (player, p), (street, s), (stake, st), (edge, e), (hist, h)):
            lst.append(v)  # type: ignore[attr-defined]
        kids.append([])
        return len(kind) - 1

    def expand(s: int, p: int, total: list[float], raises: int, acted: int, h: str, e: str) -> int:
        node = new(KIND_DECISION, p, s, 0.0, e, h)
        to_call = total[1 - p] - total[p]
        if to_call > 0:
            kids[node].append(new(KIND_FOLD, p, s, total[p], "f", h + "f"))
        t = list(total)
        t[p] = total[1 - p]
        if acted + 1 >= 2:  # the street closes
            if s + 1 == len(bets):
                kids[node].append(new(KIND_SHOWDOWN, -1, s, t[0], "c", h + "c"))
            else:
                chance = new(KIND_CHANCE, -1, s, 0.0, "c", h + "c")
                kids[node].append(chance)
                kids[chance].append(expand(s + 1, 0, t, 0, 0, h + "c/", ""))
        else:
            kids[node].append(expand(s, 1 - p, t, raises, acted + 1, h + "c", "c"))
        if raises < cap:
            r = list(t)
            r[p] = t[p] + bets[s]
            kids[node].append(expand(s, 1 - p, r, raises + 1, 1, h + "r", "r"))
        return node

    expand(0, 0, [ante, ante], 0, 0, "", "")
    starts, flat = [], []
    for ks in kids:
        starts.append(len(flat))
        flat.extend(ks)
    return SmallGame(name, np.array(kind, dtype=np.int8), np.array(player, dtype=np.int8),
                     np.array(street, dtype=np.int8), np.array(starts, dtype=np.int32),
                     np.array([len(k) for k in kids], dtype=np.int32), np.array(flat, dtype=np.int32),
                     np.array(stake, dtype=np.float64), edge, hist, n_buckets,
                     np.array(deals, dtype=np.int32).reshape(-1, 9), public)


def kuhn() -> SmallGame:
    """Kuhn poker: the bucket is the card (0 = J, 1 = Q, 2 = K); six deals."""
    deals = [(a, 0, 0, 0, b, 0, 0, 0, 0 if a > b else 1) for a, b in itertools.permutations(range(3), 2)]
    buckets = np.zeros((1, 4, 3), dtype=np.int32)
    buckets[0, 0] = np.arange(3)  # no public card: one outcome, the card is the bucket and the strength
    public = PublicChance(np.repeat(np.arange(3, dtype=np.uint8), 2).reshape(3, 2), buckets,
                          np.arange(3, dtype=np.int32).reshape(1, 3))
    return _limit_game("kuhn", 1.0, (1.0,), 1, (3, 1, 1, 1), deals, public)


def leduc() -> SmallGame:
    """Leduc hold'em: street 0's bucket is the private rank, street 1's is
    ``3 * private + public``; 120 deals (two cards of each rank)."""
    deals = []
    for a, b, c in itertools.permutations(range(6), 3):  # cards: rank = card // 2
        ra, rb, rc = a // 2, b // 2, c // 2
        sa, sb = (ra == rc, ra), (rb == rc, rb)  # a pair with the board first, then the rank
        winner = 0 if sa > sb else (1 if sb > sa else -1)
        deals.append((ra, 3 * ra + rc, 0, 0, rb, 3 * rb + rc, 0, 0, winner))
    # public chance: the public card c (6 outcomes); holdings: the six cards, each one card
    buckets = np.zeros((6, 4, 6), dtype=np.int32)
    values = np.zeros((6, 6), dtype=np.int32)
    for c in range(6):
        for h in range(6):
            buckets[c, 0, h] = -1 if h == c else h // 2
            buckets[c, 1, h] = 3 * (h // 2) + c // 2
            values[c, h] = 3 + h // 2 if h // 2 == c // 2 else h // 2  # a pair beats any high card
    public = PublicChance(np.repeat(np.arange(6, dtype=np.uint8), 2).reshape(6, 2), buckets, values)
    return _limit_game("leduc", 1.0, (2.0, 4.0), 2, (3, 9, 1, 1), deals, public)


class SmallMCCFR:
    """MCCFR on a :class:`SmallGame` with the teacher's C walks (float64 tables):
    external sampling (a deal an iteration) or public-chance sampling (``sampling="public"``:
    a public outcome an iteration, every holding at once, the hold'em PCS kernel)."""

    def __init__(self, game: SmallGame, *, seed: int = 0, threads: int = 1, sampling: str = "external") -> None:
        if sampling not in SAMPLINGS:
            raise ConfigError(f"sampling must be one of {', '.join(SAMPLINGS)}, not {sampling!r}")
        if sampling == "public" and game.public is None:
            raise ConfigError(f"{game.name} has no public outcomes for public-chance sampling")
        self.sampling = sampling
        self.game = game
        self.seed = int(seed)
        self.threads = int(threads)
        self.regret = np.zeros(game.size, dtype=np.float64)
        self.avg = np.zeros(game.size, dtype=np.float64)
        self.iterations = 0
        self._tree = game.tree_tuple()

    def run(self, iterations: int) -> int:
        """Run ``iterations`` more iterations; returns how many ran."""
        if self.sampling == "public":
            p = self.game.public
            assert p is not None
            done = native_module().run_pcs_small(self._tree, self.game.n_buckets, p.cards.ravel(), p.buckets.ravel(),
                                                 p.values.ravel(), self.regret, self.avg, self.iterations,
                                                 int(iterations), self.seed & 0xFFFFFFFFFFFFFFFF, self.threads)
            self.iterations += int(done)
            return int(done)
        done = native_module().run_deals(self._tree, self.game.n_buckets, self.game.deals.ravel(), self.regret,
                                         self.avg, self.iterations, int(iterations),
                                         self.seed & 0xFFFFFFFFFFFFFFFF, self.threads)
        self.iterations += int(done)
        return int(done)

    def strategy(self) -> np.ndarray:
        """The average strategy, one probability per table entry (a row with no average:
        uniform; in these games every reachable row is trained within a few iterations)."""
        out = self.avg.copy()
        g = self.game
        for node in np.flatnonzero(g.kind == KIND_DECISION):
            k = int(g.n_children[node])
            rows = g.n_buckets[int(g.street[node])]
            t = out[int(g.offset[node]): int(g.offset[node]) + rows * k].reshape(rows, k)
            s = t.sum(axis=1, keepdims=True)
            t[:] = np.where(s > 0, t / np.where(s > 0, s, 1.0), 1.0 / k)
        return out

