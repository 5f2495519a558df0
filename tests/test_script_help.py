"""``--help`` of every script of bench/ and every recipe of casebases/ that parses options:
it exits 0 at once (no work is done) and its description is a whole sentence. Most built it
from the first line of the docstring, so ``python bench/bench_adaptive.py --help`` showed a
description cut mid-sentence; they use :func:`casebases.description` now (the experiment
scripts are checked in ``tests/test_experiment_scripts.py``)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Every script that builds an argparse parser (none left out: the test below counts them).
SCRIPTS = sorted(p.relative_to(REPO) for p in [*REPO.glob("bench/*.py"), *REPO.glob("casebases/*.py")]
                 if "ArgumentParser(" in p.read_text(encoding="utf-8"))


def test_every_script_with_options_is_checked() -> None:
    assert len(SCRIPTS) >= 40, SCRIPTS
    assert {Path("bench/bench_adaptive.py"), Path("casebases/build_expert.py"), Path("bench/table1_extremes.py")} <= set(SCRIPTS)


def help_of(script: Path) -> subprocess.CompletedProcess:
    """``--help`` as the docs run it: bench/ by path, the recipes as modules."""
    command = ([str(script)] if script.parts[0] == "bench"
               else ["-m", ".".join(script.with_suffix("").parts)])
    return subprocess.run([sys.executable, *command, "--help"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("script", SCRIPTS, ids=str)
def test_help_describes_the_script_in_a_whole_sentence(script: Path) -> None:
    p = help_of(script)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    paragraphs = [" ".join(block.split()) for block in p.stdout.split("\n\n")]
    assert paragraphs[0].startswith("usage:"), p.stdout
    text = paragraphs[1]  # argparse prints the description right after the usage
    assert not text.startswith(("options:", "optional arguments:", "positional arguments:")), p.stdout
    assert text.endswith((".", "?", "!")), text  # (bench_serve.py starts with the command, cbr serve)
    assert "``" not in text, text
