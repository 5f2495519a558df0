"""Findings of a user-acceptance pass over `cbr serve-dealer` and `cbr play --acpc`, as real
processes over loopback TCP: a dealer restarts at once on the port of a finished match, a
client refuses its options before it connects, a stopped dealer (Ctrl-C, SIGTERM, a client
gone) and a client stopped early show what was played, a client hears why a dealer gave up
before dealing, the seat list names `remote` in its errors, and both draw a progress bar on
a terminal."""
from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.acpc.support import WAIT, Procs, finish

pty = __import__("pty")  # POSIX only, as the rest of the suite
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(proc: subprocess.Popen) -> int:
    """The port a `cbr serve-dealer` process printed it listens on."""
    ready, _, _ = select.select([proc.stdout], [], [], WAIT)
    assert ready, "the dealer printed no port"
    first = proc.stdout.readline()
    assert first.startswith("listening on 127.0.0.1:"), first + proc.stderr.read()
    return int(first.rsplit(":", 1)[1])


def table_title(out: str) -> re.Match:
    title = re.search(r"holdem\.limit\.2p: ([0-9]+) hands, seed 0(.*)", out)
    assert title, out
    return title


# ---- 1: a dealer restarts at once on the port of the match it finished ----------------------


def test_a_dealer_restarts_at_once_on_the_port_of_a_finished_match(procs: Procs) -> None:
    """The dealer closes its connections first, so each leaves a TIME-WAIT socket on the
    dealer's port: without SO_REUSEADDR a new dealer there failed for a minute with
    'Address already in use'."""
    port = free_port()
    dealer = procs.start("serve-dealer", "-p", "remote,call", "-n", 3, "--port", port)
    assert listening(dealer) == port
    client = procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "call")
    assert finish(client)[0] == 0 and finish(dealer)[0] == 0
    again = procs.start("serve-dealer", "-p", "remote,call", "-n", 3, "--port", port, "--connect-timeout", 0.5)
    code, out, err = finish(again)
    assert out.startswith(f"listening on 127.0.0.1:{port}\n"), (out, err)
    assert code == 1 and "did not connect within 0.5 s" in err and "already in use" not in err, err


@pytest.mark.parametrize("reuse", [False, True], ids=["plain", "reuseaddr"])
def test_a_port_another_socket_listens_on_stays_refused(procs: Procs, reuse: bool) -> None:
    """SO_REUSEADDR lets a dealer bind past TIME-WAIT sockets, never beside a listening one."""
    busy = socket.socket()
    if reuse:
        busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        port = busy.getsockname()[1]
        code, out, err = finish(procs.start("serve-dealer", "-p", "remote,call", "--port", port))
    finally:
        busy.close()
    assert code == 1 and out == "" and err.count("\n") == 1, err  # one line
    assert err.startswith(f"error: cannot listen on 127.0.0.1:{port}"), err


# ---- 2: a client checks every option before it connects ---------------------------------------


@pytest.mark.parametrize("policy, words", [("cbr", "the shipped case base 'expert' is never written to"),
                                           ("ehs", "retention needs a case-based bot")])
def test_a_client_that_cannot_retain_never_connects(procs: Procs, policy: str, words: str) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        port = server.getsockname()[1]
        code, out, err = finish(procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", policy, "--retain"))
        connected, _, _ = select.select([server], [], [], 0.2)
    finally:
        server.close()
    assert code == 1 and out == "" and err.count("\n") == 1 and words in err, err
    assert not connected, "the client connected before refusing its options"


def test_a_refused_client_leaves_its_seat_to_the_next(procs: Procs) -> None:
    """The refused client took the dealer's seat and broke its match: now the dealer still
    waits and deals to the next client."""
    dealer, port = procs.dealer("-p", "remote,call", "-n", 3)
    code, _, err = finish(procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "ehs", "--retain"))
    assert code == 1 and "retention needs a case-based bot" in err
    assert dealer.poll() is None
    code, out, err = finish(procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "call"))
    assert (code, err) == (0, "") and "3 hands" in out
    assert finish(dealer)[0] == 0


# ---- 3: a stopped dealer shows what was dealt ---------------------------------------------------


def a_long_match(procs: Procs, tmp_path: Path, *client_args: object) -> tuple[subprocess.Popen, subprocess.Popen]:
    """A `cbr serve-dealer --log` of 10^6 hands and our client playing it, once hands have
    been played (the log's temp file has been flushed): (dealer, client)."""
    log = tmp_path / "m.log"
    dealer, port = procs.dealer("-p", "remote,call", "-n", 1_000_000, "--log", log)
    client = procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "call", *client_args)
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and dealer.poll() is None and \
            not any(p.name.startswith(".m.log.") and p.stat().st_size > 0 for p in tmp_path.iterdir()):
        time.sleep(0.05)
    return dealer, client


def stop_a_long_dealer(procs: Procs, tmp_path: Path, sig: int) -> tuple[int, str, str]:
    """:func:`a_long_match`, its dealer sent ``sig``; the dealer's (exit code, stdout, stderr)."""
    dealer, _ = a_long_match(procs, tmp_path)
    dealer.send_signal(sig)
    return finish(dealer)


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
                         ids=["ctrl-c", "sigterm"])
def test_a_stopped_dealer_prints_the_result_so_far(procs: Procs, tmp_path: Path, sig: int, code: int,
                                                  word: str) -> None:
    got, out, err = stop_a_long_dealer(procs, tmp_path, sig)
    assert got == code and err.strip() == word, (out, err)
    title = table_title(out)
    assert int(title.group(1)) > 0 and title.group(2) == "", out
    assert f"interrupted: {int(title.group(1)):,} of 1,000,000 hands dealt\n" in out
    assert "remote" in out and "call" in out and "sb/h" in out
    assert f"no log written ({tmp_path / 'm.log'}: a log holds a whole match)" in out
    assert "SCORE:" not in out                            # a SCORE line is a whole match's
    assert list(tmp_path.iterdir()) == []                  # the log: whole or not at all


def test_a_dealer_whose_client_leaves_prints_the_result_so_far(procs: Procs, tmp_path: Path) -> None:
    """A client that leaves after 3 of 20 hands: the 3 hands, what was retained, no log,
    then the error line (exit 1)."""
    log = tmp_path / "m.log"
    dealer, port = procs.dealer("-p", "remote,cbr:casebase=default", "-n", 20, "--log", log,
                                "--retain-into", tmp_path / "learned")
    client = procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "call", "--hands", 3)
    assert finish(client)[0] == 0
    code, out, err = finish(dealer)
    note, _, err = err.partition("\n")  # first the note of the copy made for --retain-into
    assert note.startswith("note: copied case base 'default'") and code == 1 and err.count("\n") == 1, (out, note, err)
    # a client gone between hands: an end of file, or a reset when the dealer's next state came
    # first (which one depends on timing; both are one line naming the seat and the hand)
    assert err.startswith("error: hand 3: seat 0 (remote)"), err
    assert "closed the connection" in err or "went away (Connection reset by peer)" in err, err
    title = table_title(out)
    assert int(title.group(1)) == 3 and "stopped by an error: 3 of 20 hands dealt\n" in out, out
    assert f"no log written ({log}: a log holds a whole match)" in out
    retained = re.search(r"^retained ([0-9,]+) cases$", out, re.M)
    assert retained and int(retained.group(1).replace(",", "")) > 0, out
    assert not log.exists()


# ---- 4 and 5: a client hears why a dealer gave up, and shows the hands it played -------------


def test_a_client_hears_that_another_seat_never_connected(procs: Procs) -> None:
    dealer, port = procs.dealer("-p", "remote,remote", "-n", 5, "--connect-timeout", 2)
    code, out, err = finish(procs.start("play", "--acpc", f"127.0.0.1:{port}"))
    assert code == 1 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"error: the dealer at 127.0.0.1:{port} closed the connection before dealing us a hand: "
                          "1 remote seat did not connect within 2 s"), err
    code, _, err = finish(dealer)
    assert code == 1 and err.strip() == "error: 1 remote seat did not connect within 2 s"


def test_a_client_stopped_early_shows_the_hands_it_played(procs: Procs) -> None:
    dealer, port = procs.dealer("-p", "remote,ehs", "-n", 5)
    code, out, err = finish(procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "ehs", "--hands", 20))
    assert code == 1 and err.count("\n") == 1 and "closed the connection after 5 of 20 hands" in err, err
    assert re.match(r"ehs: 5 hands, [+-]?[0-9.]+ chips \([+-][0-9.]+ sb/h\)", out), out
    assert finish(dealer)[0] == 0
    dealer, port = procs.dealer("-p", "remote,ehs", "-n", 5)
    code, out, err = finish(procs.start("play", "--acpc", f"127.0.0.1:{port}", "--hands", 20, "--json"))
    assert code == 1 and "after 5 of 20 hands" in err
    data = json.loads(out)
    assert data["hands"] == 5 and len(data["played"]) == 5 and "after 5 of 20 hands" in data["error"]


def test_ctrl_c_of_a_client_shows_the_hands_it_played(procs: Procs, tmp_path: Path) -> None:
    _, client = a_long_match(procs, tmp_path, "--json")
    client.send_signal(signal.SIGINT)
    code, out, err = finish(client)
    assert code == 130 and err.strip() == "interrupted", (out, err)
    data = json.loads(out)
    assert data["interrupted"] is True and data["hands"] == len(data["played"]) > 0


# ---- 7: the seat list names `remote` in its errors ----------------------------------------------


@pytest.mark.parametrize("players, words", [
    ("remote:x=1,ehs", "'remote' takes no options"),
    ("REMOTE,ehs", "'remote' (a client that connects) or a policy: adapt, call, cbr,"),
    ("nosuch,ehs", "'remote' (a client that connects) or a policy: adapt, call, cbr,"),
])
def test_seat_errors_name_remote(procs: Procs, players: str, words: str) -> None:
    code, out, err = finish(procs.start("serve-dealer", "-p", players, "--port", 0, "--connect-timeout", 0.2))
    assert code == 2 and out == "" and words in err, err  # a usage error, as cbr match's


# ---- 8: progress bars on a terminal --------------------------------------------------------------


class Terminal:
    """A pseudo-terminal for a process's stderr, read on a thread (a full terminal would
    block the writer); ``shown`` is what it showed, escape sequences removed."""

    def __init__(self) -> None:
        self.master, self.slave = pty.openpty()
        self.data = b""
        self.thread = threading.Thread(target=self._read, daemon=True)

    def start(self, procs: Procs, *args: object) -> subprocess.Popen:
        env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
        env.pop("NO_COLOR", None)
        proc = procs.start(*args, stderr=self.slave, env=env)
        os.close(self.slave)
        self.thread.start()
        return proc

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the process closed the terminal
                return
            if not chunk:
                return
            self.data += chunk

    def shown(self) -> str:
        self.thread.join(WAIT)
        os.close(self.master)
        return ANSI.sub(b"", self.data).decode(errors="replace")


def frames(shown: str, word: str) -> list[tuple[int, str]]:
    return [(int(m.group(1)), m.group(2)) for m in re.finditer(word + r"\s.*?(\d+)/(\S+)", shown)]


def test_serve_dealer_draws_a_progress_bar_on_a_terminal(procs: Procs) -> None:
    term = Terminal()
    dealer = term.start(procs, "serve-dealer", "-p", "remote,ehs", "-n", 300, "--port", 0)
    port = listening(dealer)
    client = procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "call")
    assert finish(client)[0] == 0
    assert dealer.wait(WAIT) == 0
    seen = frames(term.shown(), "dealing")
    assert seen and {total for _, total in seen} == {"300"}, seen
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
def test_play_acpc_draws_a_progress_bar_on_a_terminal(procs: Procs, json_out: bool) -> None:
    dealer, port = procs.dealer("-p", "remote,ehs", "-n", 300)
    term = Terminal()
    client = term.start(procs, "play", "--acpc", f"127.0.0.1:{port}", "--policy", "call", "--hands", 300,
                        *(["--json"] if json_out else []))
    assert client.wait(WAIT) == 0 and finish(dealer)[0] == 0
    seen = frames(term.shown(), "playing")
    if json_out:
        assert seen == []
    else:
        assert seen and {total for _, total in seen} == {"300"}, seen
