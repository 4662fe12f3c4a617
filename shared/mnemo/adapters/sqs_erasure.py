"""`ErasureQueue` on the enrichment queue: an erasure job's hops ride the queue the worker already
consumes (same retries, same DLQ), told apart from enrichment tasks by `"task": "erasure"`."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from mnemo.domain.erasure import ErasureStep
from mnemo.errors import DependencyError


class SqsErasureQueue:
    def __init__(self, client: Any, queue_url: str) -> None:
        self._sqs = client
        self._url = queue_url

    def send_step(self, step: ErasureStep, delay_seconds: int = 0) -> None:
        try:
            self._sqs.send_message(QueueUrl=self._url, MessageBody=step.model_dump_json(),
                                   **({"DelaySeconds": min(delay_seconds, 900)} if delay_seconds > 0 else {}))
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError("enrichment queue unavailable") from exc
