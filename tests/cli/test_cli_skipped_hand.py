"""A skipped hand's location reads the same in every command: ``file:line: (hand N): problem``.

For the same hand whose payoffs do not match, ``cbr build`` wrote ``f.log:5: (hand 0): ...``
and ``cbr train predictor`` ``f.log:5 (hand 0): ...`` (the rules engine's own wording).
"""
from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from cli import app
from tests.conftest import shared_path

runner = CliRunner()
BAD = "STATE:0:cc/cc/cc/cc:AhKh|QdQc/2c3c4c/5c/6c:40|-40:a|b\n"  # a showdown whose payoffs are wrong
WHERE = "f.log:5: (hand 0): payoffs do not match"


def test_build_and_train_predictor_name_a_skipped_hand_alike(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("f.log").write_text("# one\n# two\n# three\n# four\n" + BAD)
    said = {}
    for name, args in (("build", ["build", "f.log", "-o", "cb", "-j", "1"]),
                       ("train predictor", ["train", "predictor", "f.log"])):
        r = runner.invoke(app, args)
        assert r.exit_code == 1, (name, r.output)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, (name, r.stderr)
        assert WHERE in lines[0], (name, lines[0])
        said[name] = lines[0][lines[0].index("f.log:5"):]
    assert said["build"] == said["train predictor"]


def test_a_build_lists_a_skipped_hand_in_the_same_words(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    good = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log").read_text().splitlines(keepends=True)
    hands = [line for line in good if line.startswith("STATE:")][:50]
    Path("f.log").write_text("# one\n# two\n# three\n# four\n" + BAD + "".join(hands))
    r = runner.invoke(app, ["build", "f.log", "-o", "cb", "-j", "1"])
    assert r.exit_code == 0, r.output
    assert f"  {WHERE}" in r.stdout, r.stdout
