"""The model store: player histories kept durably in one DuckDB file.

Tables: ``meta(key, value)`` (``kind`` = ``cbr-player-models``, ``schema_version``,
``created``), ``players`` (one row per player: hands seen, and per attribute the sum
and count of per-hand values and the last 10 values) and ``sources`` (one row per log
read by ``cbr players build``: its SHA-256, path, bytes, hands and when; a log whose
content was read before is skipped, so building twice never counts a hand twice). A store
made before ``sources`` existed (schema version 1 too: readers do not need the table) gets
it in the transaction of its first build. Every write is one DuckDB
transaction (all of it or nothing: DuckDB's write-ahead log replays committed
transactions only), and a new store is made under a temporary name and renamed into
place once it is complete, so a writer killed at any moment leaves either the store as
it was or the store with the whole write: never one that fails to open. (A writer killed
while making a new store may leave a hidden ``.NAME.*.tmp`` file beside it: never read,
safe to delete.) One process writes a store at a time (DuckDB's file lock); another one
is told the store is in use.

A store of another schema version, a file that is not a model store, and a damaged one
(DuckDB cannot read its blocks: truncated, overwritten) are refused with
:class:`~cbr.errors.ModelError` naming it, as is a write that fails (a full disk). A
player never seen gets :data:`~cbr.models.player_model.DEFAULTS`.

With a case base, the store is ``players.duckdb`` in its directory
(:func:`casebase_store_path`); the shipped case bases are read-only and refused.

Filling a store from logs (``cbr players build``, :func:`build_store`): every hand of the
logs is replayed through the rules engine; each seated player's actions in it become one
thesis *round* of their history. Hands the engine cannot replay and files no parser reads
are skipped and listed with ``file:line`` and the reason; when no hand at all can be read
(and no log was skipped as read before) the build fails saying why, writing nothing.
Logs already read into the store (the same bytes, under any name) are skipped and listed;
``reset`` starts over. The store is written once, in one transaction (models and sources
together), after every log was read: an interrupted or failed build leaves the store as it
was, and a store the build made is deleted again.
:func:`inspect_store` reads it back (``cbr players inspect``).

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
>>> log = "../shared/data/logs/acpc/dealer_example_limit/2p.limit.h1000.r0.log"
>>> store = os.path.join(tempfile.mkdtemp(), "players.duckdb")
>>> report = build_store([log], store)
>>> report.hands, report.players, report.skipped
(1000, 2, 0)
>>> again = build_store([log], store)                     # the same log again: skipped
>>> again.hands, [s["path"] for s in again.skipped_sources] == [log]
(0, True)
"""
from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Union

from cbr.errors import CBRError, GameError, ModelError
from cbr.logs.record import HandRecord, ParseIssue, no_hand_read, skipped_hand
from cbr.models.player_model import ATTRIBUTES, PlayerHistory, PlayerModel, PlayerModels, default_model
from cbr.store import duck

#: The schema this engine reads and writes; another version is refused.
SCHEMA_VERSION = 1
STORE_KIND = "cbr-player-models"
#: The file name of a case base's model store.
CASEBASE_STORE = "players.duckdb"

PathLike = Union[str, "os.PathLike[str]"]

_COLUMNS = ["player", "hands"] + [f"{a}_{s}" for a in ATTRIBUTES for s in ("sum", "n", "recent")]
_SOURCE_COLUMNS = ["sha256", "path", "bytes", "hands", "read_at"]
#: The logs read into the store (made by the first write of a store older than the table).
_SOURCES_DDL = ("CREATE TABLE IF NOT EXISTS sources (sha256 VARCHAR PRIMARY KEY, path VARCHAR NOT NULL, "
                "bytes BIGINT NOT NULL, hands BIGINT NOT NULL, read_at VARCHAR NOT NULL)")
_DDL = ("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)",
        "CREATE TABLE players (player VARCHAR PRIMARY KEY, hands BIGINT NOT NULL, "
        + ", ".join(f"{a}_sum DOUBLE NOT NULL, {a}_n BIGINT NOT NULL, {a}_recent DOUBLE[] NOT NULL"
                    for a in ATTRIBUTES)
        + ", updated VARCHAR NOT NULL)",
        _SOURCES_DDL)
#: What DuckDB says of a file whose blocks cannot be read back (truncated or overwritten).
_DAMAGE = ("could not read enough bytes", "corrupt database file", "checksum", "invalid block", "unexpected end")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _in_use(text: str) -> bool:
    low = text.lower()
    return "could not set lock" in low or "conflicting lock" in low


def _damaged(path: Path, exc: BaseException) -> ModelError:
    return ModelError(f"model store {path} is damaged ({_first_line(exc)}); delete it and fill a new one "
                      f"from the logs", field="store")


def _store_error(path: Path, exc: BaseException, writing: bool = False) -> ModelError:
    """A DuckDB error on the open store ``path`` as one :class:`ModelError`: in use, damaged,
    or (``writing``) a write that failed, e.g. on a full disk."""
    text = _first_line(exc)
    if _in_use(text):
        return ModelError(f"model store {path} is in use by another process ({text})")
    if writing and not any(d in text.lower() for d in _DAMAGE):
        return ModelError(f"cannot write model store {path} ({text}); it is as it was before this write")
    return _damaged(path, exc)


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def casebase_store_path(name: PathLike) -> Path:
    """``players.duckdb`` inside the case base ``name`` (a path or a name, as everywhere).

    Raises :class:`ModelError` for a shipped case base or a read-only one
    (keep the models elsewhere with ``--store``), and :class:`~cbr.errors.CaseBaseError`
    for a case base that does not exist.

    >>> casebase_store_path("default")                       # doctest: +ELLIPSIS
    Traceback (most recent call last):
    cbr.errors.ModelError: case base 'default' is a shipped case base, ...
    """
    from cbr.store import is_shipped, resolve_casebase

    path = resolve_casebase(name)
    if is_shipped(path):
        raise ModelError(f"case base {str(name)!r} is a shipped case base, which is read-only; "
                         "keep the player models in a store of your own", field="store")
    if not os.access(path, os.W_OK):
        raise ModelError(f"case base {str(name)!r} ({path}) is read-only; "
                         "keep the player models in a store of your own", field="store")
    return path / CASEBASE_STORE


class ModelStore:
    """An open model store. Use :meth:`open`; close it (or use ``with``)."""

    def __init__(self, path: Path, con, read_only: bool, created: bool = False) -> None:
        self.path = path
        self._con = con
        self.read_only = read_only
        #: Whether :meth:`open` made this store (it did not exist before).
        self.created = created

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
        created = False
        if not p.exists():
            if not create:
                raise ModelError(f"no model store at {p}; fill one from logs first", field="store")
            if read_only:
                raise ModelError(f"no model store at {p}")
            created = cls._create(p)
        try:
            con = duck.connect(str(p), read_only=read_only)
        except duckdb.Error as exc:
            text = _first_line(exc)
            if _in_use(text):
                raise ModelError(f"model store {p} is in use by another process ({text})") from None
            if any(d in text.lower() for d in _DAMAGE):
                raise _damaged(p, exc) from None
            if "not a valid duckdb database" in text.lower():
                raise ModelError(f"{p} is not a model store: not a DuckDB database file") from None
            raise ModelError(f"{p} is not a model store (it cannot be opened: {text})") from None
        try:
            cls._check(p, con)
        except BaseException:
            con.close()
            raise
        return cls(p, con, read_only, created)

    @staticmethod
    def _create(p: Path) -> bool:
        """Make a complete, empty store under a temporary name, then rename it into place;
        False when another process made one there meanwhile (theirs is kept)."""
        if not p.parent.is_dir():
            raise ModelError(f"cannot create model store {p}: folder {p.parent} does not exist")
        import duckdb

        tmp = p.with_name(f".{p.name}.{uuid.uuid4().hex}.tmp")
        try:
            try:
                ModelStore._fill_new(tmp)
            except duckdb.Error as exc:
                raise ModelError(f"cannot create model store {p} ({_first_line(exc)})") from None
            if p.exists():  # another process made it meanwhile: keep theirs
                return False
            os.replace(tmp, p)
            return True
        finally:
            for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
                try:
                    leftover.unlink()
                except FileNotFoundError:
                    pass

    @staticmethod
    def _fill_new(tmp: Path) -> None:
        """The tables and meta rows of a new store, committed and checkpointed into ``tmp``."""
        con = duck.connect(str(tmp))
        try:
            con.execute("BEGIN TRANSACTION")
            for ddl in _DDL:
                con.execute(ddl)
            con.executemany("INSERT INTO meta VALUES (?, ?)",
                            [("kind", STORE_KIND), ("schema_version", str(SCHEMA_VERSION)), ("created", _now())])
            con.execute("COMMIT")
            con.execute("CHECKPOINT")
        finally:
            con.close()

    @staticmethod
    def _check(p: Path, con) -> None:
        import duckdb

        try:
            rows = dict(con.execute("SELECT key, value FROM meta").fetchall())
        except duckdb.CatalogException:
            raise ModelError(f"{p} is a DuckDB file but not a model store (no meta table)") from None
        except duckdb.Error as exc:
            raise _store_error(p, exc) from None
        if rows.get("kind") != STORE_KIND:
            raise ModelError(f"{p} is not a model store (kind {rows.get('kind')!r})")
        version = rows.get("schema_version")
        if version != str(SCHEMA_VERSION):
            raise ModelError(f"model store {p} has schema version {version}; this engine reads version "
                             f"{SCHEMA_VERSION}: rebuild it from the logs into a new store", field="store")

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None

    def discard(self) -> bool:
        """Delete a store this :meth:`open` made, when it is still empty (no player, no
        source), and close it; True when deleted. The file is removed while this connection
        still holds DuckDB's lock, so no other process can have opened it meanwhile."""
        try:
            if not self.created or self.read_only or self._con is None or self.players() or self.sources():
                return False
            for leftover in (self.path, self.path.with_name(self.path.name + ".wal")):
                try:
                    leftover.unlink()
                except FileNotFoundError:
                    pass
            return True
        finally:
            self.close()

    def __enter__(self) -> "ModelStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def con(self):
        if self._con is None:
            raise ModelError(f"model store {self.path} is closed")
        return self._con

    @contextmanager
    def _guard(self, writing: bool = False) -> Iterator[None]:
        """DuckDB errors on this store as one :class:`ModelError` (damaged, in use, a failed write)."""
        import duckdb

        try:
            yield
        except duckdb.Error as exc:
            raise _store_error(self.path, exc, writing) from None

    # ---- reading ----
    def meta(self) -> dict[str, str]:
        """The ``meta`` table (kind, schema_version, created)."""
        with self._guard():
            return dict(self.con.execute("SELECT key, value FROM meta").fetchall())

    def players(self) -> list[str]:
        """Names of the players in the store, sorted."""
        with self._guard():
            return [r[0] for r in self.con.execute("SELECT player FROM players ORDER BY player").fetchall()]

    def _rows(self, where: str = "", params: tuple = ()) -> list[dict]:
        with self._guard():
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

    def sources(self) -> list[dict[str, Any]]:
        """The logs read into the store (sha256, path, bytes, hands, read_at), oldest first;
        none for a store made before the table existed and never built since."""
        with self._guard():
            exists = self.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'sources' "
                                      "AND database_name = current_database()").fetchone()[0]
            if not exists:
                return []
            cur = self.con.execute(f"SELECT {', '.join(_SOURCE_COLUMNS)} FROM sources ORDER BY read_at, path")
            return [dict(zip(_SOURCE_COLUMNS, r)) for r in cur.fetchall()]

    # ---- writing ----
    def save(self, models: PlayerModels, players: Optional[Iterable[str]] = None, *,
             replace_all: bool = False, sources: Iterable[dict[str, Any]] = ()) -> int:
        """Write the histories of ``players`` (default: every player in ``models``) in one
        transaction, replacing their rows; with ``replace_all`` every other row (and every
        source read) is removed in the same transaction. ``sources``: logs read for this
        write (dicts with sha256, path, bytes, hands), recorded in the same transaction.
        Returns the number of rows written."""
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
        read = [[str(src["sha256"]), str(src["path"]), int(src["bytes"]), int(src["hands"]), now] for src in sources]
        con = self.con
        with self._guard(writing=True):
            con.execute("BEGIN TRANSACTION")
            try:
                if replace_all:
                    con.execute("DELETE FROM players")
                if replace_all or read:
                    con.execute(_SOURCES_DDL)  # a store older than the table gets it here
                if replace_all:
                    con.execute("DELETE FROM sources")
                if rows:
                    con.executemany(f"INSERT OR REPLACE INTO players VALUES ({', '.join('?' * (len(_COLUMNS) + 1))})",
                                    rows)
                if read:
                    con.executemany(f"INSERT OR REPLACE INTO sources ({', '.join(_SOURCE_COLUMNS)}) "
                                    f"VALUES ({', '.join('?' * len(_SOURCE_COLUMNS))})", read)
                con.execute("COMMIT")
            except BaseException:
                _rollback(con)
                raise
        return len(rows)

    def clear(self) -> None:
        """Remove every player (one transaction)."""
        if self.read_only:
            raise ModelError(f"model store {self.path} was opened read-only")
        with self._guard(writing=True):
            self.con.execute("DELETE FROM players")


def _rollback(con: Any) -> None:
    """Roll back the open transaction; a connection DuckDB has invalidated (a failed write
    on a full disk) has nothing left to roll back, and the first error is the one to report."""
    import duckdb

    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass


def load_models(path: PathLike) -> PlayerModels:
    """Every player's history in the model store file ``path``, read only. Raises
    :class:`~cbr.errors.ModelError` when there is no store there."""
    with ModelStore.open(path, read_only=True) as store:
        return store.load()


# ---- filling a store from logs (``cbr players build``) and reading it back ----

@dataclass
class BuildReport:
    """What :func:`build_store` read and wrote: hands, players, the hands skipped
    (``skipped``) and the files no parser read (``files_skipped``), the first of both listed
    in ``issues`` (``file:line`` and the reason; line 0: a whole file), the logs read
    (``sources``: path, sha256, bytes, hands) and the logs skipped because the store had
    read their bytes before (``skipped_sources``: path, sha256, ``read_as``: the path it was
    read as, ``read_at``: when, None for a log read earlier in the same build)."""

    store: str
    hands: int = 0
    skipped: int = 0
    players: int = 0
    players_in_store: int = 0
    files_skipped: int = 0
    lines_skipped: int = 0  # lines that are no hand at all (not counted in ``skipped``)
    issues: list[ParseIssue] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    skipped_sources: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"store": self.store, "hands": self.hands, "skipped": self.skipped, "players": self.players,
                "players_in_store": self.players_in_store, "files_skipped": self.files_skipped,
                "lines_skipped": self.lines_skipped, "issues": [str(i) for i in self.issues],
                "sources": self.sources, "skipped_sources": self.skipped_sources}


def source_digest(path: PathLike) -> tuple[str, int]:
    """``(sha256, bytes)`` of a log file, or of a database folder (IRC: every file in it,
    by relative name, so that a change to any of them is another source).

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "a.log")
    >>> _ = open(p, "w").write("hand\\n")
    >>> source_digest(p)[1], len(source_digest(p)[0])
    (5, 64)
    """
    p = Path(path)
    if p.is_dir():
        h = hashlib.sha256()
        total = 0
        for f in sorted(q for q in p.rglob("*") if q.is_file()):
            sha, size = source_digest(f)
            h.update(f"{f.relative_to(p).as_posix()}\0{sha}\0".encode())
            total += size
        return h.hexdigest(), total
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest(), p.stat().st_size


def update_from_logs(models: PlayerModels, paths: Iterable[PathLike], *, format: Optional[str] = None,
                     progress: Optional[Callable[..., None]] = None, max_issues: int = 100,
                     known: Optional[dict[str, dict[str, Any]]] = None) -> BuildReport:
    """Add every hand of the logs at ``paths`` to ``models``; the report has no store.

    ``known``: sources already read (by sha256); a log with those bytes is skipped, as is
    a second log with the bytes of one read in this call. ``progress(n, total=None)`` is
    called with the number of sources once, then once per source.
    """
    from cbr.logs.detect import scan_logs

    report = BuildReport(store="")
    seen: set[str] = set()
    known = dict(known or {})
    sources = scan_logs(list(paths), format)
    if progress is not None:
        progress(0, total=len(sources))
    for source in sources:
        digest = None
        if not source.skipped:
            try:
                digest = source_digest(source.path)
            except OSError:  # vanished or unreadable: parse_source says why
                digest = None
        if digest is not None and digest[0] in known:
            before = known[digest[0]]
            report.skipped_sources.append({"path": source.path, "sha256": digest[0], "read_as": before["path"],
                                           "read_at": before.get("read_at")})
        else:
            hands_before = report.hands
            _read_source(models, source, report, seen, max_issues)
            if digest is not None and report.hands > hands_before:
                entry = {"path": source.path, "sha256": digest[0], "bytes": digest[1],
                         "hands": report.hands - hands_before}
                report.sources.append(entry)
                known[digest[0]] = {**entry, "read_at": None}  # None: earlier in this same build
        if progress is not None:
            progress(1)
    report.players = len(seen)
    return report


def _read_source(models: PlayerModels, source: Any, report: BuildReport, seen: set[str], max_issues: int) -> None:
    """Every hand of one source into ``models``; skipped hands counted and listed in ``report``."""
    from cbr.logs.detect import parse_source

    for item in parse_source(source):
        if isinstance(item, ParseIssue):
            if item.whole_file:  # a file that is no log (or cannot be read)
                report.files_skipped += 1
            elif item.not_a_hand:  # a line that is no hand
                report.lines_skipped += 1
            else:  # a skipped hand
                report.skipped += 1
            if len(report.issues) < max_issues:
                report.issues.append(item)
            continue
        assert isinstance(item, HandRecord)
        try:
            models.update(item)
        except GameError as exc:
            report.skipped += 1
            if len(report.issues) < max_issues:
                report.issues.append(skipped_hand(item, exc))
            continue
        report.hands += 1
        seen.update(item.players)


def build_store(paths: Iterable[PathLike], store_path: PathLike, *, format: Optional[str] = None,
                reset: bool = False, progress: Optional[Callable[..., None]] = None,
                max_issues: int = 100) -> BuildReport:
    """Add the hands of the logs to the store at ``store_path`` (made when missing).

    Histories already in the store are continued (the same opponent met again); a log
    the store has read before (the same SHA-256) is skipped and listed in
    ``skipped_sources``. With ``reset`` the store is emptied first (players and sources),
    in the same transaction as the write. Hands skipped and files not read are counted,
    the first ``max_issues`` of them listed in ``issues``.

    Raises :class:`~cbr.errors.CBRError` when no hand could be read (and no log was
    skipped as read before), naming the first file or hand skipped and why; the store is
    then not written, and not left behind when this call made it (nor after any other
    error or an interruption).

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "notes.txt"), "w").write("no hands here\\n")
    >>> try:
    ...     build_store([os.path.join(d, "notes.txt")], os.path.join(d, "p.duckdb"))
    ... except CBRError as exc:
    ...     print(exc)                                      # doctest: +ELLIPSIS
    no hand could be read from .../notes.txt: .../notes.txt: not a log any parser recognises ...
    >>> os.path.exists(os.path.join(d, "p.duckdb"))
    False
    """
    paths = list(paths)
    store = ModelStore.open(store_path, create=True)
    try:
        known = {} if reset else {src["sha256"]: src for src in store.sources()}
        models = PlayerModels() if reset else store.load()
        models.changed.clear()
        report = update_from_logs(models, paths, format=format, progress=progress, known=known,
                                  max_issues=max_issues)
        report.store = str(store.path)
        if report.hands == 0 and not report.skipped_sources:
            raise CBRError(no_hand_read(paths, str(report.issues[0]) if report.issues else None,
                                        report.skipped + report.lines_skipped + report.files_skipped))
        store.save(models, None if reset else models.changed, replace_all=reset, sources=report.sources)
        report.players_in_store = len(store.players())
    except BaseException:
        store.discard()  # a store this call made, still empty: not left behind
        raise
    finally:
        store.close()
    return report


def inspect_store(store_path: PathLike, player: Optional[str] = None) -> list[PlayerModel]:
    """The models in the store (most hands first), or just ``player``'s (the defaults
    when the store has never seen them)."""
    with ModelStore.open(store_path, read_only=True) as store:
        if player is not None:
            return [store.model(player)]
        models = [h.model() for h in store.load().histories.values()]
    return sorted(models, key=lambda m: (-m.hands, m.player))
