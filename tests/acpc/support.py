"""What the ACPC tests share: the ``cbr`` command, the processes a test starts (killed at its
end by the ``procs`` fixture, re-exported by the conftest files that need it) and the time any
of them may take."""
from __future__ import annotations

import select
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, default_sigint

WAIT = 60  # seconds any process of these tests may take before it is killed


def cbr_command() -> list[str]:
    script = Path(sys.executable).parent / "cbr"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from cli import app; sys.argv[0] = 'cbr'; app()"]


class Procs:
    """Processes a test starts; every one is killed at the end of the test."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen] = []

    def start(self, *args: object, cwd: Path | None = None, stderr: int = subprocess.PIPE,
              env: dict[str, str] | None = None) -> subprocess.Popen:
        """``cbr ARGS``, its stdout and stderr piped (``stderr``: another file descriptor,
        a terminal's); Ctrl-C (a test's SIGINT) interrupts it however pytest was started."""
        proc = subprocess.Popen(cbr_command() + [str(a) for a in args], cwd=cwd or REPO, text=True,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr, env=env,
                                preexec_fn=default_sigint)
        self.procs.append(proc)
        return proc

    def dealer(self, *args: object) -> tuple[subprocess.Popen, int]:
        """A `cbr serve-dealer --port 0` process and the port it printed."""
        proc = self.start("serve-dealer", "--port", 0, *args)
        ready, _, _ = select.select([proc.stdout], [], [], WAIT)
        assert ready, "the dealer printed no port"
        first = proc.stdout.readline()
        assert first.startswith("listening on 127.0.0.1:"), first + proc.stderr.read()
        return proc, int(first.rsplit(":", 1)[1])

    def kill_all(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.communicate()


@pytest.fixture
def procs():
    p = Procs()
    yield p
    p.kill_all()


def finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=WAIT)
    return proc.returncode, out, err
