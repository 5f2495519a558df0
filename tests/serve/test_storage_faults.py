"""A fault of the server's own storage is the server's, not the client's: a served case base
whose files are damaged (a garbled retention log, a truncated Parquet part) or cannot be written
(a directory where the retention log is written) is answered 500, naming the case base by its
served name and saying it needs its operator's attention, with no path on the server and no
command; the library's own words (path, `cbr casebase repair ...`) go to the server's log. Each
test damages a real copy of the default case base under a real app (a real engine, TestClient),
through every endpoint that reads or writes it, the web table's among them; the request's own
faults stay 422 on the same server."""
from __future__ import annotations

import json
import logging
import re
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, require_module
from tests.serve.conftest import TOKEN, make_client

require_module("fastapi", module_level=True)
require_module("httpx", module_level=True)

AUTH = {"Authorization": f"Bearer {TOKEN}"}
SITUATION = {"casebase": "mine", "hole": "AsKd", "dealt": 2, "in_hand": 2, "position": 0, "to_act": 1}


@pytest.fixture
def served(tmp_path: Path):
    """``(the case base's folder, a client of a real app serving it as 'mine')``: a fresh
    writable copy of the default case base per test (each test damages its own)."""
    from cbr.play.retention import copy_casebase
    from cbr.serve.engine import Engine

    path = copy_casebase("default", tmp_path / "mine")
    engine = Engine([str(path)])
    try:
        with make_client(engine, token=TOKEN) as client:
            yield path, client
    finally:
        engine.close()


def assert_storage_fault(response, path: Path, *, writing: bool = False) -> None:
    """A 500 naming the case base 'mine' as the server's, in the client's words."""
    assert response.status_code == 500, response.text
    detail = response.json()["detail"]
    assert isinstance(detail, str)
    verb = "written to" if writing else "read"
    assert detail.startswith(f"the server's case base 'mine' could not be {verb}: "), detail
    assert "operator's attention" in detail
    assert_nothing_of_the_server(detail, path)


def assert_nothing_of_the_server(text: str, path: Path) -> None:
    """No path on the server (the case base's folder, its temporary parent), no command."""
    for where in {str(path), str(path.resolve()), str(path.parent), str(path.parent.resolve())}:
        assert where not in text, text
    assert "cbr " not in text and "`" not in text and "retained/" not in text, text


def logged(caplog) -> str:
    return "\n".join(r.getMessage() for r in caplog.records)


def garble_the_log(path: Path, client) -> None:
    """Retain ten hands (a retention log with one record), then append bytes that are no record."""
    hands = _hands(path.parent)
    answer = client.post("/retain", json={"casebase": "mine", "text": hands}, headers=AUTH)
    assert answer.status_code == 200, answer.text
    (log,) = (path / "retained").glob("log-*.bin")
    with open(log, "ab") as fh:
        fh.write(b"\x07 not a record " * 40)


def _hands(folder: Path) -> str:
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match

    out = folder / "hu.log"
    if not out.exists():
        with AcpcLogWriter(out) as log:
            run_match(["ehs", "call"], 10, seed=5, log=log)
    return out.read_text()


def play_until_an_answer_is_not_200(client, session: str, requests: int = 40):
    """Deal and call until a request is answered anything but 200 (the hand the fault ended)."""
    answer = None
    for _ in range(requests):
        view = client.get(f"/table/sessions/{session}").json()
        if view["hand"] is not None and view["hand"]["your_turn"]:
            answer = client.post(f"/table/sessions/{session}/action", json={"action": "c"})
        else:
            answer = client.post(f"/table/sessions/{session}/hand")
        if answer.status_code != 200:
            return answer
    return answer


def test_a_garbled_retention_log_is_the_servers_fault_at_every_endpoint(served, caplog) -> None:
    path, client = served
    garble_the_log(path, client)
    hands = _hands(path.parent)
    caplog.set_level(logging.ERROR)
    for answer in (client.post("/retrieve", json=SITUATION),
                   client.post("/reuse", json={**SITUATION, "policy": "cbr"}),
                   client.post("/retain", json={"casebase": "mine", "text": hands}, headers=AUTH),
                   client.get("/casebases"),
                   client.get("/casebases/mine"),
                   client.post("/evaluate", json={"casebase": "mine", "max_decisions": 20})):
        assert_storage_fault(answer, path)
    batch = client.post("/retrieve/batch", json={"situations": [SITUATION]})
    assert batch.status_code == 200, batch.text
    (item,) = batch.json()["answers"]
    assert item["error"]["status"] == 500
    assert item["error"]["detail"].startswith("the server's case base 'mine' could not be read: ")
    assert_nothing_of_the_server(item["error"]["detail"], path)
    # what the library said is the operator's, on the server's log: the path and the way out
    log = logged(caplog)
    assert "case base 'mine' needs attention: retention log" in log
    assert f"cbr casebase repair {path}" in log
    # the request's own faults are still 422, on the same damaged case base
    bad = client.post("/retrieve", json={**SITUATION, "hole": "AsAs"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "hole"], bad.text
    bad = client.post("/retain", json={"casebase": "mine", "text": "no hand here"}, headers=AUTH)
    assert bad.status_code == 422, bad.text
    assert client.post("/retrieve", json={**SITUATION, "casebase": "nope"}).status_code == 404
    # a web-table session retaining into it with no case-based bot is still refused (403)
    refused = client.post("/table/sessions", json={"bots": ["call"], "retain_into": "mine"}, headers=AUTH)
    assert refused.status_code == 403, refused.text


def test_a_garbled_retention_log_ends_a_web_table_hand_with_a_500(served) -> None:
    path, client = served
    created = client.post("/table/sessions", json={"bots": ["cbr:casebase=mine"], "seed": 1})
    assert created.status_code == 201, created.text
    garble_the_log(path, client)
    session = created.json()["session"]
    answer = play_until_an_answer_is_not_200(client, session)
    assert_storage_fault(answer, path)
    view = client.get(f"/table/sessions/{session}")
    assert view.status_code == 200
    assert view.json()["error"] == answer.json()["detail"]  # the view says it in the same words


def test_a_truncated_parquet_part_is_the_servers_fault(served) -> None:
    path, client = served
    part = next((path / "cases" / "flop").glob("*.parquet"))
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])
    # docs/serve.md shows this answer, in its example and in its table's row for 500, word for word
    docs = (REPO / "docs" / "serve.md").read_text().split("## Errors", 1)[1]
    (row,) = re.findall(r"^\| 500 \|.*$", docs, re.M)
    answer = client.get("/casebases/mine")
    assert answer.status_code == 500
    assert f"`{json.dumps(answer.json())}`" in row
    assert "curl -s http://127.0.0.1:8000/casebases/mine" in docs and json.dumps(answer.json()) in docs
    for answer in (client.get("/casebases/mine"),
                   client.post("/evaluate", json={"casebase": "mine", "max_decisions": 20}),
                   # the evaluation with the ANN, in a process of its own: its fault is the same
                   client.post("/evaluate", json={"casebase": "mine", "max_decisions": 20, "ann": True})):
        assert_storage_fault(answer, path)
    # the other streets still answer (SITUATION is preflop): the damage stops only the flop
    assert client.post("/retrieve", json=SITUATION).status_code == 200
    assert client.get("/casebases").status_code == 200


def test_a_directory_where_the_log_is_written_is_a_failed_write_of_the_servers(served, caplog) -> None:
    path, client = served
    (path / "retained").mkdir(exist_ok=True)
    (path / "retained" / "log-00000.bin").mkdir()  # where the first retention writes its log
    caplog.set_level(logging.ERROR)
    answer = client.post("/retain", json={"casebase": "mine", "text": _hands(path.parent)}, headers=AUTH)
    assert_storage_fault(answer, path, writing=True)
    assert "Is a directory" in logged(caplog)
    # a web-table session retaining into the served case base: its hand's write fails
    created = client.post("/table/sessions", json={"bots": ["cbr:casebase=mine"], "seed": 3,
                                                   "retain_into": "mine"}, headers=AUTH)
    assert created.status_code == 201, created.text
    answer = play_until_an_answer_is_not_200(client, created.json()["session"])
    assert_storage_fault(answer, path, writing=True)
    # what the server reads still answers
    assert client.post("/retrieve", json=SITUATION).status_code == 200


def test_a_compaction_that_a_truncated_parquet_part_fails_is_noted_at_the_stop(tmp_path: Path) -> None:
    """The hands a web-table session and /retain kept are compacted when the session ends and the
    server stops; DuckDB, rewriting the catalog over a truncated part, fails: a note for the
    operator (the cases stay in the retention log), not a traceback that stops the stop. The
    note said DuckDB's words (``Invalid Input Error: No magic bytes found at end of file``),
    once for the session and again in full for the stop's try: now the store's, once."""
    from cbr.play.retention import copy_casebase
    from cbr.serve.engine import Engine

    path = copy_casebase("default", tmp_path / "mine")
    engine = Engine([str(path)])
    client = make_client(engine, token=TOKEN)
    with client:
        created = client.post("/table/sessions", json={"bots": ["cbr:casebase=mine"], "seed": 1,
                                                       "retain_into": "mine"}, headers=AUTH)
        assert created.status_code == 201, created.text
        session = created.json()["session"]
        view = client.post(f"/table/sessions/{session}/hand").json()
        while not view["hand"]["over"]:
            answer = client.post(f"/table/sessions/{session}/action", json={"action": "c"})
            assert answer.status_code == 200, answer.text
            view = answer.json()
        assert view["retained"] > 0 and view["error"] is None
        kept = client.post("/retain", json={"casebase": "mine", "text": _hands(tmp_path)}, headers=AUTH)
        assert kept.status_code == 200, kept.text
        part = next((path / "cases" / "flop").glob("*.parquet"))
        sound = part.stat().st_size
        part.write_bytes(part.read_bytes()[:1000])
    engine.close()
    notes = [*client.app.state.notes, *engine.notes]
    # one fault, one note: the session's, in the store's words (the part, what is wrong with it,
    # what mends it; DuckDB's own words are the exception's cause, not the operator's line); the
    # stop's second try, failing the same way, says it is still there in one short line
    assert len(notes) == 2, notes
    assert notes[0].startswith("case base 'mine' not compacted at the end of a web-table session (its hands stay in "
                               f"the retention log): {path}/catalog.duckdb: cannot write the view over the flop parts "
                               "("), notes
    assert notes[0].endswith("cases/flop/part-00000.parquet is 1,000 bytes, the manifest says "
                             f"{sound:,}; the file is damaged or was replaced: restore the part from a copy or rebuild "
                             "the case base with cbr build (cbr casebase verify lists every problem)"), notes
    assert not any(w in notes[0] for w in ("magic", "DuckDB", "Invalid Input", "CREATE")), notes
    assert notes[1] == ("case base 'mine' still not compacted, for the fault noted above (what was retained stays in "
                        "its retention log)"), notes
    assert list((path / "retained").glob("log-*.bin")), "the retained cases stay in the retention log"


def play_a_hand(client, session: str) -> dict:
    """Deal a hand and call until it is over; the view at its end."""
    view = client.post(f"/table/sessions/{session}/hand").json()
    while not view["hand"]["over"]:
        answer = client.post(f"/table/sessions/{session}/action", json={"action": "c"})
        assert answer.status_code == 200, answer.text
        view = answer.json()
    return view


def retained_counts(path: Path) -> dict[str, int]:
    from cbr.game.gamedef import STREETS
    from cbr.store import CaseBase

    with CaseBase.open(path) as cb:
        return {s: cb.count(s) for s in STREETS}


def test_a_compaction_that_fails_as_a_session_ends_is_said_at_once(tmp_path: Path, caplog) -> None:
    """A session that retained into a served case base, left (DELETE) or expired while the server
    runs, whose compaction fails (a Parquet part damaged between the hand and the close): it was
    said only at the server's stop. It is said at once, on the server's log (the path and the
    library's words) and in the closing answer (the case base by the client's name, no path); no
    case is lost nor half written: with the part mended, the case base holds every retained case,
    and the stop has nothing more to say of the session."""
    from cbr.play.retention import copy_casebase
    from cbr.serve.engine import Engine

    path = copy_casebase("default", tmp_path / "mine")
    before = retained_counts(path)
    engine = Engine([str(path)])
    caplog.set_level(logging.ERROR)
    client = make_client(engine, token=TOKEN, session_ttl=2.0)
    with client:
        sessions = []
        for seed in (1, 2):
            created = client.post("/table/sessions", json={"bots": ["cbr:casebase=mine"], "seed": seed,
                                                           "retain_into": "mine"}, headers=AUTH)
            assert created.status_code == 201, created.text
            sessions.append(created.json()["session"])
        kept = 0
        for session in sessions:
            view = play_a_hand(client, session)
            assert view["retained"] > 0 and view["error"] is None
            kept += view["retained"]
        part = next((path / "cases" / "flop").glob("*.parquet"))
        sound = part.read_bytes()
        part.write_bytes(sound[:1000])
        caplog.clear()
        left = client.delete(f"/table/sessions/{sessions[0]}")
        assert left.status_code == 200, left.text
        (warning,) = left.json()["warnings"]
        assert warning.startswith("the hands this session kept in case base 'mine' are safe in its retention log, "
                                  "but could not be compacted"), warning
        assert_nothing_of_the_server(warning, path)
        said = [r.getMessage() for r in caplog.records]
        assert len(said) == 1 and said[0].startswith(
            "note: case base 'mine' not compacted at the end of a web-table session (its hands stay in the "
            f"retention log): {path}"), said
        # what the library found, for the operator, in its words: the part, and what mends it
        assert (f"cases/flop/part-00000.parquet is 1,000 bytes, the manifest says {len(sound):,}; the file is damaged "
                "or was replaced: restore the part from a copy") in said[0], said
        assert "magic" not in said[0] and "Invalid Input Error" not in said[0], said
        # the other session expires: said at once too, by the request that finds it expired; the
        # same fault, said above: one short line
        time.sleep(2.5)
        caplog.clear()
        assert client.get(f"/table/sessions/{sessions[1]}").status_code == 404
        said = [r.getMessage() for r in caplog.records]
        assert said == ["note: case base 'mine' still not compacted, for the fault noted above (what was retained "
                        "stays in its retention log)"], said
        part.write_bytes(sound)  # mended
    engine.close()
    assert not any("web-table session" in n for n in client.app.state.notes), client.app.state.notes
    after = retained_counts(path)
    assert sum(after.values()) == sum(before.values()) + kept, (before, after, kept)
    from cbr.store.verify import verify_casebase

    report = verify_casebase(path)
    assert report.sound, report  # nothing half written: what the failed compactions began is not listed


def test_the_stop_compacts_what_a_session_whose_compaction_failed_retained(tmp_path: Path, caplog) -> None:
    """A session retained into served 'mine' and ended while a part was cut (its compaction
    failed: the documented warning); the part was restored, the server stopped. The stop
    compacted only what ``/retain`` kept, so ``verify`` found the session's hands still in the
    retention log. Now the stop compacts every case base a session retained into. And the failed
    compaction removes what it half wrote at once (an unlisted part, an empty log generation),
    not at the stop."""
    from cbr.play.retention import copy_casebase
    from cbr.serve.engine import Engine
    from cbr.store.verify import verify_casebase

    path = copy_casebase("default", tmp_path / "mine")
    before = retained_counts(path)
    engine = Engine([str(path)])
    caplog.set_level(logging.ERROR)
    client = make_client(engine, token=TOKEN)
    with client:
        created = client.post("/table/sessions", json={"bots": ["cbr:casebase=mine"], "seed": 1,
                                                       "retain_into": "mine"}, headers=AUTH)
        assert created.status_code == 201, created.text
        session = created.json()["session"]
        for _ in range(2):
            view = play_a_hand(client, session)
            assert view["error"] is None
        kept = view["retained"]  # the session's cases, both hands'
        assert kept > 0
        files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
        part = path / "cases" / "flop" / "part-00000.parquet"
        sound = part.read_bytes()
        part.write_bytes(sound[:20_000])
        left = client.delete(f"/table/sessions/{session}")
        assert left.status_code == 200, left.text
        assert left.json()["warnings"][0].startswith("the hands this session kept in case base 'mine' are safe"), left.text
        # nothing the failed compaction wrote is left: the same files as before it
        assert sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")) == files
        part.write_bytes(sound)  # restored
        assert verify_casebase(path).log["records"] == 2
    engine.close()
    assert not engine.notes and not client.app.state.notes, (engine.notes, client.app.state.notes)
    report = verify_casebase(path)
    assert report.sound and report.log["records"] == 0, report
    after = retained_counts(path)
    assert sum(after.values()) == sum(before.values()) + kept, (before, after, kept)


@pytest.fixture
def own_bot(tmp_path: Path, monkeypatch):
    """``(name, folder)``: an entry-point bot, ``ownbot``, a case-based bot whose own case base
    (when a request names none) is a writable copy of the default one that no server serves
    (installed as pip would: a dist-info with its entry points beside the module)."""
    import sys

    from cbr import plugins
    from cbr.play.retention import copy_casebase

    own = copy_casebase("default", tmp_path / "own")
    site = tmp_path / "site"
    info = site / "ownbot-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ownbot\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[cbr.policies]\nownbot = ownbot:Bot\n")
    (site / "ownbot.py").write_text(
        "from cbr.policies.cbr_policy import CBRPolicy\n\n"
        f"HOME = {str(own)!r}\n\n\n"
        "class Bot(CBRPolicy):\n"
        "    name = 'ownbot'\n\n"
        "    def __init__(self, *, seed=None, casebase=None):\n"
        "        super().__init__(seed=seed, preset='casper', casebase=HOME if casebase is None else casebase)\n")
    monkeypatch.syspath_prepend(str(site))
    plugins.clear_cache()
    yield "ownbot", own
    plugins.clear_cache()
    sys.modules.pop("ownbot", None)


FLOP = {"hole": "AsKd", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 5, "prev_bets": 2}


def test_a_damaged_case_base_of_the_bots_own_at_reuse(served, own_bot, caplog) -> None:
    """``/reuse`` of a case-based bot with no ``casebase``: the bot plays from its own case base,
    which the server opens for it; a Parquet part of it truncated is the server's fault (500
    naming it by its folder's name, as the bot does; the path and the library's words on the
    log), and once mended the same request is answered (the failed bot was not kept)."""
    path, client = served
    name, own = own_bot
    part = next((own / "cases" / "flop").glob("*.parquet"))
    sound = part.read_bytes()
    part.write_bytes(sound[:1000])
    caplog.set_level(logging.ERROR)
    answer = client.post("/reuse", json={**FLOP, "policy": name, "seed": 1})
    assert answer.status_code == 500, answer.text
    # the bot's own case base, said as the bot's: not one the request chose, nor one the server serves
    assert answer.json()["detail"].startswith(f"the case base 'own' that the bot {name!r} plays from (its own: the "
                                              "request chose no case base) could not be read: "), answer.text
    assert_nothing_of_the_server(answer.json()["detail"], own)
    assert f"case base 'own' needs attention: {own}" in logged(caplog)
    # the served case base is not at fault: the same bot plays from it
    assert client.post("/reuse", json={**FLOP, "policy": name, "casebase": "mine", "seed": 1}).status_code == 200
    part.write_bytes(sound)  # mended
    again = client.post("/reuse", json={**FLOP, "policy": name, "seed": 1})
    assert again.status_code == 200, again.text
    assert again.json()["casebase"] == "own"


def test_a_damaged_case_base_at_the_web_tables_explanation(served, caplog) -> None:
    """A bot's reasons (``GET .../decisions/{n}``) read each retrieved case's outcome from its
    case base's parts: a part damaged after the hand was answered 200 with every outcome null
    (the fault taken for outcomes unknown). It is the server's fault, 500 naming the case base;
    the table itself still answers."""
    path, client = served
    created = client.post("/table/sessions", json={"bots": ["cbr:casebase=mine"], "seed": 4})
    assert created.status_code == 201, created.text
    session = created.json()["session"]
    view = play_a_hand(client, session)
    decisions = view["hand"]["decisions"]
    assert decisions and all(d["explained"] for d in decisions), decisions
    first = client.get(f"/table/sessions/{session}/decisions/{decisions[0]['id']}")
    assert first.status_code == 200 and first.json()["cases"], first.text
    assert all(c["outcome"] is not None for c in first.json()["cases"]), first.text  # the parts hold them
    for part in (path / "cases").glob("*/*.parquet"):
        part.write_bytes(part.read_bytes()[:1000])
    caplog.set_level(logging.ERROR)
    for d in decisions:
        answer = client.get(f"/table/sessions/{session}/decisions/{d['id']}")
        assert_storage_fault(answer, path)
    assert "case base 'mine' needs attention: " in logged(caplog)
    assert "part-00000.parquet" in logged(caplog)
    assert client.get(f"/table/sessions/{session}").status_code == 200


def test_a_cut_part_at_the_explanation_is_logged_in_the_librarys_line(served, caplog) -> None:
    """The bot's reasons with the decision's street's part cut after the hand: a 500, and the
    operator's log line was DuckDB's (``Invalid Input Error: No magic bytes found ... CREATE OR
    REPLACE VIEW ...``). It is the library's, as ``/casebases/NAME`` says the same damage: the
    part, its size and the manifest's, what mends it."""
    path, client = served
    created = client.post("/table/sessions", json={"bots": ["cbr:casebase=mine"], "seed": 4})
    assert created.status_code == 201, created.text
    session = created.json()["session"]
    decisions = play_a_hand(client, session)["hand"]["decisions"]
    first = client.get(f"/table/sessions/{session}/decisions/{decisions[0]['id']}")
    assert first.status_code == 200 and first.json()["cases"], first.text
    street = first.json()["street"]
    part = path / "cases" / street / "part-00000.parquet"
    listed = part.stat().st_size
    part.write_bytes(part.read_bytes()[:10_000])
    caplog.set_level(logging.ERROR)
    assert_storage_fault(client.get(f"/table/sessions/{session}/decisions/{decisions[0]['id']}"), path)
    (said,) = [r.getMessage() for r in caplog.records]
    assert said.startswith(f"case base 'mine' needs attention: {path}: cases/{street}/part-00000.parquet is "
                           f"10,000 bytes, the manifest says {listed:,}; the file is damaged or was replaced: "
                           f"no {street} query is answered until the part is restored from a copy"), said
    assert "DuckDB" not in said and "magic" not in said and "CREATE" not in said, said
    caplog.clear()
    assert_storage_fault(client.get("/casebases/mine"), path)  # the same damage, said alike there
    assert f"cases/{street}/part-00000.parquet is 10,000 bytes, the manifest says {listed:,}" in logged(caplog)


def test_retention_into_a_new_copy_that_cannot_be_written(served, tmp_path: Path, monkeypatch, caplog) -> None:
    """``retain_into`` a name the server does not serve makes ``./casebases/NAME``, a copy of
    the bots' case base. A copy that cannot be made (``./casebases`` is a file), and a hand whose
    write into the copy fails (a directory where its retention log is written), are the
    server's faults: 500 naming the copy by the client's name, the path on the log."""
    path, client = served
    monkeypatch.chdir(tmp_path)
    (tmp_path / "casebases").write_text("a file where the copies' folder should be\n")
    caplog.set_level(logging.ERROR)
    body = {"bots": ["cbr:preset=casper"], "seed": 5, "retain_into": "q9"}
    answer = client.post("/table/sessions", json=body, headers=AUTH)
    copy = tmp_path / "casebases" / "q9"
    assert answer.status_code == 500, answer.text
    assert answer.json()["detail"].startswith("the server's case base 'q9' could not be written to: "), answer.text
    assert_nothing_of_the_server(answer.json()["detail"], copy)
    assert "case base 'q9' needs attention: " in logged(caplog) and str(tmp_path / "casebases") in logged(caplog)
    (tmp_path / "casebases").unlink()
    created = client.post("/table/sessions", json=body, headers=AUTH)
    assert created.status_code == 201, created.text
    assert (copy / "manifest.json").is_file()
    (copy / "retained").mkdir(exist_ok=True)
    (copy / "retained" / "log-00000.bin").mkdir()  # where the copy's first retention writes its log
    caplog.clear()
    answer = play_until_an_answer_is_not_200(client, created.json()["session"])
    assert answer.status_code == 500, answer.text
    assert answer.json()["detail"].startswith("the server's case base 'q9' could not be written to: "), answer.text
    assert_nothing_of_the_server(answer.json()["detail"], copy)
    assert "Is a directory" in logged(caplog) and "case base 'q9' needs attention" in logged(caplog)


def test_a_damaged_saved_index_under_memory_mapped_serving(tmp_path: Path, caplog) -> None:
    """Memory-mapped, ``/retrieve`` reads each retrieved case's provenance from the street's
    saved answer rows as it answers (the cases are not in memory): a block of them overwritten
    is the server's fault, 500 naming the case base (not the rebuilt answer of a loaded case
    base: there is nothing loaded to rebuild from), in ``/retrieve`` and in a batch's item; the
    other streets still answer."""
    from cbr.play.retention import copy_casebase
    from cbr.serve.engine import Engine

    path = copy_casebase("default", tmp_path / "mine")
    engine = Engine([str(path)], memory_map=True)
    try:
        with make_client(engine, token=TOKEN, memory_map=True) as client:
            flop = {**FLOP, "casebase": "mine"}
            assert client.post("/retrieve", json=flop).status_code == 200
            (rows,) = (path / "index").glob("flop.*/provenance.bin")
            rows.write_bytes(b"\x00" * rows.stat().st_size)  # the same size: each block's checksum says it
            caplog.set_level(logging.ERROR)
            assert_storage_fault(client.post("/retrieve", json=flop), path)
            batch = client.post("/retrieve/batch", json={"situations": [flop, {**SITUATION, "board": ""}]})
            assert batch.status_code == 200, batch.text
            damaged, preflop = batch.json()["answers"]
            assert damaged["error"]["status"] == 500, damaged
            assert preflop["street"] == "preflop" and preflop["cases"], preflop
            assert "case base 'mine' needs attention: index " in logged(caplog)
            assert "provenance.bin is damaged" in logged(caplog)
    finally:
        engine.close()
