"""The on-disk format of a case index: ``meta.json`` (format, version, backend, settings,
the street's similarity) beside ``cases.npy`` and the backend's own files, each written
atomically (temp file, fsync, rename) with ``meta.json`` last.

>>> from cbr.similarity import default_casper
>>> st = default_casper().street("turn")
>>> street_from_json(street_to_json(st)) == st
True
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from cbr.errors import CaseBaseError
from cbr.similarity import FeatureSimilarity, StreetSimilarity

__all__ = ["INDEX_FORMAT", "INDEX_VERSION", "write_atomic", "street_to_json", "street_from_json", "read_meta"]

INDEX_FORMAT = "cbr-case-index"
INDEX_VERSION = 1


def write_atomic(path: Path, write: Any) -> None:
    """Call ``write(tmp)`` on a temp file beside ``path``, fsync it, rename it onto ``path``."""
    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def street_to_json(st: StreetSimilarity) -> dict[str, Any]:
    """The street's similarity as plain data for ``meta.json``."""
    return {"street": st.street, "features": st.to_dicts()}


def street_from_json(data: dict[str, Any]) -> StreetSimilarity:
    """The inverse of :func:`street_to_json`."""
    return StreetSimilarity(data["street"], tuple(FeatureSimilarity.from_dict(row, where=f"street {data['street']!r}")
                                                  for row in data["features"]))


def read_meta(root: Path) -> dict[str, Any]:
    """``meta.json`` of the index at ``root``; :class:`CaseBaseError` if missing, unreadable or
    of another format or version."""
    meta_path = root / "meta.json"
    if not meta_path.exists():
        raise CaseBaseError(f"no case index at {root} (meta.json is missing: never saved, or the save "
                            f"did not finish)")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CaseBaseError(f"index {root}: unreadable meta.json ({exc})") from None
    if meta.get("format") != INDEX_FORMAT:
        raise CaseBaseError(f"index {root}: not a case index (format {meta.get('format')!r})")
    if meta.get("version") != INDEX_VERSION:
        raise CaseBaseError(f"index {root}: index version {meta.get('version')!r}, this program reads "
                            f"version {INDEX_VERSION}; rebuild the index")
    return meta
