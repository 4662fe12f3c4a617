"""Grants and tokens without I/O (services/oauth/tokens.py over an in-memory OAuthStore): the token's
resource binding, refresh rotation and reuse detection, code redemption, the key cascade."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mnemo.domain.oauth_records import AuthCode, Grant, OAuthRecord
from mnemo.errors import AuthenticationError, ConflictError, OAuthError
from mnemo.ports import ApiKeyRecord
from mnemo.services.oauth.tokens import GrantService, Lifetimes, digest

START = datetime(2025, 6, 7, 9, 0, tzinfo=UTC)


class Memory:
    """OAuthStore's contract in memory (conditional writes under one lock), and a KeyStore's get."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], dict[str, Any]] = {}
        self.counts: dict[str, int] = {}
        self.keys: dict[str, ApiKeyRecord] = {}
        self._lock = threading.Lock()

    def put(self, record: OAuthRecord) -> None:
        with self._lock:
            if (record.KIND, record.ident) in self.items:
                raise ConflictError("exists")
            self.items[(record.KIND, record.ident)] = record.model_dump()

    def get(self, kind: Any, ident: str) -> Any:
        item = self.items.get((kind.KIND, ident))
        return kind.model_validate(item) if item is not None else None

    def take(self, kind: Any, ident: str, *, attempts: int | None = None) -> Any:
        with self._lock:
            item = self.items.get((kind.KIND, ident))
            if item is None or (attempts is not None and item.get("attempts") != attempts):
                return None
            return kind.model_validate(self.items.pop((kind.KIND, ident)))

    def bump(self, kind: Any, ident: str, attempts: int) -> bool:
        with self._lock:
            item = self.items.get((kind.KIND, ident))
            if item is None or item.get("attempts") != attempts:
                return False
            item["attempts"] = attempts + 1
            return True

    def mark(self, kind: Any, ident: str, field: str, at: datetime) -> bool:
        with self._lock:
            item = self.items.get((kind.KIND, ident))
            if item is None or item.get(field) is not None:
                return False
            item[field] = at
            return True

    def set_field(self, kind: Any, ident: str, field: str, value: str) -> bool:
        return self.mark(kind, ident, field, value)  # type: ignore[arg-type]

    def extend(self, kind: Any, ident: str, expires_at: datetime) -> None:
        self.items[(kind.KIND, ident)]["expires_at"] = expires_at

    def grants_of(self, tenant: str, user_id: str) -> list[Grant]:
        return [Grant.model_validate(i) for (k, _), i in self.items.items() if k == "grant" and i["tenant"] == tenant
                and i["user_id"] == user_id]

    def admit(self, counter: str, cap: int, expires_at: datetime) -> bool:
        with self._lock:
            if self.counts.get(counter, 0) >= cap:
                return False
            self.counts[counter] = self.counts.get(counter, 0) + 1
            return True

    def count(self, counter: str) -> int:
        return self.counts.get(counter, 0)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


class KeyReads:
    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def get(self, key_hash: str) -> ApiKeyRecord | None:
        return self._memory.keys.get(key_hash)


def setup(*, key_hash: str | None = None, resource: str = "/mcp/r3") -> tuple[GrantService, Memory, Clock, str]:
    memory, clock = Memory(), Clock()
    service = GrantService(memory, KeyReads(memory), Lifetimes(), clock=clock)  # type: ignore[arg-type]
    service.open_grant(Grant(grant_id="g1", tenant="t", user_id="alice", client_id="c1", scopes=["memory:read"],
                             resource=resource, via="api_key" if key_hash else "connect_code", key_hash=key_hash,
                             created_at=START, expires_at=START + timedelta(days=30)))
    memory.put(AuthCode(code_hash=digest("code"), grant_id="g1", client_id="c1", redirect_uri="http://127.0.0.1/cb",
                        redirect_explicit=True, code_challenge="x", scopes=["memory:read"], resource=resource,
                        expires_at=START + timedelta(minutes=5)))
    return service, memory, clock, "code"


@pytest.mark.parametrize(("bound", "path", "accepted"), [
    ("/mcp/r3", "/mcp/r3", True), ("/mcp/r3", "/mcp/r3/", True), ("/mcp/r3", "/mcp/facts", False),
    ("/mcp/r3", "/mcp", False), ("/mcp", "/mcp", True), ("/mcp", "/api/mcp", True), ("/mcp", "/mcp/r3", False),
])
def test_an_access_token_is_bound_to_its_resource(bound: str, path: str, accepted: bool) -> None:
    service, _, _, code = setup(resource=bound)
    pair = service.redeem("c1", code)
    if accepted:
        principal = service.verify(pair.access_token, path)
        assert (principal.tenant, principal.user_id, sorted(principal.permissions)) == ("t", "alice", ["memory:read"])
    else:
        with pytest.raises(AuthenticationError, match=f"for {bound}, not"):
            service.verify(pair.access_token, path)


def test_refresh_rotates_and_a_reused_refresh_token_revokes_the_grant() -> None:
    service, memory, clock, code = setup()
    first = service.redeem("c1", code)
    clock.now += timedelta(hours=2)
    with pytest.raises(AuthenticationError, match="expired"):
        service.verify(first.access_token, "/mcp/r3")
    second = service.rotate("c1", first.refresh_token, ["memory:read"])
    assert service.verify(second.access_token, "/mcp/r3").user_id == "alice"  # rotated: works
    with pytest.raises(OAuthError, match="already used"):
        service.rotate("c1", first.refresh_token, ["memory:read"])
    assert memory.get(Grant, "g1").revoked_at is not None
    with pytest.raises(AuthenticationError, match="revoked"):
        service.verify(second.access_token, "/mcp/r3")
    assert service.refresh_token("c1", second.refresh_token) is None


def test_a_code_is_redeemed_once_and_its_replay_revokes_the_grant() -> None:
    service, _, _, code = setup()
    pair = service.redeem("c1", code)
    with pytest.raises(OAuthError, match="already used"):
        service.redeem("c1", code)
    with pytest.raises(AuthenticationError, match="revoked"):
        service.verify(pair.access_token, "/mcp/r3")
    other, _, _, code2 = setup()
    with pytest.raises(OAuthError, match="unknown or expired"):
        other.redeem("another-client", code2)  # a code is its client's only
    assert other.redeem("c1", code2).access_token.startswith("mna_")  # positive control


def test_revoking_the_approving_key_ends_the_grant() -> None:
    service, memory, _, code = setup(key_hash="kh")
    memory.keys["kh"] = ApiKeyRecord(key_hash="kh", prefix="mn_x", tenant="t", name="k", scopes=["memory:read"],
                                     created_at=START)
    pair = service.redeem("c1", code)
    assert service.verify(pair.access_token, "/mcp/r3").tenant == "t"
    memory.keys["kh"] = memory.keys["kh"].model_copy(update={"revoked_at": START})
    with pytest.raises(AuthenticationError, match="API key that approved it was revoked"):
        service.verify(pair.access_token, "/mcp/r3")


def test_revocation_by_either_token_ends_the_grant() -> None:
    for which in ("access_token", "refresh_token"):
        service, _, _, code = setup()
        pair = service.redeem("c1", code)
        service.revoke(getattr(pair, which))
        with pytest.raises(AuthenticationError, match="revoked"):
            service.verify(pair.access_token, "/mcp/r3")
    service.revoke("mna_unknown")  # an unknown token is no error (RFC 7009)
