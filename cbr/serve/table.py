"""The web table of ``cbr serve``: a person plays limit hold'em against bots in a browser.

Each :class:`TableSession` is one person's table, kept on the server under an unguessable id
(:class:`TableSessions`: at most ``max_sessions``, each dropped after ``ttl`` seconds without
a request). The hands are played at the one table loop of :mod:`cbr.play.table`
(:class:`~cbr.play.table.Table`, as ``cbr match`` and ``cbr play --human`` play them): the
person sits in seat 0, the bots (policy specs) in seats 1..5, positions rotate one seat a
hand, and deal ``k`` of the session's seed has the cards
:func:`~cbr.play.table.deal_cards` gives. A hand runs in a thread of its own that waits at
the person's turns; the bots act server-side when it is their turn, so every request that
starts a hand or takes the person's action answers once the person is to act again or the
hand is over.

What the person is sent (:meth:`TableSession.view`) is what a player at a real table sees:
their own cards, the board, the bets, and a bot's cards only when they go to a showdown. A
case-based bot's reasons (its triple, the re-use rule, the retrieved cases with their
per-feature similarities: :meth:`TableSession.explain`) are released when the hand is over,
since the features of a decision tell the strength of the bot's cards.

Nothing here prints or knows HTTP; errors are :class:`~cbr.errors.CBRError` subclasses the
app maps to statuses (:class:`~cbr.serve.engine.NotFoundError` 404, a bad action or option
422, :class:`TableStateError` 409, a fault of a case base's storage
:class:`~cbr.serve.engine.StorageError` 500, naming it as the client knows it).
"""
from __future__ import annotations

import math
import re
import secrets
import threading
import time
from collections import OrderedDict
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from cbr.errors import CBRError, GameError, counted, exception_chain
from cbr.game.actions import KIND_OF_WORD
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import STREETS
from cbr.game.spec import default_game
from cbr.game.state import HandState
from cbr.play.human import action_text, position_labels
from cbr.play.table import (
    LEAVE,
    PlayedHand,
    PolicySeat,
    Seat,
    Table,
    Watcher,
    act_rng,
    check_seats,
    resolve_players,
    seat_names,
)
from cbr.policies.base import Policy
from cbr.serve.engine import (
    ClosingFaults,
    FieldError,
    ForbiddenError,
    NotFoundError,
    StorageError,
    checked_spec,
    closing_errors,
    storage_fault,
    stored,
)
from cbr.serve.labels import casebase_labels, shown_provenance
from cbr.stats import mean_ci
from evaluator_ext.cards import card_str

__all__ = ["TableSession", "TableSessions", "SharedBots", "TableStateError", "duration_text", "MAX_SESSIONS", "SESSION_TTL", "MAX_BOTS",
           "MAX_SESSION_HANDS", "CASES_SHOWN"]

#: Table sessions a server keeps at once (a new one beyond it is refused while all are fresh).
MAX_SESSIONS = 32
#: Seconds a session is kept without a request.
SESSION_TTL = 3600.0
#: Bots at one table (with the person: 2 to 6 players).
MAX_BOTS = 5
#: Hands one session may play (its log and its per-hand results stay in memory).
MAX_SESSION_HANDS = 5000
#: Retrieved cases shown in a decision's panel.
CASES_SHOWN = 20
#: Seconds a request waits for the bots to reach the person's turn (they take milliseconds).
BOT_WAIT = 60.0

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


_UNITS = (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1))


def duration_text(seconds: float) -> str:
    """A duration as people say it: whole days, hours, minutes and seconds, each unit only
    when it is not 0 (seconds rounded to a whole; under a second as given).

    >>> duration_text(5), duration_text(120), duration_text(5400), duration_text(3600), duration_text(3661.4)
    ('5 seconds', '2 minutes', '1 hour 30 minutes', '1 hour', '1 hour 1 minute 1 second')
    >>> duration_text(0.5), duration_text(90061)
    ('0.5 seconds', '1 day 1 hour 1 minute 1 second')
    """
    if seconds < 1:
        return f"{seconds:g} seconds"
    left = round(seconds)
    parts = []
    for unit, size in _UNITS:
        n, left = divmod(left, size)
        if n:
            parts.append(counted(n, unit))
    return " ".join(parts)


class TableStateError(CBRError):
    """A request that does not fit the table's moment: an action when it is not the
    person's turn, a new hand while one is being played (HTTP 409)."""


def _cards(cards: Sequence[int] | None) -> list[str]:
    return [card_str(c) for c in cards] if cards else []


def _number(x: float) -> Optional[float]:
    return float(x) if math.isfinite(x) else None


@dataclass
class BotDecision:
    """A bot's decision at the table: who, where, what, and (for the case-based bot) the
    decision point and the bot's reasons, kept for :meth:`TableSession.explain`."""

    id: int
    hand: int
    seat: int
    name: str
    street: str
    action: str
    dp: DecisionPoint
    policy: Policy
    decision: Any = None  # a CBRDecision, for the case-based bot
    lock: Any = field(default_factory=nullcontext)  # taken around the policy's use (a shared bot)


class _BotSeat(PolicySeat):
    """A bot's seat that keeps every decision for the session (the case-based bot's with its reasons)."""

    def __init__(self, policy: Policy, rng: Any, seat: int, name: str, session: "TableSession",
                 lock: Any = None) -> None:
        super().__init__(policy, rng)
        self.seat, self.name, self.session = seat, name, session
        self.lock = lock if lock is not None else nullcontext()

    def decide(self, state: HandState, dp: DecisionPoint) -> Any:
        with self.lock, self.session.stored(self.policy):
            decision = self.policy.decide(dp, self.rng)
        s = self.session
        # a case-based bot's record, or the adaptive bot's choice of another expert (which says why)
        reasons = decision if getattr(decision, "vote", None) is not None or hasattr(decision, "expert") else None
        s.bot_decisions.append(BotDecision(len(s.bot_decisions), s.hand_number, self.seat, self.name,
                                           STREETS[state.street], decision.action, dp, self.policy, reasons,
                                           self.lock))
        return decision

    def act(self, state: HandState, dp: DecisionPoint) -> str:
        return self.decide(state, dp).action

    def observe(self, record: Any, position: int) -> None:
        with self.lock, self.session.stored(self.policy):
            self.policy.observe(record, position)


class _Person(Seat, Watcher):
    """The person's seat (waits for the action a request brings) and the table as they see it."""

    def __init__(self, session: "TableSession") -> None:
        self.session = session
        self.cv = threading.Condition()
        self.state: Optional[HandState] = None
        self.order: Sequence[int] = ()
        self.you = 0
        self.labels: list[str] = []
        self.history: list[list[dict[str, Any]]] = []
        self.waiting: Optional[str] = None   # the legal actions while the person is to act
        self.to_call = 0.0                   # and the chips they have to call then
        self.answer: Optional[str] = None
        self.leaving = False

    # ---- the seat
    def act(self, state: HandState, dp: DecisionPoint) -> str:
        with self.cv:
            self.waiting, self.to_call = dp.legal, state.to_call
            self.cv.notify_all()
            while self.answer is None and not self.leaving:
                self.cv.wait()
            kind = self.answer if self.answer is not None else LEAVE
            self.answer = None
            self.waiting = None
        if kind != LEAVE:
            self.session.person_decisions += 1
        return kind

    # ---- the table
    def dealt(self, k: int, state: HandState, seats: Sequence[int]) -> None:
        self.state = state
        self.order = seats
        self.you = list(seats).index(0)
        self.labels = position_labels(state)
        self.history = [[] for _ in STREETS]

    def acting(self, state: HandState, position: int, kind: str) -> None:
        s = self.session
        verb, _, rest = action_text(state, kind).partition(" ")
        if position == self.you:  # "you call 10", "cbr calls 10"
            verb = verb[:-1]
        text = f"{state.players[position]} {verb}" + (f" {rest}" if rest else "")
        entry: dict[str, Any] = {"seat": self.order[position], "name": state.players[position],
                                 "action": kind, "text": text}
        if position != self.you:
            entry["decision"] = len(s.bot_decisions) - 1  # the bot's seat recorded it just now
        self.history[state.street].append(entry)


@dataclass
class _HandResult:
    number: int
    won: list[float]            # chips per seat
    record: Any                 # the full record (every hole card)


@dataclass
class TableSession:
    """One person's table; see the module docstring. Build it with :meth:`create`."""

    id: str
    bots: list[str]
    names: list[str]
    seed: int
    policies: list[Policy]
    retain_into: Optional[str] = None
    shared: dict[int, Any] = field(default_factory=dict)  # seat -> the lock of a bot shared between sessions
    locks: dict[int, Any] = field(default_factory=dict)  # seat -> the lock of the server's case base its own bot plays from
    retainers: list[Any] = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock)
    touched: float = field(default_factory=time.monotonic)
    hand_number: int = -1
    results: list[_HandResult] = field(default_factory=list)
    bot_decisions: list[BotDecision] = field(default_factory=list)
    person_decisions: int = 0
    error: Optional[str] = None
    #: the storage fault that ended the hand (:class:`~cbr.serve.engine.StorageError`), raised
    #: once to the request waiting for the hand (a 500), as ``error`` says it to the view
    fault: Optional[BaseException] = None
    closed: bool = False
    #: what went wrong as the session ended, for the server's operator (a compaction of the hands
    #: it retained that failed, with the path and the library's words): :class:`TableSessions`
    #: says them at once (its ``on_note``) or, for the sessions closed as the server stops, keeps
    #: them for the server to show then
    notes: list[str] = field(default_factory=list)
    #: the same, in the client's words (the case base by the name the client gave, no path): the
    #: answer to the request that closed the session says them (``DELETE /table/sessions/{id}``)
    closing_warnings: list[str] = field(default_factory=list)
    #: the server's case bases a bot's report may name by path (``played_by``, ``why``), by the
    #: name the client knows: a served case base's, and the retained-into copy's ``retain_into``
    called: dict[str, str] = field(default_factory=dict)
    #: the faults of compacting the case bases said to the operator (the server's: each said
    #: once, :class:`~cbr.serve.engine.ClosingFaults`); None: this session's own
    faults: Optional[ClosingFaults] = None

    # ---- building ------------------------------------------------------------------------
    @classmethod
    def create(cls, bots: Sequence[str], *, seed: Optional[int] = None, name: str = "you",
               retain_into: Optional[str] = None, shared: Optional["SharedBots"] = None,
               served: Optional[Mapping[str, Any]] = None, field: str = "bots") -> "TableSession":
        """A new table of the person and ``bots`` (1..5 policy specs; options naming server
        files are refused). ``retain_into``: a case-base name (a served case base's: that one,
        :func:`_start_retention`; another: ``./casebases/NAME`` on the
        server, a copy of the first case-based bot's case base made on first use) that keeps
        every hand: the bot's decisions and the person's (a person teaches the bot).
        ``shared``: case-based bots that do not retain are taken from it (one open case base
        for every session) instead of built for this session. ``served``: the case bases the
        server serves (name -> :class:`~cbr.store.shared.SharedCaseBase`), which a bot's
        ``casebase`` option may name (``cbr:casebase=mine``): the bot plays that open one.
        ``field``: the request's name of ``bots`` (``bots`` or ``players``), which a refusal names.

        A bad spec, an unknown bot, and a bot that cannot play at a table of this many
        (:func:`~cbr.play.table.seat_refusal`: the cfr bot at three or more, in the words of
        ``cbr match --players``) are a :class:`FieldError` on ``field``, before a hand is dealt."""
        from cbr.policies.spec import PolicySpecError

        if not 1 <= len(bots) <= MAX_BOTS:
            raise FieldError(field, f"a table seats 1 to {counted(MAX_BOTS, 'bot')} beside you, got {len(bots)}")
        given: list[Any] = []  # the served case base a spec names, or None
        for spec in bots:
            rest, handle = _served_spec(spec, served or {})
            checked_spec(rest, field, "the bots play from their shipped case bases or a case base the server "
                                      f"serves ({', '.join(served or {}) or 'none'})")  # an unknown bot too
            given.append((rest, handle))
        if retain_into is not None and not _NAME.match(retain_into):
            raise FieldError("retain_into", f"retain_into must be a case-base name (letters, digits, '-' and '_', "
                                            f"at most 64), got {retain_into!r}")
        if not _NAME.match(name):
            raise FieldError("name", f"name must be letters, digits, '-' and '_' (at most 64), got {name!r}")
        seed = secrets.randbelow(2**31) if seed is None else seed
        try:
            players: list[Any] = []
            for i, (spec, (rest, handle)) in enumerate(zip(bots, given), start=1):
                if handle is None:
                    players.append(spec)
                    continue
                from cbr.play.table import seat_seed
                from cbr.policies.spec import policy_from_spec

                served_name = next(n for n, h in (served or {}).items() if h is handle)
                with stored(served_name):
                    bot = policy_from_spec(rest, seed=seat_seed(seed, i), casebase=handle)
                bot.spec = spec.strip()  # type: ignore[attr-defined]
                players.append(bot)
            policies = resolve_players(players, seed, first_seat=1)
        except (PolicySpecError, ValueError) as exc:
            raise FieldError(field, str(exc).splitlines()[0]) from None
        try:  # before a hand: a heads-up bot at a bigger table failed at its first decision
            check_seats(policies, len(policies) + 1)
        except GameError as exc:
            for p in policies:
                close = getattr(p, "close", None)
                if callable(close):
                    close()
            raise FieldError(field, str(exc)) from None
        names = [name, *seat_names(policies)]
        if name in names[1:]:
            names[0] = f"{name}-person"
        session = cls(secrets.token_urlsafe(24), list(bots), names, seed, policies, retain_into=retain_into)
        try:
            for i, p in enumerate(policies):
                with session.stored(p):
                    hit = shared.get(bots[i], p) if shared is not None and retain_into is None else None
                    if hit is not None:
                        policies[i], session.shared[i + 1] = hit
                    else:
                        p.reset()
                        lock = getattr(p, "_table_lock", None)  # a bot of the session's on the server's case base
                        if lock is not None:
                            session.locks[i + 1] = lock
            if retain_into is not None:
                session.retainers = _start_retention(policies, names, retain_into, served or {})
                for p in policies:  # the copy the case-based bots now play from (and name in reports)
                    if getattr(p, "can_retain", False):
                        session.called.setdefault(str(Path(p.casebase_path).resolve()), retain_into)  # type: ignore[attr-defined]
            for served_name, handle in (served or {}).items():
                for text in (str(handle.path), str(Path(handle.path).resolve())):
                    session.called.setdefault(text, served_name)
        except BaseException:
            session.close()
            raise
        session._person = _Person(session)
        n = len(policies) + 1
        seats: list[Seat] = [session._person]
        seats += [_BotSeat(p, act_rng(seed, s), s, names[s], session, session.shared.get(s, session.locks.get(s)))
                  for s, p in enumerate(policies, start=1)]
        session._table = Table(default_game(n), seats, names, seed=seed, source="web",
                               retainers=session.retainers, watcher=session._person)
        session._thread = None
        session._running = False
        return session

    def casebase_of(self, policy: Any) -> Optional[str]:
        """The name the client knows the case base of ``policy`` by (a served one's, the
        ``retain_into`` copy's, else its folder's); None for a bot that plays from none."""
        path = getattr(policy, "casebase_path", None)
        if path is None:
            return None
        return self.called.get(str(Path(path).resolve()), Path(path).name)

    def stored(self, policy: Any) -> Any:
        """Use ``policy``: a storage fault of its case base is the server's, naming it as the
        client knows it (:func:`~cbr.serve.engine.stored`), and as the bot's own when the client
        chose it neither by the seat's ``casebase`` option nor as ``retain_into`` (the ``cbr``
        bot's ``expert``)."""
        name = self.casebase_of(policy)
        if name is None:
            return nullcontext()
        return stored(name, bot=None if self._chosen(policy, name) else _seat_spec(policy))

    def _chosen(self, policy: Any, name: str) -> bool:
        """Whether the client chose the case base ``name`` that ``policy`` plays from: the
        seat's spec names it (``cbr:casebase=mine``, a served one), or it is ``retain_into``'s."""
        from cbr.policies.spec import PolicySpecError, parse_policy_spec

        if self.retain_into is not None and name == self.retain_into:
            return True
        try:
            _, options = parse_policy_spec(_seat_spec(policy))
        except PolicySpecError:  # pragma: no cover - a seat's spec was parsed to build it
            return False
        return "casebase" in options

    # ---- playing -------------------------------------------------------------------------
    @property
    def in_hand(self) -> bool:
        """Whether a hand is being played (its thread waits for the person)."""
        return self._running

    def new_hand(self) -> None:
        """Deal the next hand and let the bots act up to the person's first turn (or the end)."""
        if self.closed:
            raise TableStateError("this session is closed: start a new one")
        if self.in_hand:
            raise TableStateError("a hand is being played: finish it first")
        if len(self.results) >= MAX_SESSION_HANDS:
            raise TableStateError(f"a session plays at most {counted(MAX_SESSION_HANDS, 'hand')}: start a new session")
        self.hand_number += 1
        k = self.hand_number
        person = self._person
        person.state = None
        self.error = None
        self.fault = None
        self._running = True

        def run() -> None:
            try:
                played: PlayedHand = self._table.play(k)
                self.results.append(_HandResult(k, list(played.won), played.record))
            except Exception as exc:  # a bot's failure ends the hand; the session says why
                self.error = _error_text(exc)
                self.fault = next((e for e in exception_chain(exc) if isinstance(e, StorageError)), None)
                if self.fault is not None:  # in its words: the case base by its served name, no path
                    self.error = str(self.fault)
            finally:
                with person.cv:
                    self._running = False
                    person.cv.notify_all()

        self._thread = threading.Thread(target=run, name=f"cbr-table-{self.id[:6]}-{k}", daemon=True)
        self._thread.start()
        self._settle()

    def act(self, key: str) -> None:
        """The person's action: ``f``, ``c``, ``r`` or a word (``fold``, ``check``, ``call``,
        ``bet``, ``raise``), refused as :func:`~cbr.play.human.parse_key` refuses it (``check``
        facing a bet, ``fold`` with nothing to call: :class:`FieldError`, nothing changes); then
        the bots act up to the person's next turn (or the end)."""
        from cbr.play.human import parse_key

        person = self._person
        with person.cv:
            legal, to_call = person.waiting, person.to_call
        if legal is None:
            raise TableStateError("it is not your turn" + ("" if self.in_hand else ": deal a new hand"))
        if key.strip().lower() not in KIND_OF_WORD:  # the terminal's q and quit are no action here
            raise FieldError("action", f"unknown action {key!r} (use {', '.join(legal)})")
        try:
            kind = parse_key(key, legal, to_call)
        except GameError as exc:  # not legal here: the reason, without the terminal's keys to type
            raise FieldError("action", str(exc)) from None
        with person.cv:
            person.answer = kind
            person.cv.notify_all()
        self._settle()

    def _settle(self) -> None:
        """Wait until the person is to act again or the hand is over."""
        person = self._person
        end = time.monotonic() + BOT_WAIT
        with person.cv:
            while True:
                if not self._running or (person.waiting is not None and person.answer is None):
                    break
                left = end - time.monotonic()
                if left <= 0:
                    raise TableStateError(f"the bots did not reach your turn within {BOT_WAIT:g} s")
                person.cv.wait(min(left, 0.5))
        if not self._running and self._thread is not None:
            self._thread.join(timeout=BOT_WAIT)
        if not self._running and self.fault is not None:  # the server's storage ended the hand: a 500
            fault, self.fault = self.fault, None
            raise fault

    def close(self) -> None:
        """End the session: a hand in play is left (the bots finish it; it is not kept),
        the retention is compacted and the bots closed."""
        self.closed = True
        person = getattr(self, "_person", None)
        thread = getattr(self, "_thread", None)
        if person is not None:
            with person.cv:
                person.leaving = True
                person.cv.notify_all()
        if thread is not None:
            thread.join(timeout=BOT_WAIT)
        for r in self.retainers:
            try:
                r.close()
            except closing_errors() as exc:  # the cases are durable in the log already: noted
                where = getattr(getattr(r, "cb", None), "path", None)
                name = str(self.retain_into) if where is None else Path(where).name
                # once per fault: a fault said already (another session's, failing the same way) is not said again
                note = (self.faults or ClosingFaults()).note(
                    name, exc, f"case base {name!r} not compacted at the end of a web-table session (its hands stay "
                               "in the retention log)")
                if note is not None:
                    self.notes.append(note)
                self.closing_warnings.append(
                    f"the hands this session kept in case base {self.retain_into!r} are safe in its retention log, "
                    "but could not be compacted into its parts: its files need its operator's attention (the "
                    "server's log says what is wrong); they are taken in by its next compaction")
        self.retainers = []
        for d in self.bot_decisions:  # a record holds its case base and index: let them go with the bots
            d.decision = None
        for s, p in enumerate(self.policies, start=1):
            if s in self.shared:  # the server's, closed when it stops
                continue
            close = getattr(p, "close", None)
            if callable(close):
                try:
                    close()
                except CBRError:  # pragma: no cover
                    pass

    # ---- what the person sees --------------------------------------------------------------
    def view(self) -> dict[str, Any]:
        """The table as the person may see it now (plain JSON data)."""
        person = self._person
        game = self._table.game
        sb = game.small_bet
        out: dict[str, Any] = {"session": self.id, "bots": list(self.bots), "names": list(self.names),
                               "seed": self.seed, "small_bet": sb, "big_bet": game.big_bet,
                               "game": game.name, "retain_into": self.retain_into,
                               "retained": sum(r.retained for r in self.retainers), "error": self.error,
                               "hand": None, "result": self._result()}
        state = person.state
        if state is None:
            return out
        with person.cv:
            legal = person.waiting
        over = not self.in_hand
        done = self.results[-1] if over and self.results and self.results[-1].number == self.hand_number else None
        record = done.record if done is not None else None
        shown = record.showdown if record is not None else ()
        seats = []
        for p in range(state.n_players):
            seat = person.order[p]
            visible = p == person.you or (record is not None and p in shown)
            cards = (record.hole_cards[p] if record is not None else state.hole_cards[p]) if visible else None
            stack = state.stacks[p]
            seats.append({
                "seat": seat, "position": p, "name": state.players[p], "label": person.labels[p],
                "you": p == person.you, "committed": state.total_committed[p],
                "committed_sb": state.total_committed[p] / sb, "street_bet": state.committed[p],
                "stack": _number(stack), "session_chips": sum(r.won[seat] for r in self.results),
                "folded": state.folded[p], "cards": _cards(cards),
                "hand_name": _hand_name(cards, state.board) if visible and record is not None and p in shown else None,
                "won": done.won[seat] if done is not None else None,
                "to_act": (not over) and state.to_act == p,
            })
        to_act = state.to_act if not over else None
        hand: dict[str, Any] = {
            "number": self.hand_number + 1, "street": STREETS[min(state.street, 3)], "board": _cards(state.board),
            "pot": state.pot, "pot_sb": state.pot / sb, "to_call": state.to_call if legal else 0.0,
            "seats": seats, "to_act": person.order[to_act] if to_act is not None else None,
            "your_turn": legal is not None, "over": over,
            "legal": _legal(state, legal) if legal else [],
            "history": _history(state, person.history),
            "betting": state.history,
        }
        if done is not None:
            you_won = done.won[0]
            hand["result"] = {"won": done.won, "you": you_won, "you_sb": you_won / sb,
                              "showdown": [person.order[p] for p in shown]}
        hand["decisions"] = [{"id": d.id, "seat": d.seat, "name": d.name, "street": d.street, "action": d.action,
                              "explained": getattr(d.decision, "vote", None) is not None and over,
                              **({"played_by": self._named(d.decision.expert), "why": self._named(d.decision.reason)}
                                 if over and hasattr(d.decision, "expert") else {})}
                             for d in self.bot_decisions if d.hand == self.hand_number]
        out["hand"] = hand
        return out

    def _result(self) -> dict[str, Any]:
        sb = self._table.game.small_bet
        per_hand = [r.won[0] / sb for r in self.results]
        mean, half = mean_ci(per_hand)
        return {"hands": len(per_hand), "chips": sum(r.won[0] for r in self.results), "sb": sum(per_hand),
                "sb_per_hand": mean if per_hand else 0.0, "ci95": _number(half), "per_hand_sb": per_hand}

    def _named(self, text: str) -> str:
        """A bot's report (the spec an adaptive bot played, its reason) with each case base of the
        server's it names by path (:attr:`called`) named as the client knows it: never a path on
        the server."""
        for path in sorted(self.called, key=len, reverse=True):
            text = text.replace(path, self.called[path])
        return text

    def explain(self, decision_id: int, top: int = CASES_SHOWN) -> dict[str, Any]:
        """A case-based bot's decision ``decision_id`` explained: its triple, the action, the
        re-use rule and why, and the ``top`` most similar retrieved cases (hole, board,
        betting, action, outcome, source) with each feature's local similarity. Only once its
        hand is over (409 before); 404 for a decision that is not a case-based bot's."""
        from cbr.query.answer import explain_decision

        if not 0 <= decision_id < len(self.bot_decisions):
            raise NotFoundError(f"no decision {decision_id} at this table ({len(self.bot_decisions)} so far)")
        d = self.bot_decisions[decision_id]
        if d.decision is None:
            raise NotFoundError(f"decision {decision_id} is {d.name}'s, a bot that does not retrieve cases")
        if getattr(d.decision, "vote", None) is None:  # the adaptive bot played another expert here
            raise NotFoundError(f"decision {decision_id}: {d.name} played {self._named(d.decision.expert)} here, no "
                                f"cases voted (the adaptive bot's choice: {self._named(d.decision.reason)})")
        if d.hand == self.hand_number and self.in_hand:
            raise TableStateError("a bot's reasons are shown when the hand is over (they tell the strength "
                                  "of its cards)")
        # the decision's own vote: nothing retrieved again (its retained case is not among them)
        with d.lock, self.stored(d.policy):
            ans = shown_provenance(explain_decision(d.decision, top=top).to_dict(top=top),
                                   casebase_labels(d.decision.casebase))
            outcomes = _outcomes(d.decision.casebase, ans["street"], [c.get("id") for c in ans["cases"]])
        cases = []
        for c in ans["cases"]:
            prov = c.get("provenance", {})
            cases.append({"id": c.get("id"), "similarity": c.get("similarity"), "action": c.get("action"),
                          "hole": prov.get("hole"), "board": prov.get("board"), "betting": prov.get("history"),
                          "outcome": outcomes.get(c.get("id")), "source": prov.get("source"),
                          "hand_id": prov.get("hand_id"), "player": prov.get("player"), "local": c.get("local", {})})
        dec = d.decision
        return {"id": d.id, "hand": d.hand + 1, "seat": d.seat, "name": d.name, "street": d.street,
                "action": d.action, "casebase": ans["casebase"],
                "triple": _triple(dec.triple), "played": _triple(dec.played), "reuse": dec.reuse,
                "why": dec.explanation, "retrieved": dec.retrieved, "fallback": dec.fallback,
                "features": ans["features"], "weights": ans["weights"], "threshold": ans["threshold"],
                "cases": cases}

    def log(self, fmt: str = "acpc") -> str:
        """The session's hands as an ACPC or PHH log, as the person saw them (a bot's cards
        only where they went to a showdown)."""
        from cbr.play.table import seen_by

        records = []
        for r in self.results:
            you = list(r.record.players).index(self.names[0])
            records.append(seen_by(r.record, you))
        if fmt == "acpc":
            from cbr.logs.acpc import dumps

            return dumps(records, self._table.game)
        if fmt == "phh":
            from cbr.logs.phh import dumps as phh_dumps

            return phh_dumps(records)
        raise FieldError("format", f"unknown log format {fmt!r}; use acpc or phh")


def _error_text(exc: BaseException) -> str:
    """What the person is told of the error that ended a hand: an engine's error
    (:class:`~cbr.errors.CBRError`, another package's bot that failed among them) by its
    message alone, never the Python class's name; anything else is an internal error, said so.

    >>> _error_text(CBRError("bot 'x' failed in decide(): RuntimeError: down\\nmore"))
    "bot 'x' failed in decide(): RuntimeError: down"
    >>> _error_text(KeyError("seat")), _error_text(RuntimeError())
    ("internal error: 'seat'", 'internal error')
    """
    text = str(exc).strip()
    line = text.splitlines()[0] if text else ""
    if isinstance(exc, CBRError) and line:
        return line
    return f"internal error: {line}" if line else "internal error"


def _history(state: HandState, told: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The hand's actions street by street, each street with the board it was played on."""
    out = []
    for i, acts in enumerate(told):
        size = (0, 3, 4, 5)[i]
        if acts or (i and len(state.board) >= size):
            out.append({"street": STREETS[i], "board": _cards(state.board[:size]), "actions": [dict(a) for a in acts]})
    return out


def _triple(t: Any) -> dict[str, float]:
    return {"fold": float(t[0]), "check_call": float(t[1]), "bet_raise": float(t[2])}


def _legal(state: HandState, legal: str) -> list[dict[str, str]]:
    """The person's legal actions as buttons: kind, key and label (``call 10``, ``raise to 30``)."""
    keys = {"f": "f", "c": "c", "r": "r"}
    out = []
    for kind in "fcr":
        if kind in legal:
            text = action_text(state, kind)
            label = {"folds": "Fold", "checks": "Check"}.get(text, text[0].upper() + text[1:])
            label = label.replace("Calls", "Call").replace("Bets", "Bet").replace("Raises", "Raise")
            out.append({"kind": kind, "key": keys[kind], "label": label})
    return out


def _hand_name(cards: Optional[Sequence[int]], board: Sequence[int]) -> Optional[str]:
    if not cards or len(board) < 3:
        return None
    from evaluator_ext import evaluate, hand_category

    return hand_category(evaluate(list(cards) + list(board)))


def _outcomes(cb: Any, street: str, ids: Sequence[Any]) -> dict[Any, Optional[float]]:
    """The ``outcome`` (small bets won by the case's player) of the cases ``ids``, where known.
    A fault of the case base's files is raised (:func:`~cbr.serve.engine.storage_fault`: the
    caller's :func:`~cbr.serve.engine.stored` makes it the server's 500), never shown as
    outcomes unknown: a damaged part answered every case's outcome as null."""
    ids = [int(i) for i in ids if i is not None]
    if not ids:
        return {}
    try:
        rows = cb.rows_by_id(street, ids, ("case_id", "outcome"))
    except (CBRError, KeyError, ValueError) as exc:
        if storage_fault(exc):
            raise
        return {}
    out: dict[Any, Optional[float]] = {}
    for row in rows:
        v = row.get("outcome")
        out[row.get("case_id")] = float(v) if v is not None and math.isfinite(float(v)) else None
    return out


class SharedBots:
    """Case-based bots shared by the sessions of a server, one per policy spec: each holds its
    case base open once (the expert base takes about 150 MB), and a lock serialises its
    decisions. A bot is shared only when it keeps no state between decisions but its case base
    (not over an opponent-aware case base, whose models learn, nor the adaptive bot, which learns
    its opponents): each session draws its actions from its own stream, so a shared bot plays as a
    session's own would. A bot that learns is the session's own but plays from the same open
    case base, under its lock."""

    def __init__(self) -> None:
        self._bots: dict[str, tuple[Policy, Any]] = {}
        self._handles: list[Any] = []  # the case bases opened for the bots (SharedCaseBase)
        self._lock = threading.Lock()

    def get(self, spec: str, built: Policy) -> Optional[tuple[Policy, Any]]:
        """The shared bot of ``spec`` and its lock (``built``, a fresh bot of that spec, becomes
        it the first time); None when ``built`` is not one to share (then it is the session's).
        A shared bot plays from the process's one open handle of its case base
        (:func:`~cbr.store.shared.open_shared`, the one ``/reuse`` and a served case base use)
        and its lock is that case base's."""
        if not getattr(built, "can_retain", False):
            return None
        key = spec.strip()
        with self._lock:
            hit = self._bots.get(key)
            if hit is None:
                handle = getattr(built, "casebase_handle", None)
                mine = handle is None
                if mine:
                    from cbr.store.shared import open_shared

                    handle = open_shared(built.casebase_path)  # type: ignore[attr-defined]
                    built.use_casebase(handle)  # type: ignore[attr-defined]
                with handle.lock:
                    learns = built.learns  # type: ignore[attr-defined]  (opens its case base)
                if learns:  # the session's own bot (its models learn), on the server's handle, under its lock
                    if mine:
                        handle.release()  # the bot took a reference of its own
                    built._table_lock = handle.lock  # type: ignore[attr-defined]
                    return None
                if mine:
                    self._handles.append(handle)
                hit = self._bots[key] = (built, handle.lock)
            elif hit[0] is not built:
                built.close()  # type: ignore[attr-defined]  (never opened: nothing to free)
            return hit

    def close(self) -> None:
        with self._lock:
            bots = list(self._bots.values())
            self._bots.clear()
            handles, self._handles = self._handles, []
        for policy, lock in bots:
            with lock:
                close = getattr(policy, "close", None)
                if callable(close):
                    close()
        for handle in handles:
            handle.release()


class TableSessions:
    """The table sessions of one server: created with an unguessable id, found by it,
    dropped after ``ttl`` seconds without a request, at most ``max_sessions`` at once."""

    def __init__(self, max_sessions: int = MAX_SESSIONS, ttl: float = SESSION_TTL,
                 served: Optional[Mapping[str, Any]] = None,
                 on_note: Optional[Callable[[str], None]] = None, faults: Optional[ClosingFaults] = None) -> None:
        self.max_sessions = max_sessions
        #: the faults of compacting a case base said so far, shared with the engine's close (the
        #: server's stop): one fault, one note (:class:`~cbr.serve.engine.ClosingFaults`)
        self.faults = faults if faults is not None else ClosingFaults()
        self.ttl = ttl
        self.served = dict(served or {})  # name -> SharedCaseBase: the case bases a bot may name
        self._sessions: OrderedDict[str, TableSession] = OrderedDict()
        #: said at once, one line each, of the notes of a session that ends while the server runs
        #: (:attr:`TableSession.notes`: left, expired): the server's log (None: kept in :attr:`notes`)
        self.on_note = on_note
        #: the notes of the sessions that ended and were not said at once (those closed by
        #: :meth:`close`, as the server stops), for the server to show
        self.notes: list[str] = []
        #: the served case bases a session retained into (by served name), for the server to
        #: compact when it stops, as what ``/retain`` kept: the session's own compaction may
        #: have failed (a part damaged meanwhile, mended since), which left its hands in the log
        self.retained_into: set[str] = set()
        self._building = 0  # sessions being built: their places are taken
        self._lock = threading.Lock()
        self.shared = SharedBots()

    def __len__(self) -> int:
        return len(self._sessions)

    def _expire(self) -> list[TableSession]:
        now = time.monotonic()
        gone = [s for s in self._sessions.values() if now - s.touched > self.ttl]
        for s in gone:
            del self._sessions[s.id]
        return gone

    def _close(self, sessions: Sequence[TableSession], *, stopping: bool = False) -> list[str]:
        """Close sessions dropped from the table (under each one's lock: a request using it ends
        first): their notes are said at once (:attr:`on_note`), or kept (:attr:`notes`) when the
        server is ``stopping`` or has no ``on_note``. Returns their warnings in the client's words
        (:attr:`TableSession.closing_warnings`)."""
        warnings: list[str] = []
        for s in sessions:
            with s.lock:
                served = {r._name for r in s.retainers if getattr(r, "served", False)}
                with self._lock:
                    self.retained_into |= served
                s.close()
                notes, s.notes = s.notes, []
                warnings += s.closing_warnings
            if self.on_note is not None and not stopping:
                for note in notes:
                    self.on_note(note)
            else:
                with self._lock:
                    self.notes.extend(notes)
        return warnings

    def create(self, bots: Sequence[str], **options: Any) -> TableSession:
        """A new session (see :meth:`TableSession.create`); refused (:class:`TableStateError`)
        when ``max_sessions`` are open or being built and none has expired. The place is
        taken under the lock that counts them, so sessions created at once never exceed it."""
        with self._lock:
            gone = self._expire()
            full = len(self._sessions) + self._building >= self.max_sessions
            if not full:
                self._building += 1
        self._close(gone)
        if full:
            n = self.max_sessions
            raise TableStateError(f"the server has {counted(n, 'table session')} open: try again later "
                                  f"(a session ends {duration_text(self.ttl)} after its last request, "
                                  "or when it is closed)")
        try:
            session = TableSession.create(bots, shared=self.shared, served=self.served, **options)
            session.faults = self.faults
        except BaseException:
            with self._lock:
                self._building -= 1
            raise
        with self._lock:
            self._building -= 1
            self._sessions[session.id] = session
        return session

    def get(self, session_id: str) -> TableSession:
        """The session ``session_id`` (its clock restarted); :class:`NotFoundError` if unknown or expired."""
        with self._lock:
            gone = self._expire()
            session = self._sessions.get(session_id)
            if session is not None:
                session.touched = time.monotonic()
                self._sessions.move_to_end(session_id)
        self._close(gone)
        if session is None:
            raise NotFoundError("no such table session (it ended, expired or never existed): start a new one")
        return session

    def drop(self, session_id: str) -> list[str]:
        """Close and forget the session ``session_id`` (:class:`NotFoundError` if unknown);
        what went wrong as it closed, in the client's words (a compaction that failed)."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            raise NotFoundError("no such table session (it ended, expired or never existed)")
        return self._close([session])

    def close(self) -> None:
        """Close every session (the server stops)."""
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        self._close(sessions, stopping=True)
        self.shared.close()


class _LockedRetainer:
    """A retainer writing into a served case base: each hand kept, and the retention log
    compacted into parts when the session ends (:meth:`close`, as a match's retention ends and
    as the server compacts what ``/retain`` kept when it stops), under that case base's lock,
    the one ``/retrieve`` and ``/retain`` take: a compaction replaces what the one open case base
    has loaded, which a request reading it meanwhile would see change under it (its other
    attributes are the retainer's). A hand whose write fails is a
    :class:`~cbr.serve.engine.StorageError` naming the case base ``name`` as the client knows it.
    A retainer into a copy of the session's own has no lock to share (a ``nullcontext``)."""

    def __init__(self, retainer: Any, lock: Any, name: str, *, served: bool = False) -> None:
        self._retainer, self._lock, self._name = retainer, lock, name
        #: into the served case base ``name`` (not a copy of the session's own): the server
        #: compacts it again when it stops (:attr:`TableSessions.retained_into`)
        self.served = served

    def hand(self, *args: Any, **kwargs: Any) -> int:
        with self._lock, stored(self._name, writing=True):  # a write that fails: the server's fault
            return self._retainer.hand(*args, **kwargs)

    def close(self) -> None:
        with self._lock:
            self._retainer.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._retainer, name)


def _start_retention(policies: Sequence[Any], names: Sequence[str], into: str,
                     served: Mapping[str, Any]) -> list[Any]:
    """The retainers of a session with ``retain_into`` ``into``. A name the server serves (or
    whose ``./casebases/NAME`` is a served case base) is that served case base: the hands go
    into it, seen at once by ``/retrieve``, ``/retain`` and ``/casebases/NAME``, when the
    session's case-based bots play from it (``cbr:casebase=NAME``); otherwise it is refused,
    never copied. Another name is ``./casebases/NAME`` on the server, a copy of the bots' case
    base made on first use (:func:`~cbr.play.retention.start_retention`). A refusal is a
    :class:`ForbiddenError` naming case bases by their served names (or their own), without a
    path on the server, and suggesting only what the API accepts."""
    from pathlib import Path

    from cbr.errors import CaseBaseError
    from cbr.play.retention import CopyClashError, names_a_path, retaining_bots, retention_target, start_retention
    from cbr.store import SHIPPED_CASEBASES, is_shipped

    by_path = {Path(h.path).resolve(): n for n, h in served.items()}

    def called(path: Path) -> str:
        """A case base as the client knows it: its served name, else its folder's name."""
        return by_path.get(Path(path).resolve(), Path(path).name)

    seats = [None, *policies]
    bots = retaining_bots(seats)
    bases = list(dict.fromkeys(Path(seats[s].casebase_path).resolve() for s in bots))  # type: ignore[union-attr]
    target = None if names_a_path(into) else retention_target(into).resolve()
    name = into if into in served else by_path.get(target) if target is not None else None
    try:
        if name is not None:  # a served case base: into it, or refused
            handle = served[name]
            if is_shipped(Path(handle.path)):
                raise ForbiddenError(f"retention refused: the shipped case base {name!r} is never written to; "
                                     "retain into another name: a copy of the case base the bots play from is "
                                     "made under it on first use")
            if not bases:
                raise CaseBaseError("retention needs a case-based bot at the table (a `cbr` seat): its case "
                                    "base is the one that grows")
            if bases != [Path(handle.path).resolve()]:
                raise ForbiddenError(
                    f"retention refused: {name!r} is a case base this server serves, and a session retains into it "
                    f"only when its case-based bots play from it, while these play from "
                    f"{', '.join(repr(called(b)) for b in bases)}: seat cbr:casebase={name} (for each case-based "
                    f"bot), or retain into another name (a copy of the bots' case base, made on first use)")
            retainers = start_retention(seats, names, into=None, extra_seats=[0])  # type: ignore[arg-type]
            return [_LockedRetainer(r, handle.lock, name, served=True) for r in retainers]
        if into in SHIPPED_CASEBASES and (target is None or not target.exists()):
            raise ForbiddenError(f"retention refused: {into!r} is the name of a shipped case base; retain into "
                                 "another name")
        return [_LockedRetainer(r, nullcontext(), into)  # a copy of the session's own: no lock to share
                for r in start_retention(seats, names, into=into, extra_seats=[0])]  # type: ignore[arg-type]
    except CopyClashError as exc:
        what = (f"a copy of case base {exc.origin!r}" if exc.origin is not None else
                f"no copy of {called(exc.base)!r} (it records no origin)")
        raise ForbiddenError(f"retention refused: the case base {into!r} to retain into is {what}, while the "
                             f"case-based bots play from {called(exc.base)!r}; retaining into it would make them "
                             f"play from its cases: retain into another name (a new copy is made)") from None
    except OSError as exc:  # the copy or the log could not be written: the server's storage (500)
        raise StorageError(name or into, exc, writing=True) from exc
    except CaseBaseError as exc:
        if storage_fault(exc):  # a damaged or unwritable case base: the server's, not a refusal
            raise StorageError(name or into, exc, writing=True) from exc
        message = str(exc)
        for path in sorted({*by_path, *bases, *([target] if target is not None else [])}, key=lambda p: -len(str(p))):
            message = message.replace(str(path), repr(called(path)))  # never a path on the server
        raise ForbiddenError(f"retention refused: {message}") from None


def _seat_spec(policy: Any) -> str:
    """The spec the client seated ``policy`` with (its name when it carries none)."""
    return str(getattr(policy, "spec", None) or getattr(policy, "name", type(policy).__name__))


def _served_spec(spec: str, served: Mapping[str, Any]) -> tuple[str, Any]:
    """``(spec without its casebase option, the served case base it names)`` when ``spec``'s
    ``casebase`` names a case base the server serves; else ``(spec, None)``.

    >>> _served_spec("cbr:casebase=mine:reuse=max-frequency", {"mine": "HANDLE"})
    ('cbr:reuse=max-frequency', 'HANDLE')
    >>> _served_spec("cbr:casebase=/etc", {"mine": "HANDLE"})
    ('cbr:casebase=/etc', None)
    """
    from cbr.policies.spec import PolicySpecError, parse_policy_spec

    try:
        name, options = parse_policy_spec(spec)
    except PolicySpecError:  # checked_spec says what is wrong
        return spec, None
    value = options.pop("casebase", None)
    if value is None or value not in served:
        return spec, None
    return ":".join([name, *(f"{k.replace('_', '-')}={v}" for k, v in options.items())]), served[value]
