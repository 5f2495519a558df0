"""``cbr train``: models beside the case base (the ANN predictor, the thesis network, CFR)."""
# No `from __future__ import annotations`: typer reads the options' annotations, and real ones
# (compiled with the module) cost it far less than strings it must evaluate at every start.

from typing import Annotated, Optional

import typer

from cbr.cli._errors import guarded, usage_error
from cbr.cli._options import (
    FLAG,
    check_output,
    known_log_format,
)
from cbr.cli._output import counted, fmt_score, print_json, progress_bar, rich_table, stderr, stdout

app = typer.Typer(help="Train models beside the case base.", no_args_is_help=True, rich_markup_mode=None)


@app.command("predictor")
@guarded
def train_predictor_command(
    sources: Annotated[list[str], typer.Argument(help="Log files or folders (any supported format), or one case base (a directory, a name under ./casebases/, or 'default'); not both.")],
    player: Annotated[Optional[str], typer.Option("--player", help="Learn only this player's decisions.")] = None,
    out: Annotated[str, typer.Option("--out", "-o", help="Where to save the trained predictor.")] = "predictor.ann",
    overwrite: Annotated[bool, typer.Option("--overwrite", metavar=FLAG, help="Replace an existing --out file.")] = False,
    folds: Annotated[int, typer.Option("--folds", min=2, max=50, help="Cross-validation folds (whole hands per fold).")] = 5,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help="Seed of the folds and the network.")] = 0,
    log_format: Annotated[Optional[str], typer.Option("--log-format", "-f", help="Force the format of the logs read (acpc, phh, irc, pokerstars).")] = None,
    as_json: Annotated[bool, typer.Option("--json", metavar=FLAG, help="Print the report as JSON.")] = False,
) -> None:
    """Train the ANN action predictor (an MLP over the 19 context inputs of Davidson's
    network) and report its cross-validated accuracy and log-loss per street, beside a
    majority-class and a per-context frequency baseline; then save it with its input schema.

    Example: cbr train predictor ../shared/data/logs/acpc/dealer_example_limit --folds 3 --out acpc.ann
    """
    from cbr.models.predictor import train_predictor

    fmt = known_log_format(log_format)
    check_output(out, what="predictor", overwrite=overwrite)
    from cbr.store import detect_casebase

    bases = [s for s in sources if detect_casebase([s]) is not None]
    if bases and len(sources) > 1:  # detect_casebase(sources) is None then: the case base was read as logs
        raise usage_error(f"give one case base, or logs, not both: {' and '.join(bases)} "
                          f"{'is a case base' if len(bases) == 1 else 'are case bases'}")
    cb_path = detect_casebase(sources)
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
    stdout.print(f"{counted(report.examples, 'decision')} from {counted(report.hands, 'hand')}{who}; {report.folds}-fold cross-validation "
                 f"(seed {report.seed}); log-loss clips probabilities at {report.clip}",
                 markup=False, highlight=False, soft_wrap=True)
    rows = [[s.street, f"{s.decisions:,}", fmt_score(s.accuracy["ann"]), fmt_score(s.accuracy["majority"]),
             fmt_score(s.accuracy["context"]), fmt_score(s.log_loss["ann"]), fmt_score(s.log_loss["majority"]),
             fmt_score(s.log_loss["context"])] for s in [*report.streets, report.overall]]
    stdout.print(rich_table("accuracy (acc) / log-loss (ll)",
                             ["street", "n", "acc ANN", "acc maj", "acc ctx", "ll ANN", "ll maj", "ll ctx"], rows))
    for s in report.streets:
        if s.note:
            stderr.print(f"note: {s.street}: {s.note}", markup=False, highlight=False, soft_wrap=True)
    if report.files_skipped:
        stderr.print(f"note: {counted(report.files_skipped, 'file')} not read (cbr logs inspect says why)", soft_wrap=True)
    if report.skipped:
        stderr.print(f"note: {report.skipped:,} {'hand or case' if report.skipped == 1 else 'hands or cases'} could not "
                     f"be used", soft_wrap=True)
    if not report.converged:
        stderr.print("note: the network stopped at its iteration limit before converging", soft_wrap=True)
    stdout.print(f"saved to {report.saved}", markup=False, highlight=False, soft_wrap=True)


@app.command("network")
@guarded
def train_network_command(
    sources: Annotated[list[str], typer.Argument(help="Log files or folders (any supported format).")],
    player: Annotated[Optional[list[str]], typer.Option("--player", help="Train one network per player named (repeat); default: the three players with the most shown-card actions.")] = None,
    hidden: Annotated[Optional[list[int]], typer.Option("--hidden", min=1, max=64, help="Hidden neurons (repeat for several, as the thesis' table 8) [default: 2].")] = None,
    out: Annotated[Optional[str], typer.Option("--out", "-o", help="Save the network of the first player and hidden size here (once every network is trained).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", metavar=FLAG, help="Replace an existing --out file.")] = False,
    folds: Annotated[int, typer.Option("--folds", min=2, max=50, help="Cross-validation folds (whole hands per fold).")] = 5,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help="Seed of the folds and the network.")] = 0,
    log_format: Annotated[Optional[str], typer.Option("--log-format", "-f", help="Force the format of the logs read (acpc, phh, irc, pokerstars).")] = None,
    as_json: Annotated[bool, typer.Option("--json", metavar=FLAG, help="Print the report as JSON.")] = False,
) -> None:
    """Train the thesis' default-strategy network (5 inputs, 2 outputs: defensive,
    aggressive) on each player's actions with shown cards and report its total network
    error (TNE, Neuroph's halved mean squared error) per player as the thesis' table 8:
    on the training data, held out, and of a constant-frequency baseline. Logs that give
    no hand, or no shown cards, are an error.

    Example: cbr train network ../shared/data/logs/acpc/dealer_example_limit/2p.limit.h1000.r0.log --folds 3
    """
    from cbr.policies.thesis_net import TooFewExamplesError, examples_from_logs, train_network

    fmt = known_log_format(log_format)
    if out is not None:
        check_output(out, what="network", overwrite=overwrite)
    with progress_bar("reading logs", enabled=not as_json) as advance:
        ex = examples_from_logs(list(sources), log_format=fmt, progress=advance)
    players = list(player) if player else list(ex.counts())[:3]
    if not players:
        raise TooFewExamplesError(f"no action with shown cards in the {counted(ex.hands, 'hand')} read from "
                                  f"{', '.join(sources)}: the network learns only the actions of players "
                                  f"whose hole cards the logs show")
    sizes = list(hidden) if hidden else [2]
    reports = []
    first = None
    with progress_bar("training", total=len(players) * len(sizes) * (folds + 1), enabled=not as_json) as advance:
        for p in players:
            for h in sizes:
                net, report = train_network(ex, player=p, hidden=h, folds=folds, seed=seed, progress=advance)
                reports.append(report)
                if first is None:
                    first = net
    saved = None
    if out is not None and first is not None:  # once every network is trained: nothing after a failure or Ctrl-C
        saved = str(first.save(out, overwrite=overwrite))
    if as_json:
        print_json({"reports": [r.to_dict() for r in reports], "saved": saved, "hands": ex.hands,
                    "skipped": len(ex.skipped), "files_skipped": len(ex.files_skipped)})
        return
    rows = [[r.player, r.hidden, f"{r.examples:,}", f"{r.hands:,}", f"{r.raise_share:.2f}", f"{100 * r.train_tne:.1f}",
             f"{100 * r.cv_tne:.1f}", f"{100 * r.baseline_tne:.1f}", f"{100 * r.cv_error:.1f}"] for r in reports]
    stdout.print(rich_table(f"TNE % (train, held out in {folds} folds, constant baseline), seed {seed}",
                             ["player", "hid", "acts", "hands", "raise", "train", "held out", "const", "err %"],
                             rows))
    if ex.files_skipped:
        stderr.print(f"note: {counted(len(ex.files_skipped), 'file')} not read (cbr logs inspect says why)", soft_wrap=True)
    if ex.skipped:
        stderr.print(f"note: {counted(len(ex.skipped), 'hand')} could not be used", soft_wrap=True)
    if not all(r.converged for r in reports):
        stderr.print("note: a network stopped at its iteration limit before converging", soft_wrap=True)
    if saved:
        stdout.print(f"saved to {saved}", markup=False, highlight=False, soft_wrap=True)


@app.command("cfr")
@guarded
def train_cfr_command(
    abstraction: Annotated[str, typer.Option("--abstraction", "-a", help="Abstraction directory (its bucket_game.npz is the abstract game), or the name of a shipped one under casebases/cfr/.")],
    iterations: Annotated[int, typer.Option("--iterations", "-n", min=1, max=10**9, help="Train until this many CFR+ iterations in all (with --resume: counting the checkpoint's).")],
    game: Annotated[str, typer.Option("--game", help="holdem.limit.2p (ACPC heads-up limit) or nolimit.fcpa (100 bb, fold/call/pot/all-in).")] = "holdem.limit.2p",
    resume: Annotated[bool, typer.Option("--resume", metavar=FLAG, help="Continue from the run's checkpoint (<out>.ckpt.npz).")] = False,
    out: Annotated[Optional[str], typer.Option("--out", "-o", help="Strategy file [default: cfr.<game>.npz in the abstraction directory; for a shipped abstraction, which is never written, in the current directory].")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", metavar=FLAG, help="Replace an existing strategy file and start its checkpoint over.")] = False,
    checkpoint_every: Annotated[int, typer.Option("--checkpoint-every", min=0, help="Write the checkpoint every K iterations (0: only at the end).")] = 50,
    as_json: Annotated[bool, typer.Option("--json", metavar=FLAG, help="Print the report as JSON.")] = False,
) -> None:
    """Solve the abstract game with CFR+ (vector form, chance enumerated, in C) and store the
    average strategy beside its abstraction (a shipped abstraction's in the current
    directory); report its exact exploitability in mbb/g. An existing strategy or
    checkpoint is kept unless --overwrite (or continued with --resume). Ctrl-C stops
    between iterations and says which checkpoint --resume continues from.

    Example: cbr train cfr -a h_hs2_4 -n 2 -o cfr-example.npz
    """
    from cbr.cfr.solver import checkpoint_iteration
    from cbr.cfr.strategy import checkpoint_path, default_output, inside_package, resolve_abstraction_dir, train
    from cbr.cfr.tree import GAMES
    from cbr.errors import OutputPathError

    if game not in GAMES:
        raise usage_error(f"unknown game {game!r}; choose one of {', '.join(GAMES)}", "--game")
    if resume and overwrite:
        raise usage_error("--resume continues the run's files, --overwrite starts over: give one", "--overwrite")
    directory = resolve_abstraction_dir(abstraction)
    target = out if out is not None else default_output(directory, game)
    if inside_package(target):  # also the default, run from inside the package's folders
        raise OutputPathError(f"{target} is inside the installed package, which is never written; "
                              f"give --out a path elsewhere")
    check_output(str(target), what="strategy", overwrite=True)  # its folder must exist; replacing it: the trainer's rule
    checkpoints = [checkpoint_path(target)]
    try:
        with progress_bar("CFR+ iterations", total=iterations, enabled=not as_json) as advance:
            report = train(game, directory, iterations, resume=resume, out=out, overwrite=overwrite,
                           checkpoint_every=checkpoint_every, progress=lambda n: advance(n),
                           on_start=lambda done, total: advance(done),
                           on_checkpoint=lambda _, path: checkpoints.append(path))
    except KeyboardInterrupt:  # say what --resume continues (the file itself is the truth)
        done = checkpoint_iteration(checkpoints[-1])
        if done is not None:
            stderr.print(f"checkpoint at iteration {done} in {checkpoints[-1]}; continue with --resume "
                         f"(and the same --abstraction, --game and --out)", markup=False, highlight=False,
                         soft_wrap=True)
        else:
            stderr.print("no checkpoint was written yet (see --checkpoint-every): a new run starts over",
                         markup=False, highlight=False, soft_wrap=True)
        raise
    if resume and report["ran"] == 0:  # -n counts the checkpoint's iterations: say why none ran
        had = report["iterations"]
        than = f"more than -n {iterations:,}" if had > iterations else f"as many as -n {iterations:,}"
        stderr.print(f"note: the checkpoint already has {counted(had, 'iteration')}, {than}, so nothing was trained "
                     f"(-n counts the checkpoint's iterations: give -n above {had:,} to train more)",
                     markup=False, highlight=False, soft_wrap=True)
    if as_json:
        print_json(report)
        return
    stdout.print(f"{report['game']}: {counted(report['iterations'], 'iteration')} ({report['ran']:,} in this run, "
                 f"{report['seconds']:.1f} s), {report['info_sets']:,} information sets", markup=False,
                 highlight=False, soft_wrap=True)
    stdout.print(f"exploitability {report['exploitability_mbb']:.1f} mbb/g "
                 f"(stored, quantised: {report['stored_exploitability_mbb']:.1f} mbb/g)", markup=False,
                 highlight=False, soft_wrap=True)
    stdout.print(f"saved to {report['strategy']} ({report['bytes']:,} bytes); checkpoint {report['checkpoint']}",
                 markup=False, highlight=False, soft_wrap=True)
