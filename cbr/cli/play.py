"""``cbr match``, ``cbr serve-dealer`` and ``cbr play``: bots and people at a table."""
# No `from __future__ import annotations`: typer reads the options' annotations, and real ones
# (compiled with the module) cost it far less than strings it must evaluate at every start.

import sys
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from cbr.cli._errors import guarded, usage_error
from cbr.cli._options import (
    MAX_HANDS,
    MAX_SEED,
    MAX_WAIT,
    alias,
    check_output,
    game_option,
)
from cbr.cli._output import (
    chips,
    counted,
    fit_text_column,
    half_width,
    played_lines,
    print_json,
    progress_bar,
    rescaled,
    rich_table,
    signed,
    stderr,
    stdout,
)

if TYPE_CHECKING:  # pragma: no cover
    from cbr.acpc.client import ClientResult
    from cbr.acpc.dealer import DealerResult
    from cbr.play.match import MatchResult


@guarded
def match_command(
    players: Annotated[str, typer.Option("--players", "-p", help="Comma-separated bots, one per seat (2-10), e.g. ehs,call; options as NAME:KEY=VALUE, e.g. cbr:reuse=max-frequency,ehs (see `cbr plugins list`).")],
    hands: Annotated[int, typer.Option("--hands", "-n", min=1, max=MAX_HANDS, help="Hands to play (duplicate: rounded up to a multiple of the seats).")] = 1000,
    duplicate: Annotated[bool, typer.Option("--duplicate", help="Replay every deal with the seats rotated (removes card luck).")] = False,
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of the deals and of the bots' choices.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    log: Annotated[Optional[str], typer.Option("--log", help="Write the hands to this log: a new file in an existing folder, an existing file with --overwrite, or a named pipe (phh: a .phhs file or a directory). Links and devices are refused.")] = None,
    log_format: Annotated[Optional[str], typer.Option("--log-format", "-f", help="Format of the --log: acpc or phh [default: acpc].")] = None,
    log_format_old: Annotated[Optional[str], typer.Option("--format", hidden=True)] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing --log or --plot file (atomically, when the match ends).")] = False,
    retain: Annotated[bool, typer.Option("--retain", help="The cbr bots keep every hand in their case base as it ends (their own decisions, and others' shown at a showdown), durably. A shipped case base (expert, default) is never written: use --retain-into.")] = False,
    retain_into: Annotated[Optional[str], typer.Option("--retain-into", metavar="NAME", help="Retain into case base NAME: a bare name is ./casebases/NAME, a path (with a / or starting with '.') is that folder; created as a copy of the bot's case base on first use (a note says so, with its size); an existing NAME must be that case base or a copy of it; the cbr bots play from it. Implies --retain.")] = None,
    plot: Annotated[Optional[str], typer.Option("--plot", metavar="FILE.png", help="Draw each seat's learning curve into this PNG: its cumulative result in small bets, hand by hand (deal by deal with --duplicate), with a 95% confidence band. Keeps every hand's result in memory; needs the plots extra (matplotlib).")] = None,
    retain_gate: Annotated[Optional[float], typer.Option("--retain-gate", metavar="SIMILARITY", help="With --retain/--retain-into: skip a decision when the case base already holds a case of the same action at least this similar (a near-duplicate), a similarity above 0 and at most 1, e.g. 0.999. Off by default.")] = None,
) -> None:
    """Play bots against each other; results in sb/h and mbb/h with 95% confidence intervals.

    The game is fixed-limit hold'em named by its seats: holdem.limit.2p heads-up (the ACPC
    game), holdem.limit.3p for 3 bots (the ACPC's), holdem.limit.4p to holdem.limit.10p for more
    (the same table: blinds 5/10, bets 10/20); the results and the logs name it so.

    With --retain (or --retain-into NAME) the case-based bots learn during the match: each
    hand is kept in their case base as it ends and seen by their next decision; --plot draws
    the learning curves (a match stopped by Ctrl-C draws the hands finished).

    Example: cbr match --players ehs,call --hands 200 --duplicate
    """
    from contextlib import nullcontext

    from cbr.policies.spec import PolicySpecError, policy_from_spec, split_policy_specs

    fmt = alias(log_format, log_format_old, "--log-format", "--format")
    names = split_policy_specs(players)
    _no_empty_seat(players)
    built = []
    for p in names:  # checks the name and the options; opens nothing (bots read their files on first use)
        try:
            built.append(policy_from_spec(p))
        except PolicySpecError as exc:
            raise usage_error(str(exc), "--players") from None
    if not 2 <= len(names) <= 10:
        raise usage_error(f"a match seats 2 to 10 bots, got {len(names)}", "--players")
    _check_table(built, len(names), "--players")
    if fmt is not None and fmt not in ("acpc", "phh"):
        raise usage_error(f"unknown log format {fmt!r}; use acpc or phh", "--log-format")
    if log is None and fmt is not None:
        raise usage_error("--log-format needs --log", "--log-format")
    if log is None and plot is None and overwrite:
        raise usage_error("--overwrite replaces the --log or --plot file: give one of them", "--overwrite")
    fmt = fmt or "acpc"
    if plot is not None:
        from cbr.cli._plot import check_plot

        check_plot(plot, overwrite)

    if retain_gate is not None and not (retain or retain_into):
        raise usage_error("--retain-gate goes with --retain or --retain-into", "--retain-gate")
    if retain_gate is not None and not 0.0 < retain_gate <= 1.0:
        raise usage_error("--retain-gate is a similarity above 0 (at most 1)", "--retain-gate")
    _retain_into_copy(names, retain_into)
    from cbr.logs.writers import open_log
    from cbr.play.match import interrupted_result, run_match

    n = len(names)
    total = -(-hands // n) * n if duplicate else hands
    writer = open_log(log, fmt, overwrite=overwrite) if log else nullcontext()
    try:
        with writer as w, progress_bar("playing", total=total, enabled=not as_json) as advance:
            result = run_match(names, hands, duplicate=duplicate, seed=seed, progress=advance, log=w,
                               retain=retain, retain_into=retain_into, keep_payoffs=plot is not None,
                               retain_gate=retain_gate)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the result so far, then exit 130 / 143
        partial = interrupted_result(exc)
        if partial is not None:
            _print_match(partial, seed, as_json)
            if log and not as_json:
                stdout.print(f"no log written ({log}: a log holds a whole match)", markup=False, highlight=False,
                             soft_wrap=True)
            if plot is not None and partial.hands:
                _plot_match(partial, plot, as_json)
        raise
    _print_match(result, seed, as_json)
    if plot is not None:
        _plot_match(result, plot, as_json)
    if as_json:
        return
    if log:
        stdout.print(f"log written to {log} ({fmt})", markup=False, highlight=False, soft_wrap=True)


def _plot_match(result: "MatchResult", path: str, as_json: bool) -> None:
    """``cbr match --plot``: each seat's cumulative result with its 95% confidence band."""
    from cbr.cli._plot import plot_cumulative

    curves = result.curves()
    title = (f"{result.game.name}: {counted(result.hands, 'hand')}" + (" (duplicate)" if result.duplicate else "")
             + (" (interrupted)" if result.interrupted else "") + ", 95% confidence bands")
    plot_cumulative(path, {name: c[0] for name, c in curves.items()}, band={name: c[1] for name, c in curves.items()},
                    step=len(result.players) if result.duplicate else 1, title=title, xlabel="hands",
                    ylabel="cumulative result (small bets)")
    if not as_json:
        stdout.print(f"plot written to {path}", markup=False, highlight=False, soft_wrap=True)


def _print_match(result: "MatchResult", seed: int, as_json: bool) -> None:
    """The results of `cbr match` (a table, or JSON), also those of a match stopped early."""
    if as_json:
        print_json(result.to_dict())
        return
    title = (f"{result.game.name}: {counted(result.hands, 'hand')}"
             + (f" (duplicate, {counted(result.deals, 'deal')})" if result.duplicate else "") + f", seed {seed}"
             + (" (interrupted)" if result.interrupted else ""))
    # mbb/h from the printed sb/h, so the two columns agree (+0.263 beside +263, never +262)
    mbb = 1000.0 * result.game.small_bet / result.game.big_blind
    rows = []
    for s, p in enumerate(result.players):
        rate, ci = signed(p.sb_per_hand, 3), half_width(p.sb_ci)
        rows.append([str(s), p.name, signed(p.total, grouped=True), rate, ci, rescaled(rate, mbb), rescaled(ci, mbb, sign=False)])
    columns = ["seat", "bot", "chips", "sb/h", "± 95%", "mbb/h", "± 95%"]
    rows, cut = fit_text_column(columns, rows, 1)  # a long spec on one line, cut in its middle
    # the title on a line of its own: as the table's title it wrapped to the table's width, mid-phrase
    stdout.print(title, markup=False, highlight=False, soft_wrap=True)
    stdout.print(rich_table(None, columns, rows))
    if cut:
        stdout.print("(long bot names cut in the middle: --json has them whole)", markup=False, highlight=False,
                     soft_wrap=True)
    for s, p in enumerate(result.players):  # an adaptive seat: which experts played when (--json: why)
        for line in played_lines(s, p.name, p.experts):
            stdout.print(line, markup=False, highlight=False, soft_wrap=True)
    if result.match_id:
        skipped = f"; the gate skipped {result.retain_skipped:,} near-duplicates" if result.retain_skipped else ""
        memory = (f"; the table memory changed {counted(result.memory_changed, 'decision')}" if result.memory_changed else "")
        stdout.print(f"retained {counted(result.retained, 'case')} (match {result.match_id}){skipped}{memory}", markup=False,
                     highlight=False, soft_wrap=True)


@guarded
def serve_dealer_command(
    players: Annotated[str, typer.Option("--players", "-p", help="Comma-separated seats (2-10): a bot name (played in-process) or 'remote' (an ACPC client connects).")],
    hands: Annotated[int, typer.Option("--hands", "-n", min=1, max=MAX_HANDS, help="Hands to deal.")] = 1000,
    game: Annotated[Optional[str], typer.Option("--game", help="Preset name, ACPC game-file name or .game file [default: holdem.limit.Np for N players, e.g. holdem.limit.2p heads-up].")] = None,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port for remote seats; 0 picks a free one (printed).")] = 0,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of the deals and of the bots' choices.")] = 0,
    timeout: Annotated[float, typer.Option("--timeout", min=0.001, max=MAX_WAIT, help="Seconds a remote seat has for its handshake and each action.")] = 10.0,
    connect_timeout: Annotated[float, typer.Option("--connect-timeout", min=0.001, max=MAX_WAIT, help="Seconds to wait for every remote seat to connect.")] = 60.0,
    log: Annotated[Optional[str], typer.Option("--log", help="Write the ACPC match log here (a new file in an existing folder, or an existing one with --overwrite).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing --log file.")] = False,
    retain: Annotated[bool, typer.Option("--retain", help="The cbr bots keep every hand in their case base as it ends (their own decisions, and others' shown at a showdown), durably. A shipped case base (expert, default) is never written: use --retain-into.")] = False,
    retain_into: Annotated[Optional[str], typer.Option("--retain-into", metavar="NAME", help="Retain into case base NAME: a bare name is ./casebases/NAME, a path (with a / or starting with '.') is that folder; created as a copy of the bot's case base on first use (a note says so, with its size); an existing NAME must be that case base or a copy of it; the cbr bots play from it. Implies --retain.")] = None,
) -> None:
    """Deal a match over the ACPC protocol 2.0.0 (TCP) and print the final scores.

    Remote seats are filled in the order clients connect; with remote seats the first line
    printed is 'listening on HOST:PORT'. A progress bar shows on a terminal once every seat
    is taken. A match stopped early (Ctrl-C, SIGTERM, a fault such as a client that leaves)
    prints the result of the hands dealt, and writes no log.

    Example: cbr serve-dealer --players ehs,call --hands 20
    """
    from contextlib import nullcontext

    from cbr.acpc.dealer import Dealer, stopped_result

    seats = [p.strip() for p in players.split(",") if p.strip()]
    _no_empty_seat(players)
    if not 2 <= len(seats) <= 10:
        raise usage_error(f"a dealer seats 2 to 10 players, got {len(seats)}", "--players")
    if log is None and overwrite:
        raise usage_error("--overwrite needs --log", "--overwrite")
    g = game_option(game, len(seats), acpc=True)  # an unknown name: a usage error on --game
    if g.n_players != len(seats):
        raise usage_error(f"--game {game} seats {counted(g.n_players, 'player')} but --players names {len(seats)}: give "
                          f"{counted(g.n_players, 'seat')}, or a game of {len(seats)} (holdem.limit.{len(seats)}p)", "--players")
    if log:  # before any seat is dealt in (the log is opened when the match starts)
        check_output(log, what="log", overwrite=overwrite)
    from cbr.acpc.dealer import seat_policy
    from cbr.policies.spec import PolicySpecError

    try:  # the bots, built as cbr match builds them (opening nothing), for the seat checks
        built = [seat_policy(s, 0) for s in seats]
    except PolicySpecError as exc:  # a bad seat: a usage error, as in cbr match
        raise usage_error(str(exc), "--players") from None
    _check_table([b for b in built if b is not None], len(seats), "--players", close=True)  # before it listens
    try:
        _retain_into_copy([p for p in seats if p != "remote"], retain_into)
        dealer = Dealer(seats, hands, game=g, seed=seed, host=host, port=port, timeout=timeout,
                        connect_timeout=connect_timeout, retain=retain, retain_into=retain_into)
    except PolicySpecError as exc:  # a bad seat: a usage error, as in cbr match
        raise usage_error(str(exc), "--players") from None
    log_open = finished = False
    try:
        if dealer.remote_seats:
            bound_host, bound_port = dealer.listen()
            typer.echo(f"listening on {bound_host}:{bound_port}")
        from cbr.logs.writers import open_log

        writer = open_log(log, "acpc", g, overwrite=overwrite) if log else nullcontext()
        with writer as w:
            log_open = bool(log)
            dealer.accept()  # the bar shows the hands dealt, not the wait for the clients
            with progress_bar("dealing", total=hands) as advance:
                result = dealer.run(log=w, progress=advance)
            finished = True
    except (KeyboardInterrupt, Exception) as exc:  # the hands dealt, then `interrupted` (130, 143) or the error (1)
        partial = stopped_result(exc)
        if partial is not None:
            _print_dealer(partial, seed, hands)
        if log_open and not finished:
            typer.echo(f"no log written ({log}: a log holds a whole match)")
        if partial is not None and (retain or retain_into):
            typer.echo(f"retained {counted(partial.retained, 'case')}")
        raise
    finally:
        dealer.close()
    _print_dealer(result, seed, hands)
    if log:
        typer.echo(f"log written to {log} (acpc)")
    if retain or retain_into:
        typer.echo(f"retained {counted(result.retained, 'case')}")


def _print_dealer(result: "DealerResult", seed: int, planned: int) -> None:
    """The scores of `cbr serve-dealer`: a table and the ACPC ``SCORE:`` line; for a match
    stopped early, the table and a line saying so (``interrupted: 133 of 1,000 hands
    dealt``), with no ``SCORE:`` line (that is a whole match's)."""
    from cbr.logs.acpc import acpc_number

    rows = [[str(s), name, chips(result.totals[s]), signed(result.sb_per_hand(s), 3)]
            for s, name in enumerate(result.names)]
    stdout.print(f"{result.game.name}: {counted(result.hands, 'hand')}, seed {seed}", markup=False, highlight=False,
                 soft_wrap=True)  # not the table's title, which wraps to the table's width
    stdout.print(rich_table(None, ["seat", "player", "chips", "sb/h"], rows))
    for s, experts in enumerate(result.experts):  # an adaptive seat: which experts played when, as cbr match says
        for line in played_lines(s, result.names[s], experts, why=None):  # (no --json here to say why)
            stdout.print(line, markup=False, highlight=False, soft_wrap=True)
    if result.stopped:
        why = "interrupted" if result.stopped == "interrupted" else "stopped by an error"
        typer.echo(f"{why}: {result.hands:,} of {counted(planned, 'hand')} dealt")
    else:
        typer.echo("SCORE:" + "|".join(acpc_number(t) for t in result.totals) + ":" + "|".join(result.names))


@guarded
def play_command(
    acpc: Annotated[Optional[str], typer.Option("--acpc", help="Play against the ACPC dealer at HOST:PORT.")] = None,
    policy: Annotated[Optional[str], typer.Option("--policy", help="With --acpc: the bot that plays, a policy spec NAME[:KEY=VALUE...], e.g. cbr:reuse=max-frequency (see `cbr plugins list`) [default: ehs].")] = None,
    hands: Annotated[Optional[int], typer.Option("--hands", "-n", min=1, max=MAX_HANDS, help="Stop after this many hands [default: until the dealer closes; 10 with --human].")] = None,
    game: Annotated[Optional[str], typer.Option("--game", help="With --acpc: the dealer's game, a preset, ACPC game-file name or .game file [default: holdem.limit.2p].")] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of the bot's choices; with --human also of the cards dealt (the deals of `cbr match --seed`) [default: 0 with --acpc; with --human a random seed, printed first].")] = None,
    timeout: Annotated[Optional[float], typer.Option("--timeout", min=0.001, max=MAX_WAIT, help="With --acpc: seconds to wait for each line from the dealer [default: 60].")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="With --acpc: print the result and every hand as JSON.")] = False,
    human: Annotated[bool, typer.Option("--human", help="Play yourself, in the terminal, against --players (keys on standard input: f, c, r, q).")] = False,
    players: Annotated[Optional[str], typer.Option("--players", "-p", help="With --human: the bots at the table with you, comma-separated policy specs, as in cbr match [default: cbr].")] = None,
    players_old: Annotated[Optional[str], typer.Option("--bots", hidden=True)] = None,
    retain: Annotated[bool, typer.Option("--retain", help="A cbr bot keeps every hand in its case base as it ends (with --human: your decisions too). A shipped case base (expert, default) is never written: use --retain-into.")] = False,
    retain_into: Annotated[Optional[str], typer.Option("--retain-into", metavar="NAME", help="Retain into case base NAME: a bare name is ./casebases/NAME, a path (with a / or starting with '.') is that folder; created as a copy of the bot's case base on first use (a note says so, with its size); an existing NAME must be that case base or a copy of it; the bot plays from it. Implies --retain.")] = None,
    why: Annotated[bool, typer.Option("--why", help="With --human: after each hand, why the cbr bots did what they did: each decision's triple, its vote and the 3 most similar cases it counted.")] = False,
) -> None:
    """Play a match as a client of an ACPC protocol 2.0.0 dealer (--acpc), or play yourself
    against bots in the terminal (--human).

    With --human, type one key (or word) a line: f fold, c check/call, r bet/raise, q quit;
    a script can pipe them (end of input quits, the result is printed).

    With --acpc a progress bar shows on a terminal (not with --json); a match stopped early
    (Ctrl-C, SIGTERM, an error) prints the result of the hands played before it.

    Example: cbr play --human --players call,raise --hands 2
    """
    bots = alias(players, players_old, "--players", "--bots")
    bots_option = "--bots" if players is None else "--players"  # the name given, for the errors
    if acpc is not None and human:
        raise usage_error("choose one mode: --acpc HOST:PORT or --human, not both", "--human")
    if human:
        if as_json or game is not None:
            raise usage_error("--human plays the default limit game in text: no --json or --game",
                              "--json" if as_json else "--game")
        if policy is not None:
            raise usage_error("--policy is for --acpc; with --human the bots at the table are --players", "--policy")
        if timeout is not None:
            raise usage_error("--timeout is for --acpc (it bounds the wait for a dealer), not --human", "--timeout")
        if seed is None:  # a new game each session (the web table draws one too); printed, to replay it
            import secrets

            seed = secrets.randbelow(2**31)
        _play_human(bots if bots is not None else "cbr", hands or 10, seed, retain, retain_into, why, bots_option)
        return
    if why:
        raise usage_error("--why is for --human (it explains the bots' decisions after each hand)", "--why")
    if acpc is None:
        raise usage_error("say where the dealer is: --acpc HOST:PORT, or play yourself with --human", "--acpc")
    if bots is not None:
        raise usage_error(f"{bots_option} is for --human; with --acpc the bot that plays is --policy", bots_option)
    seed = 0 if seed is None else seed
    from cbr.acpc.client import parse_address, play_acpc, stopped_result
    from cbr.errors import ProtocolError

    try:
        address = parse_address(acpc)
    except ProtocolError as exc:  # the option's value as typed: a usage error (a refused connection is not)
        raise usage_error(str(exc), "--acpc") from None
    g = game_option(game, 2, acpc=True)
    from cbr.policies.spec import PolicySpecError, policy_from_spec

    spec = policy if policy is not None else "ehs"
    try:
        bot = policy_from_spec(spec, seed=seed)
    except PolicySpecError as exc:
        raise usage_error(str(exc), "--policy") from None
    _check_table([bot], g.n_players, "--policy", f" (--game {g.name})")  # before it connects
    _retain_into_copy([bot], retain_into)
    try:
        with progress_bar("playing", total=hands, enabled=not as_json) as advance:
            result = play_acpc(address, bot, g, hands=hands, seed=seed, timeout=timeout if timeout is not None else 60.0,
                               progress=advance, retain=retain, retain_into=retain_into)
    except (KeyboardInterrupt, Exception) as exc:  # the hands played, then `interrupted` (130, 143) or the error (1)
        partial = stopped_result(exc)
        if partial is not None and partial.hands:
            _print_client(partial, spec, as_json, retain or retain_into is not None)
        raise
    _print_client(result, spec, as_json, retain or retain_into is not None)


def _print_client(result: "ClientResult", spec: str, as_json: bool, retaining: bool) -> None:
    """The result of `cbr play --acpc` (a line, or JSON), also that of a match stopped early."""

    if as_json:
        print_json(result.to_dict())
        return
    stopped = " (interrupted)" if result.interrupted else " (stopped by an error)" if result.error else ""
    typer.echo(f"{spec}: {counted(len(result.hands), 'hand')}, {chips(result.total)} chips "
               f"({signed(result.sb_per_hand, 3)} sb/h)" + (f"; retained {counted(result.retained, 'case')}" if retaining else "")
               + stopped)
    for line in played_lines(None, spec, result.experts):  # an adaptive bot: which experts played when (--json: why)
        typer.echo(line)


def _play_human(bots: str, hands: int, seed: int, retain: bool = False, retain_into: Optional[str] = None,
                why: bool = False, option: str = "--players") -> None:
    """`cbr play --human`: the table on stdout, one key (or word) a line from stdin; ``option``
    is the name the bots were given under (``--players``, or its old name ``--bots``)."""
    from cbr.play.human import play_human
    from cbr.policies.spec import split_policy_specs

    specs = split_policy_specs(bots)
    if not specs:
        raise usage_error(f"name at least one bot, e.g. {option} cbr", option)
    if len(specs) > 9:  # as cbr match counts its seats: a usage error, before any bot is built
        raise usage_error(f"a human game seats 1 to 9 bots beside you, got {len(specs)}", option)
    from cbr.policies.spec import PolicySpecError, policy_from_spec

    try:  # built as cbr match builds them (opening nothing), for the seat checks; you are a seat too
        built = [policy_from_spec(s) for s in specs]
    except PolicySpecError as exc:
        raise usage_error(str(exc), option) from None
    _check_table(built, len(specs) + 1, option, close=True)

    def read(prompt: str) -> Optional[str]:
        typer.echo(prompt, nl=False)
        line = sys.stdin.readline()
        if not line:
            typer.echo("")
            return None
        return line.rstrip("\n")

    told: list[bool] = []

    def show(line: str) -> None:
        if not told:  # the seed first, once the bots are seated (a bad --players prints only its error)
            told.append(True)
            typer.echo(f"Seed {seed} (--seed {seed} deals these cards again)")
        typer.echo(line)

    try:
        _retain_into_copy(specs, retain_into)
        result = play_human(specs, hands, read=read, show=show, seed=seed, retain=retain,
                            retain_into=retain_into, why=3 if why else 0)
    except PolicySpecError as exc:  # raised while the bots are built, before any hand
        raise usage_error(str(exc), option) from None
    if retain or retain_into:
        typer.echo(f"retained {counted(result.retained, 'case')}")


def _check_table(bots: list, players: int, option: str, where: str = "", close: bool = False) -> None:
    """A usage error (exit 2) about ``option`` when one of ``bots`` cannot play at a table of
    ``players`` (:func:`~cbr.play.table.seat_refusal`: a heads-up-only bot at three seats or
    more), said before the table opens, not at the bot's first decision. With ``close``, the
    bots (built for the check only) are closed after it."""
    from cbr.play.table import seat_refusal

    try:
        for bot in bots:
            refusal = seat_refusal(bot, players)
            if refusal:
                raise usage_error(refusal + where, option)
    finally:
        for bot in bots if close else ():
            done = getattr(bot, "close", None)
            if callable(done):
                done()


def _no_empty_seat(players: str) -> None:
    """A usage error (exit 2) when ``--players`` has an empty seat (``call,,raise`` was played
    heads-up, the empty name dropped).

    >>> _no_empty_seat("ehs, call")
    >>> try:
    ...     _no_empty_seat("call,,raise")
    ... except Exception as exc:
    ...     print(exc)
    seat 2 of 'call,,raise' is empty: give one bot per seat, separated by single commas
    """
    for i, name in enumerate(players.split(","), 1):
        if not name.strip():
            raise usage_error(f"seat {i} of {players!r} is empty: give one bot per seat, separated by single commas",
                              "--players")


def _retain_into_copy(players: list, into: Optional[str]) -> None:
    """With --retain-into a case base that does not exist yet: copy the case-based bots' case
    base now, before the match, and say so with the copy's size (the match then finds its
    copy). A target that exists must be their case base or a copy of it (else one line,
    exit 1). ``players``: policy specs (built here, opening nothing) or built bots."""
    if into is None:
        return
    from cbr.play.retention import prepare_retention_target, retaining_bots
    from cbr.policies.spec import policy_from_spec

    built = [policy_from_spec(p) if isinstance(p, str) else p for p in players]
    try:
        if not retaining_bots(built):
            return  # the match says why it cannot retain
        _, copied = prepare_retention_target(built, into)
    finally:
        for given, p in zip(players, built):
            close = getattr(p, "close", None)
            if isinstance(given, str) and callable(close):
                close()
    if copied is not None:
        stderr.print(f"note: {copied.line()}", markup=False, highlight=False, soft_wrap=True)
