"""OCHS river buckets (issue 37, part 3's first step; Johanson, Burch, Valenzano and Bowling
2013): opponent clusters of the 169 pre-flop classes, every holding's river HS against each
cluster (the C sweep, checked against a brute force over the pure-Python evaluator and
against the C enumeration of one holding), k-means buckets, and an abstraction whose river
the solver's walk and the bot bucket alike.
"""
from __future__ import annotations

import itertools
import shutil

import numpy as np
import pytest

from tests.conftest import require_native

require_native(module_level=True)

import evaluator_ext as ev  # noqa: E402
from cbr.abstraction import distribution as D  # noqa: E402
from cbr.cfr.mccfr import STRATEGY_FILE, MCCFRTrainer, abstraction_fingerprint, load_imperfect_strategy  # noqa: E402
from cbr.cfr.policy import SHIPPED_TEACHER  # noqa: E402
from cbr.errors import ConfigError  # noqa: E402
from evaluator_ext import reference  # noqa: E402

K = 8


@pytest.fixture(scope="module")
def clusters() -> np.ndarray:
    return D.opponent_clusters(K, boards=300, seed=2)


@pytest.fixture(scope="module")
def small_river() -> D.OCHSRiver:
    return D.fit_ochs_river(24, 4, fit_boards=40, fit_points=20_000, cluster_boards=200, seed=1)


@pytest.fixture(scope="module")
def ochs_abstraction(small_river) -> D.DistributionAbstraction:
    return D.DistributionAbstraction.load(SHIPPED_TEACHER).with_ochs_river(small_river)


def _brute_force(hole: tuple[int, int], board: tuple[int, ...], class_cluster: np.ndarray, k: int) -> np.ndarray:
    """HS against each cluster by enumerating the opponents with the pure-Python evaluator;
    an opponent's cluster from its class name (evaluator_ext.preflop_class)."""
    mine = reference.evaluate([*hole, *board])
    wins, ties, n = np.zeros(k), np.zeros(k), np.zeros(k)
    rest = sorted(set(range(52)) - set(hole) - set(board))
    for a, b in itertools.combinations(rest, 2):
        j = int(class_cluster[ev.PREFLOP_CLASSES.index(ev.preflop_class([a, b]))])
        theirs = reference.evaluate([a, b, *board])
        n[j] += 1
        wins[j] += mine > theirs
        ties[j] += mine == theirs
    hs = (wins.sum() + 0.5 * ties.sum()) / n.sum()
    return np.where(n > 0, (wins + 0.5 * ties) / np.maximum(n, 1), hs)


def test_cluster_equities_match_a_brute_force(clusters) -> None:
    per_combo = clusters[D.PREFLOP_CLASS]
    rng = np.random.default_rng(4)
    for board in [(0, 5, 17, 30, 44), (48, 49, 50, 12, 3), tuple(int(c) for c in rng.choice(52, 5, replace=False))]:
        x = D.river_ochs(board, per_combo, K)
        assert int((x[:, 0] >= 0).sum()) == 1081 and np.all(x[x[:, 0] < 0] == -1)
        rest = sorted(set(range(52)) - set(board))
        for hole in list(itertools.combinations(rest, 2))[::211]:  # 6 holdings a board
            want = _brute_force(hole, board, clusters, K)
            assert x[ev.combo_index(*hole)] == pytest.approx(want, abs=1e-12), (board, hole)


def test_the_sweep_and_the_one_holding_enumeration_give_the_same_doubles(clusters) -> None:
    """The bot buckets a board with the sweep, the solver's walk one holding at a time: the
    two must agree exactly, or a holding could land in two buckets."""
    per_combo = np.ascontiguousarray(clusters[D.PREFLOP_CLASS], dtype=np.uint8)
    native = D.native_module()
    for board in [(1, 2, 3, 4, 5), (8, 21, 34, 47, 51)]:
        x = D.river_ochs(board, per_combo, K)
        one = np.empty(K)
        for c in np.flatnonzero(x[:, 0] >= 0):
            native.river_ochs_one(bytes(ev.combo_cards(int(c))), bytes(board), per_combo, K, one)
            assert np.array_equal(one, x[c])


def test_one_cluster_is_plain_river_hs_and_a_nut_hand_is_one_against_every_cluster(clusters) -> None:
    board = (ev.parse_card("Qs"), ev.parse_card("Js"), ev.parse_card("Ts"), ev.parse_card("2d"),
             ev.parse_card("3c"))
    assert np.array_equal(D.river_ochs(board, np.zeros(1326, np.uint8), 1)[:, 0], D.river_hs(board))
    x = D.river_ochs(board, clusters[D.PREFLOP_CLASS], K)
    royal = x[ev.combo_index(ev.parse_card("As"), ev.parse_card("Ks"))]
    assert np.array_equal(royal, np.ones(K))
    # a queen-high straight flush loses to one combo (AsKs): below 1 in that combo's cluster only
    second = x[ev.combo_index(ev.parse_card("9s"), ev.parse_card("8s"))]
    ak = clusters[ev.PREFLOP_CLASSES.index("AKs")]
    assert second[ak] < 1.0 and np.all(np.delete(second, ak) == 1.0)


def test_opponent_clusters_are_deterministic_and_ordered_by_strength(clusters) -> None:
    again = D.opponent_clusters(K, boards=300, seed=2)
    assert np.array_equal(clusters, again) and clusters.dtype == np.uint8
    assert sorted(set(clusters.tolist())) == list(range(K))
    assert clusters[ev.PREFLOP_CLASSES.index("AA")] == K - 1 and clusters[ev.PREFLOP_CLASSES.index("72o")] == 0
    with pytest.raises(ConfigError, match="1 to 64"):
        D.opponent_clusters(65)


def test_ochs_buckets_are_deterministic_for_a_seed_and_ordered_by_strength(small_river) -> None:
    again = D.fit_ochs_river(24, 4, fit_boards=40, fit_points=20_000, cluster_boards=200, seed=1)
    other = D.fit_ochs_river(24, 4, fit_boards=40, fit_points=20_000, cluster_boards=200, seed=2)
    assert np.array_equal(small_river.clusters, again.clusters)
    assert np.array_equal(small_river.centroids, again.centroids)
    assert not np.array_equal(small_river.centroids, other.centroids)
    share = np.bincount(small_river.combo_clusters(), minlength=4)
    assert np.all(np.diff(small_river.centroids @ share) >= 0)
    board = (0, 5, 17, 30, 44)
    b = small_river.buckets(board)
    assert np.array_equal(b, again.buckets(board))
    x = D.river_ochs(board, small_river.combo_clusters(), 4)
    ok = b != D.NO_BUCKET
    assert int(ok.sum()) == 1081 and np.all(x[~ok] == -1)
    d = ((x[ok][:, None, :] - small_river.centroids[None]) ** 2).sum(axis=2)
    assert np.array_equal(b[ok], np.argmin(d, axis=1))  # the nearest centroid (no ties on this board)


def test_k_means_finds_separated_clusters() -> None:
    rng = np.random.default_rng(0)
    pts = np.concatenate([rng.normal(m, 0.01, size=(50, 3)) for m in (0.0, 0.5, 1.0)])
    cent = D.k_means_l2(pts, 3, seed=3)
    assert sorted(np.round(cent[:, 0], 1).tolist()) == [0.0, 0.5, 1.0]


def test_an_ochs_abstraction_saves_trains_and_buckets_as_the_bot_does(ochs_abstraction, tmp_path) -> None:
    a = ochs_abstraction
    assert a.name == "emd_169_256_256_24_ochs4" and a.n_buckets == (169, 256, 256, 24)
    a.save(tmp_path)
    back = D.DistributionAbstraction.load(tmp_path)
    assert back.ochs is not None and np.array_equal(back.ochs.centroids, a.ochs.centroids)
    assert abstraction_fingerprint(back) == abstraction_fingerprint(a)
    shipped = D.DistributionAbstraction.load(SHIPPED_TEACHER)
    assert shipped.ochs is None and abstraction_fingerprint(shipped) != abstraction_fingerprint(a)
    t = MCCFRTrainer(back, seed=5, threads=1)
    rng = np.random.default_rng(8)
    for _ in range(60):
        d = tuple(int(c) for c in rng.choice(52, 7, replace=False))
        assert t.deal_buckets(d[:2], d[2:]) == back.buckets(d[:2], d[2:])
    t.run(20_000)
    t.save_strategy(tmp_path / STRATEGY_FILE)
    s = load_imperfect_strategy(tmp_path)
    assert s.abstraction.ochs is not None and s.probs.shape == (t.size,)


def test_bad_ochs_arguments_are_refused(ochs_abstraction, tmp_path) -> None:
    native = D.native_module()
    bad = np.full(1326, 4, np.uint8)
    with pytest.raises(ValueError, match="0..k-1"):
        native.river_ochs(bytes((0, 5, 17, 30, 44)), bad, 4, np.empty(1326 * 4))
    with pytest.raises(ValueError, match="1..64"):
        native.river_ochs(bytes((0, 5, 17, 30, 44)), bad, 65, np.empty(1326 * 65))
    tables = list(ochs_abstraction.raw_tables())
    tables[6] = tables[6][:-1].copy()  # centroids not a whole number of rows
    t = MCCFRTrainer(ochs_abstraction, seed=1, threads=1)
    with pytest.raises(ValueError, match="OCHS river"):
        native.deal_buckets(t._tree, tuple(tables), bytes((0, 1)), bytes((2, 3, 4, 5, 6)))
    shutil.copy(SHIPPED_TEACHER / "abstraction.npz", tmp_path / "abstraction.npz")
    with np.load(tmp_path / "abstraction.npz") as z:
        arrays = dict(z)
    arrays["ochs_clusters"] = np.zeros(169, np.uint8)
    arrays["ochs_centroids"] = np.zeros((3, 1))  # 3 rows for a 256-bucket river
    np.savez(tmp_path / "abstraction.npz", **arrays)
    with pytest.raises(ConfigError, match="OCHS river"):
        D.DistributionAbstraction.load(tmp_path)
