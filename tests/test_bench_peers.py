"""The benchmarks compare with peer libraries of the test extra (PokerKit, eval7), and the
serve benchmarks talk to ``cbr serve`` (the serve extra) with httpx (the test extra): without them
``--help`` still works, and a run that needs one stops with one line naming the extra (as a run
without the C extensions does: ``tests/test_scripts_native.py``). The modules are hidden for
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
    """Import of the named modules fails, as when their extra is not installed."""
    HIDDEN = MODULES

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.HIDDEN:
            raise ImportError(f"No module named {name!r} (hidden for the test)")
        return None

sys.meta_path.insert(0, _Missing())
'''


def hiding(tmp_path_factory: pytest.TempPathFactory, *modules: str) -> dict[str, str]:
    """An environment whose Python cannot import ``modules`` (nor their submodules)."""
    fake = tmp_path_factory.mktemp("hidden")
    (fake / "sitecustomize.py").write_text(HIDE.replace("MODULES", repr(modules)))
    return {**os.environ, "PYTHONPATH": str(fake), "OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def no_peers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment without the test extra's peers and client: PokerKit, eval7, httpx."""
    return hiding(tmp_path_factory, "pokerkit", "eval7", "httpx")


@pytest.fixture(scope="module")
def no_serve_extra(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment without the serve extra (FastAPI, uvicorn)."""
    return hiding(tmp_path_factory, "fastapi", "uvicorn")


def run(script: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=300)


@pytest.mark.parametrize("module", ["pokerkit", "httpx", "fastapi"])
def test_the_hiding_works(module: str, no_peers: dict[str, str], no_serve_extra: dict[str, str]) -> None:
    env = no_serve_extra if module == "fastapi" else no_peers
    p = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, env=env)
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


#: The serve benchmarks, with short runs: they stopped with ModuleNotFoundError tracebacks.
SERVE = [("load_serve", ["--clients", "1", "--requests", "5"]), ("bench_serve", ["--seconds", "1", "--clients", "1"])]


@pytest.mark.parametrize("name, args", SERVE, ids=[n for n, _ in SERVE])
def test_serve_benchmark_without_httpx_is_one_line_naming_the_test_extra(name: str, args: list[str],
                                                                         no_peers: dict[str, str],
                                                                         tmp_path: Path) -> None:
    """httpx (their client) comes with the test extra, not the serve extra (the server does not
    need it): the line says so, before any work (nothing printed, no server started)."""
    p = subprocess.run([sys.executable, str(REPO / "bench" / f"{name}.py"), *args], capture_output=True,
                       text=True, env=no_peers, cwd=tmp_path, timeout=120)
    assert p.returncode == 1 and p.stdout == "", (p.stdout, p.stderr)
    assert p.stderr.strip().splitlines() == [
        f'error: {name}.py sends its HTTP requests with httpx, which is not installed: it comes with the test '
        'extra, pip install -e ".[test]"'], p.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name, args", SERVE, ids=[n for n, _ in SERVE])
def test_serve_benchmark_without_the_serve_extra_is_one_line_naming_it(name: str, args: list[str],
                                                                       no_serve_extra: dict[str, str],
                                                                       tmp_path: Path) -> None:
    p = subprocess.run([sys.executable, str(REPO / "bench" / f"{name}.py"), *args], capture_output=True,
                       text=True, env=no_serve_extra, cwd=tmp_path, timeout=120)
    assert p.returncode == 1 and p.stdout == "", (p.stdout, p.stderr)
    assert p.stderr.strip().splitlines() == [
        f'error: {name}.py starts cbr serve, which needs fastapi, which is not installed: it comes with '
        'the serve extra, pip install -e ".[serve]"'], p.stderr
    assert list(tmp_path.iterdir()) == []
