"""Local similarity measures: how alike two values of one feature are, in [0, 1].

CASPER (Watson & Rubin, sections V-VI) compares a query with a case feature by feature;
each feature has a *local* similarity. The measures (entry-point group ``cbr.similarity``;
each is a small class):

- ``linear``: ``1 - |x1 - x2| / range``, clipped at 0, ``range = high - low``;
- ``exp``: exponential decay ``exp(-k |x1 - x2|)``;
- ``exact``: 1 if equal else 0 (values compared as float32, like the stored rows);
- ``equity``: for the pre-flop ``hand_strength`` (CASPER's rank 1..169, which is ordinal):
  ranks are mapped to their equity (``evaluator_ext.preflop.PREFLOP_EQUITY``, linear
  between whole ranks) before a linear difference, ``1 - |e1 - e2| / (e(low) - e(high))``.
  With CASPER's weights and threshold 0.97, a pocket-aces query retrieves ranks 1..19 with
  ``linear`` but only pocket aces with ``equity`` (KK's equity is already 0.06 below).

Every feature also declares its domain ``[low, high]``. Retrieval (``cbr.retrieval``)
needs, per measure, a slope ``c > 0`` with a lower bound of the dissimilarity that is
linear in the difference of the values *clipped to the domain*::

    1 - s(x1, x2) >= c * |clip(x1) - clip(x2)|        for all x1, x2         (B)

Because clipping is 1-Lipschitz and never lengthens a difference beyond ``R = high - low``,
(B) holds whenever ``1 - s`` is a non-decreasing function ``g`` of ``t = |x1 - x2|`` and
``c * t <= g(t)`` on ``[0, R]``; the largest such ``c`` is ``min g(t)/t`` over ``(0, R]``:

- linear: ``g(t) = min(1, t/R)`` so ``c = 1/R`` (the bound is exact inside the domain);
- exp: ``g(t) = 1 - exp(-k t)`` is concave with ``g(0) = 0``, so ``g(t)/t`` decreases and the
  minimum is the chord at ``R``: ``c = (1 - exp(-k R)) / R``. Beyond ``R`` the clipped
  difference stays at most ``R`` and ``c R = g(R) <= g(t)``: the value at ``R`` is used;
- exact: ``g(t) = 1`` for ``t > 0`` and ``g(0) = 0``, so ``c = 1/R``; it is 0 only when the
  clipped values are equal, which equal values always are.

A measure may instead be linear in a monotone *transform* of the value: it then provides
``bound_transform(values)`` (non-decreasing, of the values clipped to the domain, 0 at
``low``) and its slope in transformed units; retrieval's bound space uses the transform
in place of ``clip(x) - low``. ``equity`` does: ``g = |T(x1) - T(x2)| / (T(high) - T(low))``,
so ``c = 1 / (T(high) - T(low))`` and the bound is exact.

>>> m = measure_class("linear")(low=0, high=10)
>>> m(5.0, np.array([5.0, 7.5])).tolist(), m.lower_bound_slope()
([1.0, 0.75], 0.1)
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar, Optional, Protocol, runtime_checkable

import numpy as np

__all__ = ["LocalMeasure", "LinearSimilarity", "ExponentialSimilarity", "ExactMatch", "EquitySimilarity",
           "BUILTIN_MEASURES", "measure_class", "measure_parameters", "check_measure"]


@runtime_checkable
class LocalMeasure(Protocol):
    """What a ``cbr.similarity`` plugin provides.

    The class is built as ``cls(low=..., high=..., **params)`` (it raises ``ValueError``
    for bad parameters); ``__call__(query_value, column)`` returns the local similarities
    (float64, in [0, 1]) of one query value against a column of case values;
    optionally ``into(query_value, column, out)`` writes the same values into a float64
    buffer ``out`` without temporaries (retrieval's fast path; without it ``__call__`` is used);
    ``lower_bound_slope()`` returns the ``c`` of bound (B) in the module docstring;
    ``params()`` returns the parameters beyond low/high (for TOML output).
    """

    name: ClassVar[str]

    def __call__(self, query_value: float, column: np.ndarray) -> np.ndarray: ...

    def lower_bound_slope(self) -> float: ...

    def params(self) -> dict[str, float]: ...


def _as_f32_value(value: float) -> float:
    return float(np.float32(value))


def _abs_diff_into(query_value: float, column: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out = |float64(float32(column)) - float64(float32(query_value))|``, in place.

    The float32 -> float64 conversion is exact, so casting inside the subtraction gives the
    same bits as converting first."""
    col = column if isinstance(column, np.ndarray) and column.dtype == np.float32 \
        else np.asarray(column, dtype=np.float32)
    np.subtract(col, np.float64(_as_f32_value(query_value)), out=out, dtype=np.float64)
    return np.abs(out, out=out)


def _out_for(column: np.ndarray) -> np.ndarray:
    return np.empty(np.shape(column), dtype=np.float64)


class _DomainMeasure:
    """Shared part: the feature's domain ``[low, high]``, checked once."""

    name: ClassVar[str] = "?"

    def __init__(self, *, low: float, high: float) -> None:
        low, high = float(low), float(high)
        if not (math.isfinite(low) and math.isfinite(high)) or not high > low:
            raise ValueError(f"domain must be finite with low < high, got low={low}, high={high}")
        self.low = low
        self.high = high

    @property
    def range(self) -> float:
        """``high - low``, the largest difference the domain allows."""
        return self.high - self.low

    def params(self) -> dict[str, float]:
        return {}

    def __call__(self, query_value: float, column: np.ndarray) -> np.ndarray:
        """Local similarities of ``query_value`` against ``column`` (float64): :meth:`into`
        on a fresh buffer, so the definition and retrieval's in-place path are one code."""
        return self.into(query_value, column, _out_for(column))

    def into(self, query_value: float, column: np.ndarray, out: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}(low={self.low!r}, high={self.high!r}{extra})"

    def __eq__(self, other: object) -> bool:
        return (type(self) is type(other) and self.low == other.low  # type: ignore[attr-defined]
                and self.high == other.high and self.params() == other.params())  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.low, self.high, tuple(sorted(self.params().items()))))


class LinearSimilarity(_DomainMeasure):
    """``1 - |x1 - x2| / (high - low)``, clipped at 0.

    >>> m = LinearSimilarity(low=0, high=4)
    >>> m(1.0, np.array([1, 2, 9], np.float32)).tolist()
    [1.0, 0.75, 0.0]
    >>> m.lower_bound_slope()
    0.25
    """

    name: ClassVar[str] = "linear"

    def into(self, query_value: float, column: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``out[:] = max(1 - |column - query_value| / range, 0)`` in float64, in place.

        >>> out = np.empty(2)
        >>> LinearSimilarity(low=0, high=4).into(1.0, np.array([1, 3], np.float32), out).tolist()
        [1.0, 0.5]
        """
        _abs_diff_into(query_value, column, out)
        np.divide(out, self.range, out=out)
        np.subtract(1.0, out, out=out)
        return np.maximum(out, 0.0, out=out)

    def lower_bound_slope(self) -> float:
        return 1.0 / self.range


class ExponentialSimilarity(_DomainMeasure):
    """Exponential decay ``exp(-k |x1 - x2|)``; small differences already cost a lot.

    >>> m = ExponentialSimilarity(low=0, high=4, k=1.0)
    >>> round(float(m(0.0, np.array([1.0]))[0]), 4)
    0.3679
    >>> round(m.lower_bound_slope(), 4)   # chord of 1 - exp(-k t) over [0, 4]
    0.2454
    """

    name: ClassVar[str] = "exp"

    def __init__(self, *, low: float, high: float, k: float = 1.0) -> None:
        super().__init__(low=low, high=high)
        k = float(k)
        if not (math.isfinite(k) and k > 0):
            raise ValueError(f"decay k must be a positive number, got {k}")
        self.k = k

    def params(self) -> dict[str, float]:
        return {"k": self.k}

    def into(self, query_value: float, column: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``out[:] = exp(-k |column - query_value|)`` in float64, in place (``out`` must be
        contiguous: numpy's vectorised exp, which the definition uses, runs on contiguous
        output; its in-place call gives the same bits)."""
        _abs_diff_into(query_value, column, out)
        np.multiply(out, -self.k, out=out)
        return np.exp(out, out=out)

    def lower_bound_slope(self) -> float:
        return -math.expm1(-self.k * self.range) / self.range


class ExactMatch(_DomainMeasure):
    """1 when the values are equal (as float32), else 0.

    >>> ExactMatch(low=0, high=10)(3, np.array([3, 4], np.float32)).tolist()
    [1.0, 0.0]
    """

    name: ClassVar[str] = "exact"

    def into(self, query_value: float, column: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``out[:] = 1.0 where column == query_value (as float32) else 0.0``, in place."""
        col = np.asarray(column, dtype=np.float32)
        return np.equal(col, np.float32(query_value), out=out, dtype=np.bool_, casting="unsafe")

    def lower_bound_slope(self) -> float:
        return 1.0 / self.range


def _equity_curve() -> tuple[np.ndarray, np.ndarray]:
    """Ranks 1..169 and ``T(rank) = equity(1) - equity(rank)`` (non-decreasing)."""
    from evaluator_ext.preflop import PREFLOP_EQUITY

    eq = np.asarray(PREFLOP_EQUITY, dtype=np.float64)
    t = eq[0] - eq
    if np.any(np.diff(t) < 0):  # pragma: no cover - the table is sorted by construction
        raise ValueError("PREFLOP_EQUITY is not sorted by rank")
    return np.arange(1, len(eq) + 1, dtype=np.float64), t


class EquitySimilarity(_DomainMeasure):
    """Pre-flop rank compared by equity: ``1 - |T(r1) - T(r2)| / (T(high) - T(low))`` with
    ``T(r) = equity(1) - equity(r)`` (the equity table of :mod:`evaluator_ext.preflop`,
    linear between whole ranks; values clipped to the domain, which must lie in 1..169).

    >>> m = EquitySimilarity(low=1, high=169)
    >>> [round(v, 3) for v in m(1.0, np.array([1, 2, 19, 169], np.float32)).tolist()]   # AA vs AA, KK, JTs, 72o
    [1.0, 0.847, 0.401, 0.0]
    >>> [round(v, 3) for v in LinearSimilarity(low=1, high=169)(1.0, np.array([1, 2, 19, 169])).tolist()]
    [1.0, 0.994, 0.893, 0.0]
    """

    name: ClassVar[str] = "equity"

    def __init__(self, *, low: float, high: float) -> None:
        super().__init__(low=low, high=high)
        ranks, t = _equity_curve()
        if self.low < ranks[0] or self.high > ranks[-1]:
            raise ValueError(f"the equity measure is for pre-flop ranks 1..169; domain {self.low}..{self.high}")
        self._ranks, self._t = ranks, t
        self._t_low = float(np.interp(self.low, ranks, t))
        self._t_range = float(np.interp(self.high, ranks, t)) - self._t_low
        if not self._t_range > 0:
            raise ValueError(f"ranks {self.low}..{self.high} all have the same equity")

    def bound_transform(self, values: np.ndarray) -> np.ndarray:
        """``T(clip(values)) - T(low)`` in float64 (non-decreasing, 0 at ``low``)."""
        v = np.clip(np.asarray(values, dtype=np.float64), self.low, self.high)
        return np.interp(v, self._ranks, self._t) - self._t_low

    def into(self, query_value: float, column: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``out[:] = max(1 - |T(column) - T(query)| / (T(high) - T(low)), 0)`` in float64."""
        col = np.asarray(column, dtype=np.float32)
        out[...] = self.bound_transform(col)
        np.subtract(out, float(self.bound_transform(np.float32(query_value))), out=out)
        np.abs(out, out=out)
        np.divide(out, self._t_range, out=out)
        np.subtract(1.0, out, out=out)
        return np.maximum(out, 0.0, out=out)

    def lower_bound_slope(self) -> float:
        return 1.0 / self._t_range


BUILTIN_MEASURES: dict[str, type] = {
    "linear": LinearSimilarity,
    "exp": ExponentialSimilarity,
    "exact": ExactMatch,
    "equity": EquitySimilarity,
}


def measure_class(name: str) -> type:
    """The class of the local measure ``name``: a built-in or a ``cbr.similarity`` plugin.

    >>> measure_class("exp").__name__
    'ExponentialSimilarity'
    """
    from cbr import plugins

    return plugins.resolve("cbr.similarity", name, BUILTIN_MEASURES, "similarity measure")


def measure_parameters(cls: type) -> Optional[list[str]]:
    """The parameters the measure class ``cls`` takes beside its domain (``low``, ``high``), by
    name, or None when it takes any (``**kwargs``).

    >>> measure_parameters(ExponentialSimilarity), measure_parameters(LinearSimilarity)
    (['k'], [])
    """
    import inspect

    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):  # pragma: no cover - a plugin's class without a signature
        return None
    names = []
    for p in signature.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            return None
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in ("low", "high"):
            names.append(p.name)
    return names


def check_measure(name: str, params: Mapping[str, Any]) -> type:
    """The class of the measure ``name`` (:func:`measure_class`) once ``params`` are all
    parameters it takes; raises :class:`ConfigError` naming the measure and its parameters.

    >>> check_measure("exp", {"q": 4})
    Traceback (most recent call last):
    ...
    cbr.errors.ConfigError: measure 'exp' has no parameter 'q' (its parameters: k)
    """
    from cbr.errors import ConfigError

    cls = measure_class(name)
    known = measure_parameters(cls)
    unknown = [p for p in params if known is not None and p not in known]
    if unknown:
        has = f"its parameters: {', '.join(known)}" if known else "it takes none"
        label = "parameter" if len(unknown) == 1 else "parameters"
        raise ConfigError(f"measure {name!r} has no {label} {', '.join(repr(u) for u in unknown)} ({has})")
    return cls
