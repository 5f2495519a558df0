"""Betting trees of the heads-up games CFR solves, flattened into arrays for the C solver.

Two games (see :func:`build_tree`):

- ``holdem.limit.2p``: the ACPC heads-up fixed-limit rules of
  :func:`cbr.game.preset` (blinds, fixed bets, raise caps 3 4 4 4 with the big blind not
  counted, the small blind opens pre-flop and the big blind after).
- ``nolimit.fcpa``: the KTH study's heads-up no-limit game (seed
  ``kth-abstraction-nolimit-holdem.txt``): blinds 50/100, stacks of 100 big blinds, and
  the *fcpa* action abstraction: fold, check/call, pot-size raise, all-in.

A tree is a list of nodes: *decision* nodes (a player to act, one child per action),
*chance* nodes (a street ends: the players' next buckets come, one child), and
terminals (*fold*, or *showdown* once the river betting closes or both are all-in).
Every node knows the history that reaches it, in the engine's own notation
(:attr:`cbr.game.HandState.history`: ``f c r`` tokens, no-limit raises as ``r<total>``,
``/`` between streets), which is how a real hand is mapped onto the tree.

>>> t = build_tree("holdem.limit.2p")
>>> int(t.player[t.node_of("")]), t.actions(t.node_of(""))   # the small blind (position 1) opens
(1, 'fcr')
>>> t.actions(t.node_of("c")), t.kind_name(t.node_of("cc"))  # the big blind's option, then the flop
('cr', 'chance')
>>> int(t.street[t.node_of("rrrc/")]), t.actions(t.node_of("rrr"))   # capped after three raises
(1, 'fc')
>>> n = build_tree("nolimit.fcpa")
>>> [n.history(c) for c in n.children(n.node_of(""))]
['f', 'c', 'r300', 'r10000']
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from cbr.errors import ConfigError
from cbr.game.gamedef import GameDef, preset

__all__ = ["GAMES", "BettingTree", "build_tree", "game_def", "KIND_DECISION", "KIND_FOLD", "KIND_SHOWDOWN",
           "KIND_CHANCE"]

KIND_DECISION, KIND_FOLD, KIND_SHOWDOWN, KIND_CHANCE = 0, 1, 2, 3
_KIND_NAMES = ("decision", "fold", "showdown", "chance")

#: The games a tree can be built for.
GAMES = ("holdem.limit.2p", "nolimit.fcpa")

# The study's no-limit game: blinds 50/100, 100 big blinds deep, ACPC heads-up layout
# (position 0 the big blind, position 1 the small blind and button).
_FCPA = GameDef("nolimit.fcpa", 2, (100, 50), 100, 100, (99, 99, 99, 99), (1, 0, 0, 0), "nolimit", 10_000)


def game_def(game: str) -> GameDef:
    """The :class:`GameDef` of a tree game name (``holdem.limit.2p`` or ``nolimit.fcpa``).

    >>> game_def("nolimit.fcpa").stack / game_def("nolimit.fcpa").big_blind
    100.0
    """
    if game == "holdem.limit.2p":
        return preset(game)
    if game == "nolimit.fcpa":
        return _FCPA
    raise ConfigError(f"unknown CFR game {game!r}; choose one of {', '.join(GAMES)}")


@dataclass
class _State:
    street: int
    to_act: int
    committed: list[float]  # this street
    total: list[float]  # this hand
    level: float
    last_raise: float
    raises: int
    acted: list[bool]
    history: str


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@dataclass
class BettingTree:
    """A heads-up betting tree as flat arrays (node ``i``'s children are
    ``child_index[child_start[i] : child_start[i] + n_children[i]]``).

    ``stake[i]``: at a fold, the chips the folder loses (its whole contribution); at a
    showdown, each player's (equal) contribution. ``offset[i]``: where a decision node's
    table starts in the solver's flat regret array (``n_buckets**(street+1)`` rows of
    ``n_children`` actions each); see :meth:`layout`.
    """

    game: GameDef
    kind: np.ndarray
    player: np.ndarray
    street: np.ndarray
    child_start: np.ndarray
    n_children: np.ndarray
    child_index: np.ndarray
    stake: np.ndarray
    total: np.ndarray  # (n, 2) each position's chips in the pot at the node
    edge: list[str]  # action char of the edge into each node ('' for the root): f c r (limit) / f c p a
    histories: list[str]
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._index = {h: i for i, h in enumerate(self.histories)}

    @property
    def n_nodes(self) -> int:
        return int(self.kind.shape[0])

    @property
    def name(self) -> str:
        return self.game.name

    def node_of(self, history: str) -> int:
        """The node a history reaches; raises :class:`ConfigError` if it is not in the tree."""
        try:
            return self._index[history]
        except KeyError:
            raise ConfigError(f"history {history!r} is not in the {self.name} betting tree") from None

    def has(self, history: str) -> bool:
        return history in self._index

    def history(self, node: int) -> str:
        return self.histories[node]

    def kind_name(self, node: int) -> str:
        return _KIND_NAMES[int(self.kind[node])]

    def children(self, node: int) -> list[int]:
        s = int(self.child_start[node])
        return [int(c) for c in self.child_index[s : s + int(self.n_children[node])]]

    def actions(self, node: int) -> str:
        """The action letters of a decision node's children, in order."""
        return "".join(self.edge[c] for c in self.children(node))

    def decision_nodes(self) -> Iterator[int]:
        return (int(i) for i in np.flatnonzero(self.kind == KIND_DECISION))

    def layout(self, n_buckets: int) -> tuple[np.ndarray, int]:
        """Offsets of each decision node's (sequences x actions) table, and the total size.

        >>> t = build_tree("holdem.limit.2p")
        >>> off, size = t.layout(1)
        >>> size == int(t.n_children[t.kind == KIND_DECISION].sum())
        True
        """
        if n_buckets < 1:
            raise ConfigError(f"n_buckets must be >= 1, got {n_buckets}")
        sizes = np.where(self.kind == KIND_DECISION,
                         np.power(float(n_buckets), self.street.astype(np.float64) + 1) * self.n_children, 0)
        sizes = sizes.astype(np.int64)
        offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        return offset, int(sizes.sum())

    def info_sets(self, n_buckets: int) -> int:
        """Information sets: one per (decision node, own bucket sequence)."""
        d = self.kind == KIND_DECISION
        return int(np.power(float(n_buckets), self.street[d].astype(np.float64) + 1).sum())

    @property
    def fingerprint(self) -> str:
        """A short hash of the tree's shape and amounts (stored in strategies and checkpoints)."""
        import hashlib

        h = hashlib.sha256()
        for a in (self.kind, self.player, self.street, self.n_children, self.child_index, self.stake):
            h.update(np.ascontiguousarray(a).tobytes())
        h.update(self.game.name.encode())
        return h.hexdigest()[:16]


def build_tree(game: str) -> BettingTree:
    """Build the betting tree of ``game`` (one of :data:`GAMES`)."""
    g = game_def(game)
    nolimit = g.betting == "nolimit"
    stack = float(g.stack) if nolimit and g.stack else float("inf")
    kind: list[int] = []
    player: list[int] = []
    street: list[int] = []
    stake: list[float] = []
    total: list[tuple[float, float]] = []
    edge: list[str] = []
    histories: list[str] = []
    kids: list[list[int]] = []

    def new(k: int, p: int, s: _State, e: str, st: float) -> int:
        kind.append(k)
        player.append(p)
        street.append(s.street)
        stake.append(st)
        total.append((s.total[0], s.total[1]))
        edge.append(e)
        histories.append(s.history)
        kids.append([])
        return len(kind) - 1

    def next_street(s: _State) -> _State:
        return _State(s.street + 1, g.first_to_act[s.street + 1], [0.0, 0.0], list(s.total), 0.0,
                      g.big_blind, 0, [False, False], s.history + "/")

    def expand(s: _State, e: str) -> int:
        p = s.to_act
        node = new(KIND_DECISION, p, s, e, 0.0)
        to_call = s.level - s.committed[p]
        opts: list[tuple[str, float]] = []  # (edge letter, the actor's street commitment after it)
        if to_call > 0:
            opts.append(("f", s.committed[p]))
        opts.append(("c", s.level))
        all_in_cap = s.committed[p] + (stack - s.total[p])  # street commitment when all-in
        opp = 1 - p
        if nolimit:
            opp_all_in = s.total[opp] >= stack
            if not opp_all_in and all_in_cap > s.level:
                pot = s.total[0] + s.total[1] + to_call
                target = s.level + pot
                min_target = s.level + max(s.last_raise, g.big_blind)
                if min_target <= target < all_in_cap:
                    opts.append(("p", target))
                opts.append(("a", all_in_cap))
        elif s.raises < g.raise_cap[s.street]:
            opts.append(("r", s.level + g.bet_size(s.street)))
        for letter, target in opts:
            kids[node].append(_child(s, p, letter, target))
        return node

    def _child(s: _State, p: int, letter: str, target: float) -> int:
        if letter == "f":
            t = _State(s.street, p, list(s.committed), list(s.total), s.level, s.last_raise, s.raises,
                       list(s.acted), s.history + "f")
            return new(KIND_FOLD, p, t, letter, s.total[p])
        add = target - s.committed[p]
        committed = list(s.committed)
        tot = list(s.total)
        committed[p] = target
        tot[p] += add
        if letter == "c":
            acted = list(s.acted)
            acted[p] = True
            t = _State(s.street, 1 - p, committed, tot, s.level, s.last_raise, s.raises, acted, s.history + "c")
            if not all(acted):
                return expand(t, letter)
            # the round closes
            if s.street == 3 or (nolimit and max(tot) >= stack):
                return new(KIND_SHOWDOWN, -1, t, letter, tot[0])
            node = new(KIND_CHANCE, -1, t, letter, 0.0)
            kids[node].append(expand(next_street(t), ""))
            return node
        token = "r" + _fmt(tot[p]) if nolimit else "r"
        acted = [False, False]
        acted[p] = True
        t = _State(s.street, 1 - p, committed, tot, target, max(target - s.level, s.last_raise), s.raises + 1,
                   acted, s.history + token)
        return expand(t, letter)

    start = _State(0, g.first_to_act[0], list(g.blinds), list(g.blinds), max(g.blinds), g.big_blind, 0,
                   [False, False], "")
    expand(start, "")
    n = len(kind)
    child_start = np.zeros(n, dtype=np.int32)
    flat: list[int] = []
    for i, ks in enumerate(kids):
        child_start[i] = len(flat)
        flat.extend(ks)
    return BettingTree(
        game=g,
        kind=np.array(kind, dtype=np.int8),
        player=np.array(player, dtype=np.int8),
        street=np.array(street, dtype=np.int8),
        child_start=child_start,
        n_children=np.array([len(k) for k in kids], dtype=np.int32),
        child_index=np.array(flat, dtype=np.int32),
        stake=np.array(stake, dtype=np.float64),
        total=np.array(total, dtype=np.float64).reshape(n, 2),
        edge=edge,
        histories=histories,
    )
