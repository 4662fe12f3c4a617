"""Key admin over REST and user-bound keys (issue 15), on moto through the deployed app."""

from __future__ import annotations

import itertools
from typing import Any

from tests.integration.conftest import MCP_HEADERS, auth

_ids = itertools.count(1)


def tool(http: Any, path: str, name: str, arguments: dict[str, Any], key: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    response = http.post(path, json=body, headers={**MCP_HEADERS, **auth(key), "mcp-protocol-version": "2025-06-18"})
    assert response.status_code == 200, response.text
    return response.json()["result"]


def new_key(http: Any, **body: Any) -> dict[str, Any]:
    response = http.post("/v1/keys", json={"name": "app", "scopes": ["memory:read", "memory:write"], **body}, headers=auth())
    assert response.status_code == 201, response.text
    return response.json()


def test_create_list_revoke_shows_the_secret_once_and_never_a_hash(http) -> None:
    created = new_key(http, name="ci")
    assert created["secret"].startswith(created["prefix"] + "_")
    assert http.get("/v1/memories", headers=auth(created["secret"])).status_code == 200  # the new key works
    listed = http.get("/v1/keys", headers=auth())
    assert listed.status_code == 200
    assert created["prefix"] in [k["prefix"] for k in listed.json()]
    assert created["secret"] not in listed.text and "key_hash" not in listed.text and "secret" not in listed.text
    revoked = http.delete(f"/v1/keys/{created['prefix']}", headers=auth())
    assert revoked.status_code == 200 and revoked.json()["revoked_at"]
    assert http.delete("/v1/keys/mn_nosuch", headers=auth()).status_code == 404


def test_key_admin_needs_the_admin_scope_and_changes_nothing_without_it(http) -> None:
    writer = new_key(http, scopes=["memory:write"])["secret"]
    before = http.get("/v1/keys", headers=auth()).json()
    for response in (http.post("/v1/keys", json={"name": "x", "scopes": ["admin"]}, headers=auth(writer)),
                     http.get("/v1/keys", headers=auth(writer)),
                     http.delete(f"/v1/keys/{before[0]['prefix']}", headers=auth(writer))):
        assert response.status_code == 403 and response.json()["error"]["code"] == "missing_scope"
    def unchanged(keys: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in key.items() if k != "last_used_at"} for key in keys]

    assert unchanged(http.get("/v1/keys", headers=auth()).json()) == unchanged(before)  # control: same keys, none revoked


def test_key_fields_are_checked_field_first(http) -> None:
    bad = http.post("/v1/keys", json={"name": "x", "scopes": ["admin"], "user_id": "ana"}, headers=auth())
    assert bad.status_code == 400 and bad.json()["error"]["message"].startswith("scopes: ")
    past = http.post("/v1/keys", json={"name": "x", "scopes": ["memory:read"], "expires_at": "2020-01-01T00:00:00Z"},
                     headers=auth())
    assert past.status_code == 400 and past.json()["error"]["message"] == "expires_at: must be in the future"


def test_an_expired_key_is_refused(http, container) -> None:
    # FixedClock: 2025-06-07 09:00 plus a millisecond per reading; this key expires a second later.
    key = new_key(http, expires_at="2025-06-07T09:00:01Z")["secret"]
    assert http.get("/v1/memories", headers=auth(key)).status_code == 200  # control: before expiry
    for _ in range(1000):  # each reading of the clock moves it a millisecond on
        container.clock()
    refused = http.get("/v1/memories", headers=auth(key))
    assert refused.status_code == 401 and refused.json()["error"]["message"] == "this API key has expired"


def test_last_used_is_written_at_most_once_a_minute_per_key(http, container) -> None:
    key = new_key(http)
    writes: list[str] = []

    def count(params: dict[str, Any], **_: Any) -> None:
        if "last_used_at" in params.get("UpdateExpression", ""):
            writes.append(params["Key"]["key_hash"]["S"])

    container._dynamodb.meta.events.register("provide-client-params.dynamodb.UpdateItem", count)
    for _ in range(5):
        assert http.get("/v1/usage", headers=auth(key["secret"])).status_code == 200
    assert len(writes) == 1
    listed = {k["prefix"]: k for k in http.get("/v1/keys", headers=auth()).json()}
    assert listed[key["prefix"]]["last_used_at"] is not None


BOUND = 'user_id: this key is bound to user "ana"'


def test_a_bound_key_reads_and_writes_only_its_user_and_may_name_no_other(http) -> None:
    ana = new_key(http, user_id="ana")["secret"]
    # the tenant's admin key writes a memory for bob (control: it exists and the admin sees it)
    bob = http.post("/v1/memories", json={"content": "bob's secret plan", "user_id": "bob"}, headers=auth()).json()
    assert http.get(f"/v1/memories/{bob['id']}", headers=auth()).status_code == 200
    # ana's key asks for bob's memory by id: not found; by user_id (list, search): refused, naming the rule
    assert http.get(f"/v1/memories/{bob['id']}", headers=auth(ana)).status_code == 404
    listed = http.get("/v1/memories", params={"user_id": "bob"}, headers=auth(ana))
    assert listed.status_code == 403 and listed.json()["error"] == {"code": "bound_to_user", "message": BOUND}
    found = http.post("/v1/memories/search", json={"query": "secret plan", "user_id": "bob"}, headers=auth(ana))
    assert found.status_code == 403 and bob["id"] not in found.text
    assert http.patch(f"/v1/memories/{bob['id']}", json={"content": "hijacked"}, headers=auth(ana)).status_code == 404
    # a write that names bob is refused; one that names no user (or ana) is stored as ana's, and ana finds it
    refused = http.post("/v1/memories", json={"content": "ana's note", "user_id": "bob"}, headers=auth(ana))
    assert refused.status_code == 403 and refused.json()["error"]["message"] == BOUND
    mine = http.post("/v1/memories", json={"content": "ana's note"}, headers=auth(ana)).json()
    assert mine["user_id"] == "ana"
    assert http.get(f"/v1/memories/{mine['id']}", headers=auth(ana)).status_code == 200
    assert http.get("/v1/memories", params={"user_id": "ana"}, headers=auth(ana)).json()["scope"]["user_id"] == "ana"


def test_a_bound_key_is_confined_on_the_mcp_profiles_too(http) -> None:
    ana = new_key(http, user_id="ana")["secret"]
    stored = tool(http, "/mcp/thrindex", "store_memory", {"content": "bob likes jazz", "user_id": "bob"}, "mn_testlocal_0123456789abcdefghijklmnop")
    assert not stored.get("isError")  # control: the admin key stored bob's memory
    bob_id = stored["structuredContent"]["id"]
    assert tool(http, "/mcp/thrindex", "get_memory", {"id": bob_id}, ana)["isError"]
    listed = tool(http, "/mcp/thrindex", "list_memories", {"user_id": "bob"}, ana)
    assert listed["isError"] and bob_id not in str(listed)
    r3 = tool(http, "/mcp/r3", "add_memory", {"content": "ana plays cello", "user_id": "bob"}, ana)
    assert r3["isError"] and r3["content"][0]["text"] == BOUND
    assert not tool(http, "/mcp/r3", "add_memory", {"content": "ana plays cello"}, ana).get("isError")
    everything = tool(http, "/mcp/r3", "get_all_memories", {}, ana)
    assert "ana plays cello" in str(everything) and "bob likes jazz" not in str(everything)


def test_the_r3_cache_never_serves_one_users_answer_to_another(http) -> None:
    # Given ana's bound key and bob's memory, when ana's key searches r3 (its own user) and then the
    # admin key asks the same question for bob, the admin gets bob's memory: the cached entry is
    # ana's, under ana's user.
    from mnemo.local.poller import QueuePoller
    from mnemo.local.server import load_function

    ana = new_key(http, user_id="ana")["secret"]
    http.post("/v1/memories", json={"content": "bob's violin lessons", "user_id": "bob", "as_user": True}, headers=auth())
    from mnemo import bootstrap

    container = bootstrap.container()
    poller = QueuePoller(container._sqs, container.settings.queue_url, load_function("worker").handler, wait_seconds=0)
    while poller.poll_once():
        pass
    as_ana = tool(http, "/mcp/r3", "search_memory", {"query": "violin lessons"}, ana)
    assert "bob's violin" not in str(as_ana)
    as_admin = tool(http, "/mcp/r3", "search_memory", {"query": "violin lessons", "user_id": "bob"},
                    "mn_testlocal_0123456789abcdefghijklmnop")
    assert "bob's violin" in str(as_admin)  # positive control, and no cross-user cache hit
