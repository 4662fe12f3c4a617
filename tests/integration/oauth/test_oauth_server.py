"""The authorization server's rules over HTTP (docs/oauth.md): registration, the consent form's
defences, who a credential acts for, the grant's scopes, invalid_client, the key cascade, admin."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from starlette.testclient import TestClient

from mnemo.domain.oauth import s256
from tests.conftest import TEST_KEY, FixedClock
from tests.integration.conftest import auth

BASE = "http://127.0.0.1:8000"
REDIRECT = "http://127.0.0.1:33418/callback"
VERIFIER = "v" * 50
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
MCP = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture
def oauth(aws):
    from mnemo import bootstrap
    from mnemo.settings import MnemoSettings
    from mnemo.surfaces.app import create_app

    container = bootstrap.Container(MnemoSettings(oauth_enabled=True, public_url=BASE, oauth_registrations_per_minute=6),
                                    clock=FixedClock())
    container.keys.ensure("local", "admin", ["admin"], TEST_KEY)
    return container, TestClient(create_app(container), base_url=BASE, follow_redirects=False)


def register(http: TestClient, **metadata: Any) -> Any:
    return http.post("/register", json={"redirect_uris": [REDIRECT], "client_name": "app", **metadata})


def consent(http: TestClient, client_id: str, redirect: str = REDIRECT, **params: str) -> tuple[str, str]:
    """(request id, csrf) of the consent page an /authorize leads to; the page's cookie stays in `http`."""
    query = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect, "state": "st",
             "code_challenge": s256(VERIFIER), "code_challenge_method": "S256", "resource": f"{BASE}/mcp", **params}
    authorize = http.get("/authorize?" + urlencode(query))
    assert authorize.status_code == 302, authorize.text
    page = http.get(authorize.headers["location"])
    assert page.status_code == 200, page.text
    found = [re.search(rf"name={n} value='([^']+)'", page.text) for n in ("request", "csrf")]
    return found[0].group(1), found[1].group(1)  # type: ignore[union-attr]


def approve(http: TestClient, request: str, csrf: str, credential: str, **extra: str) -> Any:
    return http.post("/oauth/consent", data={"request": request, "csrf": csrf, "credential": credential, "action": "approve",
                                             **extra})


def tokens(http: TestClient, client_id: str, location: str) -> Any:
    code = parse_qs(urlsplit(location).query)["code"][0]
    return http.post("/token", data={"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                                     "client_id": client_id, "code_verifier": VERIFIER})


def test_registration_is_public_bounded_and_checks_redirects(oauth) -> None:
    _, http = oauth
    made = register(http)
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["token_endpoint_auth_method"] == "none" and "client_secret" not in body and body["client_id"].startswith("mcl_")
    for bad in ("javascript:alert(1)", "https://claude.ai/cb#x", "http://evil.example/cb", "file:///etc/passwd"):
        refused = register(http, redirect_uris=[bad])
        assert refused.status_code == 400 and refused.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata"), bad
    assert register(http, scope="memory:read offline_access openid").status_code == 201  # unknown scopes: not fatal
    # The flood bound (6 a minute here, the bad ones above counted too): the next is a 429.
    flooded = register(http)
    assert flooded.status_code == 429 and int(flooded.headers["retry-after"]) > 0


def test_invalid_client_is_401_and_unregistered_redirects_are_refused(oauth) -> None:
    _, http = oauth
    unknown = http.post("/token", data={"grant_type": "authorization_code", "code": "x", "client_id": "mcl_nope",
                                        "code_verifier": VERIFIER, "redirect_uri": REDIRECT})
    assert unknown.status_code == 401 and unknown.json()["error"] == "invalid_client"
    client_id = register(http).json()["client_id"]
    other = http.get("/authorize?" + urlencode({"response_type": "code", "client_id": client_id, "code_challenge": s256(VERIFIER),
                                               "redirect_uri": "https://evil.example/cb", "state": "s"}))
    assert other.status_code == 400 and "location" not in other.headers  # never redirected to an unregistered URI
    port = http.get("/authorize?" + urlencode({"response_type": "code", "client_id": client_id, "code_challenge": s256(VERIFIER),
                                              "redirect_uri": "http://127.0.0.1:9/callback", "state": "s"}))
    assert port.status_code == 302  # positive control: loopback, another port (RFC 8252 §7.3)
    target = http.get("/authorize?" + urlencode({"response_type": "code", "client_id": client_id, "code_challenge": s256(VERIFIER),
                                                "redirect_uri": REDIRECT, "state": "s", "resource": "https://other.example/mcp"}))
    assert target.status_code == 302 and "error=invalid_target" in target.headers["location"]


def test_consent_form_refuses_cross_site_forged_and_replayed_posts(oauth) -> None:
    container, http = oauth
    client_id = register(http).json()["client_id"]
    request, csrf = consent(http, client_id)
    cross = http.post("/oauth/consent", data={"request": request, "csrf": csrf, "credential": TEST_KEY, "action": "approve"},
                      headers={"origin": "https://evil.example"})
    assert cross.status_code == 403
    fetch = http.post("/oauth/consent", data={"request": request, "csrf": csrf, "credential": TEST_KEY, "action": "approve"},
                      headers={"sec-fetch-site": "cross-site"})
    assert fetch.status_code == 403
    cookieless = TestClient(http.app, base_url=BASE, follow_redirects=False)
    assert approve(cookieless, request, csrf, TEST_KEY).status_code == 403  # a cross-site post carries no cookie
    forger = TestClient(http.app, base_url=BASE, follow_redirects=False)
    forger.cookies.set("mnemo_consent", "forged")
    assert approve(forger, request, "forged", TEST_KEY).status_code == 403  # cookie and form agree, the page never showed it
    done = approve(http, request, csrf, TEST_KEY)
    assert done.status_code == 303 and done.headers["location"].startswith(REDIRECT + "?code=")  # positive control
    query = parse_qs(urlsplit(done.headers["location"]).query)
    assert query["state"] == ["st"] and query["iss"] == [BASE]
    replay = approve(http, request, csrf, TEST_KEY)
    assert replay.status_code == 400 and "already used" in replay.text
    issued = tokens(http, client_id, done.headers["location"])
    assert issued.status_code == 200, issued.text
    bearer = {**MCP, "authorization": f"Bearer {issued.json()['access_token']}"}
    assert http.post("/mcp", json=LIST, headers=bearer).status_code == 200
    again = tokens(http, client_id, done.headers["location"])  # the code is single use...
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert http.post("/mcp", json=LIST, headers=bearer).status_code == 401  # ...and its replay ends the grant


def test_consent_form_refuses_an_opaque_origin_the_browser_does_not_vouch_for(oauth) -> None:
    # Given the page's form, cookie and all; When it is posted with `Origin: null` (a sandboxed frame's)
    # and no Sec-Fetch-Site, Then it is refused (issue 53); the page's own post in Chromium (Origin: null
    # under its no-referrer policy, Sec-Fetch-Site: same-origin; tests/e2e/test_oauth_local.py) passes.
    _, http = oauth
    request, csrf = consent(http, register(http).json()["client_id"])
    form = {"request": request, "csrf": csrf, "credential": TEST_KEY, "action": "approve"}
    assert http.post("/oauth/consent", data=form, headers={"origin": "null"}).status_code == 403
    from_page = http.post("/oauth/consent", data=form, headers={"origin": "null", "sec-fetch-site": "same-origin"})
    assert from_page.status_code == 303 and from_page.headers["location"].startswith(REDIRECT + "?code=")


def test_wrong_credentials_are_limited_per_page(oauth) -> None:
    _, http = oauth
    client_id = register(http).json()["client_id"]
    request, csrf = consent(http, client_id)
    for attempt in range(5):
        wrong = approve(http, request, csrf, "mn_wrong_0123456789abcdefghijklmnop")
        if attempt < 4:
            assert wrong.status_code == 401 and "invalid or revoked API key" in wrong.text
            csrf = re.search(r"name=csrf value='([^']+)'", wrong.text).group(1)  # type: ignore[union-attr]
        else:
            assert wrong.status_code == 400 and "too many wrong attempts" in wrong.text
    assert approve(http, request, csrf, TEST_KEY).status_code == 400  # the page is dead, even for the right key


def test_api_key_consent_intersects_scopes_pins_users_and_cascades(oauth) -> None:
    container, http = oauth
    reader = container.keys.create("local", "reader", ["memory:read"], user_id="bob")
    plain = container.keys.create("local", "plain", ["memory:read", "memory:write"])
    client_id = register(http).json()["client_id"]
    request, csrf = consent(http, client_id)
    refused = approve(http, request, csrf, plain.secret, user="carol")
    assert refused.status_code == 403 and "only an admin key" in refused.text
    request, csrf = consent(http, client_id)
    star = approve(http, request, csrf, TEST_KEY, user="*")  # an admin key may name a user, not "every user"
    assert star.status_code == 403 and "user: 1-128 letters" in star.text
    request, csrf = consent(http, client_id, scope="memory:read memory:write offline_access")
    done = approve(http, request, csrf, reader.secret)
    issued = tokens(http, client_id, done.headers["location"]).json()
    assert issued["scope"] == "memory:read"  # asked read+write, the key holds read
    grants = http.get("/v1/oauth/grants", params={"user_id": "bob"}, headers=auth()).json()
    assert [(g["user_id"], g["scopes"], g["via"]) for g in grants] == [("bob", ["memory:read"], "api_key")]
    bearer = {**MCP, "authorization": f"Bearer {issued['access_token']}"}
    assert http.post("/mcp", json=LIST, headers=bearer).status_code == 200
    container.keys.revoke("local", reader.record.prefix)  # the key used on the consent page
    assert http.post("/mcp", json=LIST, headers=bearer).status_code == 401


def test_admin_mints_codes_and_revokes_grants(oauth, capsys) -> None:
    container, http = oauth
    minted = http.post("/v1/oauth/connect-codes", json={"user_id": "dana", "scopes": ["memory:read"]}, headers=auth())
    assert minted.status_code == 201 and minted.json()["code"].startswith("mnc_")
    reader = container.keys.create("local", "reader", ["memory:read"])
    assert http.post("/v1/oauth/connect-codes", json={}, headers=auth(reader.secret)).status_code == 403
    assert http.get("/v1/oauth/grants", headers=auth(reader.secret)).status_code == 403  # admin routes, all three
    client_id = register(http).json()["client_id"]
    request, csrf = consent(http, client_id)
    issued = tokens(http, client_id, approve(http, request, csrf, minted.json()["code"]).headers["location"]).json()
    bearer = {**MCP, "authorization": f"Bearer {issued['access_token']}"}
    assert http.post("/mcp", json=LIST, headers=bearer).status_code == 200
    [grant] = http.get("/v1/oauth/grants", params={"user_id": "dana"}, headers=auth()).json()
    assert http.delete(f"/v1/oauth/grants/{grant['grant_id']}", params={"user_id": "dana"},
                       headers=auth(reader.secret)).status_code == 403
    assert grant["via"] == "connect_code" and grant["client_name"] == "app"
    revoked = http.delete(f"/v1/oauth/grants/{grant['grant_id']}", params={"user_id": "dana"}, headers=auth())
    assert revoked.status_code == 200 and revoked.json()["revoked_at"]
    assert http.post("/mcp", json=LIST, headers=bearer).status_code == 401
    from mnemo import cli

    assert cli.main(["oauth", "connect-code", "--tenant", "local", "--user-id", "erin"]) == 0
    assert re.search(r"^mnc_[0-9a-f]{8}_\S{20,}$", capsys.readouterr().out, re.MULTILINE)


def test_a_connect_code_is_used_once_under_a_race(oauth) -> None:
    container, _ = oauth
    admin = container.keys.authenticate(TEST_KEY)
    minted = container.connect_codes.mint(admin, "frank")
    record = container.connect_codes.check(minted.code)
    with ThreadPoolExecutor(8) as pool:
        won = list(pool.map(lambda _: container.connect_codes.consume(record), range(8)))
    assert won.count(True) == 1
    with pytest.raises(Exception, match="unknown, used or expired"):
        container.connect_codes.check(minted.code)


def test_step_up_is_an_http_403_for_tokens_and_a_tool_error_for_keys(oauth) -> None:
    container, http = oauth
    admin = container.keys.authenticate(TEST_KEY)
    client_id = register(http).json()["client_id"]
    request, csrf = consent(http, client_id, resource=f"{BASE}/mcp/r3")
    code = container.connect_codes.mint(admin, "gina", scopes=["memory:read"]).code
    issued = tokens(http, client_id, approve(http, request, csrf, code).headers["location"]).json()
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add_memory", "arguments": {"content": "x"}}}
    headers = {**MCP, "authorization": f"Bearer {issued['access_token']}"}
    denied = http.post("/mcp/r3", json=call, headers=headers)
    assert denied.status_code == 403 and denied.json()["error"]["code"] == "insufficient_scope"
    challenge = denied.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and challenge.endswith('scope="memory:read memory:write"')
    assert f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp/r3"' in challenge
    read = {**call, "params": {"name": "get_all_memories", "arguments": {}}}
    assert http.post("/mcp/r3", json=read, headers=headers).status_code == 200  # a tool the token may call
    # An API key without memory:write keeps today's answer: the tool's own error, HTTP 200.
    reader = container.keys.create("local", "reader", ["memory:read"])
    keyed = http.post("/mcp/r3", json=call, headers={**MCP, "authorization": f"Bearer {reader.secret}"})
    assert keyed.status_code == 200 and keyed.json()["result"]["isError"] is True


def test_every_step_up_tool_exists_in_its_profile(oauth) -> None:
    import asyncio

    from mnemo.services.tenancy.permissions import TOOL_PERMISSIONS
    from mnemo.surfaces.profiles import PROFILES

    container, _ = oauth
    for profile, tools in TOOL_PERMISSIONS.items():
        served = {t.name for t in asyncio.run(PROFILES[profile](container).list_tools())}
        assert set(tools) <= served, (profile, set(tools) - served)


def test_a_connect_code_needs_no_body(oauth) -> None:
    _, http = oauth
    minted = http.post("/v1/oauth/connect-codes", headers=auth())
    assert minted.status_code == 201, minted.text
    assert minted.json()["user_id"] == "default" and minted.json()["scopes"] == ["memory:read", "memory:write", "memory:delete"]


def test_client_id_metadata_documents_from_the_allow_list_only(aws) -> None:
    import httpx2

    from mnemo import bootstrap
    from mnemo.adapters.http.cimd import SafeMetadataFetcher
    from mnemo.settings import MnemoSettings
    from mnemo.surfaces.app import create_app

    good, private, elsewhere = ("https://client.example/oauth/app.json", "https://internal.example/oauth/app.json",
                                "https://other.example/oauth/app.json")
    fetched: list[str] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        fetched.append(request.headers["host"])
        url = f"https://{request.headers['host']}{request.url.path}"
        return httpx2.Response(200, json={"client_id": url, "client_name": "Metadata app", "redirect_uris": [REDIRECT]})

    addresses = {"client.example": ["93.184.216.34"], "internal.example": ["10.1.2.3"], "other.example": ["93.184.216.35"]}
    settings = MnemoSettings(oauth_enabled=True, public_url=BASE,
                             oauth_cimd_allow=["https://client.example/oauth/", "https://internal.example/"])
    container = bootstrap.Container(settings, clock=FixedClock())
    container.__dict__["cimd_fetcher"] = SafeMetadataFetcher(resolver=lambda host, port: addresses[host],
                                                             transport=httpx2.MockTransport(handle))
    container.keys.ensure("local", "admin", ["admin"], TEST_KEY)
    http = TestClient(create_app(container), base_url=BASE, follow_redirects=False)
    assert http.get("/.well-known/oauth-authorization-server").json()["client_id_metadata_document_supported"] is True
    request, _ = consent(http, good)
    page = http.get(f"/oauth/consent?request={request}").text  # shown again: a fresh CSRF token
    assert "Metadata app" in page
    csrf = re.search(r"name=csrf value='([^']+)'", page).group(1)  # type: ignore[union-attr]
    issued = tokens(http, good, approve(http, request, csrf, TEST_KEY).headers["location"])
    assert issued.status_code == 200, issued.text
    assert http.post("/mcp", json=LIST, headers={**MCP, "authorization": f"Bearer {issued.json()['access_token']}"}).status_code == 200
    assert fetched == ["client.example"]  # fetched once, then kept
    for refused in (private, elsewhere):  # allow-listed but private after resolution; not allow-listed
        answer = http.get("/authorize?" + urlencode({"response_type": "code", "client_id": refused, "redirect_uri": REDIRECT,
                                                     "code_challenge": s256(VERIFIER), "state": "s"}))
        assert answer.status_code == 400 and "not found" in answer.text
    assert fetched == ["client.example"]  # neither was ever connected to


def test_an_authorization_code_is_redeemed_once_under_a_race(oauth) -> None:
    from mnemo.errors import OAuthError

    container, http = oauth
    client_id = register(http).json()["client_id"]
    request, csrf = consent(http, client_id)
    code = parse_qs(urlsplit(approve(http, request, csrf, TEST_KEY).headers["location"]).query)["code"][0]

    def redeem(_: int) -> str:
        try:
            return container.oauth_grants.redeem(client_id, code).access_token
        except OAuthError as exc:
            return exc.error

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(redeem, range(8)))
    issued = [r for r in results if r.startswith("mna_")]
    # At most one redemption issues tokens; the others are refused, and since a second redemption
    # means the code leaked, they revoke the grant: whatever was issued no longer works.
    assert len(issued) <= 1 and results.count("invalid_grant") >= 7
    for token in issued:
        assert http.post("/mcp", json=LIST, headers={**MCP, "authorization": f"Bearer {token}"}).status_code == 401
    # Positive control: one redemption alone gets working tokens.
    request, csrf = consent(http, client_id)
    single = tokens(http, client_id, approve(http, request, csrf, TEST_KEY).headers["location"]).json()
    assert http.post("/mcp", json=LIST, headers={**MCP, "authorization": f"Bearer {single['access_token']}"}).status_code == 200


def test_wrong_credentials_are_limited_per_client(oauth) -> None:
    container, http = oauth
    container.oauth.client_failures_per_hour = 3
    client_id = register(http).json()["client_id"]
    for _ in range(2):  # new pages do not reset the client's count
        request, csrf = consent(http, client_id)
        for _ in range(2):
            wrong = approve(http, request, csrf, "mn_wrong_0123456789abcdefghijklmnop")
            if wrong.status_code != 401:
                break
            csrf = re.search(r"name=csrf value='([^']+)'", wrong.text).group(1)  # type: ignore[union-attr]
    assert wrong.status_code == 400 and "too many wrong attempts for this app" in wrong.text
    request, csrf = consent(http, client_id)
    assert approve(http, request, csrf, TEST_KEY).status_code == 400  # even the right key, this hour
    other = register(http).json()["client_id"]
    request, csrf = consent(http, other)
    assert approve(http, request, csrf, TEST_KEY).status_code == 303  # another client is not affected


def test_connect_codes_expire_and_burn_and_the_person_may_decline(aws) -> None:
    from datetime import timedelta

    from mnemo import bootstrap
    from mnemo.settings import MnemoSettings
    from mnemo.surfaces.app import create_app
    from tests.integration.oauth.test_oauth_flow import Clock

    clock = Clock()
    container = bootstrap.Container(MnemoSettings(oauth_enabled=True, public_url=BASE), clock=clock)
    container.keys.ensure("local", "admin", ["admin"], TEST_KEY)
    http = TestClient(create_app(container), base_url=BASE, follow_redirects=False)
    admin = container.keys.authenticate(TEST_KEY)
    client_id = register(http).json()["client_id"]
    # Declined: back to the app with access_denied and its state.
    request, csrf = consent(http, client_id)
    declined = http.post("/oauth/consent", data={"request": request, "csrf": csrf, "action": "deny"})
    assert declined.status_code == 303 and "error=access_denied" in declined.headers["location"] and "state=st" in declined.headers["location"]
    # Expired: a code past its minutes is refused, though its secret is right.
    late = container.connect_codes.mint(admin, "hal", minutes=5).code
    clock.now += timedelta(minutes=6)
    request, csrf = consent(http, client_id)
    assert "unknown, used or expired" in approve(http, request, csrf, late).text
    # Burnt: five wrong secrets against one code id, then the right one is refused too.
    code = container.connect_codes.mint(admin, "hal").code
    code_id = code.split("_")[1]
    for _ in range(5):
        request, csrf = consent(http, client_id)
        assert "wrong connect code" in approve(http, request, csrf, f"mnc_{code_id}_wrongsecretwrongsecret").text
    request, csrf = consent(http, client_id)
    assert "unknown, used or expired" in approve(http, request, csrf, code).text
    fresh = container.connect_codes.mint(admin, "hal").code  # positive control: a good code still connects
    request, csrf = consent(http, client_id)
    assert approve(http, request, csrf, fresh).status_code == 303


def test_a_connect_code_grant_survives_the_minting_keys_rotation(oauth) -> None:
    container, http = oauth
    minter = container.keys.create("local", "minter", ["admin"])
    code = http.post("/v1/oauth/connect-codes", json={"user_id": "ivy"}, headers=auth(minter.secret)).json()["code"]
    client_id = register(http).json()["client_id"]
    request, csrf = consent(http, client_id)
    issued = tokens(http, client_id, approve(http, request, csrf, code).headers["location"]).json()
    bearer = {**MCP, "authorization": f"Bearer {issued['access_token']}"}
    container.keys.revoke("local", minter.record.prefix)  # the admin rotates the key that minted the code
    assert http.post("/v1/oauth/connect-codes", headers=auth(minter.secret)).status_code == 401  # the key is gone...
    assert http.post("/mcp", json=LIST, headers=bearer).status_code == 200  # ...the person's grant is not
