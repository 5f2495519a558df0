"""Index generations: each save writes a new generation and retires the one it replaces; the
retired generation is deleted once the manifest points at the new one and no other reader
has the case base open (a reader reads a generation's files lazily, so it must not lose them
while it is open). Before: a retained copy kept every superseded generation (the copy of the
expert base grew from 51 to 96 MB after one short match)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from cbr.game.gamedef import STREETS
from cbr.play.match import run_match
from cbr.play.retention import copy_casebase
from cbr.store import CaseBase, CaseBaseWriter

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
DIMS = {"preflop": 8, "flop": 12, "turn": 12, "river": 12}


def _base(path: Path, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    with CaseBaseWriter(path) as w:
        for s in STREETS:
            w.add_rows(s, rng.random((60, DIMS[s])).astype(np.float32), list(rng.choice(list("fcr"), size=60)),
                       source="demo")
    return path


def _generations(path: Path) -> dict[str, list[str]]:
    """The index generation directories on disk, per street."""
    out: dict[str, list[str]] = {s: [] for s in STREETS}
    for d in sorted((path / "index").iterdir()):
        if d.is_dir() and not d.name.startswith("."):
            out[d.name.split(".")[0]].append(d.name)
    return out


def _bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _retain_and_compact(cb: CaseBase, rng: np.random.Generator) -> None:
    for s in STREETS:
        cb.append(s, rng.random((3, DIMS[s])).astype(np.float32), "fcr")
        cb.index(s)  # the index grows with the appends: saved as a new generation
    cb.compact()
    cb.save_indexes()


def test_superseded_generations_are_deleted_after_two_compactions(tmp_path: Path) -> None:
    path = _base(tmp_path / "cb")
    rng = np.random.default_rng(1)
    listed_first = None
    with CaseBase.open(path) as cb:
        for round_ in range(2):
            _retain_and_compact(cb, rng)
            listed = {s: cb.manifest.index[s]["file"] for s in STREETS}
            assert cb.manifest.retired == [], round_
            assert _generations(path) == {s: [listed[s].split("/")[1]] for s in STREETS}, round_
            if listed_first is None:
                listed_first = listed
        assert listed != listed_first  # a new generation each time
        query = cb.cases("flop").features[7]
        got = cb.index("flop").retrieve(query).ids.tolist()
    with CaseBase.open(path) as cb:  # reopened: the generation the manifest lists answers the same
        assert cb.index("flop").retrieve(query).ids.tolist() == got
        assert cb.count() == 4 * 60 + 2 * 4 * 3
        index_bytes = sum(f["bytes"] for e in cb.manifest.index.values() for f in e["files"].values())
    assert _bytes(path / "index") == index_bytes


READER = textwrap.dedent("""
    import sys, json
    from cbr.store import CaseBase
    cb = CaseBase.open(sys.argv[1])
    flop = cb.answer_source("flop")        # the flop's generation loaded (its answer rows read lazily)
    assert flop is not None
    print("opened", flush=True)
    sys.stdin.readline()                    # the other process retains, compacts and saves meanwhile
    out = {}
    for s in ("preflop", "flop", "turn", "river"):  # the other streets' generations loaded only now
        got = cb.answer_source(s)
        assert got is not None, s
        index, rows = got
        r = index.retrieve(cb.cases(s).features[5])
        row = int(r.ids[0])
        out[s] = [cb.count(s), row, rows.rows([row])[0]["case_id"] == int(cb.cases(s).case_ids[row])]
    cb.close()                              # the last reader: deletes the generations retired meanwhile
    print(json.dumps(out), flush=True)
""")


def test_a_reader_open_during_two_compactions_still_answers(tmp_path: Path) -> None:
    """A reader in another process keeps every generation its manifest lists until it closes
    (it reads their files lazily: another street's index, the provenance of an answer); when
    it closes, being the last reader, the superseded generations go."""
    path = _base(tmp_path / "cb", seed=2)
    first = {s: e["file"] for s, e in json.loads((path / "manifest.json").read_text())["index"].items()}
    proc = subprocess.Popen([sys.executable, "-c", READER, str(path)], env=ENV, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "opened", proc.stderr
        rng = np.random.default_rng(3)
        with CaseBase.open(path) as cb:
            for _ in range(2):
                _retain_and_compact(cb, rng)
            retired = {r["file"] for r in cb.manifest.retired}
        # kept while the reader is open: the two superseded generations of every street
        assert {f for f in retired if f.startswith("index/")} >= set(first.values())
        assert all(len(g) == 3 for g in _generations(path).values())
        out, err = proc.communicate("go\n", timeout=120)
        assert proc.returncode == 0, err
        got = json.loads(out.strip().splitlines()[-1])
        for s in STREETS:
            assert got[s] == [60, 5, True], s  # its own manifest's cases
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    m = json.loads((path / "manifest.json").read_text())  # as the reader's close left it
    assert m["retired"] == []
    assert _generations(path) == {s: [m["index"][s]["file"].split("/")[1]] for s in STREETS}
    assert not (path / "retained" / "log-00000.bin").exists()  # the compacted logs went too
    with CaseBase.open(path) as cb:
        assert cb.count() == 4 * 60 + 2 * 4 * 3


def test_a_retained_copy_keeps_one_generation_per_street(tmp_path: Path) -> None:
    """Two matches retaining into a copy: its folder holds the current generations only, and
    grows by what was retained (the parts), not by a second copy of the indexes."""
    copy = tmp_path / "learned"
    base = copy_casebase("default", tmp_path / "base")
    before = _bytes(base)
    bot = f"cbr:casebase={base}"
    for seed in (1, 2):
        run_match([bot, "call"], 4, seed=seed, retain_into=str(copy))
        m = json.loads((copy / "manifest.json").read_text())
        assert m["retired"] == [], seed
        assert _generations(copy) == {s: [m["index"][s]["file"].split("/")[1]] for s in STREETS}, seed
    assert _bytes(copy) < 1.2 * before
