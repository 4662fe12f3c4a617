"""Grants and the tokens under them (docs/oauth.md): issue on a redeemed code, rotate refresh tokens
(a reused one revokes the grant), verify an access token for one MCP resource, revoke, list.

Tokens are opaque, 256 random bits from `secrets`, stored as SHA-256 only, and bound to tenant, user,
client and resource through their grant. An access token for `/mcp` is valid at `/mcp` (and its alias
`/api/mcp`) only; one for `/mcp/r3` at `/mcp/r3` only."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from mnemo.domain.models import Permission, Principal
from mnemo.domain.oauth import resource_of_path
from mnemo.domain.oauth_records import AccessTokenRecord, AuthCode, Grant, RefreshTokenRecord
from mnemo.domain.timestamps import utcnow
from mnemo.errors import AuthenticationError, NotFoundError, OAuthError
from mnemo.ports import KeyStore, OAuthStore
from mnemo.services.tenancy.permissions import Operation, authorize

ACCESS_PREFIX = "mna_"
REFRESH_PREFIX = "mnr_"


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class Lifetimes:
    access: timedelta = timedelta(hours=1)
    refresh: timedelta = timedelta(days=30)  # also a grant's idle lifetime: each refresh extends it
    code: timedelta = timedelta(minutes=5)
    consent: timedelta = timedelta(minutes=10)


@dataclass(frozen=True)
class TokenPair:
    access_token: str
    refresh_token: str
    expires_in: int
    scopes: list[str]


class GrantService:
    def __init__(self, store: OAuthStore, keys: KeyStore, lifetimes: Lifetimes, *,
                 clock: Callable[[], datetime] = utcnow) -> None:
        self._store = store
        self._keys = keys
        self.lifetimes = lifetimes
        self._clock = clock

    # -- the token endpoint ----------------------------------------------------------------------
    def code(self, client_id: str, code: str) -> AuthCode | None:
        """The live code `code` of this client (read only: the SDK checks PKCE next)."""
        return self._held(AuthCode, code, client_id)

    def redeem(self, client_id: str, code: str) -> TokenPair:
        """Tokens for a code, once: of concurrent redemptions one wins. A second redemption (the code
        leaked, or was replayed) gets invalid_grant and revokes the grant the first one used."""
        record = self._held(AuthCode, code, client_id)
        if record is None:
            raise OAuthError("invalid_grant", "authorization code is unknown or expired")
        if not self._spend(AuthCode, record.code_hash, record.grant_id):
            raise OAuthError("invalid_grant", "authorization code was already used: its grant is revoked")
        return self._issue(self._live_grant(record.grant_id, "invalid_grant"))

    def refresh_token(self, client_id: str, token: str) -> RefreshTokenRecord | None:
        """The refresh token as stored (used or not: `rotate` tells a replay), if its grant is live."""
        record = self._held(RefreshTokenRecord, token, client_id)
        if record is None:
            return None
        grant = self._store.get(Grant, record.grant_id)
        return record if grant is not None and self._grant_problem(grant) is None else None

    def rotate(self, client_id: str, token: str, scopes: list[str]) -> TokenPair:
        """A new pair for a refresh token used once. A second use means the token leaked (or the
        client lost a response): the grant is revoked, every token under it ends."""
        record = self._held(RefreshTokenRecord, token, client_id)
        if record is None:
            raise OAuthError("invalid_grant", "refresh token is unknown or expired")
        if not self._spend(RefreshTokenRecord, record.token_hash, record.grant_id):
            raise OAuthError("invalid_grant", "refresh token was already used: the grant is revoked; authorize again")
        grant = self._live_grant(record.grant_id, "invalid_grant")
        narrowed = [s for s in grant.scopes if s in scopes] or grant.scopes
        return self._issue(grant, narrowed)

    def _held[R: (AuthCode, RefreshTokenRecord)](self, kind: type[R], secret: str, client_id: str) -> R | None:
        """The unexpired code or refresh token `secret` names, if this client holds it (used or not)."""
        record = self._store.get(kind, digest(secret))
        if record is None or record.client_id != client_id or self._clock() >= record.expires_at:
            return None
        return record

    def _spend(self, kind: type[AuthCode | RefreshTokenRecord], ident: str, grant_id: str) -> bool:
        """Mark a code or refresh token used, once. A second use means it leaked (or was replayed):
        the grant it came from is revoked, and every token under it ends."""
        if self._store.mark(kind, ident, "used_at", self._clock()):
            return True
        self._store.mark(Grant, grant_id, "revoked_at", self._clock())
        return False

    def access(self, token: str) -> AccessTokenRecord | None:
        return self._store.get(AccessTokenRecord, digest(token))

    def revoke(self, token: str) -> None:
        """RFC 7009: an access or refresh token ends its whole grant; an unknown token is no error."""
        record = self._store.get(AccessTokenRecord, digest(token)) or self._store.get(RefreshTokenRecord, digest(token))
        if record is not None:
            self._store.mark(Grant, record.grant_id, "revoked_at", self._clock())

    # -- the resource server -------------------------------------------------------------------
    def verify(self, token: str, path: str) -> Principal:
        """The principal an access token acts as at the MCP path `path`, or AuthenticationError."""
        record = self._store.get(AccessTokenRecord, digest(token))
        if record is None:
            raise AuthenticationError("invalid or revoked access token")
        if self._clock() >= record.expires_at:
            raise AuthenticationError("this access token has expired: refresh it")
        if record.resource != resource_of_path(path):
            raise AuthenticationError(f"this access token is for {record.resource}, not {resource_of_path(path)}")
        grant = self._store.get(Grant, record.grant_id)
        problem = "its grant is gone" if grant is None else self._grant_problem(grant)
        if grant is None or problem is not None:
            raise AuthenticationError(f"access token refused: {problem}")
        return Principal(tenant=grant.tenant, key_prefix=f"oauth_{grant.grant_id[:8]}", name=grant.client_name[:80],
                         permissions=frozenset(Permission(s) for s in record.scopes), user_id=grant.user_id)

    # -- grants ------------------------------------------------------------------------------------
    def open_grant(self, grant: Grant) -> None:
        self._store.put(grant)

    def grants(self, principal: Principal, user_id: str) -> list[Grant]:
        authorize(principal, Operation.MANAGE_KEYS)
        return sorted(self._store.grants_of(principal.tenant, user_id), key=lambda g: g.created_at)

    def revoke_grant(self, principal: Principal, user_id: str, grant_id: str) -> Grant:
        authorize(principal, Operation.MANAGE_KEYS)
        grant = self._store.get(Grant, grant_id)
        if grant is None or grant.tenant != principal.tenant or grant.user_id != user_id:
            raise NotFoundError(f"no grant {grant_id!r} for user {user_id!r}", subject="grant", ident=grant_id)
        self._store.mark(Grant, grant_id, "revoked_at", self._clock())
        return self._store.get(Grant, grant_id) or grant

    def _grant_problem(self, grant: Grant) -> str | None:
        if grant.revoked_at is not None:
            return "its grant was revoked"
        if self._clock() >= grant.expires_at:
            return "its grant expired"
        if grant.key_hash is not None:  # approved with an API key: that key's revocation ends the grant
            key = self._keys.get(grant.key_hash)
            if key is None or key.revoked_at is not None:
                return "the API key that approved it was revoked"
            if key.expires_at is not None and self._clock() >= key.expires_at:
                return "the API key that approved it expired"
        return None

    def _live_grant(self, grant_id: str, error: str) -> Grant:
        grant = self._store.get(Grant, grant_id)
        problem = "its grant is gone" if grant is None else self._grant_problem(grant)
        if grant is None or problem is not None:
            raise OAuthError(error, f"authorization refused: {problem}")
        return grant

    def _issue(self, grant: Grant, scopes: list[str] | None = None) -> TokenPair:
        now = self._clock()
        granted = scopes or grant.scopes
        access, refresh = ACCESS_PREFIX + secrets.token_urlsafe(32), REFRESH_PREFIX + secrets.token_urlsafe(32)
        self._store.put(AccessTokenRecord(token_hash=digest(access), grant_id=grant.grant_id, client_id=grant.client_id,
                                          scopes=granted, resource=grant.resource, expires_at=now + self.lifetimes.access))
        self._store.put(RefreshTokenRecord(token_hash=digest(refresh), grant_id=grant.grant_id, client_id=grant.client_id,
                                           scopes=granted, resource=grant.resource, expires_at=now + self.lifetimes.refresh))
        self._store.extend(Grant, grant.grant_id, now + self.lifetimes.refresh)
        return TokenPair(access, refresh, int(self.lifetimes.access.total_seconds()), granted)
