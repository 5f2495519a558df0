"""The ACPC dealer protocol, version 2.0.0: the text of its lines and a line channel over TCP.

A client connects and sends ``VERSION:2.0.0``. The dealer then sends every seat a
``MATCHSTATE:<position>:<hand>:<betting>:<cards>`` line at the start of each hand and after
every action (the last one of a hand shows the cards of a showdown). The seat whose turn
it is answers the state it was sent followed by ``:`` and its action (``f``, ``c`` or
``r``; no-limit ``rN``). Server lines end in ``\\r\\n``; a peer's line may end in ``\\n``
or ``\\r\\n``; lines starting with ``#`` or ``;`` are comments and are skipped.

The ``MATCHSTATE`` lines themselves are parsed and written in :mod:`cbr.acpc.matchstate`;
this module holds the rest: the handshake, the answers, comments, the line channel, and
how an ACPC dealer pays a finished hand.

>>> from cbr.game import preset
>>> g = preset("holdem.limit.2p")
>>> parse_answer("MATCHSTATE:0:7:r:AsAh|:c", "MATCHSTATE:0:7:r:AsAh|", g)
'c'
>>> parse_version("VERSION:2.0.0")
(2, 0, 0)
"""
from __future__ import annotations

import re
import select
import socket
import time
from typing import Optional

from cbr.errors import ProtocolError
from cbr.game.gamedef import GameDef
from cbr.game.state import HandState

VERSION = "2.0.0"
VERSION_LINE = f"VERSION:{VERSION}"
#: Longest line either side accepts (bytes, without the line end).
MAX_LINE = 4096


def short(text: str, limit: int = 60) -> str:
    """``repr`` of ``text`` cut to ``limit`` characters, for one-line messages.

    >>> short("x" * 100, 5)
    "'xxxxx...'"
    """
    return repr(text if len(text) <= limit else text[:limit] + "...")


def parse_version(line: str) -> tuple[int, int, int]:
    """The version a client announces; raises :class:`ProtocolError` unless it is
    ``VERSION:2.x.y`` (a 2.* client speaks this protocol).

    >>> parse_version("VERSION:1.0.0")
    Traceback (most recent call last):
    ...
    cbr.errors.ProtocolError: client speaks protocol version 1.0.0; this dealer speaks 2.0.0
    """
    m = re.fullmatch(r"VERSION:([0-9]{1,6})\.([0-9]{1,6})\.([0-9]{1,6})", line.strip())
    if m is None:
        raise ProtocolError(f"expected the handshake {VERSION_LINE!r}, got {short(line)}")
    version = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
    if version[0] != 2:
        raise ProtocolError(f"client speaks protocol version {'.'.join(map(str, version))}; "
                            f"this dealer speaks {VERSION}")
    return version


def acpc_payoffs(state: HandState) -> tuple[float, ...]:
    """Net chips won per position of a finished hand, as an ACPC dealer pays them.

    Same as :meth:`HandState.payoffs` except for a pot shared by tied hands: the ACPC
    reference dealer splits it exactly, in fractions of a chip, where ``payoffs`` gives whole
    chips and the odd chip to the first winner after the button. Three-handed, a small blind
    that folds leaves 5 chips for two tied players: 2.5 each here (the reference dealer's
    log line ``STATE:996:rfc/crc/crc/crc:2hKs|6cAh|4sAd/8cTd4d/Ac/Ts:-5|2.5|2.5:...``).

    >>> from cbr.game import preset
    >>> from cbr.acpc.matchstate import parse_matchstate, state_from_matchstate
    >>> g = preset("holdem.limit.3p")
    >>> line = "MATCHSTATE:1:996:rfc/crc/crc/crc:2hKs|6cAh|4sAd/8cTd4d/Ac/Ts"
    >>> s = state_from_matchstate(parse_matchstate(line, g), g)
    >>> acpc_payoffs(s), s.payoffs()
    ((-5.0, 2.5, 2.5), (-5.0, 3.0, 2.0))
    """
    exact = state.payoffs()    # checks that the hand is over and can be settled
    live = [p for p in range(state.n_players) if not state.folded[p]]
    if len(live) < 2:
        return exact
    from evaluator_ext import evaluate  # type: ignore[attr-defined]

    strength = {p: evaluate(tuple(state.hole_cards[p]) + tuple(state.board)) for p in live}  # type: ignore[arg-type]
    won = [0.0] * state.n_players
    for chips, eligible in state.pots():
        best = max(strength[p] for p in eligible)
        winners = [p for p in eligible if strength[p] == best]
        for w in winners:
            won[w] += chips / len(winners)
    return tuple(won[p] - state.total_committed[p] for p in range(state.n_players))


def comment_line(text: str) -> str:
    """A comment line (a peer skips it): ``# text``, on one line.

    >>> comment_line("every seat is taken")
    '# every seat is taken'
    """
    return "# " + " ".join(text.split())


def answer_line(matchstate: str, action: str) -> str:
    """A client's answer: the state it was sent, ``:``, its action.

    >>> answer_line("MATCHSTATE:1:0::|AsAh", "r")
    'MATCHSTATE:1:0::|AsAh:r'
    """
    return f"{matchstate}:{action}"


_ACTION = re.compile(r"[fc]|r([0-9]{1,15})?")


def parse_answer(line: str, sent: str, game: GameDef) -> str:
    """The action in a client's answer to the state ``sent``: ``f``, ``c``, ``r`` (limit) or
    ``rN`` (no-limit, raise to N chips in the hand). Raises :class:`ProtocolError` when
    the line does not repeat ``sent`` exactly or the action is not one of these.

    >>> from cbr.game import preset
    >>> parse_answer("MATCHSTATE:0:1::AsAh|:x", "MATCHSTATE:0:1::AsAh|", preset("holdem.limit.2p"))
    Traceback (most recent call last):
    ...
    cbr.errors.ProtocolError: answer action 'x' is not f, c or r
    """
    if not line.startswith(sent + ":"):
        raise ProtocolError(f"answer {short(line)} does not repeat the state it answers ({short(sent)})")
    action = line[len(sent) + 1:]
    m = _ACTION.fullmatch(action)
    if m is None:
        raise ProtocolError(f"answer action {short(action, 20)} is not f, c or r"
                            + ("N" if game.betting != "limit" else ""))
    if game.betting == "limit" and m.group(1) is not None:
        raise ProtocolError(f"answer action {short(action, 20)}: a limit raise is a bare 'r'")
    if game.betting != "limit" and action == "r":
        raise ProtocolError("answer action 'r': a no-limit raise needs its amount (rN)")
    return action


class Disconnected(ProtocolError):
    """The peer closed the connection (raised by :meth:`LineChannel.read_line`)."""


class LineChannel:
    """Lines over a connected socket: ``send_line`` adds ``\\r\\n``; ``read_line`` returns the
    next line (comment lines skipped; the last is kept in ``last_comment``) or raises :class:`ProtocolError` for a disconnect
    (:class:`Disconnected`), no line within ``timeout`` seconds, a line over
    :data:`MAX_LINE` bytes or one that is not ASCII text. ``peer`` names it in messages.
    """

    def __init__(self, sock: socket.socket, peer: str) -> None:
        self.sock = sock
        self.peer = peer
        self._buf = b""
        self.closed = False
        self.last_comment = ""  # the last comment line skipped (what a peer said on its own)

    def fileno(self) -> int:
        return self.sock.fileno()

    def send_line(self, text: str) -> None:
        try:
            self.sock.sendall(text.encode("ascii") + b"\r\n")
        except OSError as exc:
            raise Disconnected(f"{self.peer} went away ({exc.strerror or exc})") from None

    def has_data(self) -> bool:
        """True when a line (or the end of the connection) is waiting, without blocking."""
        if self._buf:
            return True
        ready, _, _ = select.select([self.sock], [], [], 0)
        return bool(ready)

    def _pop_line(self) -> Optional[str]:
        nl = self._buf.find(b"\n")
        if nl < 0:
            if len(self._buf) > MAX_LINE:
                raise ProtocolError(f"{self.peer} sent a line longer than {MAX_LINE:,} bytes")
            return None
        raw, self._buf = self._buf[:nl], self._buf[nl + 1:]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if len(raw) > MAX_LINE:
            raise ProtocolError(f"{self.peer} sent a line longer than {MAX_LINE:,} bytes")
        try:
            text = raw.decode("ascii")
        except UnicodeDecodeError:
            raise ProtocolError(f"{self.peer} sent a line that is not ASCII text: {short(raw.decode('latin-1'))}") from None
        if not text.isprintable():
            raise ProtocolError(f"{self.peer} sent a line with control characters: {short(text)}")
        return text

    def read_line(self, timeout: Optional[float]) -> str:
        """The next non-comment line, waiting at most ``timeout`` seconds in all (None: forever)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            line = self._pop_line()
            if line is not None:
                if line.startswith(("#", ";")):
                    self.last_comment = line[1:].strip()
                    continue
                return line
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ProtocolError(f"{self.peer} sent nothing for {timeout:g} s (timeout)")
                self.sock.settimeout(left)
            else:
                self.sock.settimeout(None)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                raise ProtocolError(f"{self.peer} sent nothing for {timeout:g} s (timeout)") from None
            except OSError as exc:
                raise Disconnected(f"{self.peer} went away ({exc.strerror or exc})") from None
            if not chunk:
                self.closed = True
                if self._buf:
                    raise Disconnected(f"{self.peer} closed the connection in the middle of a line "
                                       f"({short(self._buf.decode('latin-1'))})")
                raise Disconnected(f"{self.peer} closed the connection")
            self._buf += chunk

    def close_saying(self, text: str) -> None:
        """Send ``text`` as a comment line (:func:`comment_line`) and close, without waiting:
        a peer that reads nothing holds nobody up, and one that went away is no error. What
        the peer sent and was not read is read first, so that closing sends no reset (which
        could drop the comment before the peer reads it)."""
        try:
            self.sock.setblocking(False)
            try:
                self.sock.send(comment_line(text).encode("ascii", "replace") + b"\r\n")
            except OSError:
                pass
            try:
                for _ in range(64):  # what is waiting, not what may still come
                    if not self.sock.recv(65536):
                        break
            except OSError:
                pass
        finally:
            self.close()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:  # pragma: no cover
            pass
