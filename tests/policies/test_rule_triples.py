"""The rule bots' batched triples (:meth:`cbr.policies.rules.RuleBot.triples`: the rules as
array operations on per-holding HS, potentials and pre-flop strengths) are exactly the triples
of one holding at a time (:meth:`Policy.triples`, the default), on every street, heads-up and
multi-way, facing a bet or not, for every legal set; asking changes nothing the bot answers
for its own cards; the vectorised :func:`legal_triples` is :func:`legal_triple` row by row."""
from __future__ import annotations

import random
from dataclasses import replace
from itertools import combinations

import numpy as np
import pytest

import evaluator_ext as ev
from cbr.game import preset
from cbr.game.state import HandState
from cbr.models.predictor import prefix_decisions
from cbr.policies.base import Policy, legal_triple, legal_triples, sample_action
from cbr.policies.phase3 import AggressivePhase3Policy, Phase3Policy, action_pattern, opponent_key
from cbr.policies.poki_wt import PokiWeightTablePolicy
from cbr.policies.rock import RockPolicy
from cbr.policies.rules import (
    EHSPolicy,
    HandStrengthPolicy,
    LooseAggressivePolicy,
    PokiFormulaPolicy,
    RuleBot,
    StationPolicy,
    board_strengths,
    preflop_ranks,
    preflop_strengths,
)
from cbr.policies.simbot import SimulationPolicy
from evaluator_ext.preflop_odds import heads_up_equivalent, preflop_best_hand, preflop_win

BOTS = [
    (HandStrengthPolicy, {}),
    (HandStrengthPolicy, {"raise_rank": 10, "call_rank": 60, "raise_hs": 0.7, "call_hs": 0.5}),
    (EHSPolicy, {}),
    (EHSPolicy, {"raise_ehs": 0.8, "bluff_rate": 0.5, "semibluff_rate": 0.5, "bluff_ehs": 0.35,
                 "semibluff_ppot": 0.15, "bluff_pot": 30.0}),
    (PokiFormulaPolicy, {}),
    (PokiFormulaPolicy, {"raise_base": 0.5, "raise_step": 0.1, "width": 0.3}),
    (LooseAggressivePolicy, {}),
    (LooseAggressivePolicy, {"draw_ppot": 0.1, "looseness": 1.3, "stab_rate": 0.3}),
    (StationPolicy, {}),
    (StationPolicy, {"nuts": 0.8, "preflop_nuts": 0.6}),
    (RockPolicy, {}),
    (RockPolicy, {"nuts": 0.75, "call_ehs": 0.4, "raise_rank": 20, "call_rank": 80}),
]
GAMES = ["holdem.limit.2p", "holdem.limit.3p", "irc.10-20.4p", "irc.10-20.5p", "irc.10-20.6p"]
LEGALS = ["fcr", "cr", "fc", "c", "r", "f", "fr"]


def _decision_points(seed: int) -> list:
    """Every decision point of a few random hands of each game (folds, calls and raises)."""
    rng = random.Random(seed)
    out = []
    for game_name in GAMES:
        game = preset(game_name)
        for _ in range(3):
            deck = list(range(52))
            rng.shuffle(deck)
            n = game.n_players
            holes = [(deck[2 * i], deck[2 * i + 1]) for i in range(n)]
            board = deck[2 * n:2 * n + 5]
            s = HandState(game, hole_cards=holes)
            mix = (rng.uniform(0.0, 0.2), rng.uniform(0.3, 0.7), rng.uniform(0.1, 0.5))
            while not s.is_over:
                if s.needs_board:
                    have = len(s.board)
                    s.deal_board(board[have:3 if have == 0 else have + 1])
                    continue
                dp = s.decision_point()
                out.append(dp)
                s.act(sample_action(legal_triple(mix, dp.legal), rng))
    return out


DPS = _decision_points(7)


def _open(dp) -> list[tuple[int, int]]:
    return [h for h in combinations(range(52), 2) if not set(h) & set(dp.board)]


def _spots(per_street: int, seed: int) -> list:
    """Up to ``per_street`` decision points of each street, multi-way ones included."""
    rng = random.Random(seed)
    out = []
    for street in range(4):
        some = [dp for dp in DPS if dp.street == street]
        rng.shuffle(some)
        out += some[:per_street]
    return out


def test_the_decision_points_cover_what_the_rules_branch_on() -> None:
    spots = _spots(12, 1)
    assert {dp.street for dp in spots} == {0, 1, 2, 3}
    assert any(dp.players_dealt > 2 and any(dp.folded) for dp in spots)
    assert any(dp.to_call > 0 for dp in spots) and any(dp.to_call <= 0 for dp in spots)
    assert {dp.legal for dp in spots} >= {"fcr", "cr", "fc"}


@pytest.mark.parametrize("cls,options", BOTS, ids=[f"{c.name}{i}" for i, (c, _) in enumerate(BOTS)])
def test_batched_rules_are_the_one_holding_at_a_time_rules(cls, options) -> None:
    rng = np.random.default_rng(len(options) + len(cls.name))
    assert cls._batchable()
    batch, single = cls(seed=3, **options), cls(seed=3, **options)
    for i, dp in enumerate(_spots(12, 2)):
        for legal in (dp.legal, LEGALS[i % len(LEGALS)]):
            spot = replace(dp, legal=legal)
            own = single.triple(spot)
            open_h = _open(spot)
            holes = [open_h[j] for j in rng.choice(len(open_h), 40, replace=False)]
            got = batch.triples(spot, holes)
            want = Policy.triples(single, spot, holes)
            assert got.shape == (40, 3)
            assert np.array_equal(got, want), (cls.name, spot.street, spot.players_dealt, legal)
            assert np.allclose(got.sum(axis=1), 1.0)
            assert np.all(got[:, [k not in legal for k in "fcr"]] == 0.0)
            assert batch.triple(spot) == own == single.triple(spot)       # asking changed nothing


@pytest.mark.parametrize("cls,options", BOTS[::2], ids=[c.name for c, _ in BOTS[::2]])
def test_every_holding_of_a_board_at_once(cls, options) -> None:
    """All the holdings of a board, what LBR asks: the flop and turn values from one native
    pass (HS alone from :func:`board_strengths` for bots that read no potential), the river's
    from :func:`board_strengths`, pre-flop one per hand class; each equal to
    the bot's own rules holding by holding on a bot that computes its values one at a time."""
    spots = [dp for dp in _spots(3, 3)]
    for dp in spots:
        holes = _open(dp)
        batch = cls(seed=3, **options)
        got = batch.triples(dp, holes)
        assert np.array_equal(got, Policy.triples(batch, dp, holes))      # the same cached values
        if dp.street in (1, 2) and cls in (HandStrengthPolicy, StationPolicy):
            assert all(v[1] is None for v in batch._cache.values())      # no potentials computed
        if dp.street in (0, 3) or cls in (HandStrengthPolicy, StationPolicy):   # HS alone: cheap
            fresh = cls(seed=3, **options)
            assert np.array_equal(got, Policy.triples(fresh, dp, holes)), (cls.name, dp.street)


def test_potentials_after_hs_alone_come_from_one_pass_too() -> None:
    """Holdings whose HS alone a batch computed get their potentials from the native pass when
    a later batch reads them, the same values as one at a time."""
    dp = next(dp for dp in DPS if dp.street == 1 and dp.to_call > 0)
    holes = _open(dp)[::7]
    assert len(holes) >= 100
    bot = EHSPolicy()
    bot._prefill(dp, holes, potential=False)
    assert len(bot._cache) == len(holes) and all(v[1] is None for v in bot._cache.values())
    got = bot.triples(dp, holes)
    assert all(v[1] is not None for v in bot._cache.values())
    assert np.array_equal(got, Policy.triples(EHSPolicy(), dp, holes))


def test_the_batched_values_are_the_one_holding_values() -> None:
    rng = random.Random(5)
    for size in (3, 4, 5, 5):
        deck = list(range(52))
        rng.shuffle(deck)
        board = tuple(deck[:size])
        holes = np.array([h for h in combinations(range(52), 2) if not set(h) & set(board)])
        want = [ev.hand_strength(tuple(h), board, n_opponents=1) for h in holes.tolist()]
        assert board_strengths(holes, board).tolist() == want
    holes = np.array(list(combinations(range(52), 2)))
    assert preflop_ranks(holes).tolist() == [ev.preflop_rank(tuple(h)) for h in holes.tolist()]
    some = holes[::7]
    assert preflop_strengths(some, 1).tolist() == [preflop_win(tuple(h), 1) for h in some.tolist()]
    assert preflop_strengths(some, 3).tolist() == [heads_up_equivalent(preflop_best_hand(tuple(h), 3))
                                                   for h in some.tolist()]


@pytest.mark.parametrize("cls", [EHSPolicy, PokiFormulaPolicy, LooseAggressivePolicy, RockPolicy])
def test_without_the_native_kernels_the_rules_run_on_values_one_at_a_time(cls, monkeypatch) -> None:
    monkeypatch.setattr(ev, "IMPLEMENTATION", "reference", raising=False)
    dp = next(dp for dp in DPS if dp.street == 2)
    holes = _open(dp)[:150]
    batch, single = cls(seed=3), cls(seed=3)
    got = batch.triples(dp, holes)
    assert len(batch._cache) == len(holes)              # no pass over the board: one by one
    assert np.array_equal(got, Policy.triples(single, dp, holes))


def test_bots_that_change_the_rules_answer_holding_by_holding() -> None:
    class Timid(EHSPolicy):
        def postflop(self, dp):
            return (0.0, 1.0, 0.0)

    class Stronger(PokiFormulaPolicy):
        def ehs(self, dp):
            return min(1.0, super().ehs(dp) + 0.2)

    for cls in (Timid, Stronger, PokiWeightTablePolicy, SimulationPolicy):
        assert not cls._batchable(), cls
    assert not RuleBot._batchable()
    dp = next(dp for dp in DPS if dp.street == 1)
    holes = _open(dp)[:30]
    for cls in (Timid, Stronger):
        assert np.array_equal(cls().triples(dp, holes), Policy.triples(cls(), dp, holes))
    assert np.all(Timid().triples(dp, holes)[:, 1] == 1.0) or "c" not in dp.legal


def test_bad_holdings_are_reported_as_one_at_a_time() -> None:
    dp = next(dp for dp in DPS if dp.street == 1)
    with pytest.raises(Exception) as batched:
        EHSPolicy().triples(dp, [(dp.board[0], 51 if dp.board[0] != 51 else 50)])
    with pytest.raises(Exception) as single:
        Policy.triples(EHSPolicy(), dp, [(dp.board[0], 51 if dp.board[0] != 51 else 50)])
    assert type(batched.value) is type(single.value)
    assert EHSPolicy().triples(dp, []).shape == (0, 3)


@pytest.mark.parametrize("legal", LEGALS)
def test_legal_triples_is_legal_triple_row_by_row(legal: str) -> None:
    rng = np.random.default_rng(len(legal))
    values = np.array([0.0, -0.0, 1.0, 0.5, 0.25, -0.3, np.nan, 0.3, 0.7, 1 / 3, 2 / 3, 0.1, 0.2])
    rows = np.vstack([rng.choice(values, (3000, 3)), rng.random((500, 3)), rng.dirichlet([1, 1, 1], 500)])
    got = legal_triples(rows, legal)
    want = np.array([legal_triple(tuple(r), legal) for r in rows])
    assert np.array_equal(got, want)


@pytest.mark.parametrize("cls", [Phase3Policy, AggressivePhase3Policy])
@pytest.mark.parametrize("preflop", [False, True])
def test_phase3_batched_with_and_without_its_showdown_model(cls, preflop) -> None:
    """Algorithm 8 on the arrays where the opponent's pattern has samples (every band of
    ``mu +- delta`` met), the ``ehs`` rules where it has none; each holding counts as a decision."""
    assert cls._batchable()
    rng = np.random.default_rng(1)
    modelled = []
    for i, dp in enumerate(dp for dp in DPS if dp.players_dealt == 2):
        batch, single = cls(preflop=preflop), cls(preflop=preflop)
        if i % 3:
            opp = 1 - dp.position
            pattern = action_pattern(prefix_decisions(dp), opp, dp.street)
            mu, delta = (0.45, 0.15) if i % 3 == 1 else (0.7, 0.3)
            for bot in (batch, single):
                for k in range(bot.model.min_samples):
                    bot.model.add(opponent_key(dp.position, opp, 2), pattern, mu + (delta if k % 2 else -delta))
        open_h = _open(dp)
        holes = [open_h[j] for j in rng.choice(len(open_h), 60, replace=False)]
        got = batch.triples(dp, holes)
        assert np.array_equal(got, Policy.triples(single, dp, holes)), (dp.street, i % 3)
        assert (batch.decisions, batch.model_decisions) == (single.decisions, single.model_decisions)
        modelled.append(batch.model_decisions > 0)
    assert any(modelled) and not all(modelled)
