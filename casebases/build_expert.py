"""Build the expert case base from the MCCFR teacher's play (SARTRE's approach, issue 18).

    python -m casebases.build_expert --logs DIR [--hands 1000000] [--workers 2] [--out casebases/expert]
    python -m casebases.build_expert --logs DIR --ship 80000     # the shipped sample

Recipe:

1. The teacher (``--teacher``, default :data:`TEACHER`) plays duplicate heads-up
   fixed limit: 40% of ``--hands`` against itself, 15% against each of ``hs``, ``ehs``,
   ``poki`` and ``lag``, in matches of ``--match-hands`` hands with their own seeds,
   ``--workers`` at a time; each match writes an ACPC log under ``--logs`` (atomic: a
   log is there whole or not at all, and a re-run plays only the missing ones). The logs
   are named ``cfr-<opponent>-NNN.log`` whatever the teacher; ``--logs``' ``teacher.txt``
   records which one played them, and a folder of another teacher's logs is refused.
2. ``cbr build`` keeps the teacher's decisions only (its seats: :func:`teacher_seats`):
   ``--out`` (default ``casebases/expert-full``, not in the repository: about 110 bytes a case).
3. ``--ship N`` builds instead from the first hands of each pairing, about N hands in all
   (each pairing's share, rounded down to whole deals), into
   ``casebases/expert`` (what the repository carries, within ~50 MB); it plays only those
   hands (a match's first hands are the same whatever its length), in logs named
   ``cfr-<opponent>-NNN.first<K>.log`` unless the whole match's log is there already.
   ``--feature-set sartre`` builds the same cases with SARTRE's features (for comparisons).

Everything is seeded; the logs are the same for the same arguments.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from casebases import output_root
from cbr.errors import counted

SEED = 1818
#: The teacher whose decisions become the expert cases (issue 37: plain ``cfr``, the 2,000-bucket
#: MCCFR strategy with its river re-solved at decision time, 40 CFR+ iterations; written out, so a
#: logs folder of the teacher plain ``cfr`` played before, ``cfr:resolve=river:resolve-iters=40``
#: on ``emd_256``, is told apart).
TEACHER = "cfr:strategy=emd_2000:resolve=river:resolve-iters=40"
PAIRINGS = (("cfr", "cfr"), ("cfr", "hs"), ("cfr", "ehs"), ("cfr", "poki"), ("cfr", "lag"))
SHARES = (0.40, 0.15, 0.15, 0.15, 0.15)
#: The smallest ``--ship``: a duplicate deal (two hands) for each pairing.
MIN_SHIP = 10


def teacher_seats(teacher: str = TEACHER) -> tuple[str, ...]:
    """The seat names of ``teacher``'s decisions in the recipe's logs: its seat label, the
    label's second seat in self-play (``#2``), and the names of logs written before seats
    were labelled by spec (``-1``, ``-2``).

    >>> teacher_seats("cfr")
    ('cfr', 'cfr#2', 'cfr-1', 'cfr-2')
    >>> teacher_seats("cfr:resolve=river")[:2]
    ('cfr/resolve=river', 'cfr/resolve=river#2')
    """
    from cbr.play.table import seat_label
    from cbr.policies.spec import policy_from_spec

    policy = policy_from_spec(teacher)
    policy.spec = teacher  # type: ignore[attr-defined]
    label = seat_label(policy)
    return (label, f"{label}#2", f"{label}-1", f"{label}-2")


#: The seats of the default teacher.
TEACHER_SEATS = teacher_seats()


@dataclass(frozen=True)
class ExpertMatch:
    """One match of the recipe and its log."""

    log: Path
    players: tuple[str, str]
    hands: int
    seed: int
    teacher: str = TEACHER

    def play(self) -> Path:
        from cbr.game.gamedef import preset
        from cbr.logs.acpc import AcpcLogWriter
        from cbr.play.match import run_match

        game = preset("holdem.limit.2p")
        with AcpcLogWriter(self.log, game) as log:  # the log appears when it is whole
            seats = [self.teacher if p == "cfr" else p for p in self.players]
            run_match(seats, self.hands, game=game, duplicate=True, seed=self.seed, log=log)
        return self.log


def recipe(logs: Path, hands: int, match_hands: int, teacher: str = TEACHER) -> list[ExpertMatch]:
    """The matches, pairing by pairing, each in pieces of ``match_hands`` hands.

    >>> [m.log.name for m in recipe(Path("x"), 1000, 200)][:3]
    ['cfr-cfr-000.log', 'cfr-cfr-001.log', 'cfr-hs-000.log']
    """
    out = []
    for p, ((a, b), share) in enumerate(zip(PAIRINGS, SHARES)):
        total = round(hands * share)
        for i in range(-(-total // match_hands)):
            n = min(match_hands, total - i * match_hands)
            out.append(ExpertMatch(logs / f"{a}-{b}-{i:03d}.log", (a, b), n, SEED + 1000 * p + i, teacher))
    return out


def first_part(match: ExpertMatch, hands: int) -> ExpertMatch:
    """The match of ``match``'s first ``hands`` hands (the same seed: the same first hands),
    logged beside it as ``<name>.first<hands>.log``; ``match`` itself when that is all of it
    or its whole log is there already (then cut from it).

    >>> m = recipe(Path("x"), 1000, 200)[2]
    >>> first_part(m, 40).log.name, first_part(m, 40).hands, first_part(m, 150) is m
    ('cfr-hs-000.first40.log', 40, True)
    """
    if hands >= match.hands or match.log.exists():
        return match
    return replace(match, log=match.log.with_name(f"{match.log.stem}.first{hands}.log"), hands=hands)


def check_teacher(logs: Path, teacher: str) -> None:
    """Record ``teacher`` in ``logs/teacher.txt``, or refuse a folder another teacher's logs are in."""
    from cbr.errors import ConfigError

    mark = logs / "teacher.txt"
    if mark.exists():
        before = mark.read_text(encoding="utf-8").strip()
        if before != teacher:
            raise ConfigError(f"{logs} holds logs of the teacher {before!r}, not {teacher!r} (the spec is compared as "
                              f"written): give --teacher {before!r}, or another --logs folder")
    elif any(logs.glob("cfr-*.log")):
        raise ConfigError(f"{logs} holds logs of an unknown teacher (no teacher.txt): give another --logs folder "
                          f"(or write the teacher's spec into {mark})")
    else:
        mark.write_text(teacher + "\n", encoding="utf-8")


#: Seconds between two looks for a stop while a match is played.
POLL_SECONDS = 0.1


def play(matches: list[ExpertMatch], workers: int) -> Optional[int]:
    """Play the matches whose logs are missing, ``workers`` at a time; returns None when all
    are played. Ctrl-C or SIGTERM (:class:`~cbr.cfr.longrun.StopSignals`) stops the workers at
    once (a log being written is dropped whole) and returns the signal's number; from the first
    signal on, both are ignored (a burst of them cannot cut the clean-up or the caller's line).
    The workers are the build's (:mod:`cbr.build.pools`: they die with the recipe and leave the
    signals to it); one that dies (killed from outside) stops the others the same way and raises
    :class:`~cbr.errors.CBRError`."""
    from concurrent.futures.process import BrokenProcessPool

    from cbr.build.pools import first_done, new_pool, stop_pool, workers_starting
    from cbr.cfr.longrun import StopSignals
    from cbr.errors import CBRError

    todo = [m for m in matches if not m.log.exists()]
    t0 = time.time()
    done = 0
    pool, context = new_pool(workers)

    def drop_all() -> None:
        stop_pool(pool)
        for m in todo:  # the half-written logs of the workers just stopped
            for tmp in m.log.parent.glob(f".{m.log.name}.tmp-*"):
                tmp.unlink(missing_ok=True)

    with StopSignals(ignore_after=True) as stop:
        try:
            with workers_starting(context.get_start_method()):
                futures = [pool.submit(ExpertMatch.play, m) for m in todo]
            for m, future in zip(todo, futures):
                while not stop() and not first_done([future], pool, timeout=POLL_SECONDS):
                    pass
                if stop():
                    break
                path = future.result()
                done += m.hands
                print(f"{path.name}: {counted(done, 'hand')} in {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
        except BrokenProcessPool as exc:
            drop_all()
            folder = todo[0].log.parent if todo else "the logs folder"
            raise CBRError(f"a worker process of the recipe died ({exc}); killed from outside, or out of memory? "
                           f"The logs played so far are in {folder} (a log being written was dropped); run the "
                           "same command again to play the rest") from None
        except BaseException:
            drop_all()
            raise
        if stop():
            drop_all()
            return stop.signal
    pool.shutdown()
    return None


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


def first_hands(log: Path, hands: int, folder: Path, name: str = "") -> Path:
    """A copy of ACPC ``log`` in ``folder`` (named ``name``, default the log's) keeping its
    header and first ``hands`` hands."""
    out = folder / (name or log.name)
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
    from casebases import description
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--logs", required=True, help="folder for the ACPC logs (large: about 100 bytes a hand)")
    ap.add_argument("--teacher", default=TEACHER, help=f"policy spec of the teacher, a `cfr` bot (default {TEACHER}; a logs folder keeps the spec as written)")
    ap.add_argument("--hands", type=int, default=1_000_000, help="hands of the whole recipe (default 1,000,000)")
    ap.add_argument("--match-hands", type=int, default=20_000, help="hands a match, a log (default 20,000)")
    ap.add_argument("--workers", type=int, default=2, help="matches played at once, and build workers (default 2)")
    ap.add_argument("--out", default="", help="the case base (default casebases/expert, or expert-full without --ship, of the current folder, or of the source checkout when run in it)")
    ap.add_argument("--ship", type=int, default=0, help=f"build the shipped sample from about this many hands, each pairing's share in whole deals (at least {MIN_SHIP}; default 0: the whole recipe)")
    ap.add_argument("--feature-set", default="casper", help="feature-set plugin of the case base (default casper)")
    args = ap.parse_args(argv)
    for name in ("hands", "match_hands", "workers"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.ship and not MIN_SHIP <= args.ship <= args.hands:
        ap.error(f"--ship must be 0 (the whole recipe) or between {MIN_SHIP} (a deal for each pairing) and --hands "
                 f"({args.hands:,})")
    from cbr.build.local import build_casebase
    from cbr.errors import CBRError
    from cbr.plugins import load_feature_set
    from cbr.policies.spec import policy_from_spec

    try:
        load_feature_set(args.feature_set)
    except CBRError as exc:
        ap.error(f"--feature-set: {exc}")
    try:
        if policy_from_spec(args.teacher).name != "cfr":
            ap.error(f"--teacher {args.teacher!r} is not a `cfr` bot (the recipe's teacher is a CFR strategy)")
    except (CBRError, ValueError) as exc:
        ap.error(f"--teacher: {exc}")
    try:
        logs = Path(args.logs)
        if logs.exists() and not logs.is_dir():
            raise CBRError(f"--logs {logs} is a file, not a folder")
        logs.mkdir(parents=True, exist_ok=True)
        check_teacher(logs, args.teacher)
    except (CBRError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    matches = recipe(logs, args.hands, args.match_hands, args.teacher)
    shipped = shipped_subset(matches, args.ship) if args.ship else []
    taken = [(first_part(m, k), k, m.log.name) for m, k in shipped]  # played, hands kept, the recipe's log name
    t0 = time.time()
    try:
        stopped = play([m for m, _, _ in taken] if args.ship else matches, args.workers)
    except CBRError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if stopped is not None:
        by = "SIGTERM" if stopped == signal.SIGTERM else "Ctrl-C"
        print(f"stopped by {by}: the logs played so far are in {logs} (a log being written was dropped); run the "
              "same command again to play the rest", file=sys.stderr)
        return 128 + stopped
    played = time.time() - t0
    out = Path(args.out) if args.out else output_root() / "casebases" / ("expert" if args.ship else "expert-full")
    t1 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        paths = [str(m.log) for m in matches]
        here = os.getcwd()
        if args.ship:  # cut copies under a neutral name: the cases' source reads expert-logs/<log>
            out = out.resolve()
            (Path(tmp) / "expert-logs").mkdir()
            paths = [f"expert-logs/{first_hands(m.log, k, Path(tmp) / 'expert-logs', name).name}"
                     for m, k, name in taken]
            os.chdir(tmp)
        try:
            report = build_casebase(paths, out, workers=args.workers, overwrite=True,
                                    players=teacher_seats(args.teacher), name=out.name, feature_set=args.feature_set)
        finally:
            os.chdir(here)
    hands = sum(m.hands for m, _, _ in taken) if args.ship else sum(m.hands for m in matches)
    print(f"played {counted(hands, 'hand')} in {played:.0f} s; built {out}: {counted(report.cases, 'case')} "
          f"{report.cases_per_street} from {counted(report.hands, 'hand')} in {time.time() - t1:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
