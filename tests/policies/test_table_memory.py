"""Retention that adapts: the cases retained against an opponent, with their outcomes, change
what the adaptive bot does against that opponent, and only where they show a clear gain."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from cbr.game.gamedef import STREETS
from cbr.game.situation import situation
from cbr.play.match import run_match
from cbr.play.retention import copy_casebase
from cbr.policies.adaptive import AdaptiveDecision, case_based_bot
from cbr.policies.table_memory import TableMemory
from cbr.similarity import default_casper

ROW = np.array([6, 0, 6, 5, 0, 1, 0.3, 10], np.float32)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory):
    return copy_casebase("default", tmp_path_factory.mktemp("memory") / "base")


def test_an_action_needs_enough_cases_and_a_gap_beyond_its_noise():
    memory = TableMemory(default_casper(), min_cases=20, z=2.0)
    rng = np.random.default_rng(3)
    for x in rng.normal(0.5, 4.0, 19):          # one case short of min_cases
        memory.add("x", "preflop", ROW, "c", float(x))
    assert memory.advise("x", "preflop", ROW, "f", "fcr", fold_value=-1.0) is None
    memory.add("x", "preflop", ROW, "c", 0.5)
    n, mean, err = memory.values("x", "preflop", ROW)
    assert n.tolist() == [0, 20, 0]
    # 20 noisy calls (sd ~4): their mean must beat the fold by 2 standard errors (about 1.8 sb) to count
    advice = memory.advise("x", "preflop", ROW, "f", "fcr", fold_value=-1.0)
    gap = mean[1] - (-1.0)
    assert (advice is not None) == (gap > 2.0 * err[1])
    # a fold's value is what was put in: far below the calls, the fold is replaced
    advice = memory.advise("x", "preflop", ROW, "f", "fcr", fold_value=-20.0)
    assert advice is not None and advice.action == "c" and advice.instead == "f"
    assert "table memory against x" in advice.explain() and "c instead of f" in advice.explain()
    # never an illegal action, never another opponent's cases, never a dissimilar situation
    assert memory.advise("x", "preflop", ROW, "f", "fr", fold_value=-20.0) is None
    assert memory.advise("y", "preflop", ROW, "f", "fcr", fold_value=-20.0) is None
    far = ROW.copy()
    far[-1] = 160                                  # another hand class: nowhere near 0.97 similar
    assert memory.advise("x", "preflop", far, "f", "fcr", fold_value=-20.0) is None


def test_unknown_outcomes_are_not_remembered():
    memory = TableMemory(default_casper(), min_cases=1)
    memory.add("x", "flop", ROW, "c", float("nan"))
    memory.add("x", "flop", ROW, "?", 1.0)
    assert memory.count("x") == 0


def _seen(bot, opponent: str, dp) -> None:
    """Let the bot's seating name its opponent (as after a hand at this table)."""
    bot._seating = (dp.player, opponent)


def test_cases_retained_against_an_opponent_change_the_bots_action_there_and_nowhere_else(base, tmp_path):
    path = copy_casebase(base, tmp_path / "mine")
    dp = situation(hole="7c2d", board="", to_call=1, pot=3, position=0)
    bot = case_based_bot(seed=1, casebase=str(path))
    try:
        _seen(bot, "maniac", dp)
        made = bot.decide(dp, random.Random(1))
        assert not isinstance(made, AdaptiveDecision)   # nothing retained yet: the expert's own action
        better = "c" if made.action != "c" else "r"
        cb = bot.open()
        before = cb.count()
        # what a table showed: the other action won 5 sb every time against the maniac, the one played lost 5
        dps = [dp.taken(better)] * 25 + [dp.taken(made.action)] * 25
        outcomes = [5.0] * 25 + [-5.0] * 25
        cb.retain_hand(dps, outcomes, source="retained", opponents="maniac", seat=0)
        assert cb.count() == before + 50 and bot.table_memory().count("maniac", "preflop") == 50
        changed = bot.decide(dp, random.Random(1))
        assert isinstance(changed, AdaptiveDecision) and changed.action == better
        assert changed.expert.endswith("+memory") and "table memory against maniac" in changed.reason
        assert changed.dp.action == better and changed.row_for(cb) is not None
        # against another opponent the same situation is played as before
        _seen(bot, "rock", dp)
        assert bot.decide(dp, random.Random(1)).action == made.action
    finally:
        bot.close()
    # durable: a new bot on the same case base remembers the maniac, memory off forgets it
    again = case_based_bot(seed=1, casebase=str(path))
    off = case_based_bot(seed=1, casebase=str(path))
    off.memory = False
    try:
        _seen(again, "maniac", dp)
        _seen(off, "maniac", dp)
        assert again.decide(dp, random.Random(1)).action == better
        assert off.decide(dp, random.Random(1)).action == made.action
    finally:
        again.close()
        off.close()


def test_a_match_with_retention_fills_the_memory_with_the_opponents_cases(base, tmp_path):
    path = copy_casebase(base, tmp_path / "mine")
    bot = case_based_bot(seed=2, casebase=str(path))
    try:
        r = run_match([bot, "raise"], 40, seed=4, retain=True)
        memory = bot.table_memory()
        kept = memory.count("raise")
        assert 0 < kept <= r.retained                  # the bot's decisions; none of the maniac's own
        cb = bot.open()
        mine = cb.sql("SELECT count(*) FROM cases WHERE source = 'retained' AND opponents = 'raise'").fetchone()[0]
        assert kept == mine
        assert all(memory.count("raise", s) == cb.sql(
            f"SELECT count(*) FROM cases_{s} WHERE source = 'retained' AND opponents = 'raise' "
            "AND outcome IS NOT NULL").fetchone()[0] for s in STREETS)
    finally:
        bot.close()
    # no retention: nothing remembered, so nothing changed
    other = case_based_bot(seed=2, casebase=str(copy_casebase(base, tmp_path / "ctrl")))
    try:
        run_match([other, "raise"], 20, seed=4)
        assert other.table_memory().count("raise") == 0
    finally:
        other.close()


def test_memory_options_are_checked():
    from cbr.errors import ConfigError
    from cbr.policies.spec import policy_from_spec

    for bad in ("memory=maybe", "memory_cases=0", "memory_z=-1", "memory_similarity=1.5"):
        with pytest.raises(ConfigError):
            policy_from_spec(f"adapt:{bad}")
    bot = policy_from_spec("adapt:memory=0:memory_cases=5:memory_z=1.5")
    try:
        assert bot.memory is False and bot.memory_cases == 5 and math.isclose(bot.memory_z, 1.5)
        assert bot.table_memory() is None
    finally:
        bot.close()


def test_the_memory_keeps_the_most_recent_window_of_cases():
    memory = TableMemory(default_casper(), min_cases=1, window=100)
    for i in range(1000):
        row = ROW.copy()
        row[-1] = i % 160
        memory.add("x", "preflop", row, "c", float(i))
    assert memory.count("x", "preflop") == 100
    X, codes, outs = memory._cases[("x", "preflop")].arrays()
    assert outs.tolist() == [float(i) for i in range(900, 1000)]
    assert X[:, -1].tolist() == [float(i % 160) for i in range(900, 1000)] and set(codes.tolist()) == {1}


def test_a_match_reports_the_decisions_the_table_memory_changed(base, tmp_path):
    path = copy_casebase(base, tmp_path / "mine")
    eager = case_based_bot(seed=3, casebase=str(path), memory_z=0.0, memory_cases=1)   # acts on any gap
    try:
        r = run_match([eager, "raise"], 60, seed=2, retain=True)
        changed = sum(eager.table_memory().changed.values())
        assert r.memory_changed == changed == eager.memory_changed > 0 and r.to_dict()["memory_changed"] == changed
    finally:
        eager.close()
    plain = run_match(["call", "raise"], 4, seed=2)
    assert plain.memory_changed == 0 and "memory_changed" not in plain.to_dict()
