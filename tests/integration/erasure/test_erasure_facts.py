"""Erasure takes every fact a memory ever produced (issue 26, item 1): facts of an archived memory,
of an edited memory's older versions, through a user's erasure too; a fact an erased fact had
retired is back on its timeline with nothing naming the erased uuid; a fact another live memory
still says is kept, with nothing naming the erased memory. Each test reads the fact before the
erasure (the control) and walks every table item after it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from mnemo.adapters.aws import client
from mnemo.domain.commands import CaptureCommand
from mnemo.domain.fact_commands import RecordFactCommand
from mnemo.domain.graph import FactStatus
from mnemo.domain.namespace import Namespace
from tests.integration.conftest import auth
from tests.integration.erasure.test_erasure import every_item, mentions
from tests.integration.surfaces.test_profile_thrindex import enrich


def capture(http, content: str, **fields: Any) -> str:
    response = http.post("/v1/memories", json={"content": content, **fields}, headers=auth())
    assert response.status_code == 201, response.text
    return response.json()["id"]


def fact_of(container, memory_id: str) -> list[str]:
    """The facts the memory supports now."""
    return [f.uuid for f in container.fact_store.for_memory("local", memory_id)]


def served(http, fact_uuid: str) -> int:
    return http.get(f"/v1/facts/{fact_uuid}", headers=auth()).status_code


def fact_docs(container, user: str, words: str) -> list[str]:
    return [h.fact_uuid for h in container.fact_index().search(Namespace(tenant="local", user_id=user), words, None, 10)]


def naming(items: list[dict[str, Any]], *needles: str) -> list[str]:
    """The keys of the items that name any needle (ids, words), for a readable failure."""
    return [f'{i["pk"]["S"]} {i["sk"]["S"]}' for i in mentions(items, *needles)]


def test_the_facts_of_an_archived_memory_go_with_its_erasure(http, container, aws) -> None:
    memory = capture(http, "Zed lives in Quito.")
    enrich(aws)
    (fact,) = fact_of(container, memory)
    assert served(http, fact) == 200 and "Quito" in http.get(f"/v1/facts/{fact}", headers=auth()).text  # control
    assert http.delete(f"/v1/memories/{memory}", headers=auth()).json()["status"] == "archived"
    enrich(aws)
    assert served(http, fact) == 200  # archive is soft: the fact is only deactivated

    receipt = http.delete(f"/v1/memories/{memory}?hard=true", headers=auth()).json()
    assert receipt["counts"]["facts"] == 1
    assert served(http, fact) == 404
    after = every_item(aws)
    assert naming(after, "Quito", "Zed", fact) == []  # fact, audit rows, adjacency, nodes, names
    assert naming(after, memory) == [f"T#local#ERASED#{memory} ERASED"]  # the tombstone only
    assert fact_docs(container, "default", "Zed Quito") == []


def test_an_edited_memorys_older_facts_go_with_its_erasure(http, container, aws) -> None:
    memory = capture(http, "Kim works at Initech.")
    enrich(aws)
    (old,) = fact_of(container, memory)
    assert http.patch(f"/v1/memories/{memory}", json={"content": "Kim works at Globex."}, headers=auth()).status_code == 200
    enrich(aws)
    (new,) = fact_of(container, memory)
    assert new != old and served(http, old) == 200 and served(http, new) == 200  # control: both are served
    assert http.get(f"/v1/facts/{old}", headers=auth()).json()["edge"]["invalid_at"] is None  # deactivated, not retired

    receipt = http.delete(f"/v1/memories/{memory}?hard=true", headers=auth()).json()
    assert receipt["counts"]["facts"] == 2
    assert served(http, old) == 404 and served(http, new) == 404
    after = every_item(aws)
    assert naming(after, "Initech", "Globex", "Kim", old, new) == []
    assert naming(after, memory) == [f"T#local#ERASED#{memory} ERASED"]
    assert fact_docs(container, "default", "Kim Initech Globex") == []


def test_a_user_erasure_takes_the_facts_of_archived_and_edited_memories(http, container, aws) -> None:
    archived = capture(http, "Zed lives in Quito.", user_id="zed")
    edited = capture(http, "Kim works at Initech.", user_id="zed")
    other = capture(http, "Kim works at Initech.", user_id="lia")  # another user says it: another fact
    enrich(aws)
    facts = fact_of(container, archived) + fact_of(container, edited)
    http.delete(f"/v1/memories/{archived}", headers=auth())
    http.patch(f"/v1/memories/{edited}", json={"content": "Kim works at Globex."}, headers=auth())
    enrich(aws)
    facts += fact_of(container, edited)
    assert len(set(facts)) == 3 and all(served(http, f) == 200 for f in facts)  # control

    response = http.delete("/v1/users/zed?hard=true", headers=auth())
    assert response.status_code == 202, response.text
    enrich(aws)  # the worker runs the job's hops
    receipt = http.get(f"/v1/jobs/{response.json()['job_id']}", headers=auth()).json()
    assert receipt["status"] == "completed" and receipt["counts"]["facts"] == 3
    assert [served(http, f) for f in facts] == [404, 404, 404]
    after = every_item(aws)
    assert naming(after, "Quito", "Globex", *facts) == []
    assert [k for k in naming(after, "Initech") if "#U#zed#" in k] == []
    # positive control: Lia's memory and her fact of the same words are whole
    (kept,) = fact_of(container, other)
    assert served(http, kept) == 200 and fact_docs(container, "lia", "Kim Initech") == [kept]


def porto_retired_by_lisbon(container, principal, aws):
    """Bob's recorded "lives in Porto" (2025-01), then a memory saying he moved to Lisbon (2025-05),
    enriched: the Porto fact, the memory's id and the Lisbon fact's uuid, which retired Porto."""
    old = container.facts.record_triple(principal, RecordFactCommand(
        subject="Bob", predicate="lives in", object="Porto", valid_at=datetime(2025, 1, 1, tzinfo=UTC))).edge
    memory = container.memories.capture(principal, CaptureCommand(
        raw="Bob moved to Lisbon.", as_user=True, captured_at=datetime(2025, 5, 1, tzinfo=UTC))).id
    enrich(aws)
    (lisbon,) = fact_of(container, memory)
    return old, memory, lisbon


def test_a_fact_the_erased_fact_retired_is_back_and_nothing_names_the_erased_uuid(http, container, principal, aws) -> None:
    old, memory, lisbon = porto_retired_by_lisbon(container, principal, aws)
    retired = container.facts.get(principal, old.uuid)
    assert (retired.status, retired.invalidated_by) == (FactStatus.INVALIDATED, lisbon)  # control: Lisbon retired Porto
    assert naming(every_item(aws), lisbon)

    assert http.delete(f"/v1/memories/{memory}?hard=true", headers=auth()).json()["counts"]["facts"] == 1
    back = container.facts.get(principal, old.uuid)
    assert (back.status, back.invalid_at, back.invalidated_by) == (FactStatus.ACTIVE, None, None)
    assert naming(every_item(aws), lisbon, "Lisbon") == []  # not even the audit row of Porto's retirement
    assert [a.action for a in container.fact_store.audit("local", old.uuid)][-1] == "reactivated"


def test_a_fact_another_memory_still_says_is_kept_without_naming_the_erased_one(http, container, aws) -> None:
    erased = capture(http, "Ivo works at Pinecrest.")
    kept = capture(http, "Ivo works at Pinecrest!")
    enrich(aws)
    (fact,) = fact_of(container, erased)
    assert fact_of(container, kept) == [fact]  # one fact, two sources
    assert naming(every_item(aws), erased)  # control: the walk sees the id where it is

    receipt = http.delete(f"/v1/memories/{erased}?hard=true", headers=auth()).json()
    assert receipt["counts"]["facts"] == 0  # only lost a source
    body = http.get(f"/v1/facts/{fact}", headers=auth())
    assert body.status_code == 200 and "Pinecrest" in body.text  # positive control: kept, served
    assert erased not in body.text
    stored = container.fact_store.get("local", fact)
    assert [s.memory_id for s in stored.sources] == [kept] and stored.status == FactStatus.ACTIVE
    assert naming(every_item(aws), erased) == [f"T#local#ERASED#{erased} ERASED"]
    assert fact_docs(container, "default", "Ivo Pinecrest") == [fact]
    assert json.dumps([a.model_dump(mode="json") for a in container.fact_store.audit("local", fact)]).count(kept) >= 1


def test_the_reindex_backfills_what_older_facts_came_from_never_under_an_erased_memory(http, container, aws) -> None:
    """Facts derived before the `D#` records existed: an archived memory's fact is reachable only from
    its audit rows; the admin reindex records it, so the erasure finds it. An audit row naming a
    memory erased before (legacy) gets no record: nothing is written under an erased id."""
    archived = capture(http, "Zed lives in Quito.")
    gone = capture(http, "Mei lives in Hanoi.")
    enrich(aws)
    (fact,) = fact_of(container, archived)
    http.delete(f"/v1/memories/{archived}", headers=auth())
    enrich(aws)
    db, table = client("dynamodb"), aws["MemoriesTable"]
    legacy = [i for i in every_item(aws) if i["sk"]["S"].startswith("D#")]
    for item in legacy:  # as a deployment before this release left them
        db.delete_item(TableName=table, Key={"pk": item["pk"], "sk": item["sk"]})
    container.store.erase("local", gone)  # a memory erased before (its fact and audit rows still name it)
    assert naming(every_item(aws), fact) and not [k for k in naming(every_item(aws), archived) if " D#" in k]

    container.recovery.reindex_facts()
    records = [k for k in naming(every_item(aws), archived) if " D#" in k]
    assert records == [f"T#local#M#{archived} D#{fact}"]  # the archived memory's record is back
    assert naming(every_item(aws), f"T#local#M#{gone}") == []  # none under the erased one
    assert http.delete(f"/v1/memories/{archived}?hard=true", headers=auth()).json()["counts"]["facts"] == 1
    assert served(http, fact) == 404 and naming(every_item(aws), "Quito") == []


def test_an_entity_another_fact_still_joins_keeps_its_node_and_name(http, container, aws) -> None:
    """The erased fact's ends: the one no other edge uses goes (node and name), the one another
    memory's fact still joins stays, and its node is served with that fact's edge."""
    erased = capture(http, "Tove lives in Quillmarsh.")
    kept = capture(http, "Tove works at Brindlecorp.")
    enrich(aws)
    ns = Namespace(tenant="local")
    tove, marsh = container.fact_store.find_entity(ns, "Tove"), container.fact_store.find_entity(ns, "Quillmarsh")
    assert tove is not None and marsh is not None  # control: both ends exist before
    (kept_fact,) = fact_of(container, kept)

    http.delete(f"/v1/memories/{erased}?hard=true", headers=auth())
    assert container.fact_store.find_entity(ns, "Quillmarsh") is None and naming(every_item(aws), "Quillmarsh") == []
    assert container.fact_store.find_entity(ns, "Tove") == tove  # its node and its name, as they were
    body = http.get(f"/v1/entities/{tove.id}", headers=auth())
    assert body.status_code == 200 and kept_fact in body.text, body.text


def test_an_entity_an_older_version_named_in_no_fact_goes_with_the_erasure(http, container, aws) -> None:
    memory = capture(http, "Kim works at Initech with Brontel Quax.")
    enrich(aws)
    http.patch(f"/v1/memories/{memory}", json={"content": "Kim works at Globex."}, headers=auth())
    enrich(aws)
    assert naming(every_item(aws), "Brontel")  # control: the node (and its name) of the older version's entity
    assert container.fact_store.find_entity(Namespace(tenant="local"), "Brontel Quax") is not None

    http.delete(f"/v1/memories/{memory}?hard=true", headers=auth())
    assert naming(every_item(aws), "Brontel", "Initech", "Globex") == []
    assert container.fact_store.find_entity(Namespace(tenant="local"), "Brontel Quax") is None


def test_a_retracted_fact_the_erased_fact_had_retired_names_it_no_more(http, container, principal, aws) -> None:
    old, memory, lisbon = porto_retired_by_lisbon(container, principal, aws)
    assert http.post("/v1/retract", json={"edge_uuid": old.uuid}, headers=auth()).status_code == 200
    retracted = container.facts.get(principal, old.uuid)
    assert (retracted.status, retracted.invalidated_by) == (FactStatus.RETRACTED, lisbon)  # control

    http.delete(f"/v1/memories/{memory}?hard=true", headers=auth())
    after = container.facts.get(principal, old.uuid)
    assert (after.status, after.invalidated_by) == (FactStatus.RETRACTED, None)  # stays retracted, names nothing
    assert naming(every_item(aws), lisbon, "Lisbon") == []


def test_a_memory_that_says_the_fact_while_it_is_being_erased_keeps_it(http, container, aws, monkeypatch) -> None:
    """The fact's delete is conditional on the revision read: another memory's enrichment that
    becomes a source between the erasure's read and its delete makes the erasure re-read and keep it."""
    from mnemo.adapters.dynamodb import erasure as dynamodb_erasure

    erased = capture(http, "Ivo works at Pinecrest.")
    enrich(aws)
    (fact,) = fact_of(container, erased)
    later = capture(http, "Ivo works at Pinecrest!")  # said again; its enrichment lands mid-erasure
    original = dynamodb_erasure._other_producers
    raced: list[str] = []

    def stale_answer(store, read, audits, memory_id):
        answer = original(store, read, audits, memory_id)
        if not raced:
            raced.append(read.uuid)
            enrich(aws)  # the other memory's enrichment adds itself as a source now
        return answer

    monkeypatch.setattr(dynamodb_erasure, "_other_producers", stale_answer)
    receipt = http.delete(f"/v1/memories/{erased}?hard=true", headers=auth()).json()
    assert raced == [fact] and receipt["counts"]["facts"] == 0
    stored = container.fact_store.get("local", fact)
    assert stored is not None and [s.memory_id for s in stored.sources] == [later]  # kept, for the memory that says it
    assert naming(every_item(aws), erased) == [f"T#local#ERASED#{erased} ERASED"]
