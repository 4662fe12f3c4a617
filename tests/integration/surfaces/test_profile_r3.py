"""Contract of the r3 profile (seed 004) at /mcp/r3, in process: the official SDK client over the ASGI
app, moto and the real worker underneath. Each of r3's documented defects has a test here that
r3's behaviour would fail."""

from __future__ import annotations

import re
from typing import Any

import pytest

from mcp import Client
from mnemo.services.jobs.service import MEM0_DISABLED
from tests.conftest import TEST_KEY
from tests.integration.conftest import OTHER_KEY
from tests.integration.surfaces.test_profile_eigen import REQUIRED, Arg, Hints, declared
from tests.integration.surfaces.test_profile_thrindex import UUID, enrich, error_text, text
from tests.integration.surfaces.test_profile_thrindex import run as run_at

SEED_004: dict[str, dict[str, Arg]] = {
    "add_memory": {"content": Arg("string|null", None), "messages": Arg("array|null", None),
                   "user_id": Arg("string|null", None), "metadata": Arg("object|null", None),
                   "priority": Arg("string|null", None, enum=["high", "medium", "low"]), "async": Arg("boolean", True),
                   "skip_duplicate_check": Arg("boolean", False)},
    "search_memory": {"query": Arg("string"), "limit": Arg("integer", 10, range=(1, 100)),
                      "prefer_cache": Arg("boolean", True), "user_id": Arg("string|null", None)},
    "get_memory": {"memory_id": Arg("string"), "user_id": Arg("string|null", None)},
    "update_memory": {"memory_id": Arg("string"), "content": Arg("string|null", None),
                      "metadata": Arg("object|null", None), "user_id": Arg("string|null", None)},
    "get_all_memories": {"user_id": Arg("string|null", None), "limit": Arg("integer", 100, range=(1, 100)),
                         "offset": Arg("integer", 0, range=(0, 10_000)), "prefer_cache": Arg("boolean", True),
                         "include_cache_stats": Arg("boolean", False)},
    "delete_memory": {"memory_id": Arg("string")},
    "deduplicate_memories": {"user_id": Arg("string|null", None),
                             "similarity_threshold": Arg("number", 0.85, range=(0.5, 1.0)), "dry_run": Arg("boolean", True)},
    "cache_stats": {},
    "sync_status": {},
    "optimize_cache": {"force_refresh": Arg("boolean", False), "max_memories": Arg("integer|null", None, range=(1, None))},
    "extract_entities": {"text": Arg("string")},
    "get_knowledge_graph": {"entity_type": Arg("string|null", None), "entity_name": Arg("string|null", None),
                            "relationship_type": Arg("string|null", None), "limit": Arg("integer", 50, range=(1, 200)),
                            "user_id": Arg("string|null", None)},  # user_id: Mnemo's extension (README r3 table)
    "find_connections": {"from_entity": Arg("string"), "to_entity": Arg("string|null", None),
                         "max_depth": Arg("integer", 2, range=(1, 3)), "user_id": Arg("string|null", None)},
    "import_memories": {"source": Arg("string", enum=["json", "json_file", "mem0_api"]),
                        "data": Arg("array|object|null", None), "file_path": Arg("string|null", None),
                        "api_key": Arg("string|null", None), "user_id": Arg("string|null", None),
                        "batch_size": Arg("integer", 50, range=(1, 500)), "skip_duplicates": Arg("boolean", True)},
}
READ_ONLY = {"search_memory", "get_memory", "get_all_memories", "cache_stats", "sync_status", "extract_entities",
             "get_knowledge_graph", "find_connections"}


def run(app: Any, calls: Any, *, key: str = TEST_KEY) -> Any:
    return run_at(app, calls, key=key, path="/mcp/r3")


def call(app: Any, tool: str, arguments: dict[str, Any], *, key: str = TEST_KEY) -> Any:
    async def calls(client: Client) -> Any:
        return await client.call_tool(tool, arguments)

    return run(app, calls, key=key)


def saved_id(result: Any) -> str:
    match = re.fullmatch(rf"(?:Saved|Already saved) \(id: ({UUID})\).*", text(result))
    assert match, text(result)
    return match.group(1)


@pytest.fixture
def app(container, principal):
    from mnemo.surfaces.app import create_app

    container.keys.ensure("other", "other", ["admin"], OTHER_KEY)
    return create_app(container)


def test_all_fourteen_tools_are_the_seeds_argument_for_argument(app) -> None:
    async def calls(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in run(app, calls)}
    assert list(tools) == list(SEED_004)
    for name, arguments in SEED_004.items():
        schema = tools[name].input_schema
        assert {arg: declared(s) for arg, s in schema.get("properties", {}).items()} == arguments, name
        assert schema.get("required", []) == [a for a, spec in arguments.items() if spec.default is REQUIRED], name
        assert schema["additionalProperties"] is False
        assert tools[name].annotations.read_only_hint is (name in READ_ONLY), name
        assert len(tools[name].description) > 60, name
    assert Hints(True, False, True) == Hints(tools["get_memory"].annotations.read_only_hint,
                                             tools["get_memory"].annotations.destructive_hint,
                                             tools["get_memory"].annotations.idempotent_hint)


def test_add_returns_the_id_and_search_forwards_user_id(app, aws) -> None:
    """r3: no id in the acknowledgement, and search ignores user_id. Mnemo: both fixed."""
    async def calls(client: Client) -> Any:
        alice = await client.call_tool("add_memory", {"content": "Alice's locker code is 4512.", "user_id": "alice"})
        bob = await client.call_tool("add_memory", {"content": "Bob's locker code is 9931.", "user_id": "bob"})
        as_alice = await client.call_tool("search_memory", {"query": "locker code", "user_id": "alice"})
        as_bob = await client.call_tool("search_memory", {"query": "locker code", "user_id": "bob"})
        nobody = await client.call_tool("search_memory", {"query": "locker code"})
        return alice, bob, as_alice, as_bob, nobody

    alice, bob, as_alice, as_bob, nobody = run(app, calls)
    alice_id, bob_id = saved_id(alice), saved_id(bob)
    assert alice.structured_content["id"] == alice_id
    hits = text(as_alice).split("\n---\n")
    assert len(hits) == 1 and re.fullmatch(rf"\[id: {alice_id} \| score: [01]\.\d{{3}}\]\nAlice's locker code is 4512\.", hits[0])
    assert [r["id"] for r in as_bob.structured_content["results"]] == [bob_id]  # the positive control for bob
    assert text(nobody) == "No memories found"  # the "default" user has none


def test_get_update_keeps_content_on_metadata_only_and_reembeds_on_content(app, aws, container) -> None:
    """r3: a metadata-only update wipes content; a content update keeps the old vector."""
    memory_id = saved_id(call(app, "add_memory", {"content": "The team standup is on Tuesdays.", "priority": "high"}))
    enrich(aws)
    meta = call(app, "update_memory", {"memory_id": memory_id, "metadata": {"topic": "meetings"}})
    assert meta.structured_content["content"] == "The team standup is on Tuesdays."
    assert meta.structured_content["metadata"] == {"topic": "meetings"} and meta.structured_content["version"] == 2
    changed = call(app, "update_memory", {"memory_id": memory_id, "content": "The team standup moved to Thursdays."})
    assert changed.structured_content["enrichment"] == "pending" and changed.structured_content["version"] == 3
    enrich(aws)
    found = call(app, "search_memory", {"query": "standup Thursdays"}).structured_content["results"]
    assert [r["id"] for r in found] == [memory_id]
    got = call(app, "get_memory", {"memory_id": memory_id})
    assert got.structured_content["content"] == "The team standup moved to Thursdays."
    assert got.structured_content["enrichment"] == "enriched"
    assert [a.action for a in container.store.history("local", memory_id)] == ["created", "edited", "edited"]


def test_get_memory_errors_are_is_error_and_do_not_cross_users(app) -> None:
    memory_id = saved_id(call(app, "add_memory", {"content": "Carol likes jazz.", "user_id": "carol"}))
    assert call(app, "get_memory", {"memory_id": memory_id, "user_id": "carol"}).structured_content["id"] == memory_id
    assert error_text(call(app, "get_memory", {"memory_id": memory_id, "user_id": "dave"})) == f"Memory not found: {memory_id}"
    assert error_text(call(app, "get_memory", {"memory_id": "nope"})) == "Memory not found: nope"
    assert error_text(call(app, "delete_memory", {"memory_id": "nope"})) == "Memory not found: nope"
    assert call(app, "get_memory", {"memory_id": memory_id}, key=OTHER_KEY).is_error  # another tenant


def test_get_all_memories_returns_the_page_with_total_and_next_offset(app) -> None:
    ids = [saved_id(call(app, "add_memory", {"content": f"Fact number {n} about the garden.", "user_id": "erin",
                                              "skip_duplicate_check": True})) for n in range(3)]
    first = call(app, "get_all_memories", {"user_id": "erin", "limit": 2}).structured_content
    second = call(app, "get_all_memories", {"user_id": "erin", "limit": 2, "offset": 2}).structured_content
    assert [m["id"] for m in first["memories"]] == ids[::-1][:2] and first["next_offset"] == 2 and first["total"] is None
    assert [m["id"] for m in second["memories"]] == ids[:1] and second["next_offset"] is None and second["total"] == 3


def test_delete_is_soft_and_answers_deleted(app, container) -> None:
    memory_id = saved_id(call(app, "add_memory", {"content": "Frank's flight is on Friday."}))
    assert text(call(app, "delete_memory", {"memory_id": memory_id})) == "Deleted"
    assert text(call(app, "search_memory", {"query": "Frank flight Friday"})) == "No memories found"
    assert container.store.get("local", memory_id).status.value == "archived"


def test_validation_messages_name_the_field(app) -> None:
    async def calls(client: Client) -> Any:
        return [
            await client.call_tool("add_memory", {}),
            await client.call_tool("add_memory", {"content": "x", "messages": [{"role": "user", "content": "y"}]}),
            await client.call_tool("add_memory", {"content": "x", "priority": "critical"}),
            await client.call_tool("add_memory", {"messages": [{"role": "assistant", "content": "y"}]}),
            await client.call_tool("update_memory", {"memory_id": "x"}),
            await client.call_tool("search_memory", {"query": "x", "limit": 101}),
            await client.call_tool("optimize_cache", {"max_memories": 0}),
            await client.call_tool("import_memories", {"source": "mem0_api", "api_key": "k"}),
            await client.call_tool("get_knowledge_graph", {"entity_name": ""}),
            await client.call_tool("search_memory", {"query": "x", "top_k": 3}),
        ]

    assert [error_text(r) for r in run(app, calls)] == [
        "content and messages: give exactly one of them",
        "content and messages: give exactly one of them",
        "priority: must be 'high', 'medium' or 'low'",
        "messages: no user or system message with content (assistant messages are dropped)",
        "content and metadata: give at least one of them",
        "limit: must be at most 100",
        "max_memories: must be at least 1",
        MEM0_DISABLED,
        "entity_name: must not be empty",
        "unknown argument top_k; search_memory accepts query, limit, prefer_cache, user_id",
    ]


def test_sync_status_answers_in_words_never_a_python_dict(app, container) -> None:
    from tests.integration.surfaces.test_profile_thrindex import READER_KEY

    container.keys.ensure("local", "reader", ["memory:read", "memory:write"], READER_KEY)
    call(app, "add_memory", {"content": "Quentin's train leaves at nine."})  # pending: not enriched here
    admin = call(app, "sync_status", {})  # the test key is an admin key: it also gets the queue-wide depths
    assert text(admin).splitlines() == [
        "Pending: 1; failed (in the dead-letter queue): 0",
        "Queue-wide, every tenant: 1 queued, 0 in flight, 0 in the dead-letter queue"]
    assert admin.structured_content["queue"] == {"queued": 1, "in_flight": 0, "dead_letters": 0}
    reader = text(call(app, "sync_status", {}, key=READER_KEY))  # not an admin: its tenant only, no queue line
    assert "Queue-wide" not in reader and not any(c in reader for c in "{}'")


def test_add_memory_says_that_assistant_messages_are_dropped(app) -> None:
    async def calls(client: Client) -> Any:
        return (await client.list_tools()).tools

    add = next(t for t in run(app, calls) if t.name == "add_memory")
    assert "assistant messages are dropped" in add.description  # the tool's description, not only the argument's
    saved = call(app, "add_memory", {"messages": [{"role": "user", "content": "Rosa likes figs."},
                                                  {"role": "assistant", "content": "Noted!"}]})
    memory = call(app, "get_memory", {"memory_id": saved.structured_content["id"]}).structured_content
    assert memory["content"] == "Rosa likes figs."  # what the description says: the assistant's line is not stored


def test_a_memory_whose_text_is_json_is_saved_as_text(app) -> None:
    for content in ['{"theme": "dark"}', '["tea", "coffee"]', "null"]:
        saved = call(app, "add_memory", {"content": content, "user_id": "json-text", "skip_duplicate_check": True})
        assert text(saved).startswith("Saved (id: "), text(saved)
        got = call(app, "get_memory", {"memory_id": saved.structured_content["id"]}).structured_content
        assert got["content"] == content  # verbatim, not parsed
    updated = call(app, "update_memory", {"memory_id": saved.structured_content["id"], "content": '{"a": 1}'})
    assert updated.structured_content["content"] == '{"a": 1}'
