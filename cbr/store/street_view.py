"""A street's retrieval data as the open case base keeps it: one copy per open case base,
extended by the store whenever it takes new cases.

What play retrieves from, per street: the street's :class:`~cbr.retrieval.CaseIndex`
(its case rows), every case's action code and outcome (:class:`~cbr.retrieval.aggregate.Labels`,
by index id) and every case's ``case_id``. :meth:`~cbr.store.CaseBase.street_view` makes a
:class:`StreetView` of them once per case base, street and similarity configuration, and the
case base extends it in place (amortised doubling) when it takes cases: its own appends and
what :meth:`~cbr.store.CaseBase.refresh` reads of other processes' appends. Every user of the
case base (the bots handed one :class:`~cbr.store.shared.SharedCaseBase`) reads the same
arrays, and no one catches up row by row.

>>> import tempfile, numpy as np
>>> from cbr.store import CaseBase
>>> from cbr.store.writer import CaseBaseWriter
>>> root = tempfile.mkdtemp()
>>> with CaseBaseWriter(f"{root}/demo", build_index=False) as w:
...     ids = w.add_rows("flop", np.ones((2, 12), np.float32), "cr")
>>> cb = CaseBase.open(f"{root}/demo")
>>> view = cb.street_view("flop")
>>> len(view), view.actions.tolist()
(2, [1, 2])
>>> _ = cb.append("flop", np.zeros(12), "f", outcome=-1.0)
>>> cb.street_view("flop") is view, len(view), view.actions.tolist(), float(view.outcomes[-1]), view.index.n_cases_
(True, 3, [1, 2, 0], -1.0, 3)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from cbr.errors import counted

if TYPE_CHECKING:  # pragma: no cover
    from cbr.retrieval import CaseIndex
    from cbr.store.loaded import CaseArrays
    from cbr.store.parts import RowBatch

__all__ = ["StreetView"]


class StreetView:
    """One street's retrieval data, kept current by the case base that made it.

    ``street``; ``index``: the street's :class:`~cbr.retrieval.CaseIndex` (None while the
    street has no case); ``labels``: every case's action code and outcome in index order
    (pass it as the codes of an aggregate retrieval); :attr:`case_ids`, :attr:`actions` and
    :attr:`outcomes`: views of the first ``len(self)`` entries (read-only by convention: they
    are the case base's). ``own_index``: the index was built for a similarity configuration
    other than the case base's, so :meth:`extend` grows it too (the case base grows its own)."""

    __slots__ = ("street", "index", "labels", "own_index", "_case_ids")

    def __init__(self, street: str, index: "Optional[CaseIndex]", cases: "CaseArrays", *, own_index: bool) -> None:
        from cbr.retrieval import action_codes
        from cbr.retrieval.aggregate import Labels

        self.street = street
        self.index = index
        self.own_index = own_index
        self.labels = Labels(action_codes(cases.actions), cases.outcomes)
        self._case_ids = np.array(cases.case_ids, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.labels)

    def __repr__(self) -> str:
        return f"StreetView({self.street!r}, {counted(len(self), 'case')})"

    @property
    def case_ids(self) -> np.ndarray:
        """Every case's ``case_id``, by index id."""
        return self._case_ids[: len(self)]

    @property
    def actions(self) -> np.ndarray:
        """Every case's action code (int8 0/1/2 = fold, check/call, bet/raise), by index id."""
        return self.labels.codes

    @property
    def outcomes(self) -> Any:
        """Every case's outcome in small bets (NaN = unknown), by index id."""
        return self.labels.outcomes

    def extend(self, ids: np.ndarray, rows: "RowBatch") -> None:
        """Take cases just appended to the street (their case ids and rows), after the cases
        already held: amortised, the arrays grow by doubling, so this costs the new rows only."""
        from cbr.retrieval import action_codes

        k = len(rows)
        if k == 0:
            return
        n0 = len(self)
        if n0 + k > len(self._case_ids):
            grown = np.empty(max(n0 + k, 2 * len(self._case_ids), 64), np.int64)
            grown[:n0] = self._case_ids[:n0]
            self._case_ids = grown
        self._case_ids[n0:n0 + k] = ids
        self.labels.extend(action_codes(rows.actions), rows.outcomes)
        if self.own_index and self.index is not None:
            self.index.add(rows.features)
