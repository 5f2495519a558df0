"""The ``cbr`` command line. The only module that prints, exits or draws progress bars.

Commands are thin: parse options, call one library function, print the result
(``--json`` for scripts). Errors of the project (:class:`CBRError`) and bad values
(``ValueError``) become one line on stderr and exit code 1; usage errors exit 2;
``--debug`` shows tracebacks.
"""
from __future__ import annotations

import functools
import json
import os
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
@app.command("hand")
@guarded
def hand_command(
    hole: Annotated[str, typer.Argument(help="Two hole cards, e.g. AhKd.")],
    board: Annotated[Optional[str], typer.Argument(help="Board of 3-5 cards, e.g. 3h4sJd (omit before the flop).")] = None,
    opponents: Annotated[int, typer.Option("--opponents", "-n", help="Random opponents, 1..9.")] = 1,
    trials: Annotated[int, typer.Option("--trials", "-t", help="Monte Carlo deals for win/tie/lose.")] = 50_000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the Monte Carlo deals.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Hand strength, potentials, EHS and win/tie/lose of a holding (preflop: rank and win/tie/lose)."""
    import evaluator_ext

    s = evaluator_ext.hand_summary(hole, board or (), n_opponents=opponents, trials=trials, seed=seed)
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
    players: Annotated[str, typer.Option("--players", "-p", help="Comma-separated bot names, one per seat (2-10), e.g. ehs,call.")],
    hands: Annotated[int, typer.Option("--hands", "-n", min=1, help="Hands to play (duplicate: rounded up to a multiple of the seats).")] = 1000,
    duplicate: Annotated[bool, typer.Option("--duplicate", help="Replay every deal with the seats rotated (removes card luck).")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the deals and of the bots' choices.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    log: Annotated[Optional[str], typer.Option("--log", help="Write the hands to this log (phh: a .phhs file or a directory).")] = None,
    fmt: Annotated[str, typer.Option("--format", help="Log format: acpc or phh.")] = "acpc",
) -> None:
    """Play bots against each other; results in sb/h and mbb/h with 95% confidence intervals."""
    from contextlib import nullcontext

    from rich.table import Table

    from cbr.logs.writers import open_log
    from cbr.match import run_match
    from cbr.plugins import available, load

    names = [p.strip() for p in players.split(",") if p.strip()]
    known = available("cbr.policies")
    unknown = [p for p in names if p not in known]
    if unknown:
        raise ValueError(f"unknown bot {unknown[0]!r}; known bots: {', '.join(known)}")
    for p in names:
        load("cbr.policies", p)
    if fmt not in ("acpc", "phh"):
        raise ValueError(f"unknown log format {fmt!r}; use acpc or phh")
    n = len(names)
    total = -(-hands // n) * n if duplicate else hands
    writer = open_log(log, fmt) if log else nullcontext()
    with writer as w, progress_bar("playing", total=total, enabled=not as_json) as advance:
        result = run_match(names, hands, duplicate=duplicate, seed=seed, progress=advance, log=w)
    if as_json:
        print_json(result.to_dict())
        return
    table = Table(title=f"{result.game.name}: {result.hands} hands"
                  + (f" (duplicate, {result.deals} deals)" if result.duplicate else "") + f", seed {seed}")
    for col in ("seat", "bot", "chips", "sb/h", "± 95%", "mbb/h", "± 95%"):
        table.add_column(col, justify="left" if col in ("seat", "bot") else "right")
    for s, p in enumerate(result.players):
        table.add_row(str(s), p.name, f"{p.total:+.0f}", f"{p.sb_per_hand:+.3f}", f"{p.sb_ci:.3f}",
                      f"{p.mbb_per_hand:+.0f}", f"{p.mbb_ci:.0f}")
    stdout.print(table)
    if log:
        stdout.print(f"log written to {log} ({fmt})")



# ---- cbr logs inspect (issue 3) --------------------------------------------
@logs_app.command("inspect")
@guarded
def logs_inspect(
    paths: Annotated[list[str], typer.Argument(help="Log files or folders (walked recursively).")],
    format: Annotated[Optional[str], typer.Option("--format", "-f",
                                                  help="Force a parser (acpc, phh, irc, pokerstars).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    max_issues: Annotated[int, typer.Option("--max-issues", min=0,
                                            help="List at most this many skipped hands.")] = 20,
) -> None:
    """Read logs, replay every hand, and report hands, skipped hands, decisions and players."""
    from cbr.logs.inspect import inspect_logs

    with progress_bar("reading logs", enabled=not as_json) as advance:
        report = inspect_logs(paths, format=format, progress=advance)
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
def _rich_table(title: Optional[str], columns: list[str], rows: list[list[Any]]) -> Any:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for i, c in enumerate(columns):
        table.add_column(str(c), no_wrap=i == 0)
    for row in rows:
        table.add_row(*("" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v)) for v in row))
    return table


@casebase_app.command("inspect")
@guarded
def casebase_inspect(
    name: Annotated[str, typer.Argument(help="A case-base directory, a name under ./casebases/, or 'default'.")],
    sql: Annotated[Optional[str], typer.Option("--sql", help="Run SQL on the views `cases` and `cases_<street>`.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Counts per street, action and source, and feature distributions; or run SQL."""
    from cbr.store import CaseBase, inspect, resolve_casebase

    cb = CaseBase.open(resolve_casebase(name))
    try:
        if sql is not None:
            result = cb.sql(sql)
            columns = [d[0] for d in (result.description or [])]
            rows = result.fetchall()
            if as_json:
                print_json([dict(zip(columns, r)) for r in rows])
            else:
                stdout.print(_rich_table(None, columns, [list(r) for r in rows]))
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
    stdout.print(_rich_table(f"{info['total']} cases", ["street", "total", "fold", "check/call", "bet/raise", "parts"],
                             [[s, c["total"], c["f"], c["c"], c["r"], info["parts"][s]]
                              for s, c in info["counts"].items()]))
    stdout.print(_rich_table("cases per source", ["source", *streets],
                             [[src or "-", *(n[s] for s in streets)] for src, n in info["sources"].items()]))
    for s, feats in info["features"].items():
        if not info["counts"][s]["total"]:
            continue
        stats = ["min", "q25", "q50", "mean", "q75", "max"]  # --json has q05 and q95 too
        stdout.print(_rich_table(f"{s} features", ["feature", *stats],
                                 [[f, *(v[k] for k in stats)] for f, v in feats.items()]))


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
def _load_game(spec: str) -> Any:
    """A game from a preset name, a GameDef JSON file or an ACPC ``.game`` file."""
    from pathlib import Path

    from cbr.errors import ConfigError
    from cbr.game.gamedef import GameDef, preset

    path = Path(spec)
    if path.is_file():
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            try:
                return GameDef.from_dict(json.loads(text))
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}: not JSON ({exc})") from None
        return GameDef.from_acpc_game(text, name=path.stem)
    return preset(spec)


@app.command("build")
@guarded
def build_command(
    logs: Annotated[list[str], typer.Argument(help="Log files or folders (ACPC, PHH, IRC database, PokerStars).")],
    out: Annotated[str, typer.Option("--out", "-o", help="The case base to write, e.g. casebases/NAME.")],
    feature_set: Annotated[str, typer.Option("--feature-set", help="Feature-set plugin (cbr.features).")] = "casper",
    players: Annotated[Optional[str], typer.Option("--players", help="Only these players' decisions (comma-separated names).")] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", "-j", min=1, help="Processes computing features (default: one per CPU, at most 8). Any number gives the same case base.")] = None,
    log_format: Annotated[Optional[str], typer.Option("--format", help="Force a log format (acpc, phh, irc, pokerstars).")] = None,
    similarity: Annotated[Optional[str], typer.Option("--similarity", help="Similarity TOML (default: CASPER's).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing case base (atomically, at the end).")] = False,
    max_issues: Annotated[int, typer.Option("--max-issues", help="Skipped hands to list.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Build a case base: every decision of a player with known hole cards becomes a case.

    Writes Parquet per street, a DuckDB catalog, a manifest and one faiss index per street.
    The case base appears only when the build succeeds; bad hands are skipped and listed.
    """
    from cbr.build import build_casebase

    names = [p.strip() for p in players.split(",") if p.strip()] if players else None
    with progress_bar("building", enabled=not as_json) as advance:
        report = build_casebase(logs, out, feature_set=feature_set, players=names,
                                workers=workers if workers is not None else min(os.cpu_count() or 1, 8),
                                format=log_format, similarity=similarity, overwrite=overwrite, progress=advance)
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
    g = _load_game(game)
    if source is not None:
        lines = _read_lines(source)
        cb = CaseBase.open(resolve_casebase(casebase))
        try:
            failed = _query_lines(cb, g, lines, weight, top, explain, as_json)
        finally:
            cb.close()
        if failed:
            typer.echo(f"error: {failed} of {len(lines)} line(s) could not be answered", err=True)
            raise typer.Exit(1)
        return
    dp = _query_situation(g, matchstate, hole, board, dealt if dealt is not None else players, in_hand, position,
                          to_act, committed, to_call, pot, prev_bets)
    cb = CaseBase.open(resolve_casebase(casebase))
    try:
        ans = _answer(cb, dp, weight)
    finally:
        cb.close()
    for warning in ans.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        print_json(ans.to_dict(top=None if explain else top))
        return
    _print_answer(ans, top, explain)


def _answer(cb: Any, dp: Any, weighted: Optional[bool]) -> Any:
    from cbr.query import answer

    return answer(cb, dp, weighted=weighted)


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
                 as_json: bool) -> int:
    """Answer one MATCHSTATE per line (blank lines and '#' comments skipped); a bad line is
    reported on stderr as ``error: line N: ...`` and the others are still answered.
    Returns how many lines failed."""
    from cbr.matchstate import from_matchstate

    failed = 0
    warned: set[str] = set()
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            ans = _answer(cb, from_matchstate(text, g), weighted)
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


if __name__ == "__main__":  # pragma: no cover
    app()
