"""`JobQueue` on the enrichment queue: a job's chunks ride the queue the worker already consumes
(same retries, same DLQ), told apart by `"task": "job"`. A mem0 pull's api key is in the body
(SSE-SQS encrypts it at rest); nothing here logs a body."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from mnemo.domain.jobs import JobStep
from mnemo.errors import DependencyError


class SqsJobQueue:
    def __init__(self, client: Any, queue_url: str) -> None:
        self._sqs = client
        self._url = queue_url

    def send_step(self, step: JobStep) -> None:
        try:
            self._sqs.send_message(QueueUrl=self._url, MessageBody=step.model_dump_json(exclude_none=True))
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError("enrichment queue unavailable") from exc
