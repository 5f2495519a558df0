"""The abstract game's chance model: bucket sequences and showdown equities.

A bucketing maps a player's cards at each street to one of ``N`` buckets, so a player's
private information after street ``s`` (0 pre-flop .. 3 river) is a *bucket sequence*
``(b0, .., bs)``, indexed in mixed radix: ``index = b0 * N**s + b1 * N**(s-1) + .. + bs``.

The abstract game is the bucket game of PsOpti (Billings et al., 2003): each player's
sequence is drawn on its own, ``b0 ~ prior`` and ``bs ~ transitions[s-1][index of the
sequence so far]``; a showdown is decided by strength *classes*: a river sequence ``q``
falls in class ``c`` with probability ``classes[q, c]``, and class ``i`` beats class ``j``
with probability ``equity[i, j]`` (win plus half a tie, so ``equity + equity.T == 1``).
The players' sequences are independent (the real game's shared board is the approximation
that ``equity`` absorbs, since it is estimated from real deals).

>>> import numpy as np
>>> g = BucketGame(
...     n_buckets=2,
...     prior=np.array([0.5, 0.5]),
...     transitions=(np.full((2, 2), 0.5), np.full((4, 2), 0.5), np.full((8, 2), 0.5)),
...     classes=np.repeat(np.eye(2), 8, axis=0),  # class = the river sequence's b0 ...
...     equity=np.array([[0.5, 0.2], [0.8, 0.5]]),
...     description={"name": "toy"},
... )
>>> g.sequences(3)
16
>>> round(g.showdown_equity(15, 0), 3)   # b0=1 against b0=0
0.8
"""
from __future__ import annotations

import json
import os
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cbr.errors import ConfigError
from cbr.store.durable import atomic_savez

__all__ = ["BucketGame", "FORMAT_VERSION"]

FORMAT_VERSION = 1
_ATOL = 1e-6


@dataclass(frozen=True)
class BucketGame:
    """Chance model of the abstract game (see the module docstring for the meaning)."""

    n_buckets: int
    prior: np.ndarray  # (N,)
    transitions: tuple[np.ndarray, np.ndarray, np.ndarray]  # (N, N), (N**2, N), (N**3, N)
    classes: np.ndarray  # (N**4, C)
    equity: np.ndarray  # (C, C)
    description: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = self.n_buckets
        if not isinstance(n, int) or n < 1:
            raise ConfigError(f"bucket game: n_buckets must be a positive integer, got {n!r}")
        _check_rows("prior", np.asarray(self.prior)[None, :], (1, n))
        if len(self.transitions) != 3:
            raise ConfigError(f"bucket game: need 3 transition tables (flop, turn, river), got {len(self.transitions)}")
        for s, table in enumerate(self.transitions, start=1):
            _check_rows(f"transitions[{s - 1}]", table, (n**s, n))
        classes = np.asarray(self.classes)
        if classes.ndim != 2:
            raise ConfigError(f"bucket game: classes must be 2-D, got shape {classes.shape}")
        _check_rows("classes", classes, (n**4, classes.shape[1]))
        c = classes.shape[1]
        equity = np.asarray(self.equity, dtype=float)
        if equity.shape != (c, c):
            raise ConfigError(f"bucket game: equity must be {c}x{c} (one row per class), got shape {equity.shape}")
        if not np.all(np.isfinite(equity)) or equity.min() < -_ATOL or equity.max() > 1 + _ATOL:
            raise ConfigError("bucket game: equity values must lie in [0, 1]")
        if not np.allclose(equity + equity.T, 1.0, atol=1e-4):
            raise ConfigError("bucket game: equity + equity.T must be 1 (win plus half a tie)")

    @property
    def n_classes(self) -> int:
        """Number of showdown strength classes ``C``."""
        return int(np.asarray(self.classes).shape[1])

    def sequences(self, street: int) -> int:
        """Number of bucket sequences after ``street`` (0 pre-flop .. 3 river): ``N**(street+1)``."""
        if street not in (0, 1, 2, 3):
            raise ConfigError(f"street must be 0..3, got {street!r}")
        return self.n_buckets ** (street + 1)

    def showdown_equity(self, mine: int, theirs: int) -> float:
        """Chance that river sequence ``mine`` beats ``theirs`` (win plus half a tie)."""
        classes = np.asarray(self.classes)
        return float(classes[mine] @ np.asarray(self.equity) @ classes[theirs])

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the game to ``path`` (an ``.npz``), atomically: a reader sees the old file or the new one."""
        path = Path(path)
        arrays = {
            "prior": np.asarray(self.prior, dtype=np.float64),
            "transitions_0": np.asarray(self.transitions[0], dtype=np.float64),
            "transitions_1": np.asarray(self.transitions[1], dtype=np.float64),
            "transitions_2": np.asarray(self.transitions[2], dtype=np.float64),
            "classes": np.asarray(self.classes, dtype=np.float64),
            "equity": np.asarray(self.equity, dtype=np.float64),
            "meta": np.frombuffer(
                json.dumps({"format": FORMAT_VERSION, "n_buckets": self.n_buckets, "description": self.description},
                           sort_keys=True).encode(), dtype=np.uint8),
        }
        atomic_savez(path, compress=True, **arrays)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "BucketGame":
        """Read a game written by :meth:`save`; anything else is a one-line :class:`ConfigError`."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(bytes(data["meta"]).decode())
                arrays = {k: data[k] for k in data.files if k != "meta"}
        except FileNotFoundError:
            raise ConfigError(f"{path}: no such bucket game file") from None
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise ConfigError(f"{path}: not a bucket game file ({exc})") from None
        if meta.get("format") != FORMAT_VERSION:
            raise ConfigError(f"{path}: bucket game format {meta.get('format')!r}, this version reads {FORMAT_VERSION}")
        try:
            return cls(
                n_buckets=int(meta["n_buckets"]),
                prior=arrays["prior"],
                transitions=(arrays["transitions_0"], arrays["transitions_1"], arrays["transitions_2"]),
                classes=arrays["classes"],
                equity=arrays["equity"],
                description=meta.get("description", {}),
            )
        except KeyError as exc:
            raise ConfigError(f"{path}: bucket game file lacks {exc}") from None


def _check_rows(name: str, table: Any, shape: tuple[int, int]) -> None:
    table = np.asarray(table, dtype=float)
    if table.shape != shape:
        raise ConfigError(f"bucket game: {name} must have shape {shape}, got {table.shape}")
    if not np.all(np.isfinite(table)) or table.min() < -_ATOL:
        raise ConfigError(f"bucket game: {name} must hold probabilities (finite, >= 0)")
    if not np.allclose(table.sum(axis=1), 1.0, atol=1e-6):
        raise ConfigError(f"bucket game: every row of {name} must sum to 1")
