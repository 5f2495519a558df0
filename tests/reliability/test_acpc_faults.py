"""Faults on both sides of the ACPC protocol (issue 8, section 4): a fake peer in the test
(a raw loopback socket speaking bad protocol) against a real `cbr serve-dealer` or
`cbr play --acpc` process. Each fault ends the process with one `error:` line and exit 1,
and every process and socket ends (timeouts; the fixture kills what is left)."""
from __future__ import annotations

import socket
import time

import pytest

from tests.acpc.support import WAIT, Procs, finish

# ---- a fake client against the real dealer ------------------------------------------


def connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    s.settimeout(WAIT)
    return s


def read_line(s: socket.socket) -> str:
    buf = b""
    while not buf.endswith(b"\r\n"):
        chunk = s.recv(1)
        if not chunk:
            break
        buf += chunk
    return buf.decode().rstrip("\r\n")


def first_turn(s: socket.socket) -> str:
    """Read states until the fake client (remote in seat 0 vs `call`) must act; return that state.
    With `call` in seat 1, hand 0 (reversed blinds) has position 1 = seat 1 open: it calls,
    then seat 0 (position 0, big blind) acts."""
    while True:
        line = read_line(s)
        assert line.startswith("MATCHSTATE:"), line
        if line.split(":")[3] == "c":
            return line


def dealer_error(procs: Procs, fault, *extra: object) -> str:
    dealer, port = procs.dealer("-p", "remote,call", "-n", 5, "--timeout", 2, *extra)
    s = connect(port)
    try:
        fault(s)
        code, out, err = finish(dealer)
    finally:
        s.close()
    assert code == 1, (out, err)
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize("fault, words", [
    (lambda s: s.sendall(b"VERSION:1.0.0\r\n"), "speaks protocol version 1.0.0"),
    (lambda s: s.sendall(b"HELLO\n"), "expected the handshake"),
    (lambda s: s.sendall(b"\xff\xfe\x00garbage\n"), "not ASCII"),
    (lambda s: s.sendall(b"x" * 10000), "longer than 4,096 bytes"),
    (lambda s: s.close(), "closed the connection"),
], ids=["old-version", "no-handshake", "binary", "endless-line", "hang-up"])
def test_bad_handshakes(procs: Procs, fault, words: str) -> None:
    assert words in dealer_error(procs, fault)


def _answer(text: str):
    def fault(s: socket.socket) -> None:
        s.sendall(b"VERSION:2.0.0\r\n")
        state = first_turn(s)
        s.sendall(text.replace("{state}", state).encode() + b"\r\n")
    return fault


@pytest.mark.parametrize("text, words", [
    ("{state}:x", "is not f, c or r"),
    ("{state}:r250", "a limit raise is a bare 'r'"),
    ("{state}", "does not repeat the state"),
    ("MATCHSTATE:0:9::|:c", "does not repeat the state"),
    ("garbage", "does not repeat the state"),
], ids=["unknown-action", "limit-amount", "no-action", "other-state", "garbage"])
def test_bad_answers(procs: Procs, text: str, words: str) -> None:
    err = dealer_error(procs, _answer(text))
    assert "seat 0 (remote)" in err and words in err, err


def test_answer_out_of_turn(procs: Procs) -> None:
    """Seat 0 answers the first state of hand 0, where the bot in position 1 is to act."""
    def fault(s: socket.socket) -> None:
        s.sendall(b"VERSION:2.0.0\r\n")
        first = read_line(s)
        assert first.split(":")[3] == ""
        s.sendall(first.encode() + b":r\r\n")
    err = dealer_error(procs, fault)
    assert "seat 0 (remote)" in err and "when it was not its turn (out of turn)" in err, err


def test_disconnect_in_the_middle_of_a_hand(procs: Procs) -> None:
    def fault(s: socket.socket) -> None:
        s.sendall(b"VERSION:2.0.0\r\n")
        first_turn(s)
        s.shutdown(socket.SHUT_RDWR)
    err = dealer_error(procs, fault)
    assert "hand 0" in err and "closed the connection" in err


def test_slow_client_times_out(procs: Procs) -> None:
    start = time.monotonic()

    def fault(s: socket.socket) -> None:
        s.sendall(b"VERSION:2.0.0\r\n")
        first_turn(s)
    err = dealer_error(procs, fault, "--timeout", 0.5)
    assert "did not act within 0.5 s" in err
    assert time.monotonic() - start < WAIT


def test_client_that_never_connects(procs: Procs) -> None:
    dealer, _ = procs.dealer("-p", "remote,call", "--connect-timeout", 0.5)
    code, out, err = finish(dealer)
    assert code == 1 and err.strip() == "error: 1 remote seat did not connect within 0.5 s"


# ---- a fake dealer against the real client --------------------------------------------


@pytest.fixture
def fake_dealer():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(WAIT)
    yield server
    server.close()


def client_error(procs: Procs, server: socket.socket, lines: list[str], *extra: object,
                 hang: bool = False) -> str:
    port = server.getsockname()[1]
    client = procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "call", *extra)
    conn, _ = server.accept()
    conn.settimeout(WAIT)
    try:
        assert read_line(conn) == "VERSION:2.0.0"
        for line in lines:
            conn.sendall(line.encode() + b"\r\n")
        if not hang:
            conn.shutdown(socket.SHUT_WR)
        code, out, err = finish(client)
    finally:
        conn.close()
    assert code == 1, (out, err)
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize("lines, words", [
    (["MATCHSTATE:0:0::AsAh"], "bad MATCHSTATE"),
    (["NONSENSE"], "bad MATCHSTATE"),
    (["MATCHSTATE:0:0:rrrrr:AsAh|"], "bad MATCHSTATE"),
    (["MATCHSTATE:0:0::AsAh|", "MATCHSTATE:0:1::AsAh|"], "out of order"),
    (["MATCHSTATE:0:3:cc/cc/cc/cc:AsAh|KsKh/2c3c4c/5d/7h", "MATCHSTATE:0:2::AsAh|"], "out of order"),
    (["MATCHSTATE:0:0:c:AsAh|", "MATCHSTATE:0:0:c:AsAh|"], "out of order"),
    (["MATCHSTATE:0:0:c:AsAh|", "MATCHSTATE:1:0:cc/:|AsAh/2c3c4c"], "changed our position"),
    (["MATCHSTATE:0:0:cc/cc/cc/cc:AsAh|/2c3c4c/5d/7h"], "without the cards"),
    (["MATCHSTATE:1:0::|AsAh"], "closed the connection in the middle of hand 1 (the dealer's hand 0)"),
], ids=["one-hole-slot", "nonsense", "too-many-raises", "next-hand-early", "hand-goes-back",
        "repeated-state", "position-changes", "showdown-without-cards", "hang-up-mid-hand"])
def test_bad_dealer_lines(procs: Procs, fake_dealer: socket.socket, lines: list[str], words: str) -> None:
    err = client_error(procs, fake_dealer, lines)
    assert words in err, err


def test_a_hang_up_mid_hand_names_the_hand_as_the_summary_counts_it(procs: Procs, fake_dealer: socket.socket) -> None:
    """After two hands (the dealer's 40 and 41) the dealer hangs up in the next: the summary said
    2 hands, the error `in the middle of hand 42`, the dealer's number unlabelled. The hand is the
    match's third, and the dealer's number is named as its own."""
    lines = ["MATCHSTATE:0:40:rf:AsAh|", "MATCHSTATE:1:41:rf:|KsKh", "MATCHSTATE:0:42::QsQh|"]
    err = client_error(procs, fake_dealer, lines)
    assert err == f"error: the dealer at 127.0.0.1:{fake_dealer.getsockname()[1]} closed the connection in the " \
                  "middle of hand 3 (the dealer's hand 42)", err


def test_dealer_closing_before_the_hands_asked_for(procs: Procs, fake_dealer: socket.socket) -> None:
    lines = ["MATCHSTATE:0:0:rf:AsAh|"]
    err = client_error(procs, fake_dealer, lines, "--hands", 3)
    assert "after 1 of 3 hands" in err


def test_silent_dealer_times_out(procs: Procs, fake_dealer: socket.socket) -> None:
    err = client_error(procs, fake_dealer, ["MATCHSTATE:0:0::AsAh|"], "--timeout", 0.5, hang=True)
    assert "sent nothing for 0.5 s" in err


def test_closed_port_is_one_line(procs: Procs) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()                                   # nobody listens there now
    code, out, err = finish(procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "call"))
    assert code == 1 and out == ""
    assert err == f"error: cannot connect to the dealer at 127.0.0.1:{port}: connection refused\n"


def test_bad_address_and_policy_are_one_line(procs: Procs) -> None:
    # a malformed address is the option's value as typed: a usage error naming --acpc (docs/cli.md)
    for address in ("nowhere", "localhost", "127.0.0.1:99999", ":9", "127.0.0.1:"):
        code, _, err = finish(procs.start("play", "--acpc", address, "--policy", "call"))
        assert code == 2 and err.endswith(f"Error: Invalid value for '--acpc': dealer address {address!r} is not "
                                          f"HOST:PORT\n"), err
    code, _, err = finish(procs.start("play", "--acpc", "127.0.0.1:9", "--policy", "nobody"))
    assert code == 2 and "Invalid value for '--policy'" in err and "nobody" in err, err  # a usage error
