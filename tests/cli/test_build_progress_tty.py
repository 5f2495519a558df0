"""`cbr build` draws a progress bar of hands done of the hands in the logs on a terminal
(stderr a pseudo-terminal), and nothing of it in a pipe (issue 16, defect 8)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from cbr.logs.detect import read_logs
from cbr.logs.record import HandRecord
from tests.conftest import run_on_a_terminal, shared_path


def _cbr() -> str:
    return str(Path(sys.executable).with_name("cbr"))


def test_build_draws_hands_done_of_the_total_on_a_terminal(tmp_path: Path) -> None:
    log = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    total = sum(isinstance(item, HandRecord) for item in read_logs([log]))
    code, out, shown = run_on_a_terminal(["build", str(log), "-o", str(tmp_path / "cb"), "-j", "1"])
    assert code == 0, shown
    assert f"{total:,} hands" in out
    frames = [f for f in re.split(r"[\r\n]", shown) if "building" in f]
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
    args = ["query", "--hole", "AdQc", "--dealt", "6", "--board", "3h4cJh", "--in-hand", "3", "--pot", "12",
            "--to-call", "1"]
    code, out, shown = run_on_a_terminal(args)
    assert code == 0 and out.startswith("fold "), shown
    assert "finding a hand that reaches this spot" in shown
    piped = subprocess.run([_cbr(), *args], capture_output=True, text=True, timeout=600)
    assert piped.returncode == 0 and piped.stdout.splitlines()[0] == out.splitlines()[0]
    assert "finding" not in piped.stderr


def test_hand_shows_a_spinner_during_a_long_monte_carlo_run_on_a_terminal() -> None:
    """`cbr hand AhKd --trials 200000000 --opponents 3` was silent for its whole run."""
    args = ["hand", "AhKd", "--opponents", "3", "--trials", "3000000"]
    code, out, shown = run_on_a_terminal(args)
    assert code == 0 and "3,000,000 deals" in out, shown
    assert "dealing up to 3,000,000 Monte Carlo deals" in shown
    piped = subprocess.run([_cbr(), *args], capture_output=True, text=True, timeout=600)
    assert piped.returncode == 0 and "dealing" not in piped.stderr
