"""``--help`` of every script of bench/ and every recipe of casebases/ that parses options:
it exits 0 at once (no work is done) and its description is a whole sentence. Most built it
from the first line of the docstring, so ``python bench/bench_adaptive.py --help`` showed a
description cut mid-sentence; they use :func:`casebases.description` now (the experiment
scripts are checked in ``tests/test_experiment_scripts.py``)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PARSE_AND_STOP

REPO = Path(__file__).resolve().parents[1]
#: Every script that builds an argparse parser (none left out: the test below counts them).
SCRIPTS = sorted(p.relative_to(REPO) for p in [*REPO.glob("bench/*.py"), *REPO.glob("casebases/*.py")]
                 if "ArgumentParser(" in p.read_text(encoding="utf-8"))


def test_every_script_with_options_is_checked() -> None:
    assert len(SCRIPTS) >= 40, SCRIPTS
    assert {Path("bench/bench_adaptive.py"), Path("casebases/build_expert.py"), Path("bench/table1_extremes.py")} <= set(SCRIPTS)


def help_of(script: Path) -> subprocess.CompletedProcess:
    """``--help`` as the docs run it: bench/ by path, the recipes as modules."""
    command = ([str(script)] if script.parts[0] == "bench"
               else ["-m", ".".join(script.with_suffix("").parts)])
    return subprocess.run([sys.executable, *command, "--help"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("script", SCRIPTS, ids=str)
def test_help_describes_the_script_in_a_whole_sentence(script: Path) -> None:
    p = help_of(script)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    paragraphs = [" ".join(block.split()) for block in p.stdout.split("\n\n")]
    assert paragraphs[0].startswith("usage:"), p.stdout
    text = paragraphs[1]  # argparse prints the description right after the usage
    assert not text.startswith(("options:", "optional arguments:", "positional arguments:")), p.stdout
    assert text.endswith((".", "?", "!")), text  # (bench_serve.py starts with the command, cbr serve)
    assert "``" not in text, text


#: Runs a bench script up to its argument parsing and prints, for its parser and each
#: subcommand's, the help text and each option's default as the help would say it (None when
#: there is none worth saying: None, off, empty, or a help that says it in its own words).
DEFAULTS = """
import argparse, json, runpy, sys
def shown(self, args=None, namespace=None):
    parsers = [self]
    for action in self._actions:
        if isinstance(action, argparse._SubParsersAction):
            parsers += list(action.choices.values())
    out = []
    for parser in parsers:
        said = {}
        for a in parser._actions:
            d = a.default
            if not a.option_strings or d is None or d is False or d == "" or d is argparse.SUPPRESS:
                continue
            if "(default: " in (a.help or ""):
                continue
            said[a.option_strings[-1]] = str(d)
        out.append({"help": " ".join(parser.format_help().split()), "defaults": said})
    print(json.dumps(out))
    raise SystemExit(0)
""" + PARSE_AND_STOP


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s.parts[0] == "bench"], ids=str)
def test_bench_help_says_each_default(script: Path, tmp_path: Path) -> None:
    """The benchmarks' ``--help`` says each option's default as the experiments' does (the
    shared :func:`experiments.common.help_format`, through ``bench/native_guard.py``): it said
    none (``--queries QUERIES`` alone, whatever the script would run with)."""
    p = subprocess.run([sys.executable, "-c", DEFAULTS, str(REPO / script)], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60, env={**os.environ, "COLUMNS": "1000"})  # no line cut in a default
    assert p.returncode == 0, p.stderr
    for parser in json.loads(p.stdout.strip().splitlines()[-1]):
        for option, default in parser["defaults"].items():
            said = " ".join(f"(default: {default})".split())
            assert f"{option} " in parser["help"] and said in parser["help"], (option, said, parser["help"])


#: Runs a bench script up to its argument parsing and prints, for its parser and each
#: subcommand's, every option's and positional's help text (None when it has none).
HELPS = """
import argparse, json, runpy, sys
def shown(self, args=None, namespace=None):
    parsers = [("", self)]
    for action in self._actions:
        if isinstance(action, argparse._SubParsersAction):
            parsers += [(name + " ", p) for name, p in action.choices.items()]
    print(json.dumps({prefix + (a.option_strings or [a.dest])[-1]: a.help for prefix, parser in parsers
                      for a in parser._actions
                      if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))}))
    raise SystemExit(0)
""" + PARSE_AND_STOP


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s.parts[0] == "bench"], ids=str)
def test_every_bench_option_says_what_it_is(script: Path, tmp_path: Path) -> None:
    """``bench_teacher.py --help`` showed ``--decisions DECISIONS  (default: 2000)`` and no word of
    what is decided (so did ``--boards``, ``--full-tables``, ``bench_condensed.py --queries``,
    ``bench_retrieval.py --batch`` and others): every option and argument of every benchmark,
    its subcommands' too, has a help text."""
    p = subprocess.run([sys.executable, "-c", HELPS, str(REPO / script)], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    helps = json.loads(p.stdout.strip().splitlines()[-1])  # table1_extremes.py has none
    assert [option for option, text in helps.items() if not (text or "").strip()] == []


def test_bench_scale_build_help_names_the_temporary_folder_it_uses(tmp_path: Path) -> None:
    """Its ``--logs`` default is in ``tempfile.gettempdir()``: the help said ``/tmp`` whatever
    ``TMPDIR`` said."""
    import os

    p = subprocess.run([sys.executable, str(REPO / "bench" / "bench_scale_build.py"), "--help"], capture_output=True,
                       text=True, timeout=60, env={**os.environ, "TMPDIR": str(tmp_path), "COLUMNS": "200"})
    assert p.returncode == 0, p.stderr
    assert f"in the temporary folder, {tmp_path})" in " ".join(p.stdout.split()), p.stdout
