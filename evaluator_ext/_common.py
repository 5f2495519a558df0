"""What both evaluator implementations share: categories, caps, error messages, Poki's formulas.

The native and the reference implementation differ only in how they count (C tables vs
plain Python); the names, the caps, the validation of inputs and the formulas applied to
the counts are the same, so they live here (and in :mod:`evaluator_ext._facade`) once.

>>> potentials(((449005, 3211, 169504), (0, 8370, 540), (91981, 1036, 346543)))[0] > 0.2083
True
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evaluator_ext.cards import N_COMBOS
from evaluator_ext.errors import EvaluatorValueError, InvalidCardError

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
#: ``win_probability(exact=None)`` enumerates when a showdown has at most this many deals
#: (heads-up turn 45,540 and river 990; two opponents on the river 446,985).
EXACT_AUTO_MAX_DEALS = 500_000
#: ``win_probability(exact=True)`` refuses more deals than this (heads-up flop: 1,070,190;
#: two opponents on the turn: 20,561,310). The C kernel applies the same cap.
EXACT_MAX_DEALS = 50_000_000
#: Most Monte Carlo trials one call deals. The standard error at the cap is below 1.6e-5,
#: far finer than any decision needs; the heads-up native rate (about 3e7 deals/s) makes
#: it half a minute, nine opponents (about 1.2e6/s) a quarter of an hour, and every run
#: can be stopped with Ctrl-C. The C kernel applies the same cap.
MAX_TRIALS = 10**9
#: Seeds are 64-bit: any int 0..2**64-1 (no silent wrap-around of bigger or negative ints).
MAX_SEED = 2**64 - 1
#: Largest weight accepted: keeps every weighted sum finite (1326 holdings x runouts).
MAX_WEIGHT = 1e300


def weight_table(weights: object) -> np.ndarray:
    """A 1326-entry opponent weight table as float64; ValueError naming what is wrong."""
    try:
        raw = np.asarray(weights)
    except (TypeError, ValueError, OverflowError):  # ragged, or numbers numpy cannot hold
        raw = np.asarray(None)
    if raw.dtype.kind not in "biuf":  # text, objects, complex numbers...
        raise EvaluatorValueError("weights must be 1326 non-negative numbers")
    w = np.ascontiguousarray(raw, dtype=np.float64)
    if w.shape != (N_COMBOS,):
        raise EvaluatorValueError(f"weights must have shape ({N_COMBOS},) (one per two-card holding), got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w > MAX_WEIGHT):
        raise EvaluatorValueError("weights must be finite numbers no larger than 1e300")
    if np.any(w < 0):
        raise EvaluatorValueError("weights must be non-negative")
    return w


def batch_range_error(row: int) -> InvalidCardError:
    """The error for a row of ``evaluate_batch`` with a card number outside 0..51."""
    return InvalidCardError(f"evaluate_batch: row {row} has a card number outside 0..51")


def batch_duplicate_error(row: int) -> InvalidCardError:
    """The error for a row of ``evaluate_batch`` with a card twice."""
    return InvalidCardError(f"evaluate_batch: row {row} has a card twice")


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
           "EXACT_AUTO_MAX_DEALS", "EXACT_MAX_DEALS", "MAX_TRIALS", "MAX_SEED", "MAX_WEIGHT",
           "weight_table", "batch_range_error", "batch_duplicate_error", "no_usable_weight",
           "potentials", "check_hand_value", "effective"]
