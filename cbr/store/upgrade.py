"""Upgrade a schema-1 case base in place to schema 2 (checksums everywhere).

Schema 2 lists the size and CRC-32 of every file the engine reads and writes Parquet
parts with page CRCs. This rewrites each part with page CRCs (same rows, same values),
records the checksums of the parts, the similarity file and the index files, rewrites the
catalog over the listed parts and commits a schema-2 manifest, under the write lock::

    python -m cbr.store.upgrade casebases/mine

A case base of schema 2 is left as it is.
"""
from __future__ import annotations

import fcntl
import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS
from cbr.store import catalog as _catalog
from cbr.store.manifest import MANIFEST, SCHEMA_VERSION, Manifest, file_checksum, write_manifest
from cbr.store.parts import case_schema, write_part

__all__ = ["upgrade"]


def upgrade(path: str | Path) -> bool:
    """Upgrade the case base at ``path`` to the current schema; False if it already is.
    Raises :class:`CaseBaseError` for anything that is not a readable schema-1 case base."""
    root = Path(path)
    try:
        data = json.loads((root / MANIFEST).read_bytes().decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise CaseBaseError(f"{root}: cannot read {MANIFEST} ({exc})") from None
    if not isinstance(data, dict):
        raise CaseBaseError(f"{root}/{MANIFEST}: not a JSON object")
    if data.get("schema_version") == SCHEMA_VERSION and type(data.get("schema_version")) is int:
        return False
    if data.get("schema_version") != 1 or type(data.get("schema_version")) is not int:
        raise CaseBaseError(f"{root}: schema version {data.get('schema_version')!r}; only version 1 can be upgraded")
    with open(root / ".write.lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            features = data["feature_set"]["features"]
            for s in STREETS:
                for part in data["parts"][s]:
                    table = pq.read_table(root / part["file"]).cast(case_schema(features[s]))
                    if table.num_rows != part["rows"]:
                        raise CaseBaseError(f"{root}: {part['file']} holds {table.num_rows} rows, "
                                            f"the manifest says {part['rows']}")
                    part.update(write_part(root / part["file"], table))
            sim = data.get("similarity")
            data["checksums"] = {sim: file_checksum(root / sim)} if sim else {}
            for s, entry in data.get("index", {}).items():
                d = root / entry["file"]
                entry["files"] = {f.name: file_checksum(f) for f in sorted(d.iterdir()) if f.is_file()}
            data["schema_version"] = SCHEMA_VERSION
            data.setdefault("retired", [])
            m = Manifest.from_dict(data, where=str(root / MANIFEST))
            _catalog.write_catalog(root, m)
            m.catalog = file_checksum(root / _catalog.CATALOG)
            write_manifest(root, m)
        except (KeyError, TypeError, OSError) as exc:
            raise CaseBaseError(f"{root}: cannot upgrade ({type(exc).__name__}: {exc})") from None
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    return True


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
        print(f"{a}: {'upgraded to' if done else 'already at'} schema version {SCHEMA_VERSION}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
