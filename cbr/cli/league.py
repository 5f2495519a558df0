"""``cbr league``: a round-robin (or a gauntlet) of bots, every pairing a duplicate match."""
# No `from __future__ import annotations`: typer reads the options' annotations, and real ones
# (compiled with the module) cost it far less than strings it must evaluate at every start.

from typing import TYPE_CHECKING, Annotated, Optional

import typer

from cbr.cli._errors import guarded, missing_option, usage_error
from cbr.cli._options import MAX_HANDS, MAX_SEED, MAX_WORKERS, alias, worker_count
from cbr.cli._output import counted, half_width, print_json, progress_bar, rich_table, signed, stdout

if TYPE_CHECKING:  # pragma: no cover
    from cbr.play.league import LeagueResult


@guarded
def league_command(
    players: Annotated[Optional[str], typer.Option("--players", "-p", help="Comma-separated bots (policy specs, e.g. ehs,lag,cbr:reuse=max-frequency; see `cbr plugins list`), each once; as in cbr match. Required.")] = None,
    players_old: Annotated[Optional[str], typer.Option("--bots", "-b", hidden=True)] = None,
    gauntlet: Annotated[Optional[str], typer.Option("--gauntlet", metavar="BOT", help="Play this bot against each of --players (a gauntlet) instead of every pair of --players (a round-robin).")] = None,
    hands: Annotated[int, typer.Option("--hands", "-n", min=2, max=MAX_HANDS, help="Hands per pairing (duplicate: rounded up to a multiple of 2).")] = 1000,
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of pairing 1's deals; pairing i deals from SEED + i - 1.")] = 0,
    workers: Annotated[Optional[int], typer.Option("--workers", "-j", min=1, max=MAX_WORKERS, help="Processes playing pairings at once (default: one per CPU; more than the CPUs are reduced to the CPUs). Any number gives the same league.")] = None,
    scheduler: Annotated[Optional[str], typer.Option("--scheduler", metavar="ADDRESS|local", help="Play the pairings as tasks on Dask: a scheduler's address (workers with cbr installed), or 'local' for a local cluster. Needs the [dask] extra; the league is the same.")] = None,
    dask_workers: Annotated[Optional[int], typer.Option("--dask-workers", min=1, max=64, help="Worker processes of --scheduler local (default 2).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the pairings and the standings as JSON.")] = False,
    plot: Annotated[Optional[str], typer.Option("--plot", metavar="FILE.png", help="Draw the standings (each bot's mean sb/h with its 95% confidence interval) into this PNG (needs the plots extra: matplotlib).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing --plot file.")] = False,
) -> None:
    """Play a league of bots: every pairing a duplicate heads-up match, with its 95% confidence
    interval, then the standings (each bot's mean sb/h over its pairings).

    A round-robin plays every pair of --players once; --gauntlet BOT plays BOT against each of
    them. Pairings run in parallel worker processes (or on Dask with --scheduler); a progress
    bar counts the hands played (on Dask, those of the pairings finished). Ctrl-C or SIGTERM stops the workers and
    prints the pairings finished (and their standings), then exits 130 (143).

    Example: cbr league --players ehs,lag,call --hands 100
    """
    from cbr.policies.spec import PolicySpecError, policy_from_spec, split_policy_specs

    players = alias(players, players_old, "--players", "--bots")
    if players is None:
        raise missing_option("--players", "-p")
    names = split_policy_specs(players)
    for spec in [*names, *([gauntlet] if gauntlet else [])]:
        try:
            policy_from_spec(spec)
        except PolicySpecError as exc:
            raise usage_error(str(exc), "--gauntlet" if spec == gauntlet else "--players") from None
    everyone = [*names, *([gauntlet] if gauntlet else [])]
    if len(everyone) < 2:
        raise usage_error(f"a league needs at least two bots, got {len(everyone)}", "--players")
    twice = [b for i, b in enumerate(everyone) if b in everyone[:i]]
    if twice:
        raise usage_error(f"a bot plays once in a league: {', '.join(dict.fromkeys(twice))} given twice", "--players")
    if dask_workers is not None and scheduler != "local":
        raise usage_error("--dask-workers needs --scheduler local", "--dask-workers")
    if scheduler is not None and workers is not None:
        raise usage_error("--workers does not apply with --scheduler (the Dask workers play)", "--workers")
    if overwrite and plot is None:
        raise usage_error("--overwrite replaces the --plot file: give --plot too", "--overwrite")
    if plot is not None:
        from cbr.cli._plot import check_plot

        check_plot(plot, overwrite)
    from cbr.play.league import interrupted_league, league_processes, pairings_of, run_league
    from cbr.policies.spec import store_clash

    # a bot playing from a model store: one process at a time may have it open, refused before any work
    n_pairs = len(pairings_of(names, gauntlet))
    clash = store_clash(everyone, league_processes(n_pairs, workers or 2, scheduler, dask_workers or 2))
    if clash and (workers is not None or scheduler is not None):
        raise usage_error(f"{clash}: give --workers 1" + (", without --scheduler" if scheduler is not None else ""),
                          "--scheduler" if scheduler is not None else "--workers")
    workers = 1 if clash else worker_count(workers, lambda cpus: cpus)

    try:
        with progress_bar("league: hands", enabled=not as_json) as advance:
            result = run_league(names, hands, hero=gauntlet, seed=seed, workers=workers, scheduler=scheduler,
                                dask_workers=dask_workers or 2, progress=advance)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the pairings finished, then exit 130 / 143
        partial = interrupted_league(exc)
        if partial is not None:
            _print_league(partial, as_json, plot)
        raise
    _print_league(result, as_json, plot)


def _print_league(result: "LeagueResult", as_json: bool, plot: Optional[str]) -> None:
    """The pairings and standings of `cbr league` (tables or JSON), and its --plot."""
    standings = result.standings()
    if not result.pairings:  # stopped before any pairing ended: nothing to rank, no plot
        typer.echo("no pairing finished before the league stopped: no standings"
                   + (", no plot written" if plot is not None else "")
                   + " (a pairing counts only once all its hands are played)", err=True)
    if as_json:
        print_json(result.to_dict())
    elif result.pairings:
        played = (f"{len(result.pairings)} of {counted(result.planned, 'pairing')}"
                  if result.interrupted else counted(result.planned, 'pairing'))
        title = (f"{result.mode}: {played}, {result.hands:,} duplicate hands each, seed {result.seed}"
                 + (" (interrupted)" if result.interrupted else ""))
        rows = [[p.a, p.b, f"{p.hands:,}", signed(p.sb_per_hand, 3), half_width(p.sb_ci)] for p in result.pairings]
        # the title on a line of its own (as the table's title it wrapped mid-phrase), as cbr match does
        stdout.print(title, markup=False, highlight=False, soft_wrap=True)
        stdout.print(rich_table(None, ["bot", "against", "hands", "sb/h", "± 95%"], rows))
        rows = [[str(k), s.bot, f"{s.pairings:,}", signed(s.sb_per_hand, 3), half_width(s.sb_ci), f"{s.won:,}", f"{s.lost:,}"]
                for k, s in enumerate(standings, 1)]
        stdout.print(rich_table("standings (mean sb/h over the pairings)",
                                ["#", "bot", "pairings", "sb/h", "± 95%", "won", "lost"], rows))
    if plot is not None and standings:
        from cbr.cli._plot import plot_leaderboard

        plot_leaderboard(plot, [s.bot for s in standings], [s.sb_per_hand for s in standings],
                         [s.sb_ci for s in standings],
                         title=f"{result.mode}: mean sb/h over {counted(len(result.pairings), 'pairing')} of "
                               f"{result.hands:,} duplicate hands" + (" (interrupted)" if result.interrupted else ""),
                         xlabel="small bets per hand (95% confidence interval)")
        if not as_json:
            stdout.print(f"plot written to {plot}", markup=False, highlight=False, soft_wrap=True)


