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
from cbr.errors import GameError, ProtocolError
from cbr.game.gamedef import GameDef
from cbr.logs.record import HandRecord
from cbr.policies.base import Policy


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
    """One finished hand as the client saw it (the final ``MATCHSTATE``)."""

    hand_number: int
    position: int
    betting: str
    cards: str
    won: float

    def to_dict(self) -> dict:
        return dict(vars(self))


@dataclass
class ClientResult:
    """What :func:`play_acpc` returns: every finished hand and the chips won in all."""

    game: GameDef
    hands: list[PlayedHand] = field(default_factory=list)
    actions: int = 0
    retained: int = 0  # cases kept with retention on
    interrupted: bool = False  # stopped by a KeyboardInterrupt (Ctrl-C, SIGTERM): the hands finished before
    error: str = ""            # the error that stopped the match; the hands finished before it

    @property
    def total(self) -> float:
        return float(sum(h.won for h in self.hands))

    @property
    def sb_per_hand(self) -> float:
        return self.total / len(self.hands) / self.game.small_bet if self.hands else 0.0

    def to_dict(self) -> dict:
        return {"game": self.game.name, "hands": len(self.hands), "actions": self.actions,
                "total": self.total, "sb_per_hand": self.sb_per_hand, "retained": self.retained,
                **({"interrupted": True} if self.interrupted else {}), **({"error": self.error} if self.error else {}),
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
    policy that cannot retain never takes a dealer's seat.
    """
    if game.betting != "limit":
        raise GameError(f"game {game.name!r} is no-limit; the ACPC client plays limit games only")
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
    rng = random.Random(f"cbr-act:{seed}:acpc")
    result = ClientResult(game)
    policy.reset()
    observes = type(policy).observe is not Policy.observe  # as in cbr match: bots that learn see each hand
    try:
        ch.send_line(VERSION_LINE)
        current: Optional[MatchState] = None      # the last state of the hand in progress
        finished = -1                              # the last hand number seen to its end
        answered: Optional[str] = None             # betting + our action, awaiting the next state
        while hands is None or len(result.hands) < hands:
            ch.last_comment = ""  # a comment before the dealer closes says why it closes
            try:
                line = ch.read_line(timeout)
            except Disconnected:
                said = f": {ch.last_comment}" if ch.last_comment else ""
                if current is not None:
                    raise ProtocolError(f"{ch.peer} closed the connection in the middle of hand "
                                        f"{current.hand_number}{said}") from None
                if finished < 0:  # not a match that ended: we never had a seat
                    why = said or " (is every seat of its match taken, or is the match over?)"
                    raise ProtocolError(f"{ch.peer} closed the connection before dealing us a hand{why}") from None
                if hands is not None:
                    raise ProtocolError(f"{ch.peer} closed the connection after {len(result.hands)} "
                                        f"of {hands} hands{said}") from None
                break
            try:
                ms = parse_matchstate(line, game)
                state = state_from_matchstate(ms, game)
            except GameError as exc:
                where = f" (hand {current.hand_number})" if current is not None else ""
                raise ProtocolError(f"{ch.peer} sent a bad MATCHSTATE{where}: {exc}") from None
            _check_sequence(current, finished, ms, ch.peer)
            if answered is not None:
                if not ms.betting.startswith(answered):
                    hint = ""
                    if ms.betting.startswith(answered[:-1] + "c") and answered[-1] != "c":
                        hint = (f": it recorded a call for our {answered[-1]!r}, as the ACPC reference dealer "
                                f"does with an action its game does not allow; is its game {game.name!r}, ours?")
                    raise ProtocolError(f"{ch.peer} sent betting {short(ms.betting)} in hand {ms.hand_number} "
                                        f"that does not hold our action ({short(answered)}){hint}",
                                        field="game" if hint else None)
                answered = None
            if state.is_over:
                try:
                    won = acpc_payoffs(state)[ms.position]
                except GameError as exc:
                    raise ProtocolError(f"{ch.peer} ended hand {ms.hand_number} without the cards "
                                        f"to settle it: {exc}") from None
                result.hands.append(PlayedHand(ms.hand_number, ms.position, ms.betting, _cards_field(line), won))
                record = _seen_record(state, ms, policy.name)
                if observes:
                    policy.observe(record, ms.position)
                if retainer is not None:
                    result.retained += _retain(retainer, record, ms, policy.name, f"{host}:{port}")
                finished, current = ms.hand_number, None
                if progress is not None:
                    progress(1)
                continue
            current = ms
            if state.needs_board or state.to_act != ms.position:
                continue                            # another seat's turn: nothing to say
            dp = state.decision_point()
            kind = policy.act(dp, rng)
            if kind not in dp.legal:
                raise GameError(f"policy {policy.name!r} chose {kind!r} where only {dp.legal!r} is legal")
            ch.send_line(answer_line(line, kind))
            answered = ms.betting + kind
            result.actions += 1
        return result
    except BaseException as exc:
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


def _seen_record(state: Any, ms: MatchState, name: str) -> HandRecord:
    """A finished hand as this client saw it (its cards, and those shown). The protocol
    names no one, so the others are named by their seat relative to ours (``opponent+1`` is
    the next seat), which stays the same person while the dealer rotates the positions.

    >>> from cbr.game import preset
    >>> g = preset("holdem.limit.2p")
    >>> ms = parse_matchstate("MATCHSTATE:1:7:f:|AsKs", g)
    >>> record = _seen_record(state_from_matchstate(ms, g), ms, "me")
    >>> record.players, record.payoffs
    (('opponent+1', 'me'), (5.0, -5.0))
    """
    n = state.game.n_players
    players = tuple(name if p == ms.position else f"opponent+{(p - ms.position) % n}" for p in range(n))
    return HandRecord(source="acpc", line=0, hand_id=str(ms.hand_number), game=state.game, players=players,
                      hole_cards=tuple(tuple(h) if h is not None else None for h in state.hole_cards),
                      board=tuple(state.board), actions=tuple(state.actions), payoffs=tuple(acpc_payoffs(state)),
                      format="acpc")


def _retain(retainer: Any, record: HandRecord, ms: MatchState, name: str, dealer: str) -> int:
    """Keep a finished hand as this client saw it (:func:`_seen_record`)."""
    players = record.players
    retainer.keep = {ms.position}
    retainer.names = [dealer if p != ms.position else name for p in range(len(players))]
    return retainer.hand(record, None)


def _check_sequence(prev: Optional[MatchState], finished: int, ms: MatchState, peer: str) -> None:
    """A state must continue the hand in progress, or start a later hand once it is over."""
    if prev is None:
        if ms.hand_number <= finished:
            raise ProtocolError(f"{peer} sent hand {ms.hand_number} after hand {finished} was over "
                                f"(out of order)")
        return
    if ms.hand_number != prev.hand_number:
        raise ProtocolError(f"{peer} sent hand {ms.hand_number} before hand {prev.hand_number} was over "
                            f"(out of order)")
    if ms.position != prev.position or ms.hole != prev.hole:
        raise ProtocolError(f"{peer} changed our position or hole cards in the middle of hand {ms.hand_number}")
    if len(ms.betting) <= len(prev.betting) or not ms.betting.startswith(prev.betting) or ms.board[:len(prev.board)] != prev.board:
        raise ProtocolError(f"{peer} sent betting {short(ms.betting)} in hand {ms.hand_number} that does not "
                            f"follow {short(prev.betting)} (out of order)")
