"""The retention log's damage rules (issue 16, defect 2): a torn tail is only what a crash
can leave (the file ends inside its last record, or in zeros); anything else (a flipped
length byte mid-log, a complete last record whose CRC fails, garbage after the log) is
one CaseBaseError naming the file and the byte offset, for readers and writers alike (a
writer never cuts it); ``cbr casebase verify`` reports it and ``cbr casebase repair`` keeps
every sound record and moves the damaged bytes aside, never deleting them.

Record offsets are found here by walking the documented record header (magic, payload
length, CRC-32) over the log as the appends left it, before any damage."""
from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest

from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS
from cbr.store import CaseBase, CaseBaseWriter
from cbr.store.retention_log import RetentionLog
from tests.conftest import REPO

CLI = [sys.executable, "-c", "import sys; from cli import app; sys.exit(app())"]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
DIMS = {"preflop": 8, "flop": 12, "turn": 12, "river": 12}
HEAD = struct.Struct("<4sII")
BASE_CASES = 5  # cases per street in the parts


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=ENV, cwd=REPO, timeout=timeout)


def _rows(rng: np.random.Generator, street: str, n: int) -> np.ndarray:
    return rng.random((n, DIMS[street])).astype(np.float32)


def record_offsets(data: bytes) -> list[tuple[int, int]]:
    """(offset, size) of each record of a sound log, from the record headers."""
    out, pos = [], 0
    while pos < len(data):
        magic, n, _ = HEAD.unpack_from(data, pos)
        assert magic == b"CBRL"
        out.append((pos, HEAD.size + n))
        pos += HEAD.size + n
    assert pos == len(data)
    return out


def make_logged(path: Path, records: int = 12, seed: int = 5) -> list[int]:
    """A small case base whose retention log holds ``records`` records of 1-3 cases each
    (streets in turn); returns the cases per record, in order."""
    rng = np.random.default_rng(seed)
    with CaseBaseWriter(path, build_index=False) as w:
        for s in STREETS:
            w.add_rows(s, _rows(rng, s, BASE_CASES), "fcrcf"[:BASE_CASES], source="log")
    sizes = []
    with CaseBase.open(path) as cb:
        for k in range(records):
            s = STREETS[k % 4]
            n = int(rng.integers(1, 4))
            cb.append(s, _rows(rng, s, n), "".join(rng.choice(list("fcr"), n)), hand_id=f"h{k}")
            sizes.append(n)
    return sizes


def log_path(path: Path) -> Path:
    return path / json.loads((path / "manifest.json").read_text())["log"]


def open_and_count(path: Path) -> int:
    with CaseBase.open(path) as cb:
        return cb.count()


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[int]]:
    path = tmp_path_factory.mktemp("logged") / "cb"
    return path, make_logged(path)


def fresh(logged: tuple[Path, list[int]], tmp_path: Path) -> tuple[Path, Path, bytes, list[int]]:
    src, sizes = logged
    path = tmp_path / "cb"
    shutil.copytree(src, path)
    log = log_path(path)
    return path, log, log.read_bytes(), sizes


def assert_refused_everywhere(path: Path, log: Path, offset: int) -> str:
    """Opening and reading, and appending, each raise one CaseBaseError naming the log file
    and the byte offset; the writer leaves the log's bytes as they were."""
    before = log.read_bytes()
    with pytest.raises(CaseBaseError) as read_error:
        open_and_count(path)
    msg = str(read_error.value)
    assert str(log) in msg and re.search(rf"at byte {offset}\b", msg) and "\n" not in msg, msg
    cb = CaseBase.open(path)
    try:
        with pytest.raises(CaseBaseError, match=rf"at byte {offset}\b"):
            cb.append("flop", np.zeros(12, np.float32), "c")
    finally:
        cb.close()
    assert log.read_bytes() == before  # the writer cut nothing
    return msg


# ---- damage is an error, never a torn tail ---------------------------------------------------
def test_a_flipped_length_byte_mid_log_is_an_error_naming_the_offset(logged, tmp_path: Path) -> None:
    """Before: a length pointing past the end made readers drop that record and every later
    one (exit 0), and the next writer truncated them for good."""
    path, log, data, sizes = fresh(logged, tmp_path)
    records = record_offsets(data)
    k = len(records) // 2
    at = records[k][0]
    expected_cases = sum(sizes)
    for byte in range(4):  # every byte of the length field, bits that point past the end and inside
        for bit in (0, 3, 7):
            bad = bytearray(data)
            bad[at + 4 + byte] ^= 1 << bit
            log.write_bytes(bytes(bad))
            assert_refused_everywhere(path, log, at)
    log.write_bytes(data)
    assert open_and_count(path) == 4 * BASE_CASES + expected_cases  # the copy itself was sound


def test_a_complete_last_record_with_a_bad_crc_is_an_error(logged, tmp_path: Path) -> None:
    """Before: a complete last record failing its CRC was dropped silently as if torn."""
    path, log, data, _ = fresh(logged, tmp_path)
    at, size = record_offsets(data)[-1]
    for where in (at + 8, at + HEAD.size, at + size - 1):  # the CRC field, the payload's first and last byte
        bad = bytearray(data)
        bad[where] ^= 0x20
        log.write_bytes(bytes(bad))
        assert_refused_everywhere(path, log, at)


def test_garbage_after_the_log_is_an_error_at_its_first_byte(logged, tmp_path: Path) -> None:
    """Before: the error said committed records followed when none did."""
    path, log, data, _ = fresh(logged, tmp_path)
    rng = np.random.default_rng(11)
    for n in (1, 5, 12, 300, 5000):
        junk = bytearray(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
        junk[0] = 0x41 if junk[0] in (0, ord("C")) else junk[0]  # neither a zero fill nor a record's start
        log.write_bytes(data + bytes(junk))
        msg = assert_refused_everywhere(path, log, len(data))
        assert "committed records after it" not in msg and "not a record" in msg, msg


def test_every_flipped_bit_anywhere_in_the_log_is_an_error_at_its_record(tmp_path: Path) -> None:
    """No single flipped bit of a log is ever read as a torn tail or as other cases: the
    error names the record holding the bit (one seeded bit of every byte, every bit of the
    length fields)."""
    path = tmp_path / "cb"
    make_logged(path, records=3, seed=8)
    log = log_path(path)
    data = log.read_bytes()
    rng = np.random.default_rng(3)
    probe = tmp_path / "probe.bin"
    for at, size in record_offsets(data):
        for i in range(at, at + size):
            for bit in (range(8) if at + 4 <= i < at + 8 else [int(rng.integers(0, 8))]):
                bad = bytearray(data)
                bad[i] ^= 1 << bit
                probe.write_bytes(bytes(bad))
                with pytest.raises(CaseBaseError, match=rf"damaged record at byte {at}\b"):
                    RetentionLog(probe, json.loads((path / "manifest.json").read_text())["next_case_id"]).refresh()


# ---- a torn tail is what a crash leaves ------------------------------------------------------
def test_torn_tails_of_every_length_are_ignored_and_cut_by_the_next_writer(logged, tmp_path: Path) -> None:
    path, log, data, sizes = fresh(logged, tmp_path)
    committed = 4 * BASE_CASES + sum(sizes)
    with CaseBase.open(path) as cb:  # the next record, as an append writes it
        cb.append("turn", np.full((2, 12), 0.5, np.float32), "cr", hand_id="next")
    record = log.read_bytes()[len(data):]
    assert record_offsets(record) == [(0, len(record))]
    first_id = json.loads((path / "manifest.json").read_text())["next_case_id"]
    for cut in range(1, len(record)):  # every length a killed write can leave
        log.write_bytes(data + record[:cut])
        reader = RetentionLog(log, first_id)
        reader.refresh()
        assert (reader.records, reader.end, reader.torn) == (len(sizes), len(data), True), cut
    for zeros in (1, 4096):  # grown but never written (a power cut)
        log.write_bytes(data + b"\0" * zeros)
        reader = RetentionLog(log, first_id)
        reader.refresh()
        assert (reader.records, reader.torn) == (len(sizes), True), zeros
    for cut in (1, 11, 12, len(record) // 2, len(record) - 1):  # through the case base: read, then cut
        log.write_bytes(data + record[:cut])
        assert open_and_count(path) == committed, cut
        with CaseBase.open(path) as cb:
            cb.append("turn", np.full((2, 12), 0.5, np.float32), "cr", hand_id="next")
        assert log.read_bytes() == data + record, cut
        assert open_and_count(path) == committed + 2
        log.write_bytes(data)


# ---- cbr casebase verify / repair -----------------------------------------------------------
def test_verify_and_repair_through_the_cli(logged, tmp_path: Path) -> None:
    path, log, data, sizes = fresh(logged, tmp_path)
    ok = cli("casebase", "verify", str(path), "--json")
    assert ok.returncode == 0, ok.stderr
    report = json.loads(ok.stdout)
    assert report["sound"] and report["problems"] == []
    assert report["cases"] == {s: BASE_CASES + sum(n for k, n in enumerate(sizes) if k % 4 == i)
                               for i, s in enumerate(STREETS)}
    with CaseBase.open(path) as cb:
        ids = {s: cb.cases(s).case_ids.tolist() for s in STREETS}
    records = record_offsets(data)
    k = 7
    at = records[k][0]
    bad = bytearray(data)
    bad[at + 6] ^= 0x10  # the length now points far past the end
    log.write_bytes(bytes(bad))

    damaged = cli("casebase", "verify", str(path))
    assert damaged.returncode == 1
    lines = damaged.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and f"{log.relative_to(path)}, byte {at}:" in lines[0]
    as_json = cli("casebase", "verify", str(path), "--json")
    assert as_json.returncode == 1
    problems = json.loads(as_json.stdout)["problems"]
    assert [(p["kind"], p["file"], p["offset"]) for p in problems] == [("log", str(log.relative_to(path)), at)]

    fixed = cli("casebase", "repair", str(path), "--json")
    assert fixed.returncode == 0, fixed.stderr
    done = json.loads(fixed.stdout)
    aside = path / done["moved_to"]
    size = records[k][1]  # the damaged record only: repair resynchronises on the next sound one
    assert (done["records_kept"], done["cases_kept"], done["records_lost"], done["cases_lost"], done["bytes_moved"],
            done["moved_from"]) == (len(sizes) - 1, sum(sizes) - sizes[k], 1, sizes[k], size, at)
    assert aside.parent == log.parent and aside.name.startswith(log.name) and str(at) in aside.name
    assert aside.read_bytes() == bytes(bad[at:at + size])  # moved aside, byte for byte
    assert log.read_bytes()[:at] == data[:at]  # the records before it, byte for byte
    assert cli("casebase", "verify", str(path)).returncode == 0
    with CaseBase.open(path) as cb:  # every case but the damaged record's; the ids close its gap
        kept = sorted(i for s in STREETS for i in cb.cases(s).case_ids.tolist())
        before = sorted(i for s in STREETS for i in ids[s])
        assert kept == before[:len(before) - sizes[k]]
        cb.append("river", np.zeros(12, np.float32), "c")  # and takes appends again
    assert open_and_count(path) == 4 * BASE_CASES + sum(sizes) - sizes[k] + 1

    again = cli("casebase", "repair", str(path))  # idempotent: nothing more to do
    assert again.returncode == 0 and "nothing to repair" in again.stdout, again.stdout + again.stderr
    assert sorted(p.name for p in log.parent.iterdir()) == sorted([log.name, aside.name])
    human = cli("casebase", "repair", str(path), "--json")
    assert json.loads(human.stdout)["repaired"] is False


def test_repair_says_what_it_did_and_keeps_a_second_damage_apart(logged, tmp_path: Path) -> None:
    path, log, data, sizes = fresh(logged, tmp_path)
    log.write_bytes(data + b"garbage!")
    r = cli("casebase", "repair", str(path))
    assert r.returncode == 0, r.stderr
    assert f"kept {len(sizes)} records ({sum(sizes)} cases)" in r.stdout and "moved 8 bytes" in r.stdout, r.stdout
    first = log.parent / f"{log.name}.damaged-at-{len(data)}"
    assert first.read_bytes() == b"garbage!" and str(first.relative_to(path)) in r.stdout
    log.write_bytes(data + b"other junk")  # damage again, at the same byte: a file of its own
    assert cli("casebase", "repair", str(path)).returncode == 0
    assert first.read_bytes() == b"garbage!"
    assert (log.parent / f"{first.name}.1").read_bytes() == b"other junk"


def test_repair_refuses_the_shipped_default_and_verify_reads_it() -> None:
    r = cli("casebase", "repair", "default")
    assert r.returncode == 1 and r.stderr.startswith("error: ") and "shipped" in r.stderr, r.stderr
    v = cli("casebase", "verify", "default", "--json")
    assert v.returncode == 0 and json.loads(v.stdout)["sound"], v.stderr


def test_the_refusal_of_a_shipped_case_base_says_what_mends_it_in_a_source_checkout() -> None:
    """The refusal said "reinstall the engine if it is damaged" in an editable install too, where
    a reinstall leaves the checkout's files as they are. Run from this checkout (an editable
    install: its casebases/ is the package's), it names the git command that restores the
    files, run for real here (it must name a path git tracks), and the case base's recipe; a
    normal install (no source tree beside the package) keeps the reinstall advice."""
    from cbr.store import PACKAGED_CASEBASES, SHIPPED_CASEBASES, mend_shipped, source_checkout

    checkout = source_checkout()
    assert checkout is not None and checkout.resolve() == REPO.resolve()  # this test runs in the checkout
    for name in SHIPPED_CASEBASES:
        r = cli("casebase", "repair", name)
        line = r.stderr.strip()
        assert r.returncode == 1 and len(line.splitlines()) == 1, r.stderr
        assert "reinstall" not in line, line
        git = re.search(r"git -C (\S+) checkout -- (\S+) restores its files", line)
        assert git and Path(git.group(1)).resolve() == REPO.resolve(), line
        assert f"python -m casebases.build_{name}," in line and (REPO / "casebases" / f"build_{name}.py").is_file()
        # the path the line names is the shipped case base, as git knows it (--error-unmatch: tracked)
        tracked = subprocess.run(["git", "-C", git.group(1), "ls-files", "--error-unmatch", git.group(2)],
                                 capture_output=True, text=True)
        assert tracked.returncode == 0 and tracked.stdout, tracked.stderr
        assert (Path(git.group(1)) / git.group(2)).resolve() == (PACKAGED_CASEBASES / name).resolve()
    assert mend_shipped("default", None) == "reinstall the engine if it is damaged"


def test_verify_names_damaged_parts_and_index_files_and_repair_rebuilds_the_index(tmp_path: Path) -> None:
    path = tmp_path / "cb"
    rng = np.random.default_rng(2)
    with CaseBaseWriter(path) as w:
        for s in STREETS:
            w.add_rows(s, _rows(rng, s, 30), "fcr" * 10, source="log")
    m = json.loads((path / "manifest.json").read_text())
    index_dir = m["index"]["turn"]["file"]
    index_file = sorted(m["index"]["turn"]["files"])[0]
    part = m["parts"]["river"][0]["file"]
    good_part = (path / part).read_bytes()
    for rel in (f"{index_dir}/{index_file}", part):
        data = bytearray((path / rel).read_bytes())
        data[len(data) // 2] ^= 0x01
        (path / rel).write_bytes(bytes(data))
    v = cli("casebase", "verify", str(path), "--json")
    assert v.returncode == 1
    assert sorted((p["kind"], p["file"]) for p in json.loads(v.stdout)["problems"]) == \
        [("index", f"{index_dir}/{index_file}"), ("part", part)]
    r = cli("casebase", "repair", str(path))  # a damaged part is beyond repair: said, exit 1 ...
    assert r.returncode == 1 and part in r.stderr, r.stderr
    assert "rebuilt the index" in r.stdout and index_dir not in r.stderr, r.stdout + r.stderr  # ... the index is not
    v = cli("casebase", "verify", str(path), "--json")
    assert [(p["kind"], p["file"]) for p in json.loads(v.stdout)["problems"]] == [("part", part)]
    (path / part).write_bytes(good_part)  # with the part restored, nothing is left to repair
    r = cli("casebase", "repair", str(path))
    assert r.returncode == 0 and "nothing to repair" in r.stdout, r.stdout + r.stderr
    assert cli("casebase", "verify", str(path)).returncode == 0
    with CaseBase.open(path) as cb:
        assert cb.notes == [] and cb.index("turn").n_cases_ == 30


def test_a_damaged_manifest_is_named_once_in_verify_and_a_problem_left_in_repair_json(tmp_path: Path) -> None:
    """verify printed the manifest's path twice; repair --json printed no JSON, only the error line."""
    path = tmp_path / "cb"
    with CaseBaseWriter(path) as w:
        w.add_rows("flop", _rows(np.random.default_rng(3), "flop", 6), "fcr" * 2, source="log")
    (path / "manifest.json").write_bytes((path / "manifest.json").read_bytes()[:50])
    v = cli("casebase", "verify", str(path))
    assert v.returncode == 1 and v.stderr.count("manifest.json") == 1, v.stderr
    r = cli("casebase", "repair", str(path), "--json")
    assert r.returncode == 1, r.stderr
    left = json.loads(r.stdout)["left"]
    assert [(p["kind"], p["file"]) for p in left] == [("manifest", "manifest.json")]
    assert left[0]["problem"].startswith("cannot read the manifest") and "cbr build" in left[0]["fix"]


def test_a_missing_log_is_reported_and_repair_starts_an_empty_one(logged, tmp_path: Path) -> None:
    path, log, _, _ = fresh(logged, tmp_path)
    log.unlink()
    with pytest.raises(CaseBaseError, match="missing retention log"):
        open_and_count(path)
    v = cli("casebase", "verify", str(path), "--json")
    assert v.returncode == 1
    assert [(p["kind"], p["file"], p["offset"]) for p in json.loads(v.stdout)["problems"]] == \
        [("log", str(log.relative_to(path)), None)]
    r = cli("casebase", "repair", str(path))
    assert r.returncode == 0 and "started it empty" in r.stdout, r.stdout + r.stderr
    assert log.read_bytes() == b"" and open_and_count(path) == 4 * BASE_CASES


def test_closing_after_another_process_compacted_and_this_one_collected(tmp_path: Path) -> None:
    """A handle appends (not yet fsynced), another compacts and closes (the old log retired,
    kept while the first is open), the first follows and compacts too (nothing to move; the
    retired log is deleted): closing it syncs nothing that is gone, and no case is lost."""
    with CaseBaseWriter(tmp_path / "cb", build_index=False) as w:
        w.add_rows("flop", np.ones((2, 12), np.float32), "cr")
    a = CaseBase.open(tmp_path / "cb")
    a.append("flop", np.zeros(12, np.float32), "f")
    b = CaseBase.open(tmp_path / "cb")
    b.refresh()
    assert b.compact() == 1
    b.close()
    a.refresh()
    assert a.compact() == 0
    a.close()  # raised FileNotFoundError: the retired log it still listed was deleted
    with CaseBase.open(tmp_path / "cb") as cb:
        assert cb.count("flop") == 3 and cb.cases("flop").actions.tolist() == ["c", "r", "f"]


def test_periodic_fsync_runs_on_the_background_thread_and_close_syncs_the_rest(tmp_path: Path) -> None:
    """With ``sync_every`` above 0 the due ``fsync`` is handed to the background syncer (the
    append does not wait for the disk) and :meth:`RetentionLog.sync` waits for it and syncs
    the rest; with 0, every append syncs before it returns and nothing goes to the thread."""
    from cbr.store import retention_log

    with CaseBaseWriter(tmp_path / "cb", build_index=False) as w:
        w.add_rows("flop", np.ones((2, 12), np.float32), "cr")
    with CaseBase.open(tmp_path / "cb") as cb:
        cb.sync_every = 1e-9  # every append is due
        before = retention_log._SYNCER.synced
        for i in range(5):
            cb.append("flop", np.full(12, i, np.float32), "c")
        log = cb._retention_logs()[-1]
        retention_log._SYNCER.wait(log.path)
        assert retention_log._SYNCER.synced > before
        assert log._unsynced  # until sync(): the background fsync may have run before the last write
        log.sync()
        assert not log._unsynced
        cb.sync_every = 0
        before = retention_log._SYNCER.synced
        cb.append("flop", np.zeros(12, np.float32), "f")
        assert not log._unsynced and retention_log._SYNCER.synced == before
    with CaseBase.open(tmp_path / "cb") as cb:
        assert cb.count("flop") == 8


def test_a_writer_compacts_from_the_records_it_holds_and_keeps_the_catalog(tmp_path: Path) -> None:
    """Compaction by the handle that wrote the log moves exactly its records (the ones
    another handle appended meanwhile too) into parts, and the catalog the second commit
    keeps matches the parts: SQL, a fresh open and ``verify`` agree."""
    from cbr.store.verify import verify_casebase

    with CaseBaseWriter(tmp_path / "cb", build_index=False) as w:
        w.add_rows("flop", np.ones((2, 12), np.float32), "cr")
    a = CaseBase.open(tmp_path / "cb")
    b = CaseBase.open(tmp_path / "cb")
    a.append_streets({"flop": (np.zeros((2, 12)), "ff", {}), "turn": (np.zeros((1, 12)), "r", {})})
    b.append("flop", np.full(12, 2.0, np.float32), "c")  # a record `a` has not read yet
    b.close()
    assert a.compact() == 4
    assert a.count("flop") == 5 and a.count("turn") == 1
    a.close()
    with CaseBase.open(tmp_path / "cb") as cb:
        assert cb.manifest.total_cases == 6 and cb.count() == 6
        assert cb.cases("flop").actions.tolist() == ["c", "r", "f", "f", "c"]
        assert cb.sql("SELECT count(*) FROM cases").fetchall() == [(6,)]
    assert verify_casebase(tmp_path / "cb").sound


def test_a_compaction_that_fails_removes_what_it_wrote_at_once(tmp_path: Path) -> None:
    """A compaction whose commit fails (DuckDB rewriting the catalog over a cut part) left its
    new parts (``cases/*/part-00001.parquet``, unlisted) and an empty ``retained/log-00001.bin``
    on disk until a later writer's clean-up, while ``verify`` called the case base sound. They
    go at once; the cases stay in the log, and with the part mended a compaction moves them."""
    from cbr.store.verify import verify_casebase

    with CaseBaseWriter(tmp_path / "cb", build_index=False) as w:
        w.add_rows("flop", np.ones((2, 12), np.float32), "cr")
        w.add_rows("turn", np.ones((2, 12), np.float32), "cc")
    root = tmp_path / "cb"
    cb = CaseBase.open(root)
    cb.append_streets({"flop": (np.zeros((2, 12)), "ff", {}), "turn": (np.zeros((1, 12)), "r", {})})
    before = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert "retained/log-00000.bin" in before, before
    turn = root / "cases" / "turn" / "part-00000.parquet"
    sound = turn.read_bytes()
    turn.write_bytes(sound[:100])
    with pytest.raises(CaseBaseError, match="cannot write the view over the turn parts") as failed:
        cb.compact()
    # in the store's words (the part, what is wrong, what mends it), DuckDB's own kept as the cause
    assert str(failed.value).endswith(
        f"cases/turn/part-00000.parquet is 100 bytes, the manifest says {len(sound):,}; the file is damaged or was "
        "replaced: restore the part from a copy or rebuild the case base with cbr build (cbr casebase verify lists "
        "every problem)"), failed.value
    assert "magic" not in str(failed.value) and "Invalid Input" not in str(failed.value)
    assert "No magic bytes" in str(failed.value.__cause__), failed.value.__cause__
    after = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert after == before, after  # nothing new left behind
    turn.write_bytes(sound)  # mended
    assert verify_casebase(root).log["records"] == 1
    assert cb.compact() == 3
    cb.close()
    report = verify_casebase(root)
    assert report.sound and report.log["records"] == 0, report
    with CaseBase.open(root) as cb:
        assert cb.count("flop") == 4 and cb.count("turn") == 3


def test_an_automatic_compaction_leaves_the_catalog_to_close(tmp_path: Path) -> None:
    """The compaction an append makes by itself (every ``compact_every`` records) marks the
    on-disk DuckDB catalog stale instead of rewriting it (about 0.2 s); close rewrites it once,
    and a reader meanwhile still sees every case through SQL."""
    with CaseBaseWriter(tmp_path / "cb", build_index=False) as w:
        w.add_rows("flop", np.ones((2, 12), np.float32), "cr")
    catalog = tmp_path / "cb" / "catalog.duckdb"
    before = catalog.stat().st_ino
    cb = CaseBase.open(tmp_path / "cb")
    cb.compact_every = 3
    for k in range(4):
        cb.append("flop", np.full(12, float(k), np.float32), "f")
    assert len(cb.manifest.parts["flop"]) == 2 and cb.manifest.catalog is None  # compacted, catalog stale
    assert catalog.stat().st_ino == before
    with CaseBase.open(tmp_path / "cb") as reader:  # a writable open repairs a stale catalog
        assert reader.sql("SELECT count(*) FROM cases").fetchall() == [(6,)]
    cb.close()
    with CaseBase.open(tmp_path / "cb") as cb:
        assert cb.manifest.catalog is not None and cb.count() == 6
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        con.execute(f"SET file_search_path = '{tmp_path / 'cb'}'")
        assert con.execute("SELECT count(*) FROM cases").fetchone() == (5,)  # the parts' cases
    finally:
        con.close()


def test_repair_takes_a_case_base_of_the_clone_s_casebases_folder(logged) -> None:
    """Issue 35, defect 1: installed editable from the clone (Quickstart 2), ``./casebases``
    is the package's folder too; repair took every case base in it for a shipped one and
    refused, while verify told the user to run it. Only ``default`` and ``expert`` are shipped."""
    from cbr.store import PACKAGED_CASEBASES, SHIPPED_CASEBASES

    assert (REPO / "casebases").resolve() == PACKAGED_CASEBASES.resolve()  # an editable install
    name = f"test-learned-{os.getpid()}"
    path = REPO / "casebases" / name
    shutil.copytree(logged[0], path)
    try:
        log = log_path(path)
        log.write_bytes(log.read_bytes() + b"garbage!")
        v = cli("casebase", "verify", name)
        assert v.returncode == 1 and "cbr casebase repair" in v.stderr, v.stderr
        r = cli("casebase", "repair", name)
        assert r.returncode == 0 and "shipped" not in r.stderr, r.stdout + r.stderr
        assert cli("casebase", "verify", name).returncode == 0
        for shipped in SHIPPED_CASEBASES:  # the shipped ones are still refused, by name and by path
            for arg in (shipped, str(PACKAGED_CASEBASES / shipped)):
                r = cli("casebase", "repair", arg)
                assert r.returncode == 1 and "is a shipped case base" in r.stderr, r.stderr
    finally:
        shutil.rmtree(path, ignore_errors=True)


# ---- repair keeps the sound records after a damaged one (issue 35, defect 13) ----------------
def retained_cases(path: Path) -> dict[str, list[tuple[str, str, tuple[float, ...]]]]:
    """Per street, the retained cases (hand id, action, features) in case-id order; checks
    the ids increase."""
    out = {}
    with CaseBase.open(path) as cb:
        for s in STREETS:
            t = cb.table(s)
            ids = t.column("case_id").to_pylist()
            assert ids == sorted(ids) and len(set(ids)) == len(ids)
            rows = zip(t.column("hand_id").to_pylist(), t.column("action").to_pylist(), cb.cases(s).features.tolist())
            out[s] = [(h, a, tuple(x)) for h, a, x in rows if h is not None and h.startswith("h")]
    return out


def damage(data: bytes, at: int, size: int, kind: str) -> bytes:
    """One flipped bit in the record at ``at``: its payload's last byte, its length field, or its marker."""
    bad = bytearray(data)
    bad[{"payload": at + size - 1, "length": at + 6, "marker": at + 1}[kind]] ^= 0x10
    return bytes(bad)


@pytest.mark.parametrize("kind", ["payload", "length", "marker"])
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_repair_sets_aside_only_the_damaged_record(logged, tmp_path: Path, where: str, kind: str) -> None:
    """Before: repair kept only the records before the first damaged one (a flipped byte in the
    first record of a 62-record log set all 61 later, intact, records aside) and said bytes,
    not records or cases. Now it skips just the damaged record, resynchronising on the next
    record that passes its checksum (found by scanning when the length field is damaged),
    keeps the rest and says what was kept and lost."""
    path, log, data, sizes = fresh(logged, tmp_path)
    before = retained_cases(path)
    records = record_offsets(data)
    k = {"first": 0, "middle": len(records) // 2, "last": len(records) - 1}[where]
    at, size = records[k]
    bad = damage(data, at, size, kind)
    log.write_bytes(bad)
    assert_refused_everywhere(path, log, at)  # opening a damaged base still refuses: only repair changes

    r = cli("casebase", "repair", str(path), "--json")
    assert r.returncode == 0, r.stderr
    done = json.loads(r.stdout)
    # at the end of the log with its marker damaged, nothing tells how many cases the bytes held
    lost = None if (where, kind) == ("last", "marker") else sizes[k]
    assert (done["records_kept"], done["cases_kept"], done["records_lost"], done["cases_lost"]) == \
        (len(sizes) - 1, sum(sizes) - sizes[k], 1, lost)
    assert [(m["offset"], m["bytes"]) for m in done["moved"]] == [(at, size)]
    assert (path / done["moved"][0]["file"]).read_bytes() == bad[at:at + size]  # aside, byte for byte
    assert done["renumbered"] == (0 if where == "last" else sum(sizes[k + 1:]))
    assert cli("casebase", "verify", str(path)).returncode == 0
    after = retained_cases(path)
    assert after == {s: [c for c in before[s] if c[0] != f"h{k}"] for s in STREETS}  # every other case, intact
    assert open_and_count(path) == 4 * BASE_CASES + sum(sizes) - sizes[k]
    with CaseBase.open(path) as cb:  # the repaired log takes appends again
        cb.append("river", np.zeros(12, np.float32), "c", hand_id="next")
    assert open_and_count(path) == 4 * BASE_CASES + sum(sizes) - sizes[k] + 1

    human = cli("casebase", "repair", str(path))
    assert human.returncode == 0 and "nothing to repair" in human.stdout, human.stdout + human.stderr


def test_repair_of_two_damaged_records_says_records_and_cases(logged, tmp_path: Path) -> None:
    path, log, data, sizes = fresh(logged, tmp_path)
    records = record_offsets(data)
    bad = damage(damage(data, *records[2], "payload"), *records[5], "length")
    log.write_bytes(bad)
    r = cli("casebase", "repair", str(path))
    assert r.returncode == 0, r.stderr
    kept, lost = sum(sizes) - sizes[2] - sizes[5], sizes[2] + sizes[5]
    assert f"kept {len(sizes) - 2} records ({kept} cases)" in r.stdout, r.stdout
    assert f"set aside 2 damaged records ({lost} cases)" in r.stdout, r.stdout
    for k in (2, 5):
        at, size = records[k]
        aside = log.parent / f"{log.name}.damaged-at-{at}"
        assert aside.read_bytes() == bad[at:at + size] and f"moved {size} bytes from byte {at}" in r.stdout
    assert open_and_count(path) == 4 * BASE_CASES + kept
    v = cli("casebase", "verify", str(path), "--json")
    assert v.returncode == 0 and json.loads(v.stdout)["log"]["records"] == len(sizes) - 2


def test_verify_and_repair_counts_carry_thousands_separators(tmp_path: Path) -> None:
    """`cbr casebase verify` on a damaged log said `keeps the 269 sound records (2422 cases)` while
    repair said `2,422`: every count of verify's and repair's lines is separated (byte offsets,
    identifiers, are not)."""
    rng = np.random.default_rng(11)
    path = tmp_path / "cb"
    with CaseBaseWriter(path, build_index=False) as w:
        for s in STREETS:
            w.add_rows(s, _rows(rng, s, BASE_CASES), "fcrcf"[:BASE_CASES], source="log")
    sizes = [1200, 1300, 1100]
    with CaseBase.open(path) as cb:
        for k, n in enumerate(sizes):
            cb.append("flop", _rows(rng, "flop", n), "c" * n, hand_id=f"h{k}")
    log = log_path(path)
    data = log.read_bytes()
    at, size = record_offsets(data)[1]
    log.write_bytes(damage(data, at, size, "payload"))
    v = cli("casebase", "verify", str(path))
    assert v.returncode == 1, v.stdout + v.stderr
    said = " ".join((v.stdout + v.stderr).split())
    assert "keeps the 2 sound records (2,300 cases) and sets aside 1 damaged record (1,300 cases)" in said, said
    assert "2300" not in said and "1300" not in said and f"byte {at}" in said, said
    r = cli("casebase", "repair", str(path))
    assert r.returncode == 0, r.stderr
    said = " ".join(r.stdout.split())
    assert "kept 2 records (2,300 cases)" in said and "set aside 1 damaged record (1,300 cases)" in said, said
    assert f"moved {size:,} bytes from byte {at} " in said, said


def test_a_cut_part_is_said_alike_by_query_inspect_and_verify(tmp_path: Path) -> None:
    """A part cut short: `cbr query -c` and `cbr casebase inspect` said `is 5000 bytes, the
    manifest says 59483` while verify said `5,000 bytes, the manifest says 59,483`; one message
    now serves them all, its counts grouped (a query adds what to do about it, inspect verify's
    words on what mends it)."""
    from cbr.store.parts import PART_MENDS

    rng = np.random.default_rng(5)
    path = tmp_path / "cb"
    with CaseBaseWriter(path, build_index=False) as w:
        for s in STREETS:
            w.add_rows(s, _rows(rng, s, 400), "fcr" * 133 + "f", source="log")
    part = json.loads((path / "manifest.json").read_text())["parts"]["flop"][0]
    listed = part["bytes"]
    assert listed > 1000
    (path / part["file"]).write_bytes((path / part["file"]).read_bytes()[:1234])
    words = f"1,234 bytes, the manifest says {listed:,}"
    query = cli("query", "-c", str(path), "--hole", "AdQc", "--board", "3h4cJh", "--position", "1",
                "--to-call", "1", "--pot", "5")
    inspect = cli("casebase", "inspect", str(path))
    verify = cli("casebase", "verify", str(path))
    for result in (query, inspect, verify):
        assert result.returncode == 1, result.stdout + result.stderr
    said = f"error: {path}: {part['file']} is {words}; the file is damaged or was replaced"
    assert inspect.stderr.strip() == f"{said} ({PART_MENDS})"  # inspect says what mends it, in verify's words
    assert query.stderr.strip().startswith(f"{said}: no flop query is answered until the part is restored"), query.stderr
    assert "cbr casebase repair" in query.stderr and len(query.stderr.strip().splitlines()) == 1
    assert words in " ".join((verify.stdout + verify.stderr).split())
    assert "1234" not in query.stderr + inspect.stderr + verify.stdout + verify.stderr


def test_salvage_resynchronises_past_every_flipped_length_bit(logged, tmp_path: Path) -> None:
    """Whatever a flipped bit makes of a middle record's length field (past the end, inside a
    later record, inside itself), the scan for the next sound record finds the record after it:
    every other record is kept, with the ids it was written with."""
    from cbr.store.retention_log import salvage_log

    path, log, data, sizes = fresh(logged, tmp_path)
    first_id = json.loads((path / "manifest.json").read_text())["next_case_id"]
    records = record_offsets(data)
    k = len(records) // 2
    at, size = records[k]
    for byte in range(4):
        for bit in range(8):
            bad = bytearray(data)
            bad[at + 4 + byte] ^= 1 << bit
            s = salvage_log(bytes(bad), first_id)
            assert [a for a, _, _ in s.records] == [a for j, (a, _) in enumerate(records) if j != k], (byte, bit)
            assert [(r.offset, r.end, r.records, r.cases) for r in s.damaged] == [(at, at + size, 1, sizes[k])]
            assert s.cases_kept == sum(sizes) - sizes[k] and s.next_id == first_id + sum(sizes)


def test_repair_of_a_sound_case_base_leaves_no_file_behind(logged, tmp_path: Path) -> None:
    """`cbr casebase repair` on a sound case base said `nothing to repair` but left a new
    `.write.lock` in it (it took the write lock first); a sound case base is left as it is, and
    --json still says what the log holds."""
    path, log, data, sizes = fresh(logged, tmp_path)
    (path / ".write.lock").unlink(missing_ok=True)

    def files() -> dict[str, bytes]:
        return {str(f.relative_to(path)): f.read_bytes() for f in sorted(path.rglob("*")) if f.is_file()}

    before = files()
    done = cli("casebase", "repair", str(path), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert (report["log"], report["records_kept"], report["cases_kept"]) == \
        (str(log.relative_to(path)), len(sizes), sum(sizes))
    assert report["left"] == [] and report["notes"] == [] and report["moved"] == []
    human = cli("casebase", "repair", str(path))
    assert human.returncode == 0 and human.stdout.strip() == f"{path}: nothing to repair", human.stdout + human.stderr
    assert files() == before
