"""The Waterloo bot's showdown model and the Phase III bots (issue 9, section 6): action
patterns and mu/delta worked by hand, algorithm 8's three bands, the fall-back to Phase II
below 10 samples, learning from a real hand record, and plugins playing real matches."""
from __future__ import annotations

import random
import statistics

import pytest

import evaluator_ext as ev
from cbr.game import HandState, preset
from cbr.models.predictor import prefix_decisions
from cbr.play.match import play_hand, run_match, seen_by
from cbr.policies.base import Policy, legal_triple
from cbr.policies.phase3 import (
    MIN_SAMPLES,
    AggressivePhase3Policy,
    Phase3Policy,
    ShowdownModel,
    ShowdownModelError,
    action_pattern,
    opponent_key,
    opponent_strength,
    street_token,
)
from cbr.policies.rules import EHSPolicy
from cbr.policies.spec import policy_from_spec
from evaluator_ext.cards import parse_cards
from evaluator_ext.preflop_odds import preflop_win

HU = preset("holdem.limit.2p")


def flop_decision(pre: str, flop: str, holes=("KhQh", "9c9d"), board="9s2c7h"):
    """A heads-up hand played to a flop decision: ``pre`` and ``flop`` are the actions."""
    s = HandState(HU, hole_cards=[parse_cards(h) for h in holes])
    for a in pre:
        s.act(a)
    s.deal_board(tuple(parse_cards(board)))
    for a in flop:
        s.act(a)
    return s, s.decision_point()


# ---- patterns and the model -------------------------------------------------------------
def test_street_tokens_worked_by_hand() -> None:
    # pre-flop: the small blind (position 1) raises, the big blind (0) re-raises, the SB calls;
    # flop: the BB bets. Now the SB decides.
    _, dp = flop_decision("rrc", "r")
    made = prefix_decisions(dp)
    # SB put in 3 small bets pre-flop (raised): RN; BB 3 bets with a raise: RN; flop BB bet 1: RF
    assert street_token(made, 1, 0) == "RN" and street_token(made, 0, 0) == "RN"
    assert street_token(made, 0, 1) == "RF" and street_token(made, 1, 1) == "-"
    assert action_pattern(made, 0, 1) == ("RN", "RF")
    s = HandState(HU, hole_cards=[parse_cards("KhQh"), parse_cards("9c9d")])
    s.act("c")                                 # the SB limps: 1 small bet in, few
    assert street_token(prefix_decisions(s.decision_point()), 1, 0) == "CF"
    _, dp3 = flop_decision("rc", "c")          # pre-flop the BB called a raise: 2 bets, moderate
    assert street_token(prefix_decisions(dp3), 0, 0) == "CM"


def test_mu_delta_and_min_samples() -> None:
    values = [0.31, 0.52, 0.47, 0.90, 0.66, 0.12, 0.75, 0.40, 0.58, 0.81]
    m = ShowdownModel()
    for v in values[:-1]:
        m.add("+1", ("RF",), v)
    assert m.count("+1", ("RF",)) == MIN_SAMPLES - 1 and m.stats("+1", ("RF",)) is None
    m.add("+1", ("RF",), values[-1])
    mu, delta, n = m.stats("+1", ("RF",))
    assert n == 10
    assert mu == pytest.approx(statistics.fmean(values))
    assert delta == pytest.approx(statistics.pstdev(values))
    assert m.stats("+2", ("RF",)) is None and m.stats("+1", ("CF",)) is None
    with pytest.raises(ShowdownModelError):
        ShowdownModel(min_samples=0)
    assert opponent_key(0, 1, 2) == opponent_key(1, 0, 2) == "+1"


def test_opponent_strength_is_hs_against_one_hand() -> None:
    hole, board = parse_cards("9c9d"), parse_cards("9s2c7h")
    assert opponent_strength(hole, board) == pytest.approx(float(ev.hand_strength(tuple(hole), tuple(board), 1)))
    assert opponent_strength(hole, ()) == pytest.approx(preflop_win(tuple(hole), 1))


# ---- algorithm 8 -------------------------------------------------------------------------
def teach(bot: Phase3Policy, dp, mu: float, delta: float, n: int = MIN_SAMPLES) -> None:
    """Give the bot ``n`` samples of the opponent's current pattern with mean ``mu`` and
    population deviation ``delta`` (half at mu - delta, half at mu + delta)."""
    opp = 1 - dp.position
    pattern = action_pattern(prefix_decisions(dp), opp, dp.street)
    for i in range(n):
        bot.model.add(opponent_key(dp.position, opp, 2), pattern, mu + (delta if i % 2 else -delta))


def test_algorithm_8_bands_and_the_fallback() -> None:
    _, dp = flop_decision("rc", "r")           # the SB (KhQh) faces a flop bet from the BB
    phase2 = EHSPolicy()
    ehs = phase2.ehs(dp)
    # no samples, or 9: exactly the Phase II bot
    bot = Phase3Policy()
    assert bot.triple(dp) == phase2.triple(dp)
    teach(bot, dp, mu=ehs + 0.3, delta=0.1, n=MIN_SAMPLES - 1)
    assert bot.triple(dp) == phase2.triple(dp) and bot.model_decisions == 0
    cases = [  # (mu, delta, conservative, aggressive)
        (ehs + 0.3, 0.1, (1.0, 0.0, 0.0), (0.5, 0.0, 0.5)),    # EHS < mu - delta: fold / raise half the time
        (ehs + 0.05, 0.1, (0.0, 1.0, 0.0), (0.0, 1.0, 0.0)),   # mu - delta <= EHS < mu: call
        (ehs - 0.05, 0.1, (0.0, 0.0, 1.0), (0.0, 0.0, 1.0)),   # EHS >= mu: raise
        (ehs - 0.30, 0.1, (0.0, 0.0, 1.0), (0.0, 0.0, 1.0)),   # EHS > mu + delta: raise
    ]
    for mu, delta, conservative, aggressive in cases:
        for cls, want in ((Phase3Policy, conservative), (AggressivePhase3Policy, aggressive)):
            b = cls()
            teach(b, dp, mu, delta)
            assert b.triple(dp) == pytest.approx(want), (cls.__name__, mu - ehs)
            assert b.model_decisions == 1
    # pre-flop the model is off unless asked for
    s = HandState(HU, hole_cards=[parse_cards("KhQh"), parse_cards("9c9d")])
    pre = s.decision_point()
    b = Phase3Policy()
    teach(b, pre, mu=0.99, delta=0.001)
    assert b.triple(pre) == phase2.triple(pre)
    b2 = Phase3Policy(preflop=True)
    teach(b2, pre, mu=0.99, delta=0.001)
    assert b2.triple(pre) == legal_triple((1.0, 0.0, 0.0), pre.legal)


def test_a_fold_band_facing_nothing_checks() -> None:
    _, dp = flop_decision("rc", "")           # the BB acts first on the flop: nothing to call
    bot = Phase3Policy()
    teach(bot, dp, mu=0.99, delta=0.001)
    assert dp.to_call == 0 and bot.triple(dp) == (0.0, 1.0, 0.0)


# ---- learning from records ------------------------------------------------------------------
class Script(Policy):
    """Plays a fixed list of actions (a real policy object, for a hand-made record)."""

    name = "script"

    def __init__(self, actions: str) -> None:
        super().__init__()
        self.actions = list(actions)

    def triple(self, dp):
        kind = self.actions.pop(0)
        return legal_triple(tuple(float(kind == k) for k in "fcr"), dp.legal)


def test_observe_learns_the_shown_strength_at_each_of_our_decisions() -> None:
    holes = [parse_cards("9c9d"), parse_cards("KhQh")]
    board = parse_cards("9s2c7hAd3s")
    # position 1 (SB, "me") raises, the BB calls; flop: BB bets, I call; turn and river: check, check
    rec = play_hand(HU, [Script("crcc"), Script("rccc")], ["opp", "me"],
                    [random.Random(0), random.Random(1)], holes, board)
    seen = seen_by(rec, 1)
    assert seen.hole_cards[0] is not None      # a showdown: the opponent's cards are shown
    model = ShowdownModel(min_samples=1)
    added = model.observe(seen, 1)
    # my decisions: pre-flop (opponent not acted yet), flop facing his bet, turn, river
    expect = {
        ("-",): preflop_win(tuple(holes[0]), 1),
        ("CM", "RF"): float(ev.hand_strength(tuple(holes[0]), tuple(board[:3]), 1)),
        ("CM", "RF", "CF"): float(ev.hand_strength(tuple(holes[0]), tuple(board[:4]), 1)),
        ("CM", "RF", "CF", "CF"): float(ev.hand_strength(tuple(holes[0]), tuple(board), 1)),
    }
    assert added == len(expect)
    assert model.patterns("+1") == {k: 1 for k in expect}
    for pattern, hs in expect.items():
        assert model.stats("+1", pattern)[0] == pytest.approx(hs)
    # a hand that ended in a fold shows no cards: nothing learned
    rec2 = play_hand(HU, [Script("f"), Script("r")], ["opp", "me"], [random.Random(0)] * 2, holes, board)
    assert model.observe(seen_by(rec2, 1), 1) == 0


# ---- plugins in matches ---------------------------------------------------------------------
def test_plugins_play_and_learn_during_a_match() -> None:
    bot = Phase3Policy(min_samples=5)
    result = run_match([bot, "ehs"], 300, duplicate=True, seed=4)
    assert result.hands == 300 and result.players[0].policy == "phase3"
    assert bot.model.players() == ["+1"] and bot.model_decisions > 0
    assert 0 < bot.model_decisions < bot.decisions
    r2 = run_match(["phase3-aggressive:min-samples=12", "phase3:preflop=true"], 40, seed=2)
    assert [p.policy for p in r2.players] == ["phase3-aggressive:min-samples=12", "phase3:preflop=true"]  # the specs
    assert policy_from_spec("phase3-aggressive").variant == "aggressive"
    with pytest.raises(ValueError, match="variant"):
        policy_from_spec("phase3:variant=reckless")
    # reset (a new match) forgets the model
    bot.reset()
    assert bot.model.players() == [] and bot.decisions == 0


@pytest.mark.parametrize("cls", [Phase3Policy, AggressivePhase3Policy])
def test_the_docstring_says_the_options_the_bot_takes(cls) -> None:
    """Phase3Policy's docstring said "Other options are the ``ehs`` bot's", but a policy spec
    refuses them (`phase3:raise-ehs=0.7`: no option 'raise_ehs'): the options of the docstring's
    Options paragraph are those a spec takes (the constructor's keywords, OPTION_HELP's lines),
    and any bot it says options come from has every one of them taken too."""
    import inspect
    import re

    from cbr.policies.spec import PolicySpecError, policy_option_help, policy_options

    doc = " ".join(inspect.getdoc(Phase3Policy).split())
    options = doc[doc.index("Options"):].split(">>>")[0]
    assert set(policy_options(cls.name)) == set(policy_option_help(cls.name)) == {"variant", "min_samples", "preflop"}
    for key in policy_options(cls.name):
        assert f"``{key}``" in options, (key, options)
    for other in re.findall(r"options are the ``([\w-]+)`` bot's", options):
        for key, default in policy_options(other).items():
            try:
                policy_from_spec(f"{cls.name}:{key.replace('_', '-')}={default}")
            except PolicySpecError as exc:
                raise AssertionError(f"the docstring says {cls.name} takes {other}'s {key}: {exc}") from None
