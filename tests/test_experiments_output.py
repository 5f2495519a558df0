"""A first-time user who tries an experiment script must not silently change tracked files:
without ``--out`` every script writes to ``experiments/scratch/`` (ignored by git) and says
so; the committed results under ``experiments/results/`` are written only when ``--out``
names them (docs/experiments.md)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in REPO.glob("experiments/*.py") if p.name != "common.py")
#: what built a default path into the committed folder
INTO_RESULTS = re.compile(r'RESULTS\s*/|/\s*"results"|RESULTS\.mkdir|default=str\(RESULTS\)|RESULTS\)')


def test_the_scratch_folder_is_ignored_and_the_results_are_not() -> None:
    ignored = subprocess.run(["git", "check-ignore", "-q", "experiments/scratch/x.json"], cwd=REPO)
    assert ignored.returncode == 0
    tracked = subprocess.run(["git", "ls-files", "experiments/results"], cwd=REPO, capture_output=True, text=True)
    assert tracked.stdout.strip()  # the committed results stay tracked


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_no_script_defaults_to_the_committed_results(script: Path) -> None:
    """No default path into experiments/results/ is left in a script's code (only reads, marked
    ``read only``): its outputs go through ``out_file`` / ``out_folder``."""
    code = [line for line in script.read_text().splitlines()
            if INTO_RESULTS.search(line) and "read only" not in line and not line.lstrip().startswith("#")]
    assert code == [], code


def test_a_script_without_out_writes_to_scratch_and_says_where(tmp_path: Path) -> None:
    """tune_ehs.py without --out rewrote the committed experiments/results/ehs_tuning.json. Run
    from a copy of experiments/ (the package is installed, so the copy imports it) whose
    committed file holds a sentinel."""
    folder = tmp_path / "experiments"
    (folder / "results").mkdir(parents=True)
    for name in ("common.py", "tune_ehs.py"):
        shutil.copy(REPO / "experiments" / name, folder / name)
    committed = folder / "results" / "ehs_tuning.json"
    committed.write_text('{"sentinel": true}\n')
    args = [sys.executable, str(folder / "tune_ehs.py"), "--hands", "10", "--only", "raise 0.7"]
    p = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert committed.read_text() == '{"sentinel": true}\n'
    scratch = folder / "scratch" / "ehs_tuning.json"
    assert list(json.loads(scratch.read_text())) == ["raise 0.7"]
    assert "no --out: writing experiments/scratch/ehs_tuning.json" in p.stderr, p.stderr
    p = subprocess.run([*args, "--out", str(committed)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert set(json.loads(committed.read_text())) == {"sentinel", "raise 0.7"}  # --out names it: written
    assert "no --out" not in p.stderr
