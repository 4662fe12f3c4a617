"""The authorization server's front half (docs/oauth.md): dynamic registration of public clients
and the consent a person gives on Mnemo's page, with a connect code or an API key.

The SDK's handlers parse the requests; every decision is here: which redirect URIs a client may
register and use, which resource and scopes a request may ask for, who the person is, and what the
grant holds (the intersection of what was asked and what the credential holds, never `admin`)."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from mnemo.domain.models import Permission
from mnemo.domain.namespace import DEFAULT
from mnemo.domain.oauth import (
    SCOPES,
    canonical_resource,
    cimd_allowed,
    granted_scopes,
    redirect_matches,
    redirect_problem,
    user_problem,
)
from mnemo.domain.oauth_records import AuthCode, ConnectCode, ConsentRequest, Grant, RegisteredClient
from mnemo.domain.timestamps import utcnow
from mnemo.errors import (
    AuthenticationError,
    ConflictError,
    ForbiddenError,
    OAuthError,
    RateLimitedError,
    ValidationFailed,
)
from mnemo.ports import ClientMetadataFetcher, OAuthStore
from mnemo.services.oauth.connect_codes import PREFIX as CONNECT_PREFIX
from mnemo.services.oauth.connect_codes import ConnectCodes
from mnemo.services.oauth.tokens import GrantService, digest
from mnemo.services.tenancy.keys import KeyService, hash_secret

MAX_REDIRECT_URIS = 10
MAX_NAME = 200
MAX_CONSENT_ATTEMPTS = 5  # wrong credentials on one consent page before it must be started again
# Wrong credentials per registered client per hour, across its consent pages: a client cannot start
# page after page to guess. Not for metadata-document clients, which every user of an app shares (one
# person could lock everyone out); pages, codes and the route throttle bound those.
CLIENT_FAILURES_PER_HOUR = 20
CIMD_CACHE = timedelta(hours=1)  # a metadata document is fetched again after this
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Consent:
    """What the consent page shows: the request, its client, and the CSRF token for the form."""

    request: ConsentRequest
    client: RegisteredClient
    csrf: str


def _csrf_hash(token: str) -> str:
    return hashlib.sha256(b"consent:" + token.encode()).hexdigest()


def with_params(uri: str, **params: str | None) -> str:
    parts = urlsplit(uri)
    extra = urlencode({k: v for k, v in params.items() if v is not None})
    return urlunsplit(parts._replace(query=f"{parts.query}&{extra}" if parts.query else extra))


class AuthorizationServer:
    def __init__(self, store: OAuthStore, keys: KeyService, codes: ConnectCodes, grants: GrantService, *,
                 issuer: str, profiles: Sequence[str], registrations_per_minute: int,
                 cimd_allow: Sequence[str] = (), fetcher: ClientMetadataFetcher | None = None,
                 clock: Callable[[], datetime] = utcnow) -> None:
        self._store = store
        self._keys = keys
        self._codes = codes
        self.grants = grants
        self.issuer = issuer
        self._profiles = list(profiles)
        self._per_minute = registrations_per_minute
        self.cimd_allow = list(cimd_allow)
        self._fetcher = fetcher
        self.client_failures_per_hour = CLIENT_FAILURES_PER_HOUR
        self._clock = clock

    # -- registration (RFC 7591, public clients only) ------------------------------------------
    def admit_registration(self) -> None:
        """One registration counted against the deployment's per-minute cap (a flood's bound)."""
        now = self._clock()
        if not self._store.admit(f"register#{now:%Y%m%d%H%M}", self._per_minute, now + timedelta(minutes=2)):
            raise RateLimitedError(f"too many client registrations (at most {self._per_minute} a minute); retry shortly",
                                   retry_after=60 - now.second)

    def register(self, metadata: dict[str, Any], client_id: str | None = None) -> RegisteredClient:
        """A new public client (`token_endpoint_auth_method` none), unused ones expiring with the
        refresh lifetime. ValidationFailed names what is wrong."""
        uris = [str(u) for u in metadata.get("redirect_uris") or []]
        if not 1 <= len(uris) <= MAX_REDIRECT_URIS:
            raise ValidationFailed(f"redirect_uris: between 1 and {MAX_REDIRECT_URIS} URIs")
        for uri in uris:
            if (problem := redirect_problem(uri)) is not None:
                raise ValidationFailed(problem)
        if metadata.get("token_endpoint_auth_method") not in (None, "none") and client_id is not None:
            raise ValidationFailed("token_endpoint_auth_method: a metadata document client is public (none)")
        for field in ("client_name", "client_uri", "logo_uri", "tos_uri", "policy_uri", "software_id", "software_version"):
            if len(str(metadata.get(field) or "")) > MAX_NAME:
                raise ValidationFailed(f"{field}: at most {MAX_NAME} characters")
        now = self._clock()
        kept = {k: metadata[k] for k in ("client_name", "client_uri", "logo_uri", "software_id", "software_version")
                if metadata.get(k)}
        client = RegisteredClient(client_id=client_id or "mcl_" + secrets.token_urlsafe(18), created_at=now,
                                  expires_at=now + (CIMD_CACHE if client_id else self.grants.lifetimes.refresh),
                                  metadata={**kept, "redirect_uris": uris, "scope": " ".join(SCOPES)})
        self._store.put(client)
        return client

    def client(self, client_id: str) -> RegisteredClient | None:
        if client_id.startswith("https://"):
            return self._metadata_client(client_id)
        record = self._store.get(RegisteredClient, client_id)
        return record if record is not None and self._clock() < record.expires_at else None

    def _metadata_client(self, url: str) -> RegisteredClient | None:
        """A Client ID Metadata Document client: only from the operator's allow-list, fetched with
        the SSRF guards of the fetcher, kept `CIMD_CACHE`; None when refused (the reason is logged)."""
        if self._fetcher is None or not cimd_allowed(url, self.cimd_allow):
            return None
        cached = self._store.get(RegisteredClient, url)
        if cached is not None and self._clock() < cached.expires_at:
            return cached
        try:
            document = self._fetcher.fetch(url)
            if document.get("client_id") != url:
                raise ValidationFailed("client metadata: its client_id is not the URL it was fetched from")
            if cached is not None:
                self._store.take(RegisteredClient, url)
            return self.register(document, client_id=url)
        except (ValidationFailed, ConflictError) as exc:
            logger.warning("client metadata document refused: %s", exc.message)
            return None

    # -- authorize: a consent request, then the page ----------------------------------------------
    def begin(self, client: RegisteredClient, redirect_uri: str, explicit: bool, state: str | None,
              code_challenge: str, scopes: Iterable[str] | None, resource: str | None) -> ConsentRequest:
        if not redirect_matches(client.metadata["redirect_uris"], redirect_uri):
            raise OAuthError("invalid_request", "redirect_uri is not registered for this client")
        path = canonical_resource(self.issuer, resource, self._profiles)
        if path is None:
            raise OAuthError("invalid_target", f"resource: not an MCP server of {self.issuer} (e.g. {self.issuer}/mcp)")
        asked = None if scopes is None else list(scopes)
        if asked is not None and any(s not in SCOPES for s in asked):
            raise OAuthError("invalid_scope", f"scope: each of {' '.join(SCOPES)}")
        now = self._clock()
        request = ConsentRequest(request_id=secrets.token_urlsafe(18), client_id=client.client_id,
                                 redirect_uri=redirect_uri, redirect_explicit=explicit, state=state,
                                 code_challenge=code_challenge, scopes=asked, resource=path,
                                 expires_at=now + self.grants.lifetimes.consent)
        self._store.put(request)
        return request

    def show(self, request_id: str) -> Consent:
        """The page for a live request, with a fresh CSRF token (the last shown page's is the valid one)."""
        request, client = self._live(request_id)
        csrf = secrets.token_urlsafe(32)
        self._store.set_field(ConsentRequest, request_id, "csrf_hash", _csrf_hash(csrf))
        return Consent(request, client, csrf)

    def decide(self, request_id: str, csrf: str, *, approve: bool, credential: str = "",
               user_id: str | None = None) -> str:
        """Where the browser goes next: the client's redirect URI with a code (or an error), `state`
        and `iss` (RFC 9207). A wrong credential raises AuthenticationError (the page says so);
        a forged, replayed or expired form raises ForbiddenError/OAuthError."""
        request, client = self._live(request_id)
        if not request.csrf_hash or not hmac.compare_digest(request.csrf_hash, _csrf_hash(csrf)):
            raise ForbiddenError("this form is not the one shown for this request: reload the page")
        if not approve:
            self._take(request)
            return self._back(request, error="access_denied", error_description="the person declined")
        failures = f"consent-fail#{client.client_id}#{self._clock():%Y%m%d%H}"
        counted = not client.client_id.startswith("https://")
        if counted and self._store.count(failures) >= self.client_failures_per_hour:
            raise OAuthError("access_denied", "too many wrong attempts for this app in the last hour: try again later")
        try:
            tenant, user, held, key_hash, approver, code = self._who(credential.strip(), user_id)
        except AuthenticationError:
            if counted:
                self._store.admit(failures, 1_000_000, self._clock() + timedelta(hours=2))
            if not self._store.bump(ConsentRequest, request_id, request.attempts) or \
                    request.attempts + 1 >= MAX_CONSENT_ATTEMPTS:
                self._store.take(ConsentRequest, request_id)
                raise OAuthError("access_denied", "too many wrong attempts: start again from the app") from None
            raise
        scopes = granted_scopes(request.scopes, held)
        self._take(request)
        if not scopes:
            return self._back(request, error="invalid_scope", error_description="the credential holds none of the scopes asked")
        if code is not None and not self._codes.consume(code):
            raise OAuthError("access_denied", "this connect code was just used: ask for a new one")
        now = self._clock()
        grant = Grant(grant_id=secrets.token_hex(16), tenant=tenant, user_id=user, client_id=client.client_id,
                      client_name=str(client.metadata.get("client_name", ""))[:MAX_NAME], scopes=list(scopes),
                      resource=request.resource, via="api_key" if key_hash else "connect_code", key_hash=key_hash,
                      key_prefix=approver, created_at=now, expires_at=now + self.grants.lifetimes.refresh)
        self.grants.open_grant(grant)
        if not client.client_id.startswith("https://"):  # a metadata document is fetched again, not kept alive
            self._store.extend(RegisteredClient, client.client_id, now + self.grants.lifetimes.refresh)
        raw = secrets.token_urlsafe(32)
        self._store.put(AuthCode(code_hash=digest(raw), grant_id=grant.grant_id, client_id=client.client_id,
                                 redirect_uri=request.redirect_uri, redirect_explicit=request.redirect_explicit,
                                 code_challenge=request.code_challenge, scopes=list(scopes), resource=request.resource,
                                 expires_at=now + self.grants.lifetimes.code))
        return self._back(request, code=raw)

    def _who(self, credential: str, user_id: str | None) -> tuple[str, str, list[str], str | None, str, ConnectCode | None]:
        """(tenant, user, scopes held, API key hash or None, approver's prefix, connect code or None)."""
        if not credential:
            raise AuthenticationError("enter a connect code or an API key")
        if credential.startswith(CONNECT_PREFIX):
            code = self._codes.check(credential)
            return code.tenant, code.user_id, code.scopes, None, f"{CONNECT_PREFIX}{code.code_id}", code
        principal = self._keys.authenticate(credential)
        named = (user_id or "").strip() or None
        if principal.user_id is not None:
            user = principal.confine(named) or principal.user_id
        elif named is not None and Permission.ADMIN not in principal.permissions:
            raise ForbiddenError("user: only an admin key may connect an app for a named user")
        elif named is not None and (problem := user_problem(named)) is not None:
            raise ForbiddenError(problem)
        else:
            user = named or DEFAULT
        held = [p.value for p in principal.permissions]
        return principal.tenant, user, held, hash_secret(credential), principal.key_prefix, None

    def _live(self, request_id: str) -> tuple[ConsentRequest, RegisteredClient]:
        request = self._store.get(ConsentRequest, request_id) if request_id else None
        client = self.client(request.client_id) if request is not None else None
        if request is None or client is None or self._clock() >= request.expires_at:
            raise OAuthError("invalid_request", "this consent page has expired or was already used: start again from the app")
        return request, client

    def _take(self, request: ConsentRequest) -> None:
        """Use the request up, once: a replayed form (the same page posted twice) is refused."""
        if self._store.take(ConsentRequest, request.request_id, attempts=request.attempts) is None:
            raise OAuthError("invalid_request", "this consent page was already used: start again from the app")

    def _back(self, request: ConsentRequest, **params: str | None) -> str:
        return with_params(request.redirect_uri, **params, state=request.state, iss=self.issuer)
