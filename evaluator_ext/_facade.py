"""One evaluator API over a small set of counting kernels.

The native (C) and the pure-Python reference evaluator differ only in how they count.
Everything else lives here once: cleaning and checking every argument (so both give the
same error, type and message, for the same bad input), the caps (:data:`MAX_TRIALS`,
:data:`EXACT_MAX_DEALS`), the river shortcut of ``hand_potential``, the exact-vs-Monte-
Carlo choice of ``win_probability`` and Poki's formulas (HS, PPOT/NPOT, EHS).

A kernel set (:class:`Kernels`) only ever sees clean input: card numbers as tuples of
distinct ints 0..51 of the right sizes, weights as a float64 array of shape (1326,)
that gives some weight to a holding that does not clash, counts already in range.

>>> import evaluator_ext as ev
>>> ev.showdown_deals(3), ev.showdown_deals(0, 9) > 2**64
(1070190, True)
>>> try:
...     ev.win_probability("AhKd", trials=-1)
... except ev.EvaluatorValueError as e:
...     print(e)
trials must be an int 1..1000000000, got -1
"""
from __future__ import annotations

import math
import operator
from bisect import bisect_left
from collections.abc import Sequence
from functools import lru_cache
from typing import Optional, Protocol

import numpy as np

from evaluator_ext._common import (
    CATEGORIES,
    CATEGORY_SIZES,
    EXACT_AUTO_MAX_DEALS,
    EXACT_MAX_DEALS,
    MAX_OPPONENTS,
    MAX_SEED,
    MAX_TRIALS,
    batch_range_error,
    check_hand_value,
    effective,
    no_usable_weight,
    potentials,
    weight_table,
)
from evaluator_ext.cards import N_CARDS, CardLike, parse_cards, parse_hole_and_board
from evaluator_ext.errors import EvaluatorValueError, InvalidCardError

Cards = tuple[int, ...]
Table = tuple[tuple[float, float, float], ...]


class Kernels(Protocol):
    """What an implementation provides: counting on clean input, nothing else."""

    name: str

    def evaluate(self, cards: Cards) -> int:
        """Value 1..7462 of 5..7 distinct cards."""

    def evaluate_batch(self, cards: np.ndarray) -> np.ndarray:
        """int32 values of a C-contiguous uint8 (n, 5..7) array; a row with a card above 51
        or a card twice raises ``batch_range_error(row)`` / ``batch_duplicate_error(row)``."""

    def category_counts(self, n_cards: int) -> Sequence[int]:
        """Hands of n_cards (5..7) per category, worst first."""

    def hand_strength_counts(
        self, hole: Cards, board: Cards, weights: Optional[np.ndarray]
    ) -> tuple[float, float, float]:
        """(ahead, tied, behind) holdings (or weight sums) on a board of 3..5 cards."""

    def potential_table(self, hole: Cards, board: Cards, weights: Optional[np.ndarray]) -> Table:
        """Poki's 3x3 table on a board of 3..5 cards."""

    def hand_strength_squared(self, hole: Cards, board: Cards) -> float:
        """E[HS^2] over the runouts of a board of 3..5 cards."""

    def showdown_exact(self, hole: Cards, board: Cards, n_opponents: int) -> tuple[int, int, int]:
        """(win, tie, lose) deal counts, every deal enumerated (at most EXACT_MAX_DEALS)."""

    def showdown_monte_carlo(
        self, hole: Cards, board: Cards, n_opponents: int, trials: int, seed: int
    ) -> tuple[int, int, int]:
        """(win, tie, lose) counts of `trials` (1..MAX_TRIALS) deals drawn from `seed` (0..2**64-1)."""

    def range_equity(
        self, hole: Cards, board: Cards, weights: Optional[np.ndarray], trials: int, seed: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """(eq, counted), 1326 each, against every holding of the range (trials 0: every runout)."""

    def range_update(self, weights: np.ndarray, likelihood: np.ndarray, dead: Cards) -> np.ndarray:
        """New weights: weights * likelihood, 0 for holdings that use a dead card."""


# ---------------------------------------------------------------------------
# Input checks (the same for every implementation)
# ---------------------------------------------------------------------------

_CATEGORY_UPPER = tuple(np.cumsum(CATEGORY_SIZES).tolist())  # last value of each category
_COMBO_HI, _COMBO_LO = (
    np.array(x, dtype=np.intp) for x in zip(*[(hi, lo) for hi in range(1, N_CARDS) for lo in range(hi)])
)


@lru_cache(maxsize=16384)
def _clean_text(hole: str, board: str, sizes: tuple[int, ...]) -> tuple[Cards, Cards]:
    return parse_hole_and_board(hole, board, board_sizes=sizes)


def _plain_cards(cards: object) -> bool:
    """A tuple of plain ints 0..51 (already clean but for duplicates)."""
    return type(cards) is tuple and all(type(c) is int and 0 <= c < N_CARDS for c in cards)


def clean_hole_board(hole: CardLike, board: CardLike, sizes: tuple[int, ...]) -> tuple[Cards, Cards]:
    """parse_hole_and_board with two shortcuts: text is memoised (parsing it costs more than
    a flop enumeration in C) and tuples of plain ints skip the general parser. Errors are
    never cached.

    >>> clean_hole_board("AdQc", "3h4cJh", (3, 4, 5))
    ((49, 40), (6, 8, 38))
    """
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
def _parse_text(cards: str) -> Cards:
    return parse_cards(cards)


def _parse(cards: CardLike) -> Cards:
    """parse_cards, memoised for text."""
    if type(cards) is str:
        return _parse_text(cards)
    return parse_cards(cards)


def check_int(value: object, name: str, low: int, high: int) -> int:
    """An int (numpy ints too, never a bool or a float) in low..high; EvaluatorValueError otherwise.

    >>> check_int(3, "n_opponents", 1, 9)
    3
    """
    if not isinstance(value, bool) and not isinstance(value, np.bool_):
        try:
            number = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            pass
        else:
            if low <= number <= high:
                return number
    raise EvaluatorValueError(f"{name} must be an int {low}..{high}, got {value!r}")


def check_weights(weights: object, dead: Cards) -> Optional[np.ndarray]:
    """A clean float64 array of 1326 weights (or None); EvaluatorValueError when unusable."""
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
# The API
# ---------------------------------------------------------------------------


class Evaluator:
    """The public evaluator functions over one set of kernels (``native`` or ``reference``)."""

    def __init__(self, kernels: Kernels) -> None:
        self.kernels = kernels
        self.name = kernels.name

    # -- hand values ---------------------------------------------------------

    def evaluate(self, cards: CardLike) -> int:
        """Value 1..7462 of the best five-card hand among 5, 6 or 7 cards (higher is better).

        >>> import evaluator_ext as ev
        >>> ev.evaluate("AhKh QhJhTh 2c3d"), ev.evaluate("7c5d4h3s2c")
        (7462, 1)
        """
        clean = _parse(cards)
        if len(clean) not in (5, 6, 7):
            raise InvalidCardError(f"evaluate needs 5, 6 or 7 cards, got {len(clean)}")
        return int(self.kernels.evaluate(clean))

    def hand_category(self, value: int) -> str:
        """Category name of a hand value from :func:`evaluate`.

        >>> import evaluator_ext as ev
        >>> ev.hand_category(1), ev.hand_category(7462)
        ('high card', 'straight flush')
        """
        return CATEGORIES[bisect_left(_CATEGORY_UPPER, check_hand_value(value))]

    def evaluate_batch(self, cards: object) -> np.ndarray:
        """Values of many hands: integer array of shape (n, 5), (n, 6) or (n, 7) -> int32 array (n,).

        A C-contiguous uint8 array is read in place by the native kernels (the fast path);
        other integer arrays are range-checked and copied. A card number outside 0..51 or
        a card twice in a row raises InvalidCardError naming the row.

        >>> import numpy as np, evaluator_ext as ev
        >>> ev.evaluate_batch(np.array([[48, 49, 50, 51, 44, 0, 1]], dtype=np.uint8)).tolist()
        [7452]
        """
        shape_error = "evaluate_batch needs an integer array of shape (n, 5), (n, 6) or (n, 7)"
        try:
            arr = np.asarray(cards)
        except (TypeError, ValueError, OverflowError):  # ragged rows, objects numpy cannot hold
            raise EvaluatorValueError(f"{shape_error} (rows of one length)") from None
        if arr.ndim != 2 or arr.shape[1] not in (5, 6, 7):
            raise EvaluatorValueError(f"{shape_error}, got shape {arr.shape}")
        if arr.dtype != np.uint8:
            if arr.dtype.kind not in "iu":
                if arr.size:
                    raise EvaluatorValueError(f"{shape_error}, got dtype {arr.dtype}")
                arr = arr.astype(np.uint8)
            elif arr.size:
                bad = np.flatnonzero(((arr < 0) | (arr >= N_CARDS)).any(axis=1))
                if bad.size:
                    raise batch_range_error(int(bad[0]))
            arr = arr.astype(np.uint8)
        return self.kernels.evaluate_batch(np.ascontiguousarray(arr))

    def category_counts(self, n_cards: int = 7) -> dict[str, int]:
        """Count every hand of ``n_cards`` (5..7) cards by category (all C(52, n) hands).

        >>> import evaluator_ext as ev
        >>> ev.category_counts(5)["straight flush"]
        40
        """
        n = check_int(n_cards, "n_cards", 5, 7)
        return dict(zip(CATEGORIES, (int(x) for x in self.kernels.category_counts(n))))

    # -- hand strength and potential (exact enumeration) -------------------------

    def hand_strength_counts(
        self, hole: CardLike, board: CardLike, weights: Optional[object] = None
    ) -> tuple[float, float, float]:
        """(ahead, tied, behind): opponent holdings we beat, tie, lose to on this board.

        Ints without weights, weight sums with them.

        >>> import evaluator_ext as ev
        >>> ev.hand_strength_counts("AcQs", "3h4sJd")
        (628, 9, 444)
        """
        h, b = clean_hole_board(hole, board, (3, 4, 5))
        w = check_weights(weights, h + b)
        ahead, tied, behind = self.kernels.hand_strength_counts(h, b, w)
        if w is None:
            return int(ahead), int(tied), int(behind)
        return float(ahead), float(tied), float(behind)

    def hand_strength(
        self, hole: CardLike, board: CardLike, n_opponents: int = 1, weights: Optional[object] = None
    ) -> float:
        """Immediate hand strength (Poki): (ahead + tied/2) / all holdings, to the power n_opponents.

        >>> import evaluator_ext as ev
        >>> round(ev.hand_strength("AcQs", "3h4sJd"), 4), round(ev.hand_strength("AcQs", "3h4sJd", 2), 4)
        (0.5851, 0.3423)
        """
        n = check_int(n_opponents, "n_opponents", 1, MAX_OPPONENTS)
        h, b = clean_hole_board(hole, board, (3, 4, 5))
        w = check_weights(weights, h + b)
        ahead, tied, behind = self.kernels.hand_strength_counts(h, b, w)
        hs = (ahead + tied / 2) / (ahead + tied + behind)
        return float(hs**n)

    def potential_table(self, hole: CardLike, board: CardLike, weights: Optional[object] = None) -> Table:
        """3x3 table: rows ahead/tied/behind now, columns ahead/tied/behind after 5 board cards.

        Each opponent holding counts once per board completion (exact enumeration); ints
        without weights, weight sums with them. On the river every holding lands on the diagonal.

        >>> import evaluator_ext as ev
        >>> ev.potential_table("AdQc", "3h4cJh8d8s")
        ((492, 0, 0), (0, 9, 0), (0, 0, 489))
        """
        h, b = clean_hole_board(hole, board, (3, 4, 5))
        w = check_weights(weights, h + b)
        table = self.kernels.potential_table(h, b, w)
        if w is None:
            return tuple(tuple(int(x) for x in row) for row in table)  # type: ignore[return-value]
        return tuple(tuple(float(x) for x in row) for row in table)  # type: ignore[return-value]

    def hand_potential(self, hole: CardLike, board: CardLike, weights: Optional[object] = None) -> tuple[float, float]:
        """(PPOT, NPOT) of Billings et al. (Poki) from :func:`potential_table`; (0, 0) on the river.

        Weights are checked the same way on every street.

        >>> import evaluator_ext as ev
        >>> [round(p, 4) for p in ev.hand_potential("AdQc", "3h4cJh8d")]
        [0.1046, 0.1668]
        """
        h, b = clean_hole_board(hole, board, (3, 4, 5))
        w = check_weights(weights, h + b)
        if len(b) == 5:
            return 0.0, 0.0
        return potentials(self.kernels.potential_table(h, b, w))

    def effective_hand_strength(self, hole: CardLike, board: CardLike, n_opponents: int = 1) -> float:
        """EHS = HS_n + (1 - HS_n) * PPOT (negative potential ignored, as in Poki).

        >>> import evaluator_ext as ev
        >>> round(ev.effective_hand_strength("AdQc", "3h4cJh8d"), 4)
        0.5341
        """
        return effective(self.hand_strength(hole, board, n_opponents), self.hand_potential(hole, board)[0])

    def hand_strength_squared(self, hole: CardLike, board: CardLike) -> float:
        """E[HS^2]: the mean over all completions of the board of the river HS (one opponent) squared.

        >>> import evaluator_ext as ev
        >>> ev.hand_strength_squared("AdQc", "3h4cJh8d8s") == ev.hand_strength("AdQc", "3h4cJh8d8s") ** 2
        True
        """
        h, b = clean_hole_board(hole, board, (3, 4, 5))
        return float(self.kernels.hand_strength_squared(h, b))

    # -- showdowns ----------------------------------------------------------------

    @staticmethod
    def showdown_deals(board_cards: int, n_opponents: int = 1) -> int:
        """Deals an exact showdown enumeration visits: board completions x sets of opponent holdings.

        The opponents' holdings are an unordered set of disjoint pairs (who holds which does
        not change win/tie/lose): from m cards, C(m, 2n) * (2n - 1)!! sets. Exact integers.

        >>> import evaluator_ext as ev
        >>> ev.showdown_deals(3), ev.showdown_deals(5, 2), ev.showdown_deals(0, 9)
        (1070190, 446985, 125278874084144416856220000)
        """
        n = check_int(n_opponents, "n_opponents", 1, MAX_OPPONENTS)
        k = check_int(board_cards, "board_cards", 0, 5)
        unseen = N_CARDS - 2 - k
        to_come = 5 - k
        pairings = math.prod(range(2 * n - 1, 0, -2))  # (2n - 1)!!
        return math.comb(unseen, to_come) * math.comb(unseen - to_come, 2 * n) * pairings

    def win_probability(
        self,
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
        (1..MAX_TRIALS = 10**9) Monte Carlo deals seeded by ``seed`` (0..2**64-1;
        deterministic for a seed and an implementation); ``exact=True`` forces enumeration
        (EvaluatorValueError beyond ``EXACT_MAX_DEALS``), ``exact=False`` forces Monte Carlo.
        Long runs can be stopped with Ctrl-C (KeyboardInterrupt).

        >>> import evaluator_ext as ev
        >>> ev.win_probability("AsAc", "KdKh7c2s", exact=True)[2] > 0
        True
        >>> ev.win_probability("AsAc", trials=1000, seed=7) == ev.win_probability("AsAc", trials=1000, seed=7)
        True
        """
        h, b = clean_hole_board(hole, board, (0, 3, 4, 5))
        n = check_int(n_opponents, "n_opponents", 1, MAX_OPPONENTS)
        n_trials = check_int(trials, "trials", 1, MAX_TRIALS)
        seed_value = check_int(seed, "seed", 0, MAX_SEED)
        if exact is not None and not isinstance(exact, (bool, np.bool_)):
            raise EvaluatorValueError(f"exact must be True, False or None, got {exact!r}")
        deals = self.showdown_deals(len(b), n)
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
            win, tie, lose = self.kernels.showdown_exact(h, b, n)
        else:
            win, tie, lose = self.kernels.showdown_monte_carlo(h, b, n, n_trials, seed_value)
        total = win + tie + lose
        return win / total, tie / total, lose / total

    # -- play against a range ------------------------------------------------------

    def range_equity(
        self, hole: CardLike, board: CardLike = (), weights: Optional[object] = None, *,
        trials: Optional[int] = None, seed: int = 0,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Showdown equity of ``hole`` against every holding of an opponent's range, the rest
        of the board dealt out (nobody folds): ``(eq, counted)``, two float64 arrays of 1326.

        ``eq[h]`` is the share won plus half the share tied against holding ``h`` (index as
        :func:`~evaluator_ext.cards.combo_index`), over the runouts that leave ``h`` possible
        (card removal); ``-1`` for holdings outside the range: weight 0 (``weights``: 1326
        non-negative numbers, None = every holding) or a card of ``hole`` or ``board``.
        ``counted[h]`` is how many runouts ``eq[h]`` averages. ``trials`` None: every runout
        (boards of 3..5 cards: at most 1,081); an int 1..MAX_TRIALS: that many runouts dealt
        from ``seed`` (0..2**64-1), as a pre-flop board needs (2,118,760 runouts); the standard
        error of ``eq[h]`` is then at most ``0.5 / sqrt(counted[h])``.

        >>> import evaluator_ext as ev
        >>> eq, n = ev.range_equity("AsAh", "2c3d4h5s")
        >>> i = ev.combo_index(ev.parse_cards("6c6d")[0], ev.parse_cards("6c6d")[1])
        >>> float(eq[i]), float(n[i])        # 6-high straight vs 5-high: AA splits on a river six only
        (0.022727272727272728, 44.0)
        """
        h, b = clean_hole_board(hole, board, (0, 3, 4, 5))
        w = None if weights is None else check_weights(weights, h + b)
        if trials is None:
            if not b:
                raise EvaluatorValueError("range_equity before the flop deals 2,118,760 runouts: give trials "
                                          "(e.g. trials=2000) to sample them")
            n_trials = 0
        else:
            n_trials = check_int(trials, "trials", 1, MAX_TRIALS)
        seed_value = check_int(seed, "seed", 0, MAX_SEED)
        return self.kernels.range_equity(h, b, w, n_trials, seed_value)

    def range_update(self, weights: object, likelihood: object, dead: CardLike = ()) -> np.ndarray:
        """Bayes' rule on an opponent's range: a new weight array, ``weights * likelihood``
        (``likelihood[h]``: the probability, 0..1, that the opponent acts as it did holding
        ``h``), with 0 for every holding that uses a ``dead`` card (cards known elsewhere).

        >>> import numpy as np, evaluator_ext as ev
        >>> w = ev.range_update(np.ones(1326), np.full(1326, 0.5), "AsAh")
        >>> float(w.sum()), float(w[ev.combo_index(51, 50)])     # 101 holdings use As or Ah
        (612.5, 0.0)
        """
        w = weight_table(weights)
        try:
            lk = np.ascontiguousarray(np.asarray(likelihood), dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            raise EvaluatorValueError("likelihood must be 1326 probabilities") from None
        if lk.shape != (w.shape[0],):
            raise EvaluatorValueError(f"likelihood must have shape ({w.shape[0]},), got {lk.shape}")
        if not np.all((lk >= 0.0) & (lk <= 1.0)):
            raise EvaluatorValueError("likelihood must hold probabilities in 0..1 (no NaN)")
        cards = _parse(dead) if dead else ()
        return self.kernels.range_update(w, lk, cards)

    def export(self) -> dict[str, object]:
        """The public functions as a name -> callable dict (for a module's globals)."""
        return {name: getattr(self, name) for name in PUBLIC}


#: The functions every implementation module exports (bound methods of its Evaluator).
PUBLIC = (
    "evaluate",
    "evaluate_batch",
    "hand_category",
    "category_counts",
    "hand_strength_counts",
    "hand_strength",
    "potential_table",
    "hand_potential",
    "effective_hand_strength",
    "hand_strength_squared",
    "showdown_deals",
    "win_probability",
    "range_equity",
    "range_update",
)

__all__ = ["Kernels", "Evaluator", "PUBLIC", "check_int", "check_weights", "clean_hole_board"]
