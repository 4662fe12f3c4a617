"""Job parts stay under DynamoDB's item limit; the mem0 source pages, retries and fails clearly
(httpx2's MockTransport: the real client stack, no network; the real-HTTP pull is in
tests/integration/portability/test_mem0_import.py)."""

from __future__ import annotations

import json

import httpx2 as httpx  # the client Mem0HttpSource uses (the mcp SDK's, in the Lambda layer)
import pytest

from mnemo.adapters.http.mem0 import ATTEMPTS, Mem0HttpSource
from mnemo.errors import DependencyError, ValidationFailed
from mnemo.services.jobs.service import PART_BYTES, parts_of


def test_parts_split_by_count_and_by_bytes_and_refuse_an_item_too_large_alone() -> None:
    assert [len(p) for p in parts_of([{"memory": "x"}] * 250, 100)] == [100, 100, 50]
    big = {"memory": "y" * (PART_BYTES // 3)}
    parts = parts_of([big] * 7, 100)
    assert [len(p) for p in parts] == [2, 2, 2, 1] and all(len(json.dumps(p)) < 400_000 for p in parts)
    with pytest.raises(ValidationFailed, match=f"data: item 1 is .* bytes of JSON, more than {PART_BYTES}"):
        parts_of([{"memory": "ok"}, {"memory": "z" * PART_BYTES}], 100)


def source(handler) -> tuple[Mem0HttpSource, list[float]]:
    slept: list[float] = []
    return Mem0HttpSource("https://mem0.test", transport=httpx.MockTransport(handler), sleep=slept.append), slept


def test_a_page_is_asked_with_the_token_and_read_in_mem0s_shape() -> None:
    seen = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append((request.url.path, dict(request.url.params), request.headers["authorization"], json.loads(request.content)))
        return httpx.Response(200, json={"count": 3, "next": None, "previous": None, "results": [{"id": "a", "memory": "m"}]})

    mem0, slept = source(answer)
    page = mem0.page("m0-key", "ana", 2, 50)
    assert seen == [("/v2/memories/", {"page": "2", "page_size": "50"}, "Token m0-key", {"filters": {"user_id": "ana"}})]
    assert (page.items, page.total, page.last, slept) == ([{"id": "a", "memory": "m"}], 3, True, [])


def test_transient_failures_are_retried_with_backoff_then_reported_without_the_key() -> None:
    calls = []

    def flaky(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            raise httpx.ConnectError("refused")
        return httpx.Response(503 if len(calls) < 3 else 200, json={"count": 0, "next": None, "results": []})

    mem0, slept = source(flaky)
    assert mem0.page("m0-key", "ana", 1, 100).last and slept == [0.5, 1.0]  # positive control: recovers
    mem0, slept = source(lambda r: httpx.Response(502))
    with pytest.raises(DependencyError) as down:
        mem0.page("m0-secret", "ana", 1, 100)
    assert down.value.message == f"mem0 answered HTTP 502 {ATTEMPTS} times" and len(slept) == ATTEMPTS - 1
    assert "m0-secret" not in str(down.value)


def test_a_refused_key_and_a_strange_answer_are_clear_errors_and_never_retried() -> None:
    mem0, slept = source(lambda r: httpx.Response(401, json={"detail": "Invalid token"}))
    with pytest.raises(ValidationFailed, match=r"api_key: mem0 refused it \(HTTP 401\); check the key"):
        mem0.page("m0-bad", "ana", 1, 100)
    assert slept == []
    mem0, _ = source(lambda r: httpx.Response(200, json={"detail": "?"}))
    with pytest.raises(DependencyError, match="unexpected shape"):
        mem0.page("k", "ana", 1, 100)
    mem0, _ = source(lambda r: httpx.Response(200, json=[{"id": "a", "memory": "m"}]))  # unpaginated: all at once
    assert mem0.page("k", "ana", 1, 100).last
