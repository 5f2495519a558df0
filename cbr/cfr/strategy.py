"""Strategy files beside their abstraction, and training runs with checkpoints.

A trained strategy is an ``.npz`` written next to the abstraction it was trained on
(default ``<abstraction dir>/cfr.<game>.npz``; one written elsewhere records where its
abstraction is). A shipped abstraction (``casebases/cfr/``) is never written into: its
default strategy file is ``./cfr.<game>.npz`` in the current directory
(:func:`default_output`). An existing strategy or checkpoint is replaced only with
``overwrite`` (or continued with ``resume``). The file holds the average strategy quantised to one
byte per (information set, action) (rows renormalised on load) and a JSON header with
the game, the betting tree's fingerprint, the abstraction's name, bucket count and
fingerprint, the iterations and the exploitability of the stored (quantised) strategy.
Loading checks all of it against the abstraction beside the file, so a strategy never
plays with buckets it was not trained on.

>>> from cbr.cfr.tree import build_tree
>>> from cbr.cfr.testing import random_bucket_game
>>> from cbr.cfr.solver import Solver
>>> s = Solver(build_tree("holdem.limit.2p"), random_bucket_game(2, seed=1)); _ = s.run(10)
>>> q = quantise(s.strategy()); q.dtype.name
'uint8'
>>> p = dequantise(q, s.tree, 2)
>>> abs(s.exploitability(p) - s.exploitability()) < 0.05 * s.exploitability()
True
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from cbr.abstraction.game import BucketGame
from cbr.cfr.solver import Solver, bucket_game_fingerprint
from cbr.cfr.tree import GAMES, BettingTree, build_tree
from cbr.errors import ConfigError, OutputPathError, counted
from cbr.store.durable import atomic_savez

__all__ = ["STRATEGY_FORMAT", "Strategy", "load_strategy", "save_strategy", "train", "quantise", "dequantise",
           "default_strategy_path", "default_output", "checkpoint_path", "inside_package",
           "resolve_abstraction_dir", "SHIPPED_STRATEGY"]

STRATEGY_FORMAT = 1
#: The shipped heads-up limit strategy (``cbr match --players cfr,ehs`` uses it).
SHIPPED_STRATEGY = Path(__file__).resolve().parents[2] / "casebases" / "cfr" / "h_hs2_4" / "cfr.holdem.limit.2p.npz"
#: The folders of the installed package (its top-level packages): training never writes there.
PACKAGE_DIRS = tuple(Path(__file__).resolve().parents[2] / name for name in ("casebases", "cbr", "evaluator_ext",
                                                                               "features"))


def inside_package(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is inside the installed package (a shipped abstraction's folder, say).

    >>> inside_package(SHIPPED_STRATEGY), inside_package("/tmp/cfr.holdem.limit.2p.npz")
    (True, False)
    """
    where = Path(path).resolve()
    return any(where == d or d in where.parents for d in PACKAGE_DIRS)


def resolve_abstraction_dir(text: str | os.PathLike[str]) -> Path:
    """An abstraction directory: a path, or the name of a shipped one under ``casebases/cfr/``."""
    path = Path(text)
    if path.is_dir():
        return path
    shipped = SHIPPED_STRATEGY.parents[1] / str(text)
    if str(text) and "/" not in str(text) and shipped.is_dir():
        return shipped
    raise ConfigError(f"{text}: no such abstraction directory (nor a shipped one of that name)")


def default_strategy_path(abstraction_dir: str | os.PathLike[str], game: str) -> Path:
    """Where a strategy for ``game`` lives beside its abstraction."""
    return Path(abstraction_dir) / f"cfr.{game}.npz"


def default_output(abstraction_dir: str | os.PathLike[str], game: str) -> Path:
    """Where training writes by default: beside the abstraction, except for a shipped one
    (inside the installed package, never written): then ``cfr.<game>.npz`` in the current
    directory (the file records where its abstraction is).

    >>> default_output(SHIPPED_STRATEGY.parent, "holdem.limit.2p") == Path.cwd() / "cfr.holdem.limit.2p.npz"
    True
    """
    if inside_package(abstraction_dir):
        return Path.cwd() / f"cfr.{game}.npz"
    return default_strategy_path(abstraction_dir, game)


def checkpoint_path(out: str | os.PathLike[str]) -> Path:
    """The checkpoint of the run writing the strategy ``out``: ``<out>.ckpt.npz``."""
    out = Path(out)
    return out.with_name(out.name + ".ckpt.npz")


def quantise(probs: np.ndarray) -> np.ndarray:
    """Probabilities in [0, 1] to bytes (``round(255 p)``)."""
    return np.clip(np.rint(np.asarray(probs, dtype=np.float64) * 255.0), 0, 255).astype(np.uint8)


def dequantise(q: np.ndarray, tree: BettingTree, n_buckets: int) -> np.ndarray:
    """Bytes back to a float32 strategy table whose rows sum to 1 (an all-zero row: uniform)."""
    out = q.astype(np.float32)
    offset, size = tree.layout(n_buckets)
    if out.shape != (size,):
        raise ConfigError(f"strategy table has {counted(out.shape[0], 'entry', 'entries')}, the tree needs {size} for {counted(n_buckets, 'bucket')}")
    for node in tree.decision_nodes():
        k = int(tree.n_children[node])
        rows = n_buckets ** (int(tree.street[node]) + 1)
        t = out[offset[node]: offset[node] + rows * k].reshape(rows, k)
        sums = t.sum(axis=1, keepdims=True)
        t[:] = np.where(sums > 0, t / np.where(sums > 0, sums, 1), 1.0 / k)
    return out


@dataclass
class Strategy:
    """A loaded strategy: the tree, the table (rows sum to 1), its header, its abstraction."""

    tree: BettingTree
    probs: np.ndarray
    info: dict
    abstraction: Any
    path: Path
    offset: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.offset = self.tree.layout(self.n_buckets)[0]

    @property
    def n_buckets(self) -> int:
        return int(self.info["n_buckets"])

    def action_probs(self, node: int, sequence: int) -> dict[str, float]:
        """A decision node's action letters and their probabilities for one bucket sequence
        (mixed-radix index, see :func:`cbr.cfr.policy.sequence_index`)."""
        k = int(self.tree.n_children[node])
        rows = self.n_buckets ** (int(self.tree.street[node]) + 1)
        if not 0 <= sequence < rows:
            raise ConfigError(f"bucket sequence index {sequence} is out of 0..{rows - 1} at node {node}")
        off = int(self.offset[node]) + sequence * k
        return {self.tree.edge[c]: float(p) for c, p in zip(self.tree.children(node), self.probs[off: off + k])}


def _abstraction_identity(abstraction: Any) -> dict:
    desc = getattr(abstraction, "description", {}) or {}
    return {"abstraction": str(getattr(abstraction, "name", desc.get("name", ""))),
            "abstraction_fingerprint": str(desc.get("fingerprint", "")),
            "n_buckets": int(abstraction.n_buckets)}


def save_strategy(path: str | os.PathLike[str], solver: Solver, abstraction: Any, extra: Optional[dict] = None) -> dict:
    """Write ``solver``'s average strategy (quantised) with its header; returns the header."""
    q = quantise(solver.strategy())
    exploit = solver.exploitability(dequantise(q, solver.tree, solver.n_buckets))
    info = {"format": STRATEGY_FORMAT, "game": solver.tree.name, "tree": solver.tree.fingerprint,
            "bucket_game": bucket_game_fingerprint(solver.game), "iterations": solver.iteration,
            "exploitability_mbb": exploit, **_abstraction_identity(abstraction), **(extra or {})}
    atomic_savez(path, compress=True, probs=q, info=np.frombuffer(json.dumps(info, sort_keys=True).encode(), dtype=np.uint8))
    return info


def load_strategy(path: str | os.PathLike[str], abstraction: Any = None) -> Strategy:
    """Read a strategy file and check it against the abstraction beside it (or ``abstraction``).

    Anything that does not match (another game, bucket count or abstraction fingerprint)
    or a damaged file is a one-line :class:`ConfigError`.
    """
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = set(data.files)
            if {"regret", "average"} <= arrays and "probs" not in arrays:  # what Solver.save_checkpoint writes
                raise ConfigError(f"{path}: not a CFR strategy file but the checkpoint of a `cbr train cfr` run "
                                  f"(--resume continues it); play the strategy the run wrote"
                                  + (f", {path.with_name(path.name.removesuffix('.ckpt.npz'))}"
                                     if path.name.endswith(".ckpt.npz") else ""))
            missing = [name for name in ("info", "probs") if name not in arrays]
            if missing:
                raise ConfigError(f"{path}: not a CFR strategy file (no {' or '.join(missing)} array in it)")
            info = json.loads(bytes(data["info"]).decode())
            q = np.array(data["probs"])
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such strategy file") from None
    except ConfigError:
        raise
    except Exception:  # zip, zlib, JSON errors alike; their class names say nothing to a user
        raise ConfigError(f"{path}: not a CFR strategy file (not a NumPy .npz archive, or a damaged one)") from None
    if not isinstance(info, dict) or info.get("format") != STRATEGY_FORMAT or q.dtype != np.uint8:
        raise ConfigError(f"{path}: not a CFR strategy file of format {STRATEGY_FORMAT}")
    game = info.get("game")
    if game not in GAMES:
        raise ConfigError(f"{path}: strategy for unknown game {game!r}")
    tree = build_tree(game)
    if info.get("tree") != tree.fingerprint:
        raise ConfigError(f"{path}: strategy was trained on another {game} betting tree")
    if abstraction is None:
        home = path.parent
        if not (home / "abstraction.json").exists() and isinstance(info.get("abstraction_dir"), str):
            home = Path(info["abstraction_dir"])  # a strategy written elsewhere with -o
        abstraction = _load_abstraction(home)
    mine = _abstraction_identity(abstraction)
    for key, want in mine.items():
        if info.get(key) != want:
            raise ConfigError(f"{path}: strategy does not match its abstraction: {key.replace('_', ' ')} "
                              f"{info.get(key)!r} in the strategy, {want!r} in {path.parent}")
    probs = dequantise(q, tree, mine["n_buckets"])
    return Strategy(tree=tree, probs=probs, info=info, abstraction=abstraction, path=path)


def _load_abstraction(directory: Path) -> Any:
    from cbr.abstraction import Abstraction

    return Abstraction.load(directory)


def _load_bucket_game(directory: Path, abstraction: Any) -> BucketGame:
    return abstraction.load_bucket_game(directory)


def _iterations_in(path: Path) -> str:
    """``" (N iterations)"`` from a strategy or checkpoint header, or ``""``."""
    try:
        with np.load(path, allow_pickle=False) as data:
            info = json.loads(bytes(data["info"]).decode())
        n = info.get("iteration", info.get("iterations"))
        return f" ({counted(int(n), 'iteration')})" if isinstance(n, int) else ""
    except Exception:  # noqa: BLE001 - only a detail of a message
        return ""


def _refuse_to_replace(out_path: Path, ckpt: Path, resume: bool, overwrite: bool) -> None:
    """An existing strategy or checkpoint is replaced only with ``overwrite``; with
    ``resume`` the run continues its own files."""
    if overwrite or resume:
        return
    if out_path.exists():
        raise OutputPathError(f"{out_path} already exists{_iterations_in(out_path)}; overwrite to replace it, "
                              f"or resume to continue its run", field=("overwrite", "resume"))
    if ckpt.exists():
        raise OutputPathError(f"checkpoint {ckpt} already exists{_iterations_in(ckpt)}; resume to continue it, "
                              f"or overwrite to start over", field=("resume", "overwrite"))


def train(game: str, abstraction_dir: str | os.PathLike[str], iterations: int, *, resume: bool = False,
          out: Optional[str | os.PathLike[str]] = None, checkpoint: Optional[str | os.PathLike[str]] = None,
          checkpoint_every: int = 0, overwrite: bool = False, progress: Optional[Callable[[int], None]] = None,
          on_start: Optional[Callable[[int, int], None]] = None,
          on_checkpoint: Optional[Callable[[int, Path], None]] = None, abstraction: Any = None,
          bucket_game: Optional[BucketGame] = None) -> dict:
    """Train CFR+ on ``game`` with the abstraction in ``abstraction_dir`` up to ``iterations``
    in total, checkpointing to ``checkpoint`` (default ``<out>.ckpt.npz``); with ``resume``
    continue from the checkpoint. Writes the strategy to ``out`` (default
    :func:`default_output`: beside the abstraction, or in the current directory for a
    shipped one) and returns a report. ``on_start(done, total)`` is called once resumed;
    ``on_checkpoint(iteration, path)`` after each checkpoint written (and once for the
    checkpoint resumed from), so a caller interrupted by Ctrl-C knows what ``resume`` continues.

    Raises :class:`~cbr.errors.OutputPathError` when ``out`` or the checkpoint exists and
    neither ``resume`` nor ``overwrite`` is given (nothing is written).
    """
    if iterations < 1:
        raise ConfigError(f"iterations must be >= 1, got {iterations}")
    directory = Path(abstraction_dir)
    if abstraction is None:
        abstraction = _load_abstraction(directory)
    if bucket_game is None:
        bucket_game = _load_bucket_game(directory, abstraction)
    tree = build_tree(game)
    out_path = Path(out) if out is not None else default_output(directory, game)
    ckpt = Path(checkpoint) if checkpoint is not None else checkpoint_path(out_path)
    _refuse_to_replace(out_path, ckpt, resume, overwrite)
    if overwrite and not resume:  # starting over: a stale checkpoint must not be resumed later
        ckpt.unlink(missing_ok=True)
    solver = Solver(tree, bucket_game)
    meta = {"abstraction_dir": str(directory), **_abstraction_identity(abstraction)}
    if resume:
        saved = solver.load_checkpoint(ckpt).get("meta") or {}
        if saved.get("abstraction_fingerprint") != meta["abstraction_fingerprint"]:
            raise ConfigError(f"{ckpt}: checkpoint is for abstraction {saved.get('abstraction', '?')} "
                              f"(fingerprint {str(saved.get('abstraction_fingerprint'))[:12]}), not for "
                              f"{meta['abstraction']} (fingerprint {meta['abstraction_fingerprint'][:12]})")
        if on_checkpoint is not None:
            on_checkpoint(solver.iteration, ckpt)
    if on_start is not None:
        on_start(solver.iteration, iterations)
    start = time.perf_counter()
    ran_from = solver.iteration
    solver.run(max(0, iterations - solver.iteration), progress=progress, checkpoint=ckpt,
               checkpoint_every=checkpoint_every, meta=meta, on_checkpoint=on_checkpoint)
    seconds = time.perf_counter() - start
    info = save_strategy(out_path, solver, abstraction, {"abstraction_dir": str(directory.resolve())})
    return {"game": game, "abstraction": str(directory), "iterations": solver.iteration,
            "ran": solver.iteration - ran_from, "seconds": seconds,
            "exploitability_mbb": solver.exploitability(), "stored_exploitability_mbb": info["exploitability_mbb"],
            "info_sets": tree.info_sets(solver.n_buckets), "table_entries": solver.size,
            "strategy": str(out_path), "checkpoint": str(ckpt), "bytes": out_path.stat().st_size,
            "implementation": solver.implementation}
