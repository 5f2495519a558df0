"""A bot playing from an opponent-model store (``poki-wt:store=PATH``) in more than one worker
process: one process at a time may have a store open (DuckDB's lock), so ``bot_table.py --bots
poki-wt:store=P --workers 2`` played a cell, then stopped with ``error: model store P is in use by
another process``. Every script, command and library call that runs specs in worker processes
refuses such a run now, before any work (no store made, no output), naming the store and saying
to use one worker; a command's default number of workers is one for such a bot."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cbr.errors import ConfigError
from cbr.exploit.measure import exploit
from cbr.models.store import ModelStore
from cbr.play.league import run_league
from cbr.play.match import run_match
from cbr.policies.spec import PolicyFileError
from cli import app
from tests.conftest import REPO, require_native

runner = CliRunner()


def clash(store: Path) -> str:
    return (f"model store {store} can be open in one process at a time, and poki-wt, playing from it, would "
            "play in more than one worker process at once")


#: (script, arguments with a bot playing from the store S, the option of its worker processes);
#: each script's default is 2 processes unless the arguments give the number.
SCRIPTS = [
    ("bot_table", ["--bots", "poki-wt:store=S", "--opponents", "call,raise", "--workers", "2"], "--workers"),
    ("bot_table", ["--bots", "ehs", "--opponents", "call,poki-wt:store=S"], "--workers"),
    ("teacher", ["--opponents", "call,poki-wt:store=S:learn=0"], "--workers"),
    ("exploit_table", ["--bots", "poki-wt:store=S"], "--workers"),
    ("adaptation_matrix", ["--opponents", "poki-wt:store=S"], "-j/--jobs"),
    ("adaptive", ["--fixed", "ehs,poki-wt:store=S"], "-j/--jobs"),
    ("casper_table", ["--bot", "poki-wt:store=S", "--jobs", "2"], "--jobs"),
    ("reuse_policies", ["--also", "poki-wt:store=S", "--jobs", "2"], "--jobs"),
]


@pytest.mark.parametrize("name, args, option", SCRIPTS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(SCRIPTS)])
def test_a_script_refuses_a_store_in_several_workers_before_any_work(name: str, args: list[str], option: str,
                                                                    tmp_path: Path) -> None:
    store = tmp_path / "p.duckdb"
    work = tmp_path / "work"
    work.mkdir()
    argv = [a.replace("store=S", f"store={store}") for a in args]
    p = subprocess.run([sys.executable, str(REPO / "experiments" / f"{name}.py"), *argv, "--out", str(work / "out")],
                       cwd=work, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, (p.stdout, p.stderr)
    longest = max(option.split("/"), key=len)
    assert p.stderr.splitlines()[-1] == f"{name}.py: error: argument {option}: {clash(store)}: give {longest} 1", p.stderr
    assert p.stderr.startswith("usage: ") and "Traceback" not in p.stderr
    assert p.stdout == "" and list(work.iterdir()) == [] and not store.exists()


def test_bot_table_with_one_worker_plays_from_the_store(tmp_path: Path) -> None:
    """The run the message asks for: the matches played, the store filled."""
    require_native()
    store = tmp_path / "p.duckdb"
    p = subprocess.run([sys.executable, str(REPO / "experiments" / "bot_table.py"), "--bots", f"poki-wt:store={store}",
                        "--opponents", "call,raise", "--hands", "20", "--skip", "lbr,time", "--workers", "1",
                        "--out", str(tmp_path / "out")], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = json.loads((tmp_path / "out" / "bot-table-seed2.json").read_text())["rows"][f"poki-wt:store={store}"]
    assert sorted(rows) == ["call", "raise"]
    with ModelStore.open(store, read_only=True) as s:
        assert s.players()  # it learned its opponents as it played


def test_exploit_refuses_workers_for_a_store(tmp_path: Path) -> None:
    store = tmp_path / "p.duckdb"
    spec = f"poki-wt:store={store}"
    with pytest.raises(ConfigError, match=f"^{re.escape(clash(store))}: measure it with workers=1$"):
        exploit(spec, hands=4, chunk_deals=1, workers=2)
    assert not store.exists()
    r = runner.invoke(app, ["exploit", spec, "--hands", "4", "--chunk-deals", "1", "--workers", "2"])
    assert r.exit_code == 2, r.output
    assert f"Invalid value for '--workers': {clash(store)}: give --workers 1" in " ".join(
        r.output.replace("│", " ").split()), r.output
    assert not store.exists()


def test_exploit_of_a_store_plays_in_one_process_by_default(tmp_path: Path) -> None:
    """``cbr exploit`` plays its chunks in one worker a CPU by default: 2 chunks here, and 2 workers
    on a machine of 2 CPUs or more, the second of which stopped the run; with a bot playing from a
    store, one worker plays them all."""
    store = tmp_path / "p.duckdb"
    r = runner.invoke(app, ["exploit", f"poki-wt:store={store}", "--hands", "4", "--chunk-deals", "1",
                            "--preflop", "call"])
    assert r.exit_code == 0, r.output
    assert "over 4 hands (2 duplicate deals)" in r.stdout, r.stdout
    assert "in use by another process" not in r.output and store.exists()


def test_a_league_refuses_workers_or_dask_for_a_store(tmp_path: Path) -> None:
    store = tmp_path / "p.duckdb"
    bots = [f"poki-wt:store={store}", "call", "raise"]
    with pytest.raises(ConfigError, match=f"^{re.escape(clash(store))}: play this league in one process"):
        run_league(bots, 4, workers=2)
    with pytest.raises(ConfigError, match=f"^{re.escape(clash(store))}: play this league in one process"):
        run_league(bots, 4, scheduler="tcp://127.0.0.1:1")  # refused before Dask is asked for
    for args, option, then in ((["-j", "2"], "--workers", ""),
                               (["--scheduler", "local"], "--scheduler", ", without --scheduler")):
        r = runner.invoke(app, ["league", "--players", ",".join(bots), "--hands", "4", *args])
        assert r.exit_code == 2, r.output
        assert f"Invalid value for '{option}': {clash(store)}: give --workers 1{then}" in " ".join(
            r.output.replace("│", " ").split()), r.output
    assert not store.exists()


def test_a_league_of_a_store_plays_in_one_process_by_default(tmp_path: Path) -> None:
    """``cbr league`` plays in one worker a CPU by default: with a bot playing from a store, in one
    (that process is the only one opening the store, whatever the CPUs)."""
    store = tmp_path / "p.duckdb"
    r = runner.invoke(app, ["league", "--players", f"poki-wt:store={store},call,raise", "--hands", "20", "--json"])
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.stdout)["pairings"]) == 3
    with ModelStore.open(store, read_only=True) as s:
        assert s.players()


def test_a_store_in_use_is_an_error_not_a_bot_without_models(tmp_path: Path) -> None:
    """``poki-wt`` read its store in the middle of following the betting, whose errors it takes for
    betting it cannot follow: a store another process had open (``ModelError``, a ``ValueError``)
    made it play unweighted EHS, silently (so LBR in 2 workers measured a bot without its models
    in one of them). The store's error is the match's error now."""
    store = tmp_path / "p.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", "import sys; from cbr.models.store import ModelStore; "
                               f"s = ModelStore.open({str(store)!r}, create=True); print('open', flush=True); "
                               "sys.stdin.read(); s.close()"], cwd=REPO, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        with pytest.raises(PolicyFileError, match=f"option 'store': model store {re.escape(str(store))} is in use by "
                           "another process") as raised:
            run_match([f"poki-wt:store={store}:learn=0", "call"], 4, seed=1)
        assert raised.value.option == "store"
    finally:
        holder.communicate("", timeout=60)
    assert holder.returncode == 0
