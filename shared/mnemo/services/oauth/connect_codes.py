"""One-time connect codes: what a person types on the consent page to connect an app (docs/oauth.md).

An admin mints one for a user (CLI or REST); it is `mnc_<id>_<secret>`, 160 random bits from
`secrets` (SnapStart restores `random`'s state identically in every instance), valid for minutes,
used once. The public id counts wrong secrets against the code: a few and it is burnt."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from mnemo.domain.models import Principal
from mnemo.domain.namespace import DEFAULT
from mnemo.domain.oauth import SCOPES, user_problem
from mnemo.domain.oauth_records import ConnectCode
from mnemo.domain.timestamps import utcnow
from mnemo.errors import AuthenticationError, ValidationFailed
from mnemo.ports import OAuthStore
from mnemo.services.tenancy.permissions import Operation, authorize

PREFIX = "mnc_"
MAX_ATTEMPTS = 5  # wrong secrets for one code id before the code is burnt
MAX_MINUTES = 60
DEFAULT_MINUTES = 10


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class MintedCode:
    code: str  # shown once
    record: ConnectCode


class ConnectCodes:
    def __init__(self, store: OAuthStore, *, clock: Callable[[], datetime] = utcnow) -> None:
        self._store = store
        self._clock = clock

    def mint(self, principal: Principal, user_id: str | None = None, *, minutes: int = DEFAULT_MINUTES,
             scopes: Iterable[str] | None = None) -> MintedCode:
        """Admin keys only. `user_id`: whose memories the connected app reads and writes (default `default`)."""
        authorize(principal, Operation.MANAGE_KEYS)
        if not 1 <= minutes <= MAX_MINUTES:
            raise ValidationFailed(f"minutes: must be between 1 and {MAX_MINUTES}")
        chosen = list(SCOPES) if scopes is None else sorted(set(scopes))
        if not chosen or any(s not in SCOPES for s in chosen):
            raise ValidationFailed(f"scopes: a non-empty subset of {list(SCOPES)}; got {chosen}")
        user = (user_id or DEFAULT).strip()
        if user_problem(user) is not None:
            raise ValidationFailed("user_id: 1-128 letters, digits or _ . : @ -")
        code_id, secret = secrets.token_hex(4), secrets.token_urlsafe(20)
        now = self._clock()
        record = ConnectCode(code_id=code_id, secret_hash=digest(secret), tenant=principal.tenant, user_id=user,
                             scopes=[s for s in SCOPES if s in chosen], minted_by=principal.key_prefix,
                             created_at=now, expires_at=now + timedelta(minutes=minutes))
        self._store.put(record)
        return MintedCode(code=f"{PREFIX}{code_id}_{secret}", record=record)

    def check(self, code: str) -> ConnectCode:
        """The live code this is, or AuthenticationError (a wrong secret counts against its id)."""
        code_id, _, secret = code.strip().removeprefix(PREFIX).partition("_")
        record = self._store.get(ConnectCode, code_id) if code_id and secret else None
        if record is None or self._clock() >= record.expires_at or record.attempts >= MAX_ATTEMPTS:
            raise AuthenticationError("this connect code is unknown, used or expired: ask for a new one")
        if not hmac.compare_digest(record.secret_hash, digest(secret)):
            self._store.bump(ConnectCode, code_id, record.attempts)
            raise AuthenticationError("wrong connect code")
        return record

    def consume(self, record: ConnectCode) -> bool:
        """Use it up: True for exactly one of any number of concurrent consumers."""
        return self._store.take(ConnectCode, record.code_id, attempts=record.attempts) is not None
