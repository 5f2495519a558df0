"""Build the expert case base from the MCCFR teacher's play (SARTRE's approach, issue 18).

    python -m casebases.build_expert --logs DIR [--hands 1000000] [--workers 2] [--out casebases/expert]
    python -m casebases.build_expert --logs DIR --ship 100000     # the shipped sample

Recipe:

1. The teacher (``cfr``: :data:`cbr.cfr.policy.SHIPPED_TEACHER`) plays duplicate heads-up
   fixed limit: 40% of ``--hands`` against itself, 15% against each of ``hs``, ``ehs``,
   ``poki`` and ``lag``, in matches of ``--match-hands`` hands with their own seeds,
   ``--workers`` at a time; each match writes an ACPC log under ``--logs`` (atomic: a
   log is there whole or not at all, and a re-run plays only the missing ones).
2. ``cbr build`` keeps the teacher's decisions only (seats ``cfr``, ``cfr-1``, ``cfr-2``):
   ``--out`` (default ``casebases/expert-full``, not in the repository: about 110 bytes a case).
3. ``--ship N`` builds instead from the first matches of each pairing up to N hands in
   all, into ``casebases/expert`` (what the repository carries, within ~50 MB).
   ``--feature-set sartre`` builds the same cases with SARTRE's features (for comparisons).

Everything is seeded; the logs are the same for the same arguments.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SEED = 1818
TEACHER = "cfr"
PAIRINGS = (("cfr", "cfr"), ("cfr", "hs"), ("cfr", "ehs"), ("cfr", "poki"), ("cfr", "lag"))
SHARES = (0.40, 0.15, 0.15, 0.15, 0.15)
TEACHER_SEATS = ("cfr", "cfr-1", "cfr-2")


@dataclass(frozen=True)
class ExpertMatch:
    """One match of the recipe and its log."""

    log: Path
    players: tuple[str, str]
    hands: int
    seed: int

    def play(self) -> Path:
        from cbr.game.gamedef import preset
        from cbr.logs.acpc import AcpcLogWriter
        from cbr.play.match import run_match

        game = preset("holdem.limit.2p")
        with AcpcLogWriter(self.log, game) as log:  # the log appears when it is whole
            run_match(list(self.players), self.hands, game=game, duplicate=True, seed=self.seed, log=log)
        return self.log


def recipe(logs: Path, hands: int, match_hands: int) -> list[ExpertMatch]:
    """The matches, pairing by pairing, each in pieces of ``match_hands`` hands.

    >>> [m.log.name for m in recipe(Path("x"), 1000, 200)][:3]
    ['cfr-cfr-000.log', 'cfr-cfr-001.log', 'cfr-hs-000.log']
    """
    out = []
    for p, ((a, b), share) in enumerate(zip(PAIRINGS, SHARES)):
        total = round(hands * share)
        for i in range(-(-total // match_hands)):
            n = min(match_hands, total - i * match_hands)
            out.append(ExpertMatch(logs / f"{a}-{b}-{i:03d}.log", (a, b), n, SEED + 1000 * p + i))
    return out


def play(matches: list[ExpertMatch], workers: int) -> None:
    todo = [m for m in matches if not m.log.exists()]
    t0 = time.time()
    done = 0
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
        for m, path in zip(todo, pool.map(ExpertMatch.play, todo)):
            done += m.hands
            print(f"{path.name}: {done:,} hands in {time.time() - t0:.0f} s", file=sys.stderr, flush=True)


def shipped_subset(matches: list[ExpertMatch], hands: int) -> list[tuple[ExpertMatch, int]]:
    """The first hands of each pairing, in the recipe's shares, ``hands`` in all: ``(match,
    hands taken from the start of its log)`` pairs (a duplicate deal is never split).

    >>> [(m.log.name, k) for m, k in shipped_subset(recipe(Path("x"), 100_000, 20_000), 30_000)][:3]
    [('cfr-cfr-000.log', 12000), ('cfr-hs-000.log', 4500), ('cfr-ehs-000.log', 4500)]
    """
    out = []
    for (a, b), share in zip(PAIRINGS, SHARES):
        budget = round(hands * share) // 2 * 2
        for m in (m for m in matches if m.players == (a, b)):
            if budget <= 0:
                break
            take = min(budget, m.hands)
            out.append((m, take))
            budget -= take
    return out


def first_hands(log: Path, hands: int, folder: Path) -> Path:
    """A copy of ACPC ``log`` in ``folder`` keeping its header and first ``hands`` hands."""
    out = folder / log.name
    kept = 0
    with open(log, encoding="utf-8") as src, open(out, "w", encoding="utf-8") as dst:
        for line in src:
            if line.startswith("STATE:"):
                if kept == hands:
                    break
                kept += 1
            elif not line.startswith("#"):
                continue
            dst.write(line)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", required=True, help="folder for the ACPC logs (large: about 100 bytes a hand)")
    ap.add_argument("--hands", type=int, default=1_000_000)
    ap.add_argument("--match-hands", type=int, default=20_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default="")
    ap.add_argument("--ship", type=int, default=0, help="build the shipped sample from this many hands")
    ap.add_argument("--feature-set", default="casper", help="feature-set plugin of the case base")
    args = ap.parse_args(argv)
    from cbr.build.local import build_casebase

    logs = Path(args.logs)
    logs.mkdir(parents=True, exist_ok=True)
    matches = recipe(logs, args.hands, args.match_hands)
    t0 = time.time()
    play(matches, args.workers)
    played = time.time() - t0
    out = Path(args.out or (HERE / ("expert" if args.ship else "expert-full")))
    t1 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        paths = [str(m.log) for m in matches]
        here = os.getcwd()
        if args.ship:  # cut copies under a neutral name: the cases' source reads expert-logs/<log>
            out = out.resolve()
            (Path(tmp) / "expert-logs").mkdir()
            paths = [f"expert-logs/{first_hands(m.log, k, Path(tmp) / 'expert-logs').name}"
                     for m, k in shipped_subset(matches, args.ship)]
            os.chdir(tmp)
        try:
            report = build_casebase(paths, out, workers=args.workers, overwrite=True, players=TEACHER_SEATS,
                                    name=out.name, feature_set=args.feature_set)
        finally:
            os.chdir(here)
    print(f"played {sum(m.hands for m in matches):,} hands in {played:.0f} s; built {out}: {report.cases:,} cases "
          f"{report.cases_per_street} from {report.hands:,} hands in {time.time() - t1:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
