"""Feeds the SQS queue to the worker handler the way Lambda's event source mapping does.

Receive up to `batch_size`, wrap them in the SQS event shape, call the handler, delete what it
reports as done, leave failures to reappear after the visibility timeout; the queue's own
RedrivePolicy moves a message to the DLQ after maxReceiveCount. (A moto event source mapping
would delete messages whatever the handler says, so we do not register one.) `concurrency` polling
threads run that many batches at once, as Lambda's `MaximumConcurrency` does; SQS's visibility
timeout keeps a message with one of them, and the worker's conditional writes keep a redelivered
one from being applied twice.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


class _Context:
    """The parts of LambdaContext that Powertools reads."""

    function_name = "mnemo-local-worker"
    function_version = "$LATEST"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:mnemo-local-worker"

    def __init__(self) -> None:
        self.aws_request_id = str(uuid.uuid4())

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 120_000


def to_event(messages: list[dict[str, Any]], queue_arn: str, region: str) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": m.get("Attributes", {}),
                "messageAttributes": m.get("MessageAttributes", {}),
                "md5OfBody": m.get("MD5OfBody", ""),
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            }
            for m in messages
        ]
    }


class QueuePoller:
    def __init__(self, sqs: Any, queue_url: str, handler: Handler, *, batch_size: int = 10, wait_seconds: int = 1,
                 concurrency: int = 1) -> None:
        self._sqs = sqs
        self._url = queue_url
        self._handler = handler
        self._batch_size = batch_size
        self._wait = wait_seconds
        self._stop = threading.Event()
        self._concurrency = concurrency
        self._threads: list[threading.Thread] = []
        attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]
        self._arn = attributes["QueueArn"]
        self._region = self._arn.split(":")[3]

    def poll_once(self) -> int:
        """One receive → invoke → delete cycle; returns how many messages it handled."""
        response = self._sqs.receive_message(
            QueueUrl=self._url,
            MaxNumberOfMessages=self._batch_size,
            WaitTimeSeconds=self._wait,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        messages = response.get("Messages", [])
        if not messages:
            return 0
        try:
            result = self._handler(to_event(messages, self._arn, self._region), _Context())
            failed = {f["itemIdentifier"] for f in (result or {}).get("batchItemFailures", [])}
        except Exception:  # a crashed invocation fails the whole batch, as on Lambda
            logger.exception("worker invocation failed")
            failed = {m["MessageId"] for m in messages}
        done = [m for m in messages if m["MessageId"] not in failed]
        if done:
            self._sqs.delete_message_batch(
                QueueUrl=self._url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)],
            )
        return len(messages)

    def start(self) -> None:
        self._threads = [threading.Thread(target=self._run, name=f"mnemo-queue-poller-{n}", daemon=True)
                         for n in range(self._concurrency)]
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=self._wait + 5)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll_once()
            except Exception:  # keep polling: a transient error must not stop enrichment
                logger.exception("poll failed")
                self._stop.wait(1.0)
