"""SARTRE features (``features.sartre``): betting counts of sequences played through the rules
engine, texture codes of hand-picked boards, the strength bucket against the evaluator (and
E[HS^2] against an independent eval7 enumeration), the graded similarity's ordering, a build +
query + evaluate round trip on the real ACPC logs, and loading the plugin by name."""
from __future__ import annotations

import json
import pickle
from dataclasses import replace
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import evaluator_ext
from cbr.build.local import build_casebase
from cbr.errors import GameError
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import BOARD_SIZES, STREETS, preset
from cbr.game.state import HandState
from cbr.logs.detect import read_logs
from cbr.logs.record import HandRecord
from cbr.logs.replay import replay
from cbr.plugins import available, load_feature_set
from cbr.query.evaluate import evaluate_casebase
from cbr.similarity import default_casper, default_for, default_sartre, global_similarity, local_similarities
from cbr.store import CaseBase
from cli import app
from evaluator_ext.cards import card_str, parse_cards
from features.base import FeatureSet
from features.casper import CasperFeatures
from features.sartre import HAND_STRENGTH_BUCKETS, SartreFeatures, betting_counts, board_texture, texture_name
from tests.conftest import lazy_module, shared_path

ACPC = ("acpc", "dealer_example_limit")


def spot(betting: str, board: str = "", hole: str = "AdQc", game: str = "holdem.limit.2p") -> DecisionPoint:
    """The decision point after ``betting`` (ACPC style, one ``/`` per street dealt), played
    through the rules engine, with ``hole`` given to the player to act."""
    state = HandState(preset(game))
    cards = parse_cards(board)
    for street, actions in enumerate(betting.split("/")):
        if street:
            state.deal_board(cards[BOARD_SIZES[street - 1]:BOARD_SIZES[street]])
        for a in actions:
            state.act(a)
    state.set_hole_cards(state.to_act, parse_cards(hole))
    return state.decision_point()


def named(fs: SartreFeatures, dp: DecisionPoint) -> dict[str, float]:
    return dict(zip(fs.feature_names(dp.street), fs.row(dp).tolist()))


class CountingEvaluator:
    """Fixed, recognisable strengths and a tally of calls."""

    def __init__(self) -> None:
        self.calls = {"preflop_rank": 0, "hand_strength_squared": 0}

    def preflop_rank(self, hole):
        self.calls["preflop_rank"] += 1
        return 85

    def hand_strength_squared(self, hole, board):
        self.calls["hand_strength_squared"] += 1
        return 0.5


# ---- names and the protocol ----------------------------------------------------------------
def test_protocol_and_names() -> None:
    fs = SartreFeatures()
    assert isinstance(fs, FeatureSet) and fs.name == "sartre"
    assert fs.feature_names("preflop") == ["preflop_bets", "preflop_actions", "hand_strength_bucket"]
    assert fs.feature_names(1) == ["preflop_bets", "flop_bets", "flop_actions", "hand_strength_bucket",
                                   "board_texture"]
    assert fs.feature_names("turn") == ["preflop_bets", "flop_bets", "turn_bets", "turn_actions",
                                        "hand_strength_bucket", "board_texture"]
    assert fs.feature_names(3) == ["preflop_bets", "flop_bets", "turn_bets", "river_bets", "river_actions",
                                   "hand_strength_bucket", "board_texture"]
    dps = [spot(""), spot("cc/", "2c7dQh"), spot("cc/cc/", "2c7dQh5s"), spot("cc/cc/cc/", "2c7dQh5s9d")]
    rows = fs.rows(dps)
    for s, dp in enumerate(dps):
        assert rows[s].dtype == np.float32 and rows[s].shape == (1, len(fs.feature_names(s)))
        np.testing.assert_array_equal(rows[s][0], fs.row(dp))


# ---- the betting sequence --------------------------------------------------------------------
@pytest.mark.parametrize("betting, board, bets, actions", [
    ("", "", [0], 0),                              # the small blind opens
    ("c", "", [0], 1),                             # limped: the big blind to act
    ("r", "", [1], 1),
    ("rr", "", [2], 2),
    ("crc/", "2c7dQh", [1, 0], 0),                 # first to act on the flop
    ("crc/c", "2c7dQh", [1, 0], 1),                # checked to
    ("rc/cr", "2c7dQh", [1, 1], 2),                # check-raised
    ("rrc/rc/crr", "2c7dQh5s", [2, 1, 2], 3),
    ("cc/cc/cc/r", "2c7dQh5s9d", [0, 0, 0, 1], 1),
    ("rrrc/rrrr", "2c7dQh", [3, 4], 4),            # both caps reached
])
def test_bets_per_street_and_actions_of_known_sequences(betting: str, board: str, bets: list[int],
                                                        actions: int) -> None:
    dp = spot(betting, board)
    row = SartreFeatures().row(dp)
    n = dp.street + 1
    assert row[:n].tolist() == bets
    assert row[n] == actions


def test_three_handed_sequence() -> None:
    dp = spot("rcc/crf", "2c7dQh", game="holdem.limit.3p")   # check, bet, fold: the checker faces the bet
    row = named(SartreFeatures(), dp)
    assert (row["preflop_bets"], row["flop_bets"], row["flop_actions"], row["board_texture"]) == (1, 1, 3, 0)


def test_counts_agree_with_the_rules_engine_on_real_logs() -> None:
    """On every decision of the ACPC logs the counts read from the betting string match the
    rules engine's own counters: this street's bets (the big blind counted pre-flop) and the
    previous street's."""
    checked = 0
    for record in read_logs([str(shared_path(*ACPC))]):
        if not isinstance(record, HandRecord):
            continue
        for dp in replay(record):
            bets, actions = betting_counts(dp.history, dp.street)
            assert bets[-1] + (dp.street == 0) == dp.street_bets, dp.history
            if dp.street > 0:
                assert bets[-2] + (dp.street == 1) == dp.previous_round_bets, dp.history
            assert actions == len(dp.history.split("/")[-1])
            checked += 1
    assert checked > 10_000


def test_bad_decision_points_are_refused() -> None:
    fs = SartreFeatures()
    dp = spot("crc/r", "2c7dQh")
    with pytest.raises(GameError, match="no known hole cards"):
        fs.row(replace(dp, hole=None))
    with pytest.raises(GameError, match="^the betting history 'crc' covers 1 street, the decision is on the flop; "
                                        "SARTRE features need the hand's betting so far"):
        fs.row(replace(dp, history="crc"))            # the string stops before the flop
    with pytest.raises(GameError, match="^the betting history 'crc/r' has 1 raise on the flop, the decision point "
                                        "counts 2 bets$"):
        fs.row(replace(dp, street_bets=2))            # disagrees with the string
    with pytest.raises(GameError, match="^the betting history 'crc/rr' has 2 raises on the flop, the decision point "
                                        "counts 1 bet$"):
        fs.row(replace(dp, history="crc/rr", street_bets=1))
    with pytest.raises(GameError, match="not a betting string"):
        fs.row(replace(dp, history="crc/x"))
    with pytest.raises(GameError, match="needs 3 board cards"):
        fs.row(replace(dp, board=dp.board[:2]))


# ---- board texture -------------------------------------------------------------------------------
@pytest.mark.parametrize("board, flush, straight", [
    ("2h7hKh", 2, 0),          # monotone flop, no two ranks within five
    ("7c7d2h", 0, 0),          # paired, rainbow, 7 and 2 too far apart
    ("8c8dTh", 0, 1),          # paired: 8 8 T is two distinct ranks, not three
    ("2c7dQh", 0, 0),          # rainbow, unconnected
    ("Kh9h2c", 1, 1),          # two-tone, K and 9 within five ranks
    ("5c6d7h8s", 0, 2),        # four to a straight on the turn
    ("Ah2c3d", 0, 2),          # the ace plays low: A23
    ("AhKcQd", 0, 2),          # ... and high: QKA
    ("AhKh5h4h", 2, 2),        # four hearts; A45 within the wheel
    ("2c2d2h2sAs", 1, 1),      # quads on the board: two spades, A and 2 in the wheel
    ("Tc9c8c7c6c", 2, 2),      # a straight flush on the board
])
def test_texture_codes_of_known_boards(board: str, flush: int, straight: int) -> None:
    code = 3 * flush + straight
    assert board_texture(parse_cards(board)) == code
    street = {3: 1, 4: 2, 5: 3}[len(parse_cards(board))]
    hole = next(h for h in ("3s4d", "Jd9s") if not set(parse_cards(h)) & set(parse_cards(board)))
    dp = spot("/".join(["cc"] * street + [""]), board, hole)
    assert dp.street == street and SartreFeatures().row(dp)[-1] == code


def test_texture_names() -> None:
    assert texture_name(0) == "no flush or straight possible"
    assert texture_name(6) == "flush highly possible"
    assert texture_name(5) == "flush possible, straight highly possible"
    assert texture_name(2) == "straight highly possible"
    with pytest.raises(ValueError):
        texture_name(9)


# ---- the hand-strength bucket ----------------------------------------------------------------------
@pytest.mark.parametrize("betting, board, hole", [
    ("", "", "AsAh"), ("", "", "7d2c"), ("", "", "9s8s"), ("c", "", "AhKd"),
    ("cc/", "3h4cJh", "AdQc"), ("cc/", "3h4cJh", "5h6h"),
    ("cc/cc/", "2c7d9hKc", "Ac5c"), ("cc/cc/cc/", "2c7d9hKc3s", "AsKd"),
])
def test_strength_bucket_against_the_evaluator(betting: str, board: str, hole: str) -> None:
    dp = spot(betting, board, hole)
    h, b = parse_cards(hole), parse_cards(board)
    if b:
        expected = min(int(evaluator_ext.hand_strength_squared(h, b) * 50), 49)
    else:
        expected = (169 - evaluator_ext.preflop_rank(h)) * 50 // 169
    fs = SartreFeatures()
    assert named(fs, dp)["hand_strength_bucket"] == expected


def test_strength_bucket_ends() -> None:
    fs = SartreFeatures()
    assert named(fs, spot("", hole="AcAd"))["hand_strength_bucket"] == HAND_STRENGTH_BUCKETS - 1
    assert named(fs, spot("", hole="7c2d"))["hand_strength_bucket"] == 0     # rank 169
    # the nuts on the river (a royal flush) wins every showdown: E[HS^2] = HS^2 = 1
    assert named(fs, spot("cc/cc/cc/", "AhKhQhJh2c", "Th3c"))["hand_strength_bucket"] == HAND_STRENGTH_BUCKETS - 1
    # a board that plays for everyone ties every showdown: HS 0.5, HS^2 0.25
    assert named(fs, spot("cc/cc/cc/", "AhKhQhJhTh", "2c3d"))["hand_strength_bucket"] == int(0.25 * 50)


eval7 = lazy_module("eval7")


def _reference_ehs2_turn(hole: tuple[int, ...], board: tuple[int, ...]) -> float:
    """E[HS^2] on the turn by brute force with eval7: each river, HS against every opponent
    holding (ties half), squared; the mean over the rivers."""
    e7 = {x: eval7.Card(card_str(x)) for x in range(52)}
    deck = [x for x in range(52) if x not in set(hole) | set(board)]
    total = 0.0
    for river in deck:
        full = [e7[x] for x in board] + [e7[river]]
        ours = eval7.evaluate([e7[x] for x in hole] + full)
        score = n = 0
        for opp in combinations([x for x in deck if x != river], 2):
            theirs = eval7.evaluate([e7[x] for x in opp] + full)
            score += 2 if ours > theirs else 1 if ours == theirs else 0
            n += 1
        total += (score / (2 * n)) ** 2
    return total / len(deck)


@pytest.mark.parametrize("hole, board", [("Ac5c", "2c7d9hKc"), ("AdQc", "3h4cJh8d")])
def test_turn_ehs2_matches_an_independent_enumeration(hole: str, board: str) -> None:
    value = _reference_ehs2_turn(parse_cards(hole), parse_cards(board))
    dp = spot("cc/cc/", board, hole)
    fs = SartreFeatures()
    assert fs.hand_strength(dp) == pytest.approx(value, abs=1e-9)
    assert named(fs, dp)["hand_strength_bucket"] == min(int(value * 50), 49)


def test_strengths_cached_per_hole_and_board_and_buckets_configurable() -> None:
    ev = CountingEvaluator()
    fs = SartreFeatures(evaluator=ev, buckets=10)
    a, b = spot("cc/", "2c7dQh", "AdQc"), spot("cc/c", "2c7dQh", "QcAd")   # same hole and board
    assert named(fs, a)["hand_strength_bucket"] == 5                       # int(0.5 * 10)
    assert named(fs, b)["hand_strength_bucket"] == 5
    assert ev.calls == {"preflop_rank": 0, "hand_strength_squared": 1}
    assert named(fs, spot("", hole="AdQc"))["hand_strength_bucket"] == (169 - 85) * 10 // 169
    assert ev.calls["preflop_rank"] == 1
    with pytest.raises(ValueError):
        SartreFeatures(buckets=1)


def test_picklable_for_worker_processes() -> None:
    fs = SartreFeatures()
    dp = spot("cc/", "3h4cJh", "AdQc")
    fs.row(dp)  # binds the default evaluator module
    clone = pickle.loads(pickle.dumps(fs))
    np.testing.assert_array_equal(clone.row(dp), fs.row(dp))
    assert clone.evaluator is evaluator_ext


# ---- similarity ------------------------------------------------------------------------------------
def test_graded_betting_similarity_orders_sequences() -> None:
    """Same hole and board, the flop bet into the player: an identical sequence, then one with
    the same counts but other actions, then one raise away, then three raises away."""
    fs, cfg = SartreFeatures(), default_sartre()
    flop = cfg.street("flop")
    board, hole = "Kh9h2c", "AdQc"
    query = fs.row(spot("cc/r", board, hole))
    same = fs.row(spot("cc/r", board, hole))
    same_counts = fs.row(spot("cc/cr", board, hole))      # a check-raise: flop bets 1, one more action
    one_away = fs.row(spot("rc/r", board, hole))          # a raise more pre-flop
    three_away = fs.row(spot("rrrc/r", board, hole))      # three raises more pre-flop
    sims = global_similarity(flop, query, np.stack([same, same_counts, one_away, three_away]))
    assert sims[0] == 1.0
    assert sims[0] > sims[1] > sims[2] > sims[3]
    local = local_similarities(flop, query, np.stack([one_away, three_away]))
    assert local[:, 0].tolist() == [1 - 1 / 4, 1 - 3 / 4]    # preflop_bets, linear over 0..4


def test_strength_and_texture_similarity() -> None:
    cfg = default_sartre()
    st = cfg.street("river")
    names = list(st.features)
    q = np.array([1, 1, 0, 1, 1, 20, 4], np.float32)
    cases = np.repeat(q[None, :], 4, axis=0)
    cases[1, names.index("hand_strength_bucket")] = 21
    cases[2, names.index("hand_strength_bucket")] = 23
    cases[3, names.index("board_texture")] = 3
    local = local_similarities(st, q, cases)
    strength = local[:, names.index("hand_strength_bucket")]
    assert strength[0] == 1.0 and strength[0] > strength[1] > strength[2]
    assert strength[1] == pytest.approx(1 - 1 / (HAND_STRENGTH_BUCKETS - 1))
    assert local[:, names.index("board_texture")].tolist() == [1.0, 1.0, 1.0, 0.0]


def test_default_similarity_per_feature_set() -> None:
    assert default_for(SartreFeatures()) == default_sartre()
    assert default_for(CasperFeatures()) == default_casper()
    assert default_for(SartreFeatures(buckets=10)).street("flop").feature_specs[3].high == 9.0

    class Other:
        name = "pot_only"

        def feature_names(self, street):
            return ["pot_odds"]

    assert default_for(Other()) is None
    for s in STREETS:
        assert list(default_sartre().street(s).features) == SartreFeatures().feature_names(s)


# ---- end to end on the real logs ---------------------------------------------------------------------
def _first_hands(log: Path, out: Path, hands: int) -> Path:
    """The log's header comments and its first ``hands`` hands."""
    lines = log.read_text().splitlines()
    kept = [line for line in lines if line.startswith("#")] + [line for line in lines if line.startswith("STATE:")][:hands]
    out.write_text("\n".join(kept) + "\n")
    return out


def test_build_query_and_evaluate_round_trip(tmp_path: Path) -> None:
    log = _first_hands(shared_path(*ACPC, "2p.limit.h1000.r0.log"), tmp_path / "2p.log", 150)
    report = build_casebase([log], tmp_path / "sartre", feature_set="sartre")
    casper = build_casebase([log], tmp_path / "casper", feature_set="casper")
    assert report.cases_per_street == casper.cases_per_street and report.cases > 0  # the same decisions
    with CaseBase.open(tmp_path / "sartre") as cb:
        assert cb.manifest.feature_set == "sartre"
        assert cb.similarity() == default_sartre()
        for s in STREETS:
            assert cb.feature_names(s) == SartreFeatures().feature_names(s)
        # stored betting columns agree with the rules engine's counters, case by case
        flop = cb.cases("flop")
        prev = cb.table("flop").column("history").to_pylist()
        for x, history in zip(flop.features, prev):
            pre, now = history.split("/")
            assert (x[0], x[1], x[2]) == (pre.count("r"), now.count("r"), len(now))
        assert set(np.unique(flop.features[:, 4])) <= set(range(9))
        ev = evaluate_casebase(cb, folds=2, max_decisions=40, ann=False)
        assert [r.street for r in ev.rows] == [*STREETS, "all"]
        assert ev.rows[-1].decisions > 0 and 0.0 <= ev.rows[-1].knn["accuracy"] <= 1.0
        held = evaluate_casebase(cb, holdout=[str(log)], max_decisions=20, ann=False)
        assert held.rows[-1].decisions == 80
    result = CliRunner().invoke(app, ["query", "-c", str(tmp_path / "sartre"), "--hole", "AdQc", "--board", "3h4cJh",
                                      "--position", "1", "--to-call", "1", "--pot", "5", "--prev-bets", "2",
                                      "--explain", "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert answer["street"] == "flop"
    assert answer["features"]["board_texture"] == board_texture(parse_cards("3h4cJh"))
    assert answer["features"]["preflop_bets"] == 1 and answer["features"]["flop_bets"] == 1


def test_cli_build_with_the_feature_set_option(tmp_path: Path) -> None:
    log = _first_hands(shared_path(*ACPC, "3p.limit.h1000.r0.log"), tmp_path / "3p.log", 40)
    result = CliRunner().invoke(app, ["build", str(log), "-o", str(tmp_path / "cb"), "--feature-set", "sartre",
                                      "-j", "1", "--json"])
    assert result.exit_code == 0, result.output
    with CaseBase.open(tmp_path / "cb") as cb:
        assert cb.manifest.feature_set == "sartre" and cb.count("preflop") > 0


# ---- the plugin ---------------------------------------------------------------------------------------
def test_plugin_loads_by_name() -> None:
    import tomllib
    from importlib.metadata import EntryPoint

    assert "sartre" in available("cbr.features")
    fs = load_feature_set("sartre")
    assert type(fs) is SartreFeatures and fs.feature_names(0)[0] == "preflop_bets"
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    target = pyproject["project"]["entry-points"]["cbr.features"]["sartre"]
    assert EntryPoint("sartre", target, "cbr.features").load() is SartreFeatures
