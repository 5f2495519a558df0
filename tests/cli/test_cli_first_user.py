"""Small CLI defects a first-time user found: error wording and labels, old/new option
spellings that agree, rounded JSON, thousands separators, table layout, quitting a hand."""
from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

from cli import app

runner = CliRunner()


def cbr(*args: object, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


# ---- 1. a league without Dask says "a league", not "a build" --------------------------------
@pytest.mark.parametrize("command, what", [
    (["league", "--players", "call,fold", "--hands", 2, "--scheduler", "local"], "a league"),
])
def test_scheduler_without_dask_names_the_command(monkeypatch: pytest.MonkeyPatch, command: list, what: str) -> None:
    for name in ("dask", "dask.distributed", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)  # an ImportError, as when Dask is not installed
    got = cbr(*command)
    assert got.exit_code == 1, got.output
    assert f"error: {what} on a scheduler needs Dask" in got.output


# ---- 4. league --json rounds its rates as match --json does (12 significant digits) ---------
def _numbers(obj: object, keys: tuple) -> list:
    if isinstance(obj, dict):
        return [v for k, v in obj.items() if k in keys and v is not None] + [
            x for v in obj.values() for x in _numbers(v, keys)]
    if isinstance(obj, list):
        return [x for v in obj for x in _numbers(v, keys)]
    return []


def test_league_json_rounds_its_rates_to_12_significant_digits() -> None:
    import json

    from cbr.play.league import run_league

    got = cbr("league", "--players", "call,raise,ehs", "--hands", 20, "--workers", 1, "--json")
    assert got.exit_code == 0, got.output
    data = json.loads(got.stdout)
    rates = ("sb_per_hand", "sb_ci", "mbb_per_hand", "mbb_ci")
    printed = _numbers(data["pairings"], rates) + _numbers(data["standings"], rates)
    assert len(printed) == 3 * 4 + 3 * 2
    assert all(x == float(f"{x:.12g}") for x in printed), printed  # no float noise past 12 digits
    exact = run_league(["call", "raise", "ehs"], 20, workers=1)  # the same league, unrounded
    for row, p in zip(data["pairings"], exact.pairings):
        for key in rates:
            assert row[key] == pytest.approx(getattr(p, key), rel=1e-11, abs=1e-12)
    for row, s in zip(data["standings"], exact.standings()):
        assert row["bot"] == s.bot and row["sb_per_hand"] == pytest.approx(s.sb_per_hand, rel=1e-11, abs=1e-12)


# ---- 5. thousands separators in every count ------------------------------------------------
GROUPED = r"\d{1,3}(?:,\d{3})*"


def test_match_chips_column_has_thousands_separators() -> None:
    import re

    from cbr.play.match import run_match

    got = cbr("match", "--players", "raise,fold", "--hands", 400)
    assert got.exit_code == 0, got.output
    expected = run_match(["raise", "fold"], 400)
    for p in expected.players:
        assert abs(p.total) > 999  # a count that needs a separator
        row = next(ln for ln in got.stdout.splitlines() if f" {p.name} " in ln)
        chips = row.split("│")[3].strip()
        assert re.fullmatch(r"[+-]" + GROUPED, chips), row
        assert float(chips.replace(",", "")) == round(p.total)


def test_query_search_limit_is_grouped() -> None:
    import re

    from cbr.game.situation import SEARCH_LIMIT

    got = cbr("query", "--hole", "AdQc", "--dealt", 12, "--in-hand", 11, "--pot", 95, "--board", "2c3d4h")
    assert got.exit_code == 1, got.output
    found = re.search(r"within (\S+) game states", got.output)
    assert found and re.fullmatch(GROUPED, found[1]) and int(found[1].replace(",", "")) == SEARCH_LIMIT > 999


# ---- 6. tables: no trailing spaces, no header word split -----------------------------------
def _rendered(renderable, width: int) -> str:
    import os

    from rich.console import Console

    console = Console(width=width, record=True, file=open(os.devnull, "w"))
    console.print(renderable)
    return console.export_text()


def test_a_number_column_keeps_its_header_words_whole_beside_a_long_text_column() -> None:
    """`cbr casebase inspect acpc-limit` at 80 columns: the source paths left the street
    columns 5 characters, and `preflop` folded into `prefl`/`op`."""
    from cbr.cli._output import rich_table

    path = "../shared/data/logs/acpc/dealer_example_limit/2p.limit.h1000.r0.log"
    rows = [[path, 2600, 2352, 2108, 1958], [path.replace("2p", "3p"), 4782, 4491, 4019, 3523]]
    heads = ["source", "preflop", "flop", "turn", "river"]
    text = _rendered(rich_table("cases per source", heads, rows, width=80), 80)
    header_lines = [ln for ln in text.splitlines() if ln.startswith("┃")]
    for head in heads[1:]:
        assert any(f" {head} " in ln for ln in header_lines), text
    assert max(len(ln) for ln in text.splitlines()) <= 80
    for row in rows:
        assert all(str(n) in text for n in row[1:])


@pytest.mark.parametrize("title", ["cases per source", "top 3 cases (id: case_id in the SQL tables)"])
def test_table_titles_carry_no_trailing_spaces(title: str) -> None:
    from cbr.cli._output import plain_table, rich_table

    heads, rows = ["street", "a rather wide column", "another wide column", "n"], [["preflop", "x", "y", 1]]
    rich = _rendered(rich_table(title, heads, rows, width=80), 80)
    plain = plain_table(title, heads, rows, width=80)
    assert rich == plain  # cbr query writes plain tables without rich: the same text
    assert rich.splitlines()[0] == title


def test_casebase_inspect_lines_end_without_spaces_or_commas() -> None:
    got = cbr("casebase", "inspect", "default", env={"COLUMNS": "80"})
    assert got.exit_code == 0, got.output
    lines = got.stdout.splitlines()
    assert all(ln == ln.rstrip() for ln in lines), [ln for ln in lines if ln != ln.rstrip()]
    created = next(ln for ln in lines if ln.startswith("schema "))
    assert " created " in created and not created.endswith(",") and len(created) <= 80
    assert any(ln.startswith("games: ") for ln in lines)


# ---- 7. casebase similarity: out-of-range values are usage errors naming the options -------
def test_similarity_k_below_the_case_base_s_min_cases_names_k(tmp_path) -> None:
    from cbr.play.retention import copy_casebase
    from cbr.store import CaseBase

    path = copy_casebase("default", tmp_path / "mine")
    got = cbr("casebase", "similarity", path, "--k", 6, "--min-cases", 6, "--no-rebuild")
    assert got.exit_code == 0, got.output
    before = (path / "manifest.json").read_bytes()
    got = cbr("casebase", "similarity", path, "--k", 4)
    assert got.exit_code == 2, got.output
    assert "Invalid value for '--k': --k 4 is below the case base's min_cases (6)" in got.output
    assert "min_cases must be" not in got.output and "fallback_k" not in got.output
    assert (path / "manifest.json").read_bytes() == before
    got = cbr("casebase", "similarity", path, "--k", 4, "--min-cases", 4, "--no-rebuild")  # both: fine
    assert got.exit_code == 0, got.output
    with CaseBase.open(path) as cb:
        assert (cb.similarity().fallback_k, cb.similarity().min_cases) == (4, 4)


# ---- 8. the error names the option the user gave -------------------------------------------
def test_match_log_format_without_log_is_labelled_log_format() -> None:
    got = cbr("match", "--players", "ehs,call", "--log-format", "phh")
    assert got.exit_code == 2, got.output
    assert "Invalid value for '--log-format': --log-format needs --log" in got.output


def test_serve_dealer_overwrite_without_log_is_labelled_overwrite() -> None:
    got = cbr("serve-dealer", "--players", "ehs,call", "--overwrite")
    assert got.exit_code == 2, got.output
    assert "Invalid value for '--overwrite': --overwrite needs --log" in got.output


@pytest.mark.parametrize("args, says", [
    (["--in-hand", 5], "error: the players in hand must be at most the players dealt (2), got 5 (--in-hand)"),
    (["--dealt", 3, "--in-hand", 1], "error: the players in hand must be at least 2 (you and an opponent), got 1"),
    (["--position", 3], "error: your position must be at most 1 with 2 players in hand"),
    (["--to-act", 4], "error: the players still to act must be at most 1 (the other players in hand), got 4"),
])
def test_query_out_of_range_counts_say_the_bound_plainly(args: list, says: str) -> None:
    got = cbr("query", "--hole", "AdQc", *args)
    assert got.exit_code == 1, got.output
    assert says in got.output and "between" not in got.output


# ---- 9. plugins list names the option play --human takes ----------------------------------
def test_plugins_list_names_play_human_players() -> None:
    got = cbr("plugins", "list", env={"COLUMNS": "200"})
    assert got.exit_code == 0, got.output
    text = " ".join(got.stdout.split())  # as one line, however it wrapped
    assert "play --human --players" in text and "play --players" not in text


# ---- the shipped data is never a command's output -------------------------------------------
def _acpc_log() -> str:
    from tests.conftest import shared_path

    return str(shared_path("acpc", "dealer_example_limit"))


@pytest.mark.parametrize("args, shipped", [
    (["build", "LOG", "-o", "SHIPPED/default", "--overwrite", "-j", 1], "the shipped case base 'default'"),
    (["casebase", "merge", "default", "default", "-o", "SHIPPED/expert", "--overwrite"], "the shipped case base 'expert'"),
    (["abstraction", "build", "--kind", "percentile", "--metric", "hs", "--buckets", 4, "-o", "SHIPPED/cfr/mine"],
     "in the shipped folder 'cfr'"),
    (["casebase", "condense", "default", "-o", "SHIPPED/selfplay/tenth"], "in the shipped folder 'selfplay'"),
])
def test_a_shipped_case_base_or_folder_is_never_an_output(args: list, shipped: str) -> None:
    """In an editable install ./casebases is the package's own folder: ``cbr build -o
    casebases/default --overwrite`` replaced the shipped default case base with the ACPC
    example's 25,833 random-bot cases, exit 0, and the README's query answered from them.
    Every output path under a shipped part of casebases/ is refused before any work."""
    from cbr.store import PACKAGED_CASEBASES

    default = PACKAGED_CASEBASES / "default"
    before = sorted((p.name, p.stat().st_mtime_ns) for p in default.rglob("*"))
    args = [str(a).replace("SHIPPED", str(PACKAGED_CASEBASES)) for a in args]
    if "LOG" in args:
        args[args.index("LOG")] = _acpc_log()
    got = cbr(*args)
    assert got.exit_code == 1, got.output
    assert f"{shipped}, which is never written to" in got.output, got.output
    assert sorted((p.name, p.stat().st_mtime_ns) for p in default.rglob("*")) == before
    assert not (PACKAGED_CASEBASES / "cfr" / "mine").exists() and not (PACKAGED_CASEBASES / "selfplay" / "tenth").exists()


def test_play_human_with_too_many_bots_is_a_usage_error() -> None:
    """Ten bots beside the human was 'error: a human game seats 1 to 9 bots, got 10', exit 1,
    where cbr match and serve-dealer count their seats as a usage error (exit 2)."""
    got = cbr("play", "--human", "--players", ",".join(["call"] * 10), "--hands", 1, input="q\n")
    assert got.exit_code == 2, got.output
    assert "Invalid value for '--players': a human game seats 1 to 9 bots beside you, got 10" in got.output


@pytest.mark.parametrize("command", [["serve-dealer", "--players", "call,call"], ["play", "--acpc", "127.0.0.1:9"]])
def test_an_unknown_game_of_the_acpc_commands_is_a_usage_error(command: list) -> None:
    """``--game bogus`` was one ``error:`` line, exit 1, where an unknown name is a usage error
    (exit 2) everywhere else; the client refuses before it connects (port 9: nobody listens)."""
    got = cbr(*command, "--game", "bogus")
    assert got.exit_code == 2, got.output
    assert "Invalid value for '--game': unknown game 'bogus'" in got.output
