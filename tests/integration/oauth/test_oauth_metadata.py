"""Discovery over HTTP: protected-resource documents per MCP path, the authorization-server document,
and the challenges a client starts from (docs/oauth.md)."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from tests.conftest import FixedClock
from tests.integration.conftest import MCP_HEADERS

ISSUER = "https://mnemo.example"
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


@pytest.fixture
def oauth_http(aws):
    from mnemo import bootstrap
    from mnemo.settings import MnemoSettings
    from mnemo.surfaces.app import create_app

    container = bootstrap.Container(MnemoSettings(oauth_enabled=True, public_url=ISSUER), clock=FixedClock())
    return TestClient(create_app(container), base_url="http://127.0.0.1:8000")


def test_documents_name_the_configured_issuer_never_the_host(oauth_http: TestClient) -> None:
    hostile = {"host": "evil.example"}
    root = oauth_http.get("/.well-known/oauth-protected-resource", headers=hostile).json()
    assert root["resource"] == f"{ISSUER}/mcp" and root["authorization_servers"] == [ISSUER]
    for path in ("/mcp/facts", "/mcp/thrindex", "/mcp/r3", "/api/mcp"):
        document = oauth_http.get(f"/.well-known/oauth-protected-resource{path}", headers=hostile).json()
        assert document["resource"] == f"{ISSUER}{path}"
        assert document["scopes_supported"] == ["memory:read", "memory:write", "memory:delete"]
    assert oauth_http.get("/.well-known/oauth-protected-resource/mcp/nope").status_code == 404
    server = oauth_http.get("/.well-known/oauth-authorization-server", headers=hostile).json()
    assert server["issuer"] == ISSUER and server["authorization_endpoint"] == f"{ISSUER}/authorize"
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert server["token_endpoint_auth_methods_supported"] == ["none"]
    assert server["authorization_response_iss_parameter_supported"] is True


def test_mcp_challenge_points_at_the_paths_own_document(oauth_http: TestClient) -> None:
    for path in ("/mcp", "/mcp/r3", "/api/mcp"):
        response = oauth_http.post(path, json=LIST, headers=MCP_HEADERS)
        assert response.status_code == 401
        challenge = response.headers["www-authenticate"]
        assert f'resource_metadata="{ISSUER}/.well-known/oauth-protected-resource{path}"' in challenge
        assert challenge.endswith('scope="memory:read memory:write memory:delete"')
        assert response.json()["error"]["message"].startswith("missing credentials: authorize (OAuth)")
        assert "error=" not in challenge  # RFC 6750 §3.1: no credentials sent, no error code
        bad = oauth_http.post(path, json=LIST, headers={**MCP_HEADERS, "authorization": "Bearer mn_nope_0000000000000000"})
        assert bad.status_code == 401 and 'error="invalid_token"' in bad.headers["www-authenticate"]
        assert f'resource_metadata="{ISSUER}/.well-known/oauth-protected-resource{path}"' in bad.headers["www-authenticate"]
    rest = oauth_http.get("/v1/memories")
    assert rest.status_code == 401
    assert rest.headers["www-authenticate"].endswith(f'resource_metadata="{ISSUER}/.well-known/oauth-protected-resource"')


def test_oauth_off_serves_no_authorization_server(http: TestClient) -> None:
    assert http.get("/.well-known/oauth-authorization-server").status_code == 404
    document = http.get("/.well-known/oauth-protected-resource/mcp/r3").json()
    assert document["resource"] == "http://127.0.0.1:8000/mcp/r3" and "authorization_servers" not in document
    assert "admin" not in document["scopes_supported"]


def test_oauth_needs_a_configured_origin() -> None:
    from pydantic import ValidationError

    from mnemo.settings import MnemoSettings

    for url in ("", "http://mnemo.example", "https://mnemo.example/?x=1"):
        with pytest.raises(ValidationError, match="MNEMO_PUBLIC_URL"):
            MnemoSettings(oauth_enabled=True, public_url=url)
    assert MnemoSettings(oauth_enabled=True, public_url="http://127.0.0.1:8000").issuer == "http://127.0.0.1:8000"
