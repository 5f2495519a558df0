"""The HTTP protocol ``cbr serve`` runs under uvicorn: uvicorn's h11 protocol with Nagle's
algorithm switched off on every connection.

asyncio switches it off itself only on sockets it knows to be TCP. With ``--workers N``
uvicorn's worker processes rebuild the listening socket from its file descriptor, and the
rebuilt socket no longer says it is TCP (``proto`` 0), so asyncio leaves Nagle on: a
response written in two pieces then waits for the client's delayed acknowledgement, about
40 ms on Linux, on every request (measured: 48 ms per ``/retrieve`` with 2 workers against
6 ms with 1; see docs/serve.md).
"""
from __future__ import annotations

import asyncio
import socket

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["NoDelayH11Protocol", "PROTOCOL"]

#: What ``uvicorn.run(http=...)`` is given (an import string: worker processes import it).
PROTOCOL = "cbr.serve.nodelay:NoDelayH11Protocol"


class NoDelayH11Protocol(H11Protocol):
    """:class:`H11Protocol` that sets ``TCP_NODELAY`` on each connection's socket."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:  # not a TCP socket after all
                pass
        super().connection_made(transport)
