"""Poki's weight tables (issue 9, section 2): reset, the re-weighting formula, the shift
after a raise or a check, weighted hand strength, and the `poki-wt` bot in `cbr match`."""
from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import evaluator_ext as ev
from cbr.game import HandState, preset
from cbr.models.player_model import DEFAULTS, PlayerModels, default_model
from cbr.models.weights import (
    LOWEST_WEIGHT,
    MAX_SPREAD,
    MIN_SPREAD,
    ActionModel,
    WeightTable,
    holding_strengths,
    touching,
    weighted_ehs,
    weighted_percentiles,
)
from cbr.play.match import run_match
from cbr.plugins import available
from cbr.policies.poki_wt import HandTracker, PokiWeightTablePolicy
from cbr.policies.rules import PokiFormulaPolicy
from cbr.policies.spec import policy_from_spec
from cli import app
from evaluator_ext.cards import N_COMBOS, combo_index, parse_cards

runner = CliRunner()
HU = preset("holdem.limit.2p")


def idx(text: str) -> int:
    return combo_index(*parse_cards(text))


def test_reset_gives_one_to_every_possible_holding_and_zero_to_the_rest() -> None:
    table = WeightTable(dead=parse_cards("AsKd"))
    # holdings with As or Kd: 51 + 51 - 1 (AsKd itself counted twice)
    assert int((table.weights == 0).sum()) == 101
    assert set(np.unique(table.weights)) == {0.0, 1.0}
    table.remove(parse_cards("2c3c4c"))   # the flop: 50 + 49 + 48 more holdings (those with two of them once)
    assert int((table.weights > 0).sum()) == math.comb(52 - 5, 2)
    assert table.normalized().sum() == pytest.approx(1.0, abs=1e-12)
    assert int(touching(parse_cards("2c3c")).sum()) == 101


def test_reweighting_formula_on_a_known_range() -> None:
    """Distinct strengths ranked 0..1325 with equal weights have percentiles (k + 1/2) / 1326;
    the new weight of each is max(P_action, 0.01) (old weights all 1)."""
    n = N_COMBOS
    strengths = np.arange(n) / n
    model = ActionModel(raise_rate=0.2, fold_rate=0.5, spread=0.1)
    pct = (np.arange(n) + 0.5) / n
    assert np.allclose(weighted_percentiles(strengths, np.ones(n)), pct, rtol=0, atol=1e-15)

    raised = WeightTable()
    raised.reweight("r", strengths, model, facing_bet=True)
    k = 1060     # percentile 1060.5/1326 = 0.79977: inside the ramp around mu_r = 1 - 0.2
    assert raised.weights[k] == pytest.approx((1060.5 / 1326 - 0.8 + 0.1) / 0.2, rel=1e-12)
    assert raised.weights[n - 1] == 1.0                     # top of the range: always raises
    assert raised.weights[0] == LOWEST_WEIGHT               # bottom: never raises, floored
    # the whole table against the formula written out
    p_raise = np.clip((pct - 0.8 + 0.1) / 0.2, 0, 1)
    assert np.allclose(raised.weights, np.maximum(p_raise, LOWEST_WEIGHT), rtol=0, atol=1e-12)

    called = WeightTable()
    called.reweight("c", strengths, model, facing_bet=True)
    p_cont = np.clip((pct - 0.5 + 0.1) / 0.2, 0, 1)
    assert np.allclose(called.weights, np.maximum(p_cont - np.minimum(p_raise, p_cont), LOWEST_WEIGHT),
                       rtol=0, atol=1e-12)
    folded = WeightTable()
    folded.reweight("f", strengths, model, facing_bet=True)
    assert np.allclose(folded.weights, np.maximum(1 - p_cont, LOWEST_WEIGHT), rtol=0, atol=1e-12)

    # a second action multiplies: old weight x P(action), percentiles now of the weighted range
    twice = WeightTable()
    twice.reweight("r", strengths, model, facing_bet=True)
    before = twice.weights.copy()
    pct2 = weighted_percentiles(strengths, before)
    twice.reweight("r", strengths, model, facing_bet=True)
    expect = np.maximum(before * np.clip((pct2 - 0.8 + 0.1) / 0.2, 0, 1), LOWEST_WEIGHT)
    assert np.allclose(twice.weights, expect, rtol=0, atol=1e-12)


def test_with_nothing_to_call_every_holding_continues_and_no_raise_means_call() -> None:
    model = ActionModel(raise_rate=0.3, fold_rate=0.6, spread=0.05)
    triples = model.triples(np.linspace(0, 1, 101), facing_bet=False)
    assert np.all(triples[:, 0] == 0.0)
    assert np.allclose(triples.sum(axis=1), 1.0)
    capped = model.triples(np.linspace(0, 1, 101), facing_bet=True, can_raise=False)
    assert np.all(capped[:, 2] == 0.0) and np.allclose(capped.sum(axis=1), 1.0)


def test_after_a_raise_strong_hands_gain_weight_and_after_a_check_they_lose_it() -> None:
    model = ActionModel.from_player(default_model("someone"))
    pre = holding_strengths(())
    aces, seven_deuce = idx("AsAh"), idx("7c2d")
    table = WeightTable(dead=parse_cards("9s9h"))
    share = table.normalized()
    table.reweight("r", pre, model, facing_bet=True)
    after = table.normalized()
    assert after[aces] > share[aces] and after[seven_deuce] < share[seven_deuce]
    assert table.mean_strength(pre) > WeightTable(dead=parse_cards("9s9h")).mean_strength(pre)

    flop = parse_cards("Kh8d3c")
    post = holding_strengths(flop)
    checked = WeightTable(dead=parse_cards("9s9h") + flop)
    before = checked.normalized()
    checked.reweight("c", post, model, facing_bet=False)
    after = checked.normalized()
    sets, air = idx("KsKd"), idx("7c2d")
    assert after[sets] < before[sets] and after[air] > before[air]


def test_weighted_hand_strength_falls_against_a_raiser() -> None:
    hole, flop = parse_cards("9s9h"), parse_cards("Kh8d3c")
    model = ActionModel.from_player(default_model("someone"))
    table = WeightTable(dead=hole)
    table.reweight("r", holding_strengths(()), model, facing_bet=True)      # raised pre-flop
    table.remove(flop)
    table.reweight("r", holding_strengths(flop), model, facing_bet=False)   # bet the flop
    plain = ev.hand_strength(hole, flop)
    weighted = ev.hand_strength(hole, flop, weights=table.weights)
    assert weighted < plain - 0.1
    hs_n, ppot, ehs = weighted_ehs(hole, flop, [table])
    assert hs_n == weighted and ppot == ev.hand_potential(hole, flop, weights=table.normalized())[0]
    assert ehs == pytest.approx(hs_n + (1 - hs_n) * ppot, abs=1e-15)
    # two opponents: HS_n is the product of the per-opponent strengths
    uniform = WeightTable(dead=hole + flop)
    hs_two, _, _ = weighted_ehs(hole, flop, [table, uniform])
    assert hs_two == pytest.approx(weighted * plain, abs=1e-12)
    # eq. 8 of the Waterloo report: the opponent's expected strength rose
    assert table.mean_strength(holding_strengths(flop)) > WeightTable(dead=hole + flop).mean_strength(
        holding_strengths(flop))


def test_holding_strengths_are_the_evaluator_hand_strengths() -> None:
    board = parse_cards("Ah Kd 7c 7s")
    s = holding_strengths(board)
    rng = random.Random(5)
    live = [i for i in range(N_COMBOS) if not touching(board)[i]]
    for i in rng.sample(live, 25):
        a, b = ev.combo_cards(i)
        assert s[i] == pytest.approx(ev.hand_strength((a, b), board), abs=1e-12)
    assert np.isnan(s[touching(board)]).all()
    pre = holding_strengths(())
    assert pre[idx("AsAh")] > pre[idx("KsKh")] > pre[idx("7c2d")]


def test_action_model_from_the_player_model_and_bad_values() -> None:
    m = ActionModel.from_player(default_model("x"))
    assert m.raise_rate == DEFAULTS["aggressiveness"]
    assert m.fold_rate == pytest.approx(1 - DEFAULTS["riskiness"])
    assert m.spread == pytest.approx(min(MAX_SPREAD, max(MIN_SPREAD, 0.5 * (1 - DEFAULTS["tightness"]))))
    with pytest.raises(ValueError):
        ActionModel(raise_rate=1.5, fold_rate=0.1, spread=0.1)
    with pytest.raises(ValueError):
        ActionModel(raise_rate=0.1, fold_rate=0.1, spread=0.0)
    with pytest.raises(ValueError):
        WeightTable().reweight("x", holding_strengths(()), m, facing_bet=True)


def test_tracker_follows_the_betting_of_a_hand() -> None:
    s = HandState(HU, hole_cards=[parse_cards("9s9h"), parse_cards("7c2d")])
    s.act("r")       # position 1 (small blind) raises
    s.act("c")       # position 0 calls
    s.deal_board(parse_cards("Kh8d3c"))
    s.act("c")       # position 0 checks
    s.act("r")       # position 1 bets
    dp = s.decision_point()
    model = ActionModel.from_player(default_model("x"))
    t = HandTracker(dp, names=None)
    t.sync(dp, lambda name, dp=None: model)
    assert t.actions == [(1, 0, "r"), (1, 1, "r")]       # only the opponent's actions re-weight
    # the same two re-weightings by hand
    by_hand = WeightTable(dead=parse_cards("9s9h"))
    by_hand.reweight("r", holding_strengths(()), model, facing_bet=True)
    by_hand.remove(parse_cards("Kh8d3c"))
    by_hand.reweight("r", holding_strengths(parse_cards("Kh8d3c")), model, facing_bet=False)
    assert np.array_equal(t.tables[1].weights, by_hand.weights)


def test_poki_wt_is_a_plugin_and_plays_a_match() -> None:
    assert "poki-wt" in available("cbr.policies")
    assert "thesis" in available("cbr.models") and "poki-weights" in available("cbr.models")
    bot = PokiWeightTablePolicy(seed=1)
    result = run_match([bot, "lag"], 40, seed=2)
    assert result.hands == 40
    lag = bot.models.model("lag")
    assert lag.hands == 40 and lag.defaults == ()        # learned from every hand (cards shown: tightness)
    assert "poki-wt" not in bot.models                    # never models itself
    r = runner.invoke(app, ["match", "--players", "poki-wt,poki", "--hands", "10", "--seed", "4"])
    assert r.exit_code == 0, r.output
    assert policy_from_spec("poki-wt:learn=false").learn is False


class _Recording(PokiWeightTablePolicy):
    """poki-wt that records its name guesses, to compare with the players of each hand."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.guesses: dict[str, tuple] = {}
        self.checked: list[bool] = []
        self.ehs_pairs: list[tuple[float, float]] = []

    def triple(self, dp):
        self.guesses[dp.hand_id] = self._names(dp)
        if dp.street > 0:
            self.ehs_pairs.append((self.ehs(dp), PokiFormulaPolicy.ehs(self, dp)))
        return super().triple(dp)

    def observe(self, record, position) -> None:
        guess = self.guesses.get(record.hand_id)
        if guess is not None:
            self.checked.append(guess == tuple(record.players))
        super().observe(record, position)


def test_opponents_are_named_by_the_seat_rotation() -> None:
    bot = _Recording(seed=3)
    run_match([bot, "lag", "call"], 30, seed=7)
    assert len(bot.checked) >= 20 and all(bot.checked)   # every guess (after hand 1) was right


def test_against_a_raise_happy_opponent_weighted_ehs_is_lower() -> None:
    """lag bets and raises far more than the default model; after it has been learned, its
    bets shift its table to strong hands, so the bot's weighted EHS is below the plain one."""
    bot = _Recording(seed=3)
    run_match([bot, "lag"], 40, seed=7)
    assert len(bot.ehs_pairs) >= 30
    mean_w = sum(a for a, _ in bot.ehs_pairs) / len(bot.ehs_pairs)
    mean_plain = sum(b for _, b in bot.ehs_pairs) / len(bot.ehs_pairs)
    assert mean_w < mean_plain


def test_bot_with_a_store_starts_from_what_the_store_remembers(tmp_path: Path) -> None:
    path = tmp_path / "bots.duckdb"
    first = policy_from_spec(f"poki-wt:store={path}", seed=1)
    run_match([first, "lag"], 15, seed=1)
    first.close()
    second = policy_from_spec(f"poki-wt:store={path}", seed=1)
    second.reset()
    assert second.action_model("lag") == ActionModel.from_player(first.models.model("lag"))
    assert second.models.model("lag").hands == 15
    second.close()
    models = PlayerModels()
    assert models.model("lag").hands == 0


def test_current_aggressiveness_follows_the_hand_in_play() -> None:
    bot = PokiWeightTablePolicy(seed=1)
    bot.observe(_folded_hand(), 0)          # a hand where "opp" (small blind) folded at once
    # the next hand: the button moved, so "opp" is at position 0 and "me" at position 1
    s = HandState(HU, players=("opp", "me"), hole_cards=[parse_cards("7c2d"), parse_cards("9s9h")])
    s.act("c")           # me (small blind) limps: not an opponent action
    s.act("r")           # opp raises
    bot.triple(s.decision_point())
    assert bot.models.model("opp").current_aggressiveness == 1.0
    s.act("c")
    s.deal_board(parse_cards("Kh8d3c"))
    s.act("c")           # opp checks: street 0 was 1/1, street 1 is 0/1
    bot.triple(s.decision_point())
    assert bot.models.model("opp").current_aggressiveness == (1.0 + 0.0) / 2


def _folded_hand():
    from cbr.logs.record import Action, HandRecord

    return HandRecord(source="t", line=1, hand_id="0", game=HU, players=("me", "opp"),
                      hole_cards=(parse_cards("9s9h"), None), board=(), actions=(Action(0, 1, "f"),))


# ------------------------------------------------------------------ the ANN predictor in play
@pytest.fixture(scope="module")
def small_predictor(tmp_path_factory) -> Path:
    """A predictor trained on a real (written) self-play log of lag and hs."""
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.models.predictor import train_predictor

    folder = tmp_path_factory.mktemp("ann")
    log = folder / "selfplay.log"
    with AcpcLogWriter(log) as w:
        run_match(["lag", "hs"], 300, seed=3, log=w)
    train_predictor([str(log)], folds=2, out=folder / "p.ann")
    return folder / "p.ann"


def test_predicted_action_model_sets_the_thresholds() -> None:
    from cbr.policies.poki_wt import predicted_action_model

    m = predicted_action_model((0.2, 0.5, 0.3), 0.1)
    assert (m.raise_rate, m.fold_rate, m.spread) == pytest.approx((0.3, 0.2, 0.1))
    assert predicted_action_model((0.0, 2.0, 2.0), 0.2).raise_rate == pytest.approx(0.5)   # normalised
    with pytest.raises(ValueError, match="needs some probability"):
        predicted_action_model((0.0, 0.0, 0.0), 0.1)


def test_poki_wt_reweights_from_the_predictor(small_predictor: Path) -> None:
    """With ``predictor=FILE`` each opponent action re-weights with the predictor's triple at
    the opponent's decision point (the spread still from the player model)."""
    from cbr.models.predictor import ActionPredictor
    from cbr.policies.poki_wt import predicted_action_model

    ann = ActionPredictor.load(small_predictor)
    s = HandState(preset("holdem.limit.2p"), hole_cards=[(51, 50), (20, 1)])
    s.act("r")                                           # position 1 raises pre-flop
    s.act("r")                                           # position 0 re-raises
    opp_dp = s.decision_point()                          # position 1 to act
    s.act("c")
    s.deal_board(parse_cards("Kh8d3c"))
    s.act("c")
    mine = s.decision_point()                            # the next decision, on the flop
    bot = PokiWeightTablePolicy(seed=1, predictor=str(small_predictor))
    plain = PokiWeightTablePolicy(seed=1)
    expect = predicted_action_model(ann.predict_decision(opp_dp), plain.action_model(None).spread)
    assert bot.action_model(None, opp_dp) == expect
    assert plain.action_model(None, opp_dp) == plain.action_model(None)   # no predictor: the player model
    # the weight tables follow: replaying the same hand gives other weights than the player model's
    a, b = bot.tracker(mine), plain.tracker(mine)
    assert a is not None and b is not None
    opp = next(iter(a.tables))
    assert not np.allclose(a.tables[opp].weights, b.tables[opp].weights)
    r = runner.invoke(app, ["match", "--players", f"poki-wt:predictor={small_predictor},lag", "--hands", "10",
                            "--seed", "4", "--json"])
    assert r.exit_code == 0, r.output


def test_poki_wt_predictor_file_errors(tmp_path: Path) -> None:
    from cbr.policies.spec import PolicyFileError

    bad = tmp_path / "bad.ann"
    bad.write_text("not a predictor\n")
    with pytest.raises(PolicyFileError, match=f"option 'predictor': {bad} is not an action predictor file"):
        PokiWeightTablePolicy(predictor=str(bad))
    r = runner.invoke(app, ["match", "--players", f"poki-wt:predictor={tmp_path / 'missing.ann'},lag", "--hands", "2"])
    assert r.exit_code == 1 and "missing.ann" in r.output and "Traceback" not in r.output  # a bad input file


def test_predictor_in_play_experiment_quick(small_predictor: Path, tmp_path: Path) -> None:
    from experiments.predictor_in_play import main

    log = small_predictor.parent / "selfplay.log"                      # the fixture's log
    report = main(["--hands", "20", "--opponents", "call", "--logs", str(log), "--out", str(tmp_path / "r.json")])
    row = report["results"]["call"]
    assert set(row) == {"models", "predictor", "difference"}
    assert (tmp_path / "r.json").exists() and not (tmp_path / "r.ann").exists()
