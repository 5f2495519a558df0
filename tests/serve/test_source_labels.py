"""The server's answers name a case's source log without a path on the server.

A case base built from a log given by an absolute path labels its cases with that path, and
``GET /casebases/NAME``, ``/retrieve``'s and ``/reuse``'s ``provenance`` and the web table's
cases panel showed it (``/tmp/shared/data/logs/acpc/...``), though docs/serve.md says no
answer names a path on the server. An HTTP answer shows such a label as its file's name (the
shortest tail no other source of the case base shares); the CLI keeps the full label.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from tests.conftest import require_module, shared_path
from tests.serve.conftest import TOKEN, make_client

require_module("fastapi", module_level=True)
require_module("httpx", module_level=True)

runner = CliRunner()
SITUATION = {"hole": "AdQc", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 5}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """A case base (``absbase``) built by ``cbr build`` from the ACPC 2p log given by its
    absolute path, and that path."""
    root = tmp_path_factory.mktemp("abs")
    log = root / "logs" / "deep" / "2p.limit.h1000.r0.log"
    log.parent.mkdir(parents=True)
    shutil.copy(shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log"), log)
    assert log.is_absolute()
    out = root / "absbase"
    r = runner.invoke(app, ["build", str(log), "-o", str(out), "-j", "1"])
    assert r.exit_code == 0, r.output
    return out, log


def test_the_cli_keeps_the_full_label(built) -> None:
    out, log = built
    r = runner.invoke(app, ["casebase", "inspect", str(out), "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.stdout)
    assert list(info["sources"]) == [str(log)]
    assert [e["source"] for e in info["source_files"]] == [str(log)]


def test_http_answers_name_the_log_by_its_file_name(built) -> None:
    from cbr.serve.engine import Engine

    out, log = built
    eng = Engine([str(out)])
    try:
        with make_client(eng, token=TOKEN) as c:
            r = c.get("/casebases/absbase")
            assert r.status_code == 200, r.text
            info = r.json()
            assert list(info["sources"]) == [log.name]
            assert [e["source"] for e in info["source_files"]] == [log.name]
            answers = [r.text]

            r = c.post("/retrieve", json={**SITUATION, "casebase": "absbase", "top": None})
            assert r.status_code == 200, r.text
            cases = r.json()["cases"]
            assert cases and {x["provenance"]["source"] for x in cases} == {log.name}
            answers.append(r.text)

            r = c.post("/reuse", json={**SITUATION, "casebase": "absbase", "policy": "cbr", "seed": 1})
            assert r.status_code == 200, r.text
            cases = r.json()["cases"]
            assert cases and {x["provenance"]["source"] for x in cases} == {log.name}
            answers.append(r.text)

            r = c.post("/table/sessions", json={"bots": ["cbr:casebase=absbase"], "seed": 2})
            assert r.status_code == 201, r.text
            sid = r.json()["session"]
            hand = c.post(f"/table/sessions/{sid}/hand").json()["hand"]
            while not hand["over"]:
                hand = c.post(f"/table/sessions/{sid}/action", json={"action": "call"}).json()["hand"]
            assert hand["decisions"]
            for d in hand["decisions"]:
                r = c.get(f"/table/sessions/{sid}/decisions/{d['id']}", params={"top": 5})
                assert r.status_code == 200, r.text
                assert r.json()["cases"] and {x["source"] for x in r.json()["cases"]} == {log.name}
                answers.append(r.text)
            assert c.delete(f"/table/sessions/{sid}").status_code == 200
    finally:
        eng.close()
    for text in answers:  # no server path anywhere in them
        assert str(log.parent) not in text and str(out.parent) not in text, text[:300]


def test_labels_sharing_a_file_name_keep_the_tail_that_tells_them_apart() -> None:
    from cbr.serve.labels import shown_label, shown_labels

    shown = shown_labels(["/srv/a/r0/2p.log", "/srv/b/r1/2p.log", "/srv/c/3p.log", "casebases/selfplay/x.log"])
    assert shown == {"/srv/a/r0/2p.log": "r0/2p.log", "/srv/b/r1/2p.log": "r1/2p.log", "/srv/c/3p.log": "3p.log",
                     "casebases/selfplay/x.log": "casebases/selfplay/x.log"}
    assert shown_label("/srv/d/new.log", shown) == "new.log"  # retained since: its file's name
    assert shown_label("request", shown) == "request"


def test_a_warning_that_carries_a_path_is_shown_as_the_sources_are(tmp_path: Path) -> None:
    """``GET /casebases/{name}``'s ``warnings`` (and ``games``) were given as the library wrote
    them: a no-limit game named by a path in its log's ``# game:`` header put that path on the
    server in the answer. They are shown by the rule of the sources: a path as its file's name.
    The log's hand that does not parse is skipped (the build says so), the rest are kept."""
    from cbr.logs.acpc import inferred_game
    from cbr.serve.engine import Engine

    game = inferred_game("nolimit", 2).to_dict()
    game["name"] = str(tmp_path / "games" / "private" / "acpc-nl")
    log = tmp_path / "logs" / "nl.log"
    log.parent.mkdir()
    log.write_text("\n".join(["# game: " + json.dumps(game),
                              *(f"STATE:{i}:cc/cc/cc/r200f:AhKh|QdQc/2c3c4c/5c/6c:100|-100:a|b" for i in range(4)),
                              "STATE:9:cc/cc/zz:AhKh|QdQc/2c3c4c/5c/6c:100|-100:a|b"]) + "\n")
    out = tmp_path / "nlbase"
    r = runner.invoke(app, ["build", str(log), "-o", str(out), "-j", "1", "--mixed-games"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["casebase", "inspect", str(out), "--json"])
    cli = json.loads(r.stdout)
    said = [w for w in cli["warnings"] if "no-limit" in w]
    assert said and said[0].startswith(f"game {game['name']!r} is no-limit"), cli["warnings"]  # the CLI says it all
    eng = Engine([str(out)])
    try:
        with make_client(eng, token=TOKEN) as c:
            answer = c.get("/casebases/nlbase")
    finally:
        eng.close()
    assert answer.status_code == 200, answer.text
    info = answer.json()
    assert info["games"] == ["acpc-nl"]
    assert list(info["sources"]) == ["nl.log"]
    assert len(info["warnings"]) == len(cli["warnings"])
    assert "game 'acpc-nl' is no-limit: the features" in "\n".join(info["warnings"]), info["warnings"]
    assert [w for w in info["warnings"] if "no-limit" not in w] == [w for w in cli["warnings"] if "no-limit" not in w]
    assert str(tmp_path) not in answer.text, answer.text
