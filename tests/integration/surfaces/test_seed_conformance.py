"""Seed conformance (issue 27, "Proof"): each MCP profile against its seed page, as a new user reads
it, through the official MCP client (`mcp` 2.x `Client`, over the ASGI app, moto underneath).

Each seed's table below is copied from the seed page (/work/shared/seeds: 000 Eigen, 001 facts, 003
Thrindex, 004 r3), not from the profile's code: its tools, each argument's JSON type, whether it is
required, its default and its range; then the page's example calls, result layouts, limits and error
texts. What Mnemo does differently on purpose is allowed only by name (EXTENSIONS, DEVIATIONS), each
documented in the README; anything else that differs fails here.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest
from mcp.client.streamable_http import streamable_http_client

from mcp import Client
from tests.conftest import TEST_KEY

BASE = "http://127.0.0.1:8000"
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
WRITER_KEY = "mn_seedwriter_0123456789abcdefghijklmnop"  # memory:write only
READER_KEY = "mn_seedreader_0123456789abcdefghijklmnop"  # memory:read only
NONE = object()  # "no default" (required, or the seed names none)


class SeedArg(NamedTuple):
    type: str  # the seed's word: string, boolean, integer, number, float, object, array
    required: bool = False
    default: Any = NONE
    range: tuple[float, float] | None = None


# The seed's types, as JSON Schema types a conforming declaration may use ("number" admits integers).
SEED_TYPES = {"string": {"string"}, "boolean": {"boolean"}, "bool": {"boolean"}, "integer": {"integer"},
              "int": {"integer"}, "number": {"number", "integer"}, "float": {"number"}, "object": {"object"},
              "array": {"array"}, "array|object": {"array", "object"}}

# Arguments Mnemo adds beyond a seed, by name; each is listed as an extension in the README (the phrase
# in EXTENSION_NOTES, checked by test_every_allowed_difference_is_in_the_readme).
EXTENSIONS: dict[str, set[tuple[str, str]]] = {
    "": set(), "facts": {("search", "threshold")}, "thrindex": set(),
    "r3": {("get_knowledge_graph", "user_id"), ("find_connections", "user_id")},
}
EXTENSION_NOTES = {"facts": "**Extension beyond seed 001:** `search` takes `threshold`",
                   "r3": "**Extension beyond seed 004:** both take `user_id`"}
# Deliberate deviations from a seed's stated behaviour, by name: the README phrase that documents each.
# A comparison with the seed goes through `seed_or_deviation`, so a difference passes only when named here.
DEVIATIONS: dict[str, dict[str, str]] = {
    "": {}, "facts": {}, "thrindex": {},
    "r3": {"absent arguments are {}": "**deviation from seed 004, kept on purpose:** r3 answers `isError`"},
}


def seed_or_deviation(profile: str, behaviour: str, follows_seed: bool) -> bool:
    """Whether the profile deviates here: it follows its seed, or the difference is named in DEVIATIONS
    (and documented); anything else fails. A named deviation the profile no longer shows fails too, so
    the README never documents a difference that is gone."""
    named = behaviour in DEVIATIONS[profile]
    assert follows_seed or named, f"{profile or 'eigen'}: differs from its seed ({behaviour}) and no deviation is named"
    assert not (follows_seed and named), f"{profile or 'eigen'}: follows its seed ({behaviour}); drop the named deviation"
    return named

SEED_000 = {  # Eigen "MCP tools reference"
    "capture_thought": {"raw": SeedArg("string", True), "captured_at": SeedArg("string"), "as_user": SeedArg("boolean"),
                        "author": SeedArg("string")},
    "retrieve_thoughts": {"query": SeedArg("string"), "order": SeedArg("string"), "top_k": SeedArg("number", default=10),
                          "threshold": SeedArg("number", range=(0, 1)), "mode": SeedArg("string"), "detail": SeedArg("string"),
                          "author": SeedArg("string", default="user"), "include_agent": SeedArg("boolean"),
                          "cursor_created_at": SeedArg("string"), "cursor_id": SeedArg("string")},
    "edit_thought": {"thought_id": SeedArg("string", True), "edit_request": SeedArg("string"), "raw_text": SeedArg("string")},
    "delete_thought": {"thought_id": SeedArg("string", True)},
}
SEED_001 = {  # episodes & facts "Tool reference"
    "add_episode": {"content": SeedArg("string", True), "group_id": SeedArg("string", default="default"),
                    "extract_intent": SeedArg("bool", default=False)},
    "record_fact": {"subject": SeedArg("string", True), "predicate": SeedArg("string", True), "object": SeedArg("string", True),
                    "group_id": SeedArg("string", default="default"), "extract_intent": SeedArg("bool", default=False)},
    "search": {"query": SeedArg("string", True), "group_id": SeedArg("string", default="default"),
               "limit": SeedArg("int", default=10, range=(1, 100))},
    "retract": {"edge_uuid": SeedArg("string", True), "reason": SeedArg("string")},
}
SEED_003 = {  # Thrindex "Tool Reference"
    "store_memory": {"content": SeedArg("string", True), "agent_id": SeedArg("string", default="mcp-client"),
                     "user_id": SeedArg("string", default="default"), "confidence": SeedArg("float", default=1.0, range=(0, 1)),
                     "extract": SeedArg("boolean", default=True)},
    "search_memories": {"query": SeedArg("string", True), "agent_id": SeedArg("string"), "user_id": SeedArg("string"),
                        "k": SeedArg("integer", default=10, range=(1, 50)), "task_context": SeedArg("string")},
    "list_memories": {"agent_id": SeedArg("string"), "user_id": SeedArg("string"),
                      "limit": SeedArg("integer", default=20, range=(1, 50)), "cursor": SeedArg("string")},
    "get_memory": {"id": SeedArg("string", True)},
    "delete_memory": {"id": SeedArg("string", True)},
}
SEED_004 = {  # r3 "MCP tools"
    "add_memory": {"content": SeedArg("string"), "messages": SeedArg("array"), "user_id": SeedArg("string"),
                   "metadata": SeedArg("object"), "priority": SeedArg("string"), "async": SeedArg("boolean"),
                   "skip_duplicate_check": SeedArg("boolean")},
    "search_memory": {"query": SeedArg("string", True), "limit": SeedArg("integer", default=10),
                      "prefer_cache": SeedArg("boolean", default=True), "user_id": SeedArg("string")},
    "get_memory": {"memory_id": SeedArg("string", True), "user_id": SeedArg("string")},
    "update_memory": {"memory_id": SeedArg("string", True), "content": SeedArg("string"), "metadata": SeedArg("object"),
                      "user_id": SeedArg("string")},
    "get_all_memories": {"user_id": SeedArg("string"), "limit": SeedArg("integer", default=100),
                         "offset": SeedArg("integer", default=0), "prefer_cache": SeedArg("boolean"),
                         "include_cache_stats": SeedArg("boolean")},
    "delete_memory": {"memory_id": SeedArg("string", True)},
    "deduplicate_memories": {"user_id": SeedArg("string"), "similarity_threshold": SeedArg("number", default=0.85),
                             "dry_run": SeedArg("boolean", default=True)},
    "cache_stats": {},
    "sync_status": {},
    "optimize_cache": {"force_refresh": SeedArg("boolean"), "max_memories": SeedArg("integer")},
    "extract_entities": {"text": SeedArg("string", True)},
    "get_knowledge_graph": {"entity_type": SeedArg("string"), "entity_name": SeedArg("string"),
                            "relationship_type": SeedArg("string"), "limit": SeedArg("integer")},
    "find_connections": {"from_entity": SeedArg("string", True), "to_entity": SeedArg("string"),
                         "max_depth": SeedArg("integer", default=2)},
    "import_memories": {"source": SeedArg("string", True), "data": SeedArg("array|object"), "file_path": SeedArg("string"),
                        "api_key": SeedArg("string"), "user_id": SeedArg("string"), "batch_size": SeedArg("integer"),
                        "skip_duplicates": SeedArg("boolean")},
}
SEEDS = {"": SEED_000, "facts": SEED_001, "thrindex": SEED_003, "r3": SEED_004}


@pytest.fixture
def app(container, principal):
    from mnemo.surfaces.app import create_app

    container.keys.ensure("local", "seed-writer", ["memory:write"], WRITER_KEY)
    container.keys.ensure("local", "seed-reader", ["memory:read"], READER_KEY)
    return create_app(container)


def session(app: Any, profile: str, calls: Callable[[Client], Awaitable[Any]], key: str = TEST_KEY) -> Any:
    """One official-client session at the profile's endpoint (`/mcp` for Eigen, `/mcp/<profile>`)."""

    async def main() -> Any:
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE,
                                 headers={"authorization": f"Bearer {key}"}, timeout=30)
        path = "/mcp" + (f"/{profile}" if profile else "")
        async with http, Client(streamable_http_client(BASE + path, http_client=http)) as client:
            return await calls(client)

    return asyncio.run(main())


def text(result: Any) -> str:
    return " ".join(c.text for c in result.content)


def ok(result: Any) -> Any:
    assert not result.is_error, text(result)
    return result


def failed(result: Any) -> str:
    assert result.is_error, text(result)
    return text(result)


def declared_types(schema: dict[str, Any]) -> set[str]:
    return {v["type"] for v in schema.get("anyOf", [schema]) if v.get("type") not in (None, "null")}


@pytest.mark.parametrize("profile", list(SEEDS), ids=["seed000-eigen", "seed001-facts", "seed003-thrindex", "seed004-r3"])
def test_tools_and_arguments_are_the_seeds(app, profile: str) -> None:
    async def calls(client: Client) -> Any:
        return (await client.list_tools()).tools

    seed = SEEDS[profile]
    tools = {t.name: t for t in session(app, profile, calls)}
    assert sorted(tools) == sorted(seed)  # every tool of the page, and no other
    for name, arguments in seed.items():
        schema = tools[name].input_schema
        properties, required = schema.get("properties", {}), set(schema.get("required", []))
        extra = {(name, a) for a in properties} - {(name, a) for a in arguments}
        assert extra <= EXTENSIONS[profile], f"{name}: arguments beyond the seed, not listed as extensions: {extra}"
        for arg, spec in arguments.items():
            assert arg in properties, f"{name}.{arg}: the seed's argument is not declared"
            declared = properties[arg]
            assert declared_types(declared) <= SEED_TYPES[spec.type], f"{name}.{arg}: {declared_types(declared)} for {spec.type}"
            assert (arg in required) == spec.required, f"{name}.{arg}: required is {arg in required}, the seed says {spec.required}"
            if spec.default is not NONE:
                assert declared.get("default") == spec.default, f"{name}.{arg}: default {declared.get('default')!r}"
            if spec.range is not None:
                bounds = next(v for v in declared.get("anyOf", [declared]) if v.get("type") != "null")
                assert (bounds.get("minimum"), bounds.get("maximum")) == spec.range, f"{name}.{arg}: range"
        assert tools[name].description, f"{name}: no description for the agent to route on"
    for extension_tool, extension_arg in EXTENSIONS[profile]:  # declared (no stale entry), optional: no seed call breaks
        assert extension_arg in tools[extension_tool].input_schema.get("properties", {}), (extension_tool, extension_arg)
        assert extension_arg not in tools[extension_tool].input_schema.get("required", [])


def test_every_allowed_difference_is_in_the_readme() -> None:
    readme = (Path(__file__).parents[3] / "README.md").read_text()
    for profile, extensions in EXTENSIONS.items():
        assert not extensions or EXTENSION_NOTES[profile] in readme, f"{profile}: extensions not in the README"
        for tool_name, argument in extensions:
            assert f"{argument}?" in next(line for line in readme.splitlines() if f"`{tool_name}(" in line), tool_name
    for notes in DEVIATIONS.values():
        for behaviour, phrase in notes.items():
            assert phrase in readme, f"{behaviour}: the README does not document it"


def test_seed000_eigen_calls_answer_in_the_pages_shapes(app) -> None:
    async def calls(client: Client) -> Any:
        captured = ok(await client.call_tool("capture_thought", {"raw": "Remember: team standups are Tuesdays at 10am.",
                                                                  "as_user": True}))
        thought = captured.structured_content["thought"]
        return {
            "captured": captured,
            "browse": ok(await client.call_tool("retrieve_thoughts", {"order": "created_at"})),
            "search": ok(await client.call_tool("retrieve_thoughts", {"query": "standups", "threshold": 0})),
            "edit": ok(await client.call_tool("edit_thought", {"thought_id": thought["id"], "raw_text": "Standups are Wednesdays."})),
            "delete": ok(await client.call_tool("delete_thought", {"thought_id": thought["id"]})),
            "empty": failed(await client.call_tool("capture_thought", {"raw": "   "})),
            "top_k": failed(await client.call_tool("retrieve_thoughts", {"query": "x", "top_k": 101})),
            "threshold": failed(await client.call_tool("retrieve_thoughts", {"query": "x", "threshold": 1.5})),
            "strict": [failed(await client.call_tool("retrieve_thoughts", {"query": "x", "top_k": "5"})),
                       failed(await client.call_tool("capture_thought", {"raw": "x", "as_user": "yes"}))],
            "missing": failed(await client.call_tool("delete_thought", {"thought_id": "00000000-0000-4000-8000-000000000000"})),
            "id": thought["id"],
        }

    r = session(app, "", calls)
    thought = r["captured"].structured_content["thought"]
    assert {"id", "normalizedText", "category", "metadata"} <= set(thought)  # "Thought subset"
    assert "embedding" not in str(r["captured"].structured_content)  # "Embedding vectors are never included"
    assert r["captured"].structured_content["summary"]  # "Natural-language stored-result summary"
    assert [t["id"] for t in r["browse"].structured_content["results"]] == [r["id"]]  # browse: newest open first
    hit = r["search"].structured_content["results"][0]
    assert {"normalizedText", "category", "score"} <= set(hit) and 0 <= hit["score"] <= 1
    assert r["edit"].structured_content["ok"] is True and r["edit"].structured_content["thought"]["id"] == r["id"]  # {ok, thought}
    assert r["delete"].structured_content["ok"] is True  # "Success confirmation"
    assert r["empty"].startswith("raw: ")  # "validation error if raw is empty"
    assert r["top_k"] == "top_k: must be at most 100" and r["threshold"] == "threshold: must be at most 1.0"
    assert "not found" in r["missing"]  # "or not-found"
    assert r["strict"] == ["top_k: must be an integer", "as_user: must be true or false"]  # JSON types, never coerced


def test_seed001_facts_calls_answer_in_the_rest_shapes_with_the_pages_errors(app, container) -> None:
    from fastapi.testclient import TestClient

    rest = TestClient(app, base_url=BASE)
    auth = {"authorization": f"Bearer {TEST_KEY}"}

    async def calls(client: Client) -> Any:
        episode = ok(await client.call_tool("add_episode", {"content": "Remember that Quinn works at Umbrella."}))
        fact = ok(await client.call_tool("record_fact", {"subject": "Quinn", "predicate": "lives_in", "object": "Oslo"}))
        return {
            "episode": episode, "fact": fact,
            "search": ok(await client.call_tool("search", {"query": "Where does Quinn live?", "limit": 100})),
            "retract": ok(await client.call_tool("retract", {"edge_uuid": fact.structured_content["edge"]["uuid"], "reason": "test"})),
            "limit": failed(await client.call_tool("search", {"query": "x", "limit": 101})),
            "zero": failed(await client.call_tool("search", {"query": "x", "limit": 0})),
            "bad_uuid": await client.call_tool("retract", {"edge_uuid": "not-a-uuid"}),
        }

    r = session(app, "facts", calls)

    async def reader(client: Client) -> Any:
        return await client.call_tool("retract", {"edge_uuid": "00000000-0000-4000-8000-000000000000"})

    denied = session(app, "facts", reader, key=WRITER_KEY)
    # "Returns: the same JSON shape as POST /v1/episodes" (and /v1/facts, /v1/search, /v1/retract)
    same = {
        "episode": rest.post("/v1/episodes", json={"content": "Rae lives in Rome."}, headers=auth).json(),
        "fact": rest.post("/v1/facts", json={"subject": "Rae", "predicate": "likes", "object": "tea"}, headers=auth).json(),
        "search": rest.post("/v1/search", json={"query": "Rae"}, headers=auth).json(),
    }
    same["retract"] = rest.post("/v1/retract", json={"edge_uuid": same["fact"]["edge"]["uuid"]}, headers=auth).json()
    for name, body in same.items():
        assert set(r[name].structured_content) == set(body), name
    assert set(r["fact"].structured_content["edge"]) == set(same["fact"]["edge"])
    assert r["search"].structured_content["edges"][0]["predicate"] == "lives in"  # "underscores → spaces"
    assert r["retract"].structured_content["edge"]["status"] == "retracted"  # "Audit row is preserved": status, reason
    assert r["limit"] == "limit: must be at most 100" and r["zero"] == "limit: must be at least 1"  # limit 1-100
    # Errors: missing_scope for retract without admin; "the error envelope shape matches the REST API"
    assert failed(denied).startswith("missing_scope: ")
    assert denied.structured_content["error"]["code"] == "missing_scope" and set(denied.structured_content["error"]) == {"code", "message"}
    assert failed(r["bad_uuid"]).startswith("edge_uuid: ") and r["bad_uuid"].structured_content["error"]["code"] == "validation_error"


def test_seed003_thrindex_calls_answer_in_the_pages_layouts_and_words(app) -> None:
    async def calls(client: Client) -> Any:
        stored = ok(await client.call_tool("store_memory", {
            "content": "User prefers weekly email digests over push notifications.", "agent_id": "claude-desktop",
            "user_id": "alice", "confidence": 1.0}))
        memory_id = stored.structured_content["id"]
        return {
            "stored": stored, "id": memory_id,
            "search": ok(await client.call_tool("search_memories", {
                "query": "how does the user want to receive updates", "agent_id": "claude-desktop", "user_id": "alice", "k": 5,
                "task_context": "composing a notification preferences summary"})),
            "list": ok(await client.call_tool("list_memories", {"agent_id": "claude-desktop", "user_id": "alice", "limit": 10})),
            "get": ok(await client.call_tool("get_memory", {"id": memory_id})),
            "k": [failed(await client.call_tool("search_memories", {"query": "x", "k": k})) for k in (0, 51)],
            "limit": failed(await client.call_tool("list_memories", {"limit": 51})),
            "big": failed(await client.call_tool("store_memory", {"content": "x" * 8193})),
            "query": failed(await client.call_tool("search_memories", {"query": "x" * 2049})),
            "no_content": failed(await client.call_tool("store_memory", {})),
            "confidence": failed(await client.call_tool("store_memory", {"content": "x", "confidence": 1.5})),
            "delete": ok(await client.call_tool("delete_memory", {"id": memory_id})),
            "gone": failed(await client.call_tool("delete_memory", {"id": memory_id + "0"})),
            "after": ok(await client.call_tool("search_memories", {"query": "weekly email digests", "user_id": "alice"})),
        }

    r = session(app, "thrindex", calls)
    memory_id = r["id"]
    assert text(r["stored"]).splitlines() == ["Memory queued for processing.", f"ID: {memory_id}", "Status: queued",
                                              "The memory will be indexed and available for search within a few seconds."]
    lines = text(r["search"]).splitlines()
    assert re.fullmatch(r"Found 1 memories \(latency: \d+ms, cache_hit: false\):", lines[0])
    assert re.fullmatch(r"1\. \[score: \d\.\d{3} \| importance: \d\.\d{2}\]", lines[1])
    assert lines[2:5] == [f"ID: {memory_id}", "Content: User prefers weekly email digests over push notifications.",
                              "Agent: claude-desktop | User: alice"]
    assert re.fullmatch(r"Created: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", lines[5])
    listed = text(r["list"]).splitlines()
    assert listed[0] == "Listing 1 memories:" and listed[1] == f"1. ID: {memory_id}"
    assert re.fullmatch(r"Status: active \| Importance: \d\.\d{2} \| Confidence: 1\.00", listed[2])
    assert "Content" not in text(r["list"])  # "content is intentionally excluded from list results"
    got = text(r["get"]).splitlines()
    assert [line.split(":")[0] for line in got] == ["Memory", "Content", "User prefers weekly email digests over push notifications.",
                                                    "Metadata", "Status", "Importance", "Confidence", "Level", "Agent", "User",
                                                    "Source", "Created", "Updated"]
    assert text(r["delete"]) == f"Memory {memory_id} has been deleted (soft delete — status set to deprecated)."
    assert r["gone"] == f"Memory not found: {memory_id}0"
    assert "weekly email digests" not in text(r["after"])  # "immediately excluded from all future searches"
    assert r["k"] == ["k: must be at least 1", "k: must be at most 50"] and r["limit"] == "limit: must be at most 50"
    assert r["big"].startswith("content: ") and "8" in r["big"] and r["query"].startswith("query: ")  # Max 8 KB, 2048 chars
    assert (r["no_content"], r["confidence"]) == ("content is required", "confidence must be between 0.0 and 1.0")

    async def write_only(client: Client) -> Any:
        return failed(await client.call_tool("search_memories", {"query": "x"}))

    async def read_only(client: Client) -> Any:
        return [failed(await client.call_tool("store_memory", {"content": "x"})),
                failed(await client.call_tool("delete_memory", {"id": memory_id}))]

    assert session(app, "thrindex", write_only, key=WRITER_KEY) == "API key is missing the memory:read scope."
    assert session(app, "thrindex", read_only, key=READER_KEY) == ["API key is missing the memory:write scope.",
                                                                   "API key is missing the memory:delete scope."]


def test_seed004_r3_calls_answer_in_the_pages_texts(app, aws) -> None:
    async def calls(client: Client) -> Any:
        saved = ok(await client.call_tool("add_memory", {"content": "The documentation example project uses TypeScript.",
                                                         "user_id": "r3-quickstart", "priority": "high"}))
        memory_id = saved.structured_content["id"]
        return {
            "saved": saved, "id": memory_id,
            "again": ok(await client.call_tool("add_memory", {"content": "The documentation example project uses TypeScript.",
                                                              "user_id": "r3-quickstart"})),
            "messages": ok(await client.call_tool("add_memory", {"messages": [
                {"role": "user", "content": "I moved to Lisbon."}, {"role": "assistant", "content": "Noted."}],
                "user_id": "r3-quickstart"})),
            "critical": failed(await client.call_tool("add_memory", {"content": "x", "priority": "critical"})),
            "found": ok(await client.call_tool("search_memory", {"query": "TypeScript", "user_id": "r3-quickstart"})),
            "nothing": ok(await client.call_tool("search_memory", {"query": "kangaroo", "user_id": "nobody"})),
            "missing": failed(await client.call_tool("get_memory", {"memory_id": "nope"})),
            "update": ok(await client.call_tool("update_memory", {"memory_id": memory_id, "metadata": {"k": 1}})),
            "page": ok(await client.call_tool("get_all_memories", {"user_id": "r3-quickstart"})),
            "dedup": ok(await client.call_tool("deduplicate_memories", {"user_id": "r3-quickstart", "similarity_threshold": 0.95,
                                                                       "dry_run": True})),
            "stats": ok(await client.call_tool("cache_stats", {})),
            "status": ok(await client.call_tool("sync_status", {})),
            "import": ok(await client.call_tool("import_memories", {"source": "json", "user_id": "r3-quickstart", "data": {
                "results": [{"memory": "Gus plays chess."}, {"content": "   "}]}})),
            "graph": ok(await client.call_tool("get_knowledge_graph", {})),  # every argument optional in the seed
            "delete": ok(await client.call_tool("delete_memory", {"memory_id": memory_id})),
            # DEVIATIONS["r3"]["absent arguments are {}"]: the SDK's call_tool(name) sends no arguments
            "absent": await client.call_tool("cache_stats"),
            "absent_required": await client.call_tool("search_memory"),
        }

    r = session(app, "r3", calls)
    # seed 004: "The handler returns isError: true when arguments are absent"
    if seed_or_deviation("r3", "absent arguments are {}", r["absent"].is_error):
        assert text(r["absent"]).startswith("Cache (") and failed(r["absent_required"]) == "query: is required"
    memory_id = r["id"]
    # README: the acknowledgement carries the id (r3's defect fixed); "Saved" / "Already saved" as the page says
    assert text(r["saved"]) == f"Saved (id: {memory_id})" and text(r["again"]) == f"Already saved (id: {memory_id})"
    assert r["critical"] == "priority: must be 'high', 'medium' or 'low'"  # "critical is not in the schema"
    assert "Lisbon" in text(r["found"]) or "TypeScript" in text(r["found"])
    assert text(r["nothing"]) == "No memories found"
    assert r["missing"] == "Memory not found: nope"
    assert r["update"].structured_content["content"] == "The documentation example project uses TypeScript."  # kept
    assert r["page"].structured_content["offset"] == 0 and len(r["page"].structured_content["memories"]) == 2
    assert text(r["dedup"]).startswith("Found 0 duplicate groups")
    assert text(r["stats"]).startswith("Cache (")
    assert text(r["status"]).startswith(("All operations complete", "Pending: ")) and "{" not in text(r["status"])
    assert text(r["import"]).splitlines()[0] == "Imported 1, skipped 1, failed 0"  # "empty items are skipped"
    assert text(r["graph"]).startswith("Knowledge graph of user default (no entity named)")
    assert text(r["delete"]) == "Deleted"
    messages = [m for m in r["page"].structured_content["memories"] if "Lisbon" in m["content"]]
    assert [m["content"] for m in messages] == ["I moved to Lisbon."]  # "removes assistant messages before storage"
