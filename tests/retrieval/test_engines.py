"""The exact engine (the grouped scan) and faiss as its k-NN backend, as docs/casebases.md
describes them: the scan answers the threshold query the same whatever the backend, its k-NN
(threshold 0) is faiss's k-NN, and ``bench/bench_retrieval_engines.py`` (which times them side
by side and checks every answer) runs and names the winner of each question."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cbr.retrieval import CaseIndex
from cbr.retrieval.aggregate import check_labels, native_scan
from cbr.similarity import default_casper

REPO = Path(__file__).resolve().parents[2]


def _cases(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(2, 7, n), rng.integers(0, 3, n) / 2, rng.integers(2, 4, n),
                         rng.integers(0, 3, n), rng.integers(0, 3, n), rng.integers(0, 3, n),
                         rng.integers(0, 3, n) / 6, rng.random(n), rng.random(n) / 4, rng.random(n) / 4,
                         rng.integers(2, 20, n), rng.integers(1, 4, n)])
    return X.astype(np.float32)


def test_the_scan_answers_the_threshold_query_whatever_the_backend() -> None:
    X, Q = _cases(3000, 1), _cases(40, 2)
    codes = np.random.default_rng(3).integers(0, 3, len(X)).astype(np.int8)
    by = {b: CaseIndex.for_street(default_casper(), "flop", backend=b).fit(X) for b in ("faiss", "brute")}
    for q in Q:
        a, b = (by[k].aggregate(q, codes, None, 20) for k in ("faiss", "brute"))
        r = by["faiss"].retrieve(q)
        assert a.n == b.n == len(r.ids) and a.fallback == b.fallback == r.fallback
        assert np.array_equal(a.top_ids, b.top_ids) and np.array_equal(a.top_ids, r.ids[:20])
        assert np.array_equal(a.counts, np.bincount(codes[r.ids], minlength=3))


def test_the_scan_at_threshold_0_is_the_k_nn_of_faiss() -> None:
    """What the benchmark times as the scan's own k-NN is exact: faiss's answer, ties by id."""
    scan = native_scan()
    if scan is None:
        pytest.skip("the native scan kernel is not built")
    X, Q = _cases(5000, 4), _cases(30, 5)
    index = CaseIndex.for_street(default_casper(), "flop").fit(X)
    labels, _ = check_labels(np.zeros(len(X), np.int8), None, len(X))
    layout = index.backend_._layout_now()
    for q in Q:
        hits, _, ids, sims = layout.scan(scan, q, 0.0, labels, None, 20, False)
        fsims, fids = index.kneighbors(q[None, :], 20)
        assert hits == len(X)
        assert np.array_equal(ids, fids[0]) and np.array_equal(sims, fsims[0])


def test_the_engines_benchmark_checks_its_answers_and_names_a_winner() -> None:
    out = subprocess.run([sys.executable, str(REPO / "bench" / "bench_retrieval_engines.py"), "--sizes",
                          "2000,5000", "--queries", "20"], capture_output=True, text=True, timeout=600, cwd=REPO)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    for n in ("2,000", "5,000"):
        at = next(i for i, line in enumerate(lines) if line.startswith(f"{n} cases:"))
        assert "threshold" in lines[at + 1] and "k-NN, k = 20" in lines[at + 2]
        assert all(" wins, " in line for line in lines[at + 1: at + 3])
