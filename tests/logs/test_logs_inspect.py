"""`inspect_logs` and `cbr logs inspect`: counts over real logs, JSON output, exit codes, bad files."""
from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cbr.logs.inspect import inspect_logs
from cli import app
from tests.conftest import shared_path

runner = CliRunner()
GOOD = "STATE:{i}:rc/cc/cc/cc:AhKd|2c2d/3s4s9h/Td/Jc:-20|20:a|b\n"  # the pair of deuces wins


def test_report_over_the_limit_dealer_logs():
    report = inspect_logs([shared_path("acpc", "dealer_example_limit")])
    assert report.hands_read == 2000 and report.hands_skipped == 0
    assert report.per_format == {"acpc": {"sources": 2, "hands": 2000, "skipped": 0}}
    assert report.players == 3                                     # p1, p2, p3
    actions = sum(sum(k.values()) for k in report.actions_per_street.values())
    assert report.decisions <= actions and report.decisions > 0.9 * actions
    assert report.decisions_known == report.decisions                # the dealer shows all cards


def test_report_lists_skipped_hands_with_reasons(tmp_path: Path):
    log = tmp_path / "a.log"
    log.write_text(GOOD.format(i=0) + "STATE:1:cc/c\n" + GOOD.format(i=2) + "STATE:3:rc/cc:AhKd|2c2d/Ah4c5c:2|-2:a|b\n")
    report = inspect_logs(log)
    assert report.hands_read == 2
    assert [i.where for i in report.skipped] == [f"{log}:2", f"{log}:4"]
    assert "dealt twice" in report.skipped[1].reason
    data = report.to_dict()
    assert data["hands_skipped"] == 2 and data["skipped"][0]["where"] == f"{log}:2"


def test_rules_engine_rejections_are_skipped_hands(tmp_path: Path):
    # a valid-looking PHH hand where p3 never acts (p1 acts out of turn)
    (tmp_path / "x.phh").write_text("variant = 'NT'\nantes = [0, 0, 0]\nblinds_or_straddles = [1, 2, 0]\n"
                                    "min_bet = 2\nstarting_stacks = [50, 50, 50]\nactions = ['p1 f', 'p2 f']\n")
    report = inspect_logs(tmp_path)
    assert report.hands_read == 0 and report.hands_skipped == 1
    assert [str(i) for i in report.skipped] == [  # named as cbr build names it: file:line: (hand ID): reason
        f"{tmp_path / 'x.phh'}:1: (hand x): action 1 ('f' by position 0 on the preflop) is out of turn: "
        "position 2 is to act"]


def test_cli_text_and_json(tmp_path: Path):
    log = tmp_path / "a.log"
    log.write_text("".join(GOOD.format(i=i) for i in range(3)) + "garbage\n" + "STATE:9:zz\n")
    result = runner.invoke(app, ["logs", "inspect", str(log), "--max-issues", "1"])
    assert result.exit_code == 0, result.output
    # "garbage" is no hand (a line), "STATE:9:zz" a hand that cannot be read
    assert "hands read: 3   skipped: 1   lines that are not hands: 1" in result.output
    assert f"{log}:4" in result.output and "and 1 more" in result.output
    result = runner.invoke(app, ["logs", "inspect", str(log), "--json"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert (data["hands_read"], data["hands_skipped"], data["lines_skipped"]) == (3, 1, 1)
    assert data["per_format"]["acpc"]["hands"] == 3
    assert data["actions_per_street"]["preflop"] == {"f": 0, "c": 3, "r": 3}


def test_cli_real_phh_folder_json():
    result = runner.invoke(app, ["logs", "inspect", str(shared_path("phh", "data", "wsop", "2023")), "--json"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["hands_read"] + data["hands_skipped"] == 83         # SOURCE.md: 83 WSOP 2023 hands
    assert data["hands_read"] >= 17                                  # 7 FT + 11 NT (one may be rejected)


def test_cli_exit_codes(tmp_path: Path):
    bad = tmp_path / "bad.log"
    bad.write_text("STATE:1:cc/c\n")
    result = runner.invoke(app, ["logs", "inspect", str(bad)])
    assert result.exit_code == 1 and "no hand could be read" in result.output
    result = runner.invoke(app, ["logs", "inspect", str(tmp_path / "missing.log")])
    assert result.exit_code == 1 and "no such file" in result.output
    result = runner.invoke(app, ["logs", "inspect", str(bad), "--log-format", "nope"])
    assert result.exit_code == 2 and "known formats" in result.output   # a usage error
    result = runner.invoke(app, ["logs", "inspect"])
    assert result.exit_code == 2                                     # usage error


def test_files_not_read_are_not_counted_as_skipped_hands(tmp_path: Path):
    log = tmp_path / "a.log"
    log.write_text("".join(GOOD.format(i=i) for i in range(3)))
    (tmp_path / "noise.log").write_bytes(bytes(range(256)) * 8)            # no parser reads it
    cb = tmp_path / "cb"                                                 # a case base inside the folder walked
    (cb / "cases" / "flop").mkdir(parents=True)
    (cb / "manifest.json").write_text("{}")
    (cb / "cases" / "flop" / "part-00000.parquet").write_bytes(b"PAR1")
    report = inspect_logs(tmp_path)
    assert report.hands_read == 3 and report.hands_skipped == 0 and report.files_skipped == 2
    assert sorted((Path(i.source).name, i.reason) for i in report.skipped) == [
        ("cb", "a case base, not logs; skipped"),                         # one line, its files not walked
        ("noise.log", "not a log any parser recognises (formats: acpc, irc, phh, pokerstars); skipped")]
    result = runner.invoke(app, ["logs", "inspect", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "sources read: 1   not read: 2" in result.output and "hands read: 3   skipped: 0" in result.output
    assert "format unknown: 0 hands, 0 skipped, 2 sources (2 not read)" in result.output
    data = json.loads(runner.invoke(app, ["logs", "inspect", str(tmp_path), "--json"]).output)
    assert data["hands_skipped"] == 0 and data["files_skipped"] == 2


PHH_HAND = ("variant = 'FT'\nantes = [0, 0]\nblinds_or_straddles = [1, 2]\nsmall_bet = 2\nbig_bet = 4\n"
            "starting_stacks = [200, 200]\nactions = ['d dh p1 AhKd', 'd dh p2 2c2d', 'p2 f']\nhand = 1\n"
            "players = ['a', 'b']\nfinishing_stacks = [201, 199]\n")


def test_lines_that_are_no_hand_are_counted_as_lines_not_hands(tmp_path: Path):
    """A 10-line PHH file read as ACPC said '10 hands skipped': its lines are no hands at all."""
    phh = tmp_path / "h.phh"
    phh.write_text(PHH_HAND)
    assert len(PHH_HAND.splitlines()) == 10
    report = inspect_logs(phh, format="acpc")
    assert (report.hands_read, report.hands_skipped, report.lines_skipped) == (0, 0, 10)
    assert [i.where for i in report.skipped] == [f"{phh}:{n}" for n in range(1, 11)]   # file:line kept
    r = runner.invoke(app, ["logs", "inspect", str(phh), "-f", "acpc", "--max-issues", "1"])
    assert r.exit_code == 1
    assert "hands read: 0   skipped: 0   lines that are not hands: 10" in r.stdout
    assert "format acpc: 0 hands, 0 skipped, 10 lines not hands, 1 source" in r.stdout
    assert "\nlines that are not hands:\n" in r.stdout and f"  {phh}:1: not an ACPC log line" in r.stdout
    assert r.stderr.strip() == (f"error: no hand could be read from {phh} (0 hands skipped, 10 lines that are "
                                "not hands, 0 files not read)")
    # beside real hands: the build counts them as lines too, in text and JSON
    log = tmp_path / "mixed.log"
    log.write_text(PHH_HAND + "".join(GOOD.format(i=i) for i in range(3)) + "STATE:9:zz\n")
    r = runner.invoke(app, ["build", str(log), "-o", str(tmp_path / "cb"), "-j", "1", "--max-issues", "20"])
    assert r.exit_code == 0, r.output
    assert "\n1 hand skipped, 10 lines skipped (not hands):\n" in r.stdout, r.stdout
    assert f"  {log}:10: not an ACPC log line" in r.stdout and f"  {log}:14: " in r.stdout
    r = runner.invoke(app, ["build", str(log), "-o", str(tmp_path / "cb2"), "-j", "1", "--json"])
    data = json.loads(r.stdout)
    assert (data["hands"], data["hands_skipped"], data["lines_skipped"], data["files_skipped"]) == (3, 1, 10, 0)
    r = runner.invoke(app, ["players", "build", str(log), "--store", str(tmp_path / "p.duckdb")])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1] == "1 hand skipped, 10 lines skipped (not hands):"


def test_build_and_inspect_name_every_skipped_hand_alike_with_its_id(tmp_path: Path):
    """A first-time user's report: `cbr build` named the hand only for the rules engine's payoff
    fault (`bad.log:25: (hand 20): payoffs do not match...`), not for a parser's (`bad.log:10:
    action 'X'...`, `bad.log:20: more than 3 raises...`), and `cbr logs inspect` named line 25
    another way (`rejected by the rules engine: payoffs...`, no id). Every skipped hand whose id is
    known reads `file:line: (hand ID): reason` in both, text and --json."""
    lines = [GOOD.format(i=i).rstrip("\n") for i in range(30)]
    lines[9] = "STATE:9:rX/cc/cc/cc:AhKd|2c2d/3s4s9h/Td/Jc:-20|20:a|b"              # a parser's fault
    lines[19] = "STATE:19:rrrrc/cc/cc/cc:AhKd|2c2d/3s4s9h/Td/Jc:-80|80:a|b"         # a parser's: the cap
    lines[24] = "STATE:24:rc/cc/cc/cc:AhKd|2c2d/3s4s9h/Td/Jc:-30|30:a|b"            # the rules engine's
    log = tmp_path / "bad.log"
    log.write_text("\n".join(lines) + "\n")
    expected = [f"{log}:10: (hand 9): ", f"{log}:20: (hand 19): more than 3 raises on the preflop (cap 3)",
                f"{log}:25: (hand 24): payoffs do not match: "]
    built = runner.invoke(app, ["build", str(log), "-o", str(tmp_path / "cb"), "-j", "1"])
    assert built.exit_code == 0, built.output
    said = built.stdout.splitlines()
    k = said.index("3 hands skipped:")
    shown = [s.strip() for s in said[k + 1:k + 4]]
    assert [s.startswith(e) for s, e in zip(shown, expected)] == [True] * 3, shown
    assert "'X'" in shown[0] and "rules engine" not in " ".join(shown)
    inspected = runner.invoke(app, ["logs", "inspect", str(log)])
    assert inspected.exit_code == 0, inspected.output
    listed = inspected.stdout.splitlines()
    k = listed.index("skipped hands:")
    assert [s.strip() for s in listed[k + 1:k + 4]] == shown
    report = json.loads(runner.invoke(app, ["logs", "inspect", str(log), "--json"]).stdout)
    assert [f"{i['where']}: {i['reason']}" for i in report["skipped"]] == shown
    built_json = json.loads(runner.invoke(app, ["build", str(log), "-o", str(tmp_path / "cb2"), "-j", "1",
                                                "--json"]).stdout)
    assert [f"{i['where']}: {i['reason']}" for i in built_json["skipped_hands"]] == shown
