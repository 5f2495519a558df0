"""Merging case bases (``cbr casebase merge A B [C...] -o OUT``) without loading them whole.

The inputs must have the same feature set (name and columns of every street), schema
version and similarity configuration; anything else is refused with one line naming the
first difference. Cases are streamed part by part (Parquet record batches, then any cases
of a retention log not yet compacted) into a :class:`~cbr.store.writer.CaseBaseWriter`, so
memory holds one batch and the writer's buffer, and the result appears only when the merge
succeeded (an interrupt or error leaves no ``OUT``). New case ids are assigned in a fixed
order: inputs in the order given, then streets (pre-flop to river), then old id order. The
retrieval indexes are rebuilt from the merged parts in batches, as a build does.

Shared sources: case bases track the log files they were built from by SHA-256 (the
manifest's ``sources``). When inputs share one (built from a common log, whatever its path
was), merging them as they are holds that log's cases once per input: the report warns,
naming the source and :data:`DEDUPE_HINT`. With ``dedupe=True`` a case of a shared source is kept once: a case is
identified by its source's checksum, street, hand id, player, position and the betting
history before the decision (the same decision of the same hand of the same file, whatever
build made it), and each identity is kept as many times as the input holding it most often
holds it, so the merge of a base with one built from a superset of its logs is the bigger
one (a hand id repeated within one file keeps all its decisions). Cases without a hand id
or whose source has no checksum (retained in play) are never dropped.

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

from cbr.errors import CaseBaseError, counted
from cbr.game.gamedef import STREETS, GameDef
from cbr.store.casebase import CaseBase
from cbr.store.parts import case_schema, verify_part
from cbr.store.writer import CaseBaseWriter

__all__ = ["MergeReport", "merge_casebases", "BATCH_ROWS", "DEDUPE_HINT", "FeatureColumns"]

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
    #: Sources (log files, by SHA-256) that two or more inputs hold: ``sha256``, ``sources``
    #: (their names in the inputs), ``inputs`` (the inputs holding them), ``cases`` (per
    #: input) and, with ``dedupe``, ``dropped`` (its duplicates left out).
    shared_sources: list[dict[str, Any]] = field(default_factory=list)
    #: Whether cases of shared sources were kept once, and how many duplicates that dropped.
    dedupe: bool = False
    duplicates_dropped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "inputs": self.inputs, "cases": self.cases,
                "cases_per_street": self.cases_per_street, "seconds": round(self.seconds, 3),
                "warnings": list(self.warnings), "shared_sources": list(self.shared_sources),
                "dedupe": self.dedupe, "duplicates_dropped": self.duplicates_dropped}


#: How a warning about a shared source ends: what keeps its cases once, named by
#: :func:`merge_casebases`' parameter (a command line names its own option instead).
DEDUPE_HINT = "dedupe=True keeps them once"


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
                    progress: Optional[Callable[[int], None]] = None, dedupe: bool = False) -> MergeReport:
    """Merge the case bases ``inputs`` (two or more) into the new case base ``out``.

    ``progress(n)`` is called with the number of cases read per batch. Inputs that share a
    source (a log file, by checksum) are warned about in ``report.warnings``; ``dedupe``
    keeps the cases of shared sources once (see the module docstring). Raises
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
        report = MergeReport(path=str(out), inputs=[str(p) for p in inputs], dedupe=dedupe)
        shared = _shared_sources(bases, report)
        seen = _Seen(shared) if dedupe else None
        per_street = {s: 0 for s in STREETS}
        extra = {"built_by": "cbr casebase merge", "merged_from": [cb.manifest.name for cb in bases]}
        with CaseBaseWriter(out, feature_set=FeatureColumns(m0.feature_set, m0.features), similarity=similarity,
                            overwrite=overwrite, name=name, build_index=build_index, extra=extra) as writer:
            for cb in bases:
                m = cb.manifest
                if seen is not None:
                    seen.next_input(cb)
                for game in m.games:
                    writer.add_game(GameDef.from_dict(game))
                for entry in m.sources:
                    if entry.get("sha256"):
                        writer.add_source_entry(entry)
                for s in STREETS:
                    schema = case_schema(m.features[s])
                    for part in m.parts[s]:
                        path = cb.path / part["file"]
                        verify_part(cb.path, part)  # a cut part said with its sizes, as other commands say it
                        with pq.ParquetFile(path, page_checksum_verification=True) as pf:
                            for batch in pf.iter_batches(batch_size=BATCH_ROWS):
                                per_street[s] += _add(writer, s, _as_table(batch, schema), seen, progress)
                    for log in cb._retention_logs():  # retained cases not yet compacted into parts
                        if log.rows[s]:
                            per_street[s] += _add(writer, s, log.table(s, m.features[s]), seen, progress)
        if seen is not None:
            report.duplicates_dropped = seen.dropped
            for entry in report.shared_sources:
                entry["dropped"] = seen.dropped_per_source.get(entry["sha256"], 0)
        report.warnings.extend(writer.warnings)
    finally:
        for cb in bases:
            cb.close()
    report.cases_per_street = per_street
    report.cases = sum(per_street.values())
    report.seconds = time.perf_counter() - t0
    return report


def _add(writer: CaseBaseWriter, street: str, table: Any, seen: "_Seen | None",
         progress: Optional[Callable[[int], None]]) -> int:
    """Add a batch of an input's cases (without the duplicates ``seen`` drops); returns how many were added."""
    n = table.num_rows
    if seen is not None:
        table = seen.keep(street, table)
    if table.num_rows:
        writer.add_table(street, table)
    if progress is not None:
        progress(n)
    return table.num_rows


def _checksums(cb: CaseBase) -> dict[str, str]:
    """Source name -> SHA-256 of the sources a case base lists with a checksum."""
    return {str(e.get("source", "")): str(e["sha256"]) for e in cb.manifest.sources if e.get("sha256")}


def _shared_sources(bases: Sequence[CaseBase], report: MergeReport) -> set[str]:
    """The checksums of sources two or more inputs hold (listed in ``report.shared_sources``,
    with a warning each unless the merge dedupes); returns them."""
    holders: dict[str, list[tuple[CaseBase, list[str]]]] = {}
    for cb in bases:
        names: dict[str, list[str]] = {}
        for name, sha in _checksums(cb).items():
            names.setdefault(sha, []).append(name)
        for sha, mine in names.items():
            holders.setdefault(sha, []).append((cb, sorted(mine)))
    shared = {sha: held for sha, held in holders.items() if len(held) > 1}
    for sha, held in sorted(shared.items(), key=lambda x: x[1][0][1]):
        names = sorted({n for _, mine in held for n in mine})
        cases = {str(cb.path): sum(int(e.get("cases", 0)) for e in cb.manifest.sources
                                   if str(e.get("source", "")) in mine) for cb, mine in held}
        report.shared_sources.append({"sha256": sha, "sources": names, "inputs": [str(cb.path) for cb, _ in held],
                                      "cases": cases})
        if not report.dedupe:
            report.warnings.append(
                f"the inputs {', '.join(str(cb.path) for cb, _ in held)} share the source {' = '.join(names)} "
                f"(sha256 {sha[:12]}): its cases are merged once per input ({counted(sum(cases.values()), 'case')}); "
                f"{DEDUPE_HINT}")
    return set(shared)


class _Seen:
    """The identities of the cases of shared sources kept so far (see the module docstring)."""

    def __init__(self, shared: set[str]) -> None:
        self.shared = shared
        self.kept: dict[tuple[Any, ...], int] = {}  # identity -> copies kept (the most any input held so far)
        self.mine: dict[tuple[Any, ...], int] = {}  # identity -> copies met in the current input
        self.sha: dict[str, str] = {}
        self.dropped = 0
        self.dropped_per_source: dict[str, int] = {}

    def next_input(self, cb: CaseBase) -> None:
        for key, n in self.mine.items():
            self.kept[key] = max(self.kept.get(key, 0), n)
        self.mine = {}
        self.sha = {name: sha for name, sha in _checksums(cb).items() if sha in self.shared}

    def keep(self, street: str, table: Any) -> Any:
        """``table`` without the cases an earlier input gave already."""
        import pyarrow as pa

        if not self.sha:
            return table
        cols = [table.column(c).to_pylist() for c in ("source", "hand_id", "player", "position", "history")]
        mask = []
        for source, hand, player, position, history in zip(*cols):
            sha = self.sha.get(source or "")
            if sha is None or hand is None:
                mask.append(True)
                continue
            key = (sha, street, hand, player, position, history)
            n = self.mine[key] = self.mine.get(key, 0) + 1
            keep = n > self.kept.get(key, 0)
            if not keep:
                self.dropped += 1
                self.dropped_per_source[sha] = self.dropped_per_source.get(sha, 0) + 1
            mask.append(keep)
        return table if all(mask) else table.filter(pa.array(mask, pa.bool_()))


def _as_table(batch: Any, schema: Any) -> Any:
    import pyarrow as pa

    table = pa.Table.from_batches([batch])
    return table if table.schema.equals(schema) else table.cast(schema)


class FeatureColumns:
    """A stored feature set as a writer needs it (its name and columns; no rows are computed):
    what writes cases copied from case bases (merge, condense) hands ``CaseBaseWriter``.

    >>> FeatureColumns("casper", {"flop": ["hand_strength"]}).feature_names("flop")
    ['hand_strength']
    """

    def __init__(self, name: str, features: dict[str, list[str]]) -> None:
        self.name = name
        self._features = features

    def feature_names(self, street: str) -> list[str]:
        return list(self._features[street])
