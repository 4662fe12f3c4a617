"""The local server's listening socket (`mnemo.local.server.listen`), served by uvicorn as `make dev`
serves it (`server.run(sockets=[sock])`): its connections send without Nagle's algorithm.

asyncio sets TCP_NODELAY only on a connection whose socket says IPPROTO_TCP, and a connection
inherits the listener's protocol number; a listener made with 0 left Nagle on, and every response
uvicorn writes in two parts (headers, then body) waited ~40 ms for the client's delayed ACK."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import httpx
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from mnemo.local.server import listen


async def _ok(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})


def _served_nodelay(sock: socket.socket) -> list[bool]:
    """Serve one GET through uvicorn on `sock`; TCP_NODELAY of each connection uvicorn accepted."""
    seen: list[bool] = []

    class Recording(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            seen.append(bool(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)))
            super().connection_made(transport)

    server = uvicorn.Server(uvicorn.Config(_ok, http=Recording, lifespan="off", log_level="error"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        response = httpx.get(f"http://127.0.0.1:{sock.getsockname()[1]}/", timeout=10)
        assert (response.status_code, response.text) == (200, "ok")  # served over this listener
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
    return seen


def test_the_servers_connections_send_without_waiting_for_acks() -> None:
    assert _served_nodelay(listen("127.0.0.1", 0)) == [True]
    # What the check tells apart: a listener made without naming its protocol, as `listen` was.
    plain = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    plain.bind(("127.0.0.1", 0))
    assert _served_nodelay(plain) == [False]
