"""The ``cbr`` command line. The only module that prints, exits or draws progress bars.

Commands are thin: parse options, call one library function, print the result
(``--json`` for scripts). Exit codes:

- 0: done;
- 1: an error in the input or the environment: the project's own errors
  (:class:`CBRError`: a bad log, case base, game or similarity file...) and file errors
  on the user's paths, as one line ``error: ...`` on stderr;
- 2: a usage error: an unknown option or bot or format name, conflicting options, a
  count out of its documented range (``--hands``, ``--workers``, ``--opponents``...);
- 3: an internal error (a bug): ``internal error: ... (run with --debug for the traceback)``;
- 130: interrupted (Ctrl-C); 143: terminated (SIGTERM), after the same clean-up.

``--debug`` shows tracebacks instead of the one-line messages. Heavy libraries (numpy,
faiss, duckdb, pyarrow, rich) are imported inside the commands that use them, so
``cbr --help`` starts fast.
"""
from __future__ import annotations

import functools
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Optional, TypeVar

import typer

#: Most hands ``cbr match`` plays (``cbr.match.MAX_HANDS``: results take no memory per hand).
MAX_HANDS = 1_000_000_000
#: Most Monte Carlo deals ``cbr hand --trials`` accepts: ``evaluator_ext.MAX_TRIALS`` (kept here
#: as a number so ``cbr --help`` need not import the evaluator; a test checks they agree).
MAX_TRIALS = 1_000_000_000
#: Seeds of the native evaluator are unsigned 64-bit numbers.
MAX_SEED = 2**64 - 1
#: Most worker processes ``cbr build -j`` accepts; more than the CPUs are reduced to the CPUs.
MAX_WORKERS = 256
EXIT_ERROR, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 2, 3, 130, 143

# Typer's plain help (click's formatter), not its rich panels: flags show as flags (no
# ``<bool>``), help text wraps to the terminal and never truncates, and rich is not imported.
app = typer.Typer(
    name="cbr",
    help="Case-based reasoning engine for limit Texas hold'em.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class _LazyConsole:
    """A rich ``Console`` made on first use (rich is imported only by commands that print)."""

    def __init__(self, stderr: bool = False) -> None:
        self._stderr = stderr
        self._console: Any = None

    def real(self) -> Any:
        """The ``rich.console.Console`` itself."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=self._stderr)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)


stdout: Any = _LazyConsole()
stderr: Any = _LazyConsole(stderr=True)
_state = {"debug": False}

F = TypeVar("F", bound=Callable[..., Any])


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
    3 internal error, 130 interrupted, 143 terminated. --debug shows tracebacks.
    """
    _state["debug"] = debug


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that every clean-up of Ctrl-C runs."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _os_error_line(exc: OSError) -> str:
    """``PATH: reason`` for an OS error on a user's path."""
    reason = exc.strerror or _one_line(exc)
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
            if _state["debug"]:
                raise
            typer.echo("terminated", err=True)
            raise typer.Exit(EXIT_TERMINATED) from None
        except KeyboardInterrupt:
            if _state["debug"]:
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
            if _state["debug"]:
                raise
            typer.echo(f"error: {_one_line(exc)}", err=True)
            raise typer.Exit(EXIT_ERROR) from None
        except OSError as exc:
            if _state["debug"]:
                raise
            typer.echo(f"error: {_os_error_line(exc)}", err=True)
            raise typer.Exit(EXIT_ERROR) from None
        except Exception as exc:
            if _state["debug"]:
                raise
            typer.echo(f"internal error: {type(exc).__name__}: {_one_line(exc)} "
                       f"(run with --debug for the traceback)", err=True)
            raise typer.Exit(EXIT_INTERNAL) from None
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    return wrapper  # type: ignore[return-value]


def usage_error(message: str, option: Optional[str] = None) -> typer.BadParameter:
    """A usage error (exit 2) about ``option``; raise it from a command."""
    return typer.BadParameter(message, param_hint=f"'{option}'" if option else None)


def _alias(new: Any, old: Any, new_name: str, old_name: str) -> Any:
    """The value of an option given under its name or its old (hidden) spelling."""
    if old is None:
        return new
    if new is not None and new != old:
        raise usage_error(f"{old_name} (the old name of {new_name}) and {new_name} disagree "
                          f"({old!r} vs {new!r})", new_name)
    return old


def print_json(obj: Any) -> None:
    """Print ``obj`` as JSON on stdout (numpy scalars and tuples handled)."""

    def default(o: Any) -> Any:
        if hasattr(o, "tolist"):
            return o.tolist()
        if hasattr(o, "__dict__"):
            return vars(o)
        return str(o)

    typer.echo(json.dumps(obj, indent=2, default=default))


def _file_size(value: Optional[str]) -> Optional[int]:
    """``--max-file-size`` (``256M``, ``1G``, bytes) as bytes; a bad size is a usage error (exit 2)."""
    if value is None:
        return None
    from cbr.logs.source import parse_size

    try:
        return parse_size(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


MAX_FILE_SIZE_HELP = "Skip (and list) log files larger than this, e.g. 512M, 1G (default 256M)."


@contextmanager
def progress_bar(description: str, total: Optional[int] = None, enabled: bool = True) -> Iterator[Callable[..., None]]:
    """Yield a progress callback ``advance(n=1, total=None)``; draws a bar only on a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield lambda n=1, total=None: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=stderr.real(),
        transient=True,
    ) as progress:
        task = progress.add_task(description, total=total)

        def advance(n: int = 1, total: Optional[int] = None) -> None:
            if total is not None:
                progress.update(task, total=total)
            progress.advance(task, n)

        yield advance


def _cell(value: Any) -> str:
    return "" if value is None else (f"{value:.4g}" if isinstance(value, float) else str(value))


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", "").lstrip("±"))
    except ValueError:
        return False
    return True


def _rich_table(title: Optional[str], columns: list[str], rows: list[list[Any]], width: Optional[int] = None) -> Any:
    """A table whose numbers are never cut, wrapped or dropped in ``width`` columns (default:
    the terminal's, 80 in a pipe): a number column is as wide as its widest number, text
    folds onto more lines, and columns that do not fit go to a second table (the first
    column repeated) instead of being cropped.
    """
    from rich.console import Group
    from rich.table import Table

    cells = [[_cell(v) for v in row] for row in rows]
    n = len(columns)
    numeric = []
    need = []
    for i, c in enumerate(columns):
        values = [row[i] for row in cells if i < len(row) and row[i]]
        numeric.append(bool(values) and all(_is_number(v) for v in values))
        need.append(max([len(str(c)), *(len(v) for v in values)]))
    width = width or stdout.width or 80

    def cost(i: int) -> int:  # characters a column takes: text may fold down to 16
        return (need[i] if numeric[i] or i == 0 else min(need[i], 16)) + 3

    groups: list[list[int]] = []
    current: list[int] = []
    used = 1 + cost(0)
    for i in range(1, n):
        if current and used + cost(i) > width:
            groups.append(current)
            current, used = [], 1 + cost(0)
        current.append(i)
        used += cost(i)
    groups.append(current)
    tables = []
    for k, group in enumerate(groups):
        table = Table(title=title if k == 0 else None, title_justify="left")
        for i in [0, *group] if n else []:
            if numeric[i]:
                table.add_column(str(columns[i]), justify="right", no_wrap=True, min_width=need[i])
            else:
                table.add_column(str(columns[i]), no_wrap=i == 0, overflow="fold",
                                 min_width=need[i] if i == 0 else None)
        for row in cells:
            table.add_row(*(row[i] if i < len(row) else "" for i in [0, *group]))
        tables.append(table)
    return tables[0] if len(tables) == 1 else Group(*tables)


# ---------------------------------------------------------------------------
# Command groups. Each command lives in its own section below.
# ---------------------------------------------------------------------------
logs_app = typer.Typer(help="Read hand-history logs.", no_args_is_help=True, rich_markup_mode=None)
casebase_app = typer.Typer(help="Look inside case bases.", no_args_is_help=True, rich_markup_mode=None)
plugins_app = typer.Typer(help="The plugin store.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(logs_app, name="logs")
app.add_typer(casebase_app, name="casebase")
app.add_typer(plugins_app, name="plugins")


def _known_log_format(fmt: Optional[str], option: str = "--log-format") -> Optional[str]:
    """``fmt`` if it names a parser plugin (``cbr.parsers``), else a usage error listing them."""
    if fmt is None:
        return None
    from cbr.plugins import available

    known = available("cbr.parsers")
    if fmt not in known:
        raise usage_error(f"unknown log format {fmt!r}; known formats: {', '.join(known)}", option)
    return fmt


# ---- cbr hand (issue 2) ----------------------------------------------------
@app.command("hand")
@guarded
def hand_command(
    hole: Annotated[str, typer.Argument(help="Two hole cards, e.g. AhKd.")],
    board: Annotated[Optional[str], typer.Argument(help="Board of 3-5 cards, e.g. 3h4sJd (omit before the flop).")] = None,
    opponents: Annotated[Optional[int], typer.Option("--opponents", min=1, max=9,
                                                     help="Random opponents, 1..9 [default: 1].")] = None,
    opponents_n: Annotated[Optional[int], typer.Option("-n", min=1, max=9, hidden=True)] = None,
    trials: Annotated[int, typer.Option("--trials", "-t", min=1, max=MAX_TRIALS, help="Monte Carlo deals for win/tie/lose.")] = 50_000,
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of the Monte Carlo deals.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Hand strength, potentials, EHS and win/tie/lose of a holding (preflop: rank and win/tie/lose)."""
    import evaluator_ext

    n_opponents = _alias(opponents, opponents_n, "--opponents", "-n")
    n_opponents = 1 if n_opponents is None else n_opponents
    s = evaluator_ext.hand_summary(hole, board or (), n_opponents=n_opponents, trials=trials, seed=seed)
    if as_json:
        print_json(s)
        return

    def num(value: Any) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    vs = f"vs {s['opponents']} opponent{'s' if s['opponents'] != 1 else ''}"
    how = "exact enumeration" if s["exact"] else f"Monte Carlo, {s['trials']:,} deals, seed {s['seed']}"
    lines = [
        f"hole       {s['hole']}   class {s['preflop_class']}, preflop rank {s['preflop_rank']} of 169",
        f"board      {s['board'] or '(preflop)'}",
        f"category   {s['category'] or 'n/a'}",
        f"HS         {num(s['hs'])}   ({vs})",
        f"PPOT       {num(s['ppot'])}",
        f"NPOT       {num(s['npot'])}",
        f"EHS        {num(s['ehs'])}   ({vs})",
        f"E[HS^2]    {num(s['ehs2'])}",
        f"win        {s['win']:.4f}   ({vs}; {how})",
        f"tie        {s['tie']:.4f}",
        f"lose       {s['lose']:.4f}",
    ]
    typer.echo("\n".join(lines))


# ---- cbr match (issue 3) ---------------------------------------------------
@app.command("match")
@guarded
def match_command(
    players: Annotated[str, typer.Option("--players", "-p", help="Comma-separated bots, one per seat (2-10), e.g. ehs,call; options as NAME:KEY=VALUE, e.g. cbr:reuse=max-frequency,ehs (see `cbr plugins list`).")],
    hands: Annotated[int, typer.Option("--hands", "-n", min=1, max=MAX_HANDS, help="Hands to play (duplicate: rounded up to a multiple of the seats).")] = 1000,
    duplicate: Annotated[bool, typer.Option("--duplicate", help="Replay every deal with the seats rotated (removes card luck).")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the deals and of the bots' choices.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    log: Annotated[Optional[str], typer.Option("--log", help="Write the hands to this log: a new file in an existing folder, an existing file with --overwrite, or a named pipe (phh: a .phhs file or a directory). Links and devices are refused.")] = None,
    log_format: Annotated[Optional[str], typer.Option("--log-format", help="Format of the --log: acpc or phh [default: acpc].")] = None,
    log_format_old: Annotated[Optional[str], typer.Option("--format", hidden=True)] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing --log file (atomically, when the match ends).")] = False,
    retain: Annotated[bool, typer.Option("--retain", help="The cbr bots keep every hand in their case base as it ends (their own decisions, and others' shown at a showdown), durably. The shipped default case base is never written: use --retain-into.")] = False,
    retain_into: Annotated[Optional[str], typer.Option("--retain-into", metavar="NAME", help="Retain into case base NAME (./casebases/NAME or a path), created as a copy of the bot's case base on first use; the cbr bots play from it. Implies --retain.")] = None,
) -> None:
    """Play bots against each other; results in sb/h and mbb/h with 95% confidence intervals.

    With --retain (or --retain-into NAME) the case-based bots learn during the match: each
    hand is kept in their case base as it ends and seen by their next decision.

    Example: cbr match --players ehs,call --hands 200 --duplicate
    """
    from contextlib import nullcontext

    from cbr.policies.spec import PolicySpecError, policy_from_spec, split_policy_specs

    fmt = _alias(log_format, log_format_old, "--log-format", "--format")
    names = split_policy_specs(players)
    for p in names:  # checks the name and the options; opens nothing (bots read their files on first use)
        try:
            policy_from_spec(p)
        except PolicySpecError as exc:
            raise usage_error(str(exc), "--players") from None
    if not 2 <= len(names) <= 10:
        raise usage_error(f"a match seats 2 to 10 bots, got {len(names)}", "--players")
    if fmt is not None and fmt not in ("acpc", "phh"):
        raise usage_error(f"unknown log format {fmt!r}; use acpc or phh", "--log-format")
    if log is None and (fmt is not None or overwrite):
        raise usage_error("--log-format and --overwrite need --log", "--log")
    fmt = fmt or "acpc"

    from cbr.logs.writers import open_log
    from cbr.match import run_match

    n = len(names)
    total = -(-hands // n) * n if duplicate else hands
    writer = open_log(log, fmt, overwrite=overwrite) if log else nullcontext()
    with writer as w, progress_bar("playing", total=total, enabled=not as_json) as advance:
        result = run_match(names, hands, duplicate=duplicate, seed=seed, progress=advance, log=w,
                           retain=retain, retain_into=retain_into)
    if as_json:
        print_json(result.to_dict())
        return
    title = (f"{result.game.name}: {result.hands} hands"
             + (f" (duplicate, {result.deals} deals)" if result.duplicate else "") + f", seed {seed}")
    rows = [[str(s), p.name, f"{p.total:+.0f}", f"{p.sb_per_hand:+.3f}", f"{p.sb_ci:.3f}",
             f"{p.mbb_per_hand:+.0f}", f"{p.mbb_ci:.0f}"] for s, p in enumerate(result.players)]
    stdout.print(_rich_table(title, ["seat", "bot", "chips", "sb/h", "± 95%", "mbb/h", "± 95%"], rows))
    if log:
        stdout.print(f"log written to {log} ({fmt})", markup=False, highlight=False, soft_wrap=True)
    if result.match_id:
        stdout.print(f"retained {result.retained:,} cases (match {result.match_id})", markup=False,
                     highlight=False, soft_wrap=True)


# ---- cbr logs inspect (issue 3) --------------------------------------------
@logs_app.command("inspect")
@guarded
def logs_inspect(
    paths: Annotated[list[str], typer.Argument(help="Log files or folders (walked recursively).")],
    log_format: Annotated[Optional[str], typer.Option("--log-format", "-f",
                                                      help="Force a parser: the format of the logs read (acpc, phh, irc, pokerstars).")] = None,
    log_format_old: Annotated[Optional[str], typer.Option("--format", hidden=True)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    max_issues: Annotated[int, typer.Option("--max-issues", min=0,
                                            help="List at most this many skipped hands.")] = 20,
    max_file_size: Annotated[Optional[int], typer.Option("--max-file-size", parser=_file_size, metavar="SIZE",
                                                         help=MAX_FILE_SIZE_HELP)] = None,
) -> None:
    """Read logs, replay every hand, and report hands, skipped hands, decisions and players."""
    from cbr.logs.inspect import inspect_logs
    from cbr.logs.source import DEFAULT_MAX_FILE_SIZE

    fmt = _known_log_format(_alias(log_format, log_format_old, "--log-format", "--format"))
    with progress_bar("reading logs", enabled=not as_json) as advance:
        report = inspect_logs(paths, format=fmt, progress=advance,
                              max_file_size=max_file_size or DEFAULT_MAX_FILE_SIZE)
    if as_json:
        data = report.to_dict()
        data["skipped"] = data["skipped"][:max_issues]
        print_json(data)
    else:
        stdout.print(f"sources read: {report.sources}")
        stdout.print(f"hands read: {report.hands_read}   skipped: {report.hands_skipped}")
        stdout.print(f"decisions: {report.decisions}   with known hole cards: {report.decisions_known}")
        stdout.print(f"players: {report.players}")
        for street, kinds in report.actions_per_street.items():
            stdout.print(f"  {street:<8} fold {kinds['f']:>7}  check/call {kinds['c']:>7}  bet/raise {kinds['r']:>7}")
        for name, counts in sorted(report.per_format.items()):
            stdout.print(f"  format {name}: {counts['hands']} hands, {counts['skipped']} skipped, "
                         f"{counts['sources']} sources")
        for issue in report.notes[:max_issues]:
            stdout.print(f"note: {issue}", markup=False, highlight=False, soft_wrap=True)
        if report.skipped:
            stdout.print("skipped hands:")
            for issue in report.skipped[:max_issues]:
                stdout.print(f"  {issue}", markup=False, highlight=False, soft_wrap=True)
            rest = report.hands_skipped - max_issues
            if rest > 0:
                stdout.print(f"  ... and {rest} more (--max-issues to see them)")
    if report.hands_read == 0:
        typer.echo(f"error: no hand could be read from {', '.join(paths)} "
                   f"({report.hands_skipped} skipped)", err=True)
        raise typer.Exit(1)


# ---- cbr build / query / casebase / plugins (issue 4) ----------------------
@casebase_app.command("inspect")
@guarded
def casebase_inspect(
    name: Annotated[str, typer.Argument(help="A case-base directory, a name under ./casebases/, or 'default'.")],
    sql: Annotated[Optional[str], typer.Option("--sql", help="Run SQL on the views `cases` and `cases_<street>`.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=0, max=10**9,
                                       help="With --sql: print at most this many rows.")] = 100,
    all_rows: Annotated[bool, typer.Option("--all", help="With --sql: print every row (no --limit).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Counts per street, action and source, and feature distributions; or run SQL.

    Warns (on stderr) when an action kind is missing or rare (< 1%) on a street: a case base
    built from logs that show cards only at showdown has no folds and can never recommend one.
    With --sql, at most --limit rows (100) are printed unless --all; Ctrl-C stops a query (exit 130).
    """
    from cbr.store import CaseBase, inspect, resolve_casebase

    cb = CaseBase.open(resolve_casebase(name))
    try:
        if sql is not None:
            columns, rows, truncated = cb.sql_rows(sql, None if all_rows else limit)
            if as_json:
                print_json([dict(zip(columns, r)) for r in rows])
            else:
                stdout.print(_rich_table(None, columns, [list(r) for r in rows]))
            if truncated:
                stderr.print(f"(first {limit} rows shown; --limit N or --all for more)", soft_wrap=True)
            return
        info = inspect(cb)
    finally:
        cb.close()
    if as_json:
        print_json(info)
        return
    stdout.print(f"[bold]{info['name']}[/bold]  {info['path']}")
    stdout.print(f"schema {info['schema_version']}, features {info['feature_set']}, engine {info['engine_version']}, "
                 f"created {info['created']}, games: {', '.join(g for g in info['games'] if g) or '-'}")
    streets = list(info["counts"])
    stdout.print(_rich_table(f"{info['total']} cases", ["street", "total", "fold", "check/call", "bet/raise",
                                                        "with outcome", "parts"],
                             [[s, c["total"], c["f"], c["c"], c["r"], info["outcomes"][s]["known"], info["parts"][s]]
                              for s, c in info["counts"].items()]))
    stdout.print(_rich_table("cases per source", ["source", *streets],
                             [[src or "-", *(n[s] for s in streets)] for src, n in info["sources"].items()]))
    for s, feats in info["features"].items():
        if not info["counts"][s]["total"]:
            continue
        stats = ["min", "q25", "q50", "mean", "q75", "max"]  # --json has q05 and q95 too
        stdout.print(_rich_table(f"{s} features", ["feature", *stats],
                                 [[f, *(v[k] for k in stats)] for f, v in feats.items()]))
    for w in info["warnings"]:
        stderr.print(f"warning: {w}", markup=False, highlight=False, soft_wrap=True)


@casebase_app.command("merge")
@guarded
def casebase_merge(
    inputs: Annotated[list[str], typer.Argument(help="Two or more case bases (directories or names under ./casebases/).")],
    out: Annotated[str, typer.Option("--out", "-o", help="The merged case base to write.")],
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing case base (atomically, at the end).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Merge case bases of the same feature set, schema and similarity into a new one.

    Streams the cases part by part (never a whole case base in memory); new case ids in
    input order; the indexes are rebuilt. OUT appears only when the merge succeeded.
    """
    if len(inputs) < 2:
        raise usage_error("give at least two case bases to merge", "INPUTS")
    _check_out_dir(out)
    from cbr.store import resolve_casebase
    from cbr.store.merge import merge_casebases

    report = merge_casebases([resolve_casebase(i) for i in inputs], out, overwrite=overwrite)
    for warning in report.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        print_json(report.to_dict())
        return
    per = ", ".join(f"{s} {n}" for s, n in report.cases_per_street.items())
    stdout.print(f"merged {len(inputs)} case bases into {out}: {report.cases} cases ({per}), {report.seconds:.1f} s",
                 soft_wrap=True)


@plugins_app.command("list")
@guarded
def plugins_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Installed plugins per group; a plugin that fails to load is shown with its error."""
    from dataclasses import asdict

    from cbr.plugins import describe

    infos = describe()
    if as_json:
        print_json([{**asdict(i), "ok": i.ok} for i in infos])
        return
    rows = [[i.group, i.name, i.target, i.distribution, "ok" if i.ok else f"ERROR: {i.error}"] for i in infos]
    stdout.print(_rich_table(f"{len(infos)} plugins", ["group", "name", "target", "package", "status"], rows))
    broken = [i for i in infos if not i.ok]
    if broken:
        stderr.print(f"{len(broken)} plugin(s) failed to load: {', '.join(f'{i.group}:{i.name}' for i in broken)}")


# ---- cbr build / cbr query (issue 4) ----------------------------------------
GAME_HELP = ("Game: a preset name (e.g. holdem.limit.2p), a GameDef JSON file (.json), inline GameDef "
             "JSON ('{...}') or an ACPC .game file.")


def _load_game(spec: str) -> Any:
    """A game from a preset name, inline GameDef JSON (``{...}``), a GameDef JSON file or an
    ACPC ``.game`` file; every problem is one :class:`ConfigError` naming the file.

    >>> _load_game("holdem.limit.2p").n_players
    2
    >>> _load_game(json.dumps(_load_game("holdem.limit.2p").to_dict())).name    # inline JSON
    'holdem.limit.2p'
    """
    from pathlib import Path

    from cbr.errors import ConfigError
    from cbr.game.gamedef import GameDef, preset

    text = spec.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"--game: inline JSON is not valid JSON ({exc})") from None
        return _game_from_dict(data, "--game (inline JSON)")
    path = Path(spec)
    if path.exists():
        if path.is_dir():
            raise ConfigError(f"game file {path} is a directory")
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read the game file {path}: {exc.strerror or exc}") from None
        try:
            body = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ConfigError(f"game file {path} is not UTF-8 text") from None
        if path.suffix.lower() == ".json" or body.lstrip().startswith("{"):
            try:
                data = json.loads(body)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"game file {path}: not JSON ({exc})") from None
            return _game_from_dict(data, f"game file {path}")
        try:
            return GameDef.from_acpc_game(body, name=path.stem)
        except (ValueError, TypeError, KeyError, IndexError) as exc:  # CBR errors are ValueErrors too
            raise ConfigError(f"game file {path}: not an ACPC game definition ({_one_line(exc)})") from None
    try:
        return preset(spec)
    except ConfigError as exc:
        if any(sep in spec for sep in "/\\") or path.suffix.lower() in (".json", ".game"):
            raise ConfigError(f"unknown game {spec!r}: no such game file, and no preset of that name") from None
        raise exc from None


def _game_from_dict(data: Any, where: str) -> Any:
    from cbr.errors import ConfigError
    from cbr.game.gamedef import GameDef

    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a JSON object (a GameDef), got {type(data).__name__}")
    try:
        return GameDef.from_dict(data)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        raise ConfigError(f"{where}: not a game definition ({_one_line(exc)})") from None


def _load_similarity(spec: str, feature_set: str) -> Any:
    """Read and check a similarity TOML before a build: a ``SimilarityConfig`` that covers
    exactly the feature set's columns; errors name the user's file."""
    from pathlib import Path

    from cbr.errors import ConfigError
    from cbr.game.gamedef import STREETS
    from cbr.plugins import load
    from cbr.similarity import SimilarityConfig

    path = Path(spec)
    if not path.exists():
        raise ConfigError(f"similarity config {path} does not exist")
    if not path.is_file():
        raise ConfigError(f"similarity config {path} is not a file")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read the similarity config {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"similarity config {path} is not UTF-8 text") from None
    try:
        config = SimilarityConfig.from_toml(text if "\n" in text or "=" in text else text + "\n")
    except ConfigError as exc:
        message = str(exc).removeprefix("similarity config: ")
        raise ConfigError(f"similarity config {path}: {message}") from None
    fs = load("cbr.features", feature_set)
    fs = fs() if isinstance(fs, type) else fs
    for s in STREETS:
        have, want = list(config.street(s).features), list(fs.feature_names(s))
        if have != want:
            raise ConfigError(f"similarity config {path}: {s} covers {have}, but feature set "
                              f"{feature_set!r} gives {want}")
    return config


def _usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _check_out_dir(out: str) -> None:
    """A case base cannot be written under a regular file (``-o file/cb``)."""
    from pathlib import Path

    from cbr.errors import OutputPathError
    from cbr.logs.writers import first_non_folder

    blocker = first_non_folder(Path(out))
    if blocker is not None:
        raise OutputPathError(f"cannot write the case base {out}: {blocker} is a file, not a folder")


@app.command("build")
@guarded
def build_command(
    logs: Annotated[list[str], typer.Argument(help="Log files or folders (ACPC, PHH, IRC database, PokerStars).")],
    out: Annotated[str, typer.Option("--out", "-o", help="The case base to write, e.g. casebases/NAME.")],
    feature_set: Annotated[str, typer.Option("--feature-set", help="Feature-set plugin (cbr.features).")] = "casper",
    only_players: Annotated[Optional[str], typer.Option("--only-players", help="Keep only these players' decisions (comma-separated player names in the logs).")] = None,
    only_players_old: Annotated[Optional[str], typer.Option("--players", hidden=True)] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", "-j", min=1, max=MAX_WORKERS, help="Processes computing features (default: one per CPU, at most 8; more than the CPUs are reduced to the CPUs). Any number gives the same case base.")] = None,
    log_format: Annotated[Optional[str], typer.Option("--log-format", help="Force the format of the logs read (acpc, phh, irc, pokerstars).")] = None,
    log_format_old: Annotated[Optional[str], typer.Option("--format", hidden=True)] = None,
    similarity: Annotated[Optional[str], typer.Option("--similarity", help="Similarity TOML file, checked before the build (default: CASPER's).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing case base (atomically, at the end).")] = False,
    max_issues: Annotated[int, typer.Option("--max-issues", min=0, help="Skipped hands to list.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    max_file_size: Annotated[Optional[int], typer.Option("--max-file-size", parser=_file_size, metavar="SIZE",
                                                         help=MAX_FILE_SIZE_HELP)] = None,
    scheduler: Annotated[Optional[str], typer.Option("--scheduler", metavar="ADDRESS|local", help="Run the per-file work on Dask: a scheduler's address (workers reading the logs at the same paths), or 'local' for a local cluster. Needs the [dask] extra; the case base is the same.")] = None,
    dask_workers: Annotated[Optional[int], typer.Option("--dask-workers", min=1, max=64, help="Worker processes of --scheduler local (default 2).")] = None,
) -> None:
    """Build a case base: every decision of a player with known hole cards becomes a case.

    Writes Parquet per street, a DuckDB catalog, a manifest and one faiss index per street.
    The case base appears only when the build succeeds; bad hands are skipped and listed.
    Ctrl-C or SIGTERM stops the workers and leaves nothing behind.
    """
    players = _alias(only_players, only_players_old, "--only-players", "--players")
    fmt = _known_log_format(_alias(log_format, log_format_old, "--log-format", "--format"))
    names = [p.strip() for p in players.split(",") if p.strip()] if players else None
    if players is not None and not names:
        raise usage_error("no player name given", "--only-players")
    if dask_workers is not None and scheduler != "local":
        raise usage_error("--dask-workers needs --scheduler local", "--dask-workers")
    if scheduler is not None and workers is not None:
        raise usage_error("--workers does not apply with --scheduler (the Dask workers compute)", "--workers")
    cpus = _usable_cpus()
    if workers is None:
        workers = min(cpus, 8)
    elif workers > cpus:
        typer.echo(f"note: --workers {workers} reduced to {cpus} (the CPUs this process may use)", err=True)
        workers = cpus
    _check_out_dir(out)
    sim = _load_similarity(similarity, feature_set) if similarity is not None else None

    from cbr.build import build_casebase
    from cbr.logs.source import DEFAULT_MAX_FILE_SIZE

    options = dict(feature_set=feature_set, players=names, format=fmt, similarity=sim, overwrite=overwrite,
                   max_file_size=max_file_size or DEFAULT_MAX_FILE_SIZE)
    with progress_bar("building", enabled=not as_json) as advance:
        if scheduler is not None:  # Dask is imported only here
            from cbr.dask_build import build_casebase_on_dask

            report = build_casebase_on_dask(logs, out, scheduler=scheduler, dask_workers=dask_workers or 2,
                                            progress=advance, **options)
        else:
            report = build_casebase(logs, out, workers=workers, progress=advance, **options)
    for warning in report.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        print_json(report.to_dict())
        return
    per = ", ".join(f"{s} {n}" for s, n in report.cases_per_street.items())
    stdout.print(f"built {out}: {report.cases} cases ({per}) from {report.hands} hands in "
                 f"{report.sources} source(s), {report.seconds:.1f} s ({report.hands_per_second:.0f} hands/s)",
                 soft_wrap=True)
    if report.skipped:
        stdout.print(f"{len(report.skipped)} hand(s) skipped:")
        for issue in report.skipped[:max_issues]:
            stdout.print(f"  {issue.where}: {issue.reason}", markup=False, highlight=False, soft_wrap=True)
        if len(report.skipped) > max_issues:
            stdout.print(f"  ... and {len(report.skipped) - max_issues} more (--max-issues, --json)")


_FLAG = ""  # a flag shows no <bool> value in --help


@app.command("query")
@guarded
def query_command(
    casebase: Annotated[str, typer.Option("--casebase", "-c", help="Case base: a directory, a name under ./casebases/, or 'default' (embedded).")] = "default",
    matchstate: Annotated[Optional[str], typer.Option("--matchstate", help="An ACPC MATCHSTATE string; '-' reads one per line from stdin. Its game comes from --game.")] = None,
    matchstate_file: Annotated[Optional[str], typer.Option("--matchstate-file", help="A file of MATCHSTATE lines ('-': stdin); one answer per line.")] = None,
    game: Annotated[str, typer.Option("--game", help="Game for --matchstate (and options): preset name, GameDef JSON or ACPC .game file.")] = "holdem.limit.2p",
    hole: Annotated[Optional[str], typer.Option("--hole", help="Your hole cards, e.g. AdQc.")] = None,
    board: Annotated[Optional[str], typer.Option("--board", help="Board cards: none (pre-flop), 3, 4 or 5.")] = None,
    dealt: Annotated[Optional[int], typer.Option("--dealt", min=2, max=12, help="Players dealt in (default: the game's seats).")] = None,
    players: Annotated[Optional[int], typer.Option("--players", min=2, max=12, hidden=True, help="Old name of --dealt.")] = None,
    in_hand: Annotated[Optional[int], typer.Option("--in-hand", help="Players not folded, you included (default: all dealt).")] = None,
    position: Annotated[Optional[int], typer.Option("--position", help="Your place in this round's order among players in hand: 0 = first to act.")] = None,
    to_act: Annotated[Optional[int], typer.Option("--to-act", help="Players still to act after you this round.")] = None,
    committed: Annotated[Optional[float], typer.Option("--committed", help="Bets you already put in this round (pre-flop the small blind is 0.5).")] = None,
    to_call: Annotated[Optional[float], typer.Option("--to-call", help="Bets you must add to call.")] = None,
    pot: Annotated[Optional[float], typer.Option("--pot", help="Pot before your action, in small bets.")] = None,
    prev_bets: Annotated[Optional[int], typer.Option("--prev-bets", help="Bets and raises made in the previous round (pre-flop the big blind counts as the first bet: a limped pot has 1).")] = None,
    weighted: Annotated[bool, typer.Option("--weighted", metavar=_FLAG, help="Weight actions by similarity (default: the case base's setting).")] = False,
    unweighted: Annotated[bool, typer.Option("--unweighted", metavar=_FLAG, help="Count every retrieved action once.")] = False,
    top: Annotated[int, typer.Option("--top", min=0, help="Cases to show.")] = 5,
    explain: Annotated[bool, typer.Option("--explain", metavar=_FLAG, help="Show each case's own feature values and local similarities.")] = False,
    as_json: Annotated[bool, typer.Option("--json", metavar=_FLAG, help="Print JSON (all retrieved cases with --explain; JSON lines for several MATCHSTATEs).")] = False,
    memory_map: Annotated[bool, typer.Option("--memory-map", metavar=_FLAG, help="Map the street's saved index instead of loading the street: for case bases larger than memory (same answers; the saved index must cover every case).")] = False,
    opponent: Annotated[Optional[list[str]], typer.Option("--opponent", metavar="AGG,TIGHT,RISK|NAME", help="For a casper-opp case base: the player model of an opponent still in the hand, in position order (repeat per opponent; the rest stay at the defaults 0.14,0.74,0.39): three values in 0..1, or a player's name in --models.")] = None,
    models: Annotated[Optional[str], typer.Option("--models", help="Model store (cbr players build) where --opponent NAME is looked up.")] = None,
) -> None:
    """The (fold, check/call, bet/raise) probabilities for a situation, and the cases behind them.

    Describe the situation with --matchstate (+ --game), or with --hole/--board and the
    betting options; options left out take the spot reached with the fewest actions, and a
    spot no legal hand reaches is refused naming the option to change.

    Example: cbr query --hole AdQc --board 3h4cJh --position 1 --to-call 1 --pot 5
    """
    from cbr.store import CaseBase, resolve_casebase

    described = {"--hole": hole, "--board": board, "--dealt": dealt, "--players": players, "--in-hand": in_hand,
                 "--position": position, "--to-act": to_act, "--committed": committed, "--to-call": to_call,
                 "--pot": pot, "--prev-bets": prev_bets}
    given = [name for name, value in described.items() if value is not None]
    if weighted and unweighted:
        raise typer.BadParameter("give --weighted or --unweighted, not both")
    if dealt is not None and players is not None:
        raise typer.BadParameter("--players is the old name of --dealt: give one of them")
    if matchstate is not None and matchstate_file is not None:
        raise typer.BadParameter("give --matchstate or --matchstate-file, not both")
    source = matchstate_file if matchstate_file is not None else (matchstate if matchstate == "-" else None)
    if (matchstate is not None or matchstate_file is not None) and given:
        raise typer.BadParameter(f"a MATCHSTATE describes the whole situation: leave out {', '.join(given)}")
    weight = True if weighted else (False if unweighted else None)
    opponents = _opponent_models(opponent, models)
    g = _load_game(game)
    if source is not None:
        lines = _read_lines(source)
        cb = CaseBase.open(resolve_casebase(casebase), memory_map=memory_map)
        try:
            failed = _query_lines(cb, g, lines, weight, top, explain, as_json, opponents)
        finally:
            cb.close()
        if failed:
            typer.echo(f"error: {failed} of {len(lines)} line(s) could not be answered", err=True)
            raise typer.Exit(1)
        return
    dp = _query_situation(g, matchstate, hole, board, dealt if dealt is not None else players, in_hand, position,
                          to_act, committed, to_call, pot, prev_bets)
    cb = CaseBase.open(resolve_casebase(casebase), memory_map=memory_map)
    try:
        ans = _answer(cb, dp, weight, opponents)
    finally:
        cb.close()
    for warning in ans.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        print_json(ans.to_dict(top=None if explain else top))
        return
    _print_answer(ans, top, explain)


def _answer(cb: Any, dp: Any, weighted: Optional[bool], opponents: Optional[list] = None) -> Any:
    from cbr.query import answer

    return answer(cb, dp, weighted=weighted, opponents=opponents)


def _opponent_models(given: Optional[list[str]], models: Optional[str]) -> Optional[list[tuple[float, ...]]]:
    """``cbr query --opponent``: each value is AGG,TIGHT,RISK or a player's name in ``--models``."""
    if models is not None and not given:
        raise typer.BadParameter("--models names the store where --opponent NAME is looked up: give --opponent too")
    if not given:
        return None
    parsed: list = []
    for text in given:
        parts = text.split(",")
        if len(parts) == 3 and all(_is_number(p) for p in parts):
            parsed.append(tuple(float(p) for p in parts))
        elif len(parts) != 1:
            raise typer.BadParameter(f"--opponent {text!r}: give three values AGG,TIGHT,RISK in 0..1 "
                                     "or a player's name in --models")
        elif models is None:
            raise typer.BadParameter(f"--opponent {text!r} is a name: give --models STORE to look it up "
                                     "(or give AGG,TIGHT,RISK)")
        else:
            parsed.append(text)
    if all(isinstance(p, tuple) for p in parsed):
        return parsed
    from cbr.models.store import ModelStore
    from cbr.policies.opponents import model_values

    with ModelStore.open(models, read_only=True) as store:
        known = store.players()
        for i, name in enumerate(parsed):
            if isinstance(name, tuple):
                continue
            if name not in known:
                raise typer.BadParameter(f"--opponent {name!r}: no such player in {models} "
                                         f"({len(known)} players; see cbr players inspect --store {models})")
            parsed[i] = model_values(store.model(name))
    return parsed


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", "").lstrip("±"))
    except ValueError:
        return False
    return True


def _rich_table(title: Optional[str], columns: list[str], rows: list[list[Any]], width: Optional[int] = None) -> Any:
    """A table whose numbers are never cut, wrapped or dropped in ``width`` columns (default:
    the terminal's, 80 in a pipe): a number column is as wide as its widest number, text
    folds onto more lines, and columns that do not fit go to a second table (the first
    column repeated) instead of being cropped.
    """
    from rich.console import Group
    from rich.table import Table

    cells = [[_cell(v) for v in row] for row in rows]
    n = len(columns)
    numeric = []
    need = []
    for i, c in enumerate(columns):
        values = [row[i] for row in cells if i < len(row) and row[i]]
        numeric.append(bool(values) and all(_is_number(v) for v in values))
        need.append(max([len(str(c)), *(len(v) for v in values)]))
    width = width or stdout.width or 80

    def cost(i: int) -> int:  # characters a column takes: text may fold down to 16
        return (need[i] if numeric[i] or i == 0 else min(need[i], 16)) + 3

    groups: list[list[int]] = []
    current: list[int] = []
    used = 1 + cost(0)
    for i in range(1, n):
        if current and used + cost(i) > width:
            groups.append(current)
            current, used = [], 1 + cost(0)
        current.append(i)
        used += cost(i)
    groups.append(current)
    tables = []
    for k, group in enumerate(groups):
        table = Table(title=title if k == 0 else None, title_justify="left")
        for i in [0, *group] if n else []:
            if numeric[i]:
                table.add_column(str(columns[i]), justify="right", no_wrap=True, min_width=need[i])
            else:
                table.add_column(str(columns[i]), no_wrap=i == 0, overflow="fold",
                                 min_width=need[i] if i == 0 else None)
        for row in cells:
            table.add_row(*(row[i] if i < len(row) else "" for i in [0, *group]))
        tables.append(table)
    return tables[0] if len(tables) == 1 else Group(*tables)


# ---------------------------------------------------------------------------
# Command groups. Each command lives in its own section below.
# ---------------------------------------------------------------------------
logs_app = typer.Typer(help="Read hand-history logs.", no_args_is_help=True, rich_markup_mode=None)
casebase_app = typer.Typer(help="Look inside case bases.", no_args_is_help=True, rich_markup_mode=None)
plugins_app = typer.Typer(help="The plugin store.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(logs_app, name="logs")
app.add_typer(casebase_app, name="casebase")
app.add_typer(plugins_app, name="plugins")


def _known_log_format(fmt: Optional[str], option: str = "--log-format") -> Optional[str]:
    """``fmt`` if it names a parser plugin (``cbr.parsers``), else a usage error listing them."""
    if fmt is None:
        return None
    from cbr.plugins import available

    known = available("cbr.parsers")
    if fmt not in known:
        raise usage_error(f"unknown log format {fmt!r}; known formats: {', '.join(known)}", option)
    return fmt


# ---- cbr hand (issue 2) ----------------------------------------------------
@app.command("hand")
@guarded
def hand_command(
    hole: Annotated[str, typer.Argument(help="Two hole cards, e.g. AhKd.")],
    board: Annotated[Optional[str], typer.Argument(help="Board of 3-5 cards, e.g. 3h4sJd (omit before the flop).")] = None,
    opponents: Annotated[Optional[int], typer.Option("--opponents", min=1, max=9,
                                                     help="Random opponents, 1..9 [default: 1].")] = None,
    opponents_n: Annotated[Optional[int], typer.Option("-n", min=1, max=9, hidden=True)] = None,
    trials: Annotated[int, typer.Option("--trials", "-t", min=1, max=MAX_TRIALS, help="Monte Carlo deals for win/tie/lose.")] = 50_000,
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of the Monte Carlo deals.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Hand strength, potentials, EHS and win/tie/lose of a holding (preflop: rank and win/tie/lose)."""
    import evaluator_ext

    n_opponents = _alias(opponents, opponents_n, "--opponents", "-n")
    n_opponents = 1 if n_opponents is None else n_opponents
    s = evaluator_ext.hand_summary(hole, board or (), n_opponents=n_opponents, trials=trials, seed=seed)
    if as_json:
        print_json(s)
        return

    def num(value: Any) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    vs = f"vs {s['opponents']} opponent{'s' if s['opponents'] != 1 else ''}"
    how = "exact enumeration" if s["exact"] else f"Monte Carlo, {s['trials']:,} deals, seed {s['seed']}"
    lines = [
        f"hole       {s['hole']}   class {s['preflop_class']}, preflop rank {s['preflop_rank']} of 169",
        f"board      {s['board'] or '(preflop)'}",
        f"category   {s['category'] or 'n/a'}",
        f"HS         {num(s['hs'])}   ({vs})",
        f"PPOT       {num(s['ppot'])}",
        f"NPOT       {num(s['npot'])}",
        f"EHS        {num(s['ehs'])}   ({vs})",
        f"E[HS^2]    {num(s['ehs2'])}",
        f"win        {s['win']:.4f}   ({vs}; {how})",
        f"tie        {s['tie']:.4f}",
        f"lose       {s['lose']:.4f}",
    ]
    typer.echo("\n".join(lines))


# ---- cbr match (issue 3) ---------------------------------------------------
@app.command("match")
@guarded
def match_command(
    players: Annotated[str, typer.Option("--players", "-p", help="Comma-separated bots, one per seat (2-10), e.g. ehs,call; options as NAME:KEY=VALUE, e.g. cbr:reuse=max-frequency,ehs (see `cbr plugins list`).")],
    hands: Annotated[int, typer.Option("--hands", "-n", min=1, max=MAX_HANDS, help="Hands to play (duplicate: rounded up to a multiple of the seats).")] = 1000,
    duplicate: Annotated[bool, typer.Option("--duplicate", help="Replay every deal with the seats rotated (removes card luck).")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the deals and of the bots' choices.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    log: Annotated[Optional[str], typer.Option("--log", help="Write the hands to this log: a new file in an existing folder, an existing file with --overwrite, or a named pipe (phh: a .phhs file or a directory). Links and devices are refused.")] = None,
    log_format: Annotated[Optional[str], typer.Option("--log-format", help="Format of the --log: acpc or phh [default: acpc].")] = None,
    log_format_old: Annotated[Optional[str], typer.Option("--format", hidden=True)] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing --log file (atomically, when the match ends).")] = False,
    retain: Annotated[bool, typer.Option("--retain", help="The cbr bots keep every hand in their case base as it ends (their own decisions, and others' shown at a showdown), durably. The shipped default case base is never written: use --retain-into.")] = False,
    retain_into: Annotated[Optional[str], typer.Option("--retain-into", metavar="NAME", help="Retain into case base NAME (./casebases/NAME or a path), created as a copy of the bot's case base on first use; the cbr bots play from it. Implies --retain.")] = None,
) -> None:
    """Play bots against each other; results in sb/h and mbb/h with 95% confidence intervals.

    With --retain (or --retain-into NAME) the case-based bots learn during the match: each
    hand is kept in their case base as it ends and seen by their next decision.

    Example: cbr match --players ehs,call --hands 200 --duplicate
    """
    from contextlib import nullcontext

    from cbr.policies.spec import PolicySpecError, policy_from_spec, split_policy_specs

    fmt = _alias(log_format, log_format_old, "--log-format", "--format")
    names = split_policy_specs(players)
    for p in names:  # checks the name and the options; opens nothing (bots read their files on first use)
        try:
            policy_from_spec(p)
        except PolicySpecError as exc:
            raise usage_error(str(exc), "--players") from None
    if not 2 <= len(names) <= 10:
        raise usage_error(f"a match seats 2 to 10 bots, got {len(names)}", "--players")
    if fmt is not None and fmt not in ("acpc", "phh"):
        raise usage_error(f"unknown log format {fmt!r}; use acpc or phh", "--log-format")
    if log is None and (fmt is not None or overwrite):
        raise usage_error("--log-format and --overwrite need --log", "--log")
    fmt = fmt or "acpc"

    from cbr.logs.writers import open_log
    from cbr.match import run_match

    n = len(names)
    total = -(-hands // n) * n if duplicate else hands
    writer = open_log(log, fmt, overwrite=overwrite) if log else nullcontext()
    with writer as w, progress_bar("playing", total=total, enabled=not as_json) as advance:
        result = run_match(names, hands, duplicate=duplicate, seed=seed, progress=advance, log=w,
                           retain=retain, retain_into=retain_into)
    if as_json:
        print_json(result.to_dict())
        return
    title = (f"{result.game.name}: {result.hands} hands"
             + (f" (duplicate, {result.deals} deals)" if result.duplicate else "") + f", seed {seed}")
    rows = [[str(s), p.name, f"{p.total:+.0f}", f"{p.sb_per_hand:+.3f}", f"{p.sb_ci:.3f}",
             f"{p.mbb_per_hand:+.0f}", f"{p.mbb_ci:.0f}"] for s, p in enumerate(result.players)]
    stdout.print(_rich_table(title, ["seat", "bot", "chips", "sb/h", "± 95%", "mbb/h", "± 95%"], rows))
    if log:
        stdout.print(f"log written to {log} ({fmt})", markup=False, highlight=False, soft_wrap=True)
    if result.match_id:
        stdout.print(f"retained {result.retained:,} cases (match {result.match_id})", markup=False,
                     highlight=False, soft_wrap=True)


# ---- cbr logs inspect (issue 3) --------------------------------------------
@logs_app.command("inspect")
@guarded
def logs_inspect(
    paths: Annotated[list[str], typer.Argument(help="Log files or folders (walked recursively).")],
    log_format: Annotated[Optional[str], typer.Option("--log-format", "-f",
                                                      help="Force a parser: the format of the logs read (acpc, phh, irc, pokerstars).")] = None,
    log_format_old: Annotated[Optional[str], typer.Option("--format", hidden=True)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    max_issues: Annotated[int, typer.Option("--max-issues", min=0,
                                            help="List at most this many skipped hands.")] = 20,
    max_file_size: Annotated[Optional[int], typer.Option("--max-file-size", parser=_file_size, metavar="SIZE",
                                                         help=MAX_FILE_SIZE_HELP)] = None,
) -> None:
    """Read logs, replay every hand, and report hands, skipped hands, decisions and players."""
    from cbr.logs.inspect import inspect_logs
    from cbr.logs.source import DEFAULT_MAX_FILE_SIZE

    fmt = _known_log_format(_alias(log_format, log_format_old, "--log-format", "--format"))
    with progress_bar("reading logs", enabled=not as_json) as advance:
        report = inspect_logs(paths, format=fmt, progress=advance,
                              max_file_size=max_file_size or DEFAULT_MAX_FILE_SIZE)
    if as_json:
        data = report.to_dict()
        data["skipped"] = data["skipped"][:max_issues]
        print_json(data)
    else:
        stdout.print(f"sources read: {report.sources}")
        stdout.print(f"hands read: {report.hands_read}   skipped: {report.hands_skipped}")
        stdout.print(f"decisions: {report.decisions}   with known hole cards: {report.decisions_known}")
        stdout.print(f"players: {report.players}")
        for street, kinds in report.actions_per_street.items():
            stdout.print(f"  {street:<8} fold {kinds['f']:>7}  check/call {kinds['c']:>7}  bet/raise {kinds['r']:>7}")
        for name, counts in sorted(report.per_format.items()):
            stdout.print(f"  format {name}: {counts['hands']} hands, {counts['skipped']} skipped, "
                         f"{counts['sources']} sources")
        for issue in report.notes[:max_issues]:
            stdout.print(f"note: {issue}", markup=False, highlight=False, soft_wrap=True)
        if report.skipped:
            stdout.print("skipped hands:")
            for issue in report.skipped[:max_issues]:
                stdout.print(f"  {issue}", markup=False, highlight=False, soft_wrap=True)
            rest = report.hands_skipped - max_issues
            if rest > 0:
                stdout.print(f"  ... and {rest} more (--max-issues to see them)")
    if report.hands_read == 0:
        typer.echo(f"error: no hand could be read from {', '.join(paths)} "
                   f"({report.hands_skipped} skipped)", err=True)
        raise typer.Exit(1)


# ---- cbr build / query / casebase / plugins (issue 4) ----------------------
@casebase_app.command("inspect")
@guarded
def casebase_inspect(
    name: Annotated[str, typer.Argument(help="A case-base directory, a name under ./casebases/, or 'default'.")],
    sql: Annotated[Optional[str], typer.Option("--sql", help="Run SQL on the views `cases` and `cases_<street>`.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=0, max=10**9,
                                       help="With --sql: print at most this many rows.")] = 100,
    all_rows: Annotated[bool, typer.Option("--all", help="With --sql: print every row (no --limit).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Counts per street, action and source, and feature distributions; or run SQL.

    Warns (on stderr) when an action kind is missing or rare (< 1%) on a street: a case base
    built from logs that show cards only at showdown has no folds and can never recommend one.
    With --sql, at most --limit rows (100) are printed unless --all; Ctrl-C stops a query (exit 130).
    """
    from cbr.store import CaseBase, inspect, resolve_casebase

    cb = CaseBase.open(resolve_casebase(name))
    try:
        if sql is not None:
            columns, rows, truncated = cb.sql_rows(sql, None if all_rows else limit)
            if as_json:
                print_json([dict(zip(columns, r)) for r in rows])
            else:
                stdout.print(_rich_table(None, columns, [list(r) for r in rows]))
            if truncated:
                stderr.print(f"(first {limit} rows shown; --limit N or --all for more)", soft_wrap=True)
            return
        info = inspect(cb)
    finally:
        cb.close()
    if as_json:
        print_json(info)
        return
    stdout.print(f"[bold]{info['name']}[/bold]  {info['path']}")
    stdout.print(f"schema {info['schema_version']}, features {info['feature_set']}, engine {info['engine_version']}, "
                 f"created {info['created']}, games: {', '.join(g for g in info['games'] if g) or '-'}")
    streets = list(info["counts"])
    stdout.print(_rich_table(f"{info['total']} cases", ["street", "total", "fold", "check/call", "bet/raise",
                                                        "with outcome", "parts"],
                             [[s, c["total"], c["f"], c["c"], c["r"], info["outcomes"][s]["known"], info["parts"][s]]
                              for s, c in info["counts"].items()]))
    stdout.print(_rich_table("cases per source", ["source", *streets],
                             [[src or "-", *(n[s] for s in streets)] for src, n in info["sources"].items()]))
    for s, feats in info["features"].items():
        if not info["counts"][s]["total"]:
            continue
        stats = ["min", "q25", "q50", "mean", "q75", "max"]  # --json has q05 and q95 too
        stdout.print(_rich_table(f"{s} features", ["feature", *stats],
                                 [[f, *(v[k] for k in stats)] for f, v in feats.items()]))
    for w in info["warnings"]:
        stderr.print(f"warning: {w}", markup=False, highlight=False, soft_wrap=True)


@casebase_app.command("merge")
@guarded
def casebase_merge(
    inputs: Annotated[list[str], typer.Argument(help="Two or more case bases (directories or names under ./casebases/).")],
    out: Annotated[str, typer.Option("--out", "-o", help="The merged case base to write.")],
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing case base (atomically, at the end).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Merge case bases of the same feature set, schema and similarity into a new one.

    Streams the cases part by part (never a whole case base in memory); new case ids in
    input order; the indexes are rebuilt. OUT appears only when the merge succeeded.
    """
    if len(inputs) < 2:
        raise usage_error("give at least two case bases to merge", "INPUTS")
    _check_out_dir(out)
    from cbr.store import resolve_casebase
    from cbr.store.merge import merge_casebases

    report = merge_casebases([resolve_casebase(i) for i in inputs], out, overwrite=overwrite)
    for warning in report.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        print_json(report.to_dict())
        return
    per = ", ".join(f"{s} {n}" for s, n in report.cases_per_street.items())
    stdout.print(f"merged {len(inputs)} case bases into {out}: {report.cases} cases ({per}), {report.seconds:.1f} s",
                 soft_wrap=True)


@plugins_app.command("list")
@guarded
def plugins_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Installed plugins per group; a plugin that fails to load is shown with its error."""
    from dataclasses import asdict

    from cbr.plugins import describe

    infos = describe()
    if as_json:
        print_json([{**asdict(i), "ok": i.ok} for i in infos])
        return
    rows = [[i.group, i.name, i.target, i.distribution, "ok" if i.ok else f"ERROR: {i.error}"] for i in infos]
    stdout.print(_rich_table(f"{len(infos)} plugins", ["group", "name", "target", "package", "status"], rows))
    broken = [i for i in infos if not i.ok]
    if broken:
        stderr.print(f"{len(broken)} plugin(s) failed to load: {', '.join(f'{i.group}:{i.name}' for i in broken)}")


# ---- cbr build / cbr query (issue 4) ----------------------------------------
GAME_HELP = ("Game: a preset name (e.g. holdem.limit.2p), a GameDef JSON file (.json), inline GameDef "
             "JSON ('{...}') or an ACPC .game file.")


def _load_game(spec: str) -> Any:
    """A game from a preset name, inline GameDef JSON (``{...}``), a GameDef JSON file or an
    ACPC ``.game`` file; every problem is one :class:`ConfigError` naming the file.

    >>> _load_game("holdem.limit.2p").n_players
    2
    >>> _load_game(json.dumps(_load_game("holdem.limit.2p").to_dict())).name    # inline JSON
    'holdem.limit.2p'
    """
    from pathlib import Path

    from cbr.errors import ConfigError
    from cbr.game.gamedef import GameDef, preset

    text = spec.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"--game: inline JSON is not valid JSON ({exc})") from None
        return _game_from_dict(data, "--game (inline JSON)")
    path = Path(spec)
    if path.exists():
        if path.is_dir():
            raise ConfigError(f"game file {path} is a directory")
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read the game file {path}: {exc.strerror or exc}") from None
        try:
            body = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ConfigError(f"game file {path} is not UTF-8 text") from None
        if path.suffix.lower() == ".json" or body.lstrip().startswith("{"):
            try:
                data = json.loads(body)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"game file {path}: not JSON ({exc})") from None
            return _game_from_dict(data, f"game file {path}")
        try:
            return GameDef.from_acpc_game(body, name=path.stem)
        except (ValueError, TypeError, KeyError, IndexError) as exc:  # CBR errors are ValueErrors too
            raise ConfigError(f"game file {path}: not an ACPC game definition ({_one_line(exc)})") from None
    try:
        return preset(spec)
    except ConfigError as exc:
        if any(sep in spec for sep in "/\\") or path.suffix.lower() in (".json", ".game"):
            raise ConfigError(f"unknown game {spec!r}: no such game file, and no preset of that name") from None
        raise exc from None


def _game_from_dict(data: Any, where: str) -> Any:
    from cbr.errors import ConfigError
    from cbr.game.gamedef import GameDef

    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a JSON object (a GameDef), got {type(data).__name__}")
    try:
        return GameDef.from_dict(data)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        raise ConfigError(f"{where}: not a game definition ({_one_line(exc)})") from None


def _load_similarity(spec: str, feature_set: str) -> Any:
    """Read and check a similarity TOML before a build: a ``SimilarityConfig`` that covers
    exactly the feature set's columns; errors name the user's file."""
    from pathlib import Path

    from cbr.errors import ConfigError
    from cbr.game.gamedef import STREETS
    from cbr.plugins import load
    from cbr.similarity import SimilarityConfig

    path = Path(spec)
    if not path.exists():
        raise ConfigError(f"similarity config {path} does not exist")
    if not path.is_file():
        raise ConfigError(f"similarity config {path} is not a file")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read the similarity config {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"similarity config {path} is not UTF-8 text") from None
    try:
        config = SimilarityConfig.from_toml(text if "\n" in text or "=" in text else text + "\n")
    except ConfigError as exc:
        message = str(exc).removeprefix("similarity config: ")
        raise ConfigError(f"similarity config {path}: {message}") from None
    fs = load("cbr.features", feature_set)
    fs = fs() if isinstance(fs, type) else fs
    for s in STREETS:
        have, want = list(config.street(s).features), list(fs.feature_names(s))
        if have != want:
            raise ConfigError(f"similarity config {path}: {s} covers {have}, but feature set "
                              f"{feature_set!r} gives {want}")
    return config


def _usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _check_out_dir(out: str) -> None:
    """A case base cannot be written under a regular file (``-o file/cb``)."""
    from pathlib import Path

    from cbr.errors import OutputPathError
    from cbr.logs.writers import first_non_folder

    blocker = first_non_folder(Path(out))
    if blocker is not None:
        raise OutputPathError(f"cannot write the case base {out}: {blocker} is a file, not a folder")


@app.command("build")
@guarded
def build_command(
    logs: Annotated[list[str], typer.Argument(help="Log files or folders (ACPC, PHH, IRC database, PokerStars).")],
    out: Annotated[str, typer.Option("--out", "-o", help="The case base to write, e.g. casebases/NAME.")],
    feature_set: Annotated[str, typer.Option("--feature-set", help="Feature-set plugin (cbr.features).")] = "casper",
    only_players: Annotated[Optional[str], typer.Option("--only-players", help="Keep only these players' decisions (comma-separated player names in the logs).")] = None,
    only_players_old: Annotated[Optional[str], typer.Option("--players", hidden=True)] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", "-j", min=1, max=MAX_WORKERS, help="Processes computing features (default: one per CPU, at most 8; more than the CPUs are reduced to the CPUs). Any number gives the same case base.")] = None,
    log_format: Annotated[Optional[str], typer.Option("--log-format", help="Force the format of the logs read (acpc, phh, irc, pokerstars).")] = None,
    log_format_old: Annotated[Optional[str], typer.Option("--format", hidden=True)] = None,
    similarity: Annotated[Optional[str], typer.Option("--similarity", help="Similarity TOML file, checked before the build (default: CASPER's).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing case base (atomically, at the end).")] = False,
    max_issues: Annotated[int, typer.Option("--max-issues", min=0, help="Skipped hands to list.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    max_file_size: Annotated[Optional[int], typer.Option("--max-file-size", parser=_file_size, metavar="SIZE",
                                                         help=MAX_FILE_SIZE_HELP)] = None,
    scheduler: Annotated[Optional[str], typer.Option("--scheduler", metavar="ADDRESS|local", help="Run the per-file work on Dask: a scheduler's address (workers reading the logs at the same paths), or 'local' for a local cluster. Needs the [dask] extra; the case base is the same.")] = None,
    dask_workers: Annotated[Optional[int], typer.Option("--dask-workers", min=1, max=64, help="Worker processes of --scheduler local (default 2).")] = None,
) -> None:
    """Build a case base: every decision of a player with known hole cards becomes a case.

    Writes Parquet per street, a DuckDB catalog, a manifest and one faiss index per street.
    The case base appears only when the build succeeds; bad hands are skipped and listed.
    Ctrl-C or SIGTERM stops the workers and leaves nothing behind.
    """
    players = _alias(only_players, only_players_old, "--only-players", "--players")
    fmt = _known_log_format(_alias(log_format, log_format_old, "--log-format", "--format"))
    names = [p.strip() for p in players.split(",") if p.strip()] if players else None
    if players is not None and not names:
        raise usage_error("no player name given", "--only-players")
    if dask_workers is not None and scheduler != "local":
        raise usage_error("--dask-workers needs --scheduler local", "--dask-workers")
    if scheduler is not None and workers is not None:
        raise usage_error("--workers does not apply with --scheduler (the Dask workers compute)", "--workers")
    cpus = _usable_cpus()
    if workers is None:
        workers = min(cpus, 8)
    elif workers > cpus:
        typer.echo(f"note: --workers {workers} reduced to {cpus} (the CPUs this process may use)", err=True)
        workers = cpus
    _check_out_dir(out)
    sim = _load_similarity(similarity, feature_set) if similarity is not None else None

    from cbr.build import build_casebase
    from cbr.logs.source import DEFAULT_MAX_FILE_SIZE

    options = dict(feature_set=feature_set, players=names, format=fmt, similarity=sim, overwrite=overwrite,
                   max_file_size=max_file_size or DEFAULT_MAX_FILE_SIZE)
    with progress_bar("building", enabled=not as_json) as advance:
        if scheduler is not None:  # Dask is imported only here
            from cbr.dask_build import build_casebase_on_dask

            report = build_casebase_on_dask(logs, out, scheduler=scheduler, dask_workers=dask_workers or 2,
                                            progress=advance, **options)
        else:
            report = build_casebase(logs, out, workers=workers, progress=advance, **options)
    for warning in report.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        print_json(report.to_dict())
        return
    per = ", ".join(f"{s} {n}" for s, n in report.cases_per_street.items())
    stdout.print(f"built {out}: {report.cases} cases ({per}) from {report.hands} hands in "
                 f"{report.sources} source(s), {report.seconds:.1f} s ({report.hands_per_second:.0f} hands/s)",
                 soft_wrap=True)
    if report.skipped:
        stdout.print(f"{len(report.skipped)} hand(s) skipped:")
        for issue in report.skipped[:max_issues]:
            stdout.print(f"  {issue.where}: {issue.reason}", markup=False, highlight=False, soft_wrap=True)
        if len(report.skipped) > max_issues:
            stdout.print(f"  ... and {len(report.skipped) - max_issues} more (--max-issues, --json)")


_FLAG = ""  # a flag shows no <bool> value in --help


@app.command("query")
@guarded
def query_command(
    casebase: Annotated[str, typer.Option("--casebase", "-c", help="Case base: a directory, a name under ./casebases/, or 'default' (embedded).")] = "default",
    matchstate: Annotated[Optional[str], typer.Option("--matchstate", help="An ACPC MATCHSTATE string; '-' reads one per line from stdin. Its game comes from --game.")] = None,
    matchstate_file: Annotated[Optional[str], typer.Option("--matchstate-file", help="A file of MATCHSTATE lines ('-': stdin); one answer per line.")] = None,
    game: Annotated[str, typer.Option("--game", help="Game for --matchstate (and options): preset name, GameDef JSON or ACPC .game file.")] = "holdem.limit.2p",
    hole: Annotated[Optional[str], typer.Option("--hole", help="Your hole cards, e.g. AdQc.")] = None,
    board: Annotated[Optional[str], typer.Option("--board", help="Board cards: none (pre-flop), 3, 4 or 5.")] = None,
    dealt: Annotated[Optional[int], typer.Option("--dealt", min=2, max=12, help="Players dealt in (default: the game's seats).")] = None,
    players: Annotated[Optional[int], typer.Option("--players", min=2, max=12, hidden=True, help="Old name of --dealt.")] = None,
    in_hand: Annotated[Optional[int], typer.Option("--in-hand", help="Players not folded, you included (default: all dealt).")] = None,
    position: Annotated[Optional[int], typer.Option("--position", help="Your place in this round's order among players in hand: 0 = first to act.")] = None,
    to_act: Annotated[Optional[int], typer.Option("--to-act", help="Players still to act after you this round.")] = None,
    committed: Annotated[Optional[float], typer.Option("--committed", help="Bets you already put in this round (pre-flop the small blind is 0.5).")] = None,
    to_call: Annotated[Optional[float], typer.Option("--to-call", help="Bets you must add to call.")] = None,
    pot: Annotated[Optional[float], typer.Option("--pot", help="Pot before your action, in small bets.")] = None,
    prev_bets: Annotated[Optional[int], typer.Option("--prev-bets", help="Bets and raises made in the previous round (pre-flop the big blind counts as the first bet: a limped pot has 1).")] = None,
    weighted: Annotated[bool, typer.Option("--weighted", metavar=_FLAG, help="Weight actions by similarity (default: the case base's setting).")] = False,
    unweighted: Annotated[bool, typer.Option("--unweighted", metavar=_FLAG, help="Count every retrieved action once.")] = False,
    top: Annotated[int, typer.Option("--top", min=0, help="Cases to show.")] = 5,
    explain: Annotated[bool, typer.Option("--explain", metavar=_FLAG, help="Show each case's own feature values and local similarities.")] = False,
    as_json: Annotated[bool, typer.Option("--json", metavar=_FLAG, help="Print JSON (all retrieved cases with --explain; JSON lines for several MATCHSTATEs).")] = False,
    memory_map: Annotated[bool, typer.Option("--memory-map", metavar=_FLAG, help="Map the street's saved index instead of loading the street: for case bases larger than memory (same answers; the saved index must cover every case).")] = False,
    opponent: Annotated[Optional[list[str]], typer.Option("--opponent", metavar="AGG,TIGHT,RISK|NAME", help="For a casper-opp case base: the player model of an opponent still in the hand, in position order (repeat per opponent; the rest stay at the defaults 0.14,0.74,0.39): three values in 0..1, or a player's name in --models.")] = None,
    models: Annotated[Optional[str], typer.Option("--models", help="Model store (cbr players build) where --opponent NAME is looked up.")] = None,
) -> None:
    """The (fold, check/call, bet/raise) probabilities for a situation, and the cases behind them.

    Describe the situation with --matchstate (+ --game), or with --hole/--board and the
    betting options; options left out take the spot reached with the fewest actions, and a
    spot no legal hand reaches is refused naming the option to change.

    Example: cbr query --hole AdQc --board 3h4cJh --position 1 --to-call 1 --pot 5
    """
    from cbr.store import CaseBase, resolve_casebase

    described = {"--hole": hole, "--board": board, "--dealt": dealt, "--players": players, "--in-hand": in_hand,
                 "--position": position, "--to-act": to_act, "--committed": committed, "--to-call": to_call,
                 "--pot": pot, "--prev-bets": prev_bets}
    given = [name for name, value in described.items() if value is not None]
    if weighted and unweighted:
        raise typer.BadParameter("give --weighted or --unweighted, not both")
    if dealt is not None and players is not None:
        raise typer.BadParameter("--players is the old name of --dealt: give one of them")
    if matchstate is not None and matchstate_file is not None:
        raise typer.BadParameter("give --matchstate or --matchstate-file, not both")
    source = matchstate_file if matchstate_file is not None else (matchstate if matchstate == "-" else None)
    if (matchstate is not None or matchstate_file is not None) and given:
        raise typer.BadParameter(f"a MATCHSTATE describes the whole situation: leave out {', '.join(given)}")
    weight = True if weighted else (False if unweighted else None)
    opponents = _opponent_models(opponent, models)
    g = _load_game(game)
    if source is not None:
        lines = _read_lines(source)
        cb = CaseBase.open(resolve_casebase(casebase), memory_map=memory_map)
        try:
            failed = _query_lines(cb, g, lines, weight, top, explain, as_json, opponents)
        finally:
            cb.close()
        if failed:
            typer.echo(f"error: {failed} of {len(lines)} line(s) could not be answered", err=True)
            raise typer.Exit(1)
        return
    dp = _query_situation(g, matchstate, hole, board, dealt if dealt is not None else players, in_hand, position,
                          to_act, committed, to_call, pot, prev_bets)
    cb = CaseBase.open(resolve_casebase(casebase), memory_map=memory_map)
    try:
        ans = _answer(cb, dp, weight, opponents)
    finally:
        cb.close()
    for warning in ans.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        print_json(ans.to_dict(top=None if explain else top))
        return
    _print_answer(ans, top, explain)


def _answer(cb: Any, dp: Any, weighted: Optional[bool], opponents: Optional[list] = None) -> Any:
    from cbr.query import answer

    return answer(cb, dp, weighted=weighted, opponents=opponents)


def _opponent_models(given: Optional[list[str]], models: Optional[str]) -> Optional[list[tuple[float, ...]]]:
    """``cbr query --opponent``: each value is AGG,TIGHT,RISK or a player's name in ``--models``."""
    if models is not None and not given:
        raise typer.BadParameter("--models names the store where --opponent NAME is looked up: give --opponent too")
    if not given:
        return None
    out: list[tuple[float, ...]] = []
    store = None
    try:
        for text in given:
            parts = text.split(",")
            if len(parts) == 3 and all(_is_number(p) for p in parts):
                out.append(tuple(float(p) for p in parts))
                continue
            if len(parts) != 1:
                raise typer.BadParameter(f"--opponent {text!r}: give three values AGG,TIGHT,RISK in 0..1 "
                                         "or a player's name in --models")
            if models is None:
                raise typer.BadParameter(f"--opponent {text!r} is a name: give --models STORE to look it up "
                                         "(or give AGG,TIGHT,RISK)")
            if store is None:
                from cbr.models.store import ModelStore

                store = ModelStore.open(models, read_only=True)
            if text not in store.players():
                raise typer.BadParameter(f"--opponent {text!r}: no such player in {models} "
                                         f"({len(store.players())} players; see cbr players inspect --store {models})")
            from cbr.policies.opponents import model_values

            out.append(model_values(store.model(text)))
    finally:
        if store is not None:
            store.close()
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _query_situation(g: Any, matchstate: Optional[str], hole: Optional[str], board: Optional[str],
                     dealt: Optional[int], in_hand: Optional[int], position: Optional[int], to_act: Optional[int],
                     committed: Optional[float], to_call: Optional[float], pot: Optional[float],
                     prev_bets: Optional[int]) -> Any:
    """The decision point of ``cbr query``'s options (or of one MATCHSTATE)."""
    from cbr.errors import GameError
    from cbr.matchstate import from_matchstate
    from cbr.situation import situation

    if matchstate is not None:
        return from_matchstate(matchstate, g)
    if hole is None:
        raise GameError("no situation: give --hole (and --board, --to-call, ...) or --matchstate")
    n = dealt if dealt is not None else g.n_players
    return situation(hole=hole, board=board or "", players=n, in_hand=in_hand, position=position, to_act=to_act,
                     committed=committed, to_call=to_call, pot=pot, previous_round_bets=prev_bets,
                     game=g if g.n_players == n else g.with_players(n))


def _read_lines(source: str) -> list[str]:
    """The lines of a MATCHSTATE file ('-': stdin); one-line errors naming the file."""
    from cbr.errors import LogFormatError

    name = "standard input" if source == "-" else source
    try:
        if source == "-":
            return sys.stdin.read().splitlines()
        with open(source, encoding="utf-8", errors="strict") as fh:
            return fh.read().splitlines()
    except UnicodeDecodeError as exc:
        raise LogFormatError(f"{name}: not UTF-8 text (byte {exc.start}); MATCHSTATE lines are ASCII") from None
    except OSError as exc:
        raise LogFormatError(f"{name}: cannot be read ({exc.strerror or exc})") from None


def _query_lines(cb: Any, g: Any, lines: list[str], weighted: Optional[bool], top: int, explain: bool,
                 as_json: bool, opponents: Optional[list] = None) -> int:
    """Answer one MATCHSTATE per line (blank lines and '#' comments skipped); a bad line is
    reported on stderr as ``error: line N: ...`` and the others are still answered.
    Returns how many lines failed."""
    from cbr.errors import CBRError
    from cbr.matchstate import from_matchstate

    failed = 0
    warned: set[str] = set()
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            ans = _answer(cb, from_matchstate(text, g), weighted, opponents)
        except CBRError as exc:
            failed += 1
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            typer.echo(f"error: line {number}: {message}", err=True)
            continue
        for warning in ans.warnings:
            if warning not in warned:
                warned.add(warning)
                typer.echo(f"warning: {warning}", err=True)
        if as_json:
            record = {"line": number, "matchstate": text, **ans.to_dict(top=None if explain else top)}
            typer.echo(json.dumps(record, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)))
        else:
            f, c, r = ans.triple
            stdout.print(f"line {number}: fold {f:.3f}   check/call {c:.3f}   bet/raise {r:.3f}   "
                         f"({ans.street}, {ans.retrieved} cases)", highlight=False)
    return failed


def _print_answer(ans: Any, top: int, explain: bool) -> None:
    """The text output of one ``cbr query`` answer."""
    import os

    f, c, r = ans.triple
    stdout.print(f"[bold]fold {f:.3f}   check/call {c:.3f}   bet/raise {r:.3f}[/bold]   "
                 f"({ans.street}, case base {ans.casebase})")
    if ans.fallback:
        stdout.print(f"no case reached similarity {ans.threshold}; the {ans.retrieved} most similar were used, "
                     f"mean similarity {ans.mean_similarity:.4f}")
    else:
        stdout.print(f"{ans.passed} case(s) with similarity >= {ans.threshold}, mean similarity {ans.mean_similarity:.4f}")
    data = ans.to_dict(top=top)
    rows = []
    for case in data["cases"]:
        prov = case.get("provenance") or {}
        rows.append([case["id"], case["similarity"], case["action"], prov.get("hole"), prov.get("board") or "-",
                     prov.get("history"), prov.get("player"),
                     f"{os.path.basename(prov.get('source') or '')}#{prov.get('hand_id', '')}"])  # full path: --json
    if rows:
        stdout.print(_rich_table(f"top {len(rows)} cases (id: case_id in the SQL tables)",
                                 ["id", "similarity", "action", "hole", "board", "betting",
                                  "player", "source#hand"], rows))
    if explain and data["cases"]:
        names = list(data["features"])
        # each case: its own value, then its local similarity to the query (value ~ similarity)
        expl_rows = [[n, data["weights"][n], data["features"][n],
                      *(f"{_num(case['features'][n])} ~{case['local'][n]:.3g}" for case in data["cases"])]
                     for n in names]
        stdout.print(_rich_table("per-feature similarity: each case's value ~ local similarity",
                                 ["feature", "weight", "query", *(f"#{case['id']}" for case in data["cases"])],
                                 expl_rows))


def _num(x: float) -> str:
    return f"{x:.4g}"


# ---- cbr serve-dealer / cbr play --acpc (issue 8, section 4) ----------------------------
def _acpc_game(spec: Optional[str], n_players: int) -> Any:
    """``--game`` for the ACPC commands: a preset, an ACPC game-file name we know
    (``holdem.limit.2p.reverse_blinds``), or a game file; default: the match default."""
    if spec is None:
        from cbr.match import default_game

        return default_game(n_players)
    from cbr.logs.acpc import GAME_FILES

    stem = spec[:-5] if spec.endswith(".game") else spec
    if stem in GAME_FILES and not os.path.exists(spec):
        return GAME_FILES[stem]
    return _load_game(spec)


@app.command("serve-dealer")
@guarded
def serve_dealer_command(
    players: Annotated[str, typer.Option("--players", "-p", help="Comma-separated seats (2-10): a bot name (played in-process) or 'remote' (an ACPC client connects).")],
    hands: Annotated[int, typer.Option("--hands", "-n", min=1, max=MAX_HANDS, help="Hands to deal.")] = 1000,
    game: Annotated[Optional[str], typer.Option("--game", help="Preset name, ACPC game-file name or .game file [default: holdem.limit.2p heads-up].")] = None,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port for remote seats; 0 picks a free one (printed).")] = 0,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the deals and of the bots' choices.")] = 0,
    timeout: Annotated[float, typer.Option("--timeout", min=0.001, help="Seconds a remote seat has for its handshake and each action.")] = 10.0,
    connect_timeout: Annotated[float, typer.Option("--connect-timeout", min=0.001, help="Seconds to wait for every remote seat to connect.")] = 60.0,
    log: Annotated[Optional[str], typer.Option("--log", help="Write the ACPC match log here (a new file in an existing folder, or an existing one with --overwrite).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing --log file.")] = False,
    retain: Annotated[bool, typer.Option("--retain", help="The cbr bots keep every hand in their case base as it ends (their own decisions, and others' shown at a showdown), durably. The shipped default case base is never written: use --retain-into.")] = False,
    retain_into: Annotated[Optional[str], typer.Option("--retain-into", metavar="NAME", help="Retain into case base NAME (./casebases/NAME or a path), created as a copy of the bot's case base on first use; the cbr bots play from it. Implies --retain.")] = None,
) -> None:
    """Deal a match over the ACPC protocol 2.0.0 (TCP) and print the final scores.

    Remote seats are filled in the order clients connect; with remote seats the first line
    printed is 'listening on HOST:PORT'.

    Example: cbr serve-dealer --players ehs,call --hands 20
    """
    from contextlib import nullcontext

    from cbr.acpc.dealer import Dealer

    seats = [p.strip() for p in players.split(",") if p.strip()]
    if not 2 <= len(seats) <= 10:
        raise usage_error(f"a dealer seats 2 to 10 players, got {len(seats)}", "--players")
    if log is None and overwrite:
        raise usage_error("--overwrite needs --log", "--log")
    g = _acpc_game(game, len(seats))
    dealer = Dealer(seats, hands, game=g, seed=seed, host=host, port=port, timeout=timeout,
                    connect_timeout=connect_timeout, retain=retain, retain_into=retain_into)
    try:
        if dealer.remote_seats:
            bound_host, bound_port = dealer.listen()
            typer.echo(f"listening on {bound_host}:{bound_port}")
        from cbr.logs.writers import AcpcLogWriter, acpc_number

        writer = AcpcLogWriter(log, g, overwrite=overwrite) if log else nullcontext()
        with writer as w:
            result = dealer.run(log=w)
    finally:
        dealer.close()
    rows = [[str(s), name, ("+" if result.totals[s] > 0 else "") + acpc_number(result.totals[s]), f"{result.sb_per_hand(s):+.3f}"]
            for s, name in enumerate(result.names)]
    stdout.print(_rich_table(f"{g.name}: {result.hands} hands, seed {seed}", ["seat", "player", "chips", "sb/h"], rows))
    typer.echo("SCORE:" + "|".join(acpc_number(t) for t in result.totals) + ":" + "|".join(result.names))
    if log:
        typer.echo(f"log written to {log} (acpc)")
    if retain or retain_into:
        typer.echo(f"retained {result.retained:,} cases")


@app.command("play")
@guarded
def play_command(
    acpc: Annotated[Optional[str], typer.Option("--acpc", help="Play against the ACPC dealer at HOST:PORT.")] = None,
    policy: Annotated[str, typer.Option("--policy", help="The bot that plays: a policy spec NAME[:KEY=VALUE...], e.g. cbr:reuse=max-frequency (see `cbr plugins list`).")] = "ehs",
    hands: Annotated[Optional[int], typer.Option("--hands", "-n", min=1, max=MAX_HANDS, help="Stop after this many hands [default: until the dealer closes; 10 with --human].")] = None,
    game: Annotated[Optional[str], typer.Option("--game", help="The dealer's game: preset, ACPC game-file name or .game file [default: holdem.limit.2p].")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bot's choices.")] = 0,
    timeout: Annotated[float, typer.Option("--timeout", min=0.001, help="Seconds to wait for each line from the dealer.")] = 60.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result and every hand as JSON.")] = False,
    human: Annotated[bool, typer.Option("--human", help="Play yourself, in the terminal, against --bots (keys on standard input: f, c, r, q).")] = False,
    bots: Annotated[str, typer.Option("--bots", help="With --human: the bots at the table, comma-separated policy specs.")] = "cbr",
    retain: Annotated[bool, typer.Option("--retain", help="A cbr bot keeps every hand in its case base as it ends (with --human: your decisions too). The shipped default case base is never written: use --retain-into.")] = False,
    retain_into: Annotated[Optional[str], typer.Option("--retain-into", metavar="NAME", help="Retain into case base NAME (./casebases/NAME or a path), created as a copy of the bot's case base on first use; the bot plays from it. Implies --retain.")] = None,
) -> None:
    """Play a match as a client of an ACPC protocol 2.0.0 dealer (--acpc), or play yourself
    against bots in the terminal (--human).

    With --human, type one key (or word) a line: f fold, c check/call, r bet/raise, q quit;
    a script can pipe them (end of input quits, the result is printed).

    Example: cbr play --human --bots call,raise --hands 2
    """
    if acpc is not None and human:
        raise usage_error("choose one mode: --acpc HOST:PORT or --human, not both", "--human")
    if human:
        if as_json or game is not None:
            raise usage_error("--human plays the default limit game in text: no --json or --game",
                              "--json" if as_json else "--game")
        _play_human(bots, hands or 10, seed, retain, retain_into)
        return
    from cbr.acpc.client import parse_address, play_acpc
    from cbr.logs.writers import acpc_number

    if acpc is None:
        raise usage_error("say where the dealer is: --acpc HOST:PORT, or play yourself with --human", "--acpc")
    address = parse_address(acpc)
    g = _acpc_game(game, 2)
    from cbr.policies.spec import policy_from_spec

    bot = policy_from_spec(policy, seed=seed)
    result = play_acpc(address, bot, g, hands=hands, seed=seed, timeout=timeout, retain=retain,
                       retain_into=retain_into)
    if as_json:
        print_json(result.to_dict())
        return
    typer.echo(f"{policy}: {len(result.hands)} hands, {'+' if result.total > 0 else ''}{acpc_number(result.total)} chips "
               f"({result.sb_per_hand:+.3f} sb/h)" + (f"; retained {result.retained:,} cases"
                                                       if retain or retain_into else ""))


def _play_human(bots: str, hands: int, seed: int, retain: bool = False, retain_into: Optional[str] = None) -> None:
    """`cbr play --human`: the table on stdout, one key (or word) a line from stdin."""
    from cbr.human import play_human
    from cbr.policies.spec import split_policy_specs

    specs = split_policy_specs(bots)
    if not specs:
        raise usage_error("name at least one bot, e.g. --bots cbr", "--bots")

    def read(prompt: str) -> Optional[str]:
        typer.echo(prompt, nl=False)
        line = sys.stdin.readline()
        if not line:
            typer.echo("")
            return None
        return line.rstrip("\n")

    result = play_human(specs, hands, read=read, show=typer.echo, seed=seed, retain=retain, retain_into=retain_into)
    if retain or retain_into:
        typer.echo(f"retained {result.retained:,} cases")


# ---- cbr players: opponent models (issue 9, sections 1, 2 and 10) ------------
players_app = typer.Typer(help="Opponent models: the thesis' player model, kept in a model store.",
                          no_args_is_help=True, rich_markup_mode=None)
app.add_typer(players_app, name="players")

STORE_HELP = "The model store: a DuckDB file (made by build when missing)."
STORE_CASEBASE_HELP = ("Keep the models in players.duckdb inside this case base (a path or a name; not the "
                       "shipped default, which is read-only).")


def _players_store(store: Optional[str], casebase: Optional[str]) -> str:
    """The model store path from --store or --casebase (exactly one; else a usage error)."""
    if (store is None) == (casebase is None):
        raise usage_error("give the model store with --store PATH or --casebase NAME (one of them)", "--store")
    if store is not None:
        return store
    from cbr.models.store import casebase_store_path

    return str(casebase_store_path(casebase))  # type: ignore[arg-type]


@players_app.command("build")
@guarded
def players_build(
    paths: Annotated[list[str], typer.Argument(help="Log files or folders (walked recursively).")],
    store: Annotated[Optional[str], typer.Option("--store", help=STORE_HELP)] = None,
    casebase: Annotated[Optional[str], typer.Option("--casebase", help=STORE_CASEBASE_HELP)] = None,
    log_format: Annotated[Optional[str], typer.Option("--log-format", "-f",
                                                      help="Force a parser (acpc, phh, irc, pokerstars).")] = None,
    reset: Annotated[bool, typer.Option("--reset", help="Empty the store first (default: add to it).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Replay every hand of the logs into per-player models and save them in the store.

    Each player's actions in a hand are one round of the thesis' player model
    (aggressiveness, tightness, riskiness). Players already in the store are continued;
    the store is written in one transaction at the end.
    """
    from cbr.models.build import build_store

    fmt = _known_log_format(log_format)
    path = _players_store(store, casebase)
    with progress_bar("reading logs", enabled=not as_json) as advance:
        report = build_store(paths, path, format=fmt, reset=reset, progress=advance)
    if as_json:
        print_json(report.to_dict())
    else:
        typer.echo(f"{report.hands} hands read ({report.skipped} skipped), {report.players} players; "
                   f"{report.players_in_store} players in {report.store}")
    if report.hands == 0:
        typer.echo(f"error: no hand could be read from {', '.join(paths)} ({report.skipped} skipped)", err=True)
        raise typer.Exit(EXIT_ERROR)


@players_app.command("inspect")
@guarded
def players_inspect(
    store: Annotated[Optional[str], typer.Option("--store", help="The model store (a DuckDB file).")] = None,
    casebase: Annotated[Optional[str], typer.Option("--casebase", help=STORE_CASEBASE_HELP)] = None,
    player: Annotated[Optional[str], typer.Option("--player", help="Show this player only (defaults if never seen).")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=10**9,
                                       help="Without --player: show the players with most hands, at most this many.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show the player models: aggressiveness, tightness and riskiness, overall and over the
    last 10 hands (agg10, tight10, risk10). A player never seen, or an attribute never
    measured (tightness needs shown cards), shows the documented defaults.
    """
    from cbr.models.build import inspect_store

    path = _players_store(store, casebase)
    models = inspect_store(path, player)
    total = len(models)
    if player is None:
        models = models[:limit]
    if as_json:
        print_json([m.to_dict() for m in models])
        return
    if player is not None:
        m = models[0]
        typer.echo(f"{m.player}: {m.hands} hands" + ("" if m.hands else " (never seen: defaults)"))
        for a in ("aggressiveness", "tightness", "riskiness"):
            note = " (default)" if a in m.defaults else f" ({m.measured.get(a, 0)} hands)"
            typer.echo(f"  {a:<15} {getattr(m, a):.3f}   recent {getattr(m, 'recent_' + a):.3f}{note}")
        return
    rows = [[m.player, m.hands, *(f"{getattr(m, k):.3f}" for k in (
        "aggressiveness", "recent_aggressiveness", "tightness", "recent_tightness", "riskiness", "recent_riskiness"))]
        for m in models]
    stdout.print(_rich_table(f"{total} players in {path}" + (f" (first {limit})" if total > limit else ""),
                             ["player", "hands", "agg", "agg10", "tight", "tight10", "risk", "risk10"], rows))


# ---- cbr train predictor / cbr evaluate (issue 9) ----------------------------
train_app = typer.Typer(help="Train models beside the case base.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(train_app, name="train")


def _casebase_source(sources: list[str]) -> Optional[str]:
    """The case base named by ``sources`` (one argument: a case-base directory, or a name
    that is no path but a case base under ./casebases/ or shipped), else None (logs)."""
    from pathlib import Path

    if len(sources) != 1:
        return None
    p = Path(sources[0])
    if p.is_dir():
        return str(p) if (p / "manifest.json").is_file() else None
    if p.exists():
        return None
    from cbr.errors import CaseBaseError
    from cbr.store import resolve_casebase

    try:
        return str(resolve_casebase(sources[0]))
    except CaseBaseError:
        return None


def _fmt_score(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{x:.3f}"


@train_app.command("predictor")
@guarded
def train_predictor_command(
    sources: Annotated[list[str], typer.Argument(help="Log files or folders (any supported format), or one case base (a directory, a name under ./casebases/, or 'default').")],
    player: Annotated[Optional[str], typer.Option("--player", help="Learn only this player's decisions.")] = None,
    out: Annotated[str, typer.Option("--out", "-o", help="Where to save the trained predictor.")] = "predictor.ann",
    overwrite: Annotated[bool, typer.Option("--overwrite", metavar=_FLAG, help="Replace an existing --out file.")] = False,
    folds: Annotated[int, typer.Option("--folds", min=2, max=50, help="Cross-validation folds (whole hands per fold).")] = 5,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help="Seed of the folds and the network.")] = 0,
    log_format: Annotated[Optional[str], typer.Option("--log-format", help="Force the format of the logs read (acpc, phh, irc, pokerstars).")] = None,
    as_json: Annotated[bool, typer.Option("--json", metavar=_FLAG, help="Print the report as JSON.")] = False,
) -> None:
    """Train the ANN action predictor (an MLP over the 19 context inputs of Davidson's
    network) and report its cross-validated accuracy and log-loss per street, beside a
    majority-class and a per-context frequency baseline; then save it with its input schema.

    Example: cbr train predictor ../shared/data/logs/acpc/dealer_example_limit --folds 3 --out acpc.ann
    """
    from cbr.models.predictor import train_predictor

    fmt = _known_log_format(log_format)
    cb_path = _casebase_source(sources)
    if cb_path is not None and fmt is not None:
        raise usage_error("--log-format applies to logs, not to a case base", "--log-format")
    with progress_bar("cross-validating", enabled=not as_json) as advance:
        if cb_path is not None:
            from cbr.store import CaseBase

            cb = CaseBase.open(cb_path)
            try:
                _, report = train_predictor(cb, player=player, folds=folds, seed=seed, out=out, overwrite=overwrite,
                                            progress=advance)
            finally:
                cb.close()
        else:
            _, report = train_predictor(list(sources), player=player, folds=folds, seed=seed, out=out,
                                        overwrite=overwrite, log_format=fmt, progress=advance)
    if as_json:
        print_json(report.to_dict())
        return
    who = f", player {player}" if player else ""
    stdout.print(f"{report.examples} decisions from {report.hands} hands{who}; {report.folds}-fold cross-validation "
                 f"(seed {report.seed}); log-loss clips probabilities at {report.clip}",
                 markup=False, highlight=False, soft_wrap=True)
    rows = [[s.street, s.decisions, _fmt_score(s.accuracy["ann"]), _fmt_score(s.accuracy["majority"]),
             _fmt_score(s.accuracy["context"]), _fmt_score(s.log_loss["ann"]), _fmt_score(s.log_loss["majority"]),
             _fmt_score(s.log_loss["context"])] for s in [*report.streets, report.overall]]
    stdout.print(_rich_table("accuracy (acc) / log-loss (ll)",
                             ["street", "n", "acc ANN", "acc maj", "acc ctx", "ll ANN", "ll maj", "ll ctx"], rows))
    for s in report.streets:
        if s.note:
            stderr.print(f"note: {s.street}: {s.note}", markup=False, highlight=False, soft_wrap=True)
    if report.skipped:
        stderr.print(f"note: {report.skipped} hand(s) or case(s) could not be used", soft_wrap=True)
    if not report.converged:
        stderr.print("note: the network stopped at its iteration limit before converging", soft_wrap=True)
    stdout.print(f"saved to {report.saved}", markup=False, highlight=False, soft_wrap=True)


@train_app.command("network")
@guarded
def train_network_command(
    sources: Annotated[list[str], typer.Argument(help="Log files or folders (any supported format).")],
    player: Annotated[Optional[list[str]], typer.Option("--player", help="Train one network per player named (repeat); default: the three players with the most shown-card actions.")] = None,
    hidden: Annotated[Optional[list[int]], typer.Option("--hidden", min=1, max=64, help="Hidden neurons (repeat for several, as the thesis' table 8) [default: 2].")] = None,
    out: Annotated[Optional[str], typer.Option("--out", "-o", help="Save the network of the first player and hidden size here.")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", metavar=_FLAG, help="Replace an existing --out file.")] = False,
    folds: Annotated[int, typer.Option("--folds", min=2, max=50, help="Cross-validation folds (whole hands per fold).")] = 5,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help="Seed of the folds and the network.")] = 0,
    log_format: Annotated[Optional[str], typer.Option("--log-format", help="Force the format of the logs read (acpc, phh, irc, pokerstars).")] = None,
    as_json: Annotated[bool, typer.Option("--json", metavar=_FLAG, help="Print the report as JSON.")] = False,
) -> None:
    """Train the thesis' default-strategy network (5 inputs, 2 outputs: defensive,
    aggressive) on each player's actions with shown cards and report its total network
    error (TNE, Neuroph's halved mean squared error) per player as the thesis' table 8:
    on the training data, held out, and of a constant-frequency baseline.

    Example: cbr train network ../shared/data/logs/acpc/dealer_example_limit/2p.limit.h1000.r0.log --folds 3
    """
    from cbr.models.default_network import examples_from_logs, train_network

    fmt = _known_log_format(log_format)
    with progress_bar("reading logs", enabled=not as_json) as advance:
        ex = examples_from_logs(list(sources), log_format=fmt, progress=advance)
    players = list(player) if player else list(ex.counts())[:3]
    sizes = list(hidden) if hidden else [2]
    reports = []
    saved = None
    for p in players:
        for h in sizes:
            net, report = train_network(ex, player=p, hidden=h, folds=folds, seed=seed)
            reports.append(report)
            if out is not None and saved is None:
                saved = str(net.save(out, overwrite=overwrite))
    if as_json:
        print_json({"reports": [r.to_dict() for r in reports], "saved": saved, "hands": ex.hands,
                    "skipped": len(ex.skipped)})
        return
    rows = [[r.player, r.hidden, r.examples, r.hands, f"{r.raise_share:.2f}", f"{100 * r.train_tne:.1f}",
             f"{100 * r.cv_tne:.1f}", f"{100 * r.baseline_tne:.1f}", f"{100 * r.cv_error:.1f}"] for r in reports]
    stdout.print(_rich_table(f"TNE % (train, held out in {folds} folds, constant baseline), seed {seed}",
                             ["player", "hid", "acts", "hands", "raise", "train", "held out", "const", "err %"],
                             rows))
    if ex.skipped:
        stderr.print(f"note: {len(ex.skipped)} hand(s) could not be used", soft_wrap=True)
    if not all(r.converged for r in reports):
        stderr.print("note: a network stopped at its iteration limit before converging", soft_wrap=True)
    if saved:
        stdout.print(f"saved to {saved}", markup=False, highlight=False, soft_wrap=True)


@train_app.command("cfr")
@guarded
def train_cfr_command(
    abstraction: Annotated[str, typer.Option("--abstraction", "-a", help="Abstraction directory (its bucket_game.npz is the abstract game), or the name of a shipped one under casebases/cfr/.")],
    iterations: Annotated[int, typer.Option("--iterations", "-n", min=1, max=10**9, help="Train until this many CFR+ iterations in all (with --resume: counting the checkpoint's).")],
    game: Annotated[str, typer.Option("--game", help="holdem.limit.2p (ACPC heads-up limit) or nolimit.fcpa (100 bb, fold/call/pot/all-in).")] = "holdem.limit.2p",
    resume: Annotated[bool, typer.Option("--resume", metavar=_FLAG, help="Continue from the run's checkpoint (<out>.ckpt.npz).")] = False,
    out: Annotated[Optional[str], typer.Option("--out", "-o", help="Strategy file [default: cfr.<game>.npz in the abstraction directory].")] = None,
    checkpoint_every: Annotated[int, typer.Option("--checkpoint-every", min=0, help="Write the checkpoint every K iterations (0: only at the end).")] = 50,
    as_json: Annotated[bool, typer.Option("--json", metavar=_FLAG, help="Print the report as JSON.")] = False,
) -> None:
    """Solve the abstract game with CFR+ (vector form, chance enumerated, in C) and store the
    average strategy beside its abstraction; report its exact exploitability in mbb/g. Ctrl-C
    stops between iterations; --resume continues from the last checkpoint.

    Example: cbr train cfr -a h_hs2_4 -n 2 -o cfr-example.npz
    """
    from cbr.cfr.strategy import resolve_abstraction_dir, train
    from cbr.cfr.tree import GAMES

    if game not in GAMES:
        raise usage_error(f"unknown game {game!r}; choose one of {', '.join(GAMES)}", "--game")
    directory = resolve_abstraction_dir(abstraction)
    with progress_bar("CFR+ iterations", total=iterations, enabled=not as_json) as advance:
        report = train(game, directory, iterations, resume=resume, out=out, checkpoint_every=checkpoint_every,
                       progress=lambda n: advance(n), on_start=lambda done, total: advance(done))
    if as_json:
        print_json(report)
        return
    stdout.print(f"{report['game']}: {report['iterations']} iterations ({report['ran']} in this run, "
                 f"{report['seconds']:.1f} s), {report['info_sets']:,} information sets", markup=False,
                 highlight=False, soft_wrap=True)
    stdout.print(f"exploitability {report['exploitability_mbb']:.1f} mbb/g "
                 f"(stored, quantised: {report['stored_exploitability_mbb']:.1f} mbb/g)", markup=False,
                 highlight=False, soft_wrap=True)
    stdout.print(f"saved to {report['strategy']} ({report['bytes']:,} bytes); checkpoint {report['checkpoint']}",
                 markup=False, highlight=False, soft_wrap=True)


@app.command("evaluate")
@guarded
def evaluate_command(
    casebase: Annotated[str, typer.Argument(help="Case base: a directory, a name under ./casebases/, or 'default'.")],
    folds: Annotated[Optional[int], typer.Option("--folds", min=2, max=50, help="K-fold over the case base's cases, whole hands per fold [default: 5].")] = None,
    holdout: Annotated[Optional[list[str]], typer.Option("--holdout", help="Evaluate on the decisions (known hole cards) of these logs instead; repeat for more paths.")] = None,
    similarity: Annotated[Optional[str], typer.Option("--similarity", help="Similarity TOML to retrieve with instead of the case base's own.")] = None,
    max_decisions: Annotated[Optional[int], typer.Option("--max-decisions", min=1, help="Evaluate a seeded sample of at most this many held-out decisions per street [default: all].")] = None,
    no_ann: Annotated[bool, typer.Option("--no-ann", metavar=_FLAG, help="Skip the ANN predictor column.")] = False,
    predictor: Annotated[Optional[str], typer.Option("--predictor", help="With --holdout: a predictor saved by `cbr train predictor` for the ANN column (default: one trained on the case base).")] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help="Seed of the folds, the sample and the network.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", metavar=_FLAG, help="Print the report as JSON.")] = False,
) -> None:
    """How well does a case base predict? Per street: accuracy of the most likely action and
    log-loss of the k-NN triple for held-out decisions, beside the majority baseline and the
    ANN predictor on the same decisions, and the mean similarity of the retrieved cases.
    Log-loss clips each probability at 0.001 (a k-NN triple can hold zeros).

    Example: cbr evaluate default --folds 3 --max-decisions 100 --no-ann
    """
    from cbr.evaluate import evaluate_casebase
    from cbr.store import CaseBase, resolve_casebase

    if folds is not None and holdout:
        raise usage_error("give --folds or --holdout, not both", "--folds")
    if predictor is not None and (not holdout or no_ann):
        raise usage_error("--predictor needs --holdout (with folds the ANN is trained per fold) and the ANN column",
                          "--predictor")
    net = None
    if predictor is not None:
        from cbr.models.predictor import ActionPredictor

        net = ActionPredictor.load(predictor)
    cb = CaseBase.open(resolve_casebase(casebase))
    try:
        config = _load_similarity(similarity, cb.manifest.feature_set) if similarity else None
        with progress_bar("evaluating", enabled=not as_json) as advance:
            ev = evaluate_casebase(cb, folds=folds or 5, holdout=holdout, similarity=config,
                                   similarity_name=similarity, seed=seed, max_decisions=max_decisions,
                                   ann=not no_ann, predictor=net, progress=advance)
    finally:
        cb.close()
    if as_json:
        print_json(ev.to_dict())
        return
    how = f"{ev.folds}-fold" if ev.mode == "folds" else f"hold-out logs {', '.join(ev.holdout)}"
    stdout.print(f"case base {ev.casebase}: {how}, similarity: {ev.similarity}, seed {ev.seed}"
                 + (f", at most {ev.max_decisions} decisions per street" if ev.max_decisions else "")
                 + f"; log-loss clips probabilities at {ev.clip}", markup=False, highlight=False, soft_wrap=True)
    columns = ["street", "n", "acc kNN", "acc maj", *(["acc ANN"] if not no_ann else []), "ll kNN", "ll maj",
               *(["ll ANN"] if not no_ann else []), "mean sim", "p=0"]
    rows = []
    for r in ev.rows:
        ann = r.ann or {"accuracy": None, "log_loss": None}
        rows.append([r.street, r.decisions, _fmt_score(r.knn.get("accuracy")), _fmt_score(r.majority.get("accuracy")),
                     *([_fmt_score(ann["accuracy"])] if not no_ann else []), _fmt_score(r.knn.get("log_loss")),
                     _fmt_score(r.majority.get("log_loss")), *([_fmt_score(ann["log_loss"])] if not no_ann else []),
                     _fmt_score(r.mean_similarity), _fmt_score(r.zero_share)])
    stdout.print(_rich_table("accuracy (acc) / log-loss (ll); p=0: k-NN gave the action 0", columns, rows))
    for r in ev.rows:
        if r.note:
            stderr.print(f"note: {r.street}: {r.note}", markup=False, highlight=False, soft_wrap=True)
    for note in ev.notes:
        stderr.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)


# ---- cbr tune (issue 9, section 9) ------------------------------------------
@app.command("tune")
@guarded
def tune_command(
    casebase: Annotated[str, typer.Argument(help="Case base: a directory, a name under ./casebases/, or 'default'.")],
    out: Annotated[str, typer.Option("--out", "-o", help="Write the learned similarity TOML here (a new file, or an existing one with --overwrite).")] = "tuned-similarity.toml",
    generations: Annotated[int, typer.Option("--generations", "-g", min=1, max=1000, help="Generations of the evolution strategy.")] = 10,
    population: Annotated[int, typer.Option("--population", min=1, max=200, help="Children evaluated per generation.")] = 8,
    folds: Annotated[int, typer.Option("--folds", min=2, max=20, help="K-fold of each evaluation (whole hands per fold).")] = 3,
    max_decisions: Annotated[int, typer.Option("--max-decisions", min=100, help="Held-out decisions per street per evaluation (a seeded sample; at least 100).")] = 1000,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help="Seed of the search and of the tuning folds.")] = 0,
    report_seed: Annotated[Optional[int], typer.Option("--report-seed", min=0, max=2**32 - 1, help="Report both configurations on other folds and samples (default: seed + 1).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", metavar=_FLAG, help="Replace an existing --out file.")] = False,
    as_json: Annotated[bool, typer.Option("--json", metavar=_FLAG, help="Print the report as JSON.")] = False,
) -> None:
    """Learn similarity weights (CASPERGeneral): an evolutionary search over the feature
    weights and decay constants that minimises the hold-out log-loss of the case base's
    triples (as `cbr evaluate` measures it), then a report on other folds (--report-seed).

    Example: cbr tune default --generations 1 --population 1 --folds 2 --max-decisions 100 -o tuned.toml
    """
    from pathlib import Path

    from cbr.store import CaseBase, resolve_casebase
    from cbr.store.indexes import dump_similarity
    from cbr.tune import street_losses, tune_similarity

    target = Path(out)
    if target.exists() and not overwrite:
        raise usage_error(f"{target} exists; add --overwrite to replace it", "--out")
    if not target.parent.is_dir():
        raise usage_error(f"the folder of {target} does not exist", "--out")
    cb = CaseBase.open(resolve_casebase(casebase))
    try:
        with progress_bar("tuning", total=generations * population, enabled=not as_json) as advance:
            result = tune_similarity(cb, generations=generations, population=population, folds=folds,
                                     max_decisions=max_decisions, seed=seed, progress=advance)
        rseed = seed + 1 if report_seed is None else report_seed
        start_r = street_losses(cb, cb.similarity(), folds=folds, max_decisions=max_decisions, seed=rseed)
        best_r = street_losses(cb, result.best, folds=folds, max_decisions=max_decisions, seed=rseed)
    finally:
        cb.close()
    dump_similarity(result.best, target)
    report = {"casebase": casebase, "out": str(target), "seed": seed, "report_seed": rseed,
              "generations": generations, "population": population, "folds": folds,
              "max_decisions": max_decisions, **result.to_dict(),
              "report": {"start_loss": start_r, "best_loss": best_r}}
    if as_json:
        print_json(report)
        return
    rows = [[s, f"{result.start_loss[s]:.4f}", f"{result.best_loss[s]:.4f}", f"{start_r[s]:.4f}", f"{best_r[s]:.4f}"]
            for s in (*("preflop", "flop", "turn", "river"), "all")]
    stdout.print(_rich_table(f"log-loss of the k-NN triples ({folds}-fold, at most {max_decisions} decisions a street)",
                             ["street", f"hand-picked (seed {seed})", "learned", f"hand-picked (seed {rseed})",
                              "learned"], rows))
    typer.echo(f"learned similarity written to {target} ({result.evaluations} evaluations)")


# ---- cbr abstraction (issue 10) ------------------------------------------------
abstraction_app = typer.Typer(help="Card abstractions: hand-strength buckets per street and the abstract game's "
                              "chance model (the KTH study).", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(abstraction_app, name="abstraction")
ABSTRACTION_KINDS = ("uniform", "percentile", "minmax", "history")
ABSTRACTION_METRICS = ("hs", "hs2")


def _abstraction_summary(abstraction: Any, directory: str, game: Any = None) -> dict[str, Any]:
    """What ``cbr abstraction build/inspect --json`` print."""
    summary: dict[str, Any] = {"directory": directory, **abstraction.description,
                               "thresholds": [t.tolist() for t in abstraction.thresholds]}
    if game is not None:
        summary["bucket_game"] = {k: v for k, v in game.description.items() if k.startswith(("game_", "equity_"))}
    return summary


@abstraction_app.command("build")
@guarded
def abstraction_build_command(
    kind: Annotated[str, typer.Option("--kind", help="uniform, percentile, minmax or history.")],
    metric: Annotated[str, typer.Option("--metric", help="hs (hand strength) or hs2 (hand strength squared).")],
    out: Annotated[str, typer.Option("--out", "-o", help="Directory to write abstraction.json and bucket_game.npz to.")],
    buckets: Annotated[int, typer.Option("--buckets", min=1, max=64, help="Buckets per street.")] = 8,
    samples: Annotated[int, typer.Option("--samples", min=1, max=20_000, help="Random boards for the thresholds and, again, for the bucket game (each board: every holding; about 0.15 s a board).")] = 400,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**62, help="Seed of the boards (the bucket game uses seed + 1).")] = 0,
    as_json: Annotated[bool, typer.Option("--json", metavar=_FLAG, help="Print the summary as JSON.")] = False,
) -> None:
    """Build a bucketing (thresholds from sampled boards) and estimate its bucket game;
    write both to the directory (atomically, each file).

    Example: cbr abstraction build --kind percentile --metric hs --buckets 4 --samples 2 -o p_hs
    """
    if kind not in ABSTRACTION_KINDS:
        raise usage_error(f"unknown kind {kind!r} (choose from {', '.join(ABSTRACTION_KINDS)})", "--kind")
    if metric not in ABSTRACTION_METRICS:
        raise usage_error(f"unknown metric {metric!r} (choose from {', '.join(ABSTRACTION_METRICS)})", "--metric")
    from pathlib import Path

    from cbr.abstraction import BUCKET_GAME_FILE, Abstraction

    target = Path(out)
    if target.exists() and not target.is_dir():
        from cbr.errors import OutputPathError

        raise OutputPathError(f"cannot write the abstraction to {target}: it is a file, not a folder")
    with progress_bar("thresholds", total=samples, enabled=not as_json) as advance:
        abstraction = Abstraction.build(kind, metric, n_buckets=buckets, samples=samples, seed=seed,
                                        progress=lambda done, total: advance(1))
    with progress_bar("bucket game", total=samples, enabled=not as_json) as advance:
        game = abstraction.bucket_game(samples, seed + 1, progress=lambda done, total: advance(1))
    abstraction.save(target)
    game.save(target / BUCKET_GAME_FILE)
    summary = _abstraction_summary(abstraction, str(target), game)
    if as_json:
        print_json(summary)
        return
    typer.echo(f"{abstraction.name}: {buckets} buckets per street, fingerprint {abstraction.fingerprint[:16]}; "
               f"thresholds from {samples} boards in {abstraction.build_info['seconds']:.1f} s, bucket game from "
               f"{samples} boards in {game.description['game_seconds']:.1f} s; written to {target}")


@abstraction_app.command("inspect")
@guarded
def abstraction_inspect_command(
    directory: Annotated[str, typer.Argument(help="A directory written by `cbr abstraction build`.")],
    as_json: Annotated[bool, typer.Option("--json", metavar=_FLAG, help="Print the summary as JSON.")] = False,
) -> None:
    """Show an abstraction: name, fingerprint, thresholds per street, and its bucket game's figures.

    Example: cbr abstraction inspect p_hs
    """
    from pathlib import Path

    from cbr.abstraction import BUCKET_GAME_FILE, Abstraction

    abstraction = Abstraction.load(directory)
    game = abstraction.load_bucket_game(directory) if (Path(directory) / BUCKET_GAME_FILE).exists() else None
    summary = _abstraction_summary(abstraction, directory, game)
    if as_json:
        print_json(summary)
        return
    typer.echo(f"{abstraction.name} ({abstraction.kind} buckets on {abstraction.metric}), {abstraction.n_buckets} per "
               f"street, fingerprint {abstraction.fingerprint}")
    for street, t in zip(("pre-flop", "flop", "turn", "river"), abstraction.thresholds):
        rows = [t] if t.ndim == 1 else list(t)
        for i, row in enumerate(rows):
            label = street if t.ndim == 1 else f"{street} | prev {i}"
            typer.echo(f"  {label:>16}: " + " ".join(f"{x:.3f}" for x in row))
    if game is None:
        typer.echo("no bucket game (bucket_game.npz) beside it")
    else:
        d = game.description
        se = d.get("equity_max_se")
        typer.echo(f"bucket game: {d.get('game_deals')} holdings on {d.get('game_samples')} boards (seed "
                   f"{d.get('game_seed')}), {game.n_classes} showdown classes, largest equity standard error "
                   f"{'n/a' if se is None else f'{se:.4f}'}")


if __name__ == "__main__":  # pragma: no cover
    app()
