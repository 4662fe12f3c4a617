"""A request body read once, under a cap, then handed on as if unread: REST's gate caps every `/v1`
body before a route parses it, and the MCP endpoint reads an OAuth request's body to decide step-up
before the SDK reads it again."""

from __future__ import annotations

from starlette.types import Message, Receive


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None as soon as it passes `limit` bytes (a chunked body declares no length)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > limit:
            return None
        if not message.get("more_body", False):
            return b"".join(chunks)


def replay(body: bytes, receive: Receive) -> Receive:
    """`receive` for the app downstream: the body already read, then whatever comes next (a disconnect)."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again
