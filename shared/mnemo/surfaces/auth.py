"""Bearer authentication shared by MCP and REST, and the 401 every client understands."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the container's KeyService is imported when first built, not at Lambda init
    from mnemo.domain.models import Principal
    from mnemo.services.tenancy.keys import KeyService

__all__ = ["authenticate", "base_url", "bearer_token", "challenge_error", "www_authenticate"]


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def authenticate(keys: KeyService, headers: Mapping[str, str]) -> Principal:
    """Raises AuthenticationError for a missing, unknown or revoked key."""
    return keys.authenticate(bearer_token(headers.get("authorization")))


def challenge_error(headers: Mapping[str, str]) -> str | None:
    """`invalid_token` when the request carried a bearer credential that failed; None when it sent none."""
    return "invalid_token" if bearer_token(headers.get("authorization")) is not None else None


def base_url(public_url: str, scheme: str, host: str) -> str:
    return public_url.rstrip("/") if public_url else f"{scheme}://{host}"


def _quoted(value: str) -> str:
    return value.replace("\\", "").replace('"', "'")


def www_authenticate(base: str, description: str, resource: str | None = None, *,
                     error: str | None = "invalid_token", scope: str | None = None) -> str:
    """RFC 6750 challenge with RFC 9728 `resource_metadata`, so MCP clients can discover how to auth.
    `resource` (an MCP path): its path-suffixed document and a `scope` hint (what to ask for there);
    None (REST): the root document. `error` None: the request sent no credentials, and RFC 6750 §3.1
    says such a challenge carries no error code (`challenge_error` picks it from the headers)."""
    from mnemo.services.oauth.metadata import PRM_PATH, metadata_url, scope_hint  # on a 401 only: not at MCP init

    document = metadata_url(base, resource) if resource else f"{base}{PRM_PATH}"
    challenge = 'Bearer realm="mnemo", '
    if error is not None:
        challenge += f'error="{error}", error_description="{_quoted(description)}", '
    challenge += f'resource_metadata="{document}"'
    if resource or scope:
        challenge += f', scope="{_quoted(scope or scope_hint())}"'
    return challenge
