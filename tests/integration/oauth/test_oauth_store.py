"""The OAuth table on moto (template.yaml's OAuthTable): single use under races, counters, listing."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from mnemo.domain.oauth_records import AuthCode, ConnectCode, Grant, RefreshTokenRecord

NOW = datetime(2025, 6, 7, 9, 0, tzinfo=UTC)


@pytest.fixture
def store(aws):
    from mnemo.adapters.aws import client
    from mnemo.adapters.dynamodb.oauth import DynamoDbOAuthStore

    return DynamoDbOAuthStore(client("dynamodb"), aws["OAuthTable"])


def _code(ident: str) -> AuthCode:
    return AuthCode(code_hash=ident, grant_id="g1", client_id="c1", redirect_uri="http://127.0.0.1:1/cb", redirect_explicit=True,
                    code_challenge="x" * 43, scopes=["memory:read"], resource="/mcp", expires_at=NOW + timedelta(minutes=5))


def _grant(grant_id: str, user: str) -> Grant:
    return Grant(grant_id=grant_id, tenant="t", user_id=user, client_id="c1", scopes=["memory:read"], resource="/mcp",
                 via="connect_code", created_at=NOW, expires_at=NOW + timedelta(days=30))


def test_a_code_is_taken_once_even_under_a_race(store) -> None:
    store.put(_code("h1"))
    assert store.get(AuthCode, "h1") == _code("h1")  # stored and read back whole
    with ThreadPoolExecutor(8) as pool:
        taken = list(pool.map(lambda _: store.take(AuthCode, "h1"), range(8)))
    assert [t for t in taken if t is not None] == [_code("h1")]
    assert store.get(AuthCode, "h1") is None


def test_attempts_marks_and_counters(store) -> None:
    code = ConnectCode(code_id="abcd", secret_hash="s", tenant="t", user_id="u", scopes=["memory:read"], minted_by="mn_x",
                       created_at=NOW, expires_at=NOW + timedelta(minutes=10))
    store.put(code)
    assert store.bump(ConnectCode, "abcd", 0) and not store.bump(ConnectCode, "abcd", 0)  # the second saw a stale count
    assert store.get(ConnectCode, "abcd").attempts == 1
    assert store.take(ConnectCode, "abcd", attempts=0) is None  # a take that read before the bump loses
    assert store.take(ConnectCode, "abcd", attempts=1) is not None
    refresh = RefreshTokenRecord(token_hash="r1", grant_id="g1", client_id="c1", scopes=[], resource="/mcp",
                                 expires_at=NOW + timedelta(days=1))
    store.put(refresh)
    assert store.mark(RefreshTokenRecord, "r1", "used_at", NOW) and not store.mark(RefreshTokenRecord, "r1", "used_at", NOW)
    assert store.get(RefreshTokenRecord, "r1").used_at == NOW
    assert [store.admit("register#m", 3, NOW) for _ in range(5)] == [True, True, True, False, False]


def test_grants_are_listed_per_tenant_and_user(store) -> None:
    store.put(_grant("g1", "alice"))
    store.put(_grant("g2", "alice"))
    store.put(_grant("g3", "bob"))
    assert sorted(g.grant_id for g in store.grants_of("t", "alice")) == ["g1", "g2"]
    assert [g.grant_id for g in store.grants_of("t", "bob")] == ["g3"]
    store.extend(Grant, "g3", NOW + timedelta(days=60))
    assert store.get(Grant, "g3").expires_at == NOW + timedelta(days=60)
