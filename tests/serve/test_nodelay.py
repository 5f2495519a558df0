"""``cbr serve``'s HTTP protocol switches Nagle's algorithm off on every connection, also on
sockets rebuilt from a file descriptor as uvicorn's worker processes rebuild theirs (which
asyncio itself leaves alone: with ``--workers 2`` every request waited for a delayed
acknowledgement, about 40 ms)."""
from __future__ import annotations

import asyncio
import socket

from tests.conftest import require_module


def _nodelay_after_accepting(protocol_class) -> tuple[int, int]:
    """``(proto, TCP_NODELAY)`` of a connection accepted on a listening socket rebuilt from its
    file descriptor, served by ``protocol_class`` on a real loopback connection."""
    from uvicorn.config import Config
    from uvicorn.server import ServerState

    config = Config(app=lambda scope, receive, send: None, log_level="warning")
    config.load()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    rebuilt = socket.fromfd(listener.fileno(), socket.AF_INET, socket.SOCK_STREAM)  # as uvicorn's workers do
    client = socket.create_connection(listener.getsockname())
    conn, _ = rebuilt.accept()

    async def serve() -> int:
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_accepted_socket(
            lambda: protocol_class(config, ServerState(), {}, loop), conn)
        value = transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        transport.close()
        return value

    try:
        return conn.proto, asyncio.run(serve())
    finally:
        for s in (client, conn, rebuilt, listener):
            s.close()


def test_a_rebuilt_socket_gets_tcp_nodelay_from_our_protocol_only() -> None:
    require_module("uvicorn")
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from cbr.serve.nodelay import NoDelayH11Protocol

    proto, plain = _nodelay_after_accepting(H11Protocol)
    if proto != socket.IPPROTO_TCP:  # the case uvicorn's workers are in (Linux, CPython 3.11)
        assert plain == 0, "asyncio set TCP_NODELAY on a rebuilt socket itself"
    assert _nodelay_after_accepting(NoDelayH11Protocol)[1] != 0
