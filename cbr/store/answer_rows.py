"""Answer rows: what a query reads beside a street's index, saved in the index's generation
directory so that answering needs neither the street's Parquet parts nor pyarrow.

An answer needs every case's action (the triple) and the provenance of the few cases it
lists (the explanation). Both are written with the index, in row order (row number =
index id), as four files listed in the manifest with the index's own:

- ``rows.json``: the row count, the provenance columns and the rows per block;
- ``actions.npy``: each row's action code (int8; :func:`cbr.retrieval.action_codes`);
- ``provenance.bin``: the rows in blocks of :data:`BLOCK_ROWS`, each block the CRC-32 of its
  number and its bytes (4 bytes, little-endian), then its rows as zlib-compressed JSON lines,
  each the array ``[case_id, *columns]``;
- ``provenance.npy``: the blocks' byte offsets (int64, blocks + 1).

``rows.json`` and ``actions.npy`` are checked whole (size and CRC-32) when loaded. The
provenance grows with the case base and is read a block at a time, so loading checks the
sizes of its two files only and every block read is checked against its CRC: a block that is
damaged, or reached through a damaged offset (the CRC covers the block's number), is a
:class:`~cbr.errors.CaseBaseError`. ``cbr casebase verify`` checks every file whole.

>>> import tempfile
>>> from cbr.store.manifest import file_checksum
>>> d = Path(tempfile.mkdtemp())
>>> with AnswerRowsWriter(d, ("source", "hole")) as w:
...     w.add([7, 9], ["c", "r"], {"source": ["a.log", "b.log"], "hole": ["AhKd", None]})
>>> rows = AnswerRows.load(d, {name: file_checksum(d / name) for name in ROW_FILES}, 2)
>>> rows.codes.tolist(), rows.rows([1, 0])
([1, 2], [{'case_id': 9, 'source': 'b.log', 'hole': None}, {'case_id': 7, 'source': 'a.log', 'hole': 'AhKd'}])
"""
from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cbr.errors import CaseBaseError, counted
from cbr.retrieval.results import ACTIONS
from cbr.store.manifest import verify_file

__all__ = ["ROW_FILES", "PROVENANCE", "BLOCK_ROWS", "AnswerRowsWriter", "AnswerRows"]

#: The files of the answer rows, inside an index generation directory.
ROW_FILES = ("rows.json", "actions.npy", "provenance.bin", "provenance.npy")
#: The provenance columns an answer lists for each case it explains.
PROVENANCE = ("source", "hand_id", "player", "position", "hole", "board", "history")
#: Rows per compressed block of ``provenance.bin`` (a read decompresses one block, ~5 kB).
BLOCK_ROWS = 64
#: Action letter -> code, in the retrieval's order (fold, check/call, bet/raise).
_CODES = {a: code for code, a in enumerate(ACTIONS)}


def _block_crc(block: int, data: bytes) -> int:
    return zlib.crc32(data, zlib.crc32(block.to_bytes(8, "little")))


class AnswerRowsWriter:
    """Writes a street's answer rows into ``directory``, batch by batch, in row order (the
    provenance is streamed to disk block by block, so a large street is never in memory as
    Python objects). The caller fsyncs and lists the files (:func:`cbr.store.indexes.save_index`)."""

    #: The case table's columns :meth:`add_batches` reads.
    COLUMNS = ("case_id", "action", *PROVENANCE)

    def __init__(self, directory: str | os.PathLike[str], columns: Sequence[str] = PROVENANCE) -> None:
        self.directory = Path(directory)
        self.columns = tuple(columns)
        self._codes: list[np.ndarray] = []
        self._offsets: list[int] = [0]
        self._pending: list[bytes] = []
        self._out = open(self.directory / "provenance.bin", "wb")

    def carry(self, old: "AnswerRows") -> None:
        """Start with ``old``'s rows (a previous generation's, loaded and checked): its whole
        blocks are copied as bytes, its last partial block is re-read (its CRC checked) and
        continued, so saving a street that grew by a retained hand costs the new rows, not all.
        Call before any :meth:`add`. :class:`ValueError` if ``old`` was written with other
        columns or block size, :class:`CaseBaseError` if it is damaged; either way nothing was
        carried (write every row instead)."""
        if self._codes or self._pending or len(self._offsets) > 1:
            raise ValueError("carry() must come before any add()")
        if old.columns != self.columns or old.block_rows != BLOCK_ROWS:
            raise ValueError("the old answer rows have other columns or another block size")
        whole, rest = divmod(len(old), BLOCK_ROWS)
        end = int(old.offsets[whole])
        with open(old.where / "provenance.bin", "rb") as fh:
            pending = old._read_block(fh, whole) if rest else []
            if len(pending) != rest:
                raise CaseBaseError(f"index {old.where}: provenance.bin is damaged (block {whole})")
            fh.seek(0)
            copied = 0
            while copied < end:  # in pieces: a large street's provenance is never in memory whole
                piece = fh.read(min(end - copied, 1 << 22))
                if not piece:
                    break
                copied += self._out.write(piece)
        if copied != end:
            self._out.seek(0)
            self._out.truncate()
            raise CaseBaseError(f"index {old.where}: provenance.bin is damaged (shorter than its offsets)")
        self._pending = pending
        self._offsets = [int(x) for x in old.offsets[:whole + 1]]
        self._codes = [np.array(old.codes, dtype=np.int8)]

    def add(self, case_ids: Sequence[int] | np.ndarray, actions: Sequence[str] | np.ndarray,
            columns: Mapping[str, Sequence[Any]]) -> None:
        """Append rows: their case ids, actions (``'f'/'c'/'r'``) and provenance columns."""
        ids = case_ids.tolist() if isinstance(case_ids, np.ndarray) else [int(i) for i in case_ids]
        acts = [str(a) for a in actions]
        if len(acts) != len(ids) or any(len(columns[c]) != len(ids) for c in self.columns):
            raise ValueError("case ids, actions and every provenance column must have one value per row")
        try:
            self._codes.append(np.array([_CODES[a] for a in acts], dtype=np.int8))
        except KeyError as exc:
            raise ValueError(f"action {exc.args[0]!r} is not one of f, c, r") from None
        encode = _ENCODER.encode
        for row in zip(ids, *(columns[c] for c in self.columns)):
            self._pending.append(encode(row).encode("utf-8"))
            if len(self._pending) == BLOCK_ROWS:
                self._flush()

    def add_batches(self, batches: Iterable[Any]) -> None:
        """Append Arrow record batches of the case table holding :attr:`COLUMNS` (a build's
        parts, a loaded street's table)."""
        for batch in batches:
            self.add(*self.batch_rows(batch, self.columns))

    @staticmethod
    def batch_rows(batch: Any, columns: Sequence[str] = PROVENANCE) -> tuple[Any, list[Any], dict[str, list[Any]]]:
        """The arguments of :meth:`add` for an Arrow record batch of the case table."""
        return (batch.column("case_id").to_numpy(), batch.column("action").to_pylist(),
                {c: batch.column(c).to_pylist() for c in columns})

    def _flush(self) -> None:
        if not self._pending:
            return
        data = zlib.compress(b"\n".join(self._pending), 6)
        block = len(self._offsets) - 1
        self._out.write(_block_crc(block, data).to_bytes(4, "little") + data)
        self._offsets.append(self._offsets[-1] + 4 + len(data))
        self._pending = []

    def __enter__(self) -> "AnswerRowsWriter":
        return self

    def __exit__(self, kind: Any, *exc: Any) -> None:
        if kind is None:
            self.close()
        else:
            self.abort()

    def abort(self) -> None:
        """Stop without finishing the files (the caller discards the directory)."""
        self._out.close()

    def close(self) -> None:
        """Finish the files (``provenance.bin`` written first, ``rows.json`` last)."""
        self._flush()
        self._out.close()
        codes = np.concatenate(self._codes) if self._codes else np.zeros(0, np.int8)
        np.save(self.directory / "actions.npy", codes)
        np.save(self.directory / "provenance.npy", np.asarray(self._offsets, dtype=np.int64))
        head = {"rows": int(len(codes)), "columns": list(self.columns), "block_rows": BLOCK_ROWS}
        (self.directory / "rows.json").write_text(json.dumps(head), encoding="utf-8")


def _plain(value: Any) -> Any:
    """A JSON-ready value for what :mod:`json` cannot encode itself (numpy scalars as Python's)."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"a provenance value must be a string, a number or None, not {type(value).__name__}")


#: One encoder for every row (``json.dumps`` with options builds a new one per call).
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=_plain)


class AnswerRows:
    """A street's loaded answer rows: :attr:`codes` (every row's action code) and
    :meth:`rows` (the provenance of some rows). Use :meth:`load`."""

    def __init__(self, where: Path, columns: tuple[str, ...], codes: np.ndarray, offsets: np.ndarray,
                 block_rows: int, size: int) -> None:
        self.where = where
        self._size = size  # of provenance.bin, as checked against the manifest
        self.columns = columns
        self.codes = codes
        self._offsets = offsets
        self._block_rows = block_rows

    def __len__(self) -> int:
        return len(self.codes)

    @property
    def block_rows(self) -> int:
        """Rows per block of ``provenance.bin``."""
        return self._block_rows

    @property
    def offsets(self) -> np.ndarray:
        """The blocks' byte offsets in ``provenance.bin`` (blocks + 1)."""
        return self._offsets

    @classmethod
    def load(cls, where: str | os.PathLike[str], files: Mapping[str, Mapping[str, int]], cases: int) -> "AnswerRows":
        """The answer rows in index directory ``where`` (``files``: the manifest's checksums
        of the index's files), checked to hold ``cases`` rows; :class:`CaseBaseError` if a
        file is missing or damaged (see the module docstring for what is checked when)."""
        d = Path(where)
        what = f"index {d}"
        for name in ("rows.json", "actions.npy"):
            verify_file(d / name, dict(files[name]), what)
        for name in ("provenance.bin", "provenance.npy"):
            try:
                size = os.stat(d / name).st_size
            except OSError as exc:
                raise CaseBaseError(f"{what}: cannot read {name} ({exc.strerror or exc})") from None
            if size != files[name].get("bytes"):
                raise CaseBaseError(f"{what}: {name} is damaged (size differs from the manifest)")
        try:
            head = json.loads((d / "rows.json").read_text(encoding="utf-8"))
            columns = tuple(str(c) for c in head["columns"])
            block_rows = int(head["block_rows"])
            codes = np.load(d / "actions.npy")
            offsets = np.load(d / "provenance.npy", mmap_mode="r")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CaseBaseError(f"{what}: unreadable answer rows ({exc})") from None
        blocks = -(-cases // block_rows) if block_rows > 0 else -1
        if head.get("rows") != cases or codes.shape != (cases,) or codes.dtype != np.int8 \
                or offsets.shape != (blocks + 1,) or offsets.dtype != np.int64:
            raise CaseBaseError(f"{what}: the answer rows do not hold the index's {counted(cases, 'row')}")
        return cls(d, columns, codes, offsets, block_rows, int(files["provenance.bin"]["bytes"]))

    def rows(self, ids: Sequence[int] | np.ndarray) -> list[dict[str, Any]]:
        """``case_id`` and the provenance columns of rows ``ids``, as dicts in that order;
        each block read is checked against its CRC first."""
        names = ("case_id", *self.columns)
        blocks: dict[int, list[bytes]] = {}
        out = []
        with open(self.where / "provenance.bin", "rb") as fh:
            for i in ids:
                row = int(i)
                if not 0 <= row < len(self.codes):
                    raise IndexError(f"row {row} is out of range ({counted(len(self.codes), 'row')})")
                block, at = divmod(row, self._block_rows)
                if block not in blocks:
                    blocks[block] = self._read_block(fh, block)
                lines = blocks[block]
                if at >= len(lines):
                    raise CaseBaseError(f"index {self.where}: provenance.bin is damaged (block {block})")
                out.append(dict(zip(names, json.loads(lines[at]))))
        return out

    def _read_block(self, fh: Any, block: int) -> list[bytes]:
        start, end = int(self._offsets[block]), int(self._offsets[block + 1])
        damaged = f"index {self.where}: provenance.bin is damaged (block {block}, byte {start})"
        if not 0 <= start < end <= self._size:
            raise CaseBaseError(damaged)
        fh.seek(start)
        record = fh.read(end - start)
        data = record[4:]
        if len(record) != end - start or int.from_bytes(record[:4], "little") != _block_crc(block, data):
            raise CaseBaseError(damaged)
        try:
            return zlib.decompress(data).split(b"\n")
        except zlib.error:
            raise CaseBaseError(damaged) from None
