"""CI cannot pass with whole areas skipped.

Without ``CBR_STRICT`` a missing piece (../shared, eval7, pokerkit, hypothesis) skips only the
tests that need it, with the reason; with ``CBR_STRICT=1`` (set by ``.ci/run``) those tests
fail with the same reason. Tests that do not use a test dependency do not depend on it.
``.ci/run`` runs README's command with the switches and fails on "no tests" too.
"""
from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

HIDDEN = ("eval7", "pokerkit", "hypothesis")
# files that use eval7 or hypothesis only in some of their tests, and one that needs pokerkit throughout
FILES = ("tests/game/test_state.py", "tests/logs/test_replay.py", "tests/features/test_features.py", "tests/logs/test_parser_irc.py")
SWITCHES = ("CBR_STRICT", "CBR_SLOW", "CBR_RELIABILITY", "CBR_RELIABILITY_ROUNDS")


def _run_without_test_dependencies(tmp_path: Path, files: tuple[str, ...], strict: bool) -> subprocess.CompletedProcess[str]:
    """pytest over ``files`` in a child where eval7, pokerkit and hypothesis cannot be imported
    and ../shared is missing (``CBR_SHARED`` points at an empty place)."""
    shadow = tmp_path / "shadow"
    shadow.mkdir(exist_ok=True)
    for name in HIDDEN:
        (shadow / f"{name}.py").write_text(f"raise ImportError('{name} is hidden by tests/test_strict.py')\n")
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    env.update(PYTHONPATH=os.pathsep.join([str(shadow), str(REPO)]), CBR_SHARED=str(tmp_path / "no-shared"),
               PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    if strict:
        env["CBR_STRICT"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider", "-o", "addopts=",
                           *files], cwd=REPO, env=env, text=True, capture_output=True, timeout=600)


def _count(word: str, output: str) -> int:
    found = re.search(rf"(\d+) {word}", output.strip().splitlines()[-1])
    return int(found.group(1)) if found else 0


def test_missing_test_dependencies_skip_only_their_tests_with_the_reason(tmp_path: Path) -> None:
    run = _run_without_test_dependencies(tmp_path, FILES + ("tests/game/test_pokerkit_crosscheck.py",), strict=False)
    out = run.stdout
    assert run.returncode == 0, out[-4000:] + run.stderr[-2000:]
    assert _count("passed", out) >= 50, out[-2000:]          # the rules engine and hand-computed features still run
    assert _count("skipped", out) >= 20 and _count("failed", out) == 0
    assert "test dependency 'eval7' is not installed" in out
    assert "test dependency 'hypothesis' is not installed" in out
    assert "test dependency 'pokerkit' is not installed" in out   # the cross-check file, skipped as a whole
    assert "real logs not available" in out


def test_under_the_strict_switch_the_same_tests_fail_with_the_same_reason(tmp_path: Path) -> None:
    run = _run_without_test_dependencies(tmp_path, FILES, strict=True)
    out = run.stdout
    assert run.returncode == 1, out[-4000:] + run.stderr[-2000:]
    assert _count("skipped", out) == 0 and _count("failed", out) >= 20, out[-2000:]
    assert _count("passed", out) >= 50
    for reason in ("test dependency 'eval7' is not installed", "test dependency 'hypothesis' is not installed",
                   "real logs not available"):
        assert f"CBR_STRICT=1 and {reason}" in out, reason


def test_without_shared_readme_examples_that_need_it_skip_and_the_others_run(tmp_path: Path) -> None:
    """A plain clone: README's build examples (../shared) and the queries of the case base they
    build skip with the reason; the examples that need nothing else still run and pass."""
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    env.update(CBR_SHARED=str(tmp_path / "no-shared"), PYTHONPATH=str(REPO))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-o", "addopts=",
                          "tests/test_docs_examples.py", "-k", "[README.md:"], cwd=REPO, env=env, text=True,
                         capture_output=True, timeout=600)
    out = run.stdout
    assert run.returncode == 0, out[-4000:] + run.stderr[-2000:]
    from tests.test_docs_examples import README_EXAMPLES, needs_shared

    shared = [e for e in README_EXAMPLES if needs_shared(e, README_EXAMPLES)]
    assert shared, "README shows no example that reads ../shared: this test would test nothing"
    assert _count("skipped", out) == len(shared), out[-2000:]
    assert _count("passed", out) >= len(README_EXAMPLES) - len(shared), out[-2000:]
    for example in shared:
        assert f"({example.where} reads ../shared or what was built from it)" in out, example


@pytest.mark.parametrize("strict", [False, True])
def test_the_kernels_alone_need_a_c_compiler_and_say_so(tmp_path: Path, strict: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    env.update(PATH=str(tmp_path), PYTHONPATH=str(REPO), **({"CBR_STRICT": "1"} if strict else {}))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider", "-o", "addopts=",
                          "tests/evaluator/test_native_kernels.py", "-k", "compile_and_run_without_python"],
                         cwd=REPO, env=env, text=True, capture_output=True, timeout=300)
    summary = run.stdout.strip().splitlines()[-1]
    assert ("1 failed" if strict else "1 skipped") in summary, run.stdout[-3000:]
    assert "no cc or gcc on PATH" in run.stdout


def test_no_test_skips_on_the_project_s_own_modules() -> None:
    """importorskip would turn an import regression of our own code into a skip: none is left,
    and no "not written yet" / "not built yet" skip either."""
    offenders = []
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        if path.name == Path(__file__).name:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"importorskip\(|not written yet|not built yet|until the \w+ lands", line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert offenders == []


# ---- .ci/run ------------------------------------------------------------------------------
def _ci_copy(tmp_path: Path, command: str) -> tuple[Path, dict[str, str]]:
    """A copy of .ci/run beside a README whose Quickstart test command is ``command``, and a PATH
    whose ``python3`` only pretends to make the venv (the script, not pip, is under test)."""
    root = tmp_path / "repo"
    (root / ".ci").mkdir(parents=True)
    script = root / ".ci" / "run"
    script.write_text((REPO / ".ci" / "run").read_text())
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (root / "README.md").write_text(f"# x\n\n```bash\n# 2. tests\n{command}\n```\n")
    (root / "pyproject.toml").write_text('test = [\n    "ruff==0.0.1",\n]\n')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python3"
    # `python3 -m venv DIR` makes DIR/bin/pip (which does nothing) and DIR/bin/ruff, which
    # exits with the code in the file `ruff-exit` beside the repo (0 when there is none)
    fake.write_text(f"""#!/bin/sh
if [ "$1" = -m ] && [ "$2" = venv ] && [ "$3" != .venv ]; then
    mkdir -p "$3/bin"
    printf '#!/bin/sh\\nexit 0\\n' > "$3/bin/pip"
    printf '#!/bin/sh\\n[ -f {tmp_path}/ruff-exit ] && exit $(cat {tmp_path}/ruff-exit)\\nexit 0\\n' > "$3/bin/ruff"
    chmod +x "$3/bin/pip" "$3/bin/ruff"
fi
exit 0
""")
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES + ("CBR_REQUIRE_NATIVE",)}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["CBR_CI_NO_INSTALL"] = "1"  # no apt-get of the browser from a test
    return root, env


def test_ci_runs_readme_s_command_with_every_switch(tmp_path: Path) -> None:
    root, env = _ci_copy(tmp_path, "python3 -m venv .venv && env > seen.txt && exit 3 && .venv/bin/python -m pytest -q")
    run = subprocess.run([str(root / ".ci" / "run")], cwd=tmp_path, env=env, text=True, capture_output=True, timeout=60)
    assert run.returncode == 3, run.stderr
    seen = (root / "seen.txt").read_text().splitlines()
    assert {"CBR_STRICT=1", "CBR_SLOW=1", "CBR_REQUIRE_NATIVE=1"} <= set(seen)
    assert "README's test command exited 3" in run.stderr


def test_ci_fails_when_pytest_collects_no_tests(tmp_path: Path) -> None:
    root, env = _ci_copy(tmp_path, "python3 -m venv .venv && exit 5 && .venv/bin/python -m pytest -q")
    run = subprocess.run([str(root / ".ci" / "run")], cwd=tmp_path, env=env, text=True, capture_output=True, timeout=60)
    assert run.returncode == 1 and "collected no tests (exit 5)" in run.stderr, run.stderr


def test_ci_lints_before_the_tests_and_fails_on_a_finding(tmp_path: Path) -> None:
    root, env = _ci_copy(tmp_path, "python3 -m venv .venv && touch ran-tests && .venv/bin/python -m pytest -q")
    (tmp_path / "ruff-exit").write_text("1")
    run = subprocess.run([str(root / ".ci" / "run")], cwd=tmp_path, env=env, text=True, capture_output=True, timeout=60)
    assert run.returncode == 1 and "FAILED: ruff check" in run.stderr, run.stderr
    assert "ruff==0.0.1" in run.stderr and not (root / "ran-tests").exists()


def test_ci_fails_when_pyproject_pins_no_ruff(tmp_path: Path) -> None:
    root, env = _ci_copy(tmp_path, "python3 -m venv .venv && true && .venv/bin/python -m pytest -q")
    (root / "pyproject.toml").write_text("[project]\n")
    run = subprocess.run([str(root / ".ci" / "run")], cwd=tmp_path, env=env, text=True, capture_output=True, timeout=60)
    assert run.returncode == 1 and "pins no ruff" in run.stderr, run.stderr


def test_ci_fails_when_readme_has_no_test_command(tmp_path: Path) -> None:
    root, env = _ci_copy(tmp_path, "echo nothing to see")
    run = subprocess.run([str(root / ".ci" / "run")], cwd=tmp_path, env=env, text=True, capture_output=True, timeout=60)
    assert run.returncode == 1 and "no Quickstart test command" in run.stderr


def test_ci_fails_when_the_c_extension_is_missing_after_a_green_run(tmp_path: Path) -> None:
    """Even if every test passed, a venv whose evaluator is not native fails CI."""
    root, env = _ci_copy(tmp_path, "python3 -m venv .venv && true && .venv/bin/python -m pytest -q")
    venv_python = root / ".venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    # an interpreter where evaluator_ext has no native kernels: the reference only
    venv_python.write_text("#!/bin/sh\n[ \"$1\" = -m ] && exit 0\nexec env CBR_REQUIRE_NATIVE=0 PYTHONPATH=%s %s -c "
                           "'import sys; sys.modules[\"evaluator_ext._native\"] = None; exec(sys.argv[1])' \"$2\"\n"
                           % (REPO, sys.executable))
    venv_python.chmod(0o755)
    run = subprocess.run([str(root / ".ci" / "run")], cwd=tmp_path, env=env, text=True, capture_output=True, timeout=60)
    assert run.returncode == 1 and "C extension did not build or load" in run.stderr, run.stderr


def _ignore_sigint() -> None:
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_a_run_started_in_the_background_passes_the_ctrl_c_tests() -> None:
    """``pytest ... &`` from a script starts with SIGINT ignored (as here, by ``preexec_fn``):
    the Ctrl-C tests must still see their Ctrl-C, in this process and in the children they start."""
    tests = ["tests/store/test_durable_writes.py::test_a_ctrl_c_during_a_savez_is_delivered_after_the_whole_write",
             "tests/serve/test_http.py::test_a_second_ctrl_c_cuts_the_requests_in_flight_cleanly"]
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *tests],
                         cwd=REPO, env=env, text=True, capture_output=True, timeout=600, preexec_fn=_ignore_sigint)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "2 passed" in run.stdout
