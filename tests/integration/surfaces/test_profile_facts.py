"""Contract of the episodes & facts profile (seed 001) at /mcp/facts, in process: the official SDK
client over the ASGI app, moto underneath. The table is the seed's tool reference as Mnemo declares
it; the round trips pin the shapes the REST routes share, and the temporal rules behind them."""

from __future__ import annotations

from typing import Any

import pytest

from mcp import Client
from tests.conftest import TEST_KEY
from tests.integration.surfaces.test_profile_eigen import (
    REQUIRED,
    Arg,
    Hints,
    declared,
    error_text,
    run_mcp,
    structured,
)

PATH = "/mcp/facts"
READER_KEY = "mn_readeronly_0123456789abcdefghijklmnop"
EDGE_KEYS = {"uuid", "fact", "predicate", "source", "target", "valid_at", "invalid_at", "created_at", "expired_at",
             "status", "episodes", "invalidated_by", "retracted_reason", "score", "intent_meta"}

SEED_001: dict[str, tuple[Hints, dict[str, Arg]]] = {
    "add_episode": (Hints(read_only=False, destructive=False, idempotent=False), {
        "content": Arg("string"), "group_id": Arg("string", "default"), "extract_intent": Arg("boolean", False),
    }),
    "record_fact": (Hints(read_only=False, destructive=False, idempotent=False), {
        "subject": Arg("string"), "predicate": Arg("string"), "object": Arg("string"),
        "group_id": Arg("string", "default"), "extract_intent": Arg("boolean", False),
    }),
    "search": (Hints(read_only=True, destructive=False, idempotent=True), {
        "query": Arg("string"), "group_id": Arg("string", "default"), "limit": Arg("integer", 10, range=(1, 100)),
        "threshold": Arg("number|null", None, range=(0, 1)),  # an extension (issue 54), optional
    }),
    "retract": (Hints(read_only=False, destructive=True, idempotent=True), {
        "edge_uuid": Arg("string"), "reason": Arg("string|null", None),
    }),
}


@pytest.fixture
def app(container, principal):
    from mnemo.surfaces.app import create_app

    return create_app(container)


def facts(app: Any, calls: Any, key: str = TEST_KEY) -> Any:
    import asyncio

    import httpx
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> Any:
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000",
                                 headers={"authorization": f"Bearer {key}"}, timeout=30)
        async with http, Client(streamable_http_client("http://127.0.0.1:8000" + PATH, http_client=http)) as client:
            return await calls(client)

    return asyncio.run(main())


def test_tools_list_is_the_seed_argument_for_argument(app) -> None:
    async def calls(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in run_mcp(app, calls, path=PATH)}
    assert list(tools) == list(SEED_001)
    for name, (hints, arguments) in SEED_001.items():
        schema = tools[name].input_schema
        assert {arg: declared(s) for arg, s in schema["properties"].items()} == arguments, name
        assert schema.get("required", []) == [a for a, spec in arguments.items() if spec.default is REQUIRED]
        assert schema["additionalProperties"] is False
        annotations = tools[name].annotations
        assert Hints(annotations.read_only_hint, annotations.destructive_hint, annotations.idempotent_hint) == hints, name
    # Routing words of the seed's "How the agent decides"
    assert "remember that" in tools["add_episode"].description
    assert "what did I decide about" in tools["search"].description
    assert "that's wrong, ignore it" in tools["retract"].description


def test_record_search_retract_in_the_pinned_shapes(app) -> None:
    async def calls(client: Client) -> Any:
        episode = structured(await client.call_tool("add_episode", {"content": "Remember that Alice loves jazz."}))
        first = structured(await client.call_tool("record_fact", {"subject": "Alice", "predicate": "lives_in", "object": "Berlin"}))
        likes = structured(await client.call_tool("record_fact", {"subject": "Alice", "predicate": "likes", "object": "Jazz"}))
        moved = structured(await client.call_tool("record_fact", {"subject": "Alice", "predicate": "moved to", "object": "Lisbon"}))
        found = structured(await client.call_tool("search", {"query": "Where does Alice live?"}))
        gone = structured(await client.call_tool("retract", {"edge_uuid": moved["edge"]["uuid"], "reason": "typo"}))
        after = structured(await client.call_tool("search", {"query": "Where does Alice live?"}))
        return episode, first, likes, moved, found, gone, after

    episode, first, likes, moved, found, gone, after = facts(app, calls)
    assert set(episode) == {"episode", "scope"} and episode["episode"]["status"] == "queued"
    assert set(episode["episode"]) == {"uuid", "content", "group_id", "created_at", "status"}
    assert episode["episode"]["group_id"] == "default"
    edge = first["edge"]
    assert set(edge) == EDGE_KEYS and first["invalidated"] == []
    assert (edge["fact"], edge["predicate"], edge["status"], edge["episodes"]) == ("Alice lives in Berlin", "lives in", "active", ["recorded"])
    assert set(edge["source"]) == {"uuid", "name", "type"} and edge["source"]["name"] == "Alice"
    # A multi-valued predicate accumulates; a synonym of a single-valued one replaces the old value
    assert likes["invalidated"] == []
    assert moved["edge"]["predicate"] == "lives in" and moved["edge"]["fact"] == "Alice moved to Lisbon"
    assert moved["invalidated"] == [edge["uuid"]]
    assert found["group_id"] == "default"
    uuids = [e["uuid"] for e in found["edges"]]
    assert uuids[0] == moved["edge"]["uuid"] and edge["uuid"] not in uuids and likes["edge"]["uuid"] in uuids
    assert all(0.0 <= e["score"] <= 1.0 for e in found["edges"])
    # Retracting the fact that retired Berlin brings Berlin back
    assert gone["edge"]["status"] == "retracted" and gone["edge"]["retracted_reason"] == "typo"
    back = [e["uuid"] for e in after["edges"]]
    assert edge["uuid"] in back and moved["edge"]["uuid"] not in back


def test_failures_start_with_the_seed_code_and_nothing_changes(app, container) -> None:
    container.keys.ensure("local", "reader", ["memory:read", "memory:write"], READER_KEY)

    async def setup(client: Client) -> Any:
        return structured(await client.call_tool("record_fact", {"subject": "Bob", "predicate": "works at", "object": "Acme"}))

    recorded = facts(app, setup)

    async def calls(client: Client) -> Any:
        return [
            await client.call_tool("retract", {"edge_uuid": recorded["edge"]["uuid"]}),
            await client.call_tool("search", {"query": "Bob", "limit": 101}),
            await client.call_tool("search", {"query": "Bob", "limit": 0}),
            await client.call_tool("record_fact", {"subject": "Bob", "predicate": "works at"}),
            await client.call_tool("add_episode", {"content": "x", "user_id": "evil"}),
        ]

    texts = [error_text(r) for r in facts(app, calls, key=READER_KEY)]
    assert texts[0].startswith("missing_scope: ") and "'admin'" in texts[0]
    assert texts[1:] == [
        "limit: must be at most 100", "limit: must be at least 1", "object: is required",
        "unknown argument user_id; add_episode accepts content, group_id, extract_intent",
    ]

    async def still(client: Client) -> Any:
        return structured(await client.call_tool("search", {"query": "Where does Bob work?"}))

    # Positive control: the owner (admin) still finds the edge the reader failed to retract
    assert [e["uuid"] for e in facts(app, still)["edges"]] == [recorded["edge"]["uuid"]]

    async def missing(client: Client) -> Any:
        return await client.call_tool("retract", {"edge_uuid": "5d9f3c1e-8b2a-4f6d-9c3e-1a2b3c4d5e6f"})

    assert error_text(facts(app, missing)) == "not_found: edge 5d9f3c1e-8b2a-4f6d-9c3e-1a2b3c4d5e6f not found"


def test_groups_and_tenants_never_see_each_others_facts(app, container) -> None:
    from tests.integration.conftest import OTHER_KEY

    container.keys.ensure("other", "other", ["admin"], OTHER_KEY)

    async def write(client: Client) -> Any:
        await client.call_tool("record_fact", {"subject": "Carol", "predicate": "prefers", "object": "tea", "group_id": "team-a"})

    facts(app, write)

    def names(key: str, group: str) -> list[str]:
        async def calls(client: Client) -> Any:
            return structured(await client.call_tool("search", {"query": "What does Carol prefer?", "group_id": group}))
        return [e["fact"] for e in facts(app, calls, key=key)["edges"]]

    assert names(TEST_KEY, "team-a") == ["Carol prefers tea"]  # positive control: the owner's group
    assert names(TEST_KEY, "default") == []
    assert names(OTHER_KEY, "team-a") == []


def test_extract_intent_annotates_the_recorded_edge(app) -> None:
    async def calls(client: Client) -> Any:
        on = structured(await client.call_tool("record_fact", {"subject": "Dana", "predicate": "prefers", "object": "mornings",
                                                               "extract_intent": True}))
        off = structured(await client.call_tool("record_fact", {"subject": "Eve", "predicate": "prefers", "object": "tea"}))
        return on, off

    on, off = facts(app, calls)
    assert on["edge"]["intent_meta"] == {"label": "preference", "confidence": 0.8, "evidence": "prefers", "annotator": "heuristic"}
    assert off["edge"]["intent_meta"] is None


def test_the_seeds_own_flow_remember_that_then_search_finds_the_fact(app, aws) -> None:
    # Seed 001 "How the agent decides": the user says "remember that..." -> add_episode; later "what ..." -> search
    from tests.integration.surfaces.test_profile_thrindex import enrich

    async def remember(client: Client) -> Any:
        return structured(await client.call_tool("add_episode", {"content": "Remember that Quinn works at Umbrella."}))

    episode = facts(app, remember)
    enrich(aws)  # the worker extracts the episode's facts, as in the background

    async def ask(client: Client) -> Any:
        return [structured(await client.call_tool("search", {"query": q})) for q in ("Where does Quinn work?", "Umbrella")]

    found, other = facts(app, ask)
    quinn = [e for e in found["edges"] if e["source"]["name"] == "Quinn"]
    assert [(e["predicate"], e["target"]["name"], e["episodes"]) for e in quinn] == [
        ("works at", "Umbrella", [episode["episode"]["uuid"]])]
    assert all(e["source"]["name"] != "that Quinn" for e in found["edges"] + other["edges"])  # no "that" subject


def test_arguments_are_strict_json_types_never_coerced(app) -> None:
    async def calls(client: Client) -> Any:
        return [await client.call_tool(tool, arguments) for tool, arguments in [
            ("add_episode", {"content": "Ivy likes tea.", "extract_intent": "yes"}),
            ("add_episode", {"content": "Ivy likes tea.", "extract_intent": "true"}),
            ("record_fact", {"subject": "Ivy", "predicate": "likes", "object": "tea", "extract_intent": 1}),
            ("search", {"query": "Ivy", "limit": "5"}),
            ("search", {"query": "Ivy", "limit": True}),
            ("search", {"query": 5}),
            ("record_fact", {"subject": "Ivy", "predicate": "likes", "object": "tea", "group_id": 7}),
            # positive controls: the declared JSON types pass
            ("record_fact", {"subject": "Ivy", "predicate": "likes", "object": "tea", "extract_intent": False}),
            ("search", {"query": "Ivy", "limit": 5}),
        ]]

    *refused, recorded, found = facts(app, calls)
    assert [error_text(r) for r in refused] == [
        "extract_intent: must be true or false", "extract_intent: must be true or false",
        "extract_intent: must be true or false", "limit: must be an integer", "limit: must be an integer",
        "query: must be a string", "group_id: must be a string",
    ]
    assert structured(recorded)["edge"]["fact"] == "Ivy likes tea"
    assert [e["uuid"] for e in structured(found)["edges"]] == [structured(recorded)["edge"]["uuid"]]  # no episode stored


def test_retract_needs_a_uuid_and_an_unknown_uuid_is_not_found(app) -> None:
    async def calls(client: Client) -> Any:
        recorded = structured(await client.call_tool("record_fact", {"subject": "Jo", "predicate": "likes", "object": "tea"}))
        return recorded, [await client.call_tool("retract", {"edge_uuid": e}) for e in (
            "not-a-uuid", "", "00000000-0000-0000-0000-00000000000g", "9f1c0c52-4d1e-4c3b-9a0e-0d4f8b1e2a3c",
            recorded["edge"]["uuid"].upper())]

    recorded, (bad, empty, almost, unknown, upper) = facts(app, calls)
    assert error_text(bad) == error_text(empty) == error_text(almost) == (
        "edge_uuid: must be a UUID (a fact's uuid, from a search result)")
    assert error_text(unknown) == "not_found: edge 9f1c0c52-4d1e-4c3b-9a0e-0d4f8b1e2a3c not found"
    # positive control: the fact's own uuid, in any case, retracts it
    assert structured(upper)["edge"]["uuid"] == recorded["edge"]["uuid"] and structured(upper)["edge"]["status"] == "retracted"


def test_every_failure_carries_the_rest_error_envelope_beside_its_text(app, container) -> None:
    container.keys.ensure("local", "reader", ["memory:read", "memory:write"], READER_KEY)

    async def calls(client: Client) -> Any:
        return [await client.call_tool(tool, arguments) for tool, arguments in [
            ("retract", {"edge_uuid": "9f1c0c52-4d1e-4c3b-9a0e-0d4f8b1e2a3c"}),  # missing_scope (a reader key)
            ("search", {"query": "x", "limit": 101}),  # validation, by the schema
            ("search", {"query": "x", "nope": 1}),  # validation, unknown argument
            ("add_episode", {"content": "   "}),  # validation, by the domain command
            ("search", {"query": "x"}),  # positive control: a success has no envelope
        ]]

    *failed, ok = facts(app, calls, key=READER_KEY)
    envelopes = [r.structured_content for r in failed]
    assert [e["error"]["code"] for e in envelopes] == ["missing_scope", "validation_error", "validation_error", "validation_error"]
    for result, envelope in zip(failed, envelopes, strict=True):
        assert set(envelope) == {"error"} and set(envelope["error"]) == {"code", "message"}
        text = error_text(result)  # the text stays the seed's: `code: message`, or `field: what is wrong`
        assert text in (envelope["error"]["message"], f"{envelope['error']['code']}: {envelope['error']['message']}")
    assert envelopes[1]["error"]["message"] == "limit: must be at most 100"
    assert envelopes[3]["error"]["message"] == "content: must not be empty (after trimming whitespace)"

    async def not_found(client: Client) -> Any:
        return await client.call_tool("retract", {"edge_uuid": "9f1c0c52-4d1e-4c3b-9a0e-0d4f8b1e2a3c"})

    missing = facts(app, not_found)  # the admin key: the edge is not there
    assert missing.structured_content == {"error": {"code": "not_found",
                                                    "message": "edge 9f1c0c52-4d1e-4c3b-9a0e-0d4f8b1e2a3c not found"}}
    assert not ok.is_error and "error" not in ok.structured_content
