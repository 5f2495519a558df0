"""Exact retrieval: the faiss backend must answer what brute force over all cases answers."""
from __future__ import annotations

import json

import numpy as np
import pytest

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
from tests.conftest import HealthCheck, given, settings, st  # hypothesis, or stand-ins that skip without it

TIE = 1e-6


# -- an oracle that shares nothing with the backends but the similarity definition ----------


def oracle(street, X, q, threshold, k, min_cases=1):
    """All ids with s >= threshold, else (fewer than ``min_cases`` of them) the top k; with every
    case's similarity."""
    s = global_similarity(street, q, X)
    ids = np.nonzero(s >= threshold)[0]
    if ids.size >= min_cases:
        return set(ids.tolist()), s, False
    kth = np.sort(s)[::-1][k - 1] if s.size >= k else -np.inf
    return set(np.nonzero(s >= kth)[0].tolist()), s, True


def assert_same_as_oracle(result, street, X, q, threshold, k, min_cases=1):
    """Tie-tolerant: equal up to cases within 1e-6 of the boundary (threshold or k-th value)."""
    want, s, fallback = oracle(street, X, q, threshold, k, min_cases)
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


def test_saved_faiss_index_is_read_on_first_use_and_checked(tmp_path):
    """A loaded index reads ``index.faiss`` only when faiss is first needed (the header is
    checked at load: a file of another index is refused there); the late read answers as
    the saved index did, and a file damaged after the load fails that read with a clear
    error instead of a crash."""
    street = default_casper().street("flop")
    X = casper_flop(400, 5)
    path = CaseIndex(similarity=street, threshold=0.9).fit(X).save(tmp_path / "a")
    CaseIndex(similarity=street, threshold=0.9).fit(X[:300]).save(tmp_path / "b")
    loaded = CaseIndex.load(path)
    assert "_faiss" not in loaded.backend_.__dict__
    (path / "index.faiss").rename(tmp_path / "gone")
    (tmp_path / "gone").unlink()  # a generation retired and deleted after the load: still read
    loaded.add(X[:5])
    loaded.save(tmp_path / "c")  # saving writes the faiss lists: read now
    assert "_faiss" in loaded.backend_.__dict__
    want = CaseIndex(similarity=street, threshold=0.9, backend="brute").fit(np.vstack([X, X[:5]])).retrieve(X[7])
    got = loaded.retrieve(X[7])
    assert got.ids.tolist() == want.ids.tolist() and np.array_equal(got.similarities, want.similarities)
    CaseIndex(similarity=street, threshold=0.9).fit(X).save(path)
    (path / "index.faiss").write_bytes((tmp_path / "b" / "index.faiss").read_bytes())
    with pytest.raises(CaseBaseError, match="faiss index holds 300 cases"):
        CaseIndex.load(path)
    CaseIndex(similarity=street, threshold=0.9).fit(X).save(path)
    late = CaseIndex.load(path)
    data = bytearray((path / "index.faiss").read_bytes())
    (path / "index.faiss").write_bytes(bytes(data[:64]))  # cut after the load
    with pytest.raises(CaseBaseError, match="cannot read the faiss index"):
        late.save(tmp_path / "d")


# -- the fast path is the definition: bit-identical values, order and ties ---------------------

from cbr.retrieval.brute import _sorted  # noqa: E402
from cbr.similarity import ExactMatch, ExponentialSimilarity, LinearSimilarity  # noqa: E402


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


def plain_local(measure, q, column):
    """Each measure's formula written out with numpy temporaries (the pre-`into` definition)."""
    col = np.asarray(column, dtype=np.float32).astype(np.float64)
    diff = np.abs(col - float(np.float32(q)))
    if isinstance(measure, LinearSimilarity):
        return np.maximum(1.0 - diff / (measure.high - measure.low), 0.0)
    if isinstance(measure, ExponentialSimilarity):
        return np.exp(-measure.k * diff)
    return (np.asarray(column, dtype=np.float32) == np.float32(q)).astype(np.float64)


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["linear", "exp", "exact"]), low=st.integers(-5, 5), span=st.integers(1, 200),
       k=st.floats(0.05, 8.0), seed=st.integers(0, 2**32 - 1), stride=st.integers(1, 3))
def test_into_and_call_match_the_plain_formula_bit_for_bit(kind, low, span, k, seed, stride):
    rng = np.random.default_rng(seed)
    cls = {"linear": LinearSimilarity, "exp": ExponentialSimilarity, "exact": ExactMatch}[kind]
    m = cls(low=low, high=low + span, **({"k": k} if kind == "exp" else {}))
    wide = rng.uniform(low - span, low + 2 * span, (rng.integers(1, 300), 3)).astype(np.float32)
    wide[::4, 0] = np.round(wide[::4, 0])
    column = wide[:, 0][::stride]                     # a strided float32 view, as retrieval passes
    q = float(column[0]) if rng.random() < 0.5 else float(rng.uniform(low - 1, low + span + 1))
    want = plain_local(m, q, column)
    out = np.full(column.shape[0], np.nan)
    assert m.into(q, column, out) is out
    assert np.array_equal(bits(out), bits(want))
    assert np.array_equal(bits(m(q, column)), bits(want))
    assert np.array_equal(bits(m(q, column.astype(np.float64))), bits(want))   # float64 input: same


def plain_global(street, q, X):
    acc = np.zeros(X.shape[0])
    total = 0.0
    for i, spec in enumerate(street.feature_specs):
        if spec.weight:
            acc += spec.weight * plain_local(spec.measure_obj, float(np.float32(q[i])), X[:, i])
            total += spec.weight
    return acc / total


@pytest.mark.parametrize("threshold", [0.97, 0.9])
def test_faiss_values_order_and_ties_bit_identical_to_brute_force(threshold):
    street = default_casper().street("flop")
    X = casper_flop(3000, 3)[np.random.default_rng(3).integers(0, 3000, 20000)]   # duplicates: ties
    Q = np.vstack([casper_flop(30, 4), X[:10]])
    index = CaseIndex(similarity=street, threshold=threshold).fit(X)
    brute = CaseIndex(similarity=street, threshold=threshold, backend="brute").fit(X)
    ties = 0
    for q, r, rb in zip(Q, index.retrieve_batch(Q), brute.retrieve_batch(Q)):
        s = plain_global(street, q, X)
        assert np.array_equal(bits(global_similarity(street, q, X)), bits(s))
        ids = np.nonzero(s >= threshold)[0]
        if ids.size == 0:
            ids = np.lexsort((np.arange(s.size), -s))[:20]
        want = ids[np.lexsort((ids, -s[ids]))]
        for got in (r, rb, index.retrieve(q)):
            assert got.ids.tolist() == want.tolist()
            assert np.array_equal(bits(got.similarities), bits(s[want]))
        ties += int((np.diff(s[want]) == 0).sum())
    assert ties > 100                                       # the tie-breaking was exercised


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 10**6)), min_size=0, max_size=200, unique_by=lambda t: t[1]))
def test_sorted_equals_lexsort_with_ties(pairs):
    levels = np.array([1.0, 0.99, 0.985, 0.975, 0.97, 0.5, 0.0])
    sims = np.array([levels[a] for a, _ in pairs], dtype=np.float64)
    ids = np.array([b for _, b in pairs], dtype=np.int64)
    got_ids, got_sims = _sorted(ids, sims)
    order = np.lexsort((ids, -sims))
    assert got_ids.tolist() == ids[order].tolist()
    assert np.array_equal(bits(got_sims), bits(sims[order]))


def test_concurrent_queries_share_no_scratch():
    import threading

    street = default_casper().street("flop")
    X = casper_flop(20000, 5)
    Q = casper_flop(40, 6)
    index = CaseIndex(similarity=street).fit(X)
    want = [(r.ids.tolist(), r.similarities.tolist()) for r in index.retrieve_batch(Q)]
    got: dict[int, list] = {}

    def work(t):
        got[t] = [(r.ids.tolist(), r.similarities.tolist()) for r in (index.retrieve(q) for q in Q[t::2])]

    threads = [threading.Thread(target=work, args=(t,)) for t in (0, 1)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert got[0] == want[0::2] and got[1] == want[1::2]


class _HalfSimilarity:
    """A plugin-style measure with only ``__call__`` (no ``into``)."""

    name = "half"

    def __init__(self, *, low, high):
        self.low, self.high = float(low), float(high)

    def __call__(self, q, column):
        return np.where(np.asarray(column, dtype=np.float32) == np.float32(q), 1.0, 0.5)

    def lower_bound_slope(self):
        return 0.5 / (self.high - self.low)

    def params(self):
        return {}


def test_measure_without_into_is_used_through_call(monkeypatch):
    from cbr.similarity import measures

    monkeypatch.setitem(measures.BUILTIN_MEASURES, "half", _HalfSimilarity)
    street = StreetSimilarity("river", (FeatureSimilarity("a", "half", weight=30, low=0, high=4),
                                        FeatureSimilarity("b", "linear", weight=70, low=0, high=4)))
    X = np.array([[1, 1], [2, 1], [1, 3]], np.float32)
    s = global_similarity(street, X[0], X)
    assert s.tolist() == [1.0, (30 * 0.5 + 70 * 1.0) / 100, (30 * 1.0 + 70 * 0.5) / 100]
    r = CaseIndex(similarity=street, threshold=0.8).fit(X).retrieve(X[0])
    assert r.ids.tolist() == [0, 1] and np.array_equal(r.similarities, s[[0, 1]])


def _lists_cover_their_members(backend):
    """Every case is in exactly one faiss list, inside that list's box and covering radius."""
    import faiss

    index = backend._index
    assert index.ntotal == backend.n_cases_ == int(backend._sizes.sum())
    invlists = index.invlists
    seen = []
    z = backend._scale(backend.cases_)
    for a in range(invlists.nlist):
        size = invlists.list_size(a)
        assert size == backend._sizes[a]
        if not size:
            continue
        ids = faiss.rev_swig_ptr(invlists.get_ids(a), size).copy()
        seen.append(ids)
        rows = z[ids]
        assert np.all(rows >= backend._lo[a]) and np.all(rows <= backend._hi[a])
        assert np.abs(rows.astype(np.float64) - backend._centroids[a]).sum(axis=1).max() <= backend._radius[a]
    assert np.array_equal(np.sort(np.concatenate(seen)), np.arange(backend.n_cases_))


def test_appended_cases_enter_the_faiss_lists_before_their_next_use(tmp_path):
    """Live play appends a hand's few cases at a time: they enter the faiss lists lazily, in
    one batch, before the lists are searched (a threshold or top-k query) or saved; the answers
    are brute force's and the saved index holds every case."""
    import threading

    street = default_casper().street("flop")
    X = casper_flop(3000, 41)
    Q = np.vstack([X[2000:2010], casper_flop(10, 42)])
    index = CaseIndex(similarity=street, fallback_k=7).fit(X[:1500])
    backend = index.backend_
    assert backend.pending == 0
    for start in range(1500, 2000, 3):                  # a hand's rows at a time
        index.add(X[start:min(start + 3, 2000)])
    assert backend.pending == 500 and backend._index.ntotal == 1500   # deferred
    for q, r in zip(Q, index.retrieve_batch(Q)):       # threshold mode: flushed first
        assert_same_as_oracle(r, street, X[:2000], q, street_threshold(index), 7)
    assert backend.pending == 0
    _lists_cover_their_members(backend)

    index.add(X[2000:2004])
    sims, ids = index.kneighbors(Q[:3], 5)             # top-k mode: flushed first
    assert backend.pending == 0 and backend._index.ntotal == 2004
    for q, s_row, i_row in zip(Q[:3], sims, ids):
        assert_same_as_oracle(type(index.retrieve(q))(i_row, s_row, True), street, X[:2004], q, 2.0, 5)

    for start in range(2004, 2600, 2):
        index.add(X[start:start + 2])
    errors: list[BaseException] = []

    def work(t):                                       # concurrent first uses flush once
        try:
            for q in Q[t::4]:
                assert_same_as_oracle(index.retrieve(q), street, X[:2600], q, street_threshold(index), 7)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    _lists_cover_their_members(backend)

    index.add(X[2600:])                                # saved while pending: flushed into the file
    assert backend.pending == 400
    path = index.save(tmp_path / "flop")
    assert backend.pending == 0
    loaded = CaseIndex.load(path)
    assert loaded.backend_._index.ntotal == X.shape[0]
    _lists_cover_their_members(loaded.backend_)
    for q, r in zip(Q, loaded.retrieve_batch(Q)):
        assert_same_as_oracle(r, street, X, q, street_threshold(index), 7)


def street_threshold(index):
    return index.backend_.threshold
