"""``--out`` of every experiment script is checked when the arguments are parsed, before any work
(``experiments/common.py``'s ``out_path``): a file's folder must exist, a folder's parent must
exist, a path under a file and a folder given for a file are refused, each one usage error (exit
2); nothing is made. Before, ``adaptive.py --out /nonexistent/x.json`` made ``/nonexistent/``
(``write_json``'s ``mkdir(parents=True)``) and wrote there, and ``--out /etc/passwd/x.json``
played every match and then died in a ``FileExistsError`` traceback, its results lost."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in REPO.glob("experiments/*.py") if p.name != "common.py")
#: An option a script writes to, and the kind its type checks.
WRITES = re.compile(r"""add_argument\(((?:"--[a-z-]+", )*"--(?:out|png)")(?:, type=out_path\("(file|folder)"\))?""")
#: Scripts without an output option: they print their table.
PRINT_ONLY = {"exploit_abstract"}


def _options(script: Path) -> list[tuple[str, str | None]]:
    """``(the option's names as argparse joins them, its kind or None)`` for each output option."""
    return [("/".join(n.strip('"') for n in m.group(1).split(", ")), m.group(2))
            for m in WRITES.finditer(script.read_text(encoding="utf-8"))]


def test_every_output_option_is_checked() -> None:
    """Every ``--out`` (and ``--png``) of ``experiments/`` has the checked type; every script but the
    print-only ones has one."""
    found = {p.stem: _options(p) for p in SCRIPTS}
    assert len(found) >= 29
    assert {name for name, options in found.items() if not options} == PRINT_ONLY
    assert [(name, o) for name, options in found.items() for o, kind in options if kind is None] == []


def _run(script: Path, out: str, cwd: Path) -> subprocess.CompletedProcess:
    # --out first: its type is checked as argparse reads it, before a missing positional is noticed
    return subprocess.run([sys.executable, str(script), "--out", out], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def _refused(p: subprocess.CompletedProcess, script: Path, said: str) -> None:
    assert (p.returncode, p.stdout) == (2, ""), p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    last = p.stderr.strip().splitlines()[-1]
    option = next(o for o, _ in _options(script) if o.endswith("--out"))  # cfr_curve: --results/--out
    assert last == f"{script.name}: error: argument {option}: {said}", last


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s.stem not in PRINT_ONLY], ids=lambda p: p.stem)
def test_a_bad_out_is_one_usage_error_and_nothing_is_made(script: Path, tmp_path: Path) -> None:
    kind = next(k for o, k in _options(script) if o.endswith("--out"))
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    a_folder = tmp_path / "folder"
    a_folder.mkdir()
    name = "x.json" if kind == "file" else "results"

    p = _run(script, str(tmp_path / "missing" / name), tmp_path)        # the folder it goes in is not there
    _refused(p, script, f"{tmp_path / 'missing' / name}: the folder {tmp_path / 'missing'} does not exist (make it first)")

    p = _run(script, str(a_file / name), tmp_path)                      # under a file
    _refused(p, script, f"{a_file / name}: {a_file} is a file, not a folder")

    if kind == "file":
        p = _run(script, str(a_folder), tmp_path)                       # a folder for a file
        _refused(p, script, f"{a_folder} is a folder; give a file name")
    else:
        p = _run(script, str(a_file), tmp_path)                         # a file for a folder
        _refused(p, script, f"{a_file} is a file; give a folder")
    assert sorted(tmp_path.iterdir()) == [a_folder, a_file] and list(a_folder.iterdir()) == []


def test_a_png_under_a_file_is_refused_too(tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    for name in ("casper_table", "reuse_policies"):
        p = subprocess.run([sys.executable, str(REPO / "experiments" / f"{name}.py"), "--png", str(a_file / "x.png"),
                            "--out", str(tmp_path / "x.json")], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
        assert (p.returncode, p.stdout) == (2, ""), p.stderr
        assert p.stderr.strip().splitlines()[-1] == (f"{name}.py: error: argument --png: {a_file / 'x.png'}: "
                                                     f"{a_file} is a file, not a folder")
    assert sorted(tmp_path.iterdir()) == [a_file]


def test_write_json_makes_one_folder_and_no_tree(tmp_path: Path) -> None:
    """``write_json`` makes the ``--out`` folder (its parent checked), never a tree of folders; a
    file it cannot write is the library's error (``run``'s one ``error:`` line), not a traceback."""
    from cbr.errors import CBRError
    from experiments import common

    common.write_json(tmp_path / "results" / "x.json", {"a": 1})
    assert (tmp_path / "results" / "x.json").read_text() == '{\n  "a": 1\n}\n'
    with pytest.raises(CBRError, match=f"cannot write {re.escape(str(tmp_path / 'no' / 'such' / 'x.json'))}: "):
        common.write_json(tmp_path / "no" / "such" / "x.json", {"a": 1})
    assert not (tmp_path / "no").exists()
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(CBRError, match="cannot write .*notes.txt/x.json: "):
        common.write_json(tmp_path / "notes.txt" / "x.json", {"a": 1})
