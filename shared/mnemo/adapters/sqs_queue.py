"""`EnrichmentQueue` on SQS: one message per (tenant, memory, version)."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from mnemo.errors import DependencyError
from mnemo.ports import EnrichmentTask


class SqsEnrichmentQueue:
    def __init__(self, client: Any, queue_url: str, dlq_url: str = "") -> None:
        self._sqs = client
        self._url = queue_url
        self._dlq_url = dlq_url

    def send(self, task: EnrichmentTask) -> None:
        try:
            self._sqs.send_message(QueueUrl=self._url, MessageBody=task.model_dump_json())
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError("enrichment queue unavailable") from exc
