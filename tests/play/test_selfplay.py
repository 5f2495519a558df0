"""Self-play logs for builds at scale (``cbr.play.selfplay``) are reused only for the run they were
written for: ``bench/bench_scale_build.py --logs DIR --hands 10`` took a folder of 20 hands, said
"10 hands" and built from 20. The folder's ``selfplay.json`` records the run; logs of another run,
by their record or (written before it) by their count of hands, are a ``ConfigError`` and
nothing is written."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cbr.errors import ConfigError
from cbr.play.selfplay import RUN_FILE, write_selfplay_logs
from tests.conftest import require_module, require_native

REPO = Path(__file__).resolve().parents[2]


def _hands(folder: Path) -> int:
    return sum(line.startswith("STATE:") for p in sorted(folder.glob("selfplay-*.log")) for line in open(p))


def _state(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_the_run_is_recorded_and_a_resumed_run_of_the_same_is_reused(tmp_path: Path) -> None:
    files = write_selfplay_logs(tmp_path, 7, hands_per_file=3, seed=2)
    assert [f.name for f in files] == ["selfplay-00000.log", "selfplay-00001.log", "selfplay-00002.log"]
    assert json.loads((tmp_path / RUN_FILE).read_text()) == {"hands": 7, "hands_per_file": 3, "seed": 2}
    assert _hands(tmp_path) == 7
    last = files[-1].read_bytes()
    files[-1].unlink()  # as if stopped before the last file: the same run writes only that one
    before = {n: b for n, b in _state(tmp_path).items()}
    write_selfplay_logs(tmp_path, 7, hands_per_file=3, seed=2)
    assert files[-1].read_bytes() == last and {n: b for n, b in _state(tmp_path).items() if n in before} == before


@pytest.mark.parametrize("hands, per, seed", [(6, 3, 2), (9, 3, 2), (7, 4, 2), (7, 3, 0)])
def test_logs_of_another_run_are_refused_and_left_as_they_are(tmp_path: Path, hands: int, per: int, seed: int) -> None:
    write_selfplay_logs(tmp_path, 7, hands_per_file=3, seed=2)
    before = _state(tmp_path)
    with pytest.raises(ConfigError, match=r"selfplay.json: the logs here are of another run \(7 hands, 3 a file, "
                                          rf"seed 2\), not of {hands} hands, {per} a file, seed {seed}: give an empty"):
        write_selfplay_logs(tmp_path, hands, hands_per_file=per, seed=seed)
    assert _state(tmp_path) == before


def test_logs_without_a_record_are_counted(tmp_path: Path) -> None:
    """Logs written before the record: reused when they hold exactly this run's hands, refused
    (a file of another size, a file this run does not write) otherwise."""
    write_selfplay_logs(tmp_path, 6, hands_per_file=3)
    (tmp_path / RUN_FILE).unlink()
    before = _state(tmp_path)
    with pytest.raises(ConfigError, match=r"selfplay-00001.log: 3 hands, where a run of 5 hands, 3 a file, seed 0 "
                                          "writes 2: these logs are of another run"):
        write_selfplay_logs(tmp_path, 5, hands_per_file=3)  # file 1 holds 3 hands, 2 wanted
    with pytest.raises(ConfigError, match=r"selfplay-00001.log: a run of 3 hands, 3 a file, seed 0 writes 1 file, "
                                          "not this one"):
        write_selfplay_logs(tmp_path, 3, hands_per_file=3)
    assert _state(tmp_path) == before
    write_selfplay_logs(tmp_path, 6, hands_per_file=3)   # the same hands: reused as they are
    assert _state(tmp_path) == before
    write_selfplay_logs(tmp_path, 10, hands_per_file=3)  # more: the files there are whole ones of this run
    assert _hands(tmp_path) == 10 and {n: b for n, b in _state(tmp_path).items() if n in before} == before


def test_bench_scale_build_refuses_logs_made_for_other_hands(tmp_path: Path) -> None:
    require_native()
    require_module("psutil")
    logs = tmp_path / "logs"
    write_selfplay_logs(logs, 20)
    before = _state(logs)
    p = subprocess.run([sys.executable, str(REPO / "bench" / "bench_scale_build.py"), "--hands", "10", "--modes",
                        "local", "--logs", str(logs)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert (p.returncode, p.stdout) == (1, ""), (p.stdout, p.stderr)
    assert p.stderr.strip().splitlines() == [f"error: {logs / RUN_FILE}: the logs here are of another run (20 hands, "
                                             "5000 a file, seed 0), not of 10 hands, 5000 a file, seed 0: give an "
                                             "empty folder"]
    assert _state(logs) == before
