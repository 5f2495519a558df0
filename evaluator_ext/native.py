"""The native (C) hand evaluator: the C kernels of ``evaluator_ext._native`` behind the facade.

Input is cleaned and checked once in :mod:`evaluator_ext._facade` (the same code, and the
same errors, as the pure-Python reference); the C extension only ever sees clean card
numbers, and still checks everything itself so that garbage never crashes the
interpreter. Values are the dense rank 1..7462 of the best five cards (1 = 7-5-4-3-2 of
mixed suits, 7462 = royal flush). Long calls (Monte Carlo, exact showdowns, big batches)
run in chunks without the GIL and stop at Ctrl-C.

>>> evaluate("AsKsQsJsTs"), evaluate("7c5d4h3s2c")
(7462, 1)
>>> hand_strength_counts("AcQs", "3h4sJd")
(628, 9, 444)
>>> round(hand_strength("AcQs", "3h4sJd"), 4)
0.5851
>>> [round(p, 4) for p in hand_potential("AdQc", "3h4cJh")]
[0.2083, 0.2737]
"""
from __future__ import annotations

import numpy as np

from evaluator_ext import _native
from evaluator_ext._common import (
    CATEGORIES,
    CATEGORY_SIZES,
    EXACT_AUTO_MAX_DEALS,
    EXACT_MAX_DEALS,
    MAX_TRIALS,
    N_VALUES,
)
from evaluator_ext._facade import Evaluator
from evaluator_ext.errors import EvaluatorValueError, InvalidCardError

if _native.N_VALUES != N_VALUES or _native.EXACT_MAX_DEALS != EXACT_MAX_DEALS or _native.MAX_TRIALS != MAX_TRIALS:
    raise ImportError("evaluator_ext._native was built from other sources (constants differ); rebuild it")


class NativeKernels:
    """The counting kernels of the C extension (clean input only; see ``_facade.Kernels``)."""

    name = "native"
    evaluate = staticmethod(_native.evaluate)
    hand_strength_counts = staticmethod(_native.hand_strength_counts)
    potential_table = staticmethod(_native.potential_table)
    hand_strength_squared = staticmethod(_native.hand_strength_squared)
    showdown_exact = staticmethod(_native.showdown_exact)
    showdown_monte_carlo = staticmethod(_native.showdown_monte_carlo)
    category_counts = staticmethod(_native.category_counts)

    @staticmethod
    def range_equity(hole: tuple, board: tuple, weights, trials: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        eq, counted = np.empty(1326), np.empty(1326)
        try:
            _native.range_equity(hole, board, weights, trials, seed, eq, counted)
        except ValueError as exc:  # no holding of the range left: the facade's shared message
            if "weights give no weight" in str(exc):
                from evaluator_ext._common import no_usable_weight

                raise no_usable_weight() from None
            raise
        return eq, counted

    @staticmethod
    def range_update(weights: np.ndarray, likelihood: np.ndarray, dead: tuple) -> np.ndarray:
        out = weights.copy()
        _native.range_update(out, likelihood, dead)
        return out

    @staticmethod
    def evaluate_batch(cards: np.ndarray) -> np.ndarray:
        out = np.empty(cards.shape[0], dtype=np.int32)
        try:
            _native.evaluate_batch(cards, out)
        except ValueError as exc:  # a row with a bad card; the C text is the shared one
            raise InvalidCardError(str(exc)) from None
        return out


KERNELS = NativeKernels()
EVALUATOR = Evaluator(KERNELS)

evaluate = EVALUATOR.evaluate
evaluate_batch = EVALUATOR.evaluate_batch
hand_category = EVALUATOR.hand_category
category_counts = EVALUATOR.category_counts
hand_strength_counts = EVALUATOR.hand_strength_counts
hand_strength = EVALUATOR.hand_strength
potential_table = EVALUATOR.potential_table
hand_potential = EVALUATOR.hand_potential
effective_hand_strength = EVALUATOR.effective_hand_strength
hand_strength_squared = EVALUATOR.hand_strength_squared
showdown_deals = EVALUATOR.showdown_deals
win_probability = EVALUATOR.win_probability
range_equity = EVALUATOR.range_equity
range_update = EVALUATOR.range_update

__all__ = [
    "CATEGORIES",
    "CATEGORY_SIZES",
    "N_VALUES",
    "EXACT_AUTO_MAX_DEALS",
    "EXACT_MAX_DEALS",
    "MAX_TRIALS",
    "EvaluatorValueError",
    "KERNELS",
    "EVALUATOR",
    "evaluate",
    "evaluate_batch",
    "hand_category",
    "category_counts",
    "hand_strength",
    "hand_strength_counts",
    "potential_table",
    "hand_potential",
    "effective_hand_strength",
    "hand_strength_squared",
    "showdown_deals",
    "win_probability",
    "range_equity",
    "range_update",
]
