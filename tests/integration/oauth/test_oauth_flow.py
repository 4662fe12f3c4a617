"""MCP authorization end to end, in process on moto, with the MCP SDK's own client
(`OAuthClientProvider`): discovery from a 401, DCR, PKCE, consent with a connect code through the
form post, tool calls on two profiles bound to their resources, refresh after expiry (injected
clock), refresh-token reuse revoking the grant (docs/oauth.md)."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from mcp import Client
from tests.conftest import TEST_KEY
from tests.oauth_storage import TokenMemory

BASE = "http://127.0.0.1:8000"
REDIRECT = "http://127.0.0.1:33418/callback"
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
MCP = {"accept": "application/json, text/event-stream", "content-type": "application/json", "mcp-protocol-version": "2025-06-18"}


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2025, 6, 7, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


@pytest.fixture
def stack(aws):
    from mnemo import bootstrap
    from mnemo.settings import MnemoSettings
    from mnemo.surfaces.app import create_app

    clock = Clock()
    container = bootstrap.Container(MnemoSettings(oauth_enabled=True, public_url=BASE), clock=clock)
    container.keys.ensure("local", "admin", ["admin"], TEST_KEY)
    return container, create_app(container), clock


def browser(app: Any) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=BASE)


class Person:
    """What the browser and the person do: open the authorize URL, read the consent page, type the
    connect code, post the form, and hand the redirect's parameters to the app."""

    def __init__(self, app: Any, *credentials: str) -> None:
        self.app, self.credentials = app, list(credentials)  # one per authorization, in order
        self.result: AuthorizationCodeResult | None = None
        self.pages: list[str] = []

    async def redirect(self, url: str) -> None:
        async with browser(self.app) as web:
            authorize = await web.get(url)
            assert authorize.status_code == 302, authorize.text
            page = await web.get(authorize.headers["location"])
            assert page.status_code == 200 and "content-security-policy" in page.headers
            self.pages.append(page.text)
            csrf = re.search(r"name=csrf value='([^']+)'", page.text).group(1)  # type: ignore[union-attr]
            request = re.search(r"name=request value='([^']+)'", page.text).group(1)  # type: ignore[union-attr]
            posted = await web.post("/oauth/consent", data={"request": request, "csrf": csrf, "credential": self.credentials.pop(0),
                                                            "action": "approve"}, headers={"origin": BASE})
            assert posted.status_code == 303, posted.text
            query = parse_qs(urlsplit(posted.headers["location"]).query)
            assert posted.headers["location"].startswith(REDIRECT)
            self.result = AuthorizationCodeResult(code=query["code"][0], state=query["state"][0], iss=query["iss"][0])

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


def connector(app: Any, path: str, person: Person, storage: TokenMemory) -> tuple[OAuthClientProvider, Any]:
    provider = OAuthClientProvider(
        BASE + path, OAuthClientMetadata(redirect_uris=[REDIRECT], client_name="Test <b>app</b>"),  # type: ignore[list-item]
        storage, redirect_handler=person.redirect, callback_handler=person.callback)
    http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), auth=provider, base_url=BASE)
    return provider, streamable_http_client(BASE + path, http_client=http)


def text(result: Any) -> str:
    assert not result.is_error, result.content
    return " ".join(c.text for c in result.content)


def test_connect_call_refresh_and_reuse(stack, caplog: pytest.LogCaptureFixture) -> None:
    container, app, clock = stack
    for noisy in ("botocore", "boto3", "urllib3"):  # their DEBUG lines dwarf the rest
        caplog.set_level(logging.WARNING, logger=noisy)
    caplog.set_level(logging.DEBUG)  # last: it also sets the capture handler's level
    admin = container.keys.authenticate(TEST_KEY)
    eigen_code = container.connect_codes.mint(admin, "alice").code
    r3_code = container.connect_codes.mint(admin, "alice", scopes=["memory:read"]).code
    step_up_code = container.connect_codes.mint(admin, "alice", scopes=["memory:read", "memory:write"]).code
    eigen, r3 = TokenMemory(), TokenMemory()
    eigen_person = Person(app, eigen_code)

    async def flow() -> None:
        _, transport = connector(app, "/mcp", eigen_person, eigen)
        async with Client(transport) as client:
            text(await client.call_tool("capture_thought", {"raw": "Standups are on Tuesdays."}))
        r3_person = Person(app, r3_code, step_up_code)
        _, r3_transport = connector(app, "/mcp/r3", r3_person, r3)
        async with Client(r3_transport) as client:
            listed = text(await client.call_tool("get_all_memories", {}))
            assert "Standups are on Tuesdays." in listed  # alice's memory, written through /mcp
            assert r3.tokens is not None and r3.tokens.scope == "memory:read"  # the connect code's scopes
            # add_memory needs memory:write: HTTP 403 insufficient_scope, the client steps up (the
            # person approves again, with a code that holds write) and the call goes through.
            assert "Saved" in text(await client.call_tool("add_memory", {"content": "Retro is on Fridays."}))
        assert r3.tokens.scope == "memory:read memory:write" and not r3_person.credentials

        # Resource binding: /mcp's token serves /mcp and /api/mcp only; /mcp/r3's serves /mcp/r3 only.
        assert eigen.tokens is not None and r3.tokens is not None
        bearer = {**MCP, "authorization": f"Bearer {eigen.tokens.access_token}"}
        r3_bearer = {**MCP, "authorization": f"Bearer {r3.tokens.access_token}"}
        async with browser(app) as web:
            assert (await web.post("/mcp", json=LIST, headers=bearer)).status_code == 200
            assert (await web.post("/api/mcp", json=LIST, headers=bearer)).status_code == 200
            assert (await web.post("/mcp/r3", json=LIST, headers=bearer)).status_code == 401
            assert (await web.post("/mcp/r3", json=LIST, headers=r3_bearer)).status_code == 200
            refused = await web.post("/mcp/facts", json=LIST, headers=r3_bearer)
            assert refused.status_code == 401 and "/mcp/r3, not /mcp/facts" in refused.json()["error"]["message"]
            rest = await web.get("/v1/memories", headers={"authorization": bearer["authorization"]})
            assert rest.status_code == 401  # REST /v1 takes API keys only

        # Refresh after expiry: the server's clock passes the access lifetime, the client's notices.
        first = eigen.tokens
        clock.now += timedelta(hours=2)
        stale = {**MCP, "authorization": f"Bearer {first.access_token if first else ''}"}
        async with browser(app) as web:
            assert (await web.post("/mcp", json=LIST, headers=stale)).status_code == 401  # expired on the server
        again, transport = connector(app, "/mcp", eigen_person, eigen)
        again.context.current_tokens, again.context.client_info = eigen.tokens, eigen.client
        again.context.token_expiry_time = time.time() - 1  # the client's own clock says so too
        again._initialized = True
        async with Client(transport) as client:
            await client.list_tools()
        assert eigen.tokens is not None and first is not None
        assert eigen.tokens.access_token != first.access_token and eigen.tokens.refresh_token != first.refresh_token

    asyncio.run(flow())
    assert eigen.tokens is not None and r3.tokens is not None and eigen.client is not None and r3.client is not None
    from starlette.testclient import TestClient

    http = TestClient(app, base_url=BASE)
    # Refresh-token reuse: the chain's first token again → invalid_grant, and the grant is revoked.
    client_id = eigen.client.client_id
    once = http.post("/token", data={"grant_type": "refresh_token", "refresh_token": eigen.tokens.refresh_token, "client_id": client_id})
    assert once.status_code == 200, once.text
    rotated = once.json()
    fresh = {**MCP, "authorization": f"Bearer {rotated['access_token']}"}
    assert http.post("/mcp", json=LIST, headers=fresh).status_code == 200  # the rotated pair works...
    replayed = http.post("/token", data={"grant_type": "refresh_token", "refresh_token": eigen.tokens.refresh_token, "client_id": client_id})
    assert replayed.status_code == 400 and replayed.json()["error"] == "invalid_grant"
    assert http.post("/mcp", json=LIST, headers=fresh).status_code == 401  # ...until the replay revoked the grant
    other = http.post("/token", data={"grant_type": "refresh_token", "refresh_token": r3.tokens.refresh_token,
                                      "client_id": r3.client.client_id})
    assert other.status_code == 200, other.text  # another grant: untouched

    # The client's name was rendered as text; no secret reached a server log.
    assert "Test &lt;b&gt;app&lt;/b&gt;" in eigen_person.pages[0] and "<b>app</b>" not in eigen_person.pages[0]
    secrets = [eigen_code, r3_code, rotated["access_token"], rotated["refresh_token"], eigen.tokens.access_token, TEST_KEY]
    server_logs = [r.getMessage() for r in caplog.records if not r.name.startswith(("httpx", "httpcore", "mcp.client"))]
    assert any(r.name.startswith("mcp.server") for r in caplog.records)  # the server's log was captured
    assert server_logs and not [line for line in server_logs for s in secrets if s in line]


def test_a_metadata_document_client_with_a_local_metadata_server(aws) -> None:
    """CIMD end to end: the SDK client sends its metadata URL as client_id; Mnemo fetches the document
    from a local HTTP server through the guarded fetcher (the test host resolves to a public address,
    the injected transport carries the vetted connection to the local server), and never fetches an
    allow-listed host that resolves to a private address."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from mnemo import bootstrap
    from mnemo.adapters.http.cimd import SafeMetadataFetcher
    from mnemo.settings import MnemoSettings
    from mnemo.surfaces.app import create_app

    url = "https://client.example/oauth/app.json"
    served: list[str] = []

    class Documents(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.append(f"{self.headers['host']}{self.path}")
            body = json.dumps({"client_id": url, "client_name": "Metadata app", "redirect_uris": [REDIRECT],
                               "token_endpoint_auth_method": "none"}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    documents = ThreadingHTTPServer(("127.0.0.1", 0), Documents)
    threading.Thread(target=documents.serve_forever, daemon=True).start()
    inner = httpx2.HTTPTransport()

    class ToLocalServer(httpx2.BaseTransport):
        """Where the vetted connection goes: the local server stands in for 93.184.216.34."""

        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            assert request.url.host == "93.184.216.34" and request.extensions["sni_hostname"] == "client.example"
            local = request.url.copy_with(scheme="http", host="127.0.0.1", port=documents.server_address[1])
            return inner.handle_request(httpx2.Request(request.method, local, headers=request.headers))

    addresses = {"client.example": ["93.184.216.34"], "internal.example": ["127.0.0.1"]}
    container = bootstrap.Container(MnemoSettings(oauth_enabled=True, public_url=BASE,
                                                  oauth_cimd_allow=["https://client.example/oauth/", "https://internal.example/"]),
                                    clock=Clock())
    container.__dict__["cimd_fetcher"] = SafeMetadataFetcher(resolver=lambda host, port: addresses[host], transport=ToLocalServer())
    container.keys.ensure("local", "admin", ["admin"], TEST_KEY)
    app = create_app(container)
    storage = TokenMemory()
    try:
        async def flow() -> None:
            provider = OAuthClientProvider(BASE + "/mcp", OAuthClientMetadata(redirect_uris=[REDIRECT]),  # type: ignore[list-item]
                                           storage, redirect_handler=person.redirect, callback_handler=person.callback,
                                           client_metadata_url=url)
            http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), auth=provider, base_url=BASE)
            async with Client(streamable_http_client(BASE + "/mcp", http_client=http)) as client:
                text(await client.call_tool("retrieve_thoughts", {"query": "anything"}))

        person = Person(app, TEST_KEY)
        asyncio.run(flow())
        assert storage.client is not None and storage.client.client_id == url  # no registration: the URL is the id
        assert "Metadata app" in person.pages[0]
        assert served == ["client.example/oauth/app.json"]  # fetched once, with the name as Host
        from starlette.testclient import TestClient

        refused = TestClient(app, base_url=BASE).get("/authorize", params={
            "response_type": "code", "client_id": "https://internal.example/oauth/app.json", "redirect_uri": REDIRECT,
            "code_challenge": "x" * 43, "state": "s"}, follow_redirects=False)
        assert refused.status_code == 400 and served == ["client.example/oauth/app.json"]  # never connected to
    finally:
        documents.shutdown()
