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
  the recipe exits 130 or 143 with one line. Errors: one ``error:`` line, exit 1.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from casebases.build_cfr_emd import add_training_options, new_trainer, run_or_say, say, train

HERE = Path(__file__).resolve().parent
RUNS = HERE.parent / ".cfr-runs"


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


def check_options(folder: Path, a, args: argparse.Namespace) -> None:
    """A :class:`ConfigError` unless ``a`` (the folder's abstraction) was built with these options."""
    from cbr.errors import ConfigError

    have, want = built_options(a), wanted_options(args)
    if have != want:
        raise ConfigError(f"{folder}: this run was started with {_flags(have)}, not {_flags(want)}: give the same "
                          f"options to continue it, or another --name/--out to start another")


def abstraction_of(folder, args: argparse.Namespace):
    """The run folder's abstraction: the one there (checked against the options), else the
    ``--abstraction`` file's (checked, then copied in), else a new one built and saved."""
    from cbr.abstraction.distribution import DistributionAbstraction
    from cbr.cfr.longrun import RunFolder

    files = RunFolder(folder)
    if files.abstraction.exists():
        a = DistributionAbstraction.load(files.abstraction)
        check_options(folder, a, args)
        return a
    if args.abstraction:
        a = DistributionAbstraction.load(args.abstraction)
        check_options(folder, a, args)
        shutil.copyfile(args.abstraction, files.path / ".abstraction.npz.copy")
        (files.path / ".abstraction.npz.copy").replace(files.abstraction)
        return a
    t0, c0 = time.time(), time.process_time()
    say(f"building the abstraction ({_flags(wanted_options(args))}): minutes")
    a = DistributionAbstraction.build(args.flop, args.turn, args.river, seed=args.seed, fit_boards=args.fit_boards,
                                      threads=args.threads,
                                      ochs_clusters=args.clusters if args.river_kind == "ochs" else 0)
    a.save(folder)
    say(f"abstraction {a.name} built in {time.time() - t0:.0f} s ({time.process_time() - c0:.0f} CPU s), "
        f"{files.abstraction.stat().st_size / 1e6:.1f} MB -> {files.abstraction}")
    return a


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flop", type=int, default=2000, help="flop buckets")
    ap.add_argument("--turn", type=int, default=2000, help="turn buckets")
    ap.add_argument("--river", type=int, default=2000, help="river buckets")
    ap.add_argument("--river-kind", choices=("hs", "ochs"), default="hs",
                    help="percentile buckets of river HS, or OCHS (opponent-cluster hand strength)")
    ap.add_argument("--clusters", type=int, default=8, help="opponent clusters of an OCHS river")
    ap.add_argument("--fit-boards", type=int, default=400, help="random boards a street the centres are fitted on")
    ap.add_argument("--name", default="", help="the run's folder under .cfr-runs/ (default emd_F_T_R[_ochs])")
    ap.add_argument("--out", default="", help="the run folder (default .cfr-runs/NAME)")
    ap.add_argument("--abstraction", default="", help="an abstraction.npz to train instead of building one")
    ap.add_argument("--minutes", type=float, default=0.0, help="train this long in this session (0: no limit)")
    ap.add_argument("--iterations", type=int, default=0, help="stop when the run has this many in all (0: no limit)")
    ap.add_argument("--checkpoint-minutes", type=float, default=10.0, help="a checkpoint every so many minutes")
    ap.add_argument("--snapshot-minutes", type=float, default=15.0,
                    help="a strategy snapshot every so many minutes of training (0: none)")
    ap.add_argument("--max-gb", type=float, default=20.0, help="refuse a run whose tables need more memory")
    add_training_options(ap)
    args = ap.parse_args(argv)
    if not (args.minutes or args.iterations):
        ap.error("give --minutes (this session's budget) or --iterations (the run's total), or both")
    return run_or_say(_run, args)


def _run(args: argparse.Namespace) -> int:
    from cbr.cfr.longrun import LongRun, RunFolder, gigabytes, run_lock, table_memory
    from cbr.errors import ConfigError

    name = args.name or f"emd_{args.flop}_{args.turn}_{args.river}" + ("_ochs" if args.river_kind == "ochs" else "")
    files = RunFolder(Path(args.out) if args.out else RUNS / name)
    mem = table_memory((169, args.flop, args.turn, args.river))
    report = (f"tables: {gigabytes(mem['regrets_and_averages'])} of regrets and averages ({mem['entries']:,} entries) "
              f"+ {gigabytes(mem['bucket_tables'])} of bucket tables + {gigabytes(mem['strategy_write'])} while a "
              f"strategy is written = {gigabytes(mem['total'])} (--max-gb {args.max_gb:g})")
    if mem["total"] > args.max_gb * 1e9:
        raise ConfigError(f"{report}: over the limit; fewer buckets, or a larger --max-gb if the machine has it")
    say(report)
    with run_lock(files.path):
        a = abstraction_of(files.path, args)
        trainer = new_trainer(a, args)
        run = LongRun(trainer, files.checkpoint, strategy=files.strategy, progress=files.progress,
                      snapshots=files.snapshots if args.snapshot_minutes else None,
                      checkpoint_minutes=args.checkpoint_minutes, snapshot_minutes=args.snapshot_minutes,
                      memory=mem["total"], report=say)
        if run.resume():
            say(f"resumed {files.path} at {trainer.iterations:,} iterations ({trainer.seconds:,.0f} s of training)")
        if args.iterations and trainer.iterations >= args.iterations:
            say(f"{files.path}: already {trainer.iterations:,} iterations (--iterations {args.iterations:,})")
            return 0
        code = train(run, iterations=args.iterations, minutes=args.minutes)
    if code == 0:
        say(f"done: {trainer.iterations:,} iterations, {trainer.seconds:,.0f} s of training -> {files.strategy} "
            f"(cfr:strategy={files.path})")
    return code


if __name__ == "__main__":
    sys.exit(main())
