"""The evaluator suite: published values, exhaustive counts, cross-checks with eval7, bad input.

Every test that takes ``impl`` runs against the pure-Python reference and the native
extension (see ``tests/evaluator/support.py``). Published values come from
../shared/data/reference/README.md (Poki / Billings et al. tables, the ITU thesis tables).
"""
from __future__ import annotations

import os
import random
from itertools import combinations

import numpy as np
import pytest

import evaluator_ext
from evaluator_ext.cards import combo_index, parse_cards
from tests.conftest import require_module
from tests.evaluator.support import REQUIRE_NATIVE, is_native

CATEGORY_ORDER = (
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

# ---------------------------------------------------------------------------
# The facade and the sentinel
# ---------------------------------------------------------------------------


def test_native_required_sentinel() -> None:
    """Fails (not skips) when CI demands the native evaluator and it is missing."""
    if not REQUIRE_NATIVE:
        pytest.skip("CBR_REQUIRE_NATIVE is not set; the facade may fall back to the reference")
    import evaluator_ext.native  # noqa: F401  (ImportError fails the test)

    assert evaluator_ext.IMPLEMENTATION == "native"
    assert evaluator_ext.CFR_IMPLEMENTATION == "native" and evaluator_ext.MCCFR_AVAILABLE


def test_facade_uses_native_when_it_imports() -> None:
    try:
        from evaluator_ext import native as native_module

        available = all(callable(getattr(native_module, n, None)) for n in evaluator_ext.API)
    except ImportError:
        available = False
    assert evaluator_ext.IMPLEMENTATION == ("native" if available else "reference")
    module = native_module if available else evaluator_ext.reference
    for name in evaluator_ext.API:
        assert getattr(evaluator_ext, name) is getattr(module, name)


def test_facade_reexports_cards_and_errors() -> None:
    assert evaluator_ext.parse_cards("Ah Kd") == (50, 45)
    assert evaluator_ext.card_str(51) == "As"
    assert issubclass(evaluator_ext.InvalidCardError, evaluator_ext.CBRError)
    assert issubclass(evaluator_ext.InvalidCardError, ValueError)
    assert evaluator_ext.preflop_class("Ah Kh") == "AKs"


# ---------------------------------------------------------------------------
# Value encoding
# ---------------------------------------------------------------------------


def test_extreme_values(impl) -> None:
    assert impl.evaluate("7c5d4h3s2c") == 1
    assert impl.evaluate("AsKsQsJsTs") == 7462
    assert impl.evaluate("5s4s3s2sAs") == 7453  # the five-high straight flush is the lowest
    assert impl.evaluate("AcAdAhAsKc") == 7452


def test_categories_partition_the_values(impl) -> None:
    """Values 1..7462 fall into the nine categories in order, with the published class counts."""
    names = [impl.hand_category(v) for v in range(1, 7463)]
    sizes = [names.count(c) for c in CATEGORY_ORDER]
    assert sizes == [1277, 2860, 858, 858, 10, 1277, 156, 156, 10]
    firsts = [names.index(c) for c in CATEGORY_ORDER]
    assert firsts == sorted(firsts)


@pytest.mark.parametrize(
    ("hand", "category"),
    [
        ("2c3d4h5s7c", "high card"),
        ("2c2d4h5s7c", "one pair"),
        ("2c2d4h4s7c", "two pair"),
        ("2c2d2h5s7c", "three of a kind"),
        ("Ac2d3h4s5c", "straight"),
        ("Tc Jd Qh Ks Ac", "straight"),
        ("2c4c6c8cTc", "flush"),
        ("2c2d2h5s5c", "full house"),
        ("2c2d2h2s7c", "four of a kind"),
        ("Ac2c3c4c5c", "straight flush"),
        ("2c2d2h5s5c5d9s", "full house"),  # two sets of trips
        ("AhKhQhJh9h8s7d", "flush"),
        ("6c7d8h9sTcJcQc", "straight"),
        ("AhAdKhKdQsQc2h", "two pair"),
    ],
)
def test_categories_of_examples(impl, hand: str, category: str) -> None:
    assert impl.hand_category(impl.evaluate(hand)) == category


def test_seven_card_subtleties(impl) -> None:
    # Three pairs: the best two play, the third pair's rank can be the kicker.
    assert impl.evaluate("AhAdKhKdQsQc2h") == impl.evaluate("AhAdKhKdQs")
    # Flush beats the straight on the same seven cards; a six-high straight beats the wheel.
    assert impl.evaluate("Ah2h3h4h9h5c6d") > impl.evaluate("Ah2c3d4s5c6d9h")
    assert impl.evaluate("2c3d4h5s6c") > impl.evaluate("Ac2d3h4s5c")


# ---------------------------------------------------------------------------
# Published values (Poki)
# ---------------------------------------------------------------------------

PUBLISHED_POTENTIAL = ((449005, 3211, 169504), (0, 8370, 540), (91981, 1036, 346543))


def test_published_hand_strength(impl) -> None:
    """AcQs on 3h4sJd: 628 ahead, 9 tied, 444 behind of 1081 holdings; HS = 0.5851."""
    hs = impl.hand_strength("AcQs", "3h4sJd")
    assert hs * 1081 == pytest.approx(628 + 9 / 2, abs=1e-9)
    assert round(hs, 4) == 0.5851
    assert impl.hand_strength("AcQs", "3h4sJd", n_opponents=3) == pytest.approx(hs**3, rel=1e-12)


def test_published_hand_strength_counts() -> None:
    assert tuple(evaluator_ext.hand_strength_counts("AcQs", "3h4sJd")) == (628, 9, 444)
    assert tuple(evaluator_ext.reference.hand_strength_counts("AcQs", "3h4sJd")) == (628, 9, 444)


@pytest.mark.slow
def test_published_potential_table_reference(reference) -> None:
    """All nine counts of Billings et al.'s table 4 (about 10 s in pure Python)."""
    assert reference.potential_table("AdQc", "3h4cJh") == PUBLISHED_POTENTIAL


def test_published_potential_native(native) -> None:
    table = native.potential_table("AdQc", "3h4cJh")
    assert tuple(tuple(int(x) for x in row) for row in table) == PUBLISHED_POTENTIAL
    ppot, npot = native.hand_potential("AdQc", "3h4cJh")
    assert (round(ppot, 4), round(npot, 4)) == (0.2083, 0.2737)
    assert round(native.effective_hand_strength("AdQc", "3h4cJh"), 4) == 0.6715


def test_published_potential_formulas_reference(reference, monkeypatch: pytest.MonkeyPatch) -> None:
    """PPOT/NPOT/EHS from the published table, through the reference's own formulas."""
    monkeypatch.setattr(reference.KERNELS, "potential_table", lambda hole, board, weights: PUBLISHED_POTENTIAL)
    ppot, npot = reference.hand_potential("AdQc", "3h4cJh")
    assert (round(ppot, 4), round(npot, 4)) == (0.2083, 0.2737)
    assert round(reference.effective_hand_strength("AdQc", "3h4cJh"), 4) == 0.6715


# ---------------------------------------------------------------------------
# Potential table, E[HS^2], exact win probability: consistency between the functions
# ---------------------------------------------------------------------------


def test_potential_table_turn_rows_and_columns(impl) -> None:
    hole, board = "AdQc", "3h4cJh8d"
    table = np.array(impl.potential_table(hole, board), dtype=float)
    ahead, tied, behind = evaluator_ext.reference.hand_strength_counts(hole, board)
    rivers = 52 - 2 - 4 - 2  # one river per opponent holding
    assert table.sum(axis=1).tolist() == [ahead * rivers, tied * rivers, behind * rivers]
    # Columns: final outcomes over every (opponent holding, river) = exact win/tie/lose.
    win, tie, lose = impl.win_probability(hole, board, exact=True)
    total = table.sum()
    assert table.sum(axis=0) / total == pytest.approx([win, tie, lose], abs=1e-12)


def test_river_potential_is_diagonal(impl) -> None:
    table = impl.potential_table("AdQc", "3h4cJh8d8s")
    counts = evaluator_ext.reference.hand_strength_counts("AdQc", "3h4cJh8d8s")
    assert [[float(x) for x in row] for row in table] == [
        [counts[0], 0, 0],
        [0, counts[1], 0],
        [0, 0, counts[2]],
    ]
    assert tuple(impl.hand_potential("AdQc", "3h4cJh8d8s")) == (0.0, 0.0)


def test_effective_hand_strength_formula(impl) -> None:
    hole, board = "9h8h", "7h6c2d2s"
    ppot, _ = impl.hand_potential(hole, board)
    for n in (1, 2, 4) if is_native(impl) else (3,):
        hs = impl.hand_strength(hole, board, n_opponents=n)
        assert impl.effective_hand_strength(hole, board, n_opponents=n) == pytest.approx(hs + (1 - hs) * ppot, abs=1e-12)


def test_hand_strength_squared(impl) -> None:
    river = "3h4cJh8d8s"
    assert impl.hand_strength_squared("AdQc", river) == pytest.approx(impl.hand_strength("AdQc", river) ** 2, abs=1e-12)
    turn = "3h4cJh8d"
    known = set(parse_cards("AdQc" + turn))
    squares = [impl.hand_strength("AdQc", parse_cards(turn) + (c,)) ** 2 for c in range(52) if c not in known]
    assert impl.hand_strength_squared("AdQc", turn) == pytest.approx(sum(squares) / len(squares), abs=1e-12)


def test_river_exact_win_probability_equals_counts(impl) -> None:
    ahead, tied, behind = evaluator_ext.reference.hand_strength_counts("AcQs", "3h4sJd9c2h")
    total = ahead + tied + behind
    got = impl.win_probability("AcQs", "3h4sJd9c2h")  # exact by default on the river
    assert got == pytest.approx((ahead / total, tied / total, behind / total), abs=1e-12)


# ---------------------------------------------------------------------------
# Weights
# ---------------------------------------------------------------------------


def test_uniform_weights_equal_no_weights(impl) -> None:
    ones = np.ones(1326)
    assert impl.hand_strength("AcQs", "3h4sJd", weights=ones) == pytest.approx(impl.hand_strength("AcQs", "3h4sJd"))
    table = impl.potential_table("AdQc", "3h4cJh8d", weights=ones * 2.0)
    plain = impl.potential_table("AdQc", "3h4cJh8d")
    assert np.allclose(np.array(table, dtype=float), 2.0 * np.array(plain, dtype=float))
    if is_native(impl):  # (the same tables again: too slow for the reference)
        got = impl.hand_potential("AdQc", "3h4cJh8d", weights=ones)
        assert got == pytest.approx(impl.hand_potential("AdQc", "3h4cJh8d"))


def test_weights_on_one_holding(impl) -> None:
    w = np.zeros(1326)
    w[combo_index(*parse_cards("JcJs"))] = 1.0  # a set of jacks beats us
    w[combo_index(*parse_cards("AcKd"))] = 5.0  # clashes with our ace of clubs: ignored
    assert impl.hand_strength("AcQs", "3h4sJd", weights=w) == 0.0
    w[combo_index(*parse_cards("2c2d"))] = 1.0  # a pair of deuces also beats our ace high
    assert impl.hand_strength("AcQs", "3h4sJd", weights=w) == pytest.approx(0.0)
    w[combo_index(*parse_cards("Tc9c"))] = 2.0  # ten high: we are ahead
    assert impl.hand_strength("AcQs", "3h4sJd", weights=w) == pytest.approx(2.0 / 4.0)


# ---------------------------------------------------------------------------
# Exhaustive counts (native only: the reference would take hours)
# ---------------------------------------------------------------------------

SEVEN_CARD_COUNTS = {
    "straight flush": 41_584,
    "four of a kind": 224_848,
    "full house": 3_473_184,
    "flush": 4_047_644,
    "straight": 6_180_020,
    "three of a kind": 6_461_620,
    "two pair": 31_433_400,
    "one pair": 58_627_800,
    "high card": 23_294_460,
}


def _counts_by_name(result) -> dict[str, int]:
    if isinstance(result, dict):
        return {str(k): int(v) for k, v in result.items()}
    return {name: int(v) for name, v in zip(CATEGORY_ORDER, result, strict=True)}


def test_seven_card_category_counts(native) -> None:
    assert _counts_by_name(native.category_counts()) == SEVEN_CARD_COUNTS


def test_all_five_card_hands(native) -> None:
    hands = np.array(list(combinations(range(52), 5)), dtype=np.uint8)
    assert len(hands) == 2_598_960
    values = native.evaluate_batch(hands)
    distinct = np.unique(values)
    assert len(distinct) == 7462
    assert distinct.min() == 1 and distinct.max() == 7462
    # Frequencies of the 5-card categories (textbook figures).
    bounds = np.cumsum([0, 1277, 2860, 858, 858, 10, 1277, 156, 156, 10])
    per_category = np.histogram(values, bins=bounds + 0.5)[0].tolist()
    assert per_category == [1_302_540, 1_098_240, 123_552, 54_912, 10_200, 5_108, 3_744, 624, 40]


# ---------------------------------------------------------------------------
# Cross-check with eval7 (an independent evaluator)
# ---------------------------------------------------------------------------

EVAL7_TYPES = {
    "High Card": "high card",
    "Pair": "one pair",
    "Two Pair": "two pair",
    "Trips": "three of a kind",
    "Straight": "straight",
    "Flush": "flush",
    "Full House": "full house",
    "Quads": "four of a kind",
    "Straight Flush": "straight flush",
}


def _random_pairs(n: int, seed: int) -> list[tuple[list[int], list[int]]]:
    """Pairs of 7-card hands; half share the five board cards (so ties and near-ties are common)."""
    rng = random.Random(seed)
    pairs = []
    for i in range(n):
        if i % 2:
            pairs.append((rng.sample(range(52), 7), rng.sample(range(52), 7)))
        else:
            cards = rng.sample(range(52), 9)
            board = cards[4:]
            pairs.append((cards[:2] + board, cards[2:4] + board))
    return pairs


def test_cross_check_eval7(impl) -> None:
    eval7 = require_module("eval7")
    from evaluator_ext.cards import card_str

    n = 20_000 if is_native(impl) else 500
    pairs = _random_pairs(n, seed=7)

    def theirs(hand: list[int]) -> int:
        return eval7.evaluate([eval7.Card(card_str(c)) for c in hand])

    flat = np.array([h for pair in pairs for h in pair], dtype=np.uint8)
    ours = impl.evaluate_batch(flat).tolist()
    ties = 0
    for i, (a, b) in enumerate(pairs):
        ea, eb = theirs(a), theirs(b)
        oa, ob = ours[2 * i], ours[2 * i + 1]
        assert (oa > ob) - (oa < ob) == (ea > eb) - (ea < eb), (a, b)
        assert impl.hand_category(oa) == EVAL7_TYPES[eval7.handtype(ea)]
        ties += oa == ob
    assert ties > 0  # the sample did exercise equality


def test_cross_check_pokerkit(impl) -> None:
    pokerkit = require_module("pokerkit")
    from evaluator_ext.cards import card_str

    rng = random.Random(11)
    for _ in range(200 if is_native(impl) else 50):
        cards = rng.sample(range(52), 9)
        board = "".join(card_str(c) for c in cards[4:])
        a, b = "".join(card_str(c) for c in cards[:2]), "".join(card_str(c) for c in cards[2:4])
        pa = pokerkit.StandardHighHand.from_game(a, board)
        pb = pokerkit.StandardHighHand.from_game(b, board)
        oa, ob = impl.evaluate(a + board), impl.evaluate(b + board)
        assert (oa > ob) - (oa < ob) == (pa > pb) - (pa < pb)


# ---------------------------------------------------------------------------
# Bad input: ValueError with a message naming the problem, in both implementations
# ---------------------------------------------------------------------------

BAD_CALLS = [
    ("evaluate", ("AhKdQcJs9x",), {}, "9x"),
    ("evaluate", ("AhKdQcJs",), {}, "4"),
    ("evaluate", ("AhKdQcJsTs9s8s7s",), {}, "8"),
    ("evaluate", ([50, 45, 40, 36, 52],), {}, "52"),
    ("evaluate", ([50, 45, 40, 36, -1],), {}, "-1"),
    ("evaluate", ("AhAhQcJs9s",), {}, "Ah"),
    ("hand_strength", ("Ah", "3h4sJd"), {}, "hole"),
    ("hand_strength", ("AhKd", "3h4s"), {}, "board"),
    ("hand_strength", ("AhKd", "3h4sKd"), {}, "Kd"),
    ("hand_strength", ("AhKd", "3h4sJd"), {"n_opponents": 0}, "n_opponents"),
    ("hand_strength", ("AhKd", "3h4sJd"), {"n_opponents": 10}, "n_opponents"),
    ("hand_strength", ("AhKd", "3h4sJd"), {"weights": np.ones(1325)}, "1326"),
    ("hand_strength", ("AhKd", "3h4sJd"), {"weights": -np.ones(1326)}, "negative"),
    ("hand_strength", ("AhKd", "3h4sJd"), {"weights": np.zeros(1326)}, "weight"),
    ("potential_table", ("AhKd", "3h4sJd"), {"weights": np.ones((2, 1326))}, "1326"),
    ("hand_potential", ("AhKd", ""), {}, "board"),
    ("hand_strength_squared", ("AhKd", "3h4sJdTs9s8s"), {}, "board"),
    ("win_probability", ("AhKd",), {"n_opponents": 11}, "n_opponents"),
    ("win_probability", ("AhKd", "3h4s"), {}, "board"),
    ("win_probability", ("AhKd",), {"exact": True}, "exact"),
    ("win_probability", ("AhKd",), {"trials": 0}, "trials"),
    ("hand_category", (0,), {}, "7462"),
    ("hand_category", (7463,), {}, "7462"),
]


@pytest.mark.parametrize(("func", "args", "kwargs", "needle"), BAD_CALLS, ids=[f"{c[0]}-{c[3]}" for c in BAD_CALLS])
def test_bad_input_raises_value_error(impl, func: str, args: tuple, kwargs: dict, needle: str) -> None:
    with pytest.raises(ValueError) as info:
        getattr(impl, func)(*args, **kwargs)
    assert needle.lower() in str(info.value).lower()


def test_only_weights_on_clashing_holdings_is_an_error(impl) -> None:
    w = np.zeros(1326)
    w[combo_index(*parse_cards("AhKd"))] = 1.0  # our own cards
    with pytest.raises(ValueError):
        impl.hand_strength("AhKd", "3h4sJd", weights=w)


@pytest.mark.parametrize(
    "bad",
    [
        np.array([[0, 1, 2, 3]], dtype=np.uint8),  # 4 columns
        np.array([0, 1, 2, 3, 4, 5, 6], dtype=np.uint8),  # 1-D
        np.array([[0, 1, 2, 3, 4, 5, 60]], dtype=np.uint8),  # card 60
        np.array([[0, 1, 2, 3, 4, 5, 5]], dtype=np.uint8),  # duplicate
    ],
    ids=["columns", "one-dim", "range", "duplicate"],
)
def test_evaluate_batch_bad_input(impl, bad: np.ndarray) -> None:
    with pytest.raises(ValueError):
        impl.evaluate_batch(bad)


def test_evaluate_batch_shapes(impl) -> None:
    rows = np.array([[48, 49, 50, 51, 44, 0, 1], [0, 4, 9, 13, 22, 30, 33]], dtype=np.uint8)
    for k in (5, 6, 7):
        got = impl.evaluate_batch(np.ascontiguousarray(rows[:, :k]))
        assert [int(v) for v in got] == [impl.evaluate(r[:k].tolist()) for r in rows]
    assert len(impl.evaluate_batch(np.zeros((0, 7), dtype=np.uint8))) == 0


@pytest.mark.skipif(os.environ.get("CBR_SKIP_DOCTEST") == "1", reason="doctests disabled")
def test_reference_doctests() -> None:
    import doctest

    import evaluator_ext.reference as ref

    failures, _ = doctest.testmod(ref)
    assert failures == 0
