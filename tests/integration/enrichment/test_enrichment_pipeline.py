"""The worker over moto SQS exactly as Lambda's event source mapping drives it: redelivery,
fault injection at every step, DLQ after the receive limit, visible failure, redrive."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from mnemo.adapters.aws import client
from mnemo.domain.commands import CaptureCommand, EditCommand
from mnemo.domain.models import EnrichmentState, Status
from mnemo.domain.namespace import NamespaceFilter
from mnemo.errors import DependencyError
from mnemo.local.poller import QueuePoller
from mnemo.local.server import load_function
from mnemo.ports import SearchQuery
from tests.integration.conftest import Context

LOCAL = NamespaceFilter(tenant="local")  # the test key's tenant, user "default"


@pytest.fixture
def pipeline(aws, container, principal):
    """Queue with VisibilityTimeout 0 (a failed message is visible again at once) and 3 receives."""
    sqs = client("sqs")
    sqs.set_queue_attributes(QueueUrl=aws["EnrichmentQueue"], Attributes={"VisibilityTimeout": "0"})
    poller = QueuePoller(sqs, aws["EnrichmentQueue"], load_function("worker").handler, wait_seconds=0)
    return container, principal, poller, sqs, aws


def drain(poller: QueuePoller, rounds: int = 10) -> None:
    for _ in range(rounds):
        if poller.poll_once() == 0:
            return


def dlq_bodies(sqs: Any, url: str) -> list[dict[str, Any]]:
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=0).get("Messages", [])
    return [json.loads(m["Body"]) for m in messages]


def snapshot(services, memory_id: str) -> dict[str, Any]:
    """Everything enrichment derives for a memory: stored item, facts, links, index document."""
    memory = services.store.get("local", memory_id)
    return {
        "memory": memory.model_dump(exclude={"revision", "enrichment"}),
        "state": memory.enrichment.state,
        "facts": sorted(f.uuid for f in services.fact_store.for_memory("local", memory_id)),
        "links": sorted((link.other_id, link.weight) for link in services.graph.links("local", memory_id)),
        "hits": sorted(c.memory_id for c in services.index().search(
            SearchQuery(scope=LOCAL, text=memory.raw, authors=["user", "agent"]))),
    }


def test_capture_is_enriched_with_one_batched_embedding_call(pipeline, monkeypatch) -> None:
    services, principal, poller, *_ = pipeline
    calls: list[int] = []
    embed = services.embedder.embed
    monkeypatch.setattr(services.embedder, "embed", lambda texts, **kw: calls.append(len(texts)) or embed(texts, **kw))
    ids = [services.memories.capture(principal, CaptureCommand(raw=f"Anna moved to Berlin in {2000 + i}", as_user=True)).id
           for i in range(5)]
    drain(poller)
    assert len(calls) == 1 and calls[0] >= 5  # one call for the whole SQS batch (texts, then fact sentences)
    for memory_id in ids:
        memory = services.store.get("local", memory_id)
        assert memory.enrichment.state == EnrichmentState.ENRICHED and memory.category and "Anna" in memory.entities


def test_redelivering_the_same_batch_yields_identical_state(pipeline) -> None:
    services, principal, poller, sqs, aws = pipeline
    first = services.memories.capture(principal, CaptureCommand(raw="Caroline adopted a dog named Luna", as_user=True))
    second = services.memories.capture(principal, CaptureCommand(raw="Caroline lives in Boston with Luna", as_user=True))
    messages = sqs.receive_message(QueueUrl=aws["EnrichmentQueue"], MaxNumberOfMessages=10, AttributeNames=["All"])["Messages"]
    from mnemo.local.poller import to_event

    event = to_event(messages, "arn:aws:sqs:us-east-1:123456789012:mnemo-enrichment", "us-east-1")
    handler = load_function("worker").handler
    assert handler(event, Context()) == {"batchItemFailures": []}
    before = [snapshot(services, m.id) for m in (first, second)]
    # At-least-once delivery: the same batch again, as if the deletes had been lost...
    assert handler(event, Context()) == {"batchItemFailures": []}
    # ...and even if the memories had been reset to pending in between (a redrive race).
    for memory in (first, second):
        stored = services.store.get("local", memory.id)
        services.store.save(stored.model_copy(update={"enrichment": stored.enrichment.model_copy(
            update={"state": EnrichmentState.PENDING})}), expected_version=stored.version)
    assert handler(event, Context()) == {"batchItemFailures": []}
    after = [snapshot(services, m.id) for m in (first, second)]
    assert after == before
    assert before[1]["links"] and before[1]["facts"]


def test_a_stale_task_is_skipped_and_the_edit_re_enriches(pipeline) -> None:
    services, principal, poller, *_ = pipeline
    # Given a memory captured on a Saturday: its indexed date words ("6 May 2023 Saturday") name
    # neither weekday below, whatever day the suite runs on.
    saturday = datetime(2023, 5, 6, 9, 0, tzinfo=UTC)
    memory = services.memories.capture(principal, CaptureCommand(raw="Standups are on Tuesdays", as_user=True,
                                                                 captured_at=saturday))
    services.memories.edit(principal, memory.id, EditCommand(raw_text="Standups are on Wednesdays"))
    drain(poller)
    stored = services.store.get("local", memory.id)
    assert stored.version == 2 and stored.enrichment.state == EnrichmentState.ENRICHED
    hits = services.index().search(SearchQuery(scope=LOCAL, text="Wednesdays"))
    assert [h.memory_id for h in hits] == [memory.id]
    assert services.index().search(SearchQuery(scope=LOCAL, text="Tuesdays", vector=None)) == []


def test_archive_removes_the_memory_from_index_and_graph(pipeline) -> None:
    services, principal, poller, *_ = pipeline
    a = services.memories.capture(principal, CaptureCommand(raw="Jon opened a dance studio in Berlin", as_user=True))
    b = services.memories.capture(principal, CaptureCommand(raw="Jon's dance studio in Berlin is busy", as_user=True))
    drain(poller)
    assert a.id in {link.other_id for link in services.graph.links("local", b.id)}
    services.memories.archive(principal, a.id)
    drain(poller)
    assert services.graph.links("local", a.id) == []
    assert a.id not in {link.other_id for link in services.graph.links("local", b.id)}
    direct = services.index().search(SearchQuery(scope=LOCAL, text="dance studio",
                                                 statuses=[Status.OPEN, Status.ARCHIVED]))
    assert a.id not in [h.memory_id for h in direct]
    # A neighbour's document may still name it as a link until re-enriched; the store decides.
    from mnemo.domain.commands import RetrieveCommand

    found = services.memories.search(principal, RetrieveCommand(query="dance studio", author="all"))
    assert [hit.memory.id for hit in found] == [b.id]


def test_the_ids_a_serverless_index_generates_are_kept_on_the_memory_and_deleted_by(pipeline, monkeypatch) -> None:
    # Issue 17, defect 3: a copy indexed less than a refresh ago is invisible to a lookup, so the worker
    # keeps the `_id`s the index generated and hands them back on the next write and on archive.
    from mnemo.adapters.local.index import LocalSearchIndex

    class GeneratingIndex(LocalSearchIndex):
        def __init__(self) -> None:
            super().__init__()
            self.told: list[tuple[str, list[str]]] = []
            self.count = 0

        def upsert(self, documents):
            super().upsert(documents)
            self.told += [("upsert", list(d.index_ids)) for d in documents]
            self.count += 1
            return {d.memory_id: [f"gen-{self.count}"] for d in documents}

        def delete(self, tenant, memory_id, index_ids=()):
            super().delete(tenant, memory_id, index_ids)
            self.told.append(("delete", list(index_ids)))

    services, principal, poller, *_ = pipeline
    index = GeneratingIndex()
    monkeypatch.setitem(services.__dict__, "_index", index)
    memory = services.memories.capture(principal, CaptureCommand(raw="Standups are on Tuesdays", as_user=True))
    drain(poller)
    assert services.store.get("local", memory.id).index_ids == ["gen-1"]

    services.memories.edit(principal, memory.id, EditCommand(raw_text="Standups are on Wednesdays"))
    drain(poller)
    assert services.store.get("local", memory.id).index_ids == ["gen-2"]

    services.memories.archive(principal, memory.id)
    drain(poller)
    assert index.told == [("upsert", []), ("upsert", ["gen-1"]), ("delete", ["gen-2"])]
    assert services.store.get("local", memory.id).index_ids == []


FAULTS = {
    "store read": ("store", "get"),
    "extractor (LLM)": ("_extractor", "extract"),
    "embedder": ("embedder", "embed"),
    "index write": ("index", "upsert"),
    "link write": ("graph", "apply"),  # the batch's graph writes, shared across its tasks
}


@pytest.mark.parametrize("step", list(FAULTS))
def test_fault_at_each_step_retries_then_dlq_then_redrive_restores(pipeline, monkeypatch, step: str) -> None:
    services, principal, poller, sqs, aws = pipeline
    memory = services.memories.capture(principal, CaptureCommand(raw="Gina launched her clothing store online", as_user=True))
    enrichment = services.enrichment
    owner_name, method = FAULTS[step]
    owner = {"store": enrichment._store, "_extractor": enrichment._extractor, "embedder": enrichment._embedder,
             "index": services.index(), "graph": enrichment._graph}[owner_name]
    failures = {"count": 0}

    def broken(*args: Any, **kwargs: Any) -> Any:
        failures["count"] += 1
        raise DependencyError(f"injected {step} failure")

    with monkeypatch.context() as fault:
        if step == "store read":  # fail the worker's read, not the failure bookkeeping after it
            fault.setattr(enrichment, "prepare", _prepare_with(enrichment, broken))
        else:
            fault.setattr(owner, method, broken)
        drain(poller, rounds=10)

    # Tier-1 data intact; retried up to the receive limit; visible failure; message in the DLQ.
    stored = services.store.get("local", memory.id)
    assert stored.raw == "Gina launched her clothing store online" and stored.version == 1
    assert failures["count"] == 3
    assert stored.enrichment.state == EnrichmentState.FAILED
    assert f"injected {step} failure" in stored.enrichment.error
    assert services.status.for_tenant("local").model_dump(exclude_none=True) == {"tenant": "local", "pending": 0, "failed": 1, "dlq": 1}
    assert dlq_bodies(sqs, aws["EnrichmentDLQ"]) == [{"tenant": "local", "memory_id": memory.id, "version": 1}]

    # The fault is fixed (the patch ended with its block); redrive moves the message back and the
    # memory is enriched.
    result = services.recovery.redrive()
    assert result.model_dump() == {"moved": 1, "reset": 1}
    assert services.store.get("local", memory.id).enrichment.state == EnrichmentState.PENDING
    drain(poller)
    assert services.store.get("local", memory.id).enrichment.state == EnrichmentState.ENRICHED
    assert services.status.for_tenant("local").model_dump(exclude_none=True) == {"tenant": "local", "pending": 0, "failed": 0, "dlq": 0}


def _prepare_with(enrichment, broken):
    """prepare() whose store reads fail (the store is shared with the failure bookkeeping)."""
    original_prepare = enrichment.prepare

    def prepare(tasks):
        store_get, store_get_many = enrichment._store.get, enrichment._store.get_many
        enrichment._store.get = enrichment._store.get_many = broken
        try:
            return original_prepare(tasks)
        finally:
            enrichment._store.get, enrichment._store.get_many = store_get, store_get_many

    return prepare


def test_reconciler_requeues_a_memory_whose_task_was_lost(pipeline, monkeypatch) -> None:
    services, principal, poller, sqs, aws = pipeline
    with monkeypatch.context() as fault:
        fault.setattr(services.queue, "send", lambda task: (_ for _ in ()).throw(DependencyError("queue down")))
        memory = services.memories.capture(principal, CaptureCommand(raw="persisted, never enqueued", as_user=True))
    assert poller.poll_once() == 0  # nothing in the queue: the task was lost
    from datetime import timedelta

    assert services.recovery.requeue_stale(grace=timedelta(minutes=15)) == 0  # too fresh to be called lost
    assert services.recovery.requeue_stale(grace=timedelta(seconds=-1)) == 1
    drain(poller)
    assert services.store.get("local", memory.id).enrichment.state == EnrichmentState.ENRICHED
    assert services.recovery.requeue_stale(grace=timedelta(seconds=-1)) == 0  # enriched: no longer a candidate


def test_reindex_rebuilds_a_lost_index_from_dynamodb(pipeline) -> None:
    services, principal, poller, *_ = pipeline
    memory = services.memories.capture(principal, CaptureCommand(raw="Jon teaches salsa on Thursdays", as_user=True))
    drain(poller)
    services.index().delete("local", memory.id)  # the derived index lost it
    query = SearchQuery(scope=LOCAL, text="salsa")
    assert services.index().search(query) == []
    assert services.recovery.reindex() == 1
    drain(poller)
    assert [h.memory_id for h in services.index().search(query)] == [memory.id]
