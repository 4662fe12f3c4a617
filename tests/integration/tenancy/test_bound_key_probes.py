"""Bound-key probes (issue 26 item 9): a key bound to user "alice" that names another user in any
argument, on any surface, is refused (`user_id: this key is bound to user "alice"`); bob's own key
sending the identical request gets bob's answer (the control beside each refusal). Omitting the
argument, or naming alice, acts for alice. The duplicate check is no oracle for another user's text.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from tests.integration.conftest import MCP_HEADERS, auth

BOUND = 'user_id: this key is bound to user "alice"'
SCOPES = ["memory:read", "memory:write", "memory:delete"]
_ids = itertools.count(1)


def tool(http: Any, path: str, name: str, arguments: dict[str, Any], key: str | None = None) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    headers = {**MCP_HEADERS, **(auth(key) if key else auth()), "mcp-protocol-version": "2025-06-18"}
    response = http.post(path, json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["result"]


def text_of(result: dict[str, Any]) -> str:
    return " ".join(c.get("text", "") for c in result.get("content", []))


def new_key(http: Any, user_id: str) -> str:
    response = http.post("/v1/keys", json={"name": user_id, "scopes": SCOPES, "user_id": user_id}, headers=auth())
    assert response.status_code == 201, response.text
    return str(response.json()["secret"])


@pytest.fixture
def world(http) -> dict[str, Any]:
    """alice's and bob's bound keys; bob's memory about bees, and a fact of bob's graph."""
    alice, bob = new_key(http, "alice"), new_key(http, "bob")
    memory = http.post("/v1/memories", json={"content": "Bob keeps bees in Porto", "as_user": True}, headers=auth(bob))
    assert memory.status_code == 201 and memory.json()["user_id"] == "bob"
    fact = http.post("/v1/facts", json={"subject": "Bob", "predicate": "lives_in", "object": "Porto"}, headers=auth(bob))
    assert fact.status_code == 201, fact.text
    edge = fact.json()["edge"]
    return {"alice": alice, "bob": bob, "memory": memory.json()["id"],
            "source": edge["source"]["uuid"], "target": edge["target"]["uuid"]}


Probe = Callable[[Any, dict[str, Any], str, str], tuple[bool, str]]


def rest(method: str, path: str, body: Callable[[dict[str, Any], str], dict[str, Any]] | None = None,
         params: Callable[[dict[str, Any], str], dict[str, Any]] | None = None) -> Probe:
    def probe(http: Any, w: dict[str, Any], key: str, user: str) -> tuple[bool, str]:
        response = http.request(method, path.format(**w), json=body(w, user) if body else None,
                                params=params(w, user) if params else None, headers=auth(key))
        if not response.is_success:
            code = response.json()["error"]["code"]
            assert (response.status_code, code) in {(403, "bound_to_user"), (404, "not_found")}, response.text
            return False, response.json()["error"]["message"]
        return True, response.text

    return probe


def mcp(path: str, name: str, arguments: Callable[[dict[str, Any], str], dict[str, Any]]) -> Probe:
    def probe(http: Any, w: dict[str, Any], key: str, user: str) -> tuple[bool, str]:
        result = tool(http, path, name, arguments(w, user), key)
        return not result.get("isError"), text_of(result) + str(result.get("structuredContent", ""))

    return probe


# (surface and argument, the probe, what only bob's answer holds; None: a write, its success is the answer)
PROBES: list[tuple[str, Probe, str | None]] = [
    ("REST POST /v1/memories user_id", rest("POST", "/v1/memories", body=lambda w, u: {"content": "a note", "user_id": u}), None),
    ("REST GET /v1/memories user_id", rest("GET", "/v1/memories", params=lambda w, u: {"user_id": u, "author": "all"}), "bees"),
    ("REST POST /v1/memories/search user_id",
     rest("POST", "/v1/memories/search", body=lambda w, u: {"query": "bees Porto", "user_id": u}), "bees"),
    ("REST POST /v1/import user_id",
     rest("POST", "/v1/import", body=lambda w, u: {"data": [{"content": "imported note"}], "user_id": u}), None),
    ("REST GET /v1/export user_id", rest("GET", "/v1/export", params=lambda w, u: {"user_id": u}), "bees"),
    ("REST GET /v1/entities/{id} user_id", rest("GET", "/v1/entities/{source}", params=lambda w, u: {"user_id": u}), "Porto"),
    ("REST GET /v1/entities/{id}/neighbours user_id",
     rest("GET", "/v1/entities/{source}/neighbours", params=lambda w, u: {"user_id": u}), "Porto"),
    ("REST GET /v1/paths user_id",
     rest("GET", "/v1/paths", params=lambda w, u: {"from": w["source"], "to": w["target"], "user_id": u}), "Porto"),
    ("r3 add_memory user_id", mcp("/mcp/r3", "add_memory", lambda w, u: {"content": "a note", "user_id": u}), None),
    ("r3 search_memory user_id", mcp("/mcp/r3", "search_memory", lambda w, u: {"query": "bees Porto", "user_id": u}), "bees"),
    ("r3 get_memory user_id", mcp("/mcp/r3", "get_memory", lambda w, u: {"memory_id": w["memory"], "user_id": u}), "bees"),
    ("r3 update_memory user_id",
     mcp("/mcp/r3", "update_memory", lambda w, u: {"memory_id": w["memory"], "metadata": {"k": 1}, "user_id": u}), "bees"),
    ("r3 get_all_memories user_id", mcp("/mcp/r3", "get_all_memories", lambda w, u: {"user_id": u}), "bees"),
    ("r3 deduplicate_memories user_id", mcp("/mcp/r3", "deduplicate_memories", lambda w, u: {"user_id": u}), None),
    ("r3 deduplicate_memories dry_run=false user_id",
     mcp("/mcp/r3", "deduplicate_memories", lambda w, u: {"user_id": u, "dry_run": False}), None),
    ("r3 import_memories user_id",
     mcp("/mcp/r3", "import_memories", lambda w, u: {"source": "json", "data": [{"content": "imported"}], "user_id": u}), None),
    ("thrindex store_memory user_id", mcp("/mcp/thrindex", "store_memory", lambda w, u: {"content": "a note", "user_id": u}), None),
    ("thrindex search_memories user_id",
     mcp("/mcp/thrindex", "search_memories", lambda w, u: {"query": "bees Porto", "user_id": u}), "bees"),
    ("thrindex list_memories user_id", mcp("/mcp/thrindex", "list_memories", lambda w, u: {"user_id": u}), "'user_id': 'bob'"),
]


@pytest.mark.parametrize(("probe", "answer"), [p[1:] for p in PROBES], ids=[p[0] for p in PROBES])
def test_a_bound_key_naming_another_user_is_refused_and_the_owner_is_answered(
        http, world, probe: Probe, answer: str | None) -> None:
    ok, owners = probe(http, world, world["bob"], "bob")  # control: bob's own key, the identical request
    assert ok, owners
    if answer is not None:
        assert answer in owners
    ok, refused = probe(http, world, world["alice"], "bob")
    assert not ok and refused.startswith(BOUND), refused
    if answer is not None:
        assert answer not in refused
    # alice naming herself acts for alice: answered (bob's memory or entity by id: not found, as for any id)
    ok, own = probe(http, world, world["alice"], "alice")
    assert ok or ("not found" in own.lower() and not own.startswith(BOUND)), own
    if answer is not None:
        assert answer not in own


def test_the_duplicate_check_is_no_oracle_for_another_users_text(http, world) -> None:
    bob, alice = world["bob"], world["alice"]
    pin = http.post("/v1/memories", json={"content": "My bank PIN is 4471", "as_user": True}, headers=auth(bob)).json()
    http.post("/v1/memories", json={"content": "The vault code is 9911", "as_user": True}, headers=auth()).json()
    # control: bob's own key is told it already has it
    again = tool(http, "/mcp/r3", "add_memory", {"content": "My bank PIN is 4471", "user_id": "bob"}, bob)
    assert text_of(again) == f"Already saved (id: {pin['id']})"
    # alice's key naming bob: refused on every surface, no id, no "duplicate"
    for path, name, arguments in [
        ("/mcp/r3", "add_memory", {"content": "My bank PIN is 4471", "user_id": "bob"}),
        ("/mcp/r3", "import_memories", {"source": "json", "data": [{"content": "My bank PIN is 4471"}], "user_id": "bob"}),
    ]:
        result = tool(http, path, name, arguments, alice)
        assert result.get("isError") and text_of(result) == BOUND and pin["id"] not in str(result)
    rest = http.post("/v1/import", json={"data": [{"content": "My bank PIN is 4471"}], "user_id": "bob"}, headers=auth(alice))
    assert rest.status_code == 403 and rest.json()["error"]["message"] == BOUND and pin["id"] not in rest.text
    # alice's own writes (no user_id) of bob's text and of user default's text are saved for alice, not dropped
    for content in ("My bank PIN is 4471", "The vault code is 9911"):
        saved = tool(http, "/mcp/r3", "add_memory", {"content": content}, alice)
        assert text_of(saved).startswith("Saved (id: "), text_of(saved)
        memory = http.get(f"/v1/memories/{saved['structuredContent']['id']}", headers=auth(alice)).json()
        assert memory["user_id"] == "alice" and memory["content"] == content
    imported = http.post("/v1/import", json={"data": [{"content": "My bank PIN is 4471 too"}]}, headers=auth(alice)).json()
    assert len(imported["imported"]) == 1 and not imported["skipped"]
    # and alice's repeat of her own memory is a duplicate of hers (the check runs in her namespace)
    mine = tool(http, "/mcp/r3", "add_memory", {"content": "My bank PIN is 4471"}, alice)
    assert text_of(mine).startswith("Already saved") and pin["id"] not in text_of(mine)


def test_omitting_the_user_acts_for_the_bound_user_on_every_surface(http, world) -> None:
    alice = world["alice"]
    made = [
        http.post("/v1/memories", json={"content": "alice rest note"}, headers=auth(alice)).json()["id"],
        tool(http, "/mcp/r3", "add_memory", {"content": "alice r3 note"}, alice)["structuredContent"]["id"],
        tool(http, "/mcp/thrindex", "store_memory", {"content": "alice thrindex note"}, alice)["structuredContent"]["id"],
        tool(http, "/mcp", "capture_thought", {"raw": "alice eigen note", "as_user": True}, alice)["structuredContent"]["thought"]["id"],
        tool(http, "/mcp/facts", "add_episode", {"content": "alice facts episode"}, alice)["structuredContent"]["episode"]["uuid"],
    ]
    for memory_id in made:
        assert http.get(f"/v1/memories/{memory_id}", headers=auth()).json()["user_id"] == "alice"
    listed = http.get("/v1/memories", params={"author": "all"}, headers=auth(alice)).json()
    assert listed["scope"]["user_id"] == "alice" and set(made) <= {m["id"] for m in listed["results"]}
    assert "bees" not in str(listed)
    # control: the unbound key's omitted user is still "default", where none of alice's notes are
    default = http.get("/v1/memories", params={"author": "all"}, headers=auth()).json()
    assert default["scope"]["user_id"] == "default" and not set(made) & {m["id"] for m in default["results"]}


def test_capture_thought_author_override_stays_in_the_bound_users_namespace(http, world) -> None:
    alice, bob = world["alice"], world["bob"]
    stored = tool(http, "/mcp", "capture_thought", {"raw": "alice's tulip order", "as_user": True, "author": "mn_bobsagent"}, alice)
    thought = stored["structuredContent"]["thought"]
    memory = http.get(f"/v1/memories/{thought['id']}", headers=auth()).json()
    assert memory["user_id"] == "alice" and memory["agent_id"] == "mn_bobsagent"
    assert "tulip" in str(tool(http, "/mcp", "retrieve_thoughts", {}, alice))  # alice, the owner, sees it
    assert "tulip" not in str(tool(http, "/mcp", "retrieve_thoughts", {"author": "all"}, bob))  # bob does not
    assert http.get(f"/v1/memories/{thought['id']}", headers=auth(bob)).status_code == 404


def test_r3_graph_tools_read_the_bound_users_graph(http, world) -> None:
    alice, bob = world["alice"], world["bob"]
    assert http.post("/v1/facts", json={"subject": "Alice", "predicate": "lives_in", "object": "Lyon"},
                     headers=auth(alice)).status_code == 201
    mine = tool(http, "/mcp/r3", "get_knowledge_graph", {"entity_name": "Alice"}, alice)
    assert not mine.get("isError") and "Lyon" in text_of(mine)
    assert "Porto" in text_of(tool(http, "/mcp/r3", "get_knowledge_graph", {"entity_name": "Bob"}, bob))  # control
    assert "Porto" not in str(tool(http, "/mcp/r3", "get_knowledge_graph", {"entity_name": "Bob"}, alice))
    assert "Porto" in text_of(tool(http, "/mcp/r3", "find_connections", {"from_entity": "Bob"}, bob))  # control
    assert "Porto" not in str(tool(http, "/mcp/r3", "find_connections", {"from_entity": "Bob"}, alice))
    # the graph tools' user_id (an extension): a bound key names only its own user; the overview is its own graph
    for name, arguments in [("get_knowledge_graph", {"user_id": "bob"}), ("find_connections", {"from_entity": "Bob", "user_id": "bob"})]:
        refused = tool(http, "/mcp/r3", name, arguments, alice)
        assert refused.get("isError") and "Porto" not in str(refused), name
    assert "Lyon" in text_of(tool(http, "/mcp/r3", "get_knowledge_graph", {"user_id": "alice"}, alice))  # control
    overview = text_of(tool(http, "/mcp/r3", "get_knowledge_graph", {}, alice))
    assert "Lyon" in overview and "Porto" not in overview


def test_an_import_item_naming_another_user_fails_for_a_bound_key(http, world) -> None:
    items = [{"content": "item of bob's export", "user_id": "bob"}, {"content": "item of alice's export", "user_id": "alice"}]
    as_alice = http.post("/v1/import", json={"data": items}, headers=auth(world["alice"])).json()
    assert [f["index"] for f in as_alice["failed"]] == [0] and as_alice["failed"][0]["reason"] == BOUND
    assert len(as_alice["imported"]) == 1  # alice's own item is imported
    # control: the unbound key imports both (the call's user_id decides where items go)
    as_admin = http.post("/v1/import", json={"data": items, "user_id": "carol"}, headers=auth()).json()
    assert len(as_admin["imported"]) == 2 and not as_admin["failed"]


def test_a_bound_key_reads_no_job_of_another_user(http, world) -> None:
    items = [{"content": f"bob's imported note {i}"} for i in range(201)]  # past the synchronous limit: a job
    started = http.post("/v1/import", json={"data": items}, headers=auth(world["bob"]))
    assert started.status_code == 202, started.text
    job = started.json()["job_id"]
    assert http.get(f"/v1/jobs/{job}", headers=auth(world["bob"])).status_code == 200  # control: bob reads his job
    theirs = http.get(f"/v1/jobs/{job}", headers=auth(world["alice"]))
    nothing = http.get("/v1/jobs/00000000-0000-4000-8000-000000000000", headers=auth(world["alice"]))
    nothing_id = "00000000-0000-4000-8000-000000000000"
    assert theirs.status_code == nothing.status_code == 404  # as if it did not exist (issue 27: 404, as documented)
    assert theirs.json()["error"]["message"].replace(job, nothing_id) == nothing.json()["error"]["message"] == f"job {nothing_id} not found"
