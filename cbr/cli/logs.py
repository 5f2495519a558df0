"""``cbr logs``: read hand-history logs."""
# No `from __future__ import annotations`: typer reads the options' annotations, and real ones
# (compiled with the module) cost it far less than strings it must evaluate at every start.

from typing import Annotated, Optional

import typer

from cbr.cli._errors import guarded
from cbr.cli._options import (
    MAX_FILE_SIZE_HELP,
    alias,
    file_size,
    known_log_format,
)
from cbr.cli._output import counted, json_ratio, print_json, progress_bar, stdout

#: The statistics of ``cbr logs stats --json`` that are derived ratios (shares, AF, sb/h and its
#: CI), given to 6 significant digits; the counts beside them are exact.
STATS_RATIOS = frozenset({"vpip", "pfr", "aggression", "wtsd", "wsd", "sb_per_hand", "sb_ci"})

app = typer.Typer(help="Read hand-history logs.", no_args_is_help=True, rich_markup_mode=None)


@app.command("inspect")
@guarded
def logs_inspect(
    paths: Annotated[list[str], typer.Argument(help="Log files or folders (walked recursively).")],
    log_format: Annotated[Optional[str], typer.Option("--log-format", "-f",
                                                      help="Force a parser: the format of the logs read (acpc, phh, irc, pokerstars).")] = None,
    log_format_old: Annotated[Optional[str], typer.Option("--format", hidden=True)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    max_issues: Annotated[int, typer.Option("--max-issues", min=0,
                                            help="List at most this many skipped hands.")] = 20,
    max_file_size: Annotated[Optional[int], typer.Option("--max-file-size", parser=file_size, metavar="SIZE",
                                                         help=MAX_FILE_SIZE_HELP)] = None,
) -> None:
    """Read logs, replay every hand, and report hands, skipped hands, decisions and players."""
    from cbr.logs.inspect import inspect_logs
    from cbr.logs.source import DEFAULT_MAX_FILE_SIZE

    fmt = known_log_format(alias(log_format, log_format_old, "--log-format", "--format"))
    with progress_bar("reading logs", enabled=not as_json) as advance:
        report = inspect_logs(paths, format=fmt, progress=advance,
                              max_file_size=max_file_size or DEFAULT_MAX_FILE_SIZE)
    for warning in report.warnings:  # as cbr build says them
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        data = report.to_dict()
        data["skipped"] = data["skipped"][:max_issues]
        print_json(data)
    else:
        stdout.print(f"sources read: {report.sources - report.files_skipped:,}"
                     + (f"   not read: {report.files_skipped:,}" if report.files_skipped else ""))
        stdout.print(f"hands read: {report.hands_read:,}   skipped: {report.hands_skipped:,}"
                     + (f"   lines that are not hands: {report.lines_skipped:,}" if report.lines_skipped else ""))
        stdout.print(f"decisions: {report.decisions:,}   with known hole cards: {report.decisions_known:,}")
        stdout.print(f"players: {report.players:,}")
        for street, kinds in report.actions_per_street.items():
            stdout.print(f"  {street:<8} fold {kinds['f']:>9,}  check/call {kinds['c']:>9,}  bet/raise {kinds['r']:>9,}")
        for name, counts in sorted(report.per_format.items()):
            stdout.print(f"  format {name}: {counted(counts['hands'], 'hand')}, {counts['skipped']:,} skipped, "
                         + (f"{counted(counts['lines'], 'line')} not hands, " if counts.get("lines") else "")
                         + f"{counted(counts['sources'], 'source')}"
                         + (f" ({counts['not_read']:,} not read)" if counts.get("not_read") else ""))
        for issue in report.notes[:max_issues]:
            stdout.print(f"note: {issue}", markup=False, highlight=False, soft_wrap=True)
        if report.skipped:
            kinds = [what for n, what in ((report.hands_skipped, "skipped hands"),
                                          (report.lines_skipped, "lines that are not hands"),
                                          (report.files_skipped, "files not read")) if n]
            stdout.print(" and ".join([", ".join(kinds[:-1]), kinds[-1]] if len(kinds) > 1 else kinds) + ":")
            for issue in report.skipped[:max_issues]:
                stdout.print(f"  {issue}", markup=False, highlight=False, soft_wrap=True)
            rest = len(report.skipped) - max_issues
            if rest > 0:
                stdout.print(f"  ... and {rest:,} more (--max-issues to see them)")
    if report.hands_read == 0:
        typer.echo(f"error: no hand could be read from {', '.join(paths)} "
                   f"({counted(report.hands_skipped, 'hand')} skipped, "
                   + (f"{counted(report.lines_skipped, 'line')} that are not hands, " if report.lines_skipped else "")
                   + f"{counted(report.files_skipped, 'file')} not read)",
                   err=True)
        raise typer.Exit(1)


def _share(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}"


@app.command("stats")
@guarded
def logs_stats(
    paths: Annotated[list[str], typer.Argument(help="Log files or folders (walked recursively), any supported format.")],
    log_format: Annotated[Optional[str], typer.Option("--log-format", "-f",
                                                      help="Force a parser: the format of the logs read (acpc, phh, irc, pokerstars).")] = None,
    player: Annotated[Optional[list[str]], typer.Option("--player", help="Show only this player (repeat for more).")] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Show the players with the most hands, at most this many.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print every statistic and count as JSON.")] = False,
    plot: Annotated[Optional[str], typer.Option("--plot", metavar="FILE.png", help="Draw each shown player's cumulative result (small bets, hand by hand) into this PNG (needs the plots extra: matplotlib).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing --plot file.")] = False,
    max_file_size: Annotated[Optional[int], typer.Option("--max-file-size", parser=file_size, metavar="SIZE",
                                                         help=MAX_FILE_SIZE_HELP)] = None,
) -> None:
    """Per player: hands, VPIP, PFR, aggression factor, went to and won at showdown, and the
    win rate in small bets per hand with its 95% confidence interval.

    VPIP: hands with money put in voluntarily pre-flop (%); PFR: hands with a pre-flop raise
    (%); AF: (bets + raises) / calls after the flop; WTSD: showdowns per hand that saw the
    flop (%); W$SD: showdowns won (%); sb/h over the hands whose result the log tells.
    Every hand is replayed by the rules engine; hands it rejects are skipped and counted.

    Example: cbr logs stats ../shared/data/logs/acpc/dealer_example_limit
    """
    from cbr.cli._output import rich_table
    from cbr.logs.record import no_hand_read
    from cbr.logs.source import DEFAULT_MAX_FILE_SIZE
    from cbr.logs.stats import log_stats

    fmt = known_log_format(log_format)
    if overwrite and plot is None:
        from cbr.cli._errors import usage_error

        raise usage_error("--overwrite replaces the --plot file: give --plot too", "--overwrite")
    if plot is not None:
        from cbr.cli._plot import check_plot

        check_plot(plot, overwrite)
    with progress_bar("reading logs", enabled=not as_json) as advance:
        report = log_stats(paths, format=fmt, progress=advance, max_file_size=max_file_size or DEFAULT_MAX_FILE_SIZE)
    if report.hands_read == 0:
        from cbr.errors import LogFormatError

        raise LogFormatError(no_hand_read(paths, str(report.skipped[0]) if report.skipped else None,
                                          len(report.skipped)))
    if player:
        missing = [p for p in player if p not in report.players]
        if missing:
            from cbr.errors import CBRError

            known = [p.name for p in report.ranked()]
            raise CBRError(f"no player {', '.join(missing)} in these logs; players with the most hands: "
                           f"{', '.join(known[:8])}" + (f" and {len(known) - 8} more" if len(known) > 8 else ""))
        shown = [report.players[p] for p in dict.fromkeys(player)]
    else:
        shown = report.ranked()[:top]
    if as_json:
        data = report.to_dict()
        data["players"] = [{k: json_ratio(v) if k in STATS_RATIOS else v for k, v in p.to_dict().items()}
                           for p in shown]  # the counts (hands, counts) exact
        data["players_in_logs"] = len(report.players)
        print_json(data)
    else:
        rows = [[p.name, f"{p.hands:,}", _share(p.vpip), _share(p.pfr),
                 "n/a" if p.aggression is None else f"{p.aggression:.2f}", _share(p.wtsd), _share(p.wsd),
                 "n/a" if p.sb_per_hand is None else f"{p.sb_per_hand:+.3f}",
                 "n/a" if p.sb_ci is None else f"{p.sb_ci:.3f}"] for p in shown]
        title = (f"{counted(report.hands_read, 'hand')}, {counted(len(report.players), 'player')}"
                 + (f" ({len(shown):,} shown)" if len(shown) < len(report.players) else "")
                 + (f", {counted(report.hands_skipped, 'hand')} skipped" if report.hands_skipped else "")
                 + (f", {counted(report.lines_skipped, 'line')} skipped (not hands)" if report.lines_skipped else "")
                 + (f", {counted(report.files_not_read, 'file')} not read" if report.files_not_read else ""))
        stdout.print(rich_table(title, ["player", "hands", "VPIP %", "PFR %", "AF", "WTSD %", "W$SD %", "sb/h",
                                        "± 95%"], rows))
        for issue in report.skipped[:5]:  # what was left out, and where (all of them in --json)
            stdout.print(f"  {'not read' if issue.whole_file else 'skipped'}: {issue}", markup=False,
                         highlight=False, soft_wrap=True)
        if len(report.skipped) > 5:
            stdout.print(f"  ... and {len(report.skipped) - 5:,} more (--json lists every one)", markup=False,
                         highlight=False)
    if report.mixed:
        typer.echo(f"warning: these logs mix limit ({counted(report.games['limit'], 'hand')}) and no-limit "
                   f"({counted(report.games['no-limit'], 'hand')}) games: sb/h adds small bets of a limit table to big "
                   f"blinds of a no-limit one; read each kind apart (a folder or --log-format each)", err=True)
    if plot is not None:
        from cbr.cli._plot import plot_cumulative

        plot_cumulative(plot, {p.name: p.cumulative() for p in shown if p.results},
                        title=f"cumulative result per player ({counted(report.hands_read, 'hand')})",
                        xlabel="hands played by the player", ylabel="small bets won")
        if not as_json:
            stdout.print(f"plot written to {plot}", markup=False, highlight=False, soft_wrap=True)
