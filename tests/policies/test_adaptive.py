"""The adaptive bot: the safe expert until it knows its opponent, then the expert the nearest
style cases say beats that style; a change of style is followed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from cbr.errors import ConfigError
from cbr.play.match import run_match
from cbr.policies.adaptive import AdaptivePolicy, StyleCases, load_style_cases

MANIAC = (1.0, 1.0, 0.95, 0.0)
STATION = (1.0, 0.0, 0.0, 0.0)


@pytest.fixture
def cases_file(tmp_path):
    path = tmp_path / "styles.json"
    path.write_text(json.dumps({"experts": ["cbr:preset=expert", "ehs", "poki"], "cases": [
        {"name": "raise", "style": list(MANIAC), "sb": {"cbr:preset=expert": 1.7, "ehs": 3.5, "poki": 2.9}},
        {"name": "call", "style": list(STATION), "sb": {"cbr:preset=expert": 0.68, "ehs": 1.07, "poki": 1.6}},
        {"name": "cfr", "style": [0.8, 0.5, 0.4, 0.3], "sb": {"cbr:preset=expert": -0.03, "ehs": -0.4, "poki": -0.3}}]}))
    return str(path)


def test_nearest_case_votes_and_far_styles_are_told():
    cases = StyleCases(["a", "b"], [("x", (0.0, 0.0, 0.0, 0.0), {"a": 1.0, "b": 0.0}),
                                    ("y", (1.0, 1.0, 1.0, 1.0), {"a": 0.0, "b": 1.0})])
    expect, sim, used = cases.expected((0.9, 1.0, 1.0, None), k=1)
    assert used == ["y"] and expect.tolist() == [0.0, 1.0] and sim == pytest.approx(1 - 0.1 / 3)
    expect, _, _ = cases.expected((0.5, 0.5, 0.5, 0.5), k=2)   # equidistant: the mean
    assert expect.tolist() == [0.5, 0.5]
    # a far second case has no say: the nearest decides (the mean would have picked b over a)
    expect, _, _ = cases.expected((0.1, 0.1, 0.1, 0.1), k=2, bandwidth=0.02)
    assert expect[0] > 0.999 and expect[1] < 0.001


def test_starts_safe_then_plays_the_expert_for_the_style(cases_file):
    bot = AdaptivePolicy(seed=1, styles=cases_file, warmup=30)
    try:
        run_match([bot, "raise"], 120, seed=5)
        first = [e for _, e in bot.chosen[:40]]
        last = [e for _, e in bot.chosen[-40:]]
        assert set(first[:5]) == {"cbr:preset=expert"}                  # no evidence yet: the safe expert
        assert set(last) == {"ehs"}                       # a maniac: the expert that beats maniacs
        bot.reset()
        run_match([bot, "call"], 120, seed=6)
        assert {e for _, e in bot.chosen[-30:]} == {"poki"}
    finally:
        bot.close()


def test_stays_safe_without_a_clear_gain_or_a_near_case(cases_file):
    bot = AdaptivePolicy(seed=1, styles=cases_file, warmup=30, min_gain=1.0)
    try:
        run_match([bot, "call"], 100, seed=5)             # poki's gain over cbr is 0.92 < 1.0
        assert {e for _, e in bot.chosen} == {"cbr:preset=expert"}
        strict = AdaptivePolicy(seed=1, styles=cases_file, warmup=30, min_similarity=0.999)
        run_match([strict, "lag"], 100, seed=5)           # no style case is that near a lag
        assert {e for _, e in strict.chosen} == {"cbr:preset=expert"}
        strict.close()
    finally:
        bot.close()


def test_after_the_warm_up_the_fallback_plays_without_a_clear_gain_or_a_near_case(tmp_path, cases_file):
    """The safe expert plays the warm-up; after it, without evidence for another expert, the
    fallback plays: with no expert expected to win ``min_gain`` more than it, and against a style
    far from every style case. Its decisions say why. A file without a fallback falls back to
    its safe expert (as before fallbacks), and one naming an expert it does not rate is refused."""
    data = json.loads(open(cases_file).read())
    path = tmp_path / "with-fallback.json"
    path.write_text(json.dumps({**data, "safe": "poki", "fallback": "cbr:preset=expert"}))
    bot = AdaptivePolicy(seed=1, styles=str(path), warmup=30, min_gain=1.0)
    strict = AdaptivePolicy(seed=1, styles=str(path), warmup=30, min_similarity=0.999)
    try:
        assert (bot.safe, bot.fallback) == ("poki", "cbr:preset=expert")
        run_match([bot, "call"], 100, seed=5)                 # ehs +1.07, poki +1.6: neither 1.0 over cbr's 0.68
        chosen = [e for _, e in bot.chosen]
        warm = chosen.index("cbr:preset=expert")
        assert warm > 0 and set(chosen[:warm]) == {"poki"} and set(chosen[warm:]) == {"cbr:preset=expert"}
        assert "no expert expected to win 1 sb/h more than cbr:preset=expert" in bot.keep_reason("call")
        run_match([strict, "lag"], 100, seed=5)                 # no style case is that near a lag
        chosen = [e for _, e in strict.chosen]
        assert chosen[0] == "poki" and chosen[-1] == "cbr:preset=expert" and set(chosen) == {"poki", "cbr:preset=expert"}
        assert "is far from every style case" in strict.keep_reason("lag")
    finally:
        bot.close()
        strict.close()
    plain = AdaptivePolicy(styles=cases_file)
    assert plain.fallback == plain.safe == "cbr:preset=expert"
    plain.close()
    bad = tmp_path / "bad-fallback.json"
    bad.write_text(json.dumps({**data, "fallback": "raise"}))
    with pytest.raises(ConfigError, match="fallback expert 'raise' is not one they rate"):
        load_style_cases(str(bad))
    with pytest.raises(ConfigError, match="fallback: the style cases rate"):
        AdaptivePolicy(styles=cases_file, fallback="raise")


def test_the_case_based_options_and_a_new_case_base_reach_the_fallback_too():
    """Plain ``cbr``'s safe expert and its fallback are the one case base sampled two ways: the
    spec's case-based options shape both, and a case base it moves to (retention's copy, a
    server's handle) is the fallback's too; the other experts keep theirs."""
    from cbr.policies.spec import policy_from_spec
    from cbr.store import resolve_casebase

    bot = policy_from_spec("cbr:casebase=default:threshold=0.99", seed=1)
    try:
        safe, fallback = bot.experts[bot.safe], bot.experts[bot.fallback]
        assert (bot.safe, bot.fallback) == ("cbr:preset=imitate", "cbr:preset=expert")
        assert safe.casebase == fallback.casebase == "default" and safe.threshold == fallback.threshold == 0.99
        assert (safe.sharpen, fallback.sharpen) == (1.0, 4.0)
    finally:
        bot.close()
    bot = policy_from_spec("cbr", seed=1)
    try:
        casper = bot.experts["cbr:preset=casper"]
        before = Path(casper.casebase_path).resolve()
        bot.use_casebase("default")
        moved = {Path(bot.experts[e].casebase_path).resolve() for e in (bot.safe, bot.fallback)}
        assert moved == {resolve_casebase("default").resolve()}
        bot.use_casebase("expert")                                   # and back: both follow again
        assert {Path(bot.experts[e].casebase_path).resolve() for e in (bot.safe, bot.fallback)} == \
            {resolve_casebase("expert").resolve()}
        assert Path(casper.casebase_path).resolve() == before       # not the safe one's: left alone
    finally:
        bot.close()


def test_reports_name_each_expert_by_the_spec_that_plays_as_it():
    """`cbr:casebase=X` reported its warm-up expert as `cbr:preset=imitate`, which plays the
    expert case base, not X. The report names the spec with the options passed on to it, and
    that spec, played alone, plays the warm-up's hands as the bot did; the reasons name the
    fallback so too, and `cbr exploit`'s note on the frozen bot its warm-up bot."""
    from cbr.cli.exploit import _adaptive_start
    from cbr.policies.spec import policy_from_spec

    spec = "cbr:casebase=default:threshold=0.95"
    bot = policy_from_spec(spec, seed=2)
    try:
        assert bot.played_spec(bot.safe) == "cbr:preset=imitate:casebase=default:threshold=0.95"
        assert bot.played_spec(bot.fallback) == "cbr:preset=expert:casebase=default:threshold=0.95"
        assert bot.played_spec("cfr:strategy=counter_station") == "cfr:strategy=counter_station"  # no options
        hands = 30  # within the warm-up: the safe expert plays every hand
        adaptive = run_match([bot, "call"], hands, seed=3)
        choices = adaptive.players[0].experts
        assert [(c.expert, c.first_hand, c.last_hand) for c in choices] == \
            [("cbr:preset=imitate:casebase=default:threshold=0.95", 1, hands)]
        assert choices[0].to_dict()["expert"] == choices[0].expert
        alone = run_match([choices[0].expert, "call"], hands, seed=3)
        assert alone.players[0].total == adaptive.players[0].total
        assert run_match(["cbr:preset=imitate", "call"], hands, seed=3).players[0].total != adaptive.players[0].total
        run_match([bot, "call"], 80, seed=3)  # past the warm-up: the reasons compare with the fallback as played
        later = [c for c in bot.expert_choices if c.first_hand > 1]
        assert later and all("cbr:preset=expert:casebase=default:threshold=0.95" in c.why for c in later), \
            [c.why for c in later]
    finally:
        bot.close()
    assert _adaptive_start(spec).startswith(": its warm-up bot, cbr:preset=imitate:casebase=default:threshold=0.95,")


def test_follows_an_opponent_that_changes_style(cases_file):
    bot = AdaptivePolicy(seed=1, styles=cases_file, warmup=18, discount=0.95)   # the most 0.95 allows
    try:
        run_match([bot, "raise"], 120, seed=5)
        assert bot.chosen[-1][1] == "ehs"
        bot.chosen.clear()
        from cbr.policies.baseline import AlwaysCallPolicy

        class Renamed(AlwaysCallPolicy):
            name = "raise"                                # the same player, now a calling station

        run_match([bot, Renamed()], 200, seed=6)
        assert bot.chosen[-1][1] == "poki"
    finally:
        bot.close()


def test_a_warmup_the_discount_never_lets_the_count_reach_is_refused_with_both_numbers():
    """``adapt:warmup=1000`` played a warm-up of 90 without a word: at discount 0.99 an opponent's
    discounted count of hands levels off at 100. Now the spec is refused, naming both options, the
    largest warm-up the discount allows and the discount the warm-up needs; both work."""
    from cbr.policies.spec import PolicySpecError, policy_from_spec

    for spec, said in (("adapt:warmup=1000", "warmup=1000 is more than discount=0.99 allows: an opponent's "
                                             "discounted count of hands levels off at 100 and the warm-up may be "
                                             "at most 90% of it; give warmup=90 or less, or discount=0.9991 or more"),
                       ("adapt:warmup=91", "give warmup=90 or less, or discount=0.99011 or more"),
                       ("adapt:discount=0.95", "warmup=50 is more than discount=0.95 allows"),  # the default warm-up
                       ("adapt:discount=0.95", "give warmup=18 or less, or discount=0.982 or more")):
        with pytest.raises(PolicySpecError) as caught:
            policy_from_spec(spec)
        assert said in str(caught.value) and "\n" not in str(caught.value), caught.value
    for spec, warmup in (("adapt:warmup=90", 90), ("adapt:warmup=1000:discount=0.9991", 1000),
                         ("adapt:warmup=91:discount=0.99011", 91),
                         ("adapt:warmup=18:discount=0.95", 18), ("adapt:warmup=1000:discount=1", 1000)):
        bot = policy_from_spec(spec, seed=1)
        try:
            assert bot.warmup == warmup and bot.keep_reason("x") == f"x: 0.0 of the {warmup:,} hands of warm-up seen"
        finally:
            bot.close()


class Recorded(AdaptivePolicy):
    """The adaptive bot, with each decision's hand (the match's ``hand_id``) beside its record."""

    def __init__(self, **options):
        super().__init__(**options)
        self.hands_of_decisions: list[int] = []

    def decide(self, dp, rng=None):
        self.hands_of_decisions.append(int(dp.hand_id) + 1)    # numbered from 1, as the choices are
        return super().decide(dp, rng)

    def reset(self):
        super().reset()
        self.hands_of_decisions.clear()


def runs_of(bot: Recorded, heads_up: bool) -> list[tuple]:
    """The choices as the bot's per-decision record (``chosen``: opponent and expert) and the hands
    of its decisions say: per opponent, the stretches of hands with one expert, in order of their
    first hand; the first hand's unnamed opponent is the heads-up opponent, else None."""
    seen: dict = {}                                        # opponent -> [(hand, expert)] in order, once a hand
    for hand, (opp, expert) in zip(bot.hands_of_decisions, bot.chosen):
        seq = seen.setdefault(opp, [])
        if not seq or seq[-1] != (hand, expert):
            seq.append((hand, expert))
    if "" in seen:
        unnamed = seen.pop("")
        named = [o for o in seen] if heads_up else []
        key = named[0] if named else None
        seen[key] = unnamed + seen.get(key, [])
    runs = []
    for opp, seq in seen.items():
        for hand, expert in seq:
            if runs and runs[-1][0] == opp and runs[-1][1] == expert:     # opponents one after another
                runs[-1] = (opp, expert, runs[-1][2], hand, runs[-1][4] + 1)
            else:
                runs.append((opp, expert, hand, hand, 1))
    return sorted(runs, key=lambda r: (r[2], str(r[0])))


def test_its_choices_are_the_stretches_its_decisions_show(cases_file):
    """``expert_choices`` (what ``cbr match --json`` reports): per opponent, each expert with the
    hand it began, its last and the hands it played, as the per-decision record shows them; the
    first hand, before the bot knows its opponent, is the heads-up opponent's; a reset forgets."""
    bot = Recorded(seed=1, styles=cases_file, warmup=30)
    try:
        run_match([bot, "raise"], 120, seed=5)
        got = [(c.opponent, c.expert, c.first_hand, c.last_hand, c.hands) for c in bot.expert_choices]
        assert got == runs_of(bot, heads_up=True) and len(got) >= 2, got
        first, then = bot.expert_choices[0], bot.expert_choices[1]
        assert (first.opponent, first.expert, first.first_hand) == ("raise", bot.safe, 1)
        assert first.hands >= 30 and then.first_hand == first.last_hand + 1      # always-raise never folds first
        assert sum(c.hands for c in bot.expert_choices) == 120
        # the first hand's --why says "no opponent seen yet"; the stretch says what it was (heads-up: the warm-up)
        assert first.why == "raise: the warm-up (until 30 of its hands, discounted, are seen), by the safe expert"
        assert "raise" in then.why and "style case 'raise'" in then.why and then.to_dict()["expert"] == then.expert
        run_match([bot, "call", "fold"], 60, seed=6)      # three seats: the one still in (fold folds to a bet)
        got = [(c.opponent, c.expert, c.first_hand, c.last_hand, c.hands) for c in bot.expert_choices]
        assert [c[2] for c in got] == sorted(c[2] for c in got)                 # in the order they began
        assert sorted(got, key=lambda r: (r[2], str(r[0]))) == runs_of(bot, heads_up=False), got
        assert got[0][0] is None and got[0][2:4] == (1, 1)        # the first hand: not known whom it adapted to
        assert {c[0] for c in got} == {None, "call", "fold"}
        assert all(c[2] > 1 for c in got[1:])
    finally:
        bot.close()


def test_an_interrupted_match_reports_the_choices_of_the_hands_it_counted(cases_file):
    """A duplicate match stopped mid-deal reports whole deals; its seats' choices are those of a
    match of that many hands, not of the hands of the deal it left."""
    from cbr.play.match import interrupted_result
    from cbr.policies.baseline import AlwaysRaisePolicy

    class StopAt(AlwaysRaisePolicy):
        def act(self, dp, rng):
            if int(dp.hand_id) == 41:
                raise KeyboardInterrupt
            return super().act(dp, rng)

    bot = AdaptivePolicy(seed=1, styles=cases_file, warmup=10)
    try:
        with pytest.raises(KeyboardInterrupt) as caught:
            run_match([bot, StopAt()], 80, seed=3, duplicate=True)
    finally:
        bot.close()
    partial = interrupted_result(caught.value)
    assert partial is not None and partial.hands == 40                 # hand 41 began a deal it did not finish
    again = AdaptivePolicy(seed=1, styles=cases_file, warmup=10)
    try:
        whole = run_match([again, AlwaysRaisePolicy()], 40, seed=3, duplicate=True)
    finally:
        again.close()
    assert partial.players[0].experts == whole.players[0].experts and whole.players[0].experts
    assert sum(c.hands for c in whole.players[0].experts) == 40 and partial.players[1].experts == ()


def test_options_and_files_are_checked(tmp_path, cases_file):
    with pytest.raises(ConfigError, match="not call, fold"):
        AdaptivePolicy(styles=cases_file, experts="call+fold")  # no win rates: never chosen
    with pytest.raises(ConfigError, match="warmup"):
        AdaptivePolicy(styles=cases_file, warmup=-1)
    with pytest.raises(ConfigError, match="discount"):
        AdaptivePolicy(styles=cases_file, discount=1.5)
    with pytest.raises(ConfigError, match="no file"):
        load_style_cases(str(tmp_path / "nope.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(ConfigError, match="not a style-case file"):
        load_style_cases(str(bad))


def test_the_safe_expert_is_the_style_cases_own_unless_given(tmp_path, cases_file):
    """The style cases name the expert whose matches measured the styles (``safe``); a bot
    without ``safe`` plays it, a file without one its first expert, and a file naming one it
    does not rate is refused."""
    data = json.loads(open(cases_file).read())
    with_safe = tmp_path / "with-safe.json"
    with_safe.write_text(json.dumps({**data, "safe": "poki"}))
    assert AdaptivePolicy(styles=str(with_safe)).safe == "poki"
    assert AdaptivePolicy(styles=str(with_safe), safe="ehs").safe == "ehs"
    assert AdaptivePolicy(styles=cases_file).safe == "cbr:preset=expert"      # no safe: the first expert
    bad = tmp_path / "bad-safe.json"
    bad.write_text(json.dumps({**data, "safe": "raise"}))
    with pytest.raises(ConfigError, match="safe expert 'raise' is not one they rate"):
        load_style_cases(str(bad))
    shipped = load_style_cases()
    assert shipped.safe == "cbr:preset=imitate" and shipped.experts[0] == shipped.safe


def test_plain_cbr_starts_as_the_expert_base_sampled_plainly():
    """Before it knows its opponent, plain ``cbr`` answers what ``cbr:preset=imitate`` answers
    (the expert case base, CASPER's plain sampling), not what the sharpened expert answers: the
    same triple at every decision of a match's first hands."""
    from cbr.policies.base import Policy
    from cbr.policies.spec import policy_from_spec

    bot, imitate, expert = (policy_from_spec(s, seed=3) for s in ("cbr", "cbr:preset=imitate", "cbr:preset=expert"))
    assert (imitate.sharpen, imitate.outcome_weight, imitate.casebase) == (1.0, 0.0, "expert")
    rows: list[tuple] = []

    class Compare(Policy):
        """Plays the adaptive bot and keeps, at each decision, its triple and the two presets'."""
        name = "compare"

        def triple(self, dp):  # noqa: ANN001, ANN201
            t = bot.triple(dp)
            rows.append((tuple(t), tuple(imitate.triple(dp)), tuple(expert.triple(dp))))
            return t

        def observe(self, record, position):  # noqa: ANN001, ANN201
            bot.observe(record, position)

    try:
        run_match([Compare(seed=3), "ehs"], 20, seed=4)
        assert len(rows) >= 20
        assert all(mine == plain for mine, plain, _ in rows)
        assert any(mine != sharp for mine, _, sharp in rows)      # the sharpened expert would differ
    finally:
        for p in (bot, imitate, expert):
            p.close()


def test_an_expert_the_table_shows_losing_is_left(tmp_path):
    """A style case that wrongly promises an expert a win (here the always-fold bot against a
    calling station) sends the bot to it after the warm-up; what that expert loses at the table
    brings it back to the safe expert, and it does not go back."""
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps({"experts": ["cbr:preset=expert", "fold"], "cases": [
        {"name": "call", "style": list(STATION), "sb": {"cbr:preset=expert": 0.7, "fold": 1.2}}]}))
    bot = AdaptivePolicy(seed=1, styles=str(path), warmup=30, prior_hands=100)
    try:
        run_match([bot, "call"], 400, seed=5)
        chosen = [e for _, e in bot.chosen]
        assert "fold" in chosen[: len(chosen) // 2]                     # the style case was believed
        assert set(chosen[-len(chosen) // 4:]) == {"cbr:preset=expert"}               # the table said otherwise
        played, won = bot.evidence[("call", "call", "fold")]
        assert played > 0 and won / played < 0                         # what fold won: a loss
        assert bot.values("call")["fold"] < bot.values("call")["cbr:preset=expert"]
    finally:
        bot.close()


def test_without_evidence_the_style_cases_decide(cases_file):
    bot = AdaptivePolicy(seed=1, styles=cases_file, warmup=30)
    try:
        run_match([bot, "call"], 60, seed=5)
        expect, _, _ = bot.cases.expected(bot.styles.vector("call"), bot.k, bot.bandwidth)
        values = bot.values("call")
        spread = bot.hand_variance("call")
        for e, prior in zip(bot.cases.experts, expect):
            played, won = bot.evidence.get(("call", "call", e), (0.0, 0.0))
            weight = spread / (0.1 ** 2 + bot.tau ** 2)       # the file gives no CI: 0.1 sb/h assumed
            assert values[e] == pytest.approx((weight * prior + won) / (weight + played))
    finally:
        bot.close()


def test_the_prior_weighs_by_the_style_cases_precision_and_the_tables_noise(tmp_path):
    """A precise style case at a noisy table needs many hands to be overruled: the evidence is
    weighed by variances (auto), or by a fixed number of hands (prior_hands=N)."""
    path = tmp_path / "styles.json"
    path.write_text(json.dumps({"experts": ["cbr:preset=expert", "ehs"], "cases": [
        {"name": "raise", "style": list(MANIAC), "sb": {"cbr:preset=expert": 1.7, "ehs": 3.5},
         "ci": {"cbr:preset=expert": 0.05, "ehs": 0.4}}]}))
    cases = load_style_cases(str(path))
    assert cases.uncertainty(MANIAC).tolist() == pytest.approx([0.05, 0.4])
    bot = AdaptivePolicy(seed=1, styles=str(path), warmup=30)
    fixed = AdaptivePolicy(seed=1, styles=str(path), warmup=30, prior_hands=50)
    try:
        run_match([bot, "raise"], 80, seed=5)
        spread = bot.hand_variance("raise")
        acc = bot._results["raise"]
        n, m2 = acc.count, acc.m2
        assert n == 80 and spread == pytest.approx(m2 / 79) and spread > 25.0   # a maniac's table is noisy
        precise, loose = bot.prior_weight(0.05, spread), bot.prior_weight(0.4, spread)
        assert precise == pytest.approx(spread / ((0.05 / 1.96) ** 2 + 0.15 ** 2))
        assert precise > loose > 0 and fixed.prior_weight(0.05, spread) == 50
    finally:
        bot.close()
        fixed.close()
    for bad in ("none", "0", "-3"):
        with pytest.raises(ConfigError):
            AdaptivePolicy(styles=str(path), prior_hands=bad)
    with pytest.raises(ConfigError):
        AdaptivePolicy(styles=str(path), tau=0)


def test_it_does_not_hop_between_experts_expected_to_win_about_the_same(tmp_path):
    """Two experts the style cases rate 0.02 apart and a weak prior: the table's noise reorders
    them often, but the bot changes expert only when another is expected to win min_gain more."""
    path = tmp_path / "close.json"
    path.write_text(json.dumps({"experts": ["cbr:preset=expert", "ehs", "poki"], "cases": [
        {"name": "call", "style": list(STATION), "sb": {"cbr:preset=expert": 0.7, "ehs": 1.10, "poki": 1.12}}]}))

    def hops(min_gain: float) -> int:
        bot = AdaptivePolicy(seed=1, styles=str(path), warmup=30, prior_hands=20, min_gain=min_gain)
        try:
            run_match([bot, "call"], 300, seed=5)
            after = [e for _, e in bot.chosen if e != "cbr:preset=expert"]
            assert after
            return sum(1 for a, b in zip(after, after[1:]) if a != b)
        finally:
            bot.close()

    assert hops(0.1) <= 2 < hops(0.0)


def test_at_a_table_of_three_it_never_hands_a_heads_up_bot_the_decision():
    """The counter-strategies and the teacher play heads-up only: at three seats, after the
    warm-up against a maniac, the bot picks among the others (it used to crash there)."""
    from cbr.policies.spec import policy_from_spec

    bot = AdaptivePolicy(seed=1, warmup=10)
    try:
        run_match([bot, "raise", "call"], 60, seed=3)
        chosen = {e for _, e in bot.chosen}
        assert len(chosen) >= 2 and not any(getattr(bot.experts[e], "heads_up_only", False) for e in chosen)
        bot.reset()
        run_match([bot, "raise"], 60, seed=3)                   # heads-up it may: the best against a maniac
        rates = dict(zip(bot.cases.experts, bot.cases.values[bot.cases.names.index("raise")]))
        assert bot.chosen[-1][1] == max(rates, key=rates.get)
    finally:
        bot.close()
    assert policy_from_spec("cfr").heads_up_only


def test_bots_with_options_are_named_by_their_short_names_and_bad_values_refused():
    from cbr.policies.spec import PolicySpecError, policy_from_spec

    bot = policy_from_spec("adapt:safe=casper:experts=expert+counter_raise+ehs", seed=1)
    assert bot.safe == "cbr:preset=casper" and bot.specs == ["cbr:preset=casper", "cbr:preset=expert",
                                                            "cfr:strategy=counter_raise", "ehs"]
    bot.close()
    for spec, message in (("adapt:safe=raise", "safe: the style cases rate imitate, expert, casper, emd_256, ehs"),
                          ("adapt:experts=+", "experts: no bot given"),
                          ("adapt:min-similarity=1.5", "min-similarity must be in"),
                          ("adapt:min-gain=nan", "min-gain must be"),
                          ("adapt:safe-policy=1", "has no option 'safe-policy'")):
        with pytest.raises(PolicySpecError, match=message):
            policy_from_spec(spec)



def test_a_spec_nested_in_an_option_naming_a_bot_is_told_to_use_the_short_name():
    """``adapt:safe=cbr:preset=imitate`` said only ``has no option 'preset'``: the nested spec's ``:``
    ends ``safe``'s value. The message says how to name the bot; the short name it gives works."""
    from cbr.policies.spec import PolicySpecError, policy_from_spec

    for spec, shown in (("adapt:safe=cbr:preset=imitate", "safe=imitate"),
                        ("adapt:fallback=cbr:preset=expert:warmup=20", "fallback=expert"),
                        ("adapt:experts=ehs+cfr:strategy=counter_raise", "experts=ehs+counter_raise")):
        with pytest.raises(PolicySpecError) as caught:
            policy_from_spec(spec)
        assert f"(name a bot with options by its short name: {shown}); options: experts, safe," in str(caught.value)
        policy_from_spec(f"adapt:{shown}", seed=1).close()
    for spec in ("adapt:warmup=20:preset=imitate", "adapt:safe=imitate:preset=expert", "cbr:preset=imitate:safe=ehs"):
        with pytest.raises(PolicySpecError, match="has no option") as caught:  # no bot spec cut in two: no hint
            policy_from_spec(spec)
        assert "short name" not in str(caught.value), caught.value

def test_the_shipped_style_cases_are_found_beside_a_casebases_folder_of_ones_own(tmp_path, monkeypatch):
    """`--retain-into NAME` makes ./casebases; a Python session started there must still find the
    shipped style cases (the folder used to stand in for the package)."""
    import sys

    (tmp_path / "casebases" / "mine").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "casebases", raising=False)
    assert len(load_style_cases().names) >= 13
