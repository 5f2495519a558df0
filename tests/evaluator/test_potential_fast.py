"""The shared-enumeration potential kernel (``potential_tables`` / ``potential_table``):
exact against the published table, against an independent enumeration built on the plain
batch evaluator (random holes, boards and weight tables; weighted sums in the same order,
so equality is exact), and one batch equals hole-by-hole. ``CasperFeatures.prepare``
gives the same features as one (hole, board) at a time and a build chunk enumerates each
flop or turn board once."""
from __future__ import annotations

import random
from itertools import combinations

import numpy as np
import pytest

from tests.conftest import require_native, shared_path

require_native(module_level=True)
from evaluator_ext import (
    _native,  # noqa: E402
    native,  # noqa: E402
)
from evaluator_ext.cards import combo_index, parse_cards  # noqa: E402

# /work/shared/data/reference/README.md: AdQc on 3h4cJh, 1081 holdings x 990 runouts
PUBLISHED = ((449005, 3211, 169504), (0, 8370, 540), (91981, 1036, 346543))


def oracle_table(hole: tuple[int, ...], board: tuple[int, ...], weights: np.ndarray | None = None) -> list[list[float]]:
    """Poki's 3x3 table by brute force on evaluate_batch: every (runout, opponent) row is
    evaluated as 7 cards. Holdings are summed in (low card, high card) order."""
    dead = set(hole) | set(board)
    unseen = [c for c in range(52) if c not in dead]
    holdings = list(combinations(unseen, 2))
    to_come = 5 - len(board)
    runouts = list(combinations(unseen, to_come))
    H = np.array(holdings, dtype=np.uint8)
    R = np.array(runouts, dtype=np.uint8).reshape(len(runouts), to_come)
    b = np.array(board, dtype=np.uint8)
    # ours per runout
    ours_rows = np.hstack([np.tile(np.array(hole + board, dtype=np.uint8), (len(runouts), 1)), R])
    ours = native.evaluate_batch(np.ascontiguousarray(ours_rows))
    # every (runout, holding) pair without a shared card
    hm = (np.uint64(1) << H[:, 0].astype(np.uint64)) | (np.uint64(1) << H[:, 1].astype(np.uint64))
    rm = np.zeros(len(runouts), dtype=np.uint64)
    for k in range(to_come):
        rm |= np.uint64(1) << R[:, k].astype(np.uint64)
    valid = (rm[:, None] & hm[None, :]) == 0
    ri, hi = np.nonzero(valid)
    rows = np.hstack([np.tile(b, (len(ri), 1)), R[ri], H[hi]])
    theirs = native.evaluate_batch(np.ascontiguousarray(rows))
    behind = np.bincount(hi, weights=(theirs > ours[ri]), minlength=len(holdings)).astype(np.int64)
    tied = np.bincount(hi, weights=(theirs == ours[ri]), minlength=len(holdings)).astype(np.int64)
    seen = np.bincount(hi, minlength=len(holdings)).astype(np.int64)
    now_rows = np.hstack([np.tile(b, (len(holdings), 1)), H])
    theirs_now = native.evaluate_batch(np.ascontiguousarray(now_rows))
    ours_now = native.evaluate(hole + board)
    table = [[0.0] * 3 for _ in range(3)]
    for o, (x, y) in enumerate(holdings):
        w = 1.0 if weights is None else float(weights[combo_index(x, y)])
        if not w > 0.0:
            continue
        now = 0 if theirs_now[o] < ours_now else 1 if theirs_now[o] == ours_now else 2
        table[now][0] += w * float(seen[o] - tied[o] - behind[o])
        table[now][1] += w * float(tied[o])
        table[now][2] += w * float(behind[o])
    return table


def as_lists(table) -> list[list[float]]:
    return [[float(x) for x in row] for row in table]


def test_published_table_exact() -> None:
    hole, board = parse_cards("AdQc"), parse_cards("3h4cJh")
    assert as_lists(_native.potential_table(hole, board)) == as_lists(PUBLISHED)
    assert oracle_table(hole, board) == as_lists(PUBLISHED)  # the test's own enumeration agrees
    ppot, npot = native.hand_potential("AdQc", "3h4cJh")
    assert (round(ppot, 4), round(npot, 4)) == (0.2083, 0.2737)


def test_published_table_inside_a_batch() -> None:
    """The published hole among others on the same flop, some sharing cards with it."""
    board = parse_cards("3h4cJh")
    holes = [parse_cards(h) for h in ("KsKd", "AdQc", "AdKd", "2c2d", "QcJs", "9h8h")]
    tables = _native.potential_tables(holes, board)
    assert as_lists(tables[1]) == as_lists(PUBLISHED)
    assert oracle_table(holes[0], board) == as_lists(tables[0])


@pytest.mark.parametrize("seed", range(6))
def test_flop_tables_equal_brute_force(seed: int) -> None:
    rng = random.Random(1000 + seed)
    deck = rng.sample(range(52), 5)
    hole, board = tuple(deck[:2]), tuple(deck[2:])
    assert as_lists(_native.potential_table(hole, board)) == oracle_table(hole, board)


@pytest.mark.parametrize("seed", range(4))
def test_weighted_flop_tables_equal_brute_force_exactly(seed: int) -> None:
    rng = random.Random(2000 + seed)
    g = np.random.default_rng(seed)
    deck = rng.sample(range(52), 5)
    hole, board = tuple(deck[:2]), tuple(deck[2:])
    density = (1.0, 0.5, 0.05, 0.01)[seed]
    w = g.random(1326) * 7.0 * (g.random(1326) < density)
    expected = oracle_table(hole, board, w)
    if not any(any(row) for row in expected):
        with pytest.raises(ValueError):
            _native.potential_table(hole, board, w)
        return
    assert as_lists(_native.potential_table(hole, board, w)) == expected


def test_flush_heavy_flops_equal_brute_force() -> None:
    """Monotone and two-tone flops, suited holes: the runouts where holdings can make a
    flush are the kernel's exceptions (3, 4 and 5 cards of a suit on the final board)."""
    cases = [("AhKh", "2h7h9h"), ("5c6c", "7c8d9c"), ("2s3d", "QsJsTs"), ("AcAd", "AhAsKh")]
    for hole, board in cases:
        h, b = parse_cards(hole), parse_cards(board)
        assert as_lists(_native.potential_table(h, b)) == oracle_table(h, b), (hole, board)


@pytest.mark.parametrize("board_size", [4, 5])
def test_turn_and_river_tables_equal_brute_force(board_size: int) -> None:
    rng = random.Random(3000 + board_size)
    g = np.random.default_rng(board_size)
    for i in range(30):
        deck = rng.sample(range(52), 2 + board_size)
        hole, board = tuple(deck[:2]), tuple(deck[2:])
        w = None if i % 2 else g.random(1326) * (g.random(1326) < 0.3)
        assert as_lists(_native.potential_table(hole, board, w)) == oracle_table(hole, board, w), (hole, board)


@pytest.mark.parametrize("board_size", [3, 4, 5])
def test_batch_equals_one_hole_at_a_time(board_size: int) -> None:
    rng = random.Random(4000 + board_size)
    board = tuple(rng.sample(range(52), board_size))
    rest = [c for c in range(52) if c not in board]
    holes = [tuple(rng.sample(rest, 2)) for _ in range(9)]  # may share cards with each other
    holes.append(holes[0])  # the same hole twice
    w = np.random.default_rng(board_size).random(1326)
    for weights in (None, w):
        batch = _native.potential_tables(holes, board, weights)
        assert [as_lists(t) for t in batch] == [as_lists(_native.potential_table(h, board, weights)) for h in holes]


@pytest.mark.parametrize(
    "holes, board, weights, message",
    [
        ([], (0, 1, 2), None, "holes"),
        ([(3, 4)] * 1327, (0, 1, 2), None, "1 to 1326 holes"),
        ([(3, 0)], (0, 1, 2), None, "shares a card"),
        ([(3, 3)], (0, 1, 2), None, "shares a card"),
        ([(3, 52)], (0, 1, 2), None, "out of range"),
        ([(3, 4)], (0, 1), None, "board must be 3 to 5"),
        ([(3, 4)], (0, 1, 1), None, "twice"),
        ([(3, 4, 5)], (0, 1, 2), None, "hole must be 2"),
        ([(3, 4)], (0, 1, 2), np.ones(10), "1326"),
        ([(3, 4)], (0, 1, 2), np.full(1326, -1.0), "non-negative"),
        ([(3, 4)], (0, 1, 2), np.zeros(1326), "no weight"),
    ],
)
def test_potential_tables_rejects_bad_input(holes, board, weights, message) -> None:
    with pytest.raises(ValueError, match=message):
        _native.potential_tables(holes, board, weights)


# ---- CASPER features: batch per board in a build chunk ---------------------------------


class CountingEvaluator:
    """The real evaluator, with a tally of potential calls (one hole, or a batch)."""

    def __init__(self) -> None:
        import evaluator_ext

        self._ev = evaluator_ext
        self.single = 0
        self.batches: list[tuple[int, ...]] = []

    def preflop_rank(self, hole):
        return self._ev.preflop_rank(hole)

    def hand_strength(self, hole, board):
        return self._ev.hand_strength(hole, board)

    def hand_potential(self, hole, board):
        self.single += 1
        return self._ev.hand_potential(hole, board)

    def hand_potentials(self, holes, board):
        self.batches.append(tuple(board))
        return [self._ev.hand_potential(h, board) for h in holes]


def irc_records(n: int):
    from cbr.logs.detect import read_logs
    from cbr.logs.record import HandRecord

    path = shared_path("irc")
    records = []
    for r in read_logs([path]):
        if isinstance(r, HandRecord):
            records.append(r)
            if len(records) >= n:
                break
    return records


def test_prepare_gives_the_same_rows_as_one_at_a_time() -> None:
    from cbr.build.local import cases_of_hands
    from features.casper import CasperFeatures

    records = irc_records(400)
    plain = CasperFeatures()
    plain.prepare = None  # type: ignore[assignment]  # as before: features one (hole, board) at a time
    batched = CasperFeatures()
    a = cases_of_hands(records, plain)
    b = cases_of_hands(records, batched)
    assert sorted(a.rows) == sorted(b.rows)
    for street in a.rows:
        np.testing.assert_array_equal(a.rows[street][0], b.rows[street][0])
    assert batched.cache.info().misses == plain.cache.info().misses
    # the float64 features themselves, not only the float32 rows: bit for bit
    assert dict(batched.cache._data) == dict(plain.cache._data)
    assert any(len(board) == 3 for _, board in batched.cache._data)


def test_build_chunk_enumerates_each_board_once() -> None:
    from cbr.build.local import cases_of_hands
    from features.casper import CasperFeatures

    records = irc_records(250)
    ev = CountingEvaluator()
    fs = CasperFeatures(evaluator=ev)
    result = cases_of_hands(records, fs)
    assert ev.single == 0  # every flop/turn potential came from a per-board batch
    assert len(ev.batches) == len(set(ev.batches)) > 0
    flop_turn = sum(len(X) for s, (X, _) in result.rows.items() if s in (1, 2))
    assert flop_turn > len(ev.batches)


def test_prepare_skips_what_it_cannot_batch() -> None:
    from cbr.game import preset
    from cbr.game.decision import DecisionPoint
    from features.casper import CasperFeatures

    base = dict(game=preset("holdem.limit.2p"), street=1, position=0, player="p1", hole=parse_cards("AdQc"),
                board=parse_cards("3h4cJh"), folded=(False, False), all_in=(False, False), acted=(False, False),
                order=(0, 1), street_bets=0, committed=(0.0, 0.0), total_committed=(10.0, 10.0),
                previous_round_bets=1, legal="kr")
    fs = CasperFeatures()
    river = DecisionPoint(**{**base, "street": 3, "board": parse_cards("3h4cJh8d8s")})
    unknown = DecisionPoint(**{**base, "hole": None})
    flop = DecisionPoint(**base)
    other = DecisionPoint(**{**base, "hole": parse_cards("KsKd")})
    clash = DecisionPoint(**{**base, "hole": parse_cards("3hAs")})
    assert fs.prepare([river, unknown, clash, flop, flop, other]) == 2
    assert fs.prepare([flop]) == 0  # cached
    hs, ppot, npot = fs.hand_features(flop)
    assert (round(ppot, 4), round(npot, 4)) == (0.2083, 0.2737)
    assert fs.cache.info().hits == 1
    assert CasperFeatures(evaluator=object()).prepare([flop]) == 0  # no batch evaluator


# ---- the kernel without Python ---------------------------------------------------------

C_DRIVER = r"""
#include <stdio.h>
#include "eval_kernels.h"

int main(void)
{
    if (ek_init() != EK_OK)
        return 1;
    /* AdQc and KsKd (cards rank*4 + suit) on 3h4cJh, in one call */
    const uint8_t holes[4] = {49, 40, 47, 45}, board[3] = {6, 8, 38};
    double t[18];
    if (ek_potential_tables(holes, 2, board, 3, NULL, t) != EK_OK)
        return 2;
    double one[9];
    if (ek_potential_table(holes + 2, board, 3, NULL, one) != EK_OK)
        return 3;
    for (int k = 0; k < 9; k++)
        printf("%.0f ", t[k]);
    for (int k = 0; k < 9; k++)
        if (t[9 + k] != one[k])
            return 4;
    /* errors: a hole card on the board, no holes */
    const uint8_t clash[2] = {6, 7};
    printf("%d %d\n", ek_potential_tables(clash, 1, board, 3, NULL, t) == EK_ERR_DUPLICATE,
           ek_potential_tables(holes, 0, board, 3, NULL, t) == EK_ERR_ARGUMENT);
    return 0;
}
"""


def test_kernel_compiles_and_runs_without_python(tmp_path) -> None:
    import shutil
    import subprocess
    from pathlib import Path

    from tests.evaluator.support import generated_tables

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = Path(__file__).resolve().parents[2] / "evaluator_ext" / "src"
    assert "#include <Python.h>" not in (src / "eval_kernels.c").read_text()
    driver = tmp_path / "driver.c"
    driver.write_text(C_DRIVER)
    exe = tmp_path / "driver"
    tables = generated_tables(cc, tmp_path)
    for opt in ("-O0", "-O3"):
        subprocess.run([cc, opt, "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{src}", f"-I{tables}", str(driver),
                        str(src / "eval_kernels.c"), str(src / "eval_tables.c"), "-o", str(exe)], check=True,
                       capture_output=True, timeout=120)
        out = subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=60).stdout.split()
        assert out == [str(x) for row in PUBLISHED for x in row] + ["1", "1"], opt


def test_flush_boards_exact_one_hole_and_many() -> None:
    """Boards where the flush corrections do most of the work: monotone flops, turns with
    three or four cards of a suit, holes with none, one or two cards of it, with and without
    weights. A lone hole (the fused runout loop) and a batch of holes (the listed
    exceptions) both equal the brute-force enumeration."""
    rng = random.Random(17)
    for case in range(10):
        suit = rng.randrange(4)
        suited = [c for c in range(52) if c % 4 == suit]
        n_board = 3 if case < 5 else 4
        n_suited = 3 if n_board == 3 else rng.choice((3, 4))
        board = rng.sample(suited, n_suited)
        board += rng.sample([c for c in range(52) if c % 4 != suit], n_board - n_suited)
        rest = [c for c in range(52) if c not in board]
        own = [c for c in rest if c % 4 == suit]
        other = [c for c in rest if c % 4 != suit]
        holes = [tuple(rng.sample(other, 2)), (rng.choice(own), rng.choice(other)), tuple(rng.sample(own, 2))]
        weights = None if case % 2 else np.random.default_rng(case).random(1326)
        args = () if weights is None else (weights,)
        tables = _native.potential_tables(holes, tuple(board), *args)
        for hole, table in zip(holes, tables):
            want = oracle_table(hole, tuple(board), weights)
            assert as_lists(_native.potential_table(hole, tuple(board), *args)) == want, (hole, board)
            assert as_lists(table) == want, (hole, board)


@pytest.mark.parametrize("shape", ["monotone flop", "two-tone flop", "rainbow flop", "three-suited turn",
                                   "four-suited turn", "two-suited turn"])
def test_lone_hole_equals_the_batch_on_suited_boards(shape: str) -> None:
    """The lone-hole path counts the holdings with one card of the board's suit per card and
    per rank pair (not holding by holding); the batch path lists every exception. On 12
    boards of each shape, for 24 holes each (none, one or two cards of the suit; with and
    without weights), the two give the same tables."""
    rng = random.Random(shape)
    suited_on_board = {"monotone flop": (3, 3), "two-tone flop": (2, 3), "rainbow flop": (1, 3),
                       "three-suited turn": (3, 4), "four-suited turn": (4, 4), "two-suited turn": (2, 4)}[shape]
    n_suited, n_board = suited_on_board
    for case in range(12):
        suit = rng.randrange(4)
        board = rng.sample([c for c in range(52) if c % 4 == suit], n_suited)
        others = [c for c in range(52) if c % 4 != suit]
        while len(board) < n_board:  # the rest: no second suit with as many cards
            c = rng.choice(others)
            if c not in board and sum(x % 4 == c % 4 for x in board) + 1 < max(n_suited, 2):
                board.append(c)
            elif n_suited == 1 and c not in board and all(x % 4 != c % 4 for x in board):
                board.append(c)
        rest = [c for c in range(52) if c not in board]
        holes = [tuple(h) for h in (rng.sample(rest, 2) for _ in range(24))]
        holes = [h for h in dict.fromkeys(holes) if h[0] != h[1]]
        weights = None if case % 3 else np.random.default_rng(case).random(1326)
        args = () if weights is None else (weights,)
        batch = _native.potential_tables(holes, tuple(board), *args)
        for hole, table in zip(holes, batch):
            assert as_lists(_native.potential_table(hole, tuple(board), *args)) == as_lists(table), (hole, board)
