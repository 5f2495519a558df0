"""C-specific tests of the native evaluator (evaluator_ext._native via evaluator_ext.native).

The shared evaluator suite (tests/evaluator/test_evaluator*.py) runs the public API against both
implementations; this file covers what only the C side has: exhaustive counts, garbage
and buffer inputs, the multi-opponent exact showdown, seeds, threads, and the kernels
compiled alone without Python.h. Independent oracles: eval7, the pure-Python reference,
and published counts.
"""
from __future__ import annotations

import math
import os
import subprocess
import threading
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

try:
    from evaluator_ext import _native
except ImportError as exc:  # the C extension is not built: a failure when CI requires it
    if os.environ.get("CBR_REQUIRE_NATIVE") == "1":
        raise
    pytest.skip(f"native extension not built ({exc}); run `python3 setup.py build_ext --inplace`",
                allow_module_level=True)

from evaluator_ext import native, reference  # noqa: E402
from evaluator_ext.cards import combo_index, parse_cards  # noqa: E402
from tests.conftest import require_module, require_program  # noqa: E402
from tests.evaluator.support import generated_tables  # noqa: E402

SRC = Path(__file__).resolve().parents[2] / "evaluator_ext" / "src"


def random_hands(n: int, k: int, seed: int) -> np.ndarray:
    """n distinct-card hands of k cards as a uint8 array."""
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((n, 52)), axis=1)[:, :k].astype(np.uint8)


def mc_tolerance(p: float, n: int) -> float:
    return 4 * math.sqrt(max(p * (1 - p), 1e-12) / n)


# ---------------------------------------------------------------------------
# Exhaustive counts (published figures)
# ---------------------------------------------------------------------------

SEVEN_CARD = {
    "high card": 23_294_460, "one pair": 58_627_800, "two pair": 31_433_400,
    "three of a kind": 6_461_620, "straight": 6_180_020, "flush": 4_047_644,
    "full house": 3_473_184, "four of a kind": 224_848, "straight flush": 41_584,
}
FIVE_CARD = {
    "high card": 1_302_540, "one pair": 1_098_240, "two pair": 123_552,
    "three of a kind": 54_912, "straight": 10_200, "flush": 5_108,
    "full house": 3_744, "four of a kind": 624, "straight flush": 40,
}
# six-card hands (C(52,6) = 20,358,520), the standard published table
SIX_CARD = {
    "high card": 6_612_900, "one pair": 9_730_740, "two pair": 2_532_816,
    "three of a kind": 732_160, "straight": 361_620, "flush": 205_792,
    "full house": 165_984, "four of a kind": 14_664, "straight flush": 1_844,
}


def test_seven_card_category_counts() -> None:
    counts = native.category_counts()
    assert counts == SEVEN_CARD
    assert sum(counts.values()) == math.comb(52, 7)


@pytest.mark.parametrize(("n_cards", "expected"), [(5, FIVE_CARD), (6, SIX_CARD)])
def test_five_and_six_card_category_counts(n_cards: int, expected: dict[str, int]) -> None:
    assert native.category_counts(n_cards) == expected


def test_every_five_card_value_occurs_and_matches_its_category() -> None:
    hist = _native.value_histogram(5)
    assert hist[0] == 0
    assert sum(hist) == math.comb(52, 5)
    assert all(hist[v] > 0 for v in range(1, native.N_VALUES + 1))  # 7462 distinct values
    # every value of a category occurs equally often within the category (suits are symmetric)
    # except where suitedness differs: straights/high cards 1020 each, flushes/SF 4 each.
    lower = 1
    for name, size in zip(native.CATEGORIES, native.CATEGORY_SIZES):
        block = hist[lower : lower + size]
        expected_each = FIVE_CARD[name] // size
        assert set(block) == {expected_each}, name
        lower += size


def test_category_counts_rejects_bad_sizes() -> None:
    for bad in (4, 8, "7", True):
        with pytest.raises(ValueError):
            native.category_counts(bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Values against independent evaluators
# ---------------------------------------------------------------------------


def test_seven_card_values_order_like_eval7() -> None:
    eval7 = require_module("eval7")
    hands = random_hands(20_000, 7, seed=11)
    ours = native.evaluate_batch(hands)
    deck = [eval7.Card(s) for s in (r + s for r in "23456789TJQKA" for s in "cdhs")]
    theirs = np.array([eval7.evaluate([deck[c] for c in row]) for row in hands.tolist()])
    # same weak order: sorting by eval7's value must sort ours, with ties exactly shared
    order = np.lexsort((ours, theirs))
    o, t = ours[order], theirs[order]
    same_t = t[1:] == t[:-1]
    assert np.all(o[1:][same_t] == o[:-1][same_t])
    assert np.all(o[1:][~same_t] > o[:-1][~same_t])


@pytest.mark.parametrize("k", [5, 6, 7])
def test_values_equal_the_reference(k: int) -> None:
    hands = random_hands(2_000, k, seed=k)
    assert np.array_equal(native.evaluate_batch(hands), reference.evaluate_batch(hands))


def test_evaluate_scalar_text_and_ints() -> None:
    assert native.evaluate("AhKhQhJhTh") == 7462
    assert native.evaluate([0, 4, 8, 12, 21]) == 1  # 2c 3c 4c 5c 7d: 7-high, not a straight
    assert native.evaluate((48, 49, 50, 51, 44, 0, 1)) == 7452  # four aces, king kicker
    assert native.evaluate("AsAhAdAcKs2c2d") == native.evaluate("AsAhAdAcKc")


# ---------------------------------------------------------------------------
# evaluate_batch: buffers, dtypes, shapes, garbage
# ---------------------------------------------------------------------------


def test_batch_equals_scalar_and_accepts_layouts() -> None:
    hands = random_hands(500, 7, seed=3)
    scalar = np.array([native.evaluate(row) for row in hands.tolist()])
    assert np.array_equal(native.evaluate_batch(hands), scalar)
    assert native.evaluate_batch(hands).dtype == np.int32
    assert np.array_equal(native.evaluate_batch(hands.astype(np.int64)), scalar)
    fortran = np.asfortranarray(hands)
    assert np.array_equal(native.evaluate_batch(fortran), scalar)
    reversed_cols = hands[:, ::-1]  # non-contiguous view, same hands
    assert np.array_equal(native.evaluate_batch(reversed_cols), scalar)
    assert native.evaluate_batch(np.zeros((0, 7), dtype=np.uint8)).shape == (0,)


@pytest.mark.parametrize(
    "bad",
    [
        np.zeros((3, 4), dtype=np.uint8),
        np.zeros((3, 8), dtype=np.uint8),
        np.zeros(7, dtype=np.uint8),
        np.zeros((2, 7), dtype=np.float64),
    ],
)
def test_batch_rejects_shape_and_dtype(bad: np.ndarray) -> None:
    with pytest.raises(ValueError):
        native.evaluate_batch(bad)


@pytest.mark.parametrize("bad_card", [52, 63, 64, 200, 255])
def test_batch_names_the_row_with_a_bad_card(bad_card: int) -> None:
    hands = random_hands(10, 7, seed=5)
    hands[6, 3] = bad_card
    with pytest.raises(ValueError, match="row 6"):
        native.evaluate_batch(hands)
    with pytest.raises(ValueError, match="row 6"):
        native.evaluate_batch(hands.astype(np.int16))
    wide = hands.astype(np.int16)
    wide[6, 3] = -1
    with pytest.raises(ValueError, match="row 6"):
        native.evaluate_batch(wide)


def test_batch_names_the_row_with_a_duplicate() -> None:
    hands = random_hands(10, 6, seed=6)
    hands[4, 5] = hands[4, 0]
    with pytest.raises(ValueError, match="row 4"):
        native.evaluate_batch(hands)


def test_raw_module_survives_garbage() -> None:
    out = np.empty(2, dtype=np.int32)
    for cards, target in [
        (b"abcdefg", out),                                    # 1-d bytes
        (np.zeros((2, 7), dtype=np.uint16), out),             # wrong itemsize
        (np.zeros((2, 7), dtype=np.uint8), np.empty(3, dtype=np.int32)),  # wrong out length
        (np.zeros((2, 7), dtype=np.uint8), np.empty(2, dtype=np.int64)),  # wrong out dtype
        (np.zeros((2, 7), dtype=np.uint8), b"12345678"),      # read-only out
    ]:
        with pytest.raises((ValueError, TypeError, BufferError)):
            _native.evaluate_batch(cards, target)
    with pytest.raises(TypeError):
        _native.evaluate_batch(None, out)
    with pytest.raises(TypeError):
        _native.evaluate(5)
    with pytest.raises(TypeError):
        _native.evaluate(["Ah", "Kd", "Qs", "Jc", "Th"])
    for cards in ([1, 2, 3, 4], [1, 2, 3, 4, 5, 6, 7, 8], [0, 1, 2, 3, 52], [0, 1, 2, 3, -1], [0, 1, 2, 3, 3]):
        with pytest.raises(ValueError):
            _native.evaluate(cards)
    with pytest.raises(OverflowError):
        _native.evaluate([0, 1, 2, 3, 2**80])
    with pytest.raises(ValueError):
        _native.hand_strength_counts([0, 1], [2, 3, 4], np.ones(1326, dtype=np.float32))
    with pytest.raises(ValueError):
        _native.hand_strength_counts([0, 1], [2, 3, 4], np.full(1326, -1.0))
    with pytest.raises(ValueError):
        _native.potential_table([0, 1], [1, 3, 4])
    with pytest.raises(TypeError):
        _native.hand_strength_counts([0, 1])
    with pytest.raises(ValueError):
        _native.showdown_monte_carlo([0, 1], [], 10, 100, 0)


# ---------------------------------------------------------------------------
# Hand strength and potential: published values and independent checks
# ---------------------------------------------------------------------------


def test_published_hand_strength_and_potential() -> None:
    assert native.hand_strength_counts("AcQs", "3h4sJd") == (628, 9, 444)
    assert round(native.hand_strength("AcQs", "3h4sJd"), 4) == 0.5851
    assert native.potential_table("AdQc", "3h4cJh") == (
        (449005, 3211, 169504),
        (0, 8370, 540),
        (91981, 1036, 346543),
    )
    ppot, npot = native.hand_potential("AdQc", "3h4cJh")
    assert (round(ppot, 4), round(npot, 4)) == (0.2083, 0.2737)
    assert round(native.effective_hand_strength("AdQc", "3h4cJh"), 4) == 0.6715


@pytest.mark.parametrize(("hole", "board"), [("AdQc", "3h4cJh"), ("7s7h", "2c9d9hKs"), ("5d6d", "7d8dTc2h2s")])
def test_hand_strength_counts_equal_eval7_enumeration(hole: str, board: str) -> None:
    eval7 = require_module("eval7")
    deck = [r + s for r in "23456789TJQKA" for s in "cdhs"]
    h = [hole[i : i + 2] for i in (0, 2)]
    b = [board[i : i + 2] for i in range(0, len(board), 2)]
    value = lambda cs: eval7.evaluate([eval7.Card(c) for c in cs])  # noqa: E731
    ours = value(h + b)
    tally = [0, 0, 0]
    for pair in combinations([c for c in deck if c not in h + b], 2):
        theirs = value(list(pair) + b)
        tally[0 if ours > theirs else 1 if ours == theirs else 2] += 1
    assert native.hand_strength_counts(hole, board) == tuple(tally)


def test_weighted_hand_strength() -> None:
    hole, board = "AdQc", "3h4cJh8d"
    ones = np.ones(1326)
    assert native.hand_strength(hole, board, weights=ones) == pytest.approx(native.hand_strength(hole, board))
    assert native.potential_table(hole, board, weights=2 * ones) == tuple(
        tuple(2.0 * x for x in row) for row in native.potential_table(hole, board)
    )
    # all weight on one holding: HS is 1, 1/2 or 0 against exactly that holding
    h, b = parse_cards(hole), parse_cards(board)
    for opp in ("KdKh", "AcQd", "5c6c", "Jc4s"):
        w = np.zeros(1326)
        x, y = parse_cards(opp)
        w[combo_index(x, y)] = 3.0
        ours, theirs = native.evaluate(h + b), native.evaluate((x, y) + b)
        expected = 1.0 if ours > theirs else 0.5 if ours == theirs else 0.0
        assert native.hand_strength(hole, board, weights=w) == expected
    # weight only on holdings that clash with known cards -> error
    w = np.zeros(1326)
    w[combo_index(h[0], 0)] = 1.0
    with pytest.raises(ValueError, match="no weight"):
        native.hand_strength(hole, board, weights=w)
    with pytest.raises(ValueError):
        native.hand_strength(hole, board, weights=np.ones(1325))
    with pytest.raises(ValueError):
        native.hand_strength(hole, board, weights=-ones)
    with pytest.raises(ValueError):
        native.hand_potential(hole, board, weights=np.full(1326, np.nan))


def test_weighted_potential_matches_reference() -> None:
    rng = np.random.default_rng(2)
    w = rng.random(1326)
    ours = native.potential_table("AdQc", "3h4cJh8d", weights=w)
    theirs = reference.potential_table("AdQc", "3h4cJh8d", weights=w)
    assert np.allclose(ours, theirs, rtol=1e-12, atol=1e-9)


def test_hand_strength_squared_by_runout() -> None:
    hole, board = "AdQc", "3h4cJh8d"
    h, b = parse_cards(hole), parse_cards(board)
    rivers = [c for c in range(52) if c not in h + b]
    expected = sum(native.hand_strength(h, b + (r,)) ** 2 for r in rivers) / len(rivers)
    assert native.hand_strength_squared(hole, board) == pytest.approx(expected, rel=1e-12)
    assert native.hand_strength_squared(hole, "3h4cJh8d8s") == native.hand_strength(hole, "3h4cJh8d8s") ** 2


# ---------------------------------------------------------------------------
# Showdowns: exact enumeration, Monte Carlo, seeds
# ---------------------------------------------------------------------------


def _brute_force_showdown(hole: str, board: str, n_opponents: int) -> tuple[int, int, int]:
    """Independent enumeration in Python (values from eval7) of a river showdown."""
    eval7 = require_module("eval7")
    deck = [r + s for r in "23456789TJQKA" for s in "cdhs"]
    h = [hole[i : i + 2] for i in (0, 2)]
    b = [board[i : i + 2] for i in range(0, len(board), 2)]
    rest = [c for c in deck if c not in h + b]
    value = lambda cs: eval7.evaluate([eval7.Card(c) for c in cs])  # noqa: E731
    ours = value(h + b)
    holdings = [(frozenset(pair), value(list(pair) + b)) for pair in combinations(rest, 2)]
    tally = [0, 0, 0]
    for group in combinations(holdings, n_opponents):
        cards = set()
        for pair, _ in group:
            cards |= pair
        if len(cards) < 2 * n_opponents:
            continue
        best = max(v for _, v in group)
        tally[0 if ours > best else 1 if ours == best else 2] += 1
    return tuple(tally)  # type: ignore[return-value]


def test_exact_showdown_heads_up_and_two_opponents_river() -> None:
    for hole, board, n in [("AdQc", "3h4cJh8d2s", 1), ("7s7h", "2c9d9hKs3c", 2)]:
        assert _native.showdown_exact(parse_cards(hole), parse_cards(board), n) == _brute_force_showdown(hole, board, n)


def test_exact_showdown_turn_equals_runouts_of_river() -> None:
    hole, board = "AdQc", "3h4cJh8d"
    h, b = parse_cards(hole), parse_cards(board)
    total = np.zeros(3, dtype=np.int64)
    for r in range(52):
        if r not in h + b:
            total += _native.showdown_exact(h, b + (r,), 1)
    assert tuple(total) == _native.showdown_exact(h, b, 1)
    assert native.showdown_deals(4) == total.sum() == 46 * 990


def test_monte_carlo_agrees_with_exact_within_tolerance() -> None:
    trials = 40_000
    for hole, board, n in [("AdQc", "3h4cJh", 1), ("7s7h", "2c9d9hKs3c", 2)]:
        exact = native.win_probability(hole, board, n, exact=True)
        mc = native.win_probability(hole, board, n, trials=trials, seed=17, exact=False)
        for p_exact, p_mc in zip(exact, mc):
            assert abs(p_mc - p_exact) <= mc_tolerance(p_exact, trials)


def test_monte_carlo_seeds_agree_with_each_other() -> None:
    """Three opponents on the flop (too many deals to enumerate): two independent seeds."""
    n1, n2 = 40_000, 160_000
    a = native.win_probability("KhQh", "Jh2c3d", 3, trials=n1, seed=5)
    b = native.win_probability("KhQh", "Jh2c3d", 3, trials=n2, seed=6)
    for p, q in zip(a, b):
        sigma = math.sqrt(max(q * (1 - q), 1e-12) * (1 / n1 + 1 / n2))
        assert abs(p - q) <= 4 * sigma


def test_published_preflop_win_probabilities() -> None:
    """AsAc vs 1..9 random opponents (thesis, 50,000 trials each, within ~1 point of exact)."""
    published = [85.2, 73.4, 64.0, 56.1, 49.5, 43.9, 39.1, 35.0, 31.6]
    trials = 50_000
    for n, pct in enumerate(published, start=1):
        win, _, _ = native.win_probability("AsAc", n_opponents=n, trials=trials, seed=n)
        p = pct / 100
        assert abs(win - p) <= 0.01 + mc_tolerance(p, trials), (n, win)


def test_seeds_are_deterministic_and_independent() -> None:
    a = native.win_probability("8c8d", trials=5_000, seed=1)
    assert a == native.win_probability("8c8d", trials=5_000, seed=1)
    assert a != native.win_probability("8c8d", trials=5_000, seed=2)
    # every 64-bit seed is its own stream; no int outside 0..2**64-1 wraps onto one of them
    assert native.win_probability("8c8d", trials=1000, seed=2**64 - 1) != native.win_probability("8c8d", trials=1000, seed=0)
    for bad in (True, 1.5, "3", -5, -1, 2**64, 2**70):
        with pytest.raises(ValueError, match="seed"):
            native.win_probability("8c8d", trials=10, seed=bad)  # type: ignore[arg-type]


def test_exact_policy() -> None:
    # auto: heads-up river/turn and two opponents on the river are enumerated (no seed effect)
    assert native.win_probability("AdQc", "3h4cJh8d", seed=1) == native.win_probability("AdQc", "3h4cJh8d", seed=2)
    assert native.win_probability("7s7h", "2c9d9hKs3c", 2, seed=1) == native.win_probability(
        "7s7h", "2c9d9hKs3c", 2, seed=2
    )
    with pytest.raises(ValueError, match="exact"):
        native.win_probability("AdQc", exact=True)  # preflop heads-up: 2.1e9 deals
    for bad in ({"n_opponents": 0}, {"n_opponents": 10}, {"trials": 0}, {"exact": "yes"}):
        with pytest.raises(ValueError):
            native.win_probability("AdQc", **bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# The GIL is released: threads give the same answers as one thread
# ---------------------------------------------------------------------------


def test_threads_give_single_thread_results() -> None:
    hands = random_hands(200_000, 7, seed=8)
    calls = [
        lambda: tuple(native.evaluate_batch(hands)[:1000].tolist()) + (int(native.evaluate_batch(hands).sum()),),
        lambda: native.win_probability("QsJs", "Ts2d3c", 2, trials=100_000, seed=4),
        lambda: native.potential_table("AdQc", "3h4cJh"),
        lambda: native.hand_strength_squared("KdKh", "Qc7s2h"),
    ]
    expected = [call() for call in calls]
    results: dict[int, object] = {}

    def run(i: int) -> None:
        results[i] = calls[i % len(calls)]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2 * len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, value in results.items():
        assert value == expected[i % len(calls)]
    assert len(results) == 2 * len(calls)


# ---------------------------------------------------------------------------
# The kernels build and run alone, without Python.h
# ---------------------------------------------------------------------------

C_DRIVER = r"""
#include "eval_kernels.h"
#include <stdio.h>
int main(void) {
    static uint64_t hist[EK_N_VALUES + 1];
    uint8_t quads[7] = {48, 49, 50, 51, 44, 0, 1};
    uint8_t hole[2] = {48, 43}, board[3] = {6, 11, 37};
    double hs[3];
    if (ek_init() != EK_OK) return 1;
    if (ek_value_histogram(5, hist) != EK_OK) return 2;
    unsigned long long cats[EK_N_CATEGORIES] = {0};
    for (int v = 1; v <= EK_N_VALUES; v++) cats[ek_category(v)] += hist[v];
    if (ek_hand_strength_counts(hole, board, 3, NULL, hs) != EK_OK) return 3;
    printf("%d %llu %llu %.0f %.0f %.0f\n", ek_evaluate(quads, 7), cats[EK_HIGH_CARD],
           cats[EK_STRAIGHT_FLUSH], hs[0], hs[1], hs[2]);
    return 0;
}
"""


def test_compiled_tables_equal_tables_built_now() -> None:
    """The lookup tables setup.py compiled in are those ek_build_tables() builds (the other
    tests here check the values themselves against eval7, the reference and published counts)."""
    assert _native.tables_agree() is True


def test_kernels_compile_and_run_without_python(tmp_path: Path) -> None:
    cc = require_program("cc", "gcc")
    assert "#include <Python.h>" not in (SRC / "eval_kernels.c").read_text() + (SRC / "eval_kernels.h").read_text()
    driver = tmp_path / "driver.c"
    driver.write_text(C_DRIVER)
    exe = tmp_path / "driver"
    tables = generated_tables(cc, tmp_path)
    subprocess.run(
        [cc, "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{SRC}", f"-I{tables}", str(driver),
         str(SRC / "eval_kernels.c"), str(SRC / "eval_tables.c"), "-o", str(exe)],
        check=True,
        capture_output=True,
    )
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    assert out == ["7452", "1302540", "40", "628", "9", "444"]
