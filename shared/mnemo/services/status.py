"""Enrichment status of one tenant: what is still queued or running, and what failed."""

from __future__ import annotations

from pydantic import BaseModel, Field

from mnemo.domain.models import EnrichmentState, Permission, Principal
from mnemo.ports import EnrichmentQueue, MemoryStore
from mnemo.services.permissions import Operation, authorize


class EnrichmentStatus(BaseModel):
    tenant: str
    pending: int = Field(description="Memories queued or being enriched right now.")
    failed: int = Field(description="Memories whose enrichment failed after every retry (see each memory's error).")
    dlq: int = Field(description="Of those, messages parked in the dead-letter queue awaiting redrive.")
    queue: dict[str, int] | None = Field(
        default=None, description="Deployment-wide queue depths (admin keys only: they count every tenant)."
    )


class StatusService:
    def __init__(self, store: MemoryStore, queue: EnrichmentQueue) -> None:
        self._store = store
        self._queue = queue

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
