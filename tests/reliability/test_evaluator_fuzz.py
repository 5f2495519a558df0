"""Fuzzed evaluator inputs: only CBRError subclasses (ValueError) come out, and both
implementations agree.

Every public evaluator function gets random arguments, mostly bad: wrong types, huge and
negative ints, floats, bools, NaN/inf/1e301 weights, wrong shapes, duplicate cards, numpy
arrays of odd dtypes and shapes. For each call the native facade (and so the C kernels
behind it) must either answer or raise a ``CBRError`` that is a ``ValueError``; never a
TypeError, SystemError, OverflowError or a crash. The reference facade must raise the same
error (type and message), or give the same answer where it is cheap enough to compute.
A second part throws garbage straight at the raw C module, which may raise TypeError or
OverflowError (it is not public) but must never crash the interpreter.

Bounded in time: ``reliability_rounds(300)`` calls (short form), stopped early after a
time budget; the seed is printed in the failure message so a case can be replayed.
"""
from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from evaluator_ext import CBRError, card_str, class_combos, combo_cards, combo_index, parse_cards, preflop_class
from tests.conftest import require_native
from tests.evaluator.support import load_impl
from tests.reliability import reliability_rounds

TIME_BUDGET = 20.0  # seconds per test in the short form; the long form scales the rounds only

DECK = [r + s for r in "23456789TJQKA" for s in "cdhs"]


class Gen:
    """Random arguments, mostly bad; in a clean case (``clean``) every argument is valid."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.clean = False

    def pick(self, *options: Any) -> Any:
        return self.rng.choice(options)

    def distinct(self, k: int, avoid: tuple[int, ...] = ()) -> list[int]:
        return self.rng.sample([c for c in range(52) if c not in avoid], k)

    def scalar_junk(self) -> Any:
        return self.pick(
            -1, 52, 2**64, -(2**80), 2**200, 1.5, float("nan"), float("inf"), True, False, None, "", "Xx",
            "A", b"Ah", np.float64(3.0), np.bool_(True), np.int64(-3), np.uint64(2**64 - 1), complex(1, 2),
            object(), [], {}, {"Ah": 1}, (1,), [[1, 2]], np.array([[1, 2], [3, 4]]), np.zeros((0,)),
        )

    def cards(self, k: int, avoid: tuple[int, ...] = ()) -> Any:
        """k cards in some form; bad forms and bad cards often."""
        good = self.distinct(k, avoid)
        form = self.pick(0, 1, 2, 3, 10, 11) if self.clean else self.rng.randrange(12)
        if form == 0:
            return "".join(DECK[c] for c in good)
        if form == 1:
            return " ".join(DECK[c] for c in good)
        if form == 2:
            return tuple(good)
        if form == 3:
            return np.array(good, dtype=self.pick(np.uint8, np.int8, np.int64, np.uint64, np.int16))
        if form == 4:  # an odd dtype or shape
            return np.array(good, dtype=self.pick(np.float32, np.float64, bool, object, np.complex64)).reshape(
                self.pick((-1,), (1, -1), (-1, 1)) if good else (-1,)
            )
        if form == 5:  # a duplicate
            return good[:-1] + good[:1] if good else [0, 0]
        if form == 6:  # a bad card among good ones
            return good[:-1] + [self.scalar_junk()] if good else [self.scalar_junk()]
        if form == 7:  # the wrong number of cards
            return self.distinct(self.pick(0, 1, 2, 4, 6, 8), avoid)
        if form == 8:
            return self.scalar_junk()
        if form == 9:  # text with junk
            return "".join(DECK[c] for c in good) + self.pick("x", "1", "Zz", " ,", "10h", "\x00")
        if form == 10:
            return [DECK[c] for c in good]
        return good

    def count(self, low: int, high: int) -> Any:
        if self.clean or self.rng.random() < 0.4:
            return self.rng.randint(low, high)
        return self.pick(low - 1, high + 1, -1, 0, 2**63, 2**64, 2**64 + 5, -(2**64), float(low), 1e300,
                         float("nan"), True, "3", None, np.int64(high), np.uint8(low), np.float32(low))

    def weights(self) -> Any:
        r = self.pick(0, 3, 12, 13) if self.clean else self.rng.randrange(14)
        if r < 3:
            return None
        if r < 5:
            return np.random.default_rng(self.rng.randrange(2**32)).random(1326)
        w = np.ones(1326)
        if r == 5:
            w[self.rng.randrange(1326)] = self.pick(float("nan"), float("inf"), -float("inf"), -1e-9, 1e301)
            return w
        if r == 6:
            return np.zeros(1326)
        if r == 7:
            return np.ones(self.pick(0, 1, 1325, 1327, 2652)).reshape(-1)
        if r == 8:
            return np.ones((2, 663))
        if r == 9:
            return np.ones(1326, dtype=self.pick(np.float32, np.int64, bool, object, np.complex128, np.uint8))
        if r == 10:
            return [1.0] * 1325 + [self.scalar_junk()]
        if r == 11:
            return self.pick("weights", 1.0, {"a": 1}, [[1.0] * 1326, [1.0] * 10])
        if r == 12:
            return np.full(1326, 1e300)
        return w[::2].repeat(2)  # a non-contiguous-looking but valid table

    def hole_board(self, boards: tuple[int, ...]) -> tuple[Any, Any]:
        if self.clean:
            cards = self.distinct(7)
            hole, board = cards[:2], cards[2 : 2 + self.pick(*[b for b in boards if b in (0, 3, 4, 5)])]
            form = self.pick(tuple, list, lambda cs: "".join(DECK[c] for c in cs), np.array)
            return form(hole), form(board)
        return self.cards(2), self.cards(self.pick(*boards))


def _call(func: Callable[..., Any], args: tuple, kwargs: dict) -> tuple[str, Any]:
    try:
        return "ok", func(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - classified by the caller
        return "error", exc


def _same_result(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_result(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_result(a[k], b[k]) for k in a)
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b


def _make_case(g: Gen) -> tuple[str, tuple, dict, bool]:
    """(function, args, kwargs, cheap): `cheap` when the reference may run it when valid."""
    g.clean = g.rng.random() < 0.3
    name = g.pick(
        "evaluate", "evaluate_batch", "hand_category", "category_counts", "hand_strength_counts",
        "hand_strength", "potential_table", "hand_potential", "effective_hand_strength",
        "hand_strength_squared", "showdown_deals", "win_probability",
    )
    if name == "evaluate":
        return name, (g.cards(g.pick(5, 6, 7)),), {}, True
    if name == "evaluate_batch":
        rows = g.pick(0, 1, 3)
        cols = g.pick(5, 6, 7, 4, 8)
        table = [g.distinct(min(cols, 52)) for _ in range(rows)]
        r = g.rng.randrange(8)
        if r == 0:
            arg: Any = np.array(table, dtype=g.pick(np.uint8, np.int8, np.int64, np.uint16, np.float64, bool, object))
        elif r == 1:
            arg = [row[: g.pick(5, 3)] for row in table] or [[1, 2, 3, 4, 5], [1, 2]]  # ragged
        elif r == 2:
            arr = np.array(table, dtype=np.int64).reshape(rows, cols)
            if arr.size:
                bad = g.pick(-1, 52, 255, 2**40, arr[0, 0] if cols > 1 else 0)  # out of range or a duplicate
                arr[g.rng.randrange(rows), g.rng.randrange(cols)] = bad
            arg = arr
        elif r == 3:
            arg = np.array(table, dtype=np.uint8).reshape(rows, cols)[:, ::-1]  # not C-contiguous
        elif r == 4:
            arg = g.scalar_junk()
        elif r == 5:
            arg = np.zeros((rows, cols, 2), dtype=np.uint8)
        else:
            arg = np.array(table, dtype=np.uint8).reshape(rows, cols)
        return name, (arg,), {}, True
    if name == "hand_category":
        return name, (g.count(1, 7462),), {}, True
    if name == "category_counts":
        n = g.count(5, 7)
        return name, (n,), {}, False
    if name == "showdown_deals":
        return name, (g.count(0, 5), g.count(1, 9)), {}, True
    if name == "win_probability":
        hole, board = g.hole_board((0, 3, 4, 5, 1, 6))
        bad_trials = () if g.clean else (0, -1, 2**64 + 5, 10**9 + 1, 1.5, True, None)
        bad_seeds = () if g.clean else (-1, 2**64, 2**70, 1.5, True, np.int64(-1))
        kwargs = {
            "n_opponents": g.count(1, 9),
            "trials": g.pick(1, 10, 500, np.int32(50), *bad_trials),
            "seed": g.pick(0, 7, 2**64 - 1, np.uint64(2**64 - 1), *bad_seeds),
            "exact": g.pick(None, False, np.bool_(False), *(() if g.clean else (True, 1, "yes"))),
        }
        return name, (hole, board), kwargs, False
    hole, board = g.hole_board((3, 4, 5, 0, 2, 6))
    kwargs = {}
    if name in ("hand_strength_counts", "hand_strength", "potential_table", "hand_potential") and g.rng.random() < 0.7:
        kwargs["weights"] = g.weights()
    if name in ("hand_strength", "effective_hand_strength") and g.rng.random() < 0.6:
        kwargs["n_opponents"] = g.count(1, 9)
    # the reference is slow for potentials on the flop and turn: cheap only for hand strength
    cheap = name in ("hand_strength_counts", "hand_strength")
    return name, (hole, board), kwargs, cheap


def test_fuzzed_public_evaluator_calls() -> None:
    native, reference = load_impl("native"), load_impl("reference")
    rounds = reliability_rounds(300)
    seed = random.randrange(2**32)
    g = Gen(seed)
    start = time.monotonic()
    tried = errors = compared = 0
    for i in range(rounds):
        if time.monotonic() - start > TIME_BUDGET * max(1, rounds // 300):
            break
        name, args, kwargs, cheap = _make_case(g)
        where = f"seed {seed}, case {i}: {name}{args!r} {kwargs!r}"
        kind, value = _call(getattr(native, name), args, kwargs)
        tried += 1
        if kind == "error":
            errors += 1
            assert isinstance(value, CBRError) and isinstance(value, ValueError), f"{where} -> {value!r}"
            ref_kind, ref_value = _call(getattr(reference, name), args, kwargs)
            assert ref_kind == "error", f"{where}: the reference accepted what native refused ({value})"
            assert (type(ref_value), str(ref_value)) == (type(value), str(value)), where
        elif cheap:
            ref_kind, ref_value = _call(getattr(reference, name), args, kwargs)
            assert ref_kind == "ok", f"{where}: the reference refused what native accepted ({ref_value!r})"
            assert _same_result(value, ref_value), f"{where}: {value!r} != {ref_value!r}"
            compared += 1
    assert tried >= min(rounds, 100), "the time budget cut the fuzzing short"
    assert errors > tried // 3  # the generator does produce mostly bad input
    assert compared > 0


def test_fuzzed_card_helpers() -> None:
    """card_str, combo_index, combo_cards, class_combos, parse_cards, preflop_class: ours or nothing."""
    g = Gen(random.randrange(2**32))
    calls: list[Callable[[], Any]] = []
    for _ in range(reliability_rounds(300)):
        junk = g.scalar_junk()
        calls += [
            lambda j=junk: card_str(j),
            lambda j=junk: combo_cards(j),
            lambda j=junk: combo_index(j, 3),
            lambda j=junk: combo_index(5, j),
            lambda j=junk: class_combos(j),
            lambda j=junk: parse_cards(j),
            lambda c=g.cards(2): preflop_class(c),
            lambda c=g.cards(g.pick(2, 5)): parse_cards(c),
        ]
    start = time.monotonic()
    for call in calls:
        if time.monotonic() - start > TIME_BUDGET:
            break
        kind, value = _call(call, (), {})
        if kind == "error":
            assert isinstance(value, CBRError) and isinstance(value, ValueError), repr(value)


RAW_ERRORS = (TypeError, ValueError, OverflowError, BufferError)


def test_fuzzed_raw_native_module_never_crashes() -> None:
    """Garbage straight into evaluator_ext._native: an exception at most, never a crash."""
    _native = require_native()
    g = Gen(random.randrange(2**32))

    def seq() -> Any:
        return g.pick(g.distinct(g.pick(0, 2, 3, 5, 7, 8)), g.scalar_junk(), [g.scalar_junk(), 1],
                      np.array(g.distinct(2), dtype=np.uint8), [0, 0], [51, 52], "AhKd")

    def buf() -> Any:
        return g.pick(np.ones(1326), np.ones(1325), np.ones((2, 663)), np.ones(1326, dtype=np.float32),
                      np.full(1326, np.nan), np.full(1326, 1e301), np.ones(2652)[::2], b"x" * 10608,
                      bytearray(10608), None, g.scalar_junk())

    start = time.monotonic()
    for _ in range(reliability_rounds(300)):
        if time.monotonic() - start > TIME_BUDGET:
            break
        which = g.rng.randrange(8)
        try:
            if which == 0:
                _native.evaluate(seq())
            elif which == 1:
                rows = g.pick(0, 1, 4)
                cards = g.pick(np.zeros((rows, 7), dtype=np.uint8), np.full((rows, 6), 255, dtype=np.uint8),
                               np.zeros((rows, 9), dtype=np.uint8), np.zeros((rows, 7), dtype=np.int32),
                               np.zeros((rows, 7), dtype=np.uint8)[:, ::2], g.scalar_junk())
                out = g.pick(np.empty(rows, dtype=np.int32), np.empty(rows + 1, dtype=np.int32),
                             np.empty(rows, dtype=np.int64), b"\0" * 4 * rows, g.scalar_junk())
                _native.evaluate_batch(cards, out)
            elif which == 2:
                _native.hand_strength_counts(seq(), seq(), buf())
            elif which == 3:
                _native.hand_strength_squared(seq(), g.distinct(5))
            elif which == 4:
                _native.showdown_exact(seq(), seq(), g.count(1, 9))
            elif which == 5:
                _native.showdown_monte_carlo(seq(), seq(), g.count(1, 9), g.count(1, 1000), g.count(0, 2**64 - 1))
            elif which == 6:
                _native.showdown_deals(g.count(0, 5), g.count(1, 9))
            else:
                _native.category_counts(g.pick(4, 8, -1, 2**40, 1.5, None))
        except RAW_ERRORS:
            pass
