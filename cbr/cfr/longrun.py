"""Long MCCFR runs that add up across working sessions (issue 37).

A run lives in one folder (:class:`RunFolder`): ``abstraction.npz``; ``checkpoint.npz``
(regrets, averages and the run's counters, atomic); ``strategy.npz``, what
``cfr:strategy=FOLDER`` plays, written with every checkpoint; ``progress.jsonl``, one line at
the start of a session and one a checkpoint; ``snapshots/strategy-<iterations>.npz``, the
average strategy every so many minutes of training (for LBR against training time).

:class:`LongRun` trains it: checkpoints every so many minutes of wall time (or iterations),
snapshots every so many minutes of training (or iterations), a wall-clock budget or an
iteration total, and a ``stop`` callable asked between slices of iterations (the flag of
:class:`StopSignals`), so a run stopped from outside saves a checkpoint holding every
iteration done; with one thread the resumed run's tables are an unbroken run's, bit for bit.
The library never stops the process: the recipe (``casebases/build_cfr_big.py``) turns a
stop by a signal into its exit code.

>>> m = table_memory((169, 4, 4, 4))
>>> m["entries"], m["regrets_and_averages"] == 16 * m["entries"]
(69797, True)
>>> round(table_memory((169, 2000, 2000, 2000))["total"] / 1e9, 2)
1.88
"""
from __future__ import annotations

import datetime as _dt
import fcntl
import json
import os
import resource
import signal
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from cbr.cfr.mccfr import STRATEGY_FILE, MCCFRTrainer, layout
from cbr.cfr.tree import BettingTree, build_tree
from cbr.errors import ConfigError, counted
from cbr.store.durable import remove_dead_temp

__all__ = ["LongRun", "RunFolder", "StopSignals", "table_memory", "read_progress", "run_lock", "gigabytes"]

#: Raw (colex) flop and turn boards and canonical ones, times 1326 combos: the bucket tables.
_RAW_BOARDS = 22_100 + 270_725
_CANONICAL_BOARDS = 1_755 + 16_432


def table_memory(n_buckets: tuple[int, ...], tree: Optional[BettingTree] = None) -> dict[str, int]:
    """Bytes an MCCFR run of ``n_buckets`` holds: its regrets and averages (float64 each, one
    per table entry), the bucket tables (the solver's uint16 flop and turn tables by raw board
    and the abstraction's by canonical board), and what writing a strategy adds for a moment
    (the average as float64 probabilities and their rounding); ``total`` is their sum."""
    tree = tree or build_tree("holdem.limit.2p")
    _, entries = layout(tree, tuple(n_buckets))
    solver = 16 * entries
    buckets = 2 * 1326 * (_RAW_BOARDS + _CANONICAL_BOARDS)
    write = 16 * entries
    return {"entries": entries, "regrets_and_averages": solver, "bucket_tables": buckets, "strategy_write": write,
            "total": solver + buckets + write}


def gigabytes(n: float) -> str:
    """``n`` bytes in GB, two decimals.

    >>> gigabytes(1_890_000_000)
    '1.89 GB'
    """
    return f"{n / 1e9:.2f} GB"


@dataclass(frozen=True)
class RunFolder:
    """The files of a run folder (see the module docstring).

    >>> RunFolder(Path("runs/x")).checkpoint.as_posix()
    'runs/x/checkpoint.npz'
    """

    path: Path

    @property
    def abstraction(self) -> Path:
        return self.path / "abstraction.npz"

    @property
    def checkpoint(self) -> Path:
        return self.path / "checkpoint.npz"

    @property
    def strategy(self) -> Path:
        return self.path / STRATEGY_FILE

    @property
    def progress(self) -> Path:
        return self.path / "progress.jsonl"

    @property
    def snapshots(self) -> Path:
        return self.path / "snapshots"


@contextmanager
def run_lock(folder: str | os.PathLike) -> Iterator[None]:
    """Hold ``folder/.lock`` (an exclusive ``flock``) while a process trains the run there;
    a second process is refused at once (:class:`ConfigError`) instead of writing the same
    checkpoint. Temp files that a killed writer left in the folder are removed."""
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    fd = os.open(path / ".lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(f"{path}: another process is training this run (it holds {path / '.lock'})") from None
        for d in (path, path / "snapshots"):
            remove_dead_temp(d)
        yield
    finally:
        os.close(fd)


class StopSignals:
    """Inside ``with StopSignals() as stop:``, SIGINT (Ctrl-C) and SIGTERM set ``stop.signal``
    (the first one's number) instead of interrupting; ``stop()`` says whether one came. The
    handlers in place before come back at the end, unless a signal came and ``ignore_after=True``:
    then both are ignored from there on (a process that is stopping already must not be cut by a
    second Ctrl-C while it says so; restoring first and ignoring after left a window). (A signal
    during an atomic write is held until the write is done,
    :func:`cbr.store.durable.interrupts_held`, then lands here.)

    >>> with StopSignals() as stop:
    ...     signal.raise_signal(signal.SIGTERM)
    ...     signal.raise_signal(signal.SIGINT)
    >>> stop(), stop.signal == signal.SIGTERM
    (True, True)
    """

    def __init__(self, signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM), *,
                 ignore_after: bool = False) -> None:
        self.signals = signals
        self.ignore_after = ignore_after
        self.signal: Optional[int] = None
        self._before: dict[int, Any] = {}

    def _handle(self, signum: int, _frame: Any) -> None:
        if self.signal is None:
            self.signal = signum

    def __call__(self) -> bool:
        return self.signal is not None

    def __enter__(self) -> "StopSignals":
        self._before = {s: signal.signal(s, self._handle) for s in self.signals}
        return self

    def __exit__(self, *exc: object) -> None:
        ignore = self.ignore_after and self.signal is not None
        for s, handler in self._before.items():
            signal.signal(s, signal.SIG_IGN if ignore else handler)


def read_progress(path: str | os.PathLike) -> list[dict]:
    """The lines of a ``progress.jsonl`` (none when it does not exist)."""
    p = Path(path)
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def _append_line(path: Path, record: dict) -> None:
    data = (json.dumps(record) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    try:
        os.write(fd, data)  # one write: a kill leaves the line whole or absent
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass
class LongRun:
    """Trains ``trainer`` with checkpoints in ``checkpoint`` (see the module docstring).

    ``checkpoint_minutes`` (of wall time) and ``checkpoint_every`` (iterations) say when a
    checkpoint is written (besides the end); ``snapshot_minutes`` (of training, the trainer's
    ``seconds``) and ``snapshot_every`` (iterations) when a snapshot is, into ``snapshots``.
    ``strategy`` (optional) is written with every checkpoint, a line appended to ``progress``
    (optional) with every checkpoint; ``memory`` (bytes) goes into those lines; ``report``
    receives a line of news at each checkpoint and at the end, but not at a stop (whoever
    stopped the run says so), and a progress line every ``report_seconds`` of wall time
    between them (0: none). The CPU seconds of training (the process's,
    both threads, summed over every session) are kept in the checkpoint
    (``trainer.extra["cpu_seconds"]``).
    """

    trainer: MCCFRTrainer
    checkpoint: Path
    strategy: Optional[Path] = None
    progress: Optional[Path] = None
    snapshots: Optional[Path] = None
    checkpoint_minutes: float = 0.0
    checkpoint_every: int = 0
    snapshot_minutes: float = 0.0
    snapshot_every: int = 0
    memory: int = 0
    report: Optional[Callable[[str], None]] = None
    report_seconds: float = 60.0
    slice_seconds: float = 2.0
    _session: dict = field(default_factory=dict, repr=False)

    def resume(self) -> bool:
        """Load the checkpoint if there is one (:class:`ConfigError` when it is not this run's)."""
        if not Path(self.checkpoint).exists():
            return False
        self.trainer.load_checkpoint(self.checkpoint)
        return True

    def train(self, *, iterations: int = 0, minutes: float = 0.0,
              stop: Optional[Callable[[], bool]] = None) -> str:
        """Train until the run has ``iterations`` in all (0: no limit), ``minutes`` of wall time
        have passed in this call (0: no limit) or ``stop()`` is true, asked between slices of
        about ``slice_seconds``; then save a checkpoint. Returns why it ended: ``"iterations"``,
        ``"minutes"`` or ``"stopped"`` (neither limit given: only ``stop`` ends it)."""
        t = self.trainer
        start = time.monotonic()
        deadline = start + 60.0 * minutes if minutes else None
        self._session = {"start": start, "iterations": t.iterations, "walk": 0.0}
        self._line("start")
        last_checkpoint = last_report = start
        snap_s = 60.0 * self.snapshot_minutes
        next_snapshot = (int(t.seconds // snap_s) + 1) * snap_s if snap_s else None
        step = 10  # a first slice short under any sampling (a public-chance iteration takes ~0.25 s); then ~slice_seconds
        while True:
            if iterations and t.iterations >= iterations:
                reason = "iterations"
                break
            if deadline is not None and time.monotonic() >= deadline:
                reason = "minutes"
                break
            if stop is not None and stop():
                reason = "stopped"
                break
            n = step
            if iterations:
                n = min(n, iterations - t.iterations)
            for every in (self.checkpoint_every, self.snapshot_every if self.snapshots else 0):
                if every:
                    n = min(n, every - t.iterations % every)
            cpu, wall = time.process_time(), time.perf_counter()
            t.run(n)
            took = time.perf_counter() - wall
            t.extra["cpu_seconds"] = round(float(t.extra.get("cpu_seconds", 0.0)) + time.process_time() - cpu, 3)
            self._session["walk"] += took
            step = int(min(2_000_000, max(1, n / max(took, 1e-6) * self.slice_seconds)))
            if self.snapshots is not None and (
                    (self.snapshot_every and t.iterations % self.snapshot_every == 0)
                    or (next_snapshot is not None and t.seconds >= next_snapshot)):
                self.snapshot()
                if next_snapshot is not None:
                    next_snapshot = (int(t.seconds // snap_s) + 1) * snap_s
            if ((self.checkpoint_every and t.iterations % self.checkpoint_every == 0)
                    or (self.checkpoint_minutes and time.monotonic() - last_checkpoint >= 60.0 * self.checkpoint_minutes)):
                self.save("checkpoint")
                last_checkpoint = last_report = time.monotonic()
            elif self.report is not None and self.report_seconds and time.monotonic() - last_report >= self.report_seconds:
                last_report = time.monotonic()
                self.report(f"training: {counted(t.iterations, 'iteration')}, {t.seconds:,.0f} s of training, "
                            f"{self._rate():,.0f} a second this session")
        self.save(reason)
        return reason

    def snapshot(self) -> Path:
        """Write the average strategy now as ``snapshots/strategy-<iterations>.npz``."""
        assert self.snapshots is not None
        self.snapshots.mkdir(parents=True, exist_ok=True)
        return self.trainer.save_strategy(self.snapshots / f"strategy-{self.trainer.iterations}.npz")

    def save(self, event: str = "checkpoint") -> None:
        """Write the checkpoint (then the strategy, then a progress line)."""
        self.trainer.save_checkpoint(self.checkpoint)
        if self.strategy is not None:
            self.trainer.save_strategy(self.strategy)
        line = self._line(event)
        if self.report is not None and event != "stopped":  # whoever stopped the run says so, in one line
            self.report(f"{event}: {counted(line['iterations'], 'iteration')}, {line['training_seconds']:,.0f} s of training "
                        f"({line['cpu_seconds']:,.0f} CPU s), {line['iterations_per_second']:,.0f} a second "
                        f"this session -> {self.checkpoint}")

    def _rate(self) -> float:
        """Iterations a second of training in this session (0 before its first slice)."""
        walked = self.trainer.iterations - self._session.get("iterations", self.trainer.iterations)
        return walked / self._session["walk"] if self._session.get("walk") else 0.0

    def _line(self, event: str) -> dict:
        t = self.trainer
        s = self._session
        record = {"event": event, "time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                  "iterations": t.iterations, "training_seconds": round(t.seconds, 1),
                  "cpu_seconds": round(float(t.extra.get("cpu_seconds", 0.0)), 1),
                  "session_wall_seconds": round(time.monotonic() - s.get("start", time.monotonic()), 1),
                  "iterations_per_second": round(self._rate()),
                  "threads": t.threads, "table_bytes": self.memory,
                  "max_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "load_average": round(os.getloadavg()[0], 2)}
        if self.progress is not None:
            _append_line(Path(self.progress), record)
        return record
