"""``cbr serve``: the engine over HTTP (FastAPI + uvicorn, the ``serve`` extra)."""
from __future__ import annotations

import ipaddress
from typing import Annotated, Optional

import typer

from cbr.cli._errors import guarded, tell
from cbr.cli._options import FLAG
from cbr.cli._output import counted

#: How to add the serve extra: by the distribution's name (works whatever it was installed from,
#: a wheel included), or editable from a source checkout.
INSTALL_HINT = 'pip install "cbr-holdem[serve]" (in a source checkout: pip install -e ".[serve]")'


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (``localhost``, 127.0.0.0/8, ``::1``).

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("::1"), is_loopback("0.0.0.0")
    (True, True, True, False)
    """
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_port_free(host: str, port: int) -> None:
    """Raise :class:`~cbr.errors.ConfigError` (one line) when ``host:port`` cannot be bound, e.g.
    another server listens there: said before the banner, not after it as uvicorn's log line.
    The port is bound with the options uvicorn binds it with, then released for uvicorn.

    >>> import socket
    >>> busy = socket.create_server(("127.0.0.1", 0)); port = busy.getsockname()[1]
    >>> check_port_free("127.0.0.1", port)
    Traceback (most recent call last):
    ...
    cbr.errors.ConfigError: cannot listen on 127.0.0.1 port ...: the port is in use (another server?); choose another --port
    >>> busy.close(); check_port_free("127.0.0.1", port)
    """
    import errno
    import socket

    from cbr.errors import ConfigError

    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host}: {exc.strerror or exc}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            why = ("the port is in use (another server?); choose another --port" if exc.errno == errno.EADDRINUSE
                   else exc.strerror or str(exc))
            raise ConfigError(f"cannot listen on {host} port {port}: {why}") from None


def say_notes(notes: list[str]) -> None:
    """Say on stderr, one line each, what the server's stop noted that no request could be told
    (a compaction that failed: the cases stay in the retention log), as ``note: ...``."""
    for note in notes:
        tell(f"note: {' '.join(note.split())}")


def say_start_notes(notes: list[str]) -> None:
    """Say on stderr, after the banner and once, what opening the case bases found that the
    operator should mend (a damaged Parquet part: its case base is served, its street refused
    until the part is restored), as ``warning: ...``, one line each."""
    for note in notes:
        tell(f"warning: {' '.join(note.split())}")


def worker_app() -> object:
    """The app of one ``--workers N`` worker process (:func:`cbr.serve.app.app_from_environment`),
    which says its stop's notes on stderr (the server's, which it shares) as its process ends,
    after its case bases are closed, as one process does (:func:`say_notes`)."""
    from multiprocessing import util

    from cbr.serve.app import app_from_environment

    app = app_from_environment()
    # run after the app's own finalizer (priority 10: the stop a forced stop skipped), not before
    util.Finalize(None, lambda: say_notes(app.state.notes), exitpriority=5)
    return app


#: What a stop says, first and on a second Ctrl-C (one process and ``--workers N`` alike).
STOPPING = "stopping: the requests in flight finish first (Ctrl-C again to cut them)"
STOPPING_NOW = "stopping now: the requests in flight are cut; the case bases are closed cleanly"


def _stop_messages() -> type:
    """uvicorn's ``Server`` saying what a stop does: the first Ctrl-C (or SIGTERM) lets the
    requests in flight finish; a second Ctrl-C cuts them, quietly (uvicorn logged a traceback
    for every request it cut), and the case bases are still closed by the caller. A message
    that cannot be written loses nothing (:func:`tell`: the stop is begun all the same).
    ``stopped_by``: the signal that began the stop, for the exit code (130 or 143): uvicorn
    raises it again once stopped, but to the handler it found, and a server started in the
    background by a script inherits SIGINT ignored (``cbr serve &``: it stopped on ``kill -INT``
    and exited 0, without ``interrupted``)."""
    import logging
    import signal

    import uvicorn

    class Server(uvicorn.Server):
        #: The signal that began the stop (None: none did), for the command's exit code.
        stopped_by: Optional[int] = None

        def handle_exit(self, sig: int, frame: object) -> None:
            if not self.should_exit:
                self.stopped_by = sig
                tell(STOPPING)
            elif sig == signal.SIGINT and not self.force_exit:
                tell(STOPPING_NOW)
                logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
            super().handle_exit(sig, frame)  # type: ignore[arg-type]

    return Server


def _supervisor() -> type:
    """uvicorn's supervisor of ``--workers N`` saying what a stop does, as one process does
    (:func:`_stop_messages`): the first Ctrl-C or SIGTERM lets the workers finish the requests
    in flight, a second Ctrl-C cuts them. Both pass SIGINT to the workers (outside the
    terminal's process group, :func:`cbr.serve.app.app_from_environment`, they hear only their
    parent): a worker stops as one process does, whose first Ctrl-C lets the requests finish and
    whose second cuts them (uvicorn's SIGTERM killed a worker it had to cut, as it re-raises the
    signal, before the cut requests were answered and the case bases closed). ``stopped_by``:
    the signal that stopped it, for the command's exit code (130 or 143)."""
    import os
    import signal

    from uvicorn.supervisors import Multiprocess

    class Supervisor(Multiprocess):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            self.stopped_by: Optional[int] = None
            self.forced = False
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, self._on_stop)

        def _on_stop(self, sig: int, frame: object) -> None:
            if self.stopped_by is None:  # (:func:`tell`: a handler never raises, the stop is never lost)
                self.stopped_by = sig
                tell(STOPPING)
                self.signal_queue.append(sig)  # the supervisor's loop stops the workers
            elif sig == signal.SIGINT and not self.forced:
                self.forced = True
                tell(STOPPING_NOW)
                self.terminate_all()

        def terminate_all(self) -> None:
            """SIGINT to every worker still running (uvicorn sends SIGTERM)."""
            for process in list(self.processes):
                if process.pid is not None and process.exitcode is None:
                    try:
                        os.kill(process.pid, signal.SIGINT)
                    except ProcessLookupError:  # pragma: no cover - ended meanwhile
                        pass

    return Supervisor


@guarded
def serve_command(
    casebase: Annotated[Optional[list[str]], typer.Option("--casebase", "-c", metavar="NAME|PATH", help="Case base to serve: a directory, a name under ./casebases/, or 'default'; repeat for more [default: default].")] = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on. Other than loopback needs --token-file.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8000,
    token_file: Annotated[Optional[str], typer.Option("--token-file", help="File whose first line is the bearer token writes (/retain) need; without it the server takes no writes.")] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, max=64, help="Server processes, each with the case bases loaded.")] = 1,
    time_limit: Annotated[float, typer.Option("--time-limit", min=0.001, max=3600, help="Seconds a request may take before it is answered 503.")] = 10.0,
    max_body: Annotated[int, typer.Option("--max-body", min=1024, max=1 << 30, help="Largest request body in bytes (larger: 413).")] = 1_000_000,
    threads: Annotated[int, typer.Option("--threads", min=1, max=256, help="Requests worked on at once, per process.")] = 8,
    max_sessions: Annotated[int, typer.Option("--max-sessions", min=1, max=10000, help="Web-table sessions open at once (a new one beyond: 409).")] = 32,
    session_ttl: Annotated[float, typer.Option("--session-ttl", min=1, max=7 * 86400, help="Seconds a web-table session is kept without a request.")] = 3600.0,
    memory_map: Annotated[bool, typer.Option("--memory-map", metavar=FLAG, help="Map each street's saved index instead of loading the case bases: for case bases larger than memory. Serves /retrieve (same answers); refuses retention, evaluation and case-based bots in /reuse (403).")] = False,
) -> None:
    """Serve the engine over HTTP: /retrieve, /retrieve/batch, /reuse, /retain, /casebases,
    /evaluate, /policies, /health; the API is described at /docs and /openapi.json.

    Listens on loopback unless --host says otherwise; a non-loopback host needs
    --token-file. Needs the serve extra (pip install "cbr-holdem[serve]").

    Example (serves until Ctrl-C): cbr serve --port 8080
    """
    try:
        import fastapi  # noqa: F401
        import uvicorn
    except ImportError:
        typer.echo(f"error: cbr serve needs FastAPI and uvicorn: {INSTALL_HINT}", err=True)
        raise typer.Exit(1) from None
    from cbr.errors import ConfigError

    if not is_loopback(host) and token_file is None:
        raise ConfigError(f"--host {host} is not loopback: give --token-file (anyone who can reach the port "
                          "could otherwise use the server)")
    from cbr.serve.app import CONFIG_ENV, PARENT_ENV, ServeConfig, create_app, read_token
    from cbr.serve.nodelay import PROTOCOL as NODELAY_PROTOCOL

    token = read_token(token_file) if token_file is not None else None
    config = ServeConfig(casebases=tuple(casebase or ("default",)), token=token, max_body_bytes=max_body,
                         time_limit=time_limit, threads=threads, max_sessions=max_sessions, session_ttl=session_ttl,
                         memory_map=memory_map)
    url = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
    check_port_free(host, port)
    if workers == 1:
        app = create_app(config)  # loads the case bases now: a bad one is an error before listening
        typer.echo(f"cbr serve: {', '.join(app.state.engine.casebases)} on {url} (web table: {url}/; API docs: "
                   f"{url}/docs; writes {'need the token' if token else 'off'})", err=True)
        say_start_notes(app.state.engine.start_notes)
        server = _stop_messages()(uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                                        http=NODELAY_PROTOCOL))
        try:
            server.run()
        finally:
            try:
                app.state.shutdown()  # done already unless a second Ctrl-C cut the stop short
            finally:
                say_notes(app.state.notes)
        import signal

        from cbr.cli._errors import Terminated

        if server.stopped_by == signal.SIGINT:  # uvicorn's own re-raise was ignored: SIGINT was (`cbr serve &`)
            raise KeyboardInterrupt
        if server.stopped_by == signal.SIGTERM:
            raise Terminated
        return
    import os
    from dataclasses import replace

    from cbr.serve.engine import Engine

    checked = Engine(config.casebases, warm=False, memory_map=memory_map)  # each worker loads them; check them once here
    names = ", ".join(checked.casebases)
    start_notes = list(checked.start_notes)  # said once, here: the workers find the same and say nothing
    checked.close()
    # the workers read the token from its file: it is not put in their environment
    os.environ[CONFIG_ENV] = replace(config, token=None, token_file=token_file, tables=False).to_json()
    os.environ[PARENT_ENV] = str(os.getpid())  # the parent the workers die with, recorded before they start
    typer.echo(f"cbr serve: {names} on {url} ({counted(workers, 'worker')}; API docs: {url}/docs; "
               f"writes {'need the token' if token else 'off'}; no web table: it needs one process)", err=True)
    say_start_notes(start_notes)
    import signal

    from cbr.cli._errors import Terminated

    server_config = uvicorn.Config("cbr.cli.serve:worker_app", factory=True, host=host, port=port,
                                   workers=workers, log_level="warning", access_log=False, http=NODELAY_PROTOCOL)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        supervisor = _supervisor()(server_config, sockets=[server_config.bind_socket()])
        supervisor.run()  # every worker has ended when it returns
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    if supervisor.stopped_by == signal.SIGINT:
        raise KeyboardInterrupt
    if supervisor.stopped_by == signal.SIGTERM:
        raise Terminated
