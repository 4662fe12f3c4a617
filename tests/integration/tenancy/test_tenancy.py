"""Tenants, plans and monthly metering (issue 15) on moto, through the deployed surfaces.

Every refusal is paired with its positive control: the same call succeeding under the limit (or
when the tenant is active again), and a refused write stores nothing and enqueues nothing.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

import pytest

from mnemo import cli
from mnemo.domain.tenancy import Counter, TenantStatus
from tests.conftest import TEST_KEY, FixedClock
from tests.integration.conftest import MCP_HEADERS, auth

_ids = itertools.count(1)
# FixedClock starts 2025-06-07 09:00 UTC: the month resets 2025-07-01 00:00, 23 days 15 hours later.
SECONDS_TO_JULY = (23 * 24 + 15) * 3600


def call(http: Any, path: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    response = http.post(path, json=body, headers={**MCP_HEADERS, **auth(TEST_KEY), "mcp-protocol-version": "2025-06-18"})
    assert response.status_code == 200, response.text
    return response.json()["result"]


def text(result: dict[str, Any]) -> str:
    return result["content"][0]["text"]


def queued(container: Any) -> int:
    return container.queue.depths()["queued"]


def stored(container: Any, tenant: str = "local") -> int:
    """Memories the tenant holds, read from the store (not through a metered route); no worker runs
    here, so every stored memory is still pending."""
    return container.status.for_tenant(tenant).pending


def test_a_write_past_the_cap_is_429_with_retry_after_and_stores_and_enqueues_nothing(http, container) -> None:
    container.meter.configure("local", {Counter.WRITES: 2}, None)
    for i in range(2):  # positive control: under the cap, writes succeed
        assert http.post("/v1/memories", json={"content": f"note {i}"}, headers=auth()).status_code == 201
    before_stored, before_queued = stored(container), queued(container)

    refused = http.post("/v1/memories", json={"content": "one too many"}, headers=auth())

    assert refused.status_code == 429
    assert refused.json() == {"error": {"code": "quota_exceeded", "message": "monthly write limit reached"}}
    assert int(refused.headers["retry-after"]) == pytest.approx(SECONDS_TO_JULY, abs=5)
    assert (stored(container), queued(container)) == (before_stored, before_queued) == (2, 2)
    usage = http.get("/v1/usage", headers=auth()).json()
    assert usage["used"]["writes"] == 2 and usage["limits"]["writes"] == 2
    assert usage["month"] == "2025-06" and usage["resets_at"].startswith("2025-07-01T00:00:00")
    # lifting the limit lets writes through again, at once (no cache in the way)
    container.meter.configure("local", {Counter.WRITES: None}, None)
    assert http.post("/v1/memories", json={"content": "after the lift"}, headers=auth()).status_code == 201


def test_retrievals_are_capped_separately_from_writes(http, container) -> None:
    container.meter.configure("local", {Counter.RETRIEVALS: 1}, None)
    assert http.get("/v1/memories", headers=auth()).status_code == 200  # control: the first read
    assert http.post("/v1/memories", json={"content": "writes still pass"}, headers=auth()).status_code == 201
    refused = http.post("/v1/memories/search", json={"query": "anything"}, headers=auth())
    assert refused.status_code == 429
    assert refused.json()["error"] == {"code": "quota_exceeded", "message": "monthly retrieval limit reached"}


@pytest.mark.parametrize(("status", "code", "http_status"), [
    (TenantStatus.PAST_DUE, "payment_required", 402), (TenantStatus.SUSPENDED, "tenant_suspended", 403),
])
def test_a_tenant_that_is_not_active_is_refused_until_it_is(http, container, status, code, http_status) -> None:
    container.meter.configure("local", {}, status)
    refused = http.post("/v1/memories", json={"content": "x"}, headers=auth())
    assert (refused.status_code, refused.json()["error"]["code"]) == (http_status, code)
    assert stored(container) == 0  # the refused write stored nothing
    other = http.post("/v1/memories", json={"content": "another tenant is unaffected"},
                      headers=auth("mn_othertenant_0123456789abcdefghijklmnop"))
    assert other.status_code == 201
    container.meter.configure("local", {}, TenantStatus.ACTIVE)
    assert http.post("/v1/memories", json={"content": "x"}, headers=auth()).status_code == 201


@pytest.mark.parametrize(("path", "write", "read", "write_text", "read_text"), [
    ("/mcp", ("capture_thought", {"raw": "a"}), ("retrieve_thoughts", {"query": "a"}),
     "quota_exceeded: monthly write limit reached", "quota_exceeded: monthly retrieval limit reached"),
    ("/mcp/r3", ("add_memory", {"content": "a"}), ("search_memory", {"query": "a"}),
     "quota_exceeded: monthly write limit reached", "quota_exceeded: monthly retrieval limit reached"),
    ("/mcp/facts", ("add_episode", {"content": "a"}), ("search", {"query": "a"}),
     "quota_exceeded: monthly write limit reached", "quota_exceeded: monthly retrieval limit reached"),
    ("/mcp/thrindex", ("store_memory", {"content": "a"}), ("search_memories", {"query": "a"}),
     "Monthly write limit reached.", "Monthly search limit reached."),
])
def test_each_profile_words_the_limits_its_own_way(http, container, path, write, read, write_text, read_text) -> None:
    # r3 add_memory's duplicate check is one retrieval (docs/tenancy.md "Duplicate checks")
    container.meter.configure("local", {Counter.WRITES: 1, Counter.RETRIEVALS: 2 if path == "/mcp/r3" else 1}, None)
    assert not call(http, path, *write).get("isError"), "control: the first write passes"
    assert not call(http, path, *read).get("isError"), "control: the first read passes"
    before = queued(container)
    name, arguments = write
    other = dict.fromkeys(arguments, "something else entirely")  # r3's add_memory answers a repeat as a duplicate
    refused_write, refused_read = call(http, path, name, other), call(http, path, *read)
    assert refused_write["isError"] and text(refused_write) == write_text
    assert refused_read["isError"] and text(refused_read) == read_text
    assert queued(container) == before


@pytest.mark.parametrize(("status", "expected"), [
    (TenantStatus.PAST_DUE, "payment_required: subscription past due"),
    (TenantStatus.SUSPENDED, "tenant_suspended: this tenant is suspended; its operator can reactivate it"),
])
@pytest.mark.parametrize("path", ["/mcp", "/mcp/r3", "/mcp/facts", "/mcp/thrindex"])
def test_status_refusals_read_the_same_on_every_profile(http, container, path, status, expected) -> None:
    write = {"/mcp": "capture_thought", "/mcp/r3": "add_memory", "/mcp/facts": "add_episode",
             "/mcp/thrindex": "store_memory"}[path]
    container.meter.configure("local", {}, status)
    arguments = {"raw": "a"} if path == "/mcp" else {"content": "a"}
    refused = call(http, path, write, arguments)
    assert refused["isError"] and text(refused) == expected
    container.meter.configure("local", {}, TenantStatus.ACTIVE)
    assert not call(http, path, write, arguments).get("isError")


def test_past_the_intents_cap_the_edge_is_stored_without_intent_meta(http, container) -> None:
    container.meter.configure("local", {Counter.INTENTS: 1}, None)
    triple = {"subject": "Ana", "predicate": "prefers", "object": "tea", "extract_intent": True}
    first = call(http, "/mcp/facts", "record_fact", triple)
    assert not first.get("isError") and first["structuredContent"]["edge"].get("intent_meta")  # control
    second = call(http, "/mcp/facts", "record_fact", {**triple, "object": "green tea"})
    assert second["isError"] and text(second).startswith("quota_exceeded: monthly intents limit reached; edge ")
    usage = container.meter.usage("local")
    assert (usage.used[Counter.WRITES], usage.used[Counter.INTENTS]) == (2, 1)
    found = call(http, "/mcp/facts", "search", {"query": "green tea"})["structuredContent"]
    edges = [e for e in found["edges"] if "green tea" in e["fact"]]
    assert edges and all(not e.get("intent_meta") for e in edges)


@pytest.mark.parametrize(("limit", "expected"), [(25, 25), (None, 80)])
def test_concurrent_charges_never_pass_the_cap(container, limit, expected) -> None:
    """8 threads x 10 charges at once. Capped at 25: exactly 25 pass and the counter reads 25. The
    control, unlimited: all 80 pass (so the threads really did run and count)."""
    from mnemo.local import moto_dynamodb

    moto_dynamodb.install()  # moto with DynamoDB's per-request atomicity (without it, moto itself races: 37 of 25 seen)
    store = container.meter._store
    store.configure("racer", {Counter.WRITES: limit}, None)
    passed: list[int] = []
    lock, start = threading.Lock(), threading.Barrier(8)

    def worker() -> None:
        start.wait()
        for _ in range(10):
            if store.charge("racer", "2025-06", [Counter.WRITES]) is None:
                with lock:
                    passed.append(1)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(passed) == expected
    assert store.get("racer", "2025-06")[1][Counter.WRITES] == expected


def test_metering_costs_one_dynamodb_call_per_request(http, container) -> None:
    """Counted with botocore's event hooks: the same capture and search with and without the meter."""
    from mnemo.services.tenancy.metering import Meter

    calls: list[str] = []
    container._dynamodb.meta.events.register("before-call.dynamodb.*", lambda model, **_: calls.append(model.name))

    def measure() -> tuple[int, int]:
        calls.clear()
        assert http.post("/v1/memories", json={"content": "counting calls"}, headers=auth()).status_code == 201
        captured = len(calls)
        calls.clear()
        assert http.post("/v1/memories/search", json={"query": "counting"}, headers=auth()).status_code == 200
        return captured, len(calls)

    metered = measure()
    real = container.memories._meter
    container.memories._meter = Meter()  # no store: counts nothing
    try:
        unmetered = measure()
    finally:
        container.memories._meter = real
    assert (metered[0] - unmetered[0], metered[1] - unmetered[1]) == (1, 1), (metered, unmetered)


def test_the_cli_sets_and_shows_a_tenant(aws, capsys) -> None:
    table = ["--keys-table", aws["KeysTable"]]
    assert cli.main([*table, "tenants", "set", "--tenant", "acme", "--writes", "100", "--status", "past_due"]) == 0
    assert cli.main([*table, "tenants", "set", "--tenant", "acme", "--retrievals", "5"]) == 0  # writes unchanged
    capsys.readouterr()
    assert cli.main([*table, "tenants", "show", "--tenant", "acme"]) == 0
    shown = capsys.readouterr().out
    assert '"writes": 100' in shown and '"retrievals": 5' in shown and '"past_due"' in shown
    assert cli.main([*table, "tenants", "set", "--tenant", "acme", "--writes", "unlimited"]) == 0
    assert cli.main([*table, "usage", "--tenant", "acme"]) == 0
    assert '"writes": null' in capsys.readouterr().out.split('"limits"')[1]
    with pytest.raises(SystemExit):
        cli.main([*table, "tenants", "set", "--tenant", "acme", "--writes", "lots"])
    assert "whole number or 'unlimited'" in capsys.readouterr().err


def test_an_unconfigured_tenant_is_unlimited_and_active(http) -> None:
    for _ in range(3):
        assert http.post("/v1/memories", json={"content": "no plan, no limits"}, headers=auth()).status_code == 201
    usage = http.get("/v1/usage", headers=auth()).json()
    assert usage["status"] == "active" and usage["limits"] == {"writes": None, "retrievals": None, "intents": None}
    assert usage["used"]["writes"] == 3


_ = FixedClock  # the clock the container fixture injects (the month above is its month)
