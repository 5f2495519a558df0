"""`cbr build` draws a progress bar of hands done of the hands in the logs on a terminal
(stderr a pseudo-terminal), and nothing of it in a pipe (issue 16, defect 8)."""
from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from cbr.logs.detect import read_logs
from cbr.logs.record import HandRecord
from tests.conftest import shared_path

pty = __import__("pty")  # POSIX only, as the rest of the suite
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def _cbr() -> str:
    return str(Path(sys.executable).with_name("cbr"))


def _run_on_a_pty(args: list[str], timeout: float = 600) -> tuple[int, bytes, str]:
    """Run ``cbr ARGS`` with stderr on a pseudo-terminal; returns (exit code, what the terminal
    showed, stdout)."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not data:
                    break
                shown += data
            elif proc.poll() is not None:
                break
        out = proc.stdout.read().decode() if proc.stdout else ""
        code = proc.wait(timeout=60)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, ANSI.sub(b"", shown), out


def test_build_draws_hands_done_of_the_total_on_a_terminal(tmp_path: Path) -> None:
    log = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    total = sum(isinstance(item, HandRecord) for item in read_logs([log]))
    code, shown, out = _run_on_a_pty([_cbr(), "build", str(log), "-o", str(tmp_path / "cb"), "-j", "1"])
    assert code == 0, shown.decode(errors="replace")
    assert f"{total} hands" in out
    frames = [f.decode(errors="replace") for f in re.split(rb"[\r\n]", shown) if b"building" in f]
    assert frames, shown
    counts = [re.search(r"(\d+)/(\S+)", f) for f in frames]
    assert all(counts), frames
    # "0/?" while the logs are counted, then always out of the total, never "?" again
    counting = next(i for i, m in enumerate(counts) if m.group(2) != "?")
    assert all(m.group(1) == "0" for m in counts[:counting]), frames
    assert all(m.group(2) == str(total) for m in counts[counting:]), frames
    done = [int(m.group(1)) for m in counts[counting:]]
    assert done == sorted(done) and done[-1] == total


def test_build_in_a_pipe_draws_nothing(tmp_path: Path) -> None:
    log = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    r = subprocess.run([_cbr(), "build", str(log), "-o", str(tmp_path / "cb"), "-j", "1"], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "building" not in r.stderr and "\r" not in r.stderr and "\x1b" not in r.stderr


def test_query_shows_a_spinner_while_it_searches_for_the_spot_on_a_terminal_only() -> None:
    """A spot on a big table took seconds of search with nothing on the screen."""
    args = [_cbr(), "query", "--hole", "AdQc", "--dealt", "6", "--board", "3h4cJh", "--in-hand", "3",
            "--pot", "12", "--to-call", "1"]
    code, shown, out = _run_on_a_pty(args)
    assert code == 0 and out.startswith("fold "), shown.decode(errors="replace")
    assert b"finding a hand that reaches this spot" in shown
    piped = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert piped.returncode == 0 and piped.stdout.splitlines()[0] == out.splitlines()[0]
    assert "finding" not in piped.stderr


def test_hand_shows_a_spinner_during_a_long_monte_carlo_run_on_a_terminal() -> None:
    """`cbr hand AhKd --trials 200000000 --opponents 3` was silent for its whole run."""
    args = [_cbr(), "hand", "AhKd", "--opponents", "3", "--trials", "3000000"]
    code, shown, out = _run_on_a_pty(args)
    assert code == 0 and "3,000,000 deals" in out, shown.decode(errors="replace")
    assert b"dealing up to 3,000,000 Monte Carlo deals" in shown
    piped = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert piped.returncode == 0 and "dealing" not in piped.stderr
