"""The ASGI application: REST, MCP profiles, health and discovery — one factory for every host
(the local server serves all of it; each Lambda function serves its part)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from mnemo import __version__
from mnemo.errors import AuthenticationError, MnemoError
from mnemo.surfaces.auth import base_url, challenge_error, www_authenticate
from mnemo.surfaces.errors import REST_NAMES, Problem, headers_for, problem
from mnemo.surfaces.gate import CorsPolicy, RestGate
from mnemo.surfaces.profiles import PROFILES

if TYPE_CHECKING:
    from mnemo.bootstrap import Container

logger = logging.getLogger(__name__)

Services = Callable[[], "Container"]


def _respond(error: Problem, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error.envelope(), status_code=error.status, headers={**headers_for(error), **(headers or {})})


class MnemoApp:
    """The composed ASGI app, and `prime()`: build now what requests would otherwise build on first
    use (each MCP profile's server), for a SnapStart snapshot (mnemo.surfaces.snapstart)."""

    def __init__(self, app: ASGIApp, primers: list[Callable[[], None]]) -> None:
        self._app = app
        self._primers = primers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    def prime(self) -> None:
        for prime in self._primers:
            prime()


def create_app(services: Container | Services, *, rest: bool = True, mcp: bool = True) -> MnemoApp:
    """The app over `services`: a container, or a function giving it (the Lambda entry points pass
    the cached composition root, so nothing is built or read at import)."""
    provide: Services = services if callable(services) else (lambda: services)
    # /docs is served from vendored assets (surfaces/web.py), never FastAPI's CDN page; no /redoc.
    api = FastAPI(title="Mnemo", version=__version__, description="Long-term memory for AI agents.",
                  docs_url=None, redoc_url=None)
    api.state.services = provide

    @api.exception_handler(MnemoError)
    def domain_error(request: Request, exc: MnemoError) -> JSONResponse:
        headers = None
        if isinstance(exc, AuthenticationError):
            base = base_url(provide().settings.public_url, request.url.scheme, request.headers.get("host", "localhost"))
            headers = {"www-authenticate": www_authenticate(base, exc.message, error=challenge_error(request.headers))}
        return _respond(problem(exc, names=REST_NAMES), headers)  # REST's words: `content`, not raw_text

    @api.exception_handler(RequestValidationError)
    @api.exception_handler(ValidationError)
    def invalid(request: Request, exc: Exception) -> JSONResponse:
        return _respond(problem(exc))  # REST's own body fields: nothing to rename

    @api.exception_handler(HTTPException)
    def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        """The router's own errors (unknown route, wrong method, unparseable body) in the same envelope."""
        if exc.status_code == 404 and exc.detail == "Not Found":
            exc = HTTPException(404, f"no route {request.method} {request.url.path}")
        elif exc.status_code == 405:
            exc = HTTPException(405, f"{request.method} is not allowed on {request.url.path}", exc.headers)
        elif exc.status_code == 400 and exc.detail == "There was an error parsing the body":
            exc = HTTPException(400, "body: is not valid JSON")
        return _respond(problem(exc), dict(exc.headers or {}))

    @api.exception_handler(Exception)
    def unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error")
        return _respond(problem(exc))

    app: ASGIApp = api
    primers: list[Callable[[], None]] = []
    if rest:
        # The ops routes are REST's, as template.yaml routes them (the MCP function never sees them):
        # registering a FastAPI route with parameters or a response model imports pydantic.v1
        # (FastAPI's check for v1 models, ~15 ms), which the MCP function's init skips.
        @api.get("/healthz", tags=["ops"])
        def healthz() -> dict[str, str]:
            return {"status": "ok", "version": __version__}

        from mnemo.services.oauth.metadata import PRM_PATH, prm_resource, protected_resource
        from mnemo.surfaces.rest.openapi import ERROR_RESPONSES

        def prm(request: Request, suffix: str) -> dict[str, object]:
            """RFC 9728: the root document names `/mcp`; `/.well-known/oauth-protected-resource/mcp/r3`
            is `/mcp/r3`'s. With OAuth on, every URL comes from the configured issuer."""
            settings = provide().settings
            resource = prm_resource(suffix, PROFILES)
            if resource is None:
                raise HTTPException(404, f"no MCP resource {suffix}")
            issuer = settings.issuer if settings.oauth_enabled else None
            base = issuer or base_url(settings.public_url, request.url.scheme, request.headers.get("host", "localhost"))
            return protected_resource(base, resource, issuer=issuer)

        @api.get(PRM_PATH, tags=["ops"])
        def resource_metadata(request: Request) -> dict[str, object]:
            return prm(request, "")

        @api.get(PRM_PATH + "/{suffix:path}", tags=["ops"], responses={404: ERROR_RESPONSES[404] | {"description": "No such MCP resource."}})
        def path_resource_metadata(request: Request, suffix: str) -> dict[str, object]:
            return prm(request, "/" + suffix)

        from mnemo.surfaces.rest.api import router
        from mnemo.surfaces.rest.erasure import router as erasure_router
        from mnemo.surfaces.rest.facts import router as facts_router
        from mnemo.surfaces.rest.graph import router as graph_router
        from mnemo.surfaces.rest.keys import router as keys_router
        from mnemo.surfaces.rest.oauth import router as oauth_router
        from mnemo.surfaces.rest.openapi import document_errors
        from mnemo.surfaces.rest.portability import router as portability_router
        from mnemo.surfaces.rest.usage import router as usage_router

        api.include_router(router)
        api.include_router(facts_router)
        api.include_router(graph_router)
        api.include_router(erasure_router)
        api.include_router(portability_router)
        api.include_router(usage_router)
        api.include_router(keys_router)
        api.include_router(oauth_router)
        document_errors(api)
        from mnemo.surfaces.oauth.routes import mount_oauth
        from mnemo.surfaces.web import SecurityHeaders, mount_pages

        mount_oauth(api, provide)  # only when settings.oauth_enabled, checked per request
        mount_pages(api)  # /console and /docs: static, same origin, under a strict policy
        app = SecurityHeaders(RestGate(api, provide))  # authenticate, then cap the body, before any route parses it
    if mcp:
        from mnemo.surfaces.mcp_endpoint import McpDispatcher

        dispatcher = McpDispatcher(app, PROFILES, provide)
        primers.append(dispatcher.prime)
        app = dispatcher
    return MnemoApp(CorsPolicy(app, provide), primers)
