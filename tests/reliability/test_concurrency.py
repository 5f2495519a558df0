"""Concurrent processes on one case base: readers while another process compacts and
appends, and two builds racing to the same new target. Real processes, bounded in time."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS
from cbr.store import CaseBase, CaseBaseWriter
from tests.reliability import reliability_rounds

REPO = Path(__file__).resolve().parents[2]
DIMS = {"preflop": 8, "flop": 12, "turn": 12, "river": 12}
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _rows(rng: np.random.Generator, street: str, n: int) -> np.ndarray:
    return rng.random((n, DIMS[street])).astype(np.float32)


def _many_parts(path: Path, rng: np.random.Generator, parts: int = 3) -> None:
    with CaseBaseWriter(path, part_rows=20) as w:
        for s in STREETS:
            for _ in range(parts):
                w.add_rows(s, _rows(rng, s, 20), list(rng.choice(list("fcr"), size=20)))


KEPT_OPEN_READER = textwrap.dedent("""
    import sys, json
    from cbr.store import CaseBase
    cb = CaseBase.open(sys.argv[1])
    counts = {s: cb.count(s) for s in ("preflop", "flop", "turn", "river")}
    print("opened", flush=True)
    sys.stdin.readline()                    # the other process compacts meanwhile
    out = {}
    for s in ("preflop", "flop", "turn", "river"):
        c = cb.cases(s)
        r = cb.index(s).retrieve(c.features[5])
        out[s] = [len(c), int(r.ids[0]), cb.sql(f"SELECT count(*) FROM cases_{s}").fetchone()[0]]
    cb.close()
    print(json.dumps({"counts": counts, "out": out}), flush=True)
""")


def test_reader_kept_open_survives_compaction_by_another_process(tmp_path: Path) -> None:
    """Before: the reader failed forever (FileNotFoundError / duckdb IOException) once the
    parts it listed were deleted by another process's compaction."""
    _many_parts(tmp_path / "cb", np.random.default_rng(1))
    proc = subprocess.Popen([sys.executable, "-c", KEPT_OPEN_READER, str(tmp_path / "cb")], env=ENV,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "opened"
        with CaseBase.open(tmp_path / "cb") as cb:
            cb.append("flop", _rows(np.random.default_rng(2), "flop", 3), "crc")
            cb.compact()
            for s in STREETS:
                cb.merge_parts(s)
            retired = {r["file"] for r in cb.manifest.retired}
        # kept, as the reader may still need them: 3 parts per street, the part the compaction
        # made from the retention log (merged away since) and the compacted log itself
        assert len(retired) == 4 * 3 + 2 and sum(f.startswith("retained/") for f in retired) == 1
        assert all((tmp_path / "cb" / f).exists() for f in retired)
        out, err = proc.communicate("go\n", timeout=60)
        assert proc.returncode == 0, err
        got = json.loads(out.strip().splitlines()[-1])
        for s in STREETS:
            n = got["counts"][s]
            assert got["out"][s] == [n, 5, n], s  # what its own manifest listed, consistently
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # with no reader left, the next write deletes the retired parts
    with CaseBase.open(tmp_path / "cb") as cb:
        cb.compact()
        cb.merge_parts("flop")
        assert cb.manifest.retired == []
    assert not any((tmp_path / "cb" / f).exists() for f in retired)


REOPENING_READER = textwrap.dedent("""
    import sys, time
    from cbr.errors import CBRError
    from cbr.store import CaseBase
    deadline = time.monotonic() + float(sys.argv[2])
    ok = failed = 0
    errors = []
    while time.monotonic() < deadline:
        try:
            with CaseBase.open(sys.argv[1]) as cb:
                n = sum(len(cb.cases(s)) for s in ("preflop", "flop", "turn", "river"))
                m = cb.sql("SELECT count(*) FROM cases").fetchone()[0]
                if n != m or n != cb.count():
                    raise RuntimeError(f"disagree: {n} {m} {cb.count()}")
            ok += 1
        except Exception as exc:
            failed += 1
            errors.append(f"{type(exc).__name__}: {exc}"[:200])
    print(ok, failed, "|".join(errors[:3]), flush=True)
""")


def test_readers_reopening_per_query_never_fail_during_compactions(tmp_path: Path) -> None:
    """Before: 21 of 72 reopening readers failed while another process compacted."""
    rng = np.random.default_rng(3)
    _many_parts(tmp_path / "cb", rng)
    seconds = 4.0 * reliability_rounds(1)
    readers = [subprocess.Popen([sys.executable, "-c", REOPENING_READER, str(tmp_path / "cb"), str(seconds)],
                                env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(2)]
    try:
        time.sleep(0.5)  # let them start
        compactions = 0
        t0 = time.monotonic()
        while time.monotonic() - t0 < seconds - 0.5:
            with CaseBase.open(tmp_path / "cb") as cb:
                s = STREETS[compactions % 4]
                cb.append(s, _rows(rng, s, 2), "cr")
                cb.append(s, _rows(rng, s, 1), "f")
                cb.compact()
                cb.merge_parts(s)
            compactions += 1
        results = []
        for p in readers:
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0, err
            ok, failed, *errors = out.split(" ", 2)
            results.append((int(ok), int(failed), errors))
    finally:
        for p in readers:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert compactions >= 2
    for ok, failed, errors in results:
        assert ok > 0 and failed == 0, errors


BUILDER = textwrap.dedent("""
    import sys, time, numpy as np
    from pathlib import Path
    from cbr.errors import CaseBaseError
    from cbr.store import CaseBaseWriter
    target, name, go = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    try:
        with CaseBaseWriter(target, build_index=False) as w:
            for s, d in (("preflop", 8), ("flop", 12), ("turn", 12), ("river", 12)):
                w.add_rows(s, np.ones((3, d), np.float32), "crc", source=name)
            print("ready", flush=True)
            while not go.exists():
                time.sleep(0.01)
        print("built", flush=True)
    except CaseBaseError as exc:
        print("refused", str(exc), flush=True)
""")


def test_two_builds_to_one_new_target_only_one_wins(tmp_path: Path) -> None:
    """Before: both succeeded and the second silently replaced the first."""
    for k in range(reliability_rounds(2)):
        target = tmp_path / f"cb{k}"
        go = tmp_path / f"go{k}"
        procs = [subprocess.Popen([sys.executable, "-c", BUILDER, str(target), f"build-{i}", str(go)], env=ENV,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
        try:
            for p in procs:  # both passed the check at the start: the target did not exist
                assert p.stdout is not None and p.stdout.readline().strip() == "ready"
            go.touch()
            outs = [p.communicate(timeout=60) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        results = [o.strip() for o, _ in outs]
        assert sorted(r.split(" ")[0] for r in results) == ["built", "refused"], (results, [e for _, e in outs])
        winner = f"build-{[r.startswith('built') for r in results].index(True)}"
        loser = next(r for r in results if r.startswith("refused"))
        assert "appeared while this build ran" in loser and "\n" not in loser
        cb = CaseBase.open(target)
        try:
            assert [e["source"] for e in cb.manifest.sources] == [winner]
        finally:
            cb.close()
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(f".cb{k}")] == []


def test_build_onto_existing_target_still_needs_overwrite(tmp_path: Path) -> None:
    _many_parts(tmp_path / "cb", np.random.default_rng(4), parts=1)
    with pytest.raises(CaseBaseError, match="already exists"):
        with CaseBaseWriter(tmp_path / "cb"):
            pass
