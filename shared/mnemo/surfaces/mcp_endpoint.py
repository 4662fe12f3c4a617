"""Streamable HTTP MCP on a stateless function: one SDK app per request, JSON responses.

Why per request: Mangum drives the ASGI lifespan on every invocation while the SDK's session
manager may run only once per instance; a fresh app per request satisfies both. Why 405 on GET:
a stateless server has no stream to offer and a held-open GET would hang a Lambda until timeout.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from mcp.server.transport_security import TransportSecuritySettings
from mcp_types.version import SUPPORTED_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Receive, Scope, Send

from mnemo.errors import AuthenticationError, DependencyError
from mnemo.surfaces.asgi_body import read_body, replay, too_deep
from mnemo.surfaces.auth import authenticate, base_url, bearer_token, challenge_error, www_authenticate
from mnemo.surfaces.errors import Problem, problem, send_problem
from mnemo.surfaces.gate import LOCAL_ORIGINS
from mnemo.surfaces.oauth.step_up import insufficient_scope, step_up
from mnemo.surfaces.principal import reset_principal, set_principal
from mnemo.surfaces.profiles import ProfileBuilder

if TYPE_CHECKING:
    from mnemo.bootstrap import Container
    from mnemo.domain.models import Principal
    from mnemo.settings import MnemoSettings
    from mnemo.surfaces.profiles.toolkit import ProfileServer

LOCAL_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
MAX_MCP_BODY = 4 * 1024 * 1024  # the SDK transport's own cap: every body is read (and its nesting bounded) before dispatch


def transport_security(settings: MnemoSettings) -> TransportSecuritySettings:
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=LOCAL_HOSTS + settings.allowed_hosts,
        allowed_origins=LOCAL_ORIGINS + settings.allowed_origins,
    )


class McpDispatcher:
    """ASGI middleware: `/mcp/{profile}` goes to that profile's server, everything else to `app`.

    `services` gives the container (the Lambda entry passes the cached composition root, tests a
    container they built); each profile's server is built once per container, on first use or by
    `prime`.
    """

    def __init__(self, app: ASGIApp, profiles: Mapping[str, ProfileBuilder], services: Callable[[], Container]) -> None:
        self._app = app
        self._profiles = profiles
        self._services = services
        self._servers: dict[str, tuple[Container, ProfileServer]] = {}

    def _server(self, profile: str, services: Container) -> ProfileServer:
        built = self._servers.get(profile)
        if built is None or built[0] is not services:
            built = self._servers[profile] = (services, self._profiles[profile](services))
        return built[1]

    def prime(self) -> None:
        """Build every profile's server now: before a SnapStart snapshot, so that no restored
        instance builds one. The servers hold no connection (their tools look services up per call)."""
        services = self._services()
        for profile in self._profiles:
            self._server(profile, services)

    def _profile_for(self, path: str) -> str | None:
        path = path.rstrip("/") or "/"
        if path in ("/mcp", "/api/mcp"):
            return ""
        if path.startswith("/mcp/"):
            return path.removeprefix("/mcp/")
        return None

    @staticmethod
    def _authenticate(services: Container, headers: dict[str, str], path: str) -> tuple[Principal, bool]:
        """(principal, whether by OAuth): an API key, or (OAuth on) an access token bound to this
        path's resource (docs/oauth.md)."""
        from mnemo.services.oauth.tokens import ACCESS_PREFIX  # with the first request, not at init

        token = bearer_token(headers.get("authorization"))
        if services.settings.oauth_enabled:
            if token is None:
                raise AuthenticationError("missing credentials: authorize (OAuth), or send Authorization: Bearer <API key>")
            if token.startswith(ACCESS_PREFIX):
                return services.oauth_grants.verify(token, path), True
        return authenticate(services.keys, headers), False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        profile = self._profile_for(scope.get("path", "")) if scope["type"] == "http" else None
        if profile is None:
            await self._app(scope, receive, send)
            return
        if profile not in self._profiles:
            served = ", ".join(f"/mcp/{name}" if name else "/mcp" for name in self._profiles)
            await send_problem(send, Problem(404, "not_found", f"no MCP profile {profile!r}; served: {served}"))
            return
        if scope["method"] == "OPTIONS":
            await self._app(scope, receive, send)  # CORS preflight is the outer app's job
            return
        if scope["method"] != "POST":
            await send_problem(send, Problem(405, "method_not_allowed", "stateless MCP: use POST"), {"allow": "POST"})
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        services = self._services()
        settings = services.settings
        try:
            principal, by_oauth = self._authenticate(services, headers, scope["path"])
        except AuthenticationError as exc:
            base = settings.issuer if settings.oauth_enabled else base_url(
                settings.public_url, scope.get("scheme", "http"), headers.get("host", "localhost"))
            # The path-suffixed document of this very path (`/api/mcp` has its own, naming itself).
            resource = scope["path"].rstrip("/") or "/"
            await send_problem(send, problem(exc), {"www-authenticate": www_authenticate(
                base, exc.message, resource, error=challenge_error(headers))})
            return
        except DependencyError as exc:
            await send_problem(send, problem(exc))
            return
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in SUPPORTED_PROTOCOL_VERSIONS:
            await send_problem(send, unsupported_version(version))
            return
        body = await read_body(receive, MAX_MCP_BODY)
        if body is None:
            await send_problem(send, Problem(413, "payload_too_large", f"body: must be at most {MAX_MCP_BODY} bytes"))
            return
        if (nested := too_deep(body)) is not None:
            await send_problem(send, nested)
            return
        receive = replay(body, receive)
        if by_oauth and (needed := step_up(principal, profile, body)) is not None:
            await send_problem(send, insufficient_scope(principal, needed), {"www-authenticate": www_authenticate(
                settings.issuer, f"this tool needs {needed}", scope["path"].rstrip("/") or "/",
                error="insufficient_scope", scope=" ".join(sorted({*principal.permissions, needed})))})
            return
        token = set_principal(principal)
        try:
            sdk_app = self._server(profile, services).streamable_http_app(
                streamable_http_path=scope["path"],
                stateless_http=True,
                json_response=True,
                transport_security=transport_security(settings),
            )
            async with sdk_app.router.lifespan_context(sdk_app):
                await sdk_app(scope, receive, send)
        finally:
            reset_principal(token)


def unsupported_version(requested: str) -> Problem:
    """Said plainly, before the SDK would answer with a confusing envelope-key complaint."""
    served = ", ".join(SUPPORTED_PROTOCOL_VERSIONS)
    return Problem(400, "unsupported_protocol_version",
                   f"MCP-Protocol-Version: {requested[:40]!r} is not supported; this server speaks {served}")
