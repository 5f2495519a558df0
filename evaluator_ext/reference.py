"""Pure-Python hand evaluator: slow, readable, and the test oracle for the native one.

Only the counting kernels are here (:class:`ReferenceKernels`); the public functions are
those of the one facade (:mod:`evaluator_ext._facade`) over them, so names, signatures,
checks and errors are those of ``evaluator_ext.native`` (the C extension), and so are the
results, except Monte Carlo draws (another generator: ``random.Random(seed)``). The
evaluator test suite runs against both.

Value encoding (shared with the native code): :func:`evaluate` returns the dense rank
1..7462 of the best five-card hand, 1 = 7-5-4-3-2 of mixed suits, 7462 = a royal
flush; two hands have equal values exactly when they tie.

How the ranks are made, without clever tables: every one of the 7,462 distinct
five-card hands is described by a *key* ``(category, ranks...)`` whose tuple order is
poker order (category 0 = high card .. 8 = straight flush; then the ranks that break
ties, most important first). All keys are generated once by construction, sorted, and
numbered 1..7462. A hand of 5, 6 or 7 cards is evaluated by counting ranks and suits
and building the key of its best five cards directly.

>>> evaluate("AsKsQsJsTs"), evaluate("7c5d4h3s2c")
(7462, 1)
>>> hand_category(evaluate("AhAdKcKd2s7h9c"))
'two pair'
>>> round(hand_strength("AcQs", "3h4sJd"), 4)
0.5851
"""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Optional

import numpy as np

from evaluator_ext._common import (
    AHEAD as _AHEAD,
)
from evaluator_ext._common import (
    BEHIND as _BEHIND,
)
from evaluator_ext._common import (
    CATEGORIES,
    CATEGORY_SIZES,
    EXACT_AUTO_MAX_DEALS,
    EXACT_MAX_DEALS,
    MAX_TRIALS,
    N_VALUES,
    batch_duplicate_error,
    batch_range_error,
    no_usable_weight,
)
from evaluator_ext._common import (
    TIED as _TIED,
)
from evaluator_ext._facade import Cards, Evaluator, Table
from evaluator_ext.cards import N_CARDS, card_rank, card_suit, combo_index
from evaluator_ext.errors import EvaluatorValueError

__all__ = [
    "CATEGORIES",
    "CATEGORY_SIZES",
    "N_VALUES",
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
    "win_probability",
    "showdown_deals",
    "range_equity",
    "range_update",
    "EXACT_AUTO_MAX_DEALS",
    "EXACT_MAX_DEALS",
    "MAX_TRIALS",
    "KERNELS",
    "EVALUATOR",
]


HIGH_CARD, ONE_PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH = range(9)
ACE = 12

# ---------------------------------------------------------------------------
# The 7,462 hand classes, built by construction and numbered in poker order.
# ---------------------------------------------------------------------------


def _straight_top(ranks: Iterable[int]) -> Optional[int]:
    """Top rank of the best straight among ``ranks`` (3 = the five-high wheel), else None."""
    present = set(ranks)
    for top in range(ACE, 3, -1):  # ace-high down to six-high
        if all(top - i in present for i in range(5)):
            return top
    if {ACE, 0, 1, 2, 3} <= present:  # A-2-3-4-5
        return 3
    return None


def _all_keys() -> list[tuple[int, ...]]:
    keys: list[tuple[int, ...]] = []
    all_ranks = range(13)
    # Five distinct ranks: high card / flush unless they form a straight.
    for five in combinations(all_ranks, 5):
        desc = tuple(sorted(five, reverse=True))
        top = _straight_top(five)
        if top is None:
            keys.append((HIGH_CARD, *desc))
            keys.append((FLUSH, *desc))
    for top in range(3, 13):
        keys.append((STRAIGHT, top))
        keys.append((STRAIGHT_FLUSH, top))
    for pair in all_ranks:
        others = [r for r in all_ranks if r != pair]
        for kickers in combinations(others, 3):
            keys.append((ONE_PAIR, pair, *sorted(kickers, reverse=True)))
        for kickers in combinations(others, 2):
            keys.append((TRIPS, pair, *sorted(kickers, reverse=True)))
        for kicker in others:
            keys.append((QUADS, pair, kicker))
            keys.append((FULL_HOUSE, pair, kicker))  # trips of `pair`, a pair of `kicker`
    for low, high in combinations(all_ranks, 2):
        for kicker in all_ranks:
            if kicker not in (low, high):
                keys.append((TWO_PAIR, high, low, kicker))
    keys.sort()
    return keys


_KEYS = _all_keys()
_VALUE_OF_KEY: dict[tuple[int, ...], int] = {key: i + 1 for i, key in enumerate(_KEYS)}
_CATEGORY_OF_VALUE: tuple[int, ...] = (-1,) + tuple(key[0] for key in _KEYS)


def _hand_key(cards: Sequence[int]) -> tuple[int, ...]:
    """Key of the best five-card hand among 5..7 clean card numbers."""
    ranks_by_suit: dict[int, list[int]] = {}
    for c in cards:
        ranks_by_suit.setdefault(card_suit(c), []).append(card_rank(c))
    flush_ranks = next((rs for rs in ranks_by_suit.values() if len(rs) >= 5), None)
    if flush_ranks is not None:
        top = _straight_top(flush_ranks)
        if top is not None:
            return (STRAIGHT_FLUSH, top)

    count = Counter(card_rank(c) for c in cards)
    # Ranks ordered by (how many, rank), most important first.
    by_count = sorted(count, key=lambda r: (count[r], r), reverse=True)
    quads = [r for r in by_count if count[r] == 4]
    trips = sorted((r for r in count if count[r] == 3), reverse=True)
    pairs = sorted((r for r in count if count[r] == 2), reverse=True)

    if quads:
        kicker = max(r for r in count if r != quads[0])
        return (QUADS, quads[0], kicker)
    if trips and (len(trips) >= 2 or pairs):
        pair_candidates = trips[1:] + pairs  # a second set of trips plays as a pair
        return (FULL_HOUSE, trips[0], max(pair_candidates))
    if flush_ranks is not None:
        return (FLUSH, *sorted(flush_ranks, reverse=True)[:5])
    top = _straight_top(count)
    if top is not None:
        return (STRAIGHT, top)
    if trips:
        kickers = sorted((r for r in count if r != trips[0]), reverse=True)[:2]
        return (TRIPS, trips[0], *kickers)
    if len(pairs) >= 2:
        high, low = pairs[0], pairs[1]
        kicker = max(r for r in count if r not in (high, low))
        return (TWO_PAIR, high, low, kicker)
    if pairs:
        kickers = sorted((r for r in count if r != pairs[0]), reverse=True)[:3]
        return (ONE_PAIR, pairs[0], *kickers)
    return (HIGH_CARD, *sorted(count, reverse=True)[:5])


def _value(cards: Sequence[int]) -> int:
    return _VALUE_OF_KEY[_hand_key(cards)]


# ---------------------------------------------------------------------------
# The kernels: plain counting on clean input (see evaluator_ext._facade.Kernels)
# ---------------------------------------------------------------------------


def _opponent_holdings(dead: Sequence[int]) -> list[tuple[int, int]]:
    deck = [c for c in range(N_CARDS) if c not in dead]
    return list(combinations(deck, 2))


def _weight_of(weights: Optional[np.ndarray], a: int, b: int) -> float:
    return 1 if weights is None else float(weights[combo_index(a, b)])


def _compare(ours: int, theirs: int) -> int:
    return _AHEAD if ours > theirs else _TIED if ours == theirs else _BEHIND


def _outcome(ours: int, theirs: Sequence[int]) -> int:
    """0 win, 1 tie, 2 lose against the best opponent hand."""
    best = max(theirs)
    return 0 if ours > best else 1 if ours == best else 2


def _opponent_sets(holdings: list[tuple[int, int]], n: int, start: int = 0, used: frozenset = frozenset()):
    """Every unordered set of ``n`` disjoint holdings (as lists of indices into ``holdings``)."""
    if n == 0:
        yield []
        return
    for i in range(start, len(holdings)):
        x, y = holdings[i]
        if x in used or y in used:
            continue
        for rest in _opponent_sets(holdings, n - 1, i + 1, used | {x, y}):
            yield [i, *rest]


class ReferenceKernels:
    """Brute-force counting in plain Python, written for clarity (the oracle of the C kernels)."""

    name = "reference"

    @staticmethod
    def evaluate(cards: Cards) -> int:
        return _value(cards)

    @staticmethod
    def evaluate_batch(cards: np.ndarray) -> np.ndarray:
        out = np.empty(cards.shape[0], dtype=np.int32)
        for i, row in enumerate(cards.tolist()):
            if any(c >= N_CARDS for c in row):
                raise batch_range_error(i)
            if len(set(row)) != len(row):
                raise batch_duplicate_error(i)
            out[i] = _value(row)
        return out

    @staticmethod
    def category_counts(n_cards: int) -> list[int]:
        """By brute force: very slow (5 cards: ~2.6 million hands); the native one is meant for this."""
        counts = [0] * len(CATEGORIES)
        for hand in combinations(range(N_CARDS), n_cards):
            counts[_hand_key(hand)[0]] += 1
        return counts

    @staticmethod
    def hand_strength_counts(hole: Cards, board: Cards, weights: Optional[np.ndarray]) -> tuple[float, float, float]:
        ours = _value(hole + board)
        ahead = tied = behind = 0
        for x, y in _opponent_holdings(hole + board):
            weight = _weight_of(weights, x, y)
            if weight == 0:
                continue
            theirs = _value((x, y) + board)
            if ours > theirs:
                ahead += weight
            elif ours == theirs:
                tied += weight
            else:
                behind += weight
        return ahead, tied, behind

    @staticmethod
    def potential_table(hole: Cards, board: Cards, weights: Optional[np.ndarray]) -> Table:
        """Each opponent holding counts once per board completion (exact enumeration)."""
        table = [[0, 0, 0] for _ in range(3)]
        ours_now = _value(hole + board)
        ours_later: dict[tuple[int, ...], int] = {}
        # the opponent's final value depends only on the set of its cards off the board (its holding
        # and the runout): one evaluation per set (each arises from several holding/runout splits)
        theirs_later: dict[int, int] = {}
        to_come = 5 - len(board)
        for x, y in _opponent_holdings(hole + board):
            weight = _weight_of(weights, x, y)
            if weight == 0:
                continue
            now = _compare(ours_now, _value((x, y) + board))
            if to_come == 0:
                table[now][now] += weight
                continue
            deck = [c for c in range(N_CARDS) if c not in hole + board and c not in (x, y)]
            held = (1 << x) | (1 << y)
            for runout in combinations(deck, to_come):
                final = board + runout
                ours = ours_later.get(runout)
                if ours is None:
                    ours = ours_later[runout] = _value(hole + final)
                key = held
                for c in runout:
                    key |= 1 << c
                theirs = theirs_later.get(key)
                if theirs is None:
                    theirs = theirs_later[key] = _value((x, y) + final)
                later = _compare(ours, theirs)
                table[now][later] += weight
        return tuple(tuple(row) for row in table)  # type: ignore[return-value]

    @staticmethod
    def hand_strength_squared(hole: Cards, board: Cards) -> float:
        deck = [c for c in range(N_CARDS) if c not in hole + board]
        total = 0.0
        n = 0
        for runout in combinations(deck, 5 - len(board)):
            ahead, tied, behind = ReferenceKernels.hand_strength_counts(hole, board + runout, None)
            hs = (ahead + tied / 2) / (ahead + tied + behind)
            total += hs * hs
            n += 1
        return total / n

    @staticmethod
    def showdown_exact(hole: Cards, board: Cards, n_opponents: int) -> tuple[int, int, int]:
        deck = [c for c in range(N_CARDS) if c not in hole + board]
        tally = [0, 0, 0]
        for runout in combinations(deck, 5 - len(board)):
            final = board + runout
            ours = _value(hole + final)
            holdings = list(combinations([c for c in deck if c not in runout], 2))
            values = [_value(holding + final) for holding in holdings]
            for chosen in _opponent_sets(holdings, n_opponents):
                tally[_outcome(ours, [values[i] for i in chosen])] += 1
        return tally[0], tally[1], tally[2]

    @staticmethod
    def showdown_monte_carlo(
        hole: Cards, board: Cards, n_opponents: int, trials: int, seed: int
    ) -> tuple[int, int, int]:
        """Deals drawn with ``random.Random(seed)`` (deterministic for a seed)."""
        deck = [c for c in range(N_CARDS) if c not in hole + board]
        to_come = 5 - len(board)
        tally = [0, 0, 0]
        rng = random.Random(seed)
        for _ in range(trials):
            dealt = rng.sample(deck, to_come + 2 * n_opponents)
            final = board + tuple(dealt[:to_come])
            theirs = [
                _value((dealt[to_come + 2 * i], dealt[to_come + 2 * i + 1]) + final) for i in range(n_opponents)
            ]
            tally[_outcome(_value(hole + final), theirs)] += 1
        return tally[0], tally[1], tally[2]


    @staticmethod
    def range_equity(hole: Cards, board: Cards, weights: Optional[np.ndarray], trials: int,
                     seed: int) -> tuple[np.ndarray, np.ndarray]:
        """Every runout (trials 0) or ``trials`` runouts from ``random.Random(seed)``; each
        holding of the range counts the runouts that leave its cards in the deck."""
        deck = [c for c in range(N_CARDS) if c not in hole + board]
        to_come = 5 - len(board)
        holdings = [(x, y) for x, y in _opponent_holdings(hole + board) if _weight_of(weights, x, y) > 0]
        if not holdings:
            raise no_usable_weight()
        if trials == 0:
            runouts: Iterable[tuple[int, ...]] = combinations(deck, to_come)
        else:
            rng = random.Random(seed)
            runouts = (tuple(rng.sample(deck, to_come)) for _ in range(trials))
        score = {h: [0.0, 0.0] for h in holdings}  # (win + tie / 2, runouts)
        # a sampled runout recurs: after the flop (at most C(47, 4) sets of cards off the board) each
        # set is evaluated once; before it, runouts seldom recur and the sets would not fit in memory
        values: Optional[dict[int, int]] = {} if to_come <= 2 else None
        for runout in runouts:
            final = board + tuple(runout)
            ours = _value(hole + final)
            drawn = 0
            for c in runout:
                drawn |= 1 << c
            for x, y in holdings:
                if x in runout or y in runout:
                    continue
                if values is None:
                    theirs = _value((x, y) + final)
                else:
                    key = drawn | (1 << x) | (1 << y)
                    theirs = values.get(key)
                    if theirs is None:
                        theirs = values[key] = _value((x, y) + final)
                s = score[(x, y)]
                s[0] += 1.0 if ours > theirs else 0.5 if ours == theirs else 0.0
                s[1] += 1.0
        eq, counted = np.full(1326, -1.0), np.zeros(1326)
        for (x, y), (points, n) in score.items():
            i = combo_index(x, y)
            counted[i] = n
            if n:
                eq[i] = points / n
        return eq, counted

    @staticmethod
    def range_update(weights: np.ndarray, likelihood: np.ndarray, dead: Cards) -> np.ndarray:
        out = np.zeros(1326)
        for hi in range(1, N_CARDS):
            for lo in range(hi):
                if hi in dead or lo in dead:
                    continue
                i = combo_index(hi, lo)
                out[i] = float(weights[i]) * float(likelihood[i])
        return out

KERNELS = ReferenceKernels()
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
