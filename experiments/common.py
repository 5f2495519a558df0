"""What the experiment scripts share: the repository on ``sys.path``, their arguments checked
before the C extensions (:func:`parse_args`, :func:`require_native`), the entry point
(:func:`run`: Ctrl-C and errors as one line), worker pools (:func:`worker_pool`), matplotlib if
it is installed (``pip install -e .[plots]``), progress lines on stderr, JSON output, and where
the output goes (:func:`out_file`, :func:`out_folder`): ``--out`` when given, else
``experiments/scratch/`` (ignored by git), so a script tried without ``--out`` never changes the
committed results under ``experiments/results/`` (the scripts' docstrings name their default
files there; ``--out experiments/results/...`` writes the committed ones)."""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Optional

REPO = Path(__file__).resolve().parent.parent
#: The committed results (read by scripts that build on them; written only where --out names them).
RESULTS = Path(__file__).resolve().parent / "results"
#: Where a script writes without --out: ignored by git (.gitignore), so trying a script never
#: changes the committed results.
SCRATCH = Path(__file__).resolve().parent / "scratch"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from casebases import description  # noqa: E402,F401  (the scripts' --help description, shared with bench/ and the recipes)

PLOTS_HINT = "matplotlib is not installed, so no PNG was written: pip install -e .[plots]"
#: Set to 1 to run a script on the pure-Python fallbacks (about 100 times slower).
ALLOW_REFERENCE = "CBR_ALLOW_REFERENCE"
NATIVE_HINT = ("the C extensions are not built in this tree: run `pip install -e .` (an editable install "
               f"builds them in place); {ALLOW_REFERENCE}=1 runs on the pure-Python fallbacks, about 100x slower")


def missing_native() -> list[str]:
    """The C extensions this process falls back from, as the facades say it
    (``evaluator_ext.IMPLEMENTATION``, ``CFR_IMPLEMENTATION``, ``MCCFR_AVAILABLE``, and the
    retrieval kernels of :func:`cbr.retrieval.aggregate.native_scan`, the river re-solver of
    :func:`cbr.cfr.resolve.native`); empty when all load.

    >>> missing_native()  # in a built tree
    []
    """
    from cbr.errors import CBRError

    try:
        import evaluator_ext
    except ImportError:  # CBR_REQUIRE_NATIVE=1 and the evaluator is missing
        return ["evaluator_ext._native"]
    missing = []
    if evaluator_ext.IMPLEMENTATION != "native":
        missing.append("evaluator_ext._native")
    try:
        if evaluator_ext.CFR_IMPLEMENTATION != "native":
            missing.append("evaluator_ext._cfr")
        if not evaluator_ext.MCCFR_AVAILABLE:
            missing.append("evaluator_ext._mccfr")
        from cbr.retrieval.aggregate import native_scan

        if native_scan() is None:
            missing.append("evaluator_ext._retrieval")
        from cbr.cfr.resolve import native as resolve_native

        try:
            resolve_native()  # the river re-solver: a ConfigError when it is not built
        except CBRError:
            missing.append("evaluator_ext._resolve")
    except (ImportError, CBRError):  # likewise for the others
        missing.append("an extension of evaluator_ext")
    return missing


def asks_for_help(argv: Optional[list[str]] = None) -> bool:
    """Whether the command line (``sys.argv[1:]`` by default) asks for ``-h`` or ``--help``,
    which argparse answers before the script runs anything.

    >>> asks_for_help(["--seed", "3", "--help"]), asks_for_help(["--hands", "10"])
    (True, False)
    """
    return any(a in ("-h", "--help") for a in (sys.argv[1:] if argv is None else argv))


def require_native() -> None:
    """Stop the script (one line on stderr, exit 1) when the C extensions are not loadable: the
    source tree's ``evaluator_ext`` comes first on ``sys.path``, and without its built
    extensions the facades fall back to pure Python, about 100 times slower. The environment
    variable ``CBR_ALLOW_REFERENCE=1`` lets the script run anyway, and ``--help`` always works
    (:func:`asks_for_help`: it runs nothing)."""
    if os.environ.get(ALLOW_REFERENCE) == "1" or asks_for_help() or not missing_native():
        return
    print(f"error: {NATIVE_HINT}", file=sys.stderr, flush=True)
    raise SystemExit(1)


def parse_args(parser: Any, argv: Optional[list[str]] = None) -> Any:
    """``parser.parse_args(argv)``, then :func:`require_native`: a script's arguments are checked
    before the C extensions, so ``--help`` and a usage error (argparse's one ``error:`` line, exit
    2) are answered the same with or without them, and the check runs before any work. (A script
    with usage checks of its own after argparse's calls :func:`require_native` after them.)"""
    args = parser.parse_args(argv)
    one_process_stores(parser, args)
    require_native()
    return args


def one_process_stores(parser: Any, args: Any) -> None:
    """A usage error (argparse's one ``error:`` line, exit 2) when a bot of the run plays from a
    model store (``store=PATH``, any spec :func:`policy_spec` checked) and the run's ``--workers``
    (or ``--jobs``) is above 1: each worker builds its own bots and one process at a time may
    have a store open, so the second worker stopped the run mid-way (``model store P is in use by
    another process``). Called by :func:`parse_args`, and by a script with usage checks of its
    own after them."""
    from cbr.policies.spec import store_clash

    for action in parser._actions:
        n = getattr(args, action.dest, None) if action.dest in ("workers", "jobs") else None
        if isinstance(n, int) and not isinstance(n, bool):
            clash = store_clash(CHECKED, n)
            if clash:
                parser.error(f"argument {'/'.join(action.option_strings)}: {clash}: "
                             f"give {max(action.option_strings, key=len)} 1")


class Terminated(KeyboardInterrupt):
    """SIGTERM in a script started by :func:`run`, raised in the main thread as a ``KeyboardInterrupt``
    so that every clean-up of a Ctrl-C runs (pools stopped, partial files dropped), as ``cbr``
    does (``cbr.cli._errors.Terminated``)."""


def _terminated(signum: int, frame: Any) -> None:
    raise Terminated()


def run(main: Any, interrupted: Any = "nothing written") -> None:
    """A script's entry point: ``main()`` (which checks its arguments, then the extensions:
    :func:`parse_args`), its return value the exit code; Ctrl-C is one line (``interrupted:
    INTERRUPTED``; ``interrupted`` is the text, or a function giving it then, such as
    :func:`so_far`), exit 130, a SIGTERM likewise (``terminated: INTERRUPTED``), exit 143 (raised
    as :class:`Terminated`: the workers of :func:`worker_pool` and of the library are stopped
    as for a Ctrl-C, and die with the script anyway), and an error of the library
    (:class:`cbr.errors.CBRError`, such as a worker of :func:`worker_pool` that died; a bot of an
    option that cannot be made, :class:`BotInputError`) one ``error:`` line, exit 1. Once ``main`` has returned, the script has finished: Ctrl-C and
    SIGTERM are ignored while the interpreter exits (Python puts back their default actions
    while it exits, so a Ctrl-C landing there ended a finished run with exit 130 and no line).
    Every script in ``experiments/`` starts through it."""
    import signal

    from cbr.errors import CBRError

    signal.signal(signal.SIGTERM, _terminated)
    try:
        code = main()
        _ignore_stops()  # in the try: a Ctrl-C before it is the run's one line
    except KeyboardInterrupt as exc:
        _ignore_stops()  # stopping already: a second stop must not cut the line
        by, status = ("terminated", 143) if isinstance(exc, Terminated) else ("interrupted", 130)
        print(f"{by}: {with_stores(interrupted() if callable(interrupted) else interrupted)}", file=sys.stderr, flush=True)
        raise SystemExit(status) from None
    except (CBRError, BotInputError) as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    raise SystemExit(code if isinstance(code, int) else 0)


def _ignore_stops() -> None:
    import signal

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)


#: The files this process wrote through :func:`write_json`, in order (:func:`so_far` names them).
WRITTEN: list[Path] = []
#: The model stores the bots of this run write as they play: the ``store=PATH`` of each spec
#: :func:`policy_spec` checked (``poki-wt``, ``simbot``; not with ``learn=0``). Such a bot saves
#: every hand it finishes (one transaction each, the store's design: it remembers its opponents
#: from one match to the next), in whichever worker plays it, so a run that stops or whose
#: worker dies has written them: :func:`with_stores` says so.
STORES: list[Path] = []
#: Every spec :func:`policy_spec` checked, in order (:func:`one_process_stores` reads their stores).
CHECKED: list[str] = []


def note_stores(spec: str) -> None:
    """Note in :data:`STORES` the model store ``spec`` writes as it plays, if any.

    >>> note_stores("poki-wt:store=p.duckdb"); note_stores("poki-wt:store=q.duckdb:learn=0"); STORES
    [PosixPath('p.duckdb')]
    >>> STORES.clear()
    """
    from cbr.errors import CBRError
    from cbr.policies.spec import FALSE_WORDS, parse_policy_spec

    try:
        _, options = parse_policy_spec(spec)
    except CBRError:
        return
    if options.get("store") and options.get("learn", "true").strip().lower() not in FALSE_WORDS:
        STORES.append(Path(options["store"]))


def with_stores(kept: str) -> str:
    """``kept`` (what a run that stopped or lost a worker says it wrote: ``Nothing was written.``,
    ``nothing written``, or the files it wrote) and the model stores of :data:`STORES` there now,
    which its bots wrote a hand at a time as they played: ``kept`` alone when there are none.

    >>> import os, tempfile
    >>> store = Path(tempfile.mkdtemp()) / "p.duckdb"; _ = store.write_bytes(b"")
    >>> with_stores("Nothing was written.")
    'Nothing was written.'
    >>> STORES.append(store); with_stores("Nothing was written.") == (f"Nothing was written but 1 model store of "
    ...     f"the bots ({store}), which keeps each hand they finished.")
    True
    >>> with_stores("nothing written") == f"nothing written but 1 model store of the bots ({store}), which keeps each hand they finished"
    True
    >>> with_stores("No cell was written.") == f"No cell was written. 1 model store of the bots ({store}) keeps each hand they finished."
    True
    >>> STORES.clear()
    """
    from cbr.errors import counted

    stores = [p for p in dict.fromkeys(STORES) if p.exists()]
    if not stores:
        return kept
    which = f"{counted(len(stores), 'model store')} of the bots ({', '.join(shown(p) for p in stores)})"
    keeps = "keeps" if len(stores) == 1 else "keep"
    if kept in ("Nothing was written.", "nothing written"):  # the experiments' words for none
        end = "." if kept.endswith(".") else ""
        return f"{kept.rstrip('.')} but {which}, which {keeps} each hand they finished{end}"
    return f"{kept} {which} {keeps} each hand they finished."


def shown(path: Path) -> str:
    """``path`` as a line names it: relative to the working folder when under it.

    >>> shown(Path.cwd() / "experiments" / "scratch" / "x.json")
    'experiments/scratch/x.json'
    >>> shown(Path("/nonexistent/x.json"))
    '/nonexistent/x.json'
    """
    try:
        return str(path.relative_to(Path.cwd())) if path.is_absolute() else str(path)
    except ValueError:
        return str(path)


def so_far(what: str, then: str = "") -> Any:
    """The ``interrupted`` of :func:`run` for a script that writes as it goes: a function saying
    ``WHAT are in FILE`` (and ``then``) naming the files written so far (:data:`WRITTEN`), or
    ``nothing written`` when nothing was.

    >>> say_it = so_far("the rows measured so far", " (a re-run measures only the rest)")
    >>> say_it()
    'nothing written'
    >>> WRITTEN.append(Path("out/table.json")); say_it()
    'the rows measured so far are in out/table.json (a re-run measures only the rest)'
    >>> WRITTEN.clear()
    """
    def text() -> str:
        files = list(dict.fromkeys(shown(p) for p in WRITTEN))
        return f"{what} are in {', '.join(files)}{then}" if files else "nothing written"

    return text


def finished(result: Any) -> Any:
    """``result``, an :class:`~cbr.exploit.measure.ExploitResult`, when its measurement ran to
    its end: :func:`~cbr.exploit.measure.exploit` returns the chunks played so far when a Ctrl-C
    or SIGTERM stops it, and when a worker dies, where a script must stop (:func:`run`'s one
    line) rather than go on and write a partial measurement as a whole one."""
    from cbr.errors import CBRError

    if result.interrupted and isinstance(result.stopped_by, KeyboardInterrupt):
        raise result.stopped_by
    if result.failed:
        raise CBRError(f"the LBR measurement failed: {result.failed}")
    return result


class worker_pool:  # noqa: N801  (used as ``with worker_pool(n) as pool``, as ProcessPoolExecutor is)
    """``with worker_pool(workers) as pool: for r in pool.map(fn, xs, ...)``: the results of
    ``fn`` in order, computed in ``workers`` processes, as ``ProcessPoolExecutor.map`` gives
    them, with the house's pool (:mod:`cbr.build.pools`): the workers begin with Ctrl-C blocked
    and then leave it to the script (a terminal's Ctrl-C is the script's one ``interrupted``
    line, no worker traceback), die with the script, and a worker that dies (killed from
    outside, out of memory) is noticed while the script waits, whatever the pool knows. Leaving
    the block by an exception (Ctrl-C, a worker's error) stops the workers at once; a dead
    worker is a :class:`~cbr.errors.CBRError` (one ``error:`` line from :func:`run`) ending with
    ``kept``, a sentence saying what the script has written so far, or a function giving that
    sentence when the worker died (what a script writes as it goes changes while it waits)."""

    def __init__(self, workers: int, kept: Any = "Nothing was written.") -> None:
        self.workers = max(1, workers)
        self.kept = kept
        self._pool: Any = None
        self._context: Any = None

    def __enter__(self) -> "worker_pool":
        from cbr.build.pools import new_pool

        self._pool, self._context = new_pool(self.workers)
        return self

    def map(self, fn: Any, *iterables: Any) -> Any:
        """``fn(*args)`` for each ``args`` of ``zip(*iterables)``, all submitted now; a generator
        of their results in order (each waited for with :func:`cbr.build.pools.pool_result`)."""
        from cbr.build.pools import pool_result, workers_starting

        with workers_starting(self._context.get_start_method()):
            futures = [self._pool.submit(fn, *args) for args in zip(*iterables)]

        def results() -> Any:
            for future in futures:
                yield pool_result(future, self._pool)

        return results()

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        from concurrent.futures.process import BrokenProcessPool

        from cbr.build.pools import stop_pool
        from cbr.errors import CBRError

        if kind is None:
            self._pool.shutdown()
            return
        stop_pool(self._pool)
        if isinstance(exc, BrokenProcessPool):
            kept = with_stores(self.kept() if callable(self.kept) else self.kept)
            raise CBRError(f"a worker process of the experiment died ({exc}); killed from outside, or out of "
                           f"memory? {kept}") from None


def pyplot() -> Optional[Any]:
    """``matplotlib.pyplot`` with the file-only Agg backend, or ``None`` (and a line on
    stderr saying how to install it) when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        say(PLOTS_HINT)
        return None
    return plt


def say(text: str) -> None:
    """One progress line on stderr, stamped with the wall-clock time."""
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def environment() -> dict:
    """What the numbers depend on: evaluator implementation, Python, CPU count."""
    import evaluator_ext

    return {"evaluator": evaluator_ext.IMPLEMENTATION, "python": platform.python_version(),
            "cpus": os.cpu_count(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS")}


def finite(x: Optional[float], digits: Optional[int] = None) -> Optional[float]:
    """A number for a report: None where it is not finite (the CI of a match too short for one
    is ``inf``: JSON has no such number, and ``cbr match --json`` says ``null``) or missing;
    ``digits``: rounded to that many decimals.

    >>> finite(0.1234, 2), finite(float("inf")), finite(float("nan")), finite(None)
    (0.12, None, None, None)
    """
    if x is None or not math.isfinite(x):
        return None
    return round(float(x), digits) if digits is not None else float(x)


def ci_text(ci: Optional[float], spec: str = ".3f") -> str:
    """A CI's half-width for a table or a progress line, formatted by ``spec``; ``n/a`` where
    there is none (:func:`finite`), as ``cbr match`` says it.

    >>> ci_text(0.06417), ci_text(12.6, ".0f"), ci_text(None), ci_text(float("inf"))
    ('0.064', '13', 'n/a', 'n/a')
    """
    return "n/a" if finite(ci) is None else format(ci, spec)


def duel(bot: str, opp: str, hands: int, seed: int) -> dict:
    """``bot`` against ``opp``: a duplicate match of ``hands`` hands; the bot's sb/h with its 95% CI
    (None when the match is too short for one)."""
    from cbr.play.match import run_match

    t = time.time()
    m = run_match([bot, opp], hands, duplicate=True, seed=seed)
    me = m.players[0]
    return {"sb_per_hand": me.sb_per_hand, "ci": finite(me.sb_ci), "hands": m.hands, "seconds": round(time.time() - t)}


def budgeted_lbr(bot: str, hands: int, seed: int, workers: int, budget: float,
                 chunk_deals: Optional[int] = None) -> dict:
    """LBR (``cbr exploit``'s default variant) against ``bot`` for at most ``hands`` hands or
    ``budget`` seconds: SIGALRM ends it like a Ctrl-C, and the chunks finished so far count (a
    real Ctrl-C or SIGTERM stops the script: :func:`finished`). Returns :meth:`~cbr.exploit.measure.ExploitResult.to_dict`."""
    import signal

    from cbr.exploit.lbr import Variant
    from cbr.exploit.measure import CHUNK_DEALS, exploit

    class OutOfTime(KeyboardInterrupt):
        pass

    def alarm(signum, frame):  # noqa: ANN001, ANN202
        raise OutOfTime

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, budget)
    try:
        r = exploit(bot, hands=hands, seed=seed, workers=workers, variant=Variant(),
                    chunk_deals=CHUNK_DEALS if chunk_deals is None else chunk_deals)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    if r.interrupted and isinstance(r.stopped_by, OutOfTime):
        return r.to_dict()  # the budget's end: the chunks finished count
    return finished(r).to_dict()


def out_path(kind: str = "file") -> Any:
    """An argparse ``type=`` for ``--out``, a ``file`` the script writes or a ``folder`` it writes
    into, checked when the arguments are parsed, before any work: a file's folder must exist
    (a missing folder is not made: a slip in the path wrote a tree in the wrong place), a path
    under a file and a folder given for a file are refused; a folder may be missing (it is made
    with the first result) but its parent must exist, and it must not be a file. A bad path is
    one usage error (exit 2). The :class:`~pathlib.Path`.

    >>> out_path("file")("x.json"), out_path("folder")("runs")
    (PosixPath('x.json'), PosixPath('runs'))
    >>> out_path("file")("/nonexistent/x.json")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: /nonexistent/x.json: the folder /nonexistent does not exist (make it first)
    >>> out_path("file")("/etc/passwd/x.json")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: /etc/passwd/x.json: /etc/passwd is a file, not a folder
    >>> out_path("file")("/tmp")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: /tmp is a folder; give a file name
    >>> out_path("folder")("/etc/passwd")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: /etc/passwd is a file; give a folder
    """
    import argparse

    if kind not in ("file", "folder"):
        raise ValueError(f"kind {kind!r}: 'file' or 'folder'")

    def parse(text: str) -> Path:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"give the {kind} to write")
        path = Path(text)
        if kind == "file" and path.is_dir():
            raise argparse.ArgumentTypeError(f"{text} is a folder; give a file name")
        if kind == "folder" and path.exists() and not path.is_dir():
            raise argparse.ArgumentTypeError(f"{text} is a file; give a folder")
        home = path if kind == "folder" and path.is_dir() else path.parent  # the folder that must exist
        if not home.is_dir():
            above = next((p for p in (home, *home.parents) if p.exists()), None)
            if above is not None and not above.is_dir():
                raise argparse.ArgumentTypeError(f"{text}: {above} is a file, not a folder")
            raise argparse.ArgumentTypeError(f"{text}: the folder {home} does not exist (make it first)")
        if not os.access(home, os.W_OK | os.X_OK):
            raise argparse.ArgumentTypeError(f"{text}: cannot write in the folder {home}")
        return path

    parse.__name__ = f"{kind} path"  # argparse names the type in its "invalid value" message
    return parse


def out_file(out: Any, name: str) -> Path:
    """The file a script writes: ``--out`` when given (checked by :func:`out_path`), else
    ``experiments/scratch/NAME`` (ignored by git; the folder made now), said on stderr with the
    ``--out`` that would rewrite the committed result.

    >>> out_file("/tmp/x.json", "x.json")
    PosixPath('/tmp/x.json')
    """
    if out:
        return Path(out)
    path = SCRATCH / name
    SCRATCH.mkdir(exist_ok=True)
    say(f"no --out: writing {path.relative_to(REPO)} (ignored by git; --out experiments/results/{name} "
        "rewrites the committed result)")
    return path


def out_folder(out: Any) -> Path:
    """The folder a script writes its files into: ``--out`` when given (checked by
    :func:`out_path`: made with the first result, by :func:`write_json` or the script), else
    ``experiments/scratch/`` (ignored by git; made now), said on stderr.

    >>> out_folder("/tmp/runs")
    PosixPath('/tmp/runs')
    """
    if out:
        return Path(out)
    SCRATCH.mkdir(exist_ok=True)
    say(f"no --out: writing into {SCRATCH.relative_to(REPO)}/ (ignored by git; --out experiments/results "
        "rewrites the committed results)")
    return SCRATCH


def help_format(raw: bool = False) -> Any:
    """The ``formatter_class`` of the scripts' parsers: each option's help ends with its default
    (``(default: 4000)``), unless it has none worth saying (None, off, empty) or the help already
    says it in that one form (``(default: 1000; 3 with --quick)``, for a default computed when the
    option is not given); an option without help shows its default alone; with ``raw`` the description keeps
    its paragraphs and line breaks as written, but a line wider than the terminal is folded
    (:func:`raw_lines`: argparse printed it whole, 95 columns at 80). Lines break at spaces and
    after a list's commas, never inside a word (:func:`help_lines`: argparse cut a long default
    such as a list of specs mid-word). The benchmarks' parsers use it too
    (``bench/native_guard.py``).

    >>> import argparse
    >>> ap = argparse.ArgumentParser(prog="x", formatter_class=help_format())
    >>> _ = ap.add_argument("--hands", type=int, default=4000, help="duplicate hands per match")
    >>> _ = ap.add_argument("--out", default=None, help="the JSON to write")
    >>> _ = ap.add_argument("--seed", type=int, default=0, help="deal seed")
    >>> _ = ap.add_argument("--top", type=int, default=20)
    >>> [line.strip() for line in ap.format_help().splitlines()[-4:]]
    ['--hands HANDS  duplicate hands per match (default: 4000)', '--out OUT      the JSON to write', '--seed SEED    deal seed (default: 0)', '--top TOP      (default: 20)']
    """
    import argparse
    import copy

    bases = (argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter) if raw else (
        argparse.ArgumentDefaultsHelpFormatter,)

    def shown(action: argparse.Action) -> bool:
        default = action.default  # a seed of 0 is a value to show: off is None, False or empty
        return not (default is None or default is False or default == "" or default is argparse.SUPPRESS
                    or "(default: " in (action.help or ""))  # (not any "default": the default case base)

    class Defaults(*bases):  # type: ignore[misc]
        def _format_action(self, action: argparse.Action) -> str:
            if not action.help and action.help is not argparse.SUPPRESS and action.option_strings and shown(action):
                action = copy.copy(action)  # an option without help still says its default
                action.help = "(default: %(default)s)"
            return super()._format_action(action)

        def _get_help_string(self, action: argparse.Action) -> str:
            if not shown(action):
                return action.help or ""
            return super()._get_help_string(action)

        def _split_lines(self, text: str, width: int) -> list[str]:
            return help_lines(text, width)

        def _fill_text(self, text: str, width: int, indent: str) -> str:
            if raw:
                return raw_lines(text, width, indent)
            return "\n".join(help_lines(text, width, indent))

    return Defaults


#: What :func:`help_lines` never breaks: a word, a default or a spec such as
#: ``cfr:strategy=emd_256`` (a longer one overflows the line), nor at its hyphens.
WHOLE_WORDS = {"break_long_words": False, "break_on_hyphens": False}


def help_lines(text: str, width: int, indent: str = "", hang: Optional[str] = None) -> list[str]:
    """``text`` folded into lines of at most ``width`` columns, broken at spaces and after the
    commas of a list (``call,raise,station``: a default that is one long word stayed whole but ran
    past the terminal), never inside a word (:data:`WHOLE_WORDS`); each line starts with
    ``indent``, or the second and later with ``hang`` when it is given.

    >>> help_lines("bots (default: call,raise,station,lag)", 24)
    ['bots (default: call,', 'raise,station,lag)']
    >>> help_lines("bots (default: call,raise,station,lag)", 16)
    ['bots (default:', 'call,raise,', 'station,lag)']
    """
    import re
    import textwrap

    class Lists(textwrap.TextWrapper):
        wordsep_simple_re = re.compile(r"(\s+|(?<=,)(?=[^\s,]))")  # a space, or the point after a comma

    return Lists(width, initial_indent=indent, subsequent_indent=indent if hang is None else hang,
                 **WHOLE_WORDS).wrap(" ".join(text.split()))


def raw_lines(text: str, width: int, indent: str = "") -> str:
    """A raw description (``help_format(raw=True)``) as written, each line after ``indent``,
    but a line wider than ``width`` folded (:func:`help_lines`), its next lines under its own
    text: after its indentation and a list item's number or dash.

    >>> print(raw_lines("Speed of two engines.\\n\\n1. Random play in both engines: hands/s.", 24))
    Speed of two engines.
    <BLANKLINE>
    1. Random play in both
       engines: hands/s.
    """
    import re

    out = []
    for line in text.splitlines():
        if len(indent + line) <= width:
            out.append(indent + line if line.strip() else "")
            continue
        lead = re.match(r"\s*(?:(?:\d+[.)]|[-*])\s+)?", line).group()
        out += help_lines(line, width, indent + re.match(r"\s*", line).group(), indent + " " * len(lead))
    return "\n".join(out)


#: ``--help`` of an ``--out`` file.
OUT_HELP = ("the JSON to write, in a folder that exists (default: experiments/scratch/{name}, ignored by git; "
            "the committed experiments/results/{name} is rewritten only when --out names it)")
#: ``--help`` of an ``--out`` folder.
OUT_FOLDER_HELP = ("the folder to write into, made if missing inside a folder that exists (default: "
                   "experiments/scratch/, ignored by git; the committed experiments/results/ is rewritten only "
                   "when --out names it)")


def number(low: float, kind: type = float, *, high: Optional[float] = None, above: bool = False) -> Any:
    """An argparse ``type=`` for a script's values: ``kind`` of the text, at least ``low``
    (``above``: more than ``low``) and at most ``high``, else a usage error (one ``error:``
    line, exit 2) before the script does any work or creates any file.

    >>> number(1, int)("3"), number(0, high=1)("0.5")
    (3, 0.5)
    >>> number(1, int)("0")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: 0 is out of range: give 1 or more
    >>> number(0, high=1)("2")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: 2 is out of range: give 0 to 1
    """
    import argparse

    from casebases.build_cfr_emd import number as at_least

    check = at_least(low, kind, above=above)

    def parse(text: str) -> Any:
        value = check(text)
        if high is not None and value > high:
            span = f"more than {low:g} and at most {high:g}" if above else f"{low:g} to {high:g}"
            raise argparse.ArgumentTypeError(f"{text} is out of range: give {span}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its "invalid value" message
    return parse


#: ``type=`` of a count (hands, workers, iterations): a whole number, 1 or more.
positive_int = number(1, int)
#: ``type=`` of a seed: a whole number, 0 or more.
seed_int = number(0, int)
#: ``type=`` of a duration (seconds, minutes): a number more than 0.
positive_float = number(0, above=True)


def numbers(low: int) -> Any:
    """An argparse ``type=`` for a comma-separated list of whole numbers, each at least ``low``,
    and at least one of them; an empty entry is a slip, refused (it was dropped).

    >>> numbers(0)("0,10,100")
    [0, 10, 100]
    >>> numbers(0)("abc")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: 'abc' is not a number
    >>> numbers(1)(",")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: ',' names no number
    >>> numbers(0)("0,,10")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: entry 2 of '0,,10' is empty: give one number per entry, separated by single commas
    """
    one = number(low, int)

    def parse(text: str) -> list[int]:
        items = text.split(",")
        if not any(x.strip() for x in items):
            raise argparse.ArgumentTypeError(f"{text!r} names no number")
        for i, item in enumerate(items, 1):
            if not item.strip():
                raise argparse.ArgumentTypeError(f"entry {i} of {text!r} is empty: give one number per entry, "
                                                 f"separated by single commas")
        return [one(x) for x in items]

    parse.__name__ = "list of numbers"
    return parse


class BotInputError(Exception):
    """A bot of a spec that is well formed but cannot be made: a file or case base an option
    names that is missing or not of its kind (``cbr:casebase=/nonexistent``), another package's
    bot that fails as it is made. Raised by :func:`policy_spec` as the library's error
    (``error``, its ``__cause__`` too) and said by :func:`run` as that error: one ``error:`` line,
    exit 1, as the ``cbr`` commands say it (usage errors, exit 2, are for malformed options). Not
    a ``ValueError``: argparse, which takes what a ``type=`` raises of those for a malformed value
    (a usage error), lets it through."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def policy_spec(text: str) -> str:
    """An argparse ``type=`` for one policy spec (``--bot``): the bot is built as ``cbr match``
    checks its seats and closed, before the script does any work or makes any file. As the
    ``cbr`` commands tell them apart: a spec that does not parse, an unknown bot (the message
    names the known ones), an unknown option or a value the bot refuses is a usage error (one
    ``error:`` line, exit 2); a file or case base an option names that is missing or not of its
    kind (read as the bot is made; a file read only at its first decision, such as a strategy's
    contents, is said then) is the library's error, :class:`BotInputError` (one ``error:`` line
    from :func:`run`, exit 1). The spec, stripped.

    >>> policy_spec(" lag:stab-rate=0.25 ")
    'lag:stab-rate=0.25'
    >>> policy_spec("nosuchbot")                          # doctest: +ELLIPSIS
    Traceback (most recent call last):
    argparse.ArgumentTypeError: unknown policy 'nosuchbot'; known policies: adapt, call, cbr, ...
    >>> policy_spec("cbr:casebase=/nonexistent")          # doctest: +ELLIPSIS
    Traceback (most recent call last):
    common.BotInputError: policy spec 'cbr:casebase=/nonexistent': option 'casebase': no case base '/nonexistent': ...
    """
    import argparse

    from cbr.errors import CBRError
    from cbr.policies.spec import PolicySpecError, policy_from_spec

    try:
        bot = policy_from_spec(text)
    except PolicySpecError as exc:  # a malformed option: a usage error, as in cbr match
        raise argparse.ArgumentTypeError(str(exc)) from None
    except CBRError as exc:  # an input the spec names, or a plugin that failed: exit 1, as in cbr match
        raise BotInputError(exc) from exc
    close = getattr(bot, "close", None)
    if callable(close):
        close()
    note_stores(text)  # written as the bot plays: a stopped run says so (with_stores)
    CHECKED.append(text.strip())
    return text.strip()


def policy_specs(least: int = 1, each: Any = policy_spec) -> Any:
    """An argparse ``type=`` for a comma-separated list of policy specs (``--bots``,
    ``--opponents``): each checked by ``each`` (:func:`policy_spec`; a script whose list has a
    syntax of its own passes its check), at least ``least`` of them. The list of specs.

    >>> policy_specs()("ehs, cbr:reuse=max-frequency")
    ['ehs', 'cbr:reuse=max-frequency']
    >>> policy_specs()("call,,raise")                     # an empty entry is a slip, not a skip
    Traceback (most recent call last):
    argparse.ArgumentTypeError: entry 2 of 'call,,raise' is empty: name one bot per entry, separated by single commas
    >>> policy_specs()("call,nosuchbot")                  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    argparse.ArgumentTypeError: unknown policy 'nosuchbot'; known policies: adapt, call, cbr, ...
    >>> policy_specs()(" ")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: give 1 or more policy specs, comma-separated
    """
    import argparse

    from cbr.policies.spec import split_policy_specs

    def parse(text: str) -> list[str]:
        items = text.split(",")
        for i, item in enumerate(items, 1):
            if not item.strip() and text.strip():
                raise argparse.ArgumentTypeError(f"entry {i} of {text!r} is empty: name one bot per entry, "
                                                 f"separated by single commas")
        specs = [each(spec) for spec in split_policy_specs(text)]
        if len(specs) < least:
            raise argparse.ArgumentTypeError(f"give {least} or more policy specs, comma-separated")
        return specs

    parse.__name__ = "list of policy specs"
    return parse


def check_casebase(name: str) -> Path:
    """The case base ``name`` names (a name under ``./casebases/``, a shipped one or a folder, as
    the ``cbr`` commands take them), opened and closed before the script does any work (nothing
    written: a catalog that lags is left as it is). One that does not exist or cannot be opened
    raises the library's :class:`~cbr.errors.CaseBaseError`, which :func:`run` says as the ``cbr``
    commands do (``cbr query -c NAME``): one ``error:`` line, exit 1; a bad input, not a usage
    error (exit 2 is for malformed options). The case base's folder.

    >>> check_casebase("default").name
    'default'
    >>> check_casebase("no/such/base")                  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    cbr.errors.CaseBaseError: no case base 'no/such/base': not a directory, ...
    """
    from cbr.store import CaseBase, resolve_casebase

    path = resolve_casebase(name)
    CaseBase.open(path, repair_catalog=False).close()
    return path


def not_finite(data: Any, where: str = "") -> Optional[str]:
    """Where in ``data`` (dicts and lists) the first number that is not finite is, as
    ``key.key[index]``; None when every number is finite.

    >>> not_finite({"rows": {"hs": {"call": {"ci": float("inf")}}}}), not_finite({"a": [1.0, None]})
    ('rows.hs.call.ci', None)
    """
    if isinstance(data, float) and not math.isfinite(data):
        return where or "the value"
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, (list, tuple)) else ()
    for key, value in items:
        found = not_finite(value, f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else str(key))
        if found is not None:
            return found
    return None


def write_json(path: Path, data: dict, indent: int = 2) -> None:
    """Write ``data`` as indented JSON, and note it in :data:`WRITTEN`. Its folder is made if
    missing, that folder alone (an ``--out`` folder, whose parent :func:`out_path` checked; never
    a tree of a user's path); a file that cannot be written is a :class:`~cbr.errors.CBRError`
    (one ``error:`` line from :func:`run`). A number that is not finite (``inf``, ``nan``) is
    refused the same way, naming where it is: JSON has no such numbers (Python would write
    ``Infinity``, which no JSON reader takes); a script gives None for what it could not
    measure (:func:`finite`)."""
    from cbr.errors import CBRError

    bad = not_finite(data)
    if bad is not None:
        raise CBRError(f"cannot write {path}: {bad} is not a finite number, which JSON cannot hold "
                       "(a value that could not be measured is null)")
    try:
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(data, indent=indent, allow_nan=False) + "\n")
    except OSError as exc:
        raise CBRError(f"cannot write {path}: {exc.strerror or exc}") from None
    WRITTEN.append(path)
