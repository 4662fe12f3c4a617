"""Contract of the Thrindex profile (seed 003) at /mcp/thrindex, in process: the official SDK client
over the ASGI app (auth, routing, registry and profile as deployed), moto and the real worker underneath.

The table below is the seed's tool reference as Mnemo declares it; the text layouts are compared
line for line with the seed's examples (only ids, times, scores and the latency differ).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from mcp.client.streamable_http import streamable_http_client

from mcp import Client
from mnemo.adapters.aws import client as aws_client
from mnemo.local.poller import QueuePoller
from mnemo.local.server import load_function
from tests.conftest import TEST_KEY
from tests.integration.conftest import OTHER_KEY
from tests.integration.surfaces.test_profile_eigen import BASE, REQUIRED, Arg, Hints, declared

READER_KEY = "mn_readeronly_0123456789abcdefghijklmnop"
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"

SEED_003: dict[str, tuple[Hints, dict[str, Arg]]] = {
    "store_memory": (Hints(read_only=False, destructive=False, idempotent=False), {
        "content": Arg("string"),
        "agent_id": Arg("string", "mcp-client"),
        "user_id": Arg("string", "default"),
        "confidence": Arg("number", 1.0, range=(0.0, 1.0)),
        "extract": Arg("boolean", True),
    }),
    "search_memories": (Hints(read_only=True, destructive=False, idempotent=True), {
        "query": Arg("string"),
        "agent_id": Arg("string|null", None),
        "user_id": Arg("string|null", None),
        "k": Arg("integer", 10, range=(1, 50)),
        "task_context": Arg("string|null", None),
    }),
    "list_memories": (Hints(read_only=True, destructive=False, idempotent=True), {
        "agent_id": Arg("string|null", None),
        "user_id": Arg("string|null", None),
        "limit": Arg("integer", 20, range=(1, 50)),
        "cursor": Arg("string|null", None),
    }),
    "get_memory": (Hints(read_only=True, destructive=False, idempotent=True), {"id": Arg("string")}),
    "delete_memory": (Hints(read_only=False, destructive=True, idempotent=True), {"id": Arg("string")}),
}


def run(app: Any, calls: Callable[[Client], Awaitable[Any]], *, key: str = TEST_KEY, path: str = "/mcp/thrindex") -> Any:
    async def main() -> Any:
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE,
                                 headers={"authorization": f"Bearer {key}"}, timeout=30)
        async with http, Client(streamable_http_client(BASE + path, http_client=http)) as client:
            return await calls(client)

    return asyncio.run(main())


def text(result: Any) -> str:
    assert not result.is_error, result.content
    return result.content[0].text


def error_text(result: Any) -> str:
    assert result.is_error
    return " ".join(c.text for c in result.content)


def call(app: Any, tool: str, arguments: dict[str, Any], *, key: str = TEST_KEY) -> Any:
    async def calls(client: Client) -> Any:
        return await client.call_tool(tool, arguments)

    return run(app, calls, key=key)


def enrich(aws: dict[str, str]) -> None:
    poller = QueuePoller(aws_client("sqs"), aws["EnrichmentQueue"], load_function("worker").handler, wait_seconds=0)
    while poller.poll_once():
        pass


@pytest.fixture
def app(container, principal):
    from mnemo.surfaces.app import create_app

    container.keys.ensure("other", "other", ["admin"], OTHER_KEY)
    container.keys.ensure("local", "reader", ["memory:read"], READER_KEY)
    return create_app(container)


def test_tools_list_is_the_seed_argument_for_argument(app) -> None:
    async def calls(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in run(app, calls)}
    assert list(tools) == list(SEED_003)
    for name, (hints, arguments) in SEED_003.items():
        schema = tools[name].input_schema
        assert {arg: declared(s) for arg, s in schema["properties"].items()} == arguments, name
        assert list(schema["properties"]) == list(arguments), f"{name}: argument order"
        assert schema.get("required", []) == [a for a, spec in arguments.items() if spec.default is REQUIRED]
        assert schema["additionalProperties"] is False
        annotations = tools[name].annotations
        assert Hints(annotations.read_only_hint, annotations.destructive_hint, annotations.idempotent_hint) == hints, name
        assert tools[name].output_schema is not None and len(tools[name].description) > 60
    assert tools["search_memories"].input_schema["properties"]["query"]["maxLength"] == 2048


def test_the_seeds_example_calls_answer_in_the_seeds_layout(app) -> None:
    """Given the seed's example memory, when each tool is called with the seed's example arguments,
    then every text result has the seed's lines (ids, times, scores and latency are the real ones)."""
    content = "User prefers weekly email digests over push notifications."

    async def calls(client: Client) -> Any:
        stored = await client.call_tool("store_memory", {"content": content, "agent_id": "claude-desktop",
                                                         "user_id": "alice", "confidence": 1.0})
        memory_id = stored.structured_content["id"]
        found = await client.call_tool("search_memories", {
            "query": "how does the user want to receive updates about email digests", "agent_id": "claude-desktop",
            "user_id": "alice", "k": 5, "task_context": "composing a notification preferences summary"})
        listed = await client.call_tool("list_memories", {"agent_id": "claude-desktop", "user_id": "alice", "limit": 10})
        got = await client.call_tool("get_memory", {"id": memory_id})
        deleted = await client.call_tool("delete_memory", {"id": memory_id})
        after = await client.call_tool("search_memories", {"query": "email digests"})
        missing = await client.call_tool("get_memory", {"id": "3f2e1d0c-1234-5678-abcd-ef0123456789"})
        return memory_id, stored, found, listed, got, deleted, after, missing

    memory_id, stored, found, listed, got, deleted, after, missing = run(app, calls)
    assert text(stored).splitlines() == [
        "Memory queued for processing.", f"ID: {memory_id}", "Status: queued",
        "The memory will be indexed and available for search within a few seconds.",
    ]
    assert stored.structured_content == {"id": memory_id, "status": "queued", "agent_id": "claude-desktop", "user_id": "alice",
                                         "scope": {"tenant": "local", "user_id": "alice", "agent_id": "claude-desktop",
                                                   "group_id": "default"}}
    lines = text(found).splitlines()
    assert re.fullmatch(r"Found 1 memories \(latency: \d+ms, cache_hit: false\):", lines[0])
    assert re.fullmatch(r"1\. \[score: 0\.\d{3} \| importance: 0\.50\]", lines[1])
    assert lines[2:] == [f"ID: {memory_id}", f"Content: {content}", "Agent: claude-desktop | User: alice",
                         "Created: 2025-06-07T09:00:00Z"]
    hit = found.structured_content["memories"][0]
    assert hit["id"] == memory_id and f"score: {hit['score']:.3f}" in lines[1]
    assert found.structured_content["scope"] == {"tenant": "local", "user_id": "alice", "agent_id": "claude-desktop"}
    assert text(listed).splitlines() == [
        "Listing 1 memories:", f"1. ID: {memory_id}", "Status: active | Importance: 0.50 | Confidence: 1.00",
        "Agent: claude-desktop | User: alice", "Created: 2025-06-07T09:00:00Z",
    ]
    assert text(got).splitlines() == [
        f"Memory: {memory_id}", "Content:", content, "Metadata:", "Status: active", "Importance: 0.50",
        "Confidence: 1.00", "Level: 0", "Agent: claude-desktop", "User: alice", "Source: agent",
        "Created: 2025-06-07T09:00:00Z", "Updated: 2025-06-07T09:00:00Z",
    ]
    assert text(deleted) == f"Memory {memory_id} has been deleted (soft delete — status set to deprecated)."
    assert text(after).splitlines()[0].startswith("Found 0 memories")  # deprecated: out of search at once
    assert error_text(missing) == "Memory not found: 3f2e1d0c-1234-5678-abcd-ef0123456789"


def test_errors_are_the_seeds_messages(app) -> None:
    async def calls(client: Client) -> Any:
        return [
            await client.call_tool("store_memory", {}),
            await client.call_tool("store_memory", {"content": "x", "confidence": 1.5}),
            await client.call_tool("store_memory", {"content": "x", "confidence": -0.1}),
            await client.call_tool("store_memory", {"content": "x" * 8193}),
            await client.call_tool("search_memories", {"query": "x", "k": 51}),
            await client.call_tool("search_memories", {"query": "q" * 2049}),
            await client.call_tool("search_memories", {"query": "   "}),
            await client.call_tool("list_memories", {"limit": 0}),
            await client.call_tool("list_memories", {"cursor": "not-a-cursor"}),
            await client.call_tool("delete_memory", {"id": "no-such-id"}),
            await client.call_tool("store_memory", {"content": "x", "metadata": {}}),
        ]

    assert [error_text(r) for r in run(app, calls)] == [
        "content is required",
        "confidence must be between 0.0 and 1.0",
        "confidence must be between 0.0 and 1.0",
        "content: must be at most 8192 bytes (8 KB); it is 8193 bytes",
        "k: must be at most 50",
        "query: must be at most 2048 characters",
        "query: must not be empty",
        "limit: must be at least 1",
        "cursor: is not a cursor from this list_memories listing; omit it to start from the most recent memory",
        "Memory not found: no-such-id",
        "unknown argument metadata; store_memory accepts content, agent_id, user_id, confidence, extract",
    ]


def test_missing_scopes_are_refused_in_the_seeds_words_and_nothing_changes(app, container, principal) -> None:
    stored = call(app, "store_memory", {"content": "The user's locker code is 4512."}).structured_content
    refused = [
        call(app, "store_memory", {"content": "smuggled"}, key=READER_KEY),
        call(app, "delete_memory", {"id": stored["id"]}, key=READER_KEY),
    ]
    assert [error_text(r) for r in refused] == [
        "API key is missing the memory:write scope.", "API key is missing the memory:delete scope.",
    ]
    # positive control: the same read-only key reads, and the memory is still active
    assert "Status: active" in text(call(app, "get_memory", {"id": stored["id"]}, key=READER_KEY))
    assert text(call(app, "list_memories", {}, key=READER_KEY)).splitlines()[0] == "Listing 1 memories:"


def test_list_cursor_pages_newest_first_stable_under_inserts_and_bound_to_its_caller(app) -> None:
    ids = [call(app, "store_memory", {"content": f"note {n}", "user_id": "alice"}).structured_content["id"] for n in range(5)]
    first = call(app, "list_memories", {"user_id": "alice", "limit": 2})
    cursor = first.structured_content["next_cursor"]
    assert text(first).splitlines()[-1] == f"next_cursor: {cursor}"
    assert [m["id"] for m in first.structured_content["memories"]] == [ids[4], ids[3]]
    call(app, "store_memory", {"content": "inserted meanwhile", "user_id": "alice"})  # sorts before the cursor
    second = call(app, "list_memories", {"user_id": "alice", "limit": 2, "cursor": cursor}).structured_content
    assert [m["id"] for m in second["memories"]] == [ids[2], ids[1]]
    last = call(app, "list_memories", {"user_id": "alice", "limit": 2, "cursor": second["next_cursor"]}).structured_content
    assert [m["id"] for m in last["memories"]] == [ids[0]] and last["next_cursor"] is None
    # the cursor names its tenant and filters: another tenant, or another listing, is refused
    other = call(app, "list_memories", {"user_id": "alice", "limit": 2, "cursor": cursor}, key=OTHER_KEY)
    elsewhere = call(app, "list_memories", {"user_id": "bob", "limit": 2, "cursor": cursor})
    assert error_text(other).startswith("cursor: is not a cursor") and error_text(elsewhere).startswith("cursor: is not")
    # positive control: the other tenant lists its own (empty) space without a cursor
    assert text(call(app, "list_memories", {"user_id": "alice"}, key=OTHER_KEY)) == "Listing 0 memories:"


def test_omitted_filters_read_the_whole_tenant_and_never_another(app) -> None:
    call(app, "store_memory", {"content": "Alice likes the harbour walk", "user_id": "alice", "agent_id": "a1"})
    call(app, "store_memory", {"content": "Bob likes the harbour cafe", "user_id": "bob", "agent_id": "a2"})
    call(app, "store_memory", {"content": "Other tenant likes the harbour too"}, key=OTHER_KEY)
    everyone = call(app, "search_memories", {"query": "harbour"}).structured_content
    assert sorted(m["user_id"] for m in everyone["memories"]) == ["alice", "bob"]
    assert [m["user_id"] for m in call(app, "search_memories", {"query": "harbour", "agent_id": "a2"}).structured_content["memories"]] == ["bob"]
    assert call(app, "list_memories", {"user_id": "", "agent_id": ""}).structured_content["count"] == 2
    # positive control: the other tenant finds its own with the same request
    assert [m["content"] for m in call(app, "search_memories", {"query": "harbour"}, key=OTHER_KEY).structured_content["memories"]] == [
        "Other tenant likes the harbour too"]


def test_task_context_reorders_the_results(app, aws) -> None:
    """Two memories answer "how does the user want updates" about equally (the push one a little
    better); a task context about email puts the email one first, one about push alerts keeps push
    first. (Two users, so neither is the other's conversational context in the index.)"""
    email = call(app, "store_memory", {"content": "User wants updates as a weekly email digest.", "user_id": "alice"}).structured_content["id"]
    push = call(app, "store_memory", {"content": "User wants updates as a phone push notification.", "user_id": "bob"}).structured_content["id"]
    enrich(aws)

    def order(context: str | None) -> list[str]:
        arguments = {"query": "how does the user want updates"}
        if context:
            arguments["task_context"] = context
        return [m["id"] for m in call(app, "search_memories", arguments).structured_content["memories"]]

    assert order(None) == [push, email]
    assert order("writing the weekly email newsletter") == [email, push]
    assert order("configuring mobile phone push alerts") == [push, email]


def test_extract_false_stores_verbatim_and_is_still_indexed(app, container, principal, aws) -> None:
    verbatim = call(app, "store_memory", {"content": "Alice works at Acme Corp in Berlin.", "extract": False}).structured_content["id"]
    extracted = call(app, "store_memory", {"content": "Bob works at Initech in Paris."}).structured_content["id"]
    enrich(aws)
    plain, _, plain_facts = container.memories.detail(principal, verbatim)
    rich, _, rich_facts = container.memories.detail(principal, extracted)
    assert plain.extract is False and plain.enrichment.state.value == "enriched" and plain.entities == [] and plain_facts == []
    assert rich.entities and rich_facts  # positive control: the same kind of text, extracted
    hits = call(app, "search_memories", {"query": "where does Alice work"}).structured_content["memories"]
    assert hits[0]["id"] == verbatim


def test_a_memory_is_the_same_on_every_surface(app, http) -> None:
    """Stored through /mcp/thrindex: /v1 and /mcp see it; stored through /v1: Thrindex finds it."""
    from tests.integration.conftest import auth, mcp_call

    stored = call(app, "store_memory", {"content": "The user's sister is called Ingrid.", "user_id": "default"}).structured_content
    assert http.get(f"/v1/memories/{stored['id']}", headers=auth()).json()["content"] == "The user's sister is called Ingrid."
    thoughts = mcp_call(http, "retrieve_thoughts", {"query": "sister Ingrid", "include_agent": True})["structuredContent"]
    assert [t["id"] for t in thoughts["results"]] == [stored["id"]]
    created = http.post("/v1/memories", json={"content": "The user's brother is called Sven.", "user_id": "bob"}, headers=auth()).json()
    assert [m["id"] for m in call(app, "search_memories", {"query": "brother Sven"}).structured_content["memories"]] == [created["id"]]


def test_extract_true_adds_facts_beside_the_text_and_never_rewrites_it(app, container, principal, aws) -> None:
    async def calls(client: Client) -> Any:
        return (await client.list_tools()).tools

    store = next(t for t in run(app, calls) if t.name == "store_memory")
    said = "remember  that Quinn works at Umbrella!!  (he told me)"
    # the description says exactly what extract=true adds and that the text is never rewritten
    assert "never rewritten" in store.description and "adds the extracted facts beside it" in store.description
    described = store.input_schema["properties"]["extract"]["description"]
    assert "stored exactly as given" in described and "never rewritten" in described and "rule-based" in described
    stored = call(app, "store_memory", {"content": said}).structured_content["id"]
    enrich(aws)
    memory, _, facts = container.memories.detail(principal, stored)
    assert memory.raw == said  # verbatim, after extraction
    assert call(app, "get_memory", {"id": stored}).structured_content["content"] == said  # what get_memory answers
    assert [(f.subject.name, f.predicate, f.object.name) for f in facts] == [("Quinn", "works at", "Umbrella")]  # beside it
