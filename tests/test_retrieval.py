"""Exact retrieval: the faiss backend must answer what brute force over all cases answers."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cbr.errors import CaseBaseError, CBRError, ConfigError
from cbr.retrieval import (
    BruteForceBackend,
    CaseIndex,
    FaissBackend,
    QueryError,
    action_codes,
    probability_triple,
)
from cbr.similarity import FeatureSimilarity, StreetSimilarity, default_casper, global_similarity

TIE = 1e-6


# -- an oracle that shares nothing with the backends but the similarity definition ----------


def oracle(street, X, q, threshold, k):
    """All ids with s >= threshold, else the top k; with every case's similarity."""
    s = global_similarity(street, q, X)
    ids = np.nonzero(s >= threshold)[0]
    if ids.size:
        return set(ids.tolist()), s, False
    kth = np.sort(s)[::-1][k - 1] if s.size >= k else -np.inf
    return set(np.nonzero(s >= kth)[0].tolist()), s, True


def assert_same_as_oracle(result, street, X, q, threshold, k):
    """Tie-tolerant: equal up to cases within 1e-6 of the boundary (threshold or k-th value)."""
    want, s, fallback = oracle(street, X, q, threshold, k)
    got = result.ids.tolist()
    assert result.fallback == fallback
    assert len(set(got)) == len(got), "duplicate ids"
    np.testing.assert_allclose(result.similarities, s[result.ids], rtol=0, atol=1e-12)
    order = np.lexsort((result.ids, -result.similarities))
    assert np.array_equal(order, np.arange(len(got))), "not sorted by similarity desc, id asc"
    if not fallback:
        sure = {i for i in want if s[i] >= threshold + TIE}
        assert sure <= set(got)
        assert all(s[i] >= threshold - TIE for i in got)
    else:
        assert len(got) == min(k, len(s))
        kth = np.sort(s)[::-1][len(got) - 1]
        assert {i for i in range(len(s)) if s[i] > kth + TIE} <= set(got)
        assert all(s[i] >= kth - TIE for i in got)


# -- random configurations and data --------------------------------------------------------

feature = st.fixed_dictionaries({
    "measure": st.sampled_from(["linear", "exp", "exact"]),
    "weight": st.integers(0, 100),
    "low": st.integers(-3, 3),
    "span": st.integers(1, 8),
    "k": st.floats(0.1, 6.0),
    "discrete": st.booleans(),
})


@st.composite
def problems(draw):
    specs = draw(st.lists(feature, min_size=1, max_size=6))
    if all(s["weight"] == 0 for s in specs):
        specs[0]["weight"] = draw(st.integers(1, 100))
    street = StreetSimilarity("turn", tuple(
        FeatureSimilarity(f"f{i}", s["measure"], weight=s["weight"], low=s["low"], high=s["low"] + s["span"],
                          params={"k": s["k"]} if s["measure"] == "exp" else {})
        for i, s in enumerate(specs)))
    n = draw(st.integers(1, 400))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)

    def column(s, m):
        lo, hi = s["low"] - 1, s["low"] + s["span"] + 1       # values also outside the domain
        if s["discrete"]:
            return rng.integers(lo, hi + 1, m).astype(np.float32)
        return rng.uniform(lo, hi, m).astype(np.float32)

    X = np.column_stack([column(s, n) for s in specs])
    fresh = np.column_stack([column(s, 6) for s in specs])
    Q = np.vstack([X[rng.integers(0, n, 4)], fresh])            # copies (exact matches) and fresh rows
    n_extra = draw(st.integers(1, 60))
    extra = np.column_stack([column(s, n_extra) for s in specs])
    threshold = draw(st.sampled_from([1.0, 0.99, 0.97, 0.9, 0.75, 0.5, 0.0]))
    k = draw(st.integers(1, 25))
    n_lists = draw(st.integers(1, 24))
    return street, X, Q, extra, threshold, k, n_lists


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_faiss_equals_brute_force(tmp_path_factory, problem):
    street, X, Q, extra, threshold, k, n_lists = problem
    index = CaseIndex(similarity=street, threshold=threshold, fallback_k=k,
                      backend_params={"n_lists": n_lists}).fit(X)
    brute = CaseIndex(similarity=street, threshold=threshold, fallback_k=k, backend="brute").fit(X)
    for q, r, rb in zip(Q, index.retrieve_batch(Q), brute.retrieve_batch(Q)):
        assert_same_as_oracle(r, street, X, q, threshold, k)
        assert_same_as_oracle(rb, street, X, q, threshold, k)
        single = index.retrieve(q)
        assert np.array_equal(single.ids, r.ids)

    # fallback mode on its own: k nearest
    kk = min(k, X.shape[0])
    sims, ids = index.kneighbors(Q, kk)
    assert sims.shape == ids.shape == (Q.shape[0], kk)
    for q, s_row, i_row in zip(Q, sims, ids):
        r = type(index.retrieve(q))(i_row, s_row, True)
        assert_same_as_oracle(r, street, X, q, 2.0, kk)   # threshold above 1: always the top k

    # live-play retention: add() then the same answers as brute force over all cases
    new_ids = index.add(extra)
    assert new_ids.tolist() == list(range(X.shape[0], X.shape[0] + extra.shape[0]))
    everything = np.vstack([X, extra])
    for q, r in zip(Q, index.retrieve_batch(Q)):
        assert_same_as_oracle(r, street, everything, q, threshold, k)

    # persisted and read back
    path = tmp_path_factory.mktemp("idx") / "turn"
    index.save(path)
    loaded = CaseIndex.load(path)
    assert loaded.n_cases_ == everything.shape[0] and loaded.backend == "faiss"
    for q, r in zip(Q, loaded.retrieve_batch(Q)):
        assert_same_as_oracle(r, street, everything, q, threshold, k)
    loaded.add(X[:3])
    allrows = np.vstack([everything, X[:3]])
    for q, r in zip(Q, loaded.retrieve_batch(Q)):
        assert_same_as_oracle(r, street, allrows, q, threshold, k)


def casper_flop(n, seed):
    """Discrete-heavy CASPER-like flop rows (many ties)."""
    rng = np.random.default_rng(seed)
    in_hand = rng.integers(2, 5, n)
    to_call = rng.choice([0, 1, 2], n, p=[.5, .4, .1])
    pot = in_hand * rng.integers(1, 4, n)
    return np.column_stack([rng.choice([2, 6, 10], n), rng.choice([0, .5, 1], n), in_hand,
                            rng.integers(0, 3, n), rng.integers(0, 2, n), to_call, to_call / (pot + to_call),
                            rng.beta(2, 2, n).round(2), rng.beta(1, 6, n).round(2), rng.beta(1, 5, n).round(2),
                            pot, rng.integers(0, 3, n)]).astype(np.float32)


@pytest.mark.parametrize("threshold", [0.97, 0.995, 0.8])
def test_casper_defaults_many_ties(threshold):
    street = default_casper().street("flop")
    X = casper_flop(20000, 1)
    Q = np.vstack([casper_flop(40, 2), X[:10]])
    index = CaseIndex(similarity=street, threshold=threshold).fit(X)
    for q, r in zip(Q, index.retrieve_batch(Q)):
        assert_same_as_oracle(r, street, X, q, threshold, 20)
    sims, ids = index.kneighbors(Q, 20)
    brute_sims, brute_ids = CaseIndex(similarity=street, backend="brute").fit(X).kneighbors(Q, 20)
    np.testing.assert_allclose(sims, brute_sims, rtol=0, atol=TIE)


def test_fallback_used_when_nothing_reaches_threshold():
    street = default_casper().street("preflop")
    X = np.tile(np.array([[6, 0, 6, 5, 0, 1, 0.3, 10]], np.float32), (50, 1))
    X[:, 7] = np.arange(100, 150)                  # hand ranks far from the query's
    q = np.array([6, 0, 6, 5, 0, 1, 0.3, 1], np.float32)
    r = CaseIndex(similarity=street).fit(X).retrieve(q)
    assert r.fallback and r.ids.tolist() == list(range(20))
    assert np.all(np.diff(r.similarities) < 0)


def test_ties_are_sorted_by_id():
    street = default_casper().street("preflop")
    X = np.tile(np.array([[6, 0, 6, 5, 0, 1, 0.3, 10]], np.float32), (30, 1))
    r = CaseIndex(similarity=street, fallback_k=5).fit(X).retrieve(X[0])
    assert r.ids.tolist() == list(range(30)) and not r.fallback
    sims, ids = CaseIndex(similarity=street, threshold=1.0).fit(X).kneighbors(X[:1], 5)
    assert ids.tolist() == [[0, 1, 2, 3, 4]]


# -- the probability triple and the explanation --------------------------------------------


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("fcr"), st.floats(0, 1)), min_size=1, max_size=40),
       st.booleans())
def test_triple_sums_to_one(pairs, weighted):
    actions = [a for a, _ in pairs]
    sims = np.array([s for _, s in pairs])
    triple = probability_triple(actions, sims, weighted)
    assert abs(sum(triple) - 1.0) < 1e-12 and all(0 <= p <= 1 for p in triple)
    if not weighted or sims.sum() == 0:
        assert triple == tuple(actions.count(a) / len(actions) for a in "fcr")


def test_triple_weighting():
    assert probability_triple(["f", "r", "r", "c"]) == (0.25, 0.25, 0.5)
    assert probability_triple([0, 2, 2, 1]) == (0.25, 0.25, 0.5)
    sims = np.array([1.0, 0.1, 0.1, 0.8])
    f, c, r = probability_triple(["f", "r", "r", "c"], sims, weighted=True)
    assert np.allclose((f, c, r), (1 / 2, 0.8 / 2, 0.2 / 2))
    with pytest.raises(QueryError, match="unknown action"):
        probability_triple(["f", "x"])
    with pytest.raises(QueryError, match="no cases"):
        probability_triple([])
    assert action_codes(np.array(["F", "C", "R"])).tolist() == [0, 1, 2]


def test_explanation_lists_cases_locals_and_actions():
    street = default_casper().street("preflop")
    X = np.tile(np.array([[6, 0, 6, 5, 0, 1, 0.3, 10]], np.float32), (4, 1))
    X[:, 7] = [10, 11, 12, 150]
    actions = np.array(["r", "c", "r", "f"])
    index = CaseIndex(similarity=street).fit(X)
    ex = index.explain(X[0], actions, weighted=True)
    assert ex.ids.tolist() == [0, 1, 2] and ex.actions == ("r", "c", "r")
    assert ex.local.shape == (3, 8) and ex.local[0].tolist() == [1.0] * 8
    assert ex.local[1, 7] == 1 - 1 / 168
    want = probability_triple(["r", "c", "r"], ex.similarities, True)
    assert ex.triple == want == index.triple(X[0], actions, weighted=True)
    enriched = ex.with_provenance([{"hand": 1}, {"hand": 2}, {"hand": 3}])
    doc = json.loads(json.dumps(enriched.to_dict()))
    assert doc["cases"][2]["provenance"] == {"hand": 3} and doc["cases"][1]["action"] == "c"
    with pytest.raises(QueryError):
        ex.with_provenance([1])


# -- API shape and errors ------------------------------------------------------------------


def test_estimator_shape_and_errors(tmp_path):
    street = default_casper().street("flop")
    index = CaseIndex(similarity=street, threshold=0.9)
    assert index.get_params()["threshold"] == 0.9 and not hasattr(index, "backend_")
    with pytest.raises(CBRError, match="not fitted"):
        index.retrieve(np.zeros(12))
    with pytest.raises(QueryError, match=r"shape \(n, 12\)"):
        index.fit(np.zeros((3, 8), np.float32))
    with pytest.raises(QueryError, match="NaN"):
        index.fit(np.full((3, 12), np.nan, np.float32))
    X = casper_flop(50, 3)
    index.fit(X)
    assert index.n_cases_ == 50 and index.n_features_in_ == 12 and isinstance(index.backend_, FaissBackend)
    with pytest.raises(QueryError, match="k must be within"):
        index.kneighbors(X[:1], 51)
    with pytest.raises(ConfigError, match="unknown retrieval backend 'annoy'"):
        CaseIndex(similarity=street, backend="annoy").fit(X)
    with pytest.raises(ConfigError, match="threshold"):
        CaseIndex(similarity=street, threshold=2).fit(X)
    with pytest.raises(CaseBaseError, match="meta.json is missing"):
        CaseIndex.load(tmp_path / "nothing")
    index.save(tmp_path / "flop")
    (tmp_path / "flop" / "index.faiss").write_bytes(b"garbage")
    with pytest.raises(CaseBaseError):
        CaseIndex.load(tmp_path / "flop")
    brute = CaseIndex(similarity=street, backend="brute").fit(X)
    brute.save(tmp_path / "b")
    assert isinstance(CaseIndex.load(tmp_path / "b").backend_, BruteForceBackend)
    cfg = default_casper(threshold=0.5, fallback_k=3)
    made = CaseIndex.for_street(cfg, "river")
    assert made.threshold == 0.5 and made.fallback_k == 3 and made.similarity == cfg.street(3)
