"""The code passes ruff (pyflakes: names defined twice, unused imports and names, undefined
names; import order), configured in pyproject.toml. `.ci/run` also runs it before the tests."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, require_module


def test_ruff_finds_nothing() -> None:
    require_module("ruff")
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_catches_a_name_defined_twice(tmp_path) -> None:
    """The rule that would have caught cli.py's second copy of its own functions is on."""
    require_module("ruff")
    (tmp_path / "twice.py").write_text("def f():\n    return 1\n\n\ndef f():\n    return 2\n")
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--config", str(REPO / "pyproject.toml"),
                        str(tmp_path / "twice.py")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "F811" in r.stdout, r.stdout + r.stderr


def test_tests_that_interrupt_a_child_reset_its_sigint() -> None:
    """A test that sends SIGINT to a process it started must start it with
    ``preexec_fn=default_sigint``: under ``nohup pytest &`` children inherit an ignored SIGINT and
    would never see the Ctrl-C (the suite must pass however it is started)."""
    tests = Path(__file__).resolve().parent
    offenders = []
    for path in sorted(tests.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "SIGINT" in text and "Popen(" in text and "preexec_fn=default_sigint" not in text:
            offenders.append(str(path.relative_to(tests)))
    assert offenders == []
