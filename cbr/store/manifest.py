"""The case-base manifest: ``manifest.json``, the one source of truth of a case base.

It names the schema version, the feature set and its columns per street, the similarity
configuration file, the game definitions, the log sources (with SHA-256), the Parquet
parts that hold the cases, and the counts per street and action. Replacing the manifest
(atomically) is the commit point of every write: a Parquet part that the manifest does
not list does not exist for readers.

Schema version 2 adds integrity: every file the engine reads is listed with its size and
CRC-32 (parts, the similarity file, each index file), checked when the file is first read;
Parquet parts also carry page CRCs. Schema version 3 adds the ``outcome`` column to the
cases (the hand's result for the player who acted, in small bets; NULL when unknown).
Schema version 4 adds retention during play: the provenance columns of retained cases
(``match_id``, ``seat``, ``opponents``, ``retained_at``) and ``log``, the append-only
retention log (:mod:`cbr.store.retention_log`) whose cases follow the listed parts.
A copy made for retention (``--retain-into``) names the case base it was copied from in
``origin``: its name, path and :func:`content_id` (what makes it that case base wherever it
is installed). Parts replaced by a compaction are kept as ``retired`` until no reader can
still need them (see :mod:`cbr.store.casebase`). Every field is checked on reading; a bad one
gives one :class:`CaseBaseError` line.

>>> m = Manifest.new("demo", feature_set="casper", similarity=None,
...     features={s: ["x"] for s in STREETS})
>>> Manifest.from_dict(m.to_dict()).counts["flop"]
{'total': 0, 'f': 0, 'c': 0, 'r': 0}
"""
from __future__ import annotations

import json
import re
import shlex
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cbr.errors import CaseBaseError, counted
from cbr.game.gamedef import STREETS
from cbr.store.durable import atomic_write_bytes

__all__ = ["SCHEMA_VERSION", "MANIFEST", "ACTIONS", "PART_PATH_RE", "INDEX_PATH_RE", "LOG_PATH_RE", "Manifest", "read_manifest",
           "write_manifest", "engine_version", "file_checksum", "verify_file", "content_id", "origin_of", "is_copy_of"]

SCHEMA_VERSION = 4
MANIFEST = "manifest.json"
ACTIONS = ("f", "c", "r")
#: A Parquet part's path inside the case base, and an index directory's (with its generation).
PART_PATH_RE = re.compile(r"^cases/(preflop|flop|turn|river)/part-(\d{5,})\.parquet$")
INDEX_PATH_RE = re.compile(r"^index/(preflop|flop|turn|river)(?:\.(\d+))?$")
#: A retention log's path (one generation per compaction into parts).
LOG_PATH_RE = re.compile(r"^retained/log-(\d{5,})\.bin$")
_PLAIN_FILE_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def engine_version() -> str:
    """Version of the installed engine (``0+unknown`` when run from a bare checkout)."""
    from importlib.metadata import PackageNotFoundError, version  # ~20 ms: only when writing

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
    retired: list[dict[str, Any]] = field(default_factory=list)
    checksums: dict[str, dict[str, int]] = field(default_factory=dict)
    catalog: dict[str, int] | None = None  # checksum of catalog.duckdb when it lists these parts
    log: str | None = None  # the retention log whose cases follow the parts (ids from next_case_id)
    extra: dict[str, Any] = field(default_factory=dict)
    #: The case base this one was copied from (``--retain-into``): its ``name`` and ``path``, the
    #: ``cases`` and ``bytes`` copied, when (``copied``), and its cases' :func:`content_id`
    #: (``content``); None for a case base built from logs.
    origin: dict[str, Any] | None = None

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
            "retired": self.retired,
            "checksums": self.checksums,
            "catalog": self.catalog,
            "log": self.log,
            "extra": self.extra,
            **({"origin": self.origin} if self.origin is not None else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, where: str = "manifest") -> "Manifest":
        """Read a manifest dict; raises :class:`CaseBaseError` (one line) on another schema
        version or on any field of the wrong shape (see :func:`_check_fields`)."""
        if not isinstance(data, dict):
            raise CaseBaseError(f"{where}: not a JSON object")
        got = data.get("schema_version")
        if type(got) is not int or got != SCHEMA_VERSION:  # 1.0 and true are not the integer 1
            if type(got) is int and got > SCHEMA_VERSION:
                hint = "it was written by a newer engine; upgrade cbr-holdem to read it"
            elif type(got) is int:
                target = shlex.quote(str(Path(where).parent)) if where.endswith(MANIFEST) else "PATH"
                hint = ("it was written by an older engine; upgrade it in place with `python -m cbr.store.upgrade "
                        f"{target}`" + (" (its cases get an empty outcome column: outcomes cannot be recovered "
                                        "without the logs), or rebuild it from its logs with `cbr build` to fill "
                                        "the outcomes" if got < 3 else ""))
            else:
                hint = "the field is missing or not an integer; is this a case base?"
            raise CaseBaseError(
                f"{where}: case base schema version {got!r}, this engine reads version {SCHEMA_VERSION}: {hint}"
            )
        try:
            _check_fields(data)
        except ValueError as exc:
            raise CaseBaseError(f"{where}: {exc}") from None
        try:
            fs = data["feature_set"]
            m = cls(
                name=str(data["name"]),
                feature_set=str(fs["name"]),
                features={s: list(fs["features"][s]) for s in STREETS},
                schema_version=got,
                engine_version=str(data.get("engine_version", "")),
                created=str(data.get("created", "")),
                updated=str(data.get("updated", "")),
                similarity=data.get("similarity"),
                games=list(data.get("games", [])),
                sources=list(data.get("sources", [])),
                counts={s: {k: int(v) for k, v in data["counts"][s].items()} for s in STREETS},
                parts={s: [dict(p) for p in data["parts"][s]] for s in STREETS},
                next_case_id=int(data["next_case_id"]),
                index={s: dict(e) for s, e in data.get("index", {}).items()},
                retired=list(data.get("retired", [])),
                checksums={k: dict(v) for k, v in data.get("checksums", {}).items()},
                catalog=dict(data["catalog"]) if data.get("catalog") is not None else None,
                log=data.get("log"),
                extra=dict(data.get("extra", {})),
                origin=dict(data["origin"]) if data.get("origin") is not None else None,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise CaseBaseError(f"{where}: missing or bad field ({type(exc).__name__}: {exc})") from None
        return m


def _is_count(v: Any) -> bool:
    return type(v) is int and v >= 0


def _check_checksum(entry: Any, what: str) -> None:
    if not isinstance(entry, dict) or not _is_count(entry.get("bytes")) or not _is_count(entry.get("crc32")):
        raise ValueError(f"{what}: needs integer 'bytes' and 'crc32'")


def _check_fields(data: dict[str, Any]) -> None:
    """Raise ``ValueError`` naming the first field of the wrong shape: parts with a file of
    the street's own folder, integer rows and a checksum, listed once; counts that add up;
    ``next_case_id`` at least the number of cases; plain relative file names."""
    if not isinstance(data.get("name"), str):
        raise ValueError("'name' must be a string")
    fs = data.get("feature_set")
    if not isinstance(fs, dict) or not isinstance(fs.get("name"), str) or not isinstance(fs.get("features"), dict):
        raise ValueError("'feature_set' must be an object with 'name' and 'features'")
    for s in STREETS:
        names = fs["features"].get(s)
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise ValueError(f"feature_set.features.{s} must be a non-empty list of names")
    sim = data.get("similarity")
    if sim is not None and (not isinstance(sim, str) or not _PLAIN_FILE_RE.match(sim)):
        raise ValueError(f"'similarity' must be a file name inside the case base, got {sim!r}")
    for key in ("games", "sources", "retired"):
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
            raise ValueError(f"{key!r} must be a list of objects")
    for key in ("index", "extra"):
        if not isinstance(data.get(key, {}), dict):
            raise ValueError(f"{key!r} must be an object")
    counts, parts = data.get("counts"), data.get("parts")
    if not isinstance(counts, dict) or not isinstance(parts, dict):
        raise ValueError("'counts' and 'parts' must be objects with one entry per street")
    seen: set[str] = set()
    total = 0
    for s in STREETS:
        c = counts.get(s)
        if not isinstance(c, dict) or set(c) != {"total", *ACTIONS} or not all(_is_count(v) for v in c.values()):
            raise ValueError(f"counts.{s} must hold integer 'total', 'f', 'c', 'r'")
        if sum(c[a] for a in ACTIONS) != c["total"]:
            raise ValueError(f"counts.{s}: the actions add up to {sum(c[a] for a in ACTIONS):,}, not {c['total']:,}")
        plist = parts.get(s)
        if not isinstance(plist, list):
            raise ValueError(f"parts.{s} must be a list")
        rows = 0
        for p in plist:
            if not isinstance(p, dict) or not isinstance(p.get("file"), str):
                raise ValueError(f"parts.{s}: each part must be an object with a 'file'")
            m = PART_PATH_RE.match(p["file"])
            if not m or m.group(1) != s:
                raise ValueError(f"parts.{s}: {p['file']!r} is not a part of cases/{s}/")
            if p["file"] in seen:
                raise ValueError(f"parts.{s}: {p['file']} is listed twice")
            seen.add(p["file"])
            if not _is_count(p.get("rows")):
                raise ValueError(f"parts.{s}: {p['file']} has no integer 'rows'")
            _check_checksum(p, f"parts.{s}: {p['file']}")
            rows += p["rows"]
        if rows != c["total"]:
            raise ValueError(f"{s}: counts say {counted(c['total'], 'case')}, the parts hold {rows:,}")
        total += rows
    nid = data.get("next_case_id")
    if not _is_count(nid) or nid < total:
        raise ValueError(f"next_case_id {nid!r} is below the {counted(total, 'case id')} in use")  # an id: plain
    for s, e in data.get("index", {}).items():
        if s not in STREETS or not isinstance(e, dict) or not isinstance(e.get("file"), str):
            raise ValueError(f"index.{s}: must be a street with an object naming its 'file'")
        m = INDEX_PATH_RE.match(e["file"])
        if not m or m.group(1) != s or not _is_count(e.get("cases")) or not isinstance(e.get("files"), dict):
            raise ValueError(f"index.{s}: needs a file index/{s}[.N], integer 'cases' and 'files'")
        for name, entry in e["files"].items():
            if not _PLAIN_FILE_RE.match(name):
                raise ValueError(f"index.{s}: bad file name {name!r}")
            _check_checksum(entry, f"index.{s}: {name}")
    for r in data.get("retired", []):
        f = r.get("file")
        if not isinstance(f, str) or not (PART_PATH_RE.match(f) or INDEX_PATH_RE.match(f) or LOG_PATH_RE.match(f)):
            raise ValueError(f"retired: {f!r} is not a part, an index directory or a retention log")
    log = data.get("log")
    if log is not None and (not isinstance(log, str) or not LOG_PATH_RE.match(log)):
        raise ValueError(f"'log' must be a retention log retained/log-NNNNN.bin, got {log!r}")
    checks = data.get("checksums", {})
    if not isinstance(checks, dict):
        raise ValueError("'checksums' must be an object")
    for name, entry in checks.items():
        if not _PLAIN_FILE_RE.match(name):
            raise ValueError(f"checksums: bad file name {name!r}")
        _check_checksum(entry, f"checksums: {name}")
    if data.get("catalog") is not None:
        _check_checksum(data["catalog"], "catalog")
    origin = data.get("origin")
    if origin is not None and (not isinstance(origin, dict) or not isinstance(origin.get("name"), str)
                               or not isinstance(origin.get("path"), str)):
        raise ValueError("'origin' must be an object with the 'name' and 'path' of the case base copied")
    if origin is not None and not isinstance(origin.get("content", ""), str):
        raise ValueError("'origin': 'content' must be the text of a content id")
    if sim is not None and sim not in checks:
        raise ValueError(f"checksums: no checksum for {sim}")


def file_checksum(path: str | Path) -> dict[str, int]:
    """``{"bytes": size, "crc32": CRC-32}`` of a file (CRC-32 finds every burst error up to
    32 bits and any odd number of flipped bits; it reads at memory speed).

    >>> import tempfile, os
    >>> fd, name = tempfile.mkstemp(); os.write(fd, b"abc"); os.close(fd)
    3
    >>> file_checksum(name)
    {'bytes': 3, 'crc32': 891568578}
    """
    crc = 0
    size = 0
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            crc = zlib.crc32(block, crc)
            size += len(block)
    return {"bytes": size, "crc32": crc}


def differs_from_manifest(got: Any, listed: Any, unit: str) -> str:
    """How a file differs from its manifest entry, in the one wording of every reader of a case
    base and of ``cbr casebase verify`` (counts with thousands separators; a manifest's missing or
    odd entry as it is).

    >>> differs_from_manifest(5000, 59483, "bytes")
    '5,000 bytes, the manifest says 59,483'
    >>> differs_from_manifest(12, None, "cases")
    '12 cases, the manifest says None'
    >>> differs_from_manifest(1, 2, "rows")
    '1 row, the manifest says 2'
    """
    def shown(value: Any) -> str:
        return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)

    if isinstance(got, int) and not isinstance(got, bool):  # ``unit`` a plural in -s: bytes, cases, rows
        return f"{counted(got, unit[:-1], unit)}, the manifest says {shown(listed)}"
    return f"{shown(got)} {unit}, the manifest says {shown(listed)}"


def verify_file(path: Path, expected: dict[str, Any], what: str) -> None:
    """Raise :class:`CaseBaseError` unless ``path`` has the size and CRC-32 the manifest lists;
    the error names the file as the manifest does (``cases/flop/part-00000.parquet``: every
    street has a ``part-00000``), else by its name."""
    name = expected.get("file") or path.name
    try:
        got = file_checksum(path)
    except OSError as exc:
        raise CaseBaseError(f"{what}: cannot read {name} ({exc.strerror or exc})") from None
    if got["bytes"] != expected.get("bytes") or got["crc32"] != expected.get("crc32"):
        raise CaseBaseError(f"{what}: {name} is damaged (size or checksum differs from the manifest)")


def read_manifest(directory: str | Path) -> Manifest:
    """Load and validate ``<directory>/manifest.json``; raises :class:`CaseBaseError`."""
    d = Path(directory)
    path = d / MANIFEST
    if not d.is_dir():
        raise CaseBaseError(f"no case base at {d}: the directory does not exist")
    if not path.is_file():
        raise CaseBaseError(f"{d} is not a case base: {MANIFEST} is missing")
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise CaseBaseError(f"{path}: cannot read the manifest (not UTF-8 text)") from None
    except RecursionError:
        raise CaseBaseError(f"{path}: cannot read the manifest (nested too deeply)") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise CaseBaseError(f"{path}: cannot read the manifest ({str(exc).splitlines()[0]})") from None
    return Manifest.from_dict(data, where=str(path))


def write_manifest(directory: str | Path, manifest: Manifest) -> None:
    """Replace ``manifest.json`` atomically (temp file + fsync + rename)."""
    manifest.updated = now_utc()
    payload = json.dumps(manifest.to_dict(), indent=2, sort_keys=False).encode("utf-8") + b"\n"
    atomic_write_bytes(Path(directory) / MANIFEST, payload)


def content_id(manifest: Manifest) -> str:
    """The identity of a case base's cases, wherever its folder lies: a SHA-256 over its feature
    set (names and columns), counts, next case id, retention log and Parquet parts (each part's
    rows, bytes and CRC-32, which the manifest lists). The same shipped case base installed twice
    (``pip install .``, then ``pip install -e .``) has one; a case base that gained, lost or
    changed a case has another. Its name and folder do not count (a copy keeps its source's).

    >>> m = Manifest.new("a", feature_set="casper", similarity=None, features={s: ["x"] for s in STREETS})
    >>> n = Manifest.from_dict(m.to_dict()); n.name = "b"
    >>> content_id(m) == content_id(n), len(content_id(m))
    (True, 64)
    >>> n.counts["flop"]["total"] += 1
    >>> content_id(m) == content_id(n)
    False
    """
    import hashlib

    ident = {"feature_set": manifest.feature_set, "features": manifest.features, "counts": manifest.counts,
             "next_case_id": manifest.next_case_id, "log": manifest.log,
             "parts": {s: [[p.get("file"), p.get("rows"), p.get("bytes"), p.get("crc32")] for p in manifest.parts[s]]
                       for s in STREETS}}
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode("utf-8")).hexdigest()


def origin_of(manifest: Manifest) -> dict[str, Any]:
    """What a copy records in its ``origin`` of the case base it was copied from (``manifest``):
    its ``name``, ``cases`` and :func:`content_id` (the copier adds its ``path``, the ``bytes``
    copied and when)."""
    return {"name": manifest.name, "cases": manifest.total_cases, "content": content_id(manifest)}


def is_copy_of(copy: Manifest, base: str | Path, base_manifest: Manifest | None = None) -> bool:
    """Whether ``copy``'s ``origin`` names the case base at ``base`` (its manifest
    ``base_manifest``, read when not given): the folder it was copied from, or the same case base
    found elsewhere, as a reinstall moves the shipped ones: the same name with the same cases
    (:func:`content_id` at copy time). A copy made before origins recorded the content counts when
    it was copied from a shipped case base of the same name with the same number of cases.
    False when ``copy`` records no origin."""
    o = copy.origin
    if not o:
        return False
    base = Path(base)
    if Path(str(o["path"])).resolve() == base.resolve():
        return True
    b = base_manifest if base_manifest is not None else read_manifest(base)
    if o.get("name") != b.name:
        return False
    if "content" in o:
        return o["content"] == content_id(b)
    from cbr.store import is_shipped

    was = Path(str(o["path"]))  # (a copy made before origins named the content)
    return (is_shipped(base) and was.name == base.resolve().name and was.parent.name == "casebases"
            and o.get("cases") == b.total_cases)
