"""The model store remembers the logs it read (issue 16, defect 5a): `cbr players build` on
the same logs twice used to double every count (sagerbot 1,317 -> 2,634 hands). A log whose
bytes were read before is skipped with a note and listed in --json; --reset starts over; the
sources are written in the transaction of the models; a store older than the table gets it
on its first build."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from cbr.models.store import SCHEMA_VERSION, ModelStore, build_store, inspect_store
from cli import app
from tests.conftest import shared_path

runner = CliRunner()


def cbr(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def _hands(path: Path) -> dict[str, int]:
    return {m.player: m.hands for m in inspect_store(path)}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_same_log_twice_counts_once(tmp_path: Path) -> None:
    log = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    store = tmp_path / "p.duckdb"
    r = cbr("players", "build", log, "--store", store, "--json")
    assert r.exit_code == 0, r.output
    first = json.loads(r.stdout)
    once = _hands(store)
    assert first["skipped_sources"] == [] and [s["sha256"] for s in first["sources"]] == [_sha256(log)]
    # again, and a copy under another name in the same build: nothing is counted twice
    copy = tmp_path / "copy.log"
    shutil.copy(log, copy)
    r = cbr("players", "build", log, copy, "--store", store, "--json")
    assert r.exit_code == 0, r.output
    again = json.loads(r.stdout)
    assert again["hands"] == 0 and again["sources"] == []
    assert [(s["path"], s["sha256"], s["read_as"]) for s in again["skipped_sources"]] == \
        [(str(log), _sha256(log), str(log)), (str(copy), _sha256(log), str(log))]
    assert _hands(store) == once
    # without --json: one note per log skipped, on stderr, and exit 0
    r = cbr("players", "build", log, "--store", store)
    assert r.exit_code == 0, r.output
    notes = [ln for ln in r.stderr.splitlines() if ln.startswith("note:")]
    assert len(notes) == 1 and str(log) in notes[0] and "already read" in notes[0] and "--reset" in notes[0]
    assert _hands(store) == once
    # --reset starts over: one log's hands again, and the sources of this build only
    r = cbr("players", "build", copy, "--store", store, "--reset", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["hands"] == sum(once.values()) // 2
    assert _hands(store) == once
    with ModelStore.open(store, read_only=True) as s:
        assert [(x["path"], x["hands"]) for x in s.sources()] == [(str(copy), json.loads(r.stdout)["hands"])]


def test_irc_database_read_twice_keeps_sagerbots_hands(tmp_path: Path) -> None:
    logs = shared_path("irc")
    store = tmp_path / "irc.duckdb"
    first = build_store([logs], store)
    before = _hands(store)
    assert first.hands > 0 and before["sagerbot"] > 0
    again = build_store([logs], store)
    assert again.hands == 0 and len(again.skipped_sources) == len(first.sources) == 1
    assert _hands(store) == before


def test_a_new_log_of_known_players_still_adds(tmp_path: Path) -> None:
    log = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    lines = log.read_text().splitlines(keepends=True)
    last = max(i for i, ln in enumerate(lines) if ln.startswith("STATE:"))
    edited = tmp_path / "edited.log"  # one hand fewer: other bytes, another source
    edited.write_text("".join(lines[:last] + lines[last + 1:]))
    store = tmp_path / "p.duckdb"
    a = build_store([log], store)
    b = build_store([edited], store)
    assert b.skipped_sources == [] and b.hands == a.hands - 1
    assert set(_hands(store).values()) == {a.hands + b.hands}


def test_an_interrupted_build_records_neither_models_nor_sources(tmp_path: Path) -> None:
    folder = shared_path("acpc", "dealer_example_limit")
    store = tmp_path / "p.duckdb"
    ModelStore.open(store, create=True).close()  # a store that exists: left as it was
    calls = []

    def progress(n: int, total: int | None = None) -> None:
        calls.append(n)
        if len(calls) == 3:  # after the second log was read
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_store([folder], store, progress=progress)
    with ModelStore.open(store, read_only=True) as s:
        assert s.players() == [] and s.sources() == []
    report = build_store([folder], store)
    assert report.hands == 2000 and len(report.sources) == 2


def test_a_store_made_before_the_sources_table_gets_it_on_its_first_build(tmp_path: Path) -> None:
    log = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    store = tmp_path / "old.duckdb"
    build_store([log], store)
    con = duckdb.connect(str(store))
    con.execute("DROP TABLE sources")  # as a store written by the engine before issue 16
    con.close()
    with ModelStore.open(store, read_only=True) as s:
        assert s.sources() == [] and s.meta()["schema_version"] == str(SCHEMA_VERSION) == "1"
        old = {p: s.model(p).hands for p in s.players()}
    other = shared_path("acpc", "dealer_example_limit", "3p.limit.h1000.r0.log")
    report = build_store([other], store)
    with ModelStore.open(store, read_only=True) as s:
        assert [x["sha256"] for x in s.sources()] == [_sha256(other)]
    assert report.hands > 0 and _hands(store)["p1"] == old["p1"] + report.hands
    assert build_store([other], store).hands == 0


def test_an_interrupted_build_of_a_new_store_leaves_no_store_behind(tmp_path: Path) -> None:
    folder = shared_path("acpc", "dealer_example_limit")
    store = tmp_path / "p.duckdb"

    def progress(n: int, total: int | None = None) -> None:
        if total is None:  # after the first log was read
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_store([folder], store, progress=progress)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
