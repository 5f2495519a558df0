"""A damaged or missing Parquet part stops only what reads its street, and a query of that
street notices it even when the saved index alone would answer.

Each test damages a real case base on disk (a copy of the small one
:mod:`tests.reliability.test_store_faults` builds): a byte of the turn part's pages flipped
(same size), the part cut short, its footer overwritten, or the part deleted; with the catalog
kept or deleted. A query (:func:`cbr.query.answer.answer`, ``cbr query``) of the turn refuses
with one line naming the part and ``cbr casebase repair``; a query of another street answers
as the undamaged case base does.
"""
from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cbr.errors import CaseBaseError
from cbr.game.situation import situation
from cbr.query.answer import answer
from cbr.store import CaseBase, inspect
from cbr.store.catalog import CATALOG
from cbr.store.locks import no_other_readers, reader_lock
from cbr.store.parts import PART_MENDS
from tests.reliability.test_store_faults import _data_page_span, make_casebase

#: One situation per street (the case base's features are random: any situation is answered).
SITUATIONS = {
    "flop": dict(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5),
    "turn": dict(hole="AdQc", board="3h4cJh9s", position=1, to_call=1, pot=6),
    "river": dict(hole="AdQc", board="3h4cJh9s2d", position=1, to_call=1, pot=6),
}


def _answers(path: Path, streets: tuple[str, ...], memory_map: bool = False) -> dict[str, Any]:
    """The answer of each street's situation, as ``cbr query --json`` has it (or the one line
    a street refuses with)."""
    out: dict[str, Any] = {}
    with CaseBase.open(path, memory_map=memory_map) as cb:
        for s in streets:
            try:
                out[s] = answer(cb, situation(**SITUATIONS[s]), top=3).to_dict()
            except CaseBaseError as exc:
                out[s] = str(exc)
    return out


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("pristine") / "cb"
    make_casebase(root, n=60)
    m = json.loads((root / "manifest.json").read_text())
    assert all("rows.json" in m["index"][s]["files"] for s in SITUATIONS)  # answered from the saved index alone
    return root, _answers(root, tuple(SITUATIONS))


def _turn_part(copy: Path) -> Path:
    m = json.loads((copy / "manifest.json").read_text())
    assert len(m["parts"]["turn"]) == 1
    return copy / m["parts"]["turn"][0]["file"]


def _damage(copy: Path, how: str) -> bytes:
    """Damage the turn part of ``copy``; the bytes left (b"" when deleted)."""
    f = _turn_part(copy)
    data = bytearray(f.read_bytes())
    if how == "flipped":  # in place: the size is the manifest's, only the CRC-32 differs
        lo, hi = _data_page_span(f)
        data[(lo + hi) // 2] ^= 0x04
    elif how == "cut":
        data = data[:len(data) // 2]
    elif how == "footer":  # the footer's metadata (the file still ends with its length and PAR1)
        data[-60:-8] = b"\xff" * 52
    elif how == "missing":
        f.unlink()
        return b""
    f.write_bytes(bytes(data))
    return bytes(data)


def _cbr(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).with_name("cbr")), *args], capture_output=True, text=True,
                          timeout=300)


def _query(copy: Path, street: str, *flags: str) -> subprocess.CompletedProcess:
    s = SITUATIONS[street]
    return _cbr("query", "--casebase", str(copy), "--hole", s["hole"], "--board", s["board"], "--position", "1",
                "--to-call", str(s["to_call"]), "--pot", str(s["pot"]), "--top", "3", "--json", *flags)


# memory-mapped, only the size is checked (a CRC would read the whole street): damage in place is
# found by verify or a read of the rows, so "flipped" is not a case of it
@pytest.mark.parametrize("how, memory_map", [("flipped", False), ("cut", False), ("cut", True)])
def test_a_query_of_a_street_with_a_damaged_part_refuses_though_its_index_would_answer(
        pristine: tuple[Path, dict[str, Any]], tmp_path: Path, how: str, memory_map: bool) -> None:
    """The turn is answered from its saved index and answer rows, which never read the part: a
    damaged part went unnoticed (the answer came, exit 0). Now the query checks the street's
    parts against the manifest first (CRC-32 once per handle; memory-mapped, the size) and
    refuses in one line naming the part and `cbr casebase repair`; the flop and river answer."""
    root, expected = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    _damage(copy, how)
    part = _turn_part(copy).relative_to(copy)

    got = _answers(copy, tuple(SITUATIONS), memory_map=memory_map)
    assert got["flop"] == expected["flop"] and got["river"] == expected["river"]
    said = got["turn"]
    assert isinstance(said, str) and "\n" not in said, said
    assert said.startswith(f"{copy}: ") and str(part) in said, said
    assert "no turn query is answered" in said and "cbr casebase repair" in said, said
    words = "is damaged (size or checksum differs from the manifest)" if how == "flipped" else \
        "the manifest says"
    assert words in said, said

    flags = ("--memory-map",) if memory_map else ()
    r = _query(copy, "turn", *flags)
    assert (r.returncode, r.stdout) == (1, ""), r
    assert r.stderr.strip() == f"error: {said}"
    r = _query(copy, "flop", *flags)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["triple"] == json.loads(_query(root, "flop", *flags).stdout)["triple"]


@pytest.mark.parametrize("how", ["flipped", "cut", "footer", "missing"])
def test_with_the_catalog_deleted_only_the_damaged_street_refuses(pristine: tuple[Path, dict[str, Any]],
                                                                  tmp_path: Path, how: str) -> None:
    """With catalog.duckdb deleted as well, an open by a writer rewrites it, and the views read
    every part's footer: a cut, missing or unreadable-footer part made every open (so every
    query, of any street) fail until a repair. The on-disk catalog is for DuckDB users; no query
    reads it. So the open now leaves it unwritten (``catalog_error`` says why; verify lists it,
    repair rewrites it once the part is restored), the sound streets answer as before, and only
    the turn refuses, naming its part."""
    root, expected = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    (copy / CATALOG).unlink()
    _damage(copy, how)
    part = str(_turn_part(copy).relative_to(copy))

    got = _answers(copy, tuple(SITUATIONS))
    assert got["flop"] == expected["flop"] and got["river"] == expected["river"]
    assert isinstance(got["turn"], str) and part in got["turn"] and "cbr casebase repair" in got["turn"]
    with CaseBase.open(copy) as cb:
        if how == "flipped":  # the footer reads: the catalog is rewritten (its views read no page)
            assert cb.catalog_error is None
        else:
            assert cb.catalog_error is not None and part in cb.catalog_error, cb.catalog_error
    assert (copy / CATALOG).exists() == (how == "flipped")  # (closing wrote nothing either)

    r = _query(copy, "river")
    assert r.returncode == 0, r.stderr
    r = _query(copy, "turn")
    assert r.returncode == 1 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, r
    assert part in r.stderr and "cbr casebase repair" in r.stderr
    verify = json.loads(_cbr("casebase", "verify", str(copy), "--json").stdout)
    kinds = {(p["kind"], p["file"]) for p in verify["problems"]}
    assert ("part", part) in kinds
    assert (("catalog", CATALOG) in kinds) == (how != "flipped")


def test_a_missing_part_stops_only_its_street(pristine: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """A deleted part refused the open outright (`missing file ...`): no street answered and
    repair could mend nothing. Now the open succeeds, every read of the turn (its cases, a
    query, SQL, inspect) says the part is missing, the other streets answer, verify lists it,
    and repair mends the rest (a damaged river index rebuilt) and lists the part, exit 1."""
    root, expected = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    part = str(_turn_part(copy).relative_to(copy))
    _damage(copy, "missing")
    m = json.loads((copy / "manifest.json").read_text())
    river_index = f"{m['index']['river']['file']}/index.faiss"
    (copy / river_index).write_bytes(b"\x00\x01")
    missing = f"{copy}: missing file {part} (listed in manifest.json)"

    with CaseBase.open(copy) as cb:
        assert cb.damaged_parts == {part: missing}
        for read in (lambda: cb.cases("turn"), lambda: cb.column("turn", "action"),
                     lambda: cb.sql("SELECT count(*) FROM cases_flop")):
            with pytest.raises(CaseBaseError) as raised:
                read()
            assert str(raised.value) == missing
        with CaseBase.open(root) as sound:
            assert cb.cases("flop").case_ids.tolist() == sound.cases("flop").case_ids.tolist()
    for args in (("casebase", "inspect", str(copy)), ("casebase", "inspect", str(copy), "--sql",
                                                      "SELECT count(*) FROM cases_flop")):
        r = _cbr(*args)
        assert (r.returncode, r.stdout, r.stderr.strip()) == (1, "", f"error: {missing} ({PART_MENDS})"), r
    r = _cbr("casebase", "verify", str(copy))
    assert r.returncode == 1 and f"error: {copy / part}: missing (listed in manifest.json)" in r.stderr, r

    r = _cbr("casebase", "repair", str(copy), "--json")
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    left = {(p["kind"], p["file"]) for p in report["left"]}
    assert ("part", part) in left and ("index", river_index) not in left, report
    assert f"{river_index}: rebuilt the index from the cases" in report["notes"], report
    got = _answers(copy, tuple(SITUATIONS))
    assert got["flop"] == expected["flop"] and got["river"] == expected["river"]
    assert got["turn"].startswith(missing + ": no turn query is answered"), got["turn"]

    # retaining into it still works: the compaction marks the catalog stale, and the close, which
    # cannot rewrite its views over the missing part, notes it instead of raising
    cb = CaseBase.open(copy)
    cb.append("flop", np.zeros(12, np.float32), "c")
    cb.compact(catalog=False)
    cb.close()
    assert cb.catalog_error is not None and part in cb.catalog_error, cb.catalog_error
    assert any("the catalog is rewritten once the part is restored" in n for n in cb.notes), cb.notes
    with CaseBase.open(copy) as cb:
        assert cb.count("flop") == 61 and cb.cases("flop").features[-1].tolist() == [0.0] * 12


def test_inspect_sql_checks_the_manifest_s_row_counts(pristine: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """With the manifest edited so the turn part and counts say 1 case, `cbr casebase inspect`
    refused, but `inspect --sql` answered from the part's rows without a word. It now refuses
    in the same line, whichever street the query names (a query may read any part)."""
    root, _ = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    m = json.loads((copy / "manifest.json").read_text())
    entry = m["parts"]["turn"][0]
    held = entry["rows"]
    entry["rows"] = 1
    m["counts"]["turn"] = {"total": 1, "f": 0, "c": 1, "r": 0}
    (copy / "manifest.json").write_text(json.dumps(m))
    words = f"error: {copy}: {entry['file']} holds {held:,} cases, the manifest says 1 ({PART_MENDS})"
    assert _cbr("casebase", "inspect", str(copy)).stderr.strip() == words
    for sql in ("SELECT count(*) FROM cases_turn", "SELECT count(*) FROM cases_flop"):
        for flags in ((), ("--json",)):
            r = _cbr("casebase", "inspect", str(copy), "--sql", sql, *flags)
            assert (r.returncode, r.stdout, r.stderr.strip()) == (1, "", words), r
    r = _cbr("casebase", "inspect", str(root), "--sql", "SELECT count(*) AS n FROM cases_turn", "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == [{"n": held}], r  # the sound one answers


def test_inspect_of_a_path_closes_the_case_base(pristine: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """``inspect(path)`` opened the case base and left it to garbage collection, which releases
    the reader lock but does none of :meth:`CaseBase.close`: the last reader's close deletes the
    files retired while others read (here a compacted retention log), and an error kept by the
    caller (its traceback holds inspect's frame) kept the case base open, its reader lock held,
    so no writer could delete retired files. It is closed before inspect returns or raises."""
    root, _ = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    other = CaseBase.open(copy)  # a reader open while the log is compacted: the old log is retired
    with CaseBase.open(copy) as cb:
        cb.append("flop", np.zeros(12, np.float32), "c")
        cb.compact()
    del other  # left to the collector, as inspect left its own: the retired log stays
    gc.collect()
    retired = [r["file"] for r in json.loads((copy / "manifest.json").read_text())["retired"]]
    assert retired and all((copy / f).exists() for f in retired)

    info = inspect(copy)  # the only reader: its close deletes them
    assert info["counts"]["flop"]["total"] == 61
    assert json.loads((copy / "manifest.json").read_text())["retired"] == []
    assert not any((copy / f).exists() for f in retired)

    _damage(copy, "cut")
    probe = reader_lock(copy)
    assert probe is not None
    try:
        with pytest.raises(CaseBaseError, match="the manifest says") as raised:
            inspect(copy)
        assert raised.traceback  # kept, with inspect's frames: the case base is closed all the same
        assert no_other_readers(probe)
    finally:
        os.close(probe)


@pytest.mark.parametrize("how", ["flipped", "cut", "missing"])
def test_a_part_restored_while_the_case_base_is_open_answers_again(pristine: tuple[Path, dict[str, Any]],
                                                                   tmp_path: Path, how: str) -> None:
    """A server keeps its case bases open: a part found damaged by the open (cut, missing) stayed
    refused by that handle after the operator restored it from a copy, so the server answered
    500 until it restarted. A part the open found damaged is now looked at again (one ``stat``)
    before each refusal, and checked as any other once it looks whole."""
    root, expected = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    whole = _turn_part(copy).read_bytes()
    _damage(copy, how)
    with CaseBase.open(copy) as cb:
        with pytest.raises(CaseBaseError, match="no turn query is answered"):
            answer(cb, situation(**SITUATIONS["turn"]), top=3)
        _turn_part(copy).write_bytes(whole)
        assert answer(cb, situation(**SITUATIONS["turn"]), top=3).to_dict() == expected["turn"]


def test_a_memory_mapped_query_without_answer_rows_reads_only_its_street(pristine: tuple[Path, dict[str, Any]],
                                                                         tmp_path: Path) -> None:
    """Memory-mapped, with no saved answer rows (an index saved before they existed), a query
    reads the provenance of the cases it retrieved through SQL views: those were made over every
    street at once, every street's parts checked first, so a cut turn part refused a flop query
    (the turn part's line, exit 1). The views are now made street by street: the flop and river
    answer as the undamaged case base does, and the turn still refuses naming its part."""
    from tests.store.test_answer_rows import strip_rows

    root, expected = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    strip_rows(copy)
    m = json.loads((copy / "manifest.json").read_text())
    assert not any("rows.json" in m["index"][s]["files"] for s in SITUATIONS)  # no answer rows
    _damage(copy, "cut")
    part = str(_turn_part(copy).relative_to(copy))

    got = _answers(copy, tuple(SITUATIONS), memory_map=True)
    assert got["flop"] == expected["flop"] and got["river"] == expected["river"], got
    assert isinstance(got["turn"], str) and part in got["turn"] and "no turn query is answered" in got["turn"]
    r = _query(copy, "flop", "--memory-map")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == json.loads(_query(root, "flop", "--memory-map").stdout)
    r = _query(copy, "turn", "--memory-map")
    assert r.returncode == 1 and part in r.stderr and len(r.stderr.strip().splitlines()) == 1, r


@pytest.mark.parametrize("how", ["flipped", "cut", "missing"])
def test_inspect_says_what_mends_a_damaged_part_in_verify_s_words(pristine: tuple[Path, dict[str, Any]],
                                                                  tmp_path: Path, how: str) -> None:
    """`cbr casebase inspect` (and `--sql`) said what is wrong with a damaged part and not what
    mends it, which verify's line on the same part says: it now ends with the same words, taken
    from one place (:data:`cbr.store.parts.PART_MENDS`)."""
    root, _ = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    _damage(copy, how)
    part = str(_turn_part(copy).relative_to(copy))
    verify = json.loads(_cbr("casebase", "verify", str(copy), "--json").stdout)
    assert [p["fix"] for p in verify["problems"] if p["file"] == part] == [PART_MENDS], verify
    for args in ((), ("--sql", "SELECT count(*) FROM cases_flop")):
        r = _cbr("casebase", "inspect", str(copy), *args)
        line = r.stderr.strip()
        assert (r.returncode, r.stdout, len(line.splitlines())) == (1, "", 1), r
        assert line.startswith(f"error: {copy}: ") and part in line and line.endswith(f" ({PART_MENDS})"), line


def test_a_missing_index_folder_is_one_line(pristine: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """A deleted index folder was one verify line per file it held (13), each with the same
    fix: it is one line naming the folder, in text and --json; repair rebuilds the index."""
    root, expected = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    m = json.loads((copy / "manifest.json").read_text())
    folder = m["index"]["turn"]["file"]
    n = len(m["index"]["turn"]["files"])
    assert n > 1
    shutil.rmtree(copy / folder)
    r = _cbr("casebase", "verify", str(copy))
    assert (r.returncode, r.stdout) == (1, ""), r
    assert r.stderr.splitlines() == [f"error: {copy / folder}: missing (listed in manifest.json with {n} files) (an "
                                     f"index is a cache of the cases: opening the case base rebuilds it, or run cbr "
                                     f"casebase repair)"], r.stderr
    problems = json.loads(_cbr("casebase", "verify", str(copy), "--json").stdout)["problems"]
    assert [(p["kind"], p["file"]) for p in problems] == [("index", folder)], problems
    r = _cbr("casebase", "repair", str(copy))
    assert r.returncode == 0 and f"{folder}: rebuilt the index from the cases" in r.stdout, r
    assert _cbr("casebase", "verify", str(copy)).returncode == 0
    assert _answers(copy, ("turn",))["turn"] == expected["turn"]


#: A compaction killed (SIGKILL) between writing its flop part and committing the manifest:
#: what a crash mid-compaction leaves (the kill comes as the new log generation is started, the
#: step after the parts).
KILLED_COMPACTION = """
import os, signal, sys
import numpy as np
import cbr.store.compaction as compaction
from cbr.store import CaseBase

def killed(root):
    os.kill(os.getpid(), signal.SIGKILL)
compaction.start_log = killed
cb = CaseBase.open(sys.argv[1])
cb.append("flop", np.zeros((3, 12), np.float32), "fcr")
cb.compact()
"""


def test_verify_reports_a_part_a_killed_compaction_left_and_repair_removes_it(
        pristine: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """A compaction killed before its commit leaves a whole Parquet part the manifest does not
    list. Verify said the case base was sound (exit 0) and repair had nothing to do, though the
    part stays on disk until some writer's clean-up. Verify now says it, one line naming the
    file, what it is and that repair removes it (kind ``unlisted`` in --json), exit 1; repair
    removes it and nothing listed (or retired); the case base answers as before. While a writer
    holds the write lock (its part in flight before its commit) the part is a note, not a problem."""
    from cbr.store.locks import write_lock

    root, expected = pristine
    copy = tmp_path / "cb"
    shutil.copytree(root, copy)
    r = subprocess.run([sys.executable, "-c", KILLED_COMPACTION, str(copy)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == -9, r.stderr
    m = json.loads((copy / "manifest.json").read_text())
    listed = {p["file"]: (copy / p["file"]).read_bytes() for s in m["parts"] for p in m["parts"][s]}
    left = sorted(str(f.relative_to(copy)) for f in (copy / "cases").rglob("part-*.parquet")
                  if str(f.relative_to(copy)) not in listed)
    assert left == ["cases/flop/part-00001.parquet"], left  # the killed compaction's part
    (rel,) = left

    with write_lock(copy):  # a writer at work: its part may be in flight
        v = _cbr("casebase", "verify", str(copy), "--json")
        assert v.returncode == 0, v.stderr
        report = json.loads(v.stdout)
        assert report["sound"] and any(n.startswith(f"{rel}: not listed in manifest.json while a writer is at work")
                                       for n in report["notes"]), report
    v = _cbr("casebase", "verify", str(copy))
    assert (v.returncode, v.stdout) == (1, ""), v
    assert v.stderr.splitlines() == [f"error: {copy / rel}: a Parquet part the manifest does not list, left by a "
                                     f"compaction or merge that stopped before its commit: no reader reads it (cbr "
                                     f"casebase repair removes it, keeping every listed part)"], v.stderr
    problems = json.loads(_cbr("casebase", "verify", str(copy), "--json").stdout)["problems"]
    assert [(p["kind"], p["file"], p["fix"]) for p in problems] == \
        [("unlisted", rel, "cbr casebase repair removes it, keeping every listed part")], problems

    r = _cbr("casebase", "repair", str(copy))
    assert (r.returncode, r.stderr) == (0, ""), r
    assert r.stdout.strip() == f"{copy}: {rel}: removed, a Parquet part the manifest does not list", r.stdout
    assert not (copy / rel).exists()
    assert {f: (copy / f).read_bytes() for f in listed} == listed
    assert json.loads((copy / "manifest.json").read_text()) == m
    assert _cbr("casebase", "verify", str(copy)).returncode == 0
    assert _answers(copy, tuple(SITUATIONS)) == expected
