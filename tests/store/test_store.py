"""The case store: round trip, atomic builds, durable appends, schema checks, inspect, CLI."""
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

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest

from cbr.errors import CaseBaseError, ConfigError
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import STREETS, preset
from cbr.store import SCHEMA_VERSION, CaseBase, CaseBaseWriter, inspect, resolve_casebase
from cbr.store.catalog import CATALOG
from features.casper import CasperFeatures
from tests.conftest import default_sigint

REPO = Path(__file__).resolve().parents[2]
DIMS = {"preflop": 8, "flop": 12, "turn": 12, "river": 12}


class StubEvaluator:
    """Deterministic hand values (the store does not care what they are)."""

    def preflop_rank(self, hole):
        return 1 + (sum(hole) % 169)

    def hand_strength(self, hole, board):
        return (sum(hole) + sum(board)) % 100 / 100

    def hand_potential(self, hole, board):
        return (0.125, 0.0625)


def make_dp(street: int, hole=(51, 47), board=(), action="c", player="p1", hand_id="h1") -> DecisionPoint:
    boards = {0: (), 1: (0, 4, 8), 2: (0, 4, 8, 12), 3: (0, 4, 8, 12, 16)}
    return DecisionPoint(
        game=preset("holdem.limit.2p"), street=street, position=1, player=player, hole=hole,
        board=board or boards[street], folded=(False, False), all_in=(False, False), acted=(False, False),
        order=(1, 0), street_bets=1, committed=(10.0, 5.0), total_committed=(10.0, 5.0),
        previous_round_bets=0, legal="fcr", action=action, hand_id=hand_id, source="unit.log",
    )


def random_rows(rng: np.random.Generator, street: str, n: int) -> np.ndarray:
    return rng.random((n, DIMS[street])).astype(np.float32)


def write_demo(path: Path, rng: np.random.Generator, **kw) -> dict[str, tuple[np.ndarray, list[str]]]:
    data = {}
    with CaseBaseWriter(path, build_index=False, **kw) as w:
        for s in STREETS:
            n = int(rng.integers(3, 9))
            X = random_rows(rng, s, n)
            acts = list(rng.choice(list("fcr"), size=n))
            w.add_rows(s, X, acts, source=f"log-{s}", hand_id=[f"h{i}" for i in range(n)], player="bob",
                       position=1, hole="AsKh")
            data[s] = (X, acts)
    return data


# ---- round trip -------------------------------------------------------------------
def test_round_trip_rows_and_metadata(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    data = write_demo(tmp_path / "demo", rng, games=[preset("holdem.limit.2p")])
    cb = CaseBase.open(tmp_path / "demo")
    seen_ids: list[int] = []
    for s in STREETS:
        X, acts = data[s]
        arrays = cb.cases(s)
        assert arrays.features.dtype == np.float32
        np.testing.assert_array_equal(arrays.features, X)
        assert arrays.actions.tolist() == acts
        assert cb.count(s) == len(acts) == cb.manifest.counts[s]["total"]
        for a in "fcr":
            assert cb.manifest.counts[s][a] == acts.count(a)
        t = cb.table(s)
        assert t.column("hand_id").to_pylist() == [f"h{i}" for i in range(len(acts))]
        assert set(t.column("hole").to_pylist()) == {"AsKh"}
        assert set(t.column("source").to_pylist()) == {f"log-{s}"}
        seen_ids += arrays.case_ids.tolist()
    assert sorted(seen_ids) == list(range(len(seen_ids)))  # unique and contiguous over streets
    assert cb.manifest.games == [preset("holdem.limit.2p").to_dict()]
    assert cb.manifest.schema_version == SCHEMA_VERSION
    union = dict(cb.sql("SELECT street, count(*) FROM cases GROUP BY street").fetchall())
    assert union == {s: len(data[s][1]) for s in STREETS}
    # pre-flop has no post-flop features: NULL in the union view
    nulls = cb.sql("SELECT count(*) FROM cases WHERE street = 'preflop' AND positive_potential IS NULL").fetchone()
    assert nulls == (len(data["preflop"][1]),)


def test_add_decisions_uses_feature_set_and_provenance(tmp_path: Path) -> None:
    fs = CasperFeatures(evaluator=StubEvaluator())
    dps = [make_dp(0, action="r"), make_dp(1, action="c", player="p2"), make_dp(0, action="f", hand_id="h2"),
           make_dp(3, action="c")]
    with CaseBaseWriter(tmp_path / "cb", feature_set=fs, build_index=False) as w:
        ids = w.add_decisions(dps)
    assert sorted(ids.tolist()) == [0, 1, 2, 3]
    cb = CaseBase.open(tmp_path / "cb")
    pre = cb.table("preflop").to_pylist()
    assert [r["action"] for r in pre] == ["r", "f"] and [r["hand_id"] for r in pre] == ["h1", "h2"]
    np.testing.assert_array_equal(cb.cases("flop").features[0], fs.row(dps[1]))
    flop = cb.table("flop").to_pylist()[0]
    assert (flop["player"], flop["hole"], flop["board"], flop["game"]) == ("p2", "AsKs", "2c3c4c", "holdem.limit.2p")
    assert cb.manifest.games[0]["name"] == "holdem.limit.2p"
    assert {e["source"]: e["cases"] for e in cb.manifest.sources} == {"unit.log": 4}


def test_decision_without_action_is_refused(tmp_path: Path) -> None:
    fs = CasperFeatures(evaluator=StubEvaluator())
    with pytest.raises(ValueError, match="no action"):
        with CaseBaseWriter(tmp_path / "cb", feature_set=fs, build_index=False) as w:
            w.add_decisions([make_dp(0, action=None)])
    assert not (tmp_path / "cb").exists()


def test_bad_rows_are_refused(tmp_path: Path) -> None:
    with CaseBaseWriter(tmp_path / "cb", build_index=False) as w:
        with pytest.raises(ValueError, match="shape"):
            w.add_rows("flop", np.zeros((2, 8)), "cc")
        with pytest.raises(ValueError, match="'f', 'c' or 'r'"):
            w.add_rows("flop", np.zeros((1, 12)), ["x"])
        with pytest.raises(ValueError, match="NaN"):
            w.add_rows("flop", np.full((1, 12), np.nan), ["c"])
        with pytest.raises(ValueError, match="street"):
            w.add_rows("showdown", np.zeros((1, 12)), ["c"])


def test_source_hash_recorded(tmp_path: Path) -> None:
    import hashlib

    log = tmp_path / "a.log"
    log.write_bytes(b"STATE:0:cc:AsKh|QdQc\n")
    with CaseBaseWriter(tmp_path / "cb", build_index=False) as w:
        w.add_source(log, name="a.log")
        w.add_rows("preflop", np.zeros((1, 8)), "c", source="a.log")
    entry = CaseBase.open(tmp_path / "cb").manifest.sources[0]
    assert entry["sha256"] == hashlib.sha256(log.read_bytes()).hexdigest()
    assert entry["cases"] == 1 and entry["bytes"] == log.stat().st_size


def test_similarity_toml_written_and_checked(tmp_path: Path) -> None:
    from cbr.similarity import SimilarityConfig, default_casper

    rng = np.random.default_rng(2)
    write_demo(tmp_path / "cb", rng)
    cfg = CaseBase.open(tmp_path / "cb").similarity()
    assert cfg == default_casper()
    assert SimilarityConfig.from_toml(tmp_path / "cb" / "similarity.toml") == cfg

    class Two:
        name = "two"

        def feature_names(self, street):
            return ["a", "b"]

    # columns of its own and no default: refused at once, saying what to give
    with pytest.raises(ConfigError, match="feature set 'two' has no default similarity .* columns \\(a, b\\)"):
        with CaseBaseWriter(tmp_path / "other", feature_set=Two(), build_index=False) as w:
            w.add_rows("flop", np.zeros((1, 2)), "c")
    assert not (tmp_path / "other").exists()
    with pytest.raises(ConfigError, match="covers"):  # a similarity given for other columns
        with CaseBaseWriter(tmp_path / "other", feature_set=Two(), similarity=default_casper(),
                            build_index=False) as w:
            w.add_rows("flop", np.zeros((1, 2)), "c")
    assert not (tmp_path / "other").exists()


# ---- atomic builds ------------------------------------------------------------------
def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def test_crash_inside_writer_leaves_no_target(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    with pytest.raises(RuntimeError, match="power cut"):
        with CaseBaseWriter(tmp_path / "cb", build_index=False, part_rows=2) as w:
            w.add_rows("preflop", random_rows(rng, "preflop", 5), "ccccc")  # parts already flushed
            raise RuntimeError("power cut")
    assert not (tmp_path / "cb").exists()
    assert _leftovers(tmp_path) == []


def test_leftovers_of_a_killed_build_are_removed(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".cb.building-{dead.pid}-0123abcd"
    (stale / "cases").mkdir(parents=True)
    mine = tmp_path / f".cb.building-{os.getpid()}-feedbeef"  # a live build: kept
    mine.mkdir()
    write_demo(tmp_path / "cb", np.random.default_rng(17))
    assert not stale.exists() and mine.exists()


def test_existing_target_refused_or_replaced_at_the_end(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    target = tmp_path / "cb"
    first = write_demo(target, rng)
    with pytest.raises(CaseBaseError, match="already exists"):
        write_demo(target, rng)
    # a failing rebuild with overwrite leaves the old case base untouched
    with pytest.raises(KeyboardInterrupt):
        with CaseBaseWriter(target, build_index=False, overwrite=True) as w:
            w.add_rows("preflop", random_rows(rng, "preflop", 2), "ff")
            assert CaseBase.open(target).count("preflop") == len(first["preflop"][1])
            raise KeyboardInterrupt
    np.testing.assert_array_equal(CaseBase.open(target).cases("preflop").features, first["preflop"][0])
    second = write_demo(target, rng, overwrite=True)
    np.testing.assert_array_equal(CaseBase.open(target).cases("river").features, second["river"][0])
    assert _leftovers(tmp_path) == []


def test_refuses_to_replace_a_directory_that_is_not_a_case_base(tmp_path: Path) -> None:
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "thesis.tex").write_text("x")
    with pytest.raises(CaseBaseError, match="not a case base"):
        with CaseBaseWriter(tmp_path / "precious", overwrite=True, build_index=False):
            pass
    assert (tmp_path / "precious" / "thesis.tex").exists()


# ---- opening: schema and missing files -------------------------------------------------
def _edit_manifest(path: Path, **changes) -> None:
    m = json.loads((path / "manifest.json").read_text())
    m.update(changes)
    (path / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize("version, word", [(SCHEMA_VERSION + 1, "newer"), (SCHEMA_VERSION - 1, "older"),
                                           ("one", "missing or not an integer")])
def test_schema_version_mismatch_has_a_clear_message(tmp_path: Path, version, word) -> None:
    write_demo(tmp_path / "cb", np.random.default_rng(5))
    _edit_manifest(tmp_path / "cb", schema_version=version)
    with pytest.raises(CaseBaseError) as err:
        CaseBase.open(tmp_path / "cb")
    assert word in str(err.value) and f"reads version {SCHEMA_VERSION}" in str(err.value)


def test_missing_files_have_clear_messages(tmp_path: Path) -> None:
    with pytest.raises(CaseBaseError, match="does not exist"):
        CaseBase.open(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CaseBaseError, match="manifest.json is missing"):
        CaseBase.open(tmp_path / "empty")
    write_demo(tmp_path / "cb", np.random.default_rng(6))
    (tmp_path / "cb" / "cases" / "turn" / "part-00000.parquet").unlink()
    with CaseBase.open(tmp_path / "cb") as cb:  # a missing part stops only what reads it
        with pytest.raises(CaseBaseError, match="missing file cases/turn/part-00000.parquet"):
            cb.cases("turn")
        assert cb.count("flop") == len(cb.cases("flop"))


def test_count_disagreement_is_detected(tmp_path: Path) -> None:
    write_demo(tmp_path / "cb", np.random.default_rng(7))
    m = json.loads((tmp_path / "cb" / "manifest.json").read_text())
    m["parts"]["flop"][0]["rows"] += 1
    (tmp_path / "cb" / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(CaseBaseError, match="hold"):
        CaseBase.open(tmp_path / "cb")


# ---- the catalog ---------------------------------------------------------------------
def test_catalog_file_works_after_moving_the_directory(tmp_path: Path) -> None:
    data = write_demo(tmp_path / "cb", np.random.default_rng(8))
    moved = tmp_path / "elsewhere" / "renamed"
    moved.parent.mkdir()
    shutil.move(tmp_path / "cb", moved)
    con = duckdb.connect(str(moved / CATALOG), read_only=True)
    con.execute(f"SET file_search_path = '{moved}'")
    got = dict(con.execute("SELECT street, count(*) FROM cases GROUP BY ALL").fetchall())
    con.close()
    assert got == {s: len(data[s][1]) for s in STREETS}
    assert CaseBase.open(moved).sql("SELECT count(*) FROM cases_river").fetchone() == (len(data["river"][1]),)


def test_sql_errors_are_case_base_errors(tmp_path: Path) -> None:
    write_demo(tmp_path / "cb", np.random.default_rng(9))
    with pytest.raises(CaseBaseError, match="SQL failed"):
        CaseBase.open(tmp_path / "cb").sql("SELECT nonsense FROM nowhere")
    for nothing in ("", "  -- only a comment"):  # DuckDB runs nothing and returns None
        with pytest.raises(CaseBaseError, match="no statement to run"):
            CaseBase.open(tmp_path / "cb").sql_rows(nothing)


# ---- appends --------------------------------------------------------------------------
def test_append_is_visible_everywhere_and_ignores_orphans(tmp_path: Path) -> None:
    rng = np.random.default_rng(10)
    data = write_demo(tmp_path / "cb", rng)
    cb = CaseBase.open(tmp_path / "cb")
    n0 = cb.count()
    orphan = tmp_path / "cb" / "cases" / "flop" / "part-00007.parquet"
    shutil.copy(tmp_path / "cb" / "cases" / "flop" / "part-00000.parquet", orphan)  # a crash leftover
    assert CaseBase.open(tmp_path / "cb").count("flop") == len(data["flop"][1])
    row = random_rows(rng, "flop", 1)[0]
    ids = cb.append("flop", row, "r", hand_id="live-1", player="me")
    assert ids.tolist() == [n0]
    assert not orphan.exists()  # cleaned by the writer
    again = CaseBase.open(tmp_path / "cb")
    assert again.count("flop") == len(data["flop"][1]) + 1
    np.testing.assert_array_equal(again.cases("flop").features[-1], row)
    assert again.sql("SELECT source, player FROM cases WHERE case_id = ?".replace("?", str(n0))).fetchone() == \
        ("retained", "me")
    assert cb.count("flop") == again.count("flop")  # the appending handle sees it too
    assert cb.sql("SELECT count(*) FROM cases_flop").fetchone() == (again.count("flop"),)
    assert again.manifest.counts["flop"]["r"] == data["flop"][1].count("r")  # in the retention log, not a part
    assert cb.compact() == 1  # into a part: now the manifest counts it
    assert CaseBase.open(tmp_path / "cb").manifest.counts["flop"]["r"] == data["flop"][1].count("r") + 1


def test_retain_decision_and_compact(tmp_path: Path) -> None:
    fs = CasperFeatures(evaluator=StubEvaluator())
    with CaseBaseWriter(tmp_path / "cb", feature_set=fs, build_index=False) as w:
        w.add_decisions([make_dp(1, action="c")])
    cb = CaseBase.open(tmp_path / "cb")
    cb._feature_set = fs  # the stub evaluator instead of the installed one
    for i in range(3):
        cb.retain_hand([make_dp(1, action="r", hand_id=f"live-{i}")])
    assert cb.count("flop") == 4 and len(cb.manifest.parts["flop"]) == 1  # three log records, no new part
    before = cb.cases("flop")
    cb.compact()
    cb.merge_parts("flop")
    after = CaseBase.open(tmp_path / "cb").cases("flop")
    assert len(CaseBase.open(tmp_path / "cb").manifest.parts["flop"]) == 1
    np.testing.assert_array_equal(after.features, before.features)
    assert after.case_ids.tolist() == before.case_ids.tolist()
    assert len(list((tmp_path / "cb" / "cases" / "flop").glob("part-*.parquet"))) == 1


APPENDER = textwrap.dedent("""
    import sys, numpy as np
    from cbr.store import CaseBase
    cb = CaseBase.open(sys.argv[1])
    rng = np.random.default_rng(int(sys.argv[2]))
    i = 0
    while True:
        street = ("preflop", "flop", "turn", "river")[i % 4]
        d = 8 if street == "preflop" else 12
        cb.append(street, rng.random(d, dtype=np.float32), "fcr"[i % 3], hand_id=f"k{i}")
        i += 1
""")


def test_append_survives_sigkill(tmp_path: Path) -> None:
    """Kill an appending process at random moments: every reopen is consistent."""
    write_demo(tmp_path / "cb", np.random.default_rng(11))
    script = tmp_path / "appender.py"
    script.write_text(APPENDER)
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    rng = np.random.default_rng(12)
    before = CaseBase.open(tmp_path / "cb").count()
    for round_ in range(3):
        proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "cb"), str(round_)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        start = CaseBase.open(tmp_path / "cb").count()
        deadline = time.monotonic() + 30
        while CaseBase.open(tmp_path / "cb").count() < start + 3 and time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"appender died: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.02)
        time.sleep(float(rng.uniform(0.0, 0.05)))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        cb = CaseBase.open(tmp_path / "cb")  # validates every listed part against the manifest
        total = cb.count()
        assert total >= start + 3
        ids = np.concatenate([cb.cases(s).case_ids for s in STREETS])
        assert sorted(ids.tolist()) == list(range(total))
        assert cb.sql("SELECT count(*) FROM cases").fetchone() == (total,)
        for s in STREETS:
            t = pq.read_table(tmp_path / "cb" / cb.manifest.parts[s][-1]["file"])
            assert t.num_rows == cb.manifest.parts[s][-1]["rows"]
        cb.append("preflop", np.zeros(8, np.float32), "c")  # still writable; cleans leftovers
        assert CaseBase.open(tmp_path / "cb").count() == total + 1
    assert CaseBase.open(tmp_path / "cb").count() > before


# ---- indexes (cbr.retrieval) ------------------------------------------------------------
def test_index_built_saved_and_repaired_when_counts_disagree(tmp_path: Path) -> None:
    rng = np.random.default_rng(13)
    with CaseBaseWriter(tmp_path / "cb") as w:
        for s in STREETS:
            n = 30
            w.add_rows(s, random_rows(rng, s, n), list(rng.choice(list("fcr"), size=n)))
    cb = CaseBase.open(tmp_path / "cb")
    for s in STREETS:
        assert (tmp_path / "cb" / cb.manifest.index[s]["file"] / "index.faiss").is_file()
        index = cb.index(s)
        assert index.n_cases_ == 30
        X = cb.cases(s).features
        assert int(index.retrieve(X[7]).ids[0]) == 7  # ids are row numbers of the street table
    # append without loading the flop index: reopen notices and extends it
    cb2 = CaseBase.open(tmp_path / "cb")
    cb2.append("flop", random_rows(rng, "flop", 2), "cr")
    cb3 = CaseBase.open(tmp_path / "cb")
    assert cb3.index("flop").n_cases_ == 32
    # append with the index loaded: extended in memory and saved on close
    cb3.append("flop", random_rows(rng, "flop", 1), "f")
    assert cb3.index("flop").n_cases_ == 33
    cb3.close()
    assert CaseBase.open(tmp_path / "cb").manifest.index["flop"]["cases"] == 33
    # an index that disagrees with the cases (here: another similarity) is rebuilt
    from cbr.similarity import default_casper

    with CaseBase.open(tmp_path / "cb") as cb:
        cb.set_similarity(default_casper(threshold=0.9))
    cb4 = CaseBase.open(tmp_path / "cb")
    assert cb4.index("turn").threshold == 0.9 and cb4.index("turn").n_cases_ == 30


# ---- inspect and the CLI -----------------------------------------------------------------
def test_inspect_matches_numpy(tmp_path: Path) -> None:
    data = write_demo(tmp_path / "cb", np.random.default_rng(14))
    info = inspect(tmp_path / "cb")
    names = CaseBase.open(tmp_path / "cb").feature_names
    for s in STREETS:
        X, acts = data[s]
        assert info["counts"][s] == {"total": len(acts), **{a: acts.count(a) for a in "fcr"}}
        assert info["sources"][f"log-{s}"][s] == len(acts)
        for j, f in enumerate(names(s)):
            st = info["features"][s][f]
            col = X[:, j].astype(np.float64)
            assert st["min"] == pytest.approx(col.min(), abs=1e-6)
            assert st["max"] == pytest.approx(col.max(), abs=1e-6)
            assert st["mean"] == pytest.approx(col.mean(), abs=1e-6)
            assert st["q25"] == pytest.approx(np.quantile(col, 0.25), abs=1e-6)
            assert st["q95"] == pytest.approx(np.quantile(col, 0.95), abs=1e-6)


def test_resolve_casebase(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_demo(tmp_path / "casebases" / "mine", np.random.default_rng(15))
    monkeypatch.chdir(tmp_path)
    assert resolve_casebase("mine") == (tmp_path / "casebases" / "mine").resolve()
    assert resolve_casebase(tmp_path / "casebases" / "mine") == tmp_path / "casebases" / "mine"
    with pytest.raises(CaseBaseError, match=r"\(known: ([a-z-]+, )*mine\)"):
        resolve_casebase("yours")
    with pytest.raises(CaseBaseError, match=r"known: mine\)"):
        resolve_casebase("yours", search=(tmp_path / "casebases",))


def test_a_shipped_name_always_means_the_shipped_case_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty ./expert folder made plain `cbr` fail ('expert is not a case base'), and a copy at
    ./casebases/expert silently stood in for the shipped one."""
    from cbr.store import PACKAGED_CASEBASES

    (tmp_path / "expert").mkdir()
    write_demo(tmp_path / "casebases" / "default", np.random.default_rng(17))
    monkeypatch.chdir(tmp_path)
    assert resolve_casebase("expert") == PACKAGED_CASEBASES / "expert"
    assert resolve_casebase("default") == PACKAGED_CASEBASES / "default"
    assert resolve_casebase("./casebases/default").resolve() == (tmp_path / "casebases" / "default").resolve()
    assert resolve_casebase("./expert") == Path("./expert")  # a path is that folder


def test_cli_casebase_inspect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from cli import app

    data = write_demo(tmp_path / "casebases" / "demo", np.random.default_rng(16))
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    res = runner.invoke(app, ["casebase", "inspect", "demo", "--json"])
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    assert info["counts"]["turn"]["total"] == len(data["turn"][1])
    res = runner.invoke(app, ["casebase", "inspect", "demo", "--json", "--sql",
                              "SELECT street, count(*) AS n FROM cases GROUP BY street ORDER BY street"])
    assert res.exit_code == 0, res.output
    assert {r["street"]: r["n"] for r in json.loads(res.stdout)} == {s: len(data[s][1]) for s in STREETS}
    res = runner.invoke(app, ["casebase", "inspect", "demo"])
    assert res.exit_code == 0 and "hand_strength" in res.stdout
    res = runner.invoke(app, ["casebase", "inspect", "missing"])
    assert res.exit_code == 1 and "no case base 'missing'" in res.stderr


def test_cli_sql_rows_are_capped_unless_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from cli import app

    data = write_demo(tmp_path / "casebases" / "demo", np.random.default_rng(17))
    total = sum(len(data[s][1]) for s in STREETS)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    query = "SELECT case_id FROM cases ORDER BY case_id"
    res = runner.invoke(app, ["casebase", "inspect", "demo", "--json", "--sql", query, "--limit", "5"])
    assert res.exit_code == 0, res.output
    assert [r["case_id"] for r in json.loads(res.stdout)] == list(range(5))
    assert "first 5 rows shown" in res.stderr
    res = runner.invoke(app, ["casebase", "inspect", "demo", "--json", "--sql", query, "--all"])
    assert res.exit_code == 0 and len(json.loads(res.stdout)) == total and "rows shown" not in res.stderr
    res = runner.invoke(app, ["casebase", "inspect", "demo", "--json", "--sql", query])  # default cap: 100
    assert len(json.loads(res.stdout)) == min(total, 100)
    res = runner.invoke(app, ["casebase", "inspect", "demo", "--sql", query, "--limit", "-1"])
    assert res.exit_code == 2
    for contradictory in (["--sql", query, "--limit", "2", "--all"], ["--limit", "2"], ["--all"]):
        res = runner.invoke(app, ["casebase", "inspect", "demo", *contradictory])  # --all won silently, or ignored
        assert res.exit_code == 2 and ("not both" in res.output or "go with --sql" in res.output), res.output


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see the query running")
def test_cli_sql_ctrl_c_is_one_line_exit_130(tmp_path: Path) -> None:
    write_demo(tmp_path / "cb", np.random.default_rng(18))
    slow = "SELECT sum(a.range * b.range) FROM range(200000000) a, range(1000) b"
    proc = subprocess.Popen([sys.executable, str(REPO / "cli.py"), "casebase", "inspect", str(tmp_path / "cb"),
                             "--sql", slow], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 60
        while _cpu_seconds(proc.pid) < 3.0:  # imports and opening take ~1 s of CPU: then well into the query
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.1)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        assert time.monotonic() - t0 < 5
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err.strip() == "interrupted"


def test_a_rare_share_is_shown_visibly_below_the_threshold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cbr casebase merge` warned `turn: only 62 fold cases among 6,525 (1.0% < 1%)`: the share,
    0.95%, was rounded up to the threshold it is below. Build, inspect and query's wording show it
    with the digits it takes."""
    from typer.testing import CliRunner

    from cbr.store.honesty import action_warnings
    from cli import app

    rng = np.random.default_rng(23)
    with CaseBaseWriter(tmp_path / "casebases" / "rare", build_index=False) as w:
        for s in STREETS:
            acts = ["f"] * (62 if s == "turn" else 700) + ["r"] * 2000
            w.add_rows(s, random_rows(rng, s, len(acts) + 4463), acts + ["c"] * 4463)
    assert [x for x in w.warnings if x.startswith("turn")] == [
        "turn: only 62 fold cases among 6,525 (0.95% < 1%): retrieval will rarely recommend to fold on the turn"]
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["casebase", "inspect", "rare"])
    assert res.exit_code == 0 and "(0.95% < 1%)" in res.stderr and "(1.0% < 1%)" not in res.stderr, res.stderr
    said = action_warnings({"turn": {"total": 6525, "f": 62, "c": 4463, "r": 2000}}, wording="answer", casebase="rare")
    assert said == ["case base 'rare' has only 62 fold cases of 6,525 on the turn (0.95%): fold is rarely recommended"]


def test_no_fold_cases_are_reported_by_build_and_inspect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from cli import app

    rng = np.random.default_rng(19)
    with CaseBaseWriter(tmp_path / "casebases" / "showdown", build_index=False) as w:
        for s in STREETS:
            acts = ["c"] * 150 + ["r"] * 49 + (["f"] if s == "turn" else ["c"])  # no folds; turn: 1 in 200
            w.add_rows(s, random_rows(rng, s, 200), acts)
    assert any(x.startswith("flop: no fold cases among 200") for x in w.warnings)
    assert any(x.startswith("turn: only 1 fold case among 200 (0.5% < 1%)") for x in w.warnings)
    assert not any("check/call" in x or "bet/raise" in x for x in w.warnings)
    info = inspect(tmp_path / "casebases" / "showdown")
    assert info["warnings"] == w.warnings
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["casebase", "inspect", "showdown"])
    assert res.exit_code == 0 and "warning: preflop: no fold cases among 200" in res.stderr
    # a case base with every action on every street has nothing to warn about
    with CaseBaseWriter(tmp_path / "fine", build_index=False) as w:
        for s in STREETS:
            w.add_rows(s, random_rows(rng, s, 100), ["f", "c", "r", "c"] * 25)
    assert w.warnings == [] and inspect(tmp_path / "fine")["warnings"] == []


def test_build_report_warns_about_missing_folds_and_no_limit(tmp_path: Path) -> None:
    from cbr.build.local import build_casebase

    hh = tmp_path / "nl.phh"
    hh.write_text(textwrap.dedent("""\
        variant = 'NT'
        antes = [0, 0]
        blinds_or_straddles = [1, 2]
        min_bet = 2
        starting_stacks = [200, 200]
        actions = ['d dh p1 AsAh', 'd dh p2 KsKh', 'p2 cbr 6', 'p1 cc', 'd db 2c3d4h', 'p1 cc', 'p2 cc',
                   'd db 9s', 'p1 cc', 'p2 cc', 'd db Td', 'p1 cc', 'p2 cc', 'p1 sm AsAh', 'p2 sm KsKh']
        players = ['a', 'b']
        """))
    report = build_casebase([hh], tmp_path / "cb")
    assert any("no-limit" in x for x in report.warnings), report.warnings
    assert any(x.startswith("preflop: no fold cases") for x in report.warnings)
    assert report.to_dict()["warnings"] == report.warnings


def test_case_arrays_are_shared_read_only_and_follow_appends(tmp_path: Path) -> None:
    """cases() builds a street's arrays once (retrieval calls it per query); they are
    read-only, and an append (here or in another CaseBase) gives new ones."""
    rng = np.random.default_rng(21)
    data = write_demo(tmp_path / "cb", rng)
    with CaseBase.open(tmp_path / "cb") as cb, CaseBase.open(tmp_path / "cb") as other:
        a = cb.cases("turn")
        assert cb.cases("turn") is a
        for arr in (a.features, a.actions, a.outcomes, a.case_ids):
            with pytest.raises(ValueError, match="read-only"):
                arr[0] = arr[1]
        np.testing.assert_array_equal(a.features, data["turn"][0])
        row = random_rows(rng, "turn", 1)
        cb.append("turn", row, "r", outcome=2.5)
        b = cb.cases("turn")
        assert b is not a and len(b) == len(a) + 1 and b.actions[-1] == "r" and b.outcomes[-1] == 2.5
        np.testing.assert_array_equal(b.features[-1], row[0])
        assert len(a) == len(data["turn"][1])  # what a caller holds does not change under it
        other.append("turn", row, "c")
        cb.close()
        reopened = CaseBase.open(tmp_path / "cb")
        try:
            assert len(reopened.cases("turn")) == len(a) + 2
        finally:
            reopened.close()
