"""The streets' retrieval data as the open case base keeps it (cbr.store.street_view): one copy
per case base, extended in place by every case it takes (its own appends, what a refresh reads
of another process's), amortised, never caught up row by row by its users."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from cbr.similarity import default_casper
from cbr.store import CaseBase
from cbr.store.writer import CaseBaseWriter

REPO = Path(__file__).resolve().parents[2]


def small_base(path: Path) -> Path:
    rng = np.random.default_rng(3)
    with CaseBaseWriter(path) as w:
        w.add_rows("flop", rng.random((40, 12), dtype=np.float32), "fcr" * 13 + "c", outcome=0.5)
    return path


def test_an_append_extends_the_view_in_place_amortised(tmp_path) -> None:
    cb = CaseBase.open(small_base(tmp_path / "cb"))
    view = cb.street_view("flop")
    other = cb.street_view("flop", default_casper(threshold=0.5))  # an index of its own
    assert len(view) == len(other) == 40 and other.index is not view.index
    cb.append("flop", np.zeros(12, np.float32), "r", outcome=2.0)  # the first growth may move the arrays
    codes, ids, labels = view.actions, view.case_ids, view.labels
    for k in range(3):
        cb.append("flop", np.full(12, 0.1 * k, np.float32), "f", outcome=-1.0)
    assert cb.street_view("flop") is view and view.labels is labels
    assert len(view) == len(other) == 44 == view.index.n_cases_ == other.index.n_cases_
    assert view.actions.tolist()[-4:] == [2, 0, 0, 0] and view.outcomes.tolist()[-4:] == [2.0, -1.0, -1.0, -1.0]
    assert view.case_ids.tolist() == cb.cases("flop").case_ids.tolist()
    assert np.shares_memory(codes, view.actions) and np.shares_memory(ids, view.case_ids)  # grown in place
    assert np.array_equal(other.index.cases_, cb.cases("flop").features)
    cb.close()


def test_a_reader_sees_another_process_appends_after_its_refresh(tmp_path) -> None:
    path = small_base(tmp_path / "cb")
    reader = CaseBase.open(path)
    view = reader.street_view("flop")
    writer = textwrap.dedent(f"""
        import numpy as np
        from cbr.store import CaseBase
        with CaseBase.open({str(path)!r}) as cb:
            cb.append("flop", np.zeros((2, 12), np.float32), "rf", outcome=[3.0, -3.0])
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-c", writer], env=env, check=True, timeout=120)
    assert len(view) == 40  # nothing read yet
    assert reader.refresh() == 2
    assert reader.street_view("flop") is view and len(view) == 42 == view.index.n_cases_
    assert view.actions.tolist()[-2:] == [2, 0] and view.outcomes.tolist()[-2:] == [3.0, -3.0]
    assert view.case_ids.tolist() == reader.cases("flop").case_ids.tolist()
    reader.close()


def test_a_replaced_index_is_the_views_index_again(tmp_path) -> None:
    cb = CaseBase.open(small_base(tmp_path / "cb"))
    view = cb.street_view("flop")
    cb.set_similarity(default_casper(threshold=0.9))
    assert cb.street_view("flop") is view and view.index is cb.index("flop") and view.index.threshold == 0.9
    cb.close()


def test_a_compaction_takes_another_handles_records_into_what_is_loaded(tmp_path) -> None:
    """A handle that compacts reads the records another handle committed since it last looked:
    its tables, index and views take them too (they used to stay behind the manifest's count,
    so the next retained case got another row number in the index than in the table)."""
    a, b = CaseBase.open(small_base(tmp_path / "cb")), CaseBase.open(tmp_path / "cb")
    view, _ = a.street_view("flop"), a.cases("flop")
    a.append("flop", np.zeros(12, np.float32), "f")
    b.append("flop", np.full(12, 0.5, np.float32), "c")  # not read by `a` yet
    b.close()
    assert a.compact() == 2
    assert a.count("flop") == 42 == len(a.cases("flop")) == len(view) == view.index.n_cases_
    a.append("flop", np.ones(12, np.float32), "r")
    assert view.case_ids.tolist() == a.cases("flop").case_ids.tolist()
    assert np.array_equal(view.index.cases_, a.cases("flop").features)
    a.close()
