"""Enrichment status of one tenant: what is still queued or running, and what failed; and a retry of
this tenant's failed memories (the dead-letter queue is deployment-wide: its redrive stays the
operator's `mnemo.cli redrive`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime

from pydantic import BaseModel, Field

from mnemo.domain.models import Enrichment, EnrichmentState, Memory, Permission, Principal
from mnemo.domain.timestamps import utcnow
from mnemo.errors import ConflictError
from mnemo.ports import EnrichmentQueue, EnrichmentTask, MemoryStore
from mnemo.services.tenancy.permissions import Operation, authorize

FAILED_PAGE = 50  # failed memories a listing or a retry reads at once (the most recently changed)


class EnrichmentStatus(BaseModel):
    tenant: str
    pending: int = Field(description="Memories queued or being enriched right now.")
    failed: int = Field(description="Memories whose enrichment failed after every retry (see each memory's error).")
    dlq: int = Field(description="Of those, messages parked in the dead-letter queue awaiting redrive.")
    queue: dict[str, int] | None = Field(
        default=None, description="Deployment-wide queue depths (admin keys only: they count every tenant)."
    )


class FailedMemory(BaseModel):
    id: str
    user_id: str
    error: str | None = Field(description="Why enrichment failed after every retry.")
    updated_at: datetime


class Retried(BaseModel):
    retried: int = Field(description="Failed memories set pending and queued again (at most one page).")
    left: int = Field(description="Failed memories of the tenant still failed (ask again for the next page).")


class StatusService:
    def __init__(self, store: MemoryStore, queue: EnrichmentQueue, *, clock: Callable[[], datetime] = utcnow) -> None:
        self._store = store
        self._queue = queue
        self._clock = clock

    def failures(self, principal: Principal, limit: int = FAILED_PAGE) -> list[FailedMemory]:
        """The tenant's failed memories with their reasons, most recently changed first (a user-bound
        key: its user's); needs what reading the status needs."""
        authorize(principal, Operation.STATUS)
        return [FailedMemory(id=m.id, user_id=m.user_id, error=m.enrichment.error, updated_at=m.updated_at)
                for m in self._failed(principal.tenant, limit) if principal.sees(m.user_id)]

    def retry_failed(self, principal: Principal, limit: int = FAILED_PAGE) -> Retried:
        """Set up to `limit` of this tenant's failed memories pending and queue a fresh task for each.
        Each write is conditional on the version read (an edit meanwhile sent its own task); a send
        that fails leaves the memory pending for the reconciler, as after a capture."""
        authorize(principal, Operation.RETRY_ENRICHMENT)
        retried = 0
        for memory in self._failed(principal.tenant, limit):
            pending = memory.model_copy(update={"enrichment": Enrichment(queued_at=self._clock(), error=memory.enrichment.error)})
            with contextlib.suppress(ConflictError):
                self._store.save(pending, expected_version=memory.version)
                self._queue.send(EnrichmentTask(tenant=memory.tenant, memory_id=memory.id, version=memory.version))
                retried += 1
        return Retried(retried=retried, left=self._store.count_by_enrichment(principal.tenant, EnrichmentState.FAILED))

    def _failed(self, tenant: str, limit: int) -> list[Memory]:
        return [m for m in self._store.unindexed(tenant, limit) if m.enrichment.state == EnrichmentState.FAILED]

    def read(self, principal: Principal, *, queue: bool = False) -> EnrichmentStatus:
        """The caller's tenant's status, for every surface (`GET /v1/status`, r3 `sync_status`): needs
        `memory:read` (the table). `queue`: add the queue-wide depths, for an admin key only."""
        authorize(principal, Operation.STATUS)
        return self.for_tenant(principal.tenant, operator=queue and principal.allows(Permission.ADMIN))

    def for_tenant(self, tenant: str, *, operator: bool = False) -> EnrichmentStatus:
        failed = self._store.count_by_enrichment(tenant, EnrichmentState.FAILED)
        # A memory is marked failed exactly when its message exhausts its receives and moves to the
        # DLQ, so the tenant's DLQ share equals its failed count (SQS cannot count per tenant).
        return EnrichmentStatus(
            tenant=tenant,
            pending=self._store.count_by_enrichment(tenant, EnrichmentState.PENDING),
            failed=failed,
            dlq=failed,
            queue=self._queue.depths() if operator else None,
        )
