"""`POST /revoke` (RFC 7009, docs/oauth.md): a public client revokes with `token` and `client_id`
alone and the whole grant ends; another client's post is a 200 that revokes nothing; a client
registered with a secret must still send it (issue 53)."""

from __future__ import annotations

from typing import Any

from mcp.server.auth.middleware.client_auth import ClientAuthenticator
from mcp.server.auth.provider import AccessToken
from mcp.shared.auth import OAuthClientInformationFull
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from tests.conftest import TEST_KEY
from tests.integration.oauth.test_oauth_server import LIST, MCP, REDIRECT, approve, consent, oauth, register, tokens  # noqa: F401 - the fixture


def connected(http: TestClient) -> tuple[str, dict[str, Any]]:
    """A registered public client and the token pair a consent with the admin key got it."""
    client_id = register(http).json()["client_id"]
    request, csrf = consent(http, client_id)
    issued = tokens(http, client_id, approve(http, request, csrf, TEST_KEY).headers["location"])
    assert issued.status_code == 200, issued.text
    return client_id, issued.json()


def refresh(http: TestClient, client_id: str, token: str) -> Any:
    return http.post("/token", data={"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id})


def test_a_public_client_revokes_with_token_and_client_id_and_the_grant_ends(oauth) -> None:  # noqa: F811
    _, http = oauth
    client_id, pair = connected(http)
    bearer = {**MCP, "authorization": f"Bearer {pair['access_token']}"}
    assert http.post("/mcp", json=LIST, headers=bearer).status_code == 200  # control: the owner's token works

    # Another client names the tokens: the same empty 200, and nothing is revoked (RFC 7009 §2.1).
    other = register(http).json()["client_id"]
    for token in (pair["access_token"], pair["refresh_token"]):
        assert http.post("/revoke", data={"token": token, "client_id": other}).status_code == 200
    assert http.post("/mcp", json=LIST, headers=bearer).status_code == 200
    unknown = http.post("/revoke", data={"token": pair["access_token"], "client_id": "mcl_nope"})
    assert unknown.status_code == 401 and http.post("/mcp", json=LIST, headers=bearer).status_code == 200

    # The RFC 7009 form post of a public client: no client_secret at all.
    revoked = http.post("/revoke", data={"token": pair["access_token"], "client_id": client_id})
    assert revoked.status_code == 200, revoked.text
    assert revoked.headers["cache-control"] == "no-store"
    assert http.post("/mcp", json=LIST, headers=bearer).status_code == 401  # the access token is refused...
    again = refresh(http, client_id, pair["refresh_token"])
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"  # ...and its refresh token


def test_revoking_the_refresh_token_ends_the_access_token_too(oauth) -> None:  # noqa: F811
    _, http = oauth
    client_id, pair = connected(http)
    bearer = {**MCP, "authorization": f"Bearer {pair['access_token']}"}
    assert http.post("/mcp", json=LIST, headers=bearer).status_code == 200  # control
    revoked = http.post("/revoke", data={"token": pair["refresh_token"], "token_type_hint": "refresh_token",
                                         "client_id": client_id})
    assert revoked.status_code == 200, revoked.text
    assert http.post("/mcp", json=LIST, headers=bearer).status_code == 401
    assert refresh(http, client_id, pair["refresh_token"]).status_code == 400


class ConfidentialProvider:
    """Just what the handler asks of a provider, for one client registered with a secret (Mnemo
    registers none, but the SDK's authenticator must still hold such a client to it)."""

    def __init__(self) -> None:
        self.client = OAuthClientInformationFull(client_id="conf", client_secret="s3cret", redirect_uris=[REDIRECT],  # type: ignore[list-item]
                                                 token_endpoint_auth_method="client_secret_post")
        self.revoked: list[str] = []

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.client if client_id == "conf" else None

    async def load_access_token(self, token: str) -> AccessToken | None:
        return AccessToken(token=token, client_id="conf", scopes=[]) if token == "tok" else None

    async def load_refresh_token(self, client: OAuthClientInformationFull, token: str) -> None:
        return None

    async def revoke_token(self, token: AccessToken) -> None:
        self.revoked.append(token.token)


def test_a_confidential_client_must_still_send_its_secret() -> None:
    from mnemo.surfaces.oauth.revocation import MnemoRevocationHandler

    provider = ConfidentialProvider()
    handler = MnemoRevocationHandler(provider, ClientAuthenticator(provider))  # type: ignore[arg-type]
    http = TestClient(Starlette(routes=[Route("/revoke", handler.handle, methods=["POST"])]))
    for secret in ({}, {"client_secret": ""}, {"client_secret": "wrong"}):
        refused = http.post("/revoke", data={"token": "tok", "client_id": "conf", **secret})
        assert refused.status_code == 401 and not provider.revoked, secret
    assert http.post("/revoke", data={"token": "tok", "client_id": "conf", "client_secret": "s3cret"}).status_code == 200
    assert provider.revoked == ["tok"]  # control: with its secret, it revokes
