"""`JobQueue` on the enrichment queue: every job's steps (import, mem0 pull, deduplication, a user's
erasure) ride the queue the worker already consumes (same retries, same DLQ), told apart by their
`task` (domain/messages.py). A mem0 pull's api key is in the body (SSE-SQS encrypts it at rest);
nothing here logs a body."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from mnemo.domain.messages import StepMessage
from mnemo.errors import DependencyError

MAX_DELAY_SECONDS = 900  # SQS's DelaySeconds maximum


class SqsJobQueue:
    def __init__(self, client: Any, queue_url: str) -> None:
        self._sqs = client
        self._url = queue_url

    def send_step(self, step: StepMessage, delay_seconds: int = 0) -> None:
        delay = {"DelaySeconds": min(delay_seconds, MAX_DELAY_SECONDS)} if delay_seconds > 0 else {}
        try:  # exclude_none: a step without an api key has no `api_key` in its body (the wire format of every release)
            self._sqs.send_message(QueueUrl=self._url, MessageBody=step.model_dump_json(exclude_none=True), **delay)
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError("enrichment queue unavailable") from exc
