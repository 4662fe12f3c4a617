"""The ASGI application: REST, MCP profiles, health and discovery — one factory for every host
(the local server serves all of it; each Lambda function serves its part)."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.types import ASGIApp

from mnemo import __version__
from mnemo.bootstrap import container
from mnemo.errors import AuthenticationError, MnemoError
from mnemo.surfaces.auth import PRM_PATH, base_url, protected_resource_metadata, www_authenticate
from mnemo.surfaces.errors import describe_validation, status_for

logger = logging.getLogger(__name__)

MCP_HEADERS = ["authorization", "content-type", "mcp-protocol-version", "mcp-method", "mcp-name", "mcp-session-id", "last-event-id"]


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def create_app(*, rest: bool = True, mcp: bool = True) -> ASGIApp:
    api = FastAPI(title="Mnemo", version=__version__, description="Long-term memory for AI agents.")

    @api.get("/healthz", tags=["ops"])
    def healthz() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    @api.get(PRM_PATH, tags=["ops"])
    @api.get(PRM_PATH + "/{resource:path}", tags=["ops"])
    def resource_metadata(request: Request, resource: str = "mcp") -> dict[str, object]:
        base = base_url(container().settings.public_url, request.url.scheme, request.headers.get("host", "localhost"))
        return protected_resource_metadata(base, "/" + resource.strip("/"))

    @api.exception_handler(MnemoError)
    def domain_error(request: Request, exc: MnemoError) -> JSONResponse:
        headers = None
        if isinstance(exc, AuthenticationError):
            base = base_url(container().settings.public_url, request.url.scheme, request.headers.get("host", "localhost"))
            headers = {"www-authenticate": www_authenticate(base, exc.message)}
        return _error(status_for(exc), exc.code, exc.message, headers)

    @api.exception_handler(RequestValidationError)
    def request_invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for error in exc.errors():
            location = ".".join(str(p) for p in error["loc"] if p not in ("body", "query", "path"))
            parts.append(f"{location or 'body'}: {str(error['msg']).removeprefix('Value error, ')}")
        return _error(400, "validation_error", "; ".join(parts))

    @api.exception_handler(ValidationError)
    def command_invalid(request: Request, exc: ValidationError) -> JSONResponse:
        return _error(400, "validation_error", describe_validation(exc))

    @api.exception_handler(Exception)
    def unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error")
        return _error(500, "internal_error", "internal error; it has been logged")

    if rest:
        from mnemo.surfaces.rest import router

        api.include_router(router)

    app: ASGIApp = api
    if mcp:
        from mnemo.surfaces.mcp_endpoint import McpDispatcher
        from mnemo.surfaces.profiles import PROFILES

        app = McpDispatcher(api, PROFILES, lambda: container().settings, lambda: container().keys)
    return CORSMiddleware(
        app,
        allow_origins=["*"],
        allow_methods=["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
        allow_headers=MCP_HEADERS,
        expose_headers=["mcp-session-id"],
    )
