"""`EnrichmentQueue` and `DeadLetters` on SQS: one message per (tenant, memory, version)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import ValidationError

from mnemo.errors import DependencyError
from mnemo.ports import EnrichmentTask

logger = logging.getLogger(__name__)

_SEND_BATCH_LIMIT = 10  # SQS's maximum entries per SendMessageBatch


class SqsEnrichmentQueue:
    def __init__(self, client: Any, queue_url: str, dlq_url: str = "") -> None:
        self._sqs = client
        self._url = queue_url
        self._dlq_url = dlq_url

    def send(self, task: EnrichmentTask) -> None:
        try:
            self._sqs.send_message(QueueUrl=self._url, MessageBody=task.model_dump_json(exclude_defaults=True))
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError("enrichment queue unavailable") from exc

    def send_many(self, tasks: Sequence[EnrichmentTask]) -> list[EnrichmentTask]:
        """SendMessageBatch, 10 a call; an entry SQS refuses (or a call that fails) is returned, not raised."""
        refused: list[EnrichmentTask] = []
        for start in range(0, len(tasks), _SEND_BATCH_LIMIT):
            chunk = tasks[start : start + _SEND_BATCH_LIMIT]
            entries = [{"Id": str(i), "MessageBody": t.model_dump_json(exclude_defaults=True)} for i, t in enumerate(chunk)]
            try:
                failed = self._sqs.send_message_batch(QueueUrl=self._url, Entries=entries).get("Failed", [])
            except (ClientError, BotoCoreError):
                logger.warning("enrichment batch send failed", exc_info=True)
                refused += chunk
                continue
            refused += [chunk[int(f["Id"])] for f in failed]
        return refused

    def depths(self) -> dict[str, int]:
        """Queue-wide message counts (all tenants): for operators, never shown to a tenant."""
        try:
            main = self._attributes(self._url)
            dlq = self._attributes(self._dlq_url) if self._dlq_url else {}
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError("enrichment queue unavailable") from exc
        return {
            "queued": int(main.get("ApproximateNumberOfMessages", 0)),
            "in_flight": int(main.get("ApproximateNumberOfMessagesNotVisible", 0)),
            "dead_letters": int(dlq.get("ApproximateNumberOfMessages", 0)),
        }

    def _attributes(self, url: str) -> dict[str, str]:
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        return self._sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]

    def move_back(self, limit: int, before_send: Callable[[EnrichmentTask], None]) -> int:
        """Receive from the DLQ, reset, send to the queue, then delete: a crash re-delivers, never loses."""
        moved = 0
        try:
            while moved < limit:
                batch = self._sqs.receive_message(
                    QueueUrl=self._dlq_url, MaxNumberOfMessages=min(10, limit - moved), WaitTimeSeconds=0
                ).get("Messages", [])
                if not batch:
                    return moved
                for message in batch:
                    try:
                        before_send(EnrichmentTask.model_validate_json(message["Body"]))
                    except ValidationError:
                        logger.error("DLQ message is not an enrichment task; left in the DLQ", extra={"id": message["MessageId"]})
                        continue
                    self._sqs.send_message(QueueUrl=self._url, MessageBody=message["Body"])
                    self._sqs.delete_message(QueueUrl=self._dlq_url, ReceiptHandle=message["ReceiptHandle"])
                    moved += 1
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError("dead-letter queue unavailable") from exc
        return moved
