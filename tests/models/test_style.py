"""Playing styles (cbr.models.style) against an independent count through the rules engine."""
from __future__ import annotations

import pytest

from cbr.game.state import HandState
from cbr.models.style import StyleStats, style_of_hand
from cbr.play.match import run_match
from cbr.play.table import BOARD_STEPS


class Keep:
    def __init__(self) -> None:
        self.records = []

    def write(self, record) -> None:
        self.records.append(record)


def _by_rules(record):
    """The same counts, with 'facing a bet' from the rules engine's to_call."""
    state = HandState(record.game, players=record.players, hole_cards=record.hole_cards)
    out = {name: ([0, 0, 0, 0], [0, 0, 0, 0]) for name in record.players}
    put, raised, acted = set(), set(), set()
    for a in record.actions:
        while state.needs_board:
            lo, hi = BOARD_STEPS[state.street]
            state.deal_board(record.board[lo:hi])
        dp = state.decision_point()
        name = record.players[a.position]
        num, den = out[name]
        if state.street == 0:
            acted.add(name)
            if a.kind == "r" or (a.kind == "c" and dp.to_call > 0):
                put.add(name)
            if a.kind == "r":
                raised.add(name)
        else:
            den[2] += 1
            num[2] += a.kind == "r"
            if dp.to_call > 0:
                den[3] += 1
                num[3] += a.kind == "f"
        state.act(a.kind)
    for name in acted:
        num, den = out[name]
        den[0] += 1
        den[1] += 1
        num[0] += name in put
        num[1] += name in raised
    return out


@pytest.mark.parametrize("players", [["lag", "rock"], ["ehs", "call"], ["poki", "raise", "hs"]])
def test_counts_agree_with_the_rules_engine(players):
    keep = Keep()
    run_match(players, 150, seed=4, log=keep)
    for record in keep.records:
        assert style_of_hand(record) == _by_rules(record)


def test_styles_tell_the_baselines_apart_and_follow_a_change():
    keep = Keep()
    run_match(["cbr:preset=expert", "raise"], 100, seed=2, log=keep)  # a fixed bot: the styles are the point
    run_match(["cbr:preset=expert", "call"], 300, seed=3, log=keep)
    plain, recent = StyleStats(), StyleStats(discount=0.98)
    for r in keep.records[:100]:
        plain.update(r)
        recent.update(r)
    vpip, pfr, agg, fold = plain.vector("raise")
    assert pfr == 1.0 and vpip == 1.0 and agg > 0.9 and fold == 0.0  # at the cap a raise is a call
    for r in keep.records[100:]:
        plain.update(r.__class__(**{**r.__dict__, "players": tuple("raise" if p == "call" else p for p in r.players)}))
        recent.update(r.__class__(**{**r.__dict__, "players": tuple("raise" if p == "call" else p for p in r.players)}))
    # the same name now plays as a calling station: the discounted style has followed, the plain one lags
    assert recent.vector("raise")[1] < 0.01 < plain.vector("raise")[1] and recent.vector("raise")[3] == 0.0
    assert plain.hands("raise") == 400 and recent.hands("raise") < 50


def test_discount_is_checked():
    with pytest.raises(ValueError, match="discount"):
        StyleStats(discount=0.0)
