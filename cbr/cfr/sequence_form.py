"""Exact equilibria of a small game by linear programming, in the sequence form.

The sequence form (Koller, Megiddo & von Stengel 1994; von Stengel 1996) writes a player's
strategy as the probability of each of its *sequences* (an information set and an action
there, reached by its own earlier actions), so that the expected payoff is bilinear,
``x^T A y``, and the strategies are a polytope ``E x = e, x >= 0``. A maximin strategy is then one
linear program, and so is the best of the equilibrium strategies against a given opponent:
with the game value ``v`` fixed, maximise (or minimise) what ``x`` wins from that opponent over
every ``x`` that still guarantees ``v``. That answers a question no solver's single output can:
how much *any* equilibrium of the game takes from a weak player such as always-raise.

The games are :class:`cbr.cfr.small.SmallGame` (Kuhn poker, Leduc hold'em: perfect recall, so
the sequence form holds); a strategy in and out is the game's table layout, one probability per
(decision node, bucket, action), as :class:`cbr.cfr.small.SmallMCCFR` writes it.

>>> from cbr.cfr.small import kuhn
>>> sf = SequenceForm.of(kuhn())
>>> round(sf.game_value(), 6)          # Kuhn poker: -1/18 for the first player
-0.055556
>>> raiser = always_raise(kuhn())
>>> lo, _ = sf.best_against(raiser, 0, slack=0, sense="min")   # the least an equilibrium takes
>>> hi, _ = sf.best_against(raiser, 0, slack=0)                # the most
>>> top, _ = sf.best_against(raiser, 0)                        # a best response
>>> round(lo, 4), round(hi, 4), round(top, 4)   # first seat, against a player who always bets
(0.1111, 0.1111, 0.3333)
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from cbr.cfr.tree import KIND_CHANCE, KIND_DECISION, KIND_FOLD
from cbr.errors import ConfigError, counted

__all__ = ["SequenceForm", "always_raise", "always_call"]

#: How far below the game value an "equilibrium" may guarantee (the LP solver's tolerance).
VALUE_SLACK = 1e-9


def _fixed(game, prefer: str) -> np.ndarray:
    """A table strategy that takes the first edge of ``prefer`` each decision offers."""
    probs = np.zeros(game.size, dtype=np.float64)
    for node in np.flatnonzero(game.kind == KIND_DECISION):
        acts = game.actions(int(node))
        a = next(acts.index(c) for c in prefer if c in acts)
        k, rows, off = len(acts), game.n_buckets[int(game.street[node])], int(game.offset[node])
        probs[off + np.arange(rows) * k + a] = 1.0
    return probs


def always_raise(game) -> np.ndarray:
    """Always-raise's table strategy: raise where it may, else call (never fold)."""
    return _fixed(game, "rc")


def always_call(game) -> np.ndarray:
    """Always-call's table strategy: check or call, never fold or raise."""
    return _fixed(game, "c")


@dataclass
class _Player:
    n_seq: int                # sequences, the empty one (index 0) included
    parent: list[int]         # an information set's parent sequence
    entries: list[np.ndarray]  # an information set's table entries, one per action
    seqs: list[np.ndarray]     # ... and its sequences

    @cached_property
    def constraints(self):
        """``E`` and ``e`` of the strategy polytope ``E x = e`` (a sparse matrix; built once the
        player's sequences are all known)."""
        from scipy.sparse import coo_matrix

        rows, cols, vals = [0], [0], [1.0]
        for i, (par, seqs) in enumerate(zip(self.parent, self.seqs), start=1):
            rows += [i] * (len(seqs) + 1)
            cols += [par] + [int(s) for s in seqs]
            vals += [-1.0] + [1.0] * len(seqs)
        e = np.zeros(len(self.parent) + 1)
        e[0] = 1.0
        return coo_matrix((vals, (rows, cols)), shape=(len(self.parent) + 1, self.n_seq)).tocsr(), e


class SequenceForm:
    """A small game's sequence form: both players' strategy polytopes and the payoff matrix
    ``A`` (player 0's expected payoff, over the game's equally likely deals)."""

    def __init__(self, game, players: tuple[_Player, _Player], payoff) -> None:
        self.game = game
        self.players = players
        self.payoff = payoff  # scipy.sparse csr, n_seq[0] x n_seq[1]
        self._maximin: dict[int, tuple[float, np.ndarray]] = {}

    @classmethod
    def of(cls, game) -> "SequenceForm":
        """Build it by walking the tree over every deal at once."""
        from scipy.sparse import coo_matrix

        deals = np.asarray(game.deals)
        n = len(deals)
        info: list[dict[tuple[int, int], int]] = [{}, {}]
        players = (_Player(1, [], [], []), _Player(1, [], [], []))
        terms: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

        def walk(node: int, last: list[np.ndarray]) -> None:
            kind = int(game.kind[node])
            stake = float(game.stake[node])
            if kind == KIND_CHANCE:
                walk(game.children(node)[0], last)
                return
            if kind != KIND_DECISION:
                if kind == KIND_FOLD:
                    u = np.full(n, -stake if int(game.player[node]) == 0 else stake)
                else:
                    u = np.where(deals[:, 8] == 0, stake, np.where(deals[:, 8] == 1, -stake, 0.0))
                terms.append((last[0], last[1], u / n))
                return
            p, s = int(game.player[node]), int(game.street[node])
            kids = game.children(node)
            k, off = len(kids), int(game.offset[node])
            pl = players[p]
            bucket = deals[:, 4 * p + s]
            seq_here = np.zeros(n, dtype=np.int64)
            for b in np.unique(bucket):
                on = bucket == b
                parents = np.unique(last[p][on])
                if len(parents) != 1:
                    raise ConfigError(f"{game.name} is not of perfect recall at node {node}, bucket {b}")
                key = (node, int(b))
                if key not in info[p]:
                    info[p][key] = len(pl.parent)
                    pl.parent.append(int(parents[0]))
                    pl.entries.append(off + int(b) * k + np.arange(k))
                    pl.seqs.append(pl.n_seq + np.arange(k))
                    pl.n_seq += k
                seq_here[on] = pl.seqs[info[p][key]][0]
            for a, child in enumerate(kids):
                nxt = list(last)
                nxt[p] = seq_here + a
                walk(child, nxt)

        walk(0, [np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)])
        r = np.concatenate([t[0] for t in terms])
        c = np.concatenate([t[1] for t in terms])
        v = np.concatenate([t[2] for t in terms])
        payoff = coo_matrix((v, (r, c)), shape=(players[0].n_seq, players[1].n_seq)).tocsr()  # sums duplicates
        return cls(game, players, payoff)

    # -- strategies ------------------------------------------------------------------------
    def _check(self, probs: np.ndarray, player: int) -> None:
        """``player`` is 0 or 1 and ``probs`` a table strategy of this game for the other:
        the right size, each of that player's rows a probability distribution."""
        if player not in (0, 1) or isinstance(player, bool):
            raise ConfigError(f"player must be 0 or 1, not {player!r}")
        probs = np.asarray(probs, dtype=np.float64)
        if probs.shape != (self.game.size,):
            raise ConfigError(f"a table strategy of {self.game.name} has {counted(self.game.size, 'entry', 'entries')}, not {probs.shape}")
        for ent in self.players[1 - player].entries:
            row = probs[ent]
            if not (np.all(row >= 0) and abs(row.sum() - 1.0) < 1e-6):
                raise ConfigError(f"player {1 - player}'s row at entries {ent[0]}-{ent[-1]} is not a probability "
                                  f"distribution: {row.tolist()}")

    def realization(self, probs: np.ndarray, player: int) -> np.ndarray:
        """A table strategy's sequence-form vector for ``player`` (its rows of ``probs``)."""
        pl = self.players[player]
        x = np.zeros(pl.n_seq)
        x[0] = 1.0
        for par, ent, seqs in zip(pl.parent, pl.entries, pl.seqs):  # parents come first
            x[seqs] = x[par] * np.asarray(probs)[ent]
        return x

    def behaviour(self, x: np.ndarray, player: int, out: np.ndarray | None = None) -> np.ndarray:
        """A sequence-form vector as table probabilities (``player``'s rows; a row its
        strategy never reaches is uniform)."""
        probs = np.zeros(self.game.size) if out is None else out
        pl = self.players[player]
        for par, ent, seqs in zip(pl.parent, pl.entries, pl.seqs):
            row = np.clip(x[seqs], 0.0, None)
            total = row.sum()
            probs[ent] = row / total if x[par] > 1e-12 and total > 0 else 1.0 / len(seqs)
        return probs

    def take(self, x: np.ndarray, player: int, probs: np.ndarray) -> float:
        """What ``player``'s sequence-form strategy ``x`` wins, a hand, against the other
        player's table strategy ``probs``."""
        return float(x @ (self._matrix(player) @ self.realization(probs, 1 - player)))

    def value(self, x0: np.ndarray, x1: np.ndarray) -> float:
        """Player 0's expected payoff when the players play these sequence-form vectors."""
        return float(x0 @ (self.payoff @ x1))

    def _matrix(self, player: int):
        """The payoff to ``player``, rows its sequences."""
        return self.payoff if player == 0 else -self.payoff.T.tocsr()

    def _maximin_rows(self, player: int):
        """The constraints of ``max_x min_y x^T M y`` over (x, z): returns the objective's
        vector over z, the inequality block and the equality block, as sparse matrices."""
        from scipy.sparse import csr_matrix, hstack

        me, other = self.players[player], self.players[1 - player]
        e_me, f_me = me.constraints
        e_ot, f_ot = other.constraints
        m = self._matrix(player)
        a_ub = hstack([-m.T, e_ot.T]).tocsr()                 # E_q^T z - M^T x <= 0
        a_eq = hstack([e_me, csr_matrix((e_me.shape[0], e_ot.shape[0]))]).tocsr()
        return f_ot, a_ub, a_eq, f_me

    def _solve(self, c, a_ub, b_ub, a_eq, b_eq, n_x, n_z):
        from scipy.optimize import linprog

        bounds = [(0, None)] * n_x + [(None, None)] * n_z
        res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
        if res.status != 0:
            raise ConfigError(f"the sequence-form LP of {self.game.name} failed: {res.message}")
        return res

    def maximin(self, player: int) -> tuple[float, np.ndarray]:
        """``player``'s equilibrium value and an equilibrium strategy (sequence form; solved
        once a player)."""
        if player not in self._maximin:
            self._maximin[player] = self._solve_maximin(player)
        return self._maximin[player]

    def _solve_maximin(self, player: int) -> tuple[float, np.ndarray]:
        f_ot, a_ub, a_eq, f_me = self._maximin_rows(player)
        n_x, n_z = self.players[player].n_seq, len(f_ot)
        c = np.concatenate([np.zeros(n_x), -f_ot])
        res = self._solve(c, a_ub, np.zeros(a_ub.shape[0]), a_eq, f_me, n_x, n_z)
        return float(-res.fun), res.x[:n_x]

    def game_value(self) -> float:
        """Player 0's value of the game."""
        return self.maximin(0)[0]

    def guarantee(self, x: np.ndarray, player: int) -> float:
        """What ``player``'s sequence-form strategy wins at least, against every strategy of
        the other (its best response's value, negated). The game value minus it is the
        strategy's exploitability in that seat."""
        e_ot, f_ot = self.players[1 - player].constraints
        gain = np.asarray(self._matrix(player).T @ x).ravel()   # what each opponent sequence pays
        res = self._solve(gain, None, None, e_ot, f_ot, e_ot.shape[1], 0)
        return float(res.fun)

    def best_against(self, probs: np.ndarray, player: int, *, slack: float | None = None,
                     sense: str = "max") -> tuple[float, np.ndarray]:
        """The most (``sense="max"``) or least (``sense="min"``) ``player`` can win against the
        other player's table strategy ``probs``, over its strategies that guarantee at least its
        game value minus ``slack`` chips a hand (``slack=0``: its equilibrium strategies; ``None``
        or infinity: every strategy, so the maximum is the best response's value). Returns the value and the strategy (sequence
        form). A positive slack is what exploiting ``probs`` may cost in exploitability (a
        restricted Nash response's frontier, solved exactly)."""
        from scipy.sparse import csr_matrix, vstack

        if sense not in ("max", "min"):
            raise ConfigError(f"sense must be max or min, not {sense!r}")
        if slack is not None and (isinstance(slack, bool) or not isinstance(slack, (int, float)) or not slack >= 0):
            raise ConfigError(f"slack must be None or a number at least 0 (chips), not {slack!r}")
        if slack is not None and slack == float("inf"):
            slack = None   # no floor: every strategy
        self._check(probs, player)
        y = self.realization(probs, 1 - player)
        gain = np.asarray(self._matrix(player) @ y).ravel()
        n_x = self.players[player].n_seq
        sign = -1.0 if sense == "max" else 1.0
        if slack is None:
            e_me, f_me = self.players[player].constraints
            res = self._solve(sign * gain, None, None, e_me, f_me, n_x, 0)
            return float(gain @ res.x), res.x
        v, _ = self.maximin(player)
        f_ot, a_ub, a_eq, f_me = self._maximin_rows(player)
        n_z = len(f_ot)
        floor = csr_matrix(np.concatenate([np.zeros(n_x), -f_ot])[None, :])   # -f^T z <= -(v - slack)
        a_ub = vstack([a_ub, floor]).tocsr()
        b_ub = np.concatenate([np.zeros(a_ub.shape[0] - 1), [-(v - float(slack) - VALUE_SLACK)]])
        c = np.concatenate([sign * gain, np.zeros(n_z)])
        res = self._solve(c, a_ub, b_ub, a_eq, f_me, n_x, n_z)
        x = res.x[:n_x]
        return float(gain @ x), x
