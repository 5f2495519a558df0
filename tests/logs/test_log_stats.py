"""`log_stats` and `cbr logs stats`: per-player statistics of logs, checked against bots whose
play is known, against an independent count on the raw ACPC text, and over every shared format."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cbr.logs.stats import log_stats
from cbr.logs.writers import open_log
from cbr.play.match import run_match
from cbr.stats import mean_ci
from cli import app
from tests.conftest import shared_path

runner = CliRunner()


def _match_log(tmp_path: Path, players: list[str], hands: int, fmt: str = "acpc") -> tuple[Path, object]:
    path = tmp_path / ("m.log" if fmt == "acpc" else "m.phhs")
    with open_log(path, fmt) as w:
        result = run_match(players, hands, seed=3, log=w)
    return path, result


def test_bots_whose_play_is_known(tmp_path: Path):
    """call never raises and never folds; raise always raises: their statistics are certain."""
    log, result = _match_log(tmp_path, ["call", "raise"], 60)
    report = log_stats(log)
    call, rais = report["call"], report["raise"]
    assert report.hands_read == 60 and call.hands == rais.hands == 60
    assert (call.vpip, call.pfr) == (1.0, 0.0)     # calls the blind or the raise, every hand
    assert (rais.vpip, rais.pfr) == (1.0, 1.0)
    assert call.aggression == 0.0 and call.postflop_calls > 0
    assert rais.aggression is None                 # never faces a bet it must call
    assert call.wtsd == rais.wtsd == 1.0           # no one ever folds
    assert call.showdowns == call.saw_flop == 60
    assert call.showdowns_won + rais.showdowns_won <= 60
    sb = result.game.small_bet
    for name in ("call", "raise"):
        p = report[name]
        assert math.isclose(sum(p.results), result[name].total / sb)
        assert math.isclose(p.cumulative()[-1], result[name].total / sb)
        assert (p.sb_per_hand, p.sb_ci) == mean_ci(p.results)
        assert math.isclose(p.sb_per_hand, result[name].sb_per_hand)


def test_the_same_match_in_phh_gives_the_same_statistics(tmp_path: Path):
    acpc, _ = _match_log(tmp_path, ["ehs", "lag", "call"], 45)
    phh, _ = _match_log(tmp_path, ["ehs", "lag", "call"], 45, fmt="phh")
    a, b = log_stats(acpc), log_stats(phh)
    assert a.hands_read == b.hands_read == 45
    assert [p.to_dict() for p in a.ranked()] == [p.to_dict() for p in b.ranked()]


def _independent_2p_counts(path: Path) -> dict[str, dict[str, int]]:
    """VPIP and PFR counted from the raw ``STATE:`` text of a heads-up reverse-blinds limit log:
    seat 1 posts the small blind and acts first pre-flop, then the seats alternate; an action
    faces a bet when it is the small blind's first, or when the action before it was a raise."""
    counts: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        if not line.startswith("STATE:"):
            continue
        fields = line.split(":")
        preflop, names = fields[2].split("/")[0], fields[-1].split("|")
        vpip, pfr = [False, False], [False, False]
        seat, facing = 1, True
        for ch in preflop:
            if ch == "r":
                vpip[seat] = pfr[seat] = True
            elif ch == "c" and facing:
                vpip[seat] = True
            facing = ch == "r"
            seat = 1 - seat
        for s, name in enumerate(names):
            c = counts.setdefault(name, {"hands": 0, "vpip": 0, "pfr": 0})
            c["hands"] += 1
            c["vpip"] += vpip[s]
            c["pfr"] += pfr[s]
    return counts


def test_vpip_and_pfr_agree_with_an_independent_count_on_a_real_log():
    path = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    expected = _independent_2p_counts(path)
    report = log_stats(path)
    got = {p.name: {"hands": p.hands, "vpip": p.vpip_hands, "pfr": p.pfr_hands} for p in report.ranked()}
    assert got == expected
    assert expected["p1"]["vpip"] not in (0, expected["p1"]["hands"])  # a real mix, not a trivial case


@pytest.mark.parametrize("folder", ["acpc/dealer_example_limit", "irc", "phh", "pokerstars_fl"])
def test_every_shared_format(folder: str):
    path = shared_path(*folder.split("/"))
    report = log_stats(path)
    assert report.hands_read > 0 and report.players
    seats = sum(p.hands for p in report.players.values())
    assert seats >= 2 * report.hands_read
    for p in report.players.values():
        assert 0 <= p.pfr_hands <= p.vpip_hands <= p.hands
        assert p.showdowns_won <= p.showdowns <= p.saw_flop <= p.hands
        assert p.hands_with_result <= p.hands
        if p.aggression is not None:
            assert p.aggression == p.postflop_aggressive / p.postflop_calls


def test_cli_table_json_and_plot(tmp_path: Path):
    log, _ = _match_log(tmp_path, ["call", "raise"], 30)
    plot = tmp_path / "cum.png"
    result = runner.invoke(app, ["logs", "stats", str(log), "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    assert "VPIP" in result.output and "call" in result.output and "plot written to" in result.output
    data = plot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    result = runner.invoke(app, ["logs", "stats", str(log), "--json", "--player", "raise"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["hands_read"] == 30 and out["players_in_logs"] == 2
    assert [p["player"] for p in out["players"]] == ["raise"]
    assert out["players"][0]["vpip"] == 1.0 and out["players"][0]["counts"]["pfr"] == 30


def test_cli_refusals(tmp_path: Path):
    log, _ = _match_log(tmp_path, ["call", "raise"], 4)
    result = runner.invoke(app, ["logs", "stats", str(log), "--player", "nobody"])
    assert result.exit_code == 1 and "no player nobody" in result.output
    (tmp_path / "old.png").write_bytes(b"x")
    result = runner.invoke(app, ["logs", "stats", str(log), "--plot", str(tmp_path / "old.png")])
    assert result.exit_code == 1 and "already exists" in result.output
    assert (tmp_path / "old.png").read_bytes() == b"x"
    result = runner.invoke(app, ["logs", "stats", str(log), "--plot", str(tmp_path / "x.jpg")])
    assert result.exit_code == 2
    empty = tmp_path / "empty.log"
    empty.write_text("garbage\n")
    result = runner.invoke(app, ["logs", "stats", str(empty)])
    assert result.exit_code == 1 and "no hand could be read" in result.output


def test_a_file_not_read_is_not_a_skipped_hand(tmp_path: Path):
    """--max-file-size below a log's size: the file is counted and named as not read (it was
    counted as one skipped hand, and named nowhere in the table)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    big, _ = _match_log(tmp_path / "a", ["call", "raise"], 40)
    small, _ = _match_log(tmp_path / "b", ["call", "raise"], 2)
    report = log_stats([big, small], max_file_size=big.stat().st_size - 1)
    assert report.hands_read == 2 and report.hands_skipped == 0 and report.files_not_read == 1
    assert report.to_dict()["files_not_read"] == 1 and report.to_dict()["hands_skipped"] == 0
    result = runner.invoke(app, ["logs", "stats", str(big), str(small), "--max-file-size", str(big.stat().st_size - 1)])
    assert result.exit_code == 0, result.output
    assert "1 file not read" in result.output and "skipped" not in result.output.splitlines()[0]
    assert f"not read: {big}" in result.output


def test_limit_and_no_limit_mixed_are_said():
    """The PHH folder holds limit and no-limit hands: their sb/h do not add up, and the command says so."""
    path = shared_path("phh")
    report = log_stats(path)
    assert report.mixed and set(report.games) == {"limit", "no-limit"}
    result = runner.invoke(app, ["logs", "stats", str(path)])
    assert result.exit_code == 0 and "warning: these logs mix limit" in result.output


def test_json_gives_ratios_to_six_significant_digits_and_counts_exact():
    """``--json`` printed every ratio unrounded (``0.11428571428571428``): the shares, AF, sb/h and
    its CI are now to 6 significant digits; the counts stay exact."""
    path = shared_path("acpc", "dealer_example_limit")
    report = log_stats(path)
    result = runner.invoke(app, ["logs", "stats", str(path), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["hands_read"] == report.hands_read and out["players"]
    longer = 0
    for got in out["players"]:
        want = report[got["player"]].to_dict()
        assert got["counts"] == want["counts"] and got["hands"] == want["hands"]
        assert got["hands_with_result"] == want["hands_with_result"]
        for key in ("vpip", "pfr", "aggression", "wtsd", "wsd", "sb_per_hand", "sb_ci"):
            if want[key] is None:
                assert got[key] is None
                continue
            assert got[key] == float(f"{want[key]:.6g}"), (key, got[key], want[key])
            digits = repr(abs(got[key])).replace(".", "").lstrip("0").split("e")[0]
            assert len(digits) <= 6, (key, got[key])
            longer += got[key] != want[key]
    assert longer > 0  # these logs have ratios of more digits than that: the rounding was needed
