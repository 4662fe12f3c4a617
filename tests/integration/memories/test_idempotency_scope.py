"""Idempotency keys (issue 26 item 11): scoped to (tenant, API key), so two keys of one tenant never
collide; and a replay answers as the first request did, even once the tenant reached its write cap."""

from __future__ import annotations

from typing import Any

from mnemo.domain.tenancy import Counter
from tests.integration.conftest import auth


def new_key(http: Any, name: str, **body: Any) -> str:
    response = http.post("/v1/keys", json={"name": name, "scopes": ["memory:read", "memory:write"], **body}, headers=auth())
    assert response.status_code == 201, response.text
    return str(response.json()["secret"])


def test_two_keys_of_a_tenant_never_share_an_idempotency_key(http) -> None:
    bob, alice = new_key(http, "bob", user_id="bob"), new_key(http, "alice", user_id="alice")
    first = http.post("/v1/memories", json={"content": "bob's order 1001"}, headers={**auth(bob), "Idempotency-Key": "order-1001"})
    assert first.status_code == 201
    # alice's capture with the same key value is hers: 201, her own memory (before: 409, telling her bob used it)
    hers = http.post("/v1/memories", json={"content": "alice's order"}, headers={**auth(alice), "Idempotency-Key": "order-1001"})
    assert hers.status_code == 201, hers.text
    assert hers.json()["user_id"] == "alice" and hers.json()["id"] != first.json()["id"]
    # control: each key's retry still replays its own first answer
    for key, body, answer in ((bob, "bob's order 1001", first), (alice, "alice's order", hers)):
        again = http.post("/v1/memories", json={"content": body}, headers={**auth(key), "Idempotency-Key": "order-1001"})
        assert again.status_code == 201 and again.json()["id"] == answer.json()["id"]
    # and the same key with another body, on the same API key, is still 409
    clash = http.post("/v1/memories", json={"content": "bob's order 1002"}, headers={**auth(bob), "Idempotency-Key": "order-1001"})
    assert clash.status_code == 409


def test_an_edit_key_used_by_another_api_key_does_not_swallow_this_keys_edit(http) -> None:
    one, two = new_key(http, "one"), new_key(http, "two")
    mid = http.post("/v1/memories", json={"content": "groceries:"}, headers=auth()).json()["id"]
    for key, item in ((one, "eggs"), (two, "ham")):
        response = http.patch(f"/v1/memories/{mid}", json={"edit_request": f"append: {item}"},
                              headers={**auth(key), "Idempotency-Key": "append-1"})
        assert response.status_code == 200 and response.json()["applied"], response.text
    # control: a replay by the first key is still applied once only
    http.patch(f"/v1/memories/{mid}", json={"edit_request": "append: eggs"}, headers={**auth(one), "Idempotency-Key": "append-1"})
    assert http.get(f"/v1/memories/{mid}", headers=auth()).json()["content"] == "groceries: eggs ham"


def test_a_replay_at_the_write_cap_answers_as_the_first_request_did(http, container) -> None:
    container.meter.configure("local", {Counter.WRITES: 3}, None)
    keyed = {**auth(), "Idempotency-Key": "cap-1"}
    first = http.post("/v1/memories", json={"content": "stored before the cap"}, headers=keyed)
    assert first.status_code == 201
    target = http.post("/v1/memories", json={"content": "to edit"}, headers=auth()).json()["id"]
    edit = http.patch(f"/v1/memories/{target}", json={"edit_request": "append: and edited"},
                      headers={**auth(), "Idempotency-Key": "cap-edit"})
    assert edit.status_code == 200
    # control: the tenant is at its cap, a new write is refused
    assert http.post("/v1/memories", json={"content": "one too many"}, headers=auth()).status_code == 429
    assert http.patch(f"/v1/memories/{target}", json={"edit_request": "append: x"}, headers=auth()).status_code == 429
    # the replays answer as the first requests did, and cost nothing
    again = http.post("/v1/memories", json={"content": "stored before the cap"}, headers=keyed)
    assert again.status_code == 201, again.text
    assert again.json()["id"] == first.json()["id"]
    edited = http.patch(f"/v1/memories/{target}", json={"edit_request": "append: and edited"},
                        headers={**auth(), "Idempotency-Key": "cap-edit"})
    assert edited.status_code == 200, edited.text
    assert edited.json()["content"] == "to edit and edited" and edited.json()["version"] == 2
    assert http.get("/v1/usage", headers=auth()).json()["used"]["writes"] == 3
    # a different request under a used key is still a conflict, not a quota answer
    assert http.post("/v1/memories", json={"content": "another text"}, headers=keyed).status_code == 409
