"""Without FastAPI the server's tests skip with the reason, and fail with it under
``CBR_STRICT=1`` (the pattern of ``tests/test_strict.py``): a pytest child where ``fastapi``
cannot be imported."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

FILES = ("tests/serve/test_api.py", "tests/serve/test_http.py")


def _run_without_fastapi(tmp_path: Path, strict: bool) -> subprocess.CompletedProcess[str]:
    shadow = tmp_path / "shadow"
    shadow.mkdir(exist_ok=True)
    (shadow / "fastapi.py").write_text("raise ImportError('fastapi is hidden by the test')\n")
    env = {k: v for k, v in os.environ.items() if k != "CBR_STRICT"}
    env.update(PYTHONPATH=os.pathsep.join([str(shadow), str(REPO)]), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    if strict:
        env["CBR_STRICT"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfsE", "-p", "no:cacheprovider", "-o", "addopts=",
                           *FILES], cwd=REPO, env=env, text=True, capture_output=True, timeout=300)


def test_without_fastapi_the_server_tests_skip_with_the_reason(tmp_path: Path) -> None:
    run = _run_without_fastapi(tmp_path, strict=False)
    out = run.stdout
    # 5: pytest's "no tests collected", as both files skip whole
    assert run.returncode in (0, 5), out[-3000:] + run.stderr[-2000:]
    assert "2 skipped" in out.strip().splitlines()[-1] and "failed" not in out.strip().splitlines()[-1]
    assert "test dependency 'fastapi' is not installed" in out


def test_under_the_strict_switch_they_fail_with_the_reason(tmp_path: Path) -> None:
    run = _run_without_fastapi(tmp_path, strict=True)
    out = run.stdout
    assert run.returncode != 0, out[-3000:]
    assert "CBR_STRICT=1 and test dependency 'fastapi' is not installed" in out
    assert "skipped" not in out.strip().splitlines()[-1]
