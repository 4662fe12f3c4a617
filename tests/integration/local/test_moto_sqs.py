"""The local stack's SQS receive (mnemo.local.moto_sqs) answers what moto's own does: messages past
their retention period, delayed or in flight are not handed out; the rest are."""

from __future__ import annotations

from typing import Any

import pytest
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
    expired = next(m for m in queue._messages if m.body == "expired")
    expired.sent_timestamp -= 120_000  # sent two minutes ago: past the 60 s retention period
    in_flight = next(m for m in queue._messages if m.body == "in flight")
    in_flight.mark_received(visibility_timeout=60)
    # When a consumer receives
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
    # Then only the fresh ones come back (positive control: the receive does hand out messages)
    assert sorted(m["Body"] for m in received) == ["fresh 1", "fresh 2"]
    assert int(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessagesDelayed"])
               ["Attributes"]["ApproximateNumberOfMessagesDelayed"]) == 1


def test_counts_and_deletes_answer_what_moto_answers(aws: dict[str, Any]) -> None:
    """The three message counts equal moto's own walks; a delete by the current or an older receipt
    handle removes exactly that message, a repeated delete is a no-op, an unknown handle is refused."""
    from mnemo.adapters.aws import client

    sqs = client("sqs")
    url = sqs.create_queue(QueueName="moto-sqs-counts", Attributes={"VisibilityTimeout": "60"})["QueueUrl"]
    for n in range(30):
        sqs.send_message(QueueUrl=url, MessageBody=f"m{n}", **({"DelaySeconds": 60} if n % 10 == 0 else {}))
    queue = sqs_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].get_queue("moto-sqs-counts")
    first = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0)["Messages"]
    assert len(first) == 10
    old_handle = first[0]["ReceiptHandle"]
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=old_handle, VisibilityTimeout=0)
    again = next(m for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0)["Messages"]
                 if m["Body"] == first[0]["Body"])

    def moto_counts() -> tuple[int, int, int]:  # moto's own definitions, message by message
        return (len([m for m in queue._messages if m.visible and not m.delayed]),
                len([m for m in queue._messages if not m.visible]), len([m for m in queue._messages if m.delayed]))

    def ours() -> tuple[int, int, int]:
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"]
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
        return tuple(int(attributes[n]) for n in names)  # type: ignore[return-value]

    assert ours() == moto_counts() and ours()[1] > 0 and ours()[2] == 3
    # A delete by an older handle of a message received twice removes it; repeating it is a no-op
    sqs.delete_message(QueueUrl=url, ReceiptHandle=old_handle)
    sqs.delete_message(QueueUrl=url, ReceiptHandle=again["ReceiptHandle"])
    bodies = sorted(m.body for m in queue._messages)
    assert first[0]["Body"] not in bodies and len(bodies) == 29
    sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
                                                     for i, m in enumerate(first[1:])])
    assert len(queue._messages) == 20 and ours() == moto_counts()
    # An unknown handle is refused as moto refuses it
    with pytest.raises(sqs.exceptions.ReceiptHandleIsInvalid):
        sqs.delete_message(QueueUrl=url, ReceiptHandle="not-a-handle")
