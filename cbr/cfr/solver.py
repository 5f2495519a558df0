"""CFR+ over the abstract game: the solver, its checkpoints, exact best response.

The hot loop is the C extension ``evaluator_ext._cfr`` (vector-form CFR+: chance
enumerated, alternating updates, regrets floored at 0, the average strategy weighted by
the iteration number; see ``evaluator_ext/src/cfr_kernels.c``). Without the extension the
pure-numpy reference (:mod:`cbr.cfr.reference`, same numbers, much slower) runs instead,
unless ``CBR_REQUIRE_NATIVE=1``, which makes importing :mod:`evaluator_ext` fail.

An information set is (betting node, own bucket sequence); tables hold one float64 per
(information set, action): float32 would round each addition to its sum's spacing, and the
average's sums grow like t^2 under linear averaging. The float32 checkpoints of older runs
load, widened. Exploitability is exact in the abstract game: the mean of the two players'
best-response values against the average strategy, in milli-big-blinds per game (mbb/g).

>>> import numpy as np
>>> from cbr.cfr.tree import build_tree
>>> from cbr.cfr.testing import random_bucket_game
>>> s = Solver(build_tree("holdem.limit.2p"), random_bucket_game(2, seed=1))
>>> before = s.exploitability()
>>> s.run(20)
20
>>> s.exploitability() < before
True
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from cbr.abstraction.game import BucketGame
from cbr.cfr.tree import KIND_DECISION, BettingTree
from cbr.errors import ConfigError
from cbr.store.durable import atomic_savez

try:  # the compiled extension, private like evaluator_ext._native
    _native: Any = importlib.import_module("evaluator_ext._cfr")
except ImportError:  # pragma: no cover - CBR_REQUIRE_NATIVE=1 fails evaluator_ext's import instead
    _native = None

__all__ = ["Solver", "IMPLEMENTATION", "game_arrays", "bucket_game_fingerprint", "checkpoint_iteration",
           "CHECKPOINT_FORMAT"]

IMPLEMENTATION = "native" if _native is not None else "reference"
CHECKPOINT_FORMAT = 1


def game_arrays(game: BucketGame) -> tuple:
    """The bucket game as the solver reads it: ``(n_buckets, prior, trans0..2, cls0..3, equity)``.

    ``cls[s]`` is the class distribution of a street-``s`` sequence, averaged over the
    sequence's future buckets (a showdown before the river, after an all-in, uses it).
    """
    nb = game.n_buckets
    trans = [np.ascontiguousarray(t, dtype=np.float64) for t in game.transitions]
    cls = [None, None, None, np.ascontiguousarray(game.classes, dtype=np.float64)]
    for s in (2, 1, 0):
        nxt = cls[s + 1].reshape(nb ** (s + 1), nb, -1)
        cls[s] = np.ascontiguousarray(np.einsum("qb,qbc->qc", trans[s], nxt))
    flat = lambda a: np.ascontiguousarray(a, dtype=np.float64).ravel()  # noqa: E731
    return (nb, flat(game.prior), *(flat(t) for t in trans), *(flat(c) for c in cls), flat(game.equity))


def bucket_game_fingerprint(game: BucketGame) -> str:
    """A short hash of a bucket game's numbers (stored in checkpoints and strategies)."""
    h = hashlib.sha256()
    for a in game_arrays(game)[1:]:
        h.update(a.tobytes())
    h.update(str(game.n_buckets).encode())
    return h.hexdigest()[:16]


class Solver:
    """CFR+ on one betting tree and one bucket game; ``regret``/``average`` are float64 tables."""

    def __init__(self, tree: BettingTree, game: BucketGame, *, native: Optional[bool] = None) -> None:
        self.tree = tree
        self.game = game
        self.n_buckets = game.n_buckets
        self.offset, self.size = tree.layout(game.n_buckets)
        self._tree = (tree.kind, tree.player, tree.street, tree.child_start, tree.n_children, tree.child_index,
                      tree.stake, self.offset)
        self._game = game_arrays(game)
        self.regret = np.zeros(self.size, dtype=np.float64)
        self.average = np.zeros(self.size, dtype=np.float64)
        self.iteration = 0
        if native is None:
            native = _native is not None
        if native and _native is None:
            from evaluator_ext import build_hint

            raise ConfigError(f"the native CFR solver (evaluator_ext._cfr) is not built: {build_hint()}")
        if native:
            self._kernels: Any = _native
        else:
            from cbr.cfr import reference

            self._kernels = reference
        self.implementation = "native" if native else "reference"

    # ---- training ----
    def run(self, iterations: int, *, progress: Optional[Callable[[int], None]] = None,
            checkpoint: Optional[str | os.PathLike[str]] = None, checkpoint_every: int = 0,
            meta: Optional[dict] = None, batch: int = 1,
            on_checkpoint: Optional[Callable[[int, Path], None]] = None) -> int:
        """Run ``iterations`` more iterations; returns how many ran.

        ``progress(n)`` is called after each batch of ``batch`` iterations; with
        ``checkpoint`` set, a checkpoint is written every ``checkpoint_every`` iterations
        and at the end, each followed by ``on_checkpoint(iteration, path)``. Ctrl-C stops
        between iterations (KeyboardInterrupt propagates; :attr:`iteration` counts exactly
        the finished ones and the tables match it).
        """
        if iterations < 0:
            raise ConfigError(f"iterations must be >= 0, got {iterations}")
        target = self.iteration + iterations
        done = np.zeros(1, dtype=np.int64)
        since = 0
        while self.iteration < target:
            n = min(max(1, batch), target - self.iteration)
            if checkpoint is not None and checkpoint_every > 0:
                n = min(n, checkpoint_every - since)
            try:
                self._kernels.iterate(self._tree, self._game, self.regret, self.average, self.iteration + 1, n, done)
            finally:
                self.iteration += int(done[0])
                since += int(done[0])
            if progress is not None:
                progress(int(done[0]))
            if checkpoint is not None and checkpoint_every > 0 and since >= checkpoint_every:
                self._checkpoint(checkpoint, meta, on_checkpoint)
                since = 0
        if checkpoint is not None:
            self._checkpoint(checkpoint, meta, on_checkpoint)
        return iterations

    def _checkpoint(self, path: str | os.PathLike[str], meta: Optional[dict],
                    on_checkpoint: Optional[Callable[[int, Path], None]]) -> None:
        written = self.save_checkpoint(path, meta)
        if on_checkpoint is not None:
            on_checkpoint(self.iteration, Path(written))

    # ---- evaluation ----
    def value(self, player: int, best_response: bool = False, average: Optional[np.ndarray] = None) -> float:
        """Chips per game of ``player`` (best response or its average strategy) against the
        opponent's average strategy (``average``: another table of the same layout)."""
        avg = self.average if average is None else np.ascontiguousarray(average, dtype=np.float64)
        return float(self._kernels.value(self._tree, self._game, avg, int(player), bool(best_response)))

    def exploitability(self, average: Optional[np.ndarray] = None) -> float:
        """Exploitability of the average strategy in mbb/g: (BR_0 + BR_1) / 2 over the big blind."""
        chips = (self.value(0, True, average) + self.value(1, True, average)) / 2.0
        return 1000.0 * chips / self.tree.game.big_blind

    def strategy(self) -> np.ndarray:
        """The normalised average strategy, one probability per table entry (rows sum to 1)."""
        out = np.empty(self.size, dtype=np.float32)
        for node in self.tree.decision_nodes():
            rows = self.table(node, self.average)
            sums = rows.sum(axis=1, keepdims=True)
            k = rows.shape[1]
            norm = np.where(sums > 0, rows / np.where(sums > 0, sums, 1), 1.0 / k)
            out[self.offset[node]: self.offset[node] + rows.size] = norm.ravel()
        return out

    def table(self, node: int, array: np.ndarray) -> np.ndarray:
        """The (sequences x actions) view of a decision node's slice of ``array``."""
        if self.tree.kind[node] != KIND_DECISION:
            raise ConfigError(f"node {node} is not a decision node")
        rows = self.n_buckets ** (int(self.tree.street[node]) + 1)
        k = int(self.tree.n_children[node])
        return array[self.offset[node]: self.offset[node] + rows * k].reshape(rows, k)

    # ---- checkpoints ----
    def identity(self) -> dict:
        """What a checkpoint or strategy must match: game, tree and bucket game fingerprints."""
        return {"game": self.tree.name, "tree": self.tree.fingerprint, "n_buckets": self.n_buckets,
                "bucket_game": bucket_game_fingerprint(self.game), "size": self.size}

    def save_checkpoint(self, path: str | os.PathLike[str], meta: Optional[dict] = None) -> Path:
        """Write regrets, averages, the iteration count and the identity atomically."""
        info = {"format": CHECKPOINT_FORMAT, "iteration": self.iteration, **self.identity(), "meta": meta or {}}
        return atomic_savez(path, regret=self.regret, average=self.average,
                            info=np.frombuffer(json.dumps(info, sort_keys=True).encode(), dtype=np.uint8))

    def load_checkpoint(self, path: str | os.PathLike[str]) -> dict:
        """Resume from a checkpoint of this same game, tree and bucket game; returns its info.

        Tables of float32 (the checkpoints of runs before float64) are widened. A missing,
        corrupted or foreign checkpoint raises a one-line :class:`ConfigError`.
        """
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                info = json.loads(bytes(data["info"]).decode())
                regret = np.array(data["regret"], dtype=np.float64)
                average = np.array(data["average"], dtype=np.float64)
        except FileNotFoundError:
            raise ConfigError(f"{path}: no checkpoint to resume from") from None
        except Exception as exc:  # zip, zlib, json and key errors alike: the file is damaged
            raise ConfigError(f"{path}: corrupted checkpoint ({type(exc).__name__}: {_first_line(exc)})") from None
        if not isinstance(info, dict) or info.get("format") != CHECKPOINT_FORMAT:
            raise ConfigError(f"{path}: not a CFR checkpoint of format {CHECKPOINT_FORMAT}")
        mine = self.identity()
        for key, want in mine.items():
            if info.get(key) != want:
                raise ConfigError(f"{path}: checkpoint is for another {key.replace('_', ' ')} "
                                  f"({info.get(key)!r}, this run has {want!r})")
        if regret.shape != (self.size,) or average.shape != (self.size,) \
                or not (np.all(np.isfinite(regret)) and np.all(np.isfinite(average))):
            raise ConfigError(f"{path}: corrupted checkpoint (tables of the wrong size or not finite)")
        it = info.get("iteration")
        if not isinstance(it, int) or it < 0:
            raise ConfigError(f"{path}: corrupted checkpoint (iteration count {it!r})")
        self.regret[:] = regret
        self.average[:] = average
        self.iteration = it
        return info


def checkpoint_iteration(path: str | os.PathLike[str]) -> Optional[int]:
    """The iteration count a checkpoint file holds, or None when there is none readable at ``path``."""
    try:
        with np.load(Path(path), allow_pickle=False) as data:
            info = json.loads(bytes(data["info"]).decode())
    except Exception:  # noqa: BLE001 - missing or damaged: no checkpoint to continue
        return None
    it = info.get("iteration") if isinstance(info, dict) else None
    return it if isinstance(it, int) and it >= 0 else None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


