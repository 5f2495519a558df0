"""The case store: case bases as Parquet parts + a DuckDB catalog + a manifest.

>>> from cbr.store import CaseBase, CaseBaseWriter, inspect, resolve_casebase
"""
from __future__ import annotations

import os
from pathlib import Path

from cbr.errors import CaseBaseError
from cbr.store.casebase import CaseArrays, CaseBase
from cbr.store.inspect import inspect
from cbr.store.manifest import SCHEMA_VERSION, Manifest, read_manifest
from cbr.store.parts import case_schema, street_name
from cbr.store.writer import CaseBaseWriter

__all__ = [
    "CaseArrays", "CaseBase", "CaseBaseWriter", "CaseBaseError", "Manifest", "SCHEMA_VERSION",
    "case_schema", "inspect", "read_manifest", "resolve_casebase", "street_name",
    "PACKAGED_CASEBASES", "DEFAULT_CASEBASE",
]

#: Case bases shipped with the engine (``casebases/`` beside the packages).
PACKAGED_CASEBASES = Path(__file__).resolve().parents[2] / "casebases"
DEFAULT_CASEBASE = "default"


def resolve_casebase(name: str | os.PathLike[str], *, search: tuple[Path, ...] | None = None) -> Path:
    """Where a case base is: a path, a name under ``./casebases/``, or a packaged one
    (``"default"`` = the embedded default). Raises :class:`CaseBaseError` listing names.

    >>> resolve_casebase("default").name
    'default'
    >>> resolve_casebase("no-such-casebase")
    Traceback (most recent call last):
    cbr.errors.CaseBaseError: no case base 'no-such-casebase': ...
    """
    p = Path(name)
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
