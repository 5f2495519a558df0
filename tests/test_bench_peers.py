"""The benchmarks compare with peer libraries of the test extra (PokerKit, eval7): without them
``--help`` still works, and a run that needs one stops with one line naming the test extra (as a
run without the C extensions does: ``tests/test_scripts_native.py``). The peers are hidden for
real: a ``sitecustomize`` on ``PYTHONPATH`` makes importing them fail."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = sorted(p for p in REPO.glob("bench/*.py") if p.name not in ("native_guard.py",))
HIDE = '''import sys

class _Missing:
    """Import of the peer libraries fails, as when the test extra is not installed."""
    HIDDEN = ("pokerkit", "eval7")

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.HIDDEN:
            raise ImportError(f"No module named {name!r} (hidden for the test)")
        return None

sys.meta_path.insert(0, _Missing())
'''


@pytest.fixture(scope="module")
def no_peers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment whose Python cannot import PokerKit nor eval7."""
    fake = tmp_path_factory.mktemp("no-peers")
    (fake / "sitecustomize.py").write_text(HIDE)
    return {**os.environ, "PYTHONPATH": str(fake), "OMP_NUM_THREADS": "1"}


def run(script: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=300)


def test_the_hiding_works(no_peers: dict[str, str]) -> None:
    p = subprocess.run([sys.executable, "-c", "import pokerkit"], capture_output=True, text=True, env=no_peers)
    assert p.returncode == 1 and "hidden for the test" in p.stderr, p.stderr


@pytest.mark.parametrize("script", BENCH, ids=lambda p: p.name)
def test_help_works_without_the_peers(script: Path, no_peers: dict[str, str]) -> None:
    """``python3 bench/bench_state.py --help`` (named in docs/logs.md and docs/benchmarks.md) was a
    ModuleNotFoundError traceback without PokerKit."""
    p = run(script, no_peers, "--help")
    assert p.returncode == 0 and "usage:" in p.stdout.lower() and "Traceback" not in p.stderr, p.stderr


def test_bench_state_without_pokerkit_is_one_line_naming_the_test_extra(no_peers: dict[str, str]) -> None:
    p = run(REPO / "bench" / "bench_state.py", no_peers, "--hands", "10", "--players", "2")
    assert p.returncode == 1, p.stderr
    assert p.stderr.strip().splitlines() == [
        'error: bench_state.py compares with PokerKit, which is not installed: it comes with the test extra, '
        'pip install -e ".[test]"'], p.stderr
