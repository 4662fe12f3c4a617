"""Permanent erasure (GDPR): a memory and everything derived from it, gone, with a receipt of ids and
counts (never the erased text). docs/erasure.md has the whole story.

Order matters. A tombstone first: an enrichment already running for the memory checks it after its
derived writes and undoes them (`EnrichmentService`), so nothing it writes outlives the erasure. Then
derived copies (index, facts and their index documents, graph), the memory item last, so an erasure
that fails halfway can simply be repeated (the memory is still there to find what remains). A queued
enrichment task for an erased memory finds no memory and does nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from mnemo.domain.erasure import ErasureCounts, ErasureReceipt
from mnemo.domain.models import Memory, Principal
from mnemo.domain.timestamps import utcnow
from mnemo.errors import NotFoundError
from mnemo.ports import ErasureMarks, FactIndex, FactStore, GraphStore, MemoryStore, SearchIndex
from mnemo.services.permissions import Operation, authorize

__all__ = ["ErasureCounts", "ErasureReceipt", "ErasureService"]


class ErasureService:
    def __init__(self, store: MemoryStore, graph: GraphStore, facts: FactStore, index: Callable[[], SearchIndex], *,
                 marks: ErasureMarks | None = None, fact_index: Callable[[], FactIndex] | None = None,
                 clock: Callable[[], datetime] = utcnow) -> None:
        self._store = store
        self._graph = graph
        self._facts = facts
        self._index = index
        self._marks = marks
        self._fact_index = fact_index
        self._clock = clock

    def erase_memory(self, principal: Principal, memory_id: str) -> ErasureReceipt:
        authorize(principal, Operation.ERASE)
        started = self._clock()
        memory = self._store.get(principal.tenant, memory_id, salvage=True)  # however malformed, it can be erased
        if memory is None or not principal.sees(memory.user_id):
            raise NotFoundError(f"memory {memory_id} not found", subject="memory", ident=memory_id)
        counts = self.erase(memory)
        return ErasureReceipt(kind="memory", memory_ids=[memory_id], counts=counts, started_at=started,
                              finished_at=self._clock())

    def erase(self, memory: Memory) -> ErasureCounts:
        """Erase a loaded memory (the caller checked it may): tombstone, derived copies, then the item
        collection. Repeatable: a second run deletes whatever the first left."""
        if self._marks is not None:
            self._marks.mark(memory.tenant, memory.id, self._clock())
        counts = self.purge_derived(memory)
        history = self._store.erase(memory.tenant, memory.id)
        return counts.model_copy(update={"memories": 1, "history": history})

    def erase_recorded(self, tenant: str, user_id: str, *, limit: int) -> int:
        """Delete up to `limit` of the user's recorded facts with their facts-index documents; returns
        how many (0: none left). Repeatable: a rerun deletes whatever the last one left."""
        erased = self._facts.erase_recorded(tenant, user_id, limit=limit)
        if self._fact_index is not None:
            for uuid in erased:
                self._fact_index().delete(tenant, uuid)
        return len(erased)

    def erased(self, tenant: str, memory_id: str) -> bool:
        """Whether an erasure of the memory has begun (its tombstone exists)."""
        return self._marks is not None and self._marks.erased(tenant, memory_id)

    def erased_among(self, tenant: str, memory_ids: Sequence[str]) -> set[str]:
        """Which of these memories have an erasure begun: one batch read (the worker's batch)."""
        return self._marks.erased_among(tenant, memory_ids) if self._marks is not None else set()

    def purge_derived(self, memory: Memory, index_ids: Sequence[str] = ()) -> ErasureCounts:
        """Everything derived from the memory, but not the memory's own items: its index documents
        (also the copies `index_ids` names), the facts only it supported with their facts-index
        documents, entity nodes left unused, its entity postings and links in both directions."""
        tenant, now = memory.tenant, self._clock()
        copies = list(dict.fromkeys([*memory.index_ids, *index_ids]))
        self._index().delete(tenant, memory.id, copies)
        supported = [fact.uuid for fact in self._facts.for_memory(tenant, memory.id)]
        facts = self._facts.erase_memory(memory, now)
        if supported and self._fact_index is not None:
            left = {fact.uuid for fact in self._facts.get_many(tenant, supported)}
            for uuid in supported:
                if uuid not in left:  # deleted with the memory: its sentence leaves the facts index too
                    self._fact_index().delete(tenant, uuid)
        links = len(self._graph.links(tenant, memory.id))
        self._graph.clear(memory)
        return ErasureCounts(facts=facts, entities=len(memory.entities), links=links, index_documents=max(1, len(copies)))
