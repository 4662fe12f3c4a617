"""MCP authorization on the REST app (docs/oauth.md): the RFC 8414 document, and (with the rest of
the authorization server) `/register`, `/authorize`, `/token`, `/revoke` and the consent page.

Everything is mounted always and answers 404 unless `settings.oauth_enabled`, read per request: the
settings are read when the container is first built, never at import."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mnemo.services.oauth_metadata import AS_METADATA_PATH, authorization_server

if TYPE_CHECKING:
    from mnemo.bootstrap import Container

Services = Callable[[], "Container"]
NO_STORE = {"cache-control": "no-store"}


def not_served(request: Request) -> Response:
    return JSONResponse({"error": {"code": "not_found", "message": f"no route {request.method} {request.url.path} "
                                   "(OAuth is off on this deployment: use an API key)"}}, status_code=404)


def mount_oauth(api: FastAPI, provide: Services) -> None:
    def as_metadata(request: Request) -> Response:
        settings = provide().settings
        if not settings.oauth_enabled:
            return not_served(request)
        document = authorization_server(settings.issuer, registration=settings.oauth_open_registration, cimd=False)
        return JSONResponse(document, headers={"cache-control": "public, max-age=300"})

    api.router.routes.append(Route(AS_METADATA_PATH, as_metadata, methods=["GET"], include_in_schema=False))
