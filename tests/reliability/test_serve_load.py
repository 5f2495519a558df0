"""``cbr serve`` under load (``bench/load_serve.py``): clients on loopback mixing retrieval,
re-use, retention and bad input; no 5xx, every status as it should be, no retained case lost,
the server's memory flat. Short form: 4 clients x 40 requests; the long form
(``CBR_RELIABILITY=long``) is the full one, 16 clients x 500 requests. A client whose connection
fails says so once (unless the run is stopping), and a Ctrl-C under load is the script's one line."""
from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, default_sigint, require_module
from tests.reliability import reliability_rounds


def _load_module():
    spec = importlib.util.spec_from_file_location("load_serve", REPO / "bench" / "load_serve.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.mark.time_limit(120)
def test_serve_under_mixed_load_loses_nothing(tmp_path) -> None:
    require_module("httpx")
    require_module("fastapi")
    require_module("uvicorn")
    long = reliability_rounds(1) > 1
    clients, requests = (16, 500) if long else (4, 40)
    report = _load_module().run_load(clients, requests, seed=1, folder=tmp_path)
    assert report["errors_5xx"] == 0, report
    assert report["wrong_status"] == 0, report["wrong_examples"]
    assert report["answered"] >= clients * requests
    assert report["retained_cases"] > 0 and report["lost_cases"] == 0, report
    assert report["server_alive"]
    assert report["rss_growth_mb"] < report["max_growth_mb"], report
    assert report["ok"], report


def _hang_up_server(stopping: threading.Event | None) -> tuple[socket.socket, threading.Thread]:
    """A TCP server on loopback that takes one connection, reads the request, sets ``stopping``
    (when given: the run stops now) and closes the connection unanswered."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            if stopping is not None:
                stopping.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return server, thread


@pytest.mark.time_limit(30)
@pytest.mark.parametrize("stopping", [False, True], ids=["running", "stopping"])
def test_a_client_whose_connection_fails_says_so_once_unless_the_run_is_stopping(stopping: bool) -> None:
    """Before: a failed connection killed the client thread with its traceback, every one of the
    sixteen when a Ctrl-C stopped the server under them (a thousand lines before the script's
    ``interrupted:`` line). Now it is the client's one ``error`` while the run goes on (the
    report's ``client_errors``) and nothing once it is stopping."""
    require_module("httpx")
    event = threading.Event() if stopping else None
    server, thread = _hang_up_server(event)
    out: dict = {}
    try:
        port = server.getsockname()[1]
        _load_module().client_run(f"http://127.0.0.1:{port}", 0, 50, ["unused"], out, event)
    finally:
        thread.join(timeout=10)
        server.close()
    assert out["statuses"] == {} and out["retained"] == 0  # not one answer
    if stopping:
        assert "error" not in out, out
    else:
        assert out["error"].startswith("RemoteProtocolError: "), out


def _sockets(pid: int) -> int:
    """How many sockets process ``pid`` has open."""
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            count += os.readlink(fd).startswith("socket:")
        except OSError:
            continue
    return count


@pytest.mark.time_limit(120)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts the script's sockets in /proc")
def test_a_ctrl_c_under_load_is_one_line(tmp_path) -> None:
    """A Ctrl-C while the clients send is the script's one line, exit 130: the server stops under
    the clients, and they end without a word (before: ~1,000 lines of their tracebacks)."""
    require_module("httpx")
    require_module("fastapi")
    require_module("uvicorn")
    clients = 4
    proc = subprocess.Popen([sys.executable, str(REPO / "bench" / "load_serve.py"), "--clients", str(clients),
                             "--requests", "1000000"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 90
        while _sockets(proc.pid) < clients:  # the clients' keep-alive connections: they are sending
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate(timeout=10)
            time.sleep(0.1)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert err.splitlines() == ["interrupted: nothing written"], err
        assert out == ""
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=10)
