"""The ``cbr`` command line. The only module that prints, exits or draws progress bars.

Commands are thin: parse options, call one library function, print the result
(``--json`` for scripts). Errors of the project (:class:`CBRError`) and bad values
(``ValueError``) become one line on stderr and exit code 1; usage errors exit 2;
``--debug`` shows tracebacks.
"""
from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Optional, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from evaluator_ext.errors import CBRError

app = typer.Typer(
    name="cbr",
    help="Case-based reasoning engine for limit Texas hold'em.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

stdout = Console()
stderr = Console(stderr=True)
_state = {"debug": False}

F = TypeVar("F", bound=Callable[..., Any])


@app.callback()
def _main(
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")] = False,
) -> None:
    """Case-based reasoning engine for limit Texas hold'em."""
    _state["debug"] = debug


def guarded(func: F) -> F:
    """Turn project errors and bad values into a one-line message and exit code 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (CBRError, ValueError, FileNotFoundError, PermissionError) as exc:
            if _state["debug"]:
                raise
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            typer.echo(f"error: {message}", err=True)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def print_json(obj: Any) -> None:
    """Print ``obj`` as JSON on stdout (numpy scalars and tuples handled)."""

    def default(o: Any) -> Any:
        if hasattr(o, "tolist"):
            return o.tolist()
        if hasattr(o, "__dict__"):
            return vars(o)
        return str(o)

    typer.echo(json.dumps(obj, indent=2, default=default))


@contextmanager
def progress_bar(description: str, total: Optional[int] = None, enabled: bool = True) -> Iterator[Callable[..., None]]:
    """Yield a progress callback ``advance(n=1, total=None)``; draws a bar only on a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield lambda n=1, total=None: None
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=stderr,
        transient=True,
    ) as progress:
        task = progress.add_task(description, total=total)

        def advance(n: int = 1, total: Optional[int] = None) -> None:
            if total is not None:
                progress.update(task, total=total)
            progress.advance(task, n)

        yield advance


# ---------------------------------------------------------------------------
# Command groups. Each command lives in its own section below.
# ---------------------------------------------------------------------------
logs_app = typer.Typer(help="Read hand-history logs.", no_args_is_help=True)
casebase_app = typer.Typer(help="Look inside case bases.", no_args_is_help=True)
plugins_app = typer.Typer(help="The plugin store.", no_args_is_help=True)
app.add_typer(logs_app, name="logs")
app.add_typer(casebase_app, name="casebase")
app.add_typer(plugins_app, name="plugins")


# ---- cbr hand (issue 2) ----------------------------------------------------


# ---- cbr match (issue 3) ---------------------------------------------------


# ---- cbr logs inspect (issue 3) --------------------------------------------


# ---- cbr build / query / casebase / plugins (issue 4) ----------------------


if __name__ == "__main__":  # pragma: no cover
    app()
