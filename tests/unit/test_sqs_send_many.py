"""`SqsEnrichmentQueue.send_many` against botocore's Stubber: SendMessageBatch in tens, and the tasks
SQS refuses (a failed entry, or a failed call) handed back, not raised, for the reconciler."""

from __future__ import annotations

import boto3
from botocore.stub import ANY, Stubber

from mnemo.adapters.sqs.queue import SqsEnrichmentQueue
from mnemo.ports import EnrichmentTask

URL = "https://sqs.us-east-1.amazonaws.com/123456789012/enrichment"


def test_batches_of_ten_and_refused_entries_come_back() -> None:
    sqs = boto3.client("sqs", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    tasks = [EnrichmentTask(tenant="t", memory_id=f"m{i}", version=1) for i in range(23)]
    with Stubber(sqs) as stub:
        first = [{"Id": str(i), "MessageBody": t.model_dump_json(exclude_defaults=True)} for i, t in enumerate(tasks[:10])]
        stub.add_response("send_message_batch", {"Successful": [], "Failed": []}, {"QueueUrl": URL, "Entries": first})
        failed = {"Id": "3", "SenderFault": False, "Code": "InternalError"}
        stub.add_response("send_message_batch", {"Successful": [], "Failed": [failed]}, {"QueueUrl": URL, "Entries": ANY})
        stub.add_client_error("send_message_batch", "ServiceUnavailable", http_status_code=503)
        refused = SqsEnrichmentQueue(sqs, URL).send_many(tasks)
        stub.assert_no_pending_responses()
    # the second call's fourth entry (task 13) and the whole third call (tasks 20-22); the first ten went
    assert [t.memory_id for t in refused] == ["m13", "m20", "m21", "m22"]
