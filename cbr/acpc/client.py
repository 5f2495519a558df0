"""An ACPC 2.0.0 client: plays a policy against any dealer that follows the protocol.

It connects, sends ``VERSION:2.0.0``, then reads ``MATCHSTATE`` lines: each is replayed
through the rules engine (:mod:`cbr.acpc.matchstate`), so the client knows whose turn it is
and acts only on its own turn, answering ``<matchstate>:<action>``. States where another
seat is to act, and the end-of-hand states, are only recorded. The match ends cleanly when
the dealer closes the connection between hands (or after ``hands`` hands, if given).

Problems end the match with :class:`~cbr.errors.ProtocolError`: a connection that cannot
be made, a dealer that closes it before dealing us a single hand (every seat taken, or
another seat that never connected: our dealer says why in a comment line, which the
message repeats; the reference dealer just closes), a dealer that goes away in the
middle of a hand or before ``hands`` hands (with the comment it sent before closing, if
any), a
line that is not a valid ``MATCHSTATE`` for the game, a state that does not follow the
previous one (another position within a hand, a hand number going back, betting that
does not extend the previous betting or lacks our answer, changed cards), and a dealer silent for longer
than ``timeout`` seconds. Retention is started (or refused) before connecting. An exception
that stops the match (those, a ``KeyboardInterrupt``) carries the result of the hands
finished before it (:func:`stopped_result`).

>>> parse_address("127.0.0.1:18791")
('127.0.0.1', 18791)
"""
from __future__ import annotations

import random
import socket
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from cbr.acpc.matchstate import MatchState, parse_matchstate, state_from_matchstate
from cbr.acpc.protocol import VERSION_LINE, Disconnected, LineChannel, acpc_payoffs, answer_line, short
from cbr.errors import GameError, ProtocolError, counted
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import GameDef
from cbr.game.state import HandState
from cbr.logs.record import HandRecord
from cbr.play.table import PolicySeat, Seat, check_seats, end_hand, expert_choices, play_out, seat_refusal
from cbr.policies.base import Decision, Policy


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` -> ``(host, port)``; raises :class:`ProtocolError` when malformed.

    >>> parse_address("localhost")
    Traceback (most recent call last):
    ...
    cbr.errors.ProtocolError: dealer address 'localhost' is not HOST:PORT
    """
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ProtocolError(f"dealer address {short(text)} is not HOST:PORT")
    return host.strip("[]"), int(port)


@dataclass(frozen=True)
class PlayedHand:
    """One finished hand as the client saw it (the final ``MATCHSTATE``): ``hand_number`` is
    the match's, numbered from 1 as the adaptive bot's ``experts`` (``first_hand``,
    ``last_hand``) and ``cbr match`` number them; ``acpc_hand_number`` is the dealer's number of
    it in the protocol (from 0 at our dealer; a dealer may start elsewhere)."""

    hand_number: int
    acpc_hand_number: int
    position: int
    betting: str
    cards: str
    won: float

    def to_dict(self) -> dict:
        return dict(vars(self))


@dataclass
class ClientResult:
    """What :func:`play_acpc` returns: every finished hand and the chips won in all;
    ``experts``: for an adaptive bot, the experts it chose (:func:`~cbr.play.table.expert_choices`,
    as ``cbr match`` reports them), empty for any other bot."""

    game: GameDef
    hands: list[PlayedHand] = field(default_factory=list)
    actions: int = 0
    retained: int = 0  # cases kept with retention on
    interrupted: bool = False  # stopped by a KeyboardInterrupt (Ctrl-C, SIGTERM): the hands finished before
    error: str = ""            # the error that stopped the match; the hands finished before it
    experts: tuple = ()

    @property
    def total(self) -> float:
        return float(sum(h.won for h in self.hands))

    @property
    def sb_per_hand(self) -> float:
        return self.total / len(self.hands) / self.game.small_bet if self.hands else 0.0

    def to_dict(self) -> dict:
        """Plain data; ``sb_per_hand`` to 12 significant digits, as ``cbr match --json`` gives its
        rates (:func:`cbr.play.match.json_rate`: ``0.11``, not ``0.11000000000000001``)."""
        from cbr.play.match import json_rate

        return {"game": self.game.name, "hands": len(self.hands), "actions": self.actions,
                "total": self.total, "sb_per_hand": json_rate(self.sb_per_hand), "retained": self.retained,
                **({"interrupted": True} if self.interrupted else {}), **({"error": self.error} if self.error else {}),
                **({"experts": [c.to_dict() for c in self.experts]} if self.experts else {}),
                "played": [h.to_dict() for h in self.hands]}


def stopped_result(exc: BaseException) -> Optional[ClientResult]:
    """The result of the hands :func:`play_acpc` finished before ``exc`` stopped it
    (``interrupted`` or ``error`` set); None when ``exc`` did not come from a match.

    >>> stopped_result(KeyboardInterrupt()) is None
    True
    """
    result = getattr(exc, "client_result", None)
    return result if isinstance(result, ClientResult) else None


def _cards_field(line: str) -> str:
    return line.rsplit(":", 1)[-1]


def play_acpc(address: tuple[str, int], policy: Policy, game: GameDef, *, hands: Optional[int] = None,
              seed: int = 0, timeout: float = 60.0, connect_timeout: float = 10.0,
              progress: Optional[Callable[[int], None]] = None, retain: bool = False,
              retain_into: Optional[str] = None) -> ClientResult:
    """Connect to the dealer at ``address`` and play until it closes (or ``hands`` hands).

    ``timeout``: seconds to wait for each line from the dealer. ``progress(1)`` after each
    finished hand. Raises :class:`ProtocolError` as the module docstring says.
    ``retain``/``retain_into``: a case-based ``policy`` keeps every finished hand as it
    ends (its decisions, and the opponents' shown at a showdown; :mod:`cbr.play.retention`);
    what was kept before an error stays kept; retention is started before connecting, so a
    policy that cannot retain never takes a dealer's seat, nor does one that cannot play at a
    table of ``game``'s seats (a heads-up-only bot in a 3-player game: :class:`GameError`); a
    dealer whose first ``MATCHSTATE`` shows a table the bot cannot play at (a 3-player match
    for a heads-up-only bot told the 2-player game) is a :class:`ProtocolError` saying so,
    before the bot acts.
    """
    if game.betting != "limit":
        raise GameError(f"game {game.name!r} is no-limit; the ACPC client plays limit games only")
    check_seats([policy], game.n_players)  # before it takes a seat: a heads-up bot at a bigger table
    host, port = address
    retainer = None
    if retain or retain_into is not None:  # refused (or started) before a seat is taken
        from cbr.play.retention import start_retention

        retainer = start_retention([policy], [policy.name], into=retain_into)[0]
    try:
        sock = _connect(host, port, connect_timeout)
    except BaseException:
        if retainer is not None:
            retainer.close()
        raise
    ch = LineChannel(sock, f"the dealer at {host}:{port}")
    dealer = _Dealer(ch, game, timeout, hands, refusal=lambda players: seat_refusal(policy, players))
    rng = random.Random(f"cbr-act:{seed}:acpc")
    result = ClientResult(game)
    policy.reset()
    own = _OwnSeat(policy, rng, dealer)
    n = game.n_players
    if retainer is not None:  # seats are relative to ours: 0 is this client, k the k-th seat after it
        retainer.keep, retainer.names = {0}, [policy.name] + [f"{host}:{port}"] * (n - 1)
    try:
        ch.send_line(VERSION_LINE)
        while hands is None or len(result.hands) < hands:
            if not dealer.next_hand(len(result.hands)):
                break
            ms = dealer.ms
            names = seat_names_seen_from(ms.position, n, policy.name)
            state = HandState(game, players=names, hole_cards=[ms.hole if p == ms.position else None for p in range(n)],
                              hand_id=str(ms.hand_number), source="acpc")
            seats: list[Seat] = [own if p == ms.position else _RemoteSeat(dealer) for p in range(n)]
            decisions: list = []
            play_out(state, seats, _DealtBoard(dealer), decisions=decisions)
            final = dealer.hand_over(state)
            try:
                payoffs = acpc_payoffs(final)
            except GameError as exc:
                raise ProtocolError(f"{ch.peer} ended {dealer.hand(ms)} without the cards "
                                    f"to settle it: {exc}") from None
            record = _seen_record(final, dealer.ms, policy.name, payoffs)
            retained = end_hand(record, seats, [(p - ms.position) % n for p in range(n)], decisions,
                                retainers=[retainer] if retainer is not None else ())
            result.actions += own.answered
            own.answered = 0
            result.retained += retained
            result.hands.append(PlayedHand(len(result.hands) + 1, ms.hand_number, ms.position, dealer.ms.betting,
                                           _cards_field(dealer.line), payoffs[ms.position]))
            dealer.finished = ms.hand_number
            dealer.played += 1
            dealer.ms = None
            if progress is not None:
                progress(1)
        result.experts = expert_choices([policy])[0]
        return result
    except BaseException as exc:
        result.actions += own.answered
        result.experts = expert_choices([policy])[0]
        if isinstance(exc, KeyboardInterrupt):
            result.interrupted = True
        else:
            result.error = str(exc) or type(exc).__name__
        exc.client_result = result  # type: ignore[attr-defined]
        raise
    finally:
        try:
            if retainer is not None:
                retainer.close()
        finally:
            ch.close()


def seat_names_seen_from(position: int, n: int, name: str) -> list[str]:
    """The players' names at a table seen from ``position``: ``name`` there, ``opponent+k``
    for the seat ``k`` places after it (the protocol names no one; relative seats stay the
    same person while the dealer rotates the positions).

    >>> seat_names_seen_from(1, 3, "cbr")
    ['opponent+2', 'cbr', 'opponent+1']
    """
    return [name if p == position else f"opponent+{(p - position) % n}" for p in range(n)]


def seats_shown(line: str) -> Optional[int]:
    """The seats of the table a ``MATCHSTATE`` line shows (its hole-card slots), None when the
    line does not have the protocol's five fields.

    >>> seats_shown("MATCHSTATE:1:0::|AsKd|"), seats_shown("MATCHSTATE:0:0::AsKd|"), seats_shown("hello")
    (3, 2, None)
    """
    parts = line.strip().split(":")
    if len(parts) != 5 or parts[0] != "MATCHSTATE":
        return None
    return parts[4].split("/")[0].count("|") + 1


class _Dealer:
    """The dealer as this client hears it: each line a ``MATCHSTATE``, replayed
    (:attr:`state`) and checked to follow the one before (:func:`_check_sequence`)."""

    def __init__(self, ch: LineChannel, game: GameDef, timeout: float, hands: Optional[int],
                 refusal: Callable[[int], str] = lambda players: "") -> None:
        self.ch, self.game, self.timeout, self.hands = ch, game, timeout, hands
        self.refusal = refusal                   # why our bot cannot sit at a table of that many ("": it can)
        self.ms: Optional[MatchState] = None     # the last state of the hand in progress
        self.state: Any = None                   # ``ms`` replayed
        self.line = ""
        self.finished = -1                       # the last hand number seen to its end
        self.played = 0                          # hands seen to their end
        self.answered: Optional[str] = None      # betting + our action, awaiting the next state

    def _read(self, played: int) -> bool:
        """The next line; False when the dealer closed the connection between hands (the match is over)."""
        ch = self.ch
        ch.last_comment = ""  # a comment before the dealer closes says why it closes
        try:
            line = ch.read_line(self.timeout)
        except Disconnected:
            said = f": {ch.last_comment}" if ch.last_comment else ""
            if self.ms is not None:
                raise ProtocolError(f"{ch.peer} closed the connection in the middle of "
                                    f"{self.hand()}{said}") from None
            if self.finished < 0:  # not a match that ended: we never had a seat
                why = said or " (is every seat of its match taken, or is the match over?)"
                raise ProtocolError(f"{ch.peer} closed the connection before dealing us a hand{why}") from None
            if self.hands is not None:
                raise ProtocolError(f"{ch.peer} closed the connection after {played:,} "
                                    f"of {counted(self.hands, 'hand')}{said}") from None
            return False
        try:
            ms = parse_matchstate(line, self.game)
            state = state_from_matchstate(ms, self.game)
        except GameError as exc:
            seats = seats_shown(line)
            if self.finished < 0 and self.ms is None and seats not in (None, self.game.n_players):
                refusal = self.refusal(seats)  # type: ignore[arg-type]
                shows = f"{ch.peer} deals a {seats}-player game (its first MATCHSTATE shows {counted(seats, 'seat')})"
                if refusal:  # the first state shows the dealer's table: our bot cannot sit at it
                    raise ProtocolError(f"{shows}: {refusal}") from None
                if 2 <= seats <= 10:  # a table a game exists for: the client was told another
                    raise ProtocolError(f"{shows}, not {self.game.name!r}: pass --game holdem.limit.{seats}p "
                                        f"(or its own game file)") from None
            where = f" in {self.hand()}" if self.ms is not None else ""
            raise ProtocolError(f"{ch.peer} sent a bad MATCHSTATE{where}: {exc}") from None
        _check_sequence(self.ms, self.finished, ms, ch.peer, self.hand(ms))
        if self.answered is not None:
            if not ms.betting.startswith(self.answered):
                hint = ""
                if ms.betting.startswith(self.answered[:-1] + "c") and self.answered[-1] != "c":
                    hint = (f": it recorded a call for our {self.answered[-1]!r}, as the ACPC reference dealer "
                            f"does with an action its game does not allow; is its game {self.game.name!r}, ours?")
                raise ProtocolError(f"{ch.peer} sent betting {short(ms.betting)} in {self.hand(ms)} "
                                    f"that does not hold our action ({short(self.answered)}){hint}",
                                    field="game" if hint else None)
            self.answered = None
        self.ms, self.state, self.line = ms, state, line
        return True

    def hand(self, ms: Optional[MatchState] = None) -> str:
        """The hand of ``ms`` (default: the one in progress) as a message names it: the match's
        number, from 1 as the summary and ``--json``'s ``hand_number`` count the hands, and the
        dealer's own (``acpc_hand_number``, from its ``MATCHSTATE``), to find it in its log.

        >>> from cbr.game import preset
        >>> d = _Dealer(None, None, 1.0, None)
        >>> d.played = 700
        >>> d.hand(parse_matchstate("MATCHSTATE:0:700::AsAh|", preset("holdem.limit.2p")))
        "hand 701 (the dealer's hand 700)"
        """
        ms = ms if ms is not None else self.ms
        return f"hand {self.played + 1} (the dealer's hand {ms.hand_number})"

    def next_hand(self, played: int) -> bool:
        """Read the first line of the next hand; False when the match is over."""
        return self._read(played)

    def more(self) -> None:
        """Read the next line of the hand in progress."""
        self._read(0)

    def action(self, i: int, position: int) -> str:
        """The ``i``-th action of the hand (by ``position``), read from the lines as they come."""
        while len(self.state.actions) <= i:
            self.more()
        a = self.state.actions[i]
        if a.position != position:
            raise ProtocolError(f"{self.ch.peer} sent betting {short(self.ms.betting)} in {self.hand()} "
                                f"where position {position} was to act, not {a.position}")
        return a.kind

    def hand_over(self, state: HandState) -> Any:
        """The dealer's last state of the hand ``state`` played to its end (the cards shown)."""
        while not self.state.is_over:
            self.more()
        if len(self.state.actions) != len(state.actions):
            raise ProtocolError(f"{self.ch.peer} ended {self.hand()} with betting "
                                f"{short(self.ms.betting)}, not the hand played ({short(state.history)})")
        return self.state


class _RemoteSeat(Seat):
    """Another seat at the dealer's table: its action comes on the dealer's next lines."""

    def __init__(self, dealer: _Dealer) -> None:
        self.dealer = dealer

    def act(self, state: HandState, dp: DecisionPoint) -> str:
        return self.dealer.action(len(state.actions), dp.position)


class _OwnSeat(PolicySeat):
    """This client's seat: the policy decides, and the answer goes to the dealer on the line it answers."""

    def __init__(self, policy: Policy, rng: random.Random, dealer: _Dealer) -> None:
        super().__init__(policy, rng)
        self.dealer = dealer
        self.answered = 0

    def decide(self, state: HandState, dp: DecisionPoint) -> Decision:
        d = self.dealer
        i = len(state.actions)
        if len(d.state.actions) > i:  # the dealer played this turn itself (a dealer may act for a seat)
            kind = d.action(i, dp.position)
            return Decision(dp=dp.taken(kind), action=kind)
        if d.state.to_act != dp.position or d.state.needs_board:
            raise ProtocolError(f"{d.ch.peer} did not send the state of our turn in {d.hand()} "
                                f"(its betting {short(d.ms.betting)}, ours {short(state.history)})")
        decision = self.policy.decide(dp, self.rng)
        if decision.action not in dp.legal:
            raise GameError(f"policy {self.policy.name!r} chose {decision.action!r} where only {dp.legal!r} is legal")
        d.ch.send_line(answer_line(d.line, decision.action))
        d.answered = d.ms.betting + decision.action
        self.answered += 1
        return decision


class _DealtBoard:
    """The board as the dealer deals it: ``board[lo:hi]`` waits for the line that shows those cards."""

    def __init__(self, dealer: _Dealer) -> None:
        self.dealer = dealer

    def __getitem__(self, cards: slice) -> tuple[int, ...]:
        while len(self.dealer.ms.board) < cards.stop:
            self.dealer.more()
        return self.dealer.ms.board[cards]


def _connect(host: str, port: int, timeout: float) -> socket.socket:
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except socket.timeout:
        raise ProtocolError(f"cannot connect to the dealer at {host}:{port}: no answer within "
                            f"{timeout:g} s") from None
    except OSError as exc:
        raise ProtocolError(f"cannot connect to the dealer at {host}:{port}: "
                            f"{(exc.strerror or str(exc)).lower()}") from None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _seen_record(state: Any, ms: MatchState, name: str, payoffs: Optional[tuple[float, ...]] = None) -> HandRecord:
    """A finished hand as this client saw it (its cards, and those shown), its players named
    by :func:`seat_names_seen_from`.

    >>> from cbr.game import preset
    >>> g = preset("holdem.limit.2p")
    >>> ms = parse_matchstate("MATCHSTATE:1:7:f:|AsKs", g)
    >>> record = _seen_record(state_from_matchstate(ms, g), ms, "me")
    >>> record.players, record.payoffs
    (('opponent+1', 'me'), (5.0, -5.0))
    """
    players = tuple(seat_names_seen_from(ms.position, state.game.n_players, name))
    return HandRecord(source="acpc", line=0, hand_id=str(ms.hand_number), game=state.game, players=players,
                      hole_cards=tuple(tuple(h) if h is not None else None for h in state.hole_cards),
                      board=tuple(state.board), actions=tuple(state.actions),
                      payoffs=tuple(acpc_payoffs(state)) if payoffs is None else tuple(payoffs), format="acpc")


def _check_sequence(prev: Optional[MatchState], finished: int, ms: MatchState, peer: str, hand: str) -> None:
    """A state must continue the hand in progress, or start a later hand once it is over
    (``hand``: the hand in progress as messages name it, :meth:`_Dealer.hand`; the dealer's
    numbers of other hands are said as its own)."""
    if prev is None:
        if ms.hand_number <= finished:
            raise ProtocolError(f"{peer} sent its hand {ms.hand_number} after its hand {finished} was over "
                                f"(out of order)")
        return
    if ms.hand_number != prev.hand_number:
        raise ProtocolError(f"{peer} sent its hand {ms.hand_number} before its hand {prev.hand_number} was over "
                            f"(out of order)")
    if ms.position != prev.position or ms.hole != prev.hole:
        raise ProtocolError(f"{peer} changed our position or hole cards in the middle of {hand}")
    if len(ms.betting) <= len(prev.betting) or not ms.betting.startswith(prev.betting) or ms.board[:len(prev.board)] != prev.board:
        raise ProtocolError(f"{peer} sent betting {short(ms.betting)} in {hand} that does not "
                            f"follow {short(prev.betting)} (out of order)")
