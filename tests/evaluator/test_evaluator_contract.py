"""The evaluator's contract: native calls that cannot hang or wrap, one facade, one set of errors.

Covers issue 7, sections 3 and 4 and the evaluator items of section 10: range-checked
trials and seeds (no wrap-around), caps applied in C as in the facade, long calls that stop
at Ctrl-C, Monte Carlo results that do not depend on the chunking, the same error (type and
message) from both implementations, the reference imported only when needed, and bad input
of every kind giving a ValueError subclass of CBRError. Calls that used to hang run in a
subprocess with a time limit, so a regression fails instead of blocking the suite.
"""
from __future__ import annotations

import ast
import math
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np
import pytest

import evaluator_ext
from evaluator_ext import CBRError, EvaluatorValueError, InvalidCardError
from evaluator_ext.cards import combo_index, parse_cards
from tests.conftest import default_sigint, require_native
from tests.evaluator.support import generated_tables, is_native, load_impl

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "evaluator_ext"
_native = require_native(module_level=True)


def run_python(code: str, timeout: float, *options: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (repo on the path); kill it and fail after ``timeout`` s."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(
        [sys.executable, *options, "-c", code], cwd=ROOT, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"still running after {timeout} s: {code}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


# ---------------------------------------------------------------------------
# Section 3: trials and seeds parsed with range checks, counts capped, no wrap-around
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("trials", [2**64 + 5, 2**64, 10**9 + 1, 0, -1, -(2**64) + 5])
def test_raw_trials_out_of_range_are_refused(trials: int) -> None:
    """``K`` parsing ran 2**64+5 as 5 trials and -1 as 2**64-1 (for ever, GIL released)."""
    result = run_python(
        "from evaluator_ext import _native\n"
        f"_native.showdown_monte_carlo((50, 45), (), 1, {trials}, 0)\n",
        timeout=20,
    )
    assert result.returncode == 1
    assert f"ValueError: trials must be 1..1000000000, got {trials}" in result.stderr


@pytest.mark.parametrize("seed", [-1, 2**64, 2**70, -(2**63)])
def test_raw_seed_out_of_range_is_refused(seed: int) -> None:
    with pytest.raises(ValueError, match=f"seed must be 0..18446744073709551615, got {seed}"):
        _native.showdown_monte_carlo((50, 45), (), 1, 10, seed)


def test_raw_counts_refuse_other_types() -> None:
    for bad in (True, 1.5, "3", None, np.float64(2.0)):
        with pytest.raises(TypeError):
            _native.showdown_monte_carlo((50, 45), (), 1, bad, 0)
        with pytest.raises(TypeError):
            _native.showdown_monte_carlo((50, 45), (), 1, 10, bad)


def test_every_64_bit_seed_is_accepted_and_distinct() -> None:
    counts = {seed: _native.showdown_monte_carlo((50, 45), (), 1, 2000, seed) for seed in (0, 1, 2**63, 2**64 - 1)}
    assert all(sum(c) == 2000 for c in counts.values())
    assert len(set(counts.values())) == len(counts)


def test_caps_are_the_same_in_c_and_in_the_facade() -> None:
    assert _native.MAX_TRIALS == evaluator_ext.MAX_TRIALS == 10**9
    assert _native.EXACT_MAX_DEALS == evaluator_ext.EXACT_MAX_DEALS
    assert evaluator_ext.MAX_SEED == 2**64 - 1


def test_showdown_exact_caps_its_deals_in_c() -> None:
    """The C function enumerated 2.1e9 pre-flop deals (minutes, uninterruptible) when asked."""
    result = run_python(
        "from evaluator_ext import _native\n"
        "try:\n"
        "    _native.showdown_exact((50, 45), (), 1)\n"
        "except ValueError as e:\n"
        "    print(e)\n",
        timeout=20,
    )
    assert result.returncode == 0, result.stderr
    assert "more than 50000000 deals" in result.stdout
    # just under the cap still enumerates: two opponents on the turn (20,561,310 deals)
    win, tie, lose = _native.showdown_exact((50, 45), (0, 5, 10, 15), 2)
    assert win + tie + lose == evaluator_ext.showdown_deals(4, 2) == 20_561_310


def test_exact_showdown_parts_add_up() -> None:
    """The chunked enumeration (one part per first card to come) against independent sums:
    the turn's parts against each river's own count (two opponents), and the flop's against
    every turn's, where each two-card runout {t, r} is seen twice (t, then r, as the turn)."""
    hole, flop = parse_cards("KhQh"), parse_cards("Jh2c3d")
    turn = flop + (parse_cards("9s")[0],)
    rivers = np.zeros(3, dtype=np.int64)
    for river in (c for c in range(52) if c not in hole + turn):
        rivers += _native.showdown_exact(hole, turn + (river,), 2)
    assert tuple(int(x) for x in rivers) == _native.showdown_exact(hole, turn, 2)
    turns = np.zeros(3, dtype=np.int64)
    for card in (c for c in range(52) if c not in hole + flop):
        turns += _native.showdown_exact(hole, flop + (card,), 1)
    assert tuple(int(x) for x in turns) == tuple(2 * x for x in _native.showdown_exact(hole, flop, 1))


def test_weights_buffer_shape_is_checked_in_c() -> None:
    for bad in (np.ones((2, 663)), np.ones((1326, 1)), np.ones((1, 1326))):
        with pytest.raises(ValueError, match=r"shape \(1326,\)"):
            _native.hand_strength_counts((50, 45), (0, 4, 8), bad)


def test_big_weight_message_names_the_number() -> None:
    """PyErr_Format has no %g: the message printed a literal '%g'."""
    w = np.ones(1326)
    w[7] = 1e301
    with pytest.raises(ValueError) as info:
        _native.hand_strength_counts((50, 45), (0, 4, 8), w)
    assert "%" not in str(info.value)
    assert "entry 7 is 1e+301" in str(info.value)


def test_no_assert_stands_in_for_a_check() -> None:
    """``assert`` vanishes under ``python -O``; library checks must be real ones."""
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        asserts = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Assert)]
        assert not asserts, f"{path.name} lines {asserts}"


def test_native_module_checks_its_build_under_python_O() -> None:
    result = run_python("import evaluator_ext.native as n; print(n.evaluate('AsKsQsJsTs'))", 60, "-O")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["7462"]


def test_c_glue_compiles_cleanly_with_unused_parameter_warnings(tmp_path: Path) -> None:
    """Py_UNUSED marks unused parameters, so -Wno-unused-parameter is gone from setup.py."""
    assert "-Wno-unused-parameter" not in (ROOT / "setup.py").read_text()
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = PACKAGE / "src"
    tables = generated_tables(cc, tmp_path)
    for name in ("nativemodule.c", "eval_kernels.c", "eval_tables.c", "gen_eval_tables.c"):
        result = subprocess.run(
            [cc, "-fsyntax-only", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{src}", f"-I{tables}",
             f"-I{sysconfig.get_paths()['include']}", str(src / name)],
            capture_output=True, text=True, timeout=120,
        )
        assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------------------
# Section 3: long calls are chunked (bit-identical) and stop at Ctrl-C
# ---------------------------------------------------------------------------

MC_CASES = [
    ((50, 45), (), 1, 100_003, 0),
    ((50, 45), (2, 3, 4), 3, 20_000, 12345),
    ((0, 1), (2, 3, 4, 5), 9, 5_001, 2**64 - 1),
    ((50, 45), (2, 3, 4, 5, 6), 2, 7_777, 7),
]


@pytest.mark.parametrize("case", MC_CASES, ids=["preflop", "flop-3", "turn-9", "river-2"])
def test_monte_carlo_counts_do_not_depend_on_the_chunking(case: tuple) -> None:
    trials = case[3]
    whole = _native.showdown_monte_carlo(*case, trials)  # one step: the unchunked loop
    assert sum(whole) == trials
    for chunk in (1, 2, 3, 1000, trials - 1, 0):
        assert _native.showdown_monte_carlo(*case, chunk) == whole, chunk


def _interrupt_after_ready(code: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Start ``code`` (which prints 'ready' just before its long call), send SIGINT, time the exit."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_sigint)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.3)  # inside the native call by now
        assert proc.poll() is None, "the long call ended on its own"
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
        elapsed = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return elapsed, subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize(
    "call",
    [
        "_native.showdown_monte_carlo((50, 45), (), 9, 10**9, 0)",
        "evaluator_ext.win_probability('AhKd', n_opponents=9, trials=10**9, exact=False)",
    ],
    ids=["raw", "facade"],
)
def test_ctrl_c_stops_a_long_monte_carlo_run(call: str) -> None:
    elapsed, result = _interrupt_after_ready(
        f"import evaluator_ext\nfrom evaluator_ext import _native\nprint('ready', flush=True)\n{call}\n"
    )
    assert "KeyboardInterrupt" in result.stderr
    assert elapsed < 2.0


def test_ctrl_c_stops_cbr_hand() -> None:
    """``cbr hand AhKd --trials 1000000000`` (the cap; about half a minute) stops at Ctrl-C."""
    cbr = Path(sys.executable).parent / "cbr"
    if not cbr.exists():
        pytest.skip("the cbr script is not installed next to this interpreter")
    proc = subprocess.Popen([str(cbr), "hand", "AhKd", "--trials", "1000000000"], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_sigint)
    try:
        # wait until it has spent 1.5 s of CPU after start-up: it is dealing by then
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            if cpu > 1.5:
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
        elapsed = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert elapsed < 2.0
    assert proc.returncode != 0
    assert "Traceback" not in err


def test_cbr_hand_refuses_trials_beyond_the_cap() -> None:
    """The issue's ``--trials 1000000000000`` is a one-line error naming the cap, not a long run."""
    cbr = Path(sys.executable).parent / "cbr"
    if not cbr.exists():
        pytest.skip("the cbr script is not installed next to this interpreter")
    result = subprocess.run([str(cbr), "hand", "AhKd", "--trials", "1000000000000"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "trials" in result.stderr and "1000000000" in result.stderr  # names the option and the cap
    assert "Traceback" not in result.stderr


# ---------------------------------------------------------------------------
# Section 4: one facade; the reference imported only when needed
# ---------------------------------------------------------------------------


def test_reference_is_not_imported_with_the_native_evaluator() -> None:
    result = run_python(
        "import sys, evaluator_ext\n"
        "print(evaluator_ext.IMPLEMENTATION, 'evaluator_ext.reference' in sys.modules)\n",
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["native", "False"]


def test_both_implementations_are_the_same_facade() -> None:
    nat, ref = load_impl("native"), load_impl("reference")
    assert type(nat.EVALUATOR) is type(ref.EVALUATOR)
    assert nat.KERNELS.name == "native" and ref.KERNELS.name == "reference"
    for name in evaluator_ext.API:
        ours, theirs = getattr(nat, name), getattr(ref, name)
        assert getattr(ours, "__func__", ours) is getattr(theirs, "__func__", theirs), name


W = np.ones(1326)
W_BIG = np.full(1326, 1e301)
W_NAN = np.where(np.arange(1326) == 5, np.nan, 1.0)
W_CLASH = np.zeros(1326)
W_CLASH[combo_index(50, 45)] = 1.0  # only the hero's own holding AhKd

#: (function, args, kwargs): bad input; both implementations must raise the same error.
SAME_ERRORS = [
    ("evaluate", ("AhKdQcJs9x",), {}),
    ("evaluate", ("AhKdQcJs",), {}),
    ("evaluate", ([50, 45, 40, 36, 52],), {}),
    ("evaluate", ([50, 45, 40, 36, 1.0],), {}),
    ("evaluate", ([50, 45, 40, 36, True],), {}),
    ("evaluate", (np.array([[50, 45, 40, 36, 1]]),), {}),
    ("evaluate", (None,), {}),
    ("evaluate", (12.5,), {}),
    ("evaluate_batch", ([[1, 2, 3, 4, 5], [1, 2, 3]],), {}),
    ("evaluate_batch", (np.zeros((2, 7), dtype=np.float64),), {}),
    ("evaluate_batch", (np.zeros((2, 7), dtype=bool),), {}),
    ("evaluate_batch", (np.array([[0, 1, 2, 3, 4, 5, 60]], dtype=np.uint8),), {}),
    ("evaluate_batch", (np.array([[0, 1, 2, 3, 4, 5, 60]], dtype=np.int64),), {}),
    ("evaluate_batch", (np.array([[0, 1, 2, 3, 4], [0, 1, 2, 3, 3]], dtype=np.uint8),), {}),
    ("evaluate_batch", (np.zeros((2, 2, 7), dtype=np.uint8),), {}),
    ("evaluate_batch", ("AhKd",), {}),
    ("hand_category", (0,), {}),
    ("hand_category", (7462.0,), {}),
    ("hand_category", (True,), {}),
    ("category_counts", (8,), {}),
    ("category_counts", (5.0,), {}),
    ("hand_strength", ("AhKd", "3h4s"), {}),
    ("hand_strength", ("AhKd", "3h4sJd"), {"n_opponents": 0}),
    ("hand_strength", ("AhKd", "3h4sJd"), {"n_opponents": 2.0}),
    ("hand_strength", ("AhKd", "3h4sJd"), {"n_opponents": 2**64}),
    ("hand_strength", ("AhKd", "3h4sJd"), {"weights": np.ones(1325)}),
    ("hand_strength", ("AhKd", "3h4sJd"), {"weights": np.ones((2, 663))}),
    ("hand_strength", ("AhKd", "3h4sJd"), {"weights": -W}),
    ("hand_strength", ("AhKd", "3h4sJd"), {"weights": W_BIG}),
    ("hand_strength", ("AhKd", "3h4sJd"), {"weights": W_NAN}),
    ("hand_strength", ("AhKd", "3h4sJd"), {"weights": W_CLASH}),
    ("hand_strength", ("AhKd", "3h4sJd"), {"weights": "heavy"}),
    ("hand_strength", ("AhKd", "3h4sJd"), {"weights": [1.0] * 1325 + [None]}),
    ("hand_strength_counts", ("AhKd", "3h4sKd"), {}),
    ("potential_table", ("AhKd", "3h4sJd"), {"weights": np.ones((2, 1326))}),
    ("hand_potential", ("AhKd", ""), {}),
    ("hand_potential", ("AhKd", "3h4sJd5c6c"), {"weights": W_BIG}),
    ("hand_potential", ("AhKd", "3h4sJd5c6c"), {"weights": W_CLASH}),
    ("hand_strength_squared", ("AhKd", "3h4sJdTs9s8s"), {}),
    ("effective_hand_strength", ("AhKd", "3h4sJd"), {"n_opponents": 10}),
    ("showdown_deals", (6,), {}),
    ("showdown_deals", (3, 0), {}),
    ("showdown_deals", (3.0,), {}),
    ("win_probability", ("AhKd",), {"n_opponents": 11}),
    ("win_probability", ("AhKd", "3h4s"), {}),
    ("win_probability", ("AhKd",), {"exact": True}),
    ("win_probability", ("AhKd",), {"exact": "yes"}),
    ("win_probability", ("AhKd",), {"trials": 0}),
    ("win_probability", ("AhKd",), {"trials": -1}),
    ("win_probability", ("AhKd",), {"trials": 2**64 + 5}),
    ("win_probability", ("AhKd",), {"trials": 10**9 + 1}),
    ("win_probability", ("AhKd",), {"trials": 1.5}),
    ("win_probability", ("AhKd",), {"seed": -1}),
    ("win_probability", ("AhKd",), {"seed": 2**64}),
    ("win_probability", ("AhKd",), {"seed": True}),
]


def _outcome(module: object, func: str, args: tuple, kwargs: dict) -> tuple[type, str]:
    try:
        getattr(module, func)(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return type(exc), str(exc)
    pytest.fail(f"{module.__name__}.{func} accepted bad input {args} {kwargs}")


@pytest.mark.parametrize(
    ("func", "args", "kwargs"), SAME_ERRORS, ids=[f"{c[0]}-{i}" for i, c in enumerate(SAME_ERRORS)]
)
def test_both_implementations_give_the_same_error(func: str, args: tuple, kwargs: dict) -> None:
    nat = _outcome(load_impl("native"), func, args, kwargs)
    ref = _outcome(load_impl("reference"), func, args, kwargs)
    assert nat == ref
    assert issubclass(nat[0], CBRError) and issubclass(nat[0], ValueError), nat


# ---------------------------------------------------------------------------
# Section 10 (low): the evaluator contract
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: evaluator_ext.parse_cards(np.array([[50, 45], [1, 2]])),
        lambda: evaluator_ext.hand_strength(np.array([[50, 45]]), "2c3c4c"),
        lambda: evaluator_ext.card_str(1.5),
        lambda: evaluator_ext.card_str("As"),
        lambda: evaluator_ext.card_str(None),
        lambda: evaluator_ext.card_str(True),
        lambda: evaluator_ext.cards_str(5),
        lambda: evaluator_ext.combo_index("a", 2),
        lambda: evaluator_ext.combo_index(1.5, 2),
        lambda: evaluator_ext.combo_index(True, 2),
        lambda: evaluator_ext.combo_cards(1.5),
        lambda: evaluator_ext.combo_cards(True),
        lambda: evaluator_ext.combo_cards("7"),
        lambda: evaluator_ext.class_combos(["AA"]),
        lambda: evaluator_ext.class_combos(None),
        lambda: evaluator_ext.parse_cards([50, 45.0]),
        lambda: evaluator_ext.parse_cards([np.float64(50), 45]),
        lambda: evaluator_ext.parse_cards([np.bool_(True), 45]),
    ],
)
def test_wrong_types_are_invalid_card_errors(call) -> None:
    with pytest.raises(InvalidCardError):
        call()


def test_numpy_ints_are_still_cards() -> None:
    assert evaluator_ext.card_str(np.int8(51)) == "As"
    assert evaluator_ext.combo_index(np.int64(3), np.uint8(5)) == combo_index(3, 5)
    assert evaluator_ext.combo_cards(np.int32(1325)) == (50, 51)


@pytest.mark.parametrize("board", ["3h4sJd", "3h4sJd5c", "3h4sJd5c6c"], ids=["flop", "turn", "river"])
@pytest.mark.parametrize(
    ("weights", "needle"),
    [(W_BIG, "1e300"), (W_NAN, "finite"), (-W, "non-negative"), (np.ones(7), "shape"), (W_CLASH, "no weight")],
    ids=["1e301", "nan", "negative", "shape", "clash"],
)
def test_hand_potential_checks_weights_on_every_street(native, board: str, weights: np.ndarray, needle: str) -> None:
    with pytest.raises(EvaluatorValueError, match=needle) as on_this_street:
        native.hand_potential("AhKd", board, weights)
    with pytest.raises(EvaluatorValueError) as elsewhere:
        native.hand_strength("AhKd", board, weights=weights)
    assert str(on_this_street.value) == str(elsewhere.value)


def _deals_by_another_formula(board_cards: int, n: int) -> int:
    """Runouts x ordered deals of n holdings / n! (an independent count, in exact integers)."""
    unseen = 50 - board_cards
    to_come = 5 - board_cards
    left = unseen - to_come
    ordered = 1
    for i in range(n):
        ordered *= math.comb(left - 2 * i, 2)
    return math.comb(unseen, to_come) * ordered // math.factorial(n)


def test_showdown_deals_are_exact_integers(impl) -> None:
    for board_cards in (0, 3, 4, 5):
        for n in range(1, 10):
            deals = impl.showdown_deals(board_cards, n)
            assert type(deals) is int
            assert deals == _deals_by_another_formula(board_cards, n), (board_cards, n)


def test_ragged_batch_is_our_error(impl) -> None:
    with pytest.raises(EvaluatorValueError, match="rows of one length"):
        impl.evaluate_batch([[0, 1, 2, 3, 4], [5, 6, 7]])


def test_facade_trials_cap_and_seed_range(impl) -> None:
    # in a subprocess with a time limit: without the cap this deals 10**9 + 1 trials
    result = run_python(
        f"import {impl.__name__} as impl\n"
        "try:\n"
        "    impl.win_probability('AhKd', trials=10**9 + 1)\n"
        "except impl.EvaluatorValueError as e:\n"
        "    print(e)\n",
        timeout=30,
    )
    assert result.stdout.strip() == "trials must be an int 1..1000000000, got 1000000001", result.stderr
    for seed in (-1, 2**64):
        with pytest.raises(EvaluatorValueError, match="seed must be an int 0..18446744073709551615"):
            impl.win_probability("AhKd", trials=10, seed=seed)
    top = impl.win_probability("AhKd", trials=200, seed=2**64 - 1)
    assert top == impl.win_probability("AhKd", trials=200, seed=2**64 - 1)
    if is_native(impl):
        exact = impl.win_probability("AhKd", "2c3c4c5d", n_opponents=2, exact=True)  # 20.6 M deals: under the cap
        assert sum(exact) == pytest.approx(1.0)
