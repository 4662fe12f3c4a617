"""Recovery: nothing accepted is lost. Re-enqueue memories whose task went missing; redrive the DLQ."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import suppress
from datetime import datetime, timedelta

from pydantic import BaseModel

from mnemo.domain.models import Enrichment, EnrichmentState, utcnow
from mnemo.errors import ConflictError
from mnemo.ports import DeadLetters, EnrichmentQueue, EnrichmentTask, MemoryStore

logger = logging.getLogger(__name__)

# A task normally starts within seconds; one queued longer ago and never attempted was most likely
# lost (a crash between the DynamoDB write and the SQS send). A false positive costs one duplicate
# task, which the worker skips as "already enriched".
DEFAULT_GRACE = timedelta(minutes=15)


class RedriveResult(BaseModel):
    moved: int
    reset: int


class RecoveryService:
    def __init__(
        self,
        store: MemoryStore,
        queue: EnrichmentQueue,
        dead_letters: DeadLetters,
        *,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._store = store
        self._queue = queue
        self._dead_letters = dead_letters
        self._clock = clock

    def requeue_stale(self, grace: timedelta = DEFAULT_GRACE, limit: int = 100) -> int:
        """Send a fresh task for every memory pending and unattempted for longer than `grace`."""
        now = self._clock()
        requeued = 0
        for memory in self._store.stale_pending(now - grace, limit):
            self._queue.send(EnrichmentTask(tenant=memory.tenant, memory_id=memory.id, version=memory.version))
            touched = memory.model_copy(update={"enrichment": memory.enrichment.model_copy(update={"queued_at": now})})
            with suppress(ConflictError):  # edited meanwhile: the edit sent its own task
                self._store.save(touched, expected_version=memory.version)
            requeued += 1
        if requeued:
            logger.warning("re-enqueued memories whose enrichment task was lost", extra={"count": requeued})
        return requeued

    def reindex(self) -> int:
        """Rebuild the derived index from DynamoDB: one re-enrichment task per memory (vectors are not
        stored in DynamoDB, so rebuilding re-embeds). Scans the table: an admin operation."""
        sent = 0
        for memory in self._store.every_memory():
            self._queue.send(EnrichmentTask(tenant=memory.tenant, memory_id=memory.id, version=memory.version, reindex=True))
            sent += 1
        return sent

    def redrive(self, limit: int = 1000) -> RedriveResult:
        """Move DLQ messages back to the queue; their failed memories become pending again."""
        reset = 0

        def back_to_pending(task: EnrichmentTask) -> None:
            nonlocal reset
            memory = self._store.get(task.tenant, task.memory_id)
            if memory is None or memory.version != task.version or memory.enrichment.state != EnrichmentState.FAILED:
                return
            pending = memory.model_copy(
                update={"enrichment": Enrichment(queued_at=self._clock(), error=memory.enrichment.error)}
            )
            try:
                self._store.save(pending, expected_version=memory.version)
                reset += 1
            except ConflictError:
                pass

        moved = self._dead_letters.move_back(limit, back_to_pending)
        return RedriveResult(moved=moved, reset=reset)
