"""What the authorization server keeps (one DynamoDB table, docs/oauth.md). Every secret (a token, a
code, a connect code's secret part) is stored as its SHA-256 only; each record expires (TTL)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel


class OAuthRecord(BaseModel):
    KIND: ClassVar[str]
    expires_at: datetime

    @property
    def ident(self) -> str:
        raise NotImplementedError


class RegisteredClient(OAuthRecord):
    """A dynamically registered public client: its RFC 7591 metadata as it registered it (text only:
    names and URIs are rendered, never fetched). Expires unless used (each grant extends it)."""

    KIND: ClassVar[str] = "client"
    client_id: str
    metadata: dict[str, Any]
    created_at: datetime

    @property
    def ident(self) -> str:
        return self.client_id


class ConsentRequest(OAuthRecord):
    """An /authorize request waiting for a person on the consent page. `csrf_hash` binds the form to
    the page that was shown; `attempts` counts wrong credentials (the request dies at the limit)."""

    KIND: ClassVar[str] = "consent"
    request_id: str
    client_id: str
    redirect_uri: str
    redirect_explicit: bool
    state: str | None = None
    code_challenge: str
    scopes: list[str] | None = None  # None: the request named none (every scope the resource offers)
    resource: str
    csrf_hash: str = ""
    attempts: int = 0

    @property
    def ident(self) -> str:
        return self.request_id


class Grant(OAuthRecord):
    """What a person consented to: (tenant, user) for one client and one resource, with the scopes the
    credential used could give. Revoking it ends every token issued under it."""

    KIND: ClassVar[str] = "grant"
    grant_id: str
    tenant: str
    user_id: str
    client_id: str
    client_name: str = ""
    scopes: list[str]
    resource: str
    via: Literal["connect_code", "api_key"]
    key_hash: str | None = None  # the API key used on the consent page: its revocation ends the grant
    key_prefix: str = ""  # who approved: the API key's or the connect code's public prefix
    created_at: datetime
    revoked_at: datetime | None = None

    @property
    def ident(self) -> str:
        return self.grant_id


class AuthCode(OAuthRecord):
    """Redeemed once (`used_at`); a second redemption means the code leaked: its grant is revoked,
    and with it the tokens the first redemption issued (OAuth 2.1 §4.1.3)."""

    KIND: ClassVar[str] = "code"
    code_hash: str
    grant_id: str
    client_id: str
    redirect_uri: str
    redirect_explicit: bool
    code_challenge: str
    scopes: list[str]
    resource: str
    used_at: datetime | None = None

    @property
    def ident(self) -> str:
        return self.code_hash


class AccessTokenRecord(OAuthRecord):
    KIND: ClassVar[str] = "access"
    token_hash: str
    grant_id: str
    client_id: str
    scopes: list[str]
    resource: str

    @property
    def ident(self) -> str:
        return self.token_hash


class RefreshTokenRecord(OAuthRecord):
    """One link of a grant's refresh chain: used once (`used_at`); a second use is a replay, and the
    grant is revoked (OAuth 2.1 §4.3.1, refresh token rotation)."""

    KIND: ClassVar[str] = "refresh"
    token_hash: str
    grant_id: str
    client_id: str
    scopes: list[str]
    resource: str
    used_at: datetime | None = None

    @property
    def ident(self) -> str:
        return self.token_hash


class ConnectCode(OAuthRecord):
    """A one-time code an admin mints for a person to type on the consent page: `mnc_<id>_<secret>`.
    The id is public (it counts wrong attempts against this code); the secret is stored hashed."""

    KIND: ClassVar[str] = "connect"
    code_id: str
    secret_hash: str
    tenant: str
    user_id: str
    scopes: list[str]
    minted_by: str
    created_at: datetime
    attempts: int = 0

    @property
    def ident(self) -> str:
        return self.code_id
