"""Game definitions refuse amounts that are not chips (NaN, infinities, astronomic numbers) on
construction, so every way a game comes in (presets, inline JSON, game files, a log's
``# game:`` header, a server request) gets the same check."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cbr.errors import ConfigError
from cbr.game.gamedef import MAX_CHIPS, GameDef, preset
from cbr.game.spec import load_game
from cli import app

runner = CliRunner()
HU = preset("holdem.limit.2p")
BAD = [math.nan, math.inf, -math.inf, 1e308, MAX_CHIPS * 10]


def game_dict(**changes) -> dict:
    return {**HU.to_dict(), "name": "x", **changes}


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("field", ["blinds", "antes", "small_bet", "big_bet", "stack"])
def test_amounts_that_are_not_chips_are_refused(field, bad) -> None:
    value = [bad, 5.0] if field in ("blinds", "antes") else bad
    with pytest.raises(ConfigError, match=r"is not a number of chips"):
        GameDef.from_dict(game_dict(**{field: value}))


def test_large_and_ordinary_amounts_are_kept() -> None:
    g = GameDef.from_dict(game_dict(blinds=[MAX_CHIPS, 5], stack=MAX_CHIPS))
    assert g.blinds == (float(MAX_CHIPS), 5.0) and g.stack == MAX_CHIPS
    assert preset("holdem.nolimit.6p").stack == 10_000
    with pytest.raises(ConfigError, match="cannot be negative"):
        GameDef.from_dict(game_dict(blinds=[-10, 5]))


def test_inline_json_and_game_files_get_the_check(tmp_path: Path) -> None:
    text = json.dumps(game_dict(blinds=[math.nan, 5]))  # json writes NaN, as a user may type it
    with pytest.raises(ConfigError, match="blind nan"):
        load_game(text, files=False)
    acpc = tmp_path / "huge.game"
    acpc.write_text(HU.to_acpc_game().replace("blind = 10 5", "blind = 10 " + "9" * 400))
    with pytest.raises(ConfigError, match="not a number of chips"):
        load_game(str(acpc))


@pytest.mark.parametrize("bad", ["NaN", "1e308"])
def test_cbr_query_refuses_such_a_game_in_one_line(bad, tmp_path: Path) -> None:
    """Inline on the command line it is a malformed --game value: a usage error (exit 2); in a
    game file, a bad input file: one ``error:`` line (exit 1)."""
    game = json.dumps(game_dict()).replace("[10.0, 5.0]", f"[{bad}, 5.0]")
    assert bad in game
    r = runner.invoke(app, ["query", "--game", game, "--hole", "AdQc"])
    assert r.exit_code == 2, r.output
    said = " ".join(r.stderr.replace("│", " ").split())
    assert "Invalid value for '--game': the inline game JSON: " in said and "not a number of chips" in said, r.stderr
    (tmp_path / "g.json").write_text(game)
    r = runner.invoke(app, ["query", "--game", str(tmp_path / "g.json"), "--hole", "AdQc"])
    assert r.exit_code == 1, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "not a number of chips" in lines[0], r.stderr


def test_cbr_build_skips_a_log_header_with_a_nan_blind_and_names_it(tmp_path: Path) -> None:
    header = json.dumps(game_dict(), separators=(",", ":")).replace("[10.0,5.0]", "[NaN,5.0]")
    assert "NaN" in header
    log = tmp_path / "nan.log"
    log.write_text(f"# game: {header}\nSTATE:0:cc/crc/cc/cc:5d5c|9hQd/8dAs8s/4h/6d:20|-20:p1|p2\n")
    r = runner.invoke(app, ["build", str(log), "-o", str(tmp_path / "cb")])
    assert r.exit_code == 0, r.output
    assert f"{log}:1: bad '# game:' header" in r.stdout and "blind nan is not a number of chips" in r.stdout
    assert "from 1 hand in 1 source" in r.stdout  # the hand itself is read in the default game
