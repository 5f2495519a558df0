"""Merging case bases (``cbr casebase merge A B [C...] -o OUT``) without loading them whole.

The inputs must have the same feature set (name and columns of every street), schema
version and similarity configuration; anything else is refused with one line naming the
first difference. Cases are streamed part by part (Parquet record batches, then any cases
of a retention log not yet compacted) into a :class:`~cbr.store.writer.CaseBaseWriter`, so
memory holds one batch and the writer's buffer, and the result appears only when the merge
succeeded (an interrupt or error leaves no ``OUT``). New case ids are assigned in a fixed
order: inputs in the order given, then streets (pre-flop to river), then old id order. The
retrieval indexes are rebuilt from the merged parts in batches, as a build does.

>>> import tempfile, numpy as np
>>> from cbr.store.writer import CaseBaseWriter
>>> root = tempfile.mkdtemp()
>>> for name, n in (("a", 2), ("b", 3)):
...     with CaseBaseWriter(f"{root}/{name}", build_index=False) as w:
...         ids = w.add_rows("flop", np.full((n, 12), n, np.float32), "c" * n, source=name)
>>> report = merge_casebases([f"{root}/a", f"{root}/b"], f"{root}/ab", build_index=False)
>>> report.cases, report.cases_per_street["flop"]
(5, 5)
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import pyarrow.parquet as pq

from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS, GameDef
from cbr.store.casebase import CaseBase
from cbr.store.manifest import verify_file
from cbr.store.parts import case_schema
from cbr.store.writer import CaseBaseWriter

__all__ = ["MergeReport", "merge_casebases", "BATCH_ROWS"]

BATCH_ROWS = 65_536  # cases read from a part at a time


@dataclass
class MergeReport:
    """What a merge did: inputs, cases per street, seconds."""

    path: str
    inputs: list[str]
    cases: int = 0
    cases_per_street: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "inputs": self.inputs, "cases": self.cases,
                "cases_per_street": self.cases_per_street, "seconds": round(self.seconds, 3),
                "warnings": list(self.warnings)}


def _check_same(bases: Sequence[CaseBase]) -> None:
    """Refuse inputs that differ in schema version, feature set or similarity."""
    first = bases[0]
    m0 = first.manifest
    sim0 = first.similarity() if m0.similarity else None
    for cb in bases[1:]:
        m = cb.manifest
        if m.schema_version != m0.schema_version:
            raise CaseBaseError(f"cannot merge {cb.path} (schema version {m.schema_version}) with {first.path} "
                                f"(schema version {m0.schema_version}); run cbr casebase upgrade on the older one")
        if m.feature_set != m0.feature_set or m.features != m0.features:
            what = (f"feature set {m.feature_set!r} vs {m0.feature_set!r}" if m.feature_set != m0.feature_set
                    else "the same feature set name with different columns")
            raise CaseBaseError(f"cannot merge {cb.path} with {first.path}: {what}")
        sim = cb.similarity() if m.similarity else None
        if sim != sim0:
            raise CaseBaseError(f"cannot merge {cb.path} with {first.path}: their similarity configurations differ")


def merge_casebases(inputs: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], *,
                    overwrite: bool = False, name: Optional[str] = None, build_index: bool = True,
                    progress: Optional[Callable[[int], None]] = None) -> MergeReport:
    """Merge the case bases ``inputs`` (two or more) into the new case base ``out``.

    ``progress(n)`` is called with the number of cases copied per batch. Raises
    :class:`CaseBaseError` for fewer than two inputs, an input given twice, ``out`` among
    the inputs, inputs that cannot be merged (see the module docstring), or a damaged part.
    """
    import time

    t0 = time.perf_counter()
    if len(inputs) < 2:
        raise CaseBaseError(f"merge needs at least two case bases, got {len(inputs)}")
    where = [Path(p).resolve() for p in inputs]
    if len(set(where)) != len(where):
        raise CaseBaseError("a case base is given twice; each input is merged once")
    if Path(out).resolve() in where:
        raise CaseBaseError(f"the output {out} is one of the inputs; write the merge to a new path")
    bases: list[CaseBase] = []
    try:
        for p in inputs:
            bases.append(CaseBase.open(p))
        _check_same(bases)
        first = bases[0]
        m0 = first.manifest
        similarity = first.path / m0.similarity if m0.similarity else None
        report = MergeReport(path=str(out), inputs=[str(p) for p in inputs])
        per_street = {s: 0 for s in STREETS}
        extra = {"built_by": "cbr casebase merge", "merged_from": [cb.manifest.name for cb in bases]}
        with CaseBaseWriter(out, feature_set=_Names(m0.feature_set, m0.features), similarity=similarity,
                            overwrite=overwrite, name=name, build_index=build_index, extra=extra) as writer:
            for cb in bases:
                m = cb.manifest
                for game in m.games:
                    writer.add_game(GameDef.from_dict(game))
                for entry in m.sources:
                    if entry.get("sha256"):
                        writer.add_source_entry(entry)
                for s in STREETS:
                    schema = case_schema(m.features[s])
                    for part in m.parts[s]:
                        path = cb.path / part["file"]
                        verify_file(path, part, str(cb.path))
                        with pq.ParquetFile(path, page_checksum_verification=True) as pf:
                            for batch in pf.iter_batches(batch_size=BATCH_ROWS):
                                table = _as_table(batch, schema)
                                writer.add_table(s, table)
                                per_street[s] += table.num_rows
                                if progress is not None:
                                    progress(table.num_rows)
                    for log in cb._retention_logs():  # retained cases not yet compacted into parts
                        if log.rows[s]:
                            table = log.table(s, m.features[s])
                            writer.add_table(s, table)
                            per_street[s] += table.num_rows
                            if progress is not None:
                                progress(table.num_rows)
        report.warnings.extend(writer.warnings)
    finally:
        for cb in bases:
            cb.close()
    report.cases_per_street = per_street
    report.cases = sum(per_street.values())
    report.seconds = time.perf_counter() - t0
    return report


def _as_table(batch: Any, schema: Any) -> Any:
    import pyarrow as pa

    table = pa.Table.from_batches([batch])
    return table if table.schema.equals(schema) else table.cast(schema)


class _Names:
    """The feature set of the inputs as a writer needs it (name and columns; no rows are computed)."""

    def __init__(self, name: str, features: dict[str, list[str]]) -> None:
        self.name = name
        self._features = features

    def feature_names(self, street: str) -> list[str]:
        return list(self._features[street])
