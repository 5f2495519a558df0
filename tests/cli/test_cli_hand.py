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


def test_a_class_before_the_flop_gives_the_classes_numbers() -> None:
    """Issue 35, defect 8: `72o` was "cannot split '72o' into cards". Before the flop a class's
    holdings share their numbers (suits do not matter yet): those of one of them. With a
    board a class is not a holding: one line saying so and giving a holding to type."""
    for cls, name, holdings, holding in (("72o", "72o", 12, "7h2c"), ("KAs", "AKs", 4, "AhKh"), ("qq", "QQ", 6, "QhQc")):
        data = json.loads(run(cls, "--trials", "2000", "--seed", "4", "--json").output)
        want = json.loads(run(holding, "--trials", "2000", "--seed", "4", "--json").output)
        assert data["hole"] == name and data["holdings"] == holdings
        assert {k: data[k] for k in ("preflop_class", "preflop_rank", "win", "tie", "lose")} == \
            {k: want[k] for k in ("preflop_class", "preflop_rank", "win", "tie", "lose")}
    text = run("72o", "--trials", "2000").output
    assert text.startswith("hole       72o   a class of 12 holdings") and "preflop rank 169 of 169" in text
    result = run("72o", "3h4sJd")
    message = result.output.strip()
    assert result.exit_code == 1 and len(message.splitlines()) == 1
    assert message == "error: '72o' is a hand class (72o, offsuit), not a holding: give two cards with their suits, e.g. 7h2c"


@pytest.mark.parametrize(("text", "classes", "holding"), [
    ("AK", "AKs or AKo", "AhKc"), ("KA", "AKs or AKo", "AhKc"), ("t9", "T9s or T9o", "Th9c"), (" 72 ", "72s or 72o", "7h2c"),
])
def test_two_ranks_without_a_mark_name_the_two_classes(text: str, classes: str, holding: str) -> None:
    """`cbr hand AK` was "unknown card 'AK'", with no word of what to type. Before the flop a
    class is taken, and AK stands between two (suited and offsuit: their numbers differ), so
    the line names both and a holding; with a board (no class taken) the holding only, as
    `cbr query --hole AK` says it."""
    shown = text.strip()
    result = run(text)
    assert (result.exit_code, result.output.strip()) == (
        1, f"error: '{shown}' is no holding and no class: say suited or offsuit, {classes}, or give two cards with "
           f"their suits, e.g. {holding}")
    result = run(text, "3h4sJd")
    assert (result.exit_code, result.output.strip()) == (
        1, f"error: '{shown}' has no suits: give two cards with their suits, e.g. {holding}")
    result = runner.invoke(app, ["query", "--hole", text, "--board", "3h4sJd"])
    assert (result.exit_code, result.output.strip()) == (
        1, f"error: '{shown}' has no suits: give two cards with their suits, e.g. {holding} (--hole)")
    # each form the message suggests works
    for form in (*classes.split(" or "), holding):
        assert run(form, "--trials", "200").exit_code == 0, form


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
