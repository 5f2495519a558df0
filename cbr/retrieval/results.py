"""What retrieval answers: the retrieved cases, the probability triple they vote for, and
the explanation of that triple.

>>> r = Retrieval(ids=np.array([4, 9]), similarities=np.array([1.0, 0.98]), fallback=False)
>>> len(r), probability_triple(action_codes(["r", "c", "f", "r", "c", "c", "f", "f", "f", "r"])[r.ids])
(2, (0.0, 0.5, 0.5))
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from cbr.errors import CBRError, counted

__all__ = ["ACTIONS", "QueryError", "Retrieval", "Explanation", "probability_triple", "action_codes", "vote_weights",
           "action_totals", "triple_of_totals"]

ACTIONS = ("f", "c", "r")


class QueryError(CBRError, ValueError):
    """A query, case array or action list of the wrong shape, type or value."""


# ---------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Retrieval:
    """Retrieved cases: ids (row numbers) and global similarities, most similar first
    (ties by id). ``fallback`` is True when no case reached the threshold and the
    ``fallback_k`` most similar were taken instead."""

    ids: np.ndarray
    similarities: np.ndarray
    fallback: bool

    def __len__(self) -> int:
        return int(self.ids.shape[0])


_CODES = {label: code for code, label in enumerate(ACTIONS)} | {label.upper(): code for code, label in enumerate(ACTIONS)}


def action_codes(actions: Sequence[Any] | np.ndarray) -> np.ndarray:
    """Action labels ``'f'/'c'/'r'`` (or 0/1/2) as int8 codes 0/1/2.

    >>> action_codes(["f", "r", "c"]).tolist(), action_codes([2, 1]).tolist()
    ([0, 2, 1], [2, 1])
    """
    arr = np.asarray(actions)
    if arr.ndim != 1:
        raise QueryError(f"actions must be a 1-d sequence, got shape {arr.shape}")
    if arr.dtype.kind == "U" and arr.size <= 64:  # a retained hand's few rows: a lookup each
        try:
            return np.fromiter((_CODES[a] for a in arr.tolist()), dtype=np.int8, count=arr.size)
        except KeyError:
            pass  # the general path below names the unknown action
    if arr.dtype.kind in "US":
        text = arr.astype(str)
        codes = np.full(arr.shape, -1, dtype=np.int8)
        for code, label in enumerate(ACTIONS):  # either case; compared, not lowered (np.char.lower is slow)
            codes[(text == label) | (text == label.upper())] = code
    elif arr.dtype.kind in "iu":
        codes = arr.astype(np.int64)
    elif arr.dtype.kind == "O" or arr.size == 0:
        return action_codes(np.array([str(a) if isinstance(a, str) else int(a) for a in arr.tolist()])
                            if arr.size else np.zeros(0, dtype=np.int8))
    else:
        raise QueryError(f"actions must be 'f'/'c'/'r' or 0/1/2, got dtype {arr.dtype}")
    bad = (codes < 0) | (codes > 2)
    if bad.any():
        raise QueryError(f"unknown action {arr[bad][0]!r}; actions are 'f', 'c', 'r' (or 0, 1, 2)")
    return codes.astype(np.int8)


def vote_weights(similarities: np.ndarray | None, n: int, weighted: bool) -> np.ndarray:
    """How much each of ``n`` retrieved cases' action counts in the vote (float64): 1 each,
    or with ``weighted`` its similarity (negative ones as 0; all 0: 1 each again).

    >>> vote_weights(np.array([0.5, 1.0]), 2, True).tolist(), vote_weights(None, 2, False).tolist()
    ([0.5, 1.0], [1.0, 1.0])
    """
    weights = np.ones(n, dtype=np.float64)
    if weighted:
        if similarities is None:
            raise QueryError("a weighted triple needs the similarities")
        sims = np.asarray(similarities, dtype=np.float64)
        if sims.shape != (n,):
            raise QueryError(f"{counted(n, 'action')} but {sims.shape} similarities")
        if not np.isfinite(sims).all():
            raise QueryError("similarities must be finite")
        sims = np.maximum(sims, 0.0)
        if sims.sum() > 0:
            weights = sims
    return weights


def action_totals(codes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per action code 0/1/2 (fold, check/call, bet/raise) the summed vote ``weights`` (float64 ``(3,)``).

    >>> action_totals(np.array([2, 0, 2], np.int8), np.array([1.0, 0.5, 0.25])).tolist()
    [0.5, 0.0, 1.25]
    """
    return np.bincount(codes, weights=weights, minlength=3)


def triple_of_totals(totals: np.ndarray) -> tuple[float, float, float]:
    """The probability triple of per-action totals: each over their sum.

    >>> triple_of_totals(np.array([0.5, 0.0, 1.5]))
    (0.25, 0.0, 0.75)
    """
    total = totals.sum()
    return (float(totals[0] / total), float(totals[1] / total), float(totals[2] / total))


def probability_triple(actions: Sequence[Any] | np.ndarray, similarities: np.ndarray | None = None,
                       weighted: bool = False) -> tuple[float, float, float]:
    """``(fold, check/call, bet/raise)`` frequencies of the retrieved cases' actions: the one
    function from neighbours to class probabilities (:func:`vote_weights`, then
    :func:`action_totals`, then :func:`triple_of_totals`).

    With ``weighted=True`` each action counts with its case's similarity (cases of
    similarity 0 then count nothing; if all are 0 the plain frequencies are used).

    >>> probability_triple(["r", "r", "c", "r"])
    (0.0, 0.25, 0.75)
    >>> probability_triple(["f", "r"], np.array([0.5, 1.0]), weighted=True)
    (0.3333333333333333, 0.0, 0.6666666666666666)
    """
    codes = action_codes(actions)
    if codes.size == 0:
        raise QueryError("no cases to form a probability triple from")
    return triple_of_totals(action_totals(codes, vote_weights(similarities, codes.shape[0], weighted)))


@dataclass(frozen=True)
class Explanation:
    """Why the triple is what it is: every retrieved case with its id, global similarity,
    local similarity per feature and action. ``provenance`` is left for the case store,
    which joins it through the ids (row numbers of the street's case table) with
    :meth:`with_provenance`."""

    street: str
    feature_names: tuple[str, ...]
    weights: tuple[float, ...]
    query: np.ndarray
    ids: np.ndarray
    similarities: np.ndarray
    local: np.ndarray
    actions: tuple[str, ...]
    triple: tuple[float, float, float]
    fallback: bool
    weighted: bool
    provenance: tuple[Any, ...] | None = field(default=None)

    def with_provenance(self, rows: Sequence[Any]) -> "Explanation":
        """A copy with one provenance record per retrieved case (same order as ``ids``)."""
        rows = tuple(rows)
        if len(rows) != len(self.ids):
            raise QueryError(f"{len(rows)} provenance records for {counted(len(self.ids), 'case')}")
        return replace(self, provenance=rows)

    def head(self, k: int) -> "Explanation":
        """A copy with only the ``k`` most similar cases (the triple, the query and the
        weights unchanged): what a caller shows when it shows ``k`` cases."""
        if k >= len(self.ids):
            return self
        k = max(0, int(k))
        return replace(self, ids=self.ids[:k], similarities=self.similarities[:k], local=self.local[:k],
                       actions=self.actions[:k],
                       provenance=None if self.provenance is None else self.provenance[:k])

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        cases = []
        for j in range(len(self.ids)):
            case = {"id": int(self.ids[j]), "similarity": float(self.similarities[j]),
                    "action": self.actions[j],
                    "local": {n: float(v) for n, v in zip(self.feature_names, self.local[j])}}
            if self.provenance is not None:
                case["provenance"] = self.provenance[j]
            cases.append(case)
        return {"street": self.street, "triple": list(self.triple), "fallback": self.fallback,
                "weighted": self.weighted,
                "query": {n: float(v) for n, v in zip(self.feature_names, self.query)},
                "weights": dict(zip(self.feature_names, self.weights)), "cases": cases}
