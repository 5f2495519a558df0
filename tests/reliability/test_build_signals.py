"""`cbr build -j N` killed from outside: SIGKILL, SIGTERM and Ctrl-C (SIGINT) of the real
command in a subprocess, with real worker processes.

Before: a SIGKILLed build left its N workers running forever under PID 1, holding the
caller's stdout/stderr open (a supervisor reading them hung); SIGTERM left the temp
folder and two workers blocked forever. Now the workers die with their parent (the
kernel's parent-death signal, and a watchdog thread as the portable fallback, tested
alone below) and SIGTERM/Ctrl-C stop the pool and remove the temp folder.

Every test is bounded (timeouts of seconds) and kills whatever it started.
"""
from __future__ import annotations

import os
import platform
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import default_sigint
from tests.reliability import reliability_rounds

REPO = Path(__file__).resolve().parents[2]
LINUX = sys.platform.startswith("linux")
pytestmark = pytest.mark.skipif(not LINUX, reason="reads /proc to find the worker processes")


@pytest.fixture(scope="module")
def match_log(tmp_path_factory) -> Path:
    """A generated heads-up dealer log (every hole card shown: every decision is a case),
    long enough that a 2-worker build is still busy when it is killed (600 hands took
    under a second once the workers had started, and CI once killed a worker that had
    already finished)."""
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match

    path = tmp_path_factory.mktemp("signals") / "hu.log"
    with AcpcLogWriter(path) as log:
        run_match(["random", "call"], 4000, seed=7, log=log)
    return path


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    if fields[0] == "Z":  # a zombie is dead
        return None
    return int(fields[1])


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _ppid(int(entry)) == pid:
            out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    return _ppid(pid) is not None


def _wait_for(predicate, timeout: float, every: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return predicate()


def _kill_all(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _start_build(log: Path, out: Path, workers: int) -> subprocess.Popen:
    code = "import sys; from cli import app; sys.argv[0] = 'cbr'; app()"
    return subprocess.Popen(
        [sys.executable, "-c", code, "build", str(log), "-o", str(out), "-j", str(workers)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        preexec_fn=default_sigint,
    )


def _start_and_wait_for_workers(log: Path, out: Path, workers: int) -> tuple[subprocess.Popen, list[int]]:
    proc = _start_build(log, out, workers)
    found: list[int] = []

    def ready() -> bool:
        found[:] = _children(proc.pid)
        return len(found) >= workers or proc.poll() is not None

    if not _wait_for(ready, timeout=60):
        proc.kill()
        proc.communicate(timeout=10)
        pytest.fail("the build's workers did not start within 60 s")
    if proc.poll() is not None:
        _, err = proc.communicate(timeout=10)
        pytest.fail(f"the build ended before it could be killed: {err.decode()!r}")
    time.sleep(0.3)  # the workers are computing features now
    return proc, list(found)


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def test_sigkill_of_the_build_takes_its_workers_with_it(match_log: Path, tmp_path: Path) -> None:
    workers = 2
    for round_ in range(reliability_rounds(1)):
        out = tmp_path / f"cb{round_}"
        proc, pids = _start_and_wait_for_workers(match_log, out, workers)
        try:
            assert len(pids) == workers
            os.kill(proc.pid, signal.SIGKILL)
            # The caller's pipes reach EOF: no worker holds stdout/stderr open any more.
            proc.communicate(timeout=15)
            assert proc.returncode == -signal.SIGKILL
            assert _wait_for(lambda: not any(_alive(p) for p in pids), timeout=10), \
                f"workers still running after their parent was killed: {[p for p in pids if _alive(p)]}"
            assert not out.exists()
        finally:
            _kill_all([proc.pid, *pids])


@pytest.mark.parametrize(("signum", "code", "word"), [
    (signal.SIGTERM, 143, "terminated"),
    (signal.SIGINT, 130, "interrupted"),
])
def test_sigterm_and_ctrl_c_stop_the_workers_and_leave_no_temp_folder(
        match_log: Path, tmp_path: Path, signum: int, code: int, word: str) -> None:
    out = tmp_path / "cb"
    proc, pids = _start_and_wait_for_workers(match_log, out, 2)
    try:
        os.kill(proc.pid, signum)
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == code, err.decode()
        lines = err.decode().strip().splitlines()
        assert lines == [word], lines                  # one line, no traceback from any worker
        assert _wait_for(lambda: not any(_alive(p) for p in pids), timeout=5)
        assert not out.exists() and _leftovers(out) == []
    finally:
        _kill_all([proc.pid, *pids])


#: The number of the write system call (``/proc/PID/syscall``), where the tests below know it.
WRITE_SYSCALL = {"x86_64": 1, "aarch64": 64}.get(platform.machine())
needs_write_syscall = pytest.mark.skipif(
    WRITE_SYSCALL is None, reason=f"the write system call's number on {platform.machine()} is not known here")


def _sending_a_result(pid: int) -> bool:
    """Whether worker ``pid`` is blocked in the middle of sending a chunk's result: asleep in a
    write() of more than the 4-byte length prefix (the body of a message larger than the pipe
    holds while the build reads nothing). The prefix is in the pipe; the message is cut if the
    worker dies now."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        call = Path(f"/proc/{pid}/syscall").read_text().split()
    except (OSError, IndexError):
        return False
    return state == "S" and len(call) > 3 and call[0] == str(WRITE_SYSCALL) and int(call[3], 16) > 4


def _starve_until_a_worker_is_sending(proc: subprocess.Popen, pids: list[int]) -> int:
    """Stop the build (SIGSTOP: it reads no result) until one of its workers has finished a
    chunk and is blocked half-way through sending it; returns that worker, the build still
    stopped. What a loaded machine does when it does not schedule the build for a while."""
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline and proc.poll() is None:
        os.kill(proc.pid, signal.SIGSTOP)
        if _wait_for(lambda: any(_sending_a_result(p) for p in pids), timeout=3, every=0.01):
            return next(p for p in pids if _sending_a_result(p))
        os.kill(proc.pid, signal.SIGCONT)             # no chunk finished yet: let the build feed the workers
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGCONT)
    pytest.fail("no worker was seen sending a result within 40 s")


def _resume(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


@pytest.mark.time_limit(90)
@needs_write_syscall
@pytest.mark.parametrize(("signum", "code", "word"), [
    (signal.SIGTERM, 143, "terminated"),
    (signal.SIGINT, 130, "interrupted"),
])
def test_a_stop_while_a_worker_is_sending_its_result_ends_the_build(
        match_log: Path, tmp_path: Path, signum: int, code: int, word: str) -> None:
    """What a loaded machine did once in CI (the build did not end within 20 s of a Ctrl-C),
    made certain: a worker is kept from running (SIGSTOP: not scheduled) half-way through
    sending its chunk's cases, the build runs on and is signalled. The stop ends that worker in
    the middle of its message; before, the pool's thread reading results waited forever for the
    rest (the build holds the pipe's write end too, so no end-of-file came) and the exit joins
    that thread: the build never ended."""
    out = tmp_path / "cb"
    proc, pids = _start_and_wait_for_workers(match_log, out, 2)
    sender = None
    try:
        sender = _starve_until_a_worker_is_sending(proc, pids)
        os.kill(sender, signal.SIGSTOP)
        os.kill(proc.pid, signal.SIGCONT)
        time.sleep(0.3)                                # the build reads the first part of the message
        os.kill(proc.pid, signum)
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == code, err.decode()
        lines = err.decode().strip().splitlines()
        assert lines == [word], lines
        assert _wait_for(lambda: not any(_alive(p) for p in pids), timeout=5)
        assert not out.exists() and _leftovers(out) == []
    finally:
        _resume([proc.pid] + ([sender] if sender else []))
        _kill_all([proc.pid, *pids])


@pytest.mark.time_limit(90)
@needs_write_syscall
def test_a_worker_killed_while_it_sends_its_result_fails_the_build(match_log: Path, tmp_path: Path) -> None:
    """A worker SIGKILLed (the OOM killer, say) half-way through sending its chunk's cases: the
    pool's reading thread waits forever for the rest of the message and never reports the pool
    broken; the build waited for that chunk forever. It looks at its workers while it waits."""
    out = tmp_path / "cb"
    proc, pids = _start_and_wait_for_workers(match_log, out, 2)
    try:
        sender = _starve_until_a_worker_is_sending(proc, pids)
        os.kill(sender, signal.SIGKILL)
        os.kill(proc.pid, signal.SIGCONT)
        _assert_failed_on_a_dead_worker(proc, pids, out, timeout=20)
    finally:
        _resume([proc.pid])
        _kill_all([proc.pid, *pids])


def _sigint_bits(pid: int) -> tuple[bool, bool] | None:
    """Whether process ``pid`` has a Ctrl-C handler (Python's, once it runs) and whether it
    ignores Ctrl-C; None when it is gone."""
    bit, found = 1 << (signal.SIGINT - 1), {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("SigCgt", "SigIgn"):
                found[key] = bool(int(value, 16) & bit)
    except (OSError, ValueError):
        return None
    return (found["SigCgt"], found["SigIgn"]) if len(found) == 2 else None


def _starting(pid: int) -> bool:
    """Python runs in worker ``pid`` (its Ctrl-C handler is set) and the worker's start-up has
    not yet made it ignore Ctrl-C: the worker is importing what it needs."""
    return _sigint_bits(pid) == (True, False)


def _spawned_workers(pid: int) -> list[int]:
    return [c for c in _children(pid) if b"spawn_main" in _cmdline(c)]  # not the resource tracker

def _signal_while_workers_start(proc: subprocess.Popen, signum: int, stopped: list[int]) -> None:
    """``signum`` to ``proc``'s process group (a terminal's Ctrl-C, a SIGTERM to the job) while
    both its spawned workers still import what they need: each is stopped during its start-up
    (its pid added to ``stopped``, the caller's to clean up), then ``proc``; the signal; the
    workers resume until each has ended or finished starting (ignoring Ctrl-C), then ``proc``."""
    deadline = time.monotonic() + 60
    while len(stopped) < 2 and time.monotonic() < deadline and proc.poll() is None:
        for pid in _spawned_workers(proc.pid):
            if pid not in stopped and _starting(pid):
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
        time.sleep(0.002)
    assert len(stopped) == 2, f"two workers were not caught starting: {stopped}, ended: {proc.poll()}"
    os.kill(proc.pid, signal.SIGSTOP)
    assert all(_starting(p) for p in stopped), "a worker finished starting before it was stopped"
    os.killpg(proc.pid, signum)
    _resume(stopped)
    assert _wait_for(lambda: all(not _alive(p) or _sigint_bits(p) == (False, True) for p in stopped), timeout=30)
    os.kill(proc.pid, signal.SIGCONT)



def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.time_limit(90)
def test_a_terminal_ctrl_c_while_spawned_workers_start_is_one_line(match_log: Path, tmp_path: Path) -> None:
    """A terminal's Ctrl-C (SIGINT to the process group: the build and its workers) while the
    workers, started by ``spawn`` (a fresh interpreter each: the start method where the default
    is ``forkserver``), still import what they need: each worker is stopped (SIGSTOP) during its
    start-up, then the build; the Ctrl-C; the workers resume until each has ended or finished
    starting; the build resumes. Before, a worker raised ``KeyboardInterrupt`` in its imports
    and printed the traceback under the build's line; the workers now begin with Ctrl-C blocked
    until they ignore it."""
    out = tmp_path / "cb"
    code = ("import multiprocessing as mp, sys; mp.set_start_method('spawn'); "
            "from cli import app; sys.argv[0] = 'cbr'; app()")
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "build", str(match_log), "-o", str(out), "-j", "2"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        preexec_fn=default_sigint,
    )
    stopped: list[int] = []
    try:
        _signal_while_workers_start(proc, signal.SIGINT, stopped)
        _, err = proc.communicate(timeout=20)
        lines = err.decode().strip().splitlines()
        assert proc.returncode == 130, lines
        assert lines == ["interrupted"], lines
        assert _wait_for(lambda: not any(_alive(p) for p in stopped), timeout=5)
        assert not out.exists() and _leftovers(out) == []
    finally:
        _resume([proc.pid, *stopped])
        _kill_all([proc.pid, *stopped])


def _assert_failed_on_a_dead_worker(proc: subprocess.Popen, pids: list[int], out: Path, timeout: float) -> None:
    """The build ended within ``timeout`` s with exit 1 and the one line of a dead worker, its
    other workers gone and nothing left of the case base."""
    _, err = proc.communicate(timeout=timeout)
    lines = err.decode().strip().splitlines()
    assert proc.returncode == 1, lines
    assert len(lines) == 1 and lines[0].startswith("error: a worker process of the build died"), lines
    assert _wait_for(lambda: not any(_alive(p) for p in pids), timeout=5)
    assert not out.exists() and _leftovers(out) == []


def test_a_killed_worker_fails_the_build_with_one_line(match_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "cb"
    proc, pids = _start_and_wait_for_workers(match_log, out, 2)
    try:
        os.kill(pids[0], signal.SIGKILL)
        _assert_failed_on_a_dead_worker(proc, pids, out, timeout=30)
    finally:
        _kill_all([proc.pid, *pids])


def test_watchdog_alone_ends_a_worker_whose_parent_was_killed(tmp_path: Path) -> None:
    """The portable fallback without the parent-death signal: a forked child running only
    the watchdog thread exits once it is re-parented."""
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent("""
        import multiprocessing as mp, os, sys, threading, time
        from cbr.build.parent import watch_parent

        def child(parent):
            threading.Thread(target=watch_parent, args=(parent, 0.05), daemon=True).start()
            time.sleep(60)

        if __name__ == "__main__":
            p = mp.get_context("fork").Process(target=child, args=(os.getpid(),))
            p.start()
            print(p.pid, flush=True)
            time.sleep(60)
    """))
    proc = subprocess.Popen([sys.executable, str(script)], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    child = None
    try:
        line = proc.stdout.readline()
        child = int(line)
        assert _alive(child)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=10)                   # EOF: the child closed the pipe too
        assert _wait_for(lambda: not _alive(child), timeout=5)
    finally:
        _kill_all([proc.pid] + ([child] if child else []))
