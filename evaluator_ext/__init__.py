"""Hand evaluation for hold'em: the public facade.

The functions are one facade (``evaluator_ext._facade``: input checks, caps, formulas)
over counting kernels from the C extension (``evaluator_ext.native``) when it is built and
from the pure-Python reference (``evaluator_ext.reference``, imported only then) otherwise;
both give the same results and the same errors for bad input (ValueError subclasses of
``CBRError``). ``IMPLEMENTATION`` says which one is in use. Set the environment variable
``CBR_REQUIRE_NATIVE=1`` to make importing fail when the extension is missing (CI does);
the same goes for the CFR solver's extension ``evaluator_ext._cfr`` (``CFR_IMPLEMENTATION``)
and the MCCFR teacher's ``evaluator_ext._mccfr`` (``MCCFR_AVAILABLE``; no fallback).

Caps: ``win_probability`` deals at most ``MAX_TRIALS`` (10**9) Monte Carlo trials with a
seed in 0..2**64-1, and enumerates at most ``EXACT_MAX_DEALS`` (5e7) deals; long native
calls stop at Ctrl-C (KeyboardInterrupt) within milliseconds.

>>> from evaluator_ext import evaluate, hand_category, hand_strength, preflop_rank
>>> hand_category(evaluate("AhKhQhJhTh"))
'straight flush'
>>> round(hand_strength("AcQs", "3h4sJd"), 4)
0.5851
>>> preflop_rank("AsAh")
1
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Any

from evaluator_ext._common import (
    CATEGORIES,
    CATEGORY_SIZES,
    EXACT_AUTO_MAX_DEALS,
    EXACT_MAX_DEALS,
    MAX_SEED,
    MAX_TRIALS,
    N_VALUES,
    effective,
)
from evaluator_ext.cards import (
    N_CARDS,
    N_COMBOS,
    RANKS,
    SUITS,
    card_rank,
    card_str,
    card_suit,
    cards_str,
    check_distinct,
    class_example,
    combo_cards,
    combo_index,
    hand_class,
    no_suits,
    parse_card,
    parse_cards,
    parse_hole_and_board,
    unmarked_classes,
)
from evaluator_ext.errors import CBRError, EvaluatorValueError, InvalidCardError
from evaluator_ext.preflop import PREFLOP_CLASSES, PREFLOP_TABLE, class_combos, preflop_class, preflop_rank

#: The evaluator functions every implementation provides (same names and signatures).
API = (
    "evaluate",
    "evaluate_batch",
    "hand_category",
    "hand_strength",
    "potential_table",
    "hand_potential",
    "effective_hand_strength",
    "hand_strength_squared",
    "win_probability",
    "hand_strength_counts",
    "category_counts",
    "showdown_deals",
    "range_equity",
    "range_update",
)


def _load_native() -> ModuleType:
    """Import ``evaluator_ext.native`` and check it provides the whole API."""
    native = importlib.import_module("evaluator_ext.native")

    missing = [name for name in API if not callable(getattr(native, name, None))]
    if missing:
        raise ImportError(f"evaluator_ext.native lacks {', '.join(missing)}")
    return native


def build_hint() -> str:
    """How to get the C extensions, for an error saying one is not built. In a source checkout
    (this package beside a ``pyproject.toml``) the editable install builds them in place; a
    command run in a checkout imports the checkout's packages before an installed copy, so
    ``pip install .`` alone leaves the checkout's unbuilt.

    >>> "pip install" in build_hint()
    True
    """
    here = os.path.dirname(os.path.abspath(__file__))
    if os.path.isfile(os.path.join(os.path.dirname(here), "pyproject.toml")):
        return (f"this is the source checkout's evaluator_ext ({here}: run in a checkout, its packages come before "
                "an installed copy); build it in place with the editable install: pip install -e .")
    return "the installed package lacks it: reinstall it with a C compiler (pip install --force-reinstall cbr-holdem)"


def _native_or_none(load: Any, what: str) -> Any:
    """``load()``, or None when it raises ImportError; with ``CBR_REQUIRE_NATIVE=1`` an
    ImportError that says which extension is missing and how to build it."""
    try:
        return load()
    except ImportError as exc:
        if os.environ.get("CBR_REQUIRE_NATIVE") == "1":
            raise ImportError(
                f"CBR_REQUIRE_NATIVE=1 but {what} cannot be imported ({exc}); build it with "
                "`python3 setup.py build_ext --inplace` or `pip install -e .`"
            ) from exc
        return None


_impl = _native_or_none(_load_native, "the native hand evaluator")
IMPLEMENTATION = "native" if _impl is not None else "reference"
if _impl is None:
    from evaluator_ext import reference as _impl

#: The optional extensions' flags: ``CFR_IMPLEMENTATION`` (the CFR solver's C extension;
#: cbr.cfr.solver falls back to a pure-numpy reference without it) and ``MCCFR_AVAILABLE``
#: (hand-strength-distribution buckets and MCCFR, cbr.abstraction.distribution and
#: cbr.cfr.mccfr: native only, those modules raise a ConfigError without it). Each loads its
#: extension when first read (a process that evaluates hands does not map them), except
#: under CBR_REQUIRE_NATIVE=1, where importing this package loads and checks them.
_OPTIONAL = {
    "CFR_IMPLEMENTATION": lambda: "native" if _native_or_none(
        lambda: importlib.import_module("evaluator_ext._cfr"), "the native CFR solver evaluator_ext._cfr") else "reference",
    "MCCFR_AVAILABLE": lambda: _native_or_none(
        lambda: importlib.import_module("evaluator_ext._mccfr"), "the MCCFR extension evaluator_ext._mccfr") is not None,
}


def __getattr__(name: str) -> Any:
    if name not in _OPTIONAL:
        raise AttributeError(f"module 'evaluator_ext' has no attribute {name!r}")
    value = globals()[name] = _OPTIONAL[name]()
    return value


if os.environ.get("CBR_REQUIRE_NATIVE") == "1":
    for _name in _OPTIONAL:
        __getattr__(_name)

evaluate = _impl.evaluate
evaluate_batch = _impl.evaluate_batch
hand_category = _impl.hand_category
hand_strength = _impl.hand_strength
potential_table = _impl.potential_table
hand_potential = _impl.hand_potential
effective_hand_strength = _impl.effective_hand_strength
hand_strength_squared = _impl.hand_strength_squared
win_probability = _impl.win_probability
range_equity = _impl.range_equity
range_update = _impl.range_update
hand_strength_counts = _impl.hand_strength_counts
category_counts = _impl.category_counts
showdown_deals = _impl.showdown_deals


def hand_summary(
    hole: object, board: object = (), n_opponents: int = 1, trials: int = 50_000, seed: int = 0
) -> dict[str, object]:
    """Everything the evaluator says about one holding, as a dict (what ``cbr hand`` prints).

    Keys: ``hole``, ``board`` (text), ``preflop_class``, ``preflop_rank``, ``opponents``,
    ``category``, ``hs``, ``ppot``, ``npot``, ``ehs``, ``ehs2`` (None before the flop:
    they need a board), ``win``, ``tie``, ``lose``, ``exact`` (whether win/tie/lose were
    enumerated rather than sampled), ``trials`` and ``seed`` (None when exact).
    HS and EHS are against ``n_opponents``; PPOT, NPOT and E[HS^2] against one.

    >>> s = hand_summary("AcQs", "3h4sJd")
    >>> s["category"], round(s["hs"], 4), s["preflop_class"]
    ('high card', 0.5851, 'AQo')

    Before the flop a class (``"72o"``) is accepted too: its holdings share their pre-flop
    numbers (suits do not matter yet), so they are those of one of them; ``hole`` is then the
    class and ``holdings`` its number of holdings. With a board a class is refused
    (:class:`InvalidCardError`: a class is not a holding).

    >>> s = hand_summary("72o", trials=2000)
    >>> s["hole"], s["holdings"], s["preflop_rank"], s["win"] == hand_summary("7h2c", trials=2000)["win"]
    ('72o', 12, 169, True)
    """
    name = hand_class(hole) if not board else None
    classes = unmarked_classes(hole) if not board else None
    if classes is not None:  # 'AK': which class, suited or offsuit, is for the caller to say
        raise no_suits(str(hole), classes, class_taken=True, field="hole")
    if name is not None:  # (never a holding's text: a class has no suits)
        summary = hand_summary(class_example(name), (), n_opponents=n_opponents, trials=trials, seed=seed)
        return {**summary, "hole": name, "holdings": len(class_combos(name))}
    h, b = parse_hole_and_board(hole, board)
    exact = showdown_deals(len(b), n_opponents) <= EXACT_AUTO_MAX_DEALS
    win, tie, lose = win_probability(h, b, n_opponents=n_opponents, trials=trials, seed=seed)
    summary: dict[str, object] = {
        "hole": cards_str(h),
        "board": cards_str(b),
        "preflop_class": preflop_class(h),
        "preflop_rank": preflop_rank(h),
        "opponents": n_opponents,
        "category": None,
        "hs": None,
        "ppot": None,
        "npot": None,
        "ehs": None,
        "ehs2": None,
        "win": win,
        "tie": tie,
        "lose": lose,
        "exact": exact,
        "trials": None if exact else trials,
        "seed": None if exact else seed,
    }
    if b:
        hs = hand_strength(h, b, n_opponents)
        ppot, npot = hand_potential(h, b)
        summary.update(
            category=hand_category(evaluate(h + b)),
            hs=hs,
            ppot=ppot,
            npot=npot,
            ehs=effective(hs, ppot),
            ehs2=hand_strength_squared(h, b),
        )
    return summary

__all__ = [
    "IMPLEMENTATION",
    "CFR_IMPLEMENTATION",
    "MCCFR_AVAILABLE",
    *API,
    "EXACT_AUTO_MAX_DEALS",
    "EXACT_MAX_DEALS",
    "MAX_TRIALS",
    "MAX_SEED",
    "hand_summary",
    "preflop_rank",
    "preflop_class",
    "class_combos",
    "PREFLOP_CLASSES",
    "PREFLOP_TABLE",
    "CATEGORIES",
    "CATEGORY_SIZES",
    "N_VALUES",
    "CBRError",
    "InvalidCardError",
    "EvaluatorValueError",
    "N_CARDS",
    "N_COMBOS",
    "RANKS",
    "SUITS",
    "card_rank",
    "card_suit",
    "card_str",
    "cards_str",
    "check_distinct",
    "combo_cards",
    "combo_index",
    "parse_card",
    "parse_cards",
    "parse_hole_and_board",
]
