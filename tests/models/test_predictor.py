"""The ANN action predictor (issue 9, sections 4 and 10): the 19 context inputs, one code
path for logs and case bases, cross-validation beside the baselines, the saved schema,
too few examples, and `cbr train predictor`. Real logs written by real matches; no mocks."""
from __future__ import annotations

import json
import math
import re
import shutil
import signal
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cbr.build.local import build_casebase
from cbr.game import HandState, preset
from cbr.logs.acpc import AcpcLogWriter
from cbr.logs.detect import read_logs
from cbr.logs.record import HandRecord
from cbr.logs.replay import replay
from cbr.models.predictor import (
    INPUT_NAMES,
    LOG_LOSS_CLIP,
    MIN_EXAMPLES,
    ActionPredictor,
    Examples,
    PredictorError,
    TooFewExamplesError,
    clipped_log_loss,
    context_frequency,
    cross_validate,
    decision_inputs,
    examples_from_casebase,
    examples_from_logs,
    fold_assignment,
    hand_inputs,
    train_predictor,
)
from cbr.play.match import run_match
from cbr.store import CaseBase
from cli import app
from evaluator_ext.cards import parse_cards
from tests.conftest import run_on_a_terminal, shared_path

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
SELFPLAY = REPO / "casebases" / "selfplay" / "hu-ehs-hs.log"


def cbr(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def named(row: np.ndarray) -> dict[str, float]:
    return {n: float(v) for n, v in zip(INPUT_NAMES, row)}


@pytest.fixture(scope="module")
def ring_log(tmp_path_factory) -> Path:
    """A 4-player match of rule bots (folds, calls and raises on every street)."""
    path = tmp_path_factory.mktemp("pred") / "ring.log"
    with AcpcLogWriter(path) as log:
        run_match(["ehs", "lag", "hs", "poki"], 120, seed=11, log=log)
    return path


# ---- the 19 inputs ---------------------------------------------------------------------
def test_inputs_of_a_hand_worked_by_hand() -> None:
    """Three players, cards ruled by hand: every input checked against its definition."""
    s = HandState(preset("holdem.limit.3p"))
    game = s.game
    made = []

    def act(kind: str) -> None:
        dp = s.decision_point()
        s.act(kind)
        made.append(replace(dp, action=kind))

    act("r")                      # position 2 (first pre-flop) raises
    act("c")                      # position 0 (small blind) calls
    act("c")                      # position 1 (big blind) calls: the round closes
    s.deal_board(parse_cards("AsKs2s"))
    act("c")                      # position 0 checks
    act("r")                      # position 1 bets
    dp = s.decision_point()       # position 2 to act: one bet to call, one player (0) still to act
    assert (dp.position, dp.street) == (2, 1)
    row = named(hand_inputs([*made, dp])[-1])
    pot = sum(dp.total_committed)
    assert row["pot_odds"] == pytest.approx(dp.to_call / (pot + dp.to_call))
    assert row["bet_ratio"] == pytest.approx(2 / 5)       # r c c / c r: two bets of five actions
    assert row["pot_ratio"] == pytest.approx(dp.total_committed[2] / pot)
    assert row["committed_this_round"] == 0.0             # nothing in on the flop yet
    assert (row["bets_to_call_0"], row["bets_to_call_1"], row["bets_to_call_2plus"]) == (0, 1, 0)
    assert (row["stage_flop"], row["stage_turn"], row["stage_river"]) == (1, 0, 0)
    assert row["last_bets_to_call_pos"] == 1.0            # he faced the big blind when he raised
    assert row["last_action_raise"] == 1.0
    assert row["players_dealt"] == pytest.approx(0.3)
    assert row["players_active"] == pytest.approx(0.3)
    assert row["players_unacted"] == pytest.approx(0.1)   # position 0 must answer the bet
    assert (row["flush_possible"], row["ace_on_board"], row["king_on_board"]) == (1, 1, 1)
    assert row["akq_share"] == pytest.approx(2 / 3)
    assert game.n_players == 3
    # the same row when the hand's earlier decisions are rebuilt from the history alone
    assert np.array_equal(decision_inputs(dp), hand_inputs([*made, dp])[-1])


def test_first_decision_has_no_last_action_and_preflop_board_inputs_are_zero() -> None:
    dp = HandState(preset("holdem.limit.2p")).decision_point()
    row = named(decision_inputs(dp))
    assert row["last_action_raise"] == row["last_bets_to_call_pos"] == row["bet_ratio"] == 0.0
    assert row["akq_share"] == row["flush_possible"] == 0.0
    assert row["bets_to_call_1"] == 1.0      # the small blind's half bet counts as one


def test_log_and_history_replay_give_the_same_rows() -> None:
    """One code path: every decision of 150 logged hands, from the hand (logs) and from its
    history string alone (cases, live play)."""
    checked = 0
    for item in read_logs([SELFPLAY]):
        if not isinstance(item, HandRecord):
            continue
        dps = replay(item)
        X = hand_inputs(dps)
        for dp, row in zip(dps, X):
            assert np.array_equal(decision_inputs(dp), row), (item.hand_id, dp.history)
            checked += 1
        if item.hand_id == "150":
            break
    assert checked > 500


def test_casebase_examples_equal_log_examples(ring_log: Path, tmp_path: Path) -> None:
    """Cases rebuilt from their stored history give the inputs the log gives for the same decision."""
    build_casebase([ring_log], tmp_path / "cb", workers=1)
    by_key = {}
    for item in read_logs([ring_log]):
        dps = replay(item)
        for dp, row in zip(dps, hand_inputs(dps)):
            by_key[(item.hand_id, dp.history, dp.position)] = (row, dp.action)
    with CaseBase.open(tmp_path / "cb") as cb:
        ex, where = examples_from_casebase(cb)
        assert ex.skipped == []
        assert len(ex) == cb.count() == len(by_key)   # every card is known in our own logs
        from cbr.game.gamedef import STREETS
        for j, (s, r) in enumerate(where.tolist()):
            case = cb.table(STREETS[s]).slice(r, 1).to_pylist()[0]
            row, action = by_key[(case["hand_id"], case["history"], case["position"])]
            assert np.array_equal(ex.X[j], row)
            assert "fcr"[ex.y[j]] == action == case["action"]


# ---- scoring helpers ------------------------------------------------------------------------
def test_clipped_log_loss_is_the_documented_formula() -> None:
    P = np.array([[0.2, 0.8, 0.0], [0.0, 0.0, 1.0]])
    y = np.array([2, 2])
    first = -math.log(LOG_LOSS_CLIP / (0.2 + 0.8 + LOG_LOSS_CLIP))
    second = -math.log(1.0 / (1.0 + 2 * LOG_LOSS_CLIP))
    assert clipped_log_loss(P, y) == pytest.approx((first + second) / 2)


def test_folds_keep_hands_whole_and_balanced() -> None:
    rng = np.random.default_rng(5)
    groups = rng.integers(0, 97, size=1000)
    fold = fold_assignment(groups, 5, seed=3)
    for g in np.unique(groups):
        assert len(set(fold[groups == g].tolist())) == 1
    hands_per_fold = [len(np.unique(groups[fold == k])) for k in range(5)]
    assert max(hands_per_fold) - min(hands_per_fold) <= 1
    assert np.array_equal(fold, fold_assignment(groups, 5, seed=3))
    with pytest.raises(TooFewExamplesError, match="cannot be split into 5 folds"):
        fold_assignment(np.array([1, 1, 2]), 5)


def test_context_frequency_is_the_frequency_of_the_same_context() -> None:
    X = np.zeros((6, 19), np.float32)
    X[:3, 4] = 1                 # nothing to call
    X[3:, 5] = 1                 # one bet to call
    y = np.array([2, 2, 1, 0, 0, 1])
    street = np.zeros(6, np.int8)
    P = context_frequency(y, street, X, street[:2], X[[0, 3]])
    assert P.tolist() == [[0, 1 / 3, 2 / 3], [2 / 3, 1 / 3, 0]]


# ---- learning ---------------------------------------------------------------------------------
def synthetic(n: int, seed: int, noise: float) -> Examples:
    """A learnable player: raises after raising, calls when nothing is to call, else folds
    unless the pot odds are good; ``noise`` of the actions replaced by a random one."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, 19), np.float32)
    X[:, 0] = rng.random(n) * 0.5
    btc = rng.integers(0, 3, n)
    X[np.arange(n), 4 + btc] = 1
    X[:, 11] = rng.random(n) < 0.3
    street = rng.integers(0, 4, n)
    for s in (1, 2, 3):
        X[street == s, 6 + s] = 1
    y = np.where(X[:, 11] == 1, 2, np.where(btc == 0, 1, np.where(X[:, 0] > 0.25, 1, 0)))
    flip = rng.random(n) < noise
    y[flip] = rng.integers(0, 3, flip.sum())
    return Examples(X, y.astype(np.int8), street.astype(np.int8), np.arange(n) // 3, np.array(["p"] * n, object))


def test_predictor_beats_the_majority_on_a_learnable_player() -> None:
    noise = 0.1
    ex = synthetic(3000, seed=1, noise=noise)
    streets, overall, _ = cross_validate(ex, folds=5, seed=0)
    n = overall.decisions
    best = 1 - noise * 2 / 3                    # a flipped action still matches 1 time in 3
    tol = 4 * math.sqrt(best * (1 - best) / n)
    assert overall.accuracy["ann"] >= best - tol - 0.02, overall.accuracy   # 0.02: what the net may miss
    margin = 4 * math.sqrt(0.25 / n)
    assert overall.accuracy["ann"] > overall.accuracy["majority"] + margin
    assert overall.log_loss["ann"] < overall.log_loss["majority"]
    assert overall.accuracy["ann"] > overall.accuracy["context"] + margin   # the context lacks the last action
    assert [s.street for s in streets] == ["preflop", "flop", "turn", "river"]


def test_training_is_seeded_and_reproducible() -> None:
    ex = synthetic(600, seed=2, noise=0.2)
    a = ActionPredictor(seed=4).fit(ex.X, ex.y).predict_proba(ex.X)
    b = ActionPredictor(seed=4).fit(ex.X, ex.y).predict_proba(ex.X)
    assert np.array_equal(a, b)
    assert np.allclose(a.sum(axis=1), 1)


def test_real_logs_report_per_street(ring_log: Path, tmp_path: Path) -> None:
    net, report = train_predictor([str(ring_log)], folds=3, seed=0, out=tmp_path / "p.ann")
    d = report.to_dict()
    assert d["examples"] == sum(s["decisions"] for s in d["streets"]) == d["overall"]["decisions"]
    for s in d["streets"]:
        for k in ("ann", "majority", "context"):
            assert 0 <= s["accuracy"][k] <= 1 and s["log_loss"][k] > 0
    # the saved predictor answers like the one in memory
    loaded = ActionPredictor.load(tmp_path / "p.ann")
    dp = HandState(preset("holdem.limit.2p")).decision_point()
    assert loaded.predict_decision(dp) == net.predict_decision(dp)
    assert loaded.info_["examples"] == report.examples


# ---- bad input (section 10) ---------------------------------------------------------------------
def test_a_model_of_another_schema_is_refused(tmp_path: Path) -> None:
    ex = synthetic(300, seed=3, noise=0.1)
    path = ActionPredictor(seed=0).fit(ex.X, ex.y).save(tmp_path / "p.ann")
    data = path.read_bytes()
    head, rest = data.split(b"\n", 2)[:2], data.split(b"\n", 2)[2]
    header = json.loads(head[1])
    for change, why in (({"schema_version": 2}, "schema version 2"),
                        ({"inputs": header["inputs"][:18]}, "18 inputs")):
        bad = tmp_path / "bad.ann"
        bad.write_bytes(head[0] + b"\n" + json.dumps({**header, **change}).encode() + b"\n" + rest)
        with pytest.raises(PredictorError, match=why):
            ActionPredictor.load(bad)
    (tmp_path / "x.ann").write_text("not a model\n")
    with pytest.raises(PredictorError, match="not an action predictor file"):
        ActionPredictor.load(tmp_path / "x.ann")
    (tmp_path / "cut.ann").write_bytes(data[: len(data) - 40])
    with pytest.raises(PredictorError, match="damaged"):
        ActionPredictor.load(tmp_path / "cut.ann")


def test_too_few_examples_say_so(tmp_path: Path) -> None:
    log = tmp_path / "few.log"
    with AcpcLogWriter(log) as w:
        run_match(["random", "call"], 6, seed=1, log=w)
    with pytest.raises(TooFewExamplesError, match=rf"only \d+ decisions in .* at least {MIN_EXAMPLES}"):
        train_predictor([str(log)], out=tmp_path / "p.ann")
    assert not (tmp_path / "p.ann").exists()
    result = cbr("train", "predictor", log, "--out", tmp_path / "p.ann", "--json")
    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "at least 100 are needed" in lines[0] and "accuracy" in lines[0]


def test_one_action_kind_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "call.log"
    with AcpcLogWriter(log) as w:
        run_match(["call", "call"], 80, seed=1, log=w)
    with pytest.raises(TooFewExamplesError, match="at least two action kinds"):
        train_predictor([str(log)], player=None, folds=2)


def test_unknown_player_has_no_examples(ring_log: Path) -> None:
    with pytest.raises(TooFewExamplesError, match="only 0 decisions of player 'nobody'"):
        train_predictor([str(ring_log)], player="nobody")


# ---- the command ---------------------------------------------------------------------------------
def test_cli_train_json_shape_and_file(ring_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "m.ann"
    result = cbr("train", "predictor", ring_log, "--player", "ehs", "--folds", "3", "--out", out, "--json")
    assert result.exit_code == 0, result.output
    d = json.loads(result.stdout)
    assert set(d) >= {"source", "player", "examples", "hands", "folds", "seed", "inputs", "schema_version",
                      "log_loss_clip", "streets", "overall", "skipped", "converged", "saved"}
    assert d["player"] == "ehs" and d["folds"] == 3 and d["inputs"] == list(INPUT_NAMES)
    assert [s["street"] for s in d["streets"]] == ["preflop", "flop", "turn", "river"]
    assert set(d["overall"]["accuracy"]) == {"ann", "majority", "context"}
    assert Path(d["saved"]) == out and ActionPredictor.read_header(out)["info"]["player"] == "ehs"
    # again without --overwrite: one line, exit 1, the file kept
    before = out.read_bytes()
    again = cbr("train", "predictor", ring_log, "--out", out)
    assert again.exit_code == 1 and "already exists" in again.stderr
    assert out.read_bytes() == before
    text = cbr("train", "predictor", ring_log, "--out", out, "--overwrite", "--folds", "2")
    assert text.exit_code == 0, text.output
    assert "acc ANN" in text.stdout and f"saved to {out}" in text.stdout


def test_cli_train_from_a_casebase(ring_log: Path, tmp_path: Path) -> None:
    build_casebase([ring_log], tmp_path / "cb", workers=1)
    result = cbr("train", "predictor", tmp_path / "cb", "--out", tmp_path / "cb.ann", "--json")
    assert result.exit_code == 0, result.output
    with CaseBase.open(tmp_path / "cb") as cb:
        assert json.loads(result.stdout)["examples"] == cb.count()


@pytest.mark.parametrize("args", [["--folds", "1"], ["--log-format", "nosuch"], ["--seed", "-1"]])
def test_cli_train_usage_errors_exit_2(ring_log: Path, tmp_path: Path, args: list[str]) -> None:
    result = cbr("train", "predictor", ring_log, "--out", tmp_path / "x.ann", *args)
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "x.ann").exists()


def test_cli_train_missing_log_is_one_line(tmp_path: Path) -> None:
    result = cbr("train", "predictor", tmp_path / "nothing-here", "--out", tmp_path / "x.ann")
    assert result.exit_code == 1
    assert len(result.stderr.strip().splitlines()) == 1


def test_irc_logs_train(tmp_path: Path) -> None:
    """The IRC sample: every decision (folds included, cards or not) is an example."""
    irc = shared_path("irc")
    ex = examples_from_logs([str(irc)])
    assert len(ex) > 40_000 and set(np.unique(ex.y).tolist()) == {0, 1, 2}
    streets, overall, _ = cross_validate(ex, folds=2, seed=0)
    n = overall.decisions
    assert overall.accuracy["ann"] > overall.accuracy["majority"] + 4 * math.sqrt(0.25 / n)


def test_a_player_leaving_with_nothing_to_call_replays_from_the_history() -> None:
    """IRC logs: a fold with nothing to call is a player leaving (no decision); its 'f' is in
    the history, and rebuilding from the history treats it the same way."""
    from cbr.logs.record import Action
    rec = HandRecord(source="x.log", line=1, hand_id="1", game=preset("holdem.limit.3p"), players=("a", "b", "c"),
                     hole_cards=(None, None, None), board=parse_cards("2c7d9hJsQd"),
                     actions=(Action(0, 2, "c"), Action(0, 0, "c"), Action(0, 1, "c"),
                              Action(1, 0, "f"), Action(1, 1, "r"), Action(1, 2, "c"),
                              Action(2, 1, "c"), Action(2, 2, "r"), Action(2, 1, "c"),
                              Action(3, 1, "c"), Action(3, 2, "c")), payoffs=None)
    dps = replay(rec)
    assert len(dps) == 10 and "f" in dps[-1].history
    X = hand_inputs(dps)
    for dp, row in zip(dps, X):
        assert np.array_equal(decision_inputs(dp), row), dp.history
    assert named(X[-1])["last_action_raise"] == 1.0 and named(X[-1])["players_active"] == pytest.approx(0.2)


# ---- interrupts, and what the logs give -------------------------------------------------------
def test_an_interrupt_while_the_network_fits_is_not_swallowed() -> None:
    """scikit-learn's adam solver catches KeyboardInterrupt and only warns "Training
    interrupted by user.": the interrupt (here a SIGTERM-like subclass, raised by a timer
    while the epochs run) must come out of fit(), as itself."""
    class Stop(KeyboardInterrupt):
        pass

    def stop(signum, frame):
        raise Stop()

    rng = np.random.default_rng(0)
    X = rng.random((20_000, len(INPUT_NAMES))).astype(np.float32)
    y = ((X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.random(len(X))) * 3).astype(np.int64) % 3  # ~2.5 s of epochs
    ActionPredictor(seed=0, max_iter=1).fit(X[:50], y[:50])  # scikit-learn imported: the timer stops the epochs
    old = signal.signal(signal.SIGALRM, stop)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        t0 = time.monotonic()
        with pytest.raises(Stop):
            ActionPredictor(seed=0).fit(X, y)
        assert time.monotonic() - t0 < 2.0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_ctrl_c_during_cross_validation_exits_130_and_saves_nothing(tmp_path: Path) -> None:
    """Ctrl-C while the second fold's network trains (the bar shows 1/2 folds): it was
    swallowed by scikit-learn, and the command went on to print its table and save the model."""
    irc = shared_path("irc")
    out = tmp_path / "x.ann"
    code, stdout, shown = run_on_a_terminal(["train", "predictor", str(irc), "--folds", "2", "-o", str(out)],
                                            stop=lambda shown: re.search(r"cross-validating.*1/2", shown) is not None,
                                            wait=0.2)
    assert code == 130, (stdout, shown)
    assert shown.strip().splitlines()[-1].strip() == "interrupted", shown
    assert stdout == "" and list(tmp_path.iterdir()) == []


def test_a_casebase_with_logs_is_a_usage_error(ring_log: Path, tmp_path: Path, monkeypatch) -> None:
    """A case base and logs together: the case base was silently dropped (trained on the logs
    alone); two case bases named under ./casebases/ were called 'no such file'."""
    build_casebase([ring_log], tmp_path / "casebases" / "a", workers=1)
    shutil.copytree(tmp_path / "casebases" / "a", tmp_path / "casebases" / "b")
    monkeypatch.chdir(tmp_path)
    for args in (["casebases/a", str(ring_log)], [str(ring_log), "a"], ["a", "b"]):
        result = cbr("train", "predictor", *args, "--out", tmp_path / "x.ann")
        assert result.exit_code == 2, (args, result.output)
        assert "one case base, or logs, not both" in result.output, result.output
        assert "no such file" not in result.output
    assert not (tmp_path / "x.ann").exists()


@pytest.mark.parametrize("what", ["notes", "empty folder", "forced format"])
def test_logs_that_give_no_hand_say_why(what: str, tmp_path: Path) -> None:
    """No hand read: the one error line gives the reason (as `cbr logs inspect`), not
    'only 0 decision(s)', which hid it."""
    if what == "notes":
        (tmp_path / "notes.txt").write_text("no hands here\n")
        args, reason = [tmp_path / "notes.txt"], "not a log any parser recognises"
    elif what == "empty folder":
        (tmp_path / "empty").mkdir()
        args, reason = [tmp_path / "empty"], "no log file there"
    else:
        args, reason = [shared_path("acpc", "dealer_example_limit"), "--log-format", "irc"], \
            "not an IRC poker database"
    result = cbr("train", "predictor", *args, "--out", tmp_path / "a.ann")
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: no hand could be read from "), lines
    assert reason in lines[0] and "only 0 decision" not in lines[0], lines
    assert not (tmp_path / "a.ann").exists()
    with pytest.raises(TooFewExamplesError, match=reason):
        train_predictor([str(a) for a in args if not str(a).startswith("--") and str(a) != "irc"],
                        log_format="irc" if what == "forced format" else None)


def test_files_not_read_are_noted_apart_from_hands_skipped(ring_log: Path, tmp_path: Path) -> None:
    """A file that is not a log was counted as a hand that could not be used."""
    (tmp_path / "notes.txt").write_text("no hands here\n")
    result = cbr("train", "predictor", ring_log, tmp_path / "notes.txt", "--folds", "2", "--out", tmp_path / "a.ann")
    assert result.exit_code == 0, result.output
    assert "note: 1 file not read" in result.stderr and "hand or case" not in result.stderr, result.stderr
    d = json.loads(cbr("train", "predictor", ring_log, tmp_path / "notes.txt", "--folds", "2", "--out",
                       tmp_path / "b.ann", "--json").stdout)
    assert d["files_skipped"] == 1 and d["skipped"] == 0


def test_cli_train_table_groups_its_counts(ring_log: Path, tmp_path: Path) -> None:
    """The table's ``n`` column showed 7382 and 25833: counts over 999 carry separators in tables
    and lines alike (docs/cli.md), as the line above the table does."""
    data = json.loads(cbr("train", "predictor", ring_log, "--folds", "2", "-o", tmp_path / "a.ann", "--json").stdout)
    text = cbr("train", "predictor", ring_log, "--folds", "2", "-o", tmp_path / "b.ann")
    assert text.exit_code == 0, text.output
    shown = {}
    for line in text.stdout.splitlines():
        cells = [c.strip() for c in re.split(r"[│|]", line) if c.strip()]
        if len(cells) == 8 and cells[0] in ("preflop", "flop", "turn", "river", "all"):
            shown[cells[0]] = cells[1]
    wanted = {s["street"]: s["decisions"] for s in data["streets"]}
    assert {s: shown[s] for s in wanted} == {s: f"{n:,}" for s, n in wanted.items()}
    assert data["examples"] >= 1000 and f"{data['examples']:,}" in shown.values()  # the overall row, grouped
    assert text.stdout.startswith(f"{data['examples']:,} decisions from {data['hands']:,} hands")
