"""Fill a model store from logs (``cbr players build``) and read it back (``cbr players inspect``).

Every hand of the logs is replayed through the rules engine; each seated player's
actions in it become one thesis *round* of their history (see
:mod:`cbr.models.player_model`). Hands the engine cannot replay are skipped and counted.
The store is written once, in one transaction, after every log was read: an interrupted
build leaves the store as it was.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "players.duckdb")
>>> report = build_store(["../shared/data/logs/acpc/dealer_example_limit/2p.limit.h1000.r0.log"], path)
>>> report.hands, report.players, report.skipped
(1000, 2, 0)
>>> [m.hands for m in inspect_store(path)]
[1000, 1000]
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from cbr.errors import GameError
from cbr.logs.record import HandRecord, ParseIssue
from cbr.models.player_model import PlayerModel, PlayerModels
from cbr.models.store import ModelStore, PathLike


@dataclass
class BuildReport:
    """What :func:`build_store` read and wrote."""

    store: str
    hands: int = 0
    skipped: int = 0
    players: int = 0
    players_in_store: int = 0
    issues: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"store": self.store, "hands": self.hands, "skipped": self.skipped, "players": self.players,
                "players_in_store": self.players_in_store, "issues": self.issues}


def update_from_logs(models: PlayerModels, paths: Iterable[PathLike], *, format: Optional[str] = None,
                     progress: Optional[Callable[..., None]] = None,
                     max_issues: int = 100) -> BuildReport:
    """Add every hand of the logs at ``paths`` to ``models``; the report has no store."""
    from cbr.logs.detect import read_logs

    report = BuildReport(store="")
    seen: set[str] = set()
    for item in read_logs(list(paths), format, progress):
        if isinstance(item, ParseIssue):
            if item.line:  # a skipped hand (line 0: a whole file that is no log)
                report.skipped += 1
            if len(report.issues) < max_issues:
                report.issues.append(str(item))
            continue
        assert isinstance(item, HandRecord)
        try:
            models.update(item)
        except GameError as exc:
            report.skipped += 1
            if len(report.issues) < max_issues:
                report.issues.append(str(exc))
            continue
        report.hands += 1
        seen.update(item.players)
    report.players = len(seen)
    return report


def build_store(paths: Iterable[PathLike], store_path: PathLike, *, format: Optional[str] = None,
                reset: bool = False, progress: Optional[Callable[..., None]] = None) -> BuildReport:
    """Add the hands of the logs to the store at ``store_path`` (made when missing).

    Histories already in the store are continued (the same opponent met again); with
    ``reset`` the store is emptied first, in the same transaction as the write.
    """
    with ModelStore.open(store_path, create=True) as store:
        models = PlayerModels() if reset else store.load()
        models.changed.clear()
        report = update_from_logs(models, paths, format=format, progress=progress)
        report.store = str(store.path)
        store.save(models, None if reset else models.changed, replace_all=reset)
        report.players_in_store = len(store.players())
    return report


def inspect_store(store_path: PathLike, player: Optional[str] = None) -> list[PlayerModel]:
    """The models in the store (most hands first), or just ``player``'s (the defaults
    when the store has never seen them)."""
    with ModelStore.open(store_path, read_only=True) as store:
        if player is not None:
            return [store.model(player)]
        models = [h.model() for h in store.load().histories.values()]
    return sorted(models, key=lambda m: (-m.hands, m.player))
