"""A case base damaged while ``cbr serve`` runs, over real HTTP (a real process on a free
loopback port, stopped at the end of each test whatever happens): a Parquet part cut or
overwritten after the server loaded it is refused at the next request of its street (500, as
for damage found at the start), not answered from memory; a bot's own case base is named as
the bot's; a failed compaction is said once, in the store's words, not DuckDB's."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from cbr.serve.process import start_server as _start
from cbr.serve.process import stop_server
from tests.conftest import require_module
from tests.serve.conftest import TOKEN

httpx = require_module("httpx", module_level=True)
require_module("fastapi", module_level=True)
require_module("uvicorn", module_level=True)

AUTH = {"Authorization": f"Bearer {TOKEN}"}
FLOP = {"hole": "AsKd", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 5, "prev_bets": 2}
PREFLOP = {"hole": "AsKd", "dealt": 2, "in_hand": 2, "position": 0, "to_act": 1}
MEND = ("no flop query is answered until the part is restored from a copy or the case base rebuilt with cbr build "
        "(cbr casebase verify lists every problem, cbr casebase repair mends the rest; the other streets answer)")


def start_server(*args: str, cwd: Path) -> tuple[subprocess.Popen, str]:
    return _start(args, cwd=cwd, timeout=60.0)


def stopped(proc: subprocess.Popen) -> str:
    """Stop the server (SIGTERM: a clean stop) and return all it said on stderr."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        return proc.stderr.read() if proc.stderr else ""
    finally:
        stop_server(proc)


def cut(part: Path, size: int) -> bytes:
    """Cut ``part`` to ``size`` bytes; its sound bytes."""
    sound = part.read_bytes()
    rewrite(part, sound[:size])
    return sound


def rewrite(part: Path, data: bytes) -> None:
    """Write ``data`` over ``part`` as a later write does: its modification time a second after
    the last one (writes a few milliseconds apart may share the file system's clock tick)."""
    later = max(part.stat().st_mtime_ns, time.time_ns()) + 1_000_000_000
    part.write_bytes(data)
    os.utime(part, ns=(later, later))


def test_a_part_cut_while_serving_is_refused_at_retrieve_and_reuse(tmp_path: Path, token_file) -> None:
    """``/retrieve`` and ``/reuse`` of the flop answered 200 from memory after the flop part was
    cut on disk (the part's CRC was checked once per open case base): now each request re-checks
    its street's parts (a stat each; the CRC again when one changed), so the cut is the same 500
    as damage found at the start, with the library's line (the part, what mends it) on the
    server's log; the other streets answer; once the part is restored the flop answers again; a
    part overwritten in place (its size unchanged) is found by its CRC."""
    from cbr.play.retention import copy_casebase

    mine = copy_casebase("default", tmp_path / "mine")
    part = mine / "cases" / "flop" / "part-00000.parquet"
    listed = part.stat().st_size
    proc, url = start_server("--casebase", str(mine), "--token-file", str(token_file), cwd=tmp_path)
    try:
        with httpx.Client(base_url=url, timeout=60) as c:
            requests = (lambda: c.post("/retrieve", json={**FLOP, "casebase": "mine"}),
                        lambda: c.post("/reuse", json={**FLOP, "casebase": "mine", "policy": "cbr", "seed": 1}),
                        lambda: c.post("/reuse", json={**FLOP, "casebase": "mine", "policy": "call"}))
            for request in requests:
                assert request().status_code == 200  # loaded, checked
            sound = cut(part, 20_000)
            for request in requests:
                answer = request()
                assert answer.status_code == 500, answer.text
                assert answer.json()["detail"].startswith("the server's case base 'mine' could not be read: its "
                                                          "files need its operator's attention"), answer.text
                assert str(mine) not in answer.text
            batch = c.post("/retrieve/batch", json={"situations": [{**FLOP, "casebase": "mine"},
                                                                   {**PREFLOP, "casebase": "mine"}]})
            assert batch.status_code == 200, batch.text
            flop, preflop = batch.json()["answers"]
            assert flop["error"]["status"] == 500 and preflop["street"] == "preflop", batch.text
            assert c.post("/retrieve", json={**PREFLOP, "casebase": "mine"}).status_code == 200
            rewrite(part, sound)
            for request in requests:
                assert request().status_code == 200  # mended: answered again
            data = bytearray(sound)
            data[len(data) // 2: len(data) // 2 + 64] = bytes(64)  # overwritten in place: the same size
            rewrite(part, bytes(data))
            for request in requests:
                assert request().status_code == 500
            rewrite(part, sound)
            assert requests[0]().status_code == 200
        err = stopped(proc)
    finally:
        stop_server(proc)
    said = [line for line in err.splitlines() if "case base 'mine' needs attention" in line]
    cut_line = (f"case base 'mine' needs attention: {mine}: cases/flop/part-00000.parquet is 20,000 bytes, the manifest "
                f"says {listed:,}; the file is damaged or was replaced: {MEND}")
    assert said and said[0].endswith(cut_line), err
    assert any(line.endswith(f"case base 'mine' needs attention: {mine}: cases/flop/part-00000.parquet is damaged "
                             f"(size or checksum differs from the manifest): {MEND}") for line in said), err
    assert "Traceback" not in err and "magic" not in err, err


@pytest.fixture
def own_bot(tmp_path: Path, monkeypatch):
    """``(name, folder)``: an entry-point bot, ``ownbot``, a case-based bot whose own case base
    (when a request names none) is a writable copy of the default one that the server does not
    serve, installed as pip would (a dist-info beside the module) on the server's PYTHONPATH."""
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
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))
    return "ownbot", own


def test_a_fault_of_a_bots_own_case_base_names_it_as_the_bots(tmp_path: Path, token_file, own_bot) -> None:
    """A fault in the case base a bot plays from by its own choice (``/reuse`` naming no case
    base; a seat at the web table with no ``casebase`` option: the ``cbr`` bot's ``expert``) read
    "the server's case base 'expert' could not be read", a case base the client never chose.
    It is named as the bot's own; a served case base the client chose is still the server's."""
    from cbr.play.retention import copy_casebase

    name, own = own_bot
    mine = copy_casebase("default", tmp_path / "mine")
    bots = f"the case base 'own' that the bot {name!r} plays from (its own: the request chose no case base) could not be read: "
    proc, url = start_server("--casebase", str(mine), "--token-file", str(token_file), cwd=tmp_path)
    try:
        with httpx.Client(base_url=url, timeout=60) as c:
            reuse = c.post("/reuse", json={**FLOP, "policy": name, "seed": 1})
            assert reuse.status_code == 200 and reuse.json()["casebase"] == "own", reuse.text
            r = c.post("/table/sessions", json={"bots": [name], "seed": 4})
            assert r.status_code == 201, r.text
            sid = r.json()["session"]
            v = c.post(f"/table/sessions/{sid}/hand").json()
            while not v["hand"]["over"]:
                v = c.post(f"/table/sessions/{sid}/action", json={"action": "c"}).json()
            first = v["hand"]["decisions"][0]["id"]
            explained = c.get(f"/table/sessions/{sid}/decisions/{first}")
            assert explained.status_code == 200, explained.text
            street = explained.json()["street"]
            for s in {"flop", street}:
                cut(own / "cases" / s / "part-00000.parquet", 10_000)
            answer = c.post("/reuse", json={**FLOP, "policy": name, "seed": 1})
            assert answer.status_code == 500 and answer.json()["detail"].startswith(bots), answer.text
            answer = c.get(f"/table/sessions/{sid}/decisions/{first}")
            assert answer.status_code == 500 and answer.json()["detail"].startswith(bots), answer.text
            assert str(own) not in answer.text and "server's case base" not in answer.text
            # the bot playing from the served case base the request chose: the server's, as before
            cut(mine / "cases" / "flop" / "part-00000.parquet", 10_000)
            answer = c.post("/reuse", json={**FLOP, "policy": name, "casebase": "mine", "seed": 1})
            assert answer.status_code == 500, answer.text
            assert answer.json()["detail"].startswith("the server's case base 'mine' could not be read: "), answer.text
        err = stopped(proc)
    finally:
        stop_server(proc)
    assert f"case base 'own' needs attention: {own}: cases/flop/part-00000.parquet is 10,000 bytes" in err, err


def test_a_failed_compaction_is_said_once_in_the_stores_words(tmp_path: Path, token_file) -> None:
    """A session retained into the served ``mine`` and was left (DELETE) after a flop part was
    cut: its compaction failed, said at once on the server's log; the stop tried again and said
    it again in full; both lines carried DuckDB's words (``Invalid Input Error: No magic bytes
    found at end of file ...``) inside the store's. Now the fault is said once, in the store's
    words (the part, what is wrong, what mends it), and the stop's try that fails the same way
    says one short line."""
    from cbr.play.retention import copy_casebase

    mine = copy_casebase("default", tmp_path / "mine")
    part = mine / "cases" / "flop" / "part-00000.parquet"
    listed = part.stat().st_size
    proc, url = start_server("--casebase", str(mine), "--token-file", str(token_file), cwd=tmp_path)
    try:
        with httpx.Client(base_url=url, timeout=60, headers=AUTH) as c:
            r = c.post("/table/sessions", json={"bots": ["cbr:casebase=mine"], "seed": 1, "retain_into": "mine"})
            assert r.status_code == 201, r.text
            sid = r.json()["session"]
            v = c.post(f"/table/sessions/{sid}/hand").json()
            while not v["hand"]["over"]:
                v = c.post(f"/table/sessions/{sid}/action", json={"action": "c"}).json()
            assert v["retained"] > 0 and v["error"] is None, v
            cut(part, 20_000)
            left = c.delete(f"/table/sessions/{sid}")
            assert left.status_code == 200 and len(left.json()["warnings"]) == 1, left.text
        err = stopped(proc)
    finally:
        stop_server(proc)
    lines = [line for line in err.splitlines() if "case base 'mine'" in line]
    assert len(lines) == 2, err
    assert lines[0].startswith("ERROR:"), err  # said at once, on the server's log
    assert lines[0].split(None, 1)[1].startswith(
        "note: case base 'mine' not compacted at the end of a web-table session (its hands stay in the retention "
        f"log): {mine}/catalog.duckdb: cannot write the view over the flop parts ("), err
    assert lines[0].endswith(
        f"cases/flop/part-00000.parquet is 20,000 bytes, the manifest says {listed:,}; the file is damaged or was "
        "replaced: restore the part from a copy or rebuild the case base with cbr build (cbr casebase verify lists "
        "every problem)"), err
    assert lines[1] == ("note: case base 'mine' still not compacted, for the fault noted above (what was retained "
                        "stays in its retention log)"), err
    assert not any(w in err for w in ("magic", "Invalid Input", "DuckDB", "Traceback")), err
