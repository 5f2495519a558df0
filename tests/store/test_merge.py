"""``cbr casebase merge`` (cbr/store/merge.py): the merge of case bases built from two real
logs holds the cases of the case base built from both logs (as multisets); ids are new,
dense and deterministic; inputs that differ are refused in one line; an interrupted or
failing merge leaves no output."""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from cbr.build.local import build_casebase
from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS
from cbr.similarity import default_casper
from cbr.store import CaseBase
from cbr.store.merge import merge_casebases
from cbr.store.writer import CaseBaseWriter
from features.casper import CasperFeatures
from tests.conftest import REPO, shared_path

CLI = [sys.executable, "-c", "import sys; from cli import app; sys.exit(app())"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def cases(path: Path) -> dict[str, Counter]:
    """Per street, the multiset of cases: every column but the case id."""
    cb = CaseBase.open(path)
    try:
        out = {}
        for s in STREETS:
            t = cb.table(s).drop(["case_id"])
            out[s] = Counter(zip(*(t.column(c).to_pylist() for c in t.column_names)))
        return out
    finally:
        cb.close()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    logs = shared_path("acpc", "dealer_example_limit")
    root = tmp_path_factory.mktemp("merge")
    out = {"a": root / "a", "b": root / "b", "union": root / "union"}
    build_casebase([logs / "2p.limit.h1000.r0.log"], out["a"], workers=2)
    build_casebase([logs / "3p.limit.h1000.r0.log"], out["b"], workers=2)
    build_casebase([logs], out["union"], workers=2)
    return out


def test_merge_is_the_build_of_the_union(built: dict[str, Path], tmp_path: Path) -> None:
    report = merge_casebases([built["a"], built["b"]], tmp_path / "ab")
    merged, union = cases(tmp_path / "ab"), cases(built["union"])
    assert merged == union
    assert report.cases == sum(sum(c.values()) for c in union.values())
    cb, cu = CaseBase.open(tmp_path / "ab"), CaseBase.open(built["union"])
    try:
        assert cb.manifest.counts == cu.manifest.counts
        assert sorted(g["name"] for g in cb.manifest.games) == sorted(g["name"] for g in cu.manifest.games)
        assert {s["source"]: (s["sha256"], s["cases"]) for s in cb.manifest.sources} == \
               {s["source"]: (s["sha256"], s["cases"]) for s in cu.manifest.sources}
        ids = sorted(i for s in STREETS for i in cb.table(s).column("case_id").to_pylist())
        assert ids == list(range(report.cases)) and cb.manifest.next_case_id == report.cases
        # the indexes were rebuilt over the merged cases and answer like the union's
        for s in STREETS:
            assert cb.manifest.index[s]["cases"] == cu.manifest.index[s]["cases"]
            X = cb.cases(s).features
            q = X[len(X) // 2]
            hits_m = sorted(tuple(r) for r in cb.cases(s).features[cb.index(s).retrieve(q).ids].tolist())
            hits_u = sorted(tuple(r) for r in cu.cases(s).features[cu.index(s).retrieve(q).ids].tolist())
            assert hits_m == hits_u
    finally:
        cb.close()
        cu.close()
    # deterministic ids: input order, then streets, then old ids
    merge_casebases([built["a"], built["b"]], tmp_path / "ab2")
    one, two = CaseBase.open(tmp_path / "ab"), CaseBase.open(tmp_path / "ab2")
    try:
        for s in STREETS:
            assert one.table(s).equals(two.table(s))
        first = one.table("preflop").slice(0, 1).column("source").to_pylist()[0]
        assert first.endswith("2p.limit.h1000.r0.log")
    finally:
        one.close()
        two.close()


class RenamedCasper(CasperFeatures):
    name = "casper-renamed"


def _small(path: Path, **kw: object) -> Path:
    with CaseBaseWriter(path, build_index=False, **kw) as w:
        w.add_rows("flop", [[0.5] * 12, [0.25] * 12], "cr", source="x.log")
    return path


def test_refusals(built: dict[str, Path], tmp_path: Path) -> None:
    other_fs = _small(tmp_path / "fs", feature_set=RenamedCasper())
    with pytest.raises(CaseBaseError, match="feature set 'casper-renamed' vs 'casper'"):
        merge_casebases([built["a"], other_fs], tmp_path / "out")
    other_sim = _small(tmp_path / "sim", similarity=dataclasses.replace(default_casper(), threshold=0.9))
    with pytest.raises(CaseBaseError, match="similarity configurations differ"):
        merge_casebases([built["a"], other_sim], tmp_path / "out")
    with pytest.raises(CaseBaseError, match="given twice"):
        merge_casebases([built["a"], built["a"]], tmp_path / "out")
    with pytest.raises(CaseBaseError, match="one of the inputs"):
        merge_casebases([built["a"], built["b"]], built["b"])
    with pytest.raises(CaseBaseError):
        merge_casebases([built["a"], tmp_path / "nothing"], tmp_path / "out")
    assert not (tmp_path / "out").exists()
    r = subprocess.run([*CLI, "casebase", "merge", str(built["a"]), str(other_fs), "-o", str(tmp_path / "out")],
                       capture_output=True, text=True, env=_env(), timeout=120)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and "feature set" in r.stderr, r.stderr
    r = subprocess.run([*CLI, "casebase", "merge", str(built["a"]), "-o", str(tmp_path / "out")],
                       capture_output=True, text=True, env=_env(), timeout=120)
    assert r.returncode == 2 and "at least two" in r.stderr
    assert not (tmp_path / "out").exists()


def test_interrupted_or_failing_merge_leaves_no_output(built: dict[str, Path], tmp_path: Path) -> None:
    seen = []

    def interrupt(n: int) -> None:
        seen.append(n)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        merge_casebases([built["a"], built["b"]], tmp_path / "out", progress=interrupt)
    assert os.listdir(tmp_path) == []
    # a damaged part of the second input, found mid-merge
    damaged = tmp_path / "damaged"
    subprocess.run(["cp", "-r", str(built["b"]), str(damaged)], check=True)
    part = damaged / CaseBase.open(damaged).manifest.parts["flop"][0]["file"]
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))
    with pytest.raises(CaseBaseError, match="part-00000"):
        merge_casebases([built["a"], damaged], tmp_path / "out")
    assert sorted(os.listdir(tmp_path)) == ["damaged"]


def test_merge_of_a_cut_part_gives_its_sizes(built: dict[str, Path], tmp_path: Path) -> None:
    """A cut part is said as every other command says it: its size and the manifest's, not only 'damaged'."""
    damaged = tmp_path / "damaged"
    subprocess.run(["cp", "-r", str(built["b"]), str(damaged)], check=True)
    entry = CaseBase.open(damaged).manifest.parts["turn"][0]
    part = damaged / entry["file"]
    cut = entry["bytes"] // 2
    os.truncate(part, cut)
    with pytest.raises(CaseBaseError) as err:
        merge_casebases([built["a"], damaged], tmp_path / "out")
    assert str(err.value) == (f"{damaged}: {entry['file']} is {cut:,} bytes, the manifest says {entry['bytes']:,}; "
                              "the file is damaged or was replaced")
    r = subprocess.run([*CLI, "casebase", "merge", str(built["a"]), str(damaged), "-o",
                        str(tmp_path / "out")], capture_output=True, text=True, env=_env(), timeout=120)
    assert r.returncode == 1 and r.stderr == f"error: {err.value}\n", r.stderr
    assert sorted(os.listdir(tmp_path)) == ["damaged"]


def test_cli_merge_json(built: dict[str, Path], tmp_path: Path) -> None:
    r = subprocess.run([*CLI, "casebase", "merge", str(built["a"]), str(built["b"]), "-o", str(tmp_path / "ab"),
                        "--json"], capture_output=True, text=True, env=_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["cases"] == CaseBase.open(built["union"]).manifest.next_case_id
    assert cases(tmp_path / "ab") == cases(built["union"])


def test_cli_merge_says_its_counts_with_thousands_separators(built: dict[str, Path], tmp_path: Path) -> None:
    """The per-street counts read as build's do (``preflop 10,306``); they were bare (``preflop
    10306``) beside a separated total."""
    r = subprocess.run([*CLI, "casebase", "merge", str(built["a"]), str(built["b"]), "-o", str(tmp_path / "ab"),
                        "--json"], capture_output=True, text=True, env=_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    per = json.loads(r.stdout)["cases_per_street"]
    assert max(per.values()) > 999                       # a count the separator shows in
    r = subprocess.run([*CLI, "casebase", "merge", str(built["a"]), str(built["b"]), "-o", str(tmp_path / "ab2")],
                       capture_output=True, text=True, env=_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    assert "(" + ", ".join(f"{s} {n:,}" for s, n in per.items()) + ")" in " ".join(r.stdout.split()), r.stdout


def cases_but_source(path: Path) -> dict[str, Counter]:
    """Per street, the multiset of cases: every column but the case id and the source's name
    (a log read under another path has another name, the same checksum)."""
    with CaseBase.open(path) as cb:
        out = {}
        for s in STREETS:
            t = cb.table(s).drop(["case_id", "source"])
            out[s] = Counter(zip(*(t.column(c).to_pylist() for c in t.column_names)))
        return out


def test_merging_bases_built_from_a_common_log_warns_and_dedupe_keeps_its_cases_once(
        built: dict[str, Path], tmp_path: Path) -> None:
    """Defect 5b: before, the common log's cases were merged twice, silently. Here the 2p log
    is read again under another name (the same file by checksum) into its own base; merged
    with the base built from both logs it is warned about, and ``--dedupe`` gives exactly the
    cases of the base built from both logs. Expected counts come from the separate builds."""
    logs = shared_path("acpc", "dealer_example_limit")
    again = tmp_path / "logs" / "again-2p.log"
    again.parent.mkdir()
    shutil.copy(logs / "2p.limit.h1000.r0.log", again)
    build_casebase([again], tmp_path / "a2", workers=2)
    union, a2 = cases_but_source(built["union"]), cases_but_source(tmp_path / "a2")
    n_union, n_a2 = (sum(sum(c.values()) for c in x.values()) for x in (union, a2))
    assert n_a2 > 0 and all(not (a2[s] - union[s]) for s in STREETS)  # the 2p log's cases are in both

    plain = subprocess.run([*CLI, "casebase", "merge", str(built["union"]), str(tmp_path / "a2"), "-o",
                            str(tmp_path / "plain"), "--json"], capture_output=True, text=True, env=_env(), timeout=300)
    assert plain.returncode == 0, plain.stderr
    warned = [line for line in plain.stderr.splitlines() if "share the source" in line]
    assert len(warned) == 1 and warned[0].startswith("warning: ") and "again-2p.log" in warned[0] \
        and "2p.limit.h1000.r0.log" in warned[0] and "--dedupe" in warned[0], plain.stderr
    info = json.loads(plain.stdout)
    assert info["cases"] == n_union + n_a2 and info["duplicates_dropped"] == 0 and not info["dedupe"]
    assert [len(e["inputs"]) for e in info["shared_sources"]] == [2]
    assert [w for w in info["warnings"] if "share the source" in w] == [warned[0].removeprefix("warning: ")]
    assert warned[0].endswith("; --dedupe keeps them once")
    assert cases_but_source(tmp_path / "plain") == {s: union[s] + a2[s] for s in STREETS}

    deduped = subprocess.run([*CLI, "casebase", "merge", str(tmp_path / "a2"), str(built["union"]), "-o",
                              str(tmp_path / "deduped"), "--dedupe"], capture_output=True, text=True, env=_env(),
                             timeout=300)
    assert deduped.returncode == 0, deduped.stderr
    assert "share the source" not in deduped.stderr and f"dropped {n_a2:,} duplicate cases" in deduped.stdout
    assert cases_but_source(tmp_path / "deduped") == union
    with CaseBase.open(tmp_path / "deduped") as cb, CaseBase.open(built["union"]) as cu:
        assert cb.manifest.counts == cu.manifest.counts
    # the library's own warning names its parameter, not the command's option
    report = merge_casebases([built["union"], tmp_path / "a2"], tmp_path / "lib", build_index=False)
    [said] = [w for w in report.warnings if "share the source" in w]
    assert said.endswith("; dedupe=True keeps them once") and "--" not in said, said
    # the other order keeps the union's own cases, sources and all
    report = merge_casebases([built["union"], tmp_path / "a2"], tmp_path / "other", dedupe=True, build_index=False)
    assert (report.cases, report.duplicates_dropped) == (n_union, n_a2)
    assert report.shared_sources[0]["dropped"] == n_a2
    assert cases(tmp_path / "other") == cases(built["union"])
