"""The retention gate (``Retainer(gate=...)``, ``cbr match --retain-gate``): a decision is not
kept when the case base already holds a case of the same street and action at least that
similar; every other decision is kept as without the gate; off by default."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS
from cbr.logs.replay import replay
from cbr.play.match import run_match
from cbr.play.retention import Retainer, copy_casebase, shown_positions
from cbr.policies.cbr_policy import CBRPolicy
from cbr.similarity import global_similarity
from cbr.store import CaseBase
from tests.conftest import REPO

CLI = [sys.executable, "-c", "import sys; from cli import app; sys.exit(app())"]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


class Recorder:
    def __init__(self) -> None:
        self.records = []

    def write(self, record) -> None:  # noqa: ANN001
        self.records.append(record)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_casebase("default", tmp_path_factory.mktemp("gate") / "base")


@pytest.fixture(scope="module")
def records() -> list:
    rec = Recorder()
    run_match(["ehs", "call"], 12, seed=21, log=rec)
    return [r for r in rec.records if shown_positions(r)]


def test_a_hand_retained_twice_is_skipped_the_second_time(base: Path, tmp_path: Path, records: list) -> None:
    path = copy_casebase(base, tmp_path / "gated")
    cb = CaseBase.open(path)
    try:
        retainer = Retainer(cb, keep=[], names=["ehs", "call"], gate=0.999)
        first = sum(retainer.hand(r, [0, 1]) for r in records)
        skipped_first = retainer.skipped
        second = sum(retainer.hand(r, [0, 1]) for r in records)
        decisions = sum(1 for r in records for dp in replay(r) if dp.position in shown_positions(r))
        # the second time, every decision has itself (similarity 1, same action) in the case base
        assert second == 0 and retainer.skipped - skipped_first == decisions
        assert first + skipped_first == decisions and first > 0
        assert retainer.retained == first
    finally:
        cb.close()


def test_the_gate_skips_exactly_the_near_duplicates(base: Path, tmp_path: Path, records: list) -> None:
    """Each decision kept or skipped as a brute-force scan of the case base says: skipped iff a
    case of its street and action is at least 0.99 similar."""
    path = copy_casebase(base, tmp_path / "gated")
    cb = CaseBase.open(path)
    try:
        fs = cb.feature_set()
        config = cb.similarity()
        expected = []
        for r in records:
            for dp in replay(r):
                if dp.position not in shown_positions(r) or dp.action not in "fcr":
                    continue
                s = STREETS[dp.street]
                X = cb.cases(s).features
                sims = global_similarity(config.street(s), fs.row(dp), X)
                same = np.asarray(cb.cases(s).actions) == dp.action
                expected.append(bool(((sims >= 0.99) & same).any()))
            break  # one hand: the cases it adds do not change what the next scan must see
        retainer = Retainer(cb, keep=[], names=["ehs", "call"], gate=0.99)
        kept = retainer.hand(records[0], [0, 1])
        assert retainer.skipped == sum(expected) and kept == len(expected) - sum(expected)
    finally:
        cb.close()


def test_no_gate_keeps_everything(base: Path, tmp_path: Path, records: list) -> None:
    path = copy_casebase(base, tmp_path / "plain")
    cb = CaseBase.open(path)
    try:
        retainer = Retainer(cb, keep=[], names=["ehs", "call"])
        first = sum(retainer.hand(r, [0, 1]) for r in records)
        second = sum(retainer.hand(r, [0, 1]) for r in records)
        assert first == second > 0 and retainer.skipped == 0
    finally:
        cb.close()
    with pytest.raises(CaseBaseError, match="gate"):
        Retainer(CaseBase.open(path), keep=[], names=["a", "b"], gate=1.5)


def test_match_with_a_gate_reports_the_skipped(base: Path, tmp_path: Path) -> None:
    path = copy_casebase(base, tmp_path / "m")
    bot = CBRPolicy(casebase=str(path), seed=4)
    r = run_match([bot, "call"], 40, seed=5, retain=True, retain_gate=0.95)
    bot.close()
    assert r.retain_skipped > 0 and r.to_dict()["retain_skipped"] == r.retain_skipped
    cb = CaseBase.open(path)
    try:
        assert cb.sql("SELECT count(*) FROM cases WHERE source = 'retained'").fetchone()[0] == r.retained
    finally:
        cb.close()


def test_cli_retain_gate(tmp_path: Path) -> None:
    proc = subprocess.run([*CLI, "match", "-p", "cbr:casebase=default,call", "--hands", "20", "--retain-into",
                           "./g", "--retain-gate", "0.97", "--json"], capture_output=True, text=True, env=ENV,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["retain_skipped"] > 0 and data["retained"] >= 0  # most of 20 hands are near-duplicates at 0.97
    usage = subprocess.run([*CLI, "match", "-p", "cbr,call", "--hands", "2", "--retain-gate", "0.9"],
                           capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=300)
    assert usage.returncode == 2 and "--retain-gate" in usage.stderr


def test_aggregate_without_fallback_is_empty_when_nothing_is_that_near() -> None:
    """What the gate asks: ``aggregate(..., fallback=False)`` is the grouped scan alone."""
    from cbr.retrieval import CaseIndex
    from cbr.similarity import default_casper

    X = np.tile(np.array([[2, 1, 2, 0, 0, 1, 0.25, 0.9, 0, 0, 12, 1]], np.float32), (30, 1))
    X[:, 7] = np.linspace(0, 1, 30)
    index = CaseIndex(similarity=default_casper().street("river")).fit(X)
    codes = np.array([1] * 30, np.int8)
    far = X[0].copy()
    far[10] = 90.0  # a pot no case is near
    assert index.aggregate(far, codes, top=3).fallback  # the bot's vote falls back to the 20 nearest
    empty = index.aggregate(far, codes, top=3, fallback=False)
    assert empty.n == 0 and not empty.fallback and empty.counts.sum() == 0 and len(empty.top_ids) == 0
    near = index.aggregate(X[5], codes, top=3, fallback=False)
    assert near.n == index.aggregate(X[5], codes, top=3).n > 0
