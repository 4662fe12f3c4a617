"""The MCP SDK's authorization-server provider protocol over Mnemo's services (docs/oauth.md).

Glue only: each method translates between the SDK's models and the services, which decide. Two
things the SDK would get wrong are fixed here: redirect URIs match with the loopback port rule
(`MnemoClient.validate_redirect_uri`), and every registration is a public client (auth method
`none`, no secret, echoed). Expiries are handed to the SDK on the wall clock it checks them with.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING

import anyio.to_thread
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    RegistrationError,
    RegistrationErrorCode,
    TokenError,
)
from mcp.shared.auth import InvalidRedirectUriError, OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl

from mnemo.domain.oauth import SCOPES, redirect_matches
from mnemo.domain.oauth_records import RegisteredClient
from mnemo.errors import OAuthError, ValidationFailed
from mnemo.services.oauth.metadata import CONSENT_PATH
from mnemo.services.oauth.tokens import TokenPair

if TYPE_CHECKING:
    from mnemo.bootstrap import Container


class MnemoClient(OAuthClientInformationFull):
    def validate_scope(self, requested_scope: str | None) -> list[str] | None:
        """Scopes Mnemo does not offer (`openid`, `offline_access`, ...) are dropped rather than
        refused (RFC 6749 §3.3: the server may grant less); none left reads as none asked."""
        if requested_scope is None:
            return None
        known = [s for s in requested_scope.split() if s in SCOPES]
        return known or None

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        """RFC 8252 §7.3: a loopback redirect matches whatever port the app bound this time."""
        registered = [str(u) for u in self.redirect_uris or []]
        if redirect_uri is None:
            if len(registered) == 1:
                return AnyUrl(registered[0])
            raise InvalidRedirectUriError("redirect_uri: required (this client registered several)")
        if not redirect_matches(registered, str(redirect_uri)):
            raise InvalidRedirectUriError("redirect_uri: not registered for this client")
        return redirect_uri


def _client(record: RegisteredClient) -> MnemoClient:
    return MnemoClient.model_validate({
        **record.metadata, "client_id": record.client_id, "client_id_issued_at": int(record.created_at.timestamp()),
        "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    })


def _token(pair: TokenPair) -> OAuthToken:
    return OAuthToken(access_token=pair.access_token, token_type="Bearer", expires_in=pair.expires_in,
                      refresh_token=pair.refresh_token, scope=" ".join(pair.scopes))


class MnemoProvider:
    """`OAuthAuthorizationServerProvider` for one request's container."""

    def __init__(self, services: Container) -> None:
        self._services = services
        self._server = services.oauth
        self._grants = services.oauth_grants

    def _wall(self, at: datetime) -> float:
        """`at` (service clock) as the wall-clock epoch the SDK compares with `time.time()`."""
        return time.time() + (at - self._services.clock()).total_seconds()

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        record = await anyio.to_thread.run_sync(self._server.client, client_id)
        return _client(record) if record is not None else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        try:
            record = await anyio.to_thread.run_sync(self._server.register, client_info.model_dump(mode="json"))
        except ValidationFailed as exc:
            kind: RegistrationErrorCode = (
                "invalid_redirect_uri" if exc.message.startswith("redirect_uris") else "invalid_client_metadata")
            raise RegistrationError(kind, exc.message) from None
        # The SDK's handler answers with this very object: make it say what was registered.
        client_info.client_id = record.client_id
        client_info.client_secret = None
        client_info.client_secret_expires_at = None
        client_info.token_endpoint_auth_method = "none"
        client_info.scope = record.metadata["scope"]
        client_info.client_id_issued_at = int(record.created_at.timestamp())

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        record = await anyio.to_thread.run_sync(self._server.client, client.client_id)
        if record is None:
            raise AuthorizeError("unauthorized_client", "client is not registered")
        try:
            request = await anyio.to_thread.run_sync(lambda: self._server.begin(
                record, str(params.redirect_uri), params.redirect_uri_provided_explicitly, params.state,
                params.code_challenge, params.scopes, params.resource))
        except OAuthError as exc:
            raise AuthorizeError(exc.error, exc.message) from None  # type: ignore[arg-type]
        return f"{self._server.issuer}{CONSENT_PATH}?request={request.request_id}"

    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str) -> AuthorizationCode | None:
        record = await anyio.to_thread.run_sync(self._grants.code, client.client_id, authorization_code)
        if record is None:
            return None
        return AuthorizationCode(code=authorization_code, scopes=record.scopes, expires_at=self._wall(record.expires_at),
                                 client_id=record.client_id, code_challenge=record.code_challenge,
                                 redirect_uri=AnyUrl(record.redirect_uri), redirect_uri_provided_explicitly=record.redirect_explicit,
                                 resource=self._server.issuer + record.resource)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode) -> OAuthToken:
        try:
            pair = await anyio.to_thread.run_sync(self._grants.redeem, client.client_id, authorization_code.code)
        except OAuthError as exc:
            raise TokenError(exc.error, exc.message) from None  # type: ignore[arg-type]
        return _token(pair)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        record = await anyio.to_thread.run_sync(self._grants.refresh_token, client.client_id, refresh_token)
        if record is None:
            return None
        return RefreshToken(token=refresh_token, client_id=record.client_id, scopes=record.scopes,
                            expires_at=int(self._wall(record.expires_at)), resource=self._server.issuer + record.resource)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        try:
            pair = await anyio.to_thread.run_sync(self._grants.rotate, client.client_id, refresh_token.token, scopes)
        except OAuthError as exc:
            raise TokenError(exc.error, exc.message) from None  # type: ignore[arg-type]
        return _token(pair)

    async def load_access_token(self, token: str) -> AccessToken | None:
        """For the revocation endpoint (the MCP gate verifies tokens itself, per resource)."""
        record = await anyio.to_thread.run_sync(self._grants.access, token)
        if record is None:
            return None
        return AccessToken(token=token, client_id=record.client_id, scopes=record.scopes,
                           expires_at=int(self._wall(record.expires_at)), resource=self._server.issuer + record.resource)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        await anyio.to_thread.run_sync(self._grants.revoke, token.token)
