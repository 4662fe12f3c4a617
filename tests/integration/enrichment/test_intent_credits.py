"""`intents` credits (issue 10): each edge annotated by `extract_intent=true` counts one credit on the
tenant's monthly `intents` counter (services/tenancy/metering.py, the one owner), once per edge however
often the call that annotated it is replayed."""

from __future__ import annotations

import pytest

from mnemo.domain.commands import CaptureCommand
from mnemo.domain.fact_commands import RecordFactCommand
from mnemo.domain.tenancy import Counter
from mnemo.ports import EnrichmentTask

MONTH = "2025-06"  # the FixedClock's month


def intents(container, tenant: str = "local") -> int:
    return container.meter.usage(tenant).used[Counter.INTENTS]


def test_record_fact_counts_an_annotated_edge_once_per_tenant(container, principal) -> None:
    facts = container.facts
    annotated = facts.record_triple(principal, RecordFactCommand(subject="Carol", predicate="prefers", object="tea"),
                                    extract_intent=True).edge
    assert annotated.intent_meta is not None and intents(container) == 1
    # Not asked for, or asked for but nothing found: no credit
    facts.record_triple(principal, RecordFactCommand(subject="Carol", predicate="prefers", object="coffee"))
    facts.record_triple(principal, RecordFactCommand(subject="Carol", predicate="owns", object="a bike"), extract_intent=True)
    assert intents(container) == 1
    # A replay of the same edge counts nothing; another edge does (positive control)
    assert container.meter.count_intents("local", [annotated.uuid]) == 0
    facts.record_triple(principal, RecordFactCommand(subject="Dan", predicate="wants to", object="learn Go"), extract_intent=True)
    assert intents(container) == 2
    assert intents(container, "other") == 0  # another tenant's counter is its own


def test_the_tenant_store_counts_each_unit_once(container) -> None:
    store = container.meter._store
    assert store.charge_units("t1", MONTH, Counter.INTENTS, ["a", "b", "a"], capped=False) == (2, None)
    assert store.charge_units("t1", MONTH, Counter.INTENTS, ["b", "c"], capped=True) == (1, None)  # b was counted
    assert store.get("t1", MONTH)[1][Counter.INTENTS] == 3 and store.get("t2", MONTH)[1][Counter.INTENTS] == 0
    assert store.charge_units("t2", MONTH, Counter.INTENTS, ["a"], capped=False) == (1, None)  # t2's "a" is its own
    # Capped at 4: one more unit passes, the next is refused and not counted; a replay of a counted one is free
    container.meter.configure("t1", {Counter.INTENTS: 4}, None)
    assert store.charge_units("t1", MONTH, Counter.INTENTS, ["d", "e"], capped=True) == (1, Counter.INTENTS)
    assert store.charge_units("t1", MONTH, Counter.INTENTS, ["a", "d"], capped=True) == (0, None)
    assert store.get("t1", MONTH)[1][Counter.INTENTS] == 4
    assert store.charge_units("t1", MONTH, Counter.INTENTS, ["e"], capped=False) == (1, None)  # the worker: uncapped


def test_an_episode_counts_its_annotated_edges_and_a_redelivery_does_not(container, principal, drain) -> None:
    memory = container.memories.capture(principal, CaptureCommand(raw="Erin prefers green tea.", as_user=True,
                                                                  metadata={"extract_intent": True}))
    plain = container.memories.capture(principal, CaptureCommand(raw="Finn prefers black tea.", as_user=True))
    drain()
    derived = container.fact_store.for_memory("local", memory.id)
    assert [f.intent_meta is not None for f in derived] == [True]
    assert container.fact_store.for_memory("local", plain.id)[0].intent_meta is None  # control: not asked for
    assert intents(container) == 1
    # The worker derives the memory's facts again (a reindex task, or a redelivery that got past the
    # enriched check): the same edges, nothing more counted
    task = EnrichmentTask(tenant="local", memory_id=memory.id, version=memory.version, reindex=True)
    meter, counted = container.meter, []
    original = meter.count_intents
    meter.count_intents = lambda tenant, uuids, **kw: counted.append((uuids, original(tenant, uuids, **kw))) or counted[-1][1]
    for item in container.enrichment.prepare([task]):
        container.enrichment.complete(item)
    assert counted == [([derived[0].uuid], 0)]  # the count ran on the re-derived annotated edge, and counted nothing
    assert [f.uuid for f in container.fact_store.for_memory("local", memory.id)] == [derived[0].uuid]
    assert intents(container) == 1


def test_a_retried_count_never_counts_an_edge_twice(container, monkeypatch) -> None:
    from botocore.exceptions import ClientError, ConnectionClosedError

    from mnemo.errors import DependencyError

    db = container.meter._store._db
    real, attempts = db.transact_write_items, []

    def flaky(**kwargs):
        attempts.append(kwargs)
        if len(attempts) == 1:  # a concurrent write to the tenant item: nothing applied, retried at once
            raise ClientError({"Error": {"Code": "TransactionCanceledException", "Message": "conflict"},
                               "CancellationReasons": [{"Code": "None"}, {"Code": "TransactionConflict"}]},
                              "TransactWriteItems")
        answer = real(**kwargs)
        if len(attempts) == 2:  # applied, but the answer is lost: the caller fails and is retried
            raise ConnectionClosedError(endpoint_url="https://dynamodb")
        return answer

    monkeypatch.setattr(db, "transact_write_items", flaky)
    with pytest.raises(DependencyError):  # the worker fails the task; SQS redelivers it
        container.meter.count_intents("local", ["edge-1"])
    assert container.meter.count_intents("local", ["edge-1"]) == 0  # the redelivery: the marker says counted
    assert len(attempts) == 3 and intents(container) == 1
    assert container.meter.count_intents("local", ["edge-2"]) == 1 and intents(container) == 2  # control: a new edge
