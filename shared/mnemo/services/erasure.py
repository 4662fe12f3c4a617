"""Permanent erasure (GDPR): a memory and everything derived from it, gone, with a receipt of ids and
counts (never the erased text).

Order matters: derived copies first (index, facts, graph), the memory item last, so an erasure that
fails halfway can simply be repeated (the memory is still there to find what remains). A queued
enrichment task for an erased memory finds no memory and does nothing (EnrichmentService.prepare).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from mnemo.domain.models import Permission, Principal, utcnow
from mnemo.errors import NotFoundError
from mnemo.ports import FactStore, GraphStore, MemoryStore, SearchIndex
from mnemo.services.memories import require


class ErasureCounts(BaseModel):
    memories: int = 0
    history: int = 0
    facts: int = Field(default=0, description="Derived facts deleted (facts other memories also say only lose this source).")
    entities: int = Field(default=0, description="Entity postings (memory mentions entity) deleted.")
    links: int = Field(default=0, description="Links to or from the memory deleted (each stored at both ends).")
    index_documents: int = Field(default=0, description="Search index copies addressed by the delete.")


class ErasureReceipt(BaseModel):
    """What was erased, as ids and counts only."""

    job_id: str | None = None
    kind: Literal["memory", "user"]
    memory_ids: list[str]
    counts: ErasureCounts
    started_at: datetime
    finished_at: datetime
    status: Literal["completed"] = "completed"


class ErasureService:
    def __init__(self, store: MemoryStore, graph: GraphStore, facts: FactStore, index: Callable[[], SearchIndex], *,
                 clock: Callable[[], datetime] = utcnow) -> None:
        self._store = store
        self._graph = graph
        self._facts = facts
        self._index = index
        self._clock = clock

    def erase_memory(self, principal: Principal, memory_id: str) -> ErasureReceipt:
        require(principal, Permission.DELETE)
        started = self._clock()
        counts = self._erase(principal.tenant, memory_id)
        return ErasureReceipt(kind="memory", memory_ids=[memory_id], counts=counts, started_at=started,
                              finished_at=self._clock())

    def _erase(self, tenant: str, memory_id: str) -> ErasureCounts:
        memory = self._store.get(tenant, memory_id)
        if memory is None:
            raise NotFoundError(f"memory {memory_id} not found")
        self._index().delete(tenant, memory_id, memory.index_ids)
        facts = self._facts.erase_memory(memory, self._clock())
        links = len(self._graph.links(tenant, memory_id))
        self._graph.clear(memory)
        history = self._store.erase(tenant, memory_id)
        return ErasureCounts(memories=1, history=history, facts=facts, entities=len(memory.entities), links=links,
                             index_documents=max(1, len(memory.index_ids)))
