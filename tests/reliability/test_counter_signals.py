"""``python -m casebases.build_counters`` stopped by SIGTERM as by Ctrl-C: a real SIGTERM to a
tiny run (20 hands of the teacher, a counter-strategy against ``raise``) while the teacher plays,
while the counter-strategy trains (then a burst of Ctrl-Cs) and while it is written.

Before: Ctrl-C was one line and exit 130, but SIGTERM killed the recipe where it stood, with no
line and exit -15 (a strategy being written could be left without its model). Now SIGTERM is the
same stop (``casebases.build_cfr_emd.StartSignals``): one ``stopped by SIGTERM: ...`` line naming
what was stopped and what is kept, exit 143, nothing half-written; later signals are ignored while
it says so. Ctrl-C's own tests are in ``tests/cfr/test_counter.py``.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, default_sigint, require_native

require_native(module_level=True)

from casebases.build_counters import SEED, log_path, teacher_key  # noqa: E402
from cbr.cfr.counter import OpponentModel  # noqa: E402
from cbr.cfr.mccfr import STRATEGY_FILE, load_imperfect_strategy  # noqa: E402
from cbr.cfr.policy import SHIPPED_TEACHER  # noqa: E402
from cbr.logs.acpc import loads  # noqa: E402

#: The line's end: what earlier counter-strategies of the run became (none here: each run builds
#: one; tests/cfr/test_counter.py names those finished before).
BEFORE = ""


def start(spawn, out: Path, only: str, hands: int, iterations: int) -> subprocess.Popen:
    """The recipe on a run folder ``out`` that holds the teacher's abstraction (a link)."""
    (out / "emd_256").symlink_to(SHIPPED_TEACHER)
    return spawn([sys.executable, "-m", "casebases.build_counters", "--only", only, "--hands", str(hands),
                  "--iterations", str(iterations), "--threads", "1", "--logs", str(out / "logs"), "--out", str(out)],
                 cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)


@pytest.mark.time_limit(120)
def test_sigterm_while_the_teacher_plays_writes_no_log(spawn, tmp_path: Path) -> None:
    proc = start(spawn, tmp_path, "call", 20_000, 2000)
    first = proc.stderr.readline()
    assert first.startswith("call: the teacher plays call, 20,000 duplicate hands"), first
    time.sleep(1.5)                                     # inside the match (20,000 hands take about a minute)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert err.strip().splitlines() == [
        "stopped by SIGTERM: the teacher's match against call, for counter_call, was not finished; its log was not "
        "written" + BEFORE], err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emd_256", "logs"]
    assert list((tmp_path / "logs").iterdir()) == []    # no log, no temp file of one


@pytest.mark.time_limit(120)
def test_sigterm_while_it_trains_writes_nothing(spawn, tmp_path: Path) -> None:
    proc = start(spawn, tmp_path, "raise", 20, 100_000_000)
    first = proc.stderr.readline()
    assert first.startswith("raise: the teacher plays raise, 20 duplicate hands"), first
    counted = proc.stderr.readline()                    # the model is counted: training starts now
    assert "decisions of raise counted" in counted, counted
    time.sleep(1.5)                                     # well inside the solver's C call
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert err.strip().splitlines() == [
        "stopped by SIGTERM: the counter-strategy being trained was not written" + BEFORE], err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emd_256", "logs"]
    (log,) = (tmp_path / "logs").iterdir()              # played before the stop: whole, kept for a re-run
    assert log == log_path("raise", 20, SEED, tmp_path / "logs", teacher_key())
    assert len(loads(log.read_text(encoding="utf-8"))) == 20


@pytest.mark.time_limit(120)
def test_a_burst_of_signals_while_it_stops_is_one_stop(spawn, tmp_path: Path) -> None:
    """SIGTERM, then Ctrl-C every 10 ms until the recipe is gone: the first signal is the stop,
    the others cut neither its line nor its exit (the handlers put back after the stop let a
    Ctrl-C kill it, exit -2)."""
    proc = start(spawn, tmp_path, "raise", 20, 100_000_000)
    assert "decisions of raise counted" in proc.stderr.readline() + proc.stderr.readline()
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)                                     # a slice of the solver: the first one lands first
    end = time.monotonic() + 10
    while proc.poll() is None and time.monotonic() < end:
        proc.send_signal(signal.SIGINT)
        time.sleep(0.01)
    _, err = proc.communicate(timeout=30)
    # on a busy machine both may be pending when it first looks: then the lower number, SIGINT, is the stop
    by, code = ("stopped by SIGTERM", 143) if "stopped by SIGTERM" in err else ("interrupted", 130)
    assert proc.returncode == code, err
    assert err.strip().splitlines() == [f"{by}: the counter-strategy being trained was not written" + BEFORE], err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emd_256", "logs"]


@pytest.mark.time_limit(180)
def test_sigterm_while_a_strategy_is_written_leaves_the_pair_whole(spawn, tmp_path: Path) -> None:
    folder = tmp_path / "counter_raise"
    proc = start(spawn, tmp_path, "raise", 20, 2000)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if folder.is_dir() and any(n.startswith(".strategy.npz.tmp-") for n in os.listdir(folder)):
            proc.send_signal(signal.SIGTERM)            # inside the strategy's write
            break
        time.sleep(0.002)
    else:
        raise AssertionError(f"the strategy's write was not seen (exit {proc.returncode})")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "Traceback" not in err, err
    assert err.splitlines()[-1] == f"stopped by SIGTERM: counter_raise was written whole, with its model ({folder})" + BEFORE
    assert sorted(os.listdir(folder)) == ["model.npz", STRATEGY_FILE]
    assert load_imperfect_strategy(folder).info["iterations"] == 2000
    assert OpponentModel.load(folder / "model.npz").counts.sum() > 0


def test_a_stop_while_a_strategy_file_is_read_is_a_stop_not_a_damaged_file(tmp_path: Path) -> None:
    """The stop of the recipes (:class:`~casebases.build_cfr_emd.Stopped`) is a
    ``KeyboardInterrupt``: a reader that reports any ``Exception`` as a damaged file (the
    teacher's strategy, read when its match starts) let it through, not as a ``ConfigError``."""
    from casebases.build_cfr_emd import StartSignals, Stopped
    from cbr.cfr.strategy import load_strategy

    fifo = tmp_path / "strategy.npz"
    os.mkfifo(fifo)                                     # opening it waits for a writer: the signal comes first
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM))
    with StartSignals():
        timer.start()
        try:
            with pytest.raises(Stopped) as stop:
                load_strategy(fifo)
        finally:
            timer.cancel()
    assert stop.value.signum == signal.SIGTERM
