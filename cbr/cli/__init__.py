"""The ``cbr`` command line: the only package that prints, exits, draws progress bars or
imports typer and rich. Nothing of the engine imports it.

One module per command group (``hand``, ``build``, ``query``, ``play``, ``league``, ``logs``,
``casebase``, ``plugins``, ``players``, ``train``, ``evaluate``, ``abstraction``, ``serve``), one
module of shared options (:mod:`cbr.cli._options`), one error table
(:mod:`cbr.cli._errors`: exit codes 0 done, 1 error, 2 usage, 3 internal, 130
interrupted, 143 terminated, 141 stdout closed) and one output module (:mod:`cbr.cli._output`: consoles,
``--json``, progress bars, tables). Commands are thin: parse options, call the library,
print. Heavy libraries (numpy, faiss, duckdb, pyarrow, rich) are imported inside the
commands that use them, and each command's module only when that command runs
(:mod:`cbr.cli._lazy`), so ``cbr --help`` and ``cbr query`` start fast.
"""
# No `from __future__ import annotations`: typer reads the options' annotations, and real ones
# (compiled with the module) cost it far less than strings it must evaluate at every start.

import gc
from typing import Annotated

import typer

from cbr.cli._errors import prepare_for_memory_cap, state, whole_writes
from cbr.cli._lazy import LazyGroup


class _Commands(LazyGroup):
    """``cbr``'s commands, then groups, in the order `cbr --help` lists them: each one's
    module of :mod:`cbr.cli` is imported when the command is run or its help shown."""

    table = {
        "hand": "hand:hand_command",
        "match": "play:match_command",
        "league": "league:league_command",
        "build": "build:build_command",
        "query": "query:query_command",
        "serve-dealer": "play:serve_dealer_command",
        "serve": "serve:serve_command",
        "play": "play:play_command",
        "evaluate": "evaluate:evaluate_command",
        "tune": "evaluate:tune_command",
        "exploit": "exploit:exploit_command",
        "logs": "logs:app",
        "casebase": "casebase:app",
        "plugins": "plugins:app",
        "players": "players:app",
        "train": "train:app",
        "abstraction": "abstraction:app",
    }


# Typer's plain help (click's formatter), not its rich panels: flags show as flags (no
# ``<bool>``), help text wraps to the terminal and never truncates, and rich is not imported.
app = typer.Typer(
    name="cbr",
    cls=_Commands,
    help="Case-based reasoning engine for limit Texas hold'em.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("cbr-holdem")
        except PackageNotFoundError:  # pragma: no cover - run from a bare checkout
            v = "unknown (not installed)"
        typer.echo(f"cbr {v}")
        raise typer.Exit()


@app.callback()
def _main(
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Show the version and exit.")] = False,
) -> None:
    """Case-based reasoning engine for limit Texas hold'em.

    Exit codes: 0 done, 1 error in the input (one line on stderr), 2 usage error,
    3 internal error, 130 interrupted, 143 terminated, 141 stdout closed (| head).
    --debug shows tracebacks.
    """
    state["debug"] = debug
    prepare_for_memory_cap()  # before any option of a command loads a native library


def main() -> None:
    """The ``cbr`` program (the console script): :data:`app`, run as a process of its own.
    What is loaded so far (typer) is frozen out of the cyclic collector's way, as is what a
    command loads before it runs (:func:`cbr.cli._errors.guarded`)."""
    state["program"] = True
    whole_writes()  # an unbuffered stdout (PYTHONUNBUFFERED) loses no broken pipe: exit 141 all the same
    gc.freeze()
    app()


__all__ = ["app", "main"]
