"""``cbr serve`` as users run it: a real process on a free loopback port, spoken to over
real HTTP (httpx), killed at the end of each test whatever happens; and the command's
refusals (a non-loopback host without a token, the extra not installed)."""
from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cbr.serve.process import start_server as _start
from cbr.serve.process import stop_server
from cli import app as cli_app
from tests.conftest import REPO, default_sigint, require_module
from tests.serve.conftest import TOKEN

httpx = require_module("httpx", module_level=True)
require_module("fastapi", module_level=True)
require_module("uvicorn", module_level=True)

START_TIMEOUT = 60.0


def start_server(*args: str, cwd: Path = REPO) -> tuple[subprocess.Popen, str]:
    """``cbr serve ARGS`` on a free loopback port (run in ``cwd``): :func:`cbr.serve.process.start_server`."""
    return _start(args, cwd=cwd, timeout=START_TIMEOUT)


@pytest.fixture
def server(casebase_copy, token_file):
    """A ``cbr serve`` process over the default case base and a writable copy, with a token."""
    proc, url = start_server("--casebase", "default", "--casebase", str(casebase_copy),
                             "--token-file", str(token_file), "--max-body", "4096")
    try:
        yield proc, url
    finally:
        stop_server(proc)
    assert proc.poll() is not None  # the process never outlives the test


def test_real_http_retrieve_equals_the_library(server) -> None:
    from cbr.game.situation import situation
    from cbr.query.answer import answer
    from cbr.store import CaseBase, resolve_casebase

    _, url = server
    body = {"hole": "AdQc", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 5, "prev_bets": 2, "top": 10}
    r = httpx.post(f"{url}/retrieve", json=body, timeout=30)
    assert r.status_code == 200, r.text
    with CaseBase.open(resolve_casebase("default")) as cb:
        want = answer(cb, situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5,
                                    previous_round_bets=2)).to_dict(top=10)
    got = r.json()
    assert got["triple"] == want["triple"]
    assert [(c["id"], c["similarity"], c["local"]) for c in got["cases"]] == \
           [(c["id"], c["similarity"], c["local"]) for c in want["cases"]]


def test_real_http_writes_limits_and_errors(server, casebase_copy) -> None:
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match
    from cbr.store import CaseBase

    _, url = server
    log = casebase_copy.parent / "http-hands.log"
    with AcpcLogWriter(log, overwrite=True) as w:
        run_match(["lag", "call"], 3, seed=11, log=w)
    text = log.read_text()
    with CaseBase.open(casebase_copy) as cb:
        before = cb.count()
    r = httpx.post(f"{url}/retain", json={"casebase": "mine", "text": text}, timeout=30)
    assert r.status_code == 401
    r = httpx.post(f"{url}/retain", json={"casebase": "mine", "text": text}, timeout=30,
                   headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200, r.text
    with CaseBase.open(casebase_copy) as cb:
        assert cb.count() == before + r.json()["cases"] > before
    r = httpx.post(f"{url}/retrieve", content=b"{" + b" " * 5000 + b"}", timeout=30,
                   headers={"content-type": "application/json"})
    assert r.status_code == 413
    r = httpx.post(f"{url}/retrieve", json={"hole": "AdQc", "to_call": -3}, timeout=30)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "to_call"]
    r = httpx.post(f"{url}/retrieve", content=b"{bad json", timeout=30, headers={"content-type": "application/json"})
    assert r.status_code == 422 and r.json() == {"detail": [{
        "loc": ["body"], "msg": "the body is not JSON: Expecting property name enclosed in double quotes at line 1 "
        "column 2", "type": "json_invalid"}]}
    assert httpx.post(f"{url}/retrieve", json={"hole": "AdQc", "casebase": "x"}, timeout=30).status_code == 404
    # a batch asking for more cases than the cap, refused at once on the top that goes over
    r = httpx.post(f"{url}/retrieve/batch", json={"situations": [{"hole": "AdQc", "top": 100_000}] * 100}, timeout=30)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "situations", 0, "top"]
    assert r.elapsed.total_seconds() < 2.0
    assert httpx.get(f"{url}/openapi.json", timeout=30).json()["info"]["title"] == "cbr serve"
    assert httpx.get(f"{url}/health", timeout=30).json()["status"] == "ok"  # still up after the errors


def test_a_case_base_under_the_checkouts_casebases_folder_is_the_users(token_file, tmp_path: Path) -> None:
    """In a source checkout (editable install) ``./casebases/`` is the package's own folder:
    every case base in it was taken for a shipped one (``/retain`` refused with 403, listed as
    shipped and not writable), though docs/serve.md serves ``./casebases/mine`` and the web
    table retains into ``./casebases/NAME``. Only ``default`` and ``expert`` are shipped."""
    import os
    import shutil

    from cbr.build.local import build_casebase
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match
    from cbr.store import PACKAGED_CASEBASES, CaseBase

    with AcpcLogWriter(tmp_path / "hands.log") as w:
        run_match(["ehs", "call"], 20, seed=3, log=w)
    mine = PACKAGED_CASEBASES / f"test-mine-{os.getpid()}"  # the checkout's ./casebases (tests run in one)
    try:
        build_casebase([tmp_path / "hands.log"], mine)
        with CaseBase.open(mine) as cb:
            before = cb.count()
        proc, url = start_server("--casebase", "default", "--casebase", f"./casebases/{mine.name}",
                                 "--token-file", str(token_file), cwd=REPO)
        try:
            listed = {c["name"]: c for c in httpx.get(f"{url}/casebases", timeout=30).json()["casebases"]}
            assert (listed[mine.name]["shipped"], listed[mine.name]["writable"]) == (False, True), listed
            assert (listed["default"]["shipped"], listed["default"]["writable"]) == (True, False), listed
            hand = "STATE:8:crc/cc/cc/rc:ThQh|6hJc/7s4s9h/Jd/Qd:40|-40:a|b\n"
            auth = {"Authorization": f"Bearer {TOKEN}"}
            r = httpx.post(f"{url}/retain", json={"casebase": mine.name, "text": hand}, timeout=30, headers=auth)
            assert r.status_code == 200, r.text
            r = httpx.post(f"{url}/retain", json={"casebase": "default", "text": hand}, timeout=30, headers=auth)
            assert r.status_code == 403 and "shipped" in r.json()["detail"], r.text
        finally:
            stop_server(proc)
        with CaseBase.open(mine) as cb:
            assert cb.count() > before
    finally:
        shutil.rmtree(mine, ignore_errors=True)


def test_a_non_loopback_host_needs_a_token_file() -> None:
    result = CliRunner().invoke(cli_app, ["serve", "--host", "0.0.0.0", "--port", "1"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--token-file" in lines[0] and "0.0.0.0" in lines[0]


def test_a_port_in_use_is_one_error_line_before_the_banner() -> None:
    """It printed the banner ("cbr serve: default on ...") and then uvicorn's ERROR line, exit 3."""
    import socket

    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        result = CliRunner().invoke(cli_app, ["serve", "--port", str(port)])
    assert result.exit_code == 1, result.output
    assert result.stderr.strip().splitlines() == [
        f"error: cannot listen on 127.0.0.1 port {port}: the port is in use (another server?); choose another --port"]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_case_base_given_twice_is_one_line_saying_so(workers: str) -> None:
    """``cbr serve -c default -c PATH/default`` said "two case bases are named 'default' (X and X);
    serve one of them, or a copy under another name": one folder, named twice."""
    import socket

    from casebases import DEFAULT

    with socket.create_server(("127.0.0.1", 0)) as free:   # a port the check before loading can bind
        port = free.getsockname()[1]
    result = CliRunner().invoke(cli_app, ["serve", "-c", "default", "-c", str(DEFAULT), "--port", str(port),
                                          "--workers", workers])
    assert result.exit_code == 1, result.output
    assert result.stderr.strip().splitlines() == [
        f"error: the case base {DEFAULT} is given twice ('default' and {str(DEFAULT)!r}): give each case base once"]


def test_a_short_token_is_refused(tmp_path: Path) -> None:
    token = tmp_path / "t"
    token.write_text("short\n")
    result = CliRunner().invoke(cli_app, ["serve", "--token-file", str(token), "--port", "1"])
    assert result.exit_code == 1 and "16 characters" in result.stderr


def test_without_the_extra_it_says_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn now raises ImportError
    result = CliRunner().invoke(cli_app, ["serve"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    # issue 35, defect 10: only 'pip install -e ".[serve]"' was said, which needs a source checkout;
    # the distribution's name with the extra works from a wheel install too
    from importlib.metadata import metadata

    meta = metadata("cbr-holdem")
    assert "serve" in meta.get_all("Provides-Extra")
    assert f'pip install "{meta["Name"]}[serve]"' in lines[0] and 'pip install -e ".[serve]"' in lines[0], lines[0]


def test_workers_each_see_what_another_retained(casebase_copy, token_file) -> None:
    """--workers 2: two processes over one case base; a retention through either is seen by
    both (each follows the case base's retention log before it reads)."""
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match
    from cbr.store import CaseBase

    log = casebase_copy.parent / "workers-hands.log"
    with AcpcLogWriter(log, overwrite=True) as w:
        run_match(["ehs", "call"], 4, seed=21, log=w)
    proc, url = start_server("--casebase", str(casebase_copy), "--token-file", str(token_file), "--workers", "2")
    try:
        with httpx.Client(base_url=url, timeout=30) as c:
            for _ in range(6):  # both workers have answered at least once (loaded and warm)
                assert c.get("/casebases").status_code == 200
            r = c.post("/retain", json={"casebase": "mine", "text": log.read_text()},
                       headers={"Authorization": f"Bearer {TOKEN}"})
            assert r.status_code == 200, r.text
            with CaseBase.open(casebase_copy) as cb:
                on_disk = cb.count()
            seen: dict[int, set[int]] = {}
            for i in range(40):
                with httpx.Client(base_url=url, timeout=30) as fresh:  # a new connection: either worker
                    pid = fresh.get("/health").json()["pid"]    # one connection: one worker
                    seen.setdefault(pid, set()).add(fresh.get("/casebases").json()["casebases"][0]["total"])
                if len(seen) == 2 and i >= 7:
                    break
            assert len(seen) == 2, seen  # both workers answered
            assert all(totals == {on_disk} for totals in seen.values()), (seen, on_disk)
            # the web table needs one process (a session lives in one): refused with the reason
            r = c.post("/table/sessions", json={"bots": ["call"]})
            assert r.status_code == 409 and "one process" in r.json()["detail"], r.text
            assert c.get("/").status_code == 200 and c.get("/table/sessions/x").status_code == 404
    finally:
        stop_server(proc)
    assert proc.poll() is not None


def test_a_second_ctrl_c_cuts_the_requests_in_flight_cleanly(casebase_copy, token_file, tmp_path: Path) -> None:
    """Two Ctrl-Cs during a request: the client got a plain-text 500, stderr filled with ~120
    lines of tracebacks, and the case bases were not closed (a retained case base stayed
    uncompacted). Now: a JSON 503, one line per Ctrl-C, exit 130, the case base compacted."""
    import json
    import shutil

    from cbr.store.verify import verify_casebase

    mine = tmp_path / "mine"
    shutil.copytree(casebase_copy, mine)
    proc, url = start_server("--casebase", str(mine), "--token-file", str(token_file), "--time-limit", "120")
    try:
        code, err, answers = _retain_then_ctrl_c_twice_during_an_evaluation(proc, url)
    finally:
        stop_server(proc)
    assert code == 130, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 4, err  # banner, 2 stopping lines, interrupted
    assert "stopping now: the requests in flight are cut" in err
    assert answers and answers[0].status_code == 503, answers
    assert "the server is stopping" in json.loads(answers[0].text)["detail"]
    report = verify_casebase(mine)
    assert report.sound and (report.log is None or report.log["records"] == 0), report  # compacted into parts


def _worker_pids(url: str) -> set[int]:
    """The pids of a ``--workers 2`` server's workers (each answers ``/health`` with its own)."""
    pids: set[int] = set()
    for _ in range(60):
        with httpx.Client(base_url=url, timeout=30) as fresh:  # a new connection: either worker
            pids.add(fresh.get("/health").json()["pid"])
        if len(pids) == 2:
            break
    assert len(pids) == 2, pids
    return pids


@pytest.mark.parametrize("how, code, last", [("ctrl-c", 130, "interrupted"), ("sigterm", 143, "terminated")])
def test_workers_stop_as_one_process_does(how: str, code: int, last: str) -> None:
    """``--workers 2`` stopped silently with exit 0 on Ctrl-C (SIGINT to the terminal's process
    group: the server and its workers) and on SIGTERM (to the server alone). Now it says what
    one process says and exits 130 / 143, with no worker left."""
    import os
    import signal

    proc, url = start_server("--casebase", "default", "--workers", "2")
    try:
        workers = _worker_pids(url)
        if how == "ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGTERM)
        got = proc.wait(timeout=60)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        stop_server(proc)
    lines = err.strip().splitlines()
    assert got == code, err
    assert lines[1:] == ["stopping: the requests in flight finish first (Ctrl-C again to cut them)", last], err
    assert not any(_running(pid) for pid in workers), workers


def test_workers_never_outlive_a_server_killed_outright() -> None:
    """The workers of a SIGKILLed ``--workers 2`` server (no clean-up in it) stop too."""
    import signal
    import time

    proc, url = start_server("--casebase", "default", "--workers", "2")
    try:
        workers = _worker_pids(url)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_running(pid) for pid in workers):
            time.sleep(0.2)
    finally:
        stop_server(proc)
    assert not any(_running(pid) for pid in workers), workers


def test_workers_never_outlive_a_server_killed_while_they_start() -> None:
    """The workers of a ``--workers 2`` server SIGKILLed while they still import stop too: each
    read its parent itself late in its start-up, by then init (the server was gone), armed
    the parent-death signal for init and served on, orphaned, on the inherited socket. The
    server records its pid for them before it starts them (``CBR_SERVE_PARENT``)."""
    import os
    import signal
    import time

    from cbr.serve.process import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--casebase", "default", "--workers", "2",
                             "--port", str(port)], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    workers: list[int] = []
    try:
        banner = proc.stderr.readline()
        assert banner.startswith(f"cbr serve: default on http://127.0.0.1:{port} (2 workers; API docs: "), \
            banner + (proc.stderr.read() if proc.poll() is not None else "")  # the case bases served, named
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(workers) < 2:  # spawned: now importing
            workers = _children(proc.pid, "spawn_main")
            time.sleep(0.01)
        assert len(workers) == 2, workers
        proc.kill()
        proc.wait(timeout=30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_running(pid) for pid in workers):
            time.sleep(0.2)
        assert not any(_running(pid) for pid in workers), f"workers outlived their server: {workers}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
        for pid in workers:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def _children(pid: int, word: str) -> list[int]:
    """The processes whose parent is ``pid`` now and whose command line holds ``word``."""
    import os

    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", encoding="ascii") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) != pid:
                        continue
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if word.encode() in f.read():
                        found.append(int(name))
            except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
                pass
    return found


def test_workers_a_second_ctrl_c_cuts_the_requests_in_flight_cleanly(casebase_copy, token_file,
                                                                     tmp_path: Path) -> None:
    """The second Ctrl-C of ``--workers 2`` (to the server alone: it passes it on) cuts a request
    in flight as one process does: a JSON 503, the lines of one process, exit 130, no worker
    left, and the case base retained into compacted by the worker that retained."""
    import json
    import shutil

    from cbr.store.verify import verify_casebase

    mine = tmp_path / "mine"
    shutil.copytree(casebase_copy, mine)
    proc, url = start_server("--casebase", str(mine), "--token-file", str(token_file), "--time-limit", "120",
                             "--workers", "2")
    try:
        workers = _worker_pids(url)
        code, err, answers = _retain_then_ctrl_c_twice_during_an_evaluation(proc, url)
    finally:
        stop_server(proc)
    assert code == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[1:] == [
        "stopping: the requests in flight finish first (Ctrl-C again to cut them)",
        "stopping now: the requests in flight are cut; the case bases are closed cleanly", "interrupted"], err
    assert answers and answers[0].status_code == 503, answers
    assert "the server is stopping" in json.loads(answers[0].text)["detail"]
    assert not any(_running(pid) for pid in workers), workers
    report = verify_casebase(mine)
    assert report.sound and (report.log is None or report.log["records"] == 0), report  # compacted into parts


def test_a_server_never_outlives_a_starter_killed_before_it_could_stop_it() -> None:
    """A process that started ``cbr serve`` through :func:`start_server` and is SIGKILLed (no
    ``finally``, no :func:`stop_server`) leaves no server: the kernel's parent-death signal
    stops it (found after a killed test run left one listening), also while it answers
    requests. Its SIGTERM handler once wrote its ``stopping`` line to the dead starter's pipe
    first: the EPIPE error, raised wherever the main thread was, was taken for a request's
    error when it landed in a request's callback, the stop was lost and the server served on
    (in CI under load; here in most rounds of the old code, so three rounds)."""
    for _ in range(3):
        server, served_after = _kill_the_starter_of_a_busy_server()
        assert not _running(server), f"the server outlived its starter (it answered {served_after} requests since)"


def _kill_the_starter_of_a_busy_server() -> tuple[int, int]:
    """SIGKILL a process that started a server with :func:`start_server` while four threads
    send it requests; wait up to 30 s for the server to end. The server's pid and how many
    requests it answered after the kill (it is SIGKILLed here if it still runs)."""
    import os
    import signal
    import threading
    import time

    starter = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom cbr.serve.process import start_server\n"
         "proc, url = start_server(['--casebase', 'default'])\nprint(proc.pid, url, flush=True)\ntime.sleep(600)"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    done = threading.Event()
    answered: list[float] = []

    def ask(url: str) -> None:
        while not done.is_set():
            try:
                with httpx.Client(base_url=url, timeout=5) as client:
                    while not done.is_set():
                        client.get("/health").raise_for_status()
                        answered.append(time.monotonic())
            except httpx.HTTPError:  # the server stops
                time.sleep(0.05)

    askers: list[threading.Thread] = []
    try:
        line = starter.stdout.readline().split()
        assert len(line) == 2 and line[0].isdigit(), starter.stderr.read() if starter.poll() is not None else line
        server, url = int(line[0]), line[1]
        os.kill(server, 0)  # running
        askers = [threading.Thread(target=ask, args=(url,), daemon=True) for _ in range(4)]
        for asker in askers:
            asker.start()
        deadline = time.monotonic() + 10
        while len(answered) < 50 and time.monotonic() < deadline:  # the server is busy answering
            time.sleep(0.05)
        assert len(answered) >= 50, f"{len(answered)} requests answered in 10 s"
        starter.kill()
        killed = time.monotonic()
        starter.wait(timeout=10)
        deadline = killed + 30
        while time.monotonic() < deadline and _running(server):
            time.sleep(0.2)
        return server, sum(t > killed + 1.0 for t in answered)
    finally:
        done.set()
        for asker in askers:
            asker.join(timeout=10)
        if starter.poll() is None:
            starter.kill()
            starter.wait()
        if "server" in locals() and _running(server):
            os.killpg(server, signal.SIGKILL)


@contextlib.contextmanager
def _stderr_nobody_reads() -> Iterator[None]:
    """``sys.stderr`` on a pipe whose reader is gone, as a killed starter leaves the server's:
    every write to it fails (EPIPE; Python ignores SIGPIPE). Set in the test's body: pytest's
    capture puts its own ``sys.stderr`` back between a fixture's set-up and the test."""
    import os

    read, write = os.pipe()
    os.close(read)
    stream = open(write, "w", encoding="utf-8")
    saved, sys.stderr = sys.stderr, stream
    try:
        yield
    finally:
        sys.stderr = saved
        try:
            stream.close()
        except BrokenPipeError:  # the lines nobody read, flushed once more
            pass


def test_a_stop_is_begun_when_nobody_reads_its_message() -> None:
    """The server's SIGTERM and Ctrl-C handlers begin the stop though they cannot say so: they
    raised BrokenPipeError before the stop began (what left servers running after their starter
    was killed: see the test above)."""
    import logging
    import signal

    import uvicorn

    from cbr.cli.serve import _stop_messages

    server = _stop_messages()(uvicorn.Config(app=lambda scope, receive, send: None))
    level = logging.getLogger("uvicorn.error").level
    try:
        with _stderr_nobody_reads():
            server.handle_exit(signal.SIGTERM, None)
            assert server.should_exit and not server.force_exit
            server.handle_exit(signal.SIGINT, None)  # a second Ctrl-C cuts the requests in flight
            assert server.force_exit
    finally:
        logging.getLogger("uvicorn.error").setLevel(level)


def test_a_supervisors_stop_is_begun_when_nobody_reads_its_message() -> None:
    """The same for ``--workers N``: the supervisor queues the stop and cuts the workers on a
    second Ctrl-C though it cannot say so."""
    import signal

    import uvicorn

    from cbr.cli.serve import _supervisor

    signums = [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGTTIN", "SIGTTOU", "SIGBREAK")
               if hasattr(signal, name)]
    handlers = {signum: signal.getsignal(signum) for signum in signums}
    try:
        supervisor = _supervisor()(uvicorn.Config(app=lambda scope, receive, send: None, workers=2), sockets=[])
        with _stderr_nobody_reads():
            supervisor._on_stop(signal.SIGTERM, None)
            assert supervisor.stopped_by == signal.SIGTERM and supervisor.signal_queue == [signal.SIGTERM]
            supervisor._on_stop(signal.SIGINT, None)
            assert supervisor.forced
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_sigterm_exits_143_when_nobody_reads_the_servers_stderr(workers: str, monkeypatch) -> None:
    """A server SIGTERMed after the reader of its stderr and stdout went away (a killed starter)
    exited 120, not 143: its ``stopping`` line could not be written and stayed in stderr's
    buffer, and the interpreter's last flush of it at exit failed (Python's exit code then is
    120). Run buffered, as a server is unless ``PYTHONUNBUFFERED`` is set (with it, no line is
    left in a buffer and the exit was 143 all along)."""
    import signal

    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)  # start_server passes this environment on
    proc, url = start_server("--casebase", "default", "--workers", workers)
    try:
        pids = _worker_pids(url) if workers == "2" else set()
        for stream in (proc.stderr, proc.stdout):
            if stream is not None:
                stream.close()  # the reader is gone: every write there fails (EPIPE)
        proc.send_signal(signal.SIGTERM)
        got = proc.wait(timeout=60)
    finally:
        stop_server(proc)
    assert got == 143
    assert not any(_running(pid) for pid in pids), pids


def _running(pid: int) -> bool:
    """Whether ``pid`` runs: neither gone nor a zombie (an exited process that init, which
    reaps when it pleases here, has not reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def _retain_then_ctrl_c_twice_during_an_evaluation(proc, url: str) -> tuple[int, str, list]:
    """Retain a hand into ``mine``, start a slow ``/evaluate`` of it, press Ctrl-C twice: the
    server's exit code, its stderr and the evaluation's answer (in a list, empty if none)."""
    import signal
    import threading
    import time

    hand = "STATE:8:crc/cc/cc/rc:ThQh|6hJc/7s4s9h/Jd/Qd:40|-40:a|b\n"
    r = httpx.post(f"{url}/retain", json={"casebase": "mine", "text": hand},
                   headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
    assert r.status_code == 200, r.text
    answers: list = []
    slow = threading.Thread(target=lambda: answers.append(httpx.post(
        f"{url}/evaluate", json={"casebase": "mine", "max_decisions": 500, "folds": 3, "ann": True}, timeout=120)))
    slow.start()
    time.sleep(1.5)  # the evaluation is under way (it takes tens of seconds)
    proc.send_signal(signal.SIGINT)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    slow.join(timeout=120)
    code = proc.wait(timeout=120)
    return code, (proc.stderr.read() if proc.stderr else ""), answers


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_failed_compaction_of_what_retain_kept_is_said_when_the_server_stops(workers: str, token_file,
                                                                              tmp_path: Path) -> None:
    """What ``/retain`` kept is compacted when the server stops; a compaction that failed there
    was put in the engine's notes, which nothing showed (one process or a worker alike): the
    stop said nothing. Now each note is a line on the server's stderr before its last line;
    the cases are in the retention log, durable."""
    import signal

    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match
    from cbr.play.retention import copy_casebase
    from cbr.store import CaseBase
    from cbr.store.verify import verify_casebase

    mine = copy_casebase("default", tmp_path / "mine")
    with CaseBase.open(mine) as cb:
        before = cb.count()
    log = tmp_path / "hands.log"
    with AcpcLogWriter(log) as w:
        run_match(["ehs", "call"], 3, seed=8, log=w)
    proc, url = start_server("--casebase", str(mine), "--token-file", str(token_file), "--workers", workers,
                             cwd=tmp_path)
    try:
        pids = _worker_pids(url) if workers == "2" else {proc.pid}
        with httpx.Client(base_url=url, timeout=60) as c:
            r = c.post("/retain", json={"casebase": "mine", "text": log.read_text()},
                       headers={"Authorization": f"Bearer {TOKEN}"})
            assert r.status_code == 200, r.text
            kept = r.json()["cases"]
        assert kept > 0 and verify_casebase(mine).log["records"] == 1
        # where each server process writes the new manifest before it renames it into place: a directory
        blockers = [mine / f".manifest.json.tmp-{pid}" for pid in pids]
        for b in blockers:
            b.mkdir()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        stop_server(proc)
    assert code == 143 and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert lines[-1] == "terminated", err
    compacting = [line for line in lines if line.startswith("note: case base 'mine' not compacted at the stop (what "
                                                            "was retained stays in its retention log): ")]
    assert len(compacting) == 1 and "Is a directory" in compacting[0], err  # the process that retained
    notes = [line for line in lines if line.startswith("note: ")]
    assert lines[-1 - len(notes):-1] == notes, err  # one line each, before the last
    for b in blockers:
        b.rmdir()
    report = verify_casebase(mine)
    assert report.log["records"] == 1 and {p.kind for p in report.problems} <= {"catalog"}, report
    with CaseBase.open(mine) as cb:
        assert cb.count() - before == kept


@pytest.mark.parametrize("sigint", ["ignored", "default"])
def test_one_process_stops_on_sigint_with_130_and_interrupted_even_when_started_with_sigint_ignored(
        sigint: str) -> None:
    """`cbr serve &` from a script starts with SIGINT ignored (the shell's rule for background
    jobs). It stopped on `kill -INT` but exited 0 without `interrupted`: uvicorn raises the
    signal again once stopped, to the handler it found, which ignored it. Started either way it
    now says `interrupted` and exits 130, as documented."""
    import os
    import signal

    from cbr.serve.process import free_port

    port = free_port()
    url = f"http://127.0.0.1:{port}"

    def start() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN if sigint == "ignored" else signal.SIG_DFL)

    proc = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--port", str(port)], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, preexec_fn=start)
    try:
        for _ in range(int(START_TIMEOUT * 10)):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            time.sleep(0.1)
        else:
            pytest.fail("cbr serve did not answer /health")
        os.kill(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=60)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        stop_server(proc)
    assert code == 130, err
    assert err.strip().splitlines()[1:] == ["stopping: the requests in flight finish first (Ctrl-C again to cut them)",
                                           "interrupted"], err


def test_a_workers_storage_fault_is_on_the_servers_log(casebase_copy, tmp_path: Path) -> None:
    """``--workers 2``: each worker answers a fault of its case base's files 500 and says what
    the library found on the server's stderr (the operator's log line: the case base, the path,
    the damage), one line per request that met it, from each worker, as one process does."""
    import os
    import shutil
    import signal

    mine = tmp_path / "mine"
    shutil.copytree(casebase_copy, mine)
    proc, url = start_server("--casebase", str(mine), "--workers", "2")
    try:
        part = next((mine / "cases" / "flop").glob("*.parquet"))
        part.write_bytes(part.read_bytes()[:1000])
        answered: dict[int, list[int]] = {}
        for _ in range(60):
            with httpx.Client(base_url=url, timeout=30) as fresh:  # a new connection: either worker
                pid = fresh.get("/health").json()["pid"]          # one connection: one worker
                r = fresh.get("/casebases/mine")
                answered.setdefault(pid, []).append(r.status_code)
                assert "could not be read" in r.json()["detail"] and str(mine) not in r.text, r.text
            if len(answered) == 2:
                break
        assert len(answered) == 2 and all(codes and set(codes) == {500} for codes in answered.values()), answered
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=60) == 143
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        stop_server(proc)
    said = [line for line in err.splitlines() if "case base 'mine' needs attention: " in line]
    assert len(said) == sum(len(codes) for codes in answered.values()), err
    assert all(f"{mine}: cases/flop/{part.name} is 1,000 bytes" in line for line in said), err


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_case_base_with_a_cut_part_is_served_and_said_once_at_start(workers: str, casebase_copy,
                                                                      tmp_path: Path) -> None:
    """``cbr serve -c default -c ./mine`` with mine's turn part cut refused to start (exit 1,
    the sound case base not served either), though a part cut while the server runs gives only
    500s. Now both are served: mine's turn queries answer 500 naming it, its other streets and
    the other case base answer; the start says it once on stderr (with two workers too), in the
    library's line: the part, its sizes, what mends it."""
    import os
    import shutil
    import signal

    mine = tmp_path / "mine"
    shutil.copytree(casebase_copy, mine)
    part = mine / "cases" / "turn" / "part-00000.parquet"
    listed = part.stat().st_size
    os.truncate(part, 20_000)
    proc, url = start_server("--casebase", "default", "--casebase", str(mine), "--workers", workers)
    try:
        turn = {"hole": "KsKd", "board": "2c7h9dJs", "in_hand": 2}
        flop = {"hole": "AdQc", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 5, "prev_bets": 2}
        for _ in range(4 if workers == "2" else 1):
            with httpx.Client(base_url=url, timeout=60) as c:   # a new connection: either worker
                r = c.post("/retrieve", json={**turn, "casebase": "mine"})
                assert r.status_code == 500, r.text
                assert r.json()["detail"].startswith("the server's case base 'mine' could not be read: "), r.text
                assert str(mine) not in r.text
                assert c.post("/retrieve", json={**flop, "casebase": "mine"}).status_code == 200
                assert c.post("/retrieve", json={**turn, "casebase": "default"}).status_code == 200
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        stop_server(proc)
    assert code == 130 and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert lines[0].startswith("cbr serve: default, mine on "), err
    warned = [line for line in lines if line.startswith("warning: ")]
    assert warned == [f"warning: case base 'mine' needs attention: {mine}: cases/turn/part-00000.parquet is "
                      f"20,000 bytes, the manifest says {listed:,}; the file is damaged or was replaced: no turn "
                      "query is answered until the part is restored from a copy or the case base rebuilt with "
                      "cbr build (cbr casebase verify lists every problem, cbr casebase repair mends the rest; "
                      "the other streets answer)"], err
    assert lines[1] == warned[0], err  # at start, right after the banner
