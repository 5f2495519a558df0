"""Damaged or wrong files where a command expects a solver's or a bot's file (a cut ``.npz``,
a binary file given as a similarity configuration) used to end in ``internal error`` exit 3
(``BadZipFile``, ``UnicodeDecodeError``). Each is one ``error:`` line, exit 1, naming the file."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cbr.store import PACKAGED_CASEBASES
from cli import app

CFR = PACKAGED_CASEBASES / "cfr"
runner = CliRunner()


def one_error_line(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 1, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "internal error" not in lines[0], result.stderr
    return lines[0]


def cut(src: Path, dst: Path, keep: float) -> Path:
    """``src`` cut to the share ``keep`` of its bytes (0 <= keep < 1), written at ``dst``."""
    data = src.read_bytes()
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(data[: int(len(data) * keep)])
    return dst


@pytest.mark.parametrize("keep", [0.0, 0.15, 0.5, 0.95])
def test_a_cut_bucket_game(tmp_path: Path, keep: float) -> None:
    shutil.copy(CFR / "h_hs2_4" / "abstraction.json", tmp_path / "abstraction.json")
    cut(CFR / "h_hs2_4" / "bucket_game.npz", tmp_path / "bucket_game.npz", keep)
    line = one_error_line(["abstraction", "inspect", str(tmp_path)])
    assert "bucket_game.npz" in line


@pytest.mark.parametrize("keep", [0.0, 0.001, 0.5])
def test_a_cut_distribution_abstraction_or_strategy(tmp_path: Path, keep: float) -> None:
    for name in ("abstraction.npz", "strategy.npz"):
        folder = tmp_path / name.split(".")[0]
        shutil.copytree(CFR / "emd_256", folder)
        cut(CFR / "emd_256" / name, folder / name, keep)
        line = one_error_line(["match", "--players", f"cfr:strategy={folder},ehs", "--hands", "2"])
        assert name in line, line


def test_a_binary_file_as_a_similarity_configuration() -> None:
    line = one_error_line(["match", "--players", f"cbr:similarity={CFR / 'h_hs2_4' / 'bucket_game.npz'},call",
                           "--hands", "2"])
    assert "not a TOML text file" in line
