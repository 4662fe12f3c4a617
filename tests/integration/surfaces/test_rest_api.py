"""The REST API in process: same services and validation as MCP, JSON errors with a stable code."""

from __future__ import annotations

from tests.integration.conftest import auth


def test_health_and_openapi(http) -> None:
    assert http.get("/healthz").json()["status"] == "ok"
    paths = http.get("/openapi.json").json()["paths"]
    assert {"/v1/memories", "/v1/memories/{memory_id}", "/v1/memories/search", "/v1/status"} <= set(paths)


def test_create_get_patch_delete(http) -> None:
    created = http.post("/v1/memories", headers=auth(), json={
        "content": "I prefer dark roast coffee", "user_id": "alice", "metadata": {"dia_id": "D1:3", "score": 1.5},
        "captured_at": "2023-05-08T13:56:00Z", "as_user": True})
    assert created.status_code == 201, created.text
    memory = created.json()
    assert memory["metadata"] == {"dia_id": "D1:3", "score": 1.5}
    assert memory["user_id"] == "alice" and memory["author"] == "user" and memory["enrichment"]["state"] == "pending"
    assert http.get(f"/v1/memories/{memory['id']}", headers=auth()).json()["content"] == "I prefer dark roast coffee"
    patched = http.patch(f"/v1/memories/{memory['id']}", headers=auth(), json={"content": "I prefer light roast"})
    assert patched.json()["version"] == 2 and patched.json()["content"] == "I prefer light roast"
    completed = http.patch(f"/v1/memories/{memory['id']}", headers=auth(), json={"edit_request": "mark complete"})
    assert completed.json()["status"] == "completed"
    deleted = http.delete(f"/v1/memories/{memory['id']}", headers=auth())
    assert deleted.json()["status"] == "archived"
    history = http.get(f"/v1/memories/{memory['id']}/history", headers=auth()).json()
    assert [h["action"] for h in history] == ["created", "edited", "completed", "archived"]


def test_browse_with_filters_and_cursor(http) -> None:
    for i in range(3):
        http.post("/v1/memories", headers=auth(), json={"content": f"memo {i}", "user_id": "bob"})
    first = http.get("/v1/memories", headers=auth(), params={"user_id": "bob", "limit": 2}).json()
    assert [m["content"] for m in first["results"]] == ["memo 2", "memo 1"]
    second = http.get("/v1/memories", headers=auth(), params={"user_id": "bob", "limit": 2, **first["next_cursor"]}).json()
    assert [m["content"] for m in second["results"]] == ["memo 0"] and second["next_cursor"] is None
    assert http.get("/v1/memories", headers=auth(), params={"user_id": "bob", "author": "user"}).json()["results"] == []


def test_validation_errors_are_400_with_code_and_field(http) -> None:
    cases = [
        (http.post("/v1/memories", headers=auth(), json={"content": "  "}), "content: must not be empty (after trimming whitespace)"),
        (http.post("/v1/memories", headers=auth(), json={"content": "x" * 9000}),
         "content: must be at most 8192 bytes (8 KB); it is 9000 bytes"),
        (http.post("/v1/memories", headers=auth(), json={"content": "x", "user_id": "a b"}), "user_id: must match ^[A-Za-z0-9_.:@\\-]+$"),
        (http.post("/v1/memories", headers=auth(), json={"content": "x", "bogus": 1}), "bogus: unknown field"),
        (http.post("/v1/memories", headers=auth(), json={"content": "x", "captured_at": "yesterday"}),
         "captured_at: must be an ISO-8601 date or date-time, e.g. 2024-05-08 or 2024-05-08T13:56:00+02:00 (no offset = UTC)"),
        (http.post("/v1/memories/search", headers=auth(), json={"query": "x", "top_k": 0}), "top_k: must be at least 1"),
        (http.post("/v1/memories/search", headers=auth(), json={"query": "x", "top_k": 101}), "top_k: must be at most 100"),
        (http.post("/v1/memories/search", headers=auth(), json={}), "query: is required"),  # the field, not "body:"
        (http.get("/v1/memories", headers=auth(), params={"limit": 500}), "limit: must be at most 100"),
    ]
    for response, message in cases:
        assert response.status_code == 400, response.text
        assert response.json() == {"error": {"code": "validation_error", "message": message}}
    assert http.patch("/v1/memories/abc", headers=auth(), json={"edit_request": "make it rhyme"}).status_code == 404


def test_the_routers_own_errors_use_the_envelope(http) -> None:
    """Bad JSON, a body that is not an object, unknown routes and methods: never FastAPI's {"detail": ...}."""
    json_headers = {**auth(), "content-type": "application/json"}
    cases = [
        (http.post("/v1/memories/search", headers=json_headers, content=b"{bad json"), 400, "validation_error", "body: is not valid JSON"),
        (http.post("/v1/memories/search", headers=json_headers, content=b'{"query": "\xff"}'), 400, "validation_error", "body: is not valid JSON"),
        (http.post("/v1/memories/search", headers=auth(), json=["x"]), 400, "validation_error", "body: must be a JSON object"),
        (http.post("/v1/memories/search", headers=auth()), 400, "validation_error", "body: is required"),
        (http.get("/v1/nothing", headers=auth()), 404, "not_found", "no route GET /v1/nothing"),
        (http.put("/v1/memories", headers=auth()), 405, "method_not_allowed", "PUT is not allowed on /v1/memories"),
        (http.get("/mcp/nope", headers=auth()), 404, "not_found", "no MCP profile 'nope'; served: /mcp, /mcp/facts, /mcp/thrindex, /mcp/r3"),
    ]
    for response, status, code, message in cases:
        assert (response.status_code, response.json()) == (status, {"error": {"code": code, "message": message}}), response.text
    assert "https://" not in str([c[0].text for c in cases]) and "detail" not in str([c[0].text for c in cases])


def test_unsupported_edit_request_is_400(http) -> None:
    memory = http.post("/v1/memories", headers=auth(), json={"content": "keep"}).json()
    response = http.patch(f"/v1/memories/{memory['id']}", headers=auth(), json={"edit_request": "make it rhyme"})
    assert response.status_code == 400 and response.json()["error"]["code"] == "unsupported_edit"


def test_missing_and_bad_keys_are_401_with_challenge(http) -> None:
    for headers in ({}, auth("mn_nope_000000000000000000000000")):
        response = http.get("/v1/memories", headers=headers)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthenticated"
        challenge = response.headers["www-authenticate"]
        assert 'resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource"' in challenge
        # RFC 6750 §3.1: a request with no credentials gets no error code; a bad key does
        assert ('error="invalid_token"' in challenge) is bool(headers), challenge


def test_status_reports_pending_and_failed(http) -> None:
    http.post("/v1/memories", headers=auth(), json={"content": "queued"})
    status = http.get("/v1/status", headers=auth()).json()
    assert status == {"tenant": "local", "pending": 1, "failed": 0, "dlq": 0}


def test_search_returns_scored_results_with_metadata(http, container) -> None:
    from mnemo.adapters.aws import client
    from mnemo.surfaces.worker import handle_batch
    from tests.conftest import received

    http.post("/v1/memories", headers=auth(), json={"content": "Standups are on Tuesdays", "user_id": "carol", "metadata": {"dia_id": "D1:1"}})
    http.post("/v1/memories", headers=auth(), json={"content": "Dinner with Anna", "user_id": "carol"})
    messages = received(client("sqs"), container.settings.queue_url)
    event = {"Records": [{"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
                          "attributes": {"ApproximateReceiveCount": "1"}, "messageAttributes": {}, "md5OfBody": "",
                          "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q",
                          "awsRegion": "us-east-1"} for m in messages]}
    assert handle_batch(event, None, container) == {"batchItemFailures": []}
    results = http.post("/v1/memories/search", headers=auth(), json={"query": "standups", "user_id": "carol", "explain": True}).json()
    best = results["results"][0]
    assert best["metadata"] == {"dia_id": "D1:1"} and best["text"] == "Standups are on Tuesdays"
    assert 0 < best["score"] <= 1 and all(r["score"] < best["score"] for r in results["results"][1:])
    assert best["explain"]["lexical"] > 0 and best["explain"]["semantic"] > 0
    # the query's raw cosine too (what an embedder's semantic threshold is measured on: issue 54)
    assert best["explain"]["cosine"] >= best["explain"]["semantic"]
    assert results["scope"] == {"tenant": "local", "user_id": "carol", "author": "all"}
    strict = http.post("/v1/memories/search", headers=auth(), json={"query": "standups", "user_id": "carol", "threshold": best["score"] - 1e-5}).json()
    assert [r["id"] for r in strict["results"]] == [best["id"]]
    assert "explain" not in strict["results"][0] and "vector" not in str(strict)
