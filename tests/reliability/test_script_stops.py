"""How an experiment script ends when it is stopped or fails, with real processes: every script
in ``experiments/`` starts through ``experiments/common.run``, so a Ctrl-C is one line
(``interrupted: ...``, exit 130), a SIGTERM one line (``terminated: ...``, exit 143) and a
library error (``cbr.errors.CBRError``) one ``error:`` line, exit 1; the worker processes of the
script (its own pool, or the library's: LBR's) do not outlive it.

Before: only the seven scripts with a worker pool started through ``run``; the others showed a
``KeyboardInterrupt`` or ``CaseBaseError`` traceback, a SIGTERM killed every script without a
word (exit -15), and a Ctrl-C or SIGTERM while LBR measured (``exploit`` returns the chunks played
so far when stopped) let the script go on and write the partial measurement as a whole one.

Every test is bounded and kills whatever it started (its own session)."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import default_sigint, lines_until, require_native
from tests.reliability.test_build_signals import _alive, _wait_for
from tests.reliability.test_pool_kills import _busy_workers, _session, _stop_everything

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the worker processes")

#: Scripts busy for minutes, writing under ``{out}``: (arguments, how many workers they start,
#: the line on stdout that says the work has begun when they start none).
BUSY = {
    # one process: a million duplicate hands, after the line naming the bot's parameters
    "ehs_strength": (["--hands", "1000000", "--out", "{out}/e.json"], 0, "EHS bot "),
    # LBR in two worker processes of the library (cbr.exploit.measure), not a worker_pool of its own
    "exploit_validation": (["--hands", "10000000", "--workers", "2", "--out", "{out}/v.json"], 2, None),
    # a worker_pool of its own
    "counter_strategies": (["--only", "raise", "--hands", "1000000", "-j", "2", "--out", "{out}/c.json"], 2, None),
}


def _busy(name: str, out: Path) -> tuple[subprocess.Popen, list[int]]:
    args, workers, started = BUSY[name]
    proc = subprocess.Popen([sys.executable, str(REPO / "experiments" / f"{name}.py"),
                             *[a.replace("{out}", str(out)) for a in args]],
                            cwd=out.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=default_sigint,
                            env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"})
    if workers:
        return proc, _busy_workers(proc, workers)
    lines_until(proc.stdout, started)
    return proc, []


@pytest.mark.time_limit(120)
@pytest.mark.parametrize("name", sorted(BUSY))
@pytest.mark.parametrize(("signum", "code", "said"), [(signal.SIGINT, 130, "interrupted: nothing written"),
                                                      (signal.SIGTERM, 143, "terminated: nothing written")],
                         ids=["ctrl-c", "sigterm"])
def test_a_stopped_script_says_one_line_and_leaves_no_worker(name: str, signum: int, code: int, said: str,
                                                             tmp_path: Path) -> None:
    require_native()
    out = tmp_path / "out"
    out.mkdir()  # the folder of an --out file must exist
    proc, pids = None, []
    try:
        proc, pids = _busy(name, out)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == code, err
        assert err.strip().splitlines() == [said], err
        assert list(out.iterdir()) == []  # nothing measured to the end: nothing written
        assert _wait_for(lambda: not any(_alive(p) for p in pids), timeout=5), "a worker outlived the script"
        assert _wait_for(lambda: not _session(proc.pid), timeout=5), f"left running: {_session(proc.pid)}"
    finally:
        if proc is not None:
            _stop_everything(proc, pids)


def test_a_library_error_is_one_error_line(tmp_path: Path) -> None:
    """``condense_coverage.py`` of a case base that is not there: the library's ``CaseBaseError``."""
    require_native()
    p = subprocess.run([sys.executable, str(REPO / "experiments" / "condense_coverage.py"), str(tmp_path / "nosuch"),
                        "--out", str(tmp_path / "c.json")], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    assert p.stderr.strip().splitlines() == [p.stderr.strip()], p.stderr
    assert p.stderr.startswith(f"error: no case base '{tmp_path / 'nosuch'}': not a directory"), p.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_bench_scripts_library_error_is_one_error_line(tmp_path: Path) -> None:
    """``bench_condense.py`` of a case base whose manifest is torn: the library's error is one
    ``error:`` line, exit 1 (it was a traceback before the bench scripts started through ``run``)."""
    require_native()
    folder = tmp_path / "notcb"
    folder.mkdir()
    (folder / "manifest.json").write_text("{torn")
    p = subprocess.run([sys.executable, str(REPO / "bench" / "bench_condense.py"), "--base", str(folder),
                        "--cases", "10"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    assert p.stderr.strip().splitlines() == [p.stderr.strip()], p.stderr
    assert p.stdout == ""  # refused before any work (the synthetic streets were timed first)
    assert p.stderr.startswith(f"error: {folder / 'manifest.json'}: cannot read the manifest"), p.stderr


@pytest.mark.parametrize("folder, helper, least", [("experiments", "common.py", 29), ("bench", "native_guard.py", 30)])
def test_every_script_starts_through_run(folder: str, helper: str, least: int) -> None:
    """The guard of the tests above for the scripts they do not run: each experiment's and each
    benchmark's ``__main__`` block calls ``run`` (``experiments/common.py``, passed on by
    ``bench/native_guard.py``): Ctrl-C, SIGTERM and a library error are one line each."""
    scripts = sorted(p for p in (REPO / folder).glob("*.py") if p.name != helper)
    assert len(scripts) >= least
    without = [p.name for p in scripts
               if not re.search(r'^if __name__ == "__main__":\n(    .*\n|\n)*?    (native_guard\.)?run\(', p.read_text(encoding="utf-8"),
                                re.M)]
    assert without == []


def _exploit_table(out: Path, bots: str, workers: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(REPO / "experiments" / "exploit_table.py"), "--bots", bots,
                             "--hands", "100", "--ehs-hands", "100", "--workers", str(workers), "--out", str(out)],
                            cwd=out.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=default_sigint,
                            env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"})


@pytest.mark.time_limit(120)
def test_a_ctrl_c_names_the_file_holding_the_rows_measured(tmp_path: Path) -> None:
    """``exploit_table.py`` said ``interrupted: the rows measured so far are in
    exploit-table-seed<SEED>.json of the --out folder`` (so did ``bot_table`` and ``teacher``), a
    template; now the file the run wrote, named as from the folder the script runs in."""
    require_native()
    out = tmp_path / "out"
    proc = _exploit_table(out, "call,cbr:preset=expert", 1)  # LBR in the script's process: no worker
    try:
        lines_until(proc.stderr, "call ")  # the first row is written; the case-based bot's LBR is under way
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        assert err.strip().splitlines() == ["interrupted: the rows measured so far are in out/exploit-table-seed2.json"]
        assert "call" in json.loads((out / "exploit-table-seed2.json").read_text())["rows"]
    finally:
        _stop_everything(proc, [])


@pytest.mark.time_limit(120)
def test_a_ctrl_c_before_the_first_row_says_nothing_was_written(tmp_path: Path) -> None:
    """The same template was said when the run had written nothing (and no file was there)."""
    require_native()
    out = tmp_path / "out"
    proc = _exploit_table(out, "cbr:preset=expert", 2)
    pids: list[int] = []
    try:
        pids = _busy_workers(proc, 2)  # LBR's workers play the first bot's chunks
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        assert err.strip().splitlines() == ["interrupted: nothing written"]
        assert not out.exists()
    finally:
        _stop_everything(proc, pids)
