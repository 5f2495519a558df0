"""`cbr build` and `cbr query` through typer's CliRunner; figures checked against the library."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cbr.game.gamedef import STREETS, preset
from cbr.logs.writers import AcpcLogWriter
from cbr.match import run_match
from cbr.matchstate import from_matchstate
from cbr.query import answer
from cbr.situation import situation
from cbr.store import CaseBase
from cli import app

runner = CliRunner()


def cbr(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def one_error_line(result) -> str:
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.output
    return lines[0]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path, dict]:
    """A generated heads-up log, and the case base `cbr build --json` made of it."""
    folder = tmp_path_factory.mktemp("cli")
    log = folder / "hu.log"
    with AcpcLogWriter(log) as w:
        run_match(["random", "raise"], 50, seed=41, log=w)
    result = cbr("build", log, "--out", folder / "cb", "--json")
    assert result.exit_code == 0, result.output
    return log, folder / "cb", json.loads(result.stdout)


# ---------------------------------------------------------------- cbr build
def test_build_json_report(built) -> None:
    log, out, report = built
    with CaseBase.open(out) as cb:
        assert report["cases_per_street"] == {s: cb.count(s) for s in STREETS}
        assert report["cases"] == cb.count()
    assert report["hands"] == 50 and report["sources"] == 1 and report["skipped"] == 0
    assert report["path"] == str(out)
    assert report["hands_per_second"] > 0


def test_build_text_report_and_overwrite(built, tmp_path: Path) -> None:
    log, _, report = built
    out = tmp_path / "cb"
    result = cbr("build", log, "-o", out, "--players", "raise")
    assert result.exit_code == 0, result.output
    with CaseBase.open(out) as cb:
        counts = {s: cb.count(s) for s in STREETS}
        assert set(cb.table("preflop").column("player").to_pylist()) == {"raise"}
    per = ", ".join(f"{s} {n}" for s, n in counts.items())
    assert f"built {out}: {sum(counts.values())} cases ({per}) from 50 hands in 1 source(s)" in result.stdout
    assert sum(counts.values()) < report["cases"]
    # an existing case base is refused, then replaced with --overwrite
    line = one_error_line(cbr("build", log, "-o", out))
    assert "already exists" in line and "--overwrite" in line
    result = cbr("build", log, "-o", out, "--overwrite")
    assert result.exit_code == 0, result.output
    with CaseBase.open(out) as cb:
        assert cb.count() == report["cases"]


def test_build_lists_skipped_hands(tmp_path: Path) -> None:
    log = tmp_path / "bad.log"
    log.write_text("STATE:0:cc/crc/cc/cc:5d5c|9hQd/8dAs8s/4h/6d:20|-20:p1|p2\n"
                   "STATE:1:cc/crc/cc/cc:5d5c|5dQd/8dAs8s/4h/6d:20|-20:p1|p2\n"
                   "STATE:2:garbage\n")
    result = cbr("build", log, "-o", tmp_path / "cb")
    assert result.exit_code == 0, result.output
    assert "2 hand(s) skipped:" in result.stdout
    assert f"{log}:2: " in result.stdout and f"{log}:3: " in result.stdout


@pytest.mark.parametrize("args, words", [
    (["no/such/logs"], "no/such/logs"),
    (["{tmp}"], "no log files"),
])
def test_build_bad_paths_exit_1_with_one_line(args, words, tmp_path: Path) -> None:
    args = [a.format(tmp=tmp_path) for a in args]
    line = one_error_line(cbr("build", *args, "-o", tmp_path / "cb"))
    assert words in line
    assert not (tmp_path / "cb").exists()


def test_build_usage_error_exits_2(tmp_path: Path) -> None:
    assert cbr("build", tmp_path).exit_code == 2  # --out missing
    assert cbr("build", tmp_path, "-o", tmp_path / "cb", "--workers", "0").exit_code == 2


# ---------------------------------------------------------------- cbr query
def library_answer(out: Path, dp, weighted=None):
    with CaseBase.open(out) as cb:
        return answer(cb, dp, weighted=weighted)


def test_query_with_options_text(built) -> None:
    _, out, _ = built
    result = cbr("query", "-c", out, "--hole", "AdQc", "--board", "3h4cJh", "--position", "1",
                 "--to-call", "1", "--pot", "5", "--prev-bets", "2")
    assert result.exit_code == 0, result.output
    dp = situation(hole="AdQc", board="3h4cJh", players=2, position=1, to_call=1, pot=5,
                   previous_round_bets=2, game=preset("holdem.limit.2p"))
    f, c, r = library_answer(out, dp).triple
    assert f"fold {f:.3f}   check/call {c:.3f}   bet/raise {r:.3f}" in result.stdout
    assert "flop" in result.stdout and "similarity" in result.stdout
    assert "top " in result.stdout  # the table of the cases behind the triple


def test_query_json_matches_the_library(built) -> None:
    _, out, _ = built
    result = cbr("query", "-c", out, "--hole", "7c2d", "--to-call", "0.5", "--position", "0", "--json", "--top", "2")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    dp = situation(hole="7c2d", players=2, position=0, to_call=0.5, game=preset("holdem.limit.2p"))
    ans = library_answer(out, dp)
    assert [data["triple"][k] for k in ("fold", "check_call", "bet_raise")] == pytest.approx(ans.triple)
    assert data["street"] == "preflop" and data["retrieved"] == ans.retrieved
    assert len(data["cases"]) == min(2, ans.retrieved)
    assert {"source", "hand_id", "player"} <= set(data["cases"][0]["provenance"])


def test_query_matchstate_explain_json(built) -> None:
    _, out, _ = built
    ms = "MATCHSTATE:1:0:crc/r:|AdQc/3h4cJh"
    result = cbr("query", "-c", out, "--matchstate", ms, "--explain", "--json", "--weighted")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    ans = library_answer(out, from_matchstate(ms, preset("holdem.limit.2p")), weighted=True)
    assert [data["triple"][k] for k in ("fold", "check_call", "bet_raise")] == pytest.approx(ans.triple)
    assert data["weighted"] is True
    assert len(data["cases"]) == ans.retrieved  # --explain --json: every retrieved case
    assert set(data["cases"][0]["local"]) == set(data["features"]) == set(data["weights"])


def test_query_explain_text_shows_per_feature_table(built) -> None:
    _, out, _ = built
    result = cbr("query", "-c", out, "--matchstate", "MATCHSTATE:0:3:r:AhAd|", "--explain", "--top", "2")
    assert result.exit_code == 0, result.output
    assert "per-feature similarity" in result.stdout
    assert "hand_strength" in result.stdout


def test_query_unweighted_flag(built) -> None:
    _, out, _ = built
    ms = "MATCHSTATE:1:0:cr:|Ts9s"
    a = json.loads(cbr("query", "-c", out, "--matchstate", ms, "--json", "--unweighted").stdout)
    b = json.loads(cbr("query", "-c", out, "--matchstate", ms, "--json", "--weighted").stdout)
    assert a["weighted"] is False and b["weighted"] is True
    dp = from_matchstate(ms, preset("holdem.limit.2p"))
    assert [a["triple"][k] for k in ("fold", "check_call", "bet_raise")] == pytest.approx(
        library_answer(out, dp, weighted=False).triple)
    assert [b["triple"][k] for k in ("fold", "check_call", "bet_raise")] == pytest.approx(
        library_answer(out, dp, weighted=True).triple)


@pytest.mark.parametrize("args, words", [
    (["--hole", "AdQx"], "Qx"),
    (["--hole", "AdAd"], "appears twice"),
    (["--hole", "AdQc", "--board", "Ad3c4c"], "appears twice"),
    (["--hole", "AdQc", "--position", "5"], "position"),
    (["--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--committed", "1", "--to-call", "1", "--pot", "2"],
     "smaller"),
    (["--matchstate", "MATCHSTATE:0:1::AsKs|"], "turn"),
    (["--matchstate", "nonsense"], "MATCHSTATE"),
    (["--matchstate", "MATCHSTATE:1:0::|AsKs", "--hole", "AsKs"], "not both"),
    ([], "no situation"),
    (["--hole", "AsKs", "--game", "no.such.game"], "unknown game"),
])
def test_query_bad_input_exits_1_with_one_line(built, args, words) -> None:
    _, out, _ = built
    line = one_error_line(cbr("query", "-c", out, *args))
    assert words in line


def test_query_missing_casebase(tmp_path: Path) -> None:
    line = one_error_line(cbr("query", "-c", tmp_path / "nothing-here", "--hole", "AsKs"))
    assert "no case base" in line
    empty = tmp_path / "empty"
    empty.mkdir()
    line = one_error_line(cbr("query", "-c", empty, "--hole", "AsKs"))
    assert re.search(r"manifest", line)
