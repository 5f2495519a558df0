"""Start-up of the `cbr` command: a command imports its own module only
(:mod:`cbr.cli._lazy`), plain option values skip pydantic (:mod:`cbr.cli._coerce`), and
neither changes what a command shows or answers: the lazy root is compared with the same
commands registered eagerly on a plain Typer, and plain values with typer's own coercion.
No timing here: ``bench/bench_startup.py`` measures."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer._coercion import build_runtime_param, resolve_type_descriptor
from typer.testing import CliRunner

import cbr.cli
from cbr.cli._coerce import UNSURE, plain
from cli import app

REPO = Path(__file__).resolve().parents[2]
QUERY = ["query", "--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "1", "--pot", "5"]
runner = CliRunner()


def eager_app() -> typer.Typer:
    """``cbr`` as it was registered before the lazy root: every command on a plain Typer."""
    import importlib

    eager = typer.Typer(name="cbr", help="Case-based reasoning engine for limit Texas hold'em.",
                        no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                        rich_markup_mode=None)
    eager.callback()(cbr.cli._main)
    for name, where in cbr.cli._Commands.table.items():
        module, attribute = where.split(":")
        target = getattr(importlib.import_module(f"cbr.cli.{module}"), attribute)
        if isinstance(target, typer.Typer):
            eager.add_typer(target, name=name)
        else:
            eager.command(name)(target)
    return eager


def all_commands() -> list[list[str]]:
    """Every command and subcommand of ``cbr``, as argument lists."""
    root = typer.main.get_command(eager_app())
    found = []
    for name, command in root.commands.items():
        found.append([name])
        for sub in getattr(command, "commands", {}) or {}:
            found.append([name, sub])
    return found


def run(target: typer.Typer, args: list[str]):
    return runner.invoke(target, args, env={"COLUMNS": "80"})


def test_the_lazy_root_shows_what_eager_registration_showed() -> None:
    eager = eager_app()
    commands = all_commands()
    assert len(commands) > 20
    for args in [[], ["--help"], *([*c, "--help"] for c in commands)]:
        mine, theirs = run(app, args), run(eager, args)
        assert (mine.exit_code, mine.output) == (theirs.exit_code, theirs.output), args


def test_help_lists_the_commands_in_the_table_order() -> None:
    lines = run(app, ["--help"]).output.split("Commands:")[1].splitlines()
    names = [line.split()[0] for line in lines if line.startswith("  ") and not line.startswith("   ")]
    assert names == list(cbr.cli._Commands.table)


@pytest.mark.parametrize("args", [
    [*QUERY, "--json"],
    [*QUERY, "--json", "--explain", "--top", "2"],
    ["query", "--matchstate", "MATCHSTATE:1:0::|AsKs", "--json"],
    ["hand", "AdQc", "3h4cJh", "--trials", "2000", "--json"],
    ["quer"],
])
def test_answers_and_errors_are_those_of_eager_registration(args: list[str]) -> None:
    mine, theirs = run(app, args), run(eager_app(), args)
    assert (mine.exit_code, mine.stdout, mine.stderr) == (theirs.exit_code, theirs.stdout, theirs.stderr)
    if "--json" in args:
        json.loads(mine.stdout)


@pytest.mark.parametrize("args, error", [
    (["query", "--hole", "AdQc", "--pot", "x"], "Invalid value for '--pot': 'x' is not a number"),
    (["query", "--hole", "AdQc", "--dealt", "40"], "Invalid value for '--dealt': 40 is not in the range 2<=x<=12"),
    (["query", "--hole", "AdQc", "--top", "1.5"], "Invalid value for '--top': '1.5' is not a whole number"),
])
def test_bad_numbers_are_told_by_our_coercion(args: list[str], error: str) -> None:
    """A value the lazy root's coercion refuses is told in its own words (typer's, built on
    pydantic, said "Input should be a valid number, unable to parse string as a number"): the
    eager registration, without that coercion, is no reference for these."""
    got = run(app, args)
    assert (got.exit_code, got.stdout) == (2, "") and got.stderr.strip().endswith(f"Error: {error}")


@pytest.mark.parametrize("output", [["--json"], []])
def test_a_query_imports_its_own_command_only(output: list[str]) -> None:
    """`cbr query` loads the query's module (no other command's), not pydantic, rich (its
    tables need no folding at 80 columns: written without rich, the same text), DuckDB,
    faiss (the saved aggregate layout answers; ``index.faiss`` is read on first use),
    pyarrow (the saved index's answer rows hold every action and the provenance shown) or
    importlib.metadata (built-in feature sets need no entry-point scan)."""
    code = ("import sys; from cli import app\n"
            "try:\n    app(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('cbr.cli')), file=sys.stderr)\n"
            "print(sorted(m for m in ('pydantic', 'rich', 'duckdb', 'faiss', 'pyarrow', 'importlib.metadata')"
            " if m in sys.modules), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code, *QUERY, *output], cwd=REPO, capture_output=True,
                         text=True, timeout=120, env={**os.environ, "COLUMNS": "80"})
    assert out.returncode == 0, out.stderr
    if output == ["--json"]:
        json.loads(out.stdout)
    else:
        assert "┏" in out.stdout and "fold" in out.stdout
    modules, heavy = out.stderr.strip().splitlines()[-2:]
    assert modules == str(["cbr.cli", "cbr.cli._coerce", "cbr.cli._errors", "cbr.cli._lazy", "cbr.cli._options",
                           "cbr.cli._output", "cbr.cli.query"])
    assert heavy == "[]"


@pytest.mark.parametrize("annotation,low,high", [
    (int, None, None), (int, 0, 20), (int, 1, 10**9), (float, None, None), (float, -1.0, 1.0),
    (str, None, None), (bool, None, None), (list[str], None, None), (list[int], 0, 5),
])
def test_plain_values_are_typers_values(annotation, low, high) -> None:
    """Wherever :func:`plain` converts a value, typer's own coercion gives the same value
    of the same type; where it does not, typer decides (and words the error)."""
    descriptor = resolve_type_descriptor(annotation, typer.Option(min=low, max=high))
    theirs = build_runtime_param(descriptor)
    values = ["0", "5", "-3", "12", "21", "007", "+4", " 3", "1_000", "1.0", "2.5", "-0.25", ".5", "1e3", "nan",
              "inf", "x", "", "123456789012345678", "9" * 30, 5, 0, -2, 2.5, True, False, ("1", "2"), ["a"], ()]
    converted = 0
    for value in values:
        mine = plain(annotation, value, low, high)
        if mine is UNSURE:
            continue
        converted += 1
        expected = theirs._coerce_value(value, param=None, ctx=None)
        assert (mine, type(mine)) == (expected, type(expected)), (annotation, value)
        if isinstance(mine, list):
            assert [type(v) for v in mine] == [type(v) for v in expected]
    assert converted >= 2


def test_the_program_freezes_its_start_up_objects_and_a_caller_of_app_does_not() -> None:
    """`cbr` itself (``cli:main``, the console script) moves what start-up loaded out of the
    cyclic collector's way (``gc.freeze``); a process that only calls ``app`` (these tests,
    an embedding program) keeps its objects collectable."""
    import gc

    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: print('frozen', gc.get_freeze_count(), file=sys.stderr))\n"
            "from cli import main\n"
            "sys.argv = ['cbr', *sys.argv[1:]]\n"
            "main()\n")
    out = subprocess.run([sys.executable, "-c", code, *QUERY, "--json"], cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["triple"]
    frozen = int(out.stderr.split("frozen")[-1])
    assert frozen > 10_000  # numpy, typer and the command's modules at least
    before = gc.get_freeze_count()
    result = runner.invoke(app, [*QUERY, "--json"])
    assert result.exit_code == 0, result.output
    assert gc.get_freeze_count() == before
