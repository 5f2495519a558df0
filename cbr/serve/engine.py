"""What the HTTP server does, without HTTP: the case bases loaded once, and one method per
endpoint over the library (:func:`cbr.query.answer.answer`, policy specs,
:class:`~cbr.play.retention.Retainer`, :func:`cbr.store.inspect`,
:func:`cbr.query.evaluate.evaluate_casebase`). Nothing here prints, exits or knows FastAPI;
errors are :class:`~cbr.errors.CBRError` subclasses the app maps to HTTP statuses; a fault of a
served case base's storage is a :class:`StorageError` naming it (:func:`stored`).

Concurrency: each case base is open once in the process (:func:`cbr.store.shared.open_shared`)
and has one lock; a retrieval, a decision of any bot over it and a retention take it in turn
(a retrieval takes about a millisecond), so a reader never sees a half-applied write. The bots
of ``/reuse`` are built once per spec and case base, and play from that one open case base (a
spec that differs in options shares it); a bot evicted from the cache is closed when the
last request using it is done. Inspection and evaluation open a handle of their own and run
beside them. Before each read, a writable case base follows what other processes (other
server workers, a ``cbr match --retain-into``) retained.

>>> engine = Engine(["default"])
>>> ans = engine.retrieve({"hole": "AdQc", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 5,
...                        "prev_bets": 2})
>>> [round(p, 2) for p in ans["triple"].values()]
[0.11, 0.48, 0.41]
>>> engine.close()
"""
from __future__ import annotations

import os
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from cbr.errors import (
    CaseBaseError,
    CBRError,
    ConfigError,
    GameError,
    LogFormatError,
    PluginError,
    PluginFailedError,
    counted,
    exception_chain,
)
from cbr.game.gamedef import STREETS
from cbr.serve.labels import casebase_labels, shown_label, shown_provenance, shown_text
from cbr.store import is_shipped

__all__ = ["Engine", "checked_spec", "Deadline", "FieldError", "NotFoundError", "ForbiddenError", "UnauthorizedError", "TimeLimitError",
           "StorageError", "storage_fault", "stored", "closing_errors", "ClosingFaults",
           "MAX_ANSWER_CASES", "MAX_RETAIN_HANDS", "MAX_EVALUATE_DECISIONS", "PATH_OPTIONS", "SHIPPED_NAMED", "shipped_names",
           "time_limit_message", "for_api"]

#: Most cases one answer lists: a ``top`` of null (every retrieved case) is refused, 422 on
#: ``top``, when more were retrieved (a ``top`` of null with ``k`` and ``min_cases`` at a million
#: listed a whole street, 32,875 preflop cases of the default case base, a 20 MB answer). It is
#: also the most a request may ask for by ``top``, a batch's summed (:mod:`cbr.serve.schemas`).
MAX_ANSWER_CASES = 10_000
#: Most hands one ``/retain`` request may hold.
MAX_RETAIN_HANDS = 1000
#: The cap on ``/evaluate``'s ``max_decisions`` (per street).
MAX_EVALUATE_DECISIONS = 2000
#: Policy options that name files on the server: a client may not set them to a path (the case
#: base comes from the request's ``casebase``, a loaded one); those of :data:`SHIPPED_NAMED` take
#: the name of one shipped with the engine.
PATH_OPTIONS = ("casebase", "similarity", "models", "strategy", "styles", "store", "predictor", "model", "logs")
#: The options a client may give by the name of a file shipped with the engine (never a path):
#: option -> what it names, in words.
SHIPPED_NAMED = {"strategy": "a shipped strategy", "styles": "shipped style cases"}
#: How a ``/retain`` hand that its request's ``game`` does not seat names that game: a 422 on the
#: field ``game``, as every refusal of that field's value.
GAME_FROM = "the request's game"
#: Policies kept built between requests (least recently used dropped first).
POLICY_CACHE = 16


def shipped_names(option: str) -> list[str]:
    """The names ``option`` (of :data:`SHIPPED_NAMED`) takes in a request: the shipped CFR
    strategies (the folders of ``casebases/cfr``, as ``cfr:strategy=NAME`` reads them) or the
    shipped style cases (``casebases/styles/NAME.json``, as ``adapt:styles=NAME`` does).

    >>> "counter_raise" in shipped_names("strategy"), shipped_names("styles")
    (True, ['house'])
    """
    from cbr.store import PACKAGED_CASEBASES

    if option == "strategy":
        return sorted(p.name for p in (PACKAGED_CASEBASES / "cfr").iterdir() if p.is_dir())
    if option == "styles":
        return sorted(p.stem for p in (PACKAGED_CASEBASES / "styles").glob("*.json"))
    return []


def checked_spec(spec: str, field: str, where: str) -> tuple[str, dict[str, str]]:
    """``(name, options)`` of a policy spec a client sent: an unknown policy, a malformed
    spec, or an option naming a file on the server (:data:`PATH_OPTIONS`) is a
    :class:`FieldError` on ``field`` (a bad value of the field: 422, as at the web table). ``where``: what the client is
    told to use instead of a ``casebase`` path. An option of :data:`SHIPPED_NAMED` may name a
    shipped file (:func:`shipped_names`), unless a file of that name in the server's folder would
    be read instead.

    >>> checked_spec("cbr:reuse=best-outcome", "policy", "")
    ('cbr', {'reuse': 'best-outcome'})
    >>> checked_spec("cfr:strategy=counter_raise", "policy", "")
    ('cfr', {'strategy': 'counter_raise'})
    >>> checked_spec("cbr:casebase=/etc", "policy", "use a served case base")
    Traceback (most recent call last):
    cbr.serve.engine.FieldError: policy spec 'cbr:casebase=/etc': option 'casebase' names a file on the server; use a served case base
    >>> checked_spec("cbr:similarity=/etc/passwd", "policy", "use a served case base")
    Traceback (most recent call last):
    cbr.serve.engine.FieldError: policy spec 'cbr:similarity=/etc/passwd': option 'similarity' names a file on the server, which a request may not choose
    """
    from cbr.policies.spec import PolicySpecError, parse_policy_spec, policy_options

    try:
        name, options = parse_policy_spec(spec)
        policy_options(name)
    except PolicySpecError as exc:  # an unknown policy (UnknownPolicyError) included
        raise FieldError(field, str(exc)) from None
    except PluginError as exc:  # a bot plugin that fails to load: the field named it
        if isinstance(exc, PluginFailedError):  # pragma: no cover - a bot that ran and failed: 500
            raise
        raise FieldError(field, str(exc).strip().splitlines()[0]) from None
    for key in sorted(options):
        option = key.replace("-", "_")
        if option not in PATH_OPTIONS:
            continue
        value = options[key]
        said = f"policy spec {spec!r}: option {key!r}"
        if option in SHIPPED_NAMED:
            names = shipped_names(option)
            if value not in names:
                raise FieldError(field, f"{said} takes the name of {SHIPPED_NAMED[option]} ({', '.join(names)}), "
                                        "never a file on the server")
            if Path(value).exists():  # the bot would read the server's own file of that name
                raise FieldError(field, f"{said}: {value!r} is also a file in the server's folder, which the bot "
                                        "would read instead of the shipped one: start the server in another folder")
            continue
        if option == "casebase":
            raise FieldError(field, f"{said} names a file on the server; {where}")
        raise FieldError(field, f"{said} names a file on the server, which a request may not choose")
    return name, options


class FieldError(CBRError, ValueError):
    """A request field the library refused (HTTP 422 naming ``field``, the request's name of it)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message, field=field)


class NotFoundError(CBRError, LookupError):
    """A case base, table session or decision the server does not have (HTTP 404)."""


class ForbiddenError(CBRError):
    """A write the server refuses whoever asks: a shipped or read-only case base, or
    retention switched off (no token configured) (HTTP 403)."""


class UnauthorizedError(CBRError):
    """A write without the right bearer token (HTTP 401)."""


class TimeLimitError(CBRError):
    """A request that ran over the server's time limit (HTTP 503)."""


class StorageError(CBRError):
    """A fault of the server's own storage, not of the request: a served case base whose files
    are damaged or unreadable, or a write into it that failed (HTTP 500). The message names
    the case base by the name it is served under and says it needs its operator's attention,
    with no path on the server and no command (the client has no shell there); what the
    library said, for the operator, is :attr:`detail` (and the ``__cause__``). ``bot``: the
    spec of the bot whose own case base it is (one the request did not choose: the ``cbr``
    bot's ``expert``), which the message names as the bot's, not as one the client asked for.

    >>> str(StorageError("mine", OSError(21, "Is a directory", "/srv/mine/retained/log-00000.bin"), writing=True))
    "the server's case base 'mine' could not be written to: its files need its operator's attention (the server's log says what is wrong); the request was not at fault, and may be sent again once the case base is mended"
    >>> str(StorageError("expert", OSError(5, "Input/output error"), bot="cbr"))
    "the case base 'expert' that the bot 'cbr' plays from (its own: the request chose no case base) could not be read: its files need the server operator's attention (the server's log says what is wrong); the request was not at fault, and may be sent again once the case base is mended"
    """

    def __init__(self, casebase: str, cause: BaseException, *, writing: bool = False,
                 bot: Optional[str] = None) -> None:
        self.casebase = casebase
        self.bot = bot
        self.detail = " ".join(str(cause).split()) or type(cause).__name__
        whose = (f"the server's case base {casebase!r}" if bot is None else
                 f"the case base {casebase!r} that the bot {bot!r} plays from (its own: the request chose no case base)")
        operator = "its operator's" if bot is None else "the server operator's"
        super().__init__(f"{whose} could not be {'written to' if writing else 'read'}: its files need {operator} "
                         "attention (the server's log says what is wrong); the request was not at fault, and may be "
                         "sent again once the case base is mended")


#: The packages whose :class:`~cbr.errors.CaseBaseError` is about the files of a case base (its
#: manifest, Parquet parts, retention log, saved indexes), not about what was asked of it.
STORAGE_PACKAGES = ("cbr.store", "cbr.retrieval")


def storage_fault(exc: BaseException) -> bool:
    """Whether ``exc`` is a fault of a case base's storage rather than of a request: a
    :class:`~cbr.errors.CaseBaseError` raised by the store (:data:`STORAGE_PACKAGES`: damaged,
    missing or unreadable files; a write that failed) that names no request field, an
    :class:`OSError`, or an error of DuckDB reading the Parquet parts. A refusal that is about the
    request (raised elsewhere, such as a case base with no cases of the street asked about, or
    naming a field) is not.

    >>> from cbr.store import CaseBase
    >>> try:
    ...     CaseBase.open("/no/such/casebase")
    ... except CaseBaseError as exc:
    ...     storage_fault(exc)
    True
    >>> storage_fault(CaseBaseError("the case base to retain into has an empty name", field="retain_into"))
    False
    >>> storage_fault(ConfigError("k must be at least 1"))
    False
    """
    if isinstance(exc, StorageError):
        return False
    if type(exc) is CaseBaseError:
        return not exc.fields and _raised_in(exc).startswith(STORAGE_PACKAGES)
    if isinstance(exc, OSError):
        return True
    try:
        import duckdb
    except ImportError:  # pragma: no cover - a dependency
        return False
    return isinstance(exc, duckdb.Error)


def closing_errors() -> tuple[type[BaseException], ...]:
    """What compacting or closing a case base may raise that is noted for the server's operator
    rather than raised at the server's stop: the engine's errors, the OS's, and DuckDB's (its
    catalog rewritten over a damaged Parquet part)."""
    import duckdb

    return (CBRError, OSError, duckdb.Error)


class ClosingFaults:
    """What compacting or closing each case base failed with, as the server's operator is told
    it (a web-table session's compaction as the session ends, the stop's second try, the close):
    one fault is said once, in full (:meth:`note`: what was kept, then the library's line, what
    failed and what mends it); a later try that fails the same way (the same first cause, in the
    chain of what was raised: a session's compaction words it as the retention's, the stop's as
    the store's) adds one short line saying the fault is still there, once, then nothing.

    >>> faults = ClosingFaults()
    >>> faults.note("mine", OSError("cases/flop/part-00000.parquet is cut"), "case base 'mine' not compacted")
    "case base 'mine' not compacted: cases/flop/part-00000.parquet is cut"
    >>> faults.note("mine", OSError("cases/flop/part-00000.parquet is cut"), "case base 'mine' not closed cleanly")
    "case base 'mine' still not compacted, for the fault noted above (what was retained stays in its retention log)"
    >>> faults.note("mine", OSError("cases/flop/part-00000.parquet is cut"), "case base 'mine' not closed cleanly") is None
    True
    """

    def __init__(self) -> None:
        self._said: dict[str, tuple[str, str]] = {}  # case base -> the first cause of the fault said of it
        self._still: set[str] = set()  # case bases whose "still" line was said
        self._lock = threading.Lock()

    def note(self, casebase: str, exc: BaseException, first: str) -> Optional[str]:
        """The line to say of ``exc``, which failed compacting or closing ``casebase``:
        ``first: the fault`` when this fault was not said of it yet; else the "still" line the
        first time, then None (nothing more)."""
        why = " ".join(str(exc).split()) or type(exc).__name__
        *_, root = exception_chain(exc)
        cause = (type(root).__name__, " ".join(str(root).split()))
        with self._lock:
            if self._said.get(casebase) != cause:
                self._said[casebase] = cause
                self._still.discard(casebase)
                return f"{first}: {why}"
            if casebase in self._still:
                return None
            self._still.add(casebase)
        return (f"case base {casebase!r} still not compacted, for the fault noted above (what was retained stays in "
                "its retention log)")


def _raised_in(exc: BaseException) -> str:
    """The module whose code raised ``exc`` ("" when it was never raised)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return "" if tb is None else str(tb.tb_frame.f_globals.get("__name__", ""))


@contextmanager
def stored(casebase: str, *, writing: bool = False, bot: Optional[str] = None) -> Iterator[None]:
    """Work on the server's case base ``casebase`` (its served name; with ``bot``, the spec of
    the bot whose own case base it is): a storage fault raised meanwhile
    (:func:`storage_fault`) becomes a :class:`StorageError` naming it; anything else passes
    through as it is.

    >>> with stored("mine"):
    ...     raise OSError(5, "Input/output error", "/srv/mine/cases/flop/part-00000.parquet")
    Traceback (most recent call last):
    cbr.serve.engine.StorageError: the server's case base 'mine' could not be read: its files need its operator's attention (the server's log says what is wrong); the request was not at fault, and may be sent again once the case base is mended
    """
    try:
        yield
    except Exception as exc:
        if storage_fault(exc):
            raise StorageError(casebase, exc, writing=writing, bot=bot) from exc
        raise


def time_limit_message(seconds: float) -> str:
    """What a 503 over the time limit says, in the words of an API user: what the server does
    and what the request can do (no option of the command that started the server).

    >>> time_limit_message(10.0)
    "the request ran over this server's time limit of 10 s: ask for less in one request, or try again when the server is less busy"
    """
    return (f"the request ran over this server's time limit of {seconds:g} s: ask for less in one request, "
            "or try again when the server is less busy")


#: The words of the library's messages meant for the command line, and what an HTTP answer
#: says instead (:func:`for_api`).
CLI_WORDS = {"(see cbr plugins list)": "(GET /policies lists each with the reason)"}


def for_api(message: str) -> str:
    """A library message as an HTTP answer gives it: a pointer to a command (the client has no
    shell on the server) becomes the endpoint that answers the same (:data:`CLI_WORDS`).

    >>> for_api("unknown policy 'x' (known: call); 1 plugin failed to load: cbr.policies:y (see cbr plugins list)")
    "unknown policy 'x' (known: call); 1 plugin failed to load: cbr.policies:y (GET /policies lists each with the reason)"
    """
    for cli, api in CLI_WORDS.items():
        message = message.replace(cli, api)
    return message


class Deadline:
    """A request's time limit, shared by the thread doing the work and the one answering.

    A write starts only through :meth:`begin_write`, which refuses once the limit has passed
    or the request was answered as timed out (:meth:`give_up`); :meth:`give_up` refuses
    once a write has started, so a request answered "over time" never wrote anything.

    >>> d = Deadline(60.0); d.begin_write(); d.give_up()
    False
    >>> d = Deadline(60.0); d.give_up(); d.check()
    Traceback (most recent call last):
    cbr.serve.engine.TimeLimitError: the request ran over this server's time limit of 60 s: ask for less in one request, or try again when the server is less busy
    """

    def __init__(self, seconds: Optional[float]) -> None:
        self.seconds = seconds
        self.end = None if seconds is None else time.monotonic() + seconds
        self._lock = threading.Lock()
        self._writing = False
        self._abandoned = False

    def _message(self) -> str:
        return time_limit_message(self.seconds or 0.0)

    def passed(self) -> bool:
        """Whether the limit has passed or the request was given up."""
        return self._abandoned or (self.end is not None and time.monotonic() > self.end)

    def check(self, *_: Any, **__: Any) -> None:
        """Raise :class:`TimeLimitError` when the limit has passed (usable as a progress callback)."""
        if self.passed():
            raise TimeLimitError(self._message())

    def begin_write(self) -> None:
        """Mark the start of a write; raises :class:`TimeLimitError` (nothing written) when too late."""
        with self._lock:
            if self.passed():
                self._abandoned = True
                raise TimeLimitError(self._message() + "; nothing was written")
            self._writing = True

    def give_up(self) -> bool:
        """Answer the request as timed out: True, unless a write has started (then the
        caller waits for it to finish and answers with its result)."""
        with self._lock:
            if self._writing:
                return False
            self._abandoned = True
            return True


@dataclass
class _Loaded:
    """One case base the server holds open (a reference to the process's one handle), with
    the lock its readers and writers share."""

    name: str
    path: Path
    handle: Any  # a cbr.store.shared.SharedCaseBase
    shipped: bool
    retained: bool = False

    @property
    def cb(self) -> Any:
        return self.handle.cb

    @property
    def lock(self) -> Any:
        return self.handle.lock


class _Cached:
    """A bot of the policy cache: built once (the first asker builds it, the others wait for
    it), used by requests counted in ``users``, closed under its lock by the last of them
    once evicted. ``extra``: a case base opened for it that the server does not serve."""

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.policy: Any = None
        self.lock: Any = None
        self.extra: Optional[_Loaded] = None
        self.error: Optional[BaseException] = None
        self.users = 0
        self.evicted = False


class Engine:
    """The loaded case bases and the work of each endpoint; see the module docstring.

    ``casebases``: names or paths (:func:`cbr.store.resolve_casebase`), each opened once and
    warmed (every street's index and cases loaded) so the first request pays no loading.
    Raises :class:`~cbr.errors.CaseBaseError` for a missing case base or two with one name.
    A case base with a damaged Parquet part is served, its damaged street left unwarmed and
    said in :attr:`start_notes` (its queries answer 500, as for damage found at run time).
    """

    def __init__(self, casebases: Iterable[str] = ("default",), *, warm: bool = True,
                 memory_map: bool = False) -> None:
        from cbr.store.shared import open_shared

        self.memory_map = memory_map
        self.casebases: dict[str, _Loaded] = {}
        self.notes: list[str] = []
        #: The faults of compacting or closing a case base said to the operator so far (by this
        #: engine's close and by the web table's sessions, which the app hands it): each once.
        self.faults = ClosingFaults()
        #: What opening the case bases found that the operator should hear at start, one line
        #: each: a damaged Parquet part (its street refused until mended; :meth:`_damaged_streets`).
        self.start_notes: list[str] = []
        self._policies: OrderedDict[tuple[str, str], _Cached] = OrderedDict()
        self._policies_lock = threading.Lock()
        given: dict[str, str] = {}  # name -> the spec that named it
        try:
            for spec in casebases:
                handle = open_shared(spec, memory_map=memory_map)
                path = handle.path
                name = path.name  # the folder's name: a copy keeps the name its manifest was built with
                if name in self.casebases:
                    handle.release()
                    first = self.casebases[name].path
                    if first.resolve() == path.resolve():
                        raise CaseBaseError(f"the case base {path} is given twice ({given[name]!r} and {spec!r}): "
                                            "give each case base once")
                    raise CaseBaseError(f"two case bases are named {name!r} ({first} and {path}); serve one of "
                                        "them, or a copy under another name")
                given[name] = str(spec)
                self.casebases[name] = _Loaded(name, path, handle, is_shipped(path))
                with handle.lock:
                    damaged = self._damaged_streets(name, handle.cb)
                    if warm:
                        self._warm(handle.cb, skip=damaged)
        except BaseException:
            self.close()
            raise
        if not self.casebases:
            raise CaseBaseError("no case base to serve")

    def _damaged_streets(self, name: str, cb: Any) -> set[str]:
        """The streets of case base ``name`` with a damaged Parquet part (missing, cut, or unlike
        its checksum: :meth:`~cbr.store.CaseBase.check_street`), each said once in
        :attr:`start_notes` in the library's line (the part, and what mends it). Such a case
        base is served all the same, as one damaged while the server runs: its damaged street's
        queries answer 500 naming it, the other streets answer."""
        damaged = set()
        for street in STREETS:
            if not cb.count(street):
                continue
            try:
                cb.check_street(street)
            except CaseBaseError as exc:
                damaged.add(street)
                self.start_notes.append(f"case base {name!r} needs attention: {' '.join(str(exc).split())}")
        return damaged

    @staticmethod
    def _warm(cb: Any, skip: Iterable[str] = ()) -> None:
        from cbr.query.answer import action_counts

        for street in STREETS:
            if cb.count(street) and street not in skip:
                cb.index(street)  # memory-mapped: mapped, not read
                if not cb.memory_map:
                    cb.cases(street)
                    action_counts(cb, street)

    def _refuse_mapped(self, what: str) -> None:
        """:class:`ForbiddenError` for ``what`` when the case bases are served memory-mapped, in
        the words of an API user (what this server does and what the request needs; no option
        of the command that started it, which the client cannot give)."""
        if self.memory_map:
            raise ForbiddenError(f"{what} refused: this server reads its case bases from disk as they are asked "
                                 "(memory-mapped, for case bases larger than memory) and answers only /retrieve "
                                 "from them; this request needs the cases loaded in memory, which this server "
                                 "does not do")

    def close(self) -> None:
        """Close the policies and the case bases. A case base retained into (by ``/retain``, or
        by a web-table session: the app marks it as the tables close) is compacted first (its retention log moved into Parquet parts, as a match's retention
        ends); a compaction that fails leaves the cases in the log, where they are durable
        already, and is noted in :attr:`notes`, as is a case base whose closing fails (its
        grown indexes not saved); the others are closed all the same. A fault noted already (a
        web-table session's compaction that failed the same way: :attr:`faults`) is not said
        again in full: one short line says it is still there, once."""
        with self._policies_lock:
            cached = list(self._policies.values())
            self._policies.clear()
        for entry in cached:
            entry.ready.wait()  # a build in flight ends first
            _close_cached(entry)
        for loaded in self.casebases.values():
            with loaded.lock:
                try:
                    if loaded.retained:
                        loaded.cb.compact()
                except closing_errors() as exc:
                    self._note(self.faults.note(loaded.name, exc, f"case base {loaded.name!r} not compacted at the stop "
                                                                  "(what was retained stays in its retention log)"))
                finally:
                    try:  # the last reference closes it: saving its grown indexes may fail as well
                        loaded.handle.release()
                    except closing_errors() as exc:  # noted; the other case bases are closed all the same
                        self._note(self.faults.note(loaded.name, exc, f"case base {loaded.name!r} not closed cleanly"))
        self.casebases = {}

    def _note(self, note: Optional[str]) -> None:
        if note is not None:
            self.notes.append(note)

    # ---- lookups -------------------------------------------------------------------------
    def loaded(self, name: str) -> _Loaded:
        """The loaded case base ``name``; :class:`NotFoundError` listing the served ones."""
        found = self.casebases.get(name)
        if found is None:
            raise NotFoundError(f"no case base {name!r} is served here (served: {', '.join(self.casebases)})")
        return found

    @staticmethod
    def _follow(loaded: _Loaded) -> None:
        """Take the cases other processes retained (lock held)."""
        if not loaded.shipped and loaded.cb.writable:
            loaded.cb.refresh()

    # ---- retrieval -------------------------------------------------------------------------
    def decision_point(self, situation: Mapping[str, Any]) -> Any:
        """The decision point a request describes: a ``matchstate`` in its ``game``, or the
        ``cbr query`` fields (:func:`cbr.game.situation.described_situation`). The game is
        a preset name or inline GameDef JSON: the server reads no file a client names."""
        from cbr.acpc.matchstate import from_matchstate
        from cbr.game.situation import described_situation
        from cbr.game.spec import load_game
        from evaluator_ext.cards import parse_cards, parse_hole_and_board

        try:
            game = load_game(situation.get("game") or "holdem.limit.2p", files=False)
        except ConfigError as exc:
            raise FieldError("game", str(exc)) from None
        if situation.get("matchstate") is not None:
            try:
                return from_matchstate(situation["matchstate"], game)
            except (CBRError, ValueError) as exc:  # the line's own fault: the field is named
                raise FieldError("matchstate", str(exc)) from None
        hole, board = situation.get("hole"), situation.get("board")
        if hole is not None:  # (no hole: described_situation says what to give)
            for name, value in (("hole", hole), ("board", board)):
                try:  # which field a bad card is in (the situation says only which card)
                    parse_hole_and_board(value, "") if name == "hole" else parse_cards(value or "")
                except ValueError as exc:
                    raise FieldError(name, str(exc)) from None
            try:  # sizes, and a card in both
                parse_hole_and_board(hole, board or "")
            except ValueError as exc:
                raise FieldError("board", str(exc)) from None
        return described_situation(game, hole=situation.get("hole"), board=situation.get("board"),
                                   dealt=situation.get("dealt"), in_hand=situation.get("in_hand"),
                                   position=situation.get("position"), to_act=situation.get("to_act"),
                                   committed=situation.get("committed"), to_call=situation.get("to_call"),
                                   pot=situation.get("pot"), previous_round_bets=situation.get("prev_bets"))

    def retrieve(self, situation: Mapping[str, Any], dp: Any = None) -> dict[str, Any]:
        """``/retrieve``: :func:`cbr.query.answer.answer` on a served case base, as
        ``QueryAnswer.to_dict(top)`` (what ``cbr query --json`` prints; ``top`` None: every
        retrieved case, as with ``--explain``)."""
        from cbr.query.answer import answer

        loaded = self.loaded(situation.get("casebase") or "default")
        dp = dp if dp is not None else self.decision_point(situation)
        opponents = situation.get("opponents")
        with stored(loaded.name), loaded.lock:
            self._follow(loaded)
            top = situation.get("top", 5)
            try:
                ans = answer(loaded.cb, dp, weighted=situation.get("weighted"), top=_listed(top), opponents=opponents,
                             threshold=situation.get("threshold"), k=situation.get("k"),
                             min_cases=situation.get("min_cases"))
            except ConfigError as exc:
                if "min_cases" in str(exc) and situation.get("min_cases") is not None:
                    raise FieldError("min_cases", str(exc)) from None
                if opponents is None:
                    raise
                raise FieldError("opponents", str(exc)) from None
            shown = casebase_labels(loaded.cb)
        _check_listed(ans, top)
        return shown_provenance(ans.to_dict(top=top), shown)

    # ---- re-use ----------------------------------------------------------------------------
    def _policy_casebase(self, spec: str, casebase: Optional[str]) -> _Loaded:
        """The case base a case-based bot of ``/reuse`` plays from: the served ``casebase``
        when the request names one; else the bot's own choice (``cbr``: its preset's, as in
        ``cbr match`` and at the web table), served or opened for it (a name of the bot's
        own, never a file the client names: options naming files are refused before)."""
        from cbr.policies.spec import PolicySpecError, policy_from_spec
        from cbr.store.shared import open_shared

        if casebase is not None:
            return self.loaded(casebase)
        try:
            probe = policy_from_spec(spec.strip(), seed=0)  # (built, not opened: it names its case base)
        except PolicySpecError as exc:
            raise FieldError("policy", str(exc)) from None
        path = getattr(probe, "casebase_path", None)
        if path is None:  # pragma: no cover - a third-party bot with a casebase option
            return self.loaded("default")
        path = Path(path).resolve()
        for loaded in self.casebases.values():
            if loaded.path == path:
                return loaded
        with stored(path.name, bot=spec.strip()):  # a case base of the bot's own, named as the bot names it
            handle = open_shared(path, memory_map=self.memory_map)
        return _Loaded(path.name, path, handle, is_shipped(path))

    @contextmanager
    def policy(self, spec: str, casebase: Optional[str] = None) -> Iterator[tuple[Any, Any, _Loaded]]:
        """Use the bot ``spec`` names: ``(policy, lock, case base)``, the lock to take around its
        decisions (for a case-based bot, its case base's). Built once per spec and case base
        (concurrent first requests build it once) and kept in a small cache; a bot with a
        ``casebase`` option plays from the served case base ``casebase`` (None: its own, see
        :meth:`_policy_casebase`), the one open handle of it; options naming server files are
        refused. A bot evicted meanwhile is closed when the last request using it is done."""
        from cbr.policies.spec import PolicySpecError, policy_from_spec, policy_options

        name, _ = checked_spec(spec, "policy", "the case base comes from the request's casebase field")
        valid = policy_options(name)
        case_based = "casebase" in valid
        if case_based:
            self._refuse_mapped(f"policy {name!r} (a case-based bot)")
            where = self._policy_casebase(spec, casebase)
        else:  # the retrieval's: the one named, else default (or the first served)
            where = self.loaded(casebase or ("default" if "default" in self.casebases else next(iter(self.casebases))))
        key = (spec.strip(), str(where.path) if case_based else "")
        extra = where if self.casebases.get(where.name) is not where else None  # opened for this request
        with self._policies_lock:
            entry = self._policies.get(key)
            build = entry is None
            if build:
                entry = self._policies[key] = _Cached()
                entry.extra, extra = extra, None  # the entry holds that reference until it is closed
            else:
                self._policies.move_to_end(key)
            entry.users += 1
        if extra is not None:  # the entry holds a reference of its own
            extra.handle.release()
        where = entry.extra or where
        try:
            if build:
                try:
                    policy = policy_from_spec(spec.strip(), seed=0, casebase=where.handle if case_based else None)
                    entry.policy, entry.lock = policy, where.lock if case_based else threading.Lock()
                except PolicySpecError as exc:
                    entry.error = FieldError("policy", str(exc))
                except BaseException as exc:
                    entry.error = exc
                    if case_based and storage_fault(exc):  # its case base's storage: the server's fault (500)
                        entry.error = StorageError(where.name, exc, bot=spec.strip() if casebase is None else None)
                        entry.error.__cause__ = exc
                finally:
                    if entry.error is not None:  # not kept: the last request waiting lets go of it
                        with self._policies_lock:
                            if self._policies.get(key) is entry:
                                del self._policies[key]
                            entry.evicted = True
                    entry.ready.set()
                self._evict()
            else:
                entry.ready.wait()
            if entry.error is not None:
                raise entry.error
            yield entry.policy, entry.lock, (entry.extra or where)
        finally:
            with self._policies_lock:
                entry.users -= 1
                close = entry.evicted and entry.users == 0
            if close:
                _close_cached(entry)

    def _evict(self) -> None:
        """Drop the least recently used bots beyond :data:`POLICY_CACHE`: each is closed now,
        under its lock, or by the last request still using it."""
        closing = []
        with self._policies_lock:
            while len(self._policies) > POLICY_CACHE:
                _, old = self._policies.popitem(last=False)
                old.evicted = True
                if old.users == 0:
                    closing.append(old)
        for old in closing:
            _close_cached(old)

    def reuse(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``/reuse``: the retrieval of ``/retrieve`` and the action the policy ``request["policy"]``
        takes there, drawn with ``request["seed"]`` (same seed, same case base contents: same
        action), with the decision's explanation (for the ``cbr`` bot: the ids of the ``top``
        most similar cases it retrieved). A case-based bot and the retrieval use the request's
        ``casebase``, or, when it names none, the bot's own (``cbr``: ``expert``, as everywhere)."""
        from cbr.game.actions import ACTION_WORDS
        from cbr.query.answer import answer, explain_decision

        if request.get("opponents") is not None:
            raise FieldError("opponents", "opponents applies to /retrieve only: a case-based bot keeps its own "
                                          "models of the players it meets")
        spec = request.get("policy") or "cbr"
        seed = int(request.get("seed") or 0)
        top = request.get("top", 5)
        dp = self.decision_point(request)
        rng = random.Random(f"cbr-serve:{seed}")
        chosen = request.get("casebase")
        with self.policy(spec, chosen) as (policy, lock, loaded), \
                stored(loaded.name, bot=_bots_own(policy, spec, chosen)):
            with loaded.lock:  # a part of the street damaged since it was loaded: refused, not answered from memory
                loaded.cb.check_street(dp.street)
            with lock:
                if getattr(policy, "can_retain", False):  # a case-based bot: its decision record
                    policy.open().refresh()  # what was retained since (a bot with a handle of its own)
                made = policy.decide(dp, rng)
                d = made if getattr(made, "vote", None) is not None else None  # cases voted (not another expert)
                if d is not None:
                    ids = [int(i) for i in (d.case_ids if top is None else d.case_ids[:top])]
                    decision = {"action": d.action, "street": d.street, "triple": _triple(d.triple),
                                "played": _triple(d.played), "reuse": d.reuse, "why": d.explanation,
                                "retrieved": d.retrieved, "fallback": d.fallback, "case_ids": ids,
                                "case_ids_cut": _case_ids_cut(len(ids), d.retrieved, top),
                                "similarity": _number(d.similarity)}
                else:
                    triple = made.played if made.played is not None else policy.triple(dp)
                    decision = {"action": made.action, "triple": _triple(triple)}
            with loaded.lock:
                self._follow(loaded)
                if (d is not None and d.casebase is loaded.cb and request.get("weighted") is None
                        and request.get("threshold") is None and request.get("k") is None
                        and request.get("min_cases") is None
                        and getattr(policy, "similarity", None) is None and top is not None
                        and top <= len(d.case_ids)):
                    # the retrieval the decision was made from: not retrieved a second time
                    out = explain_decision(d, top=top).to_dict(top=top)
                else:
                    try:
                        ans = answer(loaded.cb, dp, weighted=request.get("weighted"), top=_listed(top),
                                     threshold=request.get("threshold"), k=request.get("k"),
                                     min_cases=request.get("min_cases"))
                        _check_listed(ans, top)
                        out = ans.to_dict(top=top)
                    except ConfigError as exc:
                        if "min_cases" in str(exc) and request.get("min_cases") is not None:
                            raise FieldError("min_cases", str(exc)) from None
                        raise
                shown_provenance(out, casebase_labels(loaded.cb))
        out.update({"policy": spec, "seed": seed, "action": decision["action"],
                    "action_word": ACTION_WORDS.get(decision["action"], decision["action"]), "decision": decision})
        return out

    def policies(self) -> list[dict[str, Any]]:
        """``/policies``: the installed ``cbr.policies`` plugins and the options a request may
        give each, with their defaults (None: set otherwise, e.g. by the ``cbr`` bot's preset);
        the options naming files on the server, which requests may not give, are listed apart
        (``server_only``); an option a request may give by the name of a shipped file
        (:data:`SHIPPED_NAMED`: ``cfr``'s ``strategy``, ``adapt``'s ``styles``) is among
        ``options``, and ``shipped`` lists the names it takes; ``option_help`` says what each
        listed option means, in the one line of the bot's ``OPTION_HELP`` table that ``cbr
        plugins list`` shows ("" when the bot gives none); ``presets``, for a bot that has them (``cbr``), what each ``preset=NAME``
        sets, as ``cbr plugins list --json`` gives it."""
        from cbr.plugins import available
        from cbr.policies.spec import policy_option_help, policy_options, policy_presets

        out = []
        for name in available("cbr.policies"):
            try:
                everything, helps, presets = policy_options(name), policy_option_help(name), policy_presets(name)
                error = None
            except CBRError as exc:  # installed but broken: listed with the reason
                everything, helps, presets, error = {}, {}, {}, str(exc).splitlines()[0]
            refused = [k for k in everything if k in PATH_OPTIONS and k not in SHIPPED_NAMED]
            options = {k.replace("_", "-"): _plain(v) for k, v in everything.items() if k not in refused}
            server_only = [k.replace("_", "-") for k in refused]
            shipped = {k.replace("_", "-"): shipped_names(k) for k in everything if k in SHIPPED_NAMED}
            option_help = {k.replace("_", "-"): helps.get(k, "") for k in everything if k not in refused}
            option_help.update({k.replace("_", "-"): helps.get(k, "") for k in refused})
            out.append({"name": name, "options": options, **({"server_only": server_only} if server_only else {}),
                        **({"shipped": shipped} if shipped else {}),
                        "option_help": option_help, **({"presets": presets} if presets else {}),
                        **({"error": error} if error else {})})
        return out

    # ---- retention -------------------------------------------------------------------------
    def retain(self, casebase: str, text: str, *, log_format: str = "acpc", game: Optional[str] = None,
               deadline: Optional[Deadline] = None) -> dict[str, Any]:
        """``/retain``: every decision with known hole cards of the hands in ``text`` (ACPC
        ``STATE:`` lines or PHH, in ``game`` when given: a preset name or inline JSON), kept
        in the served case base ``casebase`` as ONE durable commit of its retention log (all
        hands or none). Refuses the shipped case bases and read-only ones
        (:func:`cbr.play.retention.check_retention_target`)."""
        from cbr.game.spec import load_game
        from cbr.play.retention import Retainer, check_retention_target

        loaded = self.loaded(casebase)
        self._refuse_mapped("retention")
        # in the words of the web table's refusals: case bases by their served names, no server
        # path, no command to run (a client cannot run one on the server)
        writable = [n for n, c in self.casebases.items() if not c.shipped and os.access(c.path, os.W_OK)]
        elsewhere = (f"retain into a writable case base this server serves ({', '.join(writable)})"
                     if writable else "this server serves no writable case base")
        if loaded.shipped:
            raise ForbiddenError(f"retention refused: the shipped case base {loaded.name!r} is never written to; "
                                 f"{elsewhere}")
        try:
            check_retention_target(loaded.path)  # the shipped default, a read-only directory
        except CaseBaseError:
            raise ForbiddenError(f"retention refused: case base {loaded.name!r} is read-only on the server; "
                                 f"{elsewhere}") from None
        try:
            gamedef = load_game(game, files=False) if game else None
        except ConfigError as exc:  # as /retrieve refuses it: the field's own
            raise FieldError("game", str(exc)) from None
        records = _parse_hands(text, log_format, gamedef)
        with stored(loaded.name):
            retainer = Retainer(loaded.cb, keep=range(32), names=())
            replayed = _replayed(retainer, records)  # outside the lock: retrievals go on meanwhile
        with loaded.lock:
            with stored(loaded.name):
                self._follow(loaded)
            with stored(loaded.name, writing=True):
                kept = retainer.retain_hands(replayed, before_write=deadline.begin_write if deadline else None)
            loaded.retained = loaded.retained or kept > 0
            after = {s: loaded.cb.count(s) for s in STREETS}
        # this request's cases street by street (no gate: every replayed decision is kept), not the
        # counts' difference, which takes in what another worker wrote meanwhile (cbr serve --workers)
        added = dict.fromkeys(STREETS, 0)
        for dp in replayed.dps if kept else ():
            added[STREETS[dp.street]] += 1
        return {"casebase": loaded.name, "hands": len(records), "hands_with_cases": retainer.hands,
                "cases": kept, "match_id": retainer.match_id, "added": added, "counts": after}

    # ---- case bases ------------------------------------------------------------------------
    def list_casebases(self) -> list[dict[str, Any]]:
        """``/casebases``: each served case base by the name it is served under, with its counts
        per street; no path on the server (as :meth:`inspect`)."""
        out = []
        for loaded in self.casebases.values():
            with stored(loaded.name), loaded.lock:
                self._follow(loaded)
                counts = {s: loaded.cb.count(s) for s in STREETS}
                m = loaded.cb.manifest
                out.append({"name": loaded.name, "feature_set": m.feature_set,
                            "counts": counts, "total": sum(counts.values()), "shipped": loaded.shipped,
                            "writable": (not loaded.shipped) and loaded.cb.writable})
        return out

    def inspect(self, name: str) -> dict[str, Any]:
        """``/casebases/{name}``: :func:`cbr.store.inspect` (``cbr casebase inspect --json``)
        and the similarity configuration, through a handle of its own; ``name`` is the name it
        is served under (as ``/casebases`` lists it), ``built_as`` the manifest's when another.
        No path on the server: the case base's folder (``path``) and where each source log was
        read (``source_files``' ``path``) are left out; a case base is named by ``name``, a log
        by its ``source``, the label its cases carry (as ``/retrieve``'s provenance gives it), an
        absolute label by its file's name (:mod:`cbr.serve.labels`); a path in ``games`` or
        ``warnings`` is shown by the same rule (:func:`~cbr.serve.labels.shown_text`)."""
        from cbr.store import CaseBase, inspect

        loaded = self.loaded(name)
        with stored(loaded.name), CaseBase.open(loaded.path) as cb:
            info = inspect(cb)
            shown = casebase_labels(cb)
            config = cb.similarity()
            info["similarity_config"] = {
                "threshold": _number(config.threshold), "weighted_triple": bool(config.weighted_triple),
                "streets": {s: config.street(s).to_dicts() for s in STREETS}}
        if info.get("name") != loaded.name:  # served under its folder's name, as /casebases lists it
            info["built_as"] = info.get("name")
        info["name"] = loaded.name
        info["shipped"] = loaded.shipped
        info.pop("path", None)
        info["source_files"] = [{k: (shown_label(v, shown) if k == "source" else v) for k, v in e.items() if k != "path"}
                                for e in info.get("source_files", ())]
        info["sources"] = {shown_label(k, shown): v for k, v in (info.get("sources") or {}).items()}
        # a game's name and a warning may carry a path too (a game named by a path in a log's
        # '# game:' header; the case base's own folder): as the sources are shown
        named = {str(loaded.path): loaded.name, str(Path(loaded.path).resolve()): loaded.name}
        info["games"] = [shown_text(g, shown, named) if isinstance(g, str) else g for g in info.get("games", ())]
        info["warnings"] = [shown_text(str(w), shown, named) for w in info.get("warnings", ())]
        return info

    def evaluate(self, name: str, *, folds: int = 3, max_decisions: int = 100, seed: int = 0, ann: bool = False,
                 deadline: Optional[Deadline] = None) -> dict[str, Any]:
        """``/evaluate``: a k-fold hold-out evaluation (:func:`cbr.query.evaluate.evaluate_casebase`)
        of at most ``max_decisions`` decisions per street (capped at :data:`MAX_EVALUATE_DECISIONS`),
        stopped at the deadline. With ``ann`` it runs in a process of its own, killed at the
        deadline (training the predictor cannot stop between steps), one at a time per server
        process (:func:`_evaluate_apart`). ``casebase`` in the report is the name it is served
        under (as ``/casebases`` lists it), ``built_as`` the manifest's when another."""
        from cbr.query.evaluate import evaluate_casebase
        from cbr.store import CaseBase

        if not 1 <= max_decisions <= MAX_EVALUATE_DECISIONS:
            raise ConfigError(f"max_decisions is 1..{MAX_EVALUATE_DECISIONS}, got {max_decisions}")
        loaded = self.loaded(name)
        self._refuse_mapped("evaluation")
        if ann:
            report = _evaluate_apart(loaded.path, folds=folds, max_decisions=max_decisions, seed=seed,
                                     deadline=deadline, name=loaded.name)
        else:
            with stored(loaded.name), CaseBase.open(loaded.path) as cb:
                report = evaluate_casebase(cb, folds=folds, seed=seed, max_decisions=max_decisions, ann=ann,
                                           progress=deadline.check if deadline else None).to_dict()
        if report.get("casebase") != loaded.name:  # served under its folder's name, as /inspect says it
            report["built_as"] = report.get("casebase")
        report["casebase"] = loaded.name
        return report


#: One evaluation with the ANN at a time per server process (each is a process of its own).
_ANN_EVALUATION = threading.Semaphore(1)


def _evaluate_apart(path: Path, *, folds: int, max_decisions: int, seed: int,
                    deadline: Optional[Deadline], name: str) -> dict[str, Any]:
    """An evaluation with the ANN (``evaluate_casebase(..., ann=True)``, its report as a dict)
    in a child process, killed once ``deadline`` passes or the request is given up: the pool's
    thread and the cores are free again at the time limit, not tens of seconds later. A second
    one while one runs is refused (:class:`TimeLimitError`, 503: try again later). A fault of
    the case base's files is a :class:`StorageError` naming it ``name`` (its served name)."""
    import multiprocessing

    if not _ANN_EVALUATION.acquire(blocking=False):
        raise TimeLimitError("an evaluation with the ANN is under way on this server (one at a time); "
                             "try again when it is done")
    try:
        ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: no copy of the server's threads
        receive, send = ctx.Pipe(duplex=False)
        seconds = None if deadline is None or deadline.end is None else max(0.0, deadline.end - time.monotonic())
        child = ctx.Process(target=_evaluate_child,
                            args=(send, str(path), folds, max_decisions, seed, seconds, os.getpid()),
                            name="cbr-serve-evaluate", daemon=True)
        child.start()
        send.close()
        try:
            while not receive.poll(0.1):
                if deadline is not None:
                    deadline.check()  # over the limit, or given up: the child is killed below
                if not child.is_alive() and not receive.poll(0):
                    raise CBRError(f"the evaluation's process ended without an answer (exit code {child.exitcode})")
            kind, value = receive.recv()
        finally:
            if child.is_alive():
                child.kill()
            child.join(10)
            receive.close()
    finally:
        _ANN_EVALUATION.release()
    if kind == "ok":
        return value  # type: ignore[no-any-return]
    error_class, message = value
    if kind == "storage":  # a fault of the case base's files (``name``, as served), found in the child
        raise StorageError(name, CaseBaseError(message))
    if kind == "error" and isinstance(error_class, type) and issubclass(error_class, CBRError):
        try:
            raise error_class(message)
        except TypeError:  # a class of another signature: its message is what counts
            pass
        raise CBRError(message)
    raise RuntimeError(message)


def _evaluate_child(conn: Any, path: str, folds: int, max_decisions: int, seed: int,
                    seconds: Optional[float], parent: int) -> None:
    """The child of :func:`_evaluate_apart`: sends ``("ok", report)``, ``("error", (class,
    message))`` for a :class:`CBRError`, ``("storage", (class, message))`` for a fault of the
    case base's files (:func:`storage_fault`) or ``("bug", (None, text))``. It ignores Ctrl-C (the
    server's, sent to its process group: the server kills it when it gives the request up) and
    ends itself if the server (``parent``, its pid recorded before the child started) goes away,
    also before the child could watch it, or once the time limit passed long ago
    (:func:`cbr.build.parent.die_with_parent`)."""
    import signal

    from cbr.build.parent import die_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    end = None if seconds is None else time.monotonic() + seconds + 5.0
    die_with_parent(parent, until=end)
    try:
        from cbr.query.evaluate import evaluate_casebase
        from cbr.store import CaseBase

        with CaseBase.open(path) as cb:
            ev = evaluate_casebase(cb, folds=folds, seed=seed, max_decisions=max_decisions, ann=True)
        conn.send(("ok", ev.to_dict()))
    except (CBRError, OSError) as exc:
        conn.send(("storage" if storage_fault(exc) else "error", (type(exc), str(exc))))
    except Exception as exc:  # a bug: the server answers 500 with it
        conn.send(("bug", (None, f"{type(exc).__name__}: {exc}")))
    finally:
        conn.close()


def _parse_hands(text: str, log_format: str, game: Any) -> list[Any]:
    """The hands of log ``text`` (``acpc`` or ``phh``); the first unreadable hand is a
    :class:`LogFormatError` naming its line; at most :data:`MAX_RETAIN_HANDS` hands."""
    from cbr.logs.acpc import AcpcParser
    from cbr.logs.phh import PhhParser
    from cbr.logs.record import ParseIssue

    if log_format == "acpc":
        # (the game given as the parser's, not as a header line before the text: the lines keep their numbers)
        items = AcpcParser().parse_text(text if text.endswith("\n") else text + "\n", "request", game=game,
                                        game_from=GAME_FROM)
    elif log_format == "phh":
        if game is not None:
            raise FieldError("game", "a PHH hand names its own game (variant, blinds): leave out game")
        items = PhhParser().parse_text(text, "request")
    else:
        raise ConfigError(f"unknown hand format {log_format!r}; use acpc or phh")
    records = []
    for item in items:
        if isinstance(item, ParseIssue):  # a hand the request's game does not seat is about that field
            if game is not None and GAME_FROM in item.reason:
                raise FieldError("game", str(item))
            raise LogFormatError(str(item))
        records.append(item)
        if len(records) > MAX_RETAIN_HANDS:
            raise LogFormatError(f"more than {counted(MAX_RETAIN_HANDS, 'hand')} in one request; send them in parts")
    if not records:
        raise LogFormatError(f"no hand found in the {log_format} text")
    for r in records:
        if r.game.betting != "limit":
            message = f"hand {r.hand_id} is {r.game.betting}: the case bases hold limit hands"
            raise FieldError("game", message) if game is not None else GameError(message)
    return records


def _replayed(retainer: Any, records: list[Any]) -> Any:
    """``retainer.replay_hands(records)``; a hand the rules engine refuses is named as every
    command names a skipped hand (:func:`cbr.logs.record.skipped_hand`: ``request:LINE: (hand
    ID): problem``, the line of the request's ``text`` where the hand starts and the hand's own
    number in the log), not in the engine's ``request:LINE (hand ID)``."""
    from cbr.logs.record import skipped_hand

    try:
        return retainer.replay_hands(records)
    except GameError as exc:
        text = str(exc)
        hand = next((r for r in records if text.startswith(f"{r.where} ")), None)
        if hand is None:
            raise
        raise GameError(str(skipped_hand(hand, exc))) from None


def _listed(top: Optional[int]) -> int:
    """The ``top`` to retrieve with for a request's ``top``: null (every retrieved case) lists
    at most :data:`MAX_ANSWER_CASES` (:func:`_check_listed` refuses an answer with more)."""
    return MAX_ANSWER_CASES if top is None else top


def _check_listed(ans: Any, top: Optional[int]) -> None:
    """:class:`FieldError` on ``top`` when ``top`` is null and more cases were retrieved than
    an answer lists (:data:`MAX_ANSWER_CASES`); the retrieval's counts cost no listing."""
    if top is None and ans.retrieved > MAX_ANSWER_CASES:
        raise FieldError("top", f"top null lists every retrieved case, and {ans.retrieved:,} were retrieved: an "
                                f"answer lists at most {counted(MAX_ANSWER_CASES, 'case')}; give top (the triple and the "
                                "counts come from every retrieved case whatever top is), or retrieve fewer "
                                "(a higher threshold, a lower k or min_cases)")


def _case_ids_cut(listed: int, retrieved: int, top: Optional[int]) -> Optional[str]:
    """What ``/reuse``'s ``decision.case_ids`` says when it lists fewer cases than ``top`` asks
    for (null: every retrieved case) and than the decision retrieved: a decision records only
    its most similar cases (:data:`cbr.policies.cbr_policy.DECISION_CASES`, 100); None when
    it lists what was asked.

    >>> _case_ids_cut(100, 572, None)
    'the 100 most similar of the 572 cases the decision retrieved: a decision records at most its 100 most similar (its triple and counts come from all of them)'
    >>> _case_ids_cut(5, 572, 5) is None, _case_ids_cut(40, 40, None) is None
    (True, True)
    """
    wanted = retrieved if top is None else min(top, retrieved)
    if listed >= wanted:
        return None
    return (f"the {listed:,} most similar of the {counted(retrieved, 'case')} the decision retrieved: a decision records "
            f"at most its {listed:,} most similar (its triple and counts come from all of them)")


def _triple(t: Any) -> dict[str, float]:
    return {"fold": float(t[0]), "check_call": float(t[1]), "bet_raise": float(t[2])}


def _number(x: Any) -> Optional[float]:
    """A float for JSON (NaN and infinities as None)."""
    import math

    v = float(x)
    return v if math.isfinite(v) else None


def _plain(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return _number(v)
    if isinstance(v, (os.PathLike,)):
        return os.fspath(v)
    return str(v)


def _bots_own(policy: Any, spec: str, chosen: Optional[str]) -> Optional[str]:
    """The spec of ``policy`` when it plays from a case base of its own choice (a case-based bot
    in a request that named no case base: the ``cbr`` bot's ``expert``); None when the case base
    is the one the request chose, or the server's (a bot that plays from none)."""
    if chosen is not None or getattr(policy, "casebase_path", None) is None:
        return None
    return spec.strip()


def _close_cached(entry: _Cached) -> None:
    """Close a cached bot under its lock, then let go of the case base opened for it."""
    try:
        if entry.policy is not None:
            with entry.lock:
                _close_policy(entry.policy)
    finally:
        if entry.extra is not None:
            entry.extra.handle.release()


def _close_policy(policy: Any) -> None:
    close: Optional[Callable[[], None]] = getattr(policy, "close", None)
    if close is not None:
        try:
            close()
        except CBRError:  # pragma: no cover - closing is best effort at shutdown
            pass
