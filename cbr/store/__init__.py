"""The case store: case bases as Parquet parts + a DuckDB catalog + a manifest.

Importing the package is cheap: the case base's classes load on first use (PEP 562), so a
module that needs only :mod:`cbr.store.duck` or :mod:`cbr.store.durable` (the model store,
the log writers) does not pay for pyarrow and faiss.

>>> from cbr.store import CaseBase, CaseBaseWriter, inspect, resolve_casebase
"""
from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any, Optional

from cbr.errors import CaseBaseError

__all__ = [
    "CaseArrays", "CaseBase", "CaseBaseWriter", "CaseBaseError", "Manifest", "SCHEMA_VERSION",
    "case_schema", "inspect", "read_manifest", "resolve_casebase", "street_name",
    "PACKAGED_CASEBASES", "DEFAULT_CASEBASE", "detect_casebase", "SharedCaseBase", "open_shared",
    "SHIPPED_DATA", "shipped_part", "source_checkout", "mend_shipped",
]

#: Where each name of the package comes from (loaded on first use).
_LAZY = {
    "CaseArrays": "cbr.store.casebase", "CaseBase": "cbr.store.casebase", "inspect": "cbr.store.summary",
    "SCHEMA_VERSION": "cbr.store.manifest", "Manifest": "cbr.store.manifest", "read_manifest": "cbr.store.manifest",
    "case_schema": "cbr.store.parts", "street_name": "cbr.store.parts", "CaseBaseWriter": "cbr.store.writer",
    "SharedCaseBase": "cbr.store.shared", "open_shared": "cbr.store.shared",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cbr.store' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


#: Case bases shipped with the engine (``casebases/`` beside the packages).
PACKAGED_CASEBASES = Path(__file__).resolve().parents[2] / "casebases"
DEFAULT_CASEBASE = "default"
#: The shipped case bases (read-only: retention and model stores refuse them).
SHIPPED_CASEBASES = ("default", "expert")


def is_shipped(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is one of the case bases shipped with the engine.

    >>> is_shipped(PACKAGED_CASEBASES / "expert"), is_shipped("casebases/mine")
    (True, False)
    """
    p = Path(path).resolve()
    return any(p == (PACKAGED_CASEBASES / n).resolve() for n in SHIPPED_CASEBASES)


def source_checkout() -> Optional[Path]:
    """The source checkout the engine runs from (an editable install, ``pip install -e .``):
    the folder holding the shipped case bases' ``casebases/`` when it is a source tree (its
    ``pyproject.toml`` beside it); None for a normal install, where ``casebases/`` lies in
    site-packages with no ``pyproject.toml`` beside it. (:func:`casebases.output_root` tells
    them apart the same way.)

    >>> source_checkout() in (None, PACKAGED_CASEBASES.parent)
    True
    """
    root = PACKAGED_CASEBASES.parent
    return root if (root / "pyproject.toml").is_file() else None


def mend_shipped(name: str, checkout: Optional[Path]) -> str:
    """What mends the shipped case base ``name`` when it is damaged: in a source checkout
    (``checkout``, :func:`source_checkout`), git restores its files and its recipe rebuilds it
    (reinstalling leaves an editable install's files as they are); else a reinstall.

    >>> mend_shipped("default", None)
    'reinstall the engine if it is damaged'
    >>> mend_shipped("default", Path("/src/cbr"))
    'this is a source checkout: if it is damaged, git -C /src/cbr checkout -- casebases/default restores its files; its recipe, python -m casebases.build_default, rebuilds it'
    """
    if checkout is None:
        return "reinstall the engine if it is damaged"
    return (f"this is a source checkout: if it is damaged, git -C {checkout} checkout -- casebases/{name} restores "
            f"its files; its recipe, python -m casebases.build_{name}, rebuilds it")


#: What ships in ``casebases/`` beside the case bases: strategies and abstractions, the
#: self-play logs the default was built from, the style cases (never a command's output).
SHIPPED_DATA = (*SHIPPED_CASEBASES, "cfr", "selfplay", "styles")


def shipped_part(path: str | os.PathLike[str]) -> Optional[str]:
    """The shipped folder (``default``, ``expert``, ``cfr``, ...) or recipe that ``path`` is or
    lies in, else None: a command's output never goes there, not even in an editable install,
    where ``./casebases`` is the package's own folder.

    >>> shipped_part(PACKAGED_CASEBASES / "default"), shipped_part(PACKAGED_CASEBASES / "cfr" / "mine")
    ('default', 'cfr')
    >>> shipped_part(PACKAGED_CASEBASES / "acpc-limit") is None
    True
    """
    p = Path(path).resolve()
    root = PACKAGED_CASEBASES.resolve()
    for name in SHIPPED_DATA:
        d = root / name
        if p == d or d in p.parents:
            return name
    if p.parent == root and p.suffix == ".py":
        return p.name
    return None


def shipped_refusal(path: str | os.PathLike[str], part: str, what: str, *, instead: str = "path") -> str:
    """The one refusal of an output (``what``: "case base", "log", ...) at ``path``, which is or
    lies in the shipped folder ``part`` (:func:`shipped_part`); ``instead``: what to give instead.

    >>> shipped_refusal("casebases/styles", "styles", "case base", instead="name")
    "casebases/styles is the shipped folder 'styles', which is never written to (its recipe under casebases/ rebuilds it); give another case base name"
    """
    inside = "in " if Path(path).resolve().name != part else ""
    kind = "case base" if part in SHIPPED_CASEBASES else "folder"
    return (f"{os.fspath(path)} is {inside}the shipped {kind} {part!r}, which is never written to "
            f"(its recipe under casebases/ rebuilds it); give another {what} {instead}")


def resolve_casebase(name: str | os.PathLike[str], *, search: tuple[Path, ...] | None = None) -> Path:
    """Where a case base is: a path, a name under ``./casebases/``, or a packaged one
    (``"default"`` = the embedded default). The names of the shipped case bases (``default``,
    ``expert``) always mean the shipped ones: a folder of that name in the working folder or
    under ``./casebases/`` is reached by its path (``./expert``). Raises
    :class:`CaseBaseError` listing names.

    >>> resolve_casebase("default").name
    'default'
    >>> resolve_casebase("no-such-casebase")
    Traceback (most recent call last):
    cbr.errors.CaseBaseError: no case base 'no-such-casebase': ...
    """
    p = Path(name)
    if search is None and str(name) in SHIPPED_CASEBASES and (PACKAGED_CASEBASES / str(name)).is_dir():
        return PACKAGED_CASEBASES / str(name)
    if p.is_dir():
        return p
    dirs = search if search is not None else (Path.cwd() / "casebases", PACKAGED_CASEBASES)
    dirs = tuple(dict.fromkeys(d.resolve() for d in dirs))
    for d in dirs:
        if (d / str(name)).is_dir():
            return d / str(name)
    known = sorted({c.name for d in dirs if d.is_dir() for c in d.iterdir()
                    if c.is_dir() and (c / "manifest.json").is_file()})
    raise CaseBaseError(f"no case base {str(name)!r}: not a directory, and not found in "
                        f"{', '.join(str(d) for d in dirs)} (known: {', '.join(known) or 'none'})")


def detect_casebase(sources: list[str]) -> Path | None:
    """The case base that ``sources`` name, or None when they name logs: one argument that is
    a case-base directory (it has a manifest), or a name that is no path but a case base
    under ./casebases/ or a shipped one.

    >>> detect_casebase(["default"]).name, detect_casebase(["some/logs", "more/logs"])
    ('default', None)
    """
    if len(sources) != 1:
        return None
    p = Path(sources[0])
    if p.is_dir():
        return p if (p / "manifest.json").is_file() else None
    if p.exists():
        return None
    try:
        return resolve_casebase(sources[0])
    except CaseBaseError:
        return None
