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
Ctrl-C or SIGTERM saves the checkpoint and the strategy, then exits 130 or 143 with one line;
while the abstraction is built it stops at once, one line and nothing kept. Either way later
signals are ignored, so a second Ctrl-C cuts neither the line nor the exit.

The loop (:class:`cbr.cfr.longrun.LongRun`), the training options and the one place a
trainer is made (:func:`new_trainer`) are shared with ``casebases/build_cfr_big.py``, the
long runs across working sessions.

Threads share the tables without locks, so a two-thread run is not bit-for-bit
reproducible; ``--threads 1`` is (at half the speed).
"""
from __future__ import annotations

import argparse
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable

from casebases import output_root
from cbr.errors import counted

#: The shipped teacher, from the source checkout: ``--out``'s default is this path under
#: :func:`casebases.output_root`.
OUT = Path("casebases") / "cfr" / "emd_256"


class Help(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` with each option's default, except an empty one (its help says what it means)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None or action.default is False or action.default == "":
            return action.help or ""
        return super()._get_help_string(action)


def number(low: float, kind: type = float, *, meaning: str = "", above: bool = False) -> Callable[[str], Any]:
    """An argparse ``type``: ``kind`` of the text, at least ``low`` (``above``: more than
    ``low``), else a usage error naming the valid range and, as ``meaning``, what its lowest
    value means.

    >>> number(0, meaning="0: no limit")("2.5")
    2.5
    >>> number(1, int)("0")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: 0 is out of range: give 1 or more
    >>> number(0, above=True)("0")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: 0 is out of range: give more than 0
    >>> number(0, above=True)("inf")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: inf is not a finite number
    """
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value == float("inf"):  # endless: never a count or a duration (NaN is out of range, below)
            raise argparse.ArgumentTypeError(f"{text} is not a finite number")
        if not (value > low if above else value >= low):  # NaN too
            bound = f"more than {low:g}" if above else f"{low:g} or more"
            raise argparse.ArgumentTypeError(f"{text} is out of range: give {bound}"
                                             + (f" ({meaning})" if meaning else ""))
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its "invalid value" message
    return parse


def add_training_options(ap: argparse.ArgumentParser, *, threads: int = 2,
                         scale: str = "scale --iterations, --checkpoint-every and --snapshot-every down by as much") -> None:
    """The options every MCCFR recipe shares (the trainer's: see :func:`new_trainer`);
    ``scale`` says which of the recipe's options count iterations (public chance needs them
    scaled down)."""
    ap.add_argument("--threads", type=number(1, int), default=threads, help="training threads (1: reproducible bit "
                    "for bit; more share the tables without locks, so not)")
    ap.add_argument("--seed", type=number(0, int), default=0, help="the seed of the abstraction's fit and of MCCFR")
    ap.add_argument("--sampling", choices=("external", "public"), default="external",
                    help="MCCFR's sampling: a deal an iteration, or a board with every holding (public chance: "
                         "one iteration costs the CPU time of about 8,000 external-sampling ones, 7,854 to 8,820 "
                         f"measured: {scale})")


def new_trainer(abstraction: Any, args: argparse.Namespace) -> Any:
    """The MCCFR trainer of a recipe's options: the one place a recipe makes one."""
    from cbr.cfr.mccfr import MCCFRTrainer

    return MCCFRTrainer(abstraction, seed=args.seed, threads=args.threads, sampling=args.sampling)


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class ProgressBar:
    """The progress bar the ``cbr`` commands draw for their long phases (a phase's name, a bar,
    done/total and the time left), for a recipe's: on stderr, only on a terminal, redrawn in
    place at most ten times a second, and gone when :meth:`close` is called (``--quiet``: never
    drawn). A ``progress(stage, done, total)`` callback, safe to call from worker threads; a new
    ``stage`` restarts the clock of the time left. (The recipes import no rich: the bar is drawn
    by hand, in its look.)

    >>> import io
    >>> bar = ProgressBar(stream=io.StringIO())   # not a terminal: nothing drawn
    >>> bar("flop buckets", 200, 1755); bar.close(); bar.stream.getvalue()
    ''
    """

    WIDTH = 40

    def __init__(self, enabled: bool = True, stream: Any = None) -> None:
        import threading

        self.stream = sys.stderr if stream is None else stream
        self.on = enabled and self.stream.isatty()
        self.stage: str | None = None
        self.start = self.last = 0.0
        self.lock = threading.Lock()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.on:
            return
        with self.lock:
            now = time.monotonic()
            if stage != self.stage:
                self.stage, self.start, self.last = stage, now, 0.0
            if now - self.last < 0.1 and done < total:
                return
            self.last = now
            filled = self.WIDTH * min(done, total) // max(total, 1)
            left = (now - self.start) / done * (total - done) if done else None
            eta = "-:--:--" if left is None else time.strftime("%H:%M:%S", time.gmtime(left)).removeprefix("0")
            self.stream.write(f"\r\x1b[2K{stage} {'━' * filled}{' ' * (self.WIDTH - filled)} {done:,}/{total:,} {eta}")
            self.stream.flush()

    def close(self) -> None:
        """Wipe the bar (its line is left empty for what is said next)."""
        with self.lock:
            if self.on and self.stage is not None:
                self.stream.write("\r\x1b[2K")
                self.stream.flush()
            self.stage = None


def add_quiet(ap: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress bar (:class:`ProgressBar`); the lines the recipe says stay."""
    ap.add_argument("--quiet", action="store_true", help="no progress bar while the abstraction is built (a bar shows "
                    "only on a terminal)")


def run_or_say(recipe: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``recipe(args)``'s exit code; a :class:`~cbr.errors.CBRError` is one ``error:`` line and 1."""
    from cbr.errors import CBRError

    try:
        return recipe(args)
    except CBRError as exc:
        say(f"error: {exc}")
        return 1


def make_folder(path: Path) -> Path | None:
    """Make the folder ``path`` and its missing parents before any work; returns the topmost
    folder made (``None``: it was there), which a failed start removes, and nothing else. A
    :class:`~cbr.errors.ConfigError` when ``path`` is a file or cannot be made."""
    from cbr.errors import ConfigError

    if path.exists() and not path.is_dir():
        raise ConfigError(f"{path}: a file, not a folder: give another --out")
    top = None
    for p in (path, *path.parents):
        if p.exists():
            break
        top = p
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot make this folder ({exc.strerror}): give another --out") from None
    return top


class Stopped(KeyboardInterrupt):
    """A Ctrl-C or SIGTERM while a recipe starts (inside :class:`StartSignals`): a
    ``KeyboardInterrupt``, so every clean-up of Ctrl-C runs (a log being written is dropped) and
    no ``except Exception`` takes it for an error (a strategy file being read was reported
    damaged)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class StartSignals:
    """Inside ``with StartSignals() as starting:`` the first SIGINT or SIGTERM raises
    :class:`Stopped` (later ones are ignored), so a start that takes minutes (building the
    abstraction) ends at once and the recipe can say so; ``starting.end()`` (or the end of the
    block) puts the handlers in place before back, before training sets its own, unless a signal
    came and ``ignore_after=True``: then both stay ignored (as :class:`cbr.cfr.longrun.StopSignals`
    does: a process that is stopping must not be cut by a second signal while it says so; every
    recipe here passes it). The counter recipe (:mod:`casebases.build_counters`) keeps it for its
    whole run: a C call of the solver stops after its slice under way.

    >>> with StartSignals():
    ...     try:
    ...         signal.raise_signal(signal.SIGTERM)
    ...     except Stopped as stop:
    ...         signal.raise_signal(signal.SIGINT)  # ignored: stopping already
    ...         print(stop, stop.signum == signal.SIGTERM)
    SIGTERM True
    """

    def __init__(self, *, ignore_after: bool = False) -> None:
        self._before: dict[int, Any] = {}
        self.signum: int | None = None
        self.ignore_after = ignore_after

    def _handle(self, signum: int, _frame: Any) -> None:
        if self.signum is None:
            self.signum = signum
            raise Stopped(signum)

    def __enter__(self) -> "StartSignals":
        self._before = {s: signal.signal(s, self._handle) for s in (signal.SIGINT, signal.SIGTERM)}
        return self

    def end(self) -> None:
        ignore = self.ignore_after and self.signum is not None
        for s, handler in self._before.items():
            signal.signal(s, signal.SIG_IGN if ignore else handler)
        self._before = {}

    def __exit__(self, *exc: object) -> None:
        self.end()


def say_stopped(stop: Stopped, while_: str, then: str) -> int:
    """One line for a recipe stopped before training (``stopped by SIGTERM while ...: then``);
    the exit code, 130 or 143."""
    say(f"stopped by {signal.Signals(stop.signum).name} while {while_}: {then}")
    return 128 + stop.signum


def train(run: Any, *, iterations: int = 0, minutes: float = 0.0) -> int:
    """``run.train`` (a :class:`cbr.cfr.longrun.LongRun`) with Ctrl-C and SIGTERM saving a
    checkpoint; returns the exit code: 0, or 130 / 143 after one line saying where the
    checkpoint is and how to continue."""
    from cbr.cfr.longrun import StopSignals

    with StopSignals(ignore_after=True) as stop:  # stopping already: a later Ctrl-C must not cut the last line
        run.train(iterations=iterations, minutes=minutes, stop=stop)
    if stop.signal is None:
        return 0
    name = signal.Signals(stop.signal).name
    say(f"stopped by {name}: checkpoint at {counted(run.trainer.iterations, 'iteration')} in {run.checkpoint}; "
        f"run the same command again to continue")
    return 128 + int(stop.signal)


def main(argv: list[str] | None = None) -> int:
    from casebases import description
    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=Help)
    ap.add_argument("--buckets", type=number(1, int), default=256, help="buckets on the flop, the turn and the river")
    ap.add_argument("--minutes", type=number(0, meaning="0: use --iterations"), default=0.0,
                    help="train this long (0: use --iterations)")
    ap.add_argument("--iterations", type=number(0, int, meaning="0: until --minutes are up"), default=0,
                    help="train this many more iterations (0: until --minutes are up; neither: 100 million)")
    add_training_options(ap)
    add_quiet(ap)
    ap.add_argument("--out", default="", help=f"the folder of abstraction.npz and strategy.npz (default {OUT} of the "
                    "current folder, or of the source checkout when run in it)")
    ap.add_argument("--snapshots", default="", help="a folder for strategy snapshots (none if not given)")
    ap.add_argument("--snapshot-every", type=number(1, int), default=20_000_000,
                    help="a snapshot every so many iterations")
    ap.add_argument("--checkpoint-every", type=number(1, int), default=10_000_000,
                    help="a checkpoint every so many iterations")
    args = ap.parse_args(argv)
    return run_or_say(_run, args)


def _run(args: argparse.Namespace) -> int:
    from cbr.abstraction.distribution import DistributionAbstraction
    from cbr.cfr.longrun import LongRun
    from cbr.cfr.mccfr import STRATEGY_FILE
    from cbr.errors import ConfigError

    out = Path(args.out) if args.out else output_root() / OUT
    t0 = time.time()
    if not (out / "abstraction.npz").exists():
        b = args.buckets
        top = make_folder(out)
        say(f"building the abstraction ({counted(b, 'bucket')} a street): minutes")
        bar = ProgressBar(not args.quiet)
        try:
            with StartSignals(ignore_after=True):  # once stopped, later signals cannot cut the clean-up or its line
                try:
                    a = DistributionAbstraction.build(b, b, b, seed=args.seed, progress=bar)
                finally:
                    bar.close()
                a.save(out)  # atomic: whole or absent
        except BaseException as exc:
            if top is not None:
                shutil.rmtree(top, ignore_errors=True)
            if isinstance(exc, Stopped):
                return say_stopped(exc, "building the abstraction", "nothing to resume; run the same command "
                                   "again to start over")
            raise
        say(f"abstraction {a.name} built in {time.time() - t0:.0f} s")
    a = DistributionAbstraction.load(out)
    if a.n_buckets[1:] != (args.buckets,) * 3:
        raise ConfigError(f"{out} holds a run of {a.n_buckets[1]}/{a.n_buckets[2]}/{counted(a.n_buckets[3], 'bucket')}, not "
                          f"--buckets {args.buckets}: give --buckets {a.n_buckets[1]} to go on with it, or another --out")
    trainer = new_trainer(a, args)
    snaps = Path(args.snapshots) if args.snapshots else None
    run = LongRun(trainer, out.parent / f"{out.name}.ckpt.npz", strategy=out / STRATEGY_FILE, snapshots=snaps,
                  checkpoint_every=args.checkpoint_every, snapshot_every=args.snapshot_every, report=say)
    if run.resume():
        say(f"resumed at {counted(trainer.iterations, 'iteration')}")
    more = args.iterations or (0 if args.minutes else 100_000_000)
    code = train(run, iterations=trainer.iterations + more if more else 0, minutes=args.minutes)
    if code == 0:
        say(f"strategy: {counted(trainer.iterations, 'iteration')} in {trainer.seconds:.0f} s -> {out / STRATEGY_FILE}")
    return code


if __name__ == "__main__":
    sys.exit(main())
