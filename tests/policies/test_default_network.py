"""The thesis' default-strategy network (issue 9, sections 5 and 10): the five inputs, TNE,
training and its refusals, the saved schema, the `thesis-net` policy and `cbr train network`.
Real log files (a slice of a real ACPC dealer log), real matches; no mocks."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cbr.game import HandState, preset
from cbr.play.match import run_match
from cbr.policies.spec import policy_from_spec
from cbr.policies.thesis_net import (
    DEFAULT_STACK_BETS,
    INPUT_NAMES,
    MIN_EXAMPLES,
    OPP_MAX,
    DefaultNetwork,
    NetExamples,
    NetworkError,
    ThesisNetPolicy,
    TooFewExamplesError,
    examples_from_logs,
    network_inputs,
    total_network_error,
    train_network,
)
from cli import app
from evaluator_ext import win_probability
from evaluator_ext.cards import parse_cards
from evaluator_ext.preflop_odds import preflop_win
from tests.conftest import run_on_a_terminal, shared_path

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
DEALER_LOG = ("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")


@pytest.fixture(scope="module")
def small_log(tmp_path_factory) -> tuple[Path, int]:
    """The first 60 hands of a real ACPC dealer log (both hole cards shown in every hand),
    and the number of check/call and bet/raise actions in them, counted from the text."""
    src = shared_path(*DEALER_LOG)
    lines = Path(src).read_text().splitlines()
    header = [ln for ln in lines if ln.startswith("#")]
    states = [ln for ln in lines if ln.startswith("STATE:")][:60]
    path = tmp_path_factory.mktemp("net") / "slice.log"
    path.write_text("\n".join(header + states) + "\n")
    actions = sum(sum(ch in "cr" for ch in st.split(":")[2]) for st in states)
    return path, actions


# ---- TNE and inputs --------------------------------------------------------------------
def test_tne_is_neurophs_halved_mean_squared_error() -> None:
    out = np.array([[0.8, 0.3], [0.1, 0.7], [0.5, 0.5]])
    target = np.array([[1, 0], [0, 1], [1, 0]])
    squares = (0.2 ** 2 + 0.3 ** 2) + (0.1 ** 2 + 0.3 ** 2) + (0.5 ** 2 + 0.5 ** 2)
    assert total_network_error(out, target) == pytest.approx(squares / (2 * 3))
    # a constant answer at the raise frequency p costs p * (1 - p)
    y = np.array([[0, 1]] * 3 + [[1, 0]] * 7)
    p = 0.3
    assert total_network_error(np.tile([1 - p, p], (10, 1)), y) == pytest.approx(p * (1 - p))
    with pytest.raises(NetworkError):
        total_network_error(np.zeros((2, 2)), np.zeros((3, 2)))


def test_inputs_of_a_hand_worked_by_hand() -> None:
    """Three players; the button raises, the small blind (AK) faces 1.5 bets."""
    holes = [parse_cards("AsKd"), parse_cards("7c2d"), parse_cards("QhQs")]
    s = HandState(preset("holdem.limit.3p"), hole_cards=holes)
    game = s.game
    button = s.to_act
    s.act("r")
    dp = s.decision_point()
    stacks = (500.0, 700.0, 800.0)
    total = sum(stacks)
    row = dict(zip(INPUT_NAMES, network_inputs(dp, stacks).tolist()))
    me = dp.position
    assert row["hand_strength"] == pytest.approx(preflop_win(tuple(dp.hole), 1))
    assert row["opponents"] == pytest.approx(2 / OPP_MAX)
    put_in = game.blinds[me]
    assert row["chips"] == pytest.approx((stacks[me] - put_in) / total)
    assert row["cost"] == pytest.approx((2 * game.small_bet - put_in) / total)
    assert row["pot"] == pytest.approx((sum(game.blinds) + 2 * game.small_bet - game.blinds[button]) / total)
    # unknown stacks: DEFAULT_STACK_BETS small bets each
    row2 = dict(zip(INPUT_NAMES, network_inputs(dp).tolist()))
    assert row2["cost"] == pytest.approx((2 * game.small_bet - put_in) / (3 * DEFAULT_STACK_BETS * game.small_bet))


def test_flop_hand_strength_is_the_win_probability_with_half_ties() -> None:
    s = HandState(preset("holdem.limit.2p"), hole_cards=[parse_cards("9h9d"), parse_cards("AsKs")])
    s.act("c"); s.act("c")
    s.deal_board(tuple(parse_cards("9s2c7h")))
    dp = s.decision_point()
    win, tie, _ = win_probability(dp.hole, dp.board, 1, trials=200_000, seed=5)
    # a set of nines: the 2,000-deal estimate within 4 standard errors of a 200,000-deal one
    se = (0.25 / 2000) ** 0.5
    assert network_inputs(dp)[0] == pytest.approx(win + tie / 2, abs=4 * se)


# ---- training ----------------------------------------------------------------------------
def _synthetic(n: int, seed: int) -> NetExamples:
    """Raise iff hand strength > 0.6 (a rule the network can learn exactly)."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.random(n), rng.integers(1, 9, n) / 9, rng.random(n) / 2, rng.random(n) / 50,
                         rng.random(n) / 20])
    raise_ = X[:, 0] > 0.6
    Y = np.column_stack([~raise_, raise_]).astype(np.int8)
    groups = np.arange(n) // 4
    return NetExamples(X, Y, groups, np.array(["ann"] * n, dtype=object), hands=n // 4)


def test_a_learnable_rule_gives_low_tne_and_beats_the_constant_baseline() -> None:
    ex = _synthetic(300, 1)
    net, report = train_network(ex, player="ann", hidden=3, folds=3, seed=0)
    p = ex.Y[:, 1].mean()
    assert report.examples == 300 and report.hands == 75
    assert report.raise_share == pytest.approx(p)
    assert report.baseline_tne == pytest.approx(p * (1 - p), abs=0.01)   # fold frequencies ~ overall ones
    assert report.cv_tne < report.baseline_tne / 3
    assert report.cv_error < 0.05
    assert report.train_tne == pytest.approx(net.tne(ex.X, ex.Y))


def test_too_few_examples_say_so() -> None:
    ex = _synthetic(MIN_EXAMPLES - 1, 2)
    with pytest.raises(TooFewExamplesError, match=f"{MIN_EXAMPLES - 1} actions"):
        train_network(ex, player="ann")
    one_kind = _synthetic(200, 3)
    one_kind.Y[:] = (1, 0)
    with pytest.raises(TooFewExamplesError, match="0 bets/raises"):
        train_network(one_kind)
    with pytest.raises(TooFewExamplesError, match="'nobody'"):
        train_network(_synthetic(200, 4), player="nobody")


def test_examples_from_a_real_log_are_every_shown_call_and_raise(small_log) -> None:
    path, actions = small_log
    ex = examples_from_logs([str(path)])
    assert ex.hands == 60 and len(ex) == actions
    assert set(ex.players) == {"p1", "p2"}
    assert ((ex.X[:, 0] >= 0) & (ex.X[:, 0] <= 1)).all()
    assert (ex.X[:, 1] == pytest.approx(1 / OPP_MAX))    # heads-up: one opponent
    assert (ex.Y.sum(axis=1) == 1).all()


# ---- files and the schema ----------------------------------------------------------------
def test_save_load_round_trip_and_schema_refusal(tmp_path) -> None:
    ex = _synthetic(200, 5)
    net, _ = train_network(ex, hidden=2, folds=3)
    path = net.save(tmp_path / "n.net")
    back = DefaultNetwork.load(path)
    assert np.allclose(back.outputs(ex.X), net.outputs(ex.X))
    with pytest.raises(Exception, match="exists"):
        net.save(path)
    # another input schema: the same file with a changed header is refused before unpickling
    magic, header, rest = path.read_bytes().split(b"\n", 2)
    h = json.loads(header)
    h["inputs"] = ["hand_strength", "opponents", "chips", "cost", "pot", "position"]
    h["schema_version"] = 2
    other = tmp_path / "other.net"
    other.write_bytes(magic + b"\n" + json.dumps(h).encode() + b"\n" + rest)
    with pytest.raises(NetworkError, match="input schema version 2"):
        DefaultNetwork.load(other)
    (tmp_path / "junk.net").write_bytes(b"not a network")
    with pytest.raises(NetworkError, match="not a thesis network"):
        DefaultNetwork.load(tmp_path / "junk.net")


# ---- the policy and the command ------------------------------------------------------------
def test_thesis_net_policy_plays_a_match(small_log, tmp_path) -> None:
    path, _ = small_log
    ex = examples_from_logs([str(path)])
    net, _ = train_network(ex, player="p1", folds=3)
    model = net.save(tmp_path / "p1.net")
    result = run_match([f"thesis-net:model={model}", "ehs"], 40, duplicate=True, seed=3)
    assert result.hands == 40 and result.players[0].policy == f"thesis-net:model={model}"  # a seat's spec
    bot = policy_from_spec(f"thesis-net:logs={path}:player=p2:hidden=3", seed=1)
    assert bot._network is None                  # checking the spec trained nothing: it trains on first use
    assert bot.report.player == "p2" and bot.report.hidden == 3
    assert bot._network is bot.network           # trained once
    with pytest.raises(ValueError, match="hidden is a whole number"):
        policy_from_spec(f"thesis-net:logs={path}:hidden=0")   # refused when the spec is checked
    with pytest.raises(ValueError, match="no such file"):
        policy_from_spec(f"thesis-net:logs={tmp_path / 'missing'}")
    with pytest.raises(ValueError, match="needs model=PATH"):
        ThesisNetPolicy()
    with pytest.raises(ValueError, match="input schema|not a thesis network"):
        policy_from_spec(f"thesis-net:model={path}")      # a log is not a network


def test_policy_folds_below_pot_odds_and_never_folds_for_free(tmp_path) -> None:
    ex = _synthetic(200, 6)
    net, _ = train_network(ex, folds=3)
    bot = ThesisNetPolicy(model=str(net.save(tmp_path / "n.net")))
    holes = [parse_cards("AcAd"), parse_cards("3h2s")]
    board = parse_cards("AsKdQcJh9s")
    s = HandState(preset("holdem.limit.2p"), hole_cards=holes)
    s.act("c"); s.act("c")
    for lo, hi in ((0, 3), (3, 4), (4, 5)):
        s.deal_board(tuple(board[lo:hi]))
        if hi < 5:
            s.act("c"); s.act("c")
    first = s.decision_point()                 # position 0 opens the river: nothing to call, no fold
    f, c, r = bot.triple(first)
    assert first.to_call == 0 and f == 0.0 and c + r == pytest.approx(1.0)
    s.act("r")
    dp = s.decision_point()                    # 3-high on a broadway board facing a bet
    assert dp.hole == tuple(holes[1])
    assert network_inputs(dp)[0] < dp.pot_odds
    assert bot.triple(dp) == (1.0, 0.0, 0.0)


def test_cli_train_network_json_and_saved_file(small_log, tmp_path) -> None:
    path, actions = small_log
    out = tmp_path / "cli.net"
    res = runner.invoke(app, ["train", "network", str(path), "--hidden", "2", "--hidden", "3", "--folds", "3",
                              "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert [(r["player"], r["hidden"]) for r in data["reports"]] == [("p1", 2), ("p1", 3), ("p2", 2), ("p2", 3)] \
        or [(r["player"], r["hidden"]) for r in data["reports"]] == [("p2", 2), ("p2", 3), ("p1", 2), ("p1", 3)]
    assert sum(r["examples"] for r in data["reports"][::2]) == actions
    assert DefaultNetwork.load(out).hidden == 2
    res = runner.invoke(app, ["train", "network", str(path), "--player", "nobody"])
    assert res.exit_code == 1 and "at least" in res.output


def hidden_cards_log(tmp_path: Path) -> Path:
    """A real PHH hand with every hole card hidden (``????``): a hand is read, no card shown."""
    src = shared_path("phh", "data", "pluribus", "30", "63.phh").read_text()
    path = tmp_path / "hidden.phh"
    path.write_text(re.sub(r"d dh (p\d) \w\w\w\w", r"d dh \1 ????", src))
    return path


@pytest.mark.parametrize("what", ["empty folder", "notes", "forced format", "no card shown"])
def test_cli_train_network_that_learns_nothing_is_an_error(what: str, tmp_path: Path) -> None:
    """Nothing read (or no shown cards): an empty table and exit 0 (or JSON with no report and
    "saved": null) before; one line giving the reason now, and no --out file."""
    if what == "empty folder":
        (tmp_path / "empty").mkdir()
        args, reason = [str(tmp_path / "empty")], "no hand could be read from"
    elif what == "notes":
        (tmp_path / "n.txt").write_text("hi\n")
        args, reason = [str(tmp_path / "n.txt"), "--json"], "not a log any parser recognises"
    elif what == "forced format":
        args, reason = [str(shared_path(*DEALER_LOG)), "--log-format", "irc"], "not an IRC poker database"
    else:
        args, reason = [str(hidden_cards_log(tmp_path))], "no action with shown cards"
    res = runner.invoke(app, ["train", "network", *args, "--out", str(tmp_path / "z.net")])
    assert res.exit_code == 1, res.output
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and reason in lines[0], lines
    assert not (tmp_path / "z.net").exists()


def test_cli_train_network_notes_files_not_read_apart_from_hands(small_log, tmp_path) -> None:
    """A file that is not a log was reported as '1 hand(s) could not be used'; one file is in the singular."""
    path, _ = small_log
    (tmp_path / "n.txt").write_text("hi\n")
    res = runner.invoke(app, ["train", "network", str(path), str(tmp_path / "n.txt"), "--folds", "2"])
    assert res.exit_code == 0, res.output
    assert "note: 1 file not read" in res.stderr and "hand" not in res.stderr, res.stderr
    res = runner.invoke(app, ["train", "network", str(path), str(tmp_path / "n.txt"), "--folds", "2", "--json"])
    data = json.loads(res.stdout)
    assert data["files_skipped"] == 1 and data["skipped"] == 0


def test_cli_train_network_writes_out_only_when_it_succeeds(tmp_path) -> None:
    """-o was written after the first player, then the second failed (exit 1): the file was
    left behind, and a re-run was refused ('already exists')."""
    log = str(shared_path(*DEALER_LOG))
    out = tmp_path / "e.net"
    res = runner.invoke(app, ["train", "network", log, "--folds", "2", "--player", "p1", "--player", "nobody",
                              "-o", str(out)])
    assert res.exit_code == 1 and "nobody" in res.stderr, res.output
    assert not out.exists()
    res = runner.invoke(app, ["train", "network", log, "--folds", "2", "--player", "p1", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert DefaultNetwork.load(out).info["player"] == "p1"


def test_cli_train_network_ctrl_c_saves_nothing(tmp_path) -> None:
    """Ctrl-C once the first network is trained (the training bar is past one player's
    folds, or, as before, its file appeared): exit 130, 'interrupted', no file."""
    out = tmp_path / "e.net"
    args = ["train", "network", str(shared_path(*DEALER_LOG)), "--folds", "2", "--player", "p2", "--player", "p1",
            "--hidden", "2", "--hidden", "3", "-o", str(out)]

    def first_trained(shown: str) -> bool:
        done = [int(n) for n in re.findall(r"training\D*?(\d+)/\d+", shown)]
        return out.exists() or (bool(done) and max(done) >= 3)

    code, stdout, shown = run_on_a_terminal(args, stop=first_trained)
    assert code == 130, (stdout, shown)
    assert shown.strip().splitlines()[-1].strip() == "interrupted", shown
    assert stdout == "" and list(tmp_path.iterdir()) == []


def test_cli_train_network_shows_its_training_progress(small_log) -> None:
    """A bar over players x hidden sizes x (folds + the final fit), after 'reading logs'."""
    path, _ = small_log
    code, stdout, shown = run_on_a_terminal(["train", "network", str(path), "--folds", "2", "--hidden", "2",
                                             "--hidden", "3"])
    assert code == 0, shown
    assert re.search(r"training.*\b12/12\b", shown), shown   # 2 players x 2 sizes x (2 folds + 1)
    assert "TNE %" in stdout
