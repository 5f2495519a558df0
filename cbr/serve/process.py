"""``cbr serve`` as its own process on a free loopback port: for the scripts and tests that
speak to it over real HTTP (the benchmarks, the load test, the server's own tests).

The process runs in a session of its own, so :func:`stop_server` can signal it and any
worker processes it started as one group; stopping always reaps it and closes its pipes. It
never outlives its starter: on Linux the kernel sends it SIGTERM (a clean stop) when the thread
that started it ends, so a starter killed before it could call :func:`stop_server` leaves no
server behind (start it from a thread that lives as long as the server is needed).

>>> port = free_port(); 1024 <= port <= 65535
True
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Optional, Sequence

from cbr.build.parent import stops_with_parent
from cbr.errors import CBRError

__all__ = ["free_port", "start_server", "stop_server"]

#: The folder holding ``cli.py`` when the engine runs from a source tree (None when installed).
_SOURCE_TREE = Path(__file__).resolve().parents[2] if (Path(__file__).resolve().parents[2] / "cli.py").is_file() \
    else None



def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=1.0) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start_server(args: Sequence[str] = (), *, cwd: Optional[str | os.PathLike[str]] = None,
                 timeout: float = 60.0, stdout: int = subprocess.PIPE) -> tuple[subprocess.Popen, str]:
    """``cbr serve --port P ARGS`` (P free) started in ``cwd``; returns the process and its URL
    once ``/health`` answers. Raises :class:`~cbr.errors.CBRError` with the server's error
    output if it exits first, or if it does not answer within ``timeout`` seconds (it is then
    stopped)."""
    port = free_port()
    env = dict(os.environ)
    if _SOURCE_TREE is not None:  # run the source tree's engine, as the caller does
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_SOURCE_TREE), env.get("PYTHONPATH")]))
    proc = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--port", str(port), *args],
                            cwd=cwd if cwd is not None else _SOURCE_TREE, env=env, stdout=stdout,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=stops_with_parent(os.getpid()))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise CBRError(f"cbr serve exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
            if _healthy(url):
                return proc, url
            time.sleep(0.1)
        raise CBRError(f"cbr serve did not answer /health within {timeout:g} s")
    except BaseException:
        stop_server(proc)
        raise


def stop_server(proc: subprocess.Popen, *, grace: float = 10.0) -> None:
    """SIGTERM to the server's process group (it compacts and closes its case bases), SIGKILL
    if it lingers past ``grace`` seconds; always reaped, its pipes closed."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
