"""Exit codes and how errors become them: one table for every ``cbr`` command.

- 0: done;
- 1: an error in the input or the environment: the project's own errors
  (:class:`~evaluator_ext.errors.CBRError`: a bad log, case base, game or similarity
  file...) and file errors on the user's paths, as one line ``error: ...`` on stderr;
- 2: a usage error: an unknown option or bot or format name, conflicting options, a
  count out of its documented range (``--hands``, ``--workers``, ``--opponents``...);
- 3: an internal error (a bug): ``internal error: ... (run with --debug for the traceback)``;
- 130: interrupted (Ctrl-C); 143: terminated (SIGTERM), after the same clean-up.

``--debug`` shows tracebacks instead of the one-line messages.
"""
from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, Optional, TypeVar

import typer

EXIT_ERROR, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 2, 3, 130, 143
#: Whether ``--debug`` was given (set by the root command).
state = {"debug": False}

F = TypeVar("F", bound=Callable[..., Any])


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that every clean-up of Ctrl-C runs."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _os_error_line(exc: OSError) -> str:
    """``PATH: reason`` for an OS error on a user's path."""
    reason = exc.strerror or one_line(exc)
    names = [str(n) for n in (exc.filename, exc.filename2) if n is not None]
    return f"{' -> '.join(names)}: {reason}" if names else reason


def guarded(func: F) -> F:
    """Run a command with the exit-code conventions of this module.

    The project's errors (``CBRError``) and OS errors on the user's files become one line
    and exit 1; typer's usage errors pass through (exit 2); any other exception is an
    internal error (exit 3) that says so; Ctrl-C exits 130 and SIGTERM 143 after the
    same clean-up (SIGTERM is raised as :class:`Terminated`, a ``KeyboardInterrupt``).
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from evaluator_ext.errors import CBRError

        previous = None
        try:
            previous = signal.signal(signal.SIGTERM, _on_sigterm)
        except ValueError:  # not the main thread: leave SIGTERM alone
            pass
        try:
            return func(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except Terminated:
            if state["debug"]:
                raise
            typer.echo("terminated", err=True)
            raise typer.Exit(EXIT_TERMINATED) from None
        except KeyboardInterrupt:
            if state["debug"]:
                raise
            typer.echo("interrupted", err=True)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except BrokenPipeError:  # the reader went away (`cbr ... | head`): stop quietly
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            except (OSError, ValueError):  # pragma: no cover
                pass
            raise typer.Exit(EXIT_ERROR) from None
        except CBRError as exc:
            if state["debug"]:
                raise
            typer.echo(f"error: {one_line(exc)}", err=True)
            raise typer.Exit(EXIT_ERROR) from None
        except OSError as exc:
            if state["debug"]:
                raise
            typer.echo(f"error: {_os_error_line(exc)}", err=True)
            raise typer.Exit(EXIT_ERROR) from None
        except Exception as exc:
            if state["debug"]:
                raise
            typer.echo(f"internal error: {type(exc).__name__}: {one_line(exc)} "
                       f"(run with --debug for the traceback)", err=True)
            raise typer.Exit(EXIT_INTERNAL) from None
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    return wrapper  # type: ignore[return-value]


def usage_error(message: str, option: Optional[str] = None) -> typer.BadParameter:
    """A usage error (exit 2) about ``option``; raise it from a command."""
    return typer.BadParameter(message, param_hint=f"'{option}'" if option else None)
