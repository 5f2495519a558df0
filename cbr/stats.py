"""Confidence intervals: the statistics every measurement of the engine reports.

>>> mean_ci([1.0, 3.0])
(2.0, 1.959963984540054)
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

__all__ = ["Z95", "mean_ci", "wilson_interval", "cluster_mean_ci", "RunningMean"]

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% normal confidence interval,
    ``1.96 * stdev / sqrt(m)`` (sample stdev, ``m - 1`` in the denominator);
    the half-width is ``inf`` for fewer than 2 values.

    >>> mean_ci([1.0, 3.0])
    (2.0, 1.959963984540054)
    """
    m = len(values)
    if m == 0:
        return (0.0, math.inf)
    mean = math.fsum(values) / m
    if m < 2:
        return (mean, math.inf)
    var = math.fsum((v - mean) ** 2 for v in values) / (m - 1)
    return (mean, Z95 * math.sqrt(var / m))


def wilson_interval(hits: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval ``(low, high)`` of a proportion ``hits / n``: unlike the
    normal interval it keeps a width at 0 and 1 (``hits`` of 0 or ``n``) and stays in [0, 1];
    ``(nan, nan)`` for ``n == 0``.

    >>> low, high = wilson_interval(2000, 2000)
    >>> round(low, 5), high
    (0.99808, 1.0)
    >>> [round(x, 4) for x in wilson_interval(5, 10)]
    [0.2366, 0.7634]
    """
    if n <= 0:
        return (math.nan, math.nan)
    p = hits / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (0.0 if hits == 0 else max(0.0, centre - half), 1.0 if hits == n else min(1.0, centre + half))


def cluster_mean_ci(values: Sequence[float], clusters: Sequence[Hashable]) -> tuple[float, float]:
    """Mean of ``values`` and the half-width of its 95% confidence interval when the values
    come in dependent groups (``clusters``: the group of each value, e.g. the hand of each
    decision): the groups, not the values, are the independent draws.

    The mean is ``sum(v) / n``; its variance is estimated from the groups' totals ``S_g``
    and sizes ``n_g`` (the cluster-robust, or ratio-estimator, variance)
    ``G / (G - 1) * sum_g (S_g - mean * n_g) ** 2 / n ** 2`` over ``G`` groups, and the
    half-width is ``1.96`` times its root (``inf`` for fewer than 2 groups). With one value
    per group it is :func:`mean_ci`'s half-width; values that move together within a group
    widen it.

    >>> m, h = cluster_mean_ci([1.0, 3.0], ["a", "b"])
    >>> (m, h) == mean_ci([1.0, 3.0])
    True
    >>> cluster_mean_ci([1.0, 1.0, 3.0, 3.0], ["a", "a", "b", "b"])[1] > mean_ci([1.0, 1.0, 3.0, 3.0])[1]
    True
    """
    n = len(values)
    if n != len(clusters):
        raise ValueError(f"the values and their clusters differ in number: {n} and {len(clusters)}")
    if n == 0:
        return (0.0, math.inf)
    mean = math.fsum(values) / n
    totals: dict[Hashable, list[float]] = {}
    for v, g in zip(values, clusters):
        acc = totals.get(g)
        if acc is None:
            totals[g] = [v, 1.0]
        else:
            acc[0] += v
            acc[1] += 1.0
    groups = len(totals)
    if groups < 2:
        return (mean, math.inf)
    ss = math.fsum((t - mean * k) ** 2 for t, k in totals.values())
    return (mean, Z95 * math.sqrt(groups / (groups - 1) * ss) / n)


class RunningMean:
    """Mean and 95% half-width of a stream of values in constant memory (Welford's update).

    Gives what :func:`mean_ci` gives for the same values (up to rounding).

    >>> acc = RunningMean()
    >>> for v in (2.0, 4.0, 9.0):
    ...     acc.add(v)
    >>> acc.count, acc.mean, round(acc.ci(), 6) == round(mean_ci([2.0, 4.0, 9.0])[1], 6)
    (3, 5.0, True)
    """

    __slots__ = ("count", "mean", "m2")

    def __init__(self) -> None:
        self.count = 0
        self.mean = 0.0
        self.m2 = 0.0

    def add(self, value: float) -> None:
        self.count += 1
        delta = value - self.mean
        self.mean += delta / self.count
        self.m2 += delta * (value - self.mean)

    def ci(self) -> float:
        """Half-width of the 95% normal confidence interval (``inf`` for fewer than 2 values)."""
        if self.count < 2:
            return math.inf
        return Z95 * math.sqrt(max(self.m2, 0.0) / (self.count - 1) / self.count)
