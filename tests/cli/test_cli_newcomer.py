"""Defects a new user meets first (acceptance passes): seats labelled by their spec, help
ranges that the checks agree with, one-line errors for any bad numeric value, bot specs as
usage errors everywhere, thousands separators in every count."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cbr.errors import GameError
from cbr.play.match import run_match
from cbr.play.table import seat_names, unique_names
from cbr.policies.spec import policy_from_spec
from cli import app

runner = CliRunner()


def cbr(*args: object, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


# ---- 1. a seat is labelled by its spec, unique per table -----------------------------------
def test_seat_names_are_the_specs_numbered_from_the_second_seat() -> None:
    specs = ["cfr:strategy=counter_raise", "cfr:strategy=counter_call", "call", "call"]
    assert seat_names([policy_from_spec(s) for s in specs]) == [
        "cfr/strategy=counter_raise", "cfr/strategy=counter_call", "call", "call#2"]
    assert unique_names(["a", "a#2", "a"]) == ["a", "a#2", "a#3"]  # unique even against a label that looks numbered


@pytest.mark.parametrize("players, labels", [
    ("cfr:strategy=counter_raise,cfr:strategy=counter_call", ["cfr/strategy=counter_raise", "cfr/strategy=counter_call"]),
    ("ehs:raise-ehs=0.7,ehs,call,call", ["ehs/raise-ehs=0.7", "ehs", "call", "call#2"]),
])
def test_match_labels_seats_alike_in_text_json_log_and_curves(tmp_path: Path, players: str, labels: list) -> None:
    log = tmp_path / "m.log"
    text = cbr("match", "--players", players, "--hands", 8, "--log", log)
    assert text.exit_code == 0, text.output
    for label in labels:
        assert f" {label} " in text.stdout
    got = cbr("match", "--players", players, "--hands", 8, "--json")
    assert got.exit_code == 0, got.output
    rows = json.loads(got.stdout)["players"]
    assert [p["name"] for p in rows] == labels
    assert [p["policy"] for p in rows] == players.split(",")
    score = log.read_text().strip().splitlines()[-1]
    assert score.startswith("SCORE:") and score.split(":")[-1].split("|") == labels
    states = [ln for ln in log.read_text().splitlines() if ln.startswith("STATE:")]
    assert states and all(sorted(ln.split(":")[-1].split("|")) == sorted(labels) for ln in states)
    result = run_match(players.split(","), 8, keep_payoffs=True)  # what --plot draws, one curve per label
    assert list(result.curves()) == labels


def test_retained_cases_name_their_opponents_by_the_labels_of_the_log(tmp_path: Path) -> None:
    from cbr.play.retention import copy_casebase
    from cbr.store import CaseBase

    path = copy_casebase("default", tmp_path / "mine")

    class Recorder:
        def __init__(self) -> None:
            self.records: list = []

        def write(self, record) -> None:  # noqa: ANN001
            self.records.append(record)

    rec = Recorder()
    run_match([f"cbr:preset=casper:casebase={path}", "call", "call"], 12, seed=3, retain=True, log=rec)
    me = f"cbr/preset=casper/casebase={path}"
    assert all(set(r.players) == {me, "call", "call#2"} for r in rec.records)
    rows = CaseBase.open(path).sql("SELECT player, opponents FROM cases WHERE source = 'retained'").fetchall()
    assert rows
    everyone = {me, "call", "call#2"}
    for player, opponents in rows:
        assert player in everyone and sorted(opponents.split(",")) == sorted(everyone - {player})


# ---- 4. a bad bot spec is refused alike in every command that seats bots ------------------
# a bad option value is a usage error (exit 2); a file an option names that is missing is a bad
# input file (exit 1, docs/cli.md), named by the spec and the option
@pytest.mark.parametrize("spec, code", [("cfr:resolve=sometimes", 2), ("lag:stab-rate=half", 2),
                                        ("cfr:strategy=nope", 1), ("thesis-net:logs=/no/such/logs", 1)])
@pytest.mark.parametrize("command", [
    ("match", "--hands", "2", "--players", "{spec},call"),
    ("league", "--hands", "2", "--bots", "{spec},call"),
    ("play", "--human", "--hands", "1", "--bots", "{spec}"),
    ("play", "--acpc", "127.0.0.1:9", "--policy", "{spec}"),
])
def test_bad_bot_specs_are_refused_alike_by_every_command(command: tuple, spec: str, code: int) -> None:
    got = cbr(*(a.format(spec=spec) for a in command), input="")
    assert got.exit_code == code, got.output
    assert "Traceback" not in got.output and spec in got.stderr
    if code == 1:
        option = spec.split(":")[1].split("=")[0]
        assert got.stderr.startswith(f"error: policy spec {spec!r}: option {option!r}: "), got.stderr


# ---- 2. a range --help shows is one the checks accept ---------------------------------------
@pytest.mark.parametrize("command, option", [
    (("casebase", "condense", "default", "-o", "unused"), "--keep"),
    (("match", "--players", "call,call", "--retain"), "--retain-gate"),
])
def test_a_share_above_0_says_so_in_help_and_refuses_0(command: tuple, option: str) -> None:
    shown = cbr(*command[:2] if command[0] == "casebase" else command[:1], "--help")
    assert shown.exit_code == 0
    text = " ".join(shown.stdout.split())
    start = text.index(option + " ", text.index("Options:"))
    help_text = text[start:start + 300].split(" --k ")[0].split(" --help ")[0]
    assert "above 0 and at most 1" in help_text and "0.0<=x" not in help_text
    for value in ("0", "-0.5", "1.5"):
        got = cbr(*command, option, value)
        assert got.exit_code == 2 and "above 0 (at most 1)" in got.stderr, (value, got.output)


# ---- 3. every bad number is one line, never pydantic's words or a traceback ------------------
def _numeric_options():
    import typer
    from typer._click.core import Context

    def walk(command, path):
        if hasattr(command, "list_commands"):
            ctx = Context(command)
            for name in command.list_commands(ctx):
                yield from walk(command.get_command(ctx, name), [*path, name])
            return
        for param in command.params:
            d = getattr(param, "type_descriptor", None)
            kind = getattr(d.annotation, "__args__", (d.annotation,))[0] if d is not None else None
            if kind in (int, float) and not param.hidden:
                ranged = d.parameter_info.min is not None or d.parameter_info.max is not None
                yield (*path, param.opts[0], "ranged" if ranged else "open")

    return list(walk(typer.main.get_command(app), []))


NUMERIC_OPTIONS = _numeric_options()


def test_the_sweep_finds_the_numeric_options() -> None:
    assert len(NUMERIC_OPTIONS) > 60
    assert ("match", "--hands", "ranged") in NUMERIC_OPTIONS and ("casebase", "condense", "--keep", "open") in NUMERIC_OPTIONS


@pytest.mark.parametrize("option", NUMERIC_OPTIONS, ids=" ".join)
def test_bad_numbers_are_one_line_usage_errors(option: tuple) -> None:
    """Not a number at all, or (an option with a range) NaN; a float option without a range
    takes NaN and infinities, and its command says why it cannot use them (cbr query --pot)."""
    *option, ranged = option
    for value in ("", "abc", "1e999x", "1.5e", *(["nan"] if ranged == "ranged" else [])):
        got = cbr(*option, value)
        assert got.exit_code == 2, (value, got.output)
        errors = [ln for ln in got.stderr.splitlines() if ln.startswith("Error:")]
        assert len(errors) == 1 and "Traceback" not in got.output, got.output
        assert "Input should" not in got.output and repr(value) in errors[0], (value, errors)  # says what was typed


def test_out_of_range_numbers_name_the_range_as_help_shows_it() -> None:
    got = cbr("query", "--hole", "AsKs", "--threshold", "2")
    assert got.exit_code == 2 and "2 is not in the range 0.0<=x<=1.0" in got.stderr
    got = cbr("match", "--players", "call,call", "--hands", "-1")
    assert got.exit_code == 2 and "-1 is not in the range 1<=x<=1000000000" in got.stderr
    assert "1<=x<=1000000000" in " ".join(cbr("match", "--help").stdout.split())


@pytest.mark.parametrize("command", [
    ("play", "--acpc", "127.0.0.1:9", "--timeout"),
    ("serve-dealer", "--players", "remote,call", "--connect-timeout"),
    ("serve-dealer", "--players", "remote,call", "--timeout"),
])
@pytest.mark.parametrize("value", ["inf", "1e300"])
def test_an_endless_wait_is_a_usage_error_not_a_crash(command: tuple, value: str) -> None:
    """`--timeout inf` reached the socket: OverflowError, exit 3 (internal error)."""
    got = cbr(*command, value)
    assert got.exit_code == 2, got.output
    assert "is not in the range 0.001<=x<=604800" in got.stderr


# ---- 5. counts over 999 carry thousands separators, as the rest of the output does -----------
def _no_bare_count(text: str) -> None:
    """No run of four or more digits outside a path, a decimal or a seed."""
    import re

    bare = [m.group() for m in re.finditer(r"(?<![\w./,:-])\d{4,}(?![\w.,/])", text)]
    assert not bare, (bare, text)


def test_casebase_inspect_build_verify_and_players_separate_thousands(tmp_path: Path) -> None:
    shown = cbr("casebase", "inspect", "default")
    assert shown.exit_code == 0, shown.output
    head = shown.stdout.split("preflop features")[0]
    assert "100,064 cases" in head and "32,875" in head
    _no_bare_count(head.split("\ngames:", 1)[1])  # past the path and the creation date
    log = Path(__file__).resolve().parents[2] / "casebases" / "selfplay" / "hu-ehs-hs.log"
    built = cbr("build", log, "-o", tmp_path / "cb")
    assert built.exit_code == 0, built.output
    assert "7,844 cases (preflop 2,556, flop 2,090, turn 1,717, river 1,481) from 1,200 hands" in built.stdout
    verified = cbr("casebase", "verify", tmp_path / "cb")
    assert verified.exit_code == 0 and "sound (7,844 cases)" in verified.stdout, verified.output
    store = tmp_path / "players.duckdb"
    read = cbr("players", "build", log, "--store", store)
    assert read.exit_code == 0 and read.stdout.startswith("1,200 hands read"), read.output
    table = cbr("players", "inspect", "--store", store)
    assert table.exit_code == 0 and "1,200" in table.stdout
    _no_bare_count(table.stdout.replace(str(store), ""))


def test_match_and_dealer_titles_separate_thousands() -> None:
    got = cbr("match", "--players", "call,call", "--hands", 1200, "--duplicate")
    assert got.exit_code == 0 and "1,200 hands (duplicate, 600 deals)" in got.stdout, got.output
    dealt = cbr("serve-dealer", "--players", "call,call", "--hands", 1200)
    assert dealt.exit_code == 0 and "holdem.limit.2p: 1,200 hands" in dealt.stdout, dealt.output


# ---- 6. cbr match: sb/h and mbb/h agree, a long bot name keeps its row on one line -----------
def _match_rows(stdout: str) -> list[list[str]]:
    """The body rows of `cbr match`'s table, as cells."""
    return [[c.strip() for c in line.strip().strip("│").split("│")] for line in stdout.splitlines()
            if line.startswith("│")]


def test_match_mbb_column_agrees_with_the_sb_column() -> None:
    """400 hands of call against raise, seed 10: +0.2625 sb/h printed as +0.263 beside +262 mbb/h
    (each rounded on its own, 262.5 to even); the CI columns likewise. --json keeps the exact rates."""
    got = cbr("match", "--players", "call,raise", "--hands", 400, "--seed", 10)
    assert got.exit_code == 0, got.output
    rows = _match_rows(got.stdout)
    assert [r[3] for r in rows] == ["+0.263", "-0.263"] and [r[5] for r in rows] == ["+263", "-263"], got.stdout
    for row in rows:
        assert float(row[3]) * 1000 == pytest.approx(float(row[5])) and float(row[4]) * 1000 == pytest.approx(float(row[6]))
    shown = json.loads(cbr("match", "--players", "call,raise", "--hands", 400, "--seed", 10, "--json").stdout)
    assert shown["players"][0]["sb_per_hand"] == 0.2625 and shown["players"][0]["mbb_per_hand"] == 262.5
    assert shown == run_match(["call", "raise"], 400, seed=10).to_dict()


def test_match_mbb_columns_group_thousands_as_the_other_big_numbers() -> None:
    """10 hands of raise against call, seed 3: -2.100 sb/h and a CI of 4.116 sb/h were printed as
    -2100 and 4116 mbb/h, without the thousands separators of the table's chips; --json keeps plain
    numbers."""
    got = cbr("match", "--players", "raise,call", "--hands", 10, "--seed", 3)
    assert got.exit_code == 0, got.output
    rows = _match_rows(got.stdout)
    assert [r[3:] for r in rows] == [["-2.100", "4.116", "-2,100", "4,116"], ["+2.100", "4.116", "+2,100", "4,116"]], \
        got.stdout
    for row in rows:
        assert float(row[3]) * 1000 == float(row[5].replace(",", "")) and float(row[4]) * 1000 == float(row[6].replace(",", ""))
    shown = json.loads(cbr("match", "--players", "raise,call", "--hands", 10, "--seed", 3, "--json").stdout)
    assert shown["players"][0]["mbb_per_hand"] == -2100.0
    small = _match_rows(cbr("match", "--players", "call,raise", "--hands", 400, "--seed", 10).stdout)
    assert [r[5] for r in small] == ["+263", "-263"] and "," not in small[0][6]  # below 1,000: as before


def test_match_cuts_a_long_bot_name_in_its_middle_and_json_keeps_it_whole() -> None:
    players = "cfr:resolve-gadget=none:resolve-iters=120,call"
    got = cbr("match", "--players", players, "--hands", 4, "--seed", 3)
    assert got.exit_code == 0, got.output
    table = [line for line in got.stdout.splitlines() if line[:1] in "┏┃┡│└"]
    assert all(len(line) <= 80 for line in table), got.stdout
    rows = _match_rows(got.stdout)
    assert len(rows) == 2, got.stdout  # one line a seat: the name did not wrap
    assert rows[0][1].startswith("cfr/resolve-") and rows[0][1].endswith("iters=120") and "…" in rows[0][1]
    assert rows[1][1] == "call" and "--json has them whole" in got.stdout
    shown = json.loads(cbr("match", "--players", players, "--hands", 4, "--seed", 3, "--json").stdout)
    assert [p["name"] for p in shown["players"]] == ["cfr/resolve-gadget=none/resolve-iters=120", "call"]


def test_match_leaves_short_names_whole() -> None:
    got = cbr("match", "--players", "ehs:raise-ehs=0.7,call", "--hands", 4)
    assert got.exit_code == 0, got.output
    assert [r[1] for r in _match_rows(got.stdout)] == ["ehs/raise-ehs=0.7", "call"] and "…" not in got.stdout


# ---- seats: a game of another seat count, an empty seat ------------------------------------
def test_a_game_of_another_seat_count_is_a_usage_error_naming_both_options() -> None:
    """``serve-dealer --players call,raise,fold --game holdem.limit.4p`` was a plain error (exit 1):
    conflicting options are a usage error (exit 2) naming them (docs/cli.md)."""
    result = cbr("serve-dealer", "--players", "call,raise,fold", "--game", "holdem.limit.4p", "--hands", 2)
    assert result.exit_code == 2, result.output
    assert "--game" in result.stderr and "--players" in result.stderr and "4" in result.stderr, result.stderr
    assert "3" in result.stderr, result.stderr


@pytest.mark.parametrize("command", [("match",), ("serve-dealer", "--port", "0")])
@pytest.mark.parametrize("players", ["call,,raise", ",call,raise", "call, ,raise"])
def test_an_empty_seat_in_players_is_a_usage_error(command: tuple, players: str) -> None:
    """``cbr match --players "call,,raise"`` silently played heads-up."""
    result = cbr(*command, "--players", players, "--hands", 2)
    assert result.exit_code == 2, result.output
    assert "--players" in result.stderr and "empty" in result.stderr, result.stderr



@pytest.mark.parametrize("players, said", [
    ("adapt:safe=emd_256,call,raise", "the adapt bot's safe expert, emd_256, plays heads-up only: it cannot play at a table of 3"),
    ("call,cfr,raise,call", "the cfr bot plays heads-up only: it cannot play at a table of 4"),
])
def test_a_heads_up_bot_at_a_bigger_table_is_a_usage_error_before_the_match(tmp_path: Path, players: str,
                                                                             said: str) -> None:
    """``cbr match --players adapt:safe=emd_256,call,raise`` played, then stopped at the safe
    expert's first decision: ``error: the cfr bot plays heads-up fixed limit, not 'holdem.limit.3p'``,
    exit 1. The library refuses it too, before any hand; heads-up both play."""
    log = tmp_path / "m.log"
    result = cbr("match", "--players", players, "--hands", 150, "--log", log)
    assert result.exit_code == 2, result.output
    assert said in " ".join(result.stderr.split()), result.stderr
    assert "--players" in result.stderr and not log.exists()
    with pytest.raises(GameError, match=said.replace(".", "[.]")):
        run_match(players.split(","), 10)
    bot = players.split(",")[1 if players.startswith("call") else 0]
    assert run_match([bot, "call"], 2, seed=1).hands == 2

@pytest.mark.parametrize("args, line", [
    (("--hole", "AdQc", "--board", "3h4c"), "error: board must have 0, 3, 4 or 5 cards, got 2 (--board)"),
    (("--hole", "AdQx"), "error: unknown card 'Qx' (expected rank 2-9TJQKA and suit cdhs, e.g. 'Ah') (--hole)"),
    (("--hole", "Ad"), "error: hole must be exactly 2 cards, got 1 (--hole)"),
    (("--hole", "AdQc", "--board", "3h4cAd"), "error: card Ad appears twice (--hole, --board)"),
    (("--hole", "AdQc", "--board", "3h3h4c"), "error: card 3h appears twice (--board)"),
])
def test_a_card_error_names_its_option(args: tuple, line: str) -> None:
    """``cbr query --hole AdQc --board 3h4c`` said ``error: board must have 0, 3, 4, 5 cards, got 2``
    without the ``(--board)`` docs/cli.md promises for an error about an input."""
    result = cbr("query", *args)
    assert result.exit_code == 1 and result.stderr.strip().splitlines() == [line], result.output
