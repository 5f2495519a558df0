"""Equity against a range and the range update (``range_equity``, ``range_update``): the C
kernels against the pure-Python reference and against brute force through ``evaluate_batch``;
Monte Carlo against exact with tolerances from the trial counts."""
from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest

import evaluator_ext as ev
from evaluator_ext.errors import EvaluatorValueError
from tests.evaluator.support import load_impl


def _holdings() -> list[tuple[int, int]]:
    return [(hi, lo) for hi in range(1, 52) for lo in range(hi)]


def _brute_equity(hole: tuple[int, int], board: tuple[int, ...], holding: tuple[int, int]) -> tuple[float, int]:
    """Equity of ``hole`` against one holding by valuing every runout with evaluate_batch."""
    deck = [c for c in range(52) if c not in hole + board + holding]
    runouts = list(combinations(deck, 5 - len(board)))
    ours = np.array([list(hole + board + r) for r in runouts], dtype=np.uint8)
    theirs = np.array([list(holding + board + r) for r in runouts], dtype=np.uint8)
    a, b = ev.evaluate_batch(ours), ev.evaluate_batch(theirs)
    return float(((a > b) + 0.5 * (a == b)).mean()), len(runouts)


@pytest.mark.parametrize("board_size", [4, 5])
def test_native_is_the_reference_on_turns_and_rivers(board_size: int) -> None:
    native, reference = load_impl("native"), load_impl("reference")
    rng = np.random.default_rng(board_size)
    for _ in range(3):
        cards = rng.choice(52, 2 + board_size, replace=False).tolist()
        hole, board = tuple(cards[:2]), tuple(cards[2:])
        w = rng.random(1326) * (rng.random(1326) < 0.6)
        a, b = native.range_equity(hole, board, w), reference.range_equity(hole, board, w)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_flop_equity_is_brute_force() -> None:
    rng = np.random.default_rng(3)
    hole, board = (48, 44), (0, 17, 30)            # Ac Kc on 2c 6d Ts
    eq, counted = ev.range_equity(hole, board)
    known = set(hole + board)
    open_holdings = [h for h in _holdings() if not set(h) & known]
    for k in rng.choice(len(open_holdings), 12, replace=False):
        h = open_holdings[k]
        expect, n = _brute_equity(hole, board, h)
        i = ev.combo_index(*h)
        assert counted[i] == n == 990
        assert eq[i] == pytest.approx(expect, abs=1e-12)
    clash = [ev.combo_index(*h) for h in _holdings() if set(h) & known]
    assert np.all(eq[clash] == -1) and np.all(counted[clash] == 0)


def test_weights_choose_the_holdings() -> None:
    w = np.zeros(1326)
    aa = [ev.combo_index(a, b) for a, b in combinations([48, 49, 50, 51], 2)]
    w[aa] = 1.0
    eq, counted = ev.range_equity("KsKh", "2c7d9h", w)
    assert set(np.flatnonzero(eq >= 0)) == set(aa)
    assert np.all(counted[np.flatnonzero(counted)] == 990)
    assert np.all(eq[aa] < 0.2)                     # kings against aces


@pytest.mark.parametrize("impl_name", ["native", "reference"])
def test_sampled_runouts_agree_with_exact(impl_name: str) -> None:
    impl = load_impl(impl_name)
    trials = 4000 if impl_name == "native" else 300
    hole, board = (40, 41), (0, 5, 13, 22)         # Qc Qd on 2c 3d 5d 7h
    exact, _ = impl.range_equity(hole, board)
    sampled, counted = impl.range_equity(hole, board, trials=trials, seed=7)
    live = exact >= 0
    assert np.array_equal(live, sampled >= 0)
    # every holding: within 5 standard errors of its own count (a Bernoulli-like share in 0..1)
    se = np.sqrt(np.maximum(exact[live] * (1 - exact[live]), 0.25 / counted[live]) / counted[live])
    assert np.all(np.abs(sampled[live] - exact[live]) <= 5 * se + 1e-12)
    again, _ = impl.range_equity(hole, board, trials=trials, seed=7)
    other, _ = impl.range_equity(hole, board, trials=trials, seed=8)
    assert np.array_equal(sampled, again) and not np.array_equal(sampled, other)


def test_preflop_needs_trials_and_matches_win_probability() -> None:
    with pytest.raises(EvaluatorValueError, match="give trials"):
        ev.range_equity("AsAh")
    trials = 20_000
    eq, counted = ev.range_equity("AsAh", (), trials=trials, seed=1)
    live = eq >= 0
    assert live.sum() == 1225
    # uniform range: the mean over holdings (each weighted by the runouts it saw) is AA's
    # equity against one random hand
    mean = float((eq[live] * counted[live]).sum() / counted[live].sum())
    win, tie, _ = ev.win_probability("AsAh", n_opponents=1, trials=200_000, seed=3)
    target = win + tie / 2
    tolerance = 4 * math.sqrt(target * (1 - target) / trials) + 4 * math.sqrt(target * (1 - target) / 200_000)
    assert abs(mean - target) <= tolerance


def test_range_update_is_bayes_with_blockers() -> None:
    native, reference = load_impl("native"), load_impl("reference")
    rng = np.random.default_rng(5)
    w, lk = rng.random(1326), rng.random(1326)
    for impl in (native, reference):
        out = impl.range_update(w, lk, "AsKd7c")
        blocked = [ev.combo_index(*h) for h in _holdings() if set(h) & {51, 45, 20}]
        assert np.all(out[blocked] == 0)
        rest = np.setdiff1d(np.arange(1326), blocked)
        assert np.array_equal(out[rest], w[rest] * lk[rest])
    assert np.array_equal(native.range_update(w, lk, "AsKd7c"), reference.range_update(w, lk, "AsKd7c"))
    before = w.copy()                               # the input is not changed
    native.range_update(w, lk, ())
    assert np.array_equal(w, before)


@pytest.mark.parametrize("call, message", [
    (lambda: ev.range_equity("AsAh", "2c3d"), "board"),
    (lambda: ev.range_equity("AsAh", "2c3d4hAs"), "twice"),
    (lambda: ev.range_equity("AsAh", "2c3d4h", np.ones(5)), "shape"),
    (lambda: ev.range_equity("AsAh", "2c3d4h", np.zeros(1326)), "weight"),
    (lambda: ev.range_equity("AsAh", "2c3d4h", trials=0), "trials"),
    (lambda: ev.range_equity("AsAh", "2c3d4h", trials=10, seed=-1), "seed"),
    (lambda: ev.range_update(np.ones(1326), np.full(1326, 1.5)), "0..1"),
    (lambda: ev.range_update(np.ones(1326), np.full(1326, np.nan)), "0..1"),
    (lambda: ev.range_update(np.ones(1326), np.ones(3)), "shape"),
    (lambda: ev.range_update(-np.ones(1326), np.ones(1326)), "non-negative"),
])
def test_bad_input_is_a_value_error(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
