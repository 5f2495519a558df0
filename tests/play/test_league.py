"""Leagues: `run_league` (in one process, in worker processes, on a local Dask cluster: the same
league), its standings, and `cbr league` (tables, --json, --plot, refusals, Ctrl-C)."""
from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cbr.errors import GameError
from cbr.play.league import interrupted_league, pairings_of, play_pairing, run_league
from cbr.play.match import run_match
from cbr.policies.spec import PolicySpecError
from cli import app
from tests.conftest import REPO, default_sigint

runner = CliRunner()
PNG = b"\x89PNG\r\n\x1a\n"
BOTS = ["ehs", "call", "lag"]


@pytest.fixture(scope="module")
def league():
    return run_league(BOTS, 30, seed=4)


def test_every_pairing_is_a_duplicate_match_with_its_own_seed(league):
    assert [(p.a, p.b) for p in league.pairings] == pairings_of(BOTS) == [("ehs", "call"), ("ehs", "lag"),
                                                                         ("call", "lag")]
    for i, p in enumerate(league.pairings):
        m = run_match([p.a, p.b], 30, duplicate=True, seed=4 + i)
        assert (p.seed, p.hands) == (4 + i, 30)
        assert (p.sb_per_hand, p.sb_ci, p.mbb_per_hand) == (m.players[0].sb_per_hand, m.players[0].sb_ci,
                                                            m.players[0].mbb_per_hand)
    assert league.mode == "round-robin" and not league.interrupted


def test_standings_are_each_bot_s_mean_over_its_pairings(league):
    table = {s.bot: s for s in league.standings()}
    assert set(table) == set(BOTS)
    for bot in BOTS:
        mine = [(p.sb_per_hand, p.sb_ci) if p.a == bot else (-p.sb_per_hand, p.sb_ci)
                for p in league.pairings if bot in (p.a, p.b)]
        s = table[bot]
        assert s.pairings == 2
        assert math.isclose(s.sb_per_hand, sum(v for v, _ in mine) / 2)
        assert math.isclose(s.sb_ci, math.sqrt(sum(h * h for _, h in mine)) / 2)
        assert s.won == sum(v - h > 0 for v, h in mine) and s.lost == sum(v + h < 0 for v, h in mine)
    means = [s.sb_per_hand for s in league.standings()]
    assert means == sorted(means, reverse=True)
    assert math.isclose(sum(means), 0.0, abs_tol=1e-9)   # heads-up: what one wins the other loses


def test_worker_processes_and_dask_play_the_same_league(league):
    assert run_league(BOTS, 30, seed=4, workers=2).pairings == league.pairings
    assert run_league(BOTS, 30, seed=4, scheduler="local", dask_workers=2).pairings == league.pairings


def test_gauntlet_and_progress():
    calls = []
    r = run_league(["call", "lag"], 11, hero="ehs", progress=lambda n, total=None: calls.append((n, total)))
    assert r.mode == "gauntlet" and [(p.a, p.b) for p in r.pairings] == [("ehs", "call"), ("ehs", "lag")]
    assert [p.hands for p in r.pairings] == [12, 12]                # whole deals of two hands
    assert calls == [(0, 24), (12, None), (12, None)]
    assert r.to_dict()["hero"] == "ehs" and r.bots == ("ehs", "call", "lag")


def test_progress_from_worker_processes_counts_every_hand_as_it_is_played():
    calls = []
    r = run_league(["call", "raise", "ehs"], 300, workers=2, progress=lambda n, total=None: calls.append((n, total)))
    assert calls[0] == (0, 900) and sum(n for n, _ in calls) == 900 == sum(p.hands for p in r.pairings)
    assert len(calls) > 1 + 3  # hands reported while the pairings play, not once a pairing


def test_refusals():
    with pytest.raises(GameError, match="given twice"):
        run_league(["ehs", "call", "ehs"], 10)
    with pytest.raises(GameError, match="given twice"):
        run_league(["ehs", "call"], 10, hero="call")
    with pytest.raises(GameError, match="at least two"):
        run_league(["ehs"], 10)
    with pytest.raises(PolicySpecError):
        run_league(["ehs", "nosuchbot"], 10)
    assert play_pairing("call", "raise", 4, 0).hands == 4


def test_cli_tables_json_and_plot(tmp_path: Path):
    plot = tmp_path / "league.png"
    result = runner.invoke(app, ["league", "--players", "ehs,call,lag", "-n", "20", "-j", "1", "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    assert "round-robin: 3 pairings" in result.output and "standings" in result.output
    assert f"plot written to {plot}" in result.output
    data = plot.read_bytes()
    assert data.startswith(PNG) and len(data) > 5000
    result = runner.invoke(app, ["league", "-p", "call,lag", "--gauntlet", "ehs", "-n", "20", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["mode"] == "gauntlet" and out["pairings_played"] == out["pairings_planned"] == 2
    assert [p["b"] for p in out["pairings"]] == ["call", "lag"] and len(out["standings"]) == 3


@pytest.mark.parametrize("args, says", [
    (["--players", "ehs"], "at least two"),
    (["--players", "ehs,ehs"], "given twice"),
    (["--players", "ehs,nosuchbot"], "nosuchbot"),
    (["--bots", "ehs,nosuchbot"], "'--players': unknown policy 'nosuchbot'"),
    (["--players", "ehs,call", "--overwrite"], "--plot"),
    (["--players", "ehs,call", "--dask-workers", "2"], "--scheduler local"),
    (["--players", "ehs,call", "--scheduler", "local", "-j", "2"], "--workers"),
    (["--players", "ehs,call", "--plot", "x.gif"], ".png"),
    ([], "Missing option '--players' / '-p'."),
    (["-n", "20"], "Missing option '--players' / '-p'."),
    (["--players", "ehs,call", "--bots", "ehs,lag"], "--bots (the old name of --players) and --players disagree"),
])
def test_cli_usage_errors(args: list[str], says: str):
    result = runner.invoke(app, ["league", *args])
    assert result.exit_code == 2 and says in " ".join(result.output.split()), result.output


def test_cli_names_the_bots_players_as_cbr_match_does_and_keeps_the_old_name():
    """``cbr match --players`` but ``cbr league --bots``: a newcomer's ``cbr league --players
    ehs,call`` was "No such option". The bots are --players (-p) now; --bots (-b), the old name,
    still plays the same league, and --help shows only the new name."""
    runs = [runner.invoke(app, ["league", option, "ehs,call,lag", "-n", "20", "-j", "1", "--seed", "3", "--json"])
            for option in ("--players", "-p", "--bots", "-b")]
    assert [r.exit_code for r in runs] == [0] * 4, [r.output for r in runs]
    leagues = [json.loads(r.stdout) for r in runs]
    assert leagues[0]["pairings_played"] == 3 and all(league == leagues[0] for league in leagues[1:])
    same = runner.invoke(app, ["league", "--players", "ehs,call,lag", "--bots", "ehs,call,lag", "-n", "20", "-j", "1",
                               "--seed", "3", "--json"])
    assert same.exit_code == 0 and json.loads(same.stdout) == leagues[0], same.output
    shown = runner.invoke(app, ["league", "--help"], env={"COLUMNS": "200"}).stdout
    assert "--players" in shown and "--bots" not in shown and "-b " not in shown, shown


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_keeps_the_pairings_finished(tmp_path: Path, workers: str):
    """SIGINT in the middle of a league: the pairings finished are printed (JSON, flagged
    interrupted), the PNG is drawn from them, exit 130, and no worker is left running."""
    plot = tmp_path / "l.png"
    code = "import sys; from cli import app; sys.argv[0] = 'cbr'; app()"
    proc = subprocess.Popen([sys.executable, "-c", code, "league", "--bots", "random,fold,call,raise,lag,ehs",
                             "-n", "20000", "-j", workers, "--json", "--plot", str(plot)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=default_sigint)
    try:
        time.sleep(9.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and err.strip() == "interrupted", err
    data = json.loads(out)
    assert data["interrupted"] is True and 0 < data["pairings_played"] < data["pairings_planned"] == 15
    assert plot.read_bytes().startswith(PNG)
    left = subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True, text=True).stdout.split()
    assert left == [], left


def test_interrupted_league_of_another_exception():
    assert interrupted_league(KeyboardInterrupt()) is None


def test_a_scheduler_given_by_its_address(league):
    """A Dask cluster already running, reached over TCP on loopback by its address."""
    import distributed  # the test extra's dask[distributed]

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        assert run_league(BOTS, 30, seed=4, scheduler=cluster.scheduler_address).pairings == league.pairings


def test_a_terminal_shows_the_progress_bar():
    from tests.conftest import run_on_a_terminal

    code, out, shown = run_on_a_terminal(["league", "--bots", "call,raise,ehs", "-n", "600", "-j", "2"])
    assert code == 0 and "standings" in out
    assert "league: hands" in shown and "/1800" in shown.replace(",", ""), shown[-500:]


def test_an_odd_hand_count_is_reported_as_played():
    """A duplicate pairing plays whole deals of two hands: 11 asked is 12 played, and the
    result says 12 (it said 11)."""
    from cbr.play.league import run_league

    r = run_league(["call", "raise"], 11, seed=1)
    assert r.hands == 12 and all(p.hands == 12 for p in r.pairings)


def test_a_league_stopped_before_any_pairing_ended_says_so(capsys, tmp_path: Path):
    """It printed two empty tables and wrote no PNG without a word."""
    from cbr.cli.league import _print_league
    from cbr.play.league import LeagueResult

    result = LeagueResult(("call", "raise", "ehs"), None, 200, 0, 3)
    result.interrupted = True
    _print_league(result, False, str(tmp_path / "l.png"))
    out, err = capsys.readouterr()
    assert "no pairing finished before the league stopped: no standings, no plot written" in err
    assert out == "" and not (tmp_path / "l.png").exists()
