"""Memory-mapped case indexes: identical answers, read-only, and the rows stay in their files."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cbr.errors import CBRError
from cbr.retrieval import CaseIndex
from cbr.similarity import default_casper

REPO = Path(__file__).resolve().parents[2]


def _flop_rows(n: int, seed: int) -> np.ndarray:
    """Flop-like rows: small-integer betting features, continuous hand features."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(2, 10, n), rng.random(n), rng.integers(2, 5, n), rng.integers(0, 3, n),
                         rng.integers(0, 3, n), rng.integers(0, 3, n), rng.random(n) / 2, rng.random(n),
                         rng.random(n) / 4, rng.random(n) / 4, rng.integers(2, 20, n), rng.integers(1, 5, n)])
    return X.astype(np.float32)


@pytest.mark.parametrize("backend", ["faiss", "brute"])
def test_mapped_index_answers_exactly_as_loaded_one(tmp_path: Path, backend: str) -> None:
    X = _flop_rows(4000, 1)
    Q = _flop_rows(40, 2)
    path = CaseIndex.for_street(default_casper(), "flop", backend=backend).fit(X).save(tmp_path / "flop")
    loaded, mapped = CaseIndex.load(path), CaseIndex.load(path, mmap=True)
    assert mapped.memory_mapped and not loaded.memory_mapped
    assert isinstance(mapped.cases_.base, np.memmap) or isinstance(mapped.cases_, np.memmap)
    for q in Q:
        a, b = loaded.retrieve(q), mapped.retrieve(q)
        assert np.array_equal(a.ids, b.ids) and np.array_equal(a.similarities, b.similarities)
    sa, ia = loaded.kneighbors(Q, 7)
    sb, ib = mapped.kneighbors(Q, 7)
    assert np.array_equal(ia, ib) and np.array_equal(sa, sb)
    assert len(mapped.retrieve_batch(Q)) == len(Q)


def test_mapped_index_is_read_only(tmp_path: Path) -> None:
    X = _flop_rows(2000, 3)
    path = CaseIndex.for_street(default_casper(), "flop").fit(X).save(tmp_path / "flop")
    digest = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(path.iterdir())}
    mapped = CaseIndex.load(path, mmap=True)
    with pytest.raises(CBRError, match="memory-mapped"):
        mapped.add(X[:3])
    assert mapped.n_cases_ == 2000
    assert {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(path.iterdir())} == digest


_CHILD = """
import json, sys
from pathlib import Path
from cbr.retrieval import CaseIndex
import numpy as np
def anon():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) * 1024
path, mmap = sys.argv[1], sys.argv[2] == "1"
import faiss  # noqa: F401 - imported before measuring, as the load would import it
q = np.load(Path(path).parent / "q.npy")
before = anon()
index = CaseIndex.load(path, mmap=mmap)
ids = [index.retrieve(x).ids.tolist() for x in q]
print(json.dumps({"grew": anon() - before, "ids": ids}))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc to read RssAnon")
def test_mapped_index_keeps_the_rows_in_their_files(tmp_path: Path) -> None:
    """Loaded, the rows and lists become the process's own (anonymous) memory; mapped, they stay
    file pages the kernel can drop: the process's anonymous memory grows by a small fraction."""
    X = _flop_rows(300_000, 4)
    path = CaseIndex.for_street(default_casper(), "flop").fit(X).save(tmp_path / "flop")
    np.save(tmp_path / "q.npy", _flop_rows(10, 5))
    size = (path / "cases.npy").stat().st_size + (path / "index.faiss").stat().st_size

    def child(mmap: bool) -> dict:
        out = subprocess.run([sys.executable, "-c", _CHILD, str(path), "1" if mmap else "0"], cwd=REPO,
                             capture_output=True, text=True, timeout=300, check=True)
        return json.loads(out.stdout)

    loaded, mapped = child(False), child(True)
    assert loaded["ids"] == mapped["ids"]
    assert loaded["grew"] > 0.8 * size, (loaded["grew"], size)
    assert mapped["grew"] < 0.2 * size, (mapped["grew"], size)
