"""MCP authorization on the REST app (docs/oauth.md): the RFC 8414 document, `/register`,
`/authorize`, `/token`, `/revoke` (the MCP SDK's handlers over `MnemoProvider`; `/revoke`'s with one
fix, `revocation.py`) and the consent page.

Everything is mounted always and answers 404 unless `settings.oauth_enabled`, read per request: the
settings are read when the container is first built, never at import."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import anyio.to_thread
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mnemo.errors import DependencyError, RateLimitedError
from mnemo.services.oauth.metadata import (
    AS_METADATA_PATH,
    AUTHORIZE_PATH,
    CONSENT_PATH,
    REGISTER_PATH,
    REVOKE_PATH,
    TOKEN_PATH,
    authorization_server,
)

if TYPE_CHECKING:
    from mnemo.bootstrap import Container

Services = Callable[[], "Container"]
Handler = Callable[[Request, "Container"], Awaitable[Response]]
MAX_FORM_BYTES = 64 * 1024  # the largest valid body here (a registration) is a few KB


def not_served(request: Request) -> Response:
    return JSONResponse({"error": {"code": "not_found", "message": f"no route {request.method} {request.url.path} "
                                   "(OAuth is off on this deployment: use an API key)"}}, status_code=404)


def _oauth_error(status: int, error: str, description: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"error": error, "error_description": description}, status_code=status,
                        headers={"cache-control": "no-store", **(headers or {})})


def _guarded(provide: Services, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """404 while OAuth is off; 413 past the body cap; a store outage is a 503 in OAuth's shape."""

    async def endpoint(request: Request) -> Response:
        services = provide()
        if not services.settings.oauth_enabled:
            return not_served(request)
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_FORM_BYTES:
            return _oauth_error(413, "invalid_request", f"body: must be at most {MAX_FORM_BYTES} bytes")
        try:
            return await handler(request, services)
        except DependencyError as exc:
            return _oauth_error(503, "temporarily_unavailable", exc.message, {"retry-after": "1"})

    return endpoint


def mount_oauth(api: FastAPI, provide: Services) -> None:
    """The routes. The SDK's handlers are imported by the first OAuth request, never at init:
    `mcp.server.auth` imports the whole MCP server package (~0.7-1.3 s), which the REST function's
    cold start would otherwise pay with OAuth off."""

    async def as_metadata(request: Request, services: Container) -> Response:
        settings = services.settings
        document = authorization_server(settings.issuer, registration=settings.oauth_open_registration,
                                        cimd=bool(settings.oauth_cimd_allow))
        return JSONResponse(document, headers={"cache-control": "public, max-age=300"})

    async def register(request: Request, services: Container) -> Response:
        from mcp.server.auth.handlers.register import RegistrationHandler
        from mcp.server.auth.settings import ClientRegistrationOptions

        from mnemo.domain.oauth import SCOPES
        from mnemo.surfaces.oauth.provider import MnemoProvider

        if not services.settings.oauth_open_registration:
            return _oauth_error(403, "access_denied", "open client registration is off on this deployment")
        try:
            await anyio.to_thread.run_sync(services.oauth.admit_registration)
        except RateLimitedError as exc:
            return _oauth_error(429, "temporarily_unavailable", exc.message, {"retry-after": str(exc.retry_after)})
        # No `valid_scopes`: a registration naming `offline_access` or `openid` is accepted (every client
        # is registered for Mnemo's three scopes; unknown ones asked at /authorize are dropped).
        options = ClientRegistrationOptions(enabled=True, default_scopes=list(SCOPES))
        return await RegistrationHandler(MnemoProvider(services), options).handle(request)  # type: ignore[arg-type]

    async def authorize(request: Request, services: Container) -> Response:
        from mcp.server.auth.handlers.authorize import AuthorizationHandler

        from mnemo.surfaces.oauth.provider import MnemoProvider

        return await AuthorizationHandler(MnemoProvider(services)).handle(request)  # type: ignore[arg-type]

    async def token(request: Request, services: Container) -> Response:
        from mcp.server.auth.handlers.token import TokenHandler
        from mcp.server.auth.middleware.client_auth import ClientAuthenticator

        from mnemo.surfaces.oauth.provider import MnemoProvider

        provider = MnemoProvider(services)
        handler = TokenHandler(provider, ClientAuthenticator(provider))  # type: ignore[arg-type]
        response: Response = await handler.handle(request)
        return response

    async def revoke(request: Request, services: Container) -> Response:
        from mcp.server.auth.middleware.client_auth import ClientAuthenticator

        from mnemo.surfaces.oauth.provider import MnemoProvider
        from mnemo.surfaces.oauth.revocation import MnemoRevocationHandler  # the SDK's, taking public clients

        provider = MnemoProvider(services)
        return await MnemoRevocationHandler(provider, ClientAuthenticator(provider)).handle(request)  # type: ignore[arg-type]

    async def consent(request: Request, services: Container) -> Response:
        from mnemo.surfaces.oauth import consent as oauth_consent

        if request.method == "POST":
            return await oauth_consent.decide(request, services)
        return await oauth_consent.show(request, services)

    routes = [
        (AS_METADATA_PATH, as_metadata, ["GET"]),
        (REGISTER_PATH, register, ["POST"]),
        (AUTHORIZE_PATH, authorize, ["GET", "POST"]),
        (TOKEN_PATH, token, ["POST"]),
        (REVOKE_PATH, revoke, ["POST"]),
        (CONSENT_PATH, consent, ["GET", "POST"]),
    ]
    for path, handler, methods in routes:
        api.router.routes.append(Route(path, _guarded(provide, handler), methods=methods, include_in_schema=False))
