"""The all-holdings potential kernel (``_native.board_potential_tables``): for flops and
turns (random with fixed seeds, and the special shapes: monotone, paired, four to a
flush, double-paired) the table of EVERY holding equals ``potential_table`` of that hole
alone (and, for a few holes, the brute-force oracle); the features computed from it equal
``hand_strength`` / ``hand_potential``; bad boards raise ValueError / TypeError with the
reason; ``CasperFeatures.prepare`` takes the kernel for many holes on a board and gives
the same cached features as one hole at a time."""
from __future__ import annotations

import random
from itertools import combinations

import pytest

from tests.conftest import require_native

require_native(module_level=True)
from evaluator_ext import _native, native  # noqa: E402
from evaluator_ext.cards import parse_cards  # noqa: E402
from tests.evaluator.test_potential_fast import as_lists, oracle_table  # noqa: E402


def holdings_off(board: tuple[int, ...]) -> list[tuple[int, int]]:
    return list(combinations(sorted(set(range(52)) - set(board)), 2))


def random_board(seed: int, n: int) -> tuple[int, ...]:
    return tuple(random.Random(seed).sample(range(52), n))


FLOPS = [random_board(11, 3), random_board(12, 3), parse_cards("2h7hKh"), parse_cards("8s8dAc")]
TURNS = [random_board(21, 4), random_board(22, 4), random_board(23, 4), parse_cards("2h7hKh9h"),
         parse_cards("8s8dAcAh"), parse_cards("5c6d7h8s")]


@pytest.mark.parametrize("board", FLOPS + TURNS, ids=lambda b: "".join(map(str, b)))
def test_every_holding_equals_one_hole_at_a_time(board: tuple[int, ...]) -> None:
    got = _native.board_potential_tables(board)
    assert [hole for hole, _ in got] == holdings_off(board)  # every holding, in (low, high) order
    for hole, table in got:
        assert table == _native.potential_table(hole, board), hole


@pytest.mark.parametrize("board", [FLOPS[0], FLOPS[2], TURNS[0], TURNS[3]], ids=lambda b: "".join(map(str, b)))
def test_some_holdings_equal_brute_force(board: tuple[int, ...]) -> None:
    tables = dict(_native.board_potential_tables(board))
    rng = random.Random(sum(board))
    for hole in rng.sample(sorted(tables), 3):
        assert as_lists(tables[hole]) == oracle_table(hole, board)


def test_published_table() -> None:
    board = parse_cards("3h4cJh")
    tables = dict(_native.board_potential_tables(board))
    hole = tuple(sorted(parse_cards("AdQc")))
    assert tables[hole] == ((449005, 3211, 169504), (0, 8370, 540), (91981, 1036, 346543))


def test_board_order_does_not_matter() -> None:
    board = FLOPS[1]
    assert _native.board_potential_tables(board) == _native.board_potential_tables(tuple(reversed(board)))


@pytest.mark.parametrize("board", [FLOPS[0], TURNS[1]], ids=["flop", "turn"])
def test_features_equal_hand_strength_and_hand_potential(board: tuple[int, ...]) -> None:
    from features.casper import BOARD_BATCH_MIN, native_hand_features

    holes = holdings_off(board)
    assert len(holes) >= BOARD_BATCH_MIN  # the all-holdings path
    for hole, (hs, ppot, npot) in zip(holes, native_hand_features(holes, board)):
        assert hs == native.hand_strength(hole, board), hole
        assert (ppot, npot) == native.hand_potential(hole, board), hole


@pytest.mark.parametrize(
    "board, error, message",
    [
        ((0, 1), ValueError, "3 to 4 cards, got 2"),
        ((0, 1, 2, 3, 4), ValueError, "3 to 4 cards, got 5"),
        ((0, 1, 1), ValueError, "card 1 appears twice"),
        ((0, 1, 52), ValueError, "52 is out of range"),
        ((0, -1, 5), ValueError, "-1 is out of range"),
        ((0, 1, "2"), TypeError, "cannot be interpreted as an integer"),
        (7, TypeError, "sequence"),
    ],
)
def test_bad_boards_are_refused(board, error, message) -> None:
    with pytest.raises(error, match=message):
        _native.board_potential_tables(board)


# ---- CasperFeatures.prepare ----------------------------------------------------------


def flop_spot(hole: tuple[int, int], board: tuple[int, ...]):
    from cbr.game import preset
    from cbr.game.decision import DecisionPoint

    return DecisionPoint(game=preset("holdem.limit.2p"), street=len(board) - 2, position=0, player="p1",
                         hole=hole, board=board, folded=(False, False), all_in=(False, False),
                         acted=(False, False), order=(0, 1), street_bets=0, committed=(0.0, 0.0),
                         total_committed=(10.0, 10.0), previous_round_bets=1, legal="kr")


@pytest.mark.parametrize("board, n_holes, kernel_calls", [
    (FLOPS[3], 1176, 1), (FLOPS[3], 100, 1), (FLOPS[3], 99, 0), (FLOPS[3], 7, 0), (TURNS[2], 1128, 1),
    (TURNS[2], 12, 0),
])
def test_prepare_takes_the_fastest_path_with_the_same_values(monkeypatch, board, n_holes, kernel_calls) -> None:
    import features.casper as casper

    calls = []
    real = _native.board_potential_tables
    monkeypatch.setattr(_native, "board_potential_tables", lambda b: calls.append(b) or real(b))
    holes = random.Random(n_holes).sample(holdings_off(board), n_holes)
    spots = [flop_spot(h, board) for h in holes]
    fs = casper.CasperFeatures()
    assert fs.prepare(spots) == n_holes
    assert len(calls) == kernel_calls
    assert (kernel_calls == 1) == (n_holes >= casper.BOARD_BATCH_MIN)
    misses = fs.cache.info().misses  # what prepare put in
    plain = casper.CasperFeatures()
    checked = spots if n_holes < 200 else spots[::25]
    for dp in checked:  # bit for bit the features of one hole at a time
        assert fs.hand_features(dp) == plain.hand_features(dp), dp.hole
    assert fs.cache.info().misses == misses  # all of them came from prepare


def test_prepare_keeps_what_it_skips_when_the_cache_is_full() -> None:
    """The second play of a duplicate deal: part of a board's holdings still cached (the
    oldest entries), the rest not. What prepare skips must survive what it stores next."""
    from features.casper import CasperFeatures

    board, other = TURNS[0], TURNS[1]
    holes = holdings_off(board)[:200]
    fs = CasperFeatures(cache_size=200)
    assert fs.prepare([flop_spot(h, board) for h in holes[:120]]) == 120  # oldest
    assert fs.prepare([flop_spot(h, other) for h in holdings_off(other)[:80]]) == 80  # cache full
    assert fs.prepare([flop_spot(h, board) for h in holes]) == 80  # 120 cached, 80 new
    misses = fs.cache.info().misses
    for h in holes:
        fs.hand_features(flop_spot(h, board))
    assert fs.cache.info().misses == misses  # every holding of the batch came from the cache
