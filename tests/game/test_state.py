"""The table state machine: blinds, caps, illegal actions, pots, payoffs, rotation, no-limit raises.

Expected numbers here are worked out by hand from the rules (see cbr.game.state's docstring);
showdowns are scored by eval7 (independent of our evaluator) unless the test is about the
default evaluator.
"""
from __future__ import annotations

import math

import pytest

from cbr.errors import ConfigError, GameError
from cbr.game import GameDef, preset, standard_table
from cbr.game.gamedef import irc_table
from cbr.game.state import HandState, button_position, seats_for_hand
from evaluator_ext.cards import card_str, parse_cards
from tests.conftest import given, lazy_module, settings, st  # hypothesis, or stand-ins that skip without it

eval7 = lazy_module("eval7")  # only the tests that score showdowns with it need it


def ev7(cards) -> int:
    return eval7.evaluate([eval7.Card(card_str(c)) for c in cards])


def C(text: str) -> tuple[int, ...]:
    return parse_cards(text)


LIMIT3 = standard_table("t3", 3, (5, 10), 10, 20)  # 0 SB, 1 BB, 2 button


def play(state: HandState, script: str, boards: list[str] = ()) -> None:
    """Run 'rc/cr/...' style actions, dealing the given boards at each '/'."""
    boards = list(boards)
    for ch in script:
        if ch == "/":
            state.deal_board(C(boards.pop(0)))
        else:
            state.act(ch)


# ---------------------------------------------------------------- blinds and order
def test_blinds_and_first_actor_three_players() -> None:
    s = HandState(LIMIT3)
    assert s.committed == (5.0, 10.0, 0.0) and s.pot == 15.0
    assert s.to_act == 2 and s.to_call == 10.0 and s.legal_actions() == "fcr"
    dp = s.decision_point()
    assert dp.order == (2, 0, 1) and dp.street_bets == 1 and dp.players_to_act == 2
    assert dp.relative_position == 0.0 and dp.to_call == 10.0 and dp.pot == 15.0 and dp.action is None


def test_heads_up_acpc_reverse_blinds() -> None:
    s = HandState(preset("holdem.limit.2p"))
    assert s.committed == (10.0, 5.0) and s.to_act == 1  # small blind (button) opens pre-flop
    s.act("c")
    assert s.to_act == 0 and s.legal_actions() == "cr"   # big blind's option
    s.act("c")
    assert s.needs_board and s.to_act is None and s.history == "cc"
    s.deal_board(C("2c3d4h"))
    assert s.to_act == 0 and s.street == 1 and s.committed == (0.0, 0.0) and s.history == "cc/"


def test_posted_blinds_override_the_game() -> None:
    s = HandState(LIMIT3, posted=(0, 10, 0))  # small blind missing (IRC-style hand)
    assert s.pot == 10.0 and s.to_act == 2
    s.act("c"); s.act("c")                   # SB calls the full 10
    assert s.to_act == 1 and s.legal_actions() == "cr"


def test_antes_go_into_the_pot_but_not_the_street() -> None:
    g = LIMIT3.replace(antes=(1, 1, 1))
    s = HandState(g)
    assert s.pot == 18.0 and s.committed == (5.0, 10.0, 0.0) and s.total_committed == (6.0, 11.0, 1.0)



def test_short_all_in_big_blind_still_opens_the_betting_at_the_full_blind() -> None:
    # IRC hand 797469974: the big blind posts 7 all-in; the others still call 10
    s = HandState(LIMIT3, stacks=(1000, 7, 1000), hole_cards=[C("AhAs"), C("KhKs"), C("QhQs")])
    assert s.committed == (5.0, 7.0, 0.0) and s.all_in == (False, True, False)
    assert s.to_act == 2 and s.to_call == 10.0 and s.bet_level == 10.0
    s.act("c")                                   # button calls the full big blind
    assert s.to_act == 0 and s.to_call == 5.0
    s.act("r")                                   # the small blind raises to 20, not 17
    assert s.committed == (20.0, 7.0, 10.0) and s.to_call == 10.0
    s.act("c")
    assert s.needs_board and s.total_committed == (20.0, 7.0, 20.0)
    assert s.pots() == [(21.0, (0, 1, 2)), (26.0, (0, 2))]


def test_short_blind_covered_by_the_small_blind_needs_no_action() -> None:
    # heads-up, the big blind all-in for 3 < the small blind's 5: nothing left to decide
    s = HandState(standard_table("hu", 2, (5, 10), 10, 20), stacks=(100, 3),
                  hole_cards=[C("AhAs"), C("KhKs")])
    assert s.to_act is None and s.needs_board
    for b in ("2c7d9h", "4s", "3d"):
        s.deal_board(C(b))
    assert s.is_over and s.pots() == [(6.0, (0, 1)), (2.0, (0,))]
    assert s.payoffs(evaluate=ev7) == (3.0, -3.0)
    # a raise facing a short blind goes to the full blind plus the bet
    t = HandState(LIMIT3, stacks=(1000, 4, 1000))
    t.act("r")
    assert t.committed == (5.0, 4.0, 20.0)


def test_big_blind_ante_is_dead_money_in_the_main_pot() -> None:
    # WSOP 2023 #43 hand 68 (no-limit, 75k/150k, big-blind ante 225k): the big blind shoves
    # for 3,350,000 on the street (+ his ante), the button calls; his ante is not returned
    g = GameDef("wsop", 5, (75_000, 150_000, 0, 0, 0), 150_000, 150_000, (99,) * 4, (2, 0, 0, 0),
                "nolimit", antes=(0, 225_000, 0, 0, 0))
    s = HandState(g, stacks=(2_275_000, 3_575_000, 2_675_000, 3_125_000, 18_050_000),
                  hole_cards=[C("8d3s"), C("9d9c"), C("6c5h"), C("Js4h"), C("AcKc")])
    s.act("f"); s.act("f"); s.act("r", 300_000); s.act("f"); s.act("r", 3_350_000); s.act("c")
    for b in ("2c8cTh", "Ah", "6d"):
        s.deal_board(C(b))
    assert s.total_committed == (75_000.0, 3_575_000.0, 0.0, 0.0, 3_350_000.0)
    assert s.pots() == [(7_000_000.0, (1, 4))]
    assert s.payoffs(evaluate=ev7) == (-75_000.0, -3_575_000.0, 0.0, 0.0, 3_650_000.0)


# ---------------------------------------------------------------- caps
def test_preflop_cap_is_three_raises_after_the_big_blind() -> None:
    s = HandState(LIMIT3)
    play(s, "rrr")
    assert s.street_bets == 4 and s.raises == 3
    assert s.legal_actions() == "fc"
    with pytest.raises(GameError, match="capped"):
        s.verify("r")
    assert s.committed == (30.0, 40.0, 20.0)


def test_postflop_cap_is_four_bets_and_big_bets_on_the_turn() -> None:
    s = HandState(LIMIT3)
    play(s, "ccc/rrrr", ["2c3d4h"])
    assert s.legal_actions() == "fc" and s.committed == (40.0, 20.0, 30.0)
    with pytest.raises(GameError, match="capped"):
        s.act("r")
    play(s, "cc/r", ["5s"])
    assert s.committed == (20.0, 0.0, 0.0) and s.previous_round_bets == 4


# ---------------------------------------------------------------- illegal actions say why
def test_counts_in_the_errors_are_in_the_singular_for_one() -> None:
    """'needs 1 board card(s)' and 'the hole cards of position(s) [1]' read as they are now."""
    s = HandState(LIMIT3, hole_cards=[C("AsAh"), None, C("KdKc")])
    play(s, "ccc/ccc", ["2c3d4h"])
    with pytest.raises(GameError, match="^the turn needs 1 board card, got 2$"):
        s.deal_board(C("5s6s"))
    play(s, "/ccc/ccc", ["5s", "6s"])
    assert s.is_over
    with pytest.raises(GameError, match="^showdown needs the hole cards of 1 position: 1$"):
        s.payoffs()
    t = HandState(LIMIT3, hole_cards=[C("AsAh"), None, None])
    play(t, "ccc/ccc/ccc/ccc", ["2c3d4h", "5s", "6s"])
    with pytest.raises(GameError, match="^showdown needs the hole cards of 2 positions: 1, 2$"):
        t.payoffs()


def test_illegal_actions_raise_with_a_reason() -> None:
    s = HandState(LIMIT3)
    with pytest.raises(GameError, match="unknown action kind"):
        s.verify("x")
    with pytest.raises(GameError, match="still open"):
        s.deal_board(C("2c3d4h"))
    play(s, "ccc")
    with pytest.raises(GameError, match="deal the next board cards first"):
        s.act("c")
    with pytest.raises(GameError, match="no decision point"):
        s.decision_point()
    with pytest.raises(GameError, match="needs 3 board cards, got 2$"):
        s.deal_board(C("2c3d"))
    s.deal_board(C("2c3d4h"))
    assert not s.can("f")
    with pytest.raises(GameError, match="cannot fold: nothing to call, check instead"):
        s.act("f")
    play(s, "rff")
    assert s.is_over
    with pytest.raises(GameError, match="the hand is over"):
        s.act("c")


def test_a_card_dealt_twice_is_refused() -> None:
    s = HandState(LIMIT3, hole_cards=[C("AhAs"), None, None])
    with pytest.raises(GameError, match="dealt twice"):
        s.set_hole_cards(1, C("AhKd"))
    play(s, "ccc")
    with pytest.raises(GameError, match="Ah dealt twice"):
        s.deal_board(C("2c3dAh"))
    with pytest.raises(GameError, match="dealt twice"):
        HandState(LIMIT3, hole_cards=[C("AhAs"), C("AsKd"), None])


# ---------------------------------------------------------------- payoffs
def test_fold_wins_the_pot() -> None:
    s = HandState(LIMIT3)
    play(s, "rff")
    assert s.is_over and s.payoffs() == (-5.0, -10.0, 15.0)
    with pytest.raises(GameError, match="only known once the hand is over"):
        HandState(LIMIT3).payoffs()


def test_split_pot_odd_chip_goes_left_of_the_button() -> None:
    # board straight A-K-Q-J-T: everyone left plays the board; SB folded 5 chips in
    s = HandState(LIMIT3, hole_cards=[C("2c3c"), C("2d3d"), C("2h3h")])
    play(s, "cfc/cc/cc/cc", ["AcKdQh", "Js", "Td"])
    assert s.is_over and s.pot == 25.0
    # 25 split two ways: 12 each, the odd chip to position 1 (first winner left of button 2)
    assert s.payoffs(evaluate=ev7) == (-5.0, 3.0, 2.0)
    assert button_position(LIMIT3) == 2


def test_three_way_tie_and_default_evaluator() -> None:
    s = HandState(LIMIT3, hole_cards=[C("2c3c"), C("2d3d"), C("2h3h")])
    play(s, "rcc/ccc/ccc/ccc", ["AcKdQh", "Js", "Td"])
    assert s.payoffs(evaluate=ev7) == (0.0, 0.0, 0.0)
    assert s.payoffs() == (0.0, 0.0, 0.0)


def test_side_pots_with_short_all_ins() -> None:
    s = HandState(LIMIT3, stacks=(15, 35, 1000),
                  hole_cards=[C("AhAs"), C("KhKs"), C("QhQs")])
    s.act("r")                       # button raises to 20
    s.act("c")                       # SB calls all-in for 15 (10 more)
    assert s.all_in == (True, False, False)
    s.act("r")                       # BB raises to 30 (5 behind)
    s.act("c")                       # button calls; SB is all-in
    assert s.needs_board and s.history == "rcrc"
    s.deal_board(C("2c7d9h"))
    assert s.to_act == 1
    s.act("r")                       # BB bets all-in for 5 (a short bet)
    assert s.all_in == (True, True, False)
    assert s.legal_actions() == "fc"  # nobody left who could call a raise
    s.act("c")
    assert s.needs_board             # no betting left: run the board out
    s.deal_board(C("4s")); assert s.needs_board
    s.deal_board(C("3d")); assert s.is_over and s.history == "rcrc/rc//"
    assert s.total_committed == (15.0, 35.0, 35.0)
    assert s.pots() == [(45.0, (0, 1, 2)), (40.0, (1, 2))]
    assert s.payoffs(evaluate=ev7) == (30.0, 5.0, -35.0)


def test_side_pot_goes_to_the_best_eligible_hand() -> None:
    # the short stack has the worst hand; the side pot goes to the best of the others
    s = HandState(LIMIT3, stacks=(15, 35, 1000), hole_cards=[C("7c8c"), C("KhKs"), C("AhAs")])
    play(s, "rcrc/rc", ["2c7d9h"])
    play(s, "/", ["4s"]); play(s, "/", ["3d"])
    assert s.payoffs(evaluate=ev7) == (-15.0, -35.0, 50.0)


def test_everyone_all_in_preflop_runs_out_the_board() -> None:
    g = preset("holdem.limit.2p")
    s = HandState(g, stacks=(10, 5), hole_cards=[C("AhAs"), C("KhKs")])
    assert s.all_in == (True, True) and s.needs_board and s.to_act is None
    for b in ("2c7d9h", "4s", "3d"):
        s.deal_board(C(b))
    assert s.is_over and s.payoffs(evaluate=ev7) == (5.0, -5.0)


# ---------------------------------------------------------------- short all-ins in limit
def test_short_all_in_raise_does_not_reopen_for_players_who_acted() -> None:
    s = HandState(LIMIT3, stacks=(17, 1000, 1000))
    s.act("c")                         # button calls 10
    s.act("r")                         # SB: raise to 20, but only 17 -> all-in, short by 3
    assert s.all_in[0] and s.committed == (17.0, 10.0, 10.0)
    assert s.legal_actions() == "fcr"  # BB has not acted yet: may raise
    s.act("c")
    assert s.to_act == 2 and s.legal_actions() == "fc"
    with pytest.raises(GameError, match="does not reopen the betting"):
        s.verify("r")


def test_full_raise_after_short_all_in_reopens() -> None:
    s = HandState(LIMIT3, stacks=(17, 1000, 1000))
    play(s, "crr")                      # BB makes a full raise to 27
    assert s.committed == (17.0, 27.0, 10.0)
    assert s.to_act == 2 and s.legal_actions() == "fcr"


# ---------------------------------------------------------------- no-limit
NL6 = preset("holdem.nolimit.6p")


def test_no_limit_min_raise_and_history() -> None:
    s = HandState(NL6)
    assert s.to_act == 2 and s.min_raise_to() == 200 and s.max_raise_to() == 10_000
    with pytest.raises(GameError, match="minimum raise is to 200"):
        s.verify("r", 150)
    with pytest.raises(GameError, match="needs an amount"):
        s.verify("r")
    with pytest.raises(GameError, match="only 10000"):
        s.verify("r", 10_001)
    a = s.act("r", 300)                 # a raise of 200
    assert a.amount == 300 and a.kind == "r"
    assert s.min_raise_to() == 500      # the last raise size (200) on top of 300
    assert not s.can("r", 499) and s.can("r", 500)
    s.act("r", 800)                     # raise by 500
    assert s.min_raise_to() == 1300
    assert s.history == "r300r800"
    call = s.act("c")
    assert call.amount == 800


def test_no_limit_short_all_in_does_not_reopen() -> None:
    s = HandState(NL6, stacks=(10_000, 10_000, 10_000, 10_000, 450, 10_000))
    s.act("r", 300)
    s.act("c")
    assert s.can("r", 450)                         # all-in below the minimum raise is allowed
    s.act("r", 450)                                # short all-in: +150 < 200
    assert s.all_in[4] and s.min_raise_to() == 650
    play(s, "fff")                                 # 5, SB, BB fold
    assert s.to_act == 2 and s.legal_actions() == "fc"
    assert s.history == "r300cr450fff"
    s.act("c"); s.act("c")
    assert s.needs_board


def test_no_limit_postflop_min_bet_is_the_big_blind_and_calls_carry_amounts() -> None:
    s = HandState(preset("holdem.nolimit.6p"))
    play(s, "ffffc")                               # SB completes; BB checks
    s.act("c")
    s.deal_board(C("2c7d9h"))
    assert s.to_act == 0 and s.min_raise_to() == 100
    s.act("r", 250)
    assert s.history == "ffffcc/r350"              # ACPC raise-to counts the whole hand
    with pytest.raises(GameError, match="a call brings position 1 to 250"):
        s.verify("c", 100)
    assert s.act("c", 250).amount == 250


# ---------------------------------------------------------------- rotation and game definitions
def test_seats_rotate_through_every_position() -> None:
    seats = ["a", "b", "c", "d"]
    hands = [seats_for_hand(seats, k) for k in range(8)]
    for i, name in enumerate(seats):
        assert sorted(h.index(name) for h in hands[:4]) == [0, 1, 2, 3]
    assert hands[4] == hands[0] and hands[1] == ("b", "c", "d", "a")
    with pytest.raises(GameError):
        seats_for_hand(["a"], 0)


def test_button_position_for_the_layouts() -> None:
    assert button_position(preset("holdem.limit.2p")) == 1
    assert button_position(standard_table("x", 2, (5, 10), 10, 20)) == 0
    assert button_position(preset("casper.9p")) == 8


def test_acpc_game_file_round_trip_and_errors() -> None:
    for name in ("holdem.limit.2p", "holdem.limit.3p", "holdem.nolimit.6p", "casper.9p"):
        g = preset(name)
        assert GameDef.from_acpc_game(g.to_acpc_game(), name=name) == g
    with pytest.raises(ConfigError, match="not a Texas hold'em"):
        GameDef.from_acpc_game("GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 2\nblind = 1 2\n"
                               "raiseSize = 2 4\nEND GAMEDEF")
    with pytest.raises(ConfigError, match="betting type"):
        GameDef.from_acpc_game("GAMEDEF\nnumPlayers = 2\nEND GAMEDEF")


def test_irc_tables_for_every_size() -> None:
    # real IRC logs have 11- and 12-handed hands
    for n in range(2, 13):
        g = irc_table(n)
        assert g.n_players == n and g.blinds_pair() == (5.0, 10.0) and g.small_bet == 10.0
        assert preset(f"irc.10-20.{n}p") == g


def test_bad_construction_is_refused() -> None:
    with pytest.raises(GameError, match="3 stacks"):
        HandState(preset("holdem.limit.2p"), stacks=(1, 2, 3))
    with pytest.raises(GameError, match="hole cards must be two different cards"):
        HandState(preset("holdem.limit.2p"), hole_cards=[(1, 1), None])


# ---------------------------------------------------------------- properties
@settings(max_examples=150, deadline=None)
@given(n=st.integers(2, 10), seed=st.integers(0, 2**32 - 1), nolimit=st.booleans(),
       stacks=st.lists(st.sampled_from([3, 8, 25, 60, 400, None]), min_size=10, max_size=10))
def test_random_play_conserves_chips(n: int, seed: int, nolimit: bool, stacks: list) -> None:
    import random

    rng = random.Random(seed)
    game = standard_table("p", n, (1, 2), 2, 4, betting="nolimit" if nolimit else "limit")
    deck = list(range(52)); rng.shuffle(deck)
    holes = [(deck[2 * i], deck[2 * i + 1]) for i in range(n)]
    board = deck[2 * n: 2 * n + 5]
    s = HandState(game, stacks=stacks[:n], hole_cards=holes)
    while not s.is_over:
        if s.needs_board:
            k = {0: 3}.get(s.street, 1)
            s.deal_board(board[len(s.board): len(s.board) + k])
            continue
        legal = s.legal_actions()
        assert legal and set(legal) <= set("fcr")
        kind = rng.choice(legal)
        amount = None
        if kind == "r" and nolimit:
            lo, hi = s.min_raise_to(), s.max_raise_to()
            amount = lo if rng.random() < 0.5 or math.isinf(hi) else hi
        s.act(kind, amount)
        assert math.isclose(s.pot, sum(s.total_committed))
    pay = s.payoffs(evaluate=ev7)
    assert abs(sum(pay)) < 1e-9
    for p in range(n):
        assert -pay[p] <= s.starting_stacks[p] + 1e-9


def test_copy_is_independent() -> None:
    s = HandState(LIMIT3)
    t = s.copy()
    t.act("r")
    assert s.history == "" and t.history == "r" and s.to_act == 2 and t.to_act == 0


# ---- integer chips (issue 34) ---------------------------------------------------------

CENTS3 = standard_table("cents3", 3, (0.05, 0.1), 0.1, 0.2)    # a $0.10/$0.20 table


def test_cents_are_counted_in_whole_chips_and_shown_exactly():
    """A stack of $0.30 that calls $0.20 has $0.10 behind, not 0.09999999999999998, and a
    flop bet of $0.10 puts it all in, with no tolerance anywhere."""
    s = HandState(CENTS3, stacks=[1.0, 0.7, 0.3])
    assert s.unit == 0.01 and s.chips.committed == (5, 10, 0) and s.chips.behind == (95, 60, 30)
    play(s, "rfc")
    assert s.stacks == (0.95, 0.5, 0.1) and s.total_committed == (0.05, 0.2, 0.2) and s.pot == 0.45
    s.deal_board(C("2c3d4h"))
    play(s, "rc")
    assert s.all_in == (False, False, True) and s.stacks == (0.95, 0.4, 0.0)
    assert s.total_committed == (0.05, 0.3, 0.3) and s.chips.total == (5, 30, 30) and s.chips.pot == 65


def test_the_unit_is_the_coarsest_that_makes_every_amount_whole():
    assert HandState(preset("holdem.limit.2p")).unit == 1.0
    assert HandState(preset("holdem.limit.2p"), stacks=[1000, 999.5]).unit == 0.1
    assert HandState(CENTS3).unit == 0.01
    for stack in (1e-7, math.nan):
        with pytest.raises(GameError, match="is not a whole number of chips of 1e-06"):
            HandState(preset("holdem.limit.2p"), stacks=[1000, stack])


def test_a_no_limit_amount_between_two_chips_is_refused():
    s = HandState(preset("holdem.nolimit.6p"))
    assert not s.can("r", 300.5)
    with pytest.raises(GameError, match=r"cannot raise to 300.5: not a whole number of chips of 1"):
        s.act("r", 300.5)
    assert s.act("r", 300.0).amount == 300.0 and s.chips.level == 300


def test_a_split_pot_in_cents_gives_the_odd_cent_to_the_first_winner_left_of_the_button():
    g = standard_table("cents2", 2, (0.01, 0.02), 0.02, 0.04).replace(antes=(0.01, 0.0))
    s = HandState(g, hole_cards=[C("2c3d"), C("2d3c")])   # the same hand: the pot is split
    play(s, "cc")
    for b in ("AhKhQs", "8d", "7c"):
        s.deal_board(C(b))
        play(s, "cc")
    assert s.pot == 0.05 and s.chips.pot == 5 and s.chips.total == (3, 2)
    # 5 cents split two ways: 3 to position 1 (left of the button, position 0), 2 to position 0
    assert s.payoffs(ev7) == (-0.01, 0.01)
