"""The adaptive bot: the safe expert until it knows its opponent, then the expert the nearest
style cases say beats that style; a change of style is followed."""
from __future__ import annotations

import json

import pytest

from cbr.errors import ConfigError
from cbr.play.match import run_match
from cbr.policies.adaptive import AdaptivePolicy, StyleCases, load_style_cases

MANIAC = (1.0, 1.0, 0.95, 0.0)
STATION = (1.0, 0.0, 0.0, 0.0)


@pytest.fixture
def cases_file(tmp_path):
    path = tmp_path / "styles.json"
    path.write_text(json.dumps({"experts": ["cbr", "ehs", "poki"], "cases": [
        {"name": "raise", "style": list(MANIAC), "sb": {"cbr": 1.7, "ehs": 3.5, "poki": 2.9}},
        {"name": "call", "style": list(STATION), "sb": {"cbr": 0.68, "ehs": 1.07, "poki": 1.09}},
        {"name": "cfr", "style": [0.8, 0.5, 0.4, 0.3], "sb": {"cbr": -0.03, "ehs": -0.4, "poki": -0.3}}]}))
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
        assert set(first[:5]) == {"cbr"}                  # no evidence yet: the safe expert
        assert set(last) == {"ehs"}                       # a maniac: the expert that beats maniacs
        bot.reset()
        run_match([bot, "call"], 120, seed=6)
        assert {e for _, e in bot.chosen[-30:]} == {"poki"}
    finally:
        bot.close()


def test_stays_safe_without_a_clear_gain_or_a_near_case(cases_file):
    bot = AdaptivePolicy(seed=1, styles=cases_file, warmup=30, min_gain=0.5)
    try:
        run_match([bot, "call"], 100, seed=5)             # poki's gain over cbr is 0.41 < 0.5
        assert {e for _, e in bot.chosen} == {"cbr"}
        strict = AdaptivePolicy(seed=1, styles=cases_file, warmup=30, min_similarity=0.999)
        run_match([strict, "lag"], 100, seed=5)           # no style case is that near a lag
        assert {e for _, e in strict.chosen} == {"cbr"}
        strict.close()
    finally:
        bot.close()


def test_follows_an_opponent_that_changes_style(cases_file):
    bot = AdaptivePolicy(seed=1, styles=cases_file, warmup=30, discount=0.95)
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
