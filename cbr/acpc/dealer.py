"""An ACPC 2.0.0 dealer: built-in bots play in-process, ``remote`` seats are TCP clients.

Seating and cards follow :mod:`cbr.play.table`: position ``i`` of hand ``k`` is seat
``(i + k) % n`` (as the ACPC reference dealer rotates its players), deal ``k`` comes from
:func:`cbr.play.table.deal_cards` with the dealer's seed, and a built-in bot in seat ``s`` gets
the same seed and action stream as in :func:`cbr.play.match.run_match`, so a dealer with only
built-in bots plays exactly the match ``cbr match`` plays.

The hands are played at the table loop of :mod:`cbr.play.table`: a remote seat is a
:class:`RemoteSeat`, and the dealer watches the table to send the ``MATCHSTATE`` lines.

Remote seats are filled in the order clients connect to the one listening port. Every
remote seat is sent a ``MATCHSTATE`` at the start of each hand and after each action;
the seat to act must answer within ``timeout`` seconds. A disconnect, a malformed or
out-of-turn line, an illegal action or a slow client raises
:class:`~cbr.errors.ProtocolError` naming the seat and the hand. A client that connects
once every remote seat is taken is told so in a comment line (:data:`SEATS_TAKEN`) and
the connection is closed; the match goes on. A dealer that gives up (a seat that never
connected, a fault, a ``KeyboardInterrupt``) tells every remote seat still connected why,
in a comment line, before it closes; the exception carries the result of the hands dealt
(:func:`stopped_result`).

The listening socket is bound with ``SO_REUSEADDR`` (not on Windows, where it means
something else): a dealer restarts at once on the port of a match that just ended, whose
connections wait out TIME-WAIT there; a port another socket listens on stays refused.

>>> d = Dealer(["call", "raise"], hands=4, seed=1)
>>> r = d.run()
>>> r.hands, sum(r.totals)
(4, 0.0)
"""
from __future__ import annotations

import os
import select
import socket
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from cbr.acpc.matchstate import matchstate_line
from cbr.acpc.protocol import LineChannel, acpc_payoffs, comment_line, parse_answer, parse_version
from cbr.errors import GameError, ProtocolError, counted
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import GameDef
from cbr.game.spec import default_game
from cbr.game.state import HandState
from cbr.play.table import (
    MAX_HANDS,
    PolicySeat,
    Seat,
    Table,
    Watcher,
    act_rng,
    check_seats,
    expert_choices,
    seat_label,
    seat_seed,
    unique_names,
)
from cbr.policies.base import Policy
from cbr.policies.spec import policy_from_spec

if TYPE_CHECKING:  # pragma: no cover
    from cbr.logs.output import HandLogWriter

REMOTE = "remote"
#: What the dealer tells a client that connects when every remote seat is taken (a comment
#: line, which the protocol lets a client skip), before it closes the connection.
SEATS_TAKEN = "every remote seat of this match is taken; closing"
#: Seconds the dealer waits for a turned-away client's handshake before it closes.
TURN_AWAY_WAIT = 0.5


@dataclass(frozen=True)
class DealerResult:
    """Chips won per seat over the match, with the seat names used in the log; ``experts``:
    per seat, the experts an adaptive bot chose (:func:`~cbr.play.table.expert_choices`, as
    ``cbr match`` reports them), empty for any other seat."""

    game: GameDef
    names: tuple[str, ...]
    totals: tuple[float, ...]
    hands: int
    retained: int = 0  # cases the in-process case-based bots kept (retention on)
    #: "" for a whole match; else what stopped it ("interrupted": a KeyboardInterrupt, Ctrl-C
    #: or SIGTERM; "error": a fault) and ``hands`` counts the hands dealt before
    stopped: str = ""
    experts: tuple[tuple, ...] = ()

    def sb_per_hand(self, seat: int) -> float:
        return self.totals[seat] / self.hands / self.game.small_bet if self.hands else 0.0


class Dealer:
    """A match of ``hands`` hands between ``seats`` (bot specs or ``"remote"``).

    Call :meth:`listen` (when there are remote seats), then :meth:`run`. ``timeout``: seconds
    a remote seat has for its handshake and for each action; ``connect_timeout``: seconds
    to wait for all remote seats to connect. Raises :class:`~cbr.errors.GameError` for bad
    counts and for a bot that cannot play at a table of that many (a heads-up-only bot at
    three seats or more: :func:`~cbr.play.table.seat_refusal`), before it listens, and
    :class:`~cbr.errors.PluginError` for unknown bots.
    """

    def __init__(self, seats: Sequence[str], hands: int, *, game: GameDef | None = None, seed: int = 0,
                 host: str = "127.0.0.1", port: int = 0, timeout: float = 10.0,
                 connect_timeout: float = 60.0, retain: bool = False, retain_into: Optional[str] = None) -> None:
        n = len(seats)
        if not 2 <= n <= 10:
            raise GameError(f"a dealer seats 2 to 10 players, got {n}")
        if isinstance(hands, bool) or not isinstance(hands, int) or not 1 <= hands <= MAX_HANDS:
            raise GameError(f"hands must be a whole number from 1 to {MAX_HANDS:,}, got {hands!r}")
        if not timeout > 0 or not connect_timeout > 0:
            raise GameError("timeouts must be positive numbers of seconds")
        self.game = game or default_game(n)
        if self.game.betting != "limit":
            raise GameError(f"game {self.game.name!r} is no-limit; the dealer deals limit games only")
        if self.game.n_players != n:
            raise GameError(f"game {self.game.name!r} seats {counted(self.game.n_players, 'player')} but {n} were given")
        self.seats = [s.strip() for s in seats]
        self.hands, self.seed = hands, seed
        self.host, self.port = host, port
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.policies: list[Optional[Policy]] = [seat_policy(s, seat_seed(seed, i)) for i, s in enumerate(self.seats)]
        try:  # before a seat is taken: a heads-up bot at a bigger table failed at its first decision
            check_seats(self.policies, n)
        except GameError:
            for p in self.policies:
                close = getattr(p, "close", None)
                if callable(close):
                    close()
            raise
        self.names = unique_names([REMOTE if p is None else seat_label(p) for p in self.policies])
        self.channels: list[Optional[LineChannel]] = [None] * n
        self._server: Optional[socket.socket] = None
        self._earlier: dict[int, list[str]] = {}   # states sent earlier in this hand, per seat
        self._wire: Optional[_Wire] = None
        self._told = False  # the remote seats were told why the match stopped (and closed)
        self.retainers: list = []
        if retain or retain_into is not None:  # the in-process case-based bots keep every hand
            from cbr.play.retention import start_retention

            self.retainers = start_retention(self.policies, self.names, into=retain_into)  # type: ignore[arg-type]

    @property
    def remote_seats(self) -> list[int]:
        return [i for i, p in enumerate(self.policies) if p is None]

    def listen(self) -> tuple[str, int]:
        """Open the listening socket; returns ``(host, port)`` (the port chosen when 0)."""
        if self._server is not None:
            return self._server.getsockname()[:2]
        try:
            infos = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise ProtocolError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from None
        family, _, _, _, addr = infos[0]
        server = socket.socket(family, socket.SOCK_STREAM)
        try:
            if os.name not in ("nt", "cygwin") and hasattr(socket, "SO_REUSEADDR"):
                # past the TIME-WAIT connections of a match just ended on this port; another
                # listening socket still makes the bind fail (as socket.create_server does)
                server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind(addr)
            server.listen(len(self.seats))
        except OSError as exc:
            server.close()
            raise ProtocolError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from None
        self._server = server
        return server.getsockname()[:2]

    def accept(self) -> None:
        """Seat the remote clients, in the order they connect, each after its handshake
        (:meth:`run` does it when not done yet). Remote seats that do not all connect within
        ``connect_timeout`` seconds are a :class:`ProtocolError`; the clients seated are told
        why (a comment line) and closed, as after any fault or ``KeyboardInterrupt`` here."""
        waiting = [s for s in self.remote_seats if self.channels[s] is None]
        if not waiting:
            return
        if self._server is None:
            self.listen()
        assert self._server is not None
        try:
            deadline = time.monotonic() + self.connect_timeout
            for seat in waiting:
                left = deadline - time.monotonic()
                self._server.settimeout(max(left, 0.001))
                try:
                    conn, _ = self._server.accept()
                except socket.timeout:
                    missing = len([s for s in self.remote_seats if self.channels[s] is None])
                    raise ProtocolError(f"{counted(missing, 'remote seat')} did not connect within "
                                        f"{self.connect_timeout:g} s") from None
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                ch = LineChannel(conn, f"seat {seat} (remote)")
                self.channels[seat] = ch
                parse_version_from(ch, self.timeout)
        except BaseException as exc:
            self._tell_why(exc)
            raise

    def _tell_why(self, exc: BaseException) -> None:
        """Tell every remote seat still connected why the match stops (a comment line), and
        close it; once."""
        if self._told:
            return
        self._told = True
        why = "the dealer was interrupted" if isinstance(exc, KeyboardInterrupt) else (str(exc) or type(exc).__name__)
        for ch in self.channels:
            if ch is not None:
                ch.close_saying(why)

    def close(self) -> None:
        """Close every connection and the listening socket (telling a client still waiting
        to connect that the seats are taken)."""
        for ch in self.channels:
            if ch is not None:
                ch.close()
        if self._server is not None:
            if self.remote_seats and all(self.channels[s] is not None for s in self.remote_seats):  # all seated
                try:
                    self._turn_away()
                except OSError:  # pragma: no cover
                    pass
            self._server.close()
            self._server = None

    def run(self, log: Optional["HandLogWriter"] = None,
            progress: Optional[Callable[[int], None]] = None) -> DealerResult:
        """Accept the remote seats (:meth:`accept`), play the match, close the connections;
        ``log`` gets every hand's full record, ``progress(1)`` is called after each hand.

        An exception that stops the match once dealing has begun (a fault, a
        ``KeyboardInterrupt``) leaves with the result of the hands dealt before it
        (:func:`stopped_result`), after the remote seats still connected were told why.
        """
        n = len(self.seats)
        counted: Optional[tuple[int, tuple[float, ...]]] = None  # (hands, totals) once dealing began
        try:
            self.accept()
            counted = (0, (0.0,) * n)
            self._wire = _Wire(self)
            seats: list[Seat] = []
            for s, p in enumerate(self.policies):
                if p is None:
                    seats.append(RemoteSeat(self, s))
                else:
                    p.reset()
                    seats.append(PolicySeat(p, act_rng(self.seed, s)))
            table = Table(self.game, seats, self.names, seed=self.seed, source="dealer",
                          settle=acpc_payoffs,   # a split pot in fractions of a chip, as ACPC pays it
                          retainers=self.retainers, log=log, watcher=self._wire)
            for k in range(self.hands):
                won = table.play(k).won
                # rebound in one step: a KeyboardInterrupt sees a hand counted whole or not at all
                counted = (k + 1, tuple(t + w for t, w in zip(counted[1], won)))
                self._turn_away()
                if progress is not None:
                    progress(1)
            return DealerResult(self.game, tuple(self.names), counted[1], self.hands,
                                sum(r.retained for r in self.retainers), experts=tuple(expert_choices(self.policies)))
        except BaseException as exc:
            if counted is not None:
                exc.dealer_result = DealerResult(  # type: ignore[attr-defined]
                    self.game, tuple(self.names), counted[1], counted[0], sum(r.retained for r in self.retainers),
                    stopped="interrupted" if isinstance(exc, KeyboardInterrupt) else "error",
                    experts=tuple(expert_choices(self.policies)))
            self._tell_why(exc)
            raise
        finally:
            try:
                for r in self.retainers:
                    r.close()
            finally:
                self.close()

    def _turn_away(self) -> None:
        """Tell every client waiting to connect that the seats are taken, and close it."""
        server = self._server
        while server is not None:
            ready, _, _ = select.select([server], [], [], 0)
            if not ready:
                return
            try:
                conn, _ = server.accept()
            except OSError:  # pragma: no cover - gone before it was accepted
                return
            ch = LineChannel(conn, "a client beyond the seats")
            try:
                ch.read_line(TURN_AWAY_WAIT)  # its handshake: read, so closing sends no reset
            except ProtocolError:
                pass
            try:
                ch.send_line(comment_line(SEATS_TAKEN))
            except ProtocolError:
                pass
            ch.close()

    def _send_all(self, state: HandState, k: int, seats: Sequence[int], sent: dict[int, str]) -> None:
        for pos, s in enumerate(seats):
            ch = self.channels[s]
            if ch is not None:
                line = matchstate_line(state, k, pos)
                if s in sent:
                    self._earlier.setdefault(s, []).append(sent[s])
                sent[s] = line
                try:
                    ch.send_line(line)
                except ProtocolError as exc:
                    raise ProtocolError(f"hand {k}: {exc}") from None

    def _check_quiet(self, k: int, except_seat: Optional[int]) -> None:
        """A remote seat that sends a line when it is not its turn breaks the protocol."""
        chans = [ch for s, ch in enumerate(self.channels) if ch is not None and s != except_seat]
        if not chans:
            return
        ready, _, _ = select.select(chans, [], [], 0)
        for ch in ready:
            try:
                line = ch.read_line(self.timeout)
            except ProtocolError as exc:
                raise ProtocolError(f"hand {k}: {exc}") from None
            raise ProtocolError(f"hand {k}: {ch.peer} sent {line[:60]!r} when it was not its turn (out of turn)")

    def _remote_action(self, k: int, seat: int, sent: str) -> str:
        ch = self.channels[seat]
        assert ch is not None
        deadline = time.monotonic() + self.timeout
        others = [c for s, c in enumerate(self.channels) if c is not None and s != seat]
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ProtocolError(f"hand {k}: {ch.peer} did not act within {self.timeout:g} s (timeout)")
            if ch.has_data():
                break
            server = self._server
            ready, _, _ = select.select([ch, *others, *([server] if server is not None else [])], [], [], left)
            if server is not None and server in ready:
                self._turn_away()
            if any(c is not ch and c is not server for c in ready):
                self._check_quiet(k, seat)
        try:
            line = ch.read_line(max(deadline - time.monotonic(), 0.001))
            for before in self._earlier.get(seat, ()):
                if line.startswith(before + ":") and not line.startswith(sent + ":"):
                    raise ProtocolError(f"answered {before[:60]!r} when it was not its turn (out of turn)")
            return parse_answer(line, sent, self.game)
        except ProtocolError as exc:
            msg = str(exc)
            if not msg.startswith(ch.peer):
                msg = f"{ch.peer}: {msg}"
            raise ProtocolError(f"hand {k}: {msg}") from None


class _Wire(Watcher):
    """The dealer at its table: a ``MATCHSTATE`` to every remote seat when a hand is dealt and
    after every action; no remote seat may speak out of turn."""

    def __init__(self, dealer: Dealer) -> None:
        self.dealer = dealer
        self.k = 0
        self.seats: Sequence[int] = ()
        self.sent: dict[int, str] = {}    # the last state sent to each remote seat in this hand

    def dealt(self, k: int, state: HandState, seats: Sequence[int]) -> None:
        self.k, self.seats, self.sent = k, seats, {}
        self.dealer._earlier = {s: [] for s in range(len(seats))}  # states sent earlier in this hand
        self.dealer._send_all(state, k, seats, self.sent)

    def turn(self, state: HandState, position: int) -> None:
        seat = self.seats[position]
        self.dealer._check_quiet(self.k, seat if self.dealer.policies[seat] is None else None)

    def moved(self, state: HandState) -> None:
        self.dealer._send_all(state, self.k, self.seats, self.sent)


class RemoteSeat(Seat):
    """A seat played by an ACPC client over TCP: its action is its answer to the last
    ``MATCHSTATE`` the dealer sent it; an illegal one is a :class:`ProtocolError`."""

    def __init__(self, dealer: Dealer, seat: int) -> None:
        self.dealer = dealer
        self.seat = seat

    def act(self, state: HandState, dp: DecisionPoint) -> str:
        d = self.dealer
        wire = d._wire
        assert wire is not None
        kind = d._remote_action(wire.k, self.seat, wire.sent[self.seat])
        try:
            state.verify(kind)
        except GameError as exc:
            raise ProtocolError(f"hand {wire.k}: seat {self.seat} (remote) answered an illegal action: {exc}") from None
        return kind


def stopped_result(exc: BaseException) -> Optional[DealerResult]:
    """The result of the hands :meth:`Dealer.run` dealt before ``exc`` stopped it (its
    ``stopped`` says why); None when ``exc`` did not stop a match that had begun.

    >>> stopped_result(KeyboardInterrupt()) is None
    True
    """
    result = getattr(exc, "dealer_result", None)
    return result if isinstance(result, DealerResult) else None


def seat_policy(spec: str, seed: int) -> Optional[Policy]:
    """The bot a seat's spec names, or None for ``remote`` (a client that connects).

    >>> seat_policy("remote", 0) is None, seat_policy("call", 0).name
    (True, 'call')
    >>> seat_policy("remote:timeout=5", 0)
    Traceback (most recent call last):
    cbr.policies.spec.PolicySpecError: seat 'remote:timeout=5': 'remote' takes no options (it is a client that connects)
    """
    from cbr.policies.spec import PolicySpecError, UnknownPolicyError

    spec = spec.strip()
    if spec == REMOTE:
        return None
    name = spec.split(":", 1)[0].strip()
    if name == REMOTE:
        raise PolicySpecError(f"seat {spec!r}: 'remote' takes no options (it is a client that connects)")
    try:
        return policy_from_spec(spec, seed=seed)
    except UnknownPolicyError:
        from cbr.plugins import available

        raise UnknownPolicyError(f"unknown policy {name!r}; a seat is 'remote' (a client that connects) or a policy: "
                                 f"{', '.join(available('cbr.policies'))}") from None


def parse_version_from(ch: LineChannel, timeout: float) -> tuple[int, int, int]:
    """Read and check a client's ``VERSION`` handshake line."""
    try:
        return parse_version(ch.read_line(timeout))
    except ProtocolError as exc:
        msg = str(exc)
        raise ProtocolError(msg if msg.startswith(ch.peer) else f"{ch.peer}: {msg}") from None
