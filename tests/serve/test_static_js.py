"""The pure functions of the web pages' scripts, run by Node.js (the browser tests need Chromium,
which is not everywhere): the table's error line and the API page's code spans.

Issue 35: web errors ended in a bare ``(404)``; the ``/docs`` header showed raw backticks."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import missing

STATIC = Path(__file__).resolve().parents[2] / "cbr" / "serve" / "static"


def _node() -> str:
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        missing("no node or nodejs on PATH: the web pages' script functions are run by Node.js")
    return node  # type: ignore[return-value]


def _function(text: str, name: str) -> str:
    """The source of the top-level ``function NAME(...) {...}`` of a script (it ends at a line ``}``)."""
    m = re.search(rf"^function {name}\(.*?^}}$", text, re.S | re.M)
    assert m is not None, f"no top-level function {name} in the script"
    return m.group(0)


def _call(source: str, name: str, *args) -> object:
    script = f"{source}\nprocess.stdout.write(JSON.stringify({name}(...{json.dumps(list(args))})));\n"
    out = subprocess.run([_node(), "-e", script], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def error_text() -> str:
    return _function((STATIC / "table.js").read_text(), "errorText")


@pytest.mark.parametrize("status, data, status_text, shown", [
    (404, {"detail": "no such table session 'x'"}, "Not Found", "no such table session 'x'"),
    (422, {"detail": [{"loc": ["body", "seed"], "msg": "bad seed"}, {"msg": "and more"}]}, "",
     "seed: bad seed; and more"),
    (404, None, "", "the server answered 404 (not found)"),
    (502, {"detail": ""}, "Bad Gateway", "the server answered 502 (Bad Gateway)"),
    (599, None, "", "the server answered 599 (request failed)"),
])
def test_the_table_says_what_failed_without_a_bare_status(error_text, status, data, status_text, shown) -> None:
    text = _call(error_text, "errorText", status, data, status_text)
    assert text == shown
    assert not re.search(r"\(\d+\)$", text)


@pytest.fixture(scope="module")
def split_code() -> str:
    return _function((STATIC / "api.html").read_text(), "splitCode")


@pytest.mark.parametrize("text, pieces", [
    ("Retrieval over `cbr` case bases: `POST /retrieve`.",
     [[False, "Retrieval over "], [True, "cbr"], [False, " case bases: "], [True, "POST /retrieve"], [False, "."]]),
    ("no code here", [[False, "no code here"]]),
    ("an odd ` backtick", [[False, "an odd ` backtick"]]),
    ("`x`", [[True, "x"]]),
])
def test_the_api_page_shows_inline_code_not_backticks(split_code, text, pieces) -> None:
    assert _call(split_code, "splitCode", text) == pieces


def test_the_served_description_has_inline_code_the_page_renders() -> None:
    """The server's own description (the header of /docs) is what has the backticks."""
    from tests.conftest import require_module

    require_module("fastapi")
    from cbr.serve.app import ServeConfig, create_app
    from cbr.serve.engine import Engine

    engine = Engine(["default"])
    try:
        spec = create_app(ServeConfig(casebases=("default",)), engine=engine).openapi()
    finally:
        engine.close()
    description = " ".join(filter(None, [spec["info"].get("summary"), spec["info"].get("description")]))
    assert "`" in description
    pieces = _call(_function((STATIC / "api.html").read_text(), "splitCode"), "splitCode", description)
    assert any(code for code, _ in pieces) and not any("`" in t for _, t in pieces)
