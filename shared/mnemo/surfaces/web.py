"""The browser pages of the REST origin: the console (`/console`, static files as committed) and the
OpenAPI page (`/docs`, Swagger UI from vendored assets). Nothing is built and nothing comes from a CDN:
a page on this origin that loaded third-party script could read the console's key (issue 30).

Every response under these paths carries a strict policy: scripts from this origin only and never
inline, no plugins, no framing, no referrer; stored text is rendered by the console as text anyway.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from starlette.datastructures import MutableHeaders
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

HERE = Path(__file__).parent
CONSOLE_DIR = HERE / "console"
SWAGGER_DIR = HERE / "swagger_ui"
PAGE_PREFIXES = ("/console", "/docs")
# `connect-src 'self'`: the console talks to /v1 on its own origin only. `img-src data:` and inline
# styles: Swagger UI's icons and its layout (styles cannot run script; scripts stay 'self' only).
CSP = ("default-src 'self'; script-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; "
       "form-action 'self'; connect-src 'self'; img-src 'self' data:")
DOCS_CSP = CSP + "; style-src 'self' 'unsafe-inline'"
DOCS_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Mnemo API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<main id="swagger-ui"></main>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/docs.js"></script>
</body>
</html>
"""


def is_page(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in PAGE_PREFIXES)


class SecurityHeaders:
    """Adds the policy headers to every response under /console and /docs (the JSON API is unchanged)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not is_page(path):
            await self._app(scope, receive, send)
            return
        policy = DOCS_CSP if path.startswith("/docs") else CSP

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["content-security-policy"] = policy
                headers["x-content-type-options"] = "nosniff"
                headers["referrer-policy"] = "no-referrer"
                headers["x-frame-options"] = "DENY"
            await send(message)

        await self._app(scope, receive, send_with_headers)


def mount_pages(api: FastAPI) -> None:
    """`/console/` (index.html and its modules) and `/docs` with its assets, on the REST app."""

    @api.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(DOCS_PAGE)

    api.mount("/docs/assets", StaticFiles(directory=SWAGGER_DIR), name="docs-assets")
    api.mount("/console", StaticFiles(directory=CONSOLE_DIR, html=True), name="console")
