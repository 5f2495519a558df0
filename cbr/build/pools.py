"""Worker process pools that neither hang nor leave workers behind: the one place of what the
pools of ``cbr build`` (:mod:`cbr.build.local`), of a league (:mod:`cbr.play.league`) and of a
duplicate measurement (:mod:`cbr.exploit.measure`) do with signals, dead workers and stops.

* :func:`pool_context`: the start method (workers are children of this process); :func:`new_pool`
  a pool started so.
* :func:`workers_starting` around ``submit`` and :func:`worker_started` as (the start of) the
  pool's initializer: a worker begins with Ctrl-C (and, forked, SIGTERM) blocked until it has
  set what it does with them, and dies with this process (:func:`~cbr.build.parent.die_with_parent`).
  A start that fails (a thread that cannot start under an address-space limit) raises nothing
  there (:func:`start_step`): every task of the worker raises it (:func:`check_started`), so it
  reaches this process as the task's error (the pool's own handling printed a traceback on
  stderr and left the pool broken, the cause unknown here).
* :func:`pool_result` (one future) and :func:`first_done` (the first of many) wait a little at a
  time and raise ``BrokenProcessPool`` as soon as a worker ended, whatever the pool knows, and
  raise what ended the pool's manager thread (:func:`thread_died`) as soon as it ended.
* :func:`stop_pool` ends the workers and the pool's result thread, whatever they are doing.
"""
from __future__ import annotations

import signal
import threading
import time
import weakref
from collections.abc import Collection, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any, Optional

from cbr.build.parent import die_with_parent
from cbr.errors import counted

__all__ = ["RESULT_POLL_SECONDS", "STOP_GRACE", "WORKER_SIGNALS", "WorkerPool", "check_started", "first_done",
           "held_for_workers", "new_pool", "pool_context", "pool_result", "start_step", "stop_pool", "thread_died", "worker_started",
           "workers_starting"]

#: What a worker does with Ctrl-C and SIGTERM (:func:`worker_started`): the parent stops the pool.
WORKER_SIGNALS = {signal.SIGINT: signal.SIG_IGN, signal.SIGTERM: signal.SIG_DFL}
#: Seconds a wait for a worker's result lasts before it looks again (:func:`pool_result`).
RESULT_POLL_SECONDS = 0.2
#: Seconds the workers of a stopped pool get to end on SIGTERM before SIGKILL (:func:`stop_pool`).
STOP_GRACE = 1.0


def held_for_workers(start_method: str) -> set[int]:
    """The signals blocked while workers of ``start_method`` start (:func:`workers_starting`):
    Ctrl-C, and SIGTERM for forked workers, which begin with this process's handler (a
    ``KeyboardInterrupt`` in the worker); a spawned worker begins with SIGTERM's default, death.

    >>> sorted(held_for_workers("fork")) == sorted([signal.SIGINT, signal.SIGTERM]), held_for_workers("spawn") == {signal.SIGINT}
    (True, True)
    """
    return {signal.SIGINT, signal.SIGTERM} if start_method == "fork" else {signal.SIGINT}


@contextmanager
def workers_starting(start_method: str) -> Iterator[None]:
    """Around the calls that may start a pool's workers and threads (``submit``): the signals of
    :func:`held_for_workers` blocked in this thread, so a worker begins with them blocked until
    :func:`worker_started` has set what it does with them (a terminal's Ctrl-C reaches the
    workers too: one still starting, its imports under way, printed a ``KeyboardInterrupt``
    traceback), and the pool's threads keep them blocked (the kernel gives them to this
    thread). One that comes meanwhile is delivered here as the block ends."""
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is None:  # pragma: no cover - not POSIX
        yield
        return
    before = mask(signal.SIG_BLOCK, held_for_workers(start_method))
    try:
        yield
    finally:
        mask(signal.SIG_SETMASK, before)


#: In a worker process: what made its start fail (:func:`start_step`), the first only.
_START_FAILURE: list[Exception] = []


@contextmanager
def start_step() -> Iterator[None]:
    """Around a step of a worker's start (a pool's initializer): an error is kept, not raised,
    and every task of the worker raises it (:func:`check_started`). An initializer's error
    would reach the pool's own handling, which prints its traceback on stderr (the library
    never prints) and ends the worker: this process learnt only that a worker ended.

    >>> with start_step():
    ...     raise RuntimeError("can't start new thread")
    >>> check_started()
    Traceback (most recent call last):
    RuntimeError: can't start new thread
    >>> _START_FAILURE.clear()
    """
    try:
        yield
    except Exception as exc:  # a thread or an allocation that failed under a memory cap, above all
        if not _START_FAILURE:
            _START_FAILURE.append(exc)


def check_started() -> None:
    """At the start of a worker's task: raise what made the worker's start fail, if anything
    did (:func:`start_step`), so the task fails with it in the pool's parent."""
    if _START_FAILURE:
        raise _START_FAILURE[0]


def worker_started(parent: Optional[int] = None) -> None:
    """A worker's start (the pool's initializer, or its first step): die with ``parent``, leave
    Ctrl-C and SIGTERM to it (it stops the pool). The worker began with them blocked
    (:func:`workers_starting`): a Ctrl-C that came meanwhile is dropped now, a SIGTERM ends it.
    Raises nothing: what failed is raised by the worker's tasks (:func:`start_step`,
    :func:`check_started`)."""
    with start_step():
        for signum, action in WORKER_SIGNALS.items():
            signal.signal(signum, action)
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, set(WORKER_SIGNALS))
        if parent is not None:
            die_with_parent(parent)


def pool_context() -> Any:
    """The start method of the worker pool: the platform's default, except that workers of
    a fork server would have the server as their parent, so ``spawn`` replaces it (the
    workers must be children of this process for :func:`~cbr.build.parent.die_with_parent`)."""
    import multiprocessing

    if multiprocessing.get_start_method(allow_none=False) == "forkserver":
        return multiprocessing.get_context("spawn")
    return multiprocessing.get_context()


class WorkerPool(ProcessPoolExecutor):
    """A pool of the house's workers: each task first raises what made its worker's start fail
    (:func:`start_step`, :func:`check_started`), so every pool whose initializer starts with
    :func:`worker_started` is one of these (the build's, the league's, :func:`new_pool`'s)."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future:
        return super().submit(_checked_task, fn, *args, **kwargs)


def _checked_task(fn: Any, *args: Any, **kwargs: Any) -> Any:
    check_started()
    return fn(*args, **kwargs)


def new_pool(workers: int) -> tuple[ProcessPoolExecutor, Any]:
    """A pool of ``workers`` processes started the house's way, and its context: children of
    this process (:func:`pool_context`) whose start is :func:`worker_started` (they die with it
    and leave Ctrl-C and SIGTERM to it; a task of a worker whose start failed raises what
    failed). Submit inside :func:`workers_starting` of the context's start method."""
    import os

    context = pool_context()
    pool = WorkerPool(max_workers=max(1, workers), mp_context=context, initializer=worker_started,
                        initargs=(os.getpid(),))
    return pool, context


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a pool now, whatever its workers are doing: drop queued work, end the workers
    (SIGTERM, SIGKILL after :data:`STOP_GRACE` seconds), and end the pool's thread that reads
    their results, so that nothing waits for them afterwards.

    A worker ended in the middle of sending a result (one larger than a pipe holds, as a
    chunk's cases are) leaves that thread blocked forever reading the rest of the message:
    this process holds the write end of the results' pipe too, so no end-of-file comes, and
    the interpreter joins the thread at exit (``concurrent.futures`` registers that), so the
    process never ended. Once the workers are dead, closing this process's write end gives the
    thread its end-of-file: it takes the pool as broken and ends.
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    results = getattr(pool, "_result_queue", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    deadline = time.monotonic() + STOP_GRACE
    for proc in processes:
        proc.join(max(0.0, deadline - time.monotonic()))
        if proc.is_alive():  # a worker not running (stopped, starved) or with SIGTERM blocked
            proc.kill()
            proc.join(1.0)
    writer = getattr(results, "_writer", None)
    if writer is not None:
        writer.close()
    if manager is not None and manager.is_alive():
        manager.join(STOP_GRACE)


#: What ended a thread of this process with an exception, by thread (:func:`thread_died`).
_THREAD_DEATHS: "weakref.WeakKeyDictionary[threading.Thread, BaseException]" = weakref.WeakKeyDictionary()


def thread_died(thread: threading.Thread, exc: BaseException) -> None:
    """Note that ``exc`` ended ``thread``: for a ``threading.excepthook`` (the program's, which
    decides what is printed; :func:`cbr.cli._errors.guarded` installs one). When the thread is
    a pool's manager thread, the pool's waits (:func:`pool_result`, :func:`first_done`) raise
    ``exc`` at their next look."""
    _THREAD_DEATHS[thread] = exc


def _check_workers(pool: ProcessPoolExecutor) -> None:
    """``BrokenProcessPool`` when a worker of ``pool`` ended (workers end only when the pool is
    shut down); when the pool's manager thread ended though the pool is neither shut down nor
    broken, what ended it (:func:`thread_died`), else ``BrokenProcessPool``.

    That thread hands the work to the workers and their results back; it starts a thread of
    its own (the work queue's feeder) when it first hands work over. Under an address-space
    limit that start can fail (``RuntimeError: can't start new thread``): the manager thread
    died, the workers waited for work that never came, and so did this process, forever."""
    from multiprocessing.connection import wait as ended_of

    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None and manager.ident is not None and not manager.is_alive() \
            and not getattr(pool, "_shutdown_thread", False) and not getattr(pool, "_broken", False):
        death = _THREAD_DEATHS.pop(manager, None)
        if death is not None:
            raise death
        raise BrokenProcessPool("the pool's manager thread ended before the work was done")
    processes = list((getattr(pool, "_processes", None) or {}).values())
    ended = ended_of([p.sentinel for p in processes], timeout=0) if processes else []
    if ended:
        raise BrokenProcessPool(f"{len(ended)} of {counted(len(processes), 'worker process', 'worker processes')} ended before the work was done")


def pool_result(future: Future, pool: ProcessPoolExecutor, every: float = RESULT_POLL_SECONDS) -> Any:
    """``future.result()`` of work in ``pool``, waiting at most ``every`` seconds at a time.

    Between two looks, a Ctrl-C or SIGTERM is raised here (``KeyboardInterrupt``) even when the
    kernel gave the signal to another thread of this process (the pool's threads: then Python
    runs the handler in this thread only once it runs again, and a wait without timeout ran
    again only when a result came), and a worker that ended raises ``BrokenProcessPool`` at
    once (workers end only when the pool is shut down: a worker killed while it sent a result
    left the pool's reading thread waiting for the rest of the message, so the pool never
    reported it broken and this wait lasted forever).
    """
    while True:
        try:
            return future.result(timeout=every)
        except TimeoutError:
            pass
        _check_workers(pool)


def first_done(futures: Collection[Future], pool: ProcessPoolExecutor, *, timeout: Optional[float] = None,
               every: float = RESULT_POLL_SECONDS) -> set[Future]:
    """The futures of ``futures`` (work in ``pool``) that are done, once at least one is, or
    after ``timeout`` seconds (then perhaps none): ``concurrent.futures.wait(futures,
    return_when=FIRST_COMPLETED)`` that looks every ``every`` seconds, as :func:`pool_result`
    does, for a signal and for a worker that ended (``BrokenProcessPool``). Done futures are
    returned before a dead worker is reported (the next call reports it)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = every if deadline is None else max(0.0, min(every, deadline - time.monotonic()))
        done, _ = wait(futures, timeout=left, return_when=FIRST_COMPLETED)
        if done:
            return done
        _check_workers(pool)
        if deadline is not None and time.monotonic() >= deadline:
            return set()
