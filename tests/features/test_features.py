"""CASPER features on hand-built decision points; hand features cached per player and street;
hand strength and potentials cross-checked against eval7 by independent enumeration."""
from __future__ import annotations

import dataclasses
import functools
import pickle
from itertools import combinations

import numpy as np
import pytest

from cbr.errors import GameError
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import preset, standard_table
from evaluator_ext.cards import parse_cards
from features.base import FeatureSet, street_number
from features.casper import CASPER_FEATURES, PREFLOP_FEATURES, CasperFeatures, HandFeatureCache
from tests.conftest import lazy_module


class CountingEvaluator:
    """Fixed hand values that are easy to recognise, and a tally of calls."""

    def __init__(self) -> None:
        self.calls = {"preflop_rank": 0, "hand_strength": 0, "hand_potential": 0}

    def preflop_rank(self, hole):
        self.calls["preflop_rank"] += 1
        return 42

    def hand_strength(self, hole, board):
        self.calls["hand_strength"] += 1
        return 0.625

    def hand_potential(self, hole, board):
        self.calls["hand_potential"] += 1
        if len(board) == 5:
            raise AssertionError("no potential on the river")
        return (0.25, 0.125)


def c(text: str) -> tuple[int, ...]:
    return parse_cards(text)


def preflop_hu(hole: str = "AsKd", **kw) -> DecisionPoint:
    """ACPC heads-up, reverse blinds: position 0 posted the big blind (10), position 1 the
    small blind (5) and acts first."""
    args = dict(game=preset("holdem.limit.2p"), street=0, position=1, player="sb", hole=c(hole), board=(),
                folded=(False, False), all_in=(False, False), acted=(False, False), order=(1, 0),
                street_bets=1, committed=(10.0, 5.0), total_committed=(10.0, 5.0), previous_round_bets=0,
                legal="fcr", action="c")
    args.update(kw)
    return DecisionPoint(**args)


def flop_3p(position: int = 2, player: str = "p2", hole: str = "QhQs", **kw) -> DecisionPoint:
    """Three players saw a flop for 10 each (pot 30). Position 0 bet 10, position 1 raised to
    20; position 2 acts: 2 bets to call into a pot of 60."""
    args = dict(game=preset("holdem.limit.3p"), street=1, position=position, player=player, hole=c(hole),
                board=c("2c7d9h"), folded=(False, False, False), all_in=(False, False, False),
                acted=(False, True, False), order=(0, 1, 2), street_bets=2, committed=(10.0, 20.0, 0.0),
                total_committed=(20.0, 30.0, 10.0), previous_round_bets=1, legal="fcr", action="c")
    args.update(kw)
    return DecisionPoint(**args)


def turn_4p(**kw) -> DecisionPoint:
    """Four seats, position 1 folded pre-flop. On the turn (bet 20) position 0 bet; position 2
    acts with position 3 still to act: 1 bet to call into 120."""
    args = dict(game=standard_table("t4", 4, (5, 10), 10, 20), street=2, position=2, player="p2",
                hole=c("Ac5c"), board=c("2c7d9hKc"), folded=(False, True, False, False),
                all_in=(False,) * 4, acted=(True, False, False, False), order=(0, 2, 3), street_bets=1,
                committed=(20.0, 0.0, 0.0, 0.0), total_committed=(50.0, 10.0, 30.0, 30.0),
                previous_round_bets=2, legal="fcr", action="r")
    args.update(kw)
    return DecisionPoint(**args)


# ---- names and shapes ------------------------------------------------------------------
def test_protocol_and_names() -> None:
    fs = CasperFeatures(evaluator=CountingEvaluator())
    assert isinstance(fs, FeatureSet) and fs.name == "casper"
    assert fs.feature_names(0) == list(PREFLOP_FEATURES) == list(CASPER_FEATURES[:8])
    assert fs.feature_names("turn") == list(CASPER_FEATURES) and len(CASPER_FEATURES) == 12
    assert PREFLOP_FEATURES[-1] == "hand_strength"
    assert CASPER_FEATURES[8:] == ("positive_potential", "negative_potential", "small_bets_in_pot",
                                   "previous_round_bets")
    with pytest.raises(ValueError, match="unknown street"):
        fs.feature_names("showdown")
    assert street_number("River") == 3


# ---- values by hand ----------------------------------------------------------------------
def test_preflop_row_by_hand() -> None:
    ev = CountingEvaluator()
    row = CasperFeatures(evaluator=ev).row(preflop_hu())
    assert row.dtype == np.float32 and row.shape == (8,)
    # dealt 2, first to act (0), 2 in hand, 1 to act, 0.5 bets in (SB of a 10 bet), 0.5 to call,
    # pot odds 5/(15+5), hand strength = pre-flop rank
    np.testing.assert_allclose(row, [2, 0, 2, 1, 0.5, 0.5, 0.25, 42])


def test_preflop_uses_the_real_rank() -> None:
    import evaluator_ext

    fs = CasperFeatures()
    assert fs.row(preflop_hu("AsAh"))[7] == 1.0  # AA is the best class
    for hole in ("7c2d", "KhQh", "9s9d"):
        assert fs.row(preflop_hu(hole))[7] == evaluator_ext.preflop_rank(c(hole))
        assert 1 <= fs.row(preflop_hu(hole))[7] <= 169


def test_flop_row_by_hand() -> None:
    row = CasperFeatures(evaluator=CountingEvaluator()).row(flop_3p())
    assert row.shape == (12,)
    # dealt 3, last of 3 (1.0), 3 in hand, 1 still to act (position 0, who has not acted
    # since the raise), 0 bets in, 2 bets to call, pot odds 20/(60+20), HS, PPOT, NPOT,
    # pot 60 = 6 small bets, 1 bet in the previous round
    np.testing.assert_allclose(row, [3, 1, 3, 1, 0, 2, 0.25, 0.625, 0.25, 0.125, 6, 1], rtol=1e-6)


def test_turn_row_with_a_folded_player_by_hand() -> None:
    row = CasperFeatures(evaluator=CountingEvaluator()).row(turn_4p())
    # dealt 4, middle of the 3 live players (0.5), 3 in hand, 1 to act, 0 in, 1 bet (20) to
    # call, 20/(120+20), HS, PPOT, NPOT, 120/10 = 12 small bets, 2 bets on the flop
    np.testing.assert_allclose(row, [4, 0.5, 3, 1, 0, 1, 1 / 7, 0.625, 0.25, 0.125, 12, 2], rtol=1e-6)


def test_river_has_no_potential_and_never_asks_for_it() -> None:
    ev = CountingEvaluator()
    dp = turn_4p(street=3, board=c("2c7d9hKc3s"), committed=(0.0,) * 4, acted=(False,) * 4,
                 total_committed=(50.0, 10.0, 50.0, 50.0), previous_round_bets=1, position=0)
    row = CasperFeatures(evaluator=ev).row(dp)
    assert row[8] == 0 and row[9] == 0 and row[7] == pytest.approx(0.625)
    assert ev.calls["hand_potential"] == 0
    assert row[6] == 0  # nothing to call: pot odds 0
    assert row[3] == 2 and row[1] == 0  # first of three, two still to act


def test_bad_decision_points_are_refused() -> None:
    fs = CasperFeatures(evaluator=CountingEvaluator())
    with pytest.raises(GameError, match="no known hole cards"):
        fs.row(dataclasses.replace(flop_3p(), hole=None))
    with pytest.raises(GameError, match="needs 3 board cards"):
        fs.row(flop_3p(board=c("2c7d")))


def test_query_situation_and_logged_decision_give_the_same_row() -> None:
    from cbr.game.situation import situation

    fs = CasperFeatures()
    query = situation(hole="QhQs", board="2c7d9h", players=3, position=2, to_act=1, to_call=2, pot=6,
                      previous_round_bets=1)
    np.testing.assert_array_equal(fs.row(query), fs.row(flop_3p()))


# ---- one evaluation per player and street ---------------------------------------------------
def test_hand_features_computed_once_per_player_and_street() -> None:
    ev = CountingEvaluator()
    fs = CasperFeatures(evaluator=ev)
    # one hand: p2 (QhQs) acts twice on the flop, p0 (Js Ts) twice, then both on the turn
    flop = [
        flop_3p(position=0, player="p0", hole="JsTs", committed=(0.0, 0.0, 0.0), acted=(False,) * 3),
        flop_3p(),
        flop_3p(position=0, player="p0", hole="JsTs", committed=(10.0, 20.0, 20.0), acted=(False, True, True)),
        flop_3p(committed=(20.0, 20.0, 20.0)),
    ]
    turn_board = c("2c7d9hKc")
    turn = [flop_3p(street=2, board=turn_board), flop_3p(street=2, board=turn_board[::-1], position=0,
                                                          player="p0", hole="TsJs")]
    rows = fs.rows(flop + turn)
    assert rows[1].shape == (4, 12) and rows[2].shape == (2, 12) and rows[0].shape == (0, 8)
    assert ev.calls == {"preflop_rank": 0, "hand_strength": 4, "hand_potential": 4}
    for dp in flop + turn:  # the same rows again: all from the cache
        fs.row(dp)
    assert ev.calls["hand_strength"] == 4
    info = fs.cache.info()
    assert (info.misses, info.hits) == (4, 8)
    # rows() keeps input order within a street
    np.testing.assert_array_equal(rows[1][1], fs.row(flop[1]))


def test_cache_is_bounded_lru() -> None:
    cache = HandFeatureCache(maxsize=2)
    calls = []
    for key in [(0, 1), (2, 3), (0, 1), (4, 5), (2, 3)]:
        cache.get_or_compute(key, (), lambda k=key: calls.append(k) or (float(k[0]),))
    # (2,3) was least recently used when (4,5) came in, so it is computed again
    assert calls == [(0, 1), (2, 3), (4, 5), (2, 3)]
    assert cache.info().size == 2
    with pytest.raises(ValueError):
        HandFeatureCache(0)


def test_picklable_for_worker_processes() -> None:
    import evaluator_ext

    fs = CasperFeatures()
    fs.row(flop_3p())  # binds the default evaluator module
    clone = pickle.loads(pickle.dumps(fs))
    np.testing.assert_array_equal(clone.row(flop_3p()), fs.row(flop_3p()))
    assert clone.evaluator is evaluator_ext


def test_plugin_entry_point_declared() -> None:
    import tomllib
    from importlib.metadata import EntryPoint
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    target = pyproject["project"]["entry-points"]["cbr.features"]["casper"]
    cls = EntryPoint("casper", target, "cbr.features").load()
    assert cls is CasperFeatures


# ---- real hand values against an independent enumeration (eval7) ----------------------------
eval7 = lazy_module("eval7")


def _e7(cards: tuple[int, ...]) -> list:
    return [_e7_card(x) for x in cards]


@functools.cache
def _e7_card(card: int) -> "eval7.Card":
    """eval7's card for our card number, made once (the flop's brute force asks a million times)."""
    from evaluator_ext.cards import card_str

    return eval7.Card(card_str(card))


def _reference_hs_and_potential(hole: tuple[int, ...], board: tuple[int, ...]) -> tuple[float, float, float]:
    """HS vs one opponent and Poki's PPOT/NPOT by brute force with eval7 (higher = better);
    every opponent holding counts once per board completion."""
    dead = set(hole) | set(board)
    deck = [x for x in range(52) if x not in dead]
    ours_now = eval7.evaluate(_e7(hole + board))
    ahead = tied = behind = 0
    hp = np.zeros((3, 3))
    to_come = 5 - len(board)
    ours_cache: dict = {}
    for opp in combinations(deck, 2):
        theirs = eval7.evaluate(_e7(opp + board))
        now = 0 if ours_now > theirs else 1 if ours_now == theirs else 2
        ahead, tied, behind = ahead + (now == 0), tied + (now == 1), behind + (now == 2)
        if to_come == 0:
            continue
        rest = [x for x in deck if x not in opp]
        for runout in combinations(rest, to_come):
            if runout not in ours_cache:
                ours_cache[runout] = eval7.evaluate(_e7(hole + board + runout))
            o, t = ours_cache[runout], eval7.evaluate(_e7(opp + board + runout))
            hp[now, 0 if o > t else 1 if o == t else 2] += 1
    hs = (ahead + tied / 2) / (ahead + tied + behind)
    if to_come == 0:
        return hs, 0.0, 0.0
    tot = hp.sum(axis=1)
    ppot = (hp[2, 0] + hp[2, 1] / 2 + hp[1, 0] / 2) / (tot[2] + tot[1] / 2)
    npot = (hp[0, 2] + hp[1, 2] / 2 + hp[0, 1] / 2) / (tot[0] + tot[1] / 2)
    return hs, ppot, npot


@pytest.mark.parametrize("hole, board", [("Ac5c", "2c7d9hKc"), ("AdQc", "3h4cJh8d"), ("7s7h", "7c2d9hTs"),
                                          ("AsKd", "2c7d9hKc3s"), ("8h9h", "2c3c4c5c6c")])
def test_turn_and_river_features_match_eval7(hole: str, board: str) -> None:
    h, b = c(hole), c(board)
    street = 2 if len(b) == 4 else 3
    dp = turn_4p(hole=h, board=b, street=street)
    row = CasperFeatures().row(dp)
    hs, ppot, npot = _reference_hs_and_potential(h, b)
    # exact enumeration on both sides: equal up to float32 rounding of the stored row
    np.testing.assert_allclose(row[7:10], [hs, ppot, npot], atol=1e-6)


@pytest.mark.slow
def test_flop_features_match_eval7() -> None:
    h, b = c("AdQc"), c("3h4cJh")
    row = CasperFeatures().row(flop_3p(hole="AdQc", board=b))
    np.testing.assert_allclose(row[7:10], _reference_hs_and_potential(h, b), atol=1e-6)


@pytest.mark.parametrize("board", ["", "3h4cJh", "3h4cJh9s", "3h4cJh9s2d"])
def test_hole_rows_are_the_rows_holding_by_holding(board: str) -> None:
    """``hole_rows`` (betting features once, every holding's hand features in one batch)
    gives, row for row and bit for bit, what ``row`` gives with each holding in place of
    the decision point's own; a subclass with columns of its own, and bad cards, take the
    row-by-row path (and its errors)."""
    from features.casper_opp import CasperOpponentFeatures

    cards = parse_cards(board) if board else ()
    street = {0: 0, 3: 1, 4: 2, 5: 3}[len(cards)]
    dp = DecisionPoint(game=preset("holdem.limit.2p"), street=street, position=0, player="p1",
                       hole=(49, 40), board=tuple(cards), folded=(False, False), all_in=(False, False),
                       acted=(True, False), order=(0, 1), street_bets=1, committed=(2.0, 1.0),
                       total_committed=(12.0, 11.0), previous_round_bets=2, legal="fcr")
    holes = [h for h in combinations(range(52), 2) if not set(h) & set(cards)]
    want = np.stack([CasperFeatures().row(dataclasses.replace(dp, hole=h)) for h in holes])
    fs = CasperFeatures()
    got = fs.hole_rows(dp, holes)
    assert got.dtype == np.float32 and np.array_equal(got, want)
    assert np.array_equal(fs.hole_rows(dp, holes[::-1]), want[::-1])  # again, from the board's values kept
    opp = CasperOpponentFeatures()
    assert np.array_equal(opp.hole_rows(dp, holes[:3]), np.stack([opp.row(dataclasses.replace(dp, hole=h))
                                                                  for h in holes[:3]]))
    with pytest.raises(ValueError):
        CasperFeatures().hole_rows(dp, [holes[0], (holes[0][0], holes[0][0])])
