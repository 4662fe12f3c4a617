"""Permanent erasure: DELETE /v1/memories/{id}?hard=true leaves nothing behind. The test walks every
item of the table and every index document after the erasure (a Scan is fine in a test), and
redelivers the memory's old enrichment message to prove it resurrects nothing."""

from __future__ import annotations

import json
from typing import Any

from mnemo.adapters.aws import client
from mnemo.domain.commands import EditCommand
from mnemo.domain.namespace import NamespaceFilter
from mnemo.ports import EnrichmentTask, SearchQuery
from tests.integration.conftest import OTHER_KEY, auth
from tests.integration.surfaces.test_profile_thrindex import enrich

SECRET = "Zanzibar Okonkwo works at Quillfeather Labs"
EDITED = "Zanzibar Okonkwo works at Quillfeather Labs in Tromso"


def every_item(aws: dict[str, str]) -> list[dict[str, Any]]:
    db, items, start = client("dynamodb"), [], None
    while True:
        page = db.scan(TableName=aws["MemoriesTable"], **({"ExclusiveStartKey": start} if start else {}))
        items += page["Items"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


def mentions(items: list[dict[str, Any]], *needles: str) -> list[dict[str, Any]]:
    return [i for i in items if any(n.casefold() in json.dumps(i).casefold() for n in needles)]


def index_hits(container, words: str) -> set[str]:
    query = SearchQuery(scope=NamespaceFilter(tenant="local", user_id=None), text=words, authors=["user", "agent"])
    return {c.memory_id for c in container.index().search(query)}


def test_hard_delete_erases_every_trace_and_a_redelivered_task_creates_nothing(http, container, principal, aws) -> None:
    secret = http.post("/v1/memories", json={"content": SECRET}, headers=auth()).json()["id"]
    shared = http.post("/v1/memories", json={"content": "Zanzibar Okonkwo works at Quillfeather Labs."}, headers=auth()).json()["id"]
    enrich(aws)
    container.memories.edit(principal, secret, EditCommand(raw_text=EDITED))  # history now holds the old text
    enrich(aws)
    old_task = EnrichmentTask(tenant="local", memory_id=secret, version=2)
    before = every_item(aws)
    assert mentions(before, "Tromso") and mentions(before, secret)  # the walk sees what it looks for
    assert secret in index_hits(container, "Tromso Quillfeather")

    # another tenant cannot erase it (and learns nothing): 404, the memory is untouched
    assert http.delete(f"/v1/memories/{secret}?hard=true", headers=auth(OTHER_KEY)).status_code == 404
    assert http.get(f"/v1/memories/{secret}", headers=auth()).status_code == 200

    response = http.delete(f"/v1/memories/{secret}?hard=true", headers=auth())
    assert response.status_code == 200, response.text
    receipt = response.json()
    assert receipt["kind"] == "memory" and receipt["memory_ids"] == [secret] and receipt["status"] == "completed"
    assert receipt["counts"]["memories"] == 1 and receipt["counts"]["history"] == 2 and receipt["counts"]["index_documents"] >= 1
    assert receipt["counts"]["links"] >= 1 and receipt["counts"]["entities"] >= 1
    assert "Tromso" not in response.text and "Zanzibar" not in response.text  # ids and counts only

    after = every_item(aws)
    assert mentions(after, "Tromso") == []
    # the id survives only in the erasure's tombstone (keys and times: what a running enrichment checks,
    # docs/erasure.md), not even in the audit rows of the fact the other memory still says
    assert {i["sk"]["S"][:2] for i in mentions(after, secret)} == {"ER"}
    tombstones = [i for i in after if i["sk"]["S"] == "ERASED"]
    assert [i["pk"]["S"] for i in tombstones] == [f"T#local#ERASED#{secret}"]
    assert set(tombstones[0]) == {"pk", "sk", "erased_at", "expires_at"}
    assert secret not in index_hits(container, "Tromso Quillfeather Zanzibar Okonkwo")
    assert http.get(f"/v1/memories/{secret}", headers=auth()).status_code == 404

    container.queue.send(old_task)  # an at-least-once redelivery of work queued before the erasure
    enrich(aws)
    assert len(mentions(every_item(aws), secret)) == len(mentions(after, secret))  # nothing new
    assert mentions(every_item(aws), "Tromso") == [] and secret not in index_hits(container, "Tromso Quillfeather")

    # positive control: the memory saying the same thing survives, found the same ways, with its facts
    assert http.get(f"/v1/memories/{shared}", headers=auth()).json()["facts"]
    assert shared in index_hits(container, "Tromso Quillfeather Zanzibar Okonkwo")
    found = http.post("/v1/memories/search", json={"query": "where does Zanzibar work"}, headers=auth()).json()
    assert [m["id"] for m in found["results"]] == [shared]


def test_a_fact_only_the_erased_memory_said_is_gone_with_its_entities(http, container, principal, aws) -> None:
    lone = http.post("/v1/memories", json={"content": "Xaviera Plumtree works at Brindlecorp."}, headers=auth()).json()["id"]
    keep = http.post("/v1/memories", json={"content": "Odalys Fenwick works at Marrowgate."}, headers=auth()).json()["id"]
    enrich(aws)
    assert mentions(every_item(aws), "Brindlecorp") and mentions(every_item(aws), "Marrowgate")
    receipt = http.delete(f"/v1/memories/{lone}?hard=true", headers=auth()).json()
    assert receipt["counts"]["facts"] >= 1
    assert mentions(every_item(aws), "Brindlecorp") == [] and mentions(every_item(aws), "Plumtree") == []
    assert mentions(every_item(aws), "Marrowgate")  # positive control: the other memory's facts and entities stay
    assert http.get(f"/v1/memories/{keep}", headers=auth()).json()["facts"]


def test_without_hard_delete_stays_a_soft_archive(http) -> None:
    memory = http.post("/v1/memories", json={"content": "Soft only"}, headers=auth()).json()["id"]
    assert http.delete(f"/v1/memories/{memory}", headers=auth()).json()["status"] == "archived"
    assert http.get(f"/v1/memories/{memory}", headers=auth()).json()["status"] == "archived"
