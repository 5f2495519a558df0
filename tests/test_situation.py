"""situation(): a decision point from plain numbers (what `cbr query --hole ...` builds).

The decision point must report back exactly the numbers it was described with (the CASPER
table features), and impossible descriptions must fail with a message naming the problem.
"""
from __future__ import annotations

import pytest
from tests.conftest import given, settings, st  # hypothesis, or stand-ins that skip without it

from cbr.errors import CBRError, GameError
from cbr.game.gamedef import preset, standard_table
from cbr.situation import situation
from evaluator_ext.cards import parse_cards
from evaluator_ext.errors import InvalidCardError

BOARDS = {0: "", 1: "3h4cJh", 2: "3h4cJh9s", 3: "3h4cJh9s2d"}


def test_docstring_example_flop_facing_a_bet() -> None:
    dp = situation(hole="AdQc", board="3h4cJh", players=2, position=1, to_call=1, pot=4)
    assert dp.street == 1
    assert dp.hole == tuple(parse_cards("AdQc")) and dp.board == tuple(parse_cards("3h4cJh"))
    assert (dp.players_dealt, dp.players_in_hand, dp.players_to_act) == (2, 2, 0)
    assert dp.relative_position == 1.0
    assert dp.bets_to_call == 1.0 and dp.bets_committed == 0.0
    assert dp.small_bets_in_pot == 4.0
    # pot odds from the definition: to_call / (pot + to_call), in chips (flop bet = small bet)
    assert dp.pot_odds == pytest.approx(1 / (4 + 1))
    assert dp.legal == "fcr"
    assert dp.action is None


@pytest.mark.parametrize("hole", ["AdQc", "Ad Qc", ["Ad", "Qc"], [49, 40], ("Ad", 40)])
def test_card_like_inputs_are_the_same_situation(hole) -> None:
    assert situation(hole=hole).hole == situation(hole="AdQc").hole == (49, 40)


@pytest.mark.parametrize("street", [0, 1, 2, 3])
def test_street_comes_from_the_board(street: int) -> None:
    dp = situation(hole="AsKs", board=BOARDS[street], previous_round_bets=2)
    assert dp.street == street
    # previous_round_bets only exists after the flop is dealt
    assert dp.previous_round_bets == (0 if street == 0 else 2)


def test_turn_and_river_bets_are_big_bets() -> None:
    game = preset("casper.2p")
    dp = situation(hole="AsKs", board=BOARDS[2], position=1, to_call=1, pot=6, game=game)
    assert dp.to_call == game.big_bet
    assert dp.pot == 6 * game.small_bet


def test_nothing_to_call_means_no_fold_and_cap_means_no_raise() -> None:
    assert situation(hole="AsKs", board=BOARDS[1]).legal == "cr"
    capped = situation(hole="AsKs", board=BOARDS[1], position=1, committed=3, to_call=1, pot=8)
    assert capped.legal == "fc"  # four bets on the flop: the cap of holdem limit


def test_preflop_big_blind_is_owed_before_anyone_acted() -> None:
    """The first actor pre-flop faces the big blind although nobody has acted yet."""
    dp = situation(hole="7c2d", players=3, position=0, committed=0, to_call=1, pot=1.5)
    assert dp.players_to_act == 2
    assert dp.bets_to_call == 1.0
    assert "f" in dp.legal


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_features_report_the_described_numbers(data) -> None:
    players = data.draw(st.integers(2, 10), label="players")
    in_hand = data.draw(st.integers(2, players), label="in_hand")
    position = data.draw(st.integers(0, in_hand - 1), label="position")
    street = data.draw(st.integers(0, 3), label="street")
    to_act = data.draw(st.integers(0, in_hand - 1), label="to_act")
    cap = 4  # raise_cap 3 pre-flop + the big blind, 4 after
    committed = data.draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), label="committed")
    owed_max = cap - committed
    to_call = data.draw(st.sampled_from([x for x in (0.0, 0.5, 1.0, 2.0, 3.0, 4.0) if x <= owed_max]),
                        label="to_call")
    if to_call > 0 and to_act == in_hand - 1 and street > 0:
        to_act = in_hand - 2  # someone after us must have acted (bet) for there to be a call
    # the pot holds at least the street's bets: ours + the bettor's, in small bets
    unit_sb = 1 if street < 2 else 2
    least = (committed + (committed + to_call if to_call > 0 else 0)) * unit_sb
    pot = least + data.draw(st.integers(0, 60), label="extra pot")
    prev = data.draw(st.integers(0, 4), label="previous_round_bets")
    dp = situation(hole="AsKd", board=BOARDS[street], players=players, in_hand=in_hand, position=position,
                   to_act=to_act, committed=committed, to_call=to_call, pot=pot, previous_round_bets=prev)
    assert dp.players_dealt == players
    assert dp.players_in_hand == in_hand
    assert dp.players_to_act == to_act
    assert dp.relative_position == pytest.approx(position / (in_hand - 1))
    assert dp.bets_committed == pytest.approx(committed)
    assert dp.bets_to_call == pytest.approx(to_call)
    assert dp.small_bets_in_pot == pytest.approx(pot)
    chips_to_call = to_call * 10 * unit_sb
    chips_pot = pot * 10
    assert dp.pot_odds == pytest.approx(chips_to_call / (chips_pot + chips_to_call) if to_call else 0.0)
    assert dp.previous_round_bets == (prev if street else 0)
    assert dp.legal.startswith("f") == (to_call > 0)


# ---- validation: GameError / ValueError with a message naming the problem ----
@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(hole="AdQc", position=2), "position must be between 0"),
        (dict(hole="AdQc", position=-1), "position must be between 0"),
        (dict(hole="AdQc", players=3, in_hand=4), "players in hand"),
        (dict(hole="AdQc", players=3, in_hand=1), "players in hand"),
        (dict(hole="AdQc", to_act=2), "players to act"),
        (dict(hole="AdQc", committed=-1), "cannot be negative"),
        (dict(hole="AdQc", to_call=-0.5), "cannot be negative"),
        (dict(hole="AdQc", board="3h4cJh", position=1, to_call=5), "exceed the cap"),
        (dict(hole="AdQc", board="3h4cJh", position=1, to_call=0.3), "whole bets"),
        (dict(hole="AdQc", board="3h4cJh", position=0, to_call=1), "someone must have bet"),
        (dict(hole="AdQc", board="3h4cJh", position=1, committed=1, to_call=1, pot=2), "pot of 2 small bets is smaller"),
        (dict(hole="AdQc", players=3, game=preset("holdem.limit.2p")), "seats 2 players"),
    ],
)
def test_impossible_situations_name_the_problem(kwargs, words) -> None:
    with pytest.raises(GameError, match=words) as info:
        situation(**kwargs)
    assert isinstance(info.value, ValueError) and isinstance(info.value, CBRError)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(hole="AdQx"), "unknown card 'Qx'"),
        (dict(hole="AdAd"), "Ad appears twice"),
        (dict(hole="AdQc", board="Ad4cJh"), "Ad appears twice"),
        (dict(hole="AdQcKh"), "exactly 2 cards"),
        (dict(hole="AdQc", board="3h4c"), "board must have 0, 3, 4, 5 cards"),
    ],
)
def test_bad_cards_are_invalid_card_errors(kwargs, words) -> None:
    with pytest.raises(InvalidCardError, match=words) as info:
        situation(**kwargs)
    assert isinstance(info.value, ValueError) and isinstance(info.value, CBRError)


def test_a_given_game_is_used_for_bet_sizes() -> None:
    game = standard_table("limit.4p.big", 4, (10, 20), 20, 40)
    dp = situation(hole="AdQc", board=BOARDS[1], players=4, position=3, to_call=1, pot=3, game=game)
    assert dp.game is game
    assert dp.to_call == 20 and dp.pot == 60
