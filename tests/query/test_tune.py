"""Learned similarity weights (issue 9, section 9): the mutation, the search's guarantees
and its command."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cbr.errors import ConfigError
from cbr.game.gamedef import STREETS
from cbr.query.evaluate import evaluate_casebase, log_losses
from cbr.query.tune import K_RANGE, WEIGHT_RANGE, mutate, street_losses, tune_and_report, tune_similarity
from cbr.similarity import default_casper
from cbr.stats import cluster_mean_ci
from cbr.store import CaseBase, CaseBaseWriter

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def test_mutation_keeps_the_features_and_bounds_and_is_seeded() -> None:
    base = default_casper()
    a = mutate(base, np.random.default_rng(1), 0.8)
    b = mutate(base, np.random.default_rng(1), 0.8)
    assert a == b and a != base
    for st_a, st_base in zip(a.streets, base.streets):
        assert st_a.features == st_base.features
        for f, g in zip(st_a.feature_specs, st_base.feature_specs):
            assert WEIGHT_RANGE[0] <= f.weight <= WEIGHT_RANGE[1] and f.measure == g.measure
            if "k" in g.params:
                assert K_RANGE[0] <= f.params["k"] <= K_RANGE[1]
    assert any("k" in f.params and f.params["k"] != g.params["k"]
               for st_a, st_b in zip(a.streets, base.streets) for f, g in zip(st_a.feature_specs, st_b.feature_specs))


@pytest.fixture(scope="module")
def learnable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A case base where one feature (hand strength) decides the action and the rest is noise."""
    path = tmp_path_factory.mktemp("tune") / "cb"
    rng = np.random.default_rng(4)
    cfg = default_casper()
    with CaseBaseWriter(path, build_index=False) as w:
        for s in STREETS:
            st = cfg.street(s)
            n = 900
            X = np.column_stack([rng.uniform(f.low, f.high, n) for f in st.feature_specs]).astype(np.float32)
            j = list(st.features).index("hand_strength")
            hs = (X[:, j] - st.feature_specs[j].low) / (st.feature_specs[j].high - st.feature_specs[j].low)
            acts = np.where(hs > 0.66, "r", np.where(hs > 0.33, "c", "f"))
            w.add_rows(s, X, list(acts), source="synthetic", hand_id=[f"h{i}" for i in range(n)])
    return path


def test_search_never_loses_to_its_start_and_improves_a_bad_start(learnable: Path) -> None:
    cb = CaseBase.open(learnable)
    # a bad start: hand strength nearly ignored, so retrieval answers with noise neighbours
    bad = default_casper()
    from dataclasses import replace

    streets = []
    for st in bad.streets:
        specs = tuple(replace(f, weight=1.0) if f.name == "hand_strength" else replace(f, weight=100.0)
                      for f in st.feature_specs)
        streets.append(replace(st, feature_specs=specs))
    bad = replace(bad, streets=tuple(streets))
    r = tune_similarity(cb, generations=3, population=4, folds=2, max_decisions=200, seed=1, start=bad)
    for s in (*STREETS, "all"):
        assert r.best_loss[s] <= r.start_loss[s] + 1e-12, s
    assert len(r.history) == 4 and r.evaluations == 1 + 3 * 4
    for s in STREETS:  # the best per street never gets worse from one generation to the next
        seq = [h[s] for h in r.history]
        assert all(b <= a + 1e-9 for a, b in zip(seq, seq[1:])), s
    # on other folds and samples the learned weights beat the bad start too
    before = street_losses(cb, bad, folds=2, max_decisions=200, seed=9)
    after = street_losses(cb, r.best, folds=2, max_decisions=200, seed=9)
    assert after["all"] < before["all"]
    cb.close()


def test_report_gives_intervals_and_the_paired_change(learnable: Path) -> None:
    """The report's log-losses are `cbr evaluate`'s on the report seed, each with its 95% half-width
    over hands; the change is learned minus hand-picked per held-out decision (the same
    decisions for both), its mean and half-width over hands."""
    cb = CaseBase.open(learnable)
    result, report = tune_and_report(cb, generations=1, population=2, folds=2, max_decisions=200, seed=0)
    rep = report["report"]
    assert rep["start_loss"] == street_losses(cb, cb.similarity(), folds=2, max_decisions=200, seed=1)
    assert rep["best_loss"] == street_losses(cb, result.best, folds=2, max_decisions=200, seed=1)
    evs = [evaluate_casebase(cb, folds=2, similarity=c, seed=1, max_decisions=200, ann=False, details=True)
           for c in (cb.similarity(), result.best)]
    cb.close()
    assert [(d["street"], d["row"]) for d in evs[0].decisions] == [(d["street"], d["row"]) for d in evs[1].decisions]
    for street in (*STREETS, "all"):
        picked = [d for d in evs[0].decisions if street in ("all", d["street"])]
        other = [d for d in evs[1].decisions if street in ("all", d["street"])]
        y = np.asarray(["fcr".index(d["action"]) for d in picked])
        start = log_losses(np.asarray([d["knn"] for d in picked]), y)
        best = log_losses(np.asarray([d["knn"] for d in other]), y)
        hands = [d["hand"] for d in picked]
        assert len(set(hands)) < len(hands) or street != "all"     # a hand's decisions on several streets
        assert rep["start_ci"][street] == pytest.approx(cluster_mean_ci(start.tolist(), hands)[1], rel=1e-9)
        assert rep["best_ci"][street] == pytest.approx(cluster_mean_ci(best.tolist(), hands)[1], rel=1e-9)
        change, half = cluster_mean_ci((best - start).tolist(), hands)
        assert rep["difference"][street] == pytest.approx(change, abs=1e-12)
        assert rep["difference"][street] == pytest.approx(rep["best_loss"][street] - rep["start_loss"][street],
                                                          abs=1e-12)
        assert rep["difference_ci"][street] == pytest.approx(half, rel=1e-9)


def test_bad_settings_are_refused(learnable: Path) -> None:
    cb = CaseBase.open(learnable)
    with pytest.raises(ConfigError, match="generations"):
        tune_similarity(cb, generations=0)
    with pytest.raises(ConfigError, match="at least 100"):
        tune_similarity(cb, max_decisions=20)
    cb.close()


def test_cli_writes_a_similarity_file_and_reports(learnable: Path, tmp_path: Path) -> None:
    out = tmp_path / "learned.toml"
    run = subprocess.run([sys.executable, "-m", "cli", "tune", str(learnable), "-g", "1", "--population", "1",
                          "--folds", "2", "--max-decisions", "100", "-o", str(out), "--json"], env=ENV, cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["report_seed"] == 1 and set(report["report"]["best_loss"]) == {*STREETS, "all"}
    from cbr.similarity import SimilarityConfig

    assert SimilarityConfig.from_toml(out).street("flop").features == default_casper().street("flop").features
    again = subprocess.run([sys.executable, "-m", "cli", "tune", str(learnable), "-o", str(out)], env=ENV, cwd=REPO,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 1 and "--overwrite" in again.stderr  # an output-path refusal: exit 1, as every -o
    few = subprocess.run([sys.executable, "-m", "cli", "tune", str(learnable), "--max-decisions", "20",
                          "-o", str(tmp_path / "x.toml")], env=ENV, cwd=REPO, capture_output=True, text=True,
                         timeout=60)
    assert few.returncode == 2


def test_a_case_base_too_small_to_score_is_refused_and_nothing_written(tmp_path: Path) -> None:
    """Every loss printed 'inf', exit 0, and a 'learned' file was written from nothing."""
    rng = np.random.default_rng(5)
    cfg = default_casper()
    path = tmp_path / "tiny"
    with CaseBaseWriter(path, build_index=False) as w:
        for s in STREETS:
            st = cfg.street(s)
            X = np.column_stack([rng.uniform(f.low, f.high, 12) for f in st.feature_specs]).astype(np.float32)
            w.add_rows(s, X, list("fcr" * 4), source="synthetic", hand_id=[f"h{i}" for i in range(12)])
    with CaseBase.open(path) as cb, pytest.raises(ConfigError, match="too few decisions to score a similarity"):
        tune_similarity(cb, generations=1, population=1, folds=2, max_decisions=100)
    out = tmp_path / "learned.toml"
    run = subprocess.run([sys.executable, "-m", "cli", "tune", str(path), "-g", "1", "--population", "1", "--folds", "2",
                          "--max-decisions", "100", "-o", str(out)], env=ENV, cwd=REPO, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 1 and run.stderr.startswith("error: too few decisions"), run.stderr
    assert not out.exists()


def test_the_table_names_each_learned_column_by_its_seed(learnable: Path, tmp_path: Path) -> None:
    """Two different columns were both headed 'learned'."""
    run = subprocess.run([sys.executable, "-m", "cli", "tune", str(learnable), "-g", "1", "--population", "1",
                          "--folds", "2", "--max-decisions", "100", "-o", str(tmp_path / "l.toml")],
                         env={**ENV, "COLUMNS": "200"}, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "learned (seed 0)" in run.stdout and "learned (seed 1)" in run.stdout
