"""AWS calls per enriched memory, counted with a botocore `before-call` hook on the app's clients
(as bench/local_stack_bench.py counts them): the batching across one SQS batch is pinned here, so a
change that adds a call per memory fails a test instead of slowing every enrichment."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from mnemo.adapters.aws import client
from mnemo.adapters.local.heuristic_extractor import HeuristicExtractor
from mnemo.domain.commands import CaptureCommand
from mnemo.domain.models import EnrichmentState
from mnemo.local.poller import QueuePoller
from mnemo.local.server import load_function

BATCH = 10


@pytest.fixture
def counted(aws, container, principal):
    sqs = client("sqs")
    poller = QueuePoller(sqs, aws["EnrichmentQueue"], load_function("worker").handler, wait_seconds=0)
    calls: Counter[str] = Counter()
    for aws_client in {id(c): c for c in (container._dynamodb, container._sqs, sqs)}.values():
        aws_client.meta.events.register("before-call.*.*", lambda model, **_: calls.update([model.name]))
    return container, principal, poller, calls


FACT_TEXTS = [f"{who} {what} (note {{i}})" for who in ("Caroline", "Melanie") for what in (
    "moved to Berlin last week.", "adopted a dog named Luna.", "visited Lake Tahoe with friends.",
    "started a pottery class.", "is reading Dune again.")]


def enrich(services: Any, principal: Any, poller: QueuePoller, calls: Counter[str], *, extract: bool,
           texts: list[str] | None = None) -> Counter[str]:
    texts = texts or [f"Note {i}: Melanie painted a sunrise over the lake with Caroline" for i in range(BATCH)]
    ids = [services.memories.capture(principal, CaptureCommand(raw=t, as_user=True, extract=extract)).id for t in texts]
    calls.clear()
    assert poller.poll_once() == BATCH  # one SQS batch of ten
    counted = Counter(calls)
    for memory_id in ids:
        assert services.store.get("local", memory_id).enrichment.state == EnrichmentState.ENRICHED
    return counted


def test_memories_cost_at_most_four_calls_each_and_batch_reads_are_shared(counted) -> None:
    # Given ten memories in one SQS batch, enriched without facts (extract=False: embedded, linked, indexed)
    services, principal, poller, calls = counted
    enrich(services, principal, poller, calls, extract=False)  # a first batch: the tenant is not empty
    # When the next batch of ten is enriched
    per_op = enrich(services, principal, poller, calls, extract=False)
    # Then the batch's reads and graph writes are shared: one consistent BatchGetItem for the memories,
    # one for tombstones before and one after the derived writes, graph writes together
    assert per_op["BatchGetItem"] == 3
    # (up to 5 links a memory, each written at both ends: <= 100 items, 25 a BatchWriteItem)
    assert per_op["BatchWriteItem"] <= 4 + 1, per_op
    assert per_op["GetItem"] == 0 and per_op["Scan"] == 0
    # and each memory costs one Query of its own partition (graph items; no fact provenance to read:
    # a memory captured with extract=False never derives facts) and its conditional final save; the
    # user's capture order (sequence links) is one Query per author partition for the whole batch
    assert per_op["Query"] == BATCH + 2
    assert per_op["PutItem"] + per_op["TransactWriteItems"] == BATCH
    assert per_op["ReceiveMessage"] == 1 and per_op["DeleteMessageBatch"] == 1
    assert sum(per_op.values()) / BATCH <= 3.2, per_op
    print("memories only, calls per enriched memory:", sum(per_op.values()) / BATCH, dict(per_op))


def test_facts_add_a_bounded_number_of_calls(counted) -> None:
    # Given batches whose memories state facts about two people (the heuristic extractor's triples)
    services, principal, poller, calls = counted
    enrich(services, principal, poller, calls, extract=True, texts=[t.format(i=i) for i, t in enumerate(FACT_TEXTS)])
    facts_before = len(list(services.fact_store.every_fact()))
    # When a second batch says the same things again (new memories, the same facts and entities)
    texts = [t.format(i=BATCH + i) for i, t in enumerate(FACT_TEXTS)]
    per_op = enrich(services, principal, poller, calls, extract=True, texts=texts)
    print("with facts, calls per enriched memory:", sum(per_op.values()) / BATCH, dict(per_op))
    # Then the facts exist once each, now with two sources (the writes happened: positive control)
    facts = list(services.fact_store.every_fact())
    assert facts_before > 0 and len(facts) == facts_before
    assert all(len(f.sources) == 2 for f in facts if f.predicate != "mentions"), [f.sources for f in facts]
    # and the batch's entities are resolved once for the batch: one BatchGetItem of names, one of
    # nodes, no node write (every entity exists); each fact gains its source in one transaction
    assert per_op["UpdateItem"] == 0 and per_op["GetItem"] == 0, per_op
    assert per_op["TransactWriteItems"] <= BATCH, per_op
    # graph items + provenance per memory, plus the timelines of the batch's single-valued groups,
    # read once for the batch (an adjacency Query per status; was 11.7 calls a memory before batching),
    # plus the user's capture order (two Queries for the batch)
    assert per_op["Query"] <= 2 * BATCH + 12 + 2, per_op
    # + names and nodes, + one per memory's facts, + one for the batch: do negations of its multi-valued
    # positive facts exist (a later positive retires one, issue 29)? Per batch, never per memory
    assert per_op["BatchGetItem"] <= 3 + 2 + BATCH + 1, per_op
    # 59 calls for the batch (60 with that read), plus a BatchGetItem and a transaction per memory that
    # states a fact (8 of the 10 since issue 29 reads "adopted a dog named Luna"; 6 before: 7.1 calls a
    # memory then, 7.5 at ad5e470, 7.6 with the batch's negation read)
    stating = sum(bool(HeuristicExtractor().extract(t).facts) for t in texts)
    assert stating == 8 and sum(per_op.values()) <= 60 + 2 * stating, per_op


def test_facts_are_written_once_when_the_batch_is_redelivered(counted) -> None:
    # Given a batch with facts, enriched
    services, principal, poller, calls = counted
    texts = [t.format(i=i) for i, t in enumerate(FACT_TEXTS)]
    ids = [services.memories.capture(principal, CaptureCommand(raw=t, as_user=True)).id for t in texts]
    assert poller.poll_once() == BATCH
    audits = {f.uuid: len(services.fact_store.audit("local", f.uuid)) for f in services.fact_store.every_fact()}
    # When the same tasks are delivered again as one batch (reindex: the enrichment runs in full again)
    from mnemo.ports import EnrichmentTask

    memories = [services.store.get("local", i) for i in ids]
    tasks = [EnrichmentTask(tenant="local", memory_id=m.id, version=m.version, reindex=True) for m in memories]
    services.enrichment.complete_batch(services.enrichment.prepare(tasks))
    # Then no fact gained a revision or an audit row (the replay wrote nothing), and all are active
    after = {f.uuid: f for f in services.fact_store.every_fact()}
    assert audits and {u: len(services.fact_store.audit("local", u)) for u in after} == audits
    assert all(f.status.value == "active" for f in after.values())
