"""How ``run`` of ``experiments/common.py`` (every experiment's and benchmark's entry point) ends a
script: a Ctrl-C names what the run wrote (``so_far``), or says ``nothing written``; a Ctrl-C that
lands after ``main`` has finished is ignored (exit 0), also while the interpreter exits.

Before: ``exploit_table.py``, ``bot_table.py`` and ``teacher.py`` said ``interrupted: the rows
measured so far are in exploit-table-seed<SEED>.json of the --out folder``, a template (``<SEED>``
as such, "the --out folder" without ``--out``), also when nothing had been written; and a Ctrl-C
landing just as ``exploit_table.py`` finished (its last line ``chart: ...png``) ended it with exit
130 and no line: Python puts back the default action of SIGINT while it exits, so the signal
killed the finished run (``tests/reliability/test_script_stops.py`` stops a real run mid-way)."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import default_sigint

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def stops():
    """The handlers of SIGINT and SIGTERM put back after a test of ``run`` (which changes them)."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)


@pytest.fixture()
def common(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    from experiments import common

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(common, "WRITTEN", [])
    return common


def test_a_ctrl_c_names_the_files_written_so_far(common, stops, tmp_path: Path, capsys) -> None:
    def main() -> int:
        common.write_json(tmp_path / "out" / "exploit-table-seed2.json", {"rows": {}})
        common.write_json(tmp_path / "out" / "exploit-table-seed2.json", {"rows": {"call": 1}})  # named once
        raise KeyboardInterrupt

    with pytest.raises(SystemExit) as stop:
        common.run(main, common.so_far("the rows measured so far", " (a re-run measures only the rest)"))
    assert stop.value.code == 130
    assert capsys.readouterr().err == ("interrupted: the rows measured so far are in out/exploit-table-seed2.json "
                                       "(a re-run measures only the rest)\n")


def test_a_ctrl_c_before_anything_is_written_says_so(common, stops, capsys) -> None:
    def main() -> int:
        raise KeyboardInterrupt

    with pytest.raises(SystemExit) as stop:
        common.run(main, common.so_far("the rows measured so far"))
    assert stop.value.code == 130
    assert capsys.readouterr().err == "interrupted: nothing written\n"


def test_a_path_outside_the_working_folder_is_named_whole(common, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    common.WRITTEN.append(tmp_path / "elsewhere" / "t.json")
    common.WRITTEN.append(tmp_path / "here" / "t.json")
    text = common.so_far("the rows")
    assert text() == f"the rows are in {tmp_path / 'elsewhere' / 't.json'}, t.json"


def test_a_finished_run_ignores_a_late_stop(common, stops, capsys) -> None:
    """Once ``main`` returned, a Ctrl-C or SIGTERM can change nothing: both are ignored."""
    with pytest.raises(SystemExit) as stop:
        common.run(lambda: 0)
    assert stop.value.code == 0
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    assert capsys.readouterr().err == ""


#: A script that finishes, and then, while the interpreter exits (the module's objects freed, after
#: Python has put back the signals' default actions), gets a real Ctrl-C.
LATE = """
import os, signal, sys, time
sys.path.insert(0, sys.argv[1])
import common

class Late:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)

late = Late()

def main():
    print("done", flush=True)
    return 0

common.run(main)
"""


def test_a_ctrl_c_while_a_finished_script_exits_does_not_kill_it(tmp_path: Path) -> None:
    p = subprocess.run([sys.executable, "-c", LATE, str(REPO / "experiments")], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120, preexec_fn=default_sigint)
    assert (p.returncode, p.stdout, p.stderr) == (0, "done\n", "")  # killed by SIGINT before: -2, no line
