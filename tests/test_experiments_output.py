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


def _script(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "experiments" / name), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_bot_table_says_which_file_it_reused_and_how_to_measure_afresh(tmp_path: Path) -> None:
    """bot_table.py took a bot's LBR from the committed exploit table, and kept the cells of its
    results file, without a word: the table looked measured by the run. Now a stdout line names the
    file reused and ``--redo``, which measures afresh (the committed LBRs too)."""
    out = tmp_path / "out"
    args = ["--bots", "hs", "--skip", "matches,time", "--out", str(out), "--workers", "1"]
    p = _script("bot_table.py", *args, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == ("reused the LBR of hs from the committed experiments/results/"
                                        "exploit-table-seed2.json; --redo measures it afresh"), p.stdout
    committed = json.loads((REPO / "experiments" / "results" / "exploit-table-seed2.json").read_text())["rows"]["hs"]
    row = json.loads((out / "bot-table-seed2.json").read_text())["rows"]["hs"]["lbr"]
    assert (row["mbb"], row["hands"], row["from"]) == (committed["lbr"]["mbb_per_game"], committed["lbr"]["hands"],
                                                        "exploit-table-seed2.json")
    p = _script("bot_table.py", *args, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == (f"reused 1 cell of {out / 'bot-table-seed2.json'}, measured by an earlier "
                                        "run; --redo measures them afresh"), p.stdout
    p = _script("bot_table.py", *args, "--redo", "--lbr-hands", "40", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "reused" not in p.stdout and p.stdout.startswith("| bot |"), p.stdout
    row = json.loads((out / "bot-table-seed2.json").read_text())["rows"]["hs"]["lbr"]
    assert "from" not in row and row["hands"] <= 40          # measured by this run


def test_teacher_says_which_file_it_reused_and_how_to_measure_afresh(tmp_path: Path) -> None:
    """teacher.py showed the LBR and matches its results file held, for the parts skipped, as if
    measured by the run. Now a stdout line names what was reused from which file, and ``--redo``."""
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(REPO / "experiments" / "results" / "teacher-seed3.json", out / "teacher-seed3.json")
    held = json.loads((out / "teacher-seed3.json").read_text())
    p = _script("teacher.py", "--skip", "lbr,matches", "--out", str(out), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == (f"reused the LBR, the {len(held['matches'])} matches against {', '.join(held['matches'])} from "
                        f"{out / 'teacher-seed3.json'}, measured by an earlier run; --redo measures them afresh"), lines
    assert len(lines) == 1 + 2 + 1 + len(held["matches"])  # the line, the table's head, the LBR, a row a match
    p = _script("teacher.py", "--skip", "lbr,matches", "--out", str(out), "--redo", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["| measure | result (95% CI) |", "|---|---|"]


@pytest.mark.parametrize("bot", ["cbr", "cbr:preset=casper", "hs"])
def test_bot_table_times_every_kind_of_bot(tmp_path: Path, bot: str) -> None:
    """bot_table.py timed a bot by wrapping its ``act``; the table calls ``decide``, which the
    adaptive and case-based bots override, so plain ``cbr`` recorded no decision and the
    script crashed on an empty percentile. Every kind of bot now has its decisions timed."""
    out = tmp_path / "out"
    p = _script("bot_table.py", "--bots", bot, "--skip", "matches,lbr", "--time-hands", "6", "--out", str(out),
                "--workers", "1", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    t = json.loads((out / "bot-table-seed2.json").read_text())["rows"][bot]["time"]
    assert t["decisions"] >= 6 and 0 < t["mean_ms"] <= t["p99_ms"], t
