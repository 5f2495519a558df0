"""The exact engine of retrieval, the grouped scan: what the triple and the explanation need,
without touching every retrieved case in Python.

The triple needs only per-action totals (counts, or similarity sums when weighted; outcome
sums for best-outcome re-use) and the explanation only the most similar cases. An
:class:`Aggregate` holds exactly that; :meth:`~cbr.retrieval.BruteForceBackend.aggregate`
computes it for every backend, equal to what numpy brute force over all cases gives: the
same hit count and action counts, the same top ids and similarities (ties by id ascending),
and the same sums up to float rounding (they are added in another order).

How: a :class:`GroupedLayout` of the cases. A column is a *key* column when its measure is
not linear (its local similarity is computed by numpy, as the definition does) or when it
holds few distinct values (betting features: counts, pot odds); the others are *free*
(linear measures: hand strength, potentials). Cases are grouped by their key values and, in
a group, sorted by the free column of largest weight. For a query, numpy computes each key
column's weighted terms once per distinct value (the definition's own operations, so the
same bits), and the C kernel ``evaluator_ext._retrieval.scan`` (GIL released) goes over the
groups: it skips a group whose bound (every free column a perfect match) is below the
threshold, finds by binary search the window of the sort column that can still reach it,
scores the window's rows with exactly the float64 operations of
:func:`cbr.similarity.similarity_into`, and adds up the hits per action and the top ``k``.
Rounding is monotone, so both bounds bound the computed similarities bit for bit: no case at
or above the threshold is ever skipped.

Cases appended after the layout was built (``add``) are a tail: most of it gets a layout of its
own (:func:`tail_rows_left_raw`), and the few appended since that are a :class:`RawTail`, grown
by appends, every case scored by the kernel ``scan_rows`` (the same operations, without the
grouping); the layout is rebuilt once the tail outgrows a quarter of it. ``save`` writes the layout beside the index
and ``load`` (also memory-mapped) reads it back.

>>> from cbr.similarity import default_casper
>>> from cbr.retrieval import CaseIndex
>>> X = np.tile(np.array([[2, 1, 2, 0, 0, 1, 0.25, 0.9, 0, 0, 12, 1]], np.float32), (30, 1))
>>> X[:, 7] = np.linspace(0, 1, 30)
>>> index = CaseIndex(similarity=default_casper().street("river")).fit(X)
>>> agg = index.aggregate(X[29], np.array([2] * 15 + [1] * 15, np.int8), top=3)
>>> len(agg), agg.top_ids.tolist(), agg.triple(weighted=False)
(6, [29, 28, 27], (0.0, 1.0, 0.0))
"""
from __future__ import annotations

import math
import os
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from cbr.errors import CaseBaseError, CBRError, counted
from cbr.retrieval.results import QueryError, triple_of_totals
from cbr.similarity import StreetSimilarity, local_into
from cbr.similarity.measures import LinearSimilarity

__all__ = ["Aggregate", "GroupedLayout", "Labels", "RawTail", "native_scan", "native_scan_rows", "MAX_KEY_VALUES", "LAYOUT_FILES", "REBUILD_TAIL"]

#: A linear column with at most this many distinct values is a key column.
MAX_KEY_VALUES = 256
#: The layout is rebuilt once the cases appended since exceed this many and a quarter of it.
REBUILD_TAIL = 50_000
#: The cases appended since the layout are themselves laid out (a second, smaller layout,
#: :func:`tail_rows_left_raw`) once more than this many are left in the :class:`RawTail`.
RAW_TAIL = 512
#: ``tail_rows_left_raw``'s factor (the cost ratio of a rebuild to a query, per case).
TAIL_BALANCE = 64


def tail_rows_left_raw(tail: int) -> int:
    """How many of ``tail`` appended cases may stay unlaid (in the :class:`RawTail`, every case
    scored on every query) before the tail's own layout is rebuilt: ``max(RAW_TAIL, sqrt(64 *
    tail))``. The square root balances the rebuild's cost per case against the per-query cost of
    the unlaid cases in live play (about one query per case appended).

    >>> tail_rows_left_raw(1000), tail_rows_left_raw(50_000)
    (512, 1788)
    """
    return max(RAW_TAIL, int(math.isqrt(TAIL_BALANCE * max(0, int(tail)))))
LAYOUT_FILES = ("aggregate.npz", "agg_free.npy", "agg_ids.npy", "agg_gcodes.npy", "agg_gstart.npy")


def native_scan_rows() -> Any:
    """``evaluator_ext._retrieval.scan_rows`` (for a :class:`RawTail`), or None when the
    extension is not built (raises with ``CBR_REQUIRE_NATIVE=1``, as :func:`native_scan`)."""
    return _kernel("scan_rows")


def native_scan() -> Any:
    """``evaluator_ext._retrieval.scan``, or None when the extension is not built (then
    :meth:`~cbr.retrieval.BruteForceBackend.aggregate` aggregates the full retrieval in numpy;
    with ``CBR_REQUIRE_NATIVE=1`` a missing extension raises instead)."""
    return _kernel("scan")


def _kernel(name: str) -> Any:
    """``evaluator_ext._retrieval.<name>``, or None without the extension (an error with
    ``CBR_REQUIRE_NATIVE=1``)."""
    try:
        from evaluator_ext import _retrieval

        return getattr(_retrieval, name)
    except (ImportError, AttributeError) as exc:  # not built, or built before the kernel existed
        if os.environ.get("CBR_REQUIRE_NATIVE") == "1":
            raise CBRError(f"CBR_REQUIRE_NATIVE=1 but evaluator_ext._retrieval.{name} is not built: {exc}") from None
        return None


@dataclass(frozen=True)
class Aggregate:
    """What the cases retrieved for one query add up to.

    ``n``: how many were retrieved (the threshold's hits, or the fallback's top ``fallback_k``);
    per action code 0/1/2 (fold, check/call, bet/raise): ``counts``, ``pos_sims`` (summed
    similarities, negative ones as 0: the weighted vote), ``known`` and ``outcome_sums``
    (cases with a known outcome and their outcomes' sum; zeros without outcomes);
    ``sim_sum``: the summed similarities; ``top_ids`` / ``top_sims``: the most similar
    retrieved cases, similarity descending then id ascending."""

    n: int
    fallback: bool
    counts: np.ndarray
    pos_sims: np.ndarray
    known: np.ndarray
    outcome_sums: np.ndarray
    sim_sum: float
    top_ids: np.ndarray
    top_sims: np.ndarray

    def __len__(self) -> int:
        return self.n

    def totals(self, weighted: bool) -> np.ndarray:
        """Per action the vote (:func:`~cbr.retrieval.results.vote_weights`' rule: similarities
        when ``weighted`` and any is positive, else counts)."""
        return self.pos_sims.copy() if weighted and self.pos_sims.sum() > 0 else self.counts.copy()

    def triple(self, weighted: bool) -> tuple[float, float, float]:
        """The probability triple of :meth:`totals`."""
        return triple_of_totals(self.totals(weighted))


def aggregate_of(ids: np.ndarray, sims: np.ndarray, codes: np.ndarray, outcomes: Optional[np.ndarray],
                 top: int, fallback: bool) -> Aggregate:
    """The :class:`Aggregate` of retrieved ``ids`` / ``sims`` (sorted, most similar first), in numpy."""
    chosen = codes[ids].astype(np.int64)
    counts = np.bincount(chosen, minlength=3).astype(np.float64)
    pos = np.bincount(chosen, weights=np.maximum(sims, 0.0), minlength=3)
    known = np.zeros(3)
    osum = np.zeros(3)
    if outcomes is not None:
        out = outcomes[ids]
        ok = ~np.isnan(out)
        known = np.bincount(chosen[ok], minlength=3).astype(np.float64)
        osum = np.bincount(chosen[ok], weights=out[ok], minlength=3)
    return Aggregate(int(ids.shape[0]), fallback, counts, pos, known, osum, float(sims.sum()),
                     ids[:top].copy(), sims[:top].copy())


def key_tables_of(similarity: StreetSimilarity, key_cols: np.ndarray, values: Any, offsets: np.ndarray,
                  cache: dict[tuple[float, ...], np.ndarray], q: np.ndarray) -> np.ndarray:
    """Per key column ``key_cols[i]`` the weighted local similarity of ``q`` to each of its
    distinct ``values[i]``, concatenated (float64; column ``i`` at ``offsets[i]``) with the
    definition's own numpy operations; kept in ``cache`` by the query's key values."""
    key = tuple(q[key_cols].tolist())
    hit = cache.get(key)
    if hit is not None:
        return hit
    specs = similarity.feature_specs
    out = np.empty(int(offsets[-1]), dtype=np.float64)
    if len(cache) >= 4096:
        cache.clear()
    for i, (j, vals) in enumerate(zip(key_cols.tolist(), values)):
        column = cache.get(("column", i, key[i]))  # one column's values recur far more than all of them
        if column is None:
            spec = specs[j]
            column = np.multiply(local_into(spec.measure_obj, key[i], vals, np.empty(vals.shape[0], np.float64)),
                                 spec.weight)
            cache[("column", i, key[i])] = column  # type: ignore[index]
        out[offsets[i]: offsets[i + 1]] = column
    cache[key] = out
    return out


def kept_column_tables(cache: dict, same: Sequence[bool]) -> dict:
    """The per-column entries of a :func:`key_tables_of` cache for the key columns whose distinct
    values are unchanged (``same[i]``): what a grown or rebuilt layout can keep.

    >>> kept_column_tables({("column", 0, 1.0): "a", ("column", 1, 2.0): "b", (1.0, 2.0): "ab"}, [True, False])
    {('column', 0, 1.0): 'a'}
    """
    return {k: v for k, v in cache.items() if k[0] == "column" and same[k[1]]}


class GroupedLayout:
    """The cases ``0 .. n_rows - 1`` of a street grouped by key columns and sorted by a free
    column inside each group (see the module docstring); :meth:`scan` aggregates a query."""

    def __init__(self, similarity: StreetSimilarity, key_cols: np.ndarray, free_cols: np.ndarray,
                 sort_free: int, values: list[np.ndarray], gcodes: np.ndarray, gstart: np.ndarray,
                 free: np.ndarray, ids: np.ndarray) -> None:
        self.similarity = similarity
        self.key_cols = key_cols
        self.free_cols = free_cols
        self.sort_free = sort_free
        self.values = values          # per key column its distinct values (float32, ascending)
        self.gcodes = gcodes          # (groups, keys) int32: each group's value index per key column
        self.gstart = gstart          # (groups + 1,) int64 offsets
        self.free = free              # (free columns, rows) float32, column by column, layout order
        self.ids = ids                # (rows,) int64 case ids, layout order
        self._program()

    @property
    def n_rows(self) -> int:
        return int(self.ids.shape[0])

    def _program(self) -> None:
        specs = self.similarity.feature_specs
        key_pos = {int(c): i for i, c in enumerate(self.key_cols)}
        free_pos = {int(c): i for i, c in enumerate(self.free_cols)}
        kind, index = [], []
        total = 0.0
        for j, spec in enumerate(specs):
            if spec.weight == 0.0:
                continue
            total += spec.weight          # summed as similarity_into sums it
            if j in key_pos:
                kind.append(0)
                index.append(key_pos[j])
            elif j in free_pos:
                if type(spec.measure_obj) is not LinearSimilarity:
                    raise CaseBaseError(f"aggregate layout: free column {spec.name!r} must use the linear measure")
                kind.append(1)
                index.append(free_pos[j])
            else:
                raise CaseBaseError(f"aggregate layout: weighted column {spec.name!r} is neither key nor free")
        self._kind = np.array(kind, np.int8)
        self._index = np.array(index, np.int32)
        self._total = total
        self._frange = np.array([specs[c].measure_obj.range for c in self.free_cols], np.float64)
        self._offsets = np.zeros(len(self.values) + 1, dtype=np.int64)
        np.cumsum([v.shape[0] for v in self.values], out=self._offsets[1:])
        self._tables: dict[tuple[float, ...], np.ndarray] = {}
        if self.gcodes.dtype != np.int32 or not self.gcodes.flags.c_contiguous:
            self.gcodes = np.ascontiguousarray(self.gcodes, dtype=np.int32)
        self._fw = np.array([specs[c].weight for c in self.free_cols], np.float64)

    @classmethod
    def build(cls, similarity: StreetSimilarity, rows: np.ndarray,
              max_key_values: Optional[int] = None) -> "GroupedLayout":
        """Group ``rows`` (float32 ``(n, d)``, ids = row numbers); a linear column with more
        than ``max_key_values`` (default :data:`MAX_KEY_VALUES`) distinct values is free."""
        max_key_values = MAX_KEY_VALUES if max_key_values is None else max_key_values
        rows = np.asarray(rows, dtype=np.float32)
        n = rows.shape[0]
        key_cols, free_cols, values, codes = [], [], [], []
        for j, spec in enumerate(similarity.feature_specs):
            if spec.weight == 0.0:
                continue
            col = np.ascontiguousarray(rows[:, j])
            linear = type(spec.measure_obj) is LinearSimilarity
            if linear:
                # a cheap look at a sample first: a continuous column is not sorted in full
                sample = col[:: max(1, n // 50_000)]
                if np.unique(sample).shape[0] > max_key_values:
                    free_cols.append(j)
                    continue
            vals, inv = np.unique(col, return_inverse=True)
            if linear and vals.shape[0] > max_key_values:
                free_cols.append(j)
                continue
            key_cols.append(j)
            values.append(vals.astype(np.float32))
            codes.append(inv.reshape(-1).astype(np.int64))
        # one int64 code per key tuple (mixed radix), else the tuples themselves
        radix = [v.shape[0] for v in values]
        if codes and float(np.prod(np.array(radix, dtype=np.float64))) < 2.0 ** 62:
            combined = np.zeros(n, dtype=np.int64)
            for c, r in zip(codes, radix):
                combined = combined * r + c
            uniq, group = np.unique(combined, return_inverse=True)
            gcodes = np.empty((uniq.shape[0], len(codes)), dtype=np.int32)
            rest = uniq.copy()
            for i in range(len(codes) - 1, -1, -1):
                gcodes[:, i] = rest % radix[i]
                rest //= radix[i]
        elif codes:
            stacked = np.stack(codes, axis=1)
            gc, group = np.unique(stacked, axis=0, return_inverse=True)
            gcodes = gc.astype(np.int32)
        else:
            group = np.zeros(n, dtype=np.int64)
            gcodes = np.zeros((1, 0), dtype=np.int32)
        group = group.reshape(-1)
        free_arr = np.ascontiguousarray(rows[:, free_cols]) if free_cols else np.zeros((n, 0), np.float32)
        weights = similarity.weights
        sort_free = int(np.argmax(weights[free_cols])) if free_cols else 0
        order = (np.lexsort((free_arr[:, sort_free], group)) if free_cols else np.argsort(group, kind="stable"))
        gstart = np.zeros(gcodes.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(group, minlength=gcodes.shape[0]), out=gstart[1:])
        return cls(similarity, np.array(key_cols, np.int64), np.array(free_cols, np.int64), sort_free, values,
                   gcodes, gstart, np.ascontiguousarray(free_arr[order].T), order.astype(np.int64))

    # -- a query ---------------------------------------------------------------------------

    def keep_key_tables(self, older: "GroupedLayout") -> None:
        """Keep ``older``'s cached terms of the key columns whose distinct values this layout
        shares (a rebuilt tail's layout: most columns gain no new value)."""
        if not np.array_equal(self.key_cols, older.key_cols):
            return
        same = [np.array_equal(a, b) for a, b in zip(self.values, older.values)]
        self._tables.update(kept_column_tables(older._tables, same))

    def key_tables(self, q: np.ndarray) -> np.ndarray:
        """Per key column the weighted local similarity of ``q`` to each of its distinct values,
        concatenated (float64; column ``i`` at ``offsets[i]``): the definition's own numpy
        operations. Cached by the query's key values (betting features repeat)."""
        return key_tables_of(self.similarity, self.key_cols, self.values, self._offsets, self._tables, q)

    def scan(self, scan: Any, q: np.ndarray, threshold: float, codes: np.ndarray, outcomes: Optional[np.ndarray],
             top: int, by_row: bool = False) -> tuple[int, tuple, np.ndarray, np.ndarray]:
        """The native scan for query ``q`` (float32 ``(d,)``): ``(hits, sums, top_ids,
        top_sims)`` with ``sums = (counts, pos_sims, known, outcome_sums, sim_sum)``; the labels
        by case id, or with ``by_row`` in the layout's row order (:class:`Labels`)."""
        fq = q[self.free_cols].astype(np.float64)
        top_ids = np.empty(top, dtype=np.int64)
        top_sims = np.empty(top, dtype=np.float64)
        n_top, hits, _, count, pos, known, osum, sim_sum = scan(
            self.free, self.ids, self.gstart, self.gcodes, self.key_tables(q), self._offsets, self._kind,
            self._index, fq, self._frange, self._fw, self.sort_free, self._total, float(threshold), codes, outcomes,
            by_row, top_ids, top_sims)
        sums = (np.array(count), np.array(pos), np.array(known), np.array(osum), float(sim_sum))
        return int(hits), sums, top_ids[:n_top], top_sims[:n_top]

    # -- persistence -----------------------------------------------------------------------

    def save(self, root: Path, write_atomic: Any) -> None:
        """Write ``aggregate.npz`` (the small parts) and the arrays as ``agg_*.npy`` (mappable)."""
        def npy(arr: np.ndarray) -> Any:
            def write(p: Path) -> None:
                with open(p, "wb") as fh:
                    np.save(fh, arr)
            return write

        write_atomic(root / "agg_free.npy", npy(np.ascontiguousarray(self.free)))
        write_atomic(root / "agg_ids.npy", npy(np.ascontiguousarray(self.ids)))
        write_atomic(root / "agg_gcodes.npy", npy(np.ascontiguousarray(self.gcodes)))
        write_atomic(root / "agg_gstart.npy", npy(np.ascontiguousarray(self.gstart)))

        def small(p: Path) -> None:
            with open(p, "wb") as fh:
                np.savez(fh, key_cols=self.key_cols, free_cols=self.free_cols, sort_free=np.int64(self.sort_free),
                         n_rows=np.int64(self.n_rows),
                         **{f"values_{i}": v for i, v in enumerate(self.values)})
        write_atomic(root / "aggregate.npz", small)

    @classmethod
    def load(cls, root: Path, similarity: StreetSimilarity, n_cases: int, mmap: bool) -> Optional["GroupedLayout"]:
        """The layout saved in ``root``, or None when there is none (an index saved before it
        existed: the layout is then built on first use); raises :class:`CaseBaseError` when
        the files are there but inconsistent."""
        if not all((root / f).exists() for f in LAYOUT_FILES):
            return None
        try:
            with np.load(root / "aggregate.npz") as z:
                key_cols, free_cols = z["key_cols"].astype(np.int64), z["free_cols"].astype(np.int64)
                sort_free = int(z["sort_free"])
                n_rows = int(z["n_rows"])
                values = [z[f"values_{i}"] for i in range(key_cols.shape[0])]
            free = np.load(root / "agg_free.npy", mmap_mode="r" if mmap else None)
            ids = np.load(root / "agg_ids.npy", mmap_mode="r" if mmap else None)
            gcodes = np.load(root / "agg_gcodes.npy", mmap_mode="r" if mmap else None)
            gstart = np.load(root / "agg_gstart.npy", mmap_mode="r" if mmap else None)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise CaseBaseError(f"index {root}: cannot read the aggregate layout ({exc})") from None
        d = len(similarity)
        ok = (free.dtype == np.float32 and ids.dtype == np.int64 and free.shape == (free_cols.shape[0], n_rows)
              and ids.shape == (n_rows,) and n_rows <= n_cases and gstart.dtype == np.int64
              and gcodes.dtype == np.int32 and gcodes.ndim == 2
              and gstart.shape == (gcodes.shape[0] + 1,) and gcodes.shape[1:] == (key_cols.shape[0],)
              and gstart[0] == 0 and gstart[-1] == n_rows and np.all(np.diff(gstart) >= 0)
              and np.all((key_cols >= 0) & (key_cols < d)) and np.all((free_cols >= 0) & (free_cols < d))
              and all(gcodes.shape[0] == 0 or (gcodes[:, i].min() >= 0 and gcodes[:, i].max() < v.shape[0])
                      for i, v in enumerate(values))
              and (free_cols.shape[0] == 0 or 0 <= sort_free < free_cols.shape[0]))
        if not ok:
            raise CaseBaseError(f"index {root}: the aggregate layout files do not fit together or the index")
        return cls(similarity, key_cols, free_cols, sort_free, [v.astype(np.float32) for v in values],
                   gcodes, gstart, free, ids)


class RawTail:
    """The cases ``start ..`` appended since the layouts, scored one by one by the native
    ``scan_rows`` straight from the case rows: the weighted columns whose measure is not linear
    are key columns (each case's value number, its distinct values in order of appearance, so
    a case appended never recodes the others; their terms computed by numpy per distinct value,
    as :meth:`GroupedLayout.key_tables`), the linear ones computed in C. Grows by
    :meth:`extend` (the new cases only).

    >>> from cbr.similarity import default_casper
    >>> st = default_casper().street("preflop")
    >>> raw = RawTail(st, 100)
    >>> raw.extend(np.array([[2, 1, 2, 0, 0, 1, 0.25, 9], [2, 1, 2, 0, 1, 1, 0.25, 30]], np.float32))
    >>> raw.n, raw.key_cols.tolist(), [v.tolist() for v in raw.values], raw.codes.tolist()
    (2, [4, 5], [[0.0, 1.0], [1.0]], [[0, 0], [1, 0]])
    """

    def __init__(self, similarity: StreetSimilarity, start: int) -> None:
        specs = similarity.feature_specs
        self.similarity = similarity
        self.start = int(start)
        self.n = 0
        key_cols, kind, index, rng, weight, cols = [], [], [], [], [], []
        total = 0.0
        for j, spec in enumerate(specs):
            if spec.weight == 0.0:
                continue
            total += spec.weight          # summed as similarity_into sums it
            linear = type(spec.measure_obj) is LinearSimilarity
            kind.append(1 if linear else 0)
            index.append(j if linear else len(key_cols))
            rng.append(spec.measure_obj.range if linear else 1.0)
            weight.append(spec.weight)
            cols.append(j)
            if not linear:
                key_cols.append(j)
        self.key_cols = np.array(key_cols, np.int64)
        self._kind = np.array(kind, np.int8)
        self._index = np.array(index, np.int32)
        self._range = np.array(rng, np.float64)
        self._w = np.array(weight, np.float64)
        self._cols = np.array(cols, np.int64)
        self._total = total
        self._gcodes = np.empty((64, len(key_cols)), np.int32)
        self._code_of: list[dict[float, int]] = [{} for _ in key_cols]
        values = tuple(np.zeros(0, np.float32) for _ in key_cols)
        self.view = RawView(0, self._gcodes[:0], values, np.zeros(len(key_cols) + 1, np.int64), {})

    @property
    def values(self) -> tuple[np.ndarray, ...]:
        """Per key column its distinct values (float32), in order of appearance."""
        return self.view.values

    @property
    def codes(self) -> np.ndarray:
        """Each case's value number per key column (int32 ``(n, key columns)``)."""
        return self.view.codes

    def extend(self, rows: np.ndarray) -> None:
        """Append the cases ``start + n ..`` (float32 ``(m, d)``, checked rows). A scan holding
        the previous :attr:`view` is unaffected: arrays it reads are replaced, not changed."""
        m = int(rows.shape[0])
        old = self.view
        n0, n1 = self.n, self.n + m
        if n1 > self._gcodes.shape[0]:
            grown = np.empty((max(n1, 2 * self._gcodes.shape[0]), self._gcodes.shape[1]), np.int32)
            grown[:n0] = self._gcodes[:n0]
            self._gcodes = grown
        values = list(old.values)
        for i, j in enumerate(self.key_cols.tolist()):
            code_of = self._code_of[i]
            new = []
            for r, v in enumerate(rows[:, j].tolist()):   # float32 values as exact Python floats
                c = code_of.get(v)
                if c is None:
                    c = code_of[v] = len(code_of)
                    new.append(v)
                self._gcodes[n0 + r, i] = c
            if new:
                values[i] = np.concatenate([values[i], np.array(new, np.float32)])
        if any(a is not b for a, b in zip(values, old.values)):
            offsets = np.zeros(len(values) + 1, np.int64)
            np.cumsum([v.shape[0] for v in values], out=offsets[1:])
            kept = kept_column_tables(old.tables, [a is b for a, b in zip(values, old.values)])
            self.view = RawView(n1, self._gcodes[:n1], tuple(values), offsets, kept)
        else:
            self.view = RawView(n1, self._gcodes[:n1], old.values, old.offsets, old.tables)
        self.n = n1

    def key_tables(self, view: "RawView", q: np.ndarray) -> np.ndarray:
        """Per key column the weighted local similarity of ``q`` to each of ``view``'s distinct
        values (as :meth:`GroupedLayout.key_tables`; cached by the query's key values)."""
        return key_tables_of(self.similarity, self.key_cols, view.values, view.offsets, view.tables, q)

    def scan(self, scan_rows: Any, view: "RawView", rows: np.ndarray, q: np.ndarray, threshold: float,
             codes: np.ndarray, outcomes: Optional[np.ndarray], top: int) -> tuple[int, tuple, np.ndarray, np.ndarray]:
        """The native scan of ``rows`` (``view``'s cases, float32 ``(view.n, d)`` C-contiguous)
        for query ``q``, labels by case id: as :meth:`GroupedLayout.scan`."""
        top_ids = np.empty(top, dtype=np.int64)
        top_sims = np.empty(top, dtype=np.float64)
        n_top, hits, _, count, pos, known, osum, sim_sum = scan_rows(
            rows, rows.shape[1], self.start, view.codes, self.key_tables(view, q), view.offsets, self._kind,
            self._index, q.astype(np.float64)[self._cols], self._range, self._w, self._total, float(threshold),
            codes, outcomes, top_ids, top_sims)
        sums = (np.array(count), np.array(pos), np.array(known), np.array(osum), float(sim_sum))
        return int(hits), sums, top_ids[:n_top], top_sims[:n_top]


@dataclass(frozen=True)
class RawView:
    """A :class:`RawTail` as of ``n`` cases: their key codes, the key columns' distinct values
    and table offsets, and the key terms computed for them (by query key)."""

    n: int
    codes: np.ndarray
    values: tuple[np.ndarray, ...]
    offsets: np.ndarray
    tables: dict


class Labels:
    """Every case's action code and outcome, copied once and kept beside the layout in its row
    order, so a scan reads them sequentially instead of by case id (at 10M cases the labels by
    id are 90 MB of random reads per query). Pass it as ``codes`` to
    :meth:`~cbr.retrieval.BruteForceBackend.aggregate`; :meth:`extend` with the labels of cases
    appended to the index. The copy is private: later changes to the arrays it was made from
    do not reach it.

    >>> lab = Labels(np.array([2, 1], np.int8), np.array([0.5, np.nan]))
    >>> lab.extend(np.array([0], np.int8), np.array([1.0])); len(lab)
    3
    """

    def __init__(self, codes: Any, outcomes: Any = None) -> None:
        c, o = check_labels(codes, outcomes, 0)
        self._n = int(c.shape[0])
        self._codes = c.copy()
        self._outcomes = None if o is None else o[: c.shape[0]].copy()
        self._by_layout: dict[int, tuple[Any, tuple[np.ndarray, Optional[np.ndarray]]]] = {}

    @property
    def codes(self) -> np.ndarray:
        """Every case's action code (int8 0/1/2), by case id."""
        return self._codes[: self._n]

    @property
    def outcomes(self) -> Optional[np.ndarray]:
        """Every case's outcome (NaN = unknown), by case id; None when not kept."""
        return None if self._outcomes is None else self._outcomes[: self._n]

    def __len__(self) -> int:
        return self._n

    def extend(self, codes: Any, outcomes: Any = None) -> None:
        """Append the labels of cases appended to the index (outcomes: given iff given before).
        Amortised: the arrays grow by doubling, so a retained hand costs its own few labels."""
        c, o = check_labels(codes, outcomes, 0)
        if (o is None) != (self._outcomes is None):
            raise QueryError("outcomes must be given to extend exactly when the labels hold outcomes")
        n0, n1 = self._n, self._n + int(c.shape[0])
        if n1 > self._codes.shape[0]:
            cap = max(n1, 2 * self._codes.shape[0], 64)
            grown = np.empty(cap, np.int8)
            grown[:n0] = self._codes[:n0]
            self._codes = grown
            if self._outcomes is not None:
                more = np.empty(cap, np.float64)
                more[:n0] = self._outcomes[:n0]
                self._outcomes = more
        self._codes[n0:n1] = c
        if o is not None and self._outcomes is not None:
            self._outcomes[n0:n1] = o[: c.shape[0]]
        self._n = n1

    def for_layout(self, layout: "GroupedLayout") -> tuple[np.ndarray, Optional[np.ndarray]]:
        """The labels in ``layout``'s row order (made once per layout; kept for the two
        layouts of an index, its main one and its tail's)."""
        hit = self._by_layout.get(id(layout))
        if hit is None or hit[0] is not layout:
            ids = np.asarray(layout.ids)
            hit = (layout, (self.codes[ids], None if self.outcomes is None else self.outcomes[ids]))
            if len(self._by_layout) >= 2:
                self._by_layout.pop(next(iter(self._by_layout)))
            self._by_layout[id(layout)] = hit
        return hit[1]


def check_labels(codes: Any, outcomes: Any, n: int) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """``codes`` as int8 codes 0..2 (at least ``n``) and ``outcomes`` as float64 (or None)."""
    c = np.asarray(codes)
    if c.dtype != np.int8:
        from cbr.retrieval.results import action_codes

        c = action_codes(c)
    c = np.ascontiguousarray(c)
    if c.ndim != 1 or c.shape[0] < n:
        given = counted(c.shape[0], "action") if c.ndim == 1 else f"actions of shape {c.shape}"
        raise QueryError(f"{given} for {counted(n, 'case')}")
    o = None
    if outcomes is not None:
        o = np.ascontiguousarray(np.asarray(outcomes, dtype=np.float64))
        if o.ndim != 1 or o.shape[0] < c.shape[0]:
            if o.ndim == 1 and o.shape[0] >= n:
                c = c[: o.shape[0]]
            else:
                given = counted(o.shape[0], "outcome") if o.ndim == 1 else f"outcomes of shape {o.shape}"
                raise QueryError(f"{given} for {counted(n, 'case')}")
    return c, o
