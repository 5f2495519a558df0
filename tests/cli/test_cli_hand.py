"""`cbr hand`: driven through typer's CliRunner."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["hand", *args])


def test_flop_text_output() -> None:
    result = run("AcQs", "3h4sJd", "--trials", "2000")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "category   high card" in out
    assert "HS         0.5851" in out  # published: (628 + 9/2) / 1081
    for label in ("PPOT", "NPOT", "EHS", "E[HS^2]", "win", "tie", "lose", "AQo"):
        assert label in out


def test_json_output_matches_the_library() -> None:
    import evaluator_ext

    result = run("AdQc", "3h4cJh8d", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["hole"] == "AdQc" and data["board"] == "3h4cJh8d"
    assert data["hs"] == pytest.approx(evaluator_ext.hand_strength("AdQc", "3h4cJh8d"))
    ppot, npot = evaluator_ext.hand_potential("AdQc", "3h4cJh8d")
    assert (data["ppot"], data["npot"]) == pytest.approx((ppot, npot))
    assert data["ehs"] == pytest.approx(evaluator_ext.effective_hand_strength("AdQc", "3h4cJh8d"))
    assert data["ehs2"] == pytest.approx(evaluator_ext.hand_strength_squared("AdQc", "3h4cJh8d"))
    # Heads-up on the turn the showdown is enumerated exactly.
    assert data["exact"] is True
    assert (data["win"], data["tie"], data["lose"]) == pytest.approx(evaluator_ext.win_probability("AdQc", "3h4cJh8d"))
    assert data["win"] + data["tie"] + data["lose"] == pytest.approx(1.0)


def test_preflop_shows_na_and_still_win_tie_lose() -> None:
    result = run("7h2c", "--trials", "3000", "--seed", "3", "--opponents", "2")
    assert result.exit_code == 0, result.output
    assert "n/a" in result.output
    assert "preflop rank 169 of 169" in result.output
    data = json.loads(run("7h2c", "--trials", "3000", "--seed", "3", "--opponents", "2", "--json").output)
    assert data["hs"] is None and data["category"] is None
    assert data["preflop_class"] == "72o" and data["preflop_rank"] == 169
    assert data["win"] + data["tie"] + data["lose"] == pytest.approx(1.0)
    assert data["trials"] == 3000 and data["seed"] == 3 and data["exact"] is False


def test_seed_makes_it_deterministic() -> None:
    a = json.loads(run("AsAc", "--trials", "2000", "--seed", "9", "--json").output)
    b = json.loads(run("AsAc", "--trials", "2000", "--seed", "9", "--json").output)
    assert a == b


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("AsXc",), "Xc"),
        (("AsAs",), "twice"),
        (("As", "3h4sJd"), "hole"),
        (("AsKd", "3h4s"), "board"),
        (("AsKd", "3h4sKd"), "Kd"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(args: tuple[str, ...], needle: str) -> None:
    result = run(*args)
    assert result.exit_code == 1
    message = result.output.strip()
    assert message.startswith("error:") and needle in message
    assert len(message.splitlines()) == 1
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("AsKd", "--opponents", "10"), "--opponents"),
        (("AsKd", "--opponents", "99999999999999999999"), "--opponents"),
        (("AsKd", "--trials", "0"), "--trials"),
        (("AsKd", "-n", "2", "--opponents", "3"), "--opponents"),
    ],
)
def test_out_of_range_counts_are_usage_errors(args: tuple[str, ...], needle: str) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert needle in result.stderr and "Traceback" not in result.output


def test_minus_n_is_a_hidden_alias_of_opponents() -> None:
    a = json.loads(run("AsKd", "--opponents", "2", "--trials", "500", "--json").stdout)
    b = json.loads(run("AsKd", "-n", "2", "--trials", "500", "--json").stdout)
    assert a == b and a["opponents"] == 2
    assert "-n" not in run("--help").stdout.split()
