"""The ``equity`` measure for the pre-flop hand strength: CASPER's rank 1..169 is ordinal,
so the linear measure retrieves ranks 1..19 for pocket aces; mapped to equity first, the
retrieval window follows how far apart the hands really are."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cbr.errors import ConfigError
from cbr.game.gamedef import STREETS
from cbr.retrieval import CaseIndex
from cbr.similarity import (
    EquitySimilarity,
    FeatureSimilarity,
    SimilarityConfig,
    StreetSimilarity,
    default_casper,
    global_similarity,
)
from cbr.store import CaseBase, CaseBaseWriter
from evaluator_ext.preflop import PREFLOP_EQUITY, PREFLOP_TABLE


def equity_config(threshold: float = 0.97) -> SimilarityConfig:
    """CASPER's defaults with the pre-flop hand strength compared by equity."""
    base = default_casper(threshold=threshold)
    pre = base.street("preflop")
    specs = tuple(FeatureSimilarity(s.name, "equity", weight=s.weight, low=s.low, high=s.high)
                  if s.name == "hand_strength" else s for s in pre.feature_specs)
    return dataclasses.replace(base, streets=(StreetSimilarity("preflop", specs), *base.streets[1:]))


def one_case_per_rank() -> np.ndarray:
    """169 pre-flop cases, one per rank, alike in everything else."""
    X = np.tile(np.array([2, 1, 2, 1, 0, 1, 0.25, 1], np.float32), (169, 1))
    X[:, 7] = np.arange(1, 170)
    return X


@pytest.mark.parametrize("backend", ["faiss", "brute"])
def test_retrieval_window_of_pocket_aces(backend: str) -> None:
    X = one_case_per_rank()
    windows = {}
    for measure, config in (("linear", default_casper()), ("equity", equity_config())):
        index = CaseIndex.for_street(config, "preflop", backend=backend).fit(X)
        r = index.retrieve(X[0])
        assert not r.fallback
        windows[measure] = sorted(int(X[i, 7]) for i in r.ids)
        # the same window from the definition itself
        sims = global_similarity(config.street("preflop"), X[0], X)
        assert windows[measure] == sorted(int(x) for x in X[sims >= 0.97, 7])
    # linear: 1 - (100/360) (r - 1)/168 >= 0.97  <=>  r - 1 <= 18.1: ranks 1..19 (AA .. JTs)
    assert windows["linear"] == list(range(1, 20))
    assert PREFLOP_TABLE[18] == "JTs"
    # equity: KK is 0.062 below AA, more than 0.108 * (e(AA) - e(72o)) = 0.044: only AA is alike
    span = PREFLOP_EQUITY[0] - PREFLOP_EQUITY[-1]
    assert PREFLOP_EQUITY[0] - PREFLOP_EQUITY[1] > 0.03 * 360 / 100 * span
    assert windows["equity"] == [1]


def test_window_of_a_middling_hand_is_wider_by_equity() -> None:
    """Where equities are close (the middle of the table), the equity window is wider than
    the linear one: the measure follows the equity gaps, not the rank gaps."""
    X = one_case_per_rank()
    q = X[99]  # rank 100
    lin = global_similarity(default_casper().street("preflop"), q, X) >= 0.97
    eq = global_similarity(equity_config().street("preflop"), q, X) >= 0.97
    assert lin.sum() == 37 and eq.sum() > lin.sum()


def test_equity_measure_is_exact_in_faiss_against_brute_force() -> None:
    rng = np.random.default_rng(5)
    n = 3000
    X = np.column_stack([rng.integers(2, 11, n), rng.random(n), rng.integers(2, 6, n), rng.integers(0, 5, n),
                         rng.integers(0, 3, n), rng.integers(0, 3, n), rng.random(n) / 2,
                         rng.integers(1, 170, n)]).astype(np.float32)
    config = equity_config(threshold=0.9)
    fast = CaseIndex.for_street(config, "preflop").fit(X)
    brute = CaseIndex.for_street(config, "preflop", backend="brute").fit(X)
    for q in X[:40]:
        a, b = fast.retrieve(q), brute.retrieve(q)
        np.testing.assert_array_equal(a.ids, b.ids)
        np.testing.assert_array_equal(a.similarities, b.similarities)
    sims_a, ids_a = fast.kneighbors(X[:10], 25)
    sims_b, ids_b = brute.kneighbors(X[:10], 25)
    np.testing.assert_array_equal(sims_a, sims_b)


def test_equity_in_toml_and_in_a_case_base(tmp_path) -> None:
    config = equity_config()
    text = config.to_toml()
    assert 'measure = "equity"' in text
    assert SimilarityConfig.from_toml(text) == config
    assert default_casper().street("preflop").feature_specs[-1].measure == "linear"  # the default stays
    X = one_case_per_rank()
    with CaseBaseWriter(tmp_path / "cb", similarity=config) as w:
        for s in STREETS:
            rows = X if s == "preflop" else np.full((3, 12), 0.5, np.float32)
            w.add_rows(s, rows, "c" * len(rows))
    with CaseBase.open(tmp_path / "cb") as cb:
        assert cb.similarity() == config
        assert cb.index("preflop").retrieve(X[0]).ids.tolist() == [0]


@pytest.mark.parametrize("low,high", [(0, 169), (1, 200), (5, 5)])
def test_equity_domain_must_be_ranks(low: float, high: float) -> None:
    with pytest.raises(ConfigError):
        FeatureSimilarity("hand_strength", "equity", weight=100, low=low, high=high)


def test_equity_measure_values() -> None:
    m = EquitySimilarity(low=1, high=169)
    span = PREFLOP_EQUITY[0] - PREFLOP_EQUITY[-1]
    got = m(1.0, np.array([1, 2, 169, 300, -4], np.float32))
    expected = [1.0, 1 - (PREFLOP_EQUITY[0] - PREFLOP_EQUITY[1]) / span, 0.0, 0.0, 1.0]  # clipped to 1..169
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert m.lower_bound_slope() == pytest.approx(1 / span)
