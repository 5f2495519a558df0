"""The feature-set protocol: what a ``cbr.features`` plugin provides.

A feature set turns a :class:`~cbr.game.decision.DecisionPoint` into one float32 row
per decision. Each street may have its own columns (CASPER uses 8 pre-flop, 12 after).
The same object serves log decisions, queries and live play, so a case built from a log
and the same situation met at the table get identical rows.

>>> from features.casper import CasperFeatures
>>> isinstance(CasperFeatures(), FeatureSet)
True
>>> CasperFeatures().feature_names(0)[:2]
['players_dealt', 'relative_position']
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import STREETS

__all__ = ["FeatureSet", "STREETS", "street_number", "split_rows"]


@runtime_checkable
class FeatureSet(Protocol):
    """Decision point -> float32 feature row, with named columns per street.

    - ``name``: the plugin name recorded in case-base manifests (e.g. ``"casper"``).
    - ``feature_names(street)``: column names for street 0..3 (or its name).
    - ``row(dp)``: one row, ``np.ndarray`` of dtype float32 and length
      ``len(feature_names(dp.street))``.
    - ``rows(dps)``: ``{street: (n_street, d_street) float32 array}`` for all four streets,
      rows in input order within each street (empty arrays for absent streets).
    """

    name: str

    def feature_names(self, street: int | str) -> list[str]: ...

    def row(self, dp: DecisionPoint) -> np.ndarray: ...

    def rows(self, dps: Iterable[DecisionPoint]) -> dict[int, np.ndarray]: ...


def street_number(street: int | str) -> int:
    """Street 0..3 from a number or a name (``'flop'`` -> 1); raises ``ValueError``.

    >>> street_number("river"), street_number(1)
    (3, 1)
    """
    if isinstance(street, str):
        try:
            return STREETS.index(street.strip().lower())
        except ValueError:
            raise ValueError(f"unknown street {street!r}; streets: {', '.join(STREETS)}") from None
    s = int(street)
    if not 0 <= s < len(STREETS):
        raise ValueError(f"street must be 0..3 ({', '.join(STREETS)}), got {street!r}")
    return s


def split_rows(fs: FeatureSet, dps: Sequence[DecisionPoint]) -> dict[int, np.ndarray]:
    """Default ``rows``: stack ``fs.row`` per street, keeping input order within a street."""
    out: dict[int, np.ndarray] = {}
    for s in range(len(STREETS)):
        chosen = [fs.row(dp) for dp in dps if dp.street == s]
        d = len(fs.feature_names(s))
        out[s] = np.vstack(chosen).astype(np.float32, copy=False) if chosen else np.zeros((0, d), np.float32)
    return out
