"""The reliability suite's frame: a time bound on every test, and processes that cannot outlive it.

* Every test here gets a wall-clock bound (``DEFAULT_TIME_LIMIT`` seconds, or
  ``@pytest.mark.time_limit(seconds)``), scaled by the same factor as the rounds in the long
  form. Past it the test fails with "exceeded its time limit" (``signal.alarm``: the bound
  holds for Python code and for blocking system calls, which the signal interrupts).
* ``spawn`` starts a process in its own session and kills its whole process group when the
  test ends, whatever happened, so no fault test leaves workers behind.

Short form: part of the normal suite (``python -m pytest -q``). Long form:
``python -m tests.reliability.run_long`` (or ``CBR_RELIABILITY=long python -m pytest tests/reliability``).
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from typing import Any, Callable

import pytest

from tests.acpc.support import procs  # noqa: F401  (the ACPC fault tests' fixture)
from tests.conftest import default_sigint
from tests.reliability import reliability_rounds

#: Seconds a reliability test may take in the short form unless it says otherwise.
DEFAULT_TIME_LIMIT = 60.0


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "time_limit(seconds): wall-clock bound of a reliability test (short form)")


def time_limit_of(item: pytest.Item) -> float:
    """The bound of one test in seconds: its ``time_limit`` mark (or the default), times the
    long form's factor (``reliability_rounds(1)``: 1 in the short form)."""
    mark = item.get_closest_marker("time_limit")
    base = float(mark.args[0]) if mark and mark.args else DEFAULT_TIME_LIMIT
    return base * max(1, reliability_rounds(1))


@pytest.fixture(autouse=True)
def _time_limit(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail the test when it runs past its bound (SIGALRM; main thread only, as pytest runs)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    seconds = time_limit_of(request.node)

    def expire(signum: int, frame: Any) -> None:
        # pytest.fail raises a BaseException: a test's own ``except Exception`` cannot swallow it
        pytest.fail(f"{request.node.nodeid} exceeded its time limit of {seconds:g} s", pytrace=True)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def spawn() -> Iterator[Callable[..., subprocess.Popen]]:
    """``spawn(args, **popen_kwargs)`` starts a process in a new session (its own process group);
    at the end of the test the whole group is killed (SIGKILL) and reaped."""
    started: list[subprocess.Popen] = []

    def start(args: Any, **kwargs: Any) -> subprocess.Popen:
        kwargs.setdefault("start_new_session", True)
        kwargs.setdefault("preexec_fn", default_sigint)  # a background run must not pass on an ignored Ctrl-C
        proc = subprocess.Popen(args, **kwargs)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the process and everything it started
        except (ProcessLookupError, PermissionError):
            proc.kill() if proc.poll() is None else None
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - a process in uninterruptible sleep
            pass
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
