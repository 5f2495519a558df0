"""`cbr build` and `cbr query` through typer's CliRunner; figures checked against the library."""
from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cbr.acpc.matchstate import from_matchstate
from cbr.cli._output import json_ratio, json_triple
from cbr.game.gamedef import STREETS, preset
from cbr.game.situation import situation
from cbr.logs.acpc import AcpcLogWriter
from cbr.play.match import run_match
from cbr.query.answer import answer
from cbr.store import CaseBase, resolve_casebase
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
    assert report["hands_skipped"] == report["files_skipped"] == 0
    assert report["path"] == str(out)
    assert report["hands_per_second"] > 0


def test_the_build_summary_counts_one_hand_a_second_in_the_singular(built, tmp_path: Path) -> None:
    """The rate said '1 hands/s' when a build read one hand a second; it is counted as the hands are."""
    from dataclasses import replace

    from cbr.build.local import build_casebase
    from cbr.cli.build import built_line

    log, _, _ = built
    report = build_casebase([log], tmp_path / "cb", workers=1)
    assert report.hands == 50
    assert built_line("cb", replace(report, seconds=50.0)).endswith(" 50.0 s (1 hand/s)")
    assert built_line("cb", replace(report, seconds=51.0)).endswith(" 51.0 s (1 hand/s)")   # 0.98, rounded as shown
    assert built_line("cb", replace(report, seconds=25.0)).endswith(" 25.0 s (2 hands/s)")
    assert built_line("cb", replace(report, seconds=0.02)).endswith(" 0.0 s (2,500 hands/s)")


def test_build_text_report_and_overwrite(built, tmp_path: Path) -> None:
    log, _, report = built
    out = tmp_path / "cb"
    result = cbr("build", log, "-o", out, "--players", "raise")
    assert result.exit_code == 0, result.output
    with CaseBase.open(out) as cb:
        counts = {s: cb.count(s) for s in STREETS}
        assert set(cb.table("preflop").column("player").to_pylist()) == {"raise"}
    per = ", ".join(f"{s} {n:,}" for s, n in counts.items())
    assert f"built {out}: {sum(counts.values()):,} cases ({per}) from 50 hands in 1 source," in result.stdout
    assert sum(counts.values()) < report["cases"]
    # an existing case base is refused, then replaced with --overwrite
    line = one_error_line(cbr("build", log, "-o", out))
    assert "already exists" in line and "--overwrite" in line
    result = cbr("build", log, "-o", out, "--overwrite")
    assert result.exit_code == 0, result.output
    with CaseBase.open(out) as cb:
        assert cb.count() == report["cases"]


def test_build_refuses_a_folder_that_is_no_case_base_before_suggesting_overwrite(built, tmp_path: Path) -> None:
    log = built[0]
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    for extra in ((), ("--overwrite",)):  # the same answer with or without it: never replaced
        line = one_error_line(cbr("build", log, "-o", tmp_path / "mine", *extra))
        assert "is not a case base (no manifest.json)" in line and "give a new name" in line, line
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    result = cbr("build", log, "-o", "")
    assert result.exit_code == 2 and "path is empty" in result.output, result.output


def test_an_answer_names_the_case_base_queried_not_the_one_it_was_copied_from(built, tmp_path: Path) -> None:
    import shutil

    shutil.copytree(built[1], tmp_path / "copy")
    result = cbr("query", "-c", tmp_path / "copy", "--hole", "AdQc", "--top", "0", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["casebase"] == "copy"


def test_build_lists_skipped_hands(tmp_path: Path) -> None:
    log = tmp_path / "bad.log"
    log.write_text("STATE:0:cc/crc/cc/cc:5d5c|9hQd/8dAs8s/4h/6d:20|-20:p1|p2\n"
                   "STATE:1:cc/crc/cc/cc:5d5c|5dQd/8dAs8s/4h/6d:20|-20:p1|p2\n"
                   "STATE:2:garbage\n")
    result = cbr("build", log, "-o", tmp_path / "cb")
    assert result.exit_code == 0, result.output
    assert "2 hands skipped:" in result.stdout
    assert f"{log}:2: " in result.stdout and f"{log}:3: " in result.stdout


def test_build_summary_says_one_in_the_singular(tmp_path: Path) -> None:
    """The summary said '1 hands in 1 source(s)' and '1 hand(s) skipped'."""
    hand = "STATE:{}:cc/crc/cc/cc:5d5c|9hQd/8dAs8s/4h/6d:20|-20:p1|p2\n"
    one, two = tmp_path / "one.log", tmp_path / "two.log"
    one.write_text(hand.format(0))
    two.write_text(hand.format(0) + hand.format(1) + "STATE:2:garbage\n")
    result = cbr("build", one, "-o", tmp_path / "a")
    assert result.exit_code == 0, result.output
    assert " from 1 hand in 1 source, " in result.stdout, result.stdout
    assert "skipped" not in result.stdout
    result = cbr("build", one, two, "-o", tmp_path / "b")
    assert result.exit_code == 0, result.output
    assert " from 3 hands in 2 sources, " in result.stdout, result.stdout
    assert "\n1 hand skipped:\n" in result.stdout and f"{two}:3: " in result.stdout, result.stdout
    report = json.loads(cbr("build", one, two, "-o", tmp_path / "c", "--json").stdout)
    assert (report["hands"], report["sources"], report["hands_skipped"]) == (3, 2, 1)


def test_build_counts_a_header_before_the_first_hand_as_lines_not_a_hand(tmp_path: Path) -> None:
    """A PokerStars export and a PHH file with a header before their first hand (real hands
    after it): the build said "1 hand skipped" for each header; it says the lines skipped (not
    hands), as for an ACPC log's lines that are no hands, and skips no hand."""
    from tests.conftest import shared_path

    stars = sorted(shared_path("pokerstars_fl").rglob("*.txt"))
    export = tmp_path / "export.txt"
    export.write_text("Hand history export, table Phad\n\n" + "\n\n".join(
        p.read_text(encoding="utf-8").lstrip("\ufeff").strip() for p in stars) + "\n", encoding="utf-8")
    handhq = next(shared_path("phh", "data", "handhq").glob("PS-*/10/*.phhs"))
    phhs = tmp_path / "hands.phhs"
    phhs.write_text("# HandHQ\nexported by a tool\n\n" + handhq.read_text(encoding="utf-8"), encoding="utf-8")
    result = cbr("build", export, phhs, "-o", tmp_path / "cb", "--mixed-games", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["hands"], report["hands_skipped"], report["lines_skipped"]) == (len(stars) + 11, 0, 2), report
    assert sorted(i["where"] for i in report["skipped_hands"]) == sorted([f"{export}:1", f"{phhs}:2"])
    result = cbr("build", export, phhs, "-o", tmp_path / "cb2", "--mixed-games")
    assert result.exit_code == 0, result.output
    assert "2 lines skipped (not hands)" in result.stdout and "hand skipped" not in result.stdout, result.stdout


def test_build_holds_a_showdown_without_all_its_cards_to_the_pot(tmp_path: Path) -> None:
    """Issue 35: `5d5c|` against unshown cards, pot 40, logged +1000: the hand was built and its
    cases stored an outcome of +100 small bets where at most +2 is possible."""
    log = tmp_path / "pot.log"
    log.write_text("STATE:0:cc/crc/cc/cc:5d5c|/8dAs8s/4h/6d:1000|-1000:p1|p2\n"
                   "STATE:1:cc/crc/cc/cc:5d5c|/8dAs8s/4h/6d:20|-20:p1|p2\n")
    result = cbr("build", log, "-o", tmp_path / "cb")
    assert result.exit_code == 0, result.output
    assert "1 hand skipped:" in result.stdout and f"{log}:1: " in result.stdout
    assert "payoffs do not match" in result.stdout and "from a pot of 40" in result.stdout
    with CaseBase.open(tmp_path / "cb") as cb:
        outcomes = [o for s in STREETS for (o,) in cb.sql(f"select outcome from cases_{s}").fetchall()]
    assert outcomes and set(outcomes) == {2.0}


@pytest.mark.parametrize("args, words", [
    (["no/such/logs"], "no/such/logs"),
    (["{tmp}"], "no log files"),
])
def test_build_bad_paths_exit_1_with_one_line(args, words, tmp_path: Path) -> None:
    args = [a.format(tmp=tmp_path) for a in args]
    line = one_error_line(cbr("build", *args, "-o", tmp_path / "cb"))
    assert words in line
    assert not (tmp_path / "cb").exists()


def test_build_of_one_file_over_the_size_limit_names_it_once(tmp_path: Path) -> None:
    """``cbr build FILE --max-file-size 10K`` said 'no log files found in F: F: ...'."""
    from cbr.logs.source import format_size

    log = tmp_path / "big.log"
    log.write_text("STATE:0:cc/crc/cc/cc:5d5c|9hQd/8dAs8s/4h/6d:20|-20:p1|p2\n" * 300)
    size = log.stat().st_size
    assert size > 10 * 1024
    line = one_error_line(cbr("build", log, "-o", tmp_path / "cb", "--max-file-size", "10K"))
    assert line.count(str(log)) == 1, line
    assert line == (f"error: no log to build from: {log}: {format_size(size)}, larger than the "
                    f"{format_size(10 * 1024)} limit per file (--max-file-size raises it)"), line
    # in a folder: the folder and the file, each once
    folder = tmp_path / "logs"
    folder.mkdir()
    log.rename(folder / log.name)
    line = one_error_line(cbr("build", folder, "-o", tmp_path / "cb", "--max-file-size", "10K"))
    assert line.startswith(f"error: no log to build from in {folder}: {folder / log.name}: {format_size(size)}, "), line
    assert line.count(log.name) == 1 and not (tmp_path / "cb").exists()


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
    assert [data["triple"][k] for k in ("fold", "check_call", "bet_raise")] == json_triple(ans.triple)
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
    assert [data["triple"][k] for k in ("fold", "check_call", "bet_raise")] == json_triple(ans.triple)
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
    (["--hole", "72o"], "'72o' is a hand class (72o, offsuit), not a holding: give two cards with their suits, e.g. 7h2c"),
    (["--hole", "AsKd", "--board", "QQ"], "'QQ' is a hand class"),
    (["--hole", "AdQc", "--board", "Ad3c4c"], "appears twice"),
    (["--hole", "AdQc", "--position", "5"], "position"),
    (["--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--committed", "1", "--to-call", "1", "--pot", "2"],
     "--pot"),
    (["--matchstate", "MATCHSTATE:0:1::AsKs|"], "turn"),
    (["--matchstate", "nonsense"], "MATCHSTATE"),
    ([], "no situation: give the hole cards (and the board, the bets to call, ...) or a MATCHSTATE "
         "(--hole, --matchstate)"),
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



# ---------------------------------------------------------------- situations through the rules engine
def query_json(out: Path, *args: str) -> dict:
    result = cbr("query", "-c", out, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_query_json_gives_derived_numbers_to_six_digits(built) -> None:
    """``--json`` printed the triple and the similarities unrounded (``0.11363636363636363``): the
    triple is now to 6 decimals summing to 1, the similarities and feature values to 6 significant
    digits; counts and ids exact."""
    _, out, _ = built
    ms = "MATCHSTATE:1:0:crc/r:|AdQc/3h4cJh"
    data = query_json(out, "--matchstate", ms, "--explain")
    ans = library_answer(out, from_matchstate(ms, preset("holdem.limit.2p")))
    full = ans.to_dict()
    triple = list(data["triple"].values())
    assert triple == json_triple(ans.triple) and all(round(x, 6) == x for x in triple)
    assert abs(sum(triple) - 1.0) < 1e-12
    assert data["retrieved"] == ans.retrieved == len(data["cases"]) and data["passed_threshold"] == ans.passed
    assert data["mean_similarity"] == float(f"{full['mean_similarity']:.6g}")
    assert [c["id"] for c in data["cases"]] == [c["id"] for c in full["cases"]]
    six = [float(f"{x:.6g}") for c in full["cases"] for x in (c["similarity"], *c["local"].values())]
    assert [x for c in data["cases"] for x in (c["similarity"], *c["local"].values())] == six
    longer = [x for c in full["cases"] for x in (c["similarity"], *c["local"].values()) if float(f"{x:.6g}") != x]
    assert longer  # this answer has longer numbers: the rounding was needed
    # the shipped default case base votes 0.11363636363636363, ... here: 6 decimals summing to 1
    args = ["--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "1", "--pot", "5", "--prev-bets", "2"]
    shipped = query_json("default", *args, "--top", "0")
    dp = situation(hole="AdQc", board="3h4cJh", players=2, position=1, to_call=1, pot=5, previous_round_bets=2,
                   game=preset("holdem.limit.2p"))
    with CaseBase.open(resolve_casebase("default")) as cb:
        want = answer(cb, dp).triple
    got = list(shipped["triple"].values())
    assert got == json_triple(want) != list(want) and abs(sum(got) - 1.0) < 1e-12


def test_query_help_example_works(built) -> None:
    _, out, _ = built
    help_text = cbr("query", "--help").stdout
    example = re.search(r"Example: cbr query (.+)", help_text).group(1).split()
    result = cbr("query", *example, "-c", out)
    assert result.exit_code == 0, result.output
    assert "fold " in result.stdout


def test_readme_quickstart_query_works(built) -> None:
    _, out, _ = built
    args = "--hole AdQc --board 3h4cJh --position 1 --to-call 1 --pot 5 --prev-bets 2 --explain".split()
    result = cbr("query", "-c", out, *args)
    assert result.exit_code == 0, result.output
    assert "per-feature similarity" in result.stdout


def test_preflop_query_has_the_blinds_posted(built) -> None:
    """`cbr query --hole AhKd` was a spot with no blinds (pot 0, nothing to call)."""
    _, out, _ = built
    first = query_json(out, "--hole", "AhKd")["features"]
    # the small blind: half a bet in, half to call into a pot of 1.5 small bets (pot odds 0.5 / 2)
    assert first["bets_to_call"] == 0.5 and first["bets_committed"] == 0.5 and first["pot_odds"] == 0.25
    big_blind = query_json(out, "--hole", "AhKd", "--position", "1")["features"]  # the big blind: no --committed
    assert big_blind["bets_committed"] == 1.0 and big_blind["bets_to_call"] == 0.0
    assert big_blind["players_to_act"] == 0 and big_blind["relative_position"] == 1.0


@pytest.mark.parametrize("args, words", [
    (["--hole", "AdQc", "--board", "3h4cJh", "--prev-bets", "-1"], "--prev-bets"),
    (["--hole", "AdQc", "--board", "3h4cJh", "--prev-bets", "99999999999999999999"], "--prev-bets"),
    (["--hole", "AdQc", "--prev-bets", "2"], "pre-flop has no previous round"),
    (["--hole", "AdQc", "--board", "3h4cJh", "--pot", "nan"], "finite"),
    (["--hole", "AdQc", "--board", "3h4cJh", "--pot", "inf"], "finite"),
    (["--hole", "AdQc", "--board", "3h4cJh", "--pot", "1e300"], "--pot"),
    (["--hole", "AdQc", "--board", "3h4cJh", "--pot", "-3"], "negative"),
    (["--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "0.5"], "whole bets"),
    (["--hole", "AdQc", "--to-call", "0.3"], "whole bets"),
    (["--hole", "AdQc", "--committed", "nan"], "finite"),
    # heads-up spots that cannot happen
    (["--hole", "AdQc", "--board", "3h4cJh", "--position", "0", "--to-act", "1", "--to-call", "1"],
     "(0 still to act can happen): change the players still to act (--to-act)"),
    (["--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-act", "1", "--in-hand", "2"], "--to-act"),
    (["--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "1", "--pot", "4"],
     "(a pot of 3 can happen): change the pot (--pot)"),
    (["--hole", "AdQc", "--board", "3h4cJh", "--prev-bets", "1", "--pot", "2.5"], "change the pot (--pot)"),
    (["--hole", "AdQc", "--in-hand", "3"], "--in-hand"),
    (["--hole", "AdQc", "--to-call", "5"], "cap"),
    # the library's error carries its fields; the command line names its options for them
    (["--hole", "AdQc", "--board", "3h4cJh", "--committed", "3", "--to-call", "3"],
     "change the bets to call or committed (--to-call, --committed)"),
    (["--hole", "AdQc", "--prev-bets", "2"], "leave out the previous round's bets, got 2 (--prev-bets)"),
    (["--hole", "AdQc", "--dealt", "3", "--game", "holdem.nolimit.6p"], "as a MATCHSTATE (--matchstate)"),
    (["--matchstate", "MATCHSTATE:1:0::|AsAh/2c3c4c"], "board shows the flop"),
    (["--matchstate", "MATCHSTATE:0:1:cc/cc:AsKs|/2c3c4c/5c6c"], "turn '5c6c' has 2 card"),
])
def test_impossible_situations_are_one_line_errors(built, args, words) -> None:
    _, out, _ = built
    line = one_error_line(cbr("query", "-c", out, *args))
    assert words in line


@pytest.mark.parametrize("args", [
    ["--hole", "AdQc", "--players", "0"],
    ["--hole", "AdQc", "--dealt", "1"],
    ["--hole", "AdQc", "--dealt", "99999999999999999999"],
    ["--matchstate", "MATCHSTATE:1:0::|AsKs", "--board", "2c3c4c"],
    ["--matchstate", "MATCHSTATE:1:0::|AsKs", "--pot", "3"],
    ["--matchstate", "MATCHSTATE:1:0::|AsKs", "--hole", "AsKs"],
    ["--matchstate", "MATCHSTATE:1:0::|AsKs", "--position", "0"],
    ["--matchstate", "-", "--to-call", "1"],
    ["--matchstate", "MATCHSTATE:1:0::|AsKs", "--matchstate-file", "x"],
    ["--hole", "AsKs", "--weighted", "--unweighted"],
    ["--hole", "AsKs", "--dealt", "2", "--players", "3"],  # an old spelling that disagrees with the new one
])
def test_contradictory_or_out_of_range_options_are_usage_errors(built, args) -> None:
    _, out, _ = built
    result = cbr("query", "-c", out, *args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "ZeroDivisionError" not in result.output


def test_dealt_and_its_hidden_old_name(built) -> None:
    _, out, _ = built
    help_text = cbr("query", "--help").stdout
    assert "--dealt" in help_text and "--players" not in help_text
    assert not re.search(r"--json\s+<bool>", help_text)  # a flag, not an option taking a bool
    a = query_json(out, "--hole", "AsKs", "--dealt", "3")
    b = query_json(out, "--hole", "AsKs", "--players", "3")
    both = query_json(out, "--hole", "AsKs", "--players", "3", "--dealt", "3")  # both spellings, agreeing
    assert a["features"] == b["features"] == both["features"] and a["features"]["players_dealt"] == 3
    refused = cbr("query", "-c", out, "--hole", "AsKs", "--players", "2", "--dealt", "3")
    assert refused.exit_code == 2, refused.output
    assert "--players (the old name of --dealt) and --dealt disagree" in refused.output
    assert "Invalid value for '--dealt'" in refused.output


def test_case_ids_are_the_sql_case_ids(built) -> None:
    """The id shown is the case_id column: SQL on that id finds the same case."""
    _, out, _ = built
    data = query_json(out, "--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "1",
                      "--explain")
    text = cbr("query", "-c", out, "--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "1",
               "--top", "3").stdout
    assert data["cases"]
    with CaseBase.open(out) as cb:
        names = cb.feature_names("flop")
        rows_differ = False
        for case in data["cases"]:
            prov = case["provenance"]
            got = cb.sql(f"select hand_id, player, history, action, {', '.join(names)} from cases_flop "
                         f"where case_id = {case['id']}").fetchall()
            assert len(got) == 1
            hand_id, player, history, action, *values = got[0]
            assert (hand_id, player, history, action) == (prov["hand_id"], prov["player"], prov["history"],
                                                          case["action"])
            # --explain: each case's own feature values, beside its local similarities
            # (to 6 significant digits, as --json gives every feature value)
            assert case["features"] == {n: json_ratio(float(v)) for n, v in zip(names, values)}
            assert set(case["local"]) == set(case["features"])
            rows_differ |= case["id"] != int(cb.cases("flop").case_ids.tolist().index(case["id"]))
    assert rows_differ  # in this case base the row number within the street is not the case_id
    for case in data["cases"][:3]:
        assert re.search(rf"│ {case['id']} ", text)


def test_explain_text_shows_case_values_beside_similarities(built) -> None:
    _, out, _ = built
    args = ["--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "1"]
    data = query_json(out, *args, "--top", "1")
    case = data["cases"][0]
    text = cbr("query", "-c", out, *args, "--top", "1", "--explain").stdout
    line = next(ln for ln in text.splitlines() if "hand_strength" in ln)
    assert f"{case['features']['hand_strength']:.4g} ~{case['local']['hand_strength']:.3g}" in line


def test_matchstate_lines_from_stdin_and_file(built, tmp_path: Path) -> None:
    _, out, _ = built
    good1, bad, good2 = "MATCHSTATE:1:0:crc/r:|AdQc/3h4cJh", "MATCHSTATE:1:0::|AsAh/2c3c4c", "MATCHSTATE:1:3::|7c2d"
    lines = f"{good1}\n\n# a comment\n{bad}\n{good2}\n"
    result = runner.invoke(app, ["query", "-c", str(out), "--matchstate", "-", "--json"], input=lines)
    assert result.exit_code == 1, result.output
    records = [json.loads(ln) for ln in result.stdout.splitlines()]
    assert [r["line"] for r in records] == [1, 5]
    game = preset("holdem.limit.2p")
    for r, ms in zip(records, (good1, good2)):
        assert r["matchstate"] == ms
        ans = library_answer(out, from_matchstate(ms, game))
        assert [r["triple"][k] for k in ("fold", "check_call", "bet_raise")] == json_triple(ans.triple)
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert errors[0].startswith("error: line 4: MATCHSTATE board shows the flop")
    assert errors[-1] == "error: 1 of 5 lines could not be answered"
    # the same from a file, as text; all lines good: exit 0
    path = tmp_path / "states.txt"
    path.write_text(f"{good1}\n{good2}\n")
    result = cbr("query", "-c", out, "--matchstate-file", path)
    assert result.exit_code == 0, result.output
    assert [ln.split(":")[0] for ln in result.stdout.splitlines()] == ["line 1", "line 2"]


def test_query_warns_when_the_street_lacks_an_action_kind(tmp_path: Path) -> None:
    """A case base without fold cases can never recommend folding: the query says so."""
    log = tmp_path / "nofold.log"
    with AcpcLogWriter(log) as w:
        run_match(["call", "raise"], 30, seed=5, log=w)  # neither bot ever folds
    assert cbr("build", log, "-o", tmp_path / "cb").exit_code == 0
    with CaseBase.open(tmp_path / "cb") as cb:
        assert "f" not in set(cb.cases("flop").actions.tolist())
    result = cbr("query", "-c", tmp_path / "cb", "--hole", "AdQc", "--board", "3h4cJh", "--position", "1",
                 "--to-call", "1", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert any("no fold cases on the flop" in w for w in data["warnings"])
    assert "warning: case base" in result.stderr and "no fold cases on the flop" in result.stderr


def test_query_warnings_agree_with_the_case_counts(built) -> None:
    _, out, _ = built
    data = query_json(out, "--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "1")
    with CaseBase.open(out) as cb:
        counts = dict(cb.sql("select action, count(*) from cases_flop group by action").fetchall())
    missing = [k for k in "fcr" if counts.get(k, 0) == 0]
    names = {"f": "fold", "c": "check/call", "r": "bet/raise"}
    assert sorted(w for w in data["warnings"] if " has no " in w) == sorted(
        f"case base {data['casebase']!r} has no {names[k]} cases on the flop: the answer can never recommend "
        f"{names[k]}" for k in missing)


def test_matchstate_file_errors_name_the_file(built, tmp_path: Path) -> None:
    _, out, _ = built
    line = one_error_line(cbr("query", "-c", out, "--matchstate-file", tmp_path / "missing.txt"))
    assert "missing.txt: cannot be read" in line
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"MATCHSTATE:1:0::|AsKs\n\xff\xfe\n")
    line = one_error_line(cbr("query", "-c", out, "--matchstate-file", binary))
    assert "binary.txt: not UTF-8" in line


def test_no_matchstate_line_is_an_error_not_a_silent_success(built, tmp_path: Path) -> None:
    """`: | cbr query --matchstate -` exited 0 and printed nothing."""
    _, out, _ = built
    line = one_error_line(runner.invoke(app, ["query", "-c", str(out), "--matchstate", "-"], input=""))
    assert line == "error: stdin: no MATCHSTATE line to answer (it is empty, or blank lines and # comments only)"
    comments = tmp_path / "comments.txt"
    comments.write_text("# nothing here\n\n")
    line = one_error_line(cbr("query", "-c", out, "--matchstate-file", comments))
    assert "comments.txt: no MATCHSTATE line to answer" in line


def _capped_cbr(*args: str) -> subprocess.CompletedProcess:
    """``cbr ARGS`` in a child with an address space of 800 MB (room for a query)."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (800 << 20, 800 << 20))
    return subprocess.run([str(Path(sys.executable).with_name("cbr")), *args], capture_output=True, text=True,
                          timeout=120, preexec_fn=cap)


@pytest.mark.parametrize("args, words", [
    (["--game", "/dev/zero", "--hole", "AdQc"], "game file /dev/zero is larger than 64 KiB"),
    (["--matchstate-file", "/dev/zero"], "/dev/zero: line 1 is longer than 4,096 bytes"),
])
def test_endless_files_are_read_within_a_bound(args, words) -> None:
    """`--game /dev/zero` and `--matchstate-file /dev/zero` read until memory ran out."""
    r = _capped_cbr("query", *args)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert r.stderr.strip().splitlines() == [f"error: {r.stderr.split('error: ', 1)[1].strip()}"], r.stderr
    assert words in r.stderr, r.stderr


def test_matchstate_lines_are_answered_as_they_are_read(built, tmp_path: Path) -> None:
    """Lines are read one at a time: a line too long, or not UTF-8, stops the answers at that line
    with one error naming it; the lines before it were answered. Lines end in \\n or \\r\\n."""
    _, out, _ = built
    good = "MATCHSTATE:1:0:crc/r:|AdQc/3h4cJh"
    path = tmp_path / "long.txt"
    path.write_bytes(f"{good}\r\n{'x' * 4096}\n{good}\n{'y' * 4097}\n{good}\n".encode())
    r = cbr("query", "-c", out, "--matchstate-file", path)
    assert r.exit_code == 1
    assert [ln.split(":")[0] for ln in r.stdout.splitlines()] == ["line 1", "line 3"]
    errors = r.stderr.strip().splitlines()
    assert errors[0].startswith("error: line 2: ") and len(errors) == 2, r.stderr
    assert errors[1] == f"error: {path}: line 4 is longer than 4,096 bytes; a MATCHSTATE is one short line"
    path.write_bytes(f"{good}\nMATCHSTATE:\xff\n".encode("latin-1"))
    r = cbr("query", "-c", out, "--matchstate-file", path)
    assert r.exit_code == 1 and r.stdout.startswith("line 1: ")
    assert r.stderr.strip() == f"error: {path}: not UTF-8 text (line 2, byte 12); MATCHSTATE lines are ASCII"
