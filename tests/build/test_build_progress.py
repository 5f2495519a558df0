"""A build's progress (issue 16, defect 8): the library calls ``progress`` with the total of
hand records first, then with the records of each chunk written, for local and Dask builds
alike; the calls add up to the total, whatever the worker count or where chunks cut files."""
from __future__ import annotations

from pathlib import Path

import pytest

from cbr.build.local import build_casebase
from cbr.logs.detect import read_logs
from cbr.logs.record import HandRecord
from tests.conftest import require_module, shared_path


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two real logs cut short (400 and 300 hands: chunks of 250 span the two files) and a
    file that is no log (skipped, no hand records)."""
    src = shared_path("acpc", "dealer_example_limit")
    folder = tmp_path_factory.mktemp("logs")
    for name, hands in (("2p.limit.h1000.r0.log", 400), ("3p.limit.h1000.r0.log", 300)):
        lines = (src / name).read_text().splitlines(keepends=True)
        head = [ln for ln in lines if ln.startswith("#")]
        body = [ln for ln in lines if ln.startswith("STATE:")][:hands]
        (folder / name).write_text("".join(head + body))
    (folder / "notes.log").write_text("nothing here is a hand\n")
    return folder


def _records(folder: Path) -> int:
    return sum(isinstance(item, HandRecord) for item in read_logs([folder]))


def _check_calls(calls: list[tuple[int, object]], total: int) -> None:
    """The first call gives the total (and no progress); then only positive steps, ending at it."""
    assert calls, "progress was never called"
    assert calls[0] == (0, total), calls[:3]
    steps = [n for n, t in calls[1:] if t is None]
    assert len(steps) == len(calls) - 1, "the total was given again: a log changed?"
    assert all(isinstance(n, int) and n > 0 for n in steps), steps
    done = [sum(steps[:i + 1]) for i in range(len(steps))]
    assert done == sorted(done) and done[-1] == total


@pytest.mark.parametrize("workers", [1, 2])
def test_local_build_reports_hands_of_the_total(logs: Path, tmp_path: Path, workers: int) -> None:
    total = _records(logs)
    assert total == 700
    calls: list[tuple[int, object]] = []
    report = build_casebase([logs], tmp_path / "cb", workers=workers,
                            progress=lambda n, total=None: calls.append((n, total)))
    _check_calls(calls, total)
    assert len(calls) - 1 == 3  # chunks of 250 records across the two files: 250, 250, 200
    assert 0 < report.hands <= total


def test_dask_build_reports_hands_of_the_total(logs: Path, tmp_path: Path) -> None:
    require_module("distributed")
    from cbr.build.on_dask import build_casebase_on_dask

    calls: list[tuple[int, object]] = []
    build_casebase_on_dask([logs], tmp_path / "cb", scheduler="local", dask_workers=1,
                           progress=lambda n, total=None: calls.append((n, total)))
    _check_calls(calls, _records(logs))
    assert [n for n, _ in calls[1:]] == [400, 300]  # one step per file computed on a worker
