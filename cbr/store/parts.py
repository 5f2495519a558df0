"""A street's cases as rows: the case table's schema, validated Arrow tables built from
feature rows and provenance (or from decision points through a feature set), and the
Parquet parts that hold them (``cases/<street>/part-NNNNN.parquet``).

>>> t = build_table(["x"], 7, [[0.5], [1.0]], "cr", source="demo")
>>> t.column_names[:3], part_file("flop", next_part_number([{"file": part_file("flop", 0)}]))
(['case_id', 'x', 'action'], 'cases/flop/part-00001.parquet')
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cbr.errors import CaseBaseError, counted
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import STREETS
from cbr.store.durable import atomic_write_with
from cbr.store.manifest import ACTIONS, differs_from_manifest, file_checksum, verify_file
from evaluator_ext.cards import cards_str

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["META_COLUMNS", "RETENTION_COLUMNS", "PART_RE", "street_name", "case_schema", "build_table",
           "RowBatch", "row_batch", "checked_features", "checked_meta", "batch_table", "decision_meta",
           "part_file", "next_part_number", "write_part", "part_entry", "read_part",
           "count_actions", "part_at_a_glance", "verify_part", "PART_MENDS", "unlisted_parts"]

META_COLUMNS = ("action", "source", "hand_id", "player", "position", "game", "hole", "board", "history", "outcome",
                "match_id", "seat", "opponents", "retained_at")
#: Provenance of a case retained in play (schema 4; NULL for cases built from logs).
RETENTION_COLUMNS = ("match_id", "seat", "opponents", "retained_at")
PART_RE = re.compile(r"^part-(\d+)\.parquet$")
#: What mends a damaged part, in the words of every line that reports one (``cbr casebase verify``,
#: ``cbr casebase inspect``): a part holds the cases themselves, no cache rebuilds it.
PART_MENDS = "rebuild the case base from its logs with cbr build, or restore it from a copy"


def street_name(street: int | str) -> str:
    """``'flop'`` from 1 or ``'flop'``; raises ``ValueError``.

    >>> street_name(2), street_name("River")
    ('turn', 'river')
    """
    if isinstance(street, str):
        s = street.strip().lower()
        if s in STREETS:
            return s
        raise ValueError(f"unknown street {street!r}; streets: {', '.join(STREETS)}")
    i = int(street)
    if not 0 <= i < len(STREETS):
        raise ValueError(f"street must be 0..3, got {street!r}")
    return STREETS[i]


def case_schema(feature_names: Sequence[str]) -> pa.Schema:
    """Arrow schema of a street's cases: case_id, float32 features, action, provenance,
    ``outcome``: float64, the net result of the whole hand for the player who acted, in
    small bets of the hand's game (``GameDef.small_bet``), NULL when unknown; and the
    provenance of cases retained in play (schema 4): ``match_id``, ``seat`` (the actor's
    seat at the table), ``opponents`` (the other seats' names, comma-separated) and
    ``retained_at`` (UTC time of the commit, stored without a zone), NULL for cases built from logs.

    >>> case_schema(["x"]).field("outcome").type
    DataType(double)
    """
    import pyarrow as pa

    fields = [pa.field("case_id", pa.int64(), nullable=False)]
    fields += [pa.field(f, pa.float32(), nullable=False) for f in feature_names]
    fields += [
        pa.field("action", pa.string(), nullable=False),
        pa.field("source", pa.string()),
        pa.field("hand_id", pa.string()),
        pa.field("player", pa.string()),
        pa.field("position", pa.int16()),
        pa.field("game", pa.string()),
        pa.field("hole", pa.string()),
        pa.field("board", pa.string()),
        pa.field("history", pa.string()),
        pa.field("outcome", pa.float64()),
        pa.field("match_id", pa.string()),
        pa.field("seat", pa.int16()),
        pa.field("opponents", pa.string()),
        pa.field("retained_at", pa.timestamp("us")),  # UTC
    ]
    return pa.schema(fields)


def _column(value: Any, n: int, name: str, kind: type) -> list[Any]:
    if value is None or isinstance(value, (str, int, np.integer)):
        v = None if value is None else kind(value)
        return [v] * n
    out = list(value)
    if len(out) != n:
        raise ValueError(f"{name}: {counted(len(out), 'value')} for {counted(n, 'case')}")
    return [None if x is None else kind(x) for x in out]


def _outcomes(value: Any, n: int) -> np.ndarray:
    """Outcomes per row (float64, NaN = unknown) from None/a number (all rows) or one value
    per row; infinity is refused."""
    if value is None or isinstance(value, (int, float, np.integer, np.floating)):
        values = np.full(n, np.nan if value is None else float(value), dtype=np.float64)
    else:
        values = np.array([np.nan if v is None else v for v in value], dtype=np.float64)
        if values.shape != (n,):
            raise ValueError(f"outcome: {counted(values.size, 'value')} for {counted(n, 'case')}")
    if np.isinf(values).any():
        raise ValueError("outcome contains infinity; use NaN or None for an unknown outcome")
    return values


def _times(value: Any, n: int) -> list[datetime | None]:
    """UTC times per row (naive, so SQL clients need no time-zone package) from None/one
    aware ``datetime`` (all rows) or one per row."""
    if value is None or isinstance(value, datetime):  # one value for every row: converted once
        return _times([value], 1) * n
    values = list(value)
    if len(values) != n:
        raise ValueError(f"retained_at: {counted(len(values), 'value')} for {counted(n, 'case')}")
    out: list[datetime | None] = []
    for v in values:
        if v is not None and (not isinstance(v, datetime) or v.tzinfo is None):
            raise ValueError(f"retained_at must be a timezone-aware datetime or None, got {v!r}")
        out.append(None if v is None else v.astimezone(timezone.utc).replace(tzinfo=None))
    return out


def _cards_text(cards: Any) -> str | None:
    if cards is None:
        return None
    if isinstance(cards, str):
        return cards
    return cards_str(tuple(int(c) for c in cards))


def _cards_column(value: Any, n: int, name: str) -> list[str | None]:
    """Cards text per row from None, text, a card tuple (all rows) or one value per row."""
    if value is None or isinstance(value, str):
        return [value] * n
    items = list(value)
    if all(isinstance(c, (int, np.integer)) for c in items):  # one card tuple for every row
        return [_cards_text(items)] * n
    if len(items) != n:
        raise ValueError(f"{name}: {counted(len(items), 'value')} for {counted(n, 'case')}")
    return [_cards_text(v) for v in items]


#: Provenance columns of a case besides its features, action and outcome: name -> kind.
_META_KINDS = {"source": str, "hand_id": str, "player": str, "position": int, "game": str, "hole": "cards",
               "board": "cards", "history": str, "match_id": str, "seat": int, "opponents": str}


@dataclass
class RowBatch:
    """Validated case rows before they become Arrow: ``features`` (n, d) float32,
    ``actions`` (one letter each), ``outcomes`` float64 (NaN = unknown), ``meta`` (one
    list per provenance column: str/int/None) and ``retained_at`` (naive UTC datetimes or
    None). Cheap to build and to concatenate; :func:`batch_table` makes the Arrow table."""

    features: np.ndarray
    actions: list[str]
    outcomes: np.ndarray
    meta: dict[str, list[Any]]
    retained_at: list[datetime | None]

    def __len__(self) -> int:
        return len(self.actions)

    @staticmethod
    def concat(batches: Sequence["RowBatch"], d: int) -> "RowBatch":
        """One batch of the rows of ``batches`` in order (``d``: the feature count)."""
        if not batches:
            return RowBatch(np.zeros((0, d), np.float32), [], np.zeros(0), {k: [] for k in _META_KINDS}, [])
        if len(batches) == 1:
            return batches[0]
        return RowBatch(np.concatenate([b.features for b in batches]), [a for b in batches for a in b.actions],
                        np.concatenate([b.outcomes for b in batches]),
                        {k: [v for b in batches for v in b.meta[k]] for k in _META_KINDS},
                        [t for b in batches for t in b.retained_at])


def row_batch(feature_names: Sequence[str], features: Any, actions: Sequence[str] | str, **meta: Any) -> RowBatch:
    """Validate rows as :func:`build_table` does and keep them as a :class:`RowBatch`.

    >>> b = row_batch(["x"], [[0.5], [1.0]], "cr", outcome=[-1.5, None], player="me")
    >>> len(b), b.meta["player"], b.outcomes.tolist()
    (2, ['me', 'me'], [-1.5, nan])
    """
    _check_columns(meta)
    X = checked_features(feature_names, features)
    acts, cols, outcomes, times = checked_meta(X.shape[0], actions, meta)
    return RowBatch(X, acts, outcomes, cols, times)


def _check_columns(meta: dict[str, Any]) -> None:
    unknown = set(meta) - set(_META_KINDS) - {"outcome", "retained_at"}
    if unknown:
        raise TypeError(f"unknown case columns: {', '.join(sorted(unknown))}")


def checked_features(feature_names: Sequence[str], features: Any) -> np.ndarray:
    """``features`` as C-contiguous float32 ``(n, len(feature_names))`` (one row ``(d,)`` too);
    raises ``ValueError`` for another shape, NaN or infinity."""
    d = len(feature_names)
    X = np.asarray(features, dtype=np.float32)
    if X.ndim == 1 and X.size == d:
        X = X.reshape(1, d)
    if X.ndim != 2 or X.shape[1] != d:
        if X.size == 0:
            X = np.zeros((0, d), np.float32)
        else:
            raise ValueError(f"features must have shape (n, {d}), got {np.shape(features)}")
    if not np.isfinite(X).all():
        raise ValueError("features contain NaN or infinity")
    return np.ascontiguousarray(X)


def checked_meta(n: int, actions: Sequence[str] | str, meta: dict[str, Any]
                 ) -> tuple[list[str], dict[str, list[Any]], np.ndarray, list[datetime | None]]:
    """The actions, provenance columns, outcomes and times of ``n`` rows, validated as
    :func:`row_batch` does (``TypeError`` for an unknown column, ``ValueError`` for bad values)."""
    _check_columns(meta)
    acts = list(actions)
    if len(acts) != n:
        raise ValueError(f"actions: {counted(len(acts), 'value')} for {counted(n, 'case')}")
    bad = sorted({str(a) for a in acts if a not in ACTIONS})
    if bad:
        raise ValueError(f"actions must be 'f', 'c' or 'r', got {bad[:3]}")
    cols: dict[str, list[Any]] = {}
    for name, kind in _META_KINDS.items():
        value = meta.get(name)
        cols[name] = _cards_column(value, n, name) if kind == "cards" else _column(value, n, name, kind)  # type: ignore[arg-type]
    return [str(a) for a in acts], cols, _outcomes(meta.get("outcome"), n), _times(meta.get("retained_at"), n)


def batch_table(feature_names: Sequence[str], case_ids: Any, batch: RowBatch) -> pa.Table:
    """The Arrow table (:func:`case_schema`) of a :class:`RowBatch` with these case ids."""
    import pyarrow as pa

    n = len(batch)
    cols: dict[str, Any] = {"case_id": pa.array(np.asarray(case_ids, dtype=np.int64).reshape(n))}
    for j, f in enumerate(feature_names):
        cols[f] = pa.array(batch.features[:, j], type=pa.float32())
    cols["action"] = pa.array(batch.actions, pa.string())
    for name in ("source", "hand_id", "player", "position", "game", "hole", "board", "history"):
        cols[name] = pa.array(batch.meta[name], pa.int16() if name == "position" else pa.string())
    cols["outcome"] = pa.array(batch.outcomes, pa.float64(), mask=np.isnan(batch.outcomes))
    cols["match_id"] = pa.array(batch.meta["match_id"], pa.string())
    cols["seat"] = pa.array(batch.meta["seat"], pa.int16())
    cols["opponents"] = pa.array(batch.meta["opponents"], pa.string())
    cols["retained_at"] = pa.array(batch.retained_at, pa.timestamp("us"))
    return pa.table(cols, schema=case_schema(feature_names))


def build_table(feature_names: Sequence[str], first_id: int, features: Any, actions: Sequence[str] | str,
                **meta: Any) -> pa.Table:
    """Validate one batch of cases and make its Arrow table, case ids from ``first_id``.

    ``features``: (d,) or (n, d); ``actions``: one letter per case (a string ``"ccr"`` or a
    list); meta columns (``source``, ``hand_id``, ``player``, ``position``, ``game``,
    ``hole``, ``board``, ``history``, ``match_id``, ``seat``, ``opponents``): a scalar for
    every case or one value per case. ``outcome``: the hand's net result for the actor in
    small bets, None/NaN when unknown (stored as NULL). ``retained_at``: a timezone-aware
    ``datetime`` (or None) for every case or per case.

    >>> build_table(["x"], 7, [[0.5], [1.0]], "cr", source="demo").column("case_id").to_pylist()
    [7, 8]
    >>> build_table(["x"], 0, [[0.5], [1.0]], "cr", outcome=[-1.5, None]).column("outcome").to_pylist()
    [-1.5, None]
    """
    batch = row_batch(feature_names, features, actions, **meta)
    return batch_table(feature_names, np.arange(first_id, first_id + len(batch), dtype=np.int64), batch)


#: Address space a Parquet part's write needs besides twice the table's bytes, under an
#: address-space limit (:func:`write_part`).
PART_WRITE_ROOM = 1 << 20


def _address_space_room() -> int | None:
    """Bytes of address space this process may still map, or None without a limit."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/status") as fh:
            used = next(int(line.split()[1]) << 10 for line in fh if line.startswith("VmSize:"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return int(soft) - used


def write_part(path: Path, table: pa.Table) -> dict[str, int]:
    """Write a Parquet part durably (temp file + fsync + rename + directory fsync), with
    page CRCs; returns its size and CRC-32 for the manifest.

    Under an address-space limit, a ``MemoryError`` when the room left is less than twice the
    table's bytes and :data:`PART_WRITE_ROOM`: pyarrow's Parquet writer crashed (SIGSEGV in
    its dictionary encoder) when an allocation failed with about 100 KB left (``cbr build
    -j 2`` under a 252 MB limit, one run in four), where it mostly raised a ``MemoryError``."""
    import pyarrow.parquet as pq

    room = _address_space_room()
    need = 2 * int(table.nbytes) + PART_WRITE_ROOM
    if room is not None and room < need:
        raise MemoryError(f"writing a part of {counted(table.num_rows, 'case')} needs about "
                          f"{-(-need >> 20)} MB of address space, {max(0, room) >> 20} MB are left")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_with(path, lambda tmp: pq.write_table(table, tmp, compression="zstd", write_page_checksum=True))
    return file_checksum(path)


def part_entry(rel: str, rows: int, checksum: dict[str, int]) -> dict[str, Any]:
    """The manifest entry of a part: file, rows, bytes, crc32."""
    return {"file": rel, "rows": int(rows), **checksum}


def part_at_a_glance(root: Path, entry: dict[str, Any]) -> str | None:
    """What one ``stat`` finds wrong with a listed part (missing, or of another size than the
    manifest lists), in the words every read of it raises (:func:`read_part`, and
    :attr:`CaseBase.damaged_parts`, found by ``CaseBase.open``); None when it looks whole."""
    try:
        size = os.stat(root / entry["file"]).st_size
    except FileNotFoundError:
        return f"{root}: missing file {entry['file']} (listed in manifest.json)"
    except OSError:
        return None  # verify_file says why it cannot be read
    if size != entry["bytes"]:
        return (f"{root}: {entry['file']} is {differs_from_manifest(size, entry['bytes'], 'bytes')}; "
                "the file is damaged or was replaced")
    return None


def verify_part(root: Path, entry: dict[str, Any]) -> None:
    """:func:`verify_file` for a listed part, a missing part or one of another size said as
    :func:`part_at_a_glance` says it."""
    problem = part_at_a_glance(root, entry)
    if problem is not None:
        raise CaseBaseError(problem)
    verify_file(root / entry["file"], entry, str(root))


def read_part(root: Path, entry: dict[str, Any], schema: pa.Schema) -> pa.Table:
    """Read a listed part after checking its size and CRC-32, with Parquet page CRCs
    verified; any damage is a :class:`CaseBaseError`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = root / entry["file"]
    verify_part(root, entry)
    try:
        # ParquetFile, not read_table: the same read without importing pyarrow.dataset (~50 ms)
        table = pq.ParquetFile(path, page_checksum_verification=True).read()
        return table if table.schema.equals(schema) else table.cast(schema)  # cast imports pyarrow.compute
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise CaseBaseError(f"{root}: unreadable Parquet part {entry['file']}: {str(exc).splitlines()[0]}") from None


def read_part_column(root: Path, entry: dict[str, Any], name: str) -> pa.Array:
    """One column of a listed part (checked as :func:`read_part` does), without the others."""
    return read_part_columns(root, entry, [name]).column(0).combine_chunks()


def read_part_columns(root: Path, entry: dict[str, Any], names: Sequence[str]) -> pa.Table:
    """Some columns of a listed part (checked as :func:`read_part` does), without the others."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = root / entry["file"]
    verify_part(root, entry)
    try:
        return pq.ParquetFile(path, page_checksum_verification=True).read(columns=list(names))
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise CaseBaseError(f"{root}: unreadable Parquet part {entry['file']}: {str(exc).splitlines()[0]}") from None


def part_file(street: str, number: int) -> str:
    """The relative path of a street's Parquet part ``number``."""
    return f"cases/{street}/part-{number:05d}.parquet"


def unlisted_parts(root: Path, manifest: Any) -> list[str]:
    """The Parquet parts in the streets' folders of the case base at ``root`` that ``manifest``
    neither lists nor keeps as ``retired`` (relative paths, in order): left by a compaction or
    merge that stopped between writing its part and committing the manifest. Readers never
    read them; a writer deletes them (with its write lock held, when none can be in flight).

    >>> import tempfile
    >>> from cbr.store.manifest import Manifest
    >>> root = Path(tempfile.mkdtemp())
    >>> m = Manifest.new("demo", feature_set="casper", similarity=None, features={s: ["x"] for s in STREETS})
    >>> (root / "cases" / "flop").mkdir(parents=True)
    >>> _ = (root / part_file("flop", 3)).write_bytes(b"PAR1")
    >>> unlisted_parts(root, m)
    ['cases/flop/part-00003.parquet']
    """
    keep = {r["file"] for r in manifest.retired} | {p["file"] for s in STREETS for p in manifest.parts[s]}
    found = []
    for s in STREETS:
        try:
            names = sorted(e.name for e in os.scandir(root / "cases" / s) if e.is_file(follow_symlinks=False))
        except (FileNotFoundError, NotADirectoryError):
            continue
        found += [f"cases/{s}/{n}" for n in names if PART_RE.match(n) and f"cases/{s}/{n}" not in keep]
    return found


def next_part_number(parts: Sequence[dict[str, Any]]) -> int:
    """One more than the highest part number listed (0 for none)."""
    numbers = [int(PART_RE.match(Path(p["file"]).name).group(1)) for p in parts]  # type: ignore[union-attr]
    return (max(numbers) + 1) if numbers else 0


def count_actions(counts: dict[str, int], actions: Iterable[str]) -> None:
    for a in actions:
        counts[a] += 1
        counts["total"] += 1


def decision_meta(dps: Sequence[DecisionPoint]) -> dict[str, Any]:
    """Per-case provenance columns of decision points (for :meth:`~cbr.store.writer.CaseBaseWriter.add_rows`)."""
    for dp in dps:
        if dp.action not in ACTIONS:
            raise ValueError(f"decision of {dp.player!r} in hand {dp.hand_id!r} has no action 'f'/'c'/'r' "
                             f"(got {dp.action!r}); only taken decisions become cases")
    texts: dict[tuple[int, ...], str] = {}  # a hand's decisions share their cards: each written once

    def text(cards: tuple[int, ...]) -> str:
        if type(cards) is not tuple:
            return cards_str(cards)
        t = texts.get(cards)
        if t is None:
            t = texts[cards] = cards_str(cards)
        return t

    return {
        "actions": [dp.action for dp in dps],
        "source": [dp.source for dp in dps],
        "hand_id": [dp.hand_id for dp in dps],
        "player": [dp.player for dp in dps],
        "position": [dp.position for dp in dps],
        "game": [dp.game.name for dp in dps],
        "hole": [text(dp.hole) if dp.hole else None for dp in dps],
        "board": [text(dp.board) for dp in dps],
        "history": [dp.history for dp in dps],
    }
