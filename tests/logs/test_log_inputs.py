"""Log inputs (issue 7, sections 2, 6 and 10): what is read, what is skipped and why.

Special files that could block or exhaust memory (named pipes, /dev/zero) are exercised
in ``tests/reliability/test_log_inputs.py`` in bounded child processes; here are the
ordinary faults: symlink loops, deep nesting, damaged exports, unknown files, unreadable
files, UTF-16, the size limit, and ``cbr build`` saying why.
"""
from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cbr.build.local import build_casebase
from cbr.errors import CBRError, LogFormatError
from cbr.logs.detect import detect_format, parser_for, read_logs, scan_logs
from cbr.logs.inspect import inspect_logs
from cbr.logs.record import HandRecord, ParseIssue
from cbr.logs.source import decode_log_bytes, file_problem, file_size_limit, format_size, parse_size, read_log_text
from cli import app
from tests.conftest import shared_path

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()
ACPC = "STATE:{i}:rc/cc/cc/cc:AhKd|2c2d/3s4s9h/Td/Jc:-20|20:a|b\n"  # the pair of deuces wins
PHH = ("variant = 'FT'\nantes = [0, 0]\nblinds_or_straddles = [1, 2]\nsmall_bet = 2\nbig_bet = 4\n"
       "starting_stacks = [100, 100]\nactions = ['d dh p1 AhKd', 'd dh p2 7c2d', 'p2 f']\n"
       "finishing_stacks = [101, 99]\n")
PS_FILES = ["HHSmithy/GameTypeTests_FixedLimitHoldem.txt"]


def acpc_log(path: Path, hands: int = 3, players: str = "a|b") -> Path:
    path.write_text("".join(ACPC.format(i=i).replace("a|b", players) for i in range(hands)))
    return path


def cbr(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def skipped(report) -> dict[str, str]:
    """File name (or file:line) -> reason, for the skipped entries of a report."""
    return {Path(i.where).name: i.reason for i in report.skipped}


# ---------------------------------------------------------------- symlink loops
def test_symlink_loops_in_a_folder_are_listed_not_a_traceback(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    (logs / "deep").mkdir(parents=True)
    acpc_log(logs / "deep" / "a.log")
    (logs / "deep" / "up").symlink_to("..")              # a folder loop
    (logs / "self.log").symlink_to("self.log")           # a link to itself (ELOOP)
    report = inspect_logs(logs)
    assert report.hands_read == 3
    why = skipped(report)
    assert "symlink loop" in why["up"] and "symlink loop" in why["self.log"]
    result = cbr("logs", "inspect", logs)
    assert result.exit_code == 0 and "Traceback" not in result.output
    assert "symlink loop" in result.output


def test_a_deep_folder_tree_is_walked_without_recursion() -> None:
    """Deeper than Python's recursion limit. The tree is made and removed here, level by
    level (``shutil.rmtree``, which pytest uses on old temp folders, recurses and would fail)."""
    top = Path(tempfile.mkdtemp(prefix="cbr-deep-"))
    levels = [top / "logs"]
    try:
        levels[0].mkdir()
        for _ in range(sys.getrecursionlimit() + 50):
            levels.append(levels[-1] / "d")
            levels[-1].mkdir()
        acpc_log(levels[-1] / "x.log", hands=1)
        [source] = scan_logs([levels[0]])
        assert source.format == "acpc" and source.path == str(levels[-1] / "x.log")
    finally:
        (levels[-1] / "x.log").unlink(missing_ok=True)
        for level in reversed(levels):
            if level.exists():
                level.rmdir()
        top.rmdir()


# ---------------------------------------------------------------- deep nesting
def test_deeply_nested_phh_skips_that_file_only(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "1.phh").write_text(PHH)
    (logs / "2.phh").write_text("variant = 'FT'\nactions = " + "[" * 100_000 + "]" * 100_000 + "\n")
    (logs / "3.phh").write_text(PHH)
    report = inspect_logs(logs)
    assert report.hands_read == 2
    assert "nested too deeply" in skipped(report)["2.phh"]
    items = list(read_logs(logs))
    assert sum(isinstance(i, HandRecord) for i in items) == 2


# ---------------------------------------------------------------- PokerStars detection
def _export(tmp_path: Path) -> tuple[Path, int]:
    """The real sample hands, each ten times with its own hand number, in one export."""
    text = shared_path("pokerstars_fl", *PS_FILES[0].split("/")).read_text(encoding="utf-8-sig").strip("\n")
    first, rest = text.split("\n", 1)
    number = first.split("#", 1)[1].split(":", 1)[0]
    hands = [first.replace(f"#{number}:", f"#{number}{k}:") + "\n" + rest for k in range(10)]
    path = tmp_path / "export" / "stars.txt"
    path.parent.mkdir()
    path.write_text("\n\n\n".join(hands) + "\n")
    return path, len(hands)


def test_pokerstars_export_with_a_damaged_first_line_is_still_recognised(tmp_path: Path) -> None:
    path, n = _export(tmp_path)
    clean = inspect_logs(path.parent)
    assert clean.hands_read == n == 10
    lines = path.read_text().split("\n")
    lines[0] = "PokerSt\x00rs H@nd " + lines[0][14:]          # the first header damaged
    path.write_text("\n".join(lines))
    assert detect_format(path) == "pokerstars"
    report = inspect_logs(path.parent)
    assert report.per_format["pokerstars"]["sources"] == 1
    assert report.hands_read >= 8 and report.hands_read + report.hands_skipped >= n
    assert report.skipped and report.skipped[0].line == 1 and report.skipped[0].hand_skipped  # a hand, not lines
    assert report.skipped[0].reason.startswith("a hand without its PokerStars Game # line (damaged?): ")


def test_a_file_no_parser_recognises_is_always_listed(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    acpc_log(logs / "a.log")
    (logs / "damaged.txt").write_text("Pokerstars, mangled beyond recognition\nnothing else\n")
    (logs / "README.md").write_text("# notes beside the logs: left out by name\n")
    report = inspect_logs(logs)
    assert report.hands_read == 3
    assert list(skipped(report)) == ["damaged.txt"]
    assert "not a log any parser recognises" in skipped(report)["damaged.txt"]
    assert [i.source for i in read_logs(logs) if isinstance(i, ParseIssue)] == [str(logs / "damaged.txt")]


# ---------------------------------------------------------------- unreadable files
def _drop_dac_capabilities() -> None:  # pragma: no cover - runs in the child
    """Root without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH after exec: file modes apply to it."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):
        if libc.prctl(24, cap, 0, 0, 0) != 0:            # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


INSPECT_CHILD = """
import json, sys
from cbr.logs.inspect import inspect_logs
from cbr.logs.source import read_log_text
from cbr.errors import LogFormatError
r = inspect_logs(sys.argv[1:2])
try:
    read_log_text(sys.argv[2])
    direct = None
except LogFormatError as exc:
    direct = str(exc)
print(json.dumps({"hands": r.hands_read, "skipped": [[i.source, i.line, i.reason] for i in r.skipped],
                  "direct": direct}))
"""


def test_an_unreadable_file_is_reported_as_cannot_be_read(tmp_path: Path) -> None:
    """chmod 000 does not stop root, so as root the check runs in a child process that is
    root without the capabilities that override file modes (a real EACCES, no mock)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    acpc_log(logs / "a.log")
    secret = acpc_log(logs / "secret.log")
    secret.chmod(0)
    cmd = [sys.executable, "-c", INSPECT_CHILD, str(logs), str(secret)]
    if os.geteuid() == 0:
        out = subprocess.run(cmd, preexec_fn=_drop_dac_capabilities, capture_output=True, text=True,
                             timeout=60, cwd=REPO)
    else:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["hands"] == 3
    assert data["skipped"] == [[str(secret), 0, "cannot be read (Permission denied); skipped"]]
    assert data["direct"] == f"{secret}: cannot be read (Permission denied)"


# ---------------------------------------------------------------- encodings
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
def test_logs_with_a_byte_order_mark_are_decoded(tmp_path: Path, encoding: str) -> None:
    bom = {"utf-16-be": "\ufeff"}.get(encoding, "")      # Python's utf-16/utf-32/utf-8-sig write one
    for name, text, fmt, hands in (("a.log", "".join(ACPC.format(i=i) for i in range(3)), "acpc", 3),
                                   ("b.phh", PHH, "phh", 1)):
        path = tmp_path / encoding / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes((bom + text).encode(encoding))
        assert detect_format(path) == fmt
        assert read_log_text(path) == (text, None)
        report = inspect_logs(path)
        assert (report.hands_read, report.hands_skipped, report.notes) == (hands, 0, [])


def test_utf16_pokerstars_export_is_read(tmp_path: Path) -> None:
    path, n = _export(tmp_path)
    path.write_bytes(path.read_text().encode("utf-16"))
    assert inspect_logs(path.parent).hands_read == n


def test_bad_bytes_are_a_note_with_the_line() -> None:
    assert decode_log_bytes(b"a\nb\n\xff\n") == ("a\nb\n\xff\n", 3)
    text, line = decode_log_bytes(b"\xff\xfea\x00\n\x00\x00\xd8\n\x00")  # a lone surrogate on line 2
    assert line == 2 and text.startswith("a\n")


# ---------------------------------------------------------------- size limit
def test_files_over_the_size_limit_are_skipped_and_the_option_raises_it(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    small = acpc_log(logs / "small.log", hands=1)
    big = acpc_log(logs / "big.log", hands=40)
    limit = small.stat().st_size + 10
    report = inspect_logs(logs, max_file_size=limit)
    assert report.hands_read == 1 and "larger than the" in skipped(report)["big.log"]
    assert inspect_logs(logs, max_file_size=big.stat().st_size).hands_read == 41
    assert file_problem(big, limit).endswith(f"larger than the {limit} bytes limit per file (--max-file-size raises it)")
    result = cbr("logs", "inspect", logs, "--max-file-size", limit, "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["hands_read"] == 1
    result = cbr("logs", "inspect", logs, "--max-file-size", "1M", "--json")
    assert json.loads(result.stdout)["hands_read"] == 41
    bad = cbr("logs", "inspect", logs, "--max-file-size", "lots")
    assert bad.exit_code == 2 and "not a file size" in bad.output
    built = cbr("build", logs, "-o", tmp_path / "cb", "-j", "1", "--max-file-size", limit, "--json")
    assert built.exit_code == 0, built.output
    data = json.loads(built.stdout)
    assert data["hands"] == 1 and [s["where"] for s in data["skipped_hands"]] == [str(big)]
    assert cbr("build", logs, "-o", tmp_path / "cb2", "--max-file-size", "-5").exit_code == 2
    assert parse_size("256M") == 256 << 20
    with pytest.raises(LogFormatError):
        parse_size("0")


def test_the_size_limit_holds_for_files_inside_a_database_folder(tmp_path: Path) -> None:
    month = shared_path("irc", "IRCdata", "holdem", "199504")
    folder = Path(shutil.copytree(month, tmp_path / "199504"))
    read = inspect_logs(folder)
    assert read.hands_read > 0
    limit = (folder / "hdb").stat().st_size - 1
    report = inspect_logs(folder, max_file_size=limit)
    assert report.hands_read == 0
    [issue] = report.skipped
    assert issue.where == str(folder) and "hdb: " in issue.reason
    assert issue.reason.endswith(f"larger than the {format_size(limit)} limit per file; skipped")
    with file_size_limit(limit), pytest.raises(LogFormatError, match="limit per file"):
        list(parser_for("irc").parse(str(folder)))


# ---------------------------------------------------------------- build says why
def _inspect_reason(path: Path) -> str:
    [issue] = inspect_logs(path).skipped
    return issue.text  # the reason as every report gives it: after the hand's id when it is known


def _build_error(path: Path, tmp_path: Path) -> str:
    result = cbr("build", path, "-o", tmp_path / "cb", "-j", "1")
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output
    assert not (tmp_path / "cb").exists()
    return lines[0]


def test_build_of_a_file_that_is_not_a_log_says_why(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("my poker notes\n")
    reason = _inspect_reason(path)
    assert "not a log any parser recognises" in reason and reason.endswith("; skipped")
    # the build's error gives inspect's reason, without the "skipped" of inspect's list, and the path once
    line = _build_error(path, tmp_path)
    assert line.endswith(f"{path}: {reason.removesuffix('; skipped')}") and line.count(str(path)) == 1, line


def test_build_of_a_truncated_hand_says_why(tmp_path: Path) -> None:
    path = tmp_path / "cut.log"
    path.write_text(ACPC.format(i=0)[:25] + "\n")
    reason = _inspect_reason(path)
    assert "truncated" in reason
    assert f"cut.log:1: {reason}" in _build_error(path, tmp_path)


def test_build_of_an_irc_folder_without_hroster_says_why(tmp_path: Path) -> None:
    month = shared_path("irc", "IRCdata", "holdem", "199504")
    folder = tmp_path / "199504"
    (folder / "pdb").mkdir(parents=True)
    (folder / "hdb").write_bytes((month / "hdb").read_bytes()[:2000])
    for pdb in sorted((month / "pdb").iterdir())[:3]:
        (folder / "pdb" / pdb.name).write_bytes(pdb.read_bytes())
    reason = _inspect_reason(folder)
    assert "hroster is missing" in reason
    assert f"{folder}: {reason.removesuffix('; skipped')}" in _build_error(folder, tmp_path)
    with pytest.raises(CBRError, match="hroster is missing"):
        build_casebase([folder / "hdb"], tmp_path / "cb2")


# ---------------------------------------------------------------- read once
def test_the_same_input_given_twice_is_read_once(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    a = acpc_log(logs / "a.log", hands=4)
    (logs / "again").symlink_to(".", target_is_directory=True)   # the folder reached twice
    once = inspect_logs(logs)
    twice = inspect_logs([logs, a, str(a), logs / "again"])
    assert once.hands_read == twice.hands_read == 4 and twice.hands_skipped == once.hands_skipped
    report = build_casebase([logs, a], tmp_path / "cb")
    assert report.hands == 4 and report.sources == 1


def test_a_skipped_file_given_twice_is_listed_once(tmp_path: Path) -> None:
    """A file too large (or a pipe, or a dangling link) given by itself and inside a folder
    given too was listed twice: only files that could be read were merged."""
    logs = tmp_path / "logs"
    logs.mkdir()
    big = acpc_log(logs / "a.log", hands=4)
    other = acpc_log(logs / "b.log", hands=4)
    os.mkfifo(logs / "p.log")
    (logs / "gone.log").symlink_to(tmp_path / "nowhere.log")
    limit = big.stat().st_size - 1
    given = [logs, big, f"{logs}/./a.log", logs / "p.log", logs / "gone.log", str(logs / "gone.log")]
    sources = scan_logs(given, max_file_size=limit)
    assert sorted(os.path.basename(s.path) for s in sources) == ["a.log", "b.log", "gone.log", "p.log"], sources
    assert all(s.problem for s in sources)
    assert inspect_logs(given, max_file_size=limit).files_skipped == 4
    result = cbr("build", *given, "-o", tmp_path / "cb", "--max-file-size", str(limit))
    assert result.exit_code == 1 and "(and 3 more skipped;" in result.stderr, result.stderr
    assert other.stat().st_size > limit


# ---------------------------------------------------------------- --players filter
def test_unknown_player_names_are_reported(tmp_path: Path) -> None:
    log = acpc_log(tmp_path / "a.log", hands=3, players="alice|bob")
    report = build_casebase([log], tmp_path / "cb", players=["alice", "carol"])
    # the first warning is about the names; the case base's own gaps (cbr.store.honesty) follow
    assert report.warnings[0] == "--only-players names not found in the logs: carol"
    assert not any("carol" in w for w in report.warnings[1:])
    assert report.to_dict()["warnings"] == report.warnings
    with pytest.raises(CBRError, match=r"none of the players to keep \(dave, erin\) appears in the logs; "
                                       r"players there include alice, bob"):
        build_casebase([log], tmp_path / "cb2", players=["dave", "erin"])
    assert not (tmp_path / "cb2").exists()
    result = cbr("build", log, "-o", tmp_path / "cb3", "-j", "1", "--players", "bob,zed")
    assert result.exit_code == 0, result.output
    assert "warning: --only-players names not found in the logs: zed" in result.stderr
