"""Processes that die with their parent (cbr/build/parent.py): the one definition of Linux's
parent-death signal, used by the build's workers and by ``cbr serve`` started from a script
(whose real parent deaths are tested in tests/reliability/test_build_signals.py and
tests/serve/test_http.py)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: Where the product's Python lives (the engine, its recipes, its scripts).
PRODUCT = ("cbr", "casebases", "evaluator_ext", "features", "bench", "experiments")


def test_the_parent_death_signal_is_defined_in_one_place() -> None:
    """``cbr/serve/process.py`` and ``cbr/build/local.py`` each defined PR_SET_PDEATHSIG and
    called prctl themselves; now only cbr/build/parent.py does."""
    found = set()
    for top in PRODUCT:
        for path in (REPO / top).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if re.search(r"PR_SET_PDEATHSIG\s*=", text) or re.search(r"\bprctl\s*\(", text) or ".prctl" in text:
                found.add(path.relative_to(REPO).as_posix())
    assert found == {"cbr/build/parent.py"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
@pytest.mark.parametrize("signum", ["SIGTERM", "SIGKILL"])
def test_the_armed_signal_is_the_one_asked_for(signum: str) -> None:
    """In a fresh process (arming it here would tie the test run to its parent): the kernel
    reports the signal asked for (``prctl(PR_GET_PDEATHSIG)``), and none before."""
    code = (
        "import ctypes, signal\n"
        "from cbr.build.parent import parent_death_signal\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def armed():\n"
        "    out = ctypes.c_int(-1)\n"
        "    assert libc.prctl(2, ctypes.byref(out), 0, 0, 0) == 0   # PR_GET_PDEATHSIG\n"
        "    return out.value\n"
        "before = armed()\n"
        f"parent_death_signal()(signal.{signum})\n"
        "print(before, armed())\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    import signal

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", str(int(getattr(signal, signum)))]


def test_a_watchdog_ends_its_process_when_its_time_is_up() -> None:
    """``watch_parent(..., until=)``, the watchdog of the server's evaluation child: the parent
    is there, the time is up: exit 1 at once."""
    code = ("import os, time\nfrom cbr.build.parent import watch_parent\n"
            "watch_parent(os.getppid(), 0.05, until=time.monotonic() + 0.2)\nprint('not reached')")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""


def test_the_evaluation_child_of_a_server_gone_before_it_started_ends_at_once() -> None:
    """The server's evaluation child watched its parent as ``os.getppid()`` read once it had
    started: a server killed meanwhile left it watching init, evaluating on (until its time
    limit, or for ever without one). It now dies with the pid the server recorded before it
    started the child: when that is no longer its parent, it ends at once, before any work."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid that is not the child's parent (the child's parent is this test's process)
    code = ("from multiprocessing import Pipe\nfrom cbr.serve.engine import _evaluate_child\n"
            "receive, send = Pipe(duplex=False)\n"
            f"_evaluate_child(send, 'casebases/default', 3, 50, 0, None, {gone.pid})\n"
            "print('not reached', receive.poll(0))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", "")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_program_started_with_stops_with_parent_ends_when_its_starter_is_killed() -> None:
    """A starter ``Popen``s a program that is not ours (``sleep``) with ``stops_with_parent``
    and is SIGKILLed: the program gets SIGTERM and ends (without it, it slept on, init's child)."""
    import os
    import signal
    import time

    code = ("import os, subprocess, sys, time\n"
            "from cbr.build.parent import stops_with_parent\n"
            "p = subprocess.Popen(['sleep', '120'], preexec_fn=stops_with_parent(os.getpid()))\n"
            "print(p.pid, flush=True)\n"
            "time.sleep(120)\n")
    starter = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True)
    child = None
    try:
        assert starter.stdout is not None
        child = int(starter.stdout.readline())
        starter.kill()
        starter.wait(30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            with open(f"/proc/{child}/stat") as f:  # a zombie waiting for init's reaping has ended too
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            time.sleep(0.05)
        else:
            raise AssertionError("the program outlived its starter")
    finally:
        if starter.poll() is None:
            starter.kill()
        if child is not None:
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_the_interop_benchmark_starts_every_program_with_stops_with_parent() -> None:
    """``bench/acpc_reference_interop.py`` starts the reference dealer and clients (and ours):
    each ``Popen`` there stops with the benchmark (a SIGKILLed run left them playing)."""
    text = (REPO / "bench" / "acpc_reference_interop.py").read_text(encoding="utf-8")
    calls = text.split("subprocess.Popen(")[1:]  # each call with what follows it, up to the next
    assert len(calls) == 4
    assert all("preexec_fn=stops_with_parent(os.getpid())" in c.split("procs.append")[0] for c in calls)
