"""A file a policy spec names (``poki-wt:predictor=``, ``thesis-net:model=``, ``cfr:strategy=``,
``cbr:casebase=``...) that is missing, unreadable or of another kind is a bad input file: one
``error:`` line naming the spec and its option, exit 1, as docs/cli.md's table puts "a missing or
unreadable path" and as ``cbr query -c nosuch`` says it. Some of these were usage errors (exit 2,
``Invalid value for '--players'``), others exit 1 with the exception's class name
(``not a CFR strategy file (KeyError)``) or an option ``cbr match`` does not have (``(--store)``)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Files of every kind the specs below name: garbage, a cut model store, a CFR+ run's strategy
    and checkpoint (limit), a no-limit strategy."""
    from cbr.models.store import ModelStore

    root = tmp_path_factory.mktemp("spec-files")
    (root / "garbage.bin").write_bytes(b"not a model of any kind\n" * 40)
    with ModelStore.open(root / "whole.duckdb", create=True):
        pass
    data = (root / "whole.duckdb").read_bytes()
    (root / "cut.duckdb").write_bytes(data[: len(data) // 40])
    for game, name in (("holdem.limit.2p", "limit.npz"), ("nolimit.fcpa", "nolimit.npz")):
        r = runner.invoke(app, ["train", "cfr", "-a", "h_hs2_4", "-n", "1", "--game", game, "-o", str(root / name)])
        assert r.exit_code == 0, r.output
    assert (root / "limit.npz.ckpt.npz").is_file()
    return {"root": root}


#: spec (ROOT: the fixture's folder), the option named, words of the reason
CASES = [
    ("poki-wt:predictor=ROOT/garbage.bin", "predictor", "is not an action predictor file"),
    ("poki-wt:predictor=ROOT/missing.ann", "predictor", "No such file or directory"),
    ("poki-wt:store=ROOT/cut.duckdb", "store", "is damaged"),
    ("poki-wt:store=ROOT/garbage.bin", "store", "is not a model store: not a DuckDB database file"),
    ("simbot:store=ROOT/cut.duckdb", "store", "is damaged"),
    ("thesis-net:model=ROOT/missing.ann", "model", "No such file or directory"),
    ("thesis-net:model=ROOT/nolimit.npz", "model", "is not a thesis network file"),
    ("thesis-net:logs=ROOT/missing", "logs", "no such file or folder"),
    ("cfr:strategy=ROOT/missing.npz", "strategy", "no such strategy"),
    ("cfr:strategy=ROOT/garbage.bin", "strategy", "not a CFR strategy file (not a NumPy .npz archive"),
    ("cfr:strategy=ROOT/limit.npz.ckpt.npz", "strategy",
     "not a CFR strategy file but the checkpoint of a `cbr train cfr` run (--resume continues it); "
     "play the strategy the run wrote, ROOT/limit.npz"),
    ("cfr:strategy=ROOT/nolimit.npz", "strategy", "the cfr bot plays fixed-limit strategies; this one is for nolimit.fcpa"),
    ("cbr:casebase=ROOT/missing", "casebase", "no case base"),
    ("cbr:similarity=ROOT/missing.toml", "similarity", "does not exist or is not a file"),
    ("cbr:models=ROOT/missing.duckdb", "models", "no model store file at"),
    ("adapt:styles=ROOT/missing.json", "styles", "style cases"),
    ("adapt:styles=ROOT/garbage.bin", "styles", "not a style-case file"),
]


@pytest.mark.parametrize("spec, option, reason", CASES, ids=[c[0] for c in CASES])
def test_a_bad_file_in_a_spec_is_one_error_line_exit_1(files: dict[str, Path], spec: str, option: str,
                                                        reason: str) -> None:
    root = str(files["root"])
    spec, reason = spec.replace("ROOT", root), reason.replace("ROOT", root)
    result = runner.invoke(app, ["match", "--players", f"{spec},call", "--hands", "2"])
    assert result.exit_code == 1, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: policy spec {spec!r}: option {option!r}: "), lines[0]
    assert reason in lines[0]
    assert not re.search(r"\b[A-Z][A-Za-z]*(Error|Exception)\b", lines[0]), lines[0]  # no exception class names
    assert not re.search(r"\(--[a-z-]+\)$", lines[0]), lines[0]  # no option of another command (`(--store)`)
    assert result.stdout == ""  # refused before any hand


def test_the_other_commands_that_take_specs_say_it_the_same_way(files: dict[str, Path]) -> None:
    spec = f"cfr:strategy={files['root'] / 'missing.npz'}"
    for args in (["exploit", spec, "--hands", "10"], ["league", "--players", f"{spec},call", "-n", "2"],
                 ["play", "--human", "--players", spec, "-n", "1"]):
        result = runner.invoke(app, args, input="")
        assert result.exit_code == 1, (args, result.output)
        assert result.stderr.startswith(f"error: policy spec {spec!r}: option 'strategy': "), result.stderr


def test_a_bad_option_value_stays_a_usage_error() -> None:
    """Only files moved: a value the bot refuses is still the option's usage error (exit 2)."""
    result = runner.invoke(app, ["match", "--players", "cfr:resolve=bogus,call", "--hands", "2"])
    assert result.exit_code == 2
    assert "Invalid value for '--players'" in result.stderr
