"""Rebuild the embedded default case base from self-play of the built-in bots.

Recipe (CASPER's case bases also came from bot play):

1. Heads-up: every pair of the rule bots (``poki``, ``ehs``, ``lag``, ``hs``) plays
   ``HU_HANDS`` duplicate hands at the ACPC ``holdem.limit.2p`` table.
2. Poki's simulation bot (``simbot``, 60 trials a decision) plays ``HU_HANDS`` duplicate
   hands against each rule bot, as CASPER's cases came from Pokibots and Simbots. These
   pairs have their own seeds, so adding them left the rule bots' logs as they were.
3. Nine-handed: the rule bots fill a 9-player $10/$20 table (CASPER's) for ``RING_HANDS``
   hands.
4. The matches are written as ACPC logs under ``casebases/selfplay/`` (kept in the repo, so
   the case base can be rebuilt from them alone) and ``cbr build`` turns them into
   ``casebases/default/``: both under :func:`casebases.output_root` (the source checkout when
   run in it, else the current folder; never an installed package).

Everything is seeded, so the same code gives the same logs and the same case base. The
matches run in ``--workers`` processes (the simbot pairs take about 2.5 CPU minutes each).

    python -m casebases.build_default                # logs + case base
    python -m casebases.build_default --cases-only   # case base from the kept logs
    python -m casebases.build_default --missing-logs # play only the matches without a log
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from cbr.build.local import build_casebase
from cbr.game.gamedef import preset
from cbr.logs.acpc import AcpcLogWriter
from cbr.play.match import run_match

#: The logs and the case base, under :func:`casebases.output_root` (the paths the manifest names
#: its sources by are relative to it).
LOGS = Path("casebases") / "selfplay"
OUT = Path("casebases") / "default"
BOTS = ("poki", "ehs", "lag", "hs")
HU_HANDS = 1200
RING_HANDS = 800
RING = ("poki", "ehs", "lag", "hs", "poki", "ehs", "lag", "hs", "poki")
SEED = 2026


@dataclass(frozen=True)
class SelfPlayMatch:
    """One match of the recipe: who plays, how many hands, with which seed, into which log."""

    log: str
    players: tuple[str, ...]
    hands: int
    seed: int
    game: str = "holdem.limit.2p"
    duplicate: bool = True

    def play(self, folder: Path) -> Path:
        """Play the match and write its ACPC log into ``folder`` (under a temporary name, then renamed)."""
        path = folder / self.log
        tmp = path.with_name(f".{path.name}.tmp")
        game = preset(self.game)
        with AcpcLogWriter(tmp, game) as log:
            run_match(list(self.players), self.hands, game=game, duplicate=self.duplicate, seed=self.seed, log=log)
        os.replace(tmp, path)
        return path


def recipe() -> list[SelfPlayMatch]:
    """The matches whose logs make the default case base."""
    matches = [SelfPlayMatch(f"hu-{a}-{b}.log", (a, b), HU_HANDS, SEED + i)
               for i, (a, b) in enumerate(itertools.combinations(BOTS, 2))]
    matches += [SelfPlayMatch(f"hu-simbot-{b}.log", ("simbot", b), HU_HANDS, SEED + 200 + i)
                for i, b in enumerate(BOTS)]
    matches.append(SelfPlayMatch("ring-9p.log", RING, RING_HANDS, SEED + 100, game="casper.9p", duplicate=False))
    return matches


def write_selfplay_logs(root: Path, progress: bool = True, workers: int = 2, missing_only: bool = False) -> list[Path]:
    """Play the recipe's matches in ``workers`` processes and write their ACPC logs into
    ``root / LOGS``; with ``missing_only`` only those without a log yet. Returns the log paths written."""
    folder = root / LOGS
    folder.mkdir(parents=True, exist_ok=True)
    todo = [m for m in recipe() if not (missing_only and (folder / m.log).exists())]
    paths = []
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
        for path in pool.map(SelfPlayMatch.play, todo, [folder] * len(todo)):
            paths.append(path)
            if progress:
                print(f"wrote {path.relative_to(root)}", file=sys.stderr)
    return paths


def build(cases_only: bool = False, workers: int = 2, missing_logs: bool = False, root: Optional[Path] = None) -> None:
    """Write the logs (unless ``cases_only``; with ``missing_logs`` only those not there)
    and build ``casebases/default``, both under ``root`` (default :func:`casebases.output_root`)."""
    from casebases import output_root

    root = (root or output_root()).resolve()
    t0 = time.perf_counter()
    if not cases_only:
        write_selfplay_logs(root, workers=workers, missing_only=missing_logs)
    os.chdir(root)  # provenance paths relative to the root: casebases/selfplay/...
    logs = sorted(str(p) for p in LOGS.glob("*.log"))
    if not logs:
        raise SystemExit(f"error: no self-play logs in {root / LOGS}; run without --cases-only first")
    report = build_casebase(logs, OUT, workers=workers, overwrite=True, name="default")
    print(f"built {root / OUT}: {report.cases} cases {report.cases_per_street} from "
          f"{report.hands} hands, {len(report.skipped)} skipped, {time.perf_counter() - t0:.0f} s", file=sys.stderr)


def main() -> None:
    from casebases import description
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--cases-only", action="store_true",
                        help="rebuild the case base from the kept logs (casebases/selfplay/ of the current folder, or "
                             "of the source checkout when run in it)")
    parser.add_argument("--missing-logs", action="store_true",
                        help="play only the matches whose log is not in casebases/selfplay yet")
    parser.add_argument("--workers", type=int, default=2, help="processes playing matches and computing features")
    args = parser.parse_args()
    build(cases_only=args.cases_only, workers=args.workers, missing_logs=args.missing_logs)


if __name__ == "__main__":
    main()
