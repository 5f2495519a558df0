"""Small CLI defects a first-time user found: error wording and labels, old/new option
spellings that agree, rounded JSON, thousands separators, table layout, quitting a hand."""
from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

from cli import app

runner = CliRunner()


def cbr(*args: object, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


# ---- 1. a league without Dask says "a league", not "a build" --------------------------------
@pytest.mark.parametrize("command, what", [
    (["league", "--players", "call,fold", "--hands", 2, "--scheduler", "local"], "a league"),
])
def test_scheduler_without_dask_names_the_command(monkeypatch: pytest.MonkeyPatch, command: list, what: str) -> None:
    for name in ("dask", "dask.distributed", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)  # an ImportError, as when Dask is not installed
    got = cbr(*command)
    assert got.exit_code == 1, got.output
    assert f"error: {what} on a scheduler needs Dask" in got.output
