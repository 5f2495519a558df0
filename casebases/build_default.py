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
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from cbr.build.local import build_casebase
from cbr.errors import counted
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
        """Play the match and write its ACPC log into ``folder`` (the writer's temporary file,
        ``.LOG.tmp-*``, renamed to the log when the match is over)."""
        path = folder / self.log
        game = preset(self.game)
        with AcpcLogWriter(path, game) as log:
            run_match(list(self.players), self.hands, game=game, duplicate=self.duplicate, seed=self.seed, log=log)
        return path


def recipe() -> list[SelfPlayMatch]:
    """The matches whose logs make the default case base."""
    matches = [SelfPlayMatch(f"hu-{a}-{b}.log", (a, b), HU_HANDS, SEED + i)
               for i, (a, b) in enumerate(itertools.combinations(BOTS, 2))]
    matches += [SelfPlayMatch(f"hu-simbot-{b}.log", ("simbot", b), HU_HANDS, SEED + 200 + i)
                for i, b in enumerate(BOTS)]
    matches.append(SelfPlayMatch("ring-9p.log", RING, RING_HANDS, SEED + 100, game="casper.9p", duplicate=False))
    return matches


#: Seconds between two looks for a stop while a match is played.
POLL_SECONDS = 0.1


def write_selfplay_logs(root: Path, progress: bool = True, workers: int = 2, missing_only: bool = False) -> list[Path]:
    """Play the recipe's matches in ``workers`` processes and write their ACPC logs into
    ``root / LOGS``; with ``missing_only`` only those without a log yet. Returns the log paths written.

    The workers are the build's (:mod:`cbr.build.pools`: they begin with Ctrl-C blocked, leave it
    and SIGTERM to the recipe and die with it). Ctrl-C or SIGTERM (:class:`~cbr.cfr.longrun.StopSignals`)
    stops them at once and raises :class:`Stopped` with the signal's number; a worker that dies
    (killed from outside, out of memory) stops the others the same way and raises
    :class:`~cbr.errors.CBRError`. Either way the log being written is dropped whole (a log is
    written under a temporary name and renamed when its match is over) and the logs written
    before are kept."""
    from concurrent.futures.process import BrokenProcessPool

    from cbr.build.pools import first_done, new_pool, stop_pool, workers_starting
    from cbr.cfr.longrun import StopSignals
    from cbr.errors import CBRError

    folder = root / LOGS
    folder.mkdir(parents=True, exist_ok=True)
    todo = [m for m in recipe() if not (missing_only and (folder / m.log).exists())]
    paths = []
    pool, context = new_pool(workers)

    def drop_all() -> None:
        stop_pool(pool)
        for m in todo:  # the half-written logs of the workers just stopped
            for tmp in folder.glob(f".{m.log}.tmp-*"):
                tmp.unlink(missing_ok=True)

    with StopSignals(ignore_after=True) as stop:
        try:
            with workers_starting(context.get_start_method()):
                futures = [pool.submit(SelfPlayMatch.play, m, folder) for m in todo]
            for future in futures:
                while not stop() and not first_done([future], pool, timeout=POLL_SECONDS):
                    pass
                if stop():
                    break
                path = future.result()
                paths.append(path)
                if progress:
                    print(f"wrote {path.relative_to(root)}", file=sys.stderr)
        except BrokenProcessPool as exc:
            drop_all()
            raise CBRError(f"a worker process of the recipe died ({exc}); killed from outside, or out of memory? "
                           f"The logs written so far are in {folder} (a log being written was dropped); run "
                           "again with --missing-logs to play the rest") from None
        except BaseException:
            drop_all()
            raise
        if stop():
            drop_all()
            raise Stopped(stop.signal, folder)
    pool.shutdown()
    return paths


class Stopped(Exception):
    """The recipe was stopped by a signal (its number: ``signum``) while it played the logs of ``folder``."""

    def __init__(self, signum: int, folder: Path) -> None:
        super().__init__(signum, folder)
        self.signum = signum
        self.folder = folder


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
    print(f"built {root / OUT}: {counted(report.cases, 'case')} {report.cases_per_street} from "
          f"{counted(report.hands, 'hand')}, {len(report.skipped)} skipped, {time.perf_counter() - t0:.0f} s", file=sys.stderr)


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
    from cbr.errors import CBRError

    try:
        build(cases_only=args.cases_only, workers=args.workers, missing_logs=args.missing_logs)
    except CBRError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    except Stopped as exc:
        by = "SIGTERM" if exc.signum == signal.SIGTERM else "Ctrl-C"
        print(f"stopped by {by}: the logs written so far are in {exc.folder} (a log being written was dropped); "
              "run again with --missing-logs to play the rest", file=sys.stderr)
        raise SystemExit(128 + exc.signum) from None
    except KeyboardInterrupt:  # while the case base is built (cbr build's workers are stopped)
        print("interrupted: the self-play logs are kept; --cases-only builds the case base from them", file=sys.stderr)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
