"""Policies: legal triples, sampling, and the rule bots' basic behaviour."""
from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evaluator_ext as ev
from cbr.errors import GameError, PluginError
from cbr.game import preset
from cbr.game.decision import DecisionPoint
from cbr.game.state import HandState
from cbr.plugins import available, load
from cbr.policies import Policy, legal_triple, make_policy, sample_action
from cbr.policies.baseline import AlwaysCallPolicy, AlwaysRaisePolicy, RandomPolicy
from cbr.policies.rules import EHSPolicy, HandStrengthPolicy, LooseAggressivePolicy, PokiFormulaPolicy
from evaluator_ext.cards import parse_cards

NATIVE = ev.IMPLEMENTATION == "native"
needs_native = pytest.mark.skipif(not NATIVE, reason="flop/turn hand potential is too slow in the pure-Python reference evaluator")
BUILTINS = {"random": RandomPolicy, "call": AlwaysCallPolicy, "raise": AlwaysRaisePolicy, "hs": HandStrengthPolicy,
            "ehs": EHSPolicy, "poki": PokiFormulaPolicy, "lag": LooseAggressivePolicy}


def river_dp(hole: str, board: str, *, to_call: float, pot_before: float, legal: str = "fcr",
             street_bets: int = 1, players: int = 2) -> DecisionPoint:
    """A river decision for position 0 facing ``to_call`` chips with ``pot_before`` already in."""
    game = preset("holdem.limit.2p") if players == 2 else preset("holdem.limit.3p")
    each = pot_before / players
    committed = [0.0] + [to_call] * (players - 1)
    total = [each] + [each + to_call] * (players - 1)
    return DecisionPoint(game=game, street=3, position=0, player="p1", hole=parse_cards(hole),
                         board=parse_cards(board), folded=(False,) * players, all_in=(False,) * players,
                         acted=(False,) + (True,) * (players - 1), order=tuple(range(players)),
                         street_bets=street_bets, committed=tuple(committed), total_committed=tuple(total),
                         previous_round_bets=1, legal=legal)


def preflop_dp(hole: str, *, raised: bool) -> DecisionPoint:
    """Heads-up pre-flop for the small blind (position 1), facing the big blind or a raise."""
    state = HandState(preset("holdem.limit.2p"), hole_cards=[parse_cards("2c3d"), parse_cards(hole)])
    if raised:
        state.act("r")      # the small blind raises ...
        state.act("r")      # ... the big blind re-raises: back to position 1
    return state.decision_point()


# ---------------------------------------------------------------- legal_triple / sampling
@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(min_value=-1, max_value=10) | st.just(math.nan), min_size=3, max_size=3),
       st.sampled_from(["fcr", "cr", "fc", "c", "r", "fr"]))
def test_legal_triple_is_a_distribution_over_the_legal_kinds(raw, legal):
    t = legal_triple(raw, legal)
    assert len(t) == 3
    assert all(p >= 0 for p in t)
    assert math.isclose(sum(t), 1.0, rel_tol=0, abs_tol=1e-12)
    for p, kind in zip(t, "fcr"):
        if kind not in legal:
            assert p == 0.0


def test_legal_triple_moves_illegal_mass_to_call():
    assert legal_triple((0.5, 0.2, 0.3), "cr") == pytest.approx((0.0, 0.7, 0.3))
    assert legal_triple((0.1, 0.2, 0.7), "fc") == pytest.approx((0.1, 0.9, 0.0))
    assert legal_triple((0.0, 0.0, 0.0), "fcr") == (0.0, 1.0, 0.0)


def test_legal_triple_rejects_nonsense():
    with pytest.raises(GameError):
        legal_triple((1, 0, 0), "")
    with pytest.raises(ValueError):
        legal_triple((1, 0), "fc")


def test_sample_action_frequencies_match_the_triple():
    n = 20_000
    triple = (0.2, 0.5, 0.3)
    rng = random.Random(7)
    counts = {"f": 0, "c": 0, "r": 0}
    for _ in range(n):
        counts[sample_action(triple, rng)] += 1
    for kind, p in zip("fcr", triple):
        assert abs(counts[kind] / n - p) <= 4 * math.sqrt(p * (1 - p) / n)


def test_sample_action_never_draws_a_zero_probability_kind():
    rng = random.Random(3)
    assert {sample_action((0.0, 1.0, 0.0), rng) for _ in range(500)} == {"c"}
    assert {sample_action((0.4, 0.6, 0.0), rng) for _ in range(500)} == {"f", "c"}


# ---------------------------------------------------------------- plugins and the base class
def test_every_builtin_bot_is_a_registered_plugin():
    assert set(BUILTINS) <= set(available("cbr.policies"))
    for name, cls in BUILTINS.items():
        assert load("cbr.policies", name) is cls
        bot = make_policy(name, seed=5)
        assert isinstance(bot, Policy) and bot.name == name and bot.seed == 5


def test_unknown_bot_names_the_known_ones():
    with pytest.raises(PluginError, match="ehs"):
        make_policy("no-such-bot")


def test_constructors_take_keywords_only():
    with pytest.raises(TypeError):
        EHSPolicy(3)  # type: ignore[misc]


def test_base_policy_needs_a_triple():
    dp = preflop_dp("AsAh", raised=False)
    with pytest.raises(NotImplementedError):
        Policy().act(dp, random.Random(0))


# ---------------------------------------------------------------- baselines
def test_baselines_on_a_fresh_and_a_capped_street():
    dp = preflop_dp("7c2d", raised=False)                 # facing the big blind: fcr
    assert RandomPolicy().triple(dp) == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert AlwaysCallPolicy().triple(dp) == (0.0, 1.0, 0.0)
    assert AlwaysRaisePolicy().triple(dp) == (0.0, 0.0, 1.0)
    state = HandState(preset("holdem.limit.2p"), hole_cards=[parse_cards("2c3d"), parse_cards("7c2d")])
    for _ in range(3):
        state.act("r")                                    # capped pre-flop: 3 raises
    capped = state.decision_point()
    assert capped.legal == "fc"
    assert AlwaysRaisePolicy().triple(capped) == (0.0, 1.0, 0.0)
    assert RandomPolicy().triple(capped) == pytest.approx((0.5, 0.5, 0.0))


def test_random_policy_never_folds_when_it_can_check():
    state = HandState(preset("holdem.limit.2p"), hole_cards=[parse_cards("2c3d"), parse_cards("7c2d")])
    state.act("c")                                        # small blind completes; big blind may check
    dp = state.decision_point()
    assert dp.legal == "cr"
    assert RandomPolicy().triple(dp) == pytest.approx((0.0, 0.5, 0.5))


# ---------------------------------------------------------------- rule bots
RIVER_CASES = [
    ("AhKh", "QhJhTh2c3d"),   # royal flush
    ("7c2d", "AhKs9d4c3h"),   # seven high
    ("9s9d", "9h5c5d2sKh"),   # full house
    ("QsJs", "Kd8h4c3s2d"),   # queen high
]


@pytest.mark.parametrize("name", sorted(BUILTINS))
@pytest.mark.parametrize("hole,board", RIVER_CASES)
@pytest.mark.parametrize("legal,to_call", [("fcr", 20.0), ("cr", 0.0), ("fc", 20.0)])
def test_triples_are_legal_on_the_river(name, hole, board, legal, to_call):
    t = make_policy(name).triple(river_dp(hole, board, to_call=to_call, pot_before=80, legal=legal))
    assert math.isclose(sum(t), 1.0, abs_tol=1e-12) and all(p >= 0 for p in t)
    assert all(p == 0 for p, k in zip(t, "fcr") if k not in legal)


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_triples_are_legal_pre_flop(name):
    for hole in ("AsAh", "7c2d", "KdQd", "5h5s"):
        for raised in (False, True):
            dp = preflop_dp(hole, raised=raised)
            t = make_policy(name).triple(dp)
            assert math.isclose(sum(t), 1.0, abs_tol=1e-12)
            assert all(p == 0 for p, k in zip(t, "fcr") if k not in dp.legal)


@pytest.mark.parametrize("cls", [EHSPolicy, HandStrengthPolicy, PokiFormulaPolicy, LooseAggressivePolicy])
def test_rule_bots_raise_the_nuts(cls):
    dp = river_dp("AhKh", "QhJhTh2c3d", to_call=20, pot_before=80)
    assert cls().triple(dp) == (0.0, 0.0, 1.0)


@pytest.mark.parametrize("cls", [EHSPolicy, HandStrengthPolicy, PokiFormulaPolicy])
def test_rule_bots_fold_trash_to_a_river_bet(cls):
    # Seven high on an ace-high board, a bet into a 200-chip pot (20 sb: too big to bluff).
    dp = river_dp("7c2d", "AhKs9d4c3h", to_call=20, pot_before=200)
    assert ev.hand_strength(dp.hole, dp.board) < 0.1
    assert cls().triple(dp) == (1.0, 0.0, 0.0)


def test_ehs_bot_calls_a_river_bet_when_the_pot_odds_are_right():
    # Queen high (HS about 0.3) facing 20 into 400: pot odds 20/420, call rather than fold.
    dp = river_dp("QsJs", "Kd8h4c3s2d", to_call=20, pot_before=400)
    hs = ev.hand_strength(dp.hole, dp.board)
    assert 0.2 <= hs < 0.4 and hs > dp.pot_odds
    assert EHSPolicy().triple(dp) == (0.0, 1.0, 0.0)


def test_ehs_bot_bluffs_at_the_seed_rate_only_into_a_small_pot():
    small = river_dp("7c2d", "AhKs9d4c3h", to_call=0, pot_before=40, legal="cr", street_bets=0)
    big = river_dp("7c2d", "AhKs9d4c3h", to_call=0, pot_before=200, legal="cr", street_bets=0)
    for rate in (0.2, 0.5, 0.8):
        assert EHSPolicy(bluff_rate=rate).triple(small) == pytest.approx((0.0, 1 - rate, rate))
        assert EHSPolicy(bluff_rate=rate).triple(big) == (0.0, 1.0, 0.0)


def test_ehs_pre_flop_follows_algorithm_3():
    bot = EHSPolicy()
    assert bot.triple(preflop_dp("AsAh", raised=False)) == (0.0, 0.0, 1.0)
    # The small blind is first to act (position 0 of the order): threshold = P(win).
    assert bot.triple(preflop_dp("7c2d", raised=False)) == (0.0, 1.0, 0.0)


def test_hand_strength_bot_folds_trash_pre_flop_to_a_raise():
    assert HandStrengthPolicy().triple(preflop_dp("7c2d", raised=True)) == (1.0, 0.0, 0.0)
    assert HandStrengthPolicy().triple(preflop_dp("AsAh", raised=True)) == (0.0, 0.0, 1.0)


def test_poki_formula_raises_more_with_stronger_hands():
    board = "Kd8h4c3s2d"
    holes = ["7c5d", "QsJs", "Ks9c", "KhKc", "Ac5h"]
    by_hs = sorted(holes, key=lambda h: ev.hand_strength(h, board))
    raises = [PokiFormulaPolicy().triple(river_dp(h, board, to_call=20, pot_before=80))[2] for h in by_hs]
    assert raises == sorted(raises) and raises[0] == 0.0 and raises[-1] == 1.0


def test_hand_evaluation_is_cached_per_street(monkeypatch):
    calls = []
    real_hs, real_pot = ev.hand_strength, ev.hand_potential

    def counting_hs(hole, board, n_opponents=1):
        calls.append(("hs", tuple(hole), tuple(board)))
        return real_hs(hole, board, n_opponents)

    def counting_pot(hole, board):
        calls.append(("pot", tuple(hole), tuple(board)))
        return real_pot(hole, board)

    monkeypatch.setattr(ev, "hand_strength", counting_hs)
    monkeypatch.setattr(ev, "hand_potential", counting_pot)
    bot = EHSPolicy()
    river = river_dp("QsJs", "Kd8h4c3s2d", to_call=20, pot_before=80)
    turn = DecisionPoint(**{**vars(river), "street": 2, "board": river.board[:4]})
    for _ in range(5):
        bot.triple(river)
        bot.triple(turn)
    assert sorted(c[0] for c in calls) == ["hs", "hs", "pot"]     # once per street; no PPOT on the river
    bot.reset()
    bot.triple(river)
    assert len(calls) == 4
    calls.clear()
    HandStrengthPolicy().triple(turn)                              # Phase I never needs the potential
    assert [c[0] for c in calls] == ["hs"]


def test_multiway_strength_uses_hs_to_the_power_of_opponents():
    bot = EHSPolicy()
    hu = river_dp("QsJs", "Kd8h4c3s2d", to_call=20, pot_before=80)
    three = river_dp("QsJs", "Kd8h4c3s2d", to_call=20, pot_before=80, players=3)
    hs = ev.hand_strength(hu.hole, hu.board)
    assert bot.ehs(hu) == pytest.approx(hs)
    assert bot.ehs(three) == pytest.approx(hs ** 2)


@needs_native
@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_triples_are_legal_in_played_hands(name):
    """Every decision a bot meets in real play (all streets) gets a legal triple."""
    from cbr.match import deal_cards

    bot, other = make_policy(name), RandomPolicy()
    rng = random.Random(11)
    seen = 0
    for deal in range(30):
        holes, board = deal_cards(99, deal, 2)
        state = HandState(preset("holdem.limit.2p"), hole_cards=holes)
        while not state.is_over:
            if state.needs_board:
                state.deal_board(board[: (3, 4, 5)[state.street]][len(state.board):])
                continue
            dp = state.decision_point()
            policy = bot if dp.position == deal % 2 else other
            t = policy.triple(dp)
            assert math.isclose(sum(t), 1.0, abs_tol=1e-12)
            assert all(p == 0 for p, k in zip(t, "fcr") if k not in dp.legal)
            seen += dp.street > 0
            state.act(policy.act(dp, rng))
    assert seen > 20
