"""The teacher's abstraction with an OCHS river: ``python -m casebases.build_cfr_ochs [--iterations N]``.

Recipe (issue 37): the shipped teacher's pre-flop, flop and turn buckets
(``casebases/cfr/emd_256/``) with the river replaced by OCHS buckets
(:func:`cbr.abstraction.distribution.fit_ochs_river`: the 169 pre-flop classes in
``--clusters`` opponent clusters by k-means under EMD of their river-HS histograms over
2,000 random boards; every holding's river HS against each cluster on 400 random boards,
100,000 of those vectors clustered by k-means into ``--buckets`` river buckets; seed
``--seed``). Writes ``abstraction.npz`` to ``--out`` (default ``.cfr-runs/emd_256_ochs/``,
an ignored folder: nothing here ships) unless one is there, then, with ``--iterations`` or
``--minutes``, trains MCCFR on it with :mod:`casebases.build_cfr_emd`'s loop (its
checkpoint ``<out>.ckpt.npz`` beside the folder; running again resumes it).

``--river hs`` writes the control instead: the shipped abstraction as it is (percentile
river), default ``.cfr-runs/emd_256_hs/``, so that both are trained by the same loop with
the same seed and iterations (docs/abstraction-cfr.md, "OCHS on the river, measured").
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from casebases import output_root


def main(argv: list[str] | None = None) -> int:
    from casebases import description
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--river", choices=("ochs", "hs"), default="ochs")
    ap.add_argument("--clusters", type=int, default=8, help="opponent clusters (OCHS)")
    ap.add_argument("--buckets", type=int, default=256, help="river buckets (OCHS)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="")
    ap.add_argument("--iterations", type=int, default=0, help="then train this many more iterations")
    ap.add_argument("--minutes", type=float, default=0.0, help="then train this long")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--snapshots", default="", help="a folder for strategy snapshots")
    ap.add_argument("--snapshot-every", type=int, default=20_000_000)
    ap.add_argument("--checkpoint-every", type=int, default=10_000_000)
    args = ap.parse_args(argv)
    from cbr.abstraction.distribution import DistributionAbstraction, fit_ochs_river
    from cbr.cfr.policy import SHIPPED_TEACHER

    out = Path(args.out) if args.out else output_root() / ".cfr-runs" / ("emd_256_ochs" if args.river == "ochs" else "emd_256_hs")
    if not (out / "abstraction.npz").exists():
        out.mkdir(parents=True, exist_ok=True)
        if args.river == "hs":
            shutil.copy(SHIPPED_TEACHER / "abstraction.npz", out / "abstraction.npz")
        else:
            t0 = time.time()
            river = fit_ochs_river(args.buckets, args.clusters, seed=args.seed)
            a = DistributionAbstraction.load(SHIPPED_TEACHER).with_ochs_river(river)
            a.save(out)
            print(f"abstraction {a.name} fitted in {time.time() - t0:.0f} s -> {out}", file=sys.stderr)
    if not (args.iterations or args.minutes):
        return 0
    from casebases import build_cfr_emd

    return build_cfr_emd.main(["--out", str(out), "--seed", str(args.seed), "--threads", str(args.threads),
                               "--iterations", str(args.iterations), "--minutes", str(args.minutes),
                               "--checkpoint-every", str(args.checkpoint_every),
                               "--snapshot-every", str(args.snapshot_every)]
                              + (["--snapshots", args.snapshots] if args.snapshots else []))


if __name__ == "__main__":
    raise SystemExit(main())
