"""What runs before any REST route: authenticate, then cap the body and its nesting — so an
unauthenticated caller costs one key lookup and no parsing, and nobody can make the function parse
200 MB (issue 16, 7) or recurse 10,000 levels (issue 53).

Also the CORS policy, built from the same allowed origins the MCP transport enforces, so a browser
is never told by the preflight that an origin may call what the request then refuses.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio.to_thread
from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from mnemo.errors import AuthenticationError, DependencyError
from mnemo.surfaces.asgi_body import read_body, replay, too_deep
from mnemo.surfaces.auth import authenticate, base_url, challenge_error, www_authenticate
from mnemo.surfaces.errors import Problem, problem, send_problem

if TYPE_CHECKING:
    from mnemo.bootstrap import Container

# The largest valid REST body is a create: 8 KB of text and 16 KB of metadata, which JSON escaping
# (`\uXXXX`, 6 bytes per character) can grow to ~144 KB. MCP's transport caps at 4 MiB (SDK default).
MAX_REST_BODY_BYTES = 256 * 1024
REST_PREFIX = "/v1"
LOCAL_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
MCP_HEADERS = ["authorization", "content-type", "mcp-protocol-version", "mcp-method", "mcp-name", "mcp-session-id",
               "last-event-id", "idempotency-key"]


def too_large(limit: int) -> Problem:
    return Problem(413, "payload_too_large", f"body: must be at most {limit} bytes")


class RestGate:
    """ASGI middleware for `/v1/...`: 401 before the body is read, 413 past `max_body` bytes (declared
    or streamed), 400 past `MAX_JSON_DEPTH` levels; the principal goes to the route in `scope["state"]`."""

    def __init__(self, app: ASGIApp, services: Callable[[], Container], *, max_body: int = MAX_REST_BODY_BYTES) -> None:
        self._app = app
        self._services = services
        self._max = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not (path == REST_PREFIX or path.startswith(REST_PREFIX + "/")) or scope["method"] == "OPTIONS":
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        services = self._services()
        try:
            principal = await anyio.to_thread.run_sync(authenticate, services.keys, headers)
        except AuthenticationError as exc:
            base = base_url(services.settings.public_url, scope.get("scheme", "http"), headers.get("host", "localhost"))
            await send_problem(send, problem(exc), {"www-authenticate": www_authenticate(base, exc.message, error=challenge_error(headers))})
            return
        except DependencyError as exc:
            await send_problem(send, problem(exc), {"retry-after": "1"})
            return
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._max:
            await send_problem(send, too_large(self._max))
            return
        body = await read_body(receive, self._max)
        if body is None:
            await send_problem(send, too_large(self._max))
            return
        if (nested := too_deep(body)) is not None:
            await send_problem(send, nested)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self._app(scope, replay(body, receive), send)


def origin_pattern(origins: list[str]) -> str:
    """One regex for the origins the MCP transport allows (`http://localhost:*` = any port)."""
    parts = [re.escape(o[:-2]) + r"(:\d+)?" if o.endswith(":*") else re.escape(o) for o in origins]
    return "|".join(f"(?:{p})" for p in parts)


class CorsPolicy:
    """CORSMiddleware over `app`, built on the first request from the settings (nothing is read at
    import): the local origins plus MNEMO_ALLOWED_ORIGINS, exactly what the MCP endpoint accepts."""

    def __init__(self, app: ASGIApp, services: Callable[[], Container]) -> None:
        self._app = app
        self._services = services
        self._cors: ASGIApp | None = None

    def _build(self, allowed: list[str]) -> ASGIApp:
        return CORSMiddleware(
            self._app,
            allow_origin_regex=origin_pattern(LOCAL_ORIGINS + allowed),
            allow_methods=["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
            allow_headers=MCP_HEADERS,
            expose_headers=["mcp-session-id", "retry-after"],
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._cors is None:
            self._cors = self._build(list(self._services().settings.allowed_origins))
        await self._cors(scope, receive, send)
