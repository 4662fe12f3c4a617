"""Issue 16, items 3 and 10, and the fault-injection suite of the capture path: nothing accepted is
lost, nothing refused is half-written, and a retry is never reported as a failure."""

from __future__ import annotations

from datetime import timedelta

import pytest
from botocore.exceptions import ClientError

from mnemo.adapters.aws import client
from mnemo.errors import DependencyError
from tests.conftest import received
from tests.integration.conftest import auth

THROTTLED = {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "Rate of requests exceeds"}}


def queued_ids(aws: dict[str, str]) -> list[str]:
    import json

    return [json.loads(m["Body"])["memory_id"] for m in received(client("sqs"), aws["EnrichmentQueue"])]


def test_history_records_creation(http) -> None:
    created = http.post("/v1/memories", headers=auth(), json={"content": "first words"}).json()
    history = http.get(f"/v1/memories/{created['id']}/history", headers=auth()).json()
    assert [(h["version"], h["action"], h["actor"]) for h in history] == [(1, "created", "mn_testlocal")]


def test_a_retried_put_whose_first_attempt_landed_is_success_then_enqueue(http, container, aws) -> None:
    """botocore's retry after a lost response: the first attempt stored the memory, the retry fails its
    condition. Before: 409 "already exists" and never enqueued. Now: 201 and queued."""
    db = container.store._db
    real = db.put_item

    def lost_response(**kwargs):
        real(**kwargs)  # the write lands...
        if kwargs["Item"]["sk"]["S"] == "MEMORY":  # ...and the caller only sees the retry's refusal
            raise ClientError({"Error": {"Code": "ConditionalCheckFailedException", "Message": "failed"}}, "PutItem")

    patch = pytest.MonkeyPatch()
    patch.setattr(db, "put_item", lost_response)
    response = http.post("/v1/memories", headers=auth(), json={"content": "stored once, answered late"})
    assert response.status_code == 201, response.text
    patch.undo()
    assert queued_ids(aws) == [response.json()["id"]]
    assert http.get(f"/v1/memories/{response.json()['id']}", headers=auth()).json()["content"] == "stored once, answered late"


def test_idempotency_key_replays_the_first_answer_and_refuses_a_different_body(http, aws) -> None:
    headers = {**auth(), "Idempotency-Key": "req-0001"}
    first = http.post("/v1/memories", headers=headers, json={"content": "buy oat milk", "user_id": "idem"})
    again = http.post("/v1/memories", headers=headers, json={"content": "buy oat milk", "user_id": "idem"})
    assert (first.status_code, again.status_code) == (201, 201) and first.json()["id"] == again.json()["id"]
    listed = http.get("/v1/memories", headers=auth(), params={"user_id": "idem"}).json()["results"]
    assert [m["id"] for m in listed] == [first.json()["id"]]  # one memory, not two
    different = http.post("/v1/memories", headers=headers, json={"content": "buy soy milk", "user_id": "idem"})
    assert different.status_code == 409 and different.json()["error"]["message"].startswith("Idempotency-Key: already used")
    # Positive control: another key is another memory; the same key in another tenant is that tenant's own.
    other = http.post("/v1/memories", headers={**auth(), "Idempotency-Key": "req-0002"}, json={"content": "buy oat milk", "user_id": "idem"})
    assert other.status_code == 201 and other.json()["id"] != first.json()["id"]
    from tests.integration.conftest import OTHER_KEY

    theirs = http.post("/v1/memories", headers={**auth(OTHER_KEY), "Idempotency-Key": "req-0001"}, json={"content": "x"})
    assert theirs.status_code == 201 and theirs.json()["id"] != first.json()["id"]
    bad = http.post("/v1/memories", headers={**auth(), "Idempotency-Key": "x" * 200}, json={"content": "y"})
    assert bad.status_code == 400 and bad.json()["error"]["message"].startswith("Idempotency-Key: must be 1-128")


def test_idempotency_key_on_patch_applies_an_append_once(http) -> None:
    mid = http.post("/v1/memories", headers=auth(), json={"content": "groceries:"}).json()["id"]
    headers = {**auth(), "Idempotency-Key": "append-1"}
    for _ in range(3):
        response = http.patch(f"/v1/memories/{mid}", headers=headers, json={"edit_request": "append: eggs"})
        assert response.status_code == 200
    final = http.get(f"/v1/memories/{mid}", headers=auth()).json()
    assert (final["content"], final["version"]) == ("groceries: eggs", 2)
    # Positive control: a new key appends again.
    http.patch(f"/v1/memories/{mid}", headers={**auth(), "Idempotency-Key": "append-2"}, json={"edit_request": "append: eggs"})
    assert http.get(f"/v1/memories/{mid}", headers=auth()).json()["content"] == "groceries: eggs eggs"


def test_sqs_send_fails_after_the_write_then_the_reconciler_enqueues_it(http, container, aws) -> None:
    def down(task):
        raise DependencyError("enrichment queue unavailable")

    patch = pytest.MonkeyPatch()
    patch.setattr(container.queue, "send", down)
    created = http.post("/v1/memories", headers=auth(), json={"content": "accepted while SQS was down"})
    assert created.status_code == 201  # persisted is accepted
    patch.undo()
    assert queued_ids(aws) == []
    assert container.recovery.requeue_stale(grace=timedelta(0)) == 1
    assert queued_ids(aws) == [created.json()["id"]]
    assert container.recovery.requeue_stale(grace=timedelta(minutes=5)) == 0  # queued_at moved on: not again


def test_throttled_capture_is_a_clear_503_with_nothing_written(http, container, aws) -> None:
    real = container.store._db.put_item
    writes: list[str] = []

    def throttled(**kwargs):
        writes.append(kwargs["Item"]["sk"]["S"])
        if kwargs["Item"]["sk"]["S"] == "MEMORY":  # the worst place: after the history line was written
            raise ClientError(THROTTLED, "PutItem")
        return real(**kwargs)

    patch = pytest.MonkeyPatch()
    patch.setattr(container.store._db, "put_item", throttled)
    keyed = {**auth(), "Idempotency-Key": "thr-1"}
    response = http.post("/v1/memories", headers=keyed, json={"content": "during a throttle", "user_id": "thr"})
    assert response.status_code == 503 and response.headers["retry-after"] == "1"
    assert response.json()["error"] == {"code": "dependency_error", "message": "memory store is busy (throttled); retry after a short wait"}
    patch.undo()
    assert writes == ["H#0000000001", "MEMORY"]
    assert http.get("/v1/memories", headers=auth(), params={"user_id": "thr"}).json()["results"] == []
    assert queued_ids(aws) == []  # nothing visible, nothing queued: the client retries and gets one memory
    retried = http.post("/v1/memories", headers=keyed, json={"content": "during a throttle", "user_id": "thr"})
    assert retried.status_code == 201  # the client's retry: one memory, with one creation line
    history = http.get(f"/v1/memories/{retried.json()['id']}/history", headers=auth()).json()
    assert [h["action"] for h in history] == ["created"] and queued_ids(aws) == [retried.json()["id"]]


def test_the_local_reconciler_finds_a_lost_task_on_its_own(http, container, aws) -> None:
    import time

    from mnemo.local.reconciler import Reconciler

    patch = pytest.MonkeyPatch()
    patch.setattr(container.queue, "send", lambda task: (_ for _ in ()).throw(DependencyError("queue down")))
    created = http.post("/v1/memories", headers=auth(), json={"content": "lost task"}).json()
    patch.undo()
    reconciler = Reconciler(lambda grace: container.recovery.requeue_stale(grace=grace), interval=0.05, grace=timedelta(0))
    reconciler.start()
    try:
        deadline = time.monotonic() + 10
        found: list[str] = []
        while not found and time.monotonic() < deadline:
            found = queued_ids(aws)
            time.sleep(0.05)
    finally:
        reconciler.stop()
    assert found[:1] == [created["id"]]


def test_the_local_reconciler_leaves_a_backlog_alone(http, container, aws) -> None:
    # Given a memory whose task is still in the queue (a backlog, not a lost task), older than the grace
    from mnemo.local.reconciler import Reconciler
    from mnemo.local.server import queue_idle

    created = http.post("/v1/memories", headers=auth(), json={"content": "queued, not lost"}).json()
    url = container.settings.queue_url
    reconciler = Reconciler(lambda grace: container.recovery.requeue_stale(grace=grace), grace=timedelta(0),
                            idle=lambda: queue_idle(container._sqs, url))
    # When it runs a round, nothing is re-sent: the queue is not idle
    assert not queue_idle(container._sqs, url)
    assert reconciler.run_once() == 0
    assert queued_ids(aws) == [created["id"]]
