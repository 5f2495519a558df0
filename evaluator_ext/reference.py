"""Pure-Python hand evaluator: slow, readable, and the test oracle for the native one.

Every public function here has the same name, signature and results as in
``evaluator_ext.native`` (the C extension); the evaluator test suite runs against both.

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

import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Optional

import numpy as np

from evaluator_ext.cards import (
    N_CARDS,
    CardLike,
    card_rank,
    card_suit,
    combo_index,
    parse_cards,
    parse_hole_and_board,
)
from evaluator_ext._common import (
    AHEAD as _AHEAD,
    BEHIND as _BEHIND,
    CATEGORIES,
    CATEGORY_SIZES,
    MAX_OPPONENTS,
    N_VALUES,
    TIED as _TIED,
    check_hand_value,
    effective,
    no_usable_weight,
    potentials,
    weight_table,
)
from evaluator_ext.errors import EvaluatorValueError, InvalidCardError

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
    "EXACT_AUTO_MAX_DEALS",
    "EXACT_MAX_DEALS",
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
# Input checks
# ---------------------------------------------------------------------------


def _check_opponents(n_opponents: int) -> int:
    if isinstance(n_opponents, bool) or not isinstance(n_opponents, (int, np.integer)):
        raise EvaluatorValueError(f"n_opponents must be an int 1..{MAX_OPPONENTS}, got {n_opponents!r}")
    if not 1 <= n_opponents <= MAX_OPPONENTS:
        raise EvaluatorValueError(f"n_opponents must be 1..{MAX_OPPONENTS}, got {n_opponents}")
    return int(n_opponents)


def _postflop(hole: CardLike, board: CardLike) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return parse_hole_and_board(hole, board, board_sizes=(3, 4, 5))


def _check_weights(weights: object, dead: Sequence[int]) -> Optional[np.ndarray]:
    """Validate a 1326-entry weight table; None stays None. Clashing combos count 0."""
    if weights is None:
        return None
    usable = weight_table(weights).copy()
    for a in range(N_CARDS):
        for b in range(a + 1, N_CARDS):
            if a in dead or b in dead:
                usable[combo_index(a, b)] = 0.0
    if usable.sum() <= 0:
        raise no_usable_weight()
    return usable


def _opponent_holdings(dead: Sequence[int]) -> list[tuple[int, int]]:
    deck = [c for c in range(N_CARDS) if c not in dead]
    return list(combinations(deck, 2))


def _weight_of(weights: Optional[np.ndarray], a: int, b: int) -> float:
    return 1 if weights is None else float(weights[combo_index(a, b)])


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def evaluate(cards: CardLike) -> int:
    """Value 1..7462 of the best five-card hand among 5, 6 or 7 cards (higher is better).

    >>> evaluate("AhKh QhJhTh 2c3d")
    7462
    """
    clean = parse_cards(cards)
    if len(clean) not in (5, 6, 7):
        raise InvalidCardError(f"evaluate needs 5, 6 or 7 cards, got {len(clean)}")
    return _value(clean)


def hand_category(value: int) -> str:
    """Category name of a hand value from :func:`evaluate`.

    >>> hand_category(1), hand_category(7462)
    ('high card', 'straight flush')
    """
    return CATEGORIES[_CATEGORY_OF_VALUE[check_hand_value(value)]]


def evaluate_batch(cards: np.ndarray) -> np.ndarray:
    """Values of many hands: an int array of shape (n, 5), (n, 6) or (n, 7) -> int32 array (n,).

    >>> evaluate_batch(np.array([[48, 49, 50, 51, 44, 0, 1]], dtype=np.uint8)).tolist()  # four aces, king
    [7452]
    """
    arr = np.asarray(cards)
    if arr.ndim != 2 or arr.shape[1] not in (5, 6, 7):
        raise EvaluatorValueError(f"evaluate_batch needs an array of shape (n, 5), (n, 6) or (n, 7), got {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise EvaluatorValueError(f"evaluate_batch needs integer card numbers, got dtype {arr.dtype}")
    out = np.empty(arr.shape[0], dtype=np.int32)
    for i, row in enumerate(arr.tolist()):
        clean = parse_cards(row)  # range and duplicate checks
        out[i] = _value(clean)
    return out


def category_counts(n_cards: int = 7) -> dict[str, int]:
    """Count every hand of ``n_cards`` (5..7) cards by category, by brute force.

    Very slow in pure Python (5 cards: ~2.6 million hands); the native version is the
    one meant for this. Keys are the names of :data:`CATEGORIES`.
    """
    if n_cards not in (5, 6, 7):
        raise EvaluatorValueError(f"n_cards must be 5, 6 or 7, got {n_cards!r}")
    counts = dict.fromkeys(CATEGORIES, 0)
    for hand in combinations(range(N_CARDS), n_cards):
        counts[CATEGORIES[_hand_key(hand)[0]]] += 1
    return counts


def hand_strength_counts(
    hole: CardLike, board: CardLike, weights: Optional[object] = None
) -> tuple[float, float, float]:
    """(ahead, tied, behind): opponent holdings we beat, tie, lose to on this board.

    Counts without weights, weight sums with them.

    >>> hand_strength_counts("AcQs", "3h4sJd")
    (628, 9, 444)
    """
    h, b = _postflop(hole, board)
    w = _check_weights(weights, h + b)
    ours = _value(h + b)
    ahead = tied = behind = 0
    for x, y in _opponent_holdings(h + b):
        weight = _weight_of(w, x, y)
        if weight == 0:
            continue
        theirs = _value((x, y) + b)
        if ours > theirs:
            ahead += weight
        elif ours == theirs:
            tied += weight
        else:
            behind += weight
    return ahead, tied, behind


def hand_strength(
    hole: CardLike, board: CardLike, n_opponents: int = 1, weights: Optional[object] = None
) -> float:
    """Immediate hand strength: P(ahead) + P(tied)/2 over all opponent holdings, to the power n.

    >>> round(hand_strength("AcQs", "3h4sJd", n_opponents=2), 4)
    0.3423
    """
    n = _check_opponents(n_opponents)
    ahead, tied, behind = hand_strength_counts(hole, board, weights)
    hs = (ahead + tied / 2) / (ahead + tied + behind)
    return float(hs**n)




def _compare(ours: int, theirs: int) -> int:
    return _AHEAD if ours > theirs else _TIED if ours == theirs else _BEHIND


def potential_table(
    hole: CardLike, board: CardLike, weights: Optional[object] = None
) -> tuple[tuple[float, float, float], ...]:
    """3x3 table: rows ahead/tied/behind now, columns ahead/tied/behind after 5 board cards.

    Each opponent holding counts once per board completion (exact enumeration). On the
    river nothing is to come, so every holding lands on the diagonal.

    >>> potential_table("AdQc", "3h4cJh8d8s")
    ((492, 0, 0), (0, 9, 0), (0, 0, 489))
    """
    h, b = _postflop(hole, board)
    w = _check_weights(weights, h + b)
    table = [[0, 0, 0] for _ in range(3)]
    ours_now = _value(h + b)
    ours_later: dict[tuple[int, ...], int] = {}
    to_come = 5 - len(b)
    for x, y in _opponent_holdings(h + b):
        weight = _weight_of(w, x, y)
        if weight == 0:
            continue
        now = _compare(ours_now, _value((x, y) + b))
        if to_come == 0:
            table[now][now] += weight
            continue
        deck = [c for c in range(N_CARDS) if c not in h + b and c not in (x, y)]
        for runout in combinations(deck, to_come):
            final = b + runout
            ours = ours_later.get(runout)
            if ours is None:
                ours = ours_later[runout] = _value(h + final)
            later = _compare(ours, _value((x, y) + final))
            table[now][later] += weight
    return tuple(tuple(row) for row in table)


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

    >>> round(effective_hand_strength("AdQc", "3h4cJh8d"), 4)
    0.5341
    """
    return effective(hand_strength(hole, board, n_opponents), hand_potential(hole, board)[0])


def hand_strength_squared(hole: CardLike, board: CardLike) -> float:
    """E[HS^2]: the mean over all completions of the board of the river HS (one opponent) squared.

    >>> round(hand_strength_squared("AdQc", "3h4cJh8d8s"), 4) == round(hand_strength("AdQc", "3h4cJh8d8s") ** 2, 4)
    True
    """
    h, b = _postflop(hole, board)
    deck = [c for c in range(N_CARDS) if c not in h + b]
    total = 0.0
    n = 0
    for runout in combinations(deck, 5 - len(b)):
        hs = hand_strength(h, b + runout)
        total += hs * hs
        n += 1
    return total / n


#: ``win_probability(exact=None)`` enumerates when a showdown has at most this many deals
#: (heads-up turn 45,540 and river 990; two opponents on the river 446,985).
EXACT_AUTO_MAX_DEALS = 500_000
#: ``win_probability(exact=True)`` refuses more deals than this (heads-up flop: 1,070,190).
EXACT_MAX_DEALS = 50_000_000


def showdown_deals(board_cards: int, n_opponents: int = 1) -> int:
    """Deals an exact showdown enumeration visits: board completions x sets of opponent holdings.

    The opponents' holdings are an unordered set of disjoint pairs (who holds which does
    not change win/tie/lose): from m cards, C(m, 2n) * (2n - 1)!! sets.

    >>> showdown_deals(3), showdown_deals(5, 2)
    (1070190, 446985)
    """
    n = _check_opponents(n_opponents)
    if isinstance(board_cards, bool) or not isinstance(board_cards, (int, np.integer)) or not 0 <= board_cards <= 5:
        raise EvaluatorValueError(f"board_cards must be 0..5, got {board_cards!r}")
    unseen = N_CARDS - 2 - board_cards
    to_come = 5 - board_cards
    left = unseen - to_come
    pairings = math.prod(range(2 * n - 1, 0, -2))  # (2n - 1)!!
    return math.comb(unseen, to_come) * math.comb(left, 2 * n) * pairings


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


def _enumerate_showdowns(h: tuple[int, ...], b: tuple[int, ...], n: int) -> list[int]:
    deck = [c for c in range(N_CARDS) if c not in h + b]
    tally = [0, 0, 0]
    for runout in combinations(deck, 5 - len(b)):
        final = b + runout
        ours = _value(h + final)
        holdings = list(combinations([c for c in deck if c not in runout], 2))
        values = [_value(holding + final) for holding in holdings]
        for chosen in _opponent_sets(holdings, n):
            tally[_outcome(ours, [values[i] for i in chosen])] += 1
    return tally


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
    of them (see :func:`showdown_deals`; heads-up turn or river, two opponents on the
    river), otherwise runs ``trials`` Monte Carlo deals drawn with ``random.Random(seed)``
    (deterministic for a seed); ``exact=True`` forces enumeration (ValueError beyond
    ``EXACT_MAX_DEALS``), ``exact=False`` forces Monte Carlo.

    >>> win_probability("AsAc", "KdKh7c2s")[2] > 0
    True
    >>> win_probability("AsAc", trials=200, seed=7) == win_probability("AsAc", trials=200, seed=7)
    True
    """
    h, b = parse_hole_and_board(hole, board)
    n = _check_opponents(n_opponents)
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 1:
        raise EvaluatorValueError(f"trials must be a positive int, got {trials!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise EvaluatorValueError(f"seed must be an int, got {seed!r}")
    if exact is not None and not isinstance(exact, (bool, np.bool_)):
        raise EvaluatorValueError(f"exact must be True, False or None, got {exact!r}")
    deals = showdown_deals(len(b), n)
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
        tally = _enumerate_showdowns(h, b, n)
    else:
        deck = [c for c in range(N_CARDS) if c not in h + b]
        to_come = 5 - len(b)
        tally = [0, 0, 0]
        rng = random.Random(int(seed))
        for _ in range(int(trials)):
            dealt = rng.sample(deck, to_come + 2 * n)
            final = b + tuple(dealt[:to_come])
            theirs = [_value((dealt[to_come + 2 * i], dealt[to_come + 2 * i + 1]) + final) for i in range(n)]
            tally[_outcome(_value(h + final), theirs)] += 1
    total = sum(tally)
    return tally[0] / total, tally[1] / total, tally[2] / total
