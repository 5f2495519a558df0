"""The MCCFR recipes (``casebases.build_cfr_big``, ``casebases.build_cfr_emd``) stopped twice: a
Ctrl-C while the abstraction of a tiny run is built, then Ctrl-Cs and SIGTERMs every few
milliseconds until the recipe is gone (a user pressing Ctrl-C again, a supervisor sending
SIGTERM after it).

Before: their start (``casebases.build_cfr_emd.StartSignals``) put the handlers of before back
once it was stopped, so a second signal while the recipe removed what it had made and said its
stop line killed it (SIGTERM: exit -15, the line cut or never said) or raised a
``KeyboardInterrupt`` (a traceback after the line). Now, as in ``build_counters``
(``ignore_after=True``), the first signal is the stop and the later ones are ignored: one line,
exit 130, nothing of the run left.

The recipe runs under a caller that waits half a second after its ``main`` returned before it
exits: the rest of the process's end (a caller's own work, the interpreter's shutdown) made
wide enough that the later signals surely land in it, where they killed the recipe before.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, lines_until, require_native

require_native(module_level=True)

#: ``python -c RECIPE MODULE ARGS...``: the recipe's ``main``, then half a second before the exit.
RECIPE = """
import importlib, sys, time
code = importlib.import_module(sys.argv[1]).main(sys.argv[2:])
time.sleep(0.5)
sys.exit(code)
"""
#: The line of a recipe stopped while it builds its abstraction.
STOPPED = "stopped by SIGINT while building the abstraction: nothing to resume; run the same command again to start over"


def stop_twice(spawn, module: str, args: list[str]) -> tuple[int, str]:
    """Start the recipe ``module`` with ``args`` (under :data:`RECIPE`); once it says it builds the abstraction, Ctrl-C, then
    SIGINT and SIGTERM in turn every millisecond until it exits. Its exit code and stderr."""
    proc = spawn([sys.executable, "-c", RECIPE, module, *args], cwd=REPO, stdout=subprocess.DEVNULL,
                 stderr=subprocess.PIPE, text=True)
    lines = lines_until(proc.stderr, "building the abstraction")
    time.sleep(1.0)                                      # inside the build (a minute at 4 buckets)
    assert proc.poll() is None, "".join(lines)
    proc.send_signal(signal.SIGINT)                      # the stop: the lower number wins if both are pending
    time.sleep(0.05)
    end, burst = time.monotonic() + 20, 0
    while proc.poll() is None and time.monotonic() < end:
        proc.send_signal(signal.SIGTERM if burst % 2 else signal.SIGINT)
        burst += 1
        time.sleep(0.001)
    _, rest = proc.communicate(timeout=30)
    return proc.returncode, "".join(lines) + rest


@pytest.mark.time_limit(90)
def test_build_cfr_big_stopped_twice_while_building_says_one_line(spawn, tmp_path: Path) -> None:
    run = tmp_path / "runs" / "run"
    code, err = stop_twice(spawn, "casebases.build_cfr_big",
                           ["--out", str(run), "--flop", "4", "--turn", "4", "--river", "4", "--threads", "1",
                            "--fit-boards", "10", "--minutes", "1"])
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err.strip().splitlines()[-1] == STOPPED, err
    assert sorted(tmp_path.iterdir()) == []              # the folders it made are gone


@pytest.mark.time_limit(90)
def test_build_cfr_emd_stopped_twice_while_building_says_one_line(spawn, tmp_path: Path) -> None:
    out = tmp_path / "emd" / "run"
    code, err = stop_twice(spawn, "casebases.build_cfr_emd",
                           ["--out", str(out), "--buckets", "4", "--threads", "1", "--iterations", "10"])
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err.strip().splitlines()[-1] == STOPPED, err
    assert sorted(tmp_path.iterdir()) == []
