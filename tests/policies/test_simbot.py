"""Poki's simulation bot `simbot` (issue 9, section 3): legal play, no range information,
seeded reproducibility, obvious spots, the trial count, Monte Carlo accuracy, `cbr match`."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest
from typer.testing import CliRunner

import evaluator_ext as ev
from cbr.game import HandState, preset
from cbr.game.decision import DecisionPoint
from cbr.models.weights import WeightTable
from cbr.play.match import deal_cards, run_match
from cbr.plugins import available
from cbr.policies.rules import PokiFormulaPolicy
from cbr.policies.simbot import DEFAULT_TRIALS, SimulationError, SimulationPolicy, check_trials, fork
from cbr.policies.spec import PolicySpecError, policy_from_spec
from cli import app
from evaluator_ext.cards import N_COMBOS, combo_cards, parse_cards

runner = CliRunner()
HU = preset("holdem.limit.2p")


def play(state: HandState, actions: str, boards: list[str]) -> HandState:
    """Apply ``actions`` (``/`` deals the next board from ``boards``)."""
    it = iter(boards)
    for ch in actions:
        if ch == "/":
            state.deal_board(parse_cards(next(it)))
        else:
            state.act(ch)
    return state


def test_simbot_is_a_plugin_with_a_trial_option() -> None:
    assert "simbot" in available("cbr.policies")
    bot = policy_from_spec("simbot:trials=7:preflop=false", seed=2)
    assert isinstance(bot, SimulationPolicy) and bot.trials == 7 and bot.preflop is False and bot.seed == 2
    assert SimulationPolicy().trials == DEFAULT_TRIALS


@pytest.mark.parametrize("bad", [0, -3, 100_001, 2.5, "10", True, None])
def test_trial_count_is_validated(bad: object) -> None:
    with pytest.raises(SimulationError, match="trials must be a whole number from 1 to 100000") as info:
        SimulationPolicy(trials=bad)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)
    with pytest.raises(SimulationError):
        check_trials(bad)


def test_bad_trial_count_in_a_spec_and_on_the_command_line() -> None:
    with pytest.raises(PolicySpecError, match="trials must be a whole number"):
        policy_from_spec("simbot:trials=0")
    r = runner.invoke(app, ["match", "--players", "simbot:trials=0,poki", "--hands", "2"])
    assert r.exit_code == 2
    assert "trials must be a whole number from 1 to 100000, got 0" in r.output
    # a bad count for one decision's simulation is refused too
    s = HandState(HU, hole_cards=[parse_cards("AhAd"), parse_cards("7c2d")])
    with pytest.raises(SimulationError):
        SimulationPolicy(seed=1).simulate(s.decision_point(), trials=0)


def test_fork_is_independent_of_the_original() -> None:
    s = play(HandState(HU, hole_cards=[parse_cards("AhAd"), parse_cards("7c2d")]), "rc/", ["2c3d4h"])
    t = fork(s)
    t.act("r"); t.act("c")
    assert s.history == "rc/" and s.pot == 40.0 and not s.acted[0]
    assert t.history == "rc/rc" and t.pot == 60.0


def test_nuts_on_the_river_facing_a_bet_raises() -> None:
    """A royal flush (no holding beats or ties it) facing a bet on the river: raising can
    only win more than calling, so the simulation raises; calling wins chips."""
    s = HandState(HU, hole_cards=[parse_cards("9c9d"), parse_cards("AhKh")])
    play(s, "rc/cc/cc/r", ["QhJhTh", "2c", "3d"])        # position 0 bets the river
    dp = s.decision_point()
    assert dp.position == 1 and dp.legal == "fcr"
    bot = SimulationPolicy(seed=3, trials=60)
    result = bot.simulate(dp)
    assert result is not None and result.best == "r"
    assert result.mean("r") >= result.mean("c") > 0.0
    assert bot.triple(dp) == (0.0, 0.0, 1.0)


def _narrow_to(table: WeightTable, classes: set[str]) -> None:
    keep = np.zeros(N_COMBOS, dtype=bool)
    for i in range(N_COMBOS):
        keep[i] = ev.preflop_class(combo_cards(i)) in classes
    table.weights[~keep] = 0.0


def test_seven_deuce_facing_a_raise_against_a_strong_range_folds() -> None:
    """7c2d on a dry As Kd 8c flop, facing a raise from an opponent whose range is narrowed
    to AA, KK, 88 and AK (every holding ahead, drawing dead but for runner-runner): the
    call loses chips beyond Monte Carlo doubt, so the simulation folds."""
    s = HandState(HU, hole_cards=[parse_cards("7c2d"), parse_cards("AhAd")])
    play(s, "rc/rr", ["AsKd8c"])                          # position 0 bets, position 1 raises
    dp = s.decision_point()
    assert dp.position == 0 and dp.legal == "fcr" and dp.to_call > 0
    bot = SimulationPolicy(seed=5, trials=80)
    tracker = bot.tracker(dp)
    assert tracker is not None
    _narrow_to(tracker.tables[1], {"AA", "KK", "88", "AKs", "AKo"})
    result = bot.simulate(dp)
    assert result is not None and result.best == "f"
    # the call's mean is below 0 by more than four of its standard errors (from the 80 trials)
    assert result.mean("c") + 4 * result.stderr("c") < 0.0
    # folding is 0 in every trial: the paired difference has the call's own spread
    assert result.stderr_diff("c", "f") == pytest.approx(result.stderr("c"), rel=1e-9)
    assert result.stderr_diff("c", "r") <= result.stderr("c") + result.stderr("r") + 1e-9   # sd of a difference
    assert bot.triple(dp) == (1.0, 0.0, 0.0)


def test_river_call_value_matches_the_weighted_hand_strength_within_the_monte_carlo_error() -> None:
    """On the river a call ends the hand. Chips won from now: the pot if we win, half of
    pot + call minus the call on a tie, minus the call if we lose, with the win and tie
    probabilities those of the opponent's weight table (what the trials draw from; they
    add up to the weighted hand strength). The estimate from T trials is within 4
    standard deviations of one trial's outcome over sqrt(T)."""
    s = HandState(HU, hole_cards=[parse_cards("QcJd"), parse_cards("5h5s")])
    play(s, "rc/cc/cc/r", ["Qh8s3c", "2d", "9h"])
    dp = s.decision_point()
    assert dp.position == 1 and dp.to_call > 0
    trials = 400
    bot = SimulationPolicy(seed=11, trials=trials)
    result = bot.simulate(dp)
    assert result is not None
    tracker = bot.tracker(dp)
    assert tracker is not None
    weights = tracker.tables[0].weights
    hole, board = dp.hole, dp.board
    win = tie = total = 0.0
    mine = ev.evaluate(hole + board)
    for i in np.flatnonzero(weights > 0):
        theirs = ev.evaluate(tuple(int(c) for c in combo_cards(int(i))) + board)
        w = float(weights[i])
        total += w
        win += w * (mine > theirs)
        tie += w * (mine == theirs)
    p_win, p_tie = win / total, tie / total
    assert p_win + p_tie / 2 == pytest.approx(ev.hand_strength(hole, board, weights=weights), abs=1e-9)
    pot, to_call = dp.pot, dp.to_call
    outcomes = np.array([pot, (pot + to_call) / 2 - to_call, -to_call])
    probs = np.array([p_win, p_tie, 1 - p_win - p_tie])
    exact = float(probs @ outcomes)
    sd = math.sqrt(float(probs @ (outcomes - exact) ** 2))
    assert abs(result.mean("c") - exact) <= 4 * sd / math.sqrt(trials)
    # and the reported standard error is the sample's (close to the exact sd / sqrt(T))
    assert result.stderr("c") == pytest.approx(sd / math.sqrt(trials), rel=0.25)


def test_no_range_information_still_works() -> None:
    """First to act pre-flop (no opponent action seen: uniform tables), a player never
    seen (default model), no store: the simulation runs; a decision point whose betting
    cannot be replayed falls back to the poki-wt formula, still legal."""
    s = HandState(HU, hole_cards=[parse_cards("AhAd"), parse_cards("KcKd")])
    dp = s.decision_point()
    bot = SimulationPolicy(seed=1, trials=20, learn=False)
    result = bot.simulate(dp)
    assert result is not None and result.trials == 20 and set(result.actions) == set(dp.legal)
    tracker = bot.tracker(dp)
    assert tracker is not None
    assert set(np.unique(tracker.tables[0].weights)) == {0.0, 1.0}      # untouched: uniform
    # a decision point without a replayable history (built by hand)
    lone = DecisionPoint(game=HU, street=3, position=0, player="p1", hole=parse_cards("AhAd"),
                         board=parse_cards("AsAcKd7h2c"), folded=(False, False), all_in=(False, False),
                         acted=(False, True), order=(0, 1), street_bets=1, committed=(0.0, 20.0),
                         total_committed=(60.0, 80.0), previous_round_bets=0, legal="fcr")
    assert SimulationPolicy(seed=1, trials=5).simulate(lone) is None
    fallback = SimulationPolicy(seed=1, trials=5).triple(lone)
    assert fallback == PokiFormulaPolicy().triple(lone)                # unweighted poki: nothing tracked
    assert fallback[0] == 0.0 and sum(fallback) == pytest.approx(1.0)


def test_reproducible_for_a_seed() -> None:
    s = play(HandState(HU, hole_cards=[parse_cards("Td9d"), parse_cards("AcQs")]), "rc/r", ["8d7s2h"])
    dp = s.decision_point()
    a = SimulationPolicy(seed=9, trials=30).simulate(dp)
    b = SimulationPolicy(seed=9, trials=30).simulate(dp)
    c = SimulationPolicy(seed=10, trials=30).simulate(dp)
    assert a is not None and b is not None and c is not None
    assert a == b
    assert (a.sums, a.squares) != (c.sums, c.squares)
    first = run_match(["simbot:trials=6", "poki"], 8, duplicate=True, seed=4, keep_payoffs=True)
    again = run_match(["simbot:trials=6", "poki"], 8, duplicate=True, seed=4, keep_payoffs=True)
    assert first.hand_payoffs == again.hand_payoffs


@pytest.mark.parametrize("players", [2, 3])
def test_every_decision_is_legal(players: int) -> None:
    """Random play around the bot (random opponents), 2 and 3 seats: at every decision the
    triple is a legal pure action, and the simulated action is one of the legal kinds."""
    game = preset("holdem.limit.2p") if players == 2 else preset("holdem.limit.3p")
    rng = random.Random(7)
    bot = SimulationPolicy(seed=2, trials=4)
    decisions = 0
    for deal in range(8):
        holes, board = deal_cards(13, deal, players)
        me = deal % players
        s = HandState(game, hole_cards=holes, hand_id=f"h{deal}")
        while not s.is_over:
            if s.needs_board:
                s.deal_board(board[len(s.board):len(s.board) + (3 if not s.board else 1)])
                continue
            dp = s.decision_point()
            if dp.position == me:
                t = bot.triple(dp)
                assert sum(t) == pytest.approx(1.0) and sorted(t) == [0.0, 0.0, 1.0]
                kind = "fcr"[t.index(1.0)]
                assert kind in dp.legal
                if bot.last is not None:
                    assert bot.last.best == kind and set(bot.last.actions) == set(dp.legal)
                decisions += 1
            else:
                kind = rng.choice(dp.legal)
            s.act(kind)
        bot.last = None
    assert decisions >= 8


def test_plays_in_cbr_match() -> None:
    r = runner.invoke(app, ["match", "--players", "simbot:trials=5,poki", "--hands", "6", "--duplicate",
                            "--seed", "3", "--json"])
    assert r.exit_code == 0, r.output
    assert '"name": "simbot/trials=5"' in r.output and '"policy": "simbot:trials=5"' in r.output
    three = run_match(["simbot:trials=4:preflop=false", "poki-wt", "lag"], 6, seed=2)
    assert three.hands == 6 and sum(p.total for p in three.players) == pytest.approx(0.0)
