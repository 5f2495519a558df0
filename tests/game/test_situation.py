"""situation(): a decision point from plain numbers (what `cbr query --hole ...` builds).

The spot is reached by playing legal actions through the rules engine (HandState): it
must report back exactly the numbers it was described with (the CASPER table features),
replaying its own history must give the same decision point, and descriptions that no
legal hand reaches must fail with a message naming the option to change.
"""
from __future__ import annotations

import math

import pytest

from cbr.acpc.matchstate import from_matchstate
from cbr.errors import CBRError, GameError
from cbr.game.gamedef import preset, standard_table
from cbr.game.situation import situation
from cbr.game.state import HandState
from evaluator_ext.cards import cards_str, parse_cards
from evaluator_ext.errors import InvalidCardError
from tests.conftest import given, settings, st  # hypothesis, or stand-ins that skip without it

BOARDS = {0: "", 1: "3h4cJh", 2: "3h4cJh9s", 3: "3h4cJh9s2d"}
HU = preset("holdem.limit.2p")


def test_docstring_example_flop_facing_a_bet() -> None:
    dp = situation(hole="AdQc", board="3h4cJh", players=2, position=1, to_call=1, pot=5)
    assert dp.street == 1
    assert dp.hole == tuple(parse_cards("AdQc")) and dp.board == tuple(parse_cards("3h4cJh"))
    assert (dp.players_dealt, dp.players_in_hand, dp.players_to_act) == (2, 2, 0)
    assert dp.relative_position == 1.0
    assert dp.bets_to_call == 1.0 and dp.bets_committed == 0.0
    assert dp.small_bets_in_pot == 5.0
    assert dp.pot_odds == pytest.approx(1 / (5 + 1))
    assert dp.legal == "fcr"
    assert dp.action is None
    assert dp.previous_round_bets == 2  # a pot of 5 on the flop facing a bet needs a raised pre-flop


def test_preflop_posts_the_blinds() -> None:
    """The old situation() gave `--hole AhKd` a pot of 0 and nothing to call."""
    sb = situation(hole="AhKd", game=HU)
    assert sb.small_bets_in_pot == 1.5 and sb.bets_to_call == 0.5 and sb.bets_committed == 0.5
    bb = situation(hole="AhKd", position=1, game=HU)  # the big blind without --committed 1
    assert bb.bets_committed == 1.0 and bb.bets_to_call == 0.0 and bb.legal == "cr"
    assert bb.history == "c"  # the small blind called


def replayed(dp):
    """The same moment from the decision point's own betting string, as a MATCHSTATE."""
    streets = dp.history.split("/")
    board = "".join("/" + cards_str(dp.board[a:b]) for a, b in ((0, 3), (3, 4), (4, 5))[:dp.street])
    holes = "|".join(cards_str(dp.hole) if p == dp.position else "" for p in range(dp.players_dealt))
    return from_matchstate(f"MATCHSTATE:{dp.position}:0:{'/'.join(streets)}:{holes}{board}", dp.game)


@pytest.mark.parametrize("hole", ["AdQc", "Ad Qc", ["Ad", "Qc"], [49, 40], ("Ad", 40)])
def test_card_like_inputs_are_the_same_situation(hole) -> None:
    assert situation(hole=hole).hole == situation(hole="AdQc").hole == (49, 40)


@pytest.mark.parametrize("street", [0, 1, 2, 3])
def test_street_comes_from_the_board(street: int) -> None:
    dp = situation(hole="AsKs", board=BOARDS[street], previous_round_bets=2 if street else None)
    assert dp.street == street
    assert dp.previous_round_bets == (0 if street == 0 else 2)
    assert len(dp.history.split("/")) == street + 1


def test_turn_and_river_bets_are_big_bets() -> None:
    game = preset("casper.2p")
    dp = situation(hole="AsKs", board=BOARDS[2], position=1, to_call=1, pot=6, game=game)
    assert dp.to_call == game.big_bet
    assert dp.pot == 6 * game.small_bet


def test_nothing_to_call_means_no_fold_and_cap_means_no_raise() -> None:
    assert situation(hole="AsKs", board=BOARDS[1]).legal == "cr"
    capped = situation(hole="AsKs", board=BOARDS[1], position=1, committed=3, to_call=1)
    assert capped.legal == "fc"  # four bets on the flop: the cap of holdem limit


def test_preflop_first_actor_faces_the_big_blind() -> None:
    dp = situation(hole="7c2d", players=3, position=0, committed=0, to_call=1)
    assert dp.players_to_act == 2
    assert dp.bets_to_call == 1.0 and dp.small_bets_in_pot == 1.5
    assert "f" in dp.legal


def random_decision(data, players: int) -> object:
    """A decision point of a random legal hand (random actions through HandState)."""
    game = standard_table(f"limit.{players}p", players, (5, 10), 10, 20)
    state = HandState(game)
    board = parse_cards("3h4cJh9s2d")
    street = data.draw(st.integers(0, 3), label="street")
    points = []
    while not state.is_over:
        if state.needs_board:
            if state.street == street:
                break
            state.deal_board(board[(0, 3, 4)[state.street]:(3, 4, 5)[state.street]])
            continue
        if state.street == street:
            points.append(state.copy())
        legal = state.legal_actions()
        if sum(not f for f in state.folded) <= 2:
            legal = legal.replace("f", "")
        state.act(data.draw(st.sampled_from(sorted(legal)), label="action"))
    if not points:
        return None
    chosen = data.draw(st.sampled_from(points), label="decision")
    chosen.set_hole_cards(chosen.to_act, tuple(parse_cards("AsKd")))
    return chosen.decision_point()


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_described_logged_spots_come_back_with_their_numbers(data) -> None:
    """Any spot of a legal hand, described by its numbers, is found again with the same numbers."""
    players = data.draw(st.integers(2, 4), label="players")
    dp = random_decision(data, players)
    if dp is None:
        return
    live = [p for p in dp.order if not dp.folded[p]]
    got = situation(hole="AsKd", board=dp.board, players=players, in_hand=dp.players_in_hand,
                    position=live.index(dp.position), to_act=dp.players_to_act, committed=dp.bets_committed,
                    to_call=dp.bets_to_call, pot=dp.small_bets_in_pot,
                    previous_round_bets=dp.previous_round_bets if dp.street else None, game=dp.game)
    for attr in ("street", "players_dealt", "players_in_hand", "players_to_act", "relative_position",
                 "bets_committed", "bets_to_call", "small_bets_in_pot", "previous_round_bets", "pot_odds", "legal"):
        assert getattr(got, attr) == getattr(dp, attr), attr
    # the spot is one that replaying its own betting gives
    again = replayed(got)
    assert (again.committed, again.total_committed, again.folded, again.acted) == (
        got.committed, got.total_committed, got.folded, got.acted)


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_described_numbers_are_reported_back_or_refused(data) -> None:
    players = data.draw(st.integers(2, 4), label="players")
    street = data.draw(st.integers(0, 3), label="street")
    kwargs = dict(
        in_hand=data.draw(st.integers(2, players), label="in_hand"),
        position=data.draw(st.integers(0, players - 1), label="position"),
        to_call=data.draw(st.sampled_from([0.0, 0.5, 1.0, 2.0]), label="to_call"),
        pot=data.draw(st.integers(1, 40), label="pot") / 2,
    )
    kwargs["position"] = min(kwargs["position"], kwargs["in_hand"] - 1)
    try:
        dp = situation(hole="AsKd", board=BOARDS[street], players=players, **kwargs)
    except GameError as exc:
        # the error is about given options (their library names), and names no command-line option
        assert "\n" not in str(exc) and "--" not in str(exc), str(exc)
        assert exc.fields and set(exc.fields) <= {"in_hand", "position", "to_call", "pot"}, (exc.fields, str(exc))
        return
    live = [p for p in dp.order if not dp.folded[p]]
    assert (dp.players_in_hand, live.index(dp.position)) == (kwargs["in_hand"], kwargs["position"])
    assert dp.bets_to_call == kwargs["to_call"] and dp.small_bets_in_pot == kwargs["pot"]
    assert replayed(dp).committed == dp.committed


# ---- validation: GameError / ValueError with a message naming the problem, about a field ----
@pytest.mark.parametrize(
    "kwargs, field, words",
    [
        (dict(hole="AdQc", position=2), "position", "your position must be at most 1 with 2 players in hand"),
        (dict(hole="AdQc", position=-1), "position", "your position"),
        (dict(hole="AdQc", players=3, in_hand=4), "in_hand", r"players in hand must be at most the players dealt \(3\), "
                                                              r"got 4"),
        (dict(hole="AdQc", players=3, in_hand=1), "in_hand", "players in hand"),
        (dict(hole="AdQc", players=0), "dealt", "players dealt"),
        (dict(hole="AdQc", players=13), "dealt", "players dealt"),
        (dict(hole="AdQc", to_act=2), "to_act", "players still to act"),
        (dict(hole="AdQc", committed=-1), "committed", "cannot be negative"),
        (dict(hole="AdQc", to_call=-0.5), "to_call", "cannot be negative"),
        (dict(hole="AdQc", to_call=math.nan), "to_call", "finite"),
        (dict(hole="AdQc", pot=math.inf), "pot", "finite"),
        (dict(hole="AdQc", pot=1e300), "pot", "more than 2 players can put in"),
        (dict(hole="AdQc", board="3h4cJh", position=1, to_call=5), "to_call", "exceed the cap"),
        (dict(hole="AdQc", board="3h4cJh", position=1, to_call=0.3), "to_call", "whole bets"),
        (dict(hole="AdQc", board="3h4cJh", position=1, to_call=0.5), "to_call", "whole bets"),
        (dict(hole="AdQc", to_call=0.25), "to_call", "whole bets"),
        (dict(hole="AdQc", board="3h4cJh", previous_round_bets=-1), "previous_round_bets", "previous round"),
        (dict(hole="AdQc", board="3h4cJh", previous_round_bets=0), "previous_round_bets", "previous round"),  # the big blind is a bet
        (dict(hole="AdQc", board="3h4cJh", previous_round_bets=10**20), "previous_round_bets", "previous round"),
        (dict(hole="AdQc", board="3h4cJh", previous_round_bets=2.5), "previous_round_bets", "previous round"),
        (dict(hole="AdQc", previous_round_bets=2), "previous_round_bets", "pre-flop has no previous round"),
        (dict(hole="AdQc", board="3h4cJh", position=0, to_act=1, to_call=1), "to_act", "change the players still to act$"),
        (dict(hole="AdQc", board="3h4cJh", position=1, committed=1, to_call=1, pot=2), "pot", "change the pot$"),
        (dict(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=4), "pot", "a pot of 3 can happen"),
        (dict(hole="AdQc", players=3, game=preset("holdem.limit.2p")), "dealt", "seats 2 players"),
        (dict(hole="AdQc", players=6, game=preset("holdem.nolimit.6p")), "matchstate", "as a MATCHSTATE"),
    ],
)
def test_impossible_situations_name_the_problem(kwargs, field, words) -> None:
    """The message says what is wrong in words and names no command-line option (it said
    ``--pot``, which the server then rewrote); ``field`` is the option to change, by its
    name in the library (the CLI and the server each name it their own way)."""
    with pytest.raises(GameError, match=words) as info:
        situation(**kwargs)
    assert isinstance(info.value, ValueError) and isinstance(info.value, CBRError)
    assert "\n" not in str(info.value) and "--" not in str(info.value), str(info.value)
    assert info.value.field == field


def test_an_error_about_two_options_carries_both() -> None:
    with pytest.raises(GameError, match="change the bets to call or committed") as info:
        situation(hole="AdQc", board="3h4cJh", committed=3, to_call=3)
    assert info.value.fields == ("to_call", "committed")
    with pytest.raises(GameError, match=r"\(options: in hand 2, position 0, to act 0, committed 1, to call 0, "
                                        r"pot 2\): change one of them$") as info:
        situation(hole="AdQc", board="3h4cJh", position=0, to_act=0, committed=1, to_call=0, pot=2)
    assert info.value.fields == ("in_hand", "position", "to_act", "committed", "to_call", "pot")


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(hole="AdQx"), "unknown card 'Qx'"),
        (dict(hole="AdAd"), "Ad appears twice"),
        (dict(hole="AdQc", board="Ad4cJh"), "Ad appears twice"),
        (dict(hole="AdQcKh"), "exactly 2 cards"),
        (dict(hole="AdQc", board="3h4c"), "board must have 0, 3, 4 or 5 cards"),
    ],
)
def test_bad_cards_are_invalid_card_errors(kwargs, words) -> None:
    with pytest.raises(InvalidCardError, match=words) as info:
        situation(**kwargs)
    assert isinstance(info.value, ValueError) and isinstance(info.value, CBRError)


def test_a_given_game_is_used_for_bet_sizes() -> None:
    game = standard_table("limit.4p.big", 4, (10, 20), 20, 40)
    dp = situation(hole="AdQc", board=BOARDS[1], players=4, position=3, to_call=1, pot=11, game=game)
    assert dp.game is game
    assert dp.to_call == 20 and dp.pot == 220  # 4 x 2 small bets pre-flop, a bet and a call on the flop


@pytest.mark.parametrize("players", [6, 9, 12])
def test_big_tables_left_out_options_mean_no_extra_betting(players: int) -> None:
    """On big tables too: a spot facing one bet on the turn is one bet, everyone still in."""
    game = standard_table(f"limit.{players}p", players, (5, 10), 10, 20)
    dp = situation(hole="AhKh", board=BOARDS[2], players=players, position=players - 1, to_act=0, to_call=1,
                   game=game)
    assert dp.players_in_hand == players and dp.street_bets == 1 and dp.legal == "fcr"
    assert dp.small_bets_in_pot == players + 2 * (players - 1)  # blinds called, checked flop, a bet and calls
    assert replayed(dp).committed == dp.committed


@pytest.mark.parametrize("options", [
    dict(position=1, to_call=1, pot=8, previous_round_bets=2),
    dict(in_hand=3, players=4, to_act=1),
    dict(position=0, pot=2),
])
def test_a_spot_replayed_from_the_path_cache_is_the_spot_searched_anew(options) -> None:
    from cbr.game import situation as module

    module._PATHS.clear()
    first = situation(hole="AdQc", board="3h4cJh2s", **options)      # searched, its path kept
    assert len(module._PATHS) == 1
    cached = situation(hole="AdQc", board="5d6d7dKs", **options)     # the path replayed on another board
    module._PATHS.clear()
    fresh = situation(hole="AdQc", board="5d6d7dKs", **options)      # searched anew
    assert cached == fresh
    assert cached.history == first.history and cached.board != first.board


@pytest.mark.parametrize("players", [2, 3, 6, 12])
def test_the_default_game_is_named_and_played_as_everywhere_else(players: int) -> None:
    """Without ``game``, a situation was played at a table named ``limit.<N>p``, a name nothing
    else uses nor ``--game`` takes (heads-up also seated otherwise than ``cbr query``'s default
    game). It is the preset ``holdem.limit.<N>p`` that ``cbr query`` and ``cbr match`` play."""
    from cbr.game.spec import default_game, load_game

    dp = situation(hole="AdQc", board="3h4cJh", players=players, to_call=1)
    assert dp.game.name == f"holdem.limit.{players}p"
    assert dp.game == default_game(players) == load_game(dp.game.name)
    given_game = situation(hole="AdQc", board="3h4cJh", players=players, to_call=1, game=load_game(dp.game.name))
    assert given_game == dp
