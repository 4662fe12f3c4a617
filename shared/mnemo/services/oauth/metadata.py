"""The discovery documents MCP clients read before they authorize (docs/oauth.md):
RFC 9728 protected-resource metadata per MCP path, RFC 8414 authorization-server metadata, and the
scope hint of a 401 challenge. Pure: the issuer is the configured public origin, never a Host header."""

from __future__ import annotations

from collections.abc import Iterable

from mnemo.domain.oauth import MCP_ROOT, SCOPES, resource_of_path, resource_paths

PRM_PATH = "/.well-known/oauth-protected-resource"
AS_METADATA_PATH = "/.well-known/oauth-authorization-server"
AUTHORIZE_PATH = "/authorize"
TOKEN_PATH = "/token"
REGISTER_PATH = "/register"
REVOKE_PATH = "/revoke"
CONSENT_PATH = "/oauth/consent"


def metadata_url(base: str, path: str) -> str:
    """Where the protected-resource document of the MCP path `path` is (RFC 9728 §3.1: path-suffixed)."""
    return f"{base}{PRM_PATH}{path}"


def prm_resource(suffix: str, profiles: Iterable[str]) -> str | None:
    """The resource path a document path suffix names: "" (the root document) names `/mcp`; `/api/mcp`
    names itself (a client checks that the resource is its server URL) though it is `/mcp`'s
    resource; anything else must be one of ours. None: no such resource."""
    path = suffix.rstrip("/")
    if not path:
        return MCP_ROOT
    return path if resource_of_path(path) in resource_paths(profiles) else None


def protected_resource(base: str, resource: str, *, issuer: str | None) -> dict[str, object]:
    """RFC 9728 document for `resource`. `issuer` None (OAuth off): no authorization server is named,
    and clients use an API key as a Bearer token."""
    document: dict[str, object] = {
        "resource": f"{base}{resource}",
        "bearer_methods_supported": ["header"],
        "scopes_supported": list(SCOPES),
        "resource_name": "Mnemo memory",
        "resource_documentation": f"{base}/docs",
    }
    if issuer is not None:
        document["authorization_servers"] = [issuer]
    return document


def authorization_server(issuer: str, *, registration: bool, cimd: bool) -> dict[str, object]:
    """RFC 8414 document. Served by Mnemo rather than the SDK's builder, which names no `none` auth
    method, no RFC 9207 `iss` flag and no Client ID Metadata Document flag."""
    document: dict[str, object] = {
        "issuer": issuer,
        "authorization_endpoint": issuer + AUTHORIZE_PATH,
        "token_endpoint": issuer + TOKEN_PATH,
        "revocation_endpoint": issuer + REVOKE_PATH,
        "scopes_supported": list(SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": cimd,
        "service_documentation": issuer + "/docs",
    }
    if registration:
        document["registration_endpoint"] = issuer + REGISTER_PATH
    return document


def scope_hint(scopes: Iterable[str] = SCOPES) -> str:
    """The `scope` of a challenge (MCP 2025-11-25: what to ask for at this resource)."""
    return " ".join(scopes)
