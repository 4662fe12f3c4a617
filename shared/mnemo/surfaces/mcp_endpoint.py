"""Streamable HTTP MCP on a stateless function: one SDK app per request, JSON responses.

Why per request: Mangum drives the ASGI lifespan on every invocation while the SDK's session
manager may run only once per instance; a fresh app per request satisfies both. Why 405 on GET:
a stateless server has no stream to offer and a held-open GET would hang a Lambda until timeout.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from mnemo.errors import AuthenticationError, DependencyError
from mnemo.services.keys import KeyService
from mnemo.settings import MnemoSettings
from mnemo.surfaces.auth import authenticate, base_url, www_authenticate
from mnemo.surfaces.principal import reset_principal, set_principal

LOCAL_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
LOCAL_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


def transport_security(settings: MnemoSettings) -> TransportSecuritySettings:
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=LOCAL_HOSTS + settings.allowed_hosts,
        allowed_origins=LOCAL_ORIGINS + settings.allowed_origins,
    )


class McpDispatcher:
    """ASGI middleware: MCP paths go to their profile's server, everything else to `app`."""

    def __init__(
        self,
        app: ASGIApp,
        profiles: Mapping[str, Callable[[], MCPServer]],
        settings: Callable[[], MnemoSettings],
        keys: Callable[[], KeyService],
    ) -> None:
        self._app = app
        self._profiles = profiles
        self._settings = settings
        self._keys = keys

    def _profile_for(self, path: str) -> str | None:
        path = path.rstrip("/") or "/"
        if path in ("/mcp", "/api/mcp"):
            return ""
        if path.startswith("/mcp/"):
            return path.removeprefix("/mcp/")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        profile = self._profile_for(scope.get("path", "")) if scope["type"] == "http" else None
        if profile is None:
            await self._app(scope, receive, send)
            return
        if profile not in self._profiles:
            await _json(send, 404, {"error": {"code": "not_found", "message": f"no MCP profile {profile!r}"}})
            return
        if scope["method"] == "OPTIONS":
            await self._app(scope, receive, send)  # CORS preflight is the outer app's job
            return
        if scope["method"] != "POST":
            await _json(
                send, 405, {"error": {"code": "method_not_allowed", "message": "stateless MCP: use POST"}}, {"allow": "POST"}
            )
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        settings = self._settings()
        try:
            principal = authenticate(self._keys(), headers)
        except AuthenticationError as exc:
            base = base_url(settings.public_url, scope.get("scheme", "http"), headers.get("host", "localhost"))
            challenge = {"www-authenticate": www_authenticate(base, exc.message)}
            await _json(send, 401, {"error": {"code": exc.code, "message": exc.message}}, challenge)
            return
        except DependencyError as exc:
            await _json(send, 503, {"error": {"code": exc.code, "message": exc.message}})
            return
        token = set_principal(principal)
        try:
            sdk_app = self._profiles[profile]().streamable_http_app(
                streamable_http_path=scope["path"],
                stateless_http=True,
                json_response=True,
                transport_security=transport_security(settings),
            )
            async with sdk_app.router.lifespan_context(sdk_app):
                await sdk_app(scope, receive, send)
        finally:
            reset_principal(token)


async def _json(send: Send, status: int, body: dict[str, Any], headers: Mapping[str, str] | None = None) -> None:
    payload = json.dumps(body).encode()
    raw_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw_headers += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": payload})
