"""The study's hand-strength metrics, HS and HS^2, for one holding or every holding on a board.

- **HS**: the chance to beat one random holding once all five board cards are out (win
  plus half a tie), i.e. the river hand strength averaged over every runout of the board.
- **HS^2** (the study's "hand strength squared", its 3.2.4): the square of the HS a holding
  reaches on the *next* street, averaged over that street's cards: pre-flop the mean over
  the flops of the flop HS squared, on the flop the mean over the turn cards of the turn HS
  squared, on the turn the mean over the rivers of the river HS squared (exactly
  ``evaluator_ext.hand_strength_squared``), on the river HS squared. Rewarding a holding's
  spread of next-street strengths is what sets drawing hands apart from made ones.

Everything after the flop is exact (``evaluator_ext._native.abs_board_metrics`` values all
1326 holdings on a board at once: a flop in about 55 ms, a turn in 2 ms, a river in 0.1 ms;
:func:`reference_board_metrics` is the same in numpy, far slower, used when the native
evaluator is not built).
Pre-flop values come from a 169-class table computed exactly once by
``bench/make_preflop_hs_table.py`` (``cbr.abstraction.preflop_table``), so there is no
sampling error anywhere; values are rounded to 6 decimals pre-flop.

Arrays over holdings are indexed by ``evaluator_ext.combo_index`` (colex order, 1326 long);
a holding that clashes with the board holds ``-1``.

>>> round(hand_strength("AcAh"), 2), round(hand_strength("3c2h"), 2)
(0.85, 0.32)
>>> round(hand_strength("AcQs", "3h4sJd8c8d"), 4)  # the river: HS now
0.5015
>>> hs, hs2 = board_metrics("3h4sJd8c8d")
>>> float(hs2[combo_index(40, 51)]) == float(hs[combo_index(40, 51)]) ** 2
True
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Literal

import numpy as np

from cbr.errors import ConfigError
from evaluator_ext import PREFLOP_CLASSES, class_combos, combo_index, parse_cards, parse_hole_and_board
from evaluator_ext.cards import CardLike, check_distinct

__all__ = [
    "METRICS",
    "Metric",
    "hand_strength",
    "hand_strength_squared",
    "metric_value",
    "board_metrics",
    "river_values",
    "preflop_metrics",
    "reference_board_metrics",
    "combo_index",
]

Metric = Literal["hs", "hs2"]
METRICS: tuple[str, ...] = ("hs", "hs2")

_CACHE_SIZE = 256
_cache: "OrderedDict[tuple[int, ...], tuple[np.ndarray, np.ndarray]]" = OrderedDict()
_preflop: tuple[np.ndarray, np.ndarray] | None = None


def check_metric(metric: object) -> str:
    """``metric`` if it is ``"hs"`` or ``"hs2"``; ConfigError (a ValueError) otherwise.

    >>> check_metric("hs2")
    'hs2'
    """
    if metric not in METRICS:
        raise ConfigError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    return str(metric)


def preflop_metrics() -> tuple[np.ndarray, np.ndarray]:
    """(HS, HS^2) of every holding before the flop: two read-only float64 arrays of 1326.

    >>> hs, hs2 = preflop_metrics()
    >>> hs.shape, bool(hs.min() > 0.3), bool(hs2.max() < 0.75)
    ((1326,), True, True)
    """
    global _preflop
    if _preflop is None:
        from cbr.abstraction.preflop_table import PREFLOP_HS

        hs = np.empty(1326)
        hs2 = np.empty(1326)
        for name in PREFLOP_CLASSES:
            a, b = PREFLOP_HS[name]
            for c in class_combos(name):
                i = combo_index(*c)
                hs[i], hs2[i] = a, b
        hs.flags.writeable = False
        hs2.flags.writeable = False
        _preflop = (hs, hs2)
    return _preflop


def _native():  # type: ignore[no-untyped-def]
    from evaluator_ext import _native as native

    return native


def _use_native() -> bool:
    import evaluator_ext

    return evaluator_ext.IMPLEMENTATION == "native"


_COMBOS = np.array([(lo, hi) for hi in range(1, 52) for lo in range(hi)], dtype=np.int64)  # by combo index


def _reference_river(board: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """River HS and values of every holding, in numpy over ``evaluate_batch`` (the reference
    of ``abs_river_all``: a full 1081 x 1081 comparison with card removal)."""
    from evaluator_ext import evaluate_batch

    dead = np.zeros(52, dtype=bool)
    dead[list(board)] = True
    live = np.flatnonzero(~(dead[_COMBOS[:, 0]] | dead[_COMBOS[:, 1]]))
    cards = _COMBOS[live]
    values = evaluate_batch(np.hstack([cards, np.tile(board, (live.size, 1))]).astype(np.uint8))
    lo, hi = cards[:, 0], cards[:, 1]
    disjoint = ~((lo[:, None] == lo[None, :]) | (lo[:, None] == hi[None, :]) | (hi[:, None] == lo[None, :])
                 | (hi[:, None] == hi[None, :]))
    score = (values[:, None] > values[None, :]) + 0.5 * (values[:, None] == values[None, :])
    hs = np.full(1326, -1.0)
    hs[live] = (score * disjoint).sum(axis=1) / disjoint.sum(axis=1)
    out = np.zeros(1326, dtype=np.int32)
    out[live] = values
    return hs, out


def reference_board_metrics(board: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(HS, HS^2) of every holding by the definitions, in numpy (slow: a flop takes tens of
    seconds): the reference the native kernel is tested against, and the fallback when the
    native evaluator is not built.

    >>> hs, hs2 = reference_board_metrics(tuple(parse_cards("2c7dJhQsKs")))
    >>> bool(np.allclose(hs, board_metrics("2c7dJhQsKs")[0]))
    True
    """
    board = tuple(board)
    if len(board) == 5:
        hs = _reference_river(board)[0]
        return hs, np.where(hs >= 0, hs * hs, -1.0)
    nexts = [c for c in range(52) if c not in board]
    per_next = [reference_board_metrics(board + (c,))[0] for c in nexts]  # next street's HS
    stack = np.stack(per_next)
    ok = stack >= 0
    n = ok.sum(axis=0)
    hs = np.where(n > 0, (stack * ok).sum(axis=0) / np.maximum(n, 1), -1.0)
    hs2 = np.where(n > 0, (stack**2 * ok).sum(axis=0) / np.maximum(n, 1), -1.0)  # the next street's HS, squared
    return hs, hs2


def board_metrics(board: CardLike) -> tuple[np.ndarray, np.ndarray]:
    """(HS, HS^2) of every holding on a board of 0, 3, 4 or 5 cards (arrays of 1326, -1 clashing).

    Results are memoised per board (the last 256 boards); the arrays are read-only.

    >>> hs, _ = board_metrics("AhKhQh")
    >>> float(hs[combo_index(*parse_cards("JhTh"))])   # the royal flush is already made
    1.0
    """
    cards = tuple(sorted(parse_cards(board)))
    if len(cards) not in (0, 3, 4, 5):
        raise ConfigError(f"board must have 0, 3, 4 or 5 cards, got {len(cards)}")
    check_distinct(cards)
    return clean_board_metrics(cards)


def clean_board_metrics(cards: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`board_metrics` of a board already checked: sorted distinct card numbers (0, 3, 4 or 5)."""
    if not cards:
        return preflop_metrics()
    hit = _cache.get(cards)
    if hit is not None:
        _cache.move_to_end(cards)
        return hit
    if _use_native():
        hs = np.empty(1326)
        hs2 = np.empty(1326)
        _native().abs_board_metrics(cards, hs, hs2)
    else:
        hs, hs2 = reference_board_metrics(cards)
    hs.flags.writeable = False
    hs2.flags.writeable = False
    _cache[cards] = (hs, hs2)
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return hs, hs2


def river_values(board: CardLike) -> np.ndarray:
    """Hand values (1..7462, higher wins; 0 when clashing) of every holding on a complete board.

    >>> v = river_values("AhKhQhJhTh")
    >>> int(v[combo_index(0, 1)])   # everyone plays the board's royal flush
    7462
    """
    cards = parse_cards(board)
    if len(cards) != 5:
        raise ConfigError(f"river_values needs a complete board of 5 cards, got {len(cards)}")
    check_distinct(cards)
    if not _use_native():
        return _reference_river(tuple(cards))[1]
    hs = np.empty(1326)
    values = np.empty(1326, dtype=np.int32)
    _native().abs_river_all(cards, hs, values)
    return values


def metric_value(metric: str, hole: CardLike, board: CardLike = ()) -> float:
    """The metric ``"hs"`` or ``"hs2"`` of one holding on a board of 0, 3, 4 or 5 cards.

    >>> metric_value("hs", "AsAd") == hand_strength("AsAd")
    True
    """
    index = 0 if check_metric(metric) == "hs" else 1
    h, b = parse_hole_and_board(hole, board)
    return float(board_metrics(b)[index][combo_index(*h)])


def hand_strength(hole: CardLike, board: CardLike = ()) -> float:
    """HS: the chance to beat one random holding once the board is complete (ties count half).

    >>> round(hand_strength("AcQs", "3h4sJd"), 4)   # 0.5851 now, less after the runouts
    0.531
    """
    return metric_value("hs", hole, board)


def hand_strength_squared(hole: CardLike, board: CardLike = ()) -> float:
    """The study's HS^2: the next street's HS squared, averaged over that street's cards.

    >>> import evaluator_ext
    >>> hand_strength_squared("AdQc", "3h4cJh8d") == evaluator_ext.hand_strength_squared("AdQc", "3h4cJh8d")
    True
    """
    return metric_value("hs2", hole, board)
