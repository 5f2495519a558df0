"""The native (C) hand evaluator behind the same API as :mod:`evaluator_ext.reference`.

Card-like input is cleaned here with :mod:`evaluator_ext.cards` (text, ints, numpy ints);
the C extension ``evaluator_ext._native`` only ever sees clean card numbers. Values are the
dense rank 1..7462 of the best five cards (1 = 7-5-4-3-2 of mixed suits, 7462 = royal flush).

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

import operator
from functools import lru_cache
from typing import Optional

import numpy as np

from evaluator_ext import _native
from evaluator_ext.cards import N_CARDS, CardLike, parse_cards, parse_hole_and_board
from evaluator_ext._common import (
    CATEGORIES,
    CATEGORY_SIZES,
    MAX_OPPONENTS,
    N_VALUES,
    check_hand_value,
    effective,
    no_usable_weight,
    potentials,
    weight_table,
)
from evaluator_ext.errors import EvaluatorValueError, InvalidCardError
from evaluator_ext.preflop import preflop_class, preflop_rank

__all__ = [
    "CATEGORIES",
    "CATEGORY_SIZES",
    "N_VALUES",
    "EXACT_AUTO_MAX_DEALS",
    "EXACT_MAX_DEALS",
    "EvaluatorValueError",
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
    "preflop_class",
    "preflop_rank",
]

assert _native.N_VALUES == N_VALUES
#: ``win_probability(exact=None)`` enumerates when a showdown has at most this many deals
#: (heads-up turn 45,540 and river 990; two opponents on the river 446,985).
EXACT_AUTO_MAX_DEALS = 500_000
#: ``win_probability(exact=True)`` refuses more deals than this (heads-up flop: 1,070,190).
EXACT_MAX_DEALS = 50_000_000

_CATEGORY_UPPER = tuple(np.cumsum(CATEGORY_SIZES).tolist())  # last value of each category
_COMBO_HI, _COMBO_LO = (np.array(x, dtype=np.intp) for x in zip(*[(hi, lo) for hi in range(1, N_CARDS) for lo in range(hi)]))


# ---------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------


@lru_cache(maxsize=16384)
def _clean_text(hole: str, board: str, sizes: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return parse_hole_and_board(hole, board, board_sizes=sizes)


def _plain_cards(cards: object) -> bool:
    """A tuple of plain ints 0..51 (already clean but for duplicates)."""
    return type(cards) is tuple and all(type(c) is int and 0 <= c < N_CARDS for c in cards)


def _clean(hole: CardLike, board: CardLike, sizes: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """parse_hole_and_board with two shortcuts: text is memoised (parsing it costs more than
    a flop enumeration in C) and tuples of plain ints skip the general parser. Errors are
    never cached."""
    if type(hole) is str and type(board) is str:
        return _clean_text(hole, board, sizes)
    if (
        _plain_cards(hole)
        and _plain_cards(board)
        and len(hole) == 2  # type: ignore[arg-type]
        and len(board) in sizes  # type: ignore[arg-type]
        and len(set(hole + board)) == len(hole) + len(board)  # type: ignore[operator, arg-type]
    ):
        return hole, board  # type: ignore[return-value]
    return parse_hole_and_board(hole, board, board_sizes=sizes)


@lru_cache(maxsize=16384)
def _parse_text(cards: str) -> tuple[int, ...]:
    return parse_cards(cards)


def _parse(cards: CardLike) -> tuple[int, ...]:
    """parse_cards, memoised for text."""
    if type(cards) is str:
        return _parse_text(cards)
    return parse_cards(cards)


def _postflop(hole: CardLike, board: CardLike) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return _clean(hole, board, (3, 4, 5))


def _check_int(value: object, name: str, low: int, high: Optional[int] = None) -> int:
    if isinstance(value, bool):
        raise EvaluatorValueError(f"{name} must be an int, got {value!r}")
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise EvaluatorValueError(f"{name} must be an int, got {value!r}") from None
    if number < low or (high is not None and number > high):
        bounds = f"{low}..{high}" if high is not None else f">= {low}"
        raise EvaluatorValueError(f"{name} must be {bounds}, got {number}")
    return number


def _check_weights(weights: object, dead: tuple[int, ...]) -> Optional[np.ndarray]:
    """A clean float64 array of 1326 weights (or None); ValueError when unusable."""
    if weights is None:
        return None
    w = weight_table(weights)
    is_dead = np.zeros(N_CARDS, dtype=bool)
    is_dead[list(dead)] = True
    usable = ~(is_dead[_COMBO_HI] | is_dead[_COMBO_LO])
    if not w[usable].sum() > 0:
        raise no_usable_weight()
    return w


# ---------------------------------------------------------------------------
# Hand values
# ---------------------------------------------------------------------------


def evaluate(cards: CardLike) -> int:
    """Value 1..7462 of the best five-card hand among 5, 6 or 7 cards (higher is better).

    >>> evaluate("AhKh QhJhTh 2c3d")
    7462
    """
    clean = _parse(cards)
    if len(clean) not in (5, 6, 7):
        raise InvalidCardError(f"evaluate needs 5, 6 or 7 cards, got {len(clean)}")
    return _native.evaluate(clean)


def hand_category(value: int) -> str:
    """Category name of a hand value from :func:`evaluate`.

    >>> hand_category(1), hand_category(7462)
    ('high card', 'straight flush')
    """
    value = check_hand_value(value)
    for name, upper in zip(CATEGORIES, _CATEGORY_UPPER):
        if value <= upper:
            return name
    raise AssertionError("unreachable")  # pragma: no cover


def evaluate_batch(cards: np.ndarray) -> np.ndarray:
    """Values of many hands: integer array of shape (n, 5), (n, 6) or (n, 7) -> int32 array (n,).

    A C-contiguous uint8 array is read in place (the fast path); other integer arrays are
    range-checked and copied. Card numbers outside 0..51 or a card twice in a row raise
    ValueError naming the row.

    >>> evaluate_batch(np.array([[48, 49, 50, 51, 44, 0, 1]], dtype=np.uint8)).tolist()
    [7452]
    """
    arr = np.asarray(cards)
    if arr.ndim != 2 or arr.shape[1] not in (5, 6, 7):
        raise EvaluatorValueError(f"evaluate_batch needs an array of shape (n, 5), (n, 6) or (n, 7), got {arr.shape}")
    if arr.dtype != np.uint8:
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise EvaluatorValueError(f"evaluate_batch needs integer card numbers, got dtype {arr.dtype}")
        if arr.size:
            bad = np.flatnonzero(((arr < 0) | (arr >= N_CARDS)).any(axis=1))
            if bad.size:
                raise InvalidCardError(f"evaluate_batch: row {bad[0]} has a card number outside 0..51")
        arr = arr.astype(np.uint8)
    arr = np.ascontiguousarray(arr)
    out = np.empty(arr.shape[0], dtype=np.int32)
    try:
        _native.evaluate_batch(arr, out)
    except ValueError as exc:
        raise InvalidCardError(str(exc)) from None
    return out


def category_counts(n_cards: int = 7) -> dict[str, int]:
    """Count every hand of ``n_cards`` (5..7) cards by category (all C(52, n) hands).

    >>> category_counts(5)["straight flush"], sum(category_counts(5).values())
    (40, 2598960)
    """
    n = _check_int(n_cards, "n_cards", 5, 7)
    return dict(zip(CATEGORIES, _native.category_counts(n)))


# ---------------------------------------------------------------------------
# Hand strength and potential (exact enumeration)
# ---------------------------------------------------------------------------


def hand_strength_counts(
    hole: CardLike, board: CardLike, weights: Optional[object] = None
) -> tuple[float, float, float]:
    """(ahead, tied, behind): opponent holdings we beat, tie, lose to on this board.

    Ints without weights, weight sums with them.

    >>> hand_strength_counts("AcQs", "3h4sJd")
    (628, 9, 444)
    """
    h, b = _postflop(hole, board)
    w = _check_weights(weights, h + b)
    ahead, tied, behind = _native.hand_strength_counts(h, b, w)
    if w is None:
        return int(ahead), int(tied), int(behind)
    return ahead, tied, behind


def hand_strength(
    hole: CardLike, board: CardLike, n_opponents: int = 1, weights: Optional[object] = None
) -> float:
    """Immediate hand strength (Poki): (ahead + tied/2) / all holdings, to the power n_opponents.

    >>> round(hand_strength("AcQs", "3h4sJd", n_opponents=2), 4)
    0.3423
    """
    n = _check_int(n_opponents, "n_opponents", 1, MAX_OPPONENTS)
    h, b = _postflop(hole, board)
    w = _check_weights(weights, h + b)
    ahead, tied, behind = _native.hand_strength_counts(h, b, w)
    hs = (ahead + tied / 2) / (ahead + tied + behind)
    return float(hs**n)


def potential_table(
    hole: CardLike, board: CardLike, weights: Optional[object] = None
) -> tuple[tuple[float, float, float], ...]:
    """3x3 table: rows ahead/tied/behind now, columns ahead/tied/behind after 5 board cards.

    Each opponent holding counts once per board completion (exact enumeration); ints
    without weights, weight sums with them. On the river every holding lands on the diagonal.

    >>> potential_table("AdQc", "3h4cJh")
    ((449005, 3211, 169504), (0, 8370, 540), (91981, 1036, 346543))
    """
    h, b = _postflop(hole, board)
    w = _check_weights(weights, h + b)
    table = _native.potential_table(h, b, w)
    if w is None:
        return tuple(tuple(int(x) for x in row) for row in table)
    return table


def hand_potential(hole: CardLike, board: CardLike, weights: Optional[object] = None) -> tuple[float, float]:
    """(PPOT, NPOT) of Billings et al. (Poki) from :func:`potential_table`; (0, 0) on the river.

    >>> [round(p, 4) for p in hand_potential("AdQc", "3h4cJh8d")]
    [0.1046, 0.1668]
    """
    h, b = _postflop(hole, board)
    if len(b) == 5:
        _check_weights(weights, h + b)
        return 0.0, 0.0
    return potentials(potential_table(h, b, weights))


def effective_hand_strength(hole: CardLike, board: CardLike, n_opponents: int = 1) -> float:
    """EHS = HS_n + (1 - HS_n) * PPOT (negative potential ignored, as in Poki).

    >>> round(effective_hand_strength("AdQc", "3h4cJh"), 4)
    0.6715
    """
    return effective(hand_strength(hole, board, n_opponents), hand_potential(hole, board)[0])


def hand_strength_squared(hole: CardLike, board: CardLike) -> float:
    """E[HS^2]: the mean over all completions of the board of the river HS (one opponent) squared.

    >>> hand_strength_squared("AdQc", "3h4cJh8d8s") == hand_strength("AdQc", "3h4cJh8d8s") ** 2
    True
    """
    h, b = _postflop(hole, board)
    return float(_native.hand_strength_squared(h, b))


# ---------------------------------------------------------------------------
# Showdown probabilities
# ---------------------------------------------------------------------------


def showdown_deals(board_cards: int, n_opponents: int = 1) -> int:
    """Number of deals (runout x set of opponent holdings) an exact showdown enumeration visits.

    >>> showdown_deals(3), showdown_deals(5, 2)
    (1070190, 446985)
    """
    n = _check_int(n_opponents, "n_opponents", 1, MAX_OPPONENTS)
    k = _check_int(board_cards, "board_cards", 0, 5)
    return round(_native.showdown_deals(k, n))


def win_probability(
    hole: CardLike,
    board: CardLike = (),
    n_opponents: int = 1,
    trials: int = 50_000,
    seed: int = 0,
    exact: Optional[bool] = None,
) -> tuple[float, float, float]:
    """(win, tie, lose) against ``n_opponents`` (1..9) random hands, played to the river.

    Win = strictly better than every opponent; tie = best hand shared and beaten by none.
    ``exact=None`` enumerates every deal when there are at most ``EXACT_AUTO_MAX_DEALS``
    (heads-up turn or river, two opponents on the river) and otherwise runs ``trials``
    Monte Carlo deals seeded by ``seed`` (deterministic); ``exact=True`` forces enumeration
    (ValueError beyond ``EXACT_MAX_DEALS``), ``exact=False`` forces Monte Carlo.

    >>> win_probability("AsAc", "KdKh7c2s", exact=True)[2] > 0
    True
    >>> win_probability("AsAc", trials=1000, seed=7) == win_probability("AsAc", trials=1000, seed=7)
    True
    """
    h, b = _clean(hole, board, (0, 3, 4, 5))
    n = _check_int(n_opponents, "n_opponents", 1, MAX_OPPONENTS)
    n_trials = _check_int(trials, "trials", 1)
    seed_value = _check_int(seed, "seed", -(2**63)) & (2**64 - 1)  # any int; C takes 64 bits
    if exact is not None and not isinstance(exact, (bool, np.bool_)):
        raise EvaluatorValueError(f"exact must be True, False or None, got {exact!r}")
    if 2 + len(b) + (5 - len(b)) + 2 * n > N_CARDS:  # pragma: no cover - cannot happen for n <= 9
        raise EvaluatorValueError(f"not enough cards left for {n} opponents")
    deals = _native.showdown_deals(len(b), n)
    if exact is None:
        enumerate_all = deals <= EXACT_AUTO_MAX_DEALS
    elif exact:
        if deals > EXACT_MAX_DEALS:
            raise EvaluatorValueError(
                f"exact enumeration would visit {deals:.3g} deals ({n} opponents, {len(b)} board cards); "
                f"the limit is {EXACT_MAX_DEALS:.0e}: use exact=False (Monte Carlo)"
            )
        enumerate_all = True
    else:
        enumerate_all = False
    if enumerate_all:
        win, tie, lose = _native.showdown_exact(h, b, n)
    else:
        win, tie, lose = _native.showdown_monte_carlo(h, b, n, n_trials, seed_value)
    total = win + tie + lose
    return win / total, tie / total, lose / total
