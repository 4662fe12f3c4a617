"""MCP authorization against the real local server (`MNEMO_OAUTH_ENABLED=true python -m mnemo.local`)
with the MCP SDK's `OAuthClientProvider` over the network: discovery from a 401, DCR, PKCE, the
consent page posted as a browser would (and by Chromium itself), tool calls on two profiles, each token
bound to its resource, an RFC 7009 revocation by a public client.
(Expiry, refresh, reuse and step-up run in process with an injected clock:
tests/integration/oauth/test_oauth_flow.py.)"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from mcp import Client
from mnemo.domain.oauth import s256
from tests.conftest import TEST_KEY
from tests.e2e.conftest import start_server, stop_server
from tests.oauth_storage import TokenMemory

pytestmark = pytest.mark.e2e
REDIRECT = "http://127.0.0.1:41234/callback"  # never listened on: the browser's redirect is read, not followed


@pytest.fixture(scope="module")
def oauth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("oauth") / "server.log"
    process, base = start_server(log, MNEMO_OAUTH_ENABLED="true")
    yield base
    stop_server(process)


def connect(base: str, path: str, code: str, storage: TokenMemory, calls: Any) -> Any:
    result: dict[str, AuthorizationCodeResult] = {}

    async def browser(url: str) -> None:  # what the browser and the person do
        async with httpx2.AsyncClient() as web:
            page = await web.get(url, follow_redirects=True)
            assert page.status_code == 200 and "Connect an app to Mnemo" in page.text
            fields = {n: re.search(rf"name={n} value='([^']+)'", page.text).group(1) for n in ("request", "csrf")}  # type: ignore[union-attr]
            posted = await web.post(f"{base}/oauth/consent", data={**fields, "credential": code, "action": "approve"},
                                    headers={"origin": base})
            assert posted.status_code == 303, posted.text
            query = parse_qs(urlsplit(posted.headers["location"]).query)
            result["r"] = AuthorizationCodeResult(code=query["code"][0], state=query["state"][0], iss=query["iss"][0])

    async def callback() -> AuthorizationCodeResult:
        return result["r"]

    async def main() -> Any:
        provider = OAuthClientProvider(base + path, OAuthClientMetadata(redirect_uris=[REDIRECT], client_name="e2e"),  # type: ignore[list-item]
                                       storage, redirect_handler=browser, callback_handler=callback)
        async with httpx2.AsyncClient(auth=provider, timeout=60) as http, Client(streamable_http_client(base + path, http_client=http)) as client:
            return await calls(client)

    return asyncio.run(main())


def test_connect_two_profiles_with_connect_codes(oauth_server: str) -> None:
    base = oauth_server
    codes = [httpx.post(f"{base}/v1/oauth/connect-codes", json={"user_id": "olga"},
                        headers={"Authorization": f"Bearer {TEST_KEY}"}).json()["code"] for _ in range(2)]
    eigen, r3 = TokenMemory(), TokenMemory()

    async def capture(client: Any) -> Any:
        return await client.call_tool("capture_thought", {"raw": "Olga's standup is at nine."})

    async def listing(client: Any) -> Any:
        return await client.call_tool("get_all_memories", {})

    assert not connect(base, "/mcp", codes[0], eigen, capture).is_error
    listed = connect(base, "/mcp/r3", codes[1], r3, listing)
    assert "Olga's standup is at nine." in " ".join(c.text for c in listed.content)  # olga's memory, via /mcp
    assert eigen.tokens is not None and r3.tokens is not None
    ask = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"accept": "application/json, text/event-stream"}
    r3_bearer = {**accept, "authorization": f"Bearer {r3.tokens.access_token}"}
    assert httpx.post(f"{base}/mcp/r3", json=ask, headers=r3_bearer).status_code == 200
    assert httpx.post(f"{base}/mcp/facts", json=ask, headers=r3_bearer).status_code == 401  # bound to /mcp/r3
    assert httpx.post(f"{base}/api/mcp", json=ask, headers={**accept, "authorization": f"Bearer {eigen.tokens.access_token}"}).status_code == 200


def test_the_console_mints_a_connect_code_and_revokes_the_app_it_connected(oauth_server: str, server: Any, browser: Any) -> None:
    from tests.e2e.conftest import LocalServer
    from tests.e2e.console_support import signed_in

    watched = signed_in(browser, LocalServer(base=oauth_server, key=TEST_KEY), TEST_KEY)
    page = watched.page
    page.goto(f"{oauth_server}/console/#/tenant")
    page.get_by_label("For user").fill("pia")
    page.get_by_role("button", name="Mint a code").click()
    shown = page.get_by_label("The connect code")
    shown.wait_for()
    code = shown.input_value()
    assert code.startswith("mnc_") and page.get_by_text("Shown once. For user pia").is_visible()
    storage = TokenMemory()

    async def capture(client: Any) -> Any:
        return await client.call_tool("capture_thought", {"raw": "Pia connected from the console's code."})

    with ThreadPoolExecutor(1) as thread:  # Playwright's sync API holds this thread's event loop
        connected = thread.submit(connect, oauth_server, "/mcp", code, storage, capture).result()
    assert not connected.is_error  # the code the console showed works
    assert storage.tokens is not None
    ask = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    bearer = {"accept": "application/json, text/event-stream", "authorization": f"Bearer {storage.tokens.access_token}"}
    assert httpx.post(f"{oauth_server}/mcp", json=ask, headers=bearer).status_code == 200  # the control: the token works
    page.get_by_label("User", exact=True).fill("pia")
    page.get_by_role("button", name="Show apps").click()
    page.get_by_role("cell", name="e2e", exact=True).wait_for()
    page.get_by_role("button", name="Revoke e2e").click()
    page.get_by_text("Access revoked.").wait_for()
    assert httpx.post(f"{oauth_server}/mcp", json=ask, headers=bearer).status_code == 401  # revoked from the console
    assert not watched.errors and not watched.dialogs
    # With OAuth off (the e2e stack), the section says so and how an operator turns it on
    off = signed_in(browser, server, server.key)
    off.page.goto(f"{server.base}/console/#/tenant")
    off.page.get_by_role("button", name="Mint a code").click()
    off.page.get_by_text("MCP authorization is off on this deployment").wait_for()


def test_chromium_posts_the_consent_page_and_the_app_revokes_with_its_client_id(oauth_server: str, browser: Any) -> None:
    """The consent form as Chromium posts it from the page (`Origin: null` under the page's no-referrer
    policy, with `Sec-Fetch-Site: same-origin`) is approved; the app's RFC 7009 post, `token` and
    `client_id` only, then ends the grant (issue 53)."""
    base, verifier = oauth_server, "v" * 50
    code = httpx.post(f"{base}/v1/oauth/connect-codes", json={"user_id": "quinn"}, headers={"Authorization": f"Bearer {TEST_KEY}"}).json()["code"]
    client_id = httpx.post(f"{base}/register", json={"redirect_uris": [REDIRECT], "client_name": "chromium"}).json()["client_id"]
    query = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "st", "resource": f"{base}/mcp",
             "code_challenge": s256(verifier), "code_challenge_method": "S256"}
    context = browser.new_context()
    try:
        page = context.new_page()
        back_in_app = re.compile(re.escape(REDIRECT))
        page.route(back_in_app, lambda route: route.fulfill(body="back in the app"))  # nothing listens there
        page.goto(f"{base}/authorize?{urlencode(query)}")
        page.get_by_label("Connect code (from your admin) or API key").fill(code)
        with page.expect_request(lambda r: r.method == "POST") as posted:
            page.get_by_role("button", name="Approve").click()
        page.wait_for_url(back_in_app)
        sent = posted.value.all_headers()
        landed = parse_qs(urlsplit(page.url).query)
    finally:
        context.close()
    # Origin null, which alone is refused (test_oauth_server.py): the approval above means the server also
    # got Sec-Fetch-Site: same-origin, which Chromium adds below the layer Playwright reports headers from.
    assert sent.get("origin") == "null" and landed["state"] == ["st"], sent
    pair = httpx.post(f"{base}/token", data={"grant_type": "authorization_code", "code": landed["code"][0], "redirect_uri": REDIRECT,
                                             "client_id": client_id, "code_verifier": verifier}).json()
    ask = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    bearer = {"accept": "application/json, text/event-stream", "authorization": f"Bearer {pair['access_token']}"}
    assert httpx.post(f"{base}/mcp", json=ask, headers=bearer).status_code == 200  # the control: the token works
    assert httpx.post(f"{base}/revoke", data={"token": pair["access_token"], "client_id": client_id}).status_code == 200
    assert httpx.post(f"{base}/mcp", json=ask, headers=bearer).status_code == 401
    refreshed = httpx.post(f"{base}/token", data={"grant_type": "refresh_token", "refresh_token": pair["refresh_token"], "client_id": client_id})
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"
