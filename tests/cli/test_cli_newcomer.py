"""Defects a new user meets first (acceptance passes): seats labelled by their spec, help
ranges that the checks agree with, one-line errors for any bad numeric value, bot specs as
usage errors everywhere, thousands separators in every count."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

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


# ---- 4. a bad bot spec is a usage error (exit 2) in every command that seats bots ------------
@pytest.mark.parametrize("spec", ["cfr:strategy=nope", "thesis-net:logs=/no/such/logs"])
@pytest.mark.parametrize("command", [
    ("match", "--hands", "2", "--players", "{spec},call"),
    ("league", "--hands", "2", "--bots", "{spec},call"),
    ("play", "--human", "--hands", "1", "--bots", "{spec}"),
    ("play", "--acpc", "127.0.0.1:9", "--policy", "{spec}"),
])
def test_unknown_bot_option_values_are_usage_errors(command: tuple, spec: str) -> None:
    got = cbr(*(a.format(spec=spec) for a in command), input="")
    assert got.exit_code == 2, got.output
    assert "Traceback" not in got.output and spec in got.stderr

