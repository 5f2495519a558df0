"""The smallest counts the benchmarks accept run to the end (or stop with one ``error:`` line
when there is nothing to measure): every script of ``bench/`` was run with its counts at their
least (``--hands 1``, ``--decisions 4``, ``--repeat 1``, ...), and these crashed:
``bench_exploit.py --hands 1`` in the library's ``ConfigError`` (LBR plays 2 hands or more: the
argument check says so now, ``tests/test_bench_options.py``), ``bench_teacher.py --decisions 1``
in a ``StopIteration`` (its warm-up wanted a decision on every street),
``bench_resolve.py --hands 1`` in a ``StatisticsError`` (no river decision to time), and
``bench_scale_build.py --logs DIR`` with a relative folder in ``cbr build``'s "no such file"
(the build runs in the checkout)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import require_module, require_native, require_program

REPO = Path(__file__).resolve().parents[1]


def bench(name: str, args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "bench" / f"{name}.py"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "OMP_NUM_THREADS": "1"})


def test_bench_exploit_at_its_least_hands(tmp_path: Path) -> None:
    require_native()
    p = bench("bench_exploit", ["--hands", "2", "--bots", "call"], tmp_path)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert p.stdout.splitlines()[0].startswith("one core; LBR 2 hands a bot"), p.stdout
    assert p.stdout.splitlines()[-1].startswith("call "), p.stdout


def test_bench_teacher_with_one_decision(tmp_path: Path) -> None:
    require_native()
    p = bench("bench_teacher", ["--decisions", "1", "--boards", "1"], tmp_path)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "2. decision time through Policy.act, 1 decision of random hands" in p.stdout, p.stdout
    assert "   cfr:strategy=emd_256 (the MCCFR teacher): mean " in p.stdout, p.stdout
    assert "   cfr (emd_2000, its river re-solved): mean " in p.stdout, p.stdout


def test_bench_resolve_without_a_river_decision_says_so_in_one_line(tmp_path: Path) -> None:
    """One hand a bot (seed 61): the resolving bot folds or the hand ends before its river."""
    require_native()
    require_program("cc", "gcc")  # the old path's kernel is compiled from git
    require_program("git")
    p = bench("bench_resolve", ["--hands", "1", "--json", str(tmp_path / "r.json")], tmp_path)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert p.stderr.strip().splitlines() == ["error: the bot reached no river decision in 2 hands: nothing to time; "
                                             "give more --hands"], p.stderr
    assert p.stdout == "" and not (tmp_path / "r.json").exists()


def test_bench_scale_build_of_one_hand_into_a_relative_logs_folder(tmp_path: Path) -> None:
    require_native()
    require_module("psutil")
    (tmp_path / "logs").mkdir()
    p = bench("bench_scale_build", ["--hands", "1", "--modes", "local", "--logs", "logs", "--json", "s.json"], tmp_path)
    assert p.returncode == 0 and "Traceback" not in p.stderr, (p.stdout, p.stderr)
    assert p.stdout.startswith(f"logs: 1 file, 1 hand, 0.0 MB in {tmp_path / 'logs'} "), p.stdout
    assert sorted(f.name for f in (tmp_path / "logs").iterdir()) == ["selfplay-00000.log", "selfplay.json"]
    report = json.loads((tmp_path / "s.json").read_text())
    assert report["hands"] == 1 and [r["mode"] for r in report["results"]] == ["local"]
    assert report["results"][0]["hands"] == 1 and report["results"][0]["cases"] > 0


def test_bench_scale_build_refuses_a_logs_folder_with_other_files_beside_its_logs(tmp_path: Path) -> None:
    """A folder of its self-play logs plus another log was taken, and ``cbr build`` read that
    log too: the figures were of other hands than ``--hands``. It is one ``error:`` line naming
    the file (a README, which the build leaves out, does not count), exit 1, nothing written."""
    require_native()
    require_module("psutil")
    from cbr.play.selfplay import write_selfplay_logs

    logs = tmp_path / "logs"
    [made] = write_selfplay_logs(logs, 1)
    (logs / "README.md").write_text("self-play logs for the build benchmark\n")
    (logs / "sub").mkdir()
    (logs / "sub" / "mine.log").write_text(made.read_text())
    before = sorted(p.relative_to(logs) for p in logs.rglob("*"))
    p = bench("bench_scale_build", ["--hands", "1", "--modes", "local", "--logs", "logs", "--json", "s.json"], tmp_path)
    assert p.returncode == 1 and p.stdout == "", (p.stdout, p.stderr)
    assert p.stderr.strip().splitlines() == [
        f"error: {logs} holds other files than this benchmark's self-play logs ({logs / 'sub' / 'mine.log'}); "
        "cbr build would read them too: give a folder of self-play logs only, or an empty one"], p.stderr
    assert sorted(p.relative_to(logs) for p in logs.rglob("*")) == before and not (tmp_path / "s.json").exists()
    # another log at the top of a folder whose logs are still to be written: refused before any is
    other = tmp_path / "other"
    other.mkdir()
    (other / "selfplay.json").write_text((logs / "selfplay.json").read_text())
    (other / "theirs.log").write_text(made.read_text())
    p = bench("bench_scale_build", ["--hands", "1", "--modes", "local", "--logs", "other"], tmp_path)
    assert p.returncode == 1 and f"({other / 'theirs.log'})" in p.stderr, p.stderr
    assert sorted(f.name for f in other.iterdir()) == ["selfplay.json", "theirs.log"]
