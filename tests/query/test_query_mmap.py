"""Queries over memory-mapped indexes (case bases larger than memory) answer exactly as loaded ones."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cbr.build.local import build_casebase
from cbr.errors import CaseBaseError
from cbr.logs.acpc import AcpcLogWriter
from cbr.logs.replay import replay
from cbr.play.match import run_match
from cbr.query.answer import answer
from cbr.store import CaseBase
from cli import app


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("mm")
    with AcpcLogWriter(folder / "logs" / "hu.log") as log:
        run_match(["random", "lag"], 120, seed=41, log=log)
    with AcpcLogWriter(folder / "logs" / "p3.log") as log:
        run_match(["random", "call", "lag"], 60, seed=42, log=log)
    build_casebase([folder / "logs"], folder / "cb")
    return folder / "cb"


@pytest.fixture(scope="module")
def situations() -> list:
    records: list = []

    class Keep:
        def write(self, record):
            records.append(record)

    run_match(["lag", "random"], 15, seed=43, log=Keep())  # type: ignore[arg-type]
    return [dp for r in records for dp in replay(r) if dp.hole is not None]


def test_memory_mapped_answers_equal_loaded_answers(built: Path, situations: list) -> None:
    with CaseBase.open(built) as loaded, CaseBase.open(built, memory_map=True) as mapped:
        for dp in situations:
            a, b = answer(loaded, dp), answer(mapped, dp)
            assert a.to_dict(top=None) == b.to_dict(top=None)
        assert mapped.index("flop").memory_mapped and not loaded.index("flop").memory_mapped
        assert mapped._tables == {}  # no street's table was read whole
    assert len({d.street for d in situations}) == 4


def test_column_reads_one_column_as_the_table_has_it(built: Path) -> None:
    with CaseBase.open(built) as a, CaseBase.open(built) as b:
        for street in ("preflop", "river"):
            for name in ("action", "case_id", "outcome"):
                col = a.column(street, name)
                assert street not in a._tables
                np.testing.assert_array_equal(col, b.table(street).column(name).to_numpy())
            ids = [int(i) for i in a.column(street, "case_id")[[3, 0, 7]]]
            rows = a.rows_by_id(street, ids, ["case_id", "action", "hand_id"])
            assert [r["case_id"] for r in rows] == ids
            assert [r["action"] for r in rows] == b.table(street).column("action").to_numpy()[[3, 0, 7]].tolist()


def test_memory_map_refuses_an_index_behind_the_cases(built: Path, tmp_path: Path, situations: list) -> None:
    import shutil

    copy = tmp_path / "cb"
    shutil.copytree(built, copy)
    dp = next(d for d in situations if d.street == 1 and d.action in ("f", "c", "r"))
    with CaseBase.open(copy) as cb:
        cb.retain_hand([dp], [1.0])  # retained: the saved flop index no longer covers every case
        n = cb.count("flop")
    with CaseBase.open(copy, memory_map=True) as cb:
        with pytest.raises(CaseBaseError, match=f"covers {n - 1} of {n} cases"):
            answer(cb, dp)
        assert answer(cb, next(d for d in situations if d.street == 0)).retrieved > 0  # other streets still map
    with CaseBase.open(copy) as cb:  # opened normally, the index catches up and is saved on close
        answer(cb, dp)
    with CaseBase.open(copy, memory_map=True) as cb:
        assert answer(cb, dp).retrieved > 0


def test_cli_memory_map_gives_the_same_json(built: Path) -> None:
    args = ["query", "-c", str(built), "--hole", "AdQc", "--board", "3h4cJh", "--to-call", "1", "--json", "--explain"]
    runner = CliRunner()
    plain = runner.invoke(app, args)
    mapped = runner.invoke(app, args + ["--memory-map"])
    assert plain.exit_code == 0 and mapped.exit_code == 0, (plain.output, mapped.output)
    assert json.loads(plain.stdout) == json.loads(mapped.stdout)
