"""Monte Carlo CFR on real cards with an imperfect-recall abstraction (issue 18's teacher).

External-sampling MCCFR (Lanctot et al. 2009) in C (``evaluator_ext/src/mccfr_kernels.c``):
each iteration deals real cards, looks both players' buckets up in a
:class:`~cbr.abstraction.distribution.DistributionAbstraction` (an information set is the
betting node and the *current* street's bucket), and walks the heads-up fixed-limit tree
once per player. Two threads share the tables without locks, as parallel MCCFR commonly
does (one thread is deterministic for the seed). Linear CFR's discount (regrets and
averages scaled by t/(t+1) after the t-th block of ``discount_every`` iterations, for the
first ``discount_blocks`` blocks) speeds the start, as in Brown and Sandholm 2019.

Regrets and averages are float64 (float32 rounds each addition to its sum's spacing: at a
row's millionth visit a probability is added with an error of up to 6% of itself, and from
about 16.7 million visits on, increments stop counting). A row whose regrets
were never updated adds nothing to the average (its uniform default is not learnt), so it
ends empty and :func:`normalise` gives it a fallback. Runs are checkpointed
(:meth:`MCCFRTrainer.save_checkpoint`, atomic; float32 checkpoints of older runs load too)
and resumable; the average strategy is written as one byte per action
(:meth:`MCCFRTrainer.save_strategy`).

>>> t = MCCFRTrainer(tiny_abstraction(), seed=1, threads=1)   # doctest: +SKIP
>>> t.run(1000)                                                 # doctest: +SKIP
1000
"""
from __future__ import annotations

import hashlib
import json
import os
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from cbr.abstraction.distribution import DistributionAbstraction, native_module
from cbr.cfr.tree import KIND_DECISION, BettingTree, build_tree
from cbr.errors import ConfigError, counted
from cbr.store.durable import atomic_savez

__all__ = ["MCCFRTrainer", "ImperfectStrategy", "STRATEGY_FILE", "TRAINED_ROWS", "layout", "abstraction_fingerprint",
           "load_imperfect_strategy", "normalise"]

STRATEGY_FILE = "strategy.npz"
FORMAT = 1
#: The sampling schemes: a deal an iteration (external sampling), or the board only, every
#: holding at once (public-chance sampling).
SAMPLINGS = ("external", "public")
#: Iterations per block of Linear CFR's discount, by sampling scheme (a public-chance
#: iteration costs as much as tens of thousands of external-sampling ones).
DISCOUNT_EVERY = {"external": 1_000_000, "public": 100}
#: Iterations a call into C runs at most, by sampling scheme (seconds, so that Ctrl-C stops soon).
CHUNK = {"external": 200_000, "public": 10}
#: ``info["average"]`` of runs whose averages skip untrained rows. Older runs (no such key)
#: averaged the uniform default of rows the samples never trained: a row of theirs that is
#: exactly uniform once quantised is read as unsampled (see :func:`normalise`).
TRAINED_ROWS = "trained-rows"


def layout(tree: BettingTree, n_buckets: tuple[int, ...]) -> tuple[np.ndarray, int]:
    """Offsets of each decision node's (buckets of its street x actions) table, and the size.

    >>> off, size = layout(build_tree("holdem.limit.2p"), (1, 1, 1, 1))
    >>> size == int(build_tree("holdem.limit.2p").n_children[build_tree("holdem.limit.2p").kind == 0].sum())
    True
    """
    rows = np.array([n_buckets[s] for s in tree.street], dtype=np.int64)
    sizes = np.where(tree.kind == KIND_DECISION, rows * tree.n_children, 0).astype(np.int64)
    offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    return offset, int(sizes.sum())


def abstraction_fingerprint(a: DistributionAbstraction) -> str:
    """A short hash of an abstraction's buckets (stored in checkpoints and strategies)."""
    h = hashlib.sha256()
    for x in (np.array(a.n_buckets), a.river_edges, a.flop_table, a.turn_table):
        h.update(np.ascontiguousarray(x).tobytes())
    if a.ochs is not None:  # an OCHS river (percentile abstractions hash as they always did)
        for x in (a.ochs.clusters, a.ochs.centroids):
            h.update(np.ascontiguousarray(x).tobytes())
    return h.hexdigest()[:16]


def _tree_tuple(tree: BettingTree, offset: np.ndarray) -> tuple:
    return (tree.kind, tree.player, tree.street, tree.child_start, tree.n_children, tree.child_index, tree.stake,
            offset)


def normalise(avg: np.ndarray, tree: BettingTree, n_buckets: tuple[int, ...], offset: np.ndarray,
              regret: Optional[np.ndarray] = None, *, uniform_is_unsampled: bool = False) -> np.ndarray:
    """Average-strategy sums to probabilities, one row per (decision node, bucket).

    A row the samples never trained has no average. It gets, in this order: the current
    strategy (regret matching) when ``regret`` has a positive entry there; on the river
    (buckets ordered by hand strength) the nearest bucket's row that has an average; else
    check/call. (Uniform would fold a third of the hands it knows nothing about, which an
    aggressive opponent and a best response exploit.) With ``uniform_is_unsampled`` (the
    quantised strategies of runs that averaged untrained rows' uniform default), a row whose
    entries are all equal counts as one with no average.

    >>> t = build_tree("holdem.limit.2p")
    >>> off, size = layout(t, (1, 1, 1, 1))
    >>> q = np.full(size, 85.0)                 # every row uniform, as an untrained row was
    >>> node = t.node_of("rrrc/rrrrc/rrrrc/rrr")   # the river, facing the third raise: f c r
    >>> normalise(q, t, (1, 1, 1, 1), off)[off[node]: off[node] + 3].round(3).tolist()
    [0.333, 0.333, 0.333]
    >>> normalise(q, t, (1, 1, 1, 1), off, uniform_is_unsampled=True)[off[node]: off[node] + 3].tolist()
    [0.0, 1.0, 0.0]
    """
    out = np.asarray(avg, dtype=np.float64).copy()
    for node in tree.decision_nodes():
        k = int(tree.n_children[node])
        street = int(tree.street[node])
        rows = n_buckets[street]
        lo, hi = int(offset[node]), int(offset[node]) + rows * k
        t = out[lo:hi].reshape(rows, k)
        if uniform_is_unsampled:
            t[np.all(t == t[:, :1], axis=1)] = 0.0
        s = t.sum(axis=1, keepdims=True)
        empty = s[:, 0] <= 0
        t[:] = np.where(s > 0, t / np.where(s > 0, s, 1), 0.0)
        if not empty.any():
            continue
        if regret is not None:
            r = np.maximum(np.asarray(regret[lo:hi], dtype=np.float64).reshape(rows, k), 0.0)
            rs = r.sum(axis=1)
            use = empty & (rs > 0)
            t[use] = r[use] / rs[use, None]
            empty &= ~use
        known = np.flatnonzero(~empty)
        if street == 3 and known.size and empty.any():
            gone = np.flatnonzero(empty)
            pos = np.clip(np.searchsorted(known, gone), 1, max(1, known.size - 1))
            left, right = known[np.maximum(pos - 1, 0)], known[np.minimum(pos, known.size - 1)]
            t[gone] = t[np.where(np.abs(gone - left) <= np.abs(right - gone), left, right)]
            empty[gone] = False
        if empty.any():
            call = [j for j, c in enumerate(tree.children(node)) if tree.edge[c] == "c"][0]
            t[empty] = 0.0
            t[empty, call] = 1.0
    return out


class MCCFRTrainer:
    """External-sampling MCCFR over ``tree`` with ``abstraction`` (see the module docstring)."""

    def __init__(self, abstraction: DistributionAbstraction, *, tree: Optional[BettingTree] = None, seed: int = 0,
                 threads: int = 2, discount_every: Optional[int] = None, discount_blocks: int = 50,
                 sampling: str = "external") -> None:
        if sampling not in SAMPLINGS:
            raise ConfigError(f"sampling must be one of {', '.join(SAMPLINGS)}, not {sampling!r}")
        self.sampling = sampling
        if discount_every is None:
            discount_every = DISCOUNT_EVERY[sampling]
        self.abstraction = abstraction
        self.tree = tree or build_tree("holdem.limit.2p")
        if self.tree.game.betting != "limit":
            raise ConfigError("MCCFR here plays heads-up fixed limit")
        self.offset, self.size = layout(self.tree, abstraction.n_buckets)
        self.regret = np.zeros(self.size, dtype=np.float64)
        self.avg = np.zeros(self.size, dtype=np.float64)
        self.legacy_average = False  # resumed from a run that averaged untrained rows (see TRAINED_ROWS)
        self.iterations = 0
        self.seconds = 0.0
        self.seed = int(seed)
        self.threads = int(threads)
        self.discount_every = int(discount_every)
        self.discount_blocks = int(discount_blocks)
        #: A caller's own counters, kept in checkpoints and strategies (a long run's CPU seconds:
        #: :mod:`cbr.cfr.longrun`); JSON values only.
        self.extra: dict = {}
        self._tables = abstraction.raw_tables()
        self._tree = _tree_tuple(self.tree, self.offset)

    def run(self, iterations: int, *, chunk: Optional[int] = None,
            progress: Optional[Callable[[int, int], None]] = None) -> int:
        """Run ``iterations`` more iterations in chunks (Ctrl-C stops between chunks with
        every finished chunk kept; by default a chunk is a few seconds: :data:`CHUNK`);
        returns the iterations done."""
        chunk = chunk or CHUNK[self.sampling]
        done = 0
        while done < iterations:
            # a chunk never crosses a discount boundary, so the schedule is the same however runs are split
            n = min(chunk, iterations - done)
            block_end = (self.iterations // self.discount_every + 1) * self.discount_every
            if self.iterations < self.discount_every * self.discount_blocks:
                n = min(n, block_end - self.iterations)
            t = time.perf_counter()
            self._walk(n)
            self.seconds += time.perf_counter() - t
            self.iterations += n
            done += n
            if self.iterations % self.discount_every == 0:
                block = self.iterations // self.discount_every
                if block <= self.discount_blocks:
                    f = block / (block + 1)
                    for table in self._tables_discounted():
                        table *= f
            if progress is not None:
                progress(done, iterations)
        return done

    def _walk(self, n: int) -> None:
        """Iterations ``self.iterations`` .. ``+ n`` in C (a subclass walks another game)."""
        run = native_module().run_pcs if self.sampling == "public" else native_module().run
        run(self._tree, self._tables, self.regret, self.avg, self.iterations, n, self.seed & 0xFFFFFFFFFFFFFFFF,
            self.threads)

    def _tables_discounted(self) -> tuple[np.ndarray, ...]:
        """The tables Linear CFR's discount scales."""
        return self.regret, self.avg

    def strategy(self) -> np.ndarray:
        """The average strategy as probabilities (float64, one per table entry; rows never
        reached: see :func:`normalise`)."""
        return normalise(self.avg, self.tree, self.abstraction.n_buckets, self.offset, self.regret,
                         uniform_is_unsampled=self.legacy_average)

    def _info(self) -> dict:
        info = {"format": FORMAT, "tree": self.tree.fingerprint, "game": self.tree.name,
                "abstraction": abstraction_fingerprint(self.abstraction), "n_buckets": list(self.abstraction.n_buckets),
                "iterations": self.iterations, "seconds": round(self.seconds, 1), "seed": self.seed,
                "threads": self.threads, "discount_every": self.discount_every,
                "discount_blocks": self.discount_blocks, "sampling": self.sampling}
        if not self.legacy_average:
            info["average"] = TRAINED_ROWS
        if self.extra:
            info["extra"] = self.extra
        return info

    def save_checkpoint(self, path: str | os.PathLike) -> Path:
        """Regrets, averages and the run's counters (atomic: a crash keeps the old file)."""
        return atomic_savez(path, regret=self.regret, avg=self.avg, info=np.array(json.dumps(self._info())))

    def load_checkpoint(self, path: str | os.PathLike) -> None:
        """Resume from a checkpoint of the same tree and abstraction (float32 tables of
        older runs are widened to float64)."""
        try:
            with np.load(path, allow_pickle=False) as z:
                info = json.loads(str(z["info"]))
                regret, avg = np.array(z["regret"]), np.array(z["avg"])
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise ConfigError(f"{path}: not a readable MCCFR checkpoint ({exc})") from None
        mine = self._info()
        info.setdefault("sampling", "external")  # checkpoints from before public-chance sampling
        for key in ("format", "tree", "abstraction", "sampling", "discount_every", "discount_blocks"):
            if info.get(key) != mine[key]:
                raise ConfigError(f"{path}: checkpoint {key} {info.get(key)!r} differs from this run's {mine[key]!r}")
        if regret.shape != (self.size,) or avg.shape != (self.size,):
            raise ConfigError(f"{path}: checkpoint tables have the wrong size")
        self.regret, self.avg = regret.astype(np.float64), avg.astype(np.float64)
        self.legacy_average = info.get("average") != TRAINED_ROWS
        self.iterations, self.seconds = int(info["iterations"]), float(info["seconds"])
        self.extra = dict(info.get("extra", {}))

    def save_strategy(self, path: str | os.PathLike) -> Path:
        """The average strategy, one byte per action (compressed, atomic)."""
        q = np.clip(np.rint(self.strategy() * 255.0), 0, 255).astype(np.uint8)
        return atomic_savez(path, compress=True, probs=q, info=np.array(json.dumps(self._info())))

    def public_board(self, board: tuple[int, ...], opponent_reach: np.ndarray) -> tuple[np.ndarray, ...]:
        """What a public-chance-sampling iteration sees on a complete ``board`` (a test hook),
        by combo: the four street buckets (4 x 1326, -1 where a combo shares a card with the
        board), and against ``opponent_reach`` (1326) the opponent's compatible reach and the
        part of it the combo beats at a showdown less the part that beats it (0 where clashing)."""
        buckets = np.empty(4 * 1326, dtype=np.int32)
        compat, net = np.empty(1326), np.empty(1326)
        native_module().pcs_board(self._tree, self._tables, bytes(board),
                                  np.ascontiguousarray(opponent_reach, dtype=np.float64), buckets, compat, net)
        return buckets.reshape(4, 1326), compat, net

    def deal_buckets(self, hole: tuple[int, int], board: tuple[int, ...]) -> tuple[int, int, int, int]:
        """The four buckets the solver uses for ``hole`` on a complete ``board`` (a test hook:
        they must equal :meth:`DistributionAbstraction.buckets`)."""
        return native_module().deal_buckets(self._tree, self._tables, bytes(hole), bytes(board))


@dataclass
class ImperfectStrategy:
    """A trained imperfect-recall strategy: probabilities per (decision node, bucket, action)."""

    tree: BettingTree
    abstraction: DistributionAbstraction
    probs: np.ndarray
    offset: np.ndarray
    info: dict
    path: Path

    @property
    def n_buckets(self) -> tuple[int, ...]:
        return self.abstraction.n_buckets

    def row(self, node: int, bucket: int) -> np.ndarray:
        k = int(self.tree.n_children[node])
        start = int(self.offset[node]) + int(bucket) * k
        return self.probs[start: start + k]


def load_imperfect_strategy(folder: str | os.PathLike) -> ImperfectStrategy:
    """Load ``strategy.npz`` and ``abstraction.npz`` from ``folder`` (checked together). A
    strategy whose info names an ``abstraction_folder`` (a counter-strategy,
    :mod:`cbr.cfr.counter`) uses that sibling folder's abstraction when it has none of its own."""
    folder = Path(folder)
    f = folder / STRATEGY_FILE
    if not f.exists():
        raise ConfigError(f"{folder}: no {STRATEGY_FILE} here (train one with `python -m casebases.build_cfr_emd`)")
    try:
        with np.load(f, allow_pickle=False) as z:
            info = json.loads(str(z["info"]))
            q = np.array(z["probs"])
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise ConfigError(f"{f}: not a readable strategy ({exc})") from None
    shared = info.get("abstraction_folder")
    a = DistributionAbstraction.load(folder.parent / shared if shared and not (folder / "abstraction.npz").exists()
                                     else folder)
    tree = build_tree(info.get("game", "holdem.limit.2p"))
    if info.get("tree") != tree.fingerprint or info.get("abstraction") != abstraction_fingerprint(a):
        raise ConfigError(f"{f}: the strategy was trained on another tree or abstraction")
    offset, size = layout(tree, a.n_buckets)
    if q.shape != (size,):
        raise ConfigError(f"{f}: {counted(q.shape[0], 'entry', 'entries')}, the tree and abstraction need {size}")
    probs = normalise(q.astype(np.float64), tree, a.n_buckets, offset,
                      uniform_is_unsampled=info.get("average") != TRAINED_ROWS)
    return ImperfectStrategy(tree, a, probs, offset, info, folder)
