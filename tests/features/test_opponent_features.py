"""Opponent-aware cases (issue 9, section 7): the ``casper-opp`` feature set, the ordered
build, the ``cbr`` bot's opponent models in play and retention, defaults and refusals.

Expected model values are derived by hand for hand-made hands, or recomputed here from
the logs the tests write (real files) with the player model, hand by hand."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cbr.build.local import build_casebase
from cbr.build.ordered import opponent_similarity, table_view
from cbr.errors import ConfigError, GameError
from cbr.game import preset
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import STREETS
from cbr.logs.acpc import AcpcLogWriter
from cbr.logs.detect import parse_source, scan_logs
from cbr.logs.record import HandRecord
from cbr.models.player_model import ATTRIBUTES, DEFAULTS, PlayerModels
from cbr.models.store import ModelStore
from cbr.models.tracker import OpponentTracker
from cbr.play.match import run_match, seen_by
from cbr.play.retention import copy_casebase
from cbr.plugins import load_feature_set
from cbr.policies.cbr_policy import CBRPolicy
from cbr.store import CaseBase
from cli import app
from features.casper import CasperFeatures
from features.casper_opp import DEFAULT_VALUES, OPPONENT_FEATURES, CasperOpponentFeatures, opponent_columns

runner = CliRunner()
DEF = tuple(DEFAULTS[a] for a in ATTRIBUTES)
GAME = preset("holdem.limit.2p")
HEADER = "# game: " + json.dumps(GAME.to_dict(), separators=(",", ":"))


def decision(street: int, position: int, folded: tuple[bool, ...], board: tuple[int, ...] = ()) -> DecisionPoint:
    n = len(folded)
    game = preset("holdem.limit.2p") if n == 2 else preset(f"holdem.limit.{n}p")
    return DecisionPoint(game=game, street=street, position=position, player=f"p{position}", hole=(51, 50),
                         board=board, folded=folded, all_in=(False,) * n, acted=(False,) * n,
                         order=tuple(p for p in range(n) if not folded[p]), street_bets=1,
                         committed=(10.0,) * n, total_committed=(10.0,) * n, previous_round_bets=0, legal="fcr")


def rows_of(cb: CaseBase) -> dict[str, list[dict]]:
    """Per street: each case's provenance and its feature columns by name."""
    out = {}
    for s in STREETS:
        arr = cb.cases(s)
        meta = arr.table.select(["hand_id", "player", "position", "source"]).to_pylist()
        for m, x, a in zip(meta, arr.features, arr.actions):
            m["x"] = dict(zip(arr.feature_names, (float(v) for v in x)))
            m["action"] = a
        out[s] = meta
    return out


def opp_values(row: dict) -> tuple[float, ...]:
    """A case's opponent columns (float32, as stored)."""
    return tuple(np.float32(row["x"][f]) for f in OPPONENT_FEATURES)


def f32(values) -> tuple[float, ...]:
    """Values as a case row stores them (float32)."""
    return tuple(np.float32(v) for v in values)


def r5(values) -> tuple[float, ...]:
    return tuple(round(float(v), 5) for v in values)


def records(log: Path) -> list[HandRecord]:
    return [r for s in scan_logs([log]) for r in parse_source(s) if isinstance(r, HandRecord)]


# ------------------------------------------------------------------ the feature set
def test_features_on_hand_made_decisions() -> None:
    fs = CasperOpponentFeatures()
    values = {0: (0.5, 0.6, 0.7), 1: (0.9, 0.8, 0.1), 2: (0.2, 0.2, 0.2)}
    # actor at position 2; position 1 folded: only position 0 is an opponent still in
    dp = decision(0, 2, (False, True, False))
    row = fs.row(dp, values)
    assert row.dtype == np.float32 and len(row) == len(fs.feature_names(0)) == 8 + 4
    assert row[:8].tolist() == CasperFeatures().row(dp).tolist()      # CASPER's columns untouched
    assert r5(row[8:]) == r5((0.5, 0.6, 0.7, 0.5))
    # nobody folded: the mean of positions 0 and 1, the larger aggressiveness (0.9)
    row = fs.row(decision(0, 2, (False, False, False)), values)
    assert r5(row[8:]) == r5(((0.5 + 0.9) / 2, (0.6 + 0.8) / 2, (0.7 + 0.1) / 2, 0.9))
    # post-flop: 12 CASPER columns, then the same four
    flop = decision(1, 0, (False, False), board=(0, 5, 10))
    row = fs.row(flop, values)
    assert len(row) == 16 and fs.feature_names(1)[12:] == list(OPPONENT_FEATURES)
    assert r5(row[12:]) == r5((0.9, 0.8, 0.1, 0.9))
    # the provider is what the bot installs; explicit values win over it
    fs.opponent_values = lambda d: {1: (0.3, 0.3, 0.3)}
    assert r5(fs.row(flop)[12:]) == r5((0.3, 0.3, 0.3, 0.3))
    assert r5(fs.row(flop, values)[12:]) == r5((0.9, 0.8, 0.1, 0.9))
    with pytest.raises(GameError, match="opponent values of position 1"):
        opponent_columns(0, (False, False), {1: (0.1, 0.2)})
    assert isinstance(GameError("x"), ValueError)


def test_defaults_for_players_never_seen() -> None:
    assert DEFAULT_VALUES == DEF                                        # the model's documented defaults
    fs = load_feature_set("casper-opp")
    assert fs.name == "casper-opp" and fs.needs_player_models
    assert r5(fs.row(decision(0, 1, (False, False)))[8:]) == r5(DEF + (DEF[0],))
    assert r5(fs.row(decision(0, 0, (False, False, False)), {2: (0.5, 0.5, 0.5)})[8:]) == r5(
        ((DEF[0] + 0.5) / 2, (DEF[1] + 0.5) / 2, (DEF[2] + 0.5) / 2, 0.5))
    tracker = OpponentTracker()
    assert tracker.value_of("nobody") == DEF
    # before any hand the seating is unknown: only the actor is named, the rest take defaults
    assert tracker.values(decision(0, 1, (False, False))) == {1: DEF}


# ------------------------------------------------------------------ ordered build
def hand_made_log(path: Path) -> Path:
    """Hand 0: bob (SB, position 1) raises, ann folds. Hand 1 (seats swapped): ann completes,
    everyone checks to a showdown that ann's aces win."""
    path.write_text("\n".join([
        HEADER,
        "STATE:0:rf:AsAh|2c7d:-10|10:ann|bob",
        "STATE:1:cc/cc/cc/cc:2c7d|AsAh/Kd9s4h/Jc/3s:-10|10:bob|ann",
        "STATE:2:cc/cc/cc/cc:AsAh|2c7d/Kd9s4h/Jc/3s:10|-10:ann|bob",
    ]) + "\n")
    return path


def test_ordered_build_values_by_hand(tmp_path: Path) -> None:
    log = hand_made_log(tmp_path / "hand-made.log")
    build_casebase([log], tmp_path / "cb", feature_set="casper-opp")
    with CaseBase.open(tmp_path / "cb") as cb:
        assert cb.manifest.feature_set == "casper-opp"
        assert cb.similarity() == opponent_similarity()                 # its default similarity
        cases = [c for s in STREETS for c in rows_of(cb)[s]]
    by = {(c["hand_id"], c["player"]): opp_values(c) for c in cases}
    # hand 0: nobody seen yet -> the defaults, for both players
    assert by[("0", "bob")] == by[("0", "ann")] == f32(DEF + (DEF[0],))
    # hand 1 sees hand 0 only: bob raised once (aggressiveness 1) paying to continue (riskiness 1),
    # ann folded facing a bet (aggressiveness 0, riskiness 0); no showdown: tightness default
    assert by[("1", "ann")] == f32((1.0, DEF[1], 1.0, 1.0))
    assert by[("1", "bob")] == f32((0.0, DEF[1], 0.0, 0.0))
    # every case of hand 1 has those values: its own checks do not count (no look-ahead)
    assert {opp_values(c) for c in cases if c["hand_id"] == "1" and c["player"] == "ann"} == {f32((1.0, DEF[1], 1.0, 1.0))}
    # hand 2 sees hands 0 and 1: bob's aggressiveness (1 + 0) / 2; his riskiness only from hand 0
    # (nothing to call in hand 1); his cards were shown in hand 1: 2c7d checked throughout, never a
    # raise below 0.46 nor a call above 0.63, so tightness 1 there
    assert by[("2", "ann")] == f32((0.5, 1.0, 1.0, 0.5))


def test_the_writer_gives_casper_opp_the_default_a_build_gives(tmp_path: Path) -> None:
    """``CaseBaseWriter(feature_set="casper-opp")`` without a similarity was refused ("has no
    default similarity ... give a similarity config") while ``build_casebase`` gave it
    :func:`opponent_similarity`: both take the one rule (``cbr.similarity.default_for``), by
    name and as an instance, and the case base written is read back with it."""
    from cbr.similarity import default_for
    from cbr.store import CaseBaseWriter

    log = hand_made_log(tmp_path / "hand-made.log")
    build_casebase([log], tmp_path / "built", feature_set="casper-opp")
    with CaseBase.open(tmp_path / "built") as cb:
        built = cb.similarity()
    assert built == opponent_similarity()
    flop = decision(1, 0, (False, False), board=(0, 4, 8))
    for name, fs in (("by-name", "casper-opp"), ("instance", load_feature_set("casper-opp"))):
        with CaseBaseWriter(tmp_path / name, feature_set=fs, build_index=False) as w:
            assert w.similarity == built
            w.add_rows("flop", np.asarray([load_feature_set("casper-opp").row(flop)]), ["c"])
        with CaseBase.open(tmp_path / name) as cb:
            assert cb.manifest.feature_set == "casper-opp" and cb.similarity() == built
            assert len(cb.cases("flop").actions) == 1
    assert default_for(load_feature_set("casper-opp")) == built  # the rule both take
    # a feature set with other columns and no default is still refused, naming the option
    with pytest.raises(ConfigError, match="has no default similarity"):
        CaseBaseWriter(tmp_path / "other", feature_set=_OtherColumns(), build_index=False)
    assert not (tmp_path / "other").exists()


class _OtherColumns:
    """Columns of its own, no default similarity, and no player models."""

    name = "other_columns"

    def feature_names(self, street: object) -> list[str]:
        return ["pot_odds"]


def test_no_look_ahead_and_same_casebase_with_1_and_2_workers(tmp_path: Path) -> None:
    log = tmp_path / "match.log"
    with AcpcLogWriter(log) as w:
        run_match(["lag", "rock"], 600, seed=11, log=w)                 # 600 hands: 3 chunks of 250
    one = build_casebase([log], tmp_path / "one", feature_set="casper-opp", workers=1)
    two = build_casebase([log], tmp_path / "two", feature_set="casper-opp", workers=2)
    assert one.cases == two.cases > 0
    with CaseBase.open(tmp_path / "one") as a, CaseBase.open(tmp_path / "two") as b:
        for s in STREETS:
            assert np.array_equal(a.cases(s).features, b.cases(s).features)
            assert list(a.cases(s).actions) == list(b.cases(s).actions)
        cases = [c for s in STREETS for c in rows_of(a)[s]]
    # recompute each case's values from the hands before it only, and check they are not the
    # values that would include its own hand
    recs = records(log)
    before: dict[str, dict[str, tuple]] = {}
    including: dict[str, dict[str, tuple]] = {}
    models = PlayerModels()
    for rec in recs:
        before[rec.hand_id] = {p: tuple(getattr(models.model(p), a) for a in ATTRIBUTES) for p in rec.players}
        models.update(table_view(rec))
        including[rec.hand_id] = {p: tuple(getattr(models.model(p), a) for a in ATTRIBUTES) for p in rec.players}
    differs = 0
    for c in cases:
        other = "rock" if c["player"] == "lag" else "lag"
        expect = before[c["hand_id"]][other]
        assert opp_values(c) == f32(expect + (expect[0],)), c
        differs += f32(including[c["hand_id"]][other]) != f32(expect)
    assert differs > len(cases) // 2                                    # the check has teeth
    # a prefix of the logs gives the same cases for its hands: later hands change nothing
    prefix = tmp_path / "prefix.log"
    lines = log.read_text().splitlines()
    prefix.write_text("\n".join(lines[:1 + 300]) + "\n")
    build_casebase([prefix], tmp_path / "prefix", feature_set="casper-opp")
    with CaseBase.open(tmp_path / "prefix") as p, CaseBase.open(tmp_path / "one") as a:
        for s in STREETS:
            n = p.count(s)
            assert n and np.array_equal(p.cases(s).features, a.cases(s).features[:n])


def test_existing_feature_set_builds_are_unchanged(tmp_path: Path) -> None:
    log = hand_made_log(tmp_path / "hand-made.log")
    build_casebase([log], tmp_path / "casper")
    build_casebase([log], tmp_path / "opp", feature_set="casper-opp")
    with CaseBase.open(tmp_path / "casper") as c, CaseBase.open(tmp_path / "opp") as o:
        assert c.manifest.feature_set == "casper" and c.feature_names("flop") == list(CasperFeatures().feature_names(1))
        for s in STREETS:
            k = len(c.feature_names(s))
            assert np.array_equal(c.cases(s).features, o.cases(s).features[:, :k])


# ------------------------------------------------------------------ live play and retention
@pytest.fixture(scope="module")
def opp_casebase(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("opp")
    log = folder / "selfplay.log"
    with AcpcLogWriter(log) as w:
        run_match(["lag", "rock"], 400, seed=5, log=w)
    build_casebase([log], folder / "cb", feature_set="casper-opp")
    return folder / "cb"


def test_bot_plays_retains_and_stores_the_values_it_used(opp_casebase: Path, tmp_path: Path) -> None:
    mine = copy_casebase(opp_casebase, tmp_path / "mine")
    bot = CBRPolicy(casebase=str(mine), seed=3)
    log = tmp_path / "played.log"
    with AcpcLogWriter(log) as w:
        r = run_match([bot, "lag"], 40, seed=9, retain=True, log=w)
    assert r.retained > 0
    assert bot.opponent_models.model("lag").hands == 40                 # observed every hand
    bot.close()
    # the bot's view: its own cards and those shown; its models before each hand
    recs = records(log)
    view = PlayerModels()
    before = {}
    for rec in recs:
        before[rec.hand_id] = {p: tuple(getattr(view.model(p), a) for a in ATTRIBUTES) for p in rec.players}
        view.update(seen_by(rec, rec.players.index("cbr")))
    with CaseBase.open(mine) as cb:
        retained = [c for s in STREETS for c in rows_of(cb)[s] if c["source"] == "retained"]
    assert len(retained) == r.retained
    for c in retained:
        other = "lag" if c["player"] == "cbr" else "cbr"
        expect = before[c["hand_id"]][other]
        assert opp_values(c) == f32(expect + (expect[0],)), c
    # after the first hand the bot knows the lag's raises: some retained case shows it
    assert any(opp_values(c)[0] != DEF[0] for c in retained if c["player"] == "cbr")


def test_cbr_match_cli_with_an_opponent_aware_casebase(opp_casebase: Path) -> None:
    result = runner.invoke(app, ["match", "-p", f"cbr:casebase={opp_casebase},rock", "--hands", "20",
                                 "--seed", "2", "--duplicate", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["hands"] == 20


def test_bot_starts_from_a_model_store(opp_casebase: Path, tmp_path: Path) -> None:
    store = tmp_path / "players.duckdb"
    known = PlayerModels()
    for rec in records(hand_made_log(tmp_path / "h.log"))[:1]:
        known.update(table_view(rec))                                    # bob: one raise
    known.histories["lag"] = known.histories.pop("bob")
    known.histories["lag"].player = "lag"
    with ModelStore.open(store, create=True) as s:
        s.save(known)
    bot = CBRPolicy(casebase=str(opp_casebase), models=str(store), seed=1)
    run_match([bot, "lag"], 6, seed=4)
    assert bot.opponent_models.model("lag").hands == 1 + 6
    bot.reset()                                                          # a new match: back to the store
    assert bot.opponent_models.model("lag").hands == 1
    assert r5(OpponentTracker(str(store)).value_of("lag")) == r5((1.0, DEF[1], 1.0))
    bot.close()


def test_refusals_name_the_problem(opp_casebase: Path, tmp_path: Path) -> None:
    log = hand_made_log(tmp_path / "h.log")
    build_casebase([log], tmp_path / "plain")
    store = tmp_path / "players.duckdb"
    with ModelStore.open(store, create=True) as s:
        s.save(PlayerModels())
    with pytest.raises(ConfigError, match="feature set 'casper', whose cases ignore player models"):
        CBRPolicy(casebase=str(tmp_path / "plain"), models=str(store)).open()
    with pytest.raises(ConfigError, match="no model store file"):
        CBRPolicy(casebase=str(opp_casebase), models=str(tmp_path / "missing.duckdb"))
    # CASPER's similarity file on an opponent-aware case base: the columns do not match
    sim = tmp_path / "casper.toml"
    from cbr.similarity import default_casper

    default_casper().dump(sim)
    with pytest.raises(Exception, match="opp_aggressiveness|features"):
        CBRPolicy(casebase=str(opp_casebase), similarity=str(sim)).open()
    result = runner.invoke(app, ["match", "-p", f"cbr:casebase={tmp_path / 'plain'}:models={store},rock",
                                 "--hands", "2"])
    assert result.exit_code in (1, 2) and "whose cases ignore player models" in result.output


def test_rock_is_tighter_and_more_passive_than_lag(tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    with AcpcLogWriter(log) as w:
        run_match(["lag", "rock"], 200, seed=2, log=w)
    models = PlayerModels()
    for rec in records(log):
        models.update(table_view(rec))
    lag, rock = models.model("lag"), models.model("rock")
    assert rock.aggressiveness < lag.aggressiveness and rock.riskiness < lag.riskiness


def test_experiment_quick_mode(tmp_path: Path) -> None:
    """experiments/opponent_aware.py --quick: both case bases from the same logs, both opponents."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, str(repo / "experiments" / "opponent_aware.py"), "--quick", "--hands", "40",
                          "--workers", "1", "--logs", str(repo / "casebases" / "selfplay" / "hu-ehs-lag.log"),
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    report = json.loads((tmp_path / "opponent-aware-seed2-quick.json").read_text())
    assert report == json.loads(run.stdout)
    for opponent in ("lag", "rock"):
        row = report["results"][opponent]
        assert set(row) >= {"casper", "casper-opp", "difference", "model_of_opponent"}
        assert row["model_of_opponent"]["hands"] == 40
    assert report["casebases"]["casper"]["cases"] == report["casebases"]["casper-opp"]["cases"]


# ------------------------------------------------------------------ cbr query with opponent models
def test_query_takes_opponent_models_as_values_or_from_a_store(opp_casebase: Path, tmp_path: Path) -> None:
    """``answer(..., opponents=)`` / ``cbr query --opponent``: the query row's opponent columns
    are the values given (or a stored player's overall model), and retrieval follows them."""
    from cbr.game.situation import situation
    from cbr.query.answer import answer

    dp = situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5)
    with CaseBase.open(opp_casebase) as cb:
        plain = answer(cb, dp)
        aggro = answer(cb, dp, opponents=[(0.9, 0.2, 0.95)])
    assert [plain.features[f] for f in OPPONENT_FEATURES] == pytest.approx(list(DEFAULT_VALUES) + [DEFAULT_VALUES[0]])
    assert [aggro.features[f] for f in OPPONENT_FEATURES] == pytest.approx([0.9, 0.2, 0.95, 0.9])
    assert aggro.case_ids != plain.case_ids            # other opponents, other neighbours
    # the CLI: values, then the same opponent by name from a model store
    args = ["query", "-c", str(opp_casebase), "--hole", "AdQc", "--board", "3h4cJh", "--position", "1",
            "--to-call", "1", "--pot", "5", "--json"]
    by_values = runner.invoke(app, args + ["--opponent", "0.9,0.2,0.95"])
    assert by_values.exit_code == 0, by_values.output
    assert json.loads(by_values.stdout)["features"]["opp_riskiness"] == pytest.approx(0.95)
    store = tmp_path / "players.duckdb"
    known = PlayerModels()
    for rec in records(hand_made_log(tmp_path / "h.log"))[:1]:
        known.update(table_view(rec))                  # bob: one raise
    with ModelStore.open(store, create=True) as s:
        s.save(known)
        bob = s.model("bob")
    by_name = runner.invoke(app, args + ["--opponent", "bob", "--models", str(store)])
    assert by_name.exit_code == 0, by_name.output
    got = json.loads(by_name.stdout)["features"]
    assert [got[f] for f in OPPONENT_FEATURES[:3]] == pytest.approx([bob.aggressiveness, bob.tightness, bob.riskiness])
    # a name the store does not hold: one error line, exit 1 (it was a usage error: click's "Usage:",
    # "Try ..." and "Error: Invalid value: ..." lines, exit 2)
    unknown = runner.invoke(app, args + ["--opponent", "nobody", "--models", str(store)])
    assert (unknown.exit_code, unknown.stdout) == (1, ""), unknown.output
    (line,) = unknown.stderr.strip().splitlines()
    assert line.startswith(f"error: --opponent 'nobody': no such player in {store} ("), line


def test_query_opponent_refusals(opp_casebase: Path, tmp_path: Path) -> None:
    from cbr.game.situation import situation
    from cbr.query.answer import answer

    dp = situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5)
    with CaseBase.open(opp_casebase) as cb:
        with pytest.raises(ConfigError, match="^2 opponent models given, but 1 opponent is still in the hand$"):
            answer(cb, dp, opponents=[(0.1, 0.2, 0.3), (0.1, 0.2, 0.3)])
        with pytest.raises(ConfigError, match="three values in 0..1"):
            answer(cb, dp, opponents=[(0.1, 1.2, 0.3)])
    build_casebase([hand_made_log(tmp_path / "h.log")], tmp_path / "plain")
    with CaseBase.open(tmp_path / "plain") as cb:
        with pytest.raises(ConfigError, match="does not use opponent models"):
            answer(cb, dp, opponents=[(0.1, 0.2, 0.3)])
    base = ["query", "-c", str(opp_casebase), "--hole", "AdQc", "--board", "3h4cJh", "--position", "1",
            "--to-call", "1", "--pot", "5"]
    # usage errors in typer's own form, `Invalid value for '--opponent'` (it said `Invalid value: --opponent 'bob' ...`)
    for extra, code, message in (
            (["--opponent", "bob"], 2, "Error: Invalid value for '--opponent': 'bob' is a name: give --models STORE "
                                       "to look it up (or give AGG,TIGHT,RISK)"),
            (["--opponent", "0.1,0.2"], 2, "Error: Invalid value for '--opponent': '0.1,0.2': give three values "
                                           "AGG,TIGHT,RISK in 0..1 or a player's name in --models"),
            (["--models", "x.duckdb"], 2, "Error: Invalid value for '--models': the store where --opponent NAME is "
                                          "looked up, but no --opponent is given"),
            (["--opponent", "nobody", "--models", str(tmp_path / "missing.duckdb")], 1, "no model store")):
        result = runner.invoke(app, base + extra, env={"COLUMNS": "300"})
        assert result.exit_code == code and message in " ".join(result.stderr.replace("│", " ").split()), \
            (extra, result.output)
        assert "Traceback" not in result.output
