"""Large outputs of the command line: a reader that goes away in the middle of one (``| head -1``)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

#: The ``cbr`` program in a process of its own, as the console script runs it (:func:`cbr.cli.main`).
PROGRAM = "import sys; from cli import main; sys.argv = ['cbr', *sys.argv[1:]]; main()"
#: Far more than a pipe holds (64 KiB): the reader can leave while the command is still writing.
WIDE = ["casebase", "inspect", "default", "--sql", "select * from cases", "--limit", "300"]  # rich folds it
NARROW = ["casebase", "inspect", "default", "--sql",
          "select street, case_id, players_dealt, relative_position, players_in_hand from cases",
          "--limit", "1000"]  # fits 80 columns: written without rich


def first_line_then_close(args: list[str], env: dict[str, str]) -> tuple[bytes, int, str]:
    """Run ``cbr ARGS``, read its stdout up to the end of the first line, a few hundred bytes
    at a time (so the command is still in the middle of its first large write), close the
    pipe as ``head -1`` does, and give the line, the exit code and stderr."""
    proc = subprocess.Popen([sys.executable, "-c", PROGRAM, *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    try:
        got = b""
        while b"\n" not in got:
            chunk = os.read(proc.stdout.fileno(), 256)
            if not chunk:
                break
            got += chunk
        proc.stdout.close()
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:  # pragma: no cover - the command hung
            proc.kill()
            proc.wait()
    return got.split(b"\n")[0], proc.returncode, err.decode()


@pytest.mark.parametrize("args", [WIDE, NARROW], ids=["rich", "plain"])
@pytest.mark.parametrize("unbuffered", [True, False], ids=["unbuffered", "buffered"])
def test_a_reader_gone_in_the_middle_of_a_large_write_is_a_quiet_exit_141(args: list[str], unbuffered: bool) -> None:
    """``cbr casebase inspect ... --limit 1000 | head -1`` exited 0 and still said "(first 1000
    rows shown ...)" under ``PYTHONUNBUFFERED=1``: the unbuffered stdout dropped what the write
    cut short by the closed pipe left over, without an error. Now the exit of a program killed by
    SIGPIPE (141), nothing on stderr, as when the reader is gone before the first write."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["COLUMNS"] = "80"
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    line, code, err = first_line_then_close(args, env)
    assert line.startswith("┏━━".encode()), line  # the table had begun
    assert (code, err) == (141, "")


def test_an_unbuffered_stdout_still_writes_everything() -> None:
    """The stream that replaces an unbuffered stdout (:func:`cbr.cli._errors.whole_writes`)
    loses nothing with a reader that reads it all: the same bytes as a buffered one."""
    outputs = []
    for unbuffered in (True, False):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
        env["COLUMNS"] = "80"
        if unbuffered:
            env["PYTHONUNBUFFERED"] = "1"
        done = subprocess.run([sys.executable, "-c", PROGRAM, *NARROW], cwd=REPO, capture_output=True, env=env,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert outputs[0].count(b"\n") > 1000  # the header, 1,000 rows and the box
