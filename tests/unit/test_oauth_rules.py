"""The OAuth rules without I/O: redirect URIs, PKCE, scope intersection, resources, discovery documents
and challenges (docs/oauth.md)."""

from __future__ import annotations

import pytest

from mnemo.domain.oauth import (
    SCOPES,
    canonical_resource,
    granted_scopes,
    is_public_address,
    pkce_matches,
    redirect_matches,
    redirect_problem,
    s256,
)
from mnemo.services.oauth.metadata import authorization_server, prm_resource, protected_resource
from mnemo.surfaces.auth import www_authenticate

PROFILES = ["", "facts", "thrindex", "r3"]
ISSUER = "https://mnemo.example"


@pytest.mark.parametrize(("uri", "allowed"), [
    ("https://claude.ai/api/mcp/auth_callback", True),
    ("https://claude.com/api/mcp/auth_callback", True),
    ("https://chatgpt.com/connector_platform_oauth_redirect", True),
    ("http://127.0.0.1:33418/callback", True),
    ("http://localhost:6274/oauth/callback", True),
    ("http://[::1]:8080/cb", True),
    ("http://127.0.0.1/callback", True),
    ("cursor://anysphere.cursor-mcp/oauth/callback", True),
    ("com.example.app:/oauth2redirect", True),
    ("https://claude.ai/cb#frag", False),
    ("https://user:pw@claude.ai/cb", False),
    ("https://user@claude.ai/cb", False),
    ("http://claude.ai/cb", False),  # plain http off loopback
    ("http://127.0.0.1.evil.example/cb", False),
    ("javascript:alert(1)", False),
    ("JavaScript:alert(1)", False),
    ("data:text/html,<script>x</script>", False),
    ("file:///etc/passwd", False),
    ("vbscript:x", False),
    ("https:///nohost", False),
    ("/relative/path", False),
    ("https://claude.ai/ cb", False),
    ("https://claude.ai:99999/cb", False),
    ("https://" + "a" * 2100 + ".example/", False),
])
def test_redirect_registration_matrix(uri: str, allowed: bool) -> None:
    problem = redirect_problem(uri)
    assert (problem is None) is allowed, problem
    if problem is not None:
        assert problem.startswith("redirect_uris: ")


@pytest.mark.parametrize(("registered", "requested", "matches"), [
    ("https://claude.ai/api/mcp/auth_callback", "https://claude.ai/api/mcp/auth_callback", True),
    ("https://claude.ai/api/mcp/auth_callback", "https://claude.ai/api/mcp/auth_callback/", False),
    ("https://claude.ai/cb", "https://claude.ai:8443/cb", False),  # the port rule is loopback's only
    ("http://127.0.0.1:33418/callback", "http://127.0.0.1:51234/callback", True),  # RFC 8252 §7.3
    ("http://127.0.0.1/callback", "http://127.0.0.1:6276/callback", True),
    ("http://localhost:6274/oauth/callback", "http://localhost:9999/oauth/callback", True),
    ("http://127.0.0.1:33418/callback", "http://localhost:33418/callback", False),  # another host
    ("http://127.0.0.1:33418/callback", "http://127.0.0.1:33418/other", False),
    ("http://127.0.0.1:33418/callback", "http://127.0.0.1:1/callback?x=1", False),
    ("http://127.0.0.1:33418/callback", "http://evil@127.0.0.1:1/callback", False),
    ("cursor://anysphere.cursor-mcp/oauth/callback", "cursor://anysphere.cursor-mcp/oauth/callback", True),
    ("cursor://anysphere.cursor-mcp/oauth/callback", "cursor://anysphere.cursor-mcp/oauth/other", False),
])
def test_redirect_matching(registered: str, requested: str, matches: bool) -> None:
    assert redirect_matches([registered], requested) is matches


def test_pkce_s256() -> None:
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"  # RFC 7636 appendix B
    assert s256(verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    assert pkce_matches(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    assert not pkce_matches(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cX")
    assert not pkce_matches("short", s256("short"))  # under 43 characters: malformed, whatever its hash
    assert not pkce_matches(verifier + " ", s256(verifier + " "))


@pytest.mark.parametrize(("asked", "held", "granted"), [
    (None, ["admin"], SCOPES),
    (None, ["memory:read"], ("memory:read",)),
    (["memory:read", "memory:write"], ["memory:read", "memory:delete"], ("memory:read",)),
    (["memory:delete"], ["memory:read"], ()),
    (["admin"], ["admin"], ()),  # admin is never granted
    (["memory:write", "unknown"], ["admin"], ("memory:write",)),
])
def test_scope_intersection(asked: list[str] | None, held: list[str], granted: tuple[str, ...]) -> None:
    assert granted_scopes(asked, held) == granted


@pytest.mark.parametrize(("resource", "canonical"), [
    (None, "/mcp"),
    (f"{ISSUER}/mcp", "/mcp"),
    (f"{ISSUER}/mcp/", "/mcp"),
    (f"{ISSUER}/api/mcp", "/mcp"),
    (f"{ISSUER}/mcp/r3", "/mcp/r3"),
    (f"{ISSUER}/mcp/facts", "/mcp/facts"),
    (f"{ISSUER}/mcp/nope", None),
    (f"{ISSUER}/v1", None),
    (f"{ISSUER}.evil.example/mcp", None),
    ("https://other.example/mcp", None),
    (f"{ISSUER}/mcp?x=1", None),
])
def test_resource_parameter(resource: str | None, canonical: str | None) -> None:
    assert canonical_resource(ISSUER, resource, PROFILES) == canonical


@pytest.mark.parametrize(("address", "public"), [
    ("93.184.216.34", True), ("2606:2800:220:1:248:1893:25c8:1946", True),
    ("10.0.0.1", False), ("172.16.0.1", False), ("192.168.1.1", False), ("127.0.0.1", False),
    ("169.254.169.254", False), ("0.0.0.1", False), ("100.64.0.1", False), ("::1", False),
    ("fd00::1", False), ("fe80::1", False), ("::ffff:10.0.0.1", False), ("::ffff:93.184.216.34", False),
    ("224.0.0.1", False), ("not-an-ip", False),
])
def test_public_address(address: str, public: bool) -> None:
    assert is_public_address(address) is public


def test_protected_resource_documents() -> None:
    assert [prm_resource(s, PROFILES) for s in ["", "/mcp", "/api/mcp", "/mcp/r3", "/mcp/nope", "/v1"]] == [
        "/mcp", "/mcp", "/api/mcp", "/mcp/r3", None, None]
    document = protected_resource(ISSUER, "/mcp/r3", issuer=ISSUER)
    assert document["resource"] == f"{ISSUER}/mcp/r3" and document["authorization_servers"] == [ISSUER]
    assert document["scopes_supported"] == ["memory:read", "memory:write", "memory:delete"]
    # OAuth off: the same document without an authorization server (API keys only).
    assert "authorization_servers" not in protected_resource(ISSUER, "/mcp", issuer=None)


def test_authorization_server_document() -> None:
    document = authorization_server(ISSUER, registration=True, cimd=False)
    assert document["issuer"] == ISSUER and document["token_endpoint"] == f"{ISSUER}/token"
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert "none" in document["token_endpoint_auth_methods_supported"]  # type: ignore[operator]
    assert document["authorization_response_iss_parameter_supported"] is True
    assert document["registration_endpoint"] == f"{ISSUER}/register"
    assert "admin" not in document["scopes_supported"]  # type: ignore[operator]
    assert "registration_endpoint" not in authorization_server(ISSUER, registration=False, cimd=False)


def test_challenges() -> None:
    mcp = www_authenticate(ISSUER, 'bad "key"', "/mcp/facts")
    assert mcp == ('Bearer realm="mnemo", error="invalid_token", error_description="bad \'key\'", '
                   f'resource_metadata="{ISSUER}/.well-known/oauth-protected-resource/mcp/facts", '
                   'scope="memory:read memory:write memory:delete"')
    rest = www_authenticate(ISSUER, "missing")
    assert rest.endswith(f'resource_metadata="{ISSUER}/.well-known/oauth-protected-resource"') and "scope=" not in rest
    step_up = www_authenticate(ISSUER, "needs write", "/mcp", error="insufficient_scope", scope="memory:read memory:write")
    assert 'error="insufficient_scope"' in step_up and step_up.endswith('scope="memory:read memory:write"')


@pytest.mark.parametrize(("client_id", "allowed"), [
    ("https://claude.ai/oauth/claude-code-client-metadata", True),
    ("https://claude.ai.evil.example/oauth/x", False),  # a string prefix would have matched
    ("https://evil.example/https://claude.ai/x", False),
    ("http://claude.ai/oauth/x", False),
    ("https://CLAUDE.ai/oauth/x", True),
    ("https://claude.ai:8443/oauth/x", False),
    ("https://vscode.dev/oauth/client.json", True),
    ("https://vscode.dev/oauthx/client.json", False),  # the path prefix ends on a / boundary
    ("https://vscode.dev/oauth", True),
    ("https://vscode.dev/other/client.json", False),
    ("https://claude.ai/", False),  # no path: not a metadata document URL
    ("https://claude.ai/oauth/x?y=1", False),
    ("https://user@claude.ai/oauth/x", False),
    ("https://claude.ai/oauth/../x", False),
])
def test_cimd_allow_list_matches_the_parsed_url(client_id: str, allowed: bool) -> None:
    from mnemo.domain.oauth import cimd_allowed

    assert cimd_allowed(client_id, ["https://claude.ai/", "https://vscode.dev/oauth"]) is allowed


def test_user_names() -> None:
    from mnemo.domain.oauth import user_problem

    assert [user_problem(u) is None for u in ["default", "alice@example.com", "team:a-1", "*", "", "a b", "x" * 129]] == [
        True, True, True, False, False, False, False]
