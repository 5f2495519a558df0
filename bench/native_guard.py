"""What the benchmarks share: the check that the C extensions load
(``experiments.common.require_native``): a benchmark of the pure-Python fallbacks would measure
the wrong thing, so each script stops with one line unless ``CBR_ALLOW_REFERENCE=1``; the
argparse types of their options; and the one-line stop when an optional dependency is missing.

Each script reads its arguments with :func:`parse_args` (the experiments' own,
:func:`experiments.common.parse_args`), which checks them first and the extensions second: ``--help`` and a usage error (argparse's one ``error:`` line, exit 2) are
answered the same with or without the extensions, and the check runs before any work.

The options' types are the experiments' (``experiments/common.py``): a count is
:func:`positive_int` (1 or more), a seed :func:`seed_int` (0 or more), a duration
:func:`positive_float` (more than 0), other ranges :func:`number`; :func:`number_list` reads a
comma-separated list of counts, :func:`json_file` a file to write, :func:`out_path` a folder to
write into (made if missing, but only when its parent exists), and :func:`casebase_name` a
case base, so a bad value is a usage error before any work, not a traceback in the middle of (or
at the end of) a run. Their ``--help`` says each option's default (:func:`help_format`, the
experiments' too). A script whose work may end in an error of the library starts through
:func:`run` (the experiments' entry point): that error is one ``error:`` line, exit 1, and a
Ctrl-C or SIGTERM one line, exit 130 or 143."""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from experiments.common import (  # noqa: E402  (the experiments' own: the same order, the same types)
    help_format,
    number,
    numbers,
    out_path,
    parse_args,
    positive_float,
    positive_int,
    require_native,
    run,
    seed_int,
)

__all__ = ["casebase_name", "help_format", "json_file", "number", "number_list", "out_path", "parse_args", "positive_float",
           "positive_int", "require_modules", "require_native", "run", "seed_int"]


#: A comma-separated list of whole numbers, each at least ``low`` (``number_list(1)("1,4,16")``): the
#: experiments' list type, with its checks (an empty entry such as ``1,,2`` refused).
number_list = numbers


def json_file(text: str) -> Path:
    """An argparse ``type=`` for a file the script writes at its end: its folder must exist and
    it must not be a folder (checked before the run, not after it).

    >>> json_file("out.json").name
    'out.json'
    >>> json_file("no/such/folder/out.json")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: no/such/folder/out.json: its folder does not exist
    """
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; give a file name")
    if not path.resolve().parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: its folder does not exist")
    return path


def casebase_name(text: str) -> str:
    """An argparse ``type=`` for a case base (a name or a folder, as ``cbr`` takes them): one that
    exists, checked before the work rather than in a traceback when it is opened.

    >>> casebase_name("default")
    'default'
    >>> casebase_name("no/such/base")                     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    argparse.ArgumentTypeError: no case base 'no/such/base': not a directory, ...
    """
    from cbr.errors import CBRError
    from cbr.store import resolve_casebase

    try:
        resolve_casebase(text)
    except CBRError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def require_modules(script: str, needs: str, modules: tuple[str, ...], extra: str) -> None:
    """Stop (one line on stderr, exit 1) when one of ``modules`` is not installed, naming the
    extra of ``pyproject.toml`` that brings it: "``script`` ``needs`` MODULE" says what for. A script
    calls it after its arguments are read and before any work.

    >>> require_modules("bench_x.py", "reads JSON with", ("json",), "test")  # installed: nothing happens
    >>> require_modules("bench_x.py", "talks HTTP with", ("json", "no_such_module_x"), "test")
    Traceback (most recent call last):
    SystemExit: error: bench_x.py talks HTTP with no_such_module_x, which is not installed: it comes with the test extra, pip install -e ".[test]"
    """
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a finder refusing it; a module without a spec
            found = False
        if not found:
            raise SystemExit(f"error: {script} {needs} {module}, which is not installed: it comes with the "
                             f'{extra} extra, pip install -e ".[{extra}]"')
