"""The worker queue's one message union (domain/messages.py): every body the senders put on the queue,
as the previous release wrote them (messages in flight across a deploy), parses to its message; what
the senders write now is byte for byte the same; anything else is a poison message."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from pydantic import ValidationError

from mnemo.adapters.sqs.jobs import SqsJobQueue
from mnemo.adapters.sqs.queue import SqsEnrichmentQueue
from mnemo.domain.erasure import ErasureStep
from mnemo.domain.jobs import JobStep
from mnemo.domain.messages import EnrichmentTask, parse_message

URL = "https://sqs.us-east-1.amazonaws.com/123456789012/enrichment"

# The bodies as the release before the one job engine sent them (SqsEnrichmentQueue, SqsJobQueue, SqsErasureQueue).
WIRE: list[tuple[str, Any]] = [
    ('{"tenant":"t","memory_id":"m1","version":3}', EnrichmentTask(tenant="t", memory_id="m1", version=3)),
    ('{"tenant":"t","memory_id":"m1","version":3,"reindex":true}',
     EnrichmentTask(tenant="t", memory_id="m1", version=3, reindex=True)),
    ('{"task":"job","tenant":"t","job_id":"j1","step":0}', JobStep(tenant="t", job_id="j1", step=0)),
    ('{"task":"job","tenant":"t","job_id":"j1","step":4,"api_key":"m0-key"}',
     JobStep(tenant="t", job_id="j1", step=4, api_key="m0-key")),
    ('{"task":"erasure","tenant":"t","job_id":"e1","step":2}', ErasureStep(tenant="t", job_id="e1", step=2)),
]


@pytest.mark.parametrize(("body", "message"), WIRE, ids=["enrichment", "reindex", "job", "mem0-step", "erasure"])
def test_every_wire_format_of_the_previous_release_parses_to_its_message(body: str, message: object) -> None:
    parsed = parse_message(body)
    assert type(parsed) is type(message) and parsed == message  # every field, the mem0 key too


def test_an_enrichment_task_carries_no_task_on_the_wire_and_an_explicit_tag_parses_too() -> None:
    task = EnrichmentTask(tenant="t", memory_id="m1", version=3)
    assert "task" not in task.model_dump_json(exclude_defaults=True)  # what SqsEnrichmentQueue sends
    assert parse_message(task.model_dump_json(exclude_defaults=True)) == task
    assert parse_message('{"task":"enrichment","tenant":"t","memory_id":"m1","version":3}') == task


def test_the_senders_write_the_bodies_of_the_previous_release() -> None:
    sqs = boto3.client("sqs", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(sqs) as stub:
        for body, delay in [(WIRE[0][0], None), (WIRE[2][0], None), (WIRE[3][0], None), (WIRE[4][0], None), (WIRE[4][0], 900)]:
            expected = {"QueueUrl": URL, "MessageBody": body, **({"DelaySeconds": delay} if delay else {})}
            stub.add_response("send_message", {"MessageId": "x"}, expected)
        SqsEnrichmentQueue(sqs, URL).send(WIRE[0][1])
        queue = SqsJobQueue(sqs, URL)
        for _, message in WIRE[2:]:
            queue.send_step(message)
        queue.send_step(ErasureStep(tenant="t", job_id="e1", step=2), 1_000)  # SQS allows at most 900 s
        stub.assert_no_pending_responses()


@pytest.mark.parametrize("body", [
    "not json",
    "[]",
    "null",
    '{"task":"reindex","tenant":"t","memory_id":"m1","version":3}',  # an unknown task, however enrichment-like
    '{"task":5,"tenant":"t","memory_id":"m1","version":3}',
    '{"task":"job","tenant":"t","job_id":"j1"}',  # a job step without its step
    '{"task":"erasure","tenant":"t","step":0}',
    '{"tenant":"t","memory_id":"m1"}',  # an enrichment task without its version
])
def test_anything_else_is_a_poison_message(body: str) -> None:
    assert parse_message('{"tenant":"t","memory_id":"m1","version":3}')  # positive control: the same call parses a task
    with pytest.raises(ValidationError):
        parse_message(body)
