"""Bearer API-key authentication shared by MCP and REST, and the 401 every client understands."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the container's KeyService is imported when first built, not at Lambda init
    from mnemo.domain.models import Principal
    from mnemo.services.keys import KeyService

PRM_PATH = "/.well-known/oauth-protected-resource"


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def authenticate(keys: KeyService, headers: Mapping[str, str]) -> Principal:
    """Raises AuthenticationError for a missing, unknown or revoked key."""
    return keys.authenticate(bearer_token(headers.get("authorization")))


def base_url(public_url: str, scheme: str, host: str) -> str:
    return public_url.rstrip("/") if public_url else f"{scheme}://{host}"


def www_authenticate(base: str, description: str) -> str:
    """RFC 6750 challenge with RFC 9728 `resource_metadata`, so MCP clients can discover how to auth."""
    safe = description.replace('"', "'")
    return f'Bearer realm="mnemo", error="invalid_token", error_description="{safe}", resource_metadata="{base}{PRM_PATH}"'


def protected_resource_metadata(base: str, resource_path: str = "/mcp") -> dict[str, object]:
    """RFC 9728 document. No authorization server: Mnemo keys are issued by its CLI, sent as Bearer."""
    return {
        "resource": f"{base}{resource_path}",
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["memory:read", "memory:write", "memory:delete", "admin"],
        "resource_name": "Mnemo memory",
        "resource_documentation": f"{base}/docs",
    }
