"""Build the shipped CFR strategy: ``python -m casebases.build_cfr [--iterations N]``.

Recipe: the study's best bucketing, history buckets on HS^2 (``h_hs2``), with
4 buckets per street (small enough for the repository: 3.9 million table entries, one
byte each, compressed), thresholds from 400 random boards (seed 0), the abstract game's
chance model from 600 boards (seed 1), then CFR+ on heads-up fixed limit
(``holdem.limit.2p``). Writes ``casebases/cfr/h_hs2_4/``: ``abstraction.json``,
``bucket_game.npz`` and ``cfr.holdem.limit.2p.npz`` (the strategy ``cbr match --players
cfr,...`` plays). Deterministic from the seeds.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

#: The shipped strategy, from the source checkout: ``--out``'s default is this path under
#: :func:`casebases.output_root`.
OUT = Path("casebases") / "cfr" / "h_hs2_4"


def main(argv: list[str] | None = None) -> int:
    from casebases import description
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--iterations", type=int, default=400)
    ap.add_argument("--buckets", type=int, default=4)
    ap.add_argument("--threshold-boards", type=int, default=400)
    ap.add_argument("--game-boards", type=int, default=600)
    ap.add_argument("--out", default="", help=f"default {OUT} of the current folder, or of the source checkout "
                    "when run in it")
    args = ap.parse_args(argv)
    from casebases import output_root
    from cbr.abstraction import BUCKET_GAME_FILE, Abstraction
    from cbr.cfr.strategy import train

    out = Path(args.out) if args.out else output_root() / OUT
    t = time.time()
    if not (out / "abstraction.json").exists():
        a = Abstraction.build("history", "hs2", n_buckets=args.buckets, samples=args.threshold_boards, seed=0)
        a.save(out)
        print(f"abstraction {a.name} built in {time.time() - t:.0f} s", file=sys.stderr)
    a = Abstraction.load(out)
    if not (out / BUCKET_GAME_FILE).exists():
        t = time.time()
        a.bucket_game(args.game_boards, seed=1).save(out / BUCKET_GAME_FILE)
        print(f"bucket game estimated in {time.time() - t:.0f} s", file=sys.stderr)
    ckpt = out.parent / "h_hs2_4.ckpt.npz"
    resume = ckpt.exists()
    # the recipe writes the shipped strategy itself (training's default never writes in the package)
    report = train("holdem.limit.2p", out, args.iterations, out=out / "cfr.holdem.limit.2p.npz", checkpoint=ckpt,
                   checkpoint_every=100, resume=resume, overwrite=not resume)
    print({k: report[k] for k in ("iterations", "seconds", "exploitability_mbb", "stored_exploitability_mbb",
                                  "info_sets", "bytes")}, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
