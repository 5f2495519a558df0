"""A damaged model store (issue 16, defect 6): truncated or overwritten bytes of a real store
used to end in "internal error" exit 3 (``IOException ... Could not read enough bytes``) or
be called "in use by another process" (``Corrupt database file ... block``). Every command
that reads the store says ``error: model store F is damaged (...)`` in one line, exits 1,
and leaves the file as it was."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cbr.errors import ModelError
from cbr.models.store import ModelStore, build_store
from cli import app
from tests.conftest import shared_path

runner = CliRunner()


def cbr(*args: object, input: str | None = None):
    return runner.invoke(app, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store") / "players.duckdb"
    build_store([shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")], path)
    return path


def _truncated(src: Path, dst: Path, keep: int) -> Path:
    dst.write_bytes(src.read_bytes()[:keep])
    return dst


def _overwritten(src: Path, dst: Path, at: int, length: int) -> Path:
    data = bytearray(src.read_bytes())
    data[at:at + length] = b"\xff" * length
    dst.write_bytes(bytes(data))
    return dst


def _damaged_copies(store: Path, folder: Path) -> list[Path]:
    size = store.stat().st_size
    return [
        _truncated(store, folder / "half.duckdb", size // 2),             # connects, fails on reading players
        _truncated(store, folder / "head.duckdb", 100_000),                # fails on connecting
        _truncated(store, folder / "tiny.duckdb", 1_000),
        _overwritten(store, folder / "header.duckdb", 100, 2_000),         # the header's checksum
        _overwritten(store, folder / "block.duckdb", 12_288, 8_192),       # a block's checksum
    ]


def _one_damaged_line(result, path: Path) -> None:
    assert result.exit_code == 1, (result.exit_code, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and f"model store {path} is damaged (" in lines[0], lines[0]  # a bot's spec named first


def _files(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


@pytest.mark.time_limit(300)
def test_every_command_says_the_store_is_damaged(store: Path, tmp_path: Path) -> None:
    copies = _damaged_copies(store, tmp_path)
    before = _files(tmp_path)
    for path in copies:
        with pytest.raises(ModelError, match=r"is damaged \("):
            with ModelStore.open(path, read_only=True) as s:
                s.load()
        _one_damaged_line(cbr("players", "inspect", "--store", path), path)
        _one_damaged_line(cbr("query", "--opponent", "p1", "--models", path, "--hole", "AsKs"), path)
        _one_damaged_line(cbr("players", "build", shared_path("acpc", "dealer_example_limit", "3p.limit.h1000.r0.log"),
                              "--store", path), path)
        _one_damaged_line(cbr("match", "--players", f"poki-wt:store={path},call", "--hands", "2"), path)
        _one_damaged_line(cbr("play", "--human", "--bots", f"poki-wt:store={path}", "--hands", "1", input="q\n"), path)
    assert _files(tmp_path) == before  # nothing written into the damaged files, nothing left beside them


def test_a_whole_store_still_opens_and_a_copy_is_not_damaged(store: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.duckdb"
    shutil.copy(store, copy)
    r = cbr("players", "inspect", "--store", copy, "--json")
    assert r.exit_code == 0, r.stderr
    with ModelStore.open(copy, read_only=True) as s:
        assert s.players() == ["p1", "p2"]
