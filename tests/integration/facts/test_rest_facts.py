"""REST of the facts product over the in-process app and moto: the shapes /mcp/facts returns, the
temporal rules (single-valued replacement, out-of-order arrival, restore on retract, `as_of`), the
audit history, and the renamed 401 code."""

from __future__ import annotations

from typing import Any

from tests.integration.conftest import OTHER_KEY, auth

READER_KEY = "mn_readeronly_0123456789abcdefghijklmnop"


def record(http: Any, subject: str, predicate: str, obj: str, valid_at: str | None = None, **extra: Any) -> dict[str, Any]:
    body = {"subject": subject, "predicate": predicate, "object": obj, **extra}
    if valid_at:
        body["valid_at"] = valid_at
    response = http.post("/v1/facts", json=body, headers=auth())
    assert response.status_code == 201, response.text
    return response.json()


def search(http: Any, query: str, key: str | None = None, **extra: Any) -> list[dict[str, Any]]:
    response = http.post("/v1/search", json={"query": query, **extra}, headers=auth(key) if key else auth())
    assert response.status_code == 200, response.text
    return response.json()["edges"]


def test_a_question_in_canonical_words_ranks_the_current_value_first(http) -> None:
    # Given Alice's jobs said in other words ("joined", "is employed by") and other facts about her
    record(http, "Alice", "is employed by", "Initech", "2024-01-01T00:00:00Z")
    acme = record(http, "Alice", "joined", "Acme", "2025-01-01T00:00:00Z")["edge"]
    for predicate, obj in (("visited", "Rome"), ("loves", "jazz"), ("knows", "Bob"), ("has", "a cat")):
        record(http, "Alice", predicate, obj, "2025-02-01T00:00:00Z")
    # When asking where she works: the current value is the top edge, found through "works at"
    edges = search(http, "Where does Alice work?")
    assert edges[0]["uuid"] == acme["uuid"] and edges[0]["fact"] == "Alice joined Acme"
    assert "Alice is employed by Initech" not in [e["fact"] for e in edges]  # retired: not current
    # and as of last year, the value true then (the retired one) ranks first (positive control)
    then = search(http, "Where did Alice work?", as_of="2024-06-01T00:00:00Z")
    assert then[0]["fact"] == "Alice is employed by Initech"


def test_moves_over_time_current_value_as_of_and_out_of_order(http) -> None:
    jan = record(http, "Alice", "lives in", "Berlin", "2025-01-01T00:00:00Z")
    may = record(http, "Alice", "relocated_to", "Lisbon", "2025-05-01T00:00:00Z")
    knows = record(http, "Alice", "knows", "Bob", "2025-02-01T00:00:00Z")
    # An older episode arriving late (Paris in March) retires nothing newer and is stored already invalid
    late = record(http, "Alice", "lives in", "Paris", "2025-03-01T00:00:00Z")
    assert may["invalidated"] == [jan["edge"]["uuid"]] and knows["invalidated"] == []
    assert late["edge"]["status"] == "invalidated" and late["edge"]["invalid_at"] == "2025-05-01T00:00:00Z"
    assert late["edge"]["invalidated_by"] == may["edge"]["uuid"]
    # ...and slots in: Berlin is now valid until March, retired by Paris
    berlin = http.get(f"/v1/facts/{jan['edge']['uuid']}", headers=auth()).json()
    assert berlin["edge"]["invalid_at"] == "2025-03-01T00:00:00Z" and berlin["edge"]["invalidated_by"] == late["edge"]["uuid"]
    assert [h["action"] for h in berlin["history"]] == ["created", "invalidated", "invalidated"]
    now = [e["fact"] for e in search(http, "Where does Alice live?")]
    assert now[0] == "Alice relocated to Lisbon" and "Alice lives in Berlin" not in now and "Alice knows Bob" in now

    def lives(as_of: str) -> list[str]:
        return [e["target"]["name"] for e in search(http, "Where does Alice live?", as_of=as_of) if e["predicate"] == "lives in"]

    assert lives("2025-02-15T00:00:00Z") == ["Berlin"]
    assert lives("2025-03-15T00:00:00Z") == ["Paris"]
    assert lives("2025-06-01T00:00:00Z") == ["Lisbon"]
    assert lives("2024-12-01T00:00:00Z") == []
    # Retracting Lisbon brings Paris back; a retracted fact never appears, not even with as_of
    gone = http.post("/v1/retract", json={"edge_uuid": may["edge"]["uuid"], "reason": "never moved"}, headers=auth())
    assert gone.status_code == 200 and gone.json()["edge"]["status"] == "retracted"
    assert lives("2025-06-01T00:00:00Z") == ["Paris"]
    assert [e["target"]["name"] for e in search(http, "Where does Alice live?") if e["predicate"] == "lives in"] == ["Paris"]
    history = http.get(f"/v1/facts/{may['edge']['uuid']}", headers=auth()).json()["history"]
    assert (history[-1]["action"], history[-1]["reason"], history[-1]["actor"]) == ("retracted", "never moved", history[0]["actor"])


def test_entity_route_lists_the_node_and_its_active_edges(http) -> None:
    first = record(http, "Dana", "works at", "Acme")
    second = record(http, "Dana", "joined", "Initech")
    likes = record(http, "Dana", "likes", "chess")
    dana = first["edge"]["source"]["uuid"]
    body = http.get(f"/v1/entities/{dana}", headers=auth()).json()
    assert body["node"] == {"uuid": dana, "name": "Dana", "type": "other"}
    assert {e["uuid"] for e in body["edges"]} == {second["edge"]["uuid"], likes["edge"]["uuid"]}
    # Other groups and tenants do not see the node; the owner does (above)
    assert http.get(f"/v1/entities/{dana}?group_id=other", headers=auth()).json()["error"]["code"] == "not_found"
    assert http.get(f"/v1/entities/{dana}", headers=auth(OTHER_KEY)).status_code == 404
    assert http.get(f"/v1/facts/{first['edge']['uuid']}", headers=auth(OTHER_KEY)).status_code == 404
    assert search(http, "Where does Dana work?", key=OTHER_KEY) == []


def test_episode_shape_and_errors_in_the_envelope(http, container) -> None:
    response = http.post("/v1/episodes", json={"content": "Remember that Erin prefers tea.", "group_id": "g1",
                                               "captured_at": "2025-01-02T03:04:05Z"}, headers=auth())
    assert response.status_code == 201
    episode = response.json()["episode"]
    assert set(episode) == {"uuid", "content", "group_id", "created_at", "status"}
    assert (episode["group_id"], episode["status"]) == ("g1", "queued")
    memory = container.memories.get(container.keys.authenticate(auth()["authorization"][7:]), episode["uuid"])
    assert memory.group_id == "g1" and memory.captured_at.isoformat() == "2025-01-02T03:04:05+00:00"
    bad = http.post("/v1/search", json={"query": "x", "limit": 101, "as_of": "yesterday"}, headers=auth())
    assert bad.status_code == 400
    assert bad.json()["error"]["message"] == (
        "limit: must be at most 100; as_of: must be an ISO-8601 date or date-time, e.g. 2024-05-08 or "
        "2024-05-08T13:56:00+02:00 (no offset = UTC)")
    # a number is not a timestamp (no silent Unix-time reading), on every facts route
    for route, body in (("/v1/search", {"query": "x", "as_of": -15}), ("/v1/facts", {"subject": "a", "predicate": "b",
                        "object": "c", "valid_at": 1614834367}), ("/v1/episodes", {"content": "x", "captured_at": 0})):
        refused = http.post(route, json=body, headers=auth())
        assert refused.status_code == 400 and "ISO-8601" in refused.json()["error"]["message"], (route, refused.text)
    assert http.post("/v1/search", json={"query": "x"}).json()["error"]["code"] == "unauthenticated"
    assert http.post("/v1/search", json={"query": "x"}, headers=auth("mn_nope_000000000000000000000")).status_code == 401
    container.keys.ensure("local", "reader", ["memory:read", "memory:write"], READER_KEY)
    edge = record(http, "Frank", "works at", "Globex")["edge"]
    denied = http.post("/v1/retract", json={"edge_uuid": edge["uuid"]}, headers=auth(READER_KEY))
    assert denied.status_code == 403 and denied.json()["error"]["code"] == "missing_scope"
    assert [e["uuid"] for e in search(http, "Where does Frank work?", key=READER_KEY)] == [edge["uuid"]]


def test_openapi_documents_the_facts_routes(http) -> None:
    paths = http.get("/openapi.json").json()["paths"]
    for route in ("/v1/episodes", "/v1/facts", "/v1/search", "/v1/retract", "/v1/facts/{fact_uuid}", "/v1/entities/{entity_uuid}"):
        assert route in paths, route


def test_event_times_are_iso_strings_never_unix_numbers(http) -> None:
    # pydantic alone would read -15 or "20210304" as Unix times; the facts routes refuse them, naming the field
    for body, route in (({"query": "x", "as_of": -15}, "/v1/search"),
                        ({"subject": "A", "predicate": "knows", "object": "B", "valid_at": "20210304"}, "/v1/facts"),
                        ({"content": "A knows B.", "captured_at": 1700000000}, "/v1/episodes")):
        refused = http.post(route, json=body, headers=auth())
        field = next(k for k in body if k in ("as_of", "valid_at", "captured_at"))
        assert refused.status_code == 400 and field in refused.json()["error"]["message"], refused.text
    assert http.post("/v1/search", json={"query": "x", "as_of": "2025-03-01"}, headers=auth()).status_code == 200  # control
