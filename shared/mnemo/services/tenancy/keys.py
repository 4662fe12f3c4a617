"""API keys: create (the secret is shown once), authenticate, list, revoke.

Only the SHA-256 of a secret is stored. A secret looks like `mn_<prefix>_<random>`; the prefix is
public (it names the key in lists, logs and authorship) and the random part carries 256 bits.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel

from mnemo.domain.models import Permission, Principal
from mnemo.domain.timestamps import utcnow
from mnemo.errors import AuthenticationError, MnemoError, NotFoundError, ValidationFailed
from mnemo.ports import ApiKeyRecord, KeyStore
from mnemo.services.tenancy.permissions import Operation, authorize

_CACHE_SECONDS = 60.0  # a warm function re-reads a key at most once a minute; revocation lands within it
TOUCH_EVERY = timedelta(minutes=1)  # a key's last-used time is written at most this often
# Bounded, least recently used out first. Unknown keys have their own small cache, so a flood of
# wrong keys (anyone can send them) costs bounded memory and never evicts the keys in real use.
KNOWN_KEYS_CACHED = 1024
logger = logging.getLogger(__name__)
UNKNOWN_KEYS_CACHED = 256


class CreatedKey(BaseModel):
    secret: str
    record: ApiKeyRecord


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def prefix_of(secret: str) -> str:
    """`mn_ab12cd34_...` → `mn_ab12cd34`; keys of another shape use their first 11 characters."""
    parts = secret.split("_")
    return "_".join(parts[:2]) if len(parts) >= 3 and parts[0] == "mn" else secret[:11]


class KeyService:
    def __init__(self, store: KeyStore, *, clock: Callable[[], datetime] = utcnow) -> None:
        self._store = store
        self._clock = clock
        self._known: OrderedDict[str, tuple[float, Principal]] = OrderedDict()
        self._unknown: OrderedDict[str, float] = OrderedDict()
        self._expiry: OrderedDict[str, datetime | None] = OrderedDict()
        self._touched: OrderedDict[str, datetime] = OrderedDict()
        self._lock = threading.Lock()

    def create(self, tenant: str, name: str, scopes: Iterable[str], secret: str | None = None, *,
               user_id: str | None = None, expires_at: datetime | None = None) -> CreatedKey:
        """`user_id` binds the key to one user's memories (it cannot then hold `admin`, which reads
        every user); `expires_at` must be in the future."""
        chosen = sorted(set(scopes))
        unknown = [s for s in chosen if s not in {m.value for m in Permission}]
        if unknown or not chosen:
            raise ValidationFailed(f"scopes must be a non-empty subset of {[m.value for m in Permission]}; got {chosen}")
        if not tenant.strip():
            raise ValidationFailed("tenant must be non-empty")
        if user_id is not None and Permission.ADMIN.value in chosen:
            raise ValidationFailed("scopes: a key bound to a user_id cannot hold 'admin' (admin reads every user)")
        if expires_at is not None and expires_at <= self._clock():
            raise ValidationFailed("expires_at: must be in the future")
        secret = secret or f"mn_{secrets.token_hex(4)}_{secrets.token_urlsafe(32)}"
        if len(secret) < 20:
            raise ValidationFailed("an API key secret must be at least 20 characters")
        record = ApiKeyRecord(
            key_hash=hash_secret(secret),
            prefix=prefix_of(secret),
            tenant=tenant,
            name=name,
            scopes=chosen,
            created_at=self._clock(),
            user_id=user_id,
            expires_at=expires_at,
        )
        self._store.put(record)
        return CreatedKey(secret=secret, record=record)

    def ensure(self, tenant: str, name: str, scopes: Iterable[str], secret: str) -> ApiKeyRecord:
        """Register this exact secret unless it already exists (local mode's MNEMO_API_KEY)."""
        existing = self._store.get(hash_secret(secret))
        return existing if existing else self.create(tenant, name, scopes, secret).record

    def authenticate(self, secret: str | None) -> Principal:
        if not secret:
            raise AuthenticationError("missing API key: send Authorization: Bearer <key>")
        key_hash = hash_secret(secret)
        now = time.monotonic()
        hit, principal = self._cached(key_hash, now)
        if not hit:
            record = self._store.get(key_hash)
            principal = None
            if record and record.revoked_at is None:
                principal = Principal(
                    tenant=record.tenant,
                    key_prefix=record.prefix,
                    name=record.name,
                    permissions=frozenset(Permission(s) for s in record.scopes),
                    user_id=record.user_id,
                )
                self._expiry[key_hash] = record.expires_at
                while len(self._expiry) > KNOWN_KEYS_CACHED:
                    self._expiry.popitem(last=False)
            self._remember(key_hash, now, principal)
        if principal is None:
            raise AuthenticationError("invalid or revoked API key")
        at = self._clock()
        expires = self._expiry.get(key_hash)
        if expires is not None and at >= expires:
            raise AuthenticationError("this API key has expired")
        self._touch(key_hash, at)
        return principal

    def _touch(self, key_hash: str, at: datetime) -> None:
        """Record the key's use, at most once a minute per key and instance (and, by the store's
        condition, per key across instances); a failed write never fails the request."""
        with self._lock:
            last = self._touched.get(key_hash)
            if last is not None and at - last < TOUCH_EVERY:
                return
            self._touched[key_hash] = at
            while len(self._touched) > KNOWN_KEYS_CACHED:
                self._touched.popitem(last=False)
        try:
            self._store.touch(key_hash, at, at - TOUCH_EVERY)
        except MnemoError:
            logger.warning("could not record a key's last use", exc_info=True)

    # -- key admin over REST: the caller's tenant, admin keys only ----------------------------
    def issue(self, principal: Principal, name: str, scopes: Iterable[str], *, user_id: str | None = None,
              expires_at: datetime | None = None) -> CreatedKey:
        authorize(principal, Operation.MANAGE_KEYS)
        return self.create(principal.tenant, name, scopes, user_id=user_id, expires_at=expires_at)

    def listing(self, principal: Principal) -> list[ApiKeyRecord]:
        authorize(principal, Operation.MANAGE_KEYS)
        return self.list(principal.tenant)

    def withdraw(self, principal: Principal, prefix: str) -> ApiKeyRecord:
        authorize(principal, Operation.MANAGE_KEYS)
        return self.revoke(principal.tenant, prefix)

    def list(self, tenant: str) -> list[ApiKeyRecord]:
        return sorted(self._store.list(tenant), key=lambda r: r.created_at)

    def revoke(self, tenant: str, prefix: str) -> ApiKeyRecord:
        record = self._store.revoke(tenant, prefix, self._clock())
        if record is None:
            raise NotFoundError(f"no key with prefix {prefix!r} in tenant {tenant!r}")
        with self._lock:
            self._known.pop(record.key_hash, None)
        return record

    def cache_sizes(self) -> tuple[int, int]:
        """(known, unknown) entries held: both bounded."""
        with self._lock:
            return len(self._known), len(self._unknown)

    def _cached(self, key_hash: str, now: float) -> tuple[bool, Principal | None]:
        """(hit, answer): a fresh cached principal, or None for a key known to be bad."""
        with self._lock:
            if (known := self._known.get(key_hash)) and now - known[0] < _CACHE_SECONDS:
                self._known.move_to_end(key_hash)
                return True, known[1]
            if (seen := self._unknown.get(key_hash)) is not None and now - seen < _CACHE_SECONDS:
                return True, None
        return False, None

    def _remember(self, key_hash: str, now: float, principal: Principal | None) -> None:
        with self._lock:
            cache: OrderedDict[str, Any] = self._known if principal is not None else self._unknown
            cache[key_hash] = (now, principal) if principal is not None else now
            cache.move_to_end(key_hash)
            while len(cache) > (KNOWN_KEYS_CACHED if principal is not None else UNKNOWN_KEYS_CACHED):
                cache.popitem(last=False)
