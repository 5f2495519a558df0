"""Build the shipped counter-strategies: ``python -m casebases.build_counters [--only raise,call]``.

Recipe (issue 36, part 1), for each opponent of :data:`TARGETS`:

1. the teacher (``cfr:strategy=emd_256``, :data:`TEACHER`) plays it a duplicate heads-up match of ``--hands`` hands (seed
   :data:`SEED` + the target's place), written as an ACPC log under ``--logs`` (the log
   appears whole or not at all; a re-run reuses it, and says so; the log's name holds
   :func:`teacher_key`, so a log of another version of the teacher is not reused);
2. every decision the opponent made, whose cards the log shows, is counted at its (betting
   node, current-street bucket of the teacher's abstraction): :func:`cbr.cfr.counter.count_decisions`;
3. a robust counter-strategy to those frequencies (:class:`cbr.cfr.counter.CounterTrainer`,
   seed 0: a restricted Nash response, the opponent restricted with probability ``p``, or a
   data-biased one, ``p_max`` and ``c``: see :data:`TARGETS`) is trained with the engine's C
   solver for ``--minutes`` (or ``--iterations``) on ``--threads`` threads;
4. ``--out``'s ``counter_<name>/`` (default ``.cfr-runs/counters/`` of the current folder, or of the
   source checkout when run in it, :func:`runs_out`; ignored by git in the checkout; it links
   the teacher's abstraction on first use; ``--out casebases/cfr`` rebuilds the shipped ones) gets ``strategy.npz`` (one byte per action, the
   abstraction is the teacher's: ``emd_256``, named in the strategy) and ``model.npz`` (the
   counts); ``cfr:strategy=counter_<name>`` plays it.

Ctrl-C or SIGTERM stops it at once (the solver looks for signals between slices of iterations;
:class:`casebases.build_cfr_emd.StartSignals`), exit 130 or 143, with one line saying what it
stopped and what is kept: the teacher's match under way (its log is not written), the counting of
a log played (the log is kept), or the counter-strategy being trained (not written); one being
written is written whole, with its model, before the signal lands; the counter-strategies of the
run finished before are named, when there are any. Later signals are ignored while it says so.

``--minutes`` bounds each counter-strategy's training (the solver's time: each slice of iterations
is sized by the speed so far to end by then), not the teacher's match nor the counting.

One thread is deterministic for the arguments; two share the tables without locks.
"""
from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from cbr.errors import counted

HERE = Path(__file__).resolve().parent
#: The shipped counter-strategies' folder: ``--out casebases/cfr`` rebuilds them.
OUT = HERE / "cfr"
#: Where a run without ``--out`` writes, under :func:`casebases.output_root` (ignored by git in
#: the checkout, like every run under ``.cfr-runs/``): a trial run never overwrites the shipped
#: strategies, nor writes into an installed package.
RUNS_OUT = Path(".cfr-runs") / "counters"
#: The teacher that plays the target: the strategy the counters were built against (as trained,
#: no re-solving; plain ``cfr`` re-solves the river since issue 37).
TEACHER = "cfr:strategy=emd_256"
SEED = 3600
#: counter-strategy name -> (the opponent it is built against, a policy spec; p; p_max; c): restricted
#: Nash responses (c = 0), and a data-biased one for the loose-aggressive player, whose model is
#: sparse (half its decisions fall in rows seen fewer than 10 times); ``raise_mild`` is a restricted
#: Nash response to always-raise with a small p: it takes +2 sb/h from it at no measurable cost
#: (issue 37: docs/abstraction-cfr.md, "Spending exploitability on always-raise")
TARGETS = {"raise": ("raise", 0.75, 1.0, 0.0), "call": ("call", 0.75, 1.0, 0.0),
           "station": ("station", 0.75, 1.0, 0.0), "lag": ("lag", 1.0, 0.9, 5.0),
           "raise_mild": ("raise", 0.05, 1.0, 0.0)}
#: counter-strategy name -> how the shipped one was trained, when not the default 8 minutes (``--iterations``)
SHIPPED_ITERATIONS = {"raise_mild": 40_000_000}


#: seconds between two progress lines while the teacher plays its match
PLAY_REPORT_SECONDS = 10.0


def teacher_key(teacher: str = TEACHER) -> str:
    """What the teacher's logs are named by: the first 12 hex digits of the SHA-256 of its strategy
    file, so a log played by another version of the teacher (retrained, or its abstraction changed:
    the strategy names its abstraction's fingerprint) is never reused.

    >>> len(teacher_key()), teacher_key() == teacher_key("cfr:strategy=emd_256")
    (12, True)
    """
    import hashlib

    from cbr.cfr.mccfr import STRATEGY_FILE
    from cbr.cfr.policy import resolve_strategy
    from cbr.policies.spec import parse_policy_spec

    path = resolve_strategy(parse_policy_spec(teacher)[1].get("strategy", ""))
    digest = hashlib.sha256()
    with open(path / STRATEGY_FILE if path.is_dir() else path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:12]


def log_path(target: str, hands: int, seed: int, logs: Path, key: str) -> Path:
    """The log of the teacher (of :func:`teacher_key` ``key``) against ``target`` in ``logs``.

    >>> log_path("raise", 20, 3600, Path("/tmp/logs"), "0123456789ab").name
    'cfr-0123456789ab-raise-20-3600.log'
    """
    return logs / f"cfr-{key}-{target}-{hands}-{seed}.log"


def play_log(target: str, hands: int, seed: int, path: Path, label: str) -> None:
    """The teacher against ``target``, duplicate, as the ACPC log ``path`` (written whole or not at
    all); a progress line on stderr every :data:`PLAY_REPORT_SECONDS`, ``label`` first."""
    from cbr.game.gamedef import preset
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match

    start = last = time.time()
    done = 0

    def progress(k: int) -> None:
        nonlocal done, last
        done += k
        now = time.time()
        if now - last >= PLAY_REPORT_SECONDS:
            last = now
            print(f"{label}: {done:,} of {counted(hands, 'hand')} played in {now - start:.0f} s", file=sys.stderr, flush=True)

    game = preset("holdem.limit.2p")
    with AcpcLogWriter(path, game) as log:
        run_match([TEACHER, target], hands, game=game, duplicate=True, seed=seed, log=log, progress=progress)


def opponent_model(log: Path, target: str, abstraction):
    """The opponent's decisions in ``log`` counted (:func:`cbr.cfr.counter.count_decisions`)."""
    from cbr.cfr.counter import count_decisions
    from cbr.logs.acpc import loads

    records = loads(log.read_text(encoding="utf-8"), source=log.name)
    names = {n for r in records for n in r.players}
    seat = target.replace(":", "/")  # the target's seat label (cbr.play.table.seat_label)
    if seat not in names or len(names) != 2:
        raise SystemExit(f"error: {log}: expected the teacher and {seat}, found {sorted(names)}")
    return count_decisions(records, seat, abstraction)


#: seconds between two progress lines while a counter-strategy trains
REPORT_SECONDS = 60.0


#: iterations of the first slice of a timed run (a fraction of a second), which measures the speed
#: the later slices are sized by
FIRST_SLICE = 2_000


def _train(trainer, budget: int, minutes: float, name: str) -> None:
    """Run ``budget`` iterations (or, with 0, train for ``minutes``: each slice sized by the speed
    so far to end by the deadline, so the training time is ``minutes``; a fixed slice of 200,000
    iterations once ran 10 s on a budget of 3 s), a progress line on stderr every
    :data:`REPORT_SECONDS`."""
    start = time.time()
    deadline = start + minutes * 60
    step = 200_000
    last = start
    while True:
        now = time.time()
        if budget:
            if trainer.iterations >= budget:
                break
            n = min(step, budget - trainer.iterations)
        else:
            if now >= deadline:
                break
            done = trainer.iterations
            rate = done / max(now - start, 1e-9) if done else 0.0
            n = FIRST_SLICE if not done else max(1, min(step, int(rate * (deadline - now))))
        before = trainer.iterations
        trainer.run(n)
        now = time.time()
        if now - last >= REPORT_SECONDS:
            last = now
            rate = trainer.iterations / max(now - start, 1e-9)
            left = (budget - trainer.iterations) / max(rate, 1e-9) if budget else deadline - now
            done = (f"{trainer.iterations:,} of {counted(budget, 'iteration')}" if budget
                    else counted(trainer.iterations, "iteration"))
            print(f"{name}: {done}, {rate:,.0f} a second, about {left / 60:.0f} min "
                  "left", file=sys.stderr, flush=True)
        if trainer.iterations == before:  # pragma: no cover - a run that makes no progress
            break


def runs_out() -> Path:
    """The folder a run without ``--out`` writes into: :data:`RUNS_OUT` of the current folder, or
    of the source checkout when run in it (:func:`casebases.output_root`), never site-packages.

    >>> runs_out().parts[-2:]
    ('.cfr-runs', 'counters')
    """
    from casebases import output_root

    return output_root() / RUNS_OUT


def link_teacher(out: Path) -> None:
    """Give ``out`` the teacher's abstraction, as ``emd_256``: a link to the shipped one (the
    default ``--out`` gets it on first use; counter-strategies name their abstraction, so it must
    sit beside them).

    >>> import tempfile; out = Path(tempfile.mkdtemp()) / "counters"
    >>> link_teacher(out); (out / "emd_256").resolve() == (OUT / "emd_256").resolve()
    True
    """
    link = out / "emd_256"
    if not link.is_dir():
        out.mkdir(parents=True, exist_ok=True)
        link.symlink_to(OUT / "emd_256", target_is_directory=True)


def main(argv: list[str] | None = None) -> int:
    from casebases.build_cfr_emd import Help, StartSignals, Stopped, number

    ap = argparse.ArgumentParser(description="Build the counter-strategies: the teacher plays each opponent, the "
                                 "opponent's decisions are counted, and a robust counter-strategy to them is trained.",
                                 formatter_class=Help)
    ap.add_argument("--only", default="", help=f"comma-separated names, of {', '.join(TARGETS)} (default: all)")
    ap.add_argument("--logs", default="/tmp/counter-logs",
                    help="folder for the ACPC logs (a log there of the same teacher, opponent, hands and seed is reused)")
    ap.add_argument("--hands", type=number(1, int), default=20_000, help="hands of the teacher against each opponent")
    own = ", ".join(f"{n} {p:g}" for n, (_, p, p_max, c) in TARGETS.items() if c == 0)
    biased = ", ".join(f"{n} data-biased: at most {p_max:g}, less in situations its log saw fewer times"
                       for n, (_, p, p_max, c) in TARGETS.items() if c)
    ap.add_argument("--p", type=number(0), default=None,
                    help=f"the chance, 0 to 1, that the opponent plays as its counted model, for every counter-strategy "
                         f"built, lag's too (default: each one's own: {own}; {biased})")
    shipped = ", ".join(f"{n} {counted(i, 'iteration')}" for n, i in SHIPPED_ITERATIONS.items())
    ap.add_argument("--minutes", type=number(0.01), default=None,
                    help=f"training time per counter-strategy: the solver's time, not the teacher's match nor the "
                         f"counting before it (default: 8 minutes, except as shipped: {shipped})")
    ap.add_argument("--iterations", type=number(1, int), default=None,
                    help="train this many iterations instead of --minutes")
    ap.add_argument("--threads", type=number(1, int), default=1,
                    help="training threads (1: the same strategy bit for bit for the same arguments; at most 64)")
    ap.add_argument("--out", default=None,
                    help=f"the folder that gets counter_<name>/ (default: {RUNS_OUT}/ of the current folder, or of "
                         "the source checkout when run in it, ignored by git there, which links the teacher's abstraction on first use; --out casebases/cfr "
                         "rebuilds the shipped ones); it must hold the teacher's abstraction as emd_256/ "
                         "(a link to casebases/cfr/emd_256 will do)")
    args = ap.parse_args(argv)
    given = [n.strip() for n in args.only.split(",")] if args.only.strip() else []
    if "" in given:  # a slip (raise,,call) must not start the whole default run
        ap.error(f"argument --only: an entry of {args.only!r} is empty: name one counter-strategy per entry, "
                 f"of {', '.join(TARGETS)}")
    names = given or list(TARGETS)
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        ap.error(f"unknown counter-strategies {unknown}; known: {', '.join(TARGETS)}")
    if args.p is not None and args.p > 1:
        ap.error(f"argument --p: {args.p:g} is out of range: give 0 to 1")
    if args.threads > 64:
        ap.error(f"argument --threads: {args.threads} is out of range: give 1 to 64")
    if args.minutes is not None and args.iterations is not None:
        ap.error("give --minutes or --iterations, not both")
    out, logs = Path(args.out) if args.out else runs_out(), Path(args.logs)
    for flag, folder in (("--out", out), ("--logs", logs)):
        if folder.exists() and not folder.is_dir():
            ap.error(f"argument {flag}: {folder} is a file, not a folder")
    if args.out is None:
        link_teacher(out)
    if not (out / "emd_256").is_dir():
        make = "" if out.is_dir() else f"mkdir -p {out} && "
        raise SystemExit(f"error: {out / 'emd_256'} is missing: --out must hold the teacher's abstraction; link the "
                         f"shipped one: {make}ln -s {OUT / 'emd_256'} {out / 'emd_256'}")
    from cbr.abstraction.distribution import DistributionAbstraction
    from cbr.cfr.counter import CounterTrainer
    from cbr.cfr.mccfr import STRATEGY_FILE
    from cbr.errors import CBRError
    from cbr.store.durable import interrupts_held

    stopped = "nothing was written yet"
    written: list[str] = []  # the counter-strategies of this run written whole
    with StartSignals(ignore_after=True):  # the first Ctrl-C or SIGTERM stops the run at once, later ones are ignored
        try:
            logs.mkdir(parents=True, exist_ok=True)
            abstraction = DistributionAbstraction.load(out / "emd_256")
            key = teacher_key()
            for name in names:
                target, p, p_max, c = TARGETS[name]
                if args.p is not None:
                    p, p_max, c = args.p, 1.0, 0.0
                t0 = time.time()
                stopped = (f"the teacher's match against {target}, for counter_{name}, was not finished; its log was "
                           "not written")
                log = log_path(target, args.hands, SEED + list(TARGETS).index(name), logs, key)
                if log.exists():
                    print(f"{name}: reusing {log}, the same teacher's {args.hands:,} duplicate hands against {target} "
                          "played before (delete it to play them again)", file=sys.stderr, flush=True)
                else:
                    print(f"{name}: the teacher plays {target}, {args.hands:,} duplicate hands", file=sys.stderr,
                          flush=True)
                    play_log(target, args.hands, SEED + list(TARGETS).index(name), log, name)
                stopped = f"counter_{name} was not trained; the teacher's log against {target} is kept ({log})"
                model = opponent_model(log, target, abstraction)
                print(f"{name}: {counted(int(model.counts.sum()), 'decision')} of {target} counted in {time.time() - t0:.0f} s",
                      file=sys.stderr, flush=True)
                stopped = "the counter-strategy being trained was not written"
                trainer = CounterTrainer(abstraction, model, p=p, p_max=p_max, c=c, name=name, seed=0,
                                         threads=args.threads)
                if args.iterations is not None:
                    budget, minutes = args.iterations, 0.0
                elif args.minutes is not None:
                    budget, minutes = 0, args.minutes
                else:
                    budget, minutes = SHIPPED_ITERATIONS.get(name, 0), 8.0
                _train(trainer, budget, minutes, name)
                folder = out / f"counter_{name}"
                with interrupts_held():  # the strategy and its model, both or neither (each file is atomic)
                    folder.mkdir(parents=True, exist_ok=True)
                    trainer.save_strategy(folder / STRATEGY_FILE)
                    model.save(folder / "model.npz")
                    stopped = f"counter_{name} was written whole, with its model ({folder})"
                    written.append(f"counter_{name}")
                    print(f"{name}: {counted(trainer.iterations, 'iteration')} in {trainer.seconds:.0f} s -> {folder}",
                          file=sys.stderr, flush=True)
        except CBRError as e:
            raise SystemExit(f"error: {e}") from None
        except Stopped as stop:
            by = "interrupted" if stop.signum == signal.SIGINT else f"stopped by {stop}"
            just = bool(written) and stopped.startswith(f"{written[-1]} was written whole")  # the line's own
            before = written[:-1] if just else written
            print(f"{by}: {stopped}" + (f" (the counter-strategies finished before were written: {', '.join(before)})"
                                        if before else ""), file=sys.stderr)
            return 128 + stop.signum
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
