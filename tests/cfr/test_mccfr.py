"""Issue 18's teacher: hand-strength-distribution buckets (imperfect recall) and external-
sampling MCCFR on real cards (evaluator_ext._mccfr), and the `cfr` bot that plays it.

Cross-checks: river HS of every holding at once (sort and sweep) against the evaluator's
per-holding enumeration; a histogram against river HS computed runout by runout; the
shipped bucket tables against buckets recomputed from the centres; the solver's buckets
against the Python lookups the bot uses.
"""
from __future__ import annotations

import itertools
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import require_native

require_native(module_level=True)

from cbr.abstraction import distribution as D  # noqa: E402
from cbr.cfr.mccfr import (  # noqa: E402
    STRATEGY_FILE,
    MCCFRTrainer,
    load_imperfect_strategy,
)
from cbr.cfr.policy import SHIPPED_TEACHER, CFRPolicy, resolve_strategy  # noqa: E402
from cbr.errors import ConfigError  # noqa: E402

SHIPPED_ABSTRACTION = SHIPPED_TEACHER


@pytest.fixture(scope="module")
def shipped() -> D.DistributionAbstraction:
    return D.DistributionAbstraction.load(SHIPPED_ABSTRACTION)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, shipped) -> tuple[Path, MCCFRTrainer]:
    """A strategy folder trained briefly (one thread: deterministic) on the shipped abstraction."""
    folder = tmp_path_factory.mktemp("teacher")
    shutil.copy(SHIPPED_ABSTRACTION / "abstraction.npz", folder / "abstraction.npz")
    t = MCCFRTrainer(shipped, seed=11, threads=1, discount_every=50_000, discount_blocks=4)
    t.run(300_000, chunk=100_000)
    t.save_strategy(folder / STRATEGY_FILE)
    return folder, t


def _deals(n: int, cards: int, seed: int) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    return [tuple(int(c) for c in rng.choice(52, cards, replace=False)) for _ in range(n)]


# -- hand strength and its distributions ------------------------------------------------

def test_river_hs_of_every_holding_matches_the_evaluator_one_by_one() -> None:
    import evaluator_ext as ev

    for deal in _deals(6, 5, seed=1):
        hs = D.river_hs(deal)
        assert int((hs >= 0).sum()) == 1081
        for a, b in itertools.islice(itertools.combinations(sorted(set(range(52)) - set(deal)), 2), 0, None, 37):
            assert hs[ev.combo_index(a, b)] == pytest.approx(ev.hand_strength((a, b), deal), abs=1e-12)


def test_a_flop_histogram_is_the_river_hs_of_every_runout() -> None:
    import evaluator_ext as ev

    flop = (3, 22, 41)
    hole = (48, 13)
    n_bins = 10
    hist = D.board_histograms(flop, n_bins)
    c = ev.combo_index(*hole)
    want = np.zeros(n_bins, dtype=np.int64)
    rest = sorted(set(range(52)) - set(flop) - set(hole))
    for t, r in itertools.combinations(rest, 2):
        hs = D.river_hs(flop + (t, r))[c]
        want[min(n_bins - 1, int(hs * n_bins))] += 1
    assert hist[c].tolist() == want.tolist()
    assert want.sum() == math.comb(47, 2)
    rows = hist.sum(axis=1)
    assert set(rows.tolist()) == {0, 1081}                    # clashing holdings are empty
    turn = D.board_histograms(flop + (7,), n_bins)
    assert set(turn.sum(axis=1).tolist()) == {0, 46}


def test_canonical_boards_count_the_suit_classes_and_keep_the_histograms() -> None:
    assert D.canonical_boards(3).boards.shape == (1755, 3)
    assert D.canonical_boards(4).boards.shape == (16432, 4)
    cb = D.canonical_boards(4)
    for board in _deals(3, 4, seed=2):
        row, p = cb.lookup(board)
        raw = D.board_histograms(board, 8)
        canon = D.board_histograms(cb.boards[row], 8)
        assert np.array_equal(raw, canon[D._PERM_COMBO[p]])


def test_k_medians_finds_separated_clusters_and_their_medians() -> None:
    rng = np.random.default_rng(0)
    centres = np.array([[0, 0, 0], [5, 5, 5], [0, 9, 0]], dtype=np.float32)
    pts = np.concatenate([c + rng.laplace(0, 0.3, size=(200, 3)) for c in centres]).astype(np.float32)
    got = D.k_medians_l1(pts, 3, seed=4)
    order = np.lexsort(got.T[::-1])
    want = np.array([np.median(pts[i * 200:(i + 1) * 200], axis=0) for i in range(3)])
    assert np.allclose(got[order], want[np.lexsort(want.T[::-1])], atol=1e-6)
    with pytest.raises(ConfigError):
        D.k_medians_l1(pts[:2], 3)


def test_the_shipped_tables_are_the_nearest_centres(shipped) -> None:
    """Recompute some boards' buckets from the centres (the C kernel) and from a numpy EMD."""
    import evaluator_ext as ev

    for n, cents in ((3, shipped.flop_centroids), (4, shipped.turn_centroids)):
        for board in _deals(2, n, seed=3 + n):
            got = shipped.street_buckets(board)
            hist = D.board_histograms(board, shipped.n_bins)
            ok = hist.sum(axis=1) > 0
            cdf = np.cumsum(hist[ok], axis=1) / hist[ok].sum(axis=1, keepdims=True)
            emd = np.abs(cdf[:, None, :] - cents[None, :, :]).sum(axis=2)
            best = emd.min(axis=1)
            mine = emd[np.arange(len(best)), got[ok].astype(np.int64)]
            assert np.allclose(mine, best, atol=1e-4)         # nearest (ties may pick either)
            assert (got[~ok] == 65535).all()
    # a river bucket is the HS percentile
    deal = (0, 9, 18, 27, 36)
    hs = D.river_hs(deal)
    b = shipped.street_buckets(deal)
    c = ev.combo_index(51, 50)
    assert b[c] == np.searchsorted(shipped.river_edges, hs[c], side="right")
    assert shipped.n_buckets[0] == 169 and len(set(D.PREFLOP_CLASS.tolist())) == 169


def test_the_solver_and_the_bot_bucket_alike(shipped, trained) -> None:
    _, t = trained
    for deal in _deals(200, 7, seed=5):
        assert t.deal_buckets(deal[:2], deal[2:]) == shipped.buckets(deal[:2], deal[2:])


# -- the solver ------------------------------------------------------------------------

def test_one_thread_is_deterministic_and_a_resumed_run_equals_an_unbroken_one(shipped, tmp_path) -> None:
    a = MCCFRTrainer(shipped, seed=3, threads=1, discount_every=10_000, discount_blocks=3)
    a.run(40_000, chunk=10_000)
    b = MCCFRTrainer(shipped, seed=3, threads=1, discount_every=10_000, discount_blocks=3)
    b.run(25_000, chunk=10_000)
    b.save_checkpoint(tmp_path / "ck.npz")
    c = MCCFRTrainer(shipped, seed=3, threads=1, discount_every=10_000, discount_blocks=3)
    c.load_checkpoint(tmp_path / "ck.npz")
    c.run(15_000, chunk=10_000)
    assert c.iterations == a.iterations == 40_000
    assert np.array_equal(a.regret, c.regret) and np.array_equal(a.avg, c.avg)
    assert np.abs(a.regret).sum() > 0
    other = MCCFRTrainer(shipped, seed=4, threads=1, discount_every=10_000, discount_blocks=3)
    other.run(10_000)
    with pytest.raises(ConfigError, match="discount"):
        MCCFRTrainer(shipped, seed=3, threads=1).load_checkpoint(tmp_path / "ck.npz")
    (tmp_path / "bad.npz").write_bytes(b"not a checkpoint")
    with pytest.raises(ConfigError, match="not a readable"):
        a.load_checkpoint(tmp_path / "bad.npz")


def test_two_threads_run_every_iteration(shipped) -> None:
    t = MCCFRTrainer(shipped, seed=1, threads=2)
    assert t.run(20_000) == 20_000 and t.iterations == 20_000
    assert np.isfinite(t.regret).all() and (t.avg >= 0).all() and t.avg.sum() > 0


def test_the_native_solver_refuses_bad_tables(shipped) -> None:
    from evaluator_ext import _mccfr

    t = MCCFRTrainer(shipped, seed=1, threads=1)
    nb, pre, flop, turn, edges = t._tables
    bad_flop = flop.copy()
    bad_flop[5] = 300                                          # a bucket beyond the flop's 256
    with pytest.raises(ValueError, match="flop bucket"):
        _mccfr.run(t._tree, (nb, pre, bad_flop, turn, edges), t.regret, t.avg, 0, 1, 0, 1)
    with pytest.raises(ValueError, match="table sizes"):
        _mccfr.run(t._tree, (nb, pre, flop[:-1], turn, edges), t.regret, t.avg, 0, 1, 0, 1)
    with pytest.raises(ValueError, match="differ"):
        _mccfr.run(t._tree, t._tables, t.regret[:-1], t.avg, 0, 1, 0, 1)
    with pytest.raises(ValueError, match="outside"):
        _mccfr.run(t._tree, t._tables, t.regret[:1000].copy(), t.avg[:1000].copy(), 0, 1, 0, 1)
    with pytest.raises(ValueError, match="distinct cards"):
        _mccfr.river_hs(bytes([1, 1, 2, 3, 4]), np.zeros(1326))
    with pytest.raises(ValueError, match="distinct cards"):
        _mccfr.board_histograms(bytes([1, 60, 2]), 10, np.zeros(13260, dtype=np.uint16))
    with pytest.raises(ValueError):
        _mccfr.board_histograms(bytes([1, 2, 3]), 10, np.zeros(100, dtype=np.uint16))


# -- the strategy and the bot ------------------------------------------------------------

def test_the_trained_strategy_loads_and_plays_sensibly(trained) -> None:
    from evaluator_ext import PREFLOP_CLASSES

    folder, _ = trained
    s = load_imperfect_strategy(folder)
    root = s.tree.node_of("")
    assert s.tree.actions(root) == "fcr"
    fold = {name: s.row(root, PREFLOP_CLASSES.index(name))[0] for name in ("AA", "KK", "72o", "32o")}
    assert fold["AA"] < 0.05 and fold["KK"] < 0.05
    assert fold["72o"] > 0.5 and fold["32o"] > 0.5


def test_the_trained_bot_beats_a_random_player(trained) -> None:
    """Duplicate, 600 hands: the cfr bot's win rate against `random` is above 0 by more than
    its 95% interval (a strategy that learned nothing would not be)."""
    from cbr.play.match import run_match

    folder, _ = trained
    r = run_match([f"cfr:strategy={folder}", "random"], 600, duplicate=True, seed=21)
    me = r.players[0]
    assert me.sb_per_hand - me.sb_ci > 0, me


def test_strategy_names_and_damaged_files(trained, tmp_path) -> None:
    folder, _ = trained
    assert resolve_strategy("").name == "emd_2000" and resolve_strategy("emd_256").name == "emd_256"
    assert resolve_strategy("h_hs2_4").name == "cfr.holdem.limit.2p.npz"
    assert not CFRPolicy(strategy="h_hs2_4").imperfect
    with pytest.raises(ConfigError, match="no such strategy"):
        resolve_strategy("nonesuch")
    broken = tmp_path / "broken"
    broken.mkdir()
    shutil.copy(folder / "abstraction.npz", broken / "abstraction.npz")
    (broken / STRATEGY_FILE).write_bytes(b"\x00" * 100)
    with pytest.raises(ConfigError, match="not a readable strategy"):
        load_imperfect_strategy(broken)
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(folder / STRATEGY_FILE, other / STRATEGY_FILE)
    a = D.DistributionAbstraction.load(folder)
    a.river_edges = a.river_edges + 1e-3                      # another abstraction
    a.save(other)
    with pytest.raises(ConfigError, match="another tree or abstraction"):
        load_imperfect_strategy(other)


def test_the_shipped_teacher_is_small_and_plays_from_the_command_line() -> None:
    import json
    import subprocess
    import sys

    s = load_imperfect_strategy(SHIPPED_TEACHER)
    assert s.info["iterations"] >= 10_000_000 and s.n_buckets == (169, 256, 256, 256)
    size = sum(f.stat().st_size for f in SHIPPED_TEACHER.iterdir())
    assert size < 50_000_000, size
    exe = Path(sys.executable).with_name("cbr")
    r = subprocess.run([str(exe), "match", "--players", "cfr,cfr:strategy=h_hs2_4", "--hands", "40", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["hands"] == 40


def test_rows_never_reached_play_the_regrets_a_neighbour_or_call() -> None:
    from cbr.cfr.mccfr import layout, normalise
    from cbr.cfr.tree import build_tree

    tree = build_tree("holdem.limit.2p")
    nb = (2, 3, 3, 4)
    offset, size = layout(tree, nb)
    avg, regret = np.zeros(size), np.zeros(size)
    river = tree.node_of("cc/cc/cc/r")                  # facing a bet: fold, call, raise
    flop = tree.node_of("cc/r")
    assert tree.actions(river) == "fcr" and tree.actions(flop) == "fcr"
    r0, f0 = int(offset[river]), int(offset[flop])
    avg[r0:r0 + 3] = (2, 6, 2)                          # river bucket 0 has an average
    regret[r0 + 3:r0 + 6] = (-1, 3, 1)                  # bucket 1: none, but regrets
    avg[r0 + 9:r0 + 12] = (0, 0, 5)                     # bucket 3 has an average; bucket 2 nothing
    probs = normalise(avg, tree, nb, offset, regret)
    rows = probs[r0:r0 + 12].reshape(4, 3)
    assert rows[0].tolist() == [0.2, 0.6, 0.2]
    assert rows[1].tolist() == [0.0, 0.75, 0.25]
    assert rows[2].tolist() in ([0.0, 0.75, 0.25], [0.0, 0.0, 1.0])   # a nearest neighbour's row
    assert rows[3].tolist() == [0.0, 0.0, 1.0]
    assert probs[f0:f0 + 9].reshape(3, 3).tolist() == [[0.0, 1.0, 0.0]] * 3   # flop: nothing known, call
    for node in tree.decision_nodes():                 # every row of every node is a distribution
        k, rows_n = int(tree.n_children[node]), nb[int(tree.street[node])]
        t = probs[int(offset[node]): int(offset[node]) + rows_n * k].reshape(rows_n, k)
        assert np.allclose(t.sum(axis=1), 1.0) and (t >= 0).all()


def test_rows_never_trained_add_nothing_to_the_average(shipped) -> None:
    """Issue 37: the walk averaged the uniform default of rows whose regrets the samples had
    never updated, so such rows folded a third (or half) of the time whatever the cards."""
    t = MCCFRTrainer(shipped, seed=2, threads=1)
    t.run(5_000)
    assert t.regret.dtype == np.float64 and t.avg.dtype == np.float64
    untrained = np.zeros(t.size, dtype=bool)
    for node in t.tree.decision_nodes():
        k, rows = int(t.tree.n_children[node]), shipped.n_buckets[int(t.tree.street[node])]
        sl = slice(int(t.offset[node]), int(t.offset[node]) + rows * k)
        untrained[sl] = np.repeat(np.all(t.regret[sl].reshape(rows, k) == 0.0, axis=1), k)
    assert untrained.any() and (~untrained).any()
    assert not t.avg[untrained].any()


def test_old_float32_checkpoints_resume_and_their_uniform_rows_count_as_unsampled(shipped, tmp_path) -> None:
    import json

    t = MCCFRTrainer(shipped, seed=5, threads=1, discount_every=10_000, discount_blocks=3)
    t.run(2_000)
    info = t._info()
    del info["average"]  # a run of before issue 37: float32 tables, no "average" key
    np.savez(tmp_path / "old.npz", regret=t.regret.astype(np.float32), avg=t.avg.astype(np.float32),
             info=np.array(json.dumps(info)))
    r = MCCFRTrainer(shipped, seed=5, threads=1, discount_every=10_000, discount_blocks=3)
    r.load_checkpoint(tmp_path / "old.npz")
    assert r.regret.dtype == np.float64 and r.iterations == 2_000 and r.legacy_average
    assert np.array_equal(r.avg, t.avg.astype(np.float32).astype(np.float64))
    r.run(1_000)
    assert r.iterations == 3_000 and "average" not in r._info()


def test_the_shipped_teacher_plays_no_untrained_uniform_row() -> None:
    """Issue 37: 74,093 of the shipped teacher's 1,632,072 rows were the uniform default
    (e.g. a capped river with the 240th of 256 buckets folded half the time); they now get
    the fallback of rows the samples never reached."""
    s = load_imperfect_strategy(SHIPPED_TEACHER)
    assert "average" not in s.info   # trained before the fix: its uniform rows are read as unsampled
    uniform = 0
    for node in s.tree.decision_nodes():
        k, rows = int(s.tree.n_children[node]), s.n_buckets[int(s.tree.street[node])]
        t = s.probs[int(s.offset[node]): int(s.offset[node]) + rows * k].reshape(rows, k)
        uniform += int(np.all(np.abs(t - 1.0 / k) < 1e-3, axis=1).sum())
    assert uniform == 0
    capped = s.tree.node_of("rrrc/rrrrc/rrrrc/rrrr")
    assert s.tree.actions(capped) == "fc" and s.row(capped, 240)[0] < 0.5


def test_the_shipped_2000_bucket_strategy_is_whole_and_plays_from_the_command_line() -> None:
    """Issue 37: the 2,000-bucket run's strategy ships as ``cfr:strategy=emd_2000`` with its own
    abstraction (the strategy names the abstraction it was trained on: a mismatch is refused)."""
    import json
    import subprocess
    import sys

    folder = SHIPPED_TEACHER.parent / "emd_2000"
    s = load_imperfect_strategy(folder)
    assert s.n_buckets == (169, 2000, 2000, 2000) and s.info["iterations"] >= 400_000_000, s.info
    assert s.info["average"] == "trained-rows"   # rows never sampled are read as such, not as uniform play
    shipped_cfr = sum(f.stat().st_size for f in SHIPPED_TEACHER.parent.rglob("*") if f.is_file())
    assert sum(f.stat().st_size for f in folder.iterdir()) < 25_000_000 and shipped_cfr < 50_000_000, shipped_cfr
    exe = Path(sys.executable).with_name("cbr")
    r = subprocess.run([str(exe), "match", "--players", "cfr:strategy=emd_2000,cfr:strategy=emd_256", "--hands",
                        "40", "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["hands"] == 40
