"""Decisions unchanged: the bots' triples and actions at the golden file's 14,421 decision points
of self-play (``bench/golden_decisions.py``, recorded before the hand's path was refactored)
are reproduced bit for bit."""
from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "golden_decisions.py"


def _golden():
    spec = importlib.util.spec_from_file_location("golden_decisions", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def test_every_bot_decides_as_the_golden_file_says():
    golden = _golden()
    want = golden.load()
    got = golden.play(golden.PAIRINGS)
    assert len(want) > 10_000
    assert golden.differences(got, want) == []


def test_the_comparison_sees_a_changed_triple():
    golden = _golden()
    want = golden.load()[:3]
    got = [list(r) for r in want]
    got[1] = got[1][:4] + [[float(0.5).hex()] * 3, got[1][5]]
    assert len(golden.differences(got, want)) == 1
