"""``cbr players``: opponent models in a model store."""
# No `from __future__ import annotations`: typer reads the options' annotations, and real ones
# (compiled with the module) cost it far less than strings it must evaluate at every start.

from typing import Annotated, Any, Optional

import typer

from cbr.cli._errors import guarded, usage_error
from cbr.cli._options import (
    known_log_format,
)
from cbr.cli._output import counted, print_json, progress_bar, rich_table, stdout

app = typer.Typer(help="Opponent models: the thesis' player model, kept in a model store.",
                          no_args_is_help=True, rich_markup_mode=None)

BUILD_STORE_HELP = "The model store to fill: a DuckDB file (made when missing)."
BUILD_CASEBASE_HELP = ("Fill players.duckdb inside this case base instead (a path or a name; a case base of your "
                       "own: the shipped ones, default and expert, are read-only).")
INSPECT_STORE_HELP = "The model store to read: a DuckDB file made by `cbr players build`."
INSPECT_CASEBASE_HELP = ("Read players.duckdb inside this case base instead (a path or a name; one filled by "
                         "`cbr players build --casebase`: the shipped ones, default and expert, hold none).")


def _players_store(store: Optional[str], casebase: Optional[str]) -> str:
    """The model store path from --store or --casebase (exactly one; else a usage error)."""
    if (store is None) == (casebase is None):
        raise usage_error("give the model store with --store PATH or --casebase NAME (one of them)", "--store")
    if store is not None:
        return store
    from cbr.models.store import casebase_store_path

    return str(casebase_store_path(casebase))  # type: ignore[arg-type]


@app.command("build")
@guarded
def players_build(
    paths: Annotated[list[str], typer.Argument(help="Log files or folders (walked recursively).")],
    store: Annotated[Optional[str], typer.Option("--store", help=BUILD_STORE_HELP)] = None,
    casebase: Annotated[Optional[str], typer.Option("--casebase", help=BUILD_CASEBASE_HELP)] = None,
    log_format: Annotated[Optional[str], typer.Option("--log-format", "-f",
                                                      help="Force a parser (acpc, phh, irc, pokerstars).")] = None,
    reset: Annotated[bool, typer.Option("--reset", help="Empty the store first (default: add to it).")] = False,
    max_issues: Annotated[int, typer.Option("--max-issues", min=0, max=10**6,
                                            help="Skipped hands and files not read to list (--json: at least 100).")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Replay every hand of the logs into per-player models and save them in the store.

    Each player's actions in a hand are one round of the thesis' player model
    (aggressiveness, tightness, riskiness). Players already in the store are continued;
    a log the store has read before (the same bytes, by SHA-256) is skipped with a note,
    so no hand counts twice (--reset starts over). Hands skipped and files not read are
    listed with file:line and the reason; when no hand can be read the build fails saying
    why and writes nothing (a store it made is not left behind). The store is written in
    one transaction at the end.
    """
    from cbr.models.store import build_store

    fmt = known_log_format(log_format)
    path = _players_store(store, casebase)
    with progress_bar("reading logs", enabled=not as_json) as advance:
        report = build_store(paths, path, format=fmt, reset=reset, progress=advance,
                             max_issues=max(max_issues, 100))
    if as_json:
        print_json(report.to_dict())
    else:
        typer.echo(f"{counted(report.hands, 'hand')} read ({report.skipped:,} skipped), {counted(report.players, 'player')}; "
                   f"{counted(report.players_in_store, 'player')} in {report.store}")
        _list_skipped(report, max_issues)
    for src in report.skipped_sources:
        when = f"on {src['read_at']}" if src["read_at"] else "earlier in this build"
        again = "" if src["read_as"] == src["path"] else f" as {src['read_as']}"
        typer.echo(f"note: {src['path']} skipped: its bytes were already read into {report.store} {when}{again} "
                   f"(--reset starts over)", err=True)


def _list_skipped(report: Any, max_issues: int) -> None:
    """The hands skipped and the files not read, with file:line and the reason (as `cbr build`)."""
    total = report.skipped + report.lines_skipped + report.files_skipped
    if not total:
        return
    counts = [f"{counted(n, what)} {how}" for n, what, how in ((report.skipped, "hand", "skipped"),
                                                              (report.lines_skipped, "line", "skipped (not hands)"),
                                                              (report.files_skipped, "file", "not read")) if n]
    typer.echo(", ".join(counts) + ":")
    shown = report.issues[:max_issues]
    for issue in shown:
        typer.echo(f"  {issue}")
    if total > len(shown):
        typer.echo(f"  ... and {total - len(shown):,} more (--max-issues, --json)")


@app.command("inspect")
@guarded
def players_inspect(
    store: Annotated[Optional[str], typer.Option("--store", help=INSPECT_STORE_HELP)] = None,
    casebase: Annotated[Optional[str], typer.Option("--casebase", help=INSPECT_CASEBASE_HELP)] = None,
    player: Annotated[Optional[str], typer.Option("--player", help="Show this player only (defaults if never seen).")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=10**9,
                                       help="Without --player: show the players with most hands, at most this many.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show the player models: aggressiveness, tightness and riskiness, overall and over the
    last 10 hands (agg10, tight10, risk10). A player never seen, or an attribute never
    measured (tightness needs shown cards), shows the documented defaults.
    """
    from cbr.models.store import inspect_store

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
        typer.echo(f"{m.player}: {counted(m.hands, 'hand')}" + ("" if m.hands else " (never seen: defaults)"))
        for a in ("aggressiveness", "tightness", "riskiness"):
            note = " (default)" if a in m.defaults else f" ({counted(m.measured.get(a, 0), 'hand')})"
            typer.echo(f"  {a:<15} {getattr(m, a):.3f}   recent {getattr(m, 'recent_' + a):.3f}{note}")
        return
    rows = [[m.player, f"{m.hands:,}", *(f"{getattr(m, k):.3f}" for k in (
        "aggressiveness", "recent_aggressiveness", "tightness", "recent_tightness", "riskiness", "recent_riskiness"))]
        for m in models]
    stdout.print(rich_table(f"{counted(total, 'player')} in {path}" + (f" (first {limit:,})" if total > limit else ""),
                             ["player", "hands", "agg", "agg10", "tight", "tight10", "risk", "risk10"], rows))
