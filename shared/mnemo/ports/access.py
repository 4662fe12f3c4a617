"""Access: API keys, tenants and their counters, the OAuth store and client metadata."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from mnemo.domain.oauth_records import Grant, OAuthRecord
from mnemo.domain.tenancy import Counter, Tenant, TenantStatus


class ApiKeyRecord(BaseModel):
    """A stored API key: only the SHA-256 of the secret is kept."""

    key_hash: str
    prefix: str
    tenant: str
    name: str
    scopes: list[str]
    created_at: datetime
    revoked_at: datetime | None = None
    user_id: str | None = None  # bound: the key reads and writes this user's memories only
    expires_at: datetime | None = None
    last_used_at: datetime | None = None  # written at most once a minute per key (KeyService.TOUCH_EVERY)


class KeyStore(Protocol):
    def put(self, record: ApiKeyRecord) -> None: ...

    def get(self, key_hash: str) -> ApiKeyRecord | None: ...

    def list(self, tenant: str) -> list[ApiKeyRecord]: ...

    def revoke(self, tenant: str, prefix: str, at: datetime) -> ApiKeyRecord | None: ...

    def touch(self, key_hash: str, at: datetime, before: datetime) -> None:
        """Set `last_used_at = at` unless a use at or after `before` is already recorded (a conditional
        write: many warm instances still record a key's use at most once a minute)."""


class TenantStore(Protocol):
    """Tenant records and their monthly counters (docs/tenancy.md)."""

    def get(self, tenant: str, month: str) -> tuple[Tenant, dict[Counter, int]]:
        """The tenant's plan (defaults when never configured) and `month`'s counters, in one read."""

    def configure(self, tenant: str, limits: dict[Counter, int | None], status: TenantStatus | None) -> Tenant:
        """Set the given limits (None: unlimited) and status; what is not given stays as it is."""

    def charge(self, tenant: str, month: str, counters: Sequence[Counter], amount: int = 1) -> Counter | TenantStatus | None:
        """Add `amount` to each counter atomically (one conditional write; a read before it when
        `amount` > 1), unless one would pass its limit or the tenant is not active: then nothing
        changes and the answer is why (the counter, or the status)."""

    def charge_units(self, tenant: str, month: str, counter: Counter, units: Sequence[str], *,
                     capped: bool) -> tuple[int, Counter | TenantStatus | None]:
        """Add one to `counter` per unit (an annotated edge's uuid) never counted before, whatever
        replays the call; `capped`: each only while the plan allows it (as `charge`), stopping at the
        first refusal. Returns how many were counted now, and why the plan refused (or None)."""


R = TypeVar("R", bound=OAuthRecord)


class OAuthStore(Protocol):
    """The authorization server's records (domain/oauth_records.py), each kind keyed by its `ident`.
    Reads are strongly consistent; a record past `expires_at` may still be returned (TTL deletes
    lazily), so the service checks expiry. Single-use steps are conditional writes."""

    def put(self, record: OAuthRecord) -> None:
        """Store a new record; ConflictError if its ident exists."""

    def get(self, kind: type[R], ident: str) -> R | None: ...

    def take(self, kind: type[R], ident: str, *, attempts: int | None = None) -> R | None:
        """Delete and return the record, or None if it was gone (or, given `attempts`, had moved past
        that count): of two concurrent takes exactly one gets it."""

    def bump(self, kind: type[OAuthRecord], ident: str, attempts: int) -> bool:
        """attempts → attempts + 1 if still `attempts` (a wrong credential); False if it moved or is gone."""

    def mark(self, kind: type[OAuthRecord], ident: str, field: str, at: datetime) -> bool:
        """Set the timestamp `field` (`used_at`, `revoked_at`) unless already set; False if it was."""

    def set_field(self, kind: type[OAuthRecord], ident: str, field: str, value: str) -> bool:
        """Overwrite a text field of an existing record (a consent request's csrf hash)."""

    def extend(self, kind: type[OAuthRecord], ident: str, expires_at: datetime) -> None:
        """Push an existing record's expiry later (a client in use stays registered)."""

    def grants_of(self, tenant: str, user_id: str) -> list[Grant]: ...

    def admit(self, counter: str, cap: int, expires_at: datetime) -> bool:
        """Count one event under `counter`; False (nothing counted) once `cap` is reached."""

    def count(self, counter: str) -> int:
        """Events counted under `counter` so far (0 if none)."""


class ClientMetadataFetcher(Protocol):
    """Fetches a Client ID Metadata Document (an https URL the operator allow-listed) as JSON.
    ValidationFailed when it is refused (address, size, redirect, shape); DependencyError when unreachable."""

    def fetch(self, url: str) -> dict[str, Any]: ...
