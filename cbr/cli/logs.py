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
from cbr.cli._output import print_json, progress_bar, stdout

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
    if as_json:
        data = report.to_dict()
        data["skipped"] = data["skipped"][:max_issues]
        print_json(data)
    else:
        stdout.print(f"sources read: {report.sources - report.files_skipped}"
                     + (f"   not read: {report.files_skipped}" if report.files_skipped else ""))
        stdout.print(f"hands read: {report.hands_read}   skipped: {report.hands_skipped}")
        stdout.print(f"decisions: {report.decisions}   with known hole cards: {report.decisions_known}")
        stdout.print(f"players: {report.players}")
        for street, kinds in report.actions_per_street.items():
            stdout.print(f"  {street:<8} fold {kinds['f']:>7}  check/call {kinds['c']:>7}  bet/raise {kinds['r']:>7}")
        for name, counts in sorted(report.per_format.items()):
            stdout.print(f"  format {name}: {counts['hands']} hands, {counts['skipped']} skipped, "
                         f"{counts['sources']} sources"
                         + (f" ({counts['not_read']} not read)" if counts.get("not_read") else ""))
        for issue in report.notes[:max_issues]:
            stdout.print(f"note: {issue}", markup=False, highlight=False, soft_wrap=True)
        if report.skipped:
            stdout.print("skipped hands and files not read:" if report.files_skipped else "skipped hands:")
            for issue in report.skipped[:max_issues]:
                stdout.print(f"  {issue}", markup=False, highlight=False, soft_wrap=True)
            rest = len(report.skipped) - max_issues
            if rest > 0:
                stdout.print(f"  ... and {rest} more (--max-issues to see them)")
    if report.hands_read == 0:
        typer.echo(f"error: no hand could be read from {', '.join(paths)} "
                   f"({report.hands_skipped} hand(s) skipped, {report.files_skipped} file(s) not read)", err=True)
        raise typer.Exit(1)
