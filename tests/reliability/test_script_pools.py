"""The worker pools of the experiment scripts (``experiments/common.worker_pool``) and of the
default case base's recipe (``python -m casebases.build_default``), with real processes: a
worker SIGKILLed from outside while it plays, a terminal's Ctrl-C while ``spawn``ed workers
still import, and (the recipe) a Ctrl-C or SIGTERM while it plays.

Before: their pools were plain ``ProcessPoolExecutor`` ones. A killed worker was a
``BrokenProcessPool`` traceback (the recipe also left the killed match's half-written log);
a Ctrl-C while workers started printed the workers' ``KeyboardInterrupt`` tracebacks under the
script's own; a SIGTERM ended the recipe and left its workers playing, orphaned.

Every test is bounded and kills whatever it started (its own session)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import default_sigint
from tests.reliability.test_build_signals import (
    _alive,
    _signal_while_workers_start,
    _wait_for,
)
from tests.reliability.test_pool_kills import _busy_workers, _session, _stop_everything

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the worker processes")

#: Runs ``experiments/SCRIPT ARGS`` (``sys.argv[1:]``) with the ``spawn`` start method: workers
#: are fresh interpreters that import the script, a window wide enough to catch them starting.
SPAWN_SCRIPT = """
import multiprocessing as mp, os, runpy, sys
mp.set_start_method("spawn")
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(script))
runpy.run_path(script, run_name="__main__")
"""
#: The same for ``python -m casebases.build_default ARGS``.
SPAWN_RECIPE = """
import multiprocessing as mp, runpy, sys
mp.set_start_method("spawn")
sys.argv[0] = "build_default"
runpy.run_module("casebases.build_default", run_name="__main__", alter_sys=True)
"""

#: Each experiment script with a pool, busy for minutes with two workers (a million hands a
#: match), writing under ``{out}``; what it keeps when stopped.
BUSY = {
    "adaptation_matrix": ["--experts", "ehs", "--opponents", "call,raise", "--hands", "1000000", "-j", "2",
                          "--out", "{out}/m.json"],
    "adaptive": ["--opponents", "call,raise", "--fixed", "ehs", "--hands", "1000000", "-j", "2", "--out", "{out}/a.json"],
    "bot_table": ["--bots", "ehs", "--opponents", "call,raise", "--hands", "1000000", "--workers", "2",
                  "--skip", "lbr,time", "--redo", "--out", "{out}"],
    "casper_table": ["--opponents", "call,raise", "--no-table", "--hands", "1000000", "--jobs", "2",
                     "--out", "{out}/c.json"],
    "counter_strategies": ["--only", "raise", "--hands", "1000000", "-j", "2", "--out", "{out}/c.json"],
    "reuse_policies": ["--hands", "1000000", "--jobs", "2", "--also", "", "--out", "{out}/r.json"],
    "teacher": ["--skip", "snapshots,lbr", "--opponents", "call,raise", "--match-hands", "1000000", "--workers", "2",
                "--out", "{out}"],
}


#: What a script says it kept when a worker dies before its first result (the rest: nothing).
KEPT = {"bot_table": "No cell was written.", "teacher": "No result was written."}


def _experiment(name: str, out: Path, code: str | None = None) -> subprocess.Popen:
    script = str(REPO / "experiments" / f"{name}.py")
    args = [a.replace("{out}", str(out)) for a in BUSY[name]]
    if "{out}" not in BUSY[name]:  # an --out file: its folder must exist (the folder scripts make theirs)
        out.mkdir()
    head = ["-c", code, script] if code else [script]
    return subprocess.Popen([sys.executable, *head, *args], cwd=out.parent, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=default_sigint,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})


def _nothing_in(out: Path) -> bool:
    """Whether the script wrote nothing under ``out``: no folder made, or the file's folder empty."""
    return not out.exists() or not any(out.iterdir())


def _recipe(root: Path, code: str | None = None) -> subprocess.Popen:
    """The default case base's recipe run in ``root`` (outside the checkout: its logs and case
    base go under ``root``)."""
    head = ["-c", code] if code else ["-m", "casebases.build_default"]
    return subprocess.Popen([sys.executable, *head, "--workers", "2"], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=default_sigint,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})


def _half_written(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "casebases" / "selfplay").glob(".*"))


@pytest.mark.time_limit(90)
@pytest.mark.parametrize("name", sorted(BUSY))
def test_a_killed_worker_ends_the_experiment_with_one_line(name: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _experiment(name, out)
    pids: list[int] = []
    try:
        pids = _busy_workers(proc)
        os.kill(pids[0], signal.SIGKILL)
        stdout, err = proc.communicate(timeout=30)
        text = err.decode()
        lines = text.strip().splitlines()
        assert proc.returncode == 1, text
        assert lines[-1].startswith("error: a worker process of the experiment died ("), text
        # the scripts that write as they go say what they wrote: nothing here (they said their
        # results "are in FILE", a file that did not exist)
        assert lines[-1].endswith(KEPT.get(name, "Nothing was written.")), text
        assert "Traceback" not in text and sum("error" in line.lower() for line in lines) == 1, text
        assert stdout == b"" and _nothing_in(out)  # no match finished: nothing written
        assert _wait_for(lambda: not _session(proc.pid), timeout=5), f"left running: {_session(proc.pid)}"
    finally:
        _stop_everything(proc, pids)


def _square_or_die(x: int) -> int:
    if x == 2:
        os._exit(9)  # as a worker killed from outside
    return x * x


def test_a_dead_worker_says_what_was_written_when_it_died() -> None:
    """``worker_pool``'s ``kept`` may be a function, asked when the worker has died: a script that
    writes as it goes says what it had written then (``bot_table``'s cells, ``teacher``'s results)."""
    from cbr.errors import CBRError
    from experiments.common import worker_pool

    got: list[int] = []
    with pytest.raises(CBRError) as caught:
        with worker_pool(1, kept=lambda: f"{len(got)} results were written.") as pool:
            for r in pool.map(_square_or_die, [0, 1, 2, 3]):
                got.append(r)
    assert got == [0, 1]
    assert str(caught.value).startswith("a worker process of the experiment died (")
    assert str(caught.value).endswith("killed from outside, or out of memory? 2 results were written."), caught.value


@pytest.mark.time_limit(120)
def test_a_dead_worker_names_the_model_store_its_bots_wrote(tmp_path: Path) -> None:
    """A bot on ``poki-wt:store=PATH`` saves each hand it finishes into PATH (one transaction a
    hand, in the worker that plays it): a run whose worker died said "No cell was written" (the
    experiments' default: "Nothing was written.") while PATH held the hands played. The line
    names the store too; here after its worker was killed mid-match, its hands in the store."""
    from cbr.models.store import ModelStore

    store, out = tmp_path / "p.duckdb", tmp_path / "out"
    proc = subprocess.Popen([sys.executable, str(REPO / "experiments" / "bot_table.py"), "--bots",
                             f"poki-wt:store={store}", "--opponents", "call", "--hands", "1000000", "--workers", "1",
                             "--skip", "lbr,time", "--redo", "--out", str(out)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=default_sigint,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})
    pids: list[int] = []
    try:
        pids = _busy_workers(proc, n=1)
        assert _wait_for(lambda: store.exists(), timeout=30), "the bot made no store"
        time.sleep(1.0)  # a few hands saved
        os.kill(pids[0], signal.SIGKILL)
        _, err = proc.communicate(timeout=30)
        lines = err.decode().strip().splitlines()
        assert proc.returncode == 1, lines
        assert lines[-1].startswith("error: a worker process of the experiment died ("), lines
        assert lines[-1].endswith("No cell was written. 1 model store of the bots (p.duckdb) keeps each hand "
                                  "they finished."), lines
        assert _nothing_in(out)
        with ModelStore.open(store) as written:  # the message is true: the store holds the hands played
            assert written.players() and written.model("call").hands > 0
    finally:
        _stop_everything(proc, pids)


def _ctrl_c_while_spawned_workers_start(proc: subprocess.Popen) -> tuple[int, list[str], bytes]:
    """A terminal's Ctrl-C (SIGINT to the process group) while both spawned workers still
    import what they need: each is stopped during its start-up, then the script; the Ctrl-C;
    the workers resume until each has ended or finished starting (ignoring Ctrl-C), and the
    script resumes. Returns its exit code, its stderr's lines and its stdout."""
    stopped: list[int] = []
    try:
        _signal_while_workers_start(proc, signal.SIGINT, stopped)
        out, err = proc.communicate(timeout=30)
        assert _wait_for(lambda: not _session(proc.pid), timeout=5), f"left running: {_session(proc.pid)}"
        return proc.returncode, err.decode().strip().splitlines(), out
    finally:
        _stop_everything(proc, stopped)


@pytest.mark.time_limit(120)
@pytest.mark.parametrize(("name", "said"), [
    ("adaptation_matrix", "interrupted: nothing written"),
    ("bot_table", "interrupted: nothing written"),  # it said its file held the cells, with <SEED> for the seed
])
def test_a_terminal_ctrl_c_while_spawned_workers_start_is_one_line(name: str, said: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, lines, stdout = _ctrl_c_while_spawned_workers_start(_experiment(name, out, SPAWN_SCRIPT))
    assert code == 130, lines
    assert lines == [said], lines
    assert stdout == b"" and _nothing_in(out)


# --- the default case base's recipe ---------------------------------------------------------------

@pytest.mark.time_limit(90)
def test_a_killed_worker_ends_the_recipe_with_one_line_and_no_half_written_log(tmp_path: Path) -> None:
    proc = _recipe(tmp_path)
    pids: list[int] = []
    try:
        pids = _busy_workers(proc)
        assert _wait_for(lambda: len(_half_written(tmp_path)) == 2, timeout=30), _half_written(tmp_path)
        os.kill(pids[0], signal.SIGKILL)
        _, err = proc.communicate(timeout=30)
        text = err.decode()
        lines = text.strip().splitlines()
        assert proc.returncode == 1, text
        assert lines[-1].startswith("error: a worker process of the recipe died ("), text
        assert lines[-1].endswith("run again with --missing-logs to play the rest"), text
        assert "Traceback" not in text and all(line.startswith("wrote ") for line in lines[:-1]), text
        assert _half_written(tmp_path) == [] and not (tmp_path / "casebases" / "default").exists()
        assert _wait_for(lambda: not _session(proc.pid), timeout=5), f"left running: {_session(proc.pid)}"
    finally:
        _stop_everything(proc, pids)


@pytest.mark.time_limit(90)
@pytest.mark.parametrize(("signum", "code", "by"), [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143, "SIGTERM")])
def test_a_stop_while_the_recipe_plays_ends_its_workers_and_keeps_whole_logs_only(
        signum: int, code: int, by: str, tmp_path: Path) -> None:
    proc = _recipe(tmp_path)
    pids: list[int] = []
    try:
        pids = _busy_workers(proc)
        assert _wait_for(lambda: len(_half_written(tmp_path)) == 2, timeout=30), _half_written(tmp_path)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30)
        text = err.decode()
        lines = text.strip().splitlines()
        assert proc.returncode == code, text
        assert lines[-1] == (f"stopped by {by}: the logs written so far are in {tmp_path / 'casebases' / 'selfplay'} "
                             "(a log being written was dropped); run again with --missing-logs to play the rest"), text
        assert "Traceback" not in text and all(line.startswith("wrote ") for line in lines[:-1]), text
        assert _half_written(tmp_path) == []
        assert _wait_for(lambda: not any(_alive(p) for p in pids), timeout=5), "a worker outlived the recipe"
    finally:
        _stop_everything(proc, pids)


@pytest.mark.time_limit(120)
def test_a_terminal_ctrl_c_while_the_recipes_spawned_workers_start_is_one_line(tmp_path: Path) -> None:
    code, lines, _ = _ctrl_c_while_spawned_workers_start(_recipe(tmp_path, SPAWN_RECIPE))
    assert code == 130, lines
    assert lines == [f"stopped by Ctrl-C: the logs written so far are in {tmp_path / 'casebases' / 'selfplay'} "
                     "(a log being written was dropped); run again with --missing-logs to play the rest"], lines
    assert _half_written(tmp_path) == []
