"""Public-chance-sampling MCCFR (issue 37, part 3): the C kernel ``evaluator_ext/src/pcs_kernels.c``.

Proof on small games: the same kernel, fed a small game's public outcomes instead of hold'em
boards (``SmallMCCFR(..., sampling="public")``), converges on Kuhn poker and Leduc hold'em to
the exact exploitability of ``tests/cfr/test_small_games.py``'s best response. The targets
are the external-sampling test's (0.02 and 0.004 chips on Kuhn, 0.08 and 0.025 on Leduc), asked
after a tenth of its iterations, under the same sampled-CFR regret ceiling. On hold'em: the
buckets the walk gives every holding of a board are the ones the external-sampling walk
deals, the fold and showdown vectors (O(n) by inclusion-exclusion and the sorted sweep)
equal a brute force over every pair of holdings, and runs are deterministic on one thread
however they are cut, resumed from a checkpoint or not.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.conftest import require_native

require_native(module_level=True)

import evaluator_ext as ev  # noqa: E402
from cbr.abstraction import distribution as D  # noqa: E402
from cbr.cfr.mccfr import MCCFRTrainer, load_imperfect_strategy  # noqa: E402
from cbr.cfr.policy import SHIPPED_TEACHER  # noqa: E402
from cbr.cfr.small import SmallMCCFR, kuhn, leduc  # noqa: E402
from cbr.errors import ConfigError  # noqa: E402
from tests.cfr.test_small_games import KUHN_VALUE, exploitability, regret_ceiling, value  # noqa: E402


@pytest.fixture(scope="module")
def shipped() -> D.DistributionAbstraction:
    return D.DistributionAbstraction.load(SHIPPED_TEACHER)


# -- the proof on small games -------------------------------------------------------------

@pytest.mark.parametrize("game, checks", [
    (kuhn, ((1_000, 0.02), (10_000, 0.004))),
    (leduc, ((10_000, 0.08), (100_000, 0.025))),
])
def test_public_chance_sampling_converges_on_small_games(game, checks) -> None:
    g = game()
    t = SmallMCCFR(g, seed=7, sampling="public")
    seen = []
    for iterations, target in checks:
        t.run(iterations - t.iterations)
        e = exploitability(g, t.strategy())
        assert 0.0 <= e <= min(target, regret_ceiling(g, iterations)), (iterations, e)
        seen.append(e)
    assert seen[-1] < seen[0]
    if g.name == "kuhn":
        assert abs(value(g, t.strategy()) - KUHN_VALUE) <= seen[-1] + 1e-9


def test_small_runs_are_deterministic_on_one_thread_and_two_threads_converge() -> None:
    g = leduc()
    a = SmallMCCFR(g, seed=5, sampling="public")
    a.run(3_000)
    b = SmallMCCFR(g, seed=5, sampling="public")
    b.run(1_000)
    b.run(2_000)
    assert np.array_equal(a.regret, b.regret) and np.array_equal(a.avg, b.avg) and a.avg.sum() > 0
    c = SmallMCCFR(g, seed=6, sampling="public")
    c.run(3_000)
    assert not np.array_equal(a.regret, c.regret)
    two = SmallMCCFR(g, seed=5, sampling="public", threads=2)
    assert two.run(20_000) == 20_000 and exploitability(g, two.strategy()) < 0.08


def test_bad_small_games_and_schemes_are_refused() -> None:
    from evaluator_ext import _mccfr

    g = leduc()
    with pytest.raises(ConfigError, match="sampling"):
        SmallMCCFR(g, sampling="outcome")
    p = g.public
    regret, avg = np.zeros(g.size), np.zeros(g.size)

    def run(cards=p.cards, buckets=p.buckets, values=p.values):
        _mccfr.run_pcs_small(g.tree_tuple(), g.n_buckets, cards.ravel(), buckets.ravel(), values.ravel(), regret,
                             avg, 0, 10, 0, 1)

    bad = p.buckets.copy()
    bad[2, 1, 4] = 9                     # a second-street bucket past Leduc's 9
    with pytest.raises(ValueError, match="out of range"):
        run(buckets=bad)
    twice = p.cards.copy()
    twice[1] = twice[0]                  # one card in two holdings: card removal would be wrong
    with pytest.raises(ValueError, match="each holding once"):
        run(cards=twice)
    with pytest.raises(ValueError, match="p x 4 x h"):
        run(buckets=p.buckets[:, :3].copy())
    assert not regret.any() and not avg.any()


# -- the hold'em kernel's pieces ------------------------------------------------------------

def _boards(n: int, seed: int) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    return [tuple(int(c) for c in rng.choice(52, 5, replace=False)) for _ in range(n)]


def _brute_terminals(board: tuple[int, ...], reach: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The fold and showdown vectors by every pair of holdings (the evaluator, one by one)."""
    cards = [ev.combo_cards(c) for c in range(1326)]
    held = np.zeros((1326, 52))
    for c, (a, b) in enumerate(cards):
        held[c, a] = held[c, b] = 1.0
    ok = held[:, list(board)].sum(axis=1) == 0
    val = np.array([ev.evaluate([*cs, *board]) if o else -1 for cs, o in zip(cards, ok)], dtype=np.int64)
    mask = (held @ held.T == 0) & ok[:, None] & ok[None, :]   # no card shared, none with the board
    r = np.where(ok, reach, 0.0)
    compat = mask @ r
    net = (mask * np.sign(val[:, None] - val[None, :])) @ r
    return compat, net


def test_fold_and_showdown_vectors_equal_a_brute_force(shipped) -> None:
    t = MCCFRTrainer(shipped, seed=1, threads=1, sampling="public")
    rng = np.random.default_rng(3)
    boards = _boards(3, seed=9) + [(0, 1, 2, 3, 4)]       # four deuces and a trey: ties everywhere
    for board in boards:
        reach = rng.random(1326) * (rng.random(1326) < 0.7)   # zeros too, as in a walk
        _, compat, net = t.public_board(board, reach)
        want_compat, want_net = _brute_terminals(board, reach)
        assert np.allclose(compat, want_compat, rtol=0, atol=1e-9)
        assert np.allclose(net, want_net, rtol=0, atol=1e-9)
        assert np.abs(net).sum() > 0


def test_the_walk_buckets_every_holding_as_the_deal_does(shipped) -> None:
    t = MCCFRTrainer(shipped, seed=1, threads=1, sampling="public")
    for board in _boards(4, seed=4):
        buckets, _, _ = t.public_board(board, np.ones(1326))
        ok = 0
        for c in range(1326):
            hole = ev.combo_cards(c)
            if set(hole) & set(board):
                assert (buckets[:, c] == -1).all()
                continue
            ok += 1
            assert tuple(buckets[:, c]) == t.deal_buckets(hole, board), (board, hole)
        assert ok == 1081


def test_an_ochs_river_buckets_alike() -> None:
    river = D.fit_ochs_river(24, 4, fit_boards=40, fit_points=20_000, cluster_boards=200, seed=1)
    a = D.DistributionAbstraction.load(SHIPPED_TEACHER).with_ochs_river(river)
    t = MCCFRTrainer(a, seed=1, threads=1, sampling="public")
    for board in _boards(2, seed=6):
        buckets, _, _ = t.public_board(board, np.ones(1326))
        for c in itertools.islice(range(1326), 0, None, 7):
            hole = ev.combo_cards(c)
            if not set(hole) & set(board):
                assert tuple(buckets[:, c]) == t.deal_buckets(hole, board)
    assert t.run(1) == 1 and t.regret.any()


def test_one_thread_is_deterministic_and_a_resumed_run_equals_an_unbroken_one(shipped, tmp_path) -> None:
    a = MCCFRTrainer(shipped, seed=3, threads=1, sampling="public", discount_every=2, discount_blocks=2)
    a.run(5)
    b = MCCFRTrainer(shipped, seed=3, threads=1, sampling="public", discount_every=2, discount_blocks=2)
    b.run(3, chunk=1)
    b.save_checkpoint(tmp_path / "ck.npz")
    c = MCCFRTrainer(shipped, seed=3, threads=1, sampling="public", discount_every=2, discount_blocks=2)
    c.load_checkpoint(tmp_path / "ck.npz")
    c.run(2)
    assert c.iterations == a.iterations == 5
    assert np.array_equal(a.regret, c.regret) and np.array_equal(a.avg, c.avg)
    assert np.abs(a.regret).sum() > 0 and a.avg.sum() > 0
    with pytest.raises(ConfigError, match="sampling"):   # an external-sampling run does not resume it
        MCCFRTrainer(shipped, seed=3, threads=1, discount_every=2, discount_blocks=2).load_checkpoint(
            tmp_path / "ck.npz")
    with pytest.raises(ConfigError, match="sampling"):
        MCCFRTrainer(shipped, sampling="chance")


def test_two_threads_run_every_iteration_and_the_strategy_loads(shipped, tmp_path) -> None:
    import shutil

    from cbr.cfr.mccfr import STRATEGY_FILE

    t = MCCFRTrainer(shipped, seed=1, threads=2, sampling="public")
    assert t.run(4) == 4 and t.iterations == 4
    assert np.isfinite(t.regret).all() and (t.avg >= 0).all() and t.avg.sum() > 0
    shutil.copy(SHIPPED_TEACHER / "abstraction.npz", tmp_path / "abstraction.npz")
    t.save_strategy(tmp_path / STRATEGY_FILE)
    s = load_imperfect_strategy(tmp_path)
    assert s.info["sampling"] == "public" and s.probs.shape == (t.size,)


def test_the_recipe_trains_with_public_chance_sampling(tmp_path) -> None:
    import json
    import shutil

    from casebases import build_cfr_emd

    out = tmp_path / "emd"
    out.mkdir()
    shutil.copy(SHIPPED_TEACHER / "abstraction.npz", out / "abstraction.npz")
    argv = ["--out", str(out), "--sampling", "public", "--iterations", "2", "--threads", "1",
            "--checkpoint-every", "1"]
    assert build_cfr_emd.main(argv) == 0
    s = load_imperfect_strategy(out)
    assert s.info["sampling"] == "public" and s.info["iterations"] == 2
    with np.load(tmp_path / "emd.ckpt.npz") as z:
        assert json.loads(str(z["info"]))["sampling"] == "public"
    assert build_cfr_emd.main(argv) == 0                              # resumes its checkpoint
    assert load_imperfect_strategy(out).info["iterations"] == 4


def test_a_run_returns_to_python_every_few_public_chance_iterations(shipped) -> None:
    """Ctrl-C is seen between chunks: external sampling's chunk of 200,000 iterations would be
    half a day of public-chance sampling."""
    t = MCCFRTrainer(shipped, seed=2, threads=1, sampling="public", discount_blocks=0)
    seen: list[int] = []
    assert t.run(11, progress=lambda done, total: seen.append(done)) == 11
    assert seen == [10, 11]
