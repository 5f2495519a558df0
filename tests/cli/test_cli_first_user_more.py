"""More CLI and server defects a first-time user found: what a failed build did not read, a
copied case base's name in /evaluate, measure parameters, --game errors, a closed stdout,
table titles, rounded JSON, separators and plurals, a read-only ``inspect --sql``."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from tests.conftest import REPO, shared_path

runner = CliRunner()


def cbr(*args: object, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


# ---- 1. a build that made no case says what it did not read --------------------------------
def test_a_build_without_cases_names_the_files_it_did_not_read(tmp_path: Path) -> None:
    """A folder with the ACPC 2p log (55 KB) and one small PokerStars hand, built with
    ``--max-file-size 10K``, failed with 'no cases: 1 hands read, ...' and no word of the log
    left out, which is where the cases were."""
    logs = tmp_path / "logs"
    logs.mkdir()
    big = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    shutil.copy(big, logs / big.name)
    shutil.copy(shared_path("pokerstars_fl", "HHSmithy", "GameTypeTests_FixedLimitHoldem.txt"), logs)
    assert big.stat().st_size > 10 * 1024
    got = cbr("build", logs, "-o", tmp_path / "out", "--max-file-size", "10K", "-j", 1)
    assert got.exit_code == 1, got.output
    lines = got.output.strip().splitlines()
    assert len(lines) == 1, got.output
    assert lines[0].startswith("error: no cases: 1 hand read, none with a decision"), lines[0]
    assert f"1 file not read: {logs / big.name}: " in lines[0], lines[0]
    assert "larger than the 10 KiB limit per file (--max-file-size raises it)" in lines[0], lines[0]
    assert not (tmp_path / "out").exists()
    # the same logs with the default limit build (the file left out holds the cases)
    ok = cbr("build", logs, "-o", tmp_path / "out", "-j", 1, "--json")
    assert ok.exit_code == 0, ok.output


# ---- 5. a closed stdout is a quiet exit 141 -------------------------------------------------
PROGRAM = "import sys; from cli import main; sys.argv = ['cbr', *sys.argv[1:]]; main()"


@pytest.mark.parametrize("args", [
    ["casebase", "inspect", "default"],
    ["logs", "inspect", "IRC"],
    ["query", "--hole", "AdQc", "--board", "3h4cJh", "--top", "100", "--explain"],
])
def test_a_closed_stdout_exits_141_without_a_word(args: list[str]) -> None:
    """``cbr ... | head -1`` exited 1 with nothing said (rich's own broken-pipe exit): now the
    exit of a program killed by SIGPIPE, 141, with nothing on stderr (no traceback, no
    "Exception ignored" at the interpreter's exit). The reader is gone before the first write."""
    args = [str(shared_path("irc")) if a == "IRC" else a for a in args]
    proc = subprocess.Popen([sys.executable, "-c", PROGRAM, *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "COLUMNS": "80"})
    proc.stdout.close()  # the only reader: every write of the command meets a broken pipe
    try:
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:  # pragma: no cover - the command hung
            proc.kill()
            proc.wait()
    assert (proc.returncode, err.decode()) == (141, "")


# ---- 2. /evaluate answers under the name the case base is served under ---------------------
def test_evaluate_answers_under_the_served_name_of_a_copy(tmp_path: Path) -> None:
    """A ``cp -r`` copy served as 'mine' was evaluated as 'acpc-limit' (its manifest's name)
    while /casebases and /retrieve said 'mine'."""
    from cbr.serve.engine import Engine
    from cbr.store import CaseBase, resolve_casebase
    from tests.serve.conftest import make_client

    shutil.copytree(resolve_casebase("default"), tmp_path / "mine")
    with CaseBase.open(tmp_path / "mine") as cb:
        built = cb.manifest.name
    assert built != "mine"
    eng = Engine(["default", str(tmp_path / "mine")], warm=False)
    try:
        with make_client(eng) as c:
            assert sorted(x["name"] for x in c.get("/casebases").json()["casebases"]) == ["default", "mine"]
            r = c.post("/evaluate", json={"casebase": "mine", "folds": 2, "max_decisions": 50})
            assert r.status_code == 200, r.text
            assert (r.json()["casebase"], r.json()["built_as"]) == ("mine", built)
            r = c.post("/evaluate", json={"casebase": "default", "folds": 2, "max_decisions": 50})
            assert r.status_code == 200, r.text
            assert r.json()["casebase"] == "default" and "built_as" not in r.json()
    finally:
        eng.close()


# ---- 3. a measure's unknown parameter, or an unknown measure, is a usage error -------------
@pytest.mark.parametrize("value, says", [
    ("hand_strength=exp:q=4", "--measure 'exp:q=4': measure 'exp' has no parameter 'q' (its parameters: k)"),
    ("hand_strength=linear:k=2", "--measure 'linear:k=2': measure 'linear' has no parameter 'k' (it takes none)"),
    # a parameter given twice kept the last value without a word
    ("hand_strength=exp:k=2,k=3", "--measure 'exp:k=2,k=3': parameter 'k' given twice; give it once"),
    ("hand_strength=exp: k=2 , k = 3", "--measure 'exp: k=2 , k = 3': parameter 'k' given twice; give it once"),
    # the known measures once, sorted (they were listed twice: as built-ins, and as installed plugins)
    ("hand_strength=nosuch", "--measure 'nosuch': unknown similarity measure 'nosuch' (known: equity, exact, exp, "
                             "linear)"),
])
def test_an_unknown_measure_or_parameter_is_a_usage_error(value: str, says: str) -> None:
    """``--measure hand_strength=exp:q=4`` was 'error: ... ExponentialSimilarity.__init__() got an
    unexpected keyword argument 'q'', exit 1."""
    got = cbr("casebase", "similarity", "default", "--measure", value)
    assert got.exit_code == 2, got.output
    assert f"Invalid value for '--measure': {says}" in " ".join(got.output.split()), got.output


@pytest.mark.parametrize("options, says", [
    (["--weight", "hand_strength=50", "--weight", "hand_strength=60"],
     "Invalid value for '--weight': --weight hand_strength=60: feature 'hand_strength' given twice "
     "(hand_strength=50 before); give it once"),
    (["--measure", "pot_odds=exp:k=2", "--weight", "pot_odds=10", "--measure", " pot_odds = linear"],
     "Invalid value for '--measure': --measure pot_odds = linear: feature 'pot_odds' given twice "
     "(pot_odds=exp:k=2 before); give it once"),
    # on every street, then on one: which value the flop took depended on the order
    (["--weight", "hand_strength=50", "--weight", "flop.hand_strength=60"],
     "Invalid value for '--weight': --weight flop.hand_strength=60: feature 'hand_strength' on the flop given "
     "twice (hand_strength=50 before); give it once"),
    (["--measure", "river.hand_strength=exp:k=2", "--measure", "hand_strength=linear"],
     "Invalid value for '--measure': --measure hand_strength=linear: feature 'hand_strength' on the river given "
     "twice (river.hand_strength=exp:k=2 before); give it once"),
])
def test_a_feature_given_twice_is_a_usage_error_and_nothing_changes(options: list[str], says: str,
                                                                     tmp_path: Path) -> None:
    """``--weight hand_strength=50 --weight hand_strength=60`` kept 60 without a word."""
    import json

    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match

    with AcpcLogWriter(tmp_path / "m.log") as log:
        run_match(["ehs", "lag"], 30, seed=2, log=log)
    assert cbr("build", tmp_path / "m.log", "-o", tmp_path / "cb", "-j", "1").exit_code == 0
    before = cbr("casebase", "similarity", tmp_path / "cb", "--json")
    got = cbr("casebase", "similarity", tmp_path / "cb", *options)
    assert got.exit_code == 2, got.output
    assert says in " ".join(got.output.split()), got.output
    after = cbr("casebase", "similarity", tmp_path / "cb", "--json")
    assert before.exit_code == after.exit_code == 0 and json.loads(after.stdout) == json.loads(before.stdout)
    # each of them alone (or on other streets) is a change that is made
    ok = cbr("casebase", "similarity", tmp_path / "cb", "--weight", "flop.hand_strength=60",
             "--weight", "turn.hand_strength=50", "--measure", "river.pot_odds=linear", "--json")
    assert ok.exit_code == 0, ok.output
    flop = {f["feature"]: f for f in json.loads(ok.stdout)["flop"]}
    assert flop["hand_strength"]["weight"] == 60.0


def test_a_similarity_file_with_an_unknown_parameter_says_the_same_words(tmp_path: Path) -> None:
    from cbr.store import resolve_casebase

    text = (resolve_casebase("default") / "similarity.toml").read_text()
    linear = 'feature = "hand_strength"\nmeasure = "linear"'
    assert linear in text
    (tmp_path / "sim.toml").write_text(text.replace(linear, 'feature = "hand_strength"\nmeasure = "exp"\nq = 4.0', 1))
    got = cbr("casebase", "similarity", "default", "--from", tmp_path / "sim.toml")
    assert got.exit_code == 1, got.output
    assert got.output.strip() == (f"error: similarity config {tmp_path / 'sim.toml'}: street 'preflop': feature "
                                  "'hand_strength': measure 'exp' has no parameter 'q' (its parameters: k)")


# ---- 3b. --min-cases above --k, both given: a usage error naming both -----------------------
@pytest.mark.parametrize("command", [["query", "--hole", "AdQc"], ["casebase", "similarity", "default"]])
def test_min_cases_above_k_names_both_options_and_their_values(command: list[str]) -> None:
    """``cbr query --min-cases 10 --k 5`` said "Invalid value: --min-cases 10 is above --k 5: ..."
    naming no option (typer's hint was empty), while one of them against the case base's own
    value names its option; both are named now, with the values to give."""
    got = cbr(*command, "--min-cases", 10, "--k", 5)
    assert got.exit_code == 2, got.output
    assert ("Error: Invalid value for '--min-cases' / '--k': --min-cases 10 is above --k 5: fewer than --min-cases "
            "cases at the threshold take the --k most similar, so give --min-cases 5 or less, or --k 10 or more") \
        in " ".join(got.output.replace("│", " ").split()), got.output
    # equal values pass the check: the query is answered; the shipped case base is then refused
    # as the target of a change (exit 1), not the options
    same = cbr(*command, "--min-cases", 5, "--k", 5)
    assert same.exit_code == {"query": 0, "casebase": 1}[command[0]], same.output


# ---- 4. an unknown --game is a usage error in cbr query too; a bad definition names the field
def test_query_with_an_unknown_game_is_a_usage_error() -> None:
    """``cbr query --game nosuchgame`` exited 1 where serve-dealer, play --acpc and train cfr exit 2."""
    got = cbr("query", "--hole", "AdQc", "--game", "nosuchgame")
    assert got.exit_code == 2, got.output
    assert "Invalid value for '--game': unknown game 'nosuchgame'; known: casper.2p," in got.output


def test_a_game_definition_without_a_field_names_it(tmp_path: Path) -> None:
    """``--game '{"name": "x"}'`` said "bad game definition {'name': 'x'}: 'n_players'" (a KeyError's text).
    Inline JSON is the option's value: a usage error (exit 2) on --game; the same definition
    in a game file is an error in that file (exit 1)."""
    got = cbr("query", "--matchstate", "MATCHSTATE:0:0::AdQc|", "--game", '{"name": "x"}')
    assert got.exit_code == 2, got.output
    assert ("Invalid value for '--game': the inline game JSON: not a game definition (bad game definition "
            "{'name': 'x'}: missing 5 fields: n_players, blinds, small_bet, big_bet, first_to_act)") \
        in " ".join(got.output.replace("│", " ").split()), got.output
    got = cbr("query", "--matchstate", "MATCHSTATE:0:0::AdQc|", "--game",
              '{"name": "x", "n_players": 2, "blinds": [10, 5], "small_bet": 10, "big_bet": 20}')
    assert got.exit_code == 2 and "bad game definition" in got.output and " ".join(got.output.split()).endswith(
        ": missing 1 field: first_to_act)"), got.output
    (tmp_path / "x.json").write_text('{"name": "x"}')
    got = cbr("query", "--matchstate", "MATCHSTATE:0:0::AdQc|", "--game", tmp_path / "x.json")
    assert got.exit_code == 1, got.output
    assert got.output.strip() == (f"error: game file {tmp_path / 'x.json'}: not a game definition (bad game "
                                  "definition {'name': 'x'}: missing 5 fields: n_players, blinds, small_bet, big_bet, "
                                  "first_to_act) (--game)")


@pytest.mark.parametrize("command", [["query", "--hole", "AdQc"], ["serve-dealer", "--players", "call,call"],
                                     ["play", "--acpc", "127.0.0.1:9"]])
def test_malformed_inline_game_json_is_a_usage_error_and_a_bad_game_file_is_not(command: list,
                                                                                  tmp_path: Path) -> None:
    """``--game '{"bad":'`` exited 1 while ``--game nosuchgame`` exited 2: a value the command
    line gives wrong is a usage error naming --game, in every command that takes a game; the
    same text in a game file is a bad input file, one ``error:`` line, exit 1 (the ACPC client
    refuses before it connects: port 9, nobody listens)."""
    got = cbr(*command, "--game", '{"bad":')
    assert got.exit_code == 2, got.output
    assert ("Invalid value for '--game': the inline game JSON is not valid JSON (Expecting value: line 1 column 8 "
            "(char 7))") in " ".join(got.output.replace("│", " ").split()), got.output
    (tmp_path / "bad.json").write_text('{"bad":')
    got = cbr(*command, "--game", tmp_path / "bad.json")
    assert got.exit_code == 1, got.output
    assert got.output.strip().startswith(f"error: game file {tmp_path / 'bad.json'}: not JSON (Expecting value: "), \
        got.output
    assert len(got.output.strip().splitlines()) == 1, got.output


# ---- 6. a table title too long for the width folds without a trailing space -----------------
def test_a_long_table_title_folds_without_trailing_spaces() -> None:
    """rich wrapped ``cbr tune``'s 90-character title at 80 columns as ``... ± 95% CI ⏎over
    hands``, the space it broke at left at the end of the line."""
    import io

    from rich.console import Console

    from cbr.cli._output import rich_table

    title = "log-loss of the k-NN triples (2-fold, at most 100 decisions a street) ± 95% CI over hands"
    assert len(title) > 80
    console = Console(width=80, file=io.StringIO(), record=True)
    console.print(rich_table(title, ["street", "n"], [["preflop", 1]], width=80))
    lines = console.export_text().splitlines()
    assert all(line == line.rstrip() for line in lines), lines
    assert lines[:2] == ["log-loss of the k-NN triples (2-fold, at most 100 decisions a street) ± 95% CI",
                         "over hands"]


def test_tune_prints_its_title_on_one_line(tmp_path: Path) -> None:
    out = tmp_path / "tuned.toml"
    got = cbr("tune", "default", "--generations", 1, "--population", 1, "--folds", 2, "--max-decisions", 100,
              "-o", out, env={"COLUMNS": "80"})
    assert got.exit_code == 0, got.output
    lines = got.stdout.splitlines()
    assert lines[0] == "k-NN log-loss ± 95% CI over hands (2-fold, at most 100 decisions a street)"
    assert all(line == line.rstrip() for line in lines), lines
    assert lines[-1].startswith("learned similarity written to ")  # (a path: as long as it is)
    assert all(len(line) <= 80 for line in lines[:-1]), lines
    assert out.exists()


# ---- 7. play --acpc --json rounds its rate as match --json does ----------------------------
def test_play_acpc_json_rounds_its_rate_to_12_significant_digits() -> None:
    """``"sb_per_hand": 0.11000000000000001`` (a mean's float noise); ``cbr match --json``
    gives its rates to 12 significant digits."""
    import json

    from cbr.acpc.client import ClientResult, PlayedHand
    from cbr.cli._output import print_json  # what `cbr play --acpc --json` prints it with
    from cbr.game.gamedef import preset

    game = preset("holdem.limit.2p")
    hands = [PlayedHand(i + 1, i, i % 2, "cc/cc/cc/cc", "AdQc|Kh2s/3h4cJh/5d/9s", 1.1) for i in range(4)]
    result = ClientResult(game, hands=hands, actions=8)
    exact = result.sb_per_hand
    assert exact != float(f"{exact:.12g}")  # the noise that showed
    printed = json.loads(print_json_text(print_json, result.to_dict()))
    assert printed["sb_per_hand"] == float(f"{exact:.12g}") == 0.11
    assert printed["total"] == result.total and printed["hands"] == 4


def print_json_text(print_json, obj) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_json(obj)
    return out.getvalue()


# ---- 8. the merge warning groups its count ----------------------------------------------------
def test_a_merge_of_shared_sources_groups_the_count_in_its_warning(tmp_path: Path) -> None:
    """'its cases are merged once per input (18036 cases)': counts over 999 carry separators."""
    import re

    from cbr.store import resolve_casebase

    shutil.copytree(resolve_casebase("default"), tmp_path / "copy")
    got = cbr("casebase", "merge", "default", tmp_path / "copy", "-o", tmp_path / "out")
    assert got.exit_code == 0, got.output
    counts = re.findall(r"its cases are merged once per input \(([\d,]+) cases\)", " ".join(got.stderr.split()))
    assert counts and any(int(c.replace(",", "")) > 999 for c in counts), got.stderr
    assert all(re.fullmatch(r"\d{1,3}(?:,\d{3})*", c) for c in counts), counts


# ---- 9. wording: a list of sizes, a marked pair, singular counts -----------------------------
def test_the_board_sizes_read_as_a_list() -> None:
    got = cbr("query", "--hole", "AdQc", "--board", "3h4c")
    assert got.exit_code == 1
    assert got.stderr.strip() == "error: board must have 0, 3, 4 or 5 cards, got 2 (--board)"


@pytest.mark.parametrize("command", [["hand"], ["query", "--hole"]])
@pytest.mark.parametrize("text, why", [("77s", "cannot be suited"), ("QQo", "takes no 'o' mark")])
def test_a_pair_with_a_suit_mark_says_a_pair_has_none(command: list, text: str, why: str) -> None:
    """``cbr hand 77s`` said "cannot split '77s' into cards (odd number of characters)"."""
    got = cbr(*command, text)
    assert got.exit_code == 1, got.output
    rank = text[0]
    assert got.stderr.strip().startswith(
        f"error: {text!r} is no hand: a pair {why} (the pair's class is {rank * 2}); give cards as rank and suit, "
        f"e.g. {rank}h{rank}s"), got.stderr
    assert cbr("hand", text[:2]).exit_code == 0  # the pair's class itself is taken


def test_logs_inspect_counts_one_source_in_the_singular() -> None:
    got = cbr("logs", "inspect", shared_path("irc"))
    assert got.exit_code == 0, got.output
    line = next(ln for ln in got.stdout.splitlines() if ln.strip().startswith("format irc:"))
    assert line.strip().endswith(", 1 source"), line


# ---- 10. casebase inspect --sql only reads ----------------------------------------------------
@pytest.mark.parametrize("sql, what", [
    ("COPY (SELECT 1) TO 'OUT'", "the statement is a COPY"),
    ("SELECT 1; COPY (SELECT 1) TO 'OUT'", "statement 2 is a COPY"),
    ("CREATE TABLE t AS SELECT 1", "the statement is a CREATE"),
    ("ATTACH 'OUT' AS other", "the statement is an ATTACH"),
    ("EXPORT DATABASE 'OUT'", "the statement is an EXPORT"),
    ("PRAGMA enable_profiling", "the statement is a PRAGMA enable_profiling"),
    ("INSTALL httpfs", "the statement is an INSTALL"),               # DuckDB calls it a LOAD
    ("LOAD httpfs", "the statement is a LOAD"),
])
def test_inspect_sql_refuses_what_could_write(tmp_path: Path, sql: str, what: str) -> None:
    """``cbr casebase inspect default --sql "COPY (SELECT 1) TO '/tmp/x.csv'"`` wrote the file."""
    out = tmp_path / "written"
    got = cbr("casebase", "inspect", "default", "--sql", sql.replace("OUT", str(out)))
    assert got.exit_code == 2, got.output
    assert (f"Invalid value for '--sql': {what}: only queries are run on a case base (SELECT, WITH, DESCRIBE, "
            "SHOW, EXPLAIN, PRAGMA table_info...)") in " ".join(got.output.split()), got.output
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sql, n", [("select 1 as a; select 2 as b", 2),
                                    ("SELECT 1 AS a; DESCRIBE cases; SELECT 3 AS c;", 3)])
def test_inspect_sql_refuses_several_statements(sql: str, n: int) -> None:
    """``--sql 'select 1 as a; select 2 as b'`` printed only ``b``, the first result silently
    dropped: several statements are a usage error naming the reason, in the CLI and the library."""
    from cbr.errors import CaseBaseError
    from cbr.store import CaseBase, resolve_casebase

    got = cbr("casebase", "inspect", "default", "--sql", sql)
    assert got.exit_code == 2, got.output
    assert (f"Invalid value for '--sql': the SQL holds {n} statements: one query is run at a time (only the last "
            "one's result would be shown); run each alone") in " ".join(got.output.split()), got.output
    cb = CaseBase.open(resolve_casebase("default"))
    try:
        with pytest.raises(CaseBaseError, match=f"the SQL holds {n} statements") as info:
            cb.sql(sql)
        assert info.value.field == "sql"
        assert cb.sql("select 1 as a;").fetchall() == [(1,)]  # one statement and its semicolon: run
    finally:
        cb.close()


@pytest.mark.parametrize("sql", [
    "WITH a AS (SELECT street FROM cases) SELECT count(*) AS n FROM a",
    "DESCRIBE cases", "SHOW TABLES", "EXPLAIN SELECT * FROM cases_flop", "PRAGMA table_info('cases')",
    "SUMMARIZE SELECT outcome FROM cases_river",
])
def test_inspect_sql_runs_queries(sql: str) -> None:
    got = cbr("casebase", "inspect", "default", "--sql", sql, "--json")
    assert got.exit_code == 0, got.output
    import json

    assert json.loads(got.stdout)  # rows


def test_inspect_sql_shows_values_as_stored_not_as_rich_markup() -> None:
    """A value or a column name holding ``[red]`` or ``:thumbs_up:`` was drawn as rich markup
    and emoji (``a❌b``): a table shows what the case base holds."""
    got = cbr("casebase", "inspect", "default", "--sql",
              "SELECT 'a:x:b [bold]B[/bold] [red]r' AS s, ':thumbs_up:' AS \"[red]t\"")
    assert got.exit_code == 0, got.output
    assert "a:x:b [bold]B[/bold] [red]r" in got.stdout and ":thumbs_up:" in got.stdout, got.stdout
    assert "[red]t" in got.stdout and "❌" not in got.stdout and "👍" not in got.stdout


def test_the_library_refuses_a_writing_statement_too(tmp_path: Path) -> None:
    from cbr.errors import CaseBaseError
    from cbr.store import CaseBase, resolve_casebase

    out = tmp_path / "x.csv"
    with CaseBase.open(resolve_casebase("default")) as cb:
        with pytest.raises(CaseBaseError, match="the statement is a COPY") as refused:
            cb.sql(f"COPY (SELECT 1) TO '{out}'")
        assert refused.value.field == "sql"
        assert cb.sql("SELECT count(*) FROM cases").fetchone()[0] == cb.count()
    assert not out.exists()
