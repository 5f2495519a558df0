"""What both evaluator implementations share: categories, input checks, Poki's formulas.

The native and the reference implementation differ in how they count (C tables vs plain
Python); the names, the validation of inputs and the formulas applied to the counts are
the same, so they live here once.

>>> potentials(((449005, 3211, 169504), (0, 8370, 540), (91981, 1036, 346543)))[0] > 0.2083
True
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evaluator_ext.cards import N_COMBOS
from evaluator_ext.errors import EvaluatorValueError

CATEGORIES: tuple[str, ...] = (
    "high card",
    "one pair",
    "two pair",
    "three of a kind",
    "straight",
    "flush",
    "full house",
    "four of a kind",
    "straight flush",
)
#: Distinct hand values per category, worst category first (7,462 in all).
CATEGORY_SIZES: tuple[int, ...] = (1277, 2860, 858, 858, 10, 1277, 156, 156, 10)
N_VALUES = 7462
MAX_OPPONENTS = 9
AHEAD, TIED, BEHIND = 0, 1, 2


def weight_table(weights: object) -> np.ndarray:
    """A 1326-entry opponent weight table as float64; ValueError naming what is wrong."""
    try:
        w = np.ascontiguousarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise EvaluatorValueError("weights must be 1326 non-negative numbers") from None
    if w.shape != (N_COMBOS,):
        raise EvaluatorValueError(f"weights must have shape ({N_COMBOS},) (one per two-card holding), got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise EvaluatorValueError("weights must be finite numbers")
    if np.any(w < 0):
        raise EvaluatorValueError("weights must be non-negative")
    return w


def no_usable_weight() -> EvaluatorValueError:
    return EvaluatorValueError("weights give no weight to any holding that does not clash with the known cards")


def potentials(table: Sequence[Sequence[float]]) -> tuple[float, float]:
    """(PPOT, NPOT) from a potential table (Billings et al.); 0.0 where a denominator is 0.

    PPOT = (T[behind][ahead] + T[behind][tied]/2 + T[tied][ahead]/2) / (T[behind] + T[tied]/2)
    NPOT = (T[ahead][behind] + T[tied][behind]/2 + T[ahead][tied]/2) / (T[ahead] + T[tied]/2)
    """
    ppot_den = sum(table[BEHIND]) + sum(table[TIED]) / 2
    npot_den = sum(table[AHEAD]) + sum(table[TIED]) / 2
    ppot_num = table[BEHIND][AHEAD] + table[BEHIND][TIED] / 2 + table[TIED][AHEAD] / 2
    npot_num = table[AHEAD][BEHIND] + table[TIED][BEHIND] / 2 + table[AHEAD][TIED] / 2
    ppot = ppot_num / ppot_den if ppot_den else 0.0
    npot = npot_num / npot_den if npot_den else 0.0
    return float(ppot), float(npot)


def check_hand_value(value: object) -> int:
    """A hand value 1..7462 from ``evaluate``; ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= N_VALUES:
        raise EvaluatorValueError(f"hand value must be an int 1..{N_VALUES}, got {value!r}")
    return int(value)


def effective(hs: float, ppot: float) -> float:
    """EHS = HS_n + (1 - HS_n) * PPOT (negative potential ignored, as in Poki)."""
    return float(hs + (1 - hs) * ppot)


__all__ = ["CATEGORIES", "CATEGORY_SIZES", "N_VALUES", "MAX_OPPONENTS", "AHEAD", "TIED", "BEHIND",
           "weight_table", "no_usable_weight", "potentials", "check_hand_value", "effective"]
