"""Answer rows: a query answered from the saved index and its answer rows equals the answer
read from the cases (that it imports no pyarrow: tests/cli/test_cli_startup.py), and falls back to the cases (saying why) when the
rows lag the cases, predate them or are damaged."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS
from cbr.game.situation import described_situation
from cbr.game.spec import load_game
from cbr.query.answer import answer
from cbr.store import CaseBase, CaseBaseWriter, resolve_casebase
from cbr.store.answer_rows import BLOCK_ROWS, ROW_FILES, AnswerRows, AnswerRowsWriter
from cbr.store.manifest import file_checksum, read_manifest, write_manifest
from cbr.store.verify import repair_casebase, verify_casebase
from features.casper import CasperFeatures
from tests.store.test_store import StubEvaluator, make_dp

GAME = load_game("holdem.limit.2p")
#: One described spot per street (hole, board, position, to call, pot).
SPOTS = [
    ("AdQc", "", 1, 1, 3),
    ("AdQc", "3h4cJh", 1, 1, 5),
    ("7s7d", "3h4cJh2s", 0, 0, 8),
    ("KhTh", "3h4cJh2s9h", 1, 1, 12),
    ("9c8c", "Tc7d2h", 0, 0, 4),
]


def spots():
    return [described_situation(GAME, hole=h, board=b or None, position=p, to_call=c, pot=pot)
            for h, b, p, c, pot in SPOTS]


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """A copy of the default case base (its indexes carry answer rows)."""
    dst = tmp_path / "cb"
    shutil.copytree(resolve_casebase("default"), dst, ignore=shutil.ignore_patterns(".write.lock"))
    return dst


def from_cases(path: Path, dp, top: int | None = 5, memory_map: bool = False):
    """The answer read from the cases (the path taken without answer rows)."""
    with CaseBase.open(path, memory_map=memory_map) as cb:
        cb.answer_source = lambda street: None  # this object only: read the street's cases
        return answer(cb, dp, top=top).to_dict(top=top)


def from_rows(path: Path, dp, top: int | None = 5):
    with CaseBase.open(path) as cb:
        got = answer(cb, dp, top=top).to_dict(top=top)
        used_rows = not cb._tables  # no street table was read
        return got, used_rows, list(cb.notes)


def test_writer_and_reader_round_trip_across_blocks(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    n = 3 * BLOCK_ROWS + 5
    ids = np.sort(rng.choice(10 * n, size=n, replace=False))
    actions = list(rng.choice(list("fcr"), size=n))
    cols = {"source": [f"log-{i % 3}.txt" for i in range(n)], "hole": [None if i % 7 == 0 else "AhKd" for i in range(n)],
            "position": list(rng.integers(0, 9, size=n)), "player": ["Ünïcode" if i % 2 else "p,\"q\"\n" for i in range(n)]}
    w = AnswerRowsWriter(tmp_path, tuple(cols))
    w.add(ids[:100], actions[:100], {c: v[:100] for c, v in cols.items()})
    w.add(ids[100:], actions[100:], {c: v[100:] for c, v in cols.items()})
    w.close()
    files = {name: file_checksum(tmp_path / name) for name in ROW_FILES}
    rows = AnswerRows.load(tmp_path, files, n)
    assert rows.codes.tolist() == ["fcr".index(a) for a in actions]
    pick = [n - 1, 0, BLOCK_ROWS, BLOCK_ROWS - 1, 77, 0]
    got = rows.rows(pick)
    for i, row in zip(pick, got):
        assert row == {"case_id": int(ids[i]), **{c: (v[i].item() if isinstance(v[i], np.generic) else v[i])
                                                 for c, v in cols.items()}}
    with pytest.raises(CaseBaseError, match="do not hold the index's"):
        AnswerRows.load(tmp_path, files, n + 1)
    (tmp_path / "bad").mkdir()
    bad = AnswerRowsWriter(tmp_path / "bad", ("source",))
    with pytest.raises(ValueError, match="not one of f, c, r"):
        bad.add([1], ["x"], {"source": ["s"]})
    with pytest.raises(ValueError, match="one value per row"):
        bad.add([1, 2], ["c"], {"source": ["s"]})
    bad.abort()


def test_answers_from_the_rows_equal_answers_from_the_cases(base: Path) -> None:
    for dp in spots():
        for top in (5, None):
            got, used_rows, notes = from_rows(base, dp, top)
            assert used_rows and not notes
            assert got == from_cases(base, dp, top)
            assert got == from_cases(base, dp, top, memory_map=True)


def test_every_built_street_has_answer_rows(tmp_path: Path) -> None:
    """A build writes answer rows with each index: their codes and provenance are the parts'."""
    with CaseBaseWriter(tmp_path / "cb", feature_set=CasperFeatures(evaluator=StubEvaluator())) as w:
        for street in range(4):
            w.add_decisions([make_dp(street, action="fcr"[i % 3], player=f"p{i % 2}", hand_id=f"h{i}")
                             for i in range(2 * BLOCK_ROWS + 3)])
    with CaseBase.open(tmp_path / "cb") as cb:
        for s in STREETS:
            index, rows = cb.answer_source(s)
            table = cb.table(s)
            assert index.n_cases_ == len(rows) == table.num_rows
            assert rows.codes.tolist() == ["fcr".index(a) for a in table.column("action").to_pylist()]
            want = table.select(["case_id", *rows.columns]).to_pylist()
            assert rows.rows(range(len(rows))) == want


def test_cases_retained_since_the_save_are_answered_from_the_cases_then_saved(base: Path) -> None:
    dp = spots()[1]
    with CaseBase.open(base) as cb:  # retain without loading the index
        X = cb.cases("flop").features[:3]
        cb.append("flop", X, "rrr")
    with CaseBase.open(base) as cb:
        assert cb.answer_source("flop") is None  # the saved rows lag the cases
        lagging = answer(cb, dp, top=5).to_dict(top=5)
        assert cb._tables  # read from the cases
    with CaseBase.open(base) as cb:  # the close above saved the grown index with its rows
        index, rows = cb.answer_source("flop")
        assert len(rows) == index.n_cases_ == cb.count("flop")
        assert answer(cb, dp, top=5).to_dict(top=5) == lagging
        assert rows.codes[-3:].tolist() == [2, 2, 2]


def strip_rows(base: Path) -> None:
    """Make the case base look saved before answer rows existed."""
    m = read_manifest(base)
    for entry in m.index.values():
        for name in ROW_FILES:
            entry["files"].pop(name)
            (base / entry["file"] / name).unlink()
    write_manifest(base, m)


def test_an_index_saved_before_answer_rows_gets_them_on_first_use(base: Path) -> None:
    dp = spots()[1]
    want = from_cases(base, dp)
    strip_rows(base)
    with CaseBase.open(base) as cb:
        assert cb.answer_source("flop") is None
        assert answer(cb, dp, top=5).to_dict(top=5) == want and cb._tables  # read from the cases
    assert "rows.json" in read_manifest(base).index["flop"]["files"]  # the close saved them
    got, used_rows, notes = from_rows(base, dp)
    assert got == want and used_rows and not notes


def damage(path: Path, at: int) -> None:
    with open(path, "r+b") as fh:
        fh.seek(at)
        byte = fh.read(1)
        fh.seek(at)
        fh.write(bytes([byte[0] ^ 0x5A]))


def flop_dir(base: Path) -> Path:
    return base / read_manifest(base).index["flop"]["file"]


@pytest.mark.parametrize("what", ["record", "offsets", "actions", "missing"])
def test_damaged_answer_rows_fall_back_to_the_cases_and_say_so(base: Path, what: str) -> None:
    dp = spots()[1]
    want = from_cases(base, dp)
    d = flop_dir(base)
    with CaseBase.open(base) as cb:
        first = cb.answer_source("flop")[1]
        row = int(answer(cb, dp, top=5).explanation.ids[0])
    block = row // BLOCK_ROWS
    if what == "record":  # a byte inside the block the first listed case is in
        damage(d / "provenance.bin", int(first._offsets[block]) + 10)
    elif what == "offsets":  # that block's offset points into another block: its CRC differs
        offsets = np.load(d / "provenance.npy")
        offsets[block] = offsets[block + 1] if block + 2 < len(offsets) else 0
        with open(d / "provenance.npy", "r+b") as fh:  # same size, other bytes
            fh.seek(os.path.getsize(d / "provenance.npy") - offsets.nbytes)
            fh.write(offsets.tobytes())
    elif what == "actions":
        damage(d / "actions.npy", os.path.getsize(d / "actions.npy") - 1)
    else:
        (d / "provenance.bin").unlink()
    named = {"record": "provenance.bin", "offsets": "provenance.bin", "actions": "actions.npy",
             "missing": "provenance.bin"}[what]
    with CaseBase.open(base, memory_map=True) as cb:  # it cannot read the cases instead: it says what is damaged
        with pytest.raises(CaseBaseError, match=named.replace(".", r"\.")):
            answer(cb, dp, top=5)
    damaged = "provenance.npy" if what == "offsets" else named  # the file changed; reads name the block
    assert any(p.file.endswith(damaged) for p in verify_casebase(base).problems)
    got, used_rows, notes = from_rows(base, dp)
    assert got == want
    assert not used_rows
    assert any(named in n and "rebuilt the flop index and its answer rows from the cases" in n for n in notes), notes
    assert not verify_casebase(base).problems  # the close saved the rebuilt index and rows
    got, used_rows, notes = from_rows(base, dp)
    assert got == want and used_rows and not notes


def test_repair_rebuilds_damaged_answer_rows(base: Path) -> None:
    dp = spots()[1]
    want = from_cases(base, dp)
    damage(flop_dir(base) / "provenance.bin", 100)
    assert verify_casebase(base).problems
    report = repair_casebase(base)
    assert not report.left and any("rebuilt the index" in n for n in report.notes)
    assert not verify_casebase(base).problems
    got, used_rows, notes = from_rows(base, dp)
    assert got == want and used_rows and not notes


def test_rows_json_records_the_block_layout(base: Path) -> None:
    head = json.loads((flop_dir(base) / "rows.json").read_text())
    assert head["block_rows"] == BLOCK_ROWS and head["rows"] == read_manifest(base).index["flop"]["cases"]


@pytest.mark.parametrize("name", ROW_FILES)
def test_random_damage_to_answer_rows_never_changes_an_answer(base: Path, tmp_path: Path, name: str) -> None:
    """Bits flipped or the file cut, at random: the answer is the same (loaded) or a one-line
    CaseBaseError (memory-mapped), never another answer or another exception."""
    dp = spots()[1]
    want = from_cases(base, dp, top=None)  # every retrieved case listed: many blocks read
    rng = np.random.default_rng(sum(map(ord, name)))
    for trial in range(4):
        copy = tmp_path / f"t{trial}" / base.name  # an answer names the case base's folder
        shutil.copytree(base, copy)
        f = flop_dir(copy) / name
        data = bytearray(f.read_bytes())
        if trial % 3 == 2:
            data = data[: int(rng.integers(0, len(data)))]
        else:
            for _ in range(1 + 2 * (trial % 3)):
                i = int(rng.integers(0, len(data)))
                data[i] ^= 1 << int(rng.integers(0, 8))
        f.write_bytes(bytes(data))
        try:
            with CaseBase.open(copy, memory_map=True) as cb:
                mapped = answer(cb, dp).to_dict()
            assert mapped == want, f"trial {trial}: memory-mapped answer changed"
        except CaseBaseError as exc:
            assert "\n" not in str(exc) and str(flop_dir(copy)) in str(exc), str(exc)  # names the index
        got, _, _ = from_rows(copy, dp, top=None)
        assert got == want, f"trial {trial}: answer changed"
        shutil.rmtree(copy)


def written_whole(cb: CaseBase, street: str, where: Path) -> AnswerRows:
    """The street's answer rows written from its whole table (the path without carrying)."""
    where.mkdir()
    with AnswerRowsWriter(where) as w:
        w.add_batches(cb.table(street).select(list(AnswerRowsWriter.COLUMNS)).to_batches(max_chunksize=1000))
    return AnswerRows.load(where, {name: file_checksum(where / name) for name in ROW_FILES}, cb.count(street))


def saved_rows_equal_whole(base: Path, tmp_path: Path, street: str) -> None:
    with CaseBase.open(base) as cb:
        index, rows = cb.answer_source(street)
        n = cb.count(street)
        whole = written_whole(cb, street, tmp_path / f"whole-{n}")
        assert len(rows) == n == index.n_cases_
        assert rows.codes.tolist() == whole.codes.tolist()
        assert rows.rows(range(n)) == whole.rows(range(n))
        assert rows.offsets.tolist() == whole.offsets.tolist()  # block for block the same file


@pytest.fixture
def carried(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Records the rows each :meth:`AnswerRowsWriter.carry` carries over."""
    calls: list[int] = []
    real = AnswerRowsWriter.carry

    def spy(self, old):
        real(self, old)
        calls.append(len(old))
    monkeypatch.setattr(AnswerRowsWriter, "carry", spy)
    return calls


@pytest.mark.parametrize("loaded", ["table", "saved index only"])
@pytest.mark.parametrize("extra", ["one", "to a block's end", "past a block's end"])
def test_a_grown_street_carries_its_saved_rows_and_writes_only_the_new(base: Path, tmp_path: Path, carried: list[int],
                                                                      extra: str, loaded: str) -> None:
    """Saving after appends copies the old generation's rows and adds the new ones: the result
    equals the rows written whole, twice in a row (the second save carries the first's), whether
    the new rows come from the loaded table or, with only the saved index loaded, from the
    retention log."""
    with CaseBase.open(base) as cb:
        n = cb.count("turn")
        X = cb.cases("turn").features[:BLOCK_ROWS + 3]
    k = {"one": 1, "to a block's end": BLOCK_ROWS - n % BLOCK_ROWS, "past a block's end": BLOCK_ROWS + 3}[extra]
    for round_ in range(2):
        with CaseBase.open(base) as cb:
            if loaded == "table":
                cb.index("turn")  # reads the cases
            else:
                assert cb.answer_source("turn") is not None and not cb._tables
            cb.append("turn", X[:k], ("rcf" * k)[:k], source=[f"live-{round_}-{i}" for i in range(k)],
                      hole="AhKd", board="2c3d4h5s", player="hero", position=round_)
            assert bool(cb._tables) == (loaded == "table")
        assert carried == [n + i * k for i in range(round_ + 1)]
        saved_rows_equal_whole(base, tmp_path, "turn")


def test_damaged_old_rows_are_not_carried_but_written_whole(base: Path, tmp_path: Path, carried: list[int]) -> None:
    with CaseBase.open(base) as cb:
        X = cb.cases("turn").features[:2]
    old = base / read_manifest(base).index["turn"]["file"]
    damage(old / "provenance.bin", 10)  # in the first block, which a carry would copy
    with CaseBase.open(base) as cb:
        cb.index("turn")
        cb.append("turn", X, "cr")
    assert carried == []
    saved_rows_equal_whole(base, tmp_path, "turn")


def test_carry_comes_first_and_needs_the_same_layout(base: Path, tmp_path: Path) -> None:
    entry = read_manifest(base).index["turn"]
    old = AnswerRows.load(base / entry["file"], entry["files"], entry["cases"])
    with AnswerRowsWriter(tmp_path) as w:
        w.add([1], ["c"], {c: [None] for c in w.columns})
        with pytest.raises(ValueError, match="before any add"):
            w.carry(old)
    other = tmp_path / "other"
    other.mkdir()
    with AnswerRowsWriter(other, ("source",)) as w, pytest.raises(ValueError, match="other columns"):
        w.carry(old)
