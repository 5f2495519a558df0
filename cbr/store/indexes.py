"""A case base's similarity configuration (``similarity.toml``) and retrieval indexes
(``index/<street>.<generation>/``): thin links to :mod:`cbr.similarity` and
:mod:`cbr.retrieval`, imported on first use. An index is only a cache of the cases: each
save writes a new generation directory (listed in the manifest with the size and CRC-32
of every file), so a reader of an older manifest still finds the generation it lists.

>>> config = default_similarity()
>>> street_similarity(config, "flop").features[-1], new_index(config, "flop").threshold
('previous_round_bets', 0.97)
"""
from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cbr.errors import CaseBaseError, ConfigError
from cbr.game.gamedef import STREETS
from cbr.store.answer_rows import ROW_FILES
from cbr.store.durable import atomic_write_bytes, fsync_dir
from cbr.store.manifest import INDEX_PATH_RE, file_checksum, verify_file

if TYPE_CHECKING:  # imported lazily at run time: faiss is heavy
    from cbr.retrieval import CaseIndex
    from cbr.similarity import SimilarityConfig, StreetSimilarity

__all__ = ["default_similarity", "load_similarity", "dump_similarity", "street_similarity", "check_similarity",
           "new_index", "retrieval_available", "save_index", "load_index", "index_dir"]


def default_similarity(feature_set: Any = None) -> "SimilarityConfig":
    """The similarity of a case base built without one: the feature set's default
    (:func:`cbr.similarity.default_for`: SARTRE's for ``sartre``, a plugin's own
    ``default_similarity()``), else CASPER's (:func:`cbr.similarity.default_casper`) when
    there is no feature set or it has CASPER's columns. A feature set with other columns and
    no default raises :class:`ConfigError` (``field="similarity"``) saying that one must be
    given, and which columns it must cover."""
    from cbr.similarity import default_casper, default_for

    config = default_for(feature_set) if feature_set is not None else None
    if config is not None:
        return config
    config = default_casper()
    if feature_set is None:
        return config
    names = {s: list(feature_set.feature_names(s)) for s in STREETS}
    if all(list(config.street(s).features) == names[s] for s in STREETS):
        return config
    if all(names[s] == names[STREETS[0]] for s in STREETS):
        columns = ", ".join(names[STREETS[0]])
    else:
        columns = "; ".join(f"{s}: {', '.join(names[s])}" for s in STREETS)
    name = getattr(feature_set, "name", type(feature_set).__name__)
    raise ConfigError(f"feature set {name!r} has no default similarity (its plugin gives no default_similarity()): "
                      f"give a similarity config, a TOML file with a [[preflop]], [[flop]], [[turn]] and [[river]] "
                      f"table for each of its columns ({columns})", field="similarity")


def load_similarity(path: Path) -> "SimilarityConfig":
    """The ``SimilarityConfig`` in the TOML file ``path``."""
    from cbr.similarity import SimilarityConfig

    return SimilarityConfig.from_toml(Path(path))


def dump_similarity(config: "SimilarityConfig | str | os.PathLike[str]", path: Path) -> None:
    """Write ``config`` (a ``SimilarityConfig`` or the path of a TOML file to copy) to ``path`` atomically."""
    if isinstance(config, (str, os.PathLike)):
        data = Path(config).read_bytes()
        atomic_write_bytes(path, data)
        return
    atomic_write_bytes(path, config.to_toml().encode("utf-8"))


def street_similarity(config: "SimilarityConfig", street: str) -> "StreetSimilarity":
    """The ``StreetSimilarity`` of ``street`` in ``config``."""
    return config.street(street)


def check_similarity(config: "SimilarityConfig", names: dict[str, list[str]]) -> None:
    """The similarity must describe exactly the feature set's columns, in order."""
    for s in STREETS:
        have = list(street_similarity(config, s).features)
        if have != names[s]:
            raise ConfigError(f"the similarity config for {s} covers {have}, "
                              f"but the feature set gives {names[s]}")


def new_index(config: "SimilarityConfig", street: str) -> "CaseIndex":
    """An unfitted ``CaseIndex`` with ``config``'s settings for ``street``."""
    from cbr.retrieval import CaseIndex

    return CaseIndex.for_street(config, street)


def retrieval_available() -> bool:
    """Whether :mod:`cbr.retrieval` (and so faiss) can be imported."""
    try:
        import cbr.retrieval  # noqa: F401
    except ImportError:
        return False
    return True


def index_dir(street: str, generation: int) -> str:
    """The relative directory of a street's index generation.

    >>> index_dir("flop", 3)
    'index/flop.3'
    """
    return f"index/{street}.{generation}"


def _generation(entry: dict[str, Any] | None) -> int:
    if not entry:
        return 0
    m = INDEX_PATH_RE.match(str(entry.get("file", "")))
    return int(m.group(2) or 0) if m else 0


def save_index(index: "CaseIndex", root: Path, street: str, previous: dict[str, Any] | None = None,
               rows: Callable[[Path], None] | None = None) -> dict[str, Any]:
    """Save ``index`` as the next generation ``index/<street>.<n>/`` of the case base at
    ``root`` (scratch directory, fsync, rename) and return its manifest entry: ``file``,
    ``cases`` and ``files`` (size and CRC-32 of each file ``CaseIndex.save`` writes).
    ``rows(directory)``, if given, writes the street's answer rows beside the index
    (:mod:`cbr.store.answer_rows`, one per case the index holds); they are listed in ``files`` too."""
    base = Path(root) / "index"
    base.mkdir(parents=True, exist_ok=True)
    generation = _generation(previous) + 1
    while (Path(root) / index_dir(street, generation)).exists():  # an unlisted leftover of a crash
        generation += 1
    rel = index_dir(street, generation)
    scratch = base / f".tmp-{street}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        index.save(scratch)
        if rows is not None:
            rows(scratch)
        files: dict[str, dict[str, int]] = {}
        for f in sorted(scratch.iterdir()):
            if f.is_file():
                with open(f, "rb") as fh:
                    os.fsync(fh.fileno())
                files[f.name] = file_checksum(f)
        fsync_dir(scratch)
        os.rename(scratch, Path(root) / rel)
        fsync_dir(base)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"file": rel, "cases": index.n_cases_, "files": files}


def load_index(root: Path, entry: dict[str, Any], mmap: bool = False) -> "CaseIndex":
    """The ``CaseIndex`` of a manifest entry, every file of the index checked against its size
    and CRC-32 first (the answer rows beside it are checked when they are loaded,
    :mod:`cbr.store.answer_rows`); :class:`~cbr.errors.CaseBaseError` if any is missing or damaged.
    ``mmap``: map its files instead of reading them (see ``CaseIndex.load``)."""
    from cbr.retrieval import CaseIndex

    where = Path(root) / entry["file"]
    try:
        present = {f.name for f in where.iterdir()}
    except OSError as exc:
        raise CaseBaseError(f"index {where}: cannot be read ({exc.strerror or exc})") from None
    if present != set(entry["files"]):
        raise CaseBaseError(f"index {where}: holds {sorted(present)}, the manifest lists {sorted(entry['files'])}")
    for name, expected in entry["files"].items():
        if name not in ROW_FILES:
            verify_file(where / name, expected, f"index {where}")
    return CaseIndex.load(where, mmap=mmap)
