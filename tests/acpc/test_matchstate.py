"""ACPC MATCHSTATE -> decision point, and the "one code path" promise.

A decision replayed from a log, the MATCHSTATE string of the same moment (betting so far +
the actor's cards + board) and ``situation(...)`` with the same numbers must give the
same CASPER feature row, bit for bit.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from cbr.acpc.matchstate import betting_tokens, from_matchstate, parse_matchstate
from cbr.errors import CBRError, GameError
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import preset
from cbr.game.situation import situation
from cbr.logs.acpc import AcpcLogWriter
from cbr.logs.detect import read_logs
from cbr.logs.record import HandRecord
from cbr.logs.replay import replay_hand
from cbr.play.match import run_match
from evaluator_ext.cards import cards_str, parse_cards
from evaluator_ext.errors import InvalidCardError
from features.casper import CasperFeatures
from tests.conftest import shared_path

HU = preset("holdem.limit.2p")
P3 = preset("holdem.limit.3p")
BOARD_AT = (0, 3, 4, 5)


class StubEvaluator:
    """Cheap hand values that still depend on every hole and board card."""

    def preflop_rank(self, hole):
        return 1 + (sum(c * c for c in hole) % 169)

    def hand_strength(self, hole, board):
        return (sum(hole) * 7 + sum(board)) % 101 / 100

    def hand_potential(self, hole, board):
        return ((sum(hole) + 3 * sum(board)) % 97 / 96, (sum(hole) * 5 + sum(board)) % 89 / 88)


# ---------------------------------------------------------------- parsing
def test_parse_docstring_example() -> None:
    ms = parse_matchstate("MATCHSTATE:1:7:cr/:|AdQc/3h4cJh", HU)
    assert (ms.position, ms.hand_number, ms.betting) == (1, 7, "cr/")
    assert ms.hole == tuple(parse_cards("AdQc"))
    assert ms.holes == (None, tuple(parse_cards("AdQc")))
    assert ms.board == tuple(parse_cards("3h4cJh"))


def test_prefix_is_optional_and_whitespace_ignored() -> None:
    a = parse_matchstate("  MATCHSTATE:0:3:r:AsKs|\n", HU)
    b = parse_matchstate("0:3:r:AsKs|", HU)
    assert a == b


def test_betting_tokens() -> None:
    assert betting_tokens("crc/kr") == [("c", None), ("r", None), ("c", None), ("/", None),
                                        ("c", None), ("r", None)]
    assert betting_tokens("r300c/r900") == [("r", 300.0), ("c", None), ("/", None), ("r", 900.0)]


def test_heads_up_preflop_small_blind_acts_first() -> None:
    # holdem.limit.2p: position 0 is the big blind, position 1 the small blind (button)
    dp = from_matchstate("MATCHSTATE:1:0::|AdQc", HU)
    assert (dp.street, dp.position, dp.legal) == (0, 1, "fcr")
    assert dp.committed == (10.0, 5.0)
    assert dp.bets_to_call == 0.5 and dp.players_to_act == 1


def test_flop_facing_a_bet() -> None:
    dp = from_matchstate("MATCHSTATE:1:7:crc/r:|AdQc/3h4cJh", HU)
    assert (dp.street, dp.position, dp.legal) == (1, 1, "fcr")
    assert dp.bets_to_call == 1.0
    assert dp.small_bets_in_pot == 5.0  # 2 bets each pre-flop + the flop bet
    assert dp.previous_round_bets == 2  # big blind + one raise
    assert dp.history == "crc/r"


def test_three_players_flop() -> None:
    dp = from_matchstate("MATCHSTATE:2:5:rcc/cr:||AsKs/2c7d9h", P3)
    # 3p: position 2 (button) first pre-flop, position 0 first after the flop; position 1
    # bet, so position 0 (who checked before the bet) still has to act after the button
    assert dp.position == 2 and dp.street == 1
    assert dp.players_to_act == 1 and dp.bets_to_call == 1.0
    assert dp.relative_position == 1.0
    with pytest.raises(GameError, match="position 2's turn"):
        from_matchstate("MATCHSTATE:0:5:rcc/cr:AsKs||/2c7d9h", P3)


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "text, words",
    [
        ("MATCHSTATE:0:1:AsKs|", "5 ':'-separated fields"),
        ("MATCHSTATE:x:1::AsKs|", "must be whole numbers"),
        ("MATCHSTATE:0:one::AsKs|", "must be whole numbers"),
        ("MATCHSTATE:0:-1::AsKs|", "must be whole numbers"),
        ("MATCHSTATE:99999999999999999999999:1::AsKs|", "must be whole numbers"),
        ("MATCHSTATE:2:1::||AsKs", "position 2 is not a seat"),
        ("MATCHSTATE:0:1::AsKs", "shows 1 hole-card slot for a 2-player game"),
        ("MATCHSTATE:0:1:cx:AsKs|", "unexpected 'x' at character 2"),
        ("MATCHSTATE:0:1:c/:AsKs|/2c3c4c", "preflop betting is not over"),
        ("MATCHSTATE:0:1:cc/:AsKs|", "board shows the preflop .0 cards. but its betting 'cc/' reaches the flop"),
        ("MATCHSTATE:0:1:cc/:AsKs|/2c3c", "flop '2c3c' has 2 cards; the flop has 3"),
        ("MATCHSTATE:0:1:cc/:AsKs|/2c", "flop '2c' has 1 card; the flop has 3"),
        ("MATCHSTATE:0:1:cc/:AsKs|/2c3c4c5c", "flop '2c3c4c5c' has 4 cards; the flop has 3"),
        ("MATCHSTATE:0:1:cc/c:AsKs|/2c3c4c/5c6c", "turn '5c6c' has 2 cards; the turn has 1"),
        ("MATCHSTATE:0:1:cc/cc/cc/cc/:AsKs|/2c3c4c/5c/6c/7c", "at most 3"),
        ("MATCHSTATE:1:0::|AsAh/2c3c4c", "board shows the flop .3 cards. but its betting '' reaches the preflop"),
        ("MATCHSTATE:0:1:cc:AsKs|/2c3c4c", "reaches the preflop"),
        ("MATCHSTATE:0:1:cc/cc/cc:AsKs|/2c3c4c", "board shows the flop .3 cards. but its betting 'cc/cc/cc' reaches the turn"),
        ("MATCHSTATE:0:1:cc/cc:AsKs|", "reaches the flop"),
        ("MATCHSTATE:0:1:ccc/:AsKs|/2c3c4c", "action 3: the preflop betting is over; a '/' must come first"),
        ("MATCHSTATE:0:1:r20:AsKs|", "a raise in limit hold'em has no amount"),
        ("MATCHSTATE:1:1::|", "no hole cards for its own position 1"),
        ("MATCHSTATE:0:1:r99999999999999999999:AsKs|", "unexpected '9' at character 17"),
        ("MATCHSTATE:1:1:cc:|AsKs", "is not dealt"),
        ("MATCHSTATE:0:1:rrrr:AsKs|", "action 4"),  # pre-flop cap: 3 raises + the blind
        ("MATCHSTATE:0:1::AsKs|", "position 1's turn"),  # small blind first: not seat 0's turn
        ("MATCHSTATE:1:1:f:|AsKs", "over"),
        ("MATCHSTATE:0:1:rr:AsKsQs|", "not two cards"),
    ],
)
def test_bad_matchstates_name_the_problem(text: str, words: str) -> None:
    with pytest.raises(GameError, match=words) as info:
        from_matchstate(text, HU)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "text, words",
    [
        ("MATCHSTATE:1:1::|AsXs", "unknown card"),
        ("MATCHSTATE:1:1::|AsAs", "As appears twice"),
        ("MATCHSTATE:1:1:cc/:|AsKs/As2c3c", "As appears twice"),
    ],
)
def test_bad_cards_in_matchstate(text: str, words: str) -> None:
    with pytest.raises(InvalidCardError, match=words) as info:
        from_matchstate(text, HU)
    assert isinstance(info.value, CBRError) and isinstance(info.value, ValueError)


# ---------------------------------------------------------------- one code path
def matchstate_of(record: HandRecord, i: int, dp: DecisionPoint) -> str:
    """The MATCHSTATE the dealer would send the actor of decision ``i``, built from the
    record's actions (not from the replayed state): betting so far, own cards, board."""
    parts = [""] * (dp.street + 1)
    for a in record.actions[:i]:
        parts[a.street] += a.kind
    holes = "|".join(cards_str(h) if p == dp.position and h else "" for p, h in enumerate(record.hole_cards))
    board = "".join("/" + cards_str(record.board[BOARD_AT[s - 1]:BOARD_AT[s]]) for s in range(1, dp.street + 1))
    return f"MATCHSTATE:{dp.position}:{record.hand_id}:{'/'.join(parts)}:{holes}{board}"


def situation_of(dp: DecisionPoint) -> DecisionPoint:
    """The same moment described by numbers only, as `cbr query --hole ...` does."""
    live = [p for p in dp.order if not dp.folded[p]]
    return situation(hole=dp.hole, board=dp.board, players=dp.players_dealt, in_hand=dp.players_in_hand,
                     position=live.index(dp.position), to_act=dp.players_to_act, committed=dp.bets_committed,
                     to_call=dp.bets_to_call, pot=dp.small_bets_in_pot,
                     previous_round_bets=dp.previous_round_bets, game=dp.game)


def decisions(records) -> Iterator[tuple[HandRecord, int, DecisionPoint]]:
    for record in records:
        if not isinstance(record, HandRecord):
            continue
        hand = replay_hand(record)
        assert not hand.flags and len(hand.decisions) == len(record.actions), record.where
        for i, dp in enumerate(hand.decisions):
            if dp.hole is not None:
                yield record, i, dp


def check_one_code_path(records, fs, situation_every: int = 1) -> int:
    """Every decision through MATCHSTATE; every ``situation_every``-th one also through
    ``situation()`` (which searches the rules engine's action sequences: ~10 ms a spot)."""
    checked = 0
    for k, (record, i, dp) in enumerate(decisions(records)):
        logged = fs.row(dp)
        text = matchstate_of(record, i, dp)
        from_ms = from_matchstate(text, record.game)
        assert from_ms.position == dp.position and from_ms.street == dp.street
        assert np.array_equal(fs.row(from_ms), logged), (record.where, text)
        if k % situation_every == 0:
            from_numbers = situation_of(dp)
            # reached by legal play: blinds posted, the actor to act, the same numbers
            assert from_numbers.street == dp.street and from_numbers.board == dp.board
            assert np.array_equal(fs.row(from_numbers), logged), (record.where, text, "situation")
        checked += 1
    return checked


@pytest.fixture(scope="module")
def match_log(tmp_path_factory) -> Path:
    """Logs of generated matches (heads-up and 3 players), all cards known."""
    folder = tmp_path_factory.mktemp("matches")
    with AcpcLogWriter(folder / "hu.log") as log:
        run_match(["random", "raise"], 60, seed=3, log=log)
    with AcpcLogWriter(folder / "p3.log") as log:
        run_match(["random", "call", "lag"], 60, seed=4, log=log)
    return folder


def test_one_code_path_on_generated_matches_with_real_casper_features(match_log: Path) -> None:
    n = check_one_code_path(read_logs([match_log]), CasperFeatures())
    assert n > 300


def test_one_code_path_on_real_acpc_limit_logs() -> None:
    folder = shared_path("acpc", "dealer_example_limit")
    # every decision of every 5th hand with cheap hand values (the table features are what
    # the three paths compute differently) ...
    hands = list(itertools.islice(read_logs([folder]), 0, None, 5))
    assert len(hands) == 400 and all(isinstance(h, HandRecord) for h in hands)
    n = check_one_code_path(hands, CasperFeatures(evaluator=StubEvaluator()), situation_every=3)
    assert n == sum(len(h.actions) for h in hands)  # all hole cards are known in these logs
    # ... and the real CASPER hand features on the first hands of each log
    for log in sorted(folder.glob("*.log")):
        assert check_one_code_path(itertools.islice(read_logs([log]), 25), CasperFeatures(), situation_every=2) > 50
