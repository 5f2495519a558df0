"""Property tests (hypothesis) of the evaluator, for both implementations, and native == reference."""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from evaluator_ext.cards import combo_index
from tests.conftest import HealthCheck, given, settings, st  # hypothesis, or stand-ins that skip without it

PROPERTY = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.large_base_example],
)
SLOW_PROPERTY = settings(PROPERTY, max_examples=4)

deck_orders = st.permutations(list(range(52)))
suit_maps = st.permutations([0, 1, 2, 3])


@PROPERTY
@given(deck=deck_orders, n=st.sampled_from([5, 6, 7]), data=st.data())
def test_order_invariance(impl, deck: list[int], n: int, data: st.DataObject) -> None:
    cards = deck[:n]
    shuffled = data.draw(st.permutations(cards))
    assert impl.evaluate(cards) == impl.evaluate(shuffled)


@PROPERTY
@given(deck=deck_orders, suits=suit_maps, n=st.sampled_from([5, 6, 7]))
def test_suit_relabelling_invariance(impl, deck: list[int], suits: list[int], n: int) -> None:
    cards = deck[:n]
    relabelled = [(c >> 2) * 4 + suits[c & 3] for c in cards]
    assert impl.evaluate(cards) == impl.evaluate(relabelled)


@PROPERTY
@given(deck=deck_orders, suits=suit_maps)
def test_hand_strength_suit_relabelling_invariance(impl, deck: list[int], suits: list[int]) -> None:
    relabel = [(c >> 2) * 4 + suits[c & 3] for c in deck[:7]]
    assert impl.hand_strength(deck[:2], deck[2:7]) == pytest.approx(impl.hand_strength(relabel[:2], relabel[2:7]), abs=1e-12)


@PROPERTY
@given(hands=st.lists(deck_orders, min_size=1, max_size=20), n=st.sampled_from([5, 6, 7]))
def test_batch_equals_scalar(impl, hands: list[list[int]], n: int) -> None:
    batch = np.array([h[:n] for h in hands], dtype=np.uint8)
    assert [int(v) for v in impl.evaluate_batch(batch)] == [impl.evaluate(h[:n]) for h in hands]


@PROPERTY
@given(deck=deck_orders, n=st.sampled_from([6, 7]))
def test_best_of_five_card_subsets(impl, deck: list[int], n: int) -> None:
    cards = deck[:n]
    assert impl.evaluate(cards) == max(impl.evaluate(list(five)) for five in combinations(cards, 5))


@PROPERTY
@given(deck=deck_orders, board_size=st.sampled_from([3, 4, 5]))
def test_head_to_head_hand_strengths_sum_to_one(impl, deck: list[int], board_size: int) -> None:
    a, b, board = deck[:2], deck[2:4], deck[4 : 4 + board_size]
    only_b = np.zeros(1326)
    only_b[combo_index(*b)] = 1.0
    only_a = np.zeros(1326)
    only_a[combo_index(*a)] = 1.0
    hs_ab = impl.hand_strength(a, board, weights=only_b)
    hs_ba = impl.hand_strength(b, board, weights=only_a)
    assert hs_ab + hs_ba == pytest.approx(1.0, abs=1e-12)
    assert hs_ab in (0.0, 0.5, 1.0)


@PROPERTY
@given(
    deck=deck_orders,
    board_size=st.sampled_from([0, 3, 4, 5]),
    n_opponents=st.integers(1, 9),
    seed=st.integers(0, 2**31),
)
def test_win_tie_lose_sum_to_one_and_seed_determinism(
    impl, deck: list[int], board_size: int, n_opponents: int, seed: int
) -> None:
    hole, board = deck[:2], deck[2 : 2 + board_size]
    first = impl.win_probability(hole, board, n_opponents=n_opponents, trials=50, seed=seed, exact=False)
    again = impl.win_probability(hole, board, n_opponents=n_opponents, trials=50, seed=seed, exact=False)
    assert first == again
    assert sum(first) == pytest.approx(1.0, abs=1e-12)
    assert all(0.0 <= p <= 1.0 for p in first)


@PROPERTY
@given(deck=deck_orders, board_size=st.sampled_from([3, 4, 5]))
def test_potentials_are_probabilities(native, deck: list[int], board_size: int) -> None:
    """Native only: a turn costs the reference about a second (the agreement test covers it)."""
    hole, board = deck[:2], deck[2 : 2 + board_size]
    ppot, npot = native.hand_potential(hole, board)
    assert 0.0 <= ppot <= 1.0 and 0.0 <= npot <= 1.0
    ehs = native.effective_hand_strength(hole, board)
    assert native.hand_strength(hole, board) - 1e-12 <= ehs <= 1.0 + 1e-12


# ---------------------------------------------------------------------------
# The native implementation agrees with the reference (skips when native is not built)
# ---------------------------------------------------------------------------


@PROPERTY
@given(hands=st.lists(deck_orders, min_size=1, max_size=30), n=st.sampled_from([5, 6, 7]))
def test_native_values_equal_reference(native, reference, hands: list[list[int]], n: int) -> None:
    batch = np.array([h[:n] for h in hands], dtype=np.uint8)
    assert native.evaluate_batch(batch).tolist() == reference.evaluate_batch(batch).tolist()


@PROPERTY
@given(deck=deck_orders, board_size=st.sampled_from([3, 4, 5]), n_opponents=st.integers(1, 9))
def test_native_hand_strength_equals_reference(native, reference, deck, board_size, n_opponents) -> None:
    hole, board = deck[:2], deck[2 : 2 + board_size]
    assert native.hand_strength(hole, board, n_opponents) == pytest.approx(
        reference.hand_strength(hole, board, n_opponents), rel=1e-12
    )


@PROPERTY
@given(deck=deck_orders, seed=st.integers(0, 2**32 - 1), density=st.sampled_from([0.0, 0.001, 0.01, 0.5, 1.0]))
def test_native_weighted_hand_strength_equals_reference(native, reference, deck, seed, density) -> None:
    """Random weight tables, sparse to dense (all-zero usable weights must raise in both)."""
    hole, board = deck[:2], deck[2:6]
    rng = np.random.default_rng(seed)
    w = rng.random(1326) * 10 * (rng.random(1326) < density)
    try:
        expected = reference.hand_strength(hole, board, weights=w)
    except ValueError:
        with pytest.raises(ValueError):
            native.hand_strength(hole, board, weights=w)
        return
    assert native.hand_strength(hole, board, weights=w) == pytest.approx(expected, rel=1e-9)


@SLOW_PROPERTY
@given(deck=deck_orders, board_size=st.sampled_from([4, 5]))
def test_native_turn_and_river_functions_equal_reference(native, reference, deck, board_size) -> None:
    hole, board = deck[:2], deck[2 : 2 + board_size]
    ref_table = reference.potential_table(hole, board)
    assert [[int(x) for x in row] for row in native.potential_table(hole, board)] == [list(r) for r in ref_table]
    ref_ppot, ref_npot = reference.hand_potential(hole, board)
    assert native.hand_potential(hole, board) == pytest.approx((ref_ppot, ref_npot), abs=1e-12)
    if board_size == 5:  # (E[HS^2] on the turn: checked per river in test_evaluator.py)
        assert native.hand_strength_squared(hole, board) == pytest.approx(
            reference.hand_strength_squared(hole, board), abs=1e-12
        )
    # Exact showdown (heads-up turn / river): the same enumeration in both.
    assert native.win_probability(hole, board) == pytest.approx(reference.win_probability(hole, board), abs=1e-12)
