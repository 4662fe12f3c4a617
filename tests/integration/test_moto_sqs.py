"""The local stack's SQS receive (mnemo.local.moto_sqs) answers what moto's own does: messages past
their retention period, delayed or in flight are not handed out; the rest are."""

from __future__ import annotations

from typing import Any

from moto.core import DEFAULT_ACCOUNT_ID
from moto.sqs.models import sqs_backends

from mnemo.local import moto_sqs


def test_receive_skips_expired_delayed_and_in_flight_messages_and_hands_out_the_rest(aws: dict[str, Any]) -> None:
    from mnemo.adapters.aws import client

    assert moto_sqs.installed()  # every test runs on it (tests/conftest.py), as the local stack does
    sqs = client("sqs")
    url = sqs.create_queue(QueueName="moto-sqs-receive", Attributes={"MessageRetentionPeriod": "60"})["QueueUrl"]
    # Given an expired message, a delayed one, one in flight and two fresh ones
    for body in ("fresh 1", "fresh 2", "in flight", "expired"):  # moto stops at the first expired one
        sqs.send_message(QueueUrl=url, MessageBody=body)
    sqs.send_message(QueueUrl=url, MessageBody="delayed", DelaySeconds=60)
    queue = sqs_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].get_queue("moto-sqs-receive")
    expired = next(m for m in queue._messages if m.body == "expired")  # noqa: SLF001
    expired.sent_timestamp -= 120_000  # sent two minutes ago: past the 60 s retention period
    in_flight = next(m for m in queue._messages if m.body == "in flight")  # noqa: SLF001
    in_flight.mark_received(visibility_timeout=60)
    # When a consumer receives
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
    # Then only the fresh ones come back (positive control: the receive does hand out messages)
    assert sorted(m["Body"] for m in received) == ["fresh 1", "fresh 2"]
    assert int(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessagesDelayed"])
               ["Attributes"]["ApproximateNumberOfMessagesDelayed"]) == 1
