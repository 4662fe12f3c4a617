"""SQS → enrichment: Powertools BatchProcessor with partial batch failures.

The batch-wide steps (load, extract, one embedding call; then facts, graph and index, with the
graph's writes shared across the batch) run first and keep each task's failure on that task; then
each record succeeds or fails on its own, so one bad record never fails its neighbours. A record failing on its last
allowed receive marks its memory `failed` with the reason before SQS moves it to the DLQ.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from pydantic import ValidationError

from mnemo.domain.erasure import ErasureStep
from mnemo.domain.messages import EnrichmentTask, StepMessage, parse_message
from mnemo.errors import MnemoError
from mnemo.services.enrichment.batch import Prepared
from mnemo.services.jobs.runner import forever

if TYPE_CHECKING:
    from mnemo.bootstrap import Container

logger = Logger(service="mnemo-worker")
metrics = Metrics(namespace="Mnemo", service="mnemo-worker")


class PoisonMessage(Exception):
    """A message body that is none of the queue's messages (domain/messages.py): retrying cannot help; it goes to the DLQ."""


Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


# Powertools' metric set is process-wide: the local stack runs several batches at once in threads
# (Lambda runs them in separate processes), so each invocation counts on its own and publishes its
# counts under this lock.
_PUBLISHING = threading.Lock()


def worker_handler(services: Callable[[], Container]) -> Handler:
    """The Lambda handler over `services` (the function passes its composition root; the local
    stack passes its own container): Powertools context and metrics around `handle_batch`."""

    @metrics.log_metrics(capture_cold_start_metric=True)
    def publish(counts: Counter[str], context: Any) -> None:
        for name, value in counts.items():
            metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)

    @logger.inject_lambda_context
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        counts: Counter[str] = Counter()
        try:
            return handle_batch(event, context, services(), counts)
        finally:
            with _PUBLISHING:
                publish(counts, context)

    return handler


def handle_batch(event: dict[str, Any], context: Any, services: Container, counts: Counter[str] | None = None) -> dict[str, Any]:
    counts = Counter() if counts is None else counts
    enrichment = services.enrichment
    tasks: dict[str, EnrichmentTask] = {}
    steps: dict[str, StepMessage] = {}  # job steps share the queue (docs/import-export.md "Jobs", docs/erasure.md)
    for record in event.get("Records", []):
        try:
            message = parse_message(record["body"])
        except ValidationError:
            logger.error("unparseable enrichment message", extra={"message_id": record.get("messageId")})
            continue
        if isinstance(message, EnrichmentTask):
            tasks[record["messageId"]] = message
        else:
            steps[record["messageId"]] = message
    prepared: dict[str, Prepared] = dict(zip(tasks, enrichment.prepare(list(tasks.values())), strict=True))
    enrichment.complete_batch(list(prepared.values()))  # failures stay on their task, raised below
    max_receives = services.settings.max_receive_count

    def record_handler(record: SQSRecord) -> None:
        if record.message_id in steps:
            return job_step(record, steps[record.message_id], context, services)
        item = prepared.get(record.message_id)
        if item is None:
            raise PoisonMessage(f"message {record.message_id} is not an enrichment task")
        try:
            if item.error is not None:
                raise item.error
            counts["MemoriesEnriched"] += 1
        except Exception as exc:
            final = int(record.attributes.approximate_receive_count) >= max_receives
            logger.warning(
                "enrichment failed",
                extra={"memory_id": item.task.memory_id, "final": final, "error": type(exc).__name__},
                exc_info=not isinstance(exc, MnemoError),  # our own errors carry a clear message already
            )
            counts["EnrichmentFailures"] += 1
            try:
                enrichment.record_failure(item.task, exc, final=final)
            except Exception:
                logger.exception("could not record the failure on the memory")
            raise

    return process_partial_response(  # type: ignore[return-value]  # a TypedDict: the dict Lambda reads
        event=event, record_handler=record_handler, processor=BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False), context=context
    )


def job_step(record: SQSRecord, step: StepMessage, context: Any, services: Container) -> None:
    """One step of a job (import, mem0 pull, deduplication, a user's erasure) through the job runner;
    a step handler that watches the clock stops early when the invocation's time runs low (the next hop
    resumes). On the last allowed receive the job is marked failed before SQS moves the message on, so
    the job says why instead of staying `running` (a failed mem0 hop's message reaches the DLQ with its
    key, encrypted there until the DLQ's retention ends; docs/import-export.md)."""
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    runner = services.runner
    kind = "erasure job" if isinstance(step, ErasureStep) else "job"
    try:
        runner.run(step, remaining if callable(remaining) else forever)
    except Exception as exc:
        final = int(record.attributes.approximate_receive_count) >= services.settings.max_receive_count
        logger.warning(f"{kind} step failed", extra={"job_id": step.job_id, "step": step.step, "final": final,
                                                     "error": type(exc).__name__}, exc_info=not isinstance(exc, MnemoError))
        if final:
            try:
                runner.fail(step, exc)
            except Exception:
                logger.exception(f"could not record the failure on the {kind}")
        raise
