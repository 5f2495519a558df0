"""The model store: player histories kept durably in one DuckDB file.

Tables: ``meta(key, value)`` (``kind`` = ``cbr-player-models``, ``schema_version``,
``created``) and ``players`` (one row per player: hands seen, and per attribute the sum
and count of per-hand values and the last 10 values). Every write is one DuckDB
transaction (all of it or nothing: DuckDB's write-ahead log replays committed
transactions only), and a new store is made under a temporary name and renamed into
place once it is complete, so a writer killed at any moment leaves either the store as
it was or the store with the whole write: never one that fails to open. (A writer killed
while making a new store may leave a hidden ``.NAME.*.tmp`` file beside it: never read,
safe to delete.) One process writes a store at a time (DuckDB's file lock); another one
is told the store is in use.

A store of another schema version, or a file that is not a model store, is refused with
:class:`~cbr.errors.ModelError` naming it. A player never seen gets
:data:`~cbr.models.player_model.DEFAULTS`.

With a case base, the store is ``players.duckdb`` in its directory
(:func:`casebase_store_path`); the shipped default case base is read-only and refused.

Filling a store from logs (``cbr players build``, :func:`build_store`): every hand of the
logs is replayed through the rules engine; each seated player's actions in it become one
thesis *round* of their history. Hands the engine cannot replay are skipped and counted.
The store is written once, in one transaction, after every log was read: an interrupted
build leaves the store as it was. :func:`inspect_store` reads it back
(``cbr players inspect``).

>>> import tempfile, os
>>> from cbr.models.player_model import PlayerModels, RoundStats
>>> path = os.path.join(tempfile.mkdtemp(), "players.duckdb")
>>> models = PlayerModels()
>>> models.history("ann").add_round(RoundStats(actions=2, aggressive=1))
>>> with ModelStore.open(path, create=True) as store:
...     store.save(models)
1
>>> with ModelStore.open(path, read_only=True) as store:
...     store.players(), store.model("ann").aggressiveness, store.model("nobody").hands
(['ann'], 0.5, 0)
>>> report = build_store(["../shared/data/logs/acpc/dealer_example_limit/2p.limit.h1000.r0.log"],
...                      os.path.join(tempfile.mkdtemp(), "players.duckdb"))
>>> report.hands, report.players, report.skipped
(1000, 2, 0)
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Optional, Union

from cbr.errors import GameError, ModelError
from cbr.logs.record import HandRecord, ParseIssue
from cbr.models.player_model import ATTRIBUTES, PlayerHistory, PlayerModel, PlayerModels, default_model
from cbr.store import duck

#: The schema this engine reads and writes; another version is refused.
SCHEMA_VERSION = 1
STORE_KIND = "cbr-player-models"
#: The file name of a case base's model store.
CASEBASE_STORE = "players.duckdb"

PathLike = Union[str, "os.PathLike[str]"]

_COLUMNS = ["player", "hands"] + [f"{a}_{s}" for a in ATTRIBUTES for s in ("sum", "n", "recent")]
_DDL = ("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)",
        "CREATE TABLE players (player VARCHAR PRIMARY KEY, hands BIGINT NOT NULL, "
        + ", ".join(f"{a}_sum DOUBLE NOT NULL, {a}_n BIGINT NOT NULL, {a}_recent DOUBLE[] NOT NULL"
                    for a in ATTRIBUTES)
        + ", updated VARCHAR NOT NULL)")


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def casebase_store_path(name: PathLike) -> Path:
    """``players.duckdb`` inside the case base ``name`` (a path or a name, as everywhere).

    Raises :class:`ModelError` for the shipped default case base or a read-only one
    (keep the models elsewhere with ``--store``), and :class:`~cbr.errors.CaseBaseError`
    for a case base that does not exist.

    >>> casebase_store_path("default")                       # doctest: +ELLIPSIS
    Traceback (most recent call last):
    cbr.errors.ModelError: case base 'default' is the shipped default case base, ...
    """
    from cbr.store import DEFAULT_CASEBASE, PACKAGED_CASEBASES, resolve_casebase

    path = resolve_casebase(name)
    if path.resolve() == (PACKAGED_CASEBASES / DEFAULT_CASEBASE).resolve():
        raise ModelError(f"case base {str(name)!r} is the shipped default case base, which is read-only; "
                         "keep the player models in a store of your own with --store PATH")
    if not os.access(path, os.W_OK):
        raise ModelError(f"case base {str(name)!r} ({path}) is read-only; "
                         "keep the player models in a store of your own with --store PATH")
    return path / CASEBASE_STORE


class ModelStore:
    """An open model store. Use :meth:`open`; close it (or use ``with``)."""

    def __init__(self, path: Path, con, read_only: bool) -> None:
        self.path = path
        self._con = con
        self.read_only = read_only

    # ---- opening ----
    @classmethod
    def open(cls, path: PathLike, *, create: bool = False, read_only: bool = False) -> "ModelStore":
        """Open the store at ``path``; with ``create`` make it first when it does not exist.

        Raises :class:`ModelError`: no store there (without ``create``), a file that is
        not a model store, another schema version, or a store another process is writing.
        """
        import duckdb

        p = Path(path)
        if p.is_dir():
            raise ModelError(f"{p} is a directory, not a model store file")
        if not p.exists():
            if not create:
                raise ModelError(f"no model store at {p} (fill one with: cbr players build LOGS... --store {p})")
            if read_only:
                raise ModelError(f"no model store at {p}")
            cls._create(p)
        try:
            con = duck.connect(str(p), read_only=read_only)
        except duckdb.Error as exc:
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if "lock" in text.lower():
                raise ModelError(f"model store {p} is in use by another process ({text})") from None
            raise ModelError(f"{p} is not a model store (DuckDB cannot open it: {text})") from None
        try:
            cls._check(p, con)
        except BaseException:
            con.close()
            raise
        return cls(p, con, read_only)

    @staticmethod
    def _create(p: Path) -> None:
        """Make a complete, empty store under a temporary name, then rename it into place."""

        if not p.parent.is_dir():
            raise ModelError(f"cannot create model store {p}: folder {p.parent} does not exist")
        tmp = p.with_name(f".{p.name}.{uuid.uuid4().hex}.tmp")
        try:
            con = duck.connect(str(tmp))
            try:
                con.execute("BEGIN TRANSACTION")
                for ddl in _DDL:
                    con.execute(ddl)
                con.executemany("INSERT INTO meta VALUES (?, ?)",
                                [("kind", STORE_KIND), ("schema_version", str(SCHEMA_VERSION)),
                                 ("created", _now())])
                con.execute("COMMIT")
                con.execute("CHECKPOINT")
            finally:
                con.close()
            if p.exists():  # another process made it meanwhile: keep theirs
                return
            os.replace(tmp, p)
        finally:
            for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
                try:
                    leftover.unlink()
                except FileNotFoundError:
                    pass

    @staticmethod
    def _check(p: Path, con) -> None:
        import duckdb

        try:
            rows = dict(con.execute("SELECT key, value FROM meta").fetchall())
        except duckdb.Error:
            raise ModelError(f"{p} is a DuckDB file but not a model store (no meta table)") from None
        if rows.get("kind") != STORE_KIND:
            raise ModelError(f"{p} is not a model store (kind {rows.get('kind')!r})")
        version = rows.get("schema_version")
        if version != str(SCHEMA_VERSION):
            raise ModelError(f"model store {p} has schema version {version}; this engine reads version "
                             f"{SCHEMA_VERSION}: rebuild it with cbr players build LOGS... --store NEW_PATH")

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None

    def __enter__(self) -> "ModelStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def con(self):
        if self._con is None:
            raise ModelError(f"model store {self.path} is closed")
        return self._con

    # ---- reading ----
    def meta(self) -> dict[str, str]:
        """The ``meta`` table (kind, schema_version, created)."""
        return dict(self.con.execute("SELECT key, value FROM meta").fetchall())

    def players(self) -> list[str]:
        """Names of the players in the store, sorted."""
        return [r[0] for r in self.con.execute("SELECT player FROM players ORDER BY player").fetchall()]

    def _rows(self, where: str = "", params: tuple = ()) -> list[dict]:
        cur = self.con.execute(f"SELECT {', '.join(_COLUMNS)} FROM players {where}", params)
        return [dict(zip(_COLUMNS, r)) for r in cur.fetchall()]

    def history(self, player: str) -> Optional[PlayerHistory]:
        rows = self._rows("WHERE player = ?", (player,))
        return PlayerHistory.from_row(rows[0]) if rows else None

    def model(self, player: str) -> PlayerModel:
        """The model of ``player``; the documented defaults for a player never seen."""
        h = self.history(player)
        return h.model() if h is not None else default_model(player)

    def load(self) -> PlayerModels:
        """Every player's history."""
        return PlayerModels(PlayerHistory.from_row(r) for r in self._rows("ORDER BY player"))

    # ---- writing ----
    def save(self, models: PlayerModels, players: Optional[Iterable[str]] = None, *,
             replace_all: bool = False) -> int:
        """Write the histories of ``players`` (default: every player in ``models``) in one
        transaction, replacing their rows; with ``replace_all`` every other row is removed
        in the same transaction. Returns the number of rows written."""
        if self.read_only:
            raise ModelError(f"model store {self.path} was opened read-only")
        names = sorted(models.histories) if players is None else sorted(set(players))
        rows = []
        now = _now()
        for name in names:
            h = models.histories.get(name)
            if h is None:
                continue
            r = h.to_row()
            rows.append([r[c] for c in _COLUMNS] + [now])
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            if replace_all:
                con.execute("DELETE FROM players")
            if rows:
                con.executemany(f"INSERT OR REPLACE INTO players VALUES ({', '.join('?' * (len(_COLUMNS) + 1))})", rows)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return len(rows)

    def clear(self) -> None:
        """Remove every player (one transaction)."""
        if self.read_only:
            raise ModelError(f"model store {self.path} was opened read-only")
        self.con.execute("DELETE FROM players")


def load_models(path: PathLike) -> PlayerModels:
    """Every player's history in the model store file ``path``, read only. Raises
    :class:`~cbr.errors.ModelError` when there is no store there."""
    with ModelStore.open(path, read_only=True) as store:
        return store.load()


# ---- filling a store from logs (``cbr players build``) and reading it back ----

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
