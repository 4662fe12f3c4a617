"""Step-up before dispatch (docs/oauth.md): an OAuth token without the permission the called tool's
name alone decides gets HTTP 403 `insufficient_scope`, the only answer on which MCP clients ask the
person for more. The body is read once and replayed to the SDK."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from starlette.types import Message, Receive

from mnemo.surfaces.errors import Problem

if TYPE_CHECKING:
    from mnemo.domain.models import Principal


def step_up(principal: Principal, profile: str, body: bytes) -> str | None:
    """The permission an OAuth token lacks for the tool this request calls, when the tool's name
    alone decides it (services/permissions.TOOL_PERMISSIONS); None: let the tool decide."""
    from mnemo.services.permissions import missing_for_tool

    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    name = (message.get("params") or {}).get("name") if isinstance(message.get("params"), dict) else None
    missing = missing_for_tool(principal, profile, name) if isinstance(name, str) else None
    return missing.value if missing is not None else None


def insufficient_scope(principal: Principal, needed: str) -> Problem:
    held = ", ".join(sorted(p.value for p in principal.permissions)) or "none"
    return Problem(403, "insufficient_scope", f"this tool needs {needed}; the token holds {held}: authorize again with {needed}")


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None past `limit`."""
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
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again
