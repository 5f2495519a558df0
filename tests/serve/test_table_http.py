"""The web table over real HTTP: a ``cbr serve`` process on loopback, two people playing at
once (neither sees the other's table), retention into a named copy that survives the
server's stop, and bad input that never stops the server."""
from __future__ import annotations

import threading

import pytest

from tests.conftest import require_module
from tests.serve.conftest import TOKEN
from tests.serve.test_http import start_server, stop_server

httpx = require_module("httpx", module_level=True)
require_module("fastapi", module_level=True)
require_module("uvicorn", module_level=True)


@pytest.fixture
def served(tmp_path, token_file):
    """``cbr serve`` run in an empty folder (where ``./casebases/NAME`` copies go), with a token."""
    proc, url = start_server("--casebase", "default", "--token-file", str(token_file), cwd=tmp_path)
    try:
        yield proc, url, tmp_path
    finally:
        stop_server(proc)
    assert proc.poll() is not None


def play(url: str, bots: list[str], seed: int, hands: int, out: dict, **extra) -> None:
    """Play ``hands`` hands over HTTP, always check/call; ``out`` gets the views and the log."""
    with httpx.Client(base_url=url, timeout=30, headers=extra.pop("headers", {})) as c:
        r = c.post("/table/sessions", json={"bots": bots, "seed": seed, **extra})
        assert r.status_code == 201, r.text
        sid = r.json()["session"]
        views = []
        for _ in range(hands):
            v = c.post(f"/table/sessions/{sid}/hand").json()
            views.append(v)
            while not v["hand"]["over"]:
                r = c.post(f"/table/sessions/{sid}/action", json={"action": "c"})
                assert r.status_code == 200, r.text
                v = r.json()
                views.append(v)
        out.update(sid=sid, views=views, log=c.get(f"/table/sessions/{sid}/log").text,
                   end=c.delete(f"/table/sessions/{sid}").status_code)


def test_page_and_files_are_served(served) -> None:
    _, url, _ = served
    page = httpx.get(url + "/", timeout=30)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for src in ("/static/table.js", "/static/table.css"):
        assert src in page.text
        r = httpx.get(url + src, timeout=30)
        assert r.status_code == 200 and len(r.content) > 1000
    assert "http://" not in page.text and "https://" not in page.text  # nothing fetched from elsewhere
    assert httpx.get(url + "/static/../app.py", timeout=30).status_code == 404
    assert httpx.get(url + "/static/nothing.js", timeout=30).status_code == 404


def test_two_people_at_once_see_only_their_own_tables(served) -> None:
    from cbr.logs.acpc import loads

    _, url, _ = served
    outs: list[dict] = [{}, {}]
    threads = [threading.Thread(target=play, args=(url, ["cbr"], 21, 4, outs[0])),
               threading.Thread(target=play, args=(url, ["ehs", "call"], 22, 4, outs[1]))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert all(o.get("end") == 200 for o in outs), outs
    assert outs[0]["sid"] != outs[1]["sid"]
    for o, players in zip(outs, (2, 3)):
        records = loads(o["log"])
        assert len(records) == 4 and all(r.n_players == players for r in records)
        assert o["views"][-1]["result"]["chips"] == sum(r.payoffs[list(r.players).index("you")] for r in records)
        for v in o["views"]:  # no bot card before its showdown
            if not v["hand"]["over"]:
                assert all(s["cards"] == [] for s in v["hand"]["seats"] if not s["you"])


def test_retention_over_http_survives_the_stop(served) -> None:
    from cbr.store import CaseBase, resolve_casebase

    proc, url, folder = served
    out: dict = {}
    play(url, ["cbr:preset=casper"], 5, 3, out, retain_into="taught",
         headers={"Authorization": f"Bearer {TOKEN}"})
    retained = out["views"][-1]["retained"]
    assert retained > 0
    stop_server(proc)
    with CaseBase.open(folder / "casebases" / "taught") as cb, CaseBase.open(resolve_casebase("default")) as base:
        assert cb.count() - base.count() == retained


def test_bad_input_never_stops_the_server(served) -> None:
    proc, url, _ = served
    bad = [("post", "/table/sessions", {"bots": "cbr"}), ("post", "/table/sessions", {"bots": ["x" * 400]}),
           ("post", "/table/sessions", {"bots": ["cbr:similarity=/etc/passwd"]}),
           ("post", "/table/sessions", {"bots": ["call"], "name": "<script>"}),
           ("post", "/table/sessions/xyz/action", {"action": "c"}), ("get", "/table/sessions/xyz/log", None),
           ("get", "/table/sessions/xyz/decisions/abc", None)]
    for method, path, body in bad:
        r = httpx.request(method, url + path, json=body, timeout=30)
        assert r.status_code in (404, 422), (path, r.status_code, r.text)
        assert "detail" in r.json()
    assert httpx.get(url + "/health", timeout=30).status_code == 200 and proc.poll() is None


def test_the_session_limits_are_options_of_cbr_serve(tmp_path) -> None:
    """``--max-sessions 1``: a second session is refused (409) while the first is open, and
    taken once it is left; ``--session-ttl``: an idle session ends."""
    httpx = require_module("httpx")
    proc, url = start_server("--casebase", "default", "--max-sessions", "1", "--session-ttl", "2", cwd=tmp_path)
    try:
        with httpx.Client(base_url=url, timeout=30) as c:
            first = c.post("/table/sessions", json={"bots": ["call"], "seed": 1})
            assert first.status_code == 201, first.text
            refused = c.post("/table/sessions", json={"bots": ["call"], "seed": 2})
            assert refused.status_code == 409 and "1 table sessions" in refused.text
            assert c.delete(f"/table/sessions/{first.json()['session']}").status_code == 200
            second = c.post("/table/sessions", json={"bots": ["call"], "seed": 3})
            assert second.status_code == 201, second.text
            import time

            time.sleep(2.5)  # idle past --session-ttl: the next request finds it gone
            assert c.get(f"/table/sessions/{second.json()['session']}").status_code == 404
    finally:
        stop_server(proc)
