"""The aggregate path (cbr.retrieval.aggregate): the same hit count, per-action counts, top ids
and similarities as numpy brute force over every case, and the same sums to float rounding;
after adds, after save/load and memory-mapped; and the C kernel refuses bad input."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import cbr.retrieval.aggregate as agg_mod
from cbr.retrieval import CaseIndex, QueryError, action_codes
from cbr.retrieval.aggregate import GroupedLayout, Labels, native_scan, native_scan_rows
from cbr.retrieval.results import probability_triple
from cbr.retrieval.triple import aggregate_vote, outcome_means, outcome_means_of_totals, vote_of
from cbr.similarity import default_casper, default_sartre, global_similarity
from tests.conftest import HealthCheck, given, settings, st
from tests.retrieval.test_retrieval import problems


def reference(street, X, q, threshold, k, codes, outcomes, top, min_cases=1):
    """Numpy brute force: every case scored by the definition."""
    s = global_similarity(street, q, X)
    ids = np.flatnonzero(s >= threshold)
    fallback = ids.size < min_cases
    if fallback:
        ids = np.arange(s.shape[0])
    ids = ids[np.lexsort((ids, -s[ids]))]
    if fallback:
        ids = ids[:k]
    c = codes[ids].astype(np.int64)
    o = outcomes[ids]
    ok = ~np.isnan(o)
    return {"n": ids.size, "fallback": fallback, "counts": np.bincount(c, minlength=3),
            "pos": np.bincount(c, weights=np.maximum(s[ids], 0), minlength=3),
            "known": np.bincount(c[ok], minlength=3), "osum": np.bincount(c[ok], weights=o[ok], minlength=3),
            "sim_sum": float(s[ids].sum()), "top_ids": ids[:top], "top_sims": s[ids[:top]]}


def assert_same(a, ref):
    assert a.n == ref["n"] and a.fallback == ref["fallback"]
    assert np.array_equal(a.counts, ref["counts"]) and np.array_equal(a.known, ref["known"])
    assert np.array_equal(a.top_ids, ref["top_ids"])
    assert np.array_equal(a.top_sims, ref["top_sims"])          # bit for bit
    np.testing.assert_allclose(a.pos_sims, ref["pos"], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(a.outcome_sums, ref["osum"], rtol=1e-10, atol=1e-10)
    assert a.sim_sum == pytest.approx(ref["sim_sum"], rel=1e-10, abs=1e-10)


def labels(n, seed):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, n).astype(np.int8)
    outcomes = np.where(rng.random(n) < 0.3, np.nan, rng.normal(0, 2, n))
    return codes, outcomes


def test_the_native_kernel_is_there_when_required():
    if os.environ.get("CBR_REQUIRE_NATIVE") == "1":
        assert native_scan() is not None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.sampled_from([None, 0, 3]), st.integers(1, 30), st.sampled_from(["brute", "faiss"]))
def test_aggregate_equals_brute_force_on_random_problems(problem, max_key, top, backend):
    """Random measures, weights, domains (values also outside them), thresholds; key columns
    chosen by the default rule, or every linear column free (0), or nearly (3)."""
    street, X, Q, extra, threshold, k, n_lists = problem
    codes, outcomes = labels(X.shape[0] + extra.shape[0], 1)
    params = {"n_lists": n_lists} if backend == "faiss" else None
    index = CaseIndex(similarity=street, threshold=threshold, fallback_k=k, backend=backend,
                      backend_params=params).fit(X)
    if max_key is not None:
        index.backend_._layout = GroupedLayout.build(street, X, max_key_values=max_key)
    for q, a in zip(Q, index.aggregate_batch(Q, codes, outcomes, top)):
        assert_same(a, reference(street, X, q, threshold, k, codes, outcomes, top))
    half = extra.shape[0] // 2
    for end in (half, extra.shape[0]):                  # a tail beside the layout, grown twice
        index.add(extra[index.n_cases_ - X.shape[0]: end])
        Y = np.vstack([X, extra[:end]])
        for q in Q:
            assert_same(index.aggregate(q, codes, outcomes, top), reference(street, Y, q, threshold, k, codes,
                                                                            outcomes, top))


@pytest.mark.parametrize("street", ["preflop", "flop", "turn", "river"])
def test_aggregate_on_the_default_case_base(street):
    """The shipped case base's rows, actions and outcomes; queries: its own rows (exact matches)
    and rows with the continuous features moved a little."""
    from cbr.store import CaseBase, resolve_casebase

    with CaseBase.open(resolve_casebase("default")) as cb:
        cases = cb.cases(street)
        X, codes = cases.features, action_codes(cases.actions)
        outcomes = np.asarray(cases.outcomes, dtype=np.float64)
    cfg = default_casper()
    st_ = cfg.street(street)
    index = CaseIndex.for_street(cfg, street).fit(X)
    rng = np.random.default_rng(7)
    Q = X[rng.integers(0, X.shape[0], 12)].copy()
    if street != "preflop":
        Q[6:, 7:10] = np.clip(Q[6:, 7:10] + rng.normal(0, 0.03, (6, 3)), 0, 1)
    for q, a in zip(Q, index.aggregate_batch(Q, codes, outcomes, 20)):
        assert_same(a, reference(st_, X, q, cfg.threshold, cfg.fallback_k, codes, outcomes, 20))


def test_aggregate_with_sartre_similarity():
    """All-discrete columns (no free column): groups are scored whole."""
    cfg = default_sartre()
    st_ = cfg.street("turn")
    rng = np.random.default_rng(3)
    n = 3000
    X = np.column_stack([rng.integers(0, 5, n), rng.integers(0, 5, n), rng.integers(0, 5, n),
                         rng.integers(0, 13, n), rng.integers(0, 50, n), rng.integers(0, 9, n)]).astype(np.float32)
    codes, outcomes = labels(n, 4)
    index = CaseIndex.for_street(cfg, "turn").fit(X)
    assert index.backend_._layout_now().free_cols.size == 0
    for q in X[:10]:
        assert_same(index.aggregate(q, codes, outcomes, 25),
                    reference(st_, X, q, cfg.threshold, cfg.fallback_k, codes, outcomes, 25))


def _flop(n, seed):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(2, 10, n), rng.integers(0, 4, n) / 3, rng.integers(2, 5, n),
                         rng.integers(0, 3, n), rng.integers(0, 3, n), rng.integers(0, 3, n),
                         rng.integers(0, 6, n) / 10, rng.random(n), rng.random(n) / 4, rng.random(n) / 4,
                         rng.integers(2, 20, n), rng.integers(1, 5, n)])
    return X.astype(np.float32)


@pytest.mark.parametrize("backend", ["faiss", "brute"])
def test_aggregate_after_adds_save_and_mmap(tmp_path: Path, backend: str):
    cfg = default_casper()
    st_ = cfg.street("flop")
    X = _flop(6000, 1)
    Q = np.vstack([X[:5], _flop(10, 2)])
    codes, outcomes = labels(30000, 3)
    index = CaseIndex.for_street(cfg, "flop", backend=backend).fit(X[:2000])
    index.aggregate(Q[0], codes, outcomes)              # the layout covers 2,000 cases
    index.add(X[2000:4000])                             # a tail
    Y = X[:4000]
    for q in Q:
        assert_same(index.aggregate(q, codes, outcomes, 10),
                    reference(st_, Y, q, cfg.threshold, cfg.fallback_k, codes, outcomes, 10))
    assert index.backend_._layout.n_rows == 2000
    index.add(X[4000:])
    layout = index.backend_._layout_now()
    assert layout.n_rows == 2000                         # a tail of 4,000 < 50,000: kept
    path = index.save(tmp_path / "flop")
    assert all((path / f).exists() for f in agg_mod.LAYOUT_FILES)
    for mmap in (False, True):
        loaded = CaseIndex.load(path, mmap=mmap)
        assert loaded.backend_.__dict__.get("_layout") is not None       # read, not rebuilt
        if mmap:
            assert isinstance(loaded.backend_._layout.free, np.memmap)
        for q in Q:
            assert_same(loaded.aggregate(q, codes, outcomes, 10),
                        reference(st_, X, q, cfg.threshold, cfg.fallback_k, codes, outcomes, 10))


def test_layout_rebuilt_when_the_tail_outgrows_it(monkeypatch):
    monkeypatch.setattr(agg_mod, "REBUILD_TAIL", 100)
    cfg = default_casper()
    X = _flop(3000, 5)
    codes, outcomes = labels(3000, 6)
    index = CaseIndex.for_street(cfg, "flop", backend="brute").fit(X[:1000])
    index.aggregate(X[0], codes, outcomes)
    index.add(X[1000:1200])                              # 200 <= max(100, 250): a tail
    index.aggregate(X[0], codes, outcomes)
    assert index.backend_._layout.n_rows == 1000
    index.add(X[1200:])                                  # 2,000 > 250: rebuilt on the next query
    for q in X[:5]:
        assert_same(index.aggregate(q, codes, outcomes, 5),
                    reference(cfg.street("flop"), X, q, cfg.threshold, cfg.fallback_k, codes, outcomes, 5))
    assert index.backend_._layout.n_rows == 3000


def test_stale_layout_files_are_refused(tmp_path: Path):
    cfg = default_casper()
    path = CaseIndex.for_street(cfg, "flop", backend="brute").fit(_flop(500, 1)).save(tmp_path / "a")
    np.save(path / "agg_ids.npy", np.arange(10, dtype=np.int64))        # not the layout's length
    from cbr.errors import CaseBaseError

    with pytest.raises(CaseBaseError, match="aggregate layout"):
        CaseIndex.load(path)


def test_aggregate_vote_equals_vote_of():
    """The policy's aggregate vote: the full vote's triple, count, fallback and outcome means."""
    cfg = default_casper()
    X = _flop(5000, 8)
    codes, outcomes = labels(5000, 9)
    index = CaseIndex.for_street(cfg, "flop").fit(X)
    for weighted in (False, True):
        for q in np.vstack([X[:6], _flop(6, 10)]):
            full = vote_of(index, q, codes, weighted=weighted, outcomes=outcomes)
            cut = aggregate_vote(index, q, codes, weighted=weighted, outcomes=outcomes, top=7)
            assert len(cut) == len(full) and cut.fallback == full.fallback
            assert np.array_equal(cut.ids, full.ids[:7]) and np.array_equal(cut.codes, full.codes[:7])
            assert cut.triple == pytest.approx(full.triple, rel=1e-12, abs=1e-15)
            if not weighted:
                assert cut.triple == full.triple
            assert cut.mean_similarity(5) == full.mean_similarity(5)
            assert cut.mean_similarity() == pytest.approx(full.mean_similarity(), rel=1e-12)
            for legal in ("fcr", "fc", "cr", "fr"):
                got, want = cut.outcome_means(legal), full.outcome_means(legal)
                assert got.keys() == want.keys()
                for key in want:
                    assert got[key] == pytest.approx(want[key], rel=1e-9, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["fcr", "fc", "cr", "fr", "c", "f", "r"]))
def test_outcome_means_of_totals(seed, legal):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    codes = rng.integers(0, 3, n)
    out = np.where(rng.random(n) < 0.3, np.nan, rng.normal(0, 1, n))
    ok = ~np.isnan(out)
    known = np.bincount(codes[ok], minlength=3).astype(float)
    sums = np.bincount(codes[ok], weights=out[ok], minlength=3)
    want = outcome_means(codes, out, legal)
    got = outcome_means_of_totals(known, sums, legal)
    assert got.keys() == want.keys()
    for key in want:
        assert got[key] == pytest.approx(want[key], rel=1e-12, abs=1e-12)


def test_aggregate_refuses_bad_labels_and_top():
    cfg = default_casper()
    X = _flop(200, 1)
    index = CaseIndex.for_street(cfg, "flop").fit(X)
    codes, outcomes = labels(200, 1)
    with pytest.raises(QueryError):
        index.aggregate(X[0], codes[:100])                 # fewer actions than cases
    with pytest.raises(QueryError):
        index.aggregate(X[0], codes, outcomes[:50])
    with pytest.raises(QueryError):
        index.aggregate(X[0], codes, top=0)
    with pytest.raises(QueryError):
        index.aggregate(X[:2], codes)                      # two queries
    with pytest.raises(QueryError):
        index.aggregate(X[0], ["x"] * 200)                 # unknown action
    bad = codes.copy()
    bad[:] = 7                                             # int8 codes outside 0..2
    with pytest.raises(ValueError, match="action code"):
        index.aggregate(X[0], bad)


# -- the C kernel itself ----------------------------------------------------------------------


def _scan_args():
    cfg = default_casper()
    X = _flop(300, 2)
    layout = GroupedLayout.build(cfg.street("flop"), X)
    q = X[0]
    codes = np.zeros(301, np.int8)
    return [layout.free, layout.ids, layout.gstart, layout.gcodes, layout.key_tables(q), layout._offsets,
            layout._kind, layout._index, q[layout.free_cols].astype(np.float64), layout._frange, layout._fw,
            layout.sort_free, layout._total, 0.97, codes, None, False, np.empty(5, np.int64), np.empty(5)]


@pytest.mark.skipif(native_scan() is None, reason="the native retrieval kernel is not built")
def test_kernel_refuses_bad_input():
    scan = native_scan()
    ok = _scan_args()
    assert scan(*ok)[1] >= 1                               # the query itself is a hit

    def bad(i, value, exc=(ValueError, TypeError)):
        args = list(_scan_args())
        args[i] = value
        with pytest.raises(exc):
            scan(*args)

    bad(0, ok[0].astype(np.float64))                       # free rows not float32
    bad(0, ok[0][:, :-1].copy())                           # wrong size
    bad(0, np.ones((ok[0].shape[0], 2 * ok[0].shape[1]), np.float32)[:, ::2])  # not contiguous
    bad(1, ok[1].astype(np.int32))
    bad(1, np.full_like(ok[1], 10**9))                    # ids beyond the codes
    bad(2, ok[2][::-1].copy())                            # offsets not from 0 to n
    g = ok[2].copy()
    if g.shape[0] > 2:
        g[1] = ok[1].shape[0] + 5                          # an offset beyond the rows
        bad(2, g)
    bad(3, np.full_like(ok[3], 10**6))                     # group codes beyond the tables
    bad(3, ok[3][:-1].copy())
    bad(4, ok[4][:-1].copy())                              # tables shorter than the offsets say
    bad(5, ok[5][::-1].copy())
    bad(6, np.full_like(ok[6], 5))                         # program kind not 0/1
    bad(7, np.full_like(ok[7], 99))                        # program index out of range
    bad(7, ok[7][:-1].copy())
    bad(8, ok[8][:-1].copy())
    bad(9, np.zeros_like(ok[9]))                           # range 0
    bad(10, np.full_like(ok[10], np.nan))
    bad(12, 0.0)                                           # weight sum 0
    bad(13, float("nan"))
    bad(13, "0.97", TypeError)
    bad(14, np.zeros(300, np.int64))                       # codes not int8
    bad(14, np.full(300, 3, np.int8))                      # a code outside 0..2
    bad(14, np.zeros(299, np.int8))                        # fewer codes than cases
    bad(15, np.zeros(10))                                  # fewer outcomes than codes
    bad(16, True)                                          # by layout row, but codes are by id (too long)
    bad(17, np.empty(5, np.int32))
    bad(17, np.empty(0, np.int64))                         # no room for the top
    bad(18, np.empty(4))
    ro = np.empty(5)
    ro.flags.writeable = False
    bad(18, ro)                                            # the top must be writable
    bad(0, "not an array")
    with pytest.raises(TypeError):
        scan(*ok[:-1])


@pytest.mark.parametrize("backend", ["faiss", "brute"])
def test_labels_in_layout_order_answer_as_labels_by_id(backend):
    """Labels copied into the layout's order: the same aggregates, also with a tail, after a
    rebuild, and unaffected by later changes to the arrays they were copied from."""
    cfg = default_casper()
    st_ = cfg.street("flop")
    X = _flop(4000, 11)
    codes, outcomes = labels(4000, 12)
    index = CaseIndex.for_street(cfg, "flop", backend=backend).fit(X[:3000])
    lab = Labels(codes[:3000], outcomes[:3000])
    Q = np.vstack([X[:4], _flop(6, 13)])
    for q in Q:
        want = reference(st_, X[:3000], q, cfg.threshold, cfg.fallback_k, codes, outcomes, 9)
        assert_same(index.aggregate(q, lab, top=9), want)
    original = codes.copy()
    codes[:] = 0                                       # the labels hold their own copy
    codes[:] = original
    index.add(X[3000:])
    with pytest.raises(QueryError, match="labels for 3,000 cases"):
        index.aggregate(Q[0], lab)
    lab.extend(codes[3000:], outcomes[3000:])
    for q in Q:
        assert_same(index.aggregate(q, lab, top=9), reference(st_, X, q, cfg.threshold, cfg.fallback_k, codes,
                                                              outcomes, 9))
    with pytest.raises(QueryError, match="outcomes"):
        index.aggregate(Q[0], lab, outcomes)
    with pytest.raises(QueryError, match="outcomes must be given"):
        lab.extend(codes[:1])
    plain = Labels(codes)                              # without outcomes
    a = index.aggregate(Q[0], plain)
    assert a.known.sum() == 0 and a.n == reference(st_, X, Q[0], cfg.threshold, cfg.fallback_k, codes, outcomes,
                                                   20)["n"]


@pytest.mark.parametrize("backend", ["faiss", "brute"])
def test_the_tail_gets_a_layout_of_its_own_and_stays_exact(backend):
    """Cases appended since the layout: a second layout once more than RAW_TAIL of them would be
    scored by numpy, rebuilt when more than tail_rows_left_raw are left out of it; the answers
    stay brute force's, with labels by id and in layout order."""
    cfg = default_casper()
    st_ = cfg.street("flop")
    X = _flop(6000, 21)
    codes, outcomes = labels(6000, 22)
    index = CaseIndex.for_street(cfg, "flop", backend=backend).fit(X[:2000])
    lab = Labels(codes[:2000], outcomes[:2000])
    Q = np.vstack([X[:3], X[2500:2503], _flop(4, 23)])

    def check(n: int) -> None:
        for q in Q:
            want = reference(st_, X[:n], q, cfg.threshold, cfg.fallback_k, codes, outcomes, 12)
            assert_same(index.aggregate(q, codes, outcomes, 12), want)
            assert_same(index.aggregate(q, lab, top=12), want)

    check(2000)
    assert index.backend_._tail_layout_now(2000) is None
    for end, laid in ((2400, None), (5000, 3000), (5400, 3000), (6000, 4000)):
        start = index.n_cases_
        index.add(X[start:end])
        lab.extend(codes[start:end], outcomes[start:end])
        check(end)
        tail = index.backend_._tail_layout_now(2000)
        assert (None if tail is None else tail.n_rows) == laid, end
        assert index.backend_._layout.n_rows == 2000      # the main layout is kept (tail < 50,000)
    assert agg_mod.tail_rows_left_raw(4000) == agg_mod.RAW_TAIL


def assert_same_without_outcomes(a, ref):
    """``a`` aggregated without outcomes: ``ref``'s answer with no known outcome."""
    assert a.known.sum() == 0 and a.outcome_sums.sum() == 0
    assert_same(a, {**ref, "known": np.zeros(3), "osum": np.zeros(3)})


@pytest.mark.parametrize("backend", ["faiss", "brute"])
@pytest.mark.parametrize("config", ["casper", "sartre"])
def test_cases_appended_one_by_one_are_scanned_exactly(backend, config):
    """Live play: a case or two appended between queries (the raw tail, one group per case,
    grown by appends): with outcomes, without, with labels in layout order, weighted or not,
    and queries that find nothing (the fallback), always brute force's answer."""
    cfg = default_casper() if config == "casper" else default_sartre()
    street = "flop" if config == "casper" else "turn"
    st_ = cfg.street(street)
    rng = np.random.default_rng(31)
    if config == "casper":
        X = _flop(1400, 32)
        far = X[:2].copy()
        far[:, 7:10] = 1 - far[:, 7:10]                  # hand strength and potentials far from any case
        far[:, 4:6] = 9                                  # bets never seen
    else:
        n = 1400
        X = np.column_stack([rng.integers(0, 5, n), rng.integers(0, 5, n), rng.integers(0, 5, n),
                             rng.integers(0, 13, n), rng.integers(0, 50, n), rng.integers(0, 9, n)]).astype(np.float32)
        far = np.array([[40, 40, 40, 90, 400, 90]], np.float32)
    codes, outcomes = labels(X.shape[0], 33)
    index = CaseIndex.for_street(cfg, street, backend=backend).fit(X[:800])
    lab = Labels(codes[:800], outcomes[:800])
    index.aggregate(X[0], codes, outcomes)               # the layout: the first 800 cases
    fallbacks = 0
    while index.n_cases_ < X.shape[0]:
        start = index.n_cases_
        end = min(X.shape[0], start + int(rng.integers(1, 3)))
        index.add(X[start:end])
        lab.extend(codes[start:end], outcomes[start:end])
        if end % 7 and end != X.shape[0]:
            continue
        Q = np.vstack([X[rng.integers(0, end, 2)], X[end - 1:end], far])
        for q in Q:
            want = reference(st_, X[:end], q, cfg.threshold, cfg.fallback_k, codes, outcomes, 15)
            fallbacks += want["fallback"]
            got = index.aggregate(q, codes, outcomes, 15)
            assert_same(got, want)
            assert_same(index.aggregate(q, lab, top=15), want)
            assert_same_without_outcomes(index.aggregate(q, codes, None, 15), want)
            for weighted in (False, True):
                s = global_similarity(st_, q, X[:end])
                ids = want["top_ids"] if want["fallback"] else np.flatnonzero(s >= cfg.threshold)
                if not want["fallback"]:
                    want_triple = probability_triple(codes[ids], s[ids], weighted)
                    assert got.triple(weighted) == pytest.approx(want_triple, abs=1e-12)
    backend_ = index.backend_
    tail = backend_._tail_layout_now(800)
    raw = backend_.__dict__.get("_raw_tail")
    assert backend_._layout.n_rows == 800 and tail is not None and tail.n_rows > 0
    assert raw is not None and raw.start == 800 + tail.n_rows and raw.start + raw.n == X.shape[0]
    assert fallbacks > 0


def _scan_rows_args():
    """Valid scan_rows arguments: 300 CASPER flop cases from id 50 (a RawTail of them)."""
    from cbr.retrieval.aggregate import RawTail

    st_ = default_casper().street("flop")
    X = _flop(300, 51)
    raw = RawTail(st_, 50)
    raw.extend(X)
    view = raw.view
    codes, outcomes = labels(350, 52)
    q = X[7]
    return [X, X.shape[1], 50, view.codes, raw.key_tables(view, q), view.offsets, raw._kind, raw._index,
            q.astype(np.float64)[raw._cols], raw._range, raw._w, raw._total, 0.97, codes, outcomes,
            np.empty(5, np.int64), np.empty(5)]


@pytest.mark.skipif(native_scan_rows() is None, reason="the native retrieval kernel is not built")
def test_row_kernel_answers_brute_force_and_refuses_bad_input():
    scan_rows = native_scan_rows()
    ok = _scan_rows_args()
    X, codes = ok[0], ok[13]
    st_ = default_casper().street("flop")
    n_top, hits, scanned, count, pos, known, osum, sim_sum = scan_rows(*ok)
    s = global_similarity(st_, X[7], X)
    ids = np.flatnonzero(s >= 0.97)
    ids = ids[np.lexsort((ids, -s[ids]))]
    assert hits == ids.size >= 1 and scanned == 300
    assert ok[15][:n_top].tolist() == (ids[:5] + 50).tolist() and ok[16][:n_top].tolist() == s[ids[:5]].tolist()
    assert list(count) == np.bincount(codes[ids + 50], minlength=3).tolist()

    def bad(i, value, exc=(ValueError, TypeError)):
        args = list(_scan_rows_args())
        args[i] = value
        with pytest.raises(exc):
            scan_rows(*args)

    bad(0, X.astype(np.float64))                           # rows not float32
    bad(0, X[:, :-1].copy())                               # not (rows, d)
    bad(0, np.ones((300, 24), np.float32)[:, ::2])         # not contiguous
    bad(1, 0)                                              # d < 1
    bad(2, 60)                                             # case ids beyond the codes
    bad(2, -1)
    bad(3, np.full_like(ok[3], 10**6))                     # key codes beyond the tables
    bad(3, ok[3][:-1].copy())                              # not one row of codes per case
    bad(4, ok[4][:-1].copy())                              # tables shorter than the offsets say
    bad(5, ok[5][::-1].copy())                             # offsets not from 0 to n
    bad(6, np.full_like(ok[6], 5))                         # program kind not 0/1
    bad(7, np.full_like(ok[7], 99))                        # program index out of range
    bad(7, ok[7][:-1].copy())
    bad(8, np.full_like(ok[8], np.nan))
    bad(9, np.zeros_like(ok[9]))                           # range 0
    bad(11, 0.0)                                           # weight sum 0
    bad(12, float("nan"))
    bad(13, np.zeros(350, np.int64))                       # codes not int8
    bad(13, np.full(350, 3, np.int8))                      # a code outside 0..2
    bad(14, np.zeros(10))                                  # fewer outcomes than codes
    bad(15, np.empty(0, np.int64))                         # no room for the top
    ro = np.empty(5)
    ro.flags.writeable = False
    bad(16, ro)                                            # the top must be writable
    with pytest.raises(TypeError):
        scan_rows(*ok[:-1])


@pytest.mark.parametrize("backend", ["faiss", "brute"])
def test_a_new_fit_forgets_the_layouts_of_the_cases_it_replaces(backend):
    """A backend fit again with as many cases (and as many appended since): the aggregates are
    those of the new cases, not of layouts made for the old ones."""
    cfg = default_casper()
    st_ = cfg.street("flop")
    old, new = _flop(1200, 61), _flop(1200, 62)
    codes, outcomes = labels(1200, 63)
    b = CaseIndex.for_street(cfg, "flop", backend=backend).fit(old[:1000]).backend_
    b.add(old[1000:])
    for q in new[:3]:
        b.aggregate(q, codes, outcomes)                 # layouts of the old cases, raw tail included
    b.fit(new[:1000])
    b.add(new[1000:])
    for q in np.vstack([new[:3], new[1100:1103]]):
        assert_same(b.aggregate(q, codes, outcomes, 10),
                    reference(st_, new, q, cfg.threshold, cfg.fallback_k, codes, outcomes, 10))
