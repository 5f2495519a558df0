"""``min_cases``: every case at or above the threshold, and when fewer than ``min_cases`` reach
it, the ``fallback_k`` most similar (1: CASPER's rule). Against the numpy definitions of
test_retrieval and test_aggregate, for both backends, the listing and the grouped scan, cases
appended during play, a saved index, and the configuration that carries it."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cbr.errors import ConfigError
from cbr.retrieval import CaseIndex
from cbr.similarity import SimilarityConfig, check_min_cases, default_casper
from tests.retrieval.test_aggregate import assert_same, labels, reference
from tests.retrieval.test_retrieval import assert_same_as_oracle, problems


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.integers(1, 25), st.sampled_from(["brute", "faiss"]), st.integers(1, 30))
def test_min_cases_equals_the_definition(tmp_path_factory, problem, least, backend, top):
    street, X, Q, extra, threshold, k, n_lists = problem
    least = min(least, k)
    params = {"n_lists": n_lists} if backend == "faiss" else None
    index = CaseIndex(similarity=street, threshold=threshold, fallback_k=k, backend=backend, backend_params=params,
                      min_cases=least).fit(X)
    codes, outcomes = labels(X.shape[0] + extra.shape[0], 1)
    for Y in (X, np.vstack([X, extra])):
        if Y is not X:
            index.add(extra)
        for q, r, a in zip(Q, index.retrieve_batch(Q), index.aggregate_batch(Q, codes, outcomes, top)):
            assert_same_as_oracle(r, street, Y, q, threshold, k, least)
            assert_same(a, reference(street, Y, q, threshold, k, codes, outcomes, top, least))
        for q in Q:  # asked only for the cases at or above the threshold: min_cases plays no part
            a = index.aggregate(q, codes, outcomes, top, fallback=False)
            ref = reference(street, Y, q, threshold, k, codes, outcomes, top)
            assert a.n == (0 if ref["fallback"] else ref["n"]) and not a.fallback
    path = index.save(tmp_path_factory.mktemp("idx"))
    loaded = CaseIndex.load(path)
    assert loaded.min_cases == least
    for q, r in zip(Q, loaded.retrieve_batch(Q)):
        assert_same_as_oracle(r, street, np.vstack([X, extra]), q, threshold, k, least)


def test_min_cases_changes_what_is_retrieved():
    """Three cases reach the threshold: CASPER's rule keeps them; min_cases 5 takes the 5 most
    similar (the three among them); a view leaves the index as it was."""
    cfg = default_casper(fallback_k=5)
    X = np.linspace(0, 1, 50, dtype=np.float32)[:, None].repeat(8, 1)
    index = CaseIndex.for_street(cfg, "preflop").fit(X)
    plain = index.retrieve(X[0])
    assert len(plain.ids) == 3 and not plain.fallback
    wide = index.with_retrieval(min_cases=5).retrieve(X[0])
    assert wide.fallback and len(wide.ids) == 5 and set(plain.ids) <= set(wide.ids)
    assert index.min_cases == 1 and len(index.retrieve(X[0]).ids) == 3
    assert len(index.with_retrieval(min_cases=3).retrieve(X[0]).ids) == 3  # enough reach it
    with pytest.raises(ConfigError, match=r"min_cases must be a whole number from 1 to fallback_k \(5\), got 6"):
        index.with_retrieval(min_cases=6)


def test_the_configuration_carries_min_cases():
    cfg = default_casper(fallback_k=30).changed(min_cases=30)
    assert "min_cases = 30" in cfg.to_toml() and SimilarityConfig.from_toml(cfg.to_toml()) == cfg
    assert "min_cases" not in default_casper().to_toml()  # CASPER's rule: files written before stay the same
    assert cfg.to_dict()["min_cases"] == 30 and "min_cases" not in default_casper().to_dict()
    assert CaseIndex.for_street(cfg, "river").min_cases == 30
    for bad in (0, 31, 2.5, True, "3"):
        with pytest.raises(ConfigError, match="min_cases must be a whole number from 1 to fallback_k"):
            check_min_cases(bad, 30)
        with pytest.raises(ConfigError, match="min_cases"):
            default_casper(fallback_k=30).changed(min_cases=bad)
