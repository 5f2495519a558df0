"""``inspect(casebase)``: what a case base holds, computed through DuckDB.

Counts per street, action and source, how many cases carry an outcome (and their mean,
in small bets), the distribution of every feature per street
(min, mean, max and quantiles), and ``warnings``: what the case base cannot answer
honestly (an action kind missing or rare on a street, no-limit games; see
:mod:`cbr.store.honesty`), as plain data for ``cbr casebase inspect``.

>>> from cbr.store import CaseBase, resolve_casebase
>>> info = inspect(CaseBase.open(resolve_casebase("default")))
>>> flop = info["counts"]["flop"]; sorted(flop), flop["total"] == flop["f"] + flop["c"] + flop["r"]
(['c', 'f', 'r', 'total'], True)
>>> 0 < info["features"]["flop"]["hand_strength"]["q50"] < 1
True
>>> info["outcomes"]["flop"]["known"] == flop["total"]      # built from logs with payoffs
True
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS
from cbr.store.casebase import CaseBase
from cbr.store.honesty import action_warnings, game_warnings
from cbr.store.manifest import ACTIONS, differs_from_manifest
from cbr.store.parts import PART_MENDS

__all__ = ["inspect", "check_parts", "QUANTILES"]

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def check_parts(cb: CaseBase) -> None:
    """What reads every part checks first (inspect, and ``cbr casebase inspect --sql``, whose
    query may read any part): no part is missing or of another size (found by the open,
    :attr:`CaseBase.damaged_parts`), every part holds the cases the manifest lists (its
    footer says how many), and has the CRC-32 the manifest lists
    (:meth:`CaseBase.verify_parts`), else a :class:`CaseBaseError` naming the part and what
    mends it, in ``cbr casebase verify``'s words (:data:`~cbr.store.parts.PART_MENDS`): the
    counts inspect and SQL show are the parts', so a manifest that disagrees is said, not
    hidden behind them."""
    try:
        _check_parts(cb)
    except CaseBaseError as exc:
        raise CaseBaseError(f"{exc} ({PART_MENDS})") from None


def _check_parts(cb: CaseBase) -> None:
    import pyarrow.parquet as pq

    if cb.damaged_parts:
        raise CaseBaseError(next(iter(cb.damaged_parts.values())))
    for s in STREETS:
        for entry in cb.manifest.parts[s]:
            try:
                rows = pq.read_metadata(cb.path / entry["file"]).num_rows
            except Exception:  # noqa: BLE001 - an unreadable footer: its CRC-32 below says it
                continue
            if rows != entry["rows"]:
                raise CaseBaseError(f"{cb.path}: {entry['file']} holds "
                                    f"{differs_from_manifest(rows, entry['rows'], 'cases')}")
    for s in STREETS:
        cb.verify_parts(s)


def inspect(casebase: CaseBase | str | os.PathLike[str]) -> dict[str, Any]:
    """Summary of a case base (opened or a path) as a JSON-ready dict. A case base given by its
    path is opened and closed again here (its reader lock released, also on an error); one given
    opened is left open."""
    if isinstance(casebase, CaseBase):
        return _inspect(casebase)
    with CaseBase.open(Path(casebase)) as cb:
        return _inspect(cb)


def _inspect(cb: CaseBase) -> dict[str, Any]:
    check_parts(cb)  # its counts and quantiles read every part
    m = cb.manifest
    counts: dict[str, dict[str, int]] = {s: {"total": 0, **{a: 0 for a in ACTIONS}} for s in STREETS}
    for street, action, n in cb.sql("SELECT street, action, count(*) FROM cases GROUP BY ALL").fetchall():
        counts[street][action] += int(n)
        counts[street]["total"] += int(n)
    by_source: dict[str, dict[str, int]] = {}
    for source, street, n in cb.sql(
        "SELECT coalesce(source, '') AS source, street, count(*) FROM cases GROUP BY ALL ORDER BY ALL"
    ).fetchall():
        by_source.setdefault(source, {s: 0 for s in STREETS})[street] = int(n)
    outcomes: dict[str, dict[str, Any]] = {s: {"known": 0, "mean": None} for s in STREETS}
    for street, known, mean in cb.sql("SELECT street, count(outcome), avg(outcome) FROM cases GROUP BY ALL").fetchall():
        outcomes[street] = {"known": int(known), "mean": None if mean is None else round(float(mean), 6)}
    features: dict[str, dict[str, dict[str, float | None]]] = {}
    qs = ", ".join(str(q) for q in QUANTILES)
    for s in STREETS:
        features[s] = {}
        for f in m.features[s]:
            col = _ident(f)
            row = cb.sql(
                f"SELECT min({col}), avg({col}), max({col}), quantile_cont({col}, [{qs}]) FROM cases_{s}"
            ).fetchone()
            lo, mean, hi, quant = row if row else (None, None, None, None)
            stats: dict[str, float | None] = {"min": lo, "mean": mean, "max": hi}
            for q, v in zip(QUANTILES, quant or [None] * len(QUANTILES)):
                stats[f"q{round(q * 100):02d}"] = v
            features[s][f] = {k: (None if v is None else round(float(v), 6)) for k, v in stats.items()}
    return {
        "name": m.name,
        "path": str(cb.path),
        "schema_version": m.schema_version,
        "engine_version": m.engine_version,
        "created": m.created,
        "updated": m.updated,
        "feature_set": m.feature_set,
        "similarity": m.similarity,
        "games": [g.get("name") for g in m.games],
        "total": sum(c["total"] for c in counts.values()),
        "counts": counts,
        "outcomes": outcomes,
        "sources": by_source,
        "source_files": [{k: v for k, v in e.items() if k in ("source", "path", "sha256", "bytes")}
                         for e in m.sources if e.get("sha256")],
        "parts": {s: len(m.parts[s]) for s in STREETS},
        "index": {s: (m.index.get(s) or {}).get("cases") for s in STREETS},
        "features": features,
        "warnings": action_warnings(counts) + game_warnings(m.games),
    }
