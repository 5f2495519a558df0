"""Shared fixtures and the one helper for what a test needs from outside the repo.

Real logs are read from ../shared/data (beside the clone, as in CI); test dependencies
(eval7, pokerkit, hypothesis) come from the ``test`` extras; the native-kernel test needs a
C compiler. When one of them is missing, the test that needs it **skips with the reason**,
except under ``CBR_STRICT=1`` (set by ``.ci/run``), where it **fails with the same reason**:
CI cannot pass with whole areas skipped.

Use ``shared_path(...)`` for ../shared, ``require_module("eval7")`` (or a module-level
``eval7 = lazy_module("eval7")``, resolved only when a test touches it) for test
dependencies, ``require_program("cc", "gcc")`` for tools; never ``pytest.importorskip``.
Property tests import ``given, settings, st, HealthCheck`` from here: hypothesis's own when it
is installed; without it only the ``@given`` tests skip (fail under the switch), not their file.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import os
import shutil
import signal
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable, NoReturn

import pytest

STRICT = os.environ.get("CBR_STRICT") == "1"
SLOW = os.environ.get("CBR_SLOW") == "1"

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("CBR_SHARED", REPO.parent / "shared"))
LOGS = SHARED / "data" / "logs"
REFERENCE = SHARED / "data" / "reference"


def lines_until(stream: Iterable[str], prefix: str) -> list[str]:
    """The lines a child writes up to and with the first that starts with ``prefix`` (it is
    then at that step); AssertionError with all of them when it ends without one."""
    lines = []
    for line in stream:
        lines.append(line)
        if line.startswith(prefix):
            return lines
    raise AssertionError("".join(lines))


def default_sigint() -> None:
    """``preexec_fn`` of a child a test interrupts with SIGINT: Ctrl-C's default action again.

    A background job (``nohup python -m pytest ... &``) starts with SIGINT ignored, every child
    inherits that, and Python leaves an ignored SIGINT ignored: the child would never see the
    test's Ctrl-C. Resetting it before ``exec`` makes Python install its KeyboardInterrupt
    handler as in a foreground run.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_on_a_terminal(args: list[str], *, stop: Callable[[str], bool] | None = None,
                      wait: float = 0.0, module: str | None = None,
                      sig: int = signal.SIGINT) -> tuple[int, str, str]:
    """A real ``cbr ARGS`` process (``python -m MODULE ARGS`` with ``module``) whose stderr is a
    pseudo-terminal (so it draws its progress bars); with ``stop``, ``sig`` (SIGINT) once what
    the terminal shows satisfies it (and ``wait`` seconds more). Returns (exit code, stdout,
    what the terminal showed, ANSI codes removed)."""
    import re
    import select
    import subprocess
    import sys
    import time

    pty = __import__("pty")  # POSIX only, as the rest of the suite
    ansi = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    code = "import sys; from cli import app; sys.argv[0] = 'cbr'; app()"
    head = ["-m", module] if module else ["-c", code]
    proc = subprocess.Popen([sys.executable, *head, *args], cwd=REPO, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=slave, env=env, preexec_fn=default_sigint)
    os.close(slave)
    shown = b""

    def read(timeout: float) -> bool:
        nonlocal shown
        if select.select([master], [], [], timeout)[0]:
            try:
                data = os.read(master, 65536)
            except OSError:
                return False
            shown += data
            return bool(data)
        return proc.poll() is None

    try:
        if stop is not None:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and read(0.05):
                if stop(ansi.sub(b"", shown).decode(errors="replace")):
                    break
            end = time.monotonic() + wait
            while time.monotonic() < end and read(0.05):
                pass
            proc.send_signal(sig)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and read(0.2):
            pass
        out = proc.stdout.read().decode() if proc.stdout else ""
        returncode = proc.wait(timeout=60)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return returncode, out, ansi.sub(b"", shown).decode(errors="replace")


def missing(reason: str, *, module_level: bool = False) -> NoReturn:
    """Skip the calling test with ``reason``; under ``CBR_STRICT=1`` fail it with the same reason.

    ``module_level=True`` is for a whole test file that cannot even be imported without
    the missing piece (it skips the file; under the switch the file fails to collect).
    """
    if STRICT:
        pytest.fail(f"CBR_STRICT=1 and {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=module_level)


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data/logs; skips (or fails, under CBR_STRICT=1) when it is missing."""
    path = LOGS.joinpath(*parts)
    if not path.exists():
        missing(f"real logs not available: {path} is missing (they live in ../shared beside the clone)")
    return path


def require_module(name: str, *, module_level: bool = False) -> ModuleType:
    """Import the test dependency ``name``; skip (or fail, under CBR_STRICT=1) when it is missing.

    >>> require_module("json").dumps([1])
    '[1]'
    """
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"test dependency {name!r} is not installed ({exc}); "
                f"install the test extras: pip install -e '.[test]'", module_level=module_level)


def require_native(module_level: bool = False) -> ModuleType:
    """The C extension ``evaluator_ext._native``: a failure when it is missing under
    ``CBR_REQUIRE_NATIVE=1`` or ``CBR_STRICT=1``, else a skip with the reason."""
    try:
        return importlib.import_module("evaluator_ext._native")
    except ImportError as exc:
        if os.environ.get("CBR_REQUIRE_NATIVE") == "1":
            raise
        missing(f"native extension not built ({exc}); run `python3 setup.py build_ext --inplace`",
                module_level=module_level)


def require_program(*names: str) -> str:
    """The path of the first of ``names`` found on PATH; skip (or fail, under CBR_STRICT=1) if none is."""
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    missing(f"no {' or '.join(names)} on PATH (a C compiler is needed to build the kernels alone)")


class lazy_module:
    """A test dependency imported on first use, so a module-level ``eval7 = lazy_module("eval7")``
    costs nothing and only the tests that touch it skip (or fail, under CBR_STRICT=1).

    >>> lazy_module("json").dumps({})
    '{}'
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):  # pytest's collection probes (``_pytestfixturefunction``, dunders)
            raise AttributeError(attr)
        return getattr(require_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy test dependency {self._name!r}>"


class _Placeholder:
    """Stands for any hypothesis strategy or health check when hypothesis is not installed."""

    def __getattr__(self, attr: str) -> _Placeholder:
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> _Placeholder:
        return self

    def __or__(self, other: Any) -> _Placeholder:
        return self


def _given_without_hypothesis(*strategies: Any, **named: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``@given`` without hypothesis: the property test skips (fails under CBR_STRICT=1) with
    the reason; its fixtures and parameters stay as they are, so nothing else changes."""

    def decorate(test: Callable[..., Any]) -> Callable[..., Any]:
        params = list(inspect.signature(test).parameters.values())
        drawn = set(named) | {p.name for p in params[len(params) - len(strategies):]} if strategies else set(named)

        @functools.wraps(test)
        def property_test(*args: Any, **kwargs: Any) -> None:
            require_module("hypothesis")

        property_test.__signature__ = inspect.Signature([p for p in params if p.name not in drawn])  # type: ignore[attr-defined]
        del property_test.__wrapped__
        return property_test

    return decorate


def _settings_without_hypothesis(*args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return lambda test: test


try:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
except ImportError:  # property tests skip (or fail under CBR_STRICT=1); every other test runs
    HealthCheck = st = _Placeholder()  # type: ignore[assignment]
    given = _given_without_hypothesis  # type: ignore[assignment]
    settings = _settings_without_hypothesis  # type: ignore[assignment]
else:
    # Speed is shown in bench/, not asserted in tests: no per-example deadlines, and no
    # "too slow" health check on a loaded 2-core CI machine. Examples stay random.
    settings.register_profile("cbr", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("cbr")


def pytest_report_header(config: pytest.Config) -> str:
    """Say which switches are on, so a log shows whether skips were allowed."""
    return (f"cbr: CBR_STRICT={'1' if STRICT else '0 (missing logs/test deps skip)'}, "
            f"CBR_SLOW={'1' if SLOW else '0 (slow tests deselected)'}, "
            f"CBR_REQUIRE_NATIVE={os.environ.get('CBR_REQUIRE_NATIVE', '0')}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``slow`` tests (exhaustive runs of the pure-Python reference and the like) are deselected
    unless ``CBR_SLOW=1`` (set by ``.ci/run``) or a ``-m`` expression names them."""
    if SLOW or "slow" in (config.getoption("markexpr") or ""):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]


@pytest.fixture
def logs_dir() -> Path:
    """../shared/data/logs, or skip (fail under CBR_STRICT=1)."""
    return shared_path()



def pytest_configure(config: pytest.Config) -> None:
    """Run the suite with Ctrl-C's usual handler however it was started.

    A background job (``pytest ... &`` from a script, ``nohup``) starts with SIGINT ignored,
    and Python leaves an ignored SIGINT ignored: the tests that raise SIGINT in this process
    (a Ctrl-C held across a write) saw nothing, and the children they start inherited the
    ignored signal. Installing ``default_int_handler`` here (in pytest's process and in each
    xdist worker) makes a background run behave as a foreground one; a child started with
    ``exec`` gets SIGINT's default action back, since a handled signal is reset by ``exec``.
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


#: The end of a program that runs a script (``sys.argv[1]``) up to its argument parsing, where
#: the program's own ``shown(self, args=None, namespace=None)`` (defined before it) prints what
#: the test reads and exits: the scripts' help tests (tests/test_script_help.py,
#: tests/test_experiment_scripts.py) prepend their ``shown``.
PARSE_AND_STOP = """
argparse.ArgumentParser.parse_args = shown
argparse.ArgumentParser.parse_known_args = shown
script = sys.argv[1]
sys.argv = [script]
sys.path.insert(0, script.rsplit("/", 1)[0])
runpy.run_path(script, run_name="__main__")
"""
