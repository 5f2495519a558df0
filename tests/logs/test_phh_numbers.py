"""Absurd numbers in PHH hands (issue 16, defect 6): a 5,000-digit integer stack used to end
`cbr build` with "internal error" exit 3 (Python refuses to read integers that long) and a
400-digit one with an OverflowError. A hand with a number that is not finite or larger than
10^15 chips is skipped and reported with file and line; the other hands are read."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cbr.logs.phh import PhhParser
from cbr.logs.record import HandRecord, ParseIssue

HAND = """variant = 'FT'
antes = [0, 0]
blinds_or_straddles = [BLIND, 2]
small_bet = 2
big_bet = 4
starting_stacks = [STACK, 100]
actions = ['d dh p1 AhKd', 'd dh p2 QsQd', 'p2 cbr AMOUNT', 'p1 cc', 'd db 2c3d4h', 'p1 cc', 'p2 cc',
           'd db 5s', 'p1 cc', 'p2 cc', 'd db 9s', 'p1 cc', 'p2 cc']
"""
ABSURD = ["9" * 5000, "1" + "0" * 400, "inf", "nan", "-inf", "1e400", str(10**16)]  # chips: at most 10^15


def _hand(stack: str = "100", blind: str = "1", amount: str = "4") -> str:
    return HAND.replace("STACK", stack).replace("BLIND", blind).replace("AMOUNT", amount)


def _tables(hands: list[str]) -> tuple[str, list[int]]:
    """A .phhs (one ``[n]`` table per hand) and the line of each table."""
    text, lines = "", []
    for i, h in enumerate(hands):
        lines.append(text.count("\n") + 1)
        text += f"[{i + 1}]\n{h}\n"
    return text, lines


@pytest.mark.parametrize("field", ["stack", "blind", "amount"])
def test_an_absurd_number_skips_its_hand_only(field: str) -> None:
    hands = [_hand()] + [_hand(**{field: value}) for value in ABSURD] + [_hand()]
    text, lines = _tables(hands)
    items = list(PhhParser().parse_text(text, "absurd.phhs"))
    records = [i for i in items if isinstance(i, HandRecord)]
    issues = [i for i in items if isinstance(i, ParseIssue)]
    assert [r.line for r in records] == [lines[0], lines[-1]]
    assert [i.line for i in issues] == lines[1:-1]
    for issue in issues:
        assert issue.source == "absurd.phhs" and len(issue.reason) < 300, issue.reason
        assert "digits" in issue.reason or "out of range" in issue.reason, issue.reason


def test_the_build_goes_on_and_names_the_hand(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "good.phh").write_text(_hand())
    (logs / "huge.phh").write_text(_hand(stack="9" * 5000))
    (logs / "bet.phh").write_text(_hand(amount="9" * 5000))
    exe = Path(sys.executable).with_name("cbr")
    r = subprocess.run([str(exe), "build", str(logs), "-o", str(tmp_path / "cb"), "-j", "1", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["hands"] == 1
    where = sorted(s["where"] for s in report["skipped_hands"])
    assert where == [f"{logs / 'bet.phh'}:1", f"{logs / 'huge.phh'}:1"]
    # only absurd numbers: no hand, one line, exit 1 (not 3)
    (logs / "good.phh").unlink()
    r = subprocess.run([str(exe), "build", str(logs), "-o", str(tmp_path / "cb2"), "-j", "1"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "cb2").exists()
