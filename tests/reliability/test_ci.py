"""The reliability frame itself: tests here are collected by the plain suite, each is bounded
in time (a hanging test fails, it does not hang the run), processes started with ``spawn``
die with the test, and the long-form runner reports what held."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.reliability import LONG_FACTOR, reliability_rounds

#: The inner pytest runs test the frame in its short form (the bounds they assert), even when this
#: module runs in the long form (``CBR_RELIABILITY=long`` would scale their 1-second bounds too).
ENV = {k: v for k, v in os.environ.items() if k not in ("CBR_RELIABILITY", "CBR_RELIABILITY_ROUNDS")}
ENV["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))


def _pytest(args: list[str], cwd: Path, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd,
                          env=dict(ENV, **env), text=True, capture_output=True, timeout=timeout)


def test_rounds_follow_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """reliability_rounds: the default, x20 in the long form, or an explicit count."""
    monkeypatch.delenv("CBR_RELIABILITY", raising=False)
    monkeypatch.delenv("CBR_RELIABILITY_ROUNDS", raising=False)
    assert reliability_rounds(5) == 5
    monkeypatch.setenv("CBR_RELIABILITY", "long")
    assert reliability_rounds(5) == 5 * LONG_FACTOR
    monkeypatch.setenv("CBR_RELIABILITY_ROUNDS", "7")
    assert reliability_rounds(5) == 7


@pytest.mark.time_limit(90)
def test_a_hanging_test_fails_at_its_time_limit(tmp_path: Path) -> None:
    """A sleeping test, a test blocked reading a pipe and one that swallows exceptions all stop at the bound."""
    (tmp_path / "test_hangs.py").write_text(textwrap.dedent("""
        import os, time
        import pytest

        @pytest.mark.time_limit(1)
        def test_sleeps():
            time.sleep(60)

        @pytest.mark.time_limit(1)
        def test_blocks_on_a_pipe():
            r, w = os.pipe()
            os.read(r, 1)          # nobody writes

        @pytest.mark.time_limit(1)
        def test_swallows_exceptions():
            try:
                time.sleep(60)
            except Exception:
                pass

        def test_quick():
            pass
    """))
    start = time.monotonic()
    run = _pytest(["-p", "tests.reliability.conftest", "-q", "test_hangs.py"], tmp_path)
    took = time.monotonic() - start
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stdout.count("exceeded its time limit of 1 s") >= 3, run.stdout
    assert "3 failed, 1 passed" in run.stdout, run.stdout
    assert took < 45, f"three 1-second bounds took {took:.0f} s"


@pytest.mark.time_limit(90)
def test_spawned_processes_die_with_the_test(tmp_path: Path) -> None:
    """A process started with ``spawn`` and the child it forked are gone when the test ends."""
    pids = tmp_path / "pids"
    (tmp_path / "test_spawns.py").write_text(textwrap.dedent(f"""
        import time

        def test_leaves_a_process_tree(spawn):
            proc = spawn(["sh", "-c", "sleep 300 & echo $! > {pids}.child; exec sleep 300"])
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not __import__("os").path.exists("{pids}.child"):
                time.sleep(0.05)
            open("{pids}", "w").write(str(proc.pid))
    """))
    run = _pytest(["-p", "tests.reliability.conftest", "-q", "test_spawns.py"], tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    for path in (pids, Path(f"{pids}.child")):
        pid = int(path.read_text())
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
        assert not _alive(pid), f"process {pid} ({path.name}) outlived its test"


def _alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (a reaped or re-parented zombie is dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


@pytest.mark.time_limit(120)
def test_the_plain_suite_collects_the_reliability_tests() -> None:
    """README's command (``python -m pytest`` from the root, no arguments) includes this folder."""
    run = _pytest(["--collect-only", "-q"], REPO, timeout=110)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "tests/reliability/test_ci.py::test_rounds_follow_the_environment" in run.stdout


@pytest.mark.time_limit(90)
def test_the_long_form_runner_reports_what_held() -> None:
    """``python -m tests.reliability.run_long`` sets the rounds and prints one line per test."""
    run = subprocess.run([sys.executable, "-m", "tests.reliability.run_long", "--rounds", "3",
                          "-k", "test_rounds_follow_the_environment"],
                         cwd=REPO, env=ENV, text=True, capture_output=True, timeout=80)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "reliability suite, 3 rounds: 1 held, 0 broke" in run.stdout, run.stdout
    assert "| held |" in run.stdout and "reliability_rounds: the default" in run.stdout
    bad = subprocess.run([sys.executable, "-m", "tests.reliability.run_long", "--rounds", "0"],
                         cwd=REPO, env=ENV, text=True, capture_output=True, timeout=30)
    assert bad.returncode == 2 and "--rounds must be at least 1" in bad.stderr


def test_the_runner_summary_doctest() -> None:
    import doctest

    from tests.reliability import run_long

    assert doctest.testmod(run_long).failed == 0
