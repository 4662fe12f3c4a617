"""Recovery: nothing accepted is lost. Re-enqueue memories whose task went missing; redrive the DLQ."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import suppress
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from pydantic import BaseModel

from mnemo.domain.graph import Fact, FactOrigin, FactStatus
from mnemo.domain.models import Enrichment, EnrichmentState
from mnemo.domain.timestamps import utcnow
from mnemo.errors import ConflictError
from mnemo.ports import DeadLetters, EnrichmentQueue, EnrichmentTask, FactBackfill, JobStore, MemoryStore

if TYPE_CHECKING:
    from mnemo.services.facts.upkeep import FactUpkeep

logger = logging.getLogger(__name__)

# A task normally starts within seconds; one queued longer ago and never attempted was most likely
# lost (a crash between the DynamoDB write and the SQS send). A false positive costs one duplicate
# task, which the worker skips as "already enriched".
DEFAULT_GRACE = timedelta(minutes=15)
FACT_BATCH = 100  # facts per embedding call and `_bulk` in a facts reindex


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
        facts: FactBackfill | None = None,
        upkeep: FactUpkeep | None = None,
        clock: Callable[[], datetime] = utcnow,
        jobs: JobStore | None = None,
    ) -> None:
        self._jobs = jobs
        self._facts = facts
        self._upkeep = upkeep
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

    def list_jobs(self) -> int:
        """Write the user listing of every import, mem0 and deduplication job: the backfill for jobs
        created before a user's erasure could list them (docs/erasure.md, "Jobs of the user"). Scans
        the table: an admin operation. Idempotent."""
        return self._jobs.list_every_job() if self._jobs is not None else 0

    def reindex_facts(self, batch: int = FACT_BATCH) -> int:
        """Index every fact that a search can return (active, or invalidated for `as_of`), recorded and
        derived alike, from DynamoDB, `batch` at a time (one embedding call and one `_bulk` each).
        Retracted facts are left out: no search returns them. Scans the table: an admin operation.
        Idempotent: each adapter replaces a fact's earlier copies, so it can run over a full index.
        Also writes every recorded fact's user listing (any status), and every derived fact's record
        under each memory that produced it: the backfills for facts written before export and erasure
        could find them that way (docs/table-design.md)."""
        if self._facts is None or self._upkeep is None:
            return 0
        indexed = 0
        pending: list[Fact] = []
        recorded: list[Fact] = []
        derived: list[Fact] = []
        for fact in self._facts.every_fact():
            if fact.status != FactStatus.RETRACTED:
                pending.append(fact)
            (recorded if fact.origin == FactOrigin.RECORDED else derived).append(fact)
            if len(pending) == batch:
                self._upkeep.index(pending)
                indexed += len(pending)
                pending = []
            if len(recorded) == batch:  # the user listing of facts recorded before it existed (idempotent)
                self._facts.list_recorded(recorded)
                recorded = []
            if len(derived) == batch:  # which memories produced it, for their erasure (idempotent)
                self._facts.record_producers(derived)
                derived = []
        self._upkeep.index(pending)
        self._facts.list_recorded(recorded)
        self._facts.record_producers(derived)
        return indexed + len(pending)

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
