"""``cbr build``: a case base from logs."""
# No `from __future__ import annotations`: typer reads the options' annotations, and real ones
# (compiled with the module) cost it far less than strings it must evaluate at every start.

import sys
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from cbr.cli._errors import guarded, usage_error
from cbr.cli._options import (
    MAX_FILE_SIZE_HELP,
    MAX_WORKERS,
    alias,
    check_output,
    file_size,
    known_feature_set,
    known_log_format,
    worker_count,
)
from cbr.cli._output import counted, print_json, progress_bar, stdout

if TYPE_CHECKING:
    from cbr.build.local import BuildReport


def built_line(out: str, report: "BuildReport") -> str:
    """The summary's first line: ``built OUT: N cases (per street) from N hands in N sources,
    S s (N hands/s)``, each count in the singular for one (the rate too: ``1 hand/s``)."""
    per = ", ".join(f"{s} {n:,}" for s, n in report.cases_per_street.items())
    return (f"built {out}: {counted(report.cases, 'case')} ({per}) from {counted(report.hands, 'hand')} in "
            f"{counted(report.sources, 'source')}, {report.seconds:.1f} s ({counted(round(report.hands_per_second), 'hand')}/s)")


@guarded
def build_command(
    logs: Annotated[list[str], typer.Argument(help="Log files or folders (ACPC, PHH, IRC database, PokerStars).")],
    out: Annotated[str, typer.Option("--out", "-o", help="The case base to write, e.g. casebases/NAME (its folder must exist).")],
    feature_set: Annotated[str, typer.Option("--feature-set", help="Feature-set plugin (cbr.features).")] = "casper",
    only_players: Annotated[Optional[str], typer.Option("--only-players", help="Keep only these players' decisions (comma-separated player names in the logs).")] = None,
    only_players_old: Annotated[Optional[str], typer.Option("--players", hidden=True)] = None,
    only_games: Annotated[Optional[str], typer.Option("--only-games", metavar="GAMES", help="Keep only the hands of these games (comma-separated): limit, nolimit, or game names such as holdem.limit.2p; the hands left out are counted per game.")] = None,
    mixed_games: Annotated[bool, typer.Option("--mixed-games", help="Allow limit and no-limit hands in one case base (refused by default: the features count fixed bets).")] = False,
    workers: Annotated[Optional[int], typer.Option("--workers", "-j", min=1, max=MAX_WORKERS, help="Processes computing features (default: one per CPU, at most 8; more than the CPUs are reduced to the CPUs). Any number gives the same case base.")] = None,
    log_format: Annotated[Optional[str], typer.Option("--log-format", "-f", help="Force the format of the logs read (acpc, phh, irc, pokerstars).")] = None,
    log_format_old: Annotated[Optional[str], typer.Option("--format", hidden=True)] = None,
    similarity: Annotated[Optional[str], typer.Option("--similarity", help="Similarity TOML file, checked before the build (default: the feature set's own, CASPER's for casper; a plugin feature set without one needs it).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing case base (atomically, at the end).")] = False,
    max_issues: Annotated[int, typer.Option("--max-issues", min=0, help="Skipped hands to list.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    max_file_size: Annotated[Optional[int], typer.Option("--max-file-size", parser=file_size, metavar="SIZE",
                                                         help=MAX_FILE_SIZE_HELP)] = None,
    scheduler: Annotated[Optional[str], typer.Option("--scheduler", metavar="ADDRESS|local", help="Run the per-file work on Dask: a scheduler's address (workers reading the logs at the same paths), or 'local' for a local cluster. Needs the [dask] extra; the case base is the same.")] = None,
    dask_workers: Annotated[Optional[int], typer.Option("--dask-workers", min=1, max=64, help="Worker processes of --scheduler local (default 2).")] = None,
) -> None:
    """Build a case base: every decision of a player with known hole cards becomes a case.

    Writes Parquet per street, a DuckDB catalog, a manifest and one faiss index per street.
    The case base appears only when the build succeeds; bad hands are skipped and listed.
    Ctrl-C or SIGTERM stops the workers and leaves nothing behind.

    Example: cbr build ../shared/data/logs/acpc/dealer_example_limit/2p.limit.h1000.r0.log -o example-cb -j 1
    """
    players = alias(only_players, only_players_old, "--only-players", "--players")
    fmt = known_log_format(alias(log_format, log_format_old, "--log-format", "--format"))
    names = [p.strip() for p in players.split(",") if p.strip()] if players else None
    if players is not None and not names:
        raise usage_error("no player name given", "--only-players")
    games = [g.strip() for g in only_games.split(",") if g.strip()] if only_games is not None else None
    if only_games is not None and not games:
        raise usage_error("no game given: limit, nolimit or a game name", "--only-games")
    if dask_workers is not None and scheduler != "local":
        raise usage_error("--dask-workers needs --scheduler local", "--dask-workers")
    if scheduler is not None and workers is not None:
        raise usage_error("--workers does not apply with --scheduler (the Dask workers compute)", "--workers")
    workers = worker_count(workers, lambda cpus: min(cpus, 8))
    known_feature_set(feature_set)
    check_output(out, what="case base", overwrite=overwrite, folder=True)
    from cbr.similarity.config import load_similarity_file

    sim = load_similarity_file(similarity, feature_set) if similarity is not None else None

    from cbr.build.local import build_casebase
    from cbr.logs.source import DEFAULT_MAX_FILE_SIZE

    options = dict(feature_set=feature_set, players=names, format=fmt, similarity=sim, overwrite=overwrite,
                   max_file_size=max_file_size or DEFAULT_MAX_FILE_SIZE, only_games=games, mixed_games=mixed_games)
    # hands done of the hands in the logs, on a terminal only (the library counts them first)
    drawing = not as_json and sys.stderr.isatty()
    with progress_bar("building: hands", enabled=drawing) as advance:
        if scheduler is not None:  # Dask is imported only here
            from cbr.build.on_dask import build_casebase_on_dask

            report = build_casebase_on_dask(logs, out, scheduler=scheduler, dask_workers=dask_workers or 2,
                                            progress=advance if drawing else None, **options)
        else:
            report = build_casebase(logs, out, workers=workers, progress=advance if drawing else None, **options)
    for warning in report.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        print_json(report.to_dict())
        return
    stdout.print(built_line(out, report), soft_wrap=True)
    if report.games_left_out:
        left = ", ".join(f"{name} {n:,}" for name, n in report.games_left_out.items())
        stdout.print(f"--only-games left out {counted(sum(report.games_left_out.values()), 'hand')} of other games "
                     f"({left})", markup=False, highlight=False, soft_wrap=True)
    if report.skipped:
        counts = [f"{counted(n, what)} {how}" for n, what, how in ((report.hands_skipped, "hand", "skipped"),
                                                                  (report.lines_skipped, "line", "skipped (not hands)"),
                                                                  (report.files_skipped, "file", "not read")) if n]
        stdout.print(", ".join(counts) + ":")
        for issue in report.skipped[:max_issues]:
            stdout.print(f"  {issue}", markup=False, highlight=False, soft_wrap=True)
        if len(report.skipped) > max_issues:
            stdout.print(f"  ... and {len(report.skipped) - max_issues:,} more (--max-issues, --json)")
