"""Helpers shared by the evaluator tests: loading each implementation, tolerances. The fixtures
are in ``tests/evaluator/conftest.py``: ``impl`` runs a test once against ``evaluator_ext.reference`` and once against
``evaluator_ext.native``. The native run skips (with the reason) when the extension is not
built, except under ``CBR_REQUIRE_NATIVE=1``, where it fails.
"""
from __future__ import annotations

import importlib
import math
import os
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

REQUIRE_NATIVE = os.environ.get("CBR_REQUIRE_NATIVE") == "1"
IMPLEMENTATIONS = ("reference", "native")


def load_impl(name: str) -> ModuleType:
    """The module of one implementation; skip (or fail under CBR_REQUIRE_NATIVE=1) if native is missing."""
    if name == "reference":
        return importlib.import_module("evaluator_ext.reference")
    try:
        module = importlib.import_module("evaluator_ext.native")
        from evaluator_ext import API

        missing = [n for n in API if not callable(getattr(module, n, None))]
        if missing:
            raise ImportError(f"evaluator_ext.native lacks {', '.join(missing)}")
    except ImportError as exc:
        if REQUIRE_NATIVE:
            pytest.fail(f"CBR_REQUIRE_NATIVE=1 but the native evaluator is unavailable: {exc}")
        pytest.skip(f"native evaluator not built ({exc}); run `python3 setup.py build_ext --inplace`")
    return module


def is_native(module: ModuleType) -> bool:
    """True for the native implementation."""
    return module.__name__.endswith("native")


def mc_tolerance(p: float, *trials_or_sd: float) -> float:
    """Four standard deviations of a difference of independent estimates of a probability ``p``.

    Each extra argument is either a trial count (an int: variance p(1-p)/n) or an explicit
    standard deviation (a float below 1, for published values with a stated accuracy).

    >>> round(mc_tolerance(0.5, 10_000), 4)
    0.02
    """
    variance = 0.0
    for item in trials_or_sd:
        if isinstance(item, int):
            variance += p * (1 - p) / item
        else:
            variance += item * item
    return 4 * math.sqrt(variance)


SRC = Path(__file__).resolve().parents[2] / "evaluator_ext" / "src"


def generated_tables(cc: str, where: Path) -> Path:
    """Build and run ``gen_eval_tables`` as setup.py does, writing ``eval_tables_data.h`` into
    ``where``; the directory to add (``-I``) when compiling the kernels alone."""
    exe = where / "gen_eval_tables"
    subprocess.run([cc, "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{SRC}", str(SRC / "gen_eval_tables.c"),
                    str(SRC / "eval_tables.c"), "-o", str(exe)], check=True, capture_output=True, timeout=120)
    subprocess.run([str(exe), str(where / "eval_tables_data.h")], check=True, capture_output=True, timeout=60)
    return where
