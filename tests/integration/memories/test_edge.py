"""Issue 16, items 7, 8 and 10: what happens before a route runs — authentication first, bounded
bodies and caches, the envelope for every error (503s without AWS codes, with Retry-After), CORS
that agrees with the MCP origin check, and a plain message for an unsupported protocol version."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from mnemo.services.tenancy import keys as key_service
from mnemo.surfaces.gate import MAX_REST_BODY_BYTES
from tests.integration.conftest import MCP_HEADERS, auth

JSON = {"content-type": "application/json"}


def test_authentication_comes_before_the_body_is_parsed(http) -> None:
    no_key = http.post("/v1/memories", headers=JSON, content=b"{bad json")
    assert no_key.status_code == 401 and no_key.json()["error"]["code"] == "unauthenticated"
    assert "resource_metadata" in no_key.headers["www-authenticate"]
    wrong_key = http.post("/v1/memories", headers={**JSON, **auth("mn_wrong_0123456789abcdefghijklmnop")}, content=b"{bad")
    assert wrong_key.status_code == 401
    # Positive control: the same bad body with a valid key reaches the parser.
    assert http.post("/v1/memories", headers={**JSON, **auth()}, content=b"{bad json").json() == {
        "error": {"code": "validation_error", "message": "body: is not valid JSON"}}


def test_rest_bodies_are_capped_declared_or_streamed(http) -> None:
    huge = b'{"content": "' + b"x" * (MAX_REST_BODY_BYTES + 10) + b'"}'
    declared = http.post("/v1/memories", headers={**JSON, **auth()}, content=huge)
    assert declared.status_code == 413
    assert declared.json() == {"error": {"code": "payload_too_large", "message": f"body: must be at most {MAX_REST_BODY_BYTES} bytes"}}

    def chunks():  # no content-length: a chunked upload is counted as it arrives
        yield b'{"content": "'
        for _ in range(40):
            yield b"y" * 10_000
        yield b'"}'

    streamed = http.post("/v1/memories", headers={**JSON, **auth()}, content=chunks())
    assert streamed.status_code == 413
    unauthenticated = http.post("/v1/memories", headers=JSON, content=huge)
    assert unauthenticated.status_code == 401  # no key: refused before the size is even looked at
    # Positive control: a large but valid body (8 KB of escaped text, 16 KB metadata) is accepted.
    ok = http.post("/v1/memories", headers=auth(), json={"content": "é" * 4000, "metadata": {"m": "z" * 16_000}})
    assert ok.status_code == 201, ok.text


def test_the_wrong_key_cache_is_bounded_and_never_evicts_real_keys(container, monkeypatch) -> None:
    from tests.conftest import TEST_KEY

    monkeypatch.setattr(key_service, "UNKNOWN_KEYS_CACHED", 50)
    service = container.keys
    service.ensure("local", "test", ["admin"], TEST_KEY)
    assert service.authenticate(TEST_KEY).tenant == "local"
    for i in range(500):
        try:
            service.authenticate(f"mn_wrong{i:04d}_0123456789abcdefghijklmnop")
        except Exception as exc:
            assert type(exc).__name__ == "AuthenticationError"
        else:
            raise AssertionError("a wrong key was accepted")
    known, unknown = service.cache_sizes()
    assert unknown == 50 and known == 1
    calls = []
    monkeypatch.setattr(service._store, "get", lambda h: calls.append(h))  # the real key is still served from cache
    assert service.authenticate(TEST_KEY).tenant == "local" and calls == []


def test_503_carries_retry_after_and_no_aws_error_code(http, container) -> None:
    store = container.store
    error = ClientError({"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "Rate exceeded"}}, "Query")

    def throttled(**kwargs):
        raise error

    patch = pytest.MonkeyPatch()
    patch.setattr(store._db, "query", throttled)
    response = http.get("/v1/memories", headers=auth())
    assert response.status_code == 503 and response.headers["retry-after"] == "1"
    assert response.json() == {"error": {"code": "dependency_error",
                                         "message": "memory store is busy (throttled); retry after a short wait"}}
    assert "Exception" not in response.text and "Provisioned" not in response.text
    patch.undo()
    assert http.get("/v1/memories", headers=auth()).status_code == 200  # positive control


def test_cors_preflight_agrees_with_the_mcp_origin_check(http) -> None:
    preflight = {"access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type"}
    evil = http.options("/mcp", headers={"origin": "https://evil.example", **preflight})
    assert evil.status_code == 400 and "access-control-allow-origin" not in evil.headers
    request = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                        headers={**MCP_HEADERS, **auth(), "origin": "https://evil.example", "mcp-protocol-version": "2025-06-18"})
    assert request.status_code == 403  # what the preflight now predicts
    local = http.options("/mcp", headers={"origin": "http://localhost:6274", **preflight})
    assert local.status_code == 200 and local.headers["access-control-allow-origin"] == "http://localhost:6274"
    served = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                       headers={**MCP_HEADERS, **auth(), "origin": "http://localhost:6274", "mcp-protocol-version": "2025-06-18"})
    assert served.status_code == 200 and served.headers["access-control-allow-origin"] == "http://localhost:6274"


def test_an_unsupported_mcp_protocol_version_is_named(http) -> None:
    response = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                         headers={**MCP_HEADERS, **auth(), "mcp-protocol-version": "1999-01-01"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "unsupported_protocol_version"
    assert error["message"].startswith("MCP-Protocol-Version: '1999-01-01' is not supported; this server speaks 2024-11-05")
    ok = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                   headers={**MCP_HEADERS, **auth(), "mcp-protocol-version": "2025-06-18"})
    assert ok.status_code == 200 and ok.json()["result"]["tools"]


def test_hostile_json_shapes_answer_in_the_envelope(http) -> None:
    """Item 8: what used to answer FastAPI's {"detail": ...} or a 500."""
    headers = {**JSON, **auth()}
    cases = [
        (http.post("/v1/memories", headers=headers, content=b"[" * 100_000 + b"]" * 100_000),
         "body: must be nested at most 64 levels deep (objects and arrays)"),  # valid JSON, too deep (issue 53)
        (http.post("/v1/memories", headers=headers, content=b'{"content": "x", "metadata": {"n": ' + b"9" * 5000 + b"}}"),
         "body: is not valid JSON"),
        (http.get("/v1/memories", headers=auth(), params={"limit": "9" * 5000}), "limit: is too large"),
    ]
    for response, message in cases:
        assert (response.status_code, response.json()) == (400, {"error": {"code": "validation_error", "message": message}})
