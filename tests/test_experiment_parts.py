"""The experiment scripts' part options: ``tune_ehs.py --only``, ``bot_table.py --skip`` and
``teacher.py --skip`` with a name they do not know are a usage error (exit 2: the usage lines,
then one error line naming the valid ones) before anything runs or is written; they accepted it silently (``tune_ehs.py --only
nosuch`` announced the file it would write, wrote nothing and exited 0)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "experiments" / script), *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})


@pytest.mark.parametrize("script, option, value, valid", [
    ("tune_ehs.py", "--only", "nosuch", "'raise 0.6, conservative', 'raise 0.6, conservative, reraise 0'"),
    ("tune_ehs.py", "--only", "raise 0.7,nosuch", "'seed (waterloo defaults)', 'conservative bluffing'"),
    ("bot_table.py", "--skip", "nosuch", "matches, lbr, time"),
    ("bot_table.py", "--skip", "lbr,nosuch", "matches, lbr, time"),
    ("teacher.py", "--skip", "nosuch", "snapshots, lbr, matches"),
])
def test_an_unknown_part_is_a_usage_error(tmp_path: Path, script: str, option: str, value: str,
                                                   valid: str) -> None:
    out = tmp_path / "out"
    p = run(script, option, value, "--out", str(out), cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()   # argparse's usage lines, then the error: as every usage error
    assert lines[0].startswith("usage: ") and "Traceback" not in p.stderr, p.stderr
    assert f"error: argument {option}: " in lines[-1] and "unknown" in lines[-1] and "nosuch" in lines[-1], p.stderr
    assert valid in lines[-1], lines[-1]
    assert not out.exists() and p.stdout == ""


def test_tune_ehs_only_takes_names_holding_commas() -> None:
    """A variant name holds commas (``raise 0.6, conservative``): ``--only`` split it at them and
    ran ``raise 0.6`` instead."""
    sys.path.insert(0, str(REPO / "experiments"))
    try:
        from tune_ehs import variants_named
    finally:
        sys.path.remove(str(REPO / "experiments"))
    assert variants_named("raise 0.6, conservative") == ["raise 0.6, conservative"]
    assert variants_named("raise 0.7,raise 0.6, conservative, reraise 0.2") == [
        "raise 0.7", "raise 0.6, conservative, reraise 0.2"]
    assert variants_named("") == []
