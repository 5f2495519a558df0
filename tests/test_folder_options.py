"""A folder a script writes into, other than an experiment's ``--out``, follows ``--out``'s rule
(``out_path("folder")`` of ``experiments/common.py``): it is made if missing, but only when its
parent exists; a missing parent is one usage error (exit 2) and nothing is made. Before,
``bench/bench_pcs.py train --out``, ``experiments/raise_frontier.py --work`` and
``experiments/cfr_strategies.py --cache`` (and ``cfr_table2.py``'s, the same option) made the whole
tree (``mkdir(parents=True)``): a slip such as ``--out /nonexistent/a/b`` made ``/nonexistent/a``.
Each run below is one that would finish in seconds if the option were taken, so on the old code
the test fails on what it made, not on a timeout."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_native

REPO = Path(__file__).resolve().parents[1]

#: (script, the arguments before the folder option, the option, the rest; program name argparse says)
CASES = [
    ("bench/bench_pcs.py", ["train", "--sampling", "external", "--cpu-minutes", "0.001"], "--out", [],
     "bench_pcs.py train"),
    ("experiments/raise_frontier.py", ["--p", "0", "--iterations", "200", "--model-hands", "2", "--hands", "2"],
     "--work", ["--out", "{tmp}/f.json"], "raise_frontier.py"),
    ("experiments/cfr_strategies.py", ["--quick"], "--cache", [], "cfr_strategies.py"),
    ("experiments/cfr_table2.py", ["--quick", "--no-match"], "--cache", ["--out", "{tmp}/t.json"], "cfr_table2.py"),
]


@pytest.mark.parametrize("script, before, option, after, prog", CASES, ids=[c[0] for c in CASES])
def test_a_folder_under_a_missing_folder_is_a_usage_error_and_nothing_is_made(
        script: str, before: list[str], option: str, after: list[str], prog: str, tmp_path: Path) -> None:
    require_native()  # with the extensions: the script would start its work if the path passed
    folder = tmp_path / "missing" / "a" / "b"
    argv = [*before, option, str(folder), *(a.format(tmp=tmp_path) for a in after)]
    p = subprocess.run([sys.executable, str(REPO / script), *argv], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    assert (p.returncode, p.stdout) == (2, ""), (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip().splitlines()[-1] == (f"{prog}: error: argument {option}: {folder}: the folder "
                                                 f"{folder.parent} does not exist (make it first)")
    assert list(tmp_path.iterdir()) == []


def test_a_file_is_no_work_folder(tmp_path: Path) -> None:
    """``raise_frontier.py --work FILE``: the shared type's line (the script's own check said it
    in other words; it is gone)."""
    require_native()
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    p = subprocess.run([sys.executable, str(REPO / "experiments" / "raise_frontier.py"), "--work", str(a_file)],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (p.returncode, p.stdout) == (2, ""), p.stderr
    assert p.stderr.strip().splitlines()[-1] == (f"raise_frontier.py: error: argument --work: {a_file} is a file; "
                                                 "give a folder")


def test_bench_pcs_train_makes_a_missing_out_folder_whose_parent_exists(tmp_path: Path) -> None:
    require_native()
    out = tmp_path / "pcs"
    p = subprocess.run([sys.executable, str(REPO / "bench" / "bench_pcs.py"), "train", "--sampling", "external",
                        "--cpu-minutes", "0.001", "--out", str(out)], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    run = json.loads((out / "run.json").read_text())
    assert run["sampling"] == "external" and run["iterations"] > 0
    assert sorted(f.name for f in out.iterdir()) == ["abstraction.npz", "run.json", "strategy.npz"]
