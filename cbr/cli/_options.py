"""Options and checks shared by several commands: limits, help texts, old spellings, log
formats, file sizes and the output-path rule.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import typer

from cbr.cli._errors import usage_error

#: Most hands ``cbr match`` plays (``cbr.play.match.MAX_HANDS``: results take no memory per hand).
MAX_HANDS = 1_000_000_000
#: Most Monte Carlo deals ``cbr hand --trials`` accepts: ``evaluator_ext.MAX_TRIALS`` (kept here
#: as a number so ``cbr --help`` need not import the evaluator; a test checks they agree).
MAX_TRIALS = 1_000_000_000
#: Seeds of the native evaluator are unsigned 64-bit numbers.
MAX_SEED = 2**64 - 1
#: Most worker processes ``cbr build -j`` accepts; more than the CPUs are reduced to the CPUs.
MAX_WORKERS = 256
#: Longest wait in seconds a ``--timeout`` or ``--connect-timeout`` accepts (a week): a socket's
#: timeout must fit the platform's time_t (``inf`` or ``1e300`` crashed the dealer and the client).
MAX_WAIT = 7 * 86400

FLAG = ""  # a flag shows no <bool> value in --help
MAX_FILE_SIZE_HELP = "Skip (and list) log files larger than this, e.g. 512M, 1G (default 256M)."
GAME_HELP = ("Game: a preset name (e.g. holdem.limit.2p), a GameDef JSON file (.json), inline GameDef "
             "JSON ('{...}') or an ACPC .game file.")


def game_option(spec: Optional[str], n_players: int = 2, *, acpc: bool = False) -> Any:
    """The ``GameDef`` of a ``--game`` option (:data:`GAME_HELP`): :func:`cbr.game.spec.load_game`,
    or with ``acpc`` :func:`cbr.logs.acpc.acpc_game` (also the reference dealer's game-file names;
    ``None``: the default game of ``n_players``). What the command line itself gives wrong, an
    unknown game name or inline JSON (``'{...}'``) that is not a valid game, is a usage error on
    ``--game`` (exit 2) in every command, as a malformed value of any option is; a game file
    whose content is not valid is an error in an input file (exit 1)."""
    import os

    from cbr.errors import ConfigError

    game_file = spec is not None and not spec.strip().startswith("{") and os.path.exists(spec)
    try:
        if acpc:
            from cbr.logs.acpc import acpc_game

            return acpc_game(spec, n_players)
        from cbr.game.spec import load_game

        return load_game(spec if spec is not None else "holdem.limit.2p")
    except ConfigError as exc:
        if game_file:
            raise
        raise usage_error(str(exc), "--game") from None


def check_min_cases(k: Optional[int], min_cases: Optional[int]) -> None:
    """``--min-cases`` above ``--k``, both given: a usage error (exit 2) naming both options and
    their values (fewer than M cases at the threshold take the K most similar: M is at most K),
    in ``cbr query`` and ``cbr casebase similarity`` alike. One of them against the case base's
    own value is each command's check."""
    if min_cases is not None and k is not None and min_cases > k:
        raise usage_error(f"--min-cases {min_cases} is above --k {k}: fewer than --min-cases cases at the "
                          f"threshold take the --k most similar, so give --min-cases {k} or less, or --k "
                          f"{min_cases} or more", "--min-cases", "--k")


def worker_count(workers: Optional[int], default: Callable[[int], int]) -> int:
    """``--workers`` as a command uses it: ``default(cpus)`` when not given, and a number above
    the CPUs this process may use reduced to them, with a ``note:`` line on stderr (``cbr build``,
    ``cbr league`` and ``cbr exploit`` alike: more processes than CPUs only share them)."""
    from cbr.build.local import usable_cpus

    cpus = usable_cpus()
    if workers is None:
        return default(cpus)
    if workers > cpus:
        typer.echo(f"note: --workers {workers} reduced to {cpus} (the CPUs this process may use)", err=True)
        return cpus
    return workers


def alias(new: Any, old: Any, new_name: str, old_name: str) -> Any:
    """The value of an option given under its name or its old (hidden) spelling."""
    if old is None:
        return new
    if new is not None and new != old:
        raise usage_error(f"{old_name} (the old name of {new_name}) and {new_name} disagree "
                          f"({old!r} vs {new!r})", new_name)
    return old


def file_size(value: Optional[str]) -> Optional[int]:
    """``--max-file-size`` (``256M``, ``1G``, bytes) as bytes; a bad size is a usage error (exit 2)."""
    if value is None:
        return None
    from cbr.logs.source import parse_size

    try:
        return parse_size(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def known_log_format(fmt: Optional[str], option: str = "--log-format") -> Optional[str]:
    """``fmt`` if it names a parser plugin (``cbr.parsers``), else a usage error listing them."""
    if fmt is None:
        return None
    _known_plugin("cbr.parsers", fmt, "log format", "formats", option)
    return fmt


def known_feature_set(name: str, option: str = "--feature-set") -> str:
    """``name`` if it names a feature-set plugin (``cbr.features``), else a usage error listing them."""
    _known_plugin("cbr.features", name, "feature set", "feature sets", option)
    return name


def _known_plugin(group: str, name: str, what: str, whats: str, option: str) -> None:
    """A usage error unless ``name`` is a plugin installed in ``group``: it lists the plugins that
    load as the known ones and names those that fail to load apart, as an unknown bot's does
    (an installed one that fails is left to its command, which says why: exit 1)."""
    from cbr.plugins import available, broken_note, usable

    if name not in available(group):
        known, broken = usable(group)
        raise usage_error(f"unknown {what} {name!r}; known {whats}: {', '.join(known)}{broken_note(group, broken)}",
                          option)


def check_output(path: str, *, what: str, overwrite: bool = False, folder: bool = False) -> None:
    """The one output-path rule for every ``-o/--out/--log`` (:func:`cbr.logs.output.check_output_path`),
    checked before a command starts its work: the folder must exist (a case base may go
    straight into ``./casebases``, created if need be), no part of the path may be a file, an
    existing output needs ``--overwrite``, and ``--overwrite`` replaces only a case base with a
    case base. A refusal is one ``error:`` line, exit 1 (an empty path: exit 2)."""
    from pathlib import Path

    from cbr.errors import OutputPathError
    from cbr.logs.output import check_output_path

    if not str(path).strip():
        raise usage_error(f"the {what} path is empty", "-o")
    from cbr.store import shipped_part, shipped_refusal

    part = shipped_part(path)
    if part is not None:  # in an editable install ./casebases is the package's folder
        raise OutputPathError(shipped_refusal(path, part, what))
    home = "casebases" if what == "case base" else None
    if what == "case base" and Path(path).is_dir() and not Path(path).is_symlink():
        from cbr.store.manifest import MANIFEST

        if not (Path(path) / MANIFEST).is_file():
            raise OutputPathError(f"{path} exists and is not a case base (no {MANIFEST}): --overwrite replaces only "
                                  f"a case base; give a new name")
    check_output_path(path, overwrite=overwrite, what=what, folder=folder, home=home)
