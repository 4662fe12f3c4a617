"""Step-up before dispatch (docs/oauth.md): an OAuth token without the permission the called tool's
name alone decides gets HTTP 403 `insufficient_scope`, the only answer on which MCP clients ask the
person for more. The endpoint reads the body once (surfaces/asgi_body.py) and replays it to the SDK."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mnemo.surfaces.errors import Problem

if TYPE_CHECKING:
    from mnemo.domain.models import Principal


def step_up(principal: Principal, profile: str, body: bytes) -> str | None:
    """The permission an OAuth token lacks for the tool this request calls, when the tool's name
    alone decides it (services/permissions.TOOL_PERMISSIONS); None: let the tool decide."""
    from mnemo.services.tenancy.permissions import missing_for_tool

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
