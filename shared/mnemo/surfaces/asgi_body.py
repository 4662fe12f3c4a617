"""A request body read once, under a cap, then handed on as if unread: REST's gate caps every `/v1`
body before a route parses it, and the MCP endpoint reads every body (to bound its nesting, and an
OAuth request's to decide step-up) before the SDK reads it again."""

from __future__ import annotations

from starlette.types import Message, Receive

from mnemo.surfaces.errors import Problem


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


def too_deep(body: bytes) -> Problem | None:
    """400 for a body nested past the limit on client JSON (domain/limits.py), before a parser recurses
    into it: FastAPI's parser called 10,000 levels "not valid JSON", the MCP SDK's "Parse error"."""
    from mnemo.domain.limits import check_json_depth  # with the first body: the MCP function's init defers the domain

    try:
        check_json_depth(body)
    except ValueError as exc:
        return Problem(400, "validation_error", f"body: {exc}")
    return None
