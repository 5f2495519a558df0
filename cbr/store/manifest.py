"""The case-base manifest: ``manifest.json``, the one source of truth of a case base.

It names the schema version, the feature set and its columns per street, the similarity
configuration file, the game definitions, the log sources (with SHA-256), the Parquet
parts that hold the cases, and the counts per street and action. Replacing the manifest
(atomically) is the commit point of every write: a Parquet part that the manifest does
not list does not exist for readers.

>>> m = Manifest.new("demo", feature_set="casper",
...     features={s: ["x"] for s in STREETS})
>>> Manifest.from_dict(m.to_dict()).counts["flop"]
{'total': 0, 'f': 0, 'c': 0, 'r': 0}
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS
from cbr.store.durable import atomic_write_bytes

__all__ = ["SCHEMA_VERSION", "MANIFEST", "ACTIONS", "Manifest", "read_manifest", "write_manifest", "engine_version"]

SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
ACTIONS = ("f", "c", "r")


def engine_version() -> str:
    """Version of the installed engine (``0+unknown`` when run from a bare checkout)."""
    try:
        return version("cbr-holdem")
    except PackageNotFoundError:  # pragma: no cover
        return "0+unknown"


def now_utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _empty_counts() -> dict[str, dict[str, int]]:
    return {s: {"total": 0, **{a: 0 for a in ACTIONS}} for s in STREETS}


@dataclass
class Manifest:
    """Contents of ``manifest.json`` (see the module docstring)."""

    name: str
    feature_set: str
    features: dict[str, list[str]]
    schema_version: int = SCHEMA_VERSION
    engine_version: str = field(default_factory=engine_version)
    created: str = field(default_factory=now_utc)
    updated: str = ""
    similarity: str | None = "similarity.toml"
    games: list[dict[str, Any]] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(default_factory=_empty_counts)
    parts: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {s: [] for s in STREETS})
    next_case_id: int = 0
    index: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def new(cls, name: str, *, feature_set: str, features: dict[str, list[str]], **kw: Any) -> "Manifest":
        missing = [s for s in STREETS if s not in features]
        if missing:
            raise CaseBaseError(f"feature set {feature_set!r} gives no columns for {', '.join(missing)}")
        return cls(name=name, feature_set=feature_set, features={s: list(features[s]) for s in STREETS}, **kw)

    @property
    def total_cases(self) -> int:
        return sum(self.counts[s]["total"] for s in STREETS)

    def part_rows(self, street: str) -> int:
        return sum(int(p["rows"]) for p in self.parts[street])

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "name": self.name,
            "engine_version": self.engine_version,
            "created": self.created,
            "updated": self.updated or self.created,
            "feature_set": {"name": self.feature_set, "features": self.features},
            "similarity": self.similarity,
            "games": self.games,
            "sources": self.sources,
            "counts": self.counts,
            "parts": self.parts,
            "next_case_id": self.next_case_id,
            "index": self.index,
            "extra": self.extra,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, where: str = "manifest") -> "Manifest":
        """Read a manifest dict; raises :class:`CaseBaseError` on another schema or bad fields."""
        if not isinstance(data, dict):
            raise CaseBaseError(f"{where}: not a JSON object")
        got = data.get("schema_version")
        if got != SCHEMA_VERSION:
            if isinstance(got, int) and got > SCHEMA_VERSION:
                hint = "it was written by a newer engine; upgrade cbr-holdem to read it"
            elif isinstance(got, int):
                hint = "it was written by an older engine; rebuild it with `cbr build`"
            else:
                hint = "the field is missing or not an integer; is this a case base?"
            raise CaseBaseError(
                f"{where}: case base schema version {got!r}, this engine reads version {SCHEMA_VERSION}: {hint}"
            )
        try:
            fs = data["feature_set"]
            m = cls(
                name=str(data["name"]),
                feature_set=str(fs["name"]),
                features={s: list(fs["features"][s]) for s in STREETS},
                schema_version=int(got),
                engine_version=str(data.get("engine_version", "")),
                created=str(data.get("created", "")),
                updated=str(data.get("updated", "")),
                similarity=data.get("similarity"),
                games=list(data.get("games", [])),
                sources=list(data.get("sources", [])),
                counts={s: {k: int(v) for k, v in data["counts"][s].items()} for s in STREETS},
                parts={s: list(data["parts"][s]) for s in STREETS},
                next_case_id=int(data["next_case_id"]),
                index=dict(data.get("index", {})),
                extra=dict(data.get("extra", {})),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise CaseBaseError(f"{where}: missing or bad field ({type(exc).__name__}: {exc})") from None
        return m


def read_manifest(directory: str | Path) -> Manifest:
    """Load and validate ``<directory>/manifest.json``; raises :class:`CaseBaseError`."""
    d = Path(directory)
    path = d / MANIFEST
    if not d.is_dir():
        raise CaseBaseError(f"no case base at {d}: the directory does not exist")
    if not path.is_file():
        raise CaseBaseError(f"{d} is not a case base: {MANIFEST} is missing")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CaseBaseError(f"{path}: cannot read the manifest ({exc})") from None
    return Manifest.from_dict(data, where=str(path))


def write_manifest(directory: str | Path, manifest: Manifest) -> None:
    """Replace ``manifest.json`` atomically (temp file + fsync + rename)."""
    manifest.updated = now_utc()
    payload = json.dumps(manifest.to_dict(), indent=2, sort_keys=False).encode("utf-8") + b"\n"
    atomic_write_bytes(Path(directory) / MANIFEST, payload)
