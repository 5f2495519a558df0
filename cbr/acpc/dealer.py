"""An ACPC 2.0.0 dealer: built-in bots play in-process, ``remote`` seats are TCP clients.

Seating and cards follow :mod:`cbr.play.match`: position ``i`` of hand ``k`` is seat
``(i + k) % n`` (as the ACPC reference dealer rotates its players), deal ``k`` comes from
:func:`cbr.play.match.deal_cards` with the dealer's seed, and a built-in bot in seat ``s`` gets
the same seed and action stream as in :func:`cbr.play.match.run_match`, so a dealer with only
built-in bots plays exactly the match ``cbr match`` plays.

Remote seats are filled in the order clients connect to the one listening port. Every
remote seat is sent a ``MATCHSTATE`` at the start of each hand and after each action;
the seat to act must answer within ``timeout`` seconds. A disconnect, a malformed or
out-of-turn line, an illegal action or a slow client raises
:class:`~cbr.errors.ProtocolError` naming the seat and the hand.

>>> d = Dealer(["call", "raise"], hands=4, seed=1)
>>> r = d.run()
>>> r.hands, sum(r.totals)
(4, 0.0)
"""
from __future__ import annotations

import random
import select
import socket
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from cbr.acpc.protocol import LineChannel, acpc_payoffs, matchstate_line, parse_answer, parse_version
from cbr.errors import GameError, ProtocolError
from cbr.game.gamedef import GameDef
from cbr.game.spec import default_game
from cbr.game.state import HandState, seats_for_hand
from cbr.logs.record import HandRecord
from cbr.play.match import MAX_HANDS, deal_cards, seat_seed, seen_by, unique_names
from cbr.policies.base import Policy
from cbr.policies.spec import policy_from_spec

if TYPE_CHECKING:  # pragma: no cover
    from cbr.logs.writers import HandLogWriter

REMOTE = "remote"
_BOARD_STEPS = ((0, 3), (3, 4), (4, 5))


@dataclass(frozen=True)
class DealerResult:
    """Chips won per seat over the match, with the seat names used in the log."""

    game: GameDef
    names: tuple[str, ...]
    totals: tuple[float, ...]
    hands: int
    retained: int = 0  # cases the in-process case-based bots kept (retention on)

    def sb_per_hand(self, seat: int) -> float:
        return self.totals[seat] / self.hands / self.game.small_bet if self.hands else 0.0


class Dealer:
    """A match of ``hands`` hands between ``seats`` (bot specs or ``"remote"``).

    Call :meth:`listen` (when there are remote seats), then :meth:`run`. ``timeout``: seconds
    a remote seat has for its handshake and for each action; ``connect_timeout``: seconds
    to wait for all remote seats to connect. Raises :class:`~cbr.errors.GameError` for bad
    counts and :class:`~cbr.errors.PluginError` for unknown bots.
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
            raise GameError(f"game {self.game.name!r} seats {self.game.n_players} players but {n} were given")
        self.seats = [s.strip() for s in seats]
        self.hands, self.seed = hands, seed
        self.host, self.port = host, port
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.policies: list[Optional[Policy]] = [
            None if s == REMOTE else policy_from_spec(s, seed=seat_seed(seed, i)) for i, s in enumerate(self.seats)]
        self.names = unique_names([REMOTE if p is None else p.name for p in self.policies])
        self.channels: list[Optional[LineChannel]] = [None] * n
        self._server: Optional[socket.socket] = None
        self._earlier: dict[int, list[str]] = {}   # states sent earlier in this hand, per seat
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
            server.bind(addr)
            server.listen(len(self.seats))
        except OSError as exc:
            server.close()
            raise ProtocolError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from None
        self._server = server
        return server.getsockname()[:2]

    def _accept_all(self) -> None:
        if not self.remote_seats:
            return
        if self._server is None:
            self.listen()
        assert self._server is not None
        deadline = time.monotonic() + self.connect_timeout
        for seat in self.remote_seats:
            left = deadline - time.monotonic()
            self._server.settimeout(max(left, 0.001))
            try:
                conn, _ = self._server.accept()
            except socket.timeout:
                waiting = len([s for s in self.remote_seats if self.channels[s] is None])
                raise ProtocolError(f"{waiting} remote seat(s) did not connect within "
                                    f"{self.connect_timeout:g} s") from None
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            ch = LineChannel(conn, f"seat {seat} (remote)")
            self.channels[seat] = ch
            parse_version_from(ch, self.timeout)

    def close(self) -> None:
        """Close every connection and the listening socket."""
        for ch in self.channels:
            if ch is not None:
                ch.close()
        if self._server is not None:
            self._server.close()
            self._server = None

    def run(self, log: Optional["HandLogWriter"] = None,
            progress: Optional[Callable[[int], None]] = None) -> DealerResult:
        """Accept the remote seats, play the match, close the connections; ``log`` gets
        every hand's full record, ``progress(1)`` is called after each hand."""
        try:
            self._accept_all()
            for p in self.policies:
                if p is not None:
                    p.reset()
            n = len(self.seats)
            rngs = [random.Random(f"cbr-act:{self.seed}:{s}") for s in range(n)]
            totals = [0.0] * n
            for k in range(self.hands):
                seats = seats_for_hand(range(n), k)
                record = self._play_hand(k, list(seats), rngs)
                for r in self.retainers:
                    r.hand(record, list(seats))
                for pos, s in enumerate(seats):
                    totals[s] += float(record.payoffs[pos])  # type: ignore[index]
                    pol = self.policies[s]
                    if pol is not None and type(pol).observe is not Policy.observe:
                        pol.observe(seen_by(record, pos), pos)
                if log is not None:
                    log.write(record)
                if progress is not None:
                    progress(1)
            return DealerResult(self.game, tuple(self.names), tuple(totals), self.hands,
                                sum(r.retained for r in self.retainers))
        finally:
            try:
                for r in self.retainers:
                    r.close()
            finally:
                self.close()

    def _send_all(self, state: HandState, k: int, seats: list[int], sent: dict[int, str]) -> None:
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
            ready, _, _ = select.select([ch, *others], [], [], left)
            if any(c is not ch for c in ready):
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

    def _play_hand(self, k: int, seats: list[int], rngs: list[random.Random]) -> HandRecord:
        n = len(seats)
        holes, board = deal_cards(self.seed, k, n)
        names = [self.names[s] for s in seats]
        state = HandState(self.game, players=names, hole_cards=holes, hand_id=str(k), source="dealer")
        sent: dict[int, str] = {}
        self._earlier = {s: [] for s in range(n)}
        self._send_all(state, k, seats, sent)
        while not state.is_over:
            if state.needs_board:
                lo, hi = _BOARD_STEPS[state.street]
                state.deal_board(board[lo:hi])
                continue
            pos = state.to_act
            assert pos is not None
            seat = seats[pos]
            pol = self.policies[seat]
            if pol is None:
                self._check_quiet(k, seat)
                kind = self._remote_action(k, seat, sent[seat])
                amount = None
                if kind.startswith("r") and len(kind) > 1:
                    amount = float(kind[1:]) - (state.total_committed[pos] - state.committed[pos])
                    kind = "r"
                try:
                    state.act(kind, amount)
                except GameError as exc:
                    raise ProtocolError(f"hand {k}: seat {seat} (remote) answered an illegal action: {exc}") from None
            else:
                self._check_quiet(k, None)
                dp = state.decision_point()
                kind = pol.act(dp, rngs[seat])
                if kind not in dp.legal:
                    raise GameError(f"bot {names[pos]!r} chose {kind!r} where only {dp.legal!r} is legal (hand {k})")
                state.act(kind)
            while state.needs_board and not state.is_over:
                lo, hi = _BOARD_STEPS[state.street]
                state.deal_board(board[lo:hi])
            self._send_all(state, k, seats, sent)
        payoffs = acpc_payoffs(state)   # a split pot in fractions of a chip, as ACPC pays it
        return HandRecord(
            source="dealer", line=0, hand_id=str(k), game=self.game, players=tuple(names),
            hole_cards=tuple(tuple(h) for h in holes), board=state.board, actions=tuple(state.actions),
            payoffs=payoffs, format="match", extra={"betting": state.history},
        )


def parse_version_from(ch: LineChannel, timeout: float) -> tuple[int, int, int]:
    """Read and check a client's ``VERSION`` handshake line."""
    try:
        return parse_version(ch.read_line(timeout))
    except ProtocolError as exc:
        msg = str(exc)
        raise ProtocolError(msg if msg.startswith(ch.peer) else f"{ch.peer}: {msg}") from None
