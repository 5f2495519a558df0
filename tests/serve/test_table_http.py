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


def test_an_illegal_action_over_http_is_its_reason_alone_and_changes_nothing(served) -> None:
    """``check`` facing a bet and ``fold`` with nothing to call are 422 on ``action`` with the
    reason as docs/serve.md gives it (no terminal keys to type), and the table stays as it was."""
    _, url, _ = served
    with httpx.Client(base_url=url, timeout=30) as c:
        sid = c.post("/table/sessions", json={"bots": ["raise"], "seed": 7}).json()["session"]
        hand = c.post(f"/table/sessions/{sid}/hand").json()["hand"]
        assert hand["your_turn"] and hand["to_call"] == 10  # the big blind facing the raise to 20
        for action, msg in (("check", "cannot check: 10 to call; call, raise or fold"),
                            ("c", None),  # calls: the flop, where the big blind acts first, nothing to call
                            ("fold", "cannot fold: nothing to call, check instead")):
            before = c.get(f"/table/sessions/{sid}").json()
            r = c.post(f"/table/sessions/{sid}/action", json={"action": action})
            if msg is None:
                assert r.status_code == 200 and r.json()["hand"]["to_call"] == 0, r.text
                continue
            assert r.status_code == 422
            assert r.json() == {"detail": [{"loc": ["body", "action"], "msg": msg, "type": "FieldError"}]}
            assert c.get(f"/table/sessions/{sid}").json() == before
        assert c.delete(f"/table/sessions/{sid}").status_code == 200


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
            assert refused.status_code == 409
            assert refused.json()["detail"] == ("the server has 1 table session open: try again later (a session "
                                                "ends 2 seconds after its last request, or when it is closed)")
            assert c.delete(f"/table/sessions/{first.json()['session']}").status_code == 200
            second = c.post("/table/sessions", json={"bots": ["call"], "seed": 3})
            assert second.status_code == 201, second.text
            import time

            time.sleep(2.5)  # idle past --session-ttl: the next request finds it gone
            assert c.get(f"/table/sessions/{second.json()['session']}").status_code == 404
    finally:
        stop_server(proc)


def test_a_table_refuses_bad_seats_when_it_is_made(served) -> None:
    """A bot that plays heads-up only at a table of three (the cfr bot, or the adaptive bot whose
    safe expert is it) is refused when the session is created, 422 on the field in the words of
    ``cbr match --players``, not at its first hand; an unknown bot is a 422 on the field like any
    other bad spec; ``players`` is ``bots`` by the CLI's name."""
    from cbr.play.table import seat_refusal
    from cbr.policies.spec import policy_from_spec

    _, url, _ = served
    with httpx.Client(base_url=url, timeout=60) as c:
        for field, spec in (("bots", "cfr"), ("players", "adapt:safe=emd_256")):
            bot = policy_from_spec(spec)
            want = seat_refusal(bot, 3)
            close = getattr(bot, "close", None)
            if callable(close):
                close()
            r = c.post("/table/sessions", json={field: [spec, "call"], "seed": 1})
            assert r.status_code == 422, r.text
            assert r.json()["detail"] == [{"loc": ["body", field], "msg": want, "type": "FieldError"}]
            assert want.startswith(("the cfr bot plays heads-up only", "the adapt bot's safe expert, emd_256,"))
        r = c.post("/table/sessions", json={"bots": ["nosuch"]})
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "bots"]
        assert r.json()["detail"][0]["msg"].startswith("unknown policy 'nosuch'")
        r = c.post("/table/sessions", json={"players": ["call"], "bots": ["ehs"]})
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "players"]
        for body in ({"players": ["ehs", "call"]}, {"players": ["ehs", "call"], "bots": ["ehs", "call"]}):
            r = c.post("/table/sessions", json={**body, "seed": 2})
            assert r.status_code == 201, r.text
            assert r.json()["names"] == ["you", "ehs", "call"] and r.json()["game"] == "holdem.limit.3p"
            assert c.delete(f"/table/sessions/{r.json()['session']}").status_code == 200
        # heads-up, the cfr bot is welcome, and plays its hands
        r = c.post("/table/sessions", json={"players": ["cfr"], "seed": 3})
        assert r.status_code == 201, r.text
        sid = r.json()["session"]
        v = c.post(f"/table/sessions/{sid}/hand").json()
        while not v["hand"]["over"]:
            v = c.post(f"/table/sessions/{sid}/action", json={"action": "c"}).json()
        assert v["error"] is None and v["result"]["hands"] == 1


def test_shipped_strategies_by_name_and_never_a_path(served) -> None:
    """``cfr:strategy=NAME`` of a shipped strategy (and ``adapt:styles=NAME``) is taken at the web
    table and by ``/reuse``; a path, or a name that is not shipped, is refused in words about a
    strategy (not a case base), 422 on the field; ``/policies`` lists the shipped names."""
    from cbr.store import PACKAGED_CASEBASES

    _, url, _ = served
    names = sorted(p.name for p in (PACKAGED_CASEBASES / "cfr").iterdir() if (p / "strategy.npz").exists()
                   or any(p.glob("cfr.*.npz")))  # the shipped strategies, as the folder holds them
    assert "counter_raise" in names and "emd_256" in names
    with httpx.Client(base_url=url, timeout=60) as c:
        r = c.post("/table/sessions", json={"bots": ["cfr:strategy=counter_raise"], "seed": 4})
        assert r.status_code == 201, r.text
        assert r.json()["names"] == ["you", "cfr/strategy=counter_raise"]
        sid = r.json()["session"]
        v = c.post(f"/table/sessions/{sid}/hand").json()
        while not v["hand"]["over"]:
            v = c.post(f"/table/sessions/{sid}/action", json={"action": "c"}).json()
        assert v["error"] is None
        situation = {"hole": "AdQc", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 5, "prev_bets": 2}
        r = c.post("/reuse", json={**situation, "policy": "cfr:strategy=counter_raise", "seed": 1})
        assert r.status_code == 200, r.text
        assert r.json()["action"] in ("f", "c", "r")
        for path, field, body in (("/reuse", "policy", lambda s: {**situation, "policy": s}),
                                  ("/table/sessions", "bots", lambda s: {"bots": [s]})):
            for spec in ("cfr:strategy=/etc", "cfr:strategy=../cfr/emd_256", "cfr:strategy=nosuch"):
                r = c.post(path, json=body(spec))
                assert r.status_code == 422, (path, spec, r.text)
                d = r.json()["detail"][0]
                assert d["loc"] == ["body", field]
                assert d["msg"] == (f"policy spec {spec!r}: option 'strategy' takes the name of a shipped strategy "
                                    f"({', '.join(names)}), never a file on the server")
            r = c.post(path, json=body("adapt:styles=/etc/passwd"))
            assert r.status_code == 422 and "option 'styles' takes the name of shipped style cases (house)" in r.text
        r = c.post("/table/sessions", json={"bots": ["adapt:styles=house", "call"], "seed": 5})
        assert r.status_code == 201, r.text
        cfr = next(p for p in c.get("/policies").json()["policies"] if p["name"] == "cfr")
        assert cfr["shipped"] == {"strategy": names} and "strategy" in cfr["options"]
        assert "strategy" not in cfr.get("server_only", [])


def _play_retaining_into_mine(c: "httpx.Client", hands: int) -> tuple[str, dict]:
    """A web-table session whose bot plays from and retains into the served ``mine``; ``hands``
    hands played by checking and calling; the session's id and its last view."""
    r = c.post("/table/sessions", json={"bots": ["cbr:casebase=mine"], "seed": 3, "retain_into": "mine"})
    assert r.status_code == 201, r.text
    sid = r.json()["session"]
    for _ in range(hands):
        v = c.post(f"/table/sessions/{sid}/hand").json()
        while not v["hand"]["over"]:
            v = c.post(f"/table/sessions/{sid}/action", json={"action": "c"}).json()
    return sid, v


def test_hands_retained_into_a_served_case_base_are_compacted_when_the_server_stops(tmp_path, token_file) -> None:
    """A session retaining into a case base the server serves, still open when the server is
    stopped (SIGTERM, a clean stop): its hands are folded into Parquet parts, as a match's
    retention and /retain's are when they end, not left in the retention log alone."""
    from cbr.play.retention import copy_casebase
    from cbr.store import CaseBase
    from cbr.store.verify import verify_casebase

    mine = copy_casebase("default", tmp_path / "mine")
    with CaseBase.open(mine) as cb:
        before = cb.count()
    proc, url = start_server("--casebase", str(mine), "--token-file", str(token_file), cwd=tmp_path)
    try:
        out: dict = {}
        with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}) as c:
            sid, v = _play_retaining_into_mine(c, 3)
            out["retained"] = v["retained"]
            assert v["error"] is None, v["error"]
        log = verify_casebase(mine).log
        assert log is not None and log["records"] == 3, log  # one durable record a hand, not yet in parts
        proc.terminate()  # the session is still open: the server's stop ends it
        code = proc.wait(timeout=60)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        stop_server(proc)
    assert code == 143 and "Traceback" not in err, err
    report = verify_casebase(mine)
    assert report.sound and (report.log is None or report.log["records"] == 0), report  # compacted into parts
    with CaseBase.open(mine) as cb:
        assert cb.count() - before == out["retained"] > 0
        _, rows, _ = cb.sql_rows("SELECT count(*) FROM cases WHERE source = 'retained'")
    assert rows[0][0] == out["retained"]


def test_a_compaction_that_fails_at_the_stop_is_said_on_the_servers_stderr(tmp_path, token_file) -> None:
    """A session retaining into a served case base whose compaction fails as the server stops
    (here the manifest cannot be replaced: a directory stands where the server writes the new
    manifest before it renames it into place) was noted in a list nobody showed: the stop said
    nothing, and the hands stayed in the retention log without a word. ``cbr serve`` now says
    each such note on its stderr, one line, after its stop; the hands are still there, in the
    log, and a later compaction folds them into parts. One fault gives one note: the stop's
    second try and the close, failing the same way, said it twice more in full."""
    from cbr.play.retention import copy_casebase
    from cbr.store import CaseBase
    from cbr.store.durable import temp_path
    from cbr.store.verify import verify_casebase

    mine = copy_casebase("default", tmp_path / "mine")
    with CaseBase.open(mine) as cb:
        before = cb.count()
    proc, url = start_server("--casebase", str(mine), "--token-file", str(token_file), cwd=tmp_path)
    blocker = temp_path(mine / "manifest.json").with_name(f".manifest.json.tmp-{proc.pid}")
    try:
        with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}) as c:
            sid, v = _play_retaining_into_mine(c, 2)
            retained = v["retained"]
            assert v["error"] is None and retained > 0, v
        assert verify_casebase(mine).log["records"] == 2
        blocker.mkdir()  # where the server's compaction writes its new manifest: a directory
        proc.terminate()  # the session is still open: the server's stop ends it, compacting
        code = proc.wait(timeout=60)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        stop_server(proc)
    assert code == 143 and "Traceback" not in err, err
    notes = [line for line in err.splitlines() if line.startswith("note: ")]
    # one fault, one note: the session's compaction says it in full (what was kept, what failed);
    # the stop's second try at the case base, failing the same way, says one short line; the
    # close, failing the same way again, nothing (it said three notes of the one fault)
    assert len(notes) == 2, err
    assert notes[0].startswith("note: case base 'mine' not compacted at the end of a web-table session (its hands "
                               "stay in the retention log): "), notes[0]
    assert "Is a directory" in notes[0] and blocker.name in notes[0], notes
    assert notes[1] == ("note: case base 'mine' still not compacted, for the fault noted above (what was retained "
                        "stays in its retention log)"), notes[1]
    assert err.rstrip().endswith("terminated") and err.index(notes[1]) < err.index("terminated"), err
    blocker.rmdir()
    # the hands are in the log, durable (the catalog the failed compaction had rewritten is the
    # store's state after a crash there: the next writer's open rewrites it), and a later
    # compaction folds them into parts
    report = verify_casebase(mine)
    assert report.log["records"] == 2 and {p.kind for p in report.problems} <= {"catalog"}, report
    with CaseBase.open(mine) as cb:
        assert cb.count() - before == retained
        assert cb.compact() == retained
    report = verify_casebase(mine)
    assert report.sound and report.log["records"] == 0, report
