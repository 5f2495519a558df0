"""The worker pools of `cbr exploit -j N` and `cbr league -j N` killed from outside, and the
pool helpers they share with the build (:mod:`cbr.build.pools`), with real processes.

Before: a worker SIGKILLed while it sent a result larger than a pipe holds left the pool's
thread that reads results waiting forever for the rest of the message, so the pool never
reported it broken and the league and the measurement waited forever (they waited for the
first result to finish and did not look at their workers); a worker killed at another time
made `cbr exploit` end with an internal error (exit 3) instead of one line; and their workers
began with Ctrl-C unblocked, so a terminal's Ctrl-C while spawned workers still imported
printed their tracebacks under the `interrupted` line.

Every test is bounded and kills whatever it started (its own session).
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import default_sigint
from tests.reliability.test_build_signals import (
    _alive,
    _children,
    _kill_all,
    _resume,
    _sending_a_result,
    _signal_while_workers_start,
    _wait_for,
    needs_write_syscall,
)

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the worker processes")

CLI = "import sys; from cli import app; sys.argv[0] = 'cbr'; app()"
SPAWN_CLI = "import multiprocessing as mp, sys; mp.set_start_method('spawn'); from cli import app; sys.argv[0] = 'cbr'; app()"
#: Commands busy for minutes with two worker processes.
EXPLOIT = ["exploit", "call", "--hands", "1000000", "--chunk-deals", "1", "-j", "2"]
LEAGUE = ["league", "--bots", "random,fold,call,raise,lag,ehs", "-n", "200000", "-j", "2"]
COMMANDS = pytest.mark.parametrize(("args", "what"), [(EXPLOIT, "measurement"), (LEAGUE, "league")],
                                   ids=["exploit", "league"])


def _session(sid: int) -> list[int]:
    """The processes still alive (not zombies) in session ``sid`` (the command started in its
    own session, and everything it started)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z" and int(fields[3]) == sid:
            out.append(int(entry))
    return out


def _start(code: str, args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=default_sigint)


def _stop_everything(proc: subprocess.Popen, pids: list[int]) -> None:
    _resume([proc.pid, *pids])
    _kill_all([proc.pid, *pids, *_session(proc.pid)])
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=10)


def _busy_workers(proc: subprocess.Popen, n: int = 2) -> list[int]:
    """The command's ``n`` worker processes once they play (a second after they appeared)."""
    found: list[int] = []

    def ready() -> bool:
        found[:] = _children(proc.pid)
        return len(found) >= n or proc.poll() is not None

    assert _wait_for(ready, timeout=60), "the workers did not start within 60 s"
    assert proc.poll() is None, proc.communicate(timeout=10)[1].decode()
    time.sleep(1.0)
    assert proc.poll() is None and all(_alive(p) for p in found)
    return list(found)


@pytest.mark.time_limit(90)
@COMMANDS
def test_a_killed_worker_ends_the_command_with_one_line(args: list[str], what: str) -> None:
    proc = _start(CLI, args)
    pids: list[int] = []
    try:
        pids = _busy_workers(proc)
        os.kill(pids[0], signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
        lines = err.decode().strip().splitlines()
        assert proc.returncode == 1, lines
        assert len(lines) == 1 and lines[0].startswith(f"error: a worker process of the {what} died"), lines
        if what == "measurement":  # LBR's result over the chunks finished before, as Ctrl-C gives it
            hands = re.search(r"so far over ([\d,]+) hands", out.decode())
            assert hands is not None, out
            assert lines[0].endswith(f"the result above is of the {hands.group(1)} hands finished before"), lines
        else:
            assert out == b""
        assert _wait_for(lambda: not _session(proc.pid), timeout=5), f"left running: {_session(proc.pid)}"
    finally:
        _stop_everything(proc, pids)


def _terminal_ctrl_c_while_workers_start(args: list[str], signum: int) -> tuple[int, list[str], bytes]:
    """A signal to the whole process group (a terminal's Ctrl-C, or a SIGTERM to the job) while
    both spawned workers still import what they need: each is stopped during its start-up, then
    the command; the signal; the workers resume until each has ended or finished starting, and
    the command resumes. Returns its exit code, its stderr's lines and its stdout."""
    proc = _start(SPAWN_CLI, args)
    stopped: list[int] = []
    try:
        _signal_while_workers_start(proc, signum, stopped)
        out, err = proc.communicate(timeout=30)
        assert _wait_for(lambda: not _session(proc.pid), timeout=5), f"left running: {_session(proc.pid)}"
        return proc.returncode, err.decode().strip().splitlines(), out
    finally:
        _stop_everything(proc, stopped)


@pytest.mark.time_limit(120)
@COMMANDS
def test_a_terminal_ctrl_c_while_spawned_workers_start_is_the_interrupted_result(args: list[str], what: str) -> None:
    """The command's own lines for a stop before anything finished, then ``interrupted``: no
    worker's traceback under them, no hang."""
    code, lines, out = _terminal_ctrl_c_while_workers_start(args, signal.SIGINT)
    assert code == 130, lines
    assert lines[-1] == "interrupted" and not any("Traceback" in line or "Error" in line for line in lines), lines
    if what == "measurement":
        assert lines == ["interrupted"] and out.decode().startswith("call: no chunk of deals finished"), (lines, out)
    else:
        assert lines[:-1] == ["no pairing finished before the league stopped: no standings "
                              "(a pairing counts only once all its hands are played)"], lines


@pytest.mark.time_limit(120)
@COMMANDS
def test_a_sigterm_while_spawned_workers_start_ends_the_command(args: list[str], what: str) -> None:
    code, lines, _ = _terminal_ctrl_c_while_workers_start(args, signal.SIGTERM)
    assert code == 143, lines
    assert lines[-1] == "terminated" and not any("Traceback" in line or "Error" in line for line in lines), lines


# --- the shared helper, on a pool whose results are larger than a pipe holds -------------------

POOL_SCRIPT = textwrap.dedent("""
    import os, sys, time
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    from cbr.build.pools import first_done, pool_context, stop_pool, worker_started

    def big(i):
        time.sleep(0.05 * i)
        return bytes(1 << 20)            # 1 MiB: far more than a pipe holds

    if __name__ == "__main__":
        pool = ProcessPoolExecutor(2, mp_context=pool_context(), initializer=worker_started, initargs=(os.getpid(),))
        pending = {pool.submit(big, i): i for i in range(1000)}
        print("started", flush=True)
        try:
            while pending:
                for future in first_done(pending, pool):
                    pending.pop(future)
                    future.result()
        except BrokenProcessPool as exc:
            stop_pool(pool)
            print(f"broken: {exc}", file=sys.stderr, flush=True)
            sys.exit(1)
""")


@pytest.mark.time_limit(90)
@needs_write_syscall
def test_first_done_notices_a_worker_killed_while_it_sends_its_result(tmp_path: Path) -> None:
    """The wait of the league and the measurement (:func:`cbr.build.pools.first_done`) on a
    real pool: the waiting process is kept from running (SIGSTOP) until a worker blocks half-way
    through sending a 1 MiB result; that worker is SIGKILLed and the process resumed. The pool's
    reading thread then waits forever for the rest of the message; the wait must notice the
    dead worker by itself (``concurrent.futures.wait(FIRST_COMPLETED)`` waited forever)."""
    script = tmp_path / "pool.py"
    script.write_text(POOL_SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script)], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    pids: list[int] = []
    try:
        assert proc.stdout.readline() == b"started\n"
        assert _wait_for(lambda: len(_children(proc.pid)) >= 2, timeout=30)
        pids = _children(proc.pid)
        deadline = time.monotonic() + 40
        sender = None
        while sender is None and time.monotonic() < deadline:
            os.kill(proc.pid, signal.SIGSTOP)
            if _wait_for(lambda: any(_sending_a_result(p) for p in pids), timeout=2, every=0.01):
                sender = next(p for p in pids if _sending_a_result(p))
            else:
                os.kill(proc.pid, signal.SIGCONT)
                time.sleep(0.05)
        assert sender is not None, "no worker was seen sending a result within 40 s"
        os.kill(sender, signal.SIGKILL)
        os.kill(proc.pid, signal.SIGCONT)
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == 1, err.decode()
        assert err.decode().startswith("broken: 1 of 2 worker processes ended"), err.decode()
        assert _wait_for(lambda: not _session(proc.pid), timeout=5), f"left running: {_session(proc.pid)}"
    finally:
        _stop_everything(proc, pids)
