"""Build the shipped MCCFR teacher: ``python -m casebases.build_cfr_emd [--minutes M]``.

Recipe (issue 18): the imperfect-recall abstraction of
:class:`cbr.abstraction.distribution.DistributionAbstraction` (169 pre-flop classes; 256
k-medians buckets of river-HS distributions on the flop and on the turn, 30 bins, centres
fitted on 400 random boards per street, seed 0; 256 river-HS percentile buckets), then
external-sampling MCCFR (:mod:`cbr.cfr.mccfr`, two threads, seed 0) on heads-up fixed
limit for ``--minutes`` of training (checked every 10 million iterations) or ``--iterations``
more iterations, whichever ends first. Writes
``casebases/cfr/emd_256/`` (``abstraction.npz``, ``strategy.npz``: what ``cfr`` plays) and
keeps a checkpoint beside it (``emd_256.ckpt.npz``, not shipped): run the command again to
go on training from it. ``--snapshots DIR`` also writes the strategy every
``--snapshot-every`` iterations (for the exploitability-against-training-time plot).
Ctrl-C or SIGTERM saves the checkpoint and the strategy, then exits 130 or 143 with one line.

The loop (:class:`cbr.cfr.longrun.LongRun`), the training options and the one place a
trainer is made (:func:`new_trainer`) are shared with ``casebases/build_cfr_big.py``, the
long runs across working sessions.

Threads share the tables without locks, so a two-thread run is not bit-for-bit
reproducible; ``--threads 1`` is (at half the speed).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
OUT = HERE / "cfr" / "emd_256"


def add_training_options(ap: argparse.ArgumentParser, *, threads: int = 2) -> None:
    """The options every MCCFR recipe shares (the trainer's: see :func:`new_trainer`)."""
    ap.add_argument("--threads", type=int, default=threads)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sampling", choices=("external", "public"), default="external",
                    help="MCCFR's sampling: a deal an iteration, or a board with every holding (public chance; "
                         "about 5,000 times slower an iteration: scale --iterations and iteration counts of "
                         "checkpoints and snapshots)")


def new_trainer(abstraction: Any, args: argparse.Namespace) -> Any:
    """The MCCFR trainer of a recipe's options: the one place a recipe makes one."""
    from cbr.cfr.mccfr import MCCFRTrainer

    return MCCFRTrainer(abstraction, seed=args.seed, threads=args.threads, sampling=args.sampling)


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_or_say(recipe: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``recipe(args)``'s exit code; a :class:`~cbr.errors.CBRError` is one ``error:`` line and 1."""
    from cbr.errors import CBRError

    try:
        return recipe(args)
    except CBRError as exc:
        say(f"error: {exc}")
        return 1


def train(run: Any, *, iterations: int = 0, minutes: float = 0.0) -> int:
    """``run.train`` (a :class:`cbr.cfr.longrun.LongRun`) with Ctrl-C and SIGTERM saving a
    checkpoint; returns the exit code: 0, or 130 / 143 after one line saying where the
    checkpoint is and how to continue."""
    import signal

    from cbr.cfr.longrun import StopSignals

    with StopSignals() as stop:
        run.train(iterations=iterations, minutes=minutes, stop=stop)
    if stop.signal is None:
        return 0
    for s in (signal.SIGINT, signal.SIGTERM):  # stopping already: a later Ctrl-C must not cut the last line
        signal.signal(s, signal.SIG_IGN)
    name = signal.Signals(stop.signal).name
    say(f"stopped by {name}: checkpoint at {run.trainer.iterations:,} iterations in {run.checkpoint}; "
        f"run the same command again to continue")
    return 128 + int(stop.signal)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--buckets", type=int, default=256, help="buckets on the flop, the turn and the river")
    ap.add_argument("--minutes", type=float, default=0.0, help="train this long (0: use --iterations)")
    ap.add_argument("--iterations", type=int, default=0,
                    help="train this many more iterations (0: until --minutes are up; neither: 100 million)")
    add_training_options(ap)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--snapshots", default="", help="a folder for strategy snapshots")
    ap.add_argument("--snapshot-every", type=int, default=20_000_000)
    ap.add_argument("--checkpoint-every", type=int, default=10_000_000)
    args = ap.parse_args(argv)
    return run_or_say(_run, args)


def _run(args: argparse.Namespace) -> int:
    from cbr.abstraction.distribution import DistributionAbstraction
    from cbr.cfr.longrun import LongRun
    from cbr.cfr.mccfr import STRATEGY_FILE
    from cbr.errors import ConfigError

    out = Path(args.out)
    t0 = time.time()
    if not (out / "abstraction.npz").exists():
        b = args.buckets
        a = DistributionAbstraction.build(b, b, b, seed=args.seed)
        a.save(out)
        say(f"abstraction {a.name} built in {time.time() - t0:.0f} s")
    a = DistributionAbstraction.load(out)
    if a.n_buckets[1:] != (args.buckets,) * 3:
        raise ConfigError(f"{out} holds a run of {a.n_buckets[1]}/{a.n_buckets[2]}/{a.n_buckets[3]} buckets, not "
                          f"--buckets {args.buckets}: give --buckets {a.n_buckets[1]} to go on with it, or another --out")
    trainer = new_trainer(a, args)
    snaps = Path(args.snapshots) if args.snapshots else None
    run = LongRun(trainer, out.parent / f"{out.name}.ckpt.npz", strategy=out / STRATEGY_FILE, snapshots=snaps,
                  checkpoint_every=args.checkpoint_every, snapshot_every=args.snapshot_every, report=say)
    if run.resume():
        say(f"resumed at {trainer.iterations:,} iterations")
    more = args.iterations or (0 if args.minutes else 100_000_000)
    code = train(run, iterations=trainer.iterations + more if more else 0, minutes=args.minutes)
    if code == 0:
        say(f"strategy: {trainer.iterations:,} iterations in {trainer.seconds:.0f} s -> {out / STRATEGY_FILE}")
    return code


if __name__ == "__main__":
    sys.exit(main())
