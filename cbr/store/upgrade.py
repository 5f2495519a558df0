"""Upgrade an older case base in place to the current schema (4).

- 1 -> 2 added checksums everywhere: the size and CRC-32 of every file the engine reads,
  and Parquet parts with page CRCs.
- 2 -> 3 added the ``outcome`` column (the hand's result for the player who acted, in
  small bets). An upgrade cannot recover outcomes (they need the logs), so the upgraded
  cases carry an all-NULL ``outcome`` (unknown); rebuild from the logs (``cbr build``) to
  fill it.
- 3 -> 4 added retention during play: the provenance columns of retained cases
  (``match_id``, ``seat``, ``opponents``, ``retained_at``; NULL for cases from logs) and
  the retention log.

This rewrites each part with the current columns and page CRCs (same rows, same values),
records the checksums of the parts, the similarity file and the index files, rewrites the
catalog over the listed parts and commits a current manifest, under the write lock::

    python -m cbr.store.upgrade casebases/mine

A case base already at the current schema is left as it is, except that the clean-up of
an upgrade killed after its commit is finished (retired parts deleted when no reader is open).
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS
from cbr.store import catalog as _catalog
from cbr.store.durable import remove_dead_temp
from cbr.store.manifest import (
    MANIFEST,
    SCHEMA_VERSION,
    Manifest,
    differs_from_manifest,
    file_checksum,
    now_utc,
    verify_file,
    write_manifest,
)
from cbr.store.parts import PART_RE, case_schema, part_entry, part_file, write_part

__all__ = ["upgrade", "UPGRADABLE"]

#: Schema versions this module upgrades from.
UPGRADABLE = (1, 2, 3)


def _drop_retired(root: Path, m: Manifest) -> None:
    """Delete the retired parts at once when no reader has the case base open (the
    readers' shared lock, see :mod:`cbr.store.casebase`); else a later writer does."""
    try:
        fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return
    try:
        for r in m.retired:
            target = root / r["file"]
            if target.is_dir():
                shutil.rmtree(target, ignore_errors=True)
            else:
                target.unlink(missing_ok=True)
        m.retired = []
        write_manifest(root, m)
    finally:
        os.close(fd)  # closing releases the lock


def _remove_leftovers(root: Path, data: dict) -> None:
    """Delete what a killed upgrade (or writer) left: parts neither listed nor retired,
    temp files of dead processes. Called with the write lock held."""
    keep = {p["file"] for s in STREETS for p in data["parts"][s]} | {r["file"] for r in data.get("retired", [])}
    for d in (root, *(root / "cases" / s for s in STREETS)):
        remove_dead_temp(d)
    for s in STREETS:
        d = root / "cases" / s
        if d.is_dir():
            for f in d.iterdir():
                if PART_RE.match(f.name) and f"cases/{s}/{f.name}" not in keep:
                    f.unlink(missing_ok=True)


def _next_free_number(root: Path, street: str, parts: list[dict]) -> int:
    """A part number above every part listed or present on disk for ``street``."""
    names = [Path(p["file"]).name for p in parts]
    d = root / "cases" / street
    if d.is_dir():
        names += [f.name for f in d.iterdir()]
    numbers = [int(m.group(1)) for m in map(PART_RE.match, names) if m]
    return max(numbers, default=-1) + 1


def _current_columns(table: pa.Table, features: list[str]) -> pa.Table:
    """A part's table with the current schema's columns: a column an older part lacks
    (``outcome``, the retention provenance) is added as all NULL (unknown)."""
    schema = case_schema(features)
    for f in schema:
        if f.name not in table.column_names:
            table = table.append_column(f, pa.nulls(table.num_rows, f.type))
    return table.select(schema.names).cast(schema)


def upgrade(path: str | Path) -> int:
    """Upgrade the case base at ``path`` to the current schema; returns the version it had
    (0 if it already is current).
    Raises :class:`CaseBaseError` for anything that is not a readable case base of an
    upgradable version (:data:`UPGRADABLE`)."""
    root = Path(path)
    try:
        data = json.loads((root / MANIFEST).read_bytes().decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise CaseBaseError(f"{root}: cannot read {MANIFEST} ({exc})") from None
    if not isinstance(data, dict):
        raise CaseBaseError(f"{root}/{MANIFEST}: not a JSON object")
    if data.get("schema_version") == SCHEMA_VERSION and type(data.get("schema_version")) is int:
        if data.get("retired"):  # an upgrade killed after its commit: finish its clean-up
            with open(root / ".write.lock", "a+") as lock:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
                try:
                    m = Manifest.from_dict(json.loads((root / MANIFEST).read_bytes().decode("utf-8")),
                                           where=str(root / MANIFEST))
                    _remove_leftovers(root, m.to_dict())
                    _drop_retired(root, m)
                finally:
                    fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
        return 0
    old = data.get("schema_version")
    if type(old) is not int or old not in UPGRADABLE:
        raise CaseBaseError(f"{root}: schema version {old!r}; only versions "
                            f"{', '.join(map(str, UPGRADABLE))} can be upgraded to {SCHEMA_VERSION}")
    written: list[Path] = []  # new parts, removed again if the upgrade fails
    with open(root / ".write.lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            features = data["feature_set"]["features"]
            retired = data.setdefault("retired", [])
            _remove_leftovers(root, data)
            for s in STREETS:
                number = _next_free_number(root, s, data["parts"][s])
                for part in data["parts"][s]:
                    if old >= 2:  # checksums listed: never carry a damaged part over
                        verify_file(root / part["file"], part, str(root))
                    table = _current_columns(
                        pq.ParquetFile(root / part["file"], page_checksum_verification=old >= 2).read(), features[s])
                    if table.num_rows != part["rows"]:
                        raise CaseBaseError(f"{root}: {part['file']} holds "
                                            f"{differs_from_manifest(table.num_rows, part['rows'], 'rows')}")
                    # a new file, committed by the manifest; the old one is retired (readers
                    # open on the old manifest keep it; a crash before the commit changes nothing)
                    rel = part_file(s, number)
                    number += 1
                    retired.append({"file": part["file"], "since": now_utc()})
                    written.append(root / rel)
                    part.update(part_entry(rel, table.num_rows, write_part(root / rel, table)))
            sim = data.get("similarity")
            if old < 2:
                data["checksums"] = {sim: file_checksum(root / sim)} if sim else {}
                for s, entry in data.get("index", {}).items():
                    d = root / entry["file"]
                    entry["files"] = {f.name: file_checksum(f) for f in sorted(d.iterdir()) if f.is_file()}
            data["schema_version"] = SCHEMA_VERSION
            data.setdefault("log", None)
            m = Manifest.from_dict(data, where=str(root / MANIFEST))
            _catalog.write_catalog(root, m)
            m.catalog = file_checksum(root / _catalog.CATALOG)
            write_manifest(root, m)
            written = []  # committed
            _drop_retired(root, m)
        except (KeyError, TypeError, OSError, ValueError, pa.ArrowException) as exc:
            raise CaseBaseError(f"{root}: cannot upgrade ({type(exc).__name__}: {exc})") from None
        finally:
            for f in written:  # not committed: the case base is as it was
                f.unlink(missing_ok=True)
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    return old


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - a thin command
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m cbr.store.upgrade CASEBASE...", file=sys.stderr)
        return 2
    for a in args:
        try:
            done = upgrade(a)
        except CaseBaseError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"{a}: {'upgraded to' if done else 'already at'} schema version {SCHEMA_VERSION}"
              + (" (outcomes unknown: rebuild from the logs with `cbr build` to fill them)" if 0 < done < 3 else ""))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
