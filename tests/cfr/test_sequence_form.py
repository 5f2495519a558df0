"""Exact equilibria of small games by linear programming (:mod:`cbr.cfr.sequence_form`),
checked against the best response written independently for the solver's tests
(``tests/cfr/test_small_games.py``: a walk over every deal) and against Kuhn poker worked by
hand."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import require_native

require_native(module_level=True)

from cbr.cfr.sequence_form import SequenceForm, always_call, always_raise  # noqa: E402
from cbr.cfr.small import SmallMCCFR, kuhn, leduc  # noqa: E402
from cbr.errors import ConfigError  # noqa: E402
from tests.cfr.test_small_games import best_response, value  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
EXACT = 1e-7  # the LP solver's tolerance, well above float rounding, far below any difference tested


@pytest.fixture(scope="module", params=["kuhn", "leduc"])
def game(request):
    return {"kuhn": kuhn, "leduc": leduc}[request.param]()


@pytest.fixture(scope="module")
def form(game):
    return SequenceForm.of(game)


def table(sf: SequenceForm, x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
    """Both players' sequence-form strategies as one table strategy."""
    probs = sf.behaviour(x0, 0)
    return sf.behaviour(x1, 1, out=probs)


def test_the_game_values_are_the_published_ones(form, game):
    """Kuhn poker: -1/18 (Kuhn 1950); Leduc hold'em: -0.0856 (the value usually quoted for the
    first player), and the second player's maximin is its negative."""
    v = form.game_value()
    assert v == pytest.approx(-1.0 / 18.0 if game.name == "kuhn" else -0.08560642, abs=1e-7)
    assert form.maximin(1)[0] == pytest.approx(-v, abs=EXACT)


def test_the_maximin_strategies_are_an_equilibrium_by_the_independent_best_response(form, game):
    """The two LP strategies, as table probabilities, leave each best response (the test
    walk's, not the LP's) exactly the game value, and their play is worth it."""
    v = form.game_value()
    x0, x1 = form.maximin(0)[1], form.maximin(1)[1]
    probs = table(form, x0, x1)
    assert best_response(game, probs, 1) == pytest.approx(-v, abs=EXACT)
    assert best_response(game, probs, 0) == pytest.approx(v, abs=EXACT)
    assert value(game, probs) == pytest.approx(v, abs=EXACT)
    assert form.value(x0, x1) == pytest.approx(v, abs=EXACT)
    assert form.guarantee(x0, 0) == pytest.approx(v, abs=EXACT)


def test_realization_and_behaviour_are_inverse_on_a_trained_strategy(form, game):
    """MCCFR's table strategy -> sequence form -> table again is the same on every row, and
    the sequence-form value is the independent walk's."""
    t = SmallMCCFR(game, seed=3)
    t.run(20_000)
    probs = t.strategy()
    x0, x1 = form.realization(probs, 0), form.realization(probs, 1)
    back = table(form, x0, x1)
    assert np.allclose(back, probs, atol=1e-12)
    assert form.value(x0, x1) == pytest.approx(value(game, probs), abs=1e-12)


def test_kuhn_against_a_player_who_always_bets_worked_by_hand():
    """Kuhn poker against always-bet, in either seat: a best response folds J (-1), calls or
    bets Q (0 against J or K on average) and wins 2 with K: 1/3 a hand. Every equilibrium takes
    1/9: first seat, J bluffs with a (-1 - a), Q calls with a + 1/3 (-2/3 + a), K +2; second
    seat, J folds (-1), Q calls 1/3 of the time (-2/3), K +2."""
    sf = SequenceForm.of(kuhn())
    ar = always_raise(kuhn())
    for seat in (0, 1):
        assert sf.best_against(ar, seat)[0] == pytest.approx(1.0 / 3.0, abs=EXACT)
        assert sf.best_against(ar, seat, slack=0.0)[0] == pytest.approx(1.0 / 9.0, abs=EXACT)
        assert sf.best_against(ar, seat, slack=0.0, sense="min")[0] == pytest.approx(1.0 / 9.0, abs=EXACT)


@pytest.mark.parametrize("opponent", [always_raise, always_call])
def test_the_frontier_is_what_the_independent_walk_measures_and_is_monotone(form, game, opponent):
    """Each point of the frontier is a strategy that wins what the LP says against the
    opponent (the test walk's value) and guarantees the game value minus its slack (the test
    walk's best response); the take grows with the slack from the best equilibrium's to the
    best response's."""
    opp = opponent(game)
    v = form.game_value()
    top = [form.best_against(opp, s)[0] for s in (0, 1)]
    for seat in (0, 1):
        takes = []
        for slack in (0.0, 0.01, 0.05, 0.2, 10.0):
            take, x = form.best_against(opp, seat, slack=slack)
            mine = form.behaviour(x, seat)
            probs = np.where(_rows_of(form, seat), mine, opp)
            walked = value(game, probs) if seat == 0 else -value(game, probs)
            assert walked == pytest.approx(take, abs=EXACT)
            own = v if seat == 0 else -v
            assert -best_response(game, mine, 1 - seat) >= own - slack - EXACT
            takes.append(take)
        assert all(b >= a - EXACT for a, b in zip(takes, takes[1:]))
        assert takes[-1] == pytest.approx(top[seat], abs=EXACT)
        low = form.best_against(opp, seat, slack=0.0, sense="min")[0]
        assert low <= takes[0] + EXACT


def _rows_of(sf: SequenceForm, player: int) -> np.ndarray:
    mask = np.zeros(sf.game.size, dtype=bool)
    for ent in sf.players[player].entries:
        mask[ent] = True
    return mask


def test_mccfr_takes_no_more_than_the_frontier_at_its_own_exploitability():
    """A strategy that gives away ``s`` in a seat takes at most the frontier's value at ``s``
    there: MCCFR's average strategy on Leduc, short and longer runs."""
    g = leduc()
    sf = SequenceForm.of(g)
    ar = always_raise(g)
    v = sf.game_value()
    for iterations in (2_000, 200_000):
        t = SmallMCCFR(g, seed=7)
        t.run(iterations)
        probs = t.strategy()
        for seat, own in ((0, v), (1, -v)):
            x = sf.realization(probs, seat)
            gap = own - sf.guarantee(x, seat)
            assert gap >= -EXACT
            take = sf.take(x, seat, ar)
            walked = value(g, np.where(_rows_of(sf, seat), probs, ar))   # the independent walk agrees
            assert take == pytest.approx(walked if seat == 0 else -walked, abs=EXACT)
            assert take <= sf.best_against(ar, seat, slack=max(gap, 0.0))[0] + EXACT


def test_a_game_without_perfect_recall_and_bad_arguments_are_refused():
    """Leduc with the second street's bucket the public card only forgets the private card:
    the sequence form does not hold and the build says so; a bad ``slack``, ``sense`` or
    ``player``, a table of another game or one that is not a strategy too; an infinite slack
    is no floor."""
    g = leduc()
    deals = g.deals.copy()
    deals[:, 1] = deals[:, 1] % 3
    deals[:, 5] = deals[:, 5] % 3
    forgetful = dataclasses.replace(g, deals=deals)
    with pytest.raises(ConfigError, match="perfect recall"):
        SequenceForm.of(forgetful)
    sf = SequenceForm.of(kuhn())
    with pytest.raises(ConfigError, match="slack"):
        sf.best_against(always_raise(kuhn()), 0, slack=-0.1)
    with pytest.raises(ConfigError, match="sense"):
        sf.best_against(always_raise(kuhn()), 0, sense="most")
    ar = always_raise(kuhn())
    for bad in ("0.1", True):
        with pytest.raises(ConfigError, match="slack"):
            sf.best_against(ar, 0, slack=bad)
    with pytest.raises(ConfigError, match="player must be 0 or 1"):
        sf.best_against(ar, 2)
    with pytest.raises(ConfigError, match="entries"):
        sf.best_against(always_raise(leduc()), 0)
    with pytest.raises(ConfigError, match="not a probability distribution"):
        sf.best_against(np.zeros_like(ar), 0)
    assert sf.best_against(ar, 0, slack=float("inf"))[0] == pytest.approx(sf.best_against(ar, 0)[0], abs=EXACT)


def test_the_experiment_script_writes_its_tables(tmp_path):
    """experiments/equilibrium_vs_raise.py, short MCCFR runs: its JSON and tables."""
    out = tmp_path / "eq.json"
    proc = subprocess.run([sys.executable, str(REPO / "experiments" / "equilibrium_vs_raise.py"), "--iterations",
                           "1000", "--out", str(out)], capture_output=True, text=True, timeout=600, check=True)
    data = json.loads(out.read_text())
    assert [g["game"] for g in data["games"]] == ["kuhn", "leduc"]
    for g in data["games"]:
        r = g["opponents"]["raise"]
        lo, hi = r["equilibria"]
        assert lo <= hi + EXACT <= r["best_response"] + 2 * EXACT
        takes = [f["take"] for f in r["frontier"]]
        assert all(b >= a - EXACT for a, b in zip(takes, takes[1:]))
        assert 0.0 <= r["slack_share_for_target"] <= 1.0
    assert "| leduc | raise |" in proc.stdout
