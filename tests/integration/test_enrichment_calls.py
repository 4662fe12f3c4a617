"""AWS calls per enriched memory, counted with a botocore `before-call` hook on the app's clients
(as bench/local_stack_bench.py counts them): the batching across one SQS batch is pinned here, so a
change that adds a call per memory fails a test instead of slowing every enrichment."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from mnemo.adapters.aws import client
from mnemo.domain.commands import CaptureCommand
from mnemo.domain.models import EnrichmentState
from mnemo.local.poller import QueuePoller
from mnemo.local.server import load_function

BATCH = 10


@pytest.fixture
def counted(aws, container, principal):  # noqa: ANN001, ANN201
    sqs = client("sqs")
    poller = QueuePoller(sqs, aws["EnrichmentQueue"], load_function("worker").handler, wait_seconds=0)
    calls: Counter[str] = Counter()
    for aws_client in {id(c): c for c in (container._dynamodb, container._sqs, sqs)}.values():  # noqa: SLF001
        aws_client.meta.events.register("before-call.*.*", lambda model, **_: calls.update([model.name]))
    return container, principal, poller, calls


def enrich(services: Any, principal: Any, poller: QueuePoller, calls: Counter[str], *, extract: bool) -> Counter[str]:
    texts = [f"Note {i}: Melanie painted a sunrise over the lake with Caroline" for i in range(BATCH)]
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
    # and each memory costs two Queries of its own partition (graph items, fact provenance) and its
    # conditional final save
    assert per_op["Query"] == 2 * BATCH
    assert per_op["PutItem"] + per_op["TransactWriteItems"] == BATCH
    assert per_op["ReceiveMessage"] == 1 and per_op["DeleteMessageBatch"] == 1
    assert sum(per_op.values()) / BATCH <= 4, per_op
    print("memories only, calls per enriched memory:", sum(per_op.values()) / BATCH, dict(per_op))


def test_facts_add_a_bounded_number_of_calls(counted) -> None:
    # Given the same batch with extraction on (entities, facts, postings)
    services, principal, poller, calls = counted
    enrich(services, principal, poller, calls, extract=True)
    per_op = enrich(services, principal, poller, calls, extract=True)
    # Then the entity shared by the whole batch is read once per batch, not once per memory
    print("with facts, calls per enriched memory:", sum(per_op.values()) / BATCH, dict(per_op))
    assert per_op["Query"] <= BATCH * 6, per_op
