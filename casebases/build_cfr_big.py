"""A bigger MCCFR abstraction trained across working sessions: ``python -m casebases.build_cfr_big``.

Recipe (issue 37): :class:`cbr.abstraction.distribution.DistributionAbstraction` with
``--flop``, ``--turn`` and ``--river`` buckets (k-medians of river-HS distributions on the flop
and turn, fitted on ``--fit-boards`` random boards a street; a percentile river, or with
``--river-kind ochs`` an OCHS river of ``--clusters`` opponent clusters; seed ``--seed``), then
external-sampling MCCFR (:mod:`cbr.cfr.mccfr`) with :mod:`casebases.build_cfr_emd`'s loop, its
options and its trainer. Everything goes into the run folder ``--out`` (default
``.cfr-runs/<name>/``, an ignored folder of the work tree: nothing here ships), laid out as
:class:`cbr.cfr.longrun.RunFolder` says; ``cfr:strategy=.cfr-runs/<name>`` plays it.

- Run again with the same options, it resumes from ``checkpoint.npz``; other options are
  refused with one line (the folder's abstraction says what it was built with).
  ``--abstraction FILE`` takes a built ``abstraction.npz`` instead of building one.
- The tables' memory is reported before training, and a run over ``--max-gb`` refused.
- A checkpoint every ``--checkpoint-minutes`` of wall time, a strategy snapshot every
  ``--snapshot-minutes`` of training, a line in ``progress.jsonl`` at each checkpoint;
  training stops after ``--minutes`` (this session) or at ``--iterations`` in all.
- Ctrl-C or SIGTERM: the checkpoint is saved (atomically: a second Ctrl-C waits for it), then
  the recipe exits 130 or 143 with one line. While the abstraction is built (before training):
  one line, 130 or 143, and nothing kept; from the first signal on, later ones are ignored (a
  second Ctrl-C cuts neither the line nor the exit). Bad values: a usage error naming the valid range,
  exit 2; other errors: one ``error:`` line, exit 1. Everything is checked before anything is
  made, and a start that fails removes what it made (a folder it made; in a folder that was
  there, its lock and abstraction), nothing else.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from casebases import output_root
from casebases.build_cfr_emd import (
    Help,
    ProgressBar,
    StartSignals,
    Stopped,
    add_quiet,
    add_training_options,
    make_folder,
    new_trainer,
    number,
    run_or_say,
    say,
    say_stopped,
    train,
)
from cbr.errors import counted

HERE = Path(__file__).resolve().parent


def wanted_options(args: argparse.Namespace) -> dict:
    """What the folder's abstraction must have been built with."""
    return {"flop": args.flop, "turn": args.turn, "river": args.river, "river-kind": args.river_kind,
            "clusters": args.clusters if args.river_kind == "ochs" else 0, "seed": args.seed,
            "fit-boards": args.fit_boards}


def built_options(a) -> dict:
    """The options an abstraction was built with (its bucket counts, river and meta)."""
    return {"flop": a.n_buckets[1], "turn": a.n_buckets[2], "river": a.n_buckets[3],
            "river-kind": "hs" if a.ochs is None else "ochs", "clusters": 0 if a.ochs is None else a.ochs.k,
            "seed": a.meta.get("seed"), "fit-boards": a.meta.get("fit_boards")}


def _flags(options: dict) -> str:
    return " ".join(f"--{k} {v}" for k, v in options.items() if not (k == "clusters" and not v))


def check_options(folder: Path, a, args: argparse.Namespace, *, given: bool = False) -> None:
    """A :class:`ConfigError` unless ``a`` (the folder's abstraction, or with ``given`` the
    ``--abstraction`` file ``folder``'s) was built with these options."""
    from cbr.errors import ConfigError

    have, want = built_options(a), wanted_options(args)
    if have != want and given:
        raise ConfigError(f"{folder}: this abstraction was built with {_flags(have)}, not {_flags(want)}: give "
                          f"the options it was built with, or no --abstraction to build one")
    if have != want:
        raise ConfigError(f"{folder}: this run was started with {_flags(have)}, not {_flags(want)}: give the same "
                          f"options to continue it, or another --name/--out to start another")


def abstraction_of(folder: Path, args: argparse.Namespace, given, made: list[Path]):
    """The run folder's abstraction: the one there (checked against the options), else
    ``given`` (the ``--abstraction`` file's, checked already: copied in), else a new one built
    and saved. The files it writes go into ``made`` first (a failed start removes them)."""
    from cbr.abstraction.distribution import DistributionAbstraction
    from cbr.cfr.longrun import RunFolder

    files = RunFolder(folder)
    if files.abstraction.exists():
        a = DistributionAbstraction.load(files.abstraction)
        check_options(folder, a, args)
        return a
    if given is not None:
        copy = files.path / ".abstraction.npz.copy"
        made += [copy, files.abstraction]
        shutil.copyfile(args.abstraction, copy)
        copy.replace(files.abstraction)
        return given
    t0, c0 = time.time(), time.process_time()
    say(f"building the abstraction ({_flags(wanted_options(args))}): minutes")
    bar = ProgressBar(not args.quiet)
    try:
        a = DistributionAbstraction.build(args.flop, args.turn, args.river, seed=args.seed, fit_boards=args.fit_boards,
                                          threads=args.threads, progress=bar,
                                          ochs_clusters=args.clusters if args.river_kind == "ochs" else 0)
    finally:
        bar.close()
    made.append(files.abstraction)
    a.save(folder)  # atomic: whole or absent
    say(f"abstraction {a.name} built in {time.time() - t0:.0f} s ({time.process_time() - c0:.0f} CPU s), "
        f"{files.abstraction.stat().st_size / 1e6:.1f} MB -> {files.abstraction}")
    return a


def parser() -> argparse.ArgumentParser:
    """The recipe's options (``--help`` shows their defaults)."""
    from casebases import description
    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=Help)
    buckets = number(1, int)
    ap.add_argument("--flop", type=buckets, default=2000, help="flop buckets")
    ap.add_argument("--turn", type=buckets, default=2000, help="turn buckets")
    ap.add_argument("--river", type=buckets, default=2000, help="river buckets")
    ap.add_argument("--river-kind", choices=("hs", "ochs"), default="hs",
                    help="percentile buckets of river HS, or OCHS (opponent-cluster hand strength)")
    ap.add_argument("--clusters", type=number(1, int), default=8, help="opponent clusters of an OCHS river")
    ap.add_argument("--fit-boards", type=number(1, int), default=400,
                    help="random boards a street the centres are fitted on")
    ap.add_argument("--name", default="", help="the run's folder under .cfr-runs/ (default emd_F_T_R[_ochs])")
    ap.add_argument("--out", default="", help="the run folder (default .cfr-runs/NAME of the current folder, or of the source checkout when run in it)")
    ap.add_argument("--abstraction", default="", help="an abstraction.npz to train instead of building one")
    ap.add_argument("--minutes", type=number(0, meaning="0: no limit"), default=0.0,
                    help="train this long in this session (0: no limit)")
    ap.add_argument("--iterations", type=number(0, int, meaning="0: no limit"), default=0,
                    help="stop when the run has this many in all (0: no limit)")
    ap.add_argument("--checkpoint-minutes", type=number(0, meaning="0: only at the end"), default=10.0,
                    help="a checkpoint every so many minutes of wall time (0: only at the end)")
    ap.add_argument("--snapshot-minutes", type=number(0, meaning="0: none"), default=15.0,
                    help="a strategy snapshot every so many minutes of training (0: none)")
    ap.add_argument("--max-gb", type=number(0, above=True), default=20.0, help="refuse a run whose tables need more memory than this many GB (the bucket tables alone take about 0.83 GB, whatever the bucket counts)")
    add_training_options(ap, scale="scale --iterations down by as much; the minutes count time, not iterations")
    add_quiet(ap)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if not (args.minutes or args.iterations):
        ap.error("give --minutes (this session's budget) or --iterations (the run's total), or both")
    return run_or_say(_run, args)


def _run(args: argparse.Namespace) -> int:
    from cbr.abstraction.distribution import DistributionAbstraction
    from cbr.cfr.longrun import LongRun, RunFolder, gigabytes, run_lock, table_memory
    from cbr.errors import ConfigError

    name = args.name or f"emd_{args.flop}_{args.turn}_{args.river}" + ("_ochs" if args.river_kind == "ochs" else "")
    files = RunFolder(Path(args.out) if args.out else output_root() / ".cfr-runs" / name)
    mem = table_memory((169, args.flop, args.turn, args.river))
    report = (f"tables: {gigabytes(mem['regrets_and_averages'])} of regrets and averages ({counted(mem['entries'], 'entry', 'entries')}) "
              f"+ {gigabytes(mem['bucket_tables'])} of bucket tables + {gigabytes(mem['strategy_write'])} while a "
              f"strategy is written = {gigabytes(mem['total'])} (--max-gb {args.max_gb:g})")
    if mem["total"] > args.max_gb * 1e9:
        raise ConfigError(f"{report}: over the limit; fewer buckets, or a larger --max-gb if the machine has it")
    given = None
    if args.abstraction and not files.abstraction.exists():  # checked before anything is made (a folder's own wins)
        given = DistributionAbstraction.load(args.abstraction)
        check_options(Path(args.abstraction), given, args, given=True)
    if files.path.exists() and not files.path.is_dir():
        raise ConfigError(f"{files.path}: a file, not a run folder: give another --out")
    made: list[Path] = []  # what this start made, removed if it fails; never a folder it did not make
    building = [False]

    def undo(top: Path | None) -> None:
        if top is not None:
            shutil.rmtree(top, ignore_errors=True)
        for f in made:
            f.unlink(missing_ok=True)

    with StartSignals(ignore_after=True) as starting:  # once stopped, later signals cannot cut its line or exit
        try:
            lock_new = not (files.path / ".lock").exists()
            top = make_folder(files.path)
            with run_lock(files.path):
                try:
                    if lock_new:
                        made.append(files.path / ".lock")
                    building[0] = not files.abstraction.exists() and given is None
                    told = building[0] or given is not None  # the report before the folder's checks only when
                    if told:                                  # there are none (a refused resume: one line)
                        say(report)
                    a = abstraction_of(files.path, args, given, made)
                    building[0] = False
                    trainer = new_trainer(a, args)
                    run = LongRun(trainer, files.checkpoint, strategy=files.strategy, progress=files.progress,
                                  snapshots=files.snapshots if args.snapshot_minutes else None,
                                  checkpoint_minutes=args.checkpoint_minutes, snapshot_minutes=args.snapshot_minutes,
                                  memory=mem["total"], report=say)
                    resumed = run.resume()
                    if not told:
                        say(report)
                except BaseException:
                    undo(top)
                    raise
                starting.end()  # from here Ctrl-C and SIGTERM save a checkpoint
                if resumed:
                    say(f"resumed {files.path} at {counted(trainer.iterations, 'iteration')} "
                        f"({trainer.seconds:,.0f} s of training)")
                if args.iterations and trainer.iterations >= args.iterations:
                    say(f"{files.path}: already {counted(trainer.iterations, 'iteration')} (--iterations {args.iterations:,})")
                    return 0
                code = train(run, iterations=args.iterations, minutes=args.minutes)
        except Stopped as stop:
            if building[0]:
                return say_stopped(stop, "building the abstraction", "nothing to resume; run the same command "
                                   "again to start over")
            return say_stopped(stop, "starting, before training", "nothing changed; run the same command again")
    if code == 0:
        say(f"done: {counted(trainer.iterations, 'iteration')}, {trainer.seconds:,.0f} s of training -> {files.strategy} "
            f"(cfr:strategy={files.path})")
    return code


if __name__ == "__main__":
    sys.exit(main())
