"""Replay of logged hands into decision points; impossible hands raise GameError naming the hand.

The expected features below are worked out by hand from the betting (pot, to_call, ...);
real ACPC logs are replayed and their logged payoffs compared with ours.
"""
from __future__ import annotations

import pytest

from cbr.errors import GameError
from cbr.game import preset
from cbr.logs.record import Action, HandRecord
from cbr.logs.replay import replay, replay_hand
from evaluator_ext.cards import card_str, parse_cards
from tests.conftest import lazy_module, shared_path

eval7 = lazy_module("eval7")  # only the tests that score showdowns with it need it


def ev7(cards) -> int:
    return eval7.evaluate([eval7.Card(card_str(c)) for c in cards])


def C(text: str) -> tuple[int, ...]:
    return parse_cards(text)


def A(spec: str) -> tuple[Action, ...]:
    """'0:2r 0:0c 1:1r' -> actions (street:position kind[amount])."""
    out = []
    for tok in spec.split():
        where, what = tok.split(":")
        street, pos = int(where), int(what[0])
        kind = what[1]
        amount = float(what[2:]) if len(what) > 2 else None
        out.append(Action(street, pos, kind, amount))  # type: ignore[arg-type]
    return tuple(out)


LIMIT3 = preset("holdem.limit.3p")  # 0 SB 5, 1 BB 10, 2 button opens; 10/20


def limit_record(**changes) -> HandRecord:
    base = dict(
        source="hand.log", line=7, hand_id="42", game=LIMIT3, players=("sb", "bb", "btn"),
        hole_cards=(None, C("KhKs"), C("AhAs")), board=C("2c7d9h4s3d"),
        actions=A("0:2r 0:0c 0:1c 1:0c 1:1r 1:2c 1:0f 2:1c 2:2r 2:1c 3:1c 3:2c"),
        payoffs=(-20.0, -50.0, 70.0),
    )
    base.update(changes)
    return HandRecord(**base)  # type: ignore[arg-type]


def test_limit_hand_replays_to_the_expected_decision_points() -> None:
    h = replay_hand(limit_record(), evaluate=ev7)
    dps = h.decisions
    assert [(d.street, d.position, d.action) for d in dps] == [
        (0, 2, "r"), (0, 0, "c"), (0, 1, "c"), (1, 0, "c"), (1, 1, "r"), (1, 2, "c"), (1, 0, "f"),
        (2, 1, "c"), (2, 2, "r"), (2, 1, "c"), (3, 1, "c"), (3, 2, "c")]
    got = [(d.to_call, d.pot, d.players_to_act, d.relative_position, d.street_bets, d.previous_round_bets)
           for d in dps]
    assert got == [
        (10.0, 15.0, 2, 0.0, 1, 0),   # button opens facing the big blind
        (15.0, 35.0, 1, 0.5, 2, 0),   # SB faces the raise
        (10.0, 50.0, 0, 1.0, 2, 0),   # BB closes
        (0.0, 60.0, 2, 0.0, 0, 2),    # flop: SB checks
        (0.0, 60.0, 1, 0.5, 0, 2),    # BB bets
        (10.0, 70.0, 1, 1.0, 1, 2),   # button calls; SB still to act
        (10.0, 80.0, 0, 0.0, 1, 2),   # SB folds
        (0.0, 80.0, 1, 0.0, 0, 1),    # turn: heads-up, BB first
        (0.0, 80.0, 0, 1.0, 0, 1),    # button bets
        (20.0, 100.0, 0, 0.0, 1, 1),  # BB calls
        (0.0, 120.0, 1, 0.0, 0, 1),   # river
        (0.0, 120.0, 0, 1.0, 0, 1),
    ]
    assert [d.hole for d in dps[:3]] == [C("AhAs"), None, C("KhKs")]  # unknown cards kept as None
    assert all(d.hand_id == "42" and d.source == "hand.log" for d in dps)
    assert dps[4].bets_to_call == 0 and dps[5].bets_to_call == 1.0 and dps[9].bets_to_call == 1.0
    assert dps[1].player == "sb" and dps[1].legal == "fcr" and dps[0].amount is None
    assert h.payoffs == (-20.0, -50.0, 70.0) and h.state.is_over and h.flags == []
    assert h.state.history == "rcc/crcf/crc/cc"
    assert replay(limit_record(), evaluate=ev7) == dps


def test_no_limit_hand_with_amounts() -> None:
    rec = HandRecord(
        source="nl.log", line=3, hand_id="9", game=preset("holdem.nolimit.6p"),
        players=tuple("abcdef"), hole_cards=(None, C("AhAs"), C("KhKs"), None, None, None),
        board=C("2c7d9h4s3d"),
        actions=A("0:2r300 0:3f 0:4f 0:5f 0:0f 0:1c300 1:1c0 1:2r500 1:1c500 2:1c 2:2c 3:1r1000 3:2f"),
        payoffs=(-50.0, 850.0, -800.0, 0.0, 0.0, 0.0),
    )
    h = replay_hand(rec, evaluate=ev7)
    d = h.decisions
    assert (d[0].to_call, d[0].pot, d[0].bets_to_call, d[0].amount) == (100.0, 150.0, 1.0, 300.0)
    assert (d[5].position, d[5].to_call, d[5].pot, d[5].players_to_act) == (1, 200.0, 450.0, 0)
    assert (d[8].position, d[8].to_call, d[8].pot, d[8].bets_to_call) == (1, 500.0, 1150.0, 5.0)
    assert d[7].previous_round_bets == 2 and d[7].street_bets == 0
    assert h.payoffs == rec.payoffs
    assert h.state.history == "r300ffffc/cr800c/cc/r1800f"


def test_posted_blinds_and_short_stacks_from_the_log() -> None:
    # heads-up IRC-style: only the big blind posted; the small blind has 15 chips and
    # goes all-in for less when raising, the board is run out without betting
    g = preset("irc.10-20.2p")  # 0 SB/button, 1 BB
    rec = HandRecord(
        source="irc", line=1, hand_id="h", game=g, players=("x", "y"),
        hole_cards=(C("AhAs"), C("KhKs")), board=C("2c7d9h4s3d"),
        actions=A("0:0c 0:1r 0:0c"), payoffs=(15.0, -15.0), stacks=(15.0, 500.0), posted=(0.0, 10.0))
    h = replay_hand(rec, evaluate=ev7)
    assert [d.to_call for d in h.decisions] == [10.0, 0.0, 10.0]
    assert h.state.all_in == (True, False) and h.state.total_committed == (15.0, 20.0)
    assert h.payoffs == (15.0, -15.0)


@pytest.mark.parametrize("changes, why", [
    (dict(actions=A("0:0c 0:1c")), "out of turn: position 2 is to act"),
    (dict(actions=A("0:2r 0:0r 0:1r 0:2r")), "capped"),
    (dict(hole_cards=(None, C("KhKs"), C("Ah2c"))), "card 2c dealt twice"),
    (dict(board=C("2c7d")), "too few board cards for the streets played: the log shows 2, the flop needs 3"),
    (dict(payoffs=(-20.0, 70.0, -50.0)), "payoffs do not match"),
    (dict(actions=A("0:2f 0:0f 0:1c")), "comes after the hand ended"),
    (dict(actions=A("0:2c 0:0c 0:1c 2:0c")), "the betting is on the flop"),
    (dict(actions=A("0:2c 0:0c")), "actions stop before the hand ends"),
    (dict(actions=A("0:2r 0:0c 0:1c 1:0r 1:1r 1:2r 1:0r 1:1r")), "capped"),
])
def test_impossible_hands_raise_naming_the_hand(changes: dict, why: str) -> None:
    with pytest.raises(GameError, match="hand.log:7 \\(hand 42\\)") as err:
        replay(limit_record(**changes), evaluate=ev7)
    assert why in str(err.value)


def test_fold_with_nothing_to_call_is_flagged_or_refused() -> None:
    rec = limit_record(actions=A("0:2c 0:0c 0:1f 1:0c 1:2c 2:0c 2:2c 3:0c 3:2c"), payoffs=(-10.0, -10.0, 20.0),
                       hole_cards=(C("QhQs"), C("KhKs"), C("AhAs")))
    h = replay_hand(rec, evaluate=ev7)
    assert len(h.decisions) == 8 and len(h.flags) == 1 and "nothing to call" in h.flags[0]
    assert h.state.folded == (False, True, False) and h.payoffs == (-10.0, -10.0, 20.0)
    with pytest.raises(GameError, match="cannot fold: nothing to call, check instead"):
        replay(rec, strict_folds=True)


def test_unknown_showdown_cards_give_no_payoffs_and_the_pot_bounds_the_logs() -> None:
    """Without every showdown card the result cannot be replayed, but the pot still bounds it
    (issue 35: such a showdown skipped the check, and +100 small bets were stored from a pot of 4).
    Here sb put in 20 and folded, bb 50 and btn 50 went to the showdown: a pot of 120."""
    unknown = dict(hole_cards=(None, None, C("AhAs")))
    for possible in [(-20.0, -50.0, 70.0), (-20.0, 70.0, -50.0), (-20.0, 10.0, 10.0), (-20.0, 68.0, -50.0)]:
        h = replay_hand(limit_record(**unknown, payoffs=possible))  # the last: 2 chips of rake
        assert h.payoffs is None and len(h.decisions) == 12
    for impossible, why in [((0.0, 0.0, 0.0), "position 0 can win or lose only -20 to -20"),
                            ((-20.0, 100.0, -80.0), "position 1 can win or lose only -50 to +70"),
                            ((10.0, -50.0, 40.0), "position 0 can win or lose only -20 to -20"),
                            ((-20.0, 70.0, -40.0), "add up to +10: chips won that no one lost")]:
        with pytest.raises(GameError, match="hand.log:7 \\(hand 42\\): payoffs do not match") as err:
            replay_hand(limit_record(**unknown, payoffs=impossible))
        assert why in str(err.value)
    assert replay_hand(limit_record(**unknown, payoffs=(0.0, 0.0, 0.0)), check_payoffs=False).payoffs is None


def test_a_heads_up_showdown_that_omits_a_hole_card_is_held_to_its_pot(tmp_path) -> None:
    """The issue's line: a pot of 40 cannot pay 1000 (it was read, and stored +100 small bets)."""
    from cbr.logs.acpc import AcpcParser

    def read(payoffs: str) -> HandRecord:
        path = tmp_path / "hand.log"
        path.write_text(f"STATE:0:cc/crc/cc/cc:5d5c|/8dAs8s/4h/6d:{payoffs}:p1|p2\n")
        return next(r for r in AcpcParser().parse(str(path)) if isinstance(r, HandRecord))

    with pytest.raises(GameError, match=r"payoffs do not match: .* position 0 can win or lose only -20 to \+20 "
                                        r"from a pot of 40"):
        replay_hand(read("1000|-1000"))
    for fine in ("20|-20", "-20|20"):
        assert replay_hand(read(fine)).payoffs is None


def test_wrong_player_count() -> None:
    with pytest.raises(GameError, match="2 players seated at a 3-player game"):
        replay(limit_record(players=("a", "b"), hole_cards=(None, None)))


# ---------------------------------------------------------------- real logs
def _acpc_records(folder: str):
    from cbr.logs import acpc

    for path in sorted(shared_path("acpc", folder).glob("*.log")):
        for item in acpc.AcpcParser().parse(str(path)):
            if isinstance(item, HandRecord):
                yield item


def test_every_acpc_limit_example_hand_replays_with_the_logged_payoffs() -> None:
    hands = 0
    decisions = 0
    for rec in _acpc_records("dealer_example_limit"):
        h = replay_hand(rec)            # raises on any mismatch with the logged payoffs
        assert h.payoffs is not None and rec.payoffs is not None
        # ACPC splits pots in fractions; we split in whole chips (odd chip rule)
        assert all(abs(a - b) <= 1.0 for a, b in zip(h.payoffs, rec.payoffs))
        assert len(h.decisions) == len(rec.actions)
        hands += 1
        decisions += len(h.decisions)
    assert hands == 2000 and decisions > 10_000


def test_pluribus_no_limit_hands_replay() -> None:
    n = 0
    for i, rec in enumerate(_acpc_records("pluribus_6p_nolimit")):
        if i >= 1500:
            break
        h = replay_hand(rec)
        assert h.payoffs is not None and abs(sum(h.payoffs)) < 1e-6
        n += 1
    assert n > 0


def test_payoff_mismatch_in_a_hand_with_a_quit_still_raises() -> None:
    # quits are encoded faithfully now (IRC), so a wrong payoff is an error there too
    rec = limit_record(payoffs=(-20.0, 70.0, -50.0), extra={"quits": (1,)})
    with pytest.raises(GameError, match="payoffs do not match"):
        replay_hand(rec, evaluate=ev7)


def test_a_player_leaving_out_of_turn_is_folded_at_once() -> None:
    # the big blind leaves the table while the button is to act; then the button folds
    rec = limit_record(actions=A("0:1f 0:2f"), payoffs=(10.0, -10.0, 0.0), extra={"quits": (1,)})
    h = replay_hand(rec, evaluate=ev7)
    assert h.payoffs == (10.0, -10.0, 0.0) and h.state.is_over
    assert [(d.position, d.action) for d in h.decisions] == [(2, "f")]
    assert len(h.flags) == 1 and "left the table out of turn" in h.flags[0]
    # only a listed quitter may fold out of turn
    with pytest.raises(GameError, match="out of turn: position 2 is to act"):
        replay_hand(limit_record(actions=A("0:1f 0:2f"), payoffs=(10.0, -10.0, 0.0)))


def test_wsop_big_blind_ante_hand_replays_with_the_logged_payoffs() -> None:
    """WSOP 2023 #43 hand 68: the big blind (who paid a 225,000 big-blind ante) is all-in
    and called; the log takes all 3,575,000 from him: antes are dead money."""
    from cbr.logs import phh

    path = shared_path("phh", "data", "wsop", "2023", "43", "5", "03-02-41.phh")
    [rec] = [r for r in phh.PhhParser().parse(str(path)) if isinstance(r, HandRecord)]
    h = replay_hand(rec, evaluate=ev7)
    assert h.payoffs == rec.payoffs == (-75_000.0, -3_575_000.0, 0.0, 0.0, 3_650_000.0)
