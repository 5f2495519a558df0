"""The ACPC protocol 2.0.0 text (issue 8, section 4): MATCHSTATE lines the dealer sends agree
with the rules engine's reading of them, answers and handshakes are checked, the line channel
handles line ends, comments, split packets, long lines and timeouts, and the client answers
exactly on its turns (a scripted dealer thread on loopback)."""
from __future__ import annotations

import random
import socket
import threading

import pytest

from cbr.acpc.client import parse_address, play_acpc
from cbr.acpc.dealer import Dealer
from cbr.acpc.matchstate import matchstate_line, parse_matchstate, state_from_matchstate
from cbr.acpc.protocol import (
    MAX_LINE,
    VERSION_LINE,
    Disconnected,
    LineChannel,
    parse_answer,
    parse_version,
)
from cbr.errors import GameError, ProtocolError
from cbr.game.gamedef import preset
from cbr.game.state import HandState
from cbr.play.match import deal_cards
from cbr.policies import make_policy
from evaluator_ext.cards import cards_str

WAIT = 30


@pytest.mark.parametrize("game", ["holdem.limit.2p", "casper.2p", "holdem.limit.3p"])
def test_every_matchstate_reads_back_as_the_dealer_state(game: str) -> None:
    """Random hands: at every step, each position's MATCHSTATE replays to the same turn, legal
    actions, board and pot, and shows only that position's cards (all live cards at a showdown)."""
    g = preset(game)
    rng = random.Random(7)
    showdowns = 0
    for k in range(150):
        holes, board = deal_cards(3, k, g.n_players)
        state = HandState(g, hole_cards=holes, hand_id=str(k))
        while True:
            while state.needs_board and not state.is_over:
                lo, hi = ((0, 3), (3, 4), (4, 5))[state.street]
                state.deal_board(board[lo:hi])
            for viewer in range(g.n_players):
                line = matchstate_line(state, k, viewer)
                ms = parse_matchstate(line, g)
                seen = state_from_matchstate(ms, g)
                assert (ms.position, ms.hand_number, ms.hole) == (viewer, k, holes[viewer])
                assert seen.history == state.history and seen.board == state.board
                assert seen.is_over == state.is_over and seen.pot == state.pot
                if not state.is_over:
                    assert seen.to_act == state.to_act and seen.legal_actions() == state.legal_actions()
                    assert [h is not None for h in ms.holes] == [p == viewer for p in range(g.n_players)]
                else:
                    live = [not f for f in state.folded]
                    at_showdown = sum(live) > 1
                    showdowns += at_showdown
                    assert [h is not None for h in ms.holes] == \
                        [p == viewer or (at_showdown and live[p]) for p in range(g.n_players)]
                    assert seen.payoffs() == state.payoffs()
            if state.is_over:
                break
            state.act(rng.choice(state.legal_actions()))
    assert showdowns > 0


def test_matchstate_text_is_acpc() -> None:
    g = preset("holdem.limit.2p")
    s = HandState(g, hole_cards=[(51, 50), (0, 5)])
    assert matchstate_line(s, 0, 1) == f"MATCHSTATE:1:0::|{cards_str((0, 5))}"
    s.act("c")
    s.act("c")
    s.deal_board((8, 12, 16))
    assert matchstate_line(s, 3, 0) == f"MATCHSTATE:0:3:cc/:AsAh|/{cards_str((8, 12, 16))}"


def test_answers_and_versions() -> None:
    g, nl = preset("holdem.limit.2p"), preset("holdem.nolimit.6p")
    sent = "MATCHSTATE:0:1:r:AsAh|"
    assert [parse_answer(f"{sent}:{a}", sent, g) for a in "fcr"] == ["f", "c", "r"]
    assert parse_answer("MATCHSTATE:0:1::AsAh|||||:r300", "MATCHSTATE:0:1::AsAh|||||", nl) == "r300"
    for bad, words in [(f"{sent}:", "is not f, c or r"), (f"{sent}:cc", "is not f, c or r"),
                       (f"{sent}:r20", "bare 'r'"), (f"{sent[:-1]}:c", "does not repeat"),
                       ("", "does not repeat")]:
        with pytest.raises(ProtocolError, match=words):
            parse_answer(bad, sent, g)
    with pytest.raises(ProtocolError, match="needs its amount"):
        parse_answer("MATCHSTATE:0:1::AsAh|||||:r", "MATCHSTATE:0:1::AsAh|||||", nl)
    assert parse_version(VERSION_LINE) == (2, 0, 0) and parse_version("VERSION:2.1.7") == (2, 1, 7)
    for bad in ("VERSION:3.0.0", "VERSION:2.0", "version:2.0.0", "MATCHSTATE:0:0::AsAh|"):
        with pytest.raises(ProtocolError):
            parse_version(bad)
    assert issubclass(ProtocolError, ValueError)


def test_addresses() -> None:
    assert parse_address("localhost:80") == ("localhost", 80)
    assert parse_address("[::1]:18791") == ("::1", 18791)
    for bad in ("localhost", ":80", "h:0", "h:65536", "h:x"):
        with pytest.raises(ProtocolError, match="is not HOST:PORT"):
            parse_address(bad)


def test_line_channel() -> None:
    a, b = socket.socketpair()
    try:
        ch = LineChannel(a, "peer")
        b.sendall(b"# a comment\r\n; another\nFIRST\r\nSEC")
        assert ch.read_line(WAIT) == "FIRST"
        b.sendall(b"OND\n")
        assert ch.read_line(WAIT) == "SECOND"
        with pytest.raises(ProtocolError, match="sent nothing for 0.2 s"):
            ch.read_line(0.2)
        ch.send_line("HELLO")
        assert b.recv(100) == b"HELLO\r\n"
        b.sendall(b"x" * (MAX_LINE + 1))
        with pytest.raises(ProtocolError, match=f"longer than {MAX_LINE:,} bytes"):
            ch.read_line(WAIT)
    finally:
        a.close()
        b.close()
    a, b = socket.socketpair()
    try:
        ch = LineChannel(a, "peer")
        b.sendall(b"HALF")
        b.close()
        with pytest.raises(Disconnected, match="in the middle of a line"):
            ch.read_line(WAIT)
    finally:
        a.close()
    a, b = socket.socketpair()
    try:
        ch = LineChannel(a, "peer")
        b.sendall(b"LAST\n")
        b.close()
        assert ch.read_line(WAIT) == "LAST"
        with pytest.raises(Disconnected, match="^peer closed the connection$"):
            ch.read_line(WAIT)
    finally:
        a.close()


class ScriptedDealer(threading.Thread):
    """A dealer in a thread that sends ``script`` lines and records what the client sends;
    ``expect_answer`` after a line makes it wait for one answer first."""

    def __init__(self, script: list[tuple[str, bool]]) -> None:
        super().__init__(daemon=True)
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(WAIT)
        self.script = script
        self.received: list[str] = []
        self.error: BaseException | None = None

    @property
    def port(self) -> int:
        return self.server.getsockname()[1]

    def run(self) -> None:
        try:
            conn, _ = self.server.accept()
            with conn:
                ch = LineChannel(conn, "client")
                self.received.append(ch.read_line(WAIT))
                for line, expect_answer in self.script:
                    ch.send_line(line)
                    if expect_answer:
                        self.received.append(ch.read_line(WAIT))
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            self.server.close()


def test_client_answers_exactly_on_its_turns_with_reversed_blinds() -> None:
    """Heads-up reversed blinds: position 1 (small blind) opens pre-flop, position 0 opens the
    flop. Our client is position 0 in hand 0 and position 1 in hand 1; it always calls."""
    script = [
        ("MATCHSTATE:0:0::AsAh|", False),                      # position 1 to act: no answer
        ("MATCHSTATE:0:0:r:AsAh|", True),                      # our turn
        ("MATCHSTATE:0:0:rc/:AsAh|/2c3c4c", True),             # we open the flop
        ("MATCHSTATE:0:0:rc/c:AsAh|/2c3c4c", False),
        ("MATCHSTATE:0:0:rc/cr:AsAh|/2c3c4c", True),
        ("MATCHSTATE:0:0:rc/crc/:AsAh|/2c3c4c/5d", True),
        ("MATCHSTATE:0:0:rc/crc/c:AsAh|/2c3c4c/5d", False),
        ("MATCHSTATE:0:0:rc/crc/cr:AsAh|/2c3c4c/5d", True),
        ("MATCHSTATE:0:0:rc/crc/crc/:AsAh|/2c3c4c/5d/7h", True),
        ("MATCHSTATE:0:0:rc/crc/crc/c:AsAh|/2c3c4c/5d/7h", False),
        ("MATCHSTATE:0:0:rc/crc/crc/cr:AsAh|/2c3c4c/5d/7h", True),
        ("MATCHSTATE:0:0:rc/crc/crc/crc:AsAh|QhQd/2c3c4c/5d/7h", False),   # showdown: our wheel wins
        ("MATCHSTATE:1:1::|KdKs", True),                        # hand 1: we open pre-flop
        ("MATCHSTATE:1:1:c:|KdKs", False),
        ("MATCHSTATE:1:1:cc/:|KdKs/2c3c4c", False),
        ("MATCHSTATE:1:1:cc/c:|KdKs/2c3c4c", True),
        ("MATCHSTATE:1:1:cc/cc/:|KdKs/2c3c4c/5d", False),
        ("MATCHSTATE:1:1:cc/cc/c:|KdKs/2c3c4c/5d", True),
        ("MATCHSTATE:1:1:cc/cc/cc/:|KdKs/2c3c4c/5d/7h", False),
        ("MATCHSTATE:1:1:cc/cc/cc/c:|KdKs/2c3c4c/5d/7h", True),
        ("MATCHSTATE:1:1:cc/cc/cc/cc:QhQd|KdKs/2c3c4c/5d/7h", False),
    ]
    dealer = ScriptedDealer(script)
    dealer.start()
    result = play_acpc(("127.0.0.1", dealer.port), make_policy("call"), preset("holdem.limit.2p"), timeout=WAIT)
    dealer.join(WAIT)
    assert dealer.error is None, dealer.error
    answers = [line for line, expect in script if expect]
    assert dealer.received == [VERSION_LINE] + [f"{line}:c" for line in answers]
    # the match's numbers from 1 (as the adaptive bot's experts number them), the dealer's kept apart
    assert [(h.hand_number, h.acpc_hand_number, h.position, h.won) for h in result.hands] == [
        (1, 0, 0, 70.0), (2, 1, 1, 10.0)]
    assert result.actions == len(answers)


def test_client_checks_that_the_dealer_applied_its_action() -> None:
    dealer = ScriptedDealer([("MATCHSTATE:0:0:r:AsAh|", True), ("MATCHSTATE:0:0:rf:AsAh|", False)])
    dealer.start()
    with pytest.raises(ProtocolError, match="does not hold our action"):
        play_acpc(("127.0.0.1", dealer.port), make_policy("call"), preset("holdem.limit.2p"), timeout=WAIT)
    dealer.join(WAIT)


def test_client_and_dealer_in_process() -> None:
    """The library pieces without processes: a Dealer thread with a remote seat and the client."""
    dealer = Dealer(["poki", "remote"], 12, seed=2, timeout=WAIT, connect_timeout=WAIT)
    _, port = dealer.listen()
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("r", dealer.run()), daemon=True)
    t.start()
    result = play_acpc(("127.0.0.1", port), make_policy("ehs"), preset("holdem.limit.2p"), timeout=WAIT)
    t.join(WAIT)
    assert box["r"].totals[1] == result.total and sum(box["r"].totals) == 0
    assert len(result.hands) == 12


def test_no_limit_is_refused() -> None:
    with pytest.raises(GameError, match="limit games only"):
        Dealer(["call"] * 6, 3, game=preset("holdem.nolimit.6p"))
    with pytest.raises(GameError, match="limit games only"):
        play_acpc(("127.0.0.1", 9), make_policy("call"), preset("holdem.nolimit.6p"))


def test_client_bot_observes_every_hand_as_it_saw_it() -> None:
    """Bots that learn (player models, weight tables, showdown models) see each finished hand
    through the client as in ``cbr match``: the cards it was shown, the opponent under one name."""
    from cbr.policies.rules import EHSPolicy

    class Watching(EHSPolicy):
        def __init__(self) -> None:
            super().__init__(seed=1)
            self.seen: list = []

        def observe(self, record, position):
            self.seen.append((record, position))

    dealer = Dealer(["lag", "remote"], 40, seed=5, timeout=WAIT, connect_timeout=WAIT)
    _, port = dealer.listen()
    t = threading.Thread(target=dealer.run, daemon=True)
    t.start()
    bot = Watching()
    result = play_acpc(("127.0.0.1", port), bot, preset("holdem.limit.2p"), timeout=WAIT)
    t.join(WAIT)
    assert len(bot.seen) == len(result.hands) == 40
    showdowns = 0
    for (record, position), played in zip(bot.seen, result.hands):
        assert position == played.position and record.players[position] == bot.name
        assert set(record.players) == {bot.name, "opponent+1"}
        assert record.payoffs[position] == played.won and record.hole_cards[position] is not None
        other = 1 - position
        shown = other in record.showdown
        showdowns += shown
        assert (record.hole_cards[other] is not None) == shown  # cards only when shown
    assert 0 < showdowns < 40
    assert {p for _, p in bot.seen} == {0, 1}  # positions rotate, the opponent's name does not
