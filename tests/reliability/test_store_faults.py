"""Damaged case bases, killed appenders, crash leftovers: open + query either works with the
very same answers or fails with one :class:`CaseBaseError` line; never a traceback, never a
silently different answer.

Every file of a small case base is damaged in turn (seeded bit flips, truncation) in a
fresh copy; the manifest also gets each kind of bad entry the fault campaign tried. An
appending subprocess is killed (SIGKILL / SIGTERM) at random moments and the case base must
still agree with itself: manifest, Parquet parts, SQL views, on-disk catalog and index.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest

from cbr.errors import CaseBaseError, CBRError
from cbr.game.gamedef import STREETS
from cbr.store import CaseBase, CaseBaseWriter
from cbr.store.catalog import CATALOG
from cbr.store.manifest import file_checksum
from cbr.store.parts import PART_MENDS
from tests.reliability import reliability_rounds

REPO = Path(__file__).resolve().parents[2]
DIMS = {"preflop": 8, "flop": 12, "turn": 12, "river": 12}


def _rows(rng: np.random.Generator, street: str, n: int) -> np.ndarray:
    X = rng.random((n, DIMS[street])).astype(np.float32)
    if street == "preflop":
        X[:, 7] = rng.integers(1, 170, n)  # a rank, as the feature is
    return X


def make_casebase(path: Path, seed: int = 3, n: int = 120) -> None:
    rng = np.random.default_rng(seed)
    with CaseBaseWriter(path) as w:
        for s in STREETS:
            w.add_rows(s, _rows(rng, s, n), list(rng.choice(list("fcr"), size=n)), source=f"log-{s}")


def answers(path: Path) -> dict[str, Any]:
    """Everything a user gets from the case base: retrieval per street, the case table, SQL."""
    cb = CaseBase.open(path)
    try:
        out: dict[str, Any] = {}
        rng = np.random.default_rng(99)
        for s in STREETS:
            c = cb.cases(s)
            out[f"{s}-ids"] = c.case_ids.tolist()
            out[f"{s}-X"] = c.features.tobytes()
            out[f"{s}-a"] = c.actions.tolist()
            index = cb.index(s)
            for q in (c.features[0], c.features[-1], _rows(rng, s, 1)[0]):
                r = index.retrieve(q)
                out.setdefault(f"{s}-retrieve", []).append((r.ids.tolist(), r.similarities.tolist()))
        out["sql"] = cb.sql("SELECT street, action, count(*), sum(case_id) FROM cases GROUP BY ALL ORDER BY ALL"
                            ).fetchall()
        return out
    finally:
        cb.close()


def same_or_one_line_error(path: Path, expected: dict[str, Any], what: str) -> str:
    """'same' or 'error'; fails the test on anything else."""
    try:
        got = answers(path)
    except CaseBaseError as exc:
        msg = str(exc)
        assert msg and "\n" not in msg, f"{what}: multi-line message {msg!r}"
        return "error"
    except Exception as exc:  # noqa: BLE001 - the point of the test: nothing else may escape
        pytest.fail(f"{what}: {type(exc).__name__}: {exc}")
    assert got == expected, f"{what}: opened and answered differently"
    return "same"


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("pristine") / "cb"
    make_casebase(root, n=60)
    return root, answers(root)


def test_every_file_flipped_or_truncated(pristine: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    root, expected = pristine
    rng = np.random.default_rng(2024)
    outcome: dict[str, int] = {"same": 0, "error": 0}
    files = [p.relative_to(root) for p in _files(root)]
    assert any(str(f).endswith("index.faiss") for f in files) and any(str(f).endswith(".parquet") for f in files)
    deadline = time.monotonic() + 120
    kinds = ("flip", "flip3", "truncate")
    for round_ in range(reliability_rounds(1)):
        for i, rel in enumerate(files):
            for kind in (kinds[(i + round_) % 3],) if round_ < 3 else kinds:
                if time.monotonic() > deadline:
                    break
                copy = tmp_path / f"r{round_}-{kind}-{str(rel).replace('/', '_')}"
                shutil.copytree(root, copy)
                f = copy / rel
                data = bytearray(f.read_bytes())
                if kind == "truncate":
                    data = data[: int(rng.integers(0, len(data)))]
                else:
                    for _ in range(1 if kind == "flip" else 3):
                        i = int(rng.integers(0, len(data)))
                        data[i] ^= 1 << int(rng.integers(0, 8))
                f.write_bytes(bytes(data))
                outcome[same_or_one_line_error(copy, expected, f"{kind} {rel}")] += 1
                shutil.rmtree(copy)
    assert outcome["error"] > 0 and outcome["same"] > 0, outcome  # both kinds of outcome happen


def _data_page_span(path: Path) -> tuple[int, int]:
    """Byte range of the column chunks (the pages), before the footer."""
    md = pq.read_metadata(path)
    starts, ends = [], []
    for rg in range(md.num_row_groups):
        for c in range(md.num_columns):
            col = md.row_group(rg).column(c)
            start = col.dictionary_page_offset if col.has_dictionary_page else col.data_page_offset
            starts.append(start)
            ends.append(start + col.total_compressed_size)
    return min(starts), max(ends)


def test_parquet_page_damage_is_caught_by_page_crcs(pristine: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """Even when the file checksum in the manifest is made to match the damaged part (so
    only the Parquet page CRCs can see it), damaged pages are an error, never other data."""
    root, expected = pristine
    rng = np.random.default_rng(7)
    errors = 0
    for k in range(reliability_rounds(12)):
        copy = tmp_path / f"c{k}"
        shutil.copytree(root, copy)
        m = json.loads((copy / "manifest.json").read_text())
        street = STREETS[k % 4]
        entry = m["parts"][street][0]
        f = copy / entry["file"]
        lo, hi = _data_page_span(f)
        data = bytearray(f.read_bytes())
        i = int(rng.integers(lo, hi))
        data[i] ^= 1 << int(rng.integers(0, 8))
        f.write_bytes(bytes(data))
        entry.update(file_checksum(f))
        (copy / "manifest.json").write_text(json.dumps(m))
        errors += same_or_one_line_error(copy, expected, f"page flip at {i} of {entry['file']}") == "error"
        shutil.rmtree(copy)
    assert errors >= reliability_rounds(12) * 3 // 4


def _edit(m: dict[str, Any], change: str) -> Any:
    p = m["parts"]["flop"]
    if change == "part without file":
        del p[0]["file"]
    elif change == "rows null":
        p[0]["rows"] = None
    elif change == "rows bool":
        p[0]["rows"] = True
    elif change == "string for parts":
        m["parts"]["flop"] = "cases/flop/part-00000.parquet"
    elif change == "string for a part":
        p[0] = "cases/flop/part-00000.parquet"
    elif change == "string for counts":
        m["counts"] = "many"
    elif change == "string for feature set":
        m["feature_set"] = "casper"
    elif change == "path outside":
        p[0]["file"] = "../../etc/passwd"
    elif change == "absolute path":
        p[0]["file"] = "/etc/passwd"
    elif change == "other street's part":
        p[0]["file"] = m["parts"]["turn"][0]["file"]
    elif change == "part listed twice":
        p.append(dict(p[0]))
        m["counts"]["flop"]["total"] *= 2
        m["counts"]["flop"]["c"] += m["counts"]["flop"]["total"] // 2
    elif change == "next_case_id below ids":
        m["next_case_id"] = 5
    elif change == "next_case_id just below":
        m["next_case_id"] -= 1
    elif change == "schema 1.0":
        m["schema_version"] = 1.0
    elif change == "schema 2.0":
        m["schema_version"] = 2.0
    elif change == "schema true":
        m["schema_version"] = True
    elif change == "schema 1":
        m["schema_version"] = 1
    elif change == "counts disagree":
        m["counts"]["flop"]["f"] += 1
    elif change == "no checksum":
        del p[0]["crc32"]
    elif change == "similarity outside":
        m["similarity"] = "../similarity.toml"
    elif change == "index outside":
        m["index"]["flop"]["file"] = "../index/flop"
    elif change == "index string":
        m["index"]["flop"] = "index/flop"
    elif change == "manifest is a list":
        return [m]
    else:  # pragma: no cover
        raise AssertionError(change)
    return m


EDITS = ["part without file", "rows null", "rows bool", "string for parts", "string for a part", "string for counts",
         "string for feature set", "path outside", "absolute path", "other street's part", "part listed twice",
         "next_case_id below ids", "next_case_id just below", "schema 1.0", "schema 2.0", "schema true", "schema 1",
         "counts disagree", "no checksum", "similarity outside", "index outside", "index string",
         "manifest is a list"]


@pytest.mark.parametrize("change", EDITS)
def test_bad_manifest_entry_is_one_casebase_error(pristine: tuple[Path, dict[str, Any]], tmp_path: Path,
                                                  change: str) -> None:
    root, expected = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    m = json.loads((copy / "manifest.json").read_text())
    (copy / "manifest.json").write_text(json.dumps(_edit(m, change)))
    assert same_or_one_line_error(copy, expected, change) == "error"


@pytest.mark.parametrize("payload", [b"\xff\xfe{\x00}", "{\"name\": \"caf\u00e9\"}".encode("latin-1"),
                                     b"[" * 200_000, b"", b"\x00" * 64])
def test_unreadable_manifest_bytes_are_one_casebase_error(pristine: tuple[Path, dict[str, Any]], tmp_path: Path,
                                                          payload: bytes) -> None:
    root, expected = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    (copy / "manifest.json").write_bytes(payload)
    assert same_or_one_line_error(copy, expected, repr(payload[:10])) == "error"


def test_old_schema_says_how_to_upgrade_and_upgrade_works(pristine: tuple[Path, dict[str, Any]],
                                                          tmp_path: Path) -> None:
    """A schema-1 case base (no checksums) is refused with a way out; the upgrade restores it."""
    from cbr.store.upgrade import upgrade

    root, expected = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    m = json.loads((copy / "manifest.json").read_text())
    m["schema_version"] = 1
    for s in STREETS:
        for p in m["parts"][s]:
            del p["bytes"], p["crc32"]
    (copy / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(CaseBaseError, match=r"version 1, this engine reads version 4: .*cbr\.store\.upgrade"):
        CaseBase.open(copy)
    assert upgrade(copy) == 1 and upgrade(copy) == 0
    assert answers(copy) == expected


def test_damaged_index_is_rebuilt_and_noted(pristine: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    root, expected = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    m = json.loads((copy / "manifest.json").read_text())
    f = copy / m["index"]["flop"]["file"] / "index.faiss"
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0x10
    f.write_bytes(bytes(data))
    cb = CaseBase.open(copy)
    try:
        X = cb.cases("flop").features
        r = cb.index("flop").retrieve(X[3])
        assert int(r.ids[0]) == 3
        assert any("index.faiss is damaged" in n for n in cb.notes), cb.notes
    finally:
        cb.close()
    assert answers(copy) == expected


def test_real_index_errors_are_not_swallowed(pristine: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """An index that names a retrieval backend nobody installed is a plugin error to report,
    not a reason to rebuild silently (the old ``except Exception``)."""
    root, _ = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    m = json.loads((copy / "manifest.json").read_text())
    d = copy / m["index"]["flop"]["file"]
    meta = json.loads((d / "meta.json").read_text())
    meta["backend"] = "no-such-backend"
    (d / "meta.json").write_text(json.dumps(meta))
    m["index"]["flop"]["files"]["meta.json"] = file_checksum(d / "meta.json")
    (copy / "manifest.json").write_text(json.dumps(m))
    cb = CaseBase.open(copy)
    try:
        with pytest.raises(CBRError, match="no-such-backend"):
            cb.index("flop")
    finally:
        cb.close()


# ---- crash leftovers ------------------------------------------------------------------------
def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_temp_files_of_dead_processes_are_removed_on_open_and_build(tmp_path: Path) -> None:
    make_casebase(tmp_path / "cb", n=20)
    dead = _dead_pid()
    leftovers = [tmp_path / "cb" / f".manifest.json.tmp-{dead}",
                 tmp_path / "cb" / "cases" / "flop" / f".part-00009.parquet.tmp-{dead}",
                 tmp_path / "cb" / f".catalog.duckdb.tmp-{dead}"]
    for f in leftovers:
        f.write_bytes(b"half written")
    live = tmp_path / "cb" / f".manifest.json.tmp-{os.getpid()}"  # ours: alive, kept
    live.write_bytes(b"")
    (tmp_path / "cb" / "index" / f".tmp-flop-{dead}-0badcafe").mkdir()
    CaseBase.open(tmp_path / "cb").close()
    assert not any(f.exists() for f in leftovers)
    assert not (tmp_path / "cb" / "index" / f".tmp-flop-{dead}-0badcafe").exists()
    assert live.exists()
    # a build killed before it finished left its temp folder; any later build beside it cleans it
    stale = tmp_path / f".other.building-{dead}-0123abcd"
    stale.mkdir()
    (stale / "manifest.json").write_text("{}")
    not_ours = tmp_path / f".notes.txt.tmp-{dead}"  # another program's file: left alone
    not_ours.write_text("x")
    make_casebase(tmp_path / "cb2", n=5)
    assert not stale.exists() and not_ours.exists()
    # ... and so does opening a case base beside it
    stale.mkdir()
    CaseBase.open(tmp_path / "cb").close()
    assert not stale.exists() and not_ours.exists()


def test_on_disk_catalog_counts_the_manifest_parts_only(tmp_path: Path) -> None:
    make_casebase(tmp_path / "cb", n=30)
    with CaseBase.open(tmp_path / "cb") as cb:
        cb.append("flop", _rows(np.random.default_rng(1), "flop", 4), "ccrf")
        cb.compact()
        cb.merge_parts("flop")
    # an orphan left by a crash between writing a part and committing the manifest
    shutil.copy(tmp_path / "cb" / "cases" / "flop" / "part-00002.parquet",
                tmp_path / "cb" / "cases" / "flop" / "part-00007.parquet")
    con = duckdb.connect(str(tmp_path / "cb" / CATALOG), read_only=True)
    try:
        con.execute(f"SET file_search_path = '{tmp_path / 'cb'}'")
        assert con.execute("SELECT count(*) FROM cases_flop").fetchone() == (34,)
        assert con.execute("SELECT count(*) FROM cases").fetchone() == (30 * 3 + 34,)
    finally:
        con.close()


# ---- killed appenders ------------------------------------------------------------------------
APPENDER = textwrap.dedent("""
    import sys, numpy as np
    from cbr.store import CaseBase
    dims = {"preflop": 8, "flop": 12, "turn": 12, "river": 12}
    rng = np.random.default_rng(int(sys.argv[2]))
    cb = CaseBase.open(sys.argv[1])
    print("ready", flush=True)
    k = 0
    while True:
        s = ["preflop", "flop", "turn", "river"][k % 4]
        n = int(rng.integers(1, 4))
        cb.append(s, rng.random((n, dims[s])).astype(np.float32), "".join(rng.choice(list("fcr"), n)))
        if k % 2 == 0:
            cb.index(s)           # grown in memory ...
            cb.save_indexes()     # ... and saved as a new generation
        if k % 5 == 4:
            cb.compact()
            cb.merge_parts(s)
        k += 1
""")


def agrees_with_itself(path: Path) -> int:
    """Manifest counts == Parquet rows; parts + retention log == cases == SQL views == index
    size; on-disk catalog == parts; ids unique and increasing."""
    cb = CaseBase.open(path)
    try:
        m = cb.manifest
        ids = []
        for s in STREETS:
            c = cb.cases(s)
            assert m.counts[s]["total"] == m.part_rows(s) <= len(c) == cb.count(s), s
            listed = c.actions[: m.part_rows(s)]
            assert {a: int((listed == a).sum()) for a in "fcr"} == {a: m.counts[s][a] for a in "fcr"}, s
            assert np.all(np.diff(c.case_ids) > 0), s
            assert cb.sql(f"SELECT count(*) FROM cases_{s}").fetchone() == (len(c),), s
            assert cb.index(s).n_cases_ == len(c), s
            if len(c):
                assert int(cb.index(s).retrieve(c.features[-1]).ids[0]) == len(c) - 1 or \
                    np.array_equal(c.features[cb.index(s).retrieve(c.features[-1]).ids[0]], c.features[-1])
            ids.append(c.case_ids)
        all_ids = np.concatenate(ids)
        assert len(np.unique(all_ids)) == len(all_ids) and all_ids.max() < cb.next_case_id
        con = duckdb.connect(str(path / CATALOG), read_only=True)
        try:
            con.execute(f"SET file_search_path = '{path}'")
            assert con.execute("SELECT count(*) FROM cases").fetchone() == (m.total_cases,)
        finally:
            con.close()
        for d in (path, *(path / "cases" / s for s in STREETS)):
            assert not [f for f in os.listdir(d) if ".tmp-" in f], f"temp files left in {d}"
        return cb.count()
    finally:
        cb.close()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killed_appender_leaves_a_base_that_agrees_with_itself(tmp_path: Path, sig: int) -> None:
    make_casebase(tmp_path / "cb", n=40)
    rng = np.random.default_rng(int(sig))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    before = agrees_with_itself(tmp_path / "cb")
    grown = 0
    for k in range(reliability_rounds(4)):
        proc = subprocess.Popen([sys.executable, "-c", APPENDER, str(tmp_path / "cb"), str(k)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            time.sleep(float(rng.uniform(0.05, 0.8)))
            proc.send_signal(sig)
            proc.wait(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        now = agrees_with_itself(tmp_path / "cb")
        grown += now > before
        before = now
    assert grown > 0  # the appender did get cases in before being killed


def test_sql_first_never_reads_a_damaged_part(pristine: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """DuckDB reads the Parquet parts itself: a damaged part is an error before any SQL answer."""
    root, _ = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    m = json.loads((copy / "manifest.json").read_text())
    f = copy / m["parts"]["turn"][0]["file"]
    lo, hi = _data_page_span(f)
    data = bytearray(f.read_bytes())
    data[(lo + hi) // 2] ^= 0x04
    f.write_bytes(bytes(data))
    cb = CaseBase.open(copy)
    try:
        with pytest.raises(CaseBaseError, match="cases/turn/part-00000.parquet is damaged"):  # which street's
            cb.sql("SELECT sum(hand_strength) FROM cases_turn")
    finally:
        cb.close()


# ---- a repair killed at every step ------------------------------------------------------------
REPAIR_KILLED = textwrap.dedent("""
    import os, signal, sys
    from cbr.store.verify import repair_casebase
    limit, calls = int(sys.argv[2]), [0]

    def dying(call):
        def step(*args, **kwargs):
            calls[0] += 1
            if calls[0] == limit:
                os.kill(os.getpid(), signal.SIGKILL)
            return call(*args, **kwargs)
        return step

    for name in ("open", "fsync", "replace", "rename", "unlink", "ftruncate"):
        setattr(os, name, dying(getattr(os, name)))
    repair_casebase(sys.argv[1])
    print(calls[0], flush=True)
""")


@pytest.mark.parametrize("damage", ["junk-at-the-end", "record-mid-log"])
def test_repair_killed_at_every_step_leaves_the_old_or_the_repaired_log(tmp_path: Path, damage: str) -> None:
    """``cbr casebase repair`` SIGKILLed before each of its file-system calls (every ``open``,
    ``fsync``, ``replace``... in turn): the log is the damaged one or the repaired one (its
    sound records, the damaged bytes already moved aside); the next repair finishes with
    exactly one aside copy. Damage: bytes that are no record after the log, or one flipped
    payload byte in a record mid-log (repair keeps the records after it, issue 35 defect 13)."""
    template = tmp_path / "template"
    make_casebase(template, n=10)
    rng = np.random.default_rng(4)
    with CaseBase.open(template) as cb:
        for k in range(40):
            s = STREETS[k % 4]
            cb.append(s, _rows(rng, s, 2), "cr")
        m = cb.manifest
        good = cb.count()
    log = template / m.log
    data = log.read_bytes()
    if damage == "junk-at-the-end":
        junk = rng.integers(1, 256, 777, dtype=np.uint8).tobytes()
        junk = (b"X" + junk[1:])  # no record starts with X: damage at len(data)
        damaged, at, moved = data + junk, len(data), junk
    else:
        at = 0
        for _ in range(17):  # the 18th record (each record: magic, length, CRC, then the payload)
            at += 12 + int.from_bytes(data[at + 4:at + 8], "little")
        size = 12 + int.from_bytes(data[at + 4:at + 8], "little")
        bad = bytearray(data)
        bad[at + size - 1] ^= 0x04
        damaged, moved, good = bytes(bad), bytes(bad[at:at + size]), good - 2
    log.write_bytes(damaged)
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def run(copy: Path, limit: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", REPAIR_KILLED, str(copy), str(limit)], env=env,
                              capture_output=True, text=True, timeout=120)

    full = run(shutil.copytree(template, tmp_path / "full"), 0)
    assert full.returncode == 0, full.stderr
    repaired = (tmp_path / "full" / m.log).read_bytes()
    assert repaired[:at] == data[:at] and agrees_with_itself(tmp_path / "full") == good  # every other case stayed
    steps = int(full.stdout.split()[-1])
    assert steps >= 6  # the aside file and the log, each written, synced and renamed
    states = {"old": 0, "repaired": 0}
    aside = f"{log.name}.damaged-at-{at}"
    for limit in range(1, steps + 1):
        copy = shutil.copytree(template, tmp_path / f"k{limit}")
        killed = run(copy, limit)
        assert killed.returncode == -signal.SIGKILL, (limit, killed.stderr)
        now = (copy / m.log).read_bytes()
        if now == damaged:
            states["old"] += 1
        else:
            assert now == repaired, limit  # the repaired log, never anything between
            assert (copy / m.log).with_name(aside).read_bytes() == moved, limit
            states["repaired"] += 1
        from cbr.store.verify import repair_casebase

        repair_casebase(copy)
        assert (copy / m.log).read_bytes() == repaired
        assert sorted(p.name for p in (copy / "retained").iterdir() if not p.name.startswith(".")) == \
            sorted([log.name, aside]), limit
        assert agrees_with_itself(copy) == good
        assert [p.name for p in (copy / "retained").iterdir() if p.name.startswith(".")] == [], limit
    assert states["old"] > 0 and states["repaired"] > 0, states


# ---- a repair with a damaged part ---------------------------------------------------------------


def _damage_for_repair(root: Path, copy: Path) -> dict[str, Any]:
    """``root`` copied to ``copy`` with its catalog deleted, a byte of the turn part's pages
    flipped, and the flop and turn indexes damaged; the manifest (as JSON)."""
    shutil.copytree(root, copy)
    m = json.loads((copy / "manifest.json").read_text())
    (copy / CATALOG).unlink()
    f = copy / m["parts"]["turn"][0]["file"]
    lo, hi = _data_page_span(f)
    data = bytearray(f.read_bytes())
    data[(lo + hi) // 2] ^= 0x04
    f.write_bytes(bytes(data))
    for s in ("flop", "turn"):
        f = copy / m["index"][s]["file"] / "index.faiss"
        data = bytearray(f.read_bytes())
        data[len(data) // 2] ^= 0x10
        f.write_bytes(bytes(data))
    return m


def _cbr_casebase(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).with_name("cbr")), "casebase", *args], capture_output=True,
                          text=True, timeout=300)


def test_repair_mends_every_cache_it_can_beside_a_damaged_part(pristine: tuple[Path, dict[str, Any]],
                                                                tmp_path: Path) -> None:
    """A damaged part cannot be repaired, but it no longer stops the rest: the catalog is
    rewritten and the index of a street whose parts are sound rebuilt; what is left (the part,
    and the index of its street, which is rebuilt from it) is listed, in text and in --json,
    exit 1; the damaged part is kept byte for byte."""
    root, expected = pristine
    copy = tmp_path / "cb"
    m = _damage_for_repair(root, copy)
    part = m["parts"]["turn"][0]["file"]
    damaged_part = (copy / part).read_bytes()

    r = _cbr_casebase("repair", str(copy), "--json")
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    left = {(p["kind"], p["file"]): p for p in report["left"]}
    turn_index = f"{m['index']['turn']['file']}/index.faiss"
    assert set(left) == {("part", part), ("index", turn_index)}, report["left"]
    assert "cbr build" in left[("part", part)]["fix"]
    assert part in left[("index", turn_index)]["fix"] and "rebuilt or restored" in left[("index", turn_index)]["fix"]
    assert f"{CATALOG}: rewrote the catalog" in report["notes"], report["notes"]
    assert f"{m['index']['flop']['file']}/index.faiss: rebuilt the index from the cases" in report["notes"]

    assert (copy / part).read_bytes() == damaged_part  # nothing of the user's is lost
    after = json.loads(_cbr_casebase("verify", str(copy), "--json").stdout)
    assert {(p["kind"], p["file"]) for p in after["problems"]} == set(left)
    assert all(p["fix"] == left[(p["kind"], p["file"])]["fix"] for p in after["problems"])  # verify says the same
    cb = CaseBase.open(copy)
    try:
        assert cb.manifest.catalog == file_checksum(copy / CATALOG)
        for s in ("preflop", "flop", "river"):
            c = cb.cases(s)
            assert c.case_ids.tolist() == expected[f"{s}-ids"]
            got = [cb.index(s).retrieve(q) for q in (c.features[0], c.features[-1])]
            assert [(g.ids.tolist(), g.similarities.tolist()) for g in got] == expected[f"{s}-retrieve"][:2]
    finally:
        cb.close()

    text_copy = tmp_path / "cb-text"
    _damage_for_repair(root, text_copy)
    r = _cbr_casebase("repair", str(text_copy))
    assert r.returncode == 1
    errors = r.stderr.strip().splitlines()
    assert len(errors) == 2 and all(e.startswith(f"error: cannot repair {text_copy}/") for e in errors), r.stderr
    assert any(part in e for e in errors) and any(turn_index in e for e in errors)
    assert "rewrote the catalog" in r.stdout and "rebuilt the index from the cases" in r.stdout


def test_repair_rebuilds_the_sound_streets_indexes_when_a_part_s_footer_stops_the_catalog(
        pristine: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """A part whose Parquet footer is damaged keeps the catalog's views from being written (it
    was an internal error, exit 3, for every open by a writer): repair still rebuilds the flop
    index, and lists the part, the catalog (with why) and the turn index, exit 1. An open leaves
    the catalog unwritten (``catalog_error`` says why) instead of failing."""
    root, expected = pristine
    copy = tmp_path / "cb"
    m = _damage_for_repair(root, copy)
    part = m["parts"]["turn"][0]["file"]
    f = copy / part
    data = bytearray(f.read_bytes())
    data[-60:-8] = b"\xff" * 52  # the footer's metadata (the file still ends with its length and PAR1)
    f.write_bytes(bytes(data))
    r = _cbr_casebase("repair", str(copy), "--json")
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    left = {(p["kind"], p["file"]): p for p in report["left"]}
    assert set(left) == {("part", part), ("catalog", CATALOG), ("index", f"{m['index']['turn']['file']}/index.faiss")}
    assert f"cannot write the view over the turn parts ({part})" in left[("catalog", CATALOG)]["fix"]
    assert report["notes"] == [f"{m['index']['flop']['file']}/index.faiss: rebuilt the index from the cases"]
    assert (copy / part).read_bytes() == bytes(data)
    cb = CaseBase.open(copy)  # the catalog is left unwritten, saying why; the sound streets answer
    try:
        assert cb.catalog_error is not None and "cannot write the view over the turn parts" in cb.catalog_error
        c = cb.cases("flop")
        got = [cb.index("flop").retrieve(q) for q in (c.features[0], c.features[-1])]
        assert [(g.ids.tolist(), g.similarities.tolist()) for g in got] == expected["flop-retrieve"][:2]
        assert cb.notes == []  # the saved flop index is sound: nothing rebuilt on open
    finally:
        cb.close()


@pytest.mark.parametrize("catalog", ["kept", "deleted"])
def test_a_part_of_another_size_stops_only_its_street(pristine: tuple[Path, dict[str, Any]], tmp_path: Path,
                                                      catalog: str) -> None:
    """A part cut to half its size (not corrupted in place) was refused at open, so repair could
    mend nothing (`cannot repair` for the catalog and the river index, naming the turn part) and
    every street's query failed. Now it stops only what reads it, as a corrupted part does: repair
    rebuilds the river index, the river is answered, and a read of the turn says the sizes."""
    root, expected = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    m = json.loads((copy / "manifest.json").read_text())
    part = m["parts"]["turn"][0]["file"]
    whole = (copy / part).read_bytes()
    cut = whole[:len(whole) // 2]
    (copy / part).write_bytes(cut)
    river_index = f"{m['index']['river']['file']}/index.faiss"
    (copy / river_index).write_bytes(b"\x00\x01")
    if catalog == "deleted":
        (copy / CATALOG).unlink()
    words = f"{part} is {len(cut):,} bytes, the manifest says {len(whole):,}; the file is damaged or was replaced"

    r = _cbr_casebase("repair", str(copy), "--json")
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    left = {(p["kind"], p["file"]): p for p in report["left"]}
    assert ("part", part) in left, report["left"]
    assert ("index", river_index) not in left, report["left"]
    assert f"{river_index}: rebuilt the index from the cases" in report["notes"], report
    if catalog == "deleted":  # the catalog's views read the turn part's footer: left, saying why
        assert words in left[("catalog", CATALOG)]["fix"], left
    assert (copy / part).read_bytes() == cut

    cb = CaseBase.open(copy, repair_catalog=False)
    try:
        c = cb.cases("river")
        got = [cb.index("river").retrieve(q) for q in (c.features[0], c.features[-1])]
        assert [(g.ids.tolist(), g.similarities.tolist()) for g in got] == expected["river-retrieve"][:2]
        assert cb.notes == []  # the index repair saved is sound
        with pytest.raises(CaseBaseError) as raised:
            cb.cases("turn")
        assert str(raised.value) == f"{copy}: {words}"
    finally:
        cb.close()


def test_manifest_count_messages_group_counts_and_keep_ids_plain(pristine: tuple[Path, dict[str, Any]],
                                                                  tmp_path: Path) -> None:
    """`counts.turn: the actions add up to 6127, not 12000` and `next_case_id 25833 is below the
    31706 case ids in use` wrote counts plain: counts are grouped (docs/cli.md), while
    next_case_id, an identifier, stays plain."""
    root, _ = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    good = json.loads((copy / "manifest.json").read_text())
    total = sum(good["counts"][s]["total"] for s in STREETS)

    def refusal(edit: Any) -> str:
        m = json.loads(json.dumps(good))
        edit(m)
        (copy / "manifest.json").write_text(json.dumps(m))
        with pytest.raises(CaseBaseError) as raised:
            CaseBase.open(copy)
        return str(raised.value)

    def actions_off(m: dict[str, Any]) -> None:
        m["counts"]["turn"]["total"] = 12000
    said = refusal(actions_off)
    assert f"counts.turn: the actions add up to {good['counts']['turn']['total']:,}, not 12,000" in said, said

    def ids_behind(m: dict[str, Any]) -> None:
        m["next_case_id"] = 25833
    for s in STREETS:  # enough case ids in use to need a separator
        good["counts"][s] = {k: v * 1000 for k, v in good["counts"][s].items()}
        for p in good["parts"][s]:
            p["rows"] *= 1000
    said = refusal(ids_behind)
    assert f"next_case_id 25833 is below the {total * 1000:,} case ids in use" in said, said


def test_inspect_refuses_a_manifest_that_disagrees_with_a_part_as_query_does(
        pristine: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """With the manifest edited so the turn part and counts say 1 case, `cbr casebase inspect`
    exited 0 showing the part's cases, no word of the mismatch, while query and verify refused.
    It refuses now with the words a read of the turn raises, then what mends it in verify's
    words (and so does --json)."""
    root, expected = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    m = json.loads((copy / "manifest.json").read_text())
    assert len(m["parts"]["turn"]) == 1
    entry = m["parts"]["turn"][0]
    held = entry["rows"]
    assert held > 1
    entry["rows"] = 1
    m["counts"]["turn"] = {"total": 1, "f": 0, "c": 1, "r": 0}
    (copy / "manifest.json").write_text(json.dumps(m))
    cb = CaseBase.open(copy)
    try:
        with pytest.raises(CaseBaseError) as raised:
            cb.cases("turn")
        assert cb.cases("river").case_ids.tolist() == expected["river-ids"]  # the other streets read
    finally:
        cb.close()
    words = f"{copy}: {entry['file']} holds {held:,} cases, the manifest says 1"
    assert str(raised.value) == words
    for flags in ((), ("--json",)):
        r = _cbr_casebase("inspect", str(copy), *flags)
        assert (r.returncode, r.stdout, r.stderr.strip()) == (1, "", f"error: {words} ({PART_MENDS})"), r
    assert f"holds {held:,} cases, the manifest says 1" in _cbr_casebase("verify", str(copy)).stderr
