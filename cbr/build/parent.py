"""Child processes that die with their parent: Linux's parent-death signal and a watchdog
thread, the one place of both. The workers of ``cbr build`` (:mod:`cbr.build.local`, the Dask
workers of :mod:`cbr.build.on_dask`), of a league, of a duplicate measurement and of the expert
recipe arm them (:func:`die_with_parent`), as does the server's evaluation child (with a time
limit too); :mod:`cbr.serve.process` arms the signal (SIGTERM: a clean stop) in the server it
starts, and the server in its ``--workers`` (:func:`cbr.serve.app.app_from_environment`). A
child always compares its parent with the pid the parent recorded before it started the child,
never with an ``os.getppid()`` read later: by then it may be init's.

>>> arm = parent_death_signal()
>>> arm is None or callable(arm)
True
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Callable, Optional

__all__ = ["PARENT_CHECK_SECONDS", "PR_SET_PDEATHSIG", "die_with_parent", "parent_death_signal", "stops_with_parent",
           "watch_parent"]

PR_SET_PDEATHSIG = 1        # <linux/prctl.h>
PARENT_CHECK_SECONDS = 0.5  # how often a watchdog looks for its parent


def parent_death_signal() -> Optional[Callable[[int], None]]:
    """A function ``arm(signum)`` that asks the kernel to send the calling process ``signum``
    when the thread that started it ends (``prctl(PR_SET_PDEATHSIG)``, Linux; kept across
    ``exec``, cleared by ``fork``), or None where there is none. The C function is looked up
    here, so a forked child may call ``arm`` before ``exec`` without importing (a ``preexec_fn``:
    another thread of the parent may have held an import lock at the fork)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        return None

    def arm(signum: int) -> None:
        prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
    return arm


def watch_parent(parent: int, every: float = PARENT_CHECK_SECONDS, *, until: Optional[float] = None) -> None:
    """Exit this process (at once, no clean-up) when ``parent`` is no longer its parent (it was
    re-parented to init or a subreaper) or, with ``until``, once ``time.monotonic()`` passed it;
    looks every ``every`` seconds (the loop of a daemon thread).

    >>> import subprocess, sys
    >>> subprocess.run([sys.executable, "-c", "import os, time; from cbr.build.parent import watch_parent; "
    ...                 "watch_parent(os.getppid(), 0.01, until=time.monotonic())"]).returncode
    1
    """
    while True:
        if os.getppid() != parent or (until is not None and time.monotonic() > until):
            os._exit(1)
        time.sleep(every)


def die_with_parent(parent: int, *, until: Optional[float] = None) -> None:
    """Make this (worker) process die with ``parent``: the kernel's parent-death signal
    (SIGKILL, :func:`parent_death_signal`) and, everywhere, a daemon thread that exits when
    the parent changes or ``until`` passed (:func:`watch_parent`), so a SIGKILLed ``cbr build``
    never leaves its workers running with the caller's stdout open. ``parent`` is the pid the
    parent recorded before it started this process (its ``os.getpid()``), never this process's
    ``os.getppid()`` read now: a parent that died meanwhile would be init's pid, or a
    subreaper's, and this process would watch that instead.
    """
    stops_with_parent(parent, signal.SIGKILL)()  # the kernel's signal, and an exit if the parent is gone already
    threading.Thread(target=watch_parent, args=(parent,), kwargs={"until": until}, daemon=True,
                     name="cbr-parent-watch").start()


def stops_with_parent(parent: int, signum: int = signal.SIGTERM) -> Callable[[], None]:
    """A ``preexec_fn`` for ``subprocess.Popen`` of a program that is not ours (a dealer, a
    client, a server): the child gets ``signum`` when the thread that started it ends (the
    kernel's parent-death signal, kept across ``exec``) and exits at once if ``parent`` (the
    starter's ``os.getpid()``, recorded before the start) is gone already. Where the platform
    has no such signal only the second check is made.

    >>> import os, subprocess, sys
    >>> subprocess.run([sys.executable, "-c", "pass"], preexec_fn=stops_with_parent(os.getpid())).returncode
    0
    """
    arm_signal = parent_death_signal()  # looked up here: the forked child must not import
    chosen = int(signum)

    def arm() -> None:
        if arm_signal is not None:
            arm_signal(chosen)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)
    return arm
