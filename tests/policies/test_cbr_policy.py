"""The case-based bot (plugin ``cbr``): legal actions, re-use policies, life cycle, CLI."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest
from typer.testing import CliRunner

from cbr.errors import CaseBaseError, ConfigError, GameError
from cbr.game import preset
from cbr.game.state import HandState
from cbr.play.match import run_match
from cbr.policies import make_policy
from cbr.policies.cbr_policy import CBRPolicy, best_outcome_action, max_frequency_action
from cbr.store.writer import CaseBaseWriter
from evaluator_ext.cards import parse_cards

GAME = preset("holdem.limit.2p")


def tiny_casebase(path, flop_actions: str, *, streets=("flop",), outcome=0.0) -> str:
    """A case base whose given streets hold one case per letter of ``flop_actions``
    (features drawn at random: fewer cases than fallback_k, so every case is retrieved);
    ``outcome``: one value (or one per case) for every street, None = unknown."""
    rng = np.random.default_rng(len(flop_actions))
    with CaseBaseWriter(path, build_index=False) as w:
        for s in streets:
            d = 8 if s == "preflop" else 12
            w.add_rows(s, rng.random((len(flop_actions), d)).astype(np.float32), list(flop_actions),
                       outcome=outcome)
    return str(path)


def flop_state(raises: int) -> HandState:
    """A heads-up hand on the flop after both limp in, then ``raises`` bets/raises on the flop."""
    hole = [parse_cards("AhKd"), parse_cards("7c7d")]
    st = HandState(GAME, players=["a", "b"], hole_cards=hole)
    st.act("c")
    st.act("c")
    st.deal_board(parse_cards("2c9hTs"))
    for _ in range(raises):
        st.act("r")
    return st


def free_check_dp():
    dp = flop_state(0).decision_point()
    assert "f" not in dp.legal and "c" in dp.legal
    return dp


def capped_dp():
    st = flop_state(0)
    while "r" in st.decision_point().legal:
        st.act("r")
    dp = st.decision_point()
    assert dp.legal == "fc"
    return dp


REUSES = ("probabilistic", "max-frequency", "best-outcome")


@pytest.mark.parametrize("reuse", REUSES)
def test_never_folds_when_checking_is_free(tmp_path, reuse):
    cb = tiny_casebase(tmp_path / "folds", "ffffffff")
    dp = free_check_dp()
    with CBRPolicy(casebase=cb, reuse=reuse, seed=1) as bot:
        rng = random.Random(0)
        actions = {bot.act(dp, rng) for _ in range(200)}
        assert actions == {"c"}
        assert bot.last_decision.triple == (0.0, 1.0, 0.0)


@pytest.mark.parametrize("reuse", REUSES)
def test_capped_raise_becomes_call(tmp_path, reuse):
    cb = tiny_casebase(tmp_path / "raises", "rrrrrrrr")
    dp = capped_dp()
    with CBRPolicy(casebase=cb, reuse=reuse, seed=1) as bot:
        rng = random.Random(0)
        assert {bot.act(dp, rng) for _ in range(200)} == {"c"}


def test_max_frequency_picks_the_mode(tmp_path):
    cb = tiny_casebase(tmp_path / "mode", "rrrrrrcccf")
    dp = flop_state(1).decision_point()            # facing a bet: fold, call, raise legal
    assert dp.legal == "fcr"
    with CBRPolicy(casebase=cb, reuse="max-frequency") as bot:
        d = bot.decide(dp)
        assert d.action == "r" and d.played == (0.0, 0.0, 1.0)
        assert d.triple == pytest.approx((0.1, 0.3, 0.6))
        assert d.retrieved == 10 and len(d.case_ids) == 10
    with CBRPolicy(casebase=cb, reuse="max-frequency") as bot:   # capped: raise share (0.6) calls
        assert bot.decide(capped_dp()).action == "c"


def test_max_frequency_ties_are_deterministic(tmp_path):
    cb = tiny_casebase(tmp_path / "tie", "ffffrrrr")
    dp = flop_state(1).decision_point()
    with CBRPolicy(casebase=cb, reuse="max-frequency") as bot:
        assert {bot.act(dp, random.Random(s)) for s in range(20)} == {"r"}   # bet/raise before fold
    assert max_frequency_action((0.0, 0.5, 0.5), "fcr") == "c"                 # check/call before raise
    assert max_frequency_action((0.5, 0.0, 0.5), "fcr") == "r"


def test_probabilistic_frequencies_match_the_triple(tmp_path):
    cb = tiny_casebase(tmp_path / "mix", "ffcccccrrr")       # 0.2, 0.5, 0.3
    dp = flop_state(1).decision_point()
    n = 4000
    rng = random.Random(11)
    with CBRPolicy(preset="casper", casebase=cb) as bot:           # CASPER's plain sampling
        counts = {k: 0 for k in "fcr"}
        for _ in range(n):
            counts[bot.act(dp, rng)] += 1
        triple = bot.last_decision.triple
    assert triple == pytest.approx((0.2, 0.5, 0.3))
    for k, p in zip("fcr", triple):
        assert abs(counts[k] / n - p) <= 4 * math.sqrt(p * (1 - p) / n), (k, counts)


def test_own_rng_is_seeded_by_the_policy_seed(tmp_path):
    cb = tiny_casebase(tmp_path / "mix", "ffcccccrrr")
    dp = flop_state(1).decision_point()
    runs = []
    for _ in range(2):
        with CBRPolicy(casebase=cb, seed=5) as bot:
            runs.append([bot.decide(dp).action for _ in range(50)])
    assert runs[0] == runs[1] and len(set(runs[0])) > 1
    with CBRPolicy(casebase=cb, seed=6) as bot:
        assert [bot.decide(dp).action for _ in range(50)] != runs[0]


def test_best_outcome_refuses_a_case_base_without_outcomes(tmp_path):
    """Issue 8, bad input: best-outcome on a case base with no known outcome is one line."""
    cb = tiny_casebase(tmp_path / "noout", "ffcccccrrr", outcome=None)
    with pytest.raises(CaseBaseError, match="holds no case with an outcome"):
        CBRPolicy(casebase=cb, reuse="best-outcome", seed=2).open()
    from cli import app

    result = CliRunner().invoke(app, ["match", "--players", f"cbr:casebase={cb}:reuse=best-outcome,call",
                                      "--hands", "2"])
    assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1, result.output


def test_best_outcome_falls_back_without_outcomes(tmp_path):
    """The retrieved (flop) cases carry no outcome, other cases do: fall back, and say so."""
    cb = str(tmp_path / "noout")
    with CaseBaseWriter(cb, build_index=False) as w:
        rng = np.random.default_rng(10)
        w.add_rows("flop", rng.random((10, 12)).astype(np.float32), list("ffcccccrrr"))
        w.add_rows("preflop", rng.random((3, 8)).astype(np.float32), list("crr"), outcome=1.5)
    dp = flop_state(1).decision_point()
    with CBRPolicy(casebase=cb, reuse="best-outcome", seed=2) as bot:
        d = bot.decide(dp)
    assert d.reuse == "probabilistic"
    # schema 3 always has the column; these cases carry no outcome (NULL)
    assert "fell back to probabilistic" in d.explanation
    assert "none of the retrieved cases has a known outcome" in d.explanation
    assert d.played == d.triple == pytest.approx((0.2, 0.5, 0.3))


def test_best_outcome_action_choice():
    acts = ["f", "c", "c", "r", "r", "r"]
    out = [-1.0, 1.0, 2.0, 0.0, 3.0, math.nan]      # means: f -1, c 1.5, r 1.5 (NaN ignored)
    assert best_outcome_action(acts, out, "fcr") == ("c", {"f": -1.0, "c": 1.5, "r": 1.5})
    assert best_outcome_action(acts, out, "fc")[0] == "c"          # capped: raises count as calls
    assert best_outcome_action(["f", "f"], [5.0, 5.0], "cr") == ("c", {"c": 5.0})
    assert best_outcome_action(acts, [math.nan] * 6, "fcr") == (None, {})


def test_street_without_cases_is_refused(tmp_path):
    """Issue 8, bad input: a case base without the needed street is one clear line."""
    cb = tiny_casebase(tmp_path / "preonly", "rrr", streets=("preflop",))
    dp = flop_state(1).decision_point()
    with CBRPolicy(casebase=cb, reuse="probabilistic") as bot:
        with pytest.raises(CaseBaseError, match="has no flop cases, so the cbr bot cannot decide on the flop"):
            bot.decide(dp)


def test_no_limit_game_for_a_limit_case_base_is_refused(tmp_path):
    """Issue 8, bad input: a game the bot cannot play (no-limit for a limit case base)."""
    nl = preset("holdem.nolimit.6p").with_players(2)
    assert nl.betting != "limit"
    st = HandState(nl, players=["a", "b"], hole_cards=[parse_cards("AhKd"), parse_cards("7c7d")])
    with CBRPolicy(casebase="default") as bot:
        with pytest.raises(GameError, match="cannot play .*holds only limit hands"):
            bot.decide(st.decision_point())


def test_options_are_checked_when_built(tmp_path):
    with pytest.raises(ConfigError, match="probabilistic, max-frequency or best-outcome"):
        CBRPolicy(reuse="mode")
    with pytest.raises(ConfigError, match="no case base"):
        CBRPolicy(casebase=str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="similarity config"):
        CBRPolicy(similarity=str(tmp_path / "missing.toml"))


def test_presets_name_a_configuration_and_options_override_them(tmp_path):
    from cbr.policies.cbr_policy import DEFAULT_PRESET, PRESETS
    from cbr.policies.spec import policy_from_spec

    plain = CBRPolicy()
    assert plain.preset == DEFAULT_PRESET == "expert" and plain.casebase == PRESETS["expert"]["casebase"] == "expert"
    assert plain.casebase_path.name == "expert" and (plain.casebase_path / "manifest.json").is_file()
    casper = policy_from_spec("cbr:preset=casper")
    assert (casper.casebase, casper.reuse, casper.sharpen, casper.outcome_weight) == ("default", "probabilistic", 1.0, 0.0)
    tuned = policy_from_spec("cbr:preset=casper:sharpen=2:outcome-weight=0.5:reuse=max-frequency")
    assert (tuned.casebase, tuned.sharpen, tuned.outcome_weight, tuned.reuse) == ("default", 2.0, 0.5, "max-frequency")
    assert "sharpen=2.0" in repr(tuned) and "preset='casper'" in repr(tuned)
    other = policy_from_spec(f"cbr:preset=casper:casebase={tiny_casebase(tmp_path / 'cb', 'cccr')}")
    assert other.casebase_path == tmp_path / "cb"
    with pytest.raises(ConfigError, match="unknown preset 'nosuch'; use expert, imitate or casper"):
        CBRPolicy(preset="nosuch")
    with pytest.raises(ValueError, match="sharpen must be a number, got 'x'"):
        policy_from_spec("cbr:sharpen=x")


def test_threshold_and_fallback_k_replace_the_case_bases_retrieval_settings(tmp_path):
    """``threshold`` and ``fallback_k``: 0 retrieves every case; 1 (no case equal to the
    query's features, drawn at random) retrieves the ``fallback_k`` most similar; the case base's own values
    decide as the bot without them; bad values are refused when the bot is built."""
    from cbr.policies.spec import policy_from_spec

    cb = tiny_casebase(tmp_path / "many", "f" * 10 + "c" * 20 + "r" * 30)  # 60 cases: more than fallback_k
    dp = flop_state(1).decision_point()
    with CBRPolicy(casebase=cb, seed=3, threshold=0.0) as every:
        assert every.decide(dp).retrieved == 60 and every.last_decision.triple == pytest.approx((1 / 6, 1 / 3, 1 / 2))
    with CBRPolicy(casebase=cb, seed=3, threshold=1.0, fallback_k=7) as nearest:
        assert nearest.decide(dp).retrieved == 7
    with CBRPolicy(casebase=cb, seed=3) as own, CBRPolicy(casebase=cb, seed=3, threshold=0.97, fallback_k=20) as same:
        a, b = own.decide(dp), same.decide(dp)
        assert (a.retrieved, a.triple, a.case_ids.tolist()) == (b.retrieved, b.triple, b.case_ids.tolist())
        assert a.retrieved == 20  # the random features are far apart: CASPER's fallback
    bot = policy_from_spec("cbr:preset=expert:threshold=0.995:fallback-k=30")
    assert (bot.threshold, bot.fallback_k) == (0.995, 30) and "threshold=0.995, fallback_k=30" in repr(bot)
    for spec, said in (("cbr:threshold=1.5", "threshold must be a number in [0, 1]"),
                       *((f"cbr:fallback-k={k}", "fallback-k must be a whole number from 1 to 1,000,000")
                         for k in ("0", "2.5", "inf", "-inf", "nan", "1e9", "1000001", "ten")),
                       ("cbr:threshold=high", "threshold must be a number, got 'high'")):
        with pytest.raises(ValueError, match=said.replace("[", r"\[").replace("]", r"\]")):
            policy_from_spec(spec)


def test_min_cases_retrieves_never_fewer_than_the_fallback(tmp_path):
    """``min_cases``: a threshold that exactly 3 of 60 cases reach keeps those 3; with
    ``min_cases=5`` (and ``fallback_k=5``) the 5 most similar, the 3 among them; a ``min_cases``
    above the fallback is refused, by the spec when both are given, else when the case base is
    read (its ``fallback_k`` with it: the first decision), naming the case base."""
    from cbr.policies.spec import policy_from_spec

    cb = tiny_casebase(tmp_path / "many", "f" * 10 + "c" * 20 + "r" * 30)
    dp = flop_state(1).decision_point()
    with CBRPolicy(casebase=cb, seed=3, threshold=0.0) as every:
        sims = every.decide(dp).vote.similarities
    third = float(sims[2])
    assert sims[3] < third  # no tie at the threshold
    with CBRPolicy(casebase=cb, seed=3, threshold=third) as plain, \
            CBRPolicy(casebase=cb, seed=3, threshold=third, fallback_k=5, min_cases=5) as least:
        a, b = plain.decide(dp), least.decide(dp)
        assert (a.retrieved, a.vote.fallback) == (3, False) and (b.retrieved, b.vote.fallback) == (5, True)
        assert set(a.case_ids.tolist()) < set(b.case_ids.tolist())
    with CBRPolicy(casebase=cb, seed=3, threshold=third, fallback_k=5, min_cases=3) as enough:
        assert enough.decide(dp).retrieved == 3
    bot = policy_from_spec("cbr:preset=expert:threshold=0.995:fallback-k=30:min-cases=30")
    assert bot.min_cases == 30 and "fallback_k=30, min_cases=30" in repr(bot)
    with pytest.raises(ValueError, match=r"min-cases \(31\) must be at most fallback-k \(30\)"):
        policy_from_spec("cbr:fallback-k=30:min-cases=31")
    with pytest.raises(ValueError, match="min-cases must be a whole number from 1 to 1,000,000"):  # as the spec writes it
        policy_from_spec("cbr:min-cases=0")
    over = CBRPolicy(casebase=cb, seed=3, min_cases=21)  # the case base's fallback_k is 20
    with pytest.raises(ConfigError, match=r"case base 'many': min_cases must be a whole number from 1 to "
                                          r"fallback_k \(20\), got 21"):
        over.decide(dp)
    over.close()


def test_the_shipped_case_bases_are_never_retained_into():
    from cbr.play.retention import check_retention_target
    from cbr.store import PACKAGED_CASEBASES, SHIPPED_CASEBASES

    assert SHIPPED_CASEBASES == ("default", "expert")
    for name in SHIPPED_CASEBASES:
        with pytest.raises(CaseBaseError, match="never written to; retain into a copy"):
            check_retention_target(PACKAGED_CASEBASES / name)


def test_close_and_reopen(tmp_path):
    cb = tiny_casebase(tmp_path / "cb", "cccr")
    bot = make_policy("cbr", preset="expert", casebase=cb, reuse="max-frequency")
    dp = flop_state(1).decision_point()
    assert bot.act(dp, random.Random(0)) == "c"
    assert bot._cb is not None                          # kept open between decisions
    bot.close()
    assert bot._cb is None
    assert bot.act(dp, random.Random(0)) == "c"          # opens again on use
    bot.close()


@pytest.mark.parametrize("reuse", REUSES)
def test_legal_actions_in_generated_matches(reuse):
    """Property: over every decision of generated matches (the default case base, against
    random and raising opponents: capped streets, free checks, multi-way pots) the bot's
    action is legal; the dealer loop refuses anything else with a GameError."""
    seen: list[tuple[str, str]] = []

    class Watched(CBRPolicy):
        def decide(self, dp, rng=None):  # what the table asks a policy
            d = super().decide(dp, rng)
            seen.append((dp.legal, d.action))
            return d

    for seed, opponents in ((1, ["random"]), (2, ["raise"]), (3, ["random", "raise"])):
        bot = Watched(reuse=reuse, seed=seed)
        try:
            run_match([bot, *opponents], 30, seed=seed)
        finally:
            bot.close()
    assert len(seen) > 50
    assert all(a in legal for legal, a in seen)
    assert any(legal == "fc" for legal, _ in seen) and any("f" not in legal for legal, _ in seen)


def test_run_match_leaves_a_given_bot_open():
    bot = CBRPolicy(reuse="max-frequency")
    r = run_match([bot, "call"], 10, seed=4)
    assert r.players[0].policy == "cbr" and bot._cb is not None      # the caller closes it
    bot.close()
    r = run_match(["cbr:reuse=max-frequency", "call"], 10, seed=4)    # built and closed by the match
    assert r.hands == 10


def test_cli_match_with_a_cbr_spec():
    from cli import app

    res = CliRunner().invoke(app, ["match", "--players", "cbr:casebase=default:reuse=probabilistic,call",
                                   "--hands", "50", "--json", "--seed", "3"])
    assert res.exit_code == 0, res.output
    import json

    data = json.loads(res.output)
    assert data["hands"] == 50 and [p["policy"] for p in data["players"]] == ["cbr:casebase=default:reuse=probabilistic", "call"]  # the specs
    assert sum(p["total"] for p in data["players"]) == 0


@pytest.mark.parametrize("spec, message", [
    ("cbr:colour=red,call", "has no option 'colour'; options: preset, casebase, similarity, reuse"),
    ("cbr:reuse=best,call", "unknown re-use policy 'best'"),
    ("nosuchbot,call", "unknown policy 'nosuchbot'; known policies:"),
    ("call:x=1,call", "policy 'call' takes no options"),
])
def test_cli_bad_spec_is_a_usage_error(spec, message):
    from cli import app

    res = CliRunner().invoke(app, ["match", "--players", spec, "--hands", "5"])
    assert res.exit_code == 2
    errors = [line for line in res.output.splitlines() if message in line]
    assert len(errors) == 1, res.output


def test_bots_on_one_open_case_base_read_the_arrays_it_keeps_and_see_an_append_at_once(tmp_path) -> None:
    """Two bots handed one open case base read one copy of each street's retrieval data, the
    case base's own (the same buffers); a case appended through the writer is in it at once,
    for both, before either decides again (no catch-up pass), and both then retrieve it."""
    from cbr.game.situation import situation
    from cbr.play.retention import copy_casebase
    from cbr.store.shared import open_shared

    dp = situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5, previous_round_bets=2)
    handle = open_shared(copy_casebase("default", tmp_path / "mine"))
    a = CBRPolicy(preset="casper", seed=3, casebase=handle)
    b = CBRPolicy(preset="casper", seed=3, casebase=handle, sharpen=2.0)
    try:
        da, db = a.decide(dp, random.Random(1)), b.decide(dp, random.Random(1))
        view = handle.cb.street_view("flop")
        assert a._street("flop") is b._street("flop") is view
        assert da.index is db.index is view.index
        assert np.shares_memory(a._street("flop").actions, b._street("flop").actions)
        n = len(view)
        [new] = handle.cb.append("flop", da.row, "r", outcome=4.0).tolist()  # through the writer
        assert len(view) == n + 1 == view.index.n_cases_ and view.case_ids[-1] == new and view.actions[-1] == 2
        for bot in (a, b):
            assert bot._street("flop") is view
        again = [bot.decide(dp, random.Random(1)) for bot in (a, b)]
        assert all(new in d.case_ids for d in again) and again[0].index is again[1].index is view.index
    finally:
        for bot in (a, b):
            bot.close()
        handle.release()


def test_bots_handed_one_open_case_base_share_it_and_decide_as_their_own_would() -> None:
    """A process opens a case base once and hands it to its bots (cbr.store.shared): they play
    from that one handle and one copy of its retrieval data, decide exactly as a bot that opens
    its own, and each close lets go of its reference only."""
    import random

    from cbr.game.situation import situation
    from cbr.store.shared import open_count, open_shared

    spots = [situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5, previous_round_bets=2),
             situation(hole="7s2d"), situation(hole="KhKd", board="2c7d9hTs", position=0, to_call=0, pot=8)]
    before = open_count()
    handle = open_shared("default")
    own = CBRPolicy(preset="casper", seed=3)
    a = CBRPolicy(preset="casper", seed=3, casebase=handle)
    b = CBRPolicy(preset="casper", seed=3, casebase=handle, sharpen=2.0)
    try:
        for dp in spots:
            want = own.decide(dp, random.Random(5))
            got = a.decide(dp, random.Random(5))
            assert (got.action, got.triple, got.played, list(got.case_ids)) == \
                   (want.action, want.triple, want.played, list(want.case_ids))
            b.decide(dp, random.Random(5))
        assert a.open() is b.open() is handle.cb and own.open() is not handle.cb
        assert a._street("flop") is b._street("flop")  # one copy of the retrieval data for the handle's bots
        assert a.casebase_handle is handle and a.casebase_path == handle.path
        a.close()
        assert handle.cb.count("flop") > 0 and b.decide(spots[0]).street == "flop"
    finally:
        for bot in (own, a, b):
            bot.close()
        handle.release()
    assert open_count() == before
