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

Threads share the tables without locks, so a two-thread run is not bit-for-bit
reproducible; ``--threads 1`` is (at half the speed).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "cfr" / "emd_256"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--buckets", type=int, default=256, help="buckets on the flop, the turn and the river")
    ap.add_argument("--minutes", type=float, default=0.0, help="train this long (0: use --iterations)")
    ap.add_argument("--iterations", type=int, default=0,
                    help="train this many more iterations (0: until --minutes are up; neither: 100 million)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--snapshots", default="", help="a folder for strategy snapshots")
    ap.add_argument("--snapshot-every", type=int, default=20_000_000)
    ap.add_argument("--checkpoint-every", type=int, default=10_000_000)
    ap.add_argument("--sampling", choices=("external", "public"), default="external",
                    help="MCCFR's sampling: a deal an iteration, or a board with every holding (public chance; "
                         "about 5,000 times slower an iteration: scale --iterations and the --*-every options)")
    args = ap.parse_args(argv)
    from cbr.abstraction.distribution import DistributionAbstraction
    from cbr.cfr.mccfr import STRATEGY_FILE, MCCFRTrainer

    out = Path(args.out)
    t0 = time.time()
    if not (out / "abstraction.npz").exists():
        b = args.buckets
        a = DistributionAbstraction.build(b, b, b, seed=args.seed)
        a.save(out)
        print(f"abstraction {a.name} built in {time.time() - t0:.0f} s", file=sys.stderr)
    a = DistributionAbstraction.load(out)
    trainer = MCCFRTrainer(a, seed=args.seed, threads=args.threads, sampling=args.sampling)
    ckpt = out.parent / f"{out.name}.ckpt.npz"
    if ckpt.exists():
        trainer.load_checkpoint(ckpt)
        print(f"resumed at {trainer.iterations:,} iterations", file=sys.stderr)
    snaps = Path(args.snapshots) if args.snapshots else None
    if snaps:
        snaps.mkdir(parents=True, exist_ok=True)
    deadline = time.time() + args.minutes * 60 if args.minutes else None
    more = args.iterations or (0 if args.minutes else 100_000_000)
    target = trainer.iterations + more if more else None
    while (target is None or trainer.iterations < target) and (deadline is None or time.time() < deadline):
        step = args.checkpoint_every - trainer.iterations % args.checkpoint_every
        if target is not None:
            step = min(step, target - trainer.iterations)
        if snaps:
            step = min(step, args.snapshot_every - trainer.iterations % args.snapshot_every)
        trainer.run(step)
        if trainer.iterations % args.checkpoint_every == 0:
            trainer.save_checkpoint(ckpt)
        if snaps and trainer.iterations % args.snapshot_every == 0:
            trainer.save_strategy(snaps / f"strategy-{trainer.iterations}.npz")
        print(f"{trainer.iterations:,} iterations, {trainer.seconds:.0f} s", file=sys.stderr, flush=True)
    trainer.save_checkpoint(ckpt)
    trainer.save_strategy(out / STRATEGY_FILE)
    print(f"strategy: {trainer.iterations:,} iterations in {trainer.seconds:.0f} s -> {out / STRATEGY_FILE}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
