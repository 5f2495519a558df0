"""Format detection and reading many logs: extensions and contents, folders, overrides."""
from __future__ import annotations

from pathlib import Path

import pytest

from cbr.errors import LogFormatError, PluginError
from cbr.logs.detect import detect_format, log_sources, parser_for, read_log_text, read_logs
from cbr.logs.record import HandRecord, ParseIssue
from tests.conftest import shared_path

ACPC_LINE = "STATE:0:rc/cc/cc/cc:AhKd|2c2d/3c4c5c/6c/7c:20|-20:a|b\n"
PHH_HAND = ("variant = 'NT'\nantes = [0, 0]\nblinds_or_straddles = [1, 2]\nmin_bet = 2\n"
            "starting_stacks = [50, 50]\nactions = ['p2 f']\n")


def test_detect_real_files():
    assert detect_format(shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")) == "acpc"
    assert detect_format(shared_path("acpc", "pluribus_6p_nolimit", "sample_game_101b.log")) == "acpc"
    assert detect_format(shared_path("phh", "data", "pluribus", "30", "0.phh")) == "phh"


def test_detect_by_content_not_name(tmp_path: Path):
    (tmp_path / "a.txt").write_text(ACPC_LINE)
    (tmp_path / "b.toml").write_text(PHH_HAND)
    assert detect_format(tmp_path / "a.txt") == "acpc"
    assert detect_format(tmp_path / "b.toml") == "phh"
    (tmp_path / "c.log").write_text("hello\n")
    with pytest.raises(LogFormatError, match="not a log"):
        detect_format(tmp_path / "c.log")
    with pytest.raises(FileNotFoundError):
        detect_format(tmp_path / "missing.log")


def test_walk_skips_non_logs_and_keeps_irc_folders_whole():
    sources = log_sources([shared_path()])
    paths = [s for s, _ in sources]
    assert not any(Path(p).name in ("SOURCE.md", "README.txt", "INDEX.md") for p in paths)
    formats = {f for _, f in sources}
    assert {"acpc", "phh"} <= formats and None not in formats
    assert sum(f == "acpc" for _, f in sources) == 2 + 92
    assert sum(f == "phh" for _, f in sources) == 171
    irc = [s for s, f in sources if f == "irc"]
    if irc:  # the IRC parser (another module) takes a database folder as one source
        assert all(Path(s).is_dir() for s in irc)


def test_read_logs_order_progress_and_explicit_unknown(tmp_path: Path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "2.phh").write_text(PHH_HAND)
    (tmp_path / "sub" / "10.phh").write_text(PHH_HAND)
    (tmp_path / "x.log").write_text(ACPC_LINE)
    (tmp_path / "README.md").write_text("# not a log\n")
    (tmp_path / "notes.txt").write_text("nothing\n")
    calls = []
    items = list(read_logs([tmp_path, tmp_path / "notes.txt"],
                           progress=lambda n=1, total=None: calls.append((n, total))))
    hands = [i for i in items if isinstance(i, HandRecord)]
    assert [Path(h.source).name for h in hands] == ["2.phh", "10.phh", "x.log"]
    issues = [i for i in items if isinstance(i, ParseIssue)]
    assert len(issues) == 1 and issues[0].source.endswith("notes.txt")
    assert calls[0] == (0, 4) and len(calls) == 5


def test_format_override(tmp_path: Path):
    (tmp_path / "a.dat").write_text(PHH_HAND)
    [h] = list(read_logs(tmp_path / "a.dat", format="phh"))
    assert h.format == "phh"
    with pytest.raises(PluginError, match="known formats: .*acpc.*phh"):
        list(read_logs(tmp_path, format="nope"))
    assert parser_for("acpc").name == "acpc"


def test_read_log_text_encodings(tmp_path: Path):
    p = tmp_path / "x.log"
    p.write_bytes("\ufeffSTATE:é\n".encode("utf-8"))
    assert read_log_text(p) == ("STATE:é\n", None)
    p.write_bytes(b"ok\nbad \xff\n")
    text, issue = read_log_text(p)
    assert text == "ok\nbad \xff\n" and issue.line == 2 and "latin-1" in issue.reason
