"""`cbr evaluate` (issue 9, section 8): k-fold and hold-out evaluation of a case base,
checked against a brute force written here from the definitions (similarity, CASPER's
threshold-else-top-k retrieval, the triple, accuracy and the clipped log-loss), on case
bases built from real match logs."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cbr.build.local import build_casebase
from cbr.errors import ConfigError
from cbr.game.gamedef import STREETS
from cbr.logs.acpc import AcpcLogWriter
from cbr.logs.detect import read_logs
from cbr.logs.replay import replay
from cbr.play.match import run_match
from cbr.query.evaluate import evaluate_casebase
from cbr.similarity import SimilarityConfig, default_casper
from cbr.stats import Z95, cluster_mean_ci, mean_ci
from cbr.store import CaseBase
from cli import app
from tests.conftest import shared_path

runner = CliRunner()
CLIP = 0.001   # the documented clip of every probability before the log-loss


def cbr(*args: object):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("eval")
    out = {}
    for name, bots, hands, seed in (("train", ["ehs", "lag"], 80, 5), ("heldout", ["ehs", "lag"], 80, 6)):
        out[name] = root / f"{name}.log"
        with AcpcLogWriter(out[name]) as log:
            run_match(bots, hands, seed=seed, log=log)
    out["cb"] = root / "cb"
    build_casebase([out["train"]], out["cb"], workers=1)
    return out


# ---- the brute force, from the definitions -----------------------------------------------------
def local(spec, q: float, column: np.ndarray) -> np.ndarray:
    d = np.abs(column.astype(np.float64) - q)
    if spec.measure == "linear":
        return np.maximum(1.0 - d / (spec.high - spec.low), 0.0)
    if spec.measure == "exp":
        return np.exp(-spec.params["k"] * d)
    raise AssertionError(f"the brute force knows linear and exp, not {spec.measure}")


def similarity(street_cfg, q: np.ndarray, X: np.ndarray) -> np.ndarray:
    total, acc = 0.0, np.zeros(len(X))
    for i, spec in enumerate(street_cfg.feature_specs):
        if spec.weight:
            acc = acc + local(spec, float(q[i]), X[:, i]) * spec.weight
            total += spec.weight
    return acc / total


def retrieve(cfg, street: str, q: np.ndarray, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """CASPER: every case at or above the threshold, else the fallback_k most similar (ties by id)."""
    sims = similarity(cfg.street(street), q, X)
    hit = np.flatnonzero(sims >= cfg.threshold)
    if len(hit):
        return hit, sims[hit], False
    order = sorted(range(len(X)), key=lambda i: (-sims[i], i))[: cfg.fallback_k]
    return np.asarray(order), sims[order], True


def triple(actions: list[str]) -> list[float]:
    return [actions.count(a) / len(actions) for a in "fcr"]


def log_loss(p: list[float], action: str) -> float:
    clipped = [max(x, CLIP) for x in p]
    return -math.log(clipped["fcr".index(action)] / sum(clipped))


def most_likely(p: list[float]) -> str:
    return "fcr"[int(np.argmax(p))]    # ties go to the first of fold, call, raise (numpy's argmax)


# ---- k-fold ---------------------------------------------------------------------------------------
def test_kfold_matches_the_brute_force(logs) -> None:
    cfg = default_casper()
    with CaseBase.open(logs["cb"]) as cb:
        ev = evaluate_casebase(cb, folds=3, seed=7, ann=False, details=True)
        tables = {s: cb.table(s).to_pylist() for s in STREETS}
        X = {s: cb.cases(s).features for s in STREETS}
    # every case is held out exactly once, and a hand never spans two folds
    assert sorted((d["street"], d["row"]) for d in ev.decisions) == sorted(
        (s, r) for s in STREETS for r in range(len(tables[s])))
    fold = {(d["street"], d["row"]): d["fold"] for d in ev.decisions}
    hand_fold: dict[str, set[int]] = {}
    for s in STREETS:
        for r, case in enumerate(tables[s]):
            hand_fold.setdefault(case["hand_id"], set()).add(fold[(s, r)])
    assert all(len(f) == 1 for f in hand_fold.values())
    assert {f for fs in hand_fold.values() for f in fs} == {0, 1, 2}

    for s, row in zip(STREETS, ev.rows):
        actions = [c["action"] for c in tables[s]]
        n = len(actions)
        assert n >= 100    # enough for an accuracy to be reported
        train_of = {k: [r for r in range(n) if fold[(s, r)] != k] for k in range(3)}
        correct, losses, sims, maj_correct, maj_losses = 0, [], [], 0, []
        for r in range(n):
            train = train_of[fold[(s, r)]]
            ids, sim, _ = retrieve(cfg, s, X[s][r], X[s][train])
            p = triple([actions[train[i]] for i in ids])
            mine = next(d for d in ev.decisions if d["street"] == s and d["row"] == r)
            assert mine["knn"] == pytest.approx(p, abs=1e-12), (s, r)
            assert mine["mean_similarity"] == pytest.approx(float(np.mean(sim)), abs=1e-12)
            correct += most_likely(p) == actions[r]
            losses.append(log_loss(p, actions[r]))
            sims.append(float(np.mean(sim)))
            m = triple([actions[i] for i in train])
            maj_correct += most_likely(m) == actions[r]
            maj_losses.append(log_loss(m, actions[r]))
        assert row.decisions == n
        assert row.knn["accuracy"] == pytest.approx(correct / n)
        assert row.knn["log_loss"] == pytest.approx(float(np.mean(losses)))
        assert row.mean_similarity == pytest.approx(float(np.mean(sims)))
        assert row.majority["accuracy"] == pytest.approx(maj_correct / n)
        assert row.majority["log_loss"] == pytest.approx(float(np.mean(maj_losses)))
    total = ev.rows[-1]
    assert total.street == "all" and total.decisions == sum(r.decisions for r in ev.rows[:-1])


def test_ann_column_is_on_the_same_decisions(logs) -> None:
    with CaseBase.open(logs["cb"]) as cb:
        ev = evaluate_casebase(cb, folds=3, seed=1, ann=True)
        without = evaluate_casebase(cb, folds=3, seed=1, ann=False)
    for a, b in zip(ev.rows, without.rows):
        assert a.decisions == b.decisions and a.knn == b.knn and a.majority == b.majority
        assert b.ann is None
        assert set(a.ann) == {"accuracy", "log_loss"} and 0 <= a.ann["accuracy"] <= 1


def test_sample_is_seeded_and_bounded(logs) -> None:
    with CaseBase.open(logs["cb"]) as cb:
        a = evaluate_casebase(cb, folds=2, max_decisions=30, ann=False, details=True, seed=3)
        b = evaluate_casebase(cb, folds=2, max_decisions=30, ann=False, details=True, seed=3)
    assert a.decisions == b.decisions
    assert all(r.decisions == 30 for r in a.rows[:-1])
    # 30 decisions a street: no accuracy (its standard error could reach 0.09), and a note saying so
    for r in a.rows[:-1]:
        assert r.knn == r.majority == {"accuracy": None, "log_loss": None} and r.mean_similarity is None
        assert "too few decisions (30 < 100)" in r.note
    assert a.rows[-1].decisions == 120 and a.rows[-1].note == "" and a.rows[-1].knn["accuracy"] is not None


@pytest.fixture(scope="module")
def irc_casebase(tmp_path_factory) -> Path:
    """A case base of the real IRC logs: the decisions of some of its cases cannot be rebuilt
    for the ANN's inputs (their stored history does not replay)."""
    out = tmp_path_factory.mktemp("irc") / "cb"
    build_casebase([shared_path("irc")], out, workers=1)
    return out


def test_the_decisions_scored_do_not_depend_on_the_ann_column(irc_casebase) -> None:
    """Issue 16, defect 9: with the ANN column the cases it cannot take were dropped from the
    sample of every column (pre-flop k-NN accuracy 0.818 without the ANN, 0.782 with it)."""
    with CaseBase.open(irc_casebase) as cb:
        with_ann = evaluate_casebase(cb, folds=2, seed=0, max_decisions=150, ann=True, details=True)
        without = evaluate_casebase(cb, folds=2, seed=0, max_decisions=150, ann=False, details=True)
    assert with_ann.skipped > 0     # the premise: the ANN cannot take every case
    assert with_ann.decisions == without.decisions
    for a, b in zip(with_ann.rows, without.rows):
        assert a.decisions == b.decisions and a.knn == b.knn and a.majority == b.majority
        assert a.ci["knn"] == b.ci["knn"] and a.ci["majority"] == b.ci["majority"]
        assert b.ann is None and b.ann_decisions is None and b.ci["ann"] is None
        assert a.ann_decisions <= a.decisions and set(a.ci["ann"]) == {"accuracy", "log_loss"}
    assert with_ann.rows[-1].ann_decisions < with_ann.rows[-1].decisions
    # the ANN column is scored on exactly the sampled decisions whose inputs could be rebuilt
    from cbr.models.predictor import examples_from_casebase

    with CaseBase.open(irc_casebase) as cb:
        _, where = examples_from_casebase(cb)
    rebuilt = {(STREETS[s], int(r)) for s, r in where.tolist()}
    assert with_ann.rows[-1].ann_decisions == sum((d["street"], d["row"]) in rebuilt for d in with_ann.decisions)


def _cluster_half_width(values: list[float], hands: list[int]) -> float:
    """The 95% half-width of a mean over decisions when hands are the independent draws, from
    the definition: G/(G-1) * sum over hands of (hand total - mean * hand size)^2, over n^2."""
    n, mean = len(values), sum(values) / len(values)
    totals: dict[int, list[float]] = {}
    for v, h in zip(values, hands):
        totals.setdefault(h, []).append(v)
    g = len(totals)
    spread = sum((sum(t) - mean * len(t)) ** 2 for t in totals.values())
    return Z95 * math.sqrt(g / (g - 1) * spread) / n


def test_confidence_intervals_are_over_hands(logs) -> None:
    with CaseBase.open(logs["cb"]) as cb:
        ev = evaluate_casebase(cb, folds=3, seed=2, ann=False, details=True)
        hand_of = {(s, r): case["hand_id"] for s in STREETS for r, case in enumerate(cb.table(s).to_pylist())}
    # a decision's hand number is its hand's: one number per hand_id, across streets
    numbers: dict[str, set[int]] = {}
    for d in ev.decisions:
        numbers.setdefault(hand_of[(d["street"], d["row"])], set()).add(d["hand"])
    assert all(len(v) == 1 for v in numbers.values()) and len({min(v) for v in numbers.values()}) == len(numbers)
    for row in ev.rows:
        picked = [d for d in ev.decisions if row.street in ("all", d["street"])]
        hands = [d["hand"] for d in picked]
        assert row.hands == len(set(hands)) < row.decisions
        hits = [float(most_likely(d["knn"]) == d["action"]) for d in picked]
        losses = [log_loss(d["knn"], d["action"]) for d in picked]
        assert row.ci["knn"]["accuracy"] == pytest.approx(_cluster_half_width(hits, hands), rel=1e-9)
        assert row.ci["knn"]["log_loss"] == pytest.approx(_cluster_half_width(losses, hands), rel=1e-9)
        assert 0 < row.ci["majority"]["accuracy"] < 1 and row.ci["majority"]["log_loss"] > 0


def test_the_interval_over_hands_covers_the_mean_as_often_as_it_says() -> None:
    """Decisions of one hand move together (each hand has its own rate): the interval over hands
    covers the true mean in ~95% of 400 seeded trials, the one that takes decisions as
    independent does not. Tolerance: 4 standard errors of a 95% rate over 400 trials."""
    rng = np.random.default_rng(5)
    trials, over_hands, naive = 400, 0, 0
    for _ in range(trials):
        sizes, rates = rng.integers(1, 7, 200), rng.beta(0.5, 0.5, 200)     # true mean 0.5
        values, hands = [], []
        for h, (k, p) in enumerate(zip(sizes, rates)):
            values += (rng.random(k) < p).astype(float).tolist()
            hands += [h] * int(k)
        mean, half = cluster_mean_ci(values, hands)
        over_hands += abs(mean - 0.5) <= half
        mean, half = mean_ci(values)
        naive += abs(mean - 0.5) <= half
    tol = 4 * math.sqrt(0.95 * 0.05 / trials)
    assert abs(over_hands / trials - 0.95) <= tol, over_hands
    assert naive / trials < 0.95 - tol, naive


# ---- hold-out logs --------------------------------------------------------------------------------
def test_holdout_matches_the_brute_force(logs) -> None:
    cfg = default_casper()
    known = {s: [] for s in STREETS}
    for item in read_logs([logs["heldout"]]):
        for dp in replay(item):
            if dp.hole is not None:
                known[STREETS[dp.street]].append(dp)
    with CaseBase.open(logs["cb"]) as cb:
        ev = evaluate_casebase(cb, holdout=[str(logs["heldout"])], ann=False, details=True)
        fs = cb.feature_set()
        X = {s: cb.cases(s).features for s in STREETS}
        actions = {s: cb.cases(s).actions.tolist() for s in STREETS}
    for s, row in zip(STREETS, ev.rows):
        assert row.decisions == len(known[s]) >= 100
        correct = 0
        for i, dp in enumerate(known[s]):
            ids, _, _ = retrieve(cfg, s, fs.row(dp), X[s])
            p = triple([actions[s][j] for j in ids])
            mine = next(d for d in ev.decisions if d["street"] == s and d["row"] == i)
            assert mine["knn"] == pytest.approx(p, abs=1e-12)
            correct += most_likely(p) == dp.action
        assert row.knn["accuracy"] == pytest.approx(correct / len(known[s]))
    assert ev.mode == "holdout" and ev.folds is None


# ---- similarity settings -------------------------------------------------------------------------
def equity_toml() -> str:
    text = default_casper().to_toml()
    head, tail = text.split('feature = "hand_strength"\nmeasure = "linear"', 1)
    return head + 'feature = "hand_strength"\nmeasure = "equity"' + tail   # the first one: pre-flop


def test_similarity_file_changes_only_what_it_says(logs, tmp_path: Path) -> None:
    path = tmp_path / "equity.toml"
    path.write_text(equity_toml())
    cfg = SimilarityConfig.from_toml(path.read_text())
    assert cfg.street("preflop").feature_specs[-1].measure == "equity"
    assert cfg.street("flop") == default_casper().street("flop")
    with CaseBase.open(logs["cb"]) as cb:
        own = evaluate_casebase(cb, folds=3, ann=False)
        eq = evaluate_casebase(cb, folds=3, ann=False, similarity=cfg, similarity_name=str(path))
    assert eq.similarity == str(path)
    assert [r.knn for r in own.rows[1:4]] == [r.knn for r in eq.rows[1:4]]     # flop..river: same settings
    assert own.rows[0].mean_similarity != eq.rows[0].mean_similarity


def test_similarity_of_other_features_is_refused(logs, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(default_casper().to_toml().replace('feature = "pot_odds"', 'feature = "pot_size"', 1))
    with CaseBase.open(logs["cb"]) as cb, pytest.raises(ConfigError, match="pot_size"):
        evaluate_casebase(cb, similarity=SimilarityConfig.from_toml(bad.read_text()))
    result = cbr("evaluate", logs["cb"], "--similarity", bad)
    assert result.exit_code == 1
    line = result.stderr.strip().splitlines()
    assert len(line) == 1 and str(bad) in line[0]


# ---- the command ------------------------------------------------------------------------------------
def test_cli_json_shape(logs) -> None:
    result = cbr("evaluate", logs["cb"], "--folds", "2", "--json")
    assert result.exit_code == 0, result.output
    d = json.loads(result.stdout)
    assert set(d) >= {"casebase", "mode", "folds", "holdout", "similarity", "seed", "max_decisions",
                      "log_loss_clip", "skipped", "notes", "streets"}
    assert d["mode"] == "folds" and d["folds"] == 2 and d["log_loss_clip"] == CLIP
    assert [s["street"] for s in d["streets"]] == [*STREETS, "all"]
    for s in d["streets"]:
        assert set(s) >= {"decisions", "actions", "knn", "majority", "ann", "mean_similarity", "zero_share"}
        assert set(s["knn"]) == set(s["majority"]) == set(s["ann"]) == {"accuracy", "log_loss"}
    held = json.loads(cbr("evaluate", logs["cb"], "--holdout", logs["heldout"], "--no-ann", "--json").stdout)
    assert held["mode"] == "holdout" and held["holdout"] == [str(logs["heldout"])]
    assert all(s["ann"] is None for s in held["streets"])


def test_cli_text_table(logs) -> None:
    result = cbr("evaluate", logs["cb"], "--folds", "2", "--no-ann")
    assert result.exit_code == 0, result.output
    assert "acc kNN" in result.stdout and "ll maj" in result.stdout and "acc ANN" not in result.stdout


def test_cli_shows_confidence_intervals(logs) -> None:
    d = json.loads(cbr("evaluate", logs["cb"], "--folds", "2", "--no-ann", "--json").stdout)
    assert d["ci_level"] == 0.95 and "hands" in d["ci_method"]
    result = runner.invoke(app, ["evaluate", str(logs["cb"]), "--folds", "2", "--no-ann"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "± 95% CI over hands" in result.stdout
    for s in d["streets"]:
        assert set(s["ci"]) == {"knn", "majority", "ann"} and s["ci"]["ann"] is None and s["ann_decisions"] is None
        assert 0 < s["hands"] <= s["decisions"]
        for who in ("knn", "majority"):
            for key in ("accuracy", "log_loss"):
                assert s["ci"][who][key] > 0
                assert f"{s[who][key]:.3f} ± {s['ci'][who][key]:.3f}" in result.stdout, (s["street"], who, key)


@pytest.mark.parametrize("args", [["--folds", "1"], ["--folds", "3", "--holdout", "x.log"],
                                  ["--max-decisions", "0"], ["--seed", "-2"]])
def test_cli_usage_errors_exit_2(logs, args: list[str]) -> None:
    result = cbr("evaluate", logs["cb"], *args)
    assert result.exit_code == 2, result.output


def test_cli_errors_exit_1(logs, tmp_path: Path) -> None:
    for args in (["evaluate", tmp_path / "no-such-casebase"],
                 ["evaluate", logs["cb"], "--holdout", tmp_path / "missing.log"]):
        result = cbr(*args)
        assert result.exit_code == 1, result.output
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_saved_predictor_on_holdout_and_schema_refusal(logs, tmp_path: Path) -> None:
    from cbr.models.predictor import train_predictor

    path = tmp_path / "p.ann"
    net, _ = train_predictor([str(logs["train"])], folds=2, out=path)
    held = str(logs["heldout"])
    with CaseBase.open(logs["cb"]) as cb:
        ev = evaluate_casebase(cb, holdout=[held], predictor=net)
        with pytest.raises(ConfigError, match="hold-out"):
            evaluate_casebase(cb, folds=3, predictor=net)
    result = cbr("evaluate", logs["cb"], "--holdout", held, "--predictor", path, "--json")
    assert result.exit_code == 0, result.output
    assert [s["ann"] for s in json.loads(result.stdout)["streets"]] == [r.ann for r in ev.rows]
    # a predictor of another input schema: one line naming the file and the versions, exit 1
    data = path.read_bytes()
    magic, header, rest = data.split(b"\n", 2)
    other = tmp_path / "old.ann"
    other.write_bytes(magic + b"\n" + json.dumps({**json.loads(header), "schema_version": 0}).encode() + b"\n" + rest)
    refused = cbr("evaluate", logs["cb"], "--holdout", held, "--predictor", other)
    assert refused.exit_code == 1 and refused.stdout == ""
    line = refused.stderr.strip().splitlines()
    assert len(line) == 1 and str(other) in line[0] and "schema version 0" in line[0] and "retrain" in line[0]
    assert cbr("evaluate", logs["cb"], "--predictor", path).exit_code == 2            # needs --holdout
    assert cbr("evaluate", logs["cb"], "--holdout", held, "--no-ann", "--predictor", path).exit_code == 2


def test_a_holdout_that_is_no_log_says_why(tmp_path: Path) -> None:
    """It said only 'no decision with known hole cards in g.log', not that g.log is no log."""
    noise = tmp_path / "g.log"
    noise.write_bytes(bytes(range(256)) * 4)
    result = CliRunner().invoke(app, ["evaluate", "default", "--holdout", str(noise), "--no-ann"])
    assert result.exit_code == 1, result.output
    line = result.stderr.strip()
    assert "no decision with known hole cards" in line and "not a log any parser recognises" in line, line


def test_a_street_the_case_base_lacks_is_noted_with_its_count_in_words(logs, tmp_path: Path) -> None:
    """A case base of pre-flop folds has no flop, turn or river cases: the hold-out decisions
    of those streets are counted in a note ('1 decision', not '1 decision(s)')."""
    folds = tmp_path / "folds.log"
    with AcpcLogWriter(folds) as log:
        run_match(["fold", "fold"], 20, seed=3, log=log)
    build_casebase([folds], tmp_path / "preflop", workers=1)
    with CaseBase.open(tmp_path / "preflop") as cb:
        assert cb.count("preflop") > 0 and cb.count("flop") == 0
        one = evaluate_casebase(cb, holdout=[str(logs["heldout"])], ann=False, max_decisions=1)
        many = evaluate_casebase(cb, holdout=[str(logs["heldout"])], ann=False, max_decisions=7)
    for s in STREETS[1:]:
        assert f"case base 'preflop' has no {s} cases: 1 decision not evaluated" in one.notes, one.notes
        assert f"case base 'preflop' has no {s} cases: 7 decisions not evaluated" in many.notes, many.notes
