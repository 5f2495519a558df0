"""A case base's similarity configuration (``similarity.toml``) and retrieval indexes
(``index/<street>/``): thin links to :mod:`cbr.similarity` and :mod:`cbr.retrieval`,
imported on first use. An index is only a cache of the cases: it is saved by swapping a
whole directory in, and rebuilt whenever it cannot be read or extended.

>>> config = default_similarity()
>>> street_similarity(config, "flop").features[-1], new_index(config, "flop").threshold
('previous_round_bets', 0.97)
"""
from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from cbr.errors import ConfigError
from cbr.game.gamedef import STREETS
from cbr.store.durable import atomic_write_bytes, exchange_or_replace_dir, fsync_dir

__all__ = ["default_similarity", "load_similarity", "dump_similarity", "street_similarity", "check_similarity",
           "new_index", "retrieval_available", "index_size", "save_index", "extended_index", "load_index"]


def default_similarity() -> Any:
    """CASPER's similarity (:func:`cbr.similarity.default_casper`), for a case base without one."""
    from cbr.similarity import default_casper

    return default_casper()


def load_similarity(path: Path) -> Any:
    """The ``SimilarityConfig`` in the TOML file ``path``."""
    from cbr.similarity import SimilarityConfig

    return SimilarityConfig.from_toml(Path(path))


def dump_similarity(config: Any, path: Path) -> None:
    """Write ``config`` (a ``SimilarityConfig`` or the path of a TOML file to copy) to ``path`` atomically."""
    if isinstance(config, (str, os.PathLike)):
        data = Path(config).read_bytes()
        atomic_write_bytes(path, data)
        return
    atomic_write_bytes(path, config.to_toml().encode("utf-8"))


def street_similarity(config: Any, street: str) -> Any:
    """The ``StreetSimilarity`` of ``street`` in ``config``."""
    return config.street(street)


def check_similarity(config: Any, names: dict[str, list[str]]) -> None:
    """The similarity must describe exactly the feature set's columns, in order."""
    for s in STREETS:
        have = list(street_similarity(config, s).features)
        if have != names[s]:
            raise ConfigError(f"the similarity config for {s} covers {have}, "
                              f"but the feature set gives {names[s]}")


def new_index(config: Any, street: str) -> Any:
    """An unfitted ``CaseIndex`` with ``config``'s settings for ``street``."""
    from cbr.retrieval import CaseIndex

    return CaseIndex(similarity=street_similarity(config, street), threshold=config.threshold,
                     fallback_k=config.fallback_k)


def retrieval_available() -> bool:
    """Whether :mod:`cbr.retrieval` (and so faiss) can be imported."""
    try:
        import cbr.retrieval  # noqa: F401
    except ImportError:
        return False
    return True


def index_size(index: Any) -> int:
    """How many cases ``index`` holds."""
    for attr in ("n_cases_", "ntotal", "n_cases"):
        if hasattr(index, attr):
            return int(getattr(index, attr))
    return len(index)


def save_index(index: Any, directory: Path, street: str) -> str:
    """Save into a scratch directory, then swap it in as ``index/<street>/`` (the directory
    ``CaseIndex.save`` writes: ``index.faiss``, ``cases.npy``, ``meta.json``) in one step."""
    directory.mkdir(parents=True, exist_ok=True)
    scratch = directory / f".tmp-{street}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        index.save(scratch)
        for f in scratch.rglob("*"):
            if f.is_file():
                with open(f, "rb") as fh:
                    os.fsync(fh.fileno())
        fsync_dir(scratch)
        exchange_or_replace_dir(scratch, directory / street)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return f"index/{street}"


def extended_index(index: Any, rows: np.ndarray) -> Any:
    """``index`` with ``rows`` added, or None when the backend cannot add (then rebuild)."""
    try:
        index.add(rows)
    except Exception:  # e.g. a backend that cannot grow after loading: a rebuild is exact too
        return None
    return index


def load_index(path: Path) -> Any:
    """The ``CaseIndex`` saved in directory ``path``."""
    from cbr.retrieval import CaseIndex

    return CaseIndex.load(path)
