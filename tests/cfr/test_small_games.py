"""The solvers proven on small games: exploitability computed exactly, here, by a best
response written for the test (a walk over every deal, independent of the C code).

External-sampling MCCFR (the teacher's C walk, ``evaluator_ext._mccfr.run_deals``) runs on
Kuhn poker and Leduc hold'em (:mod:`cbr.cfr.small`); CFR+ (``evaluator_ext._cfr``) runs on a
small bucket game of the hold'em tree, whose exact best response is the pure-numpy
reference's (:mod:`cbr.cfr.reference`). Bounds: the regret bound of CFR (Zinkevich et al.
2007: average regret at most Δ·|I|·√|A| / √T for each player, exploitability at most the
mean of the two), times Lanctot et al.'s (2009) factor 1 + √(2/p) for sampling (p = 0.05),
as a ceiling every run must respect; and practical targets (Kuhn: under 1% of the pot)
that a correct solver reaches with this seed, with the exploitability falling as T grows.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests.conftest import require_native

require_native(module_level=True)

from cbr.cfr.small import SmallGame, SmallMCCFR, kuhn, leduc  # noqa: E402
from cbr.cfr.tree import KIND_CHANCE, KIND_DECISION, KIND_FOLD  # noqa: E402

KUHN_VALUE = -1.0 / 18.0  # the first player's value (Kuhn 1950)


def best_response(game: SmallGame, probs: np.ndarray, me: int) -> float:
    """``me``'s best-response value against ``probs`` (the other player's rows), exactly:
    every deal at once, one decision per (node, own bucket) at ``me``'s nodes."""
    deals = game.deals
    n = len(deals)
    mine, theirs, winner = deals[:, 4 * me: 4 * me + 4], deals[:, 4 * (1 - me): 4 * (1 - me) + 4], deals[:, 8]

    def walk(node: int, reach: np.ndarray) -> np.ndarray:
        kind = int(game.kind[node])
        stake = float(game.stake[node])
        if kind == KIND_FOLD:
            return np.full(n, -stake if int(game.player[node]) == me else stake)
        if kind == KIND_CHANCE:
            return walk(game.children(node)[0], reach)
        if kind != KIND_DECISION:  # showdown
            return np.where(winner == me, stake, np.where(winner == 1 - me, -stake, 0.0))
        kids = game.children(node)
        k, s, off = len(kids), int(game.street[node]), int(game.offset[node])
        if int(game.player[node]) != me:
            sigma = probs[off + theirs[:, s][:, None] * k + np.arange(k)]
            return sum(sigma[:, a] * walk(c, reach * sigma[:, a]) for a, c in enumerate(kids))
        vals = np.stack([walk(c, reach) for c in kids], axis=1)
        out = np.empty(n)
        for b in np.unique(mine[:, s]):
            rows = mine[:, s] == b
            best = int(np.argmax((reach[rows, None] * vals[rows]).sum(axis=0)))
            out[rows] = vals[rows, best]
        return out

    return float(walk(0, np.ones(n)).mean())


def value(game: SmallGame, probs: np.ndarray) -> float:
    """Player 0's value when both play ``probs``."""
    deals = game.deals
    n = len(deals)

    def walk(node: int) -> np.ndarray:
        kind = int(game.kind[node])
        stake = float(game.stake[node])
        if kind == KIND_FOLD:
            return np.full(n, -stake if int(game.player[node]) == 0 else stake)
        if kind == KIND_CHANCE:
            return walk(game.children(node)[0])
        if kind != KIND_DECISION:
            return np.where(deals[:, 8] == 0, stake, np.where(deals[:, 8] == 1, -stake, 0.0))
        kids = game.children(node)
        k, s, p = len(kids), int(game.street[node]), int(game.player[node])
        sigma = probs[int(game.offset[node]) + deals[:, 4 * p + s][:, None] * k + np.arange(k)]
        return sum(sigma[:, a] * walk(c) for a, c in enumerate(kids))

    return float(walk(0).mean())


def exploitability(game: SmallGame, probs: np.ndarray) -> float:
    """The mean of the two best responses' values, in chips (0 at an equilibrium)."""
    return (best_response(game, probs, 0) + best_response(game, probs, 1)) / 2.0


def regret_ceiling(game: SmallGame, iterations: int, p: float = 0.05) -> float:
    """The sampled-CFR bound on exploitability after ``iterations`` (module docstring)."""
    info_sets = max(sum(game.n_buckets[int(game.street[i])] for i in np.flatnonzero(
        (game.kind == KIND_DECISION) & (game.player == q))) for q in (0, 1))
    delta = 2.0 * float(game.stake.max())
    return (1.0 + math.sqrt(2.0 / p)) * delta * info_sets * math.sqrt(float(game.n_children.max())) \
        / math.sqrt(iterations)


def test_the_best_response_knows_kuhn_poker() -> None:
    g = kuhn()
    uniform = np.full(g.size, 0.5)
    # an equilibrium (alpha = 0): the first player always checks (and calls a bet with K, with
    # Q a third); the second bets K and bluffs J a third after a check, calls with K and Q a third
    eq = uniform.copy()

    def put(history: str, card: int, row: tuple[float, ...]) -> None:
        node = g.node_of(history)
        eq[int(g.offset[node]) + card * 2: int(g.offset[node]) + card * 2 + 2] = row

    for card, bet in ((0, 0.0), (1, 0.0), (2, 0.0)):
        put("", card, (1.0 - bet, bet))
    for card, bet in ((0, 1 / 3), (1, 0.0), (2, 1.0)):
        put("c", card, (1.0 - bet, bet))
    for card, call in ((0, 0.0), (1, 1 / 3), (2, 1.0)):
        put("r", card, (1.0 - call, call))
        put("cr", card, (1.0 - call, call))
    assert value(g, eq) == pytest.approx(KUHN_VALUE)
    assert exploitability(g, eq) == pytest.approx(0.0, abs=1e-12)
    assert exploitability(g, uniform) > 0.2


@pytest.mark.parametrize("game, checks", [
    (kuhn, ((10_000, 0.02), (200_000, 0.004))),       # 0.02 chips: 1% of the 2-chip pot
    (leduc, ((100_000, 0.08), (1_000_000, 0.025))),
])
def test_external_sampling_mccfr_converges_on_small_games(game, checks) -> None:
    g = game()
    t = SmallMCCFR(g, seed=7)
    seen = []
    for iterations, target in checks:
        t.run(iterations - t.iterations)
        e = exploitability(g, t.strategy())
        assert 0.0 <= e <= min(target, regret_ceiling(g, iterations)), (iterations, e)
        seen.append(e)
    assert seen[-1] < seen[0]
    if g.name == "kuhn":
        assert abs(value(g, t.strategy()) - KUHN_VALUE) <= seen[-1] + 1e-9


def test_rows_never_trained_keep_an_empty_average() -> None:
    """A row whose regrets were never updated (here: Leduc's second street, which 50
    iterations cannot all reach) adds nothing to the average; averaging its uniform default
    made such rows fold a third or half of the time, whatever the cards."""
    g = leduc()
    t = SmallMCCFR(g, seed=3)
    t.run(50)
    untrained = np.zeros(g.size, dtype=bool)
    for node in np.flatnonzero(g.kind == KIND_DECISION):
        k, rows = int(g.n_children[node]), g.n_buckets[int(g.street[node])]
        sl = slice(int(g.offset[node]), int(g.offset[node]) + rows * k)
        untrained[sl] = np.repeat(np.all(t.regret[sl].reshape(rows, k) == 0.0, axis=1), k)
    assert untrained.any() and (~untrained).any()
    assert not t.avg[untrained].any()
    assert t.avg[~untrained].sum() > 0


def test_the_tables_are_float64_and_two_threads_run_every_iteration() -> None:
    t = SmallMCCFR(kuhn(), seed=1, threads=2)
    assert t.regret.dtype == np.float64 and t.avg.dtype == np.float64
    assert t.run(20_000) == 20_000 and exploitability(t.game, t.strategy()) < 0.05


def test_cfr_plus_converges_on_a_small_bucket_game_of_the_holdem_tree() -> None:
    """The C CFR+ solver on a 2-bucket game of the hold'em tree: exploitability (its exact
    best response, cross-checked by the pure-numpy reference's) falls ~1/T, to under
    8 mbb/g after 300 iterations."""
    from cbr.cfr import reference
    from cbr.cfr.solver import Solver
    from cbr.cfr.testing import random_bucket_game
    from cbr.cfr.tree import build_tree

    s = Solver(build_tree("holdem.limit.2p"), random_bucket_game(2, seed=1))
    seen = []
    for iterations in (30, 300):
        s.run(iterations - s.iteration)
        e = s.exploitability()
        independent = sum(reference.value(s._tree, s._game, s.average, p, True) for p in (0, 1)) / 2.0
        assert e == pytest.approx(1000.0 * independent / s.tree.game.big_blind, rel=1e-9)
        seen.append(e)
    assert seen[1] < 8.0 and seen[1] < seen[0] / 20.0, seen   # 280 -> 6.0 mbb/g


def test_the_native_walk_refuses_bad_deals_and_tables() -> None:
    from cbr.abstraction.distribution import native_module

    g = leduc()
    run = native_module().run_deals
    regret, avg = np.zeros(g.size), np.zeros(g.size)
    bad = g.deals.copy()
    bad[5, 1] = 9  # a second-street bucket past Leduc's 9
    with pytest.raises(ValueError, match="deal 5"):
        run(g.tree_tuple(), g.n_buckets, bad.ravel(), regret, avg, 0, 10, 0, 1)
    with pytest.raises(ValueError, match="rows of 9"):
        run(g.tree_tuple(), g.n_buckets, g.deals.ravel()[:-1].copy(), regret, avg, 0, 10, 0, 1)
    with pytest.raises(ValueError, match="dtype"):  # float32 tables: the old layout
        run(g.tree_tuple(), g.n_buckets, g.deals.ravel(), regret.astype(np.float32), avg.astype(np.float32), 0, 10,
            0, 1)
    with pytest.raises(ValueError, match="outside"):
        run(g.tree_tuple(), g.n_buckets, g.deals.ravel(), regret[:-1].copy(), avg[:-1].copy(), 0, 10, 0, 1)
    assert not regret.any() and not avg.any()
