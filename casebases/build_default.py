"""Rebuild the embedded default case base from self-play of the built-in bots.

Recipe (CASPER's case bases also came from bot play):

1. Heads-up: every pair of the rule bots (``poki``, ``ehs``, ``lag``, ``hs``) plays
   ``HU_HANDS`` duplicate hands at the ACPC ``holdem.limit.2p`` table.
2. Nine-handed: the rule bots fill a 9-player $10/$20 table (CASPER's) for ``RING_HANDS``
   hands.
3. The matches are written as ACPC logs under ``casebases/selfplay/`` (kept in the repo, so
   the case base can be rebuilt from them alone) and ``cbr build`` turns them into
   ``casebases/default/``.

Everything is seeded, so the same code gives the same logs and the same case base.

    python -m casebases.build_default            # logs + case base
    python -m casebases.build_default --cases-only   # case base from the kept logs
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

from cbr.build import build_casebase
from cbr.game.gamedef import preset
from cbr.logs.writers import AcpcLogWriter
from cbr.match import run_match

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LOGS = HERE / "selfplay"
OUT = HERE / "default"
BOTS = ("poki", "ehs", "lag", "hs")
HU_HANDS = 1200
RING_HANDS = 800
RING = ("poki", "ehs", "lag", "hs", "poki", "ehs", "lag", "hs", "poki")
SEED = 2026


def write_selfplay_logs(progress: bool = True) -> list[Path]:
    """Play the recipe's matches and write their ACPC logs; returns the log paths."""
    LOGS.mkdir(exist_ok=True)
    paths = []
    for i, (a, b) in enumerate(itertools.combinations(BOTS, 2)):
        path = LOGS / f"hu-{a}-{b}.log"
        with AcpcLogWriter(path, preset("holdem.limit.2p")) as log:
            run_match([a, b], HU_HANDS, game=preset("holdem.limit.2p"), duplicate=True, seed=SEED + i, log=log)
        paths.append(path)
        if progress:
            print(f"wrote {path.relative_to(REPO)}", file=sys.stderr)
    path = LOGS / "ring-9p.log"
    game = preset("casper.9p")
    with AcpcLogWriter(path, game) as log:
        run_match(list(RING), RING_HANDS, game=game, seed=SEED + 100, log=log)
    paths.append(path)
    if progress:
        print(f"wrote {path.relative_to(REPO)}", file=sys.stderr)
    return paths


def build(cases_only: bool = False, workers: int = 2) -> None:
    """Write the logs (unless ``cases_only``) and build ``casebases/default``."""
    t0 = time.perf_counter()
    if not cases_only:
        write_selfplay_logs()
    os.chdir(REPO)  # provenance paths relative to the repository
    logs = sorted(str(p.relative_to(REPO)) for p in LOGS.glob("*.log"))
    if not logs:
        raise SystemExit("no self-play logs in casebases/selfplay; run without --cases-only first")
    report = build_casebase(logs, OUT.relative_to(REPO), workers=workers, overwrite=True, name="default")
    print(f"built {OUT.relative_to(REPO)}: {report.cases} cases {report.cases_per_street} from "
          f"{report.hands} hands, {len(report.skipped)} skipped, {time.perf_counter() - t0:.0f} s", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases-only", action="store_true", help="rebuild the case base from the kept logs")
    parser.add_argument("--workers", type=int, default=2, help="processes computing features")
    args = parser.parse_args()
    build(cases_only=args.cases_only, workers=args.workers)


if __name__ == "__main__":
    main()
