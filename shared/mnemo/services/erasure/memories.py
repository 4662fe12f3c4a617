"""Permanent erasure (GDPR): a memory and everything derived from it, gone, with a receipt of ids and
counts (never the erased text). docs/erasure.md has the whole story.

Order matters. A tombstone first: an enrichment already running for the memory checks it after its
derived writes and undoes them (`EnrichmentService`), so nothing it writes outlives the erasure. Then
derived copies (index, facts and their index documents, graph), the memory item last, so an erasure
that fails halfway can simply be repeated (the memory is still there to find what remains). A queued
enrichment task for an erased memory finds no memory and does nothing. After the tombstone, too, the
repeats deduplication archived as `duplicate_of` this memory (its `DUP#` pointers, which no archive can
add once the tombstone exists) lose that reference, so none names the erased id; and a repeat being
erased has its pointer deleted from each memory it was archived as a duplicate of (read from its history).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial

from mnemo.domain.erasure import ErasureCounts, ErasureReceipt
from mnemo.domain.models import Activity, Enrichment, Memory, Principal
from mnemo.domain.timestamps import utcnow
from mnemo.errors import MnemoError, NotFoundError, UnreadableError, retry_on_conflict
from mnemo.ports import (
    EnrichmentQueue,
    EnrichmentTask,
    ErasureMarks,
    FactErasure,
    FactIndex,
    GraphStore,
    MemoryStore,
    SearchIndex,
)
from mnemo.services.facts.upkeep import FactUpkeep
from mnemo.services.tenancy.permissions import Operation, authorize

__all__ = ["ErasureCounts", "ErasureReceipt", "ErasureService"]

logger = logging.getLogger(__name__)
RELEASED = "duplicate_of removed: the kept memory was erased"  # the repeat's history line: no id, no text
ERASED_ORIGINAL = "duplicate of an erased memory"  # what its archive line says instead of the erased id


class ErasureService:
    def __init__(self, store: MemoryStore, graph: GraphStore, facts: FactErasure, index: SearchIndex, *,
                 marks: ErasureMarks | None = None, fact_index: FactIndex | None = None,
                 upkeep: FactUpkeep | None = None, queue: EnrichmentQueue | None = None,
                 clock: Callable[[], datetime] = utcnow) -> None:
        self._upkeep = upkeep
        self._queue = queue
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
        self._release_repeats(memory)
        self._forget_as_repeat(memory)
        neighbours = [link.other_id for link in self._graph.links(memory.tenant, memory.id)]
        counts = self.purge_derived(memory)
        history = self._store.erase(memory.tenant, memory.id)
        self._refresh(memory.tenant, neighbours)
        return counts.model_copy(update={"memories": 1, "history": history})

    def _release_repeats(self, memory: Memory) -> None:
        """Each repeat archived as `duplicate_of` this memory that still names it: `duplicate_of` removed
        in a versioned edit conditional on the version read (a conflict re-reads), its history saying so
        without any id; its archive line's "duplicate of <id>" becomes "duplicate of an erased memory".
        A repeat reopened, edited elsewhere or erased meanwhile keeps what it has (the id is only scrubbed)."""
        for repeat_id in self._store.repeats_of(memory.tenant, memory.id):
            try:
                retry_on_conflict(partial(self._release, memory.tenant, repeat_id, memory.id))
            except UnreadableError:  # an item that no longer decodes cannot be edited: logged, the erasure goes on
                logger.warning("could not remove duplicate_of from an unreadable repeat", extra={"memory_id": repeat_id})
            self._store.scrub_history(memory.tenant, repeat_id, f"duplicate of {memory.id}", ERASED_ORIGINAL)

    def _forget_as_repeat(self, memory: Memory) -> None:
        """The pointers naming this memory in the collections of the memories it was archived as a
        duplicate of: its metadata's `duplicate_of` and every archive line of its history (the metadata
        may have been edited since)."""
        kept = {memory.metadata.get("duplicate_of")} | {
            line.detail.removeprefix("duplicate of ") for line in self._store.history(memory.tenant, memory.id)
            if line.action == "archived" and line.detail.startswith("duplicate of ")}
        for kept_id in sorted(k for k in kept if isinstance(k, str) and k and " " not in k):
            self._store.forget_repeat(memory.tenant, kept_id, memory.id)

    def _release(self, tenant: str, repeat_id: str, kept_id: str) -> None:
        repeat = self._store.get(tenant, repeat_id)
        if repeat is None or repeat.metadata.get("duplicate_of") != kept_id:
            return
        now = self._clock()
        updated = repeat.model_copy(update={
            "metadata": {k: v for k, v in repeat.metadata.items() if k != "duplicate_of"},
            "version": repeat.version + 1, "updated_at": now, "enrichment": Enrichment(queued_at=now)})
        self._store.save(updated, expected_version=repeat.version, activity=Activity(
            memory_id=repeat_id, version=updated.version, action="edited", actor="erasure", at=now, detail=RELEASED))
        if self._queue is not None:  # the new version's task (an archived memory's derives nothing); a lost one the reconciler resends
            try:
                self._queue.send_many([EnrichmentTask(tenant=tenant, memory_id=repeat_id, version=updated.version)])
            except MnemoError:
                logger.warning("could not queue a released repeat's task; the reconciler will", extra={"memory_id": repeat_id})

    def _refresh(self, tenant: str, neighbours: Sequence[str]) -> None:
        """The linked memories' index documents name the erased one (links) and may hold its text (the
        context of the memory captured after it): each is refreshed, once the memory is gone, into a
        document without them: re-linked and re-indexed from its reading on record, with no extractor
        call and its facts untouched (`EnrichmentTask.refresh`). A task the queue refuses is left to the
        reconciler, as after a capture."""
        if self._queue is None or not neighbours:
            return
        try:
            found = self._store.get_many(tenant, list(dict.fromkeys(neighbours)), consistent=True)
            self._queue.send_many([EnrichmentTask(tenant=tenant, memory_id=m.id, version=m.version, refresh=True)
                                   for m in found])
        except MnemoError:  # the erasure itself is done and cannot be repeated: say so, do not fail it
            logger.warning("could not queue the re-enrichment of an erased memory's neighbours",
                           extra={"neighbours": len(neighbours)})

    def erase_recorded(self, tenant: str, user_id: str, *, limit: int) -> int:
        """Delete up to `limit` of the user's recorded facts with their facts-index documents; returns
        how many (0: none left). Repeatable: a rerun deletes whatever the last one left."""
        erased = self._facts.erase_recorded(tenant, user_id, limit=limit)
        if self._fact_index is not None:
            for uuid in erased:
                self._fact_index.delete(tenant, uuid)
        return len(erased)

    def erase_recorded_facts(self, tenant: str, user_id: str, fact_uuids: Sequence[str]) -> int:
        """Delete these recorded facts of the user (a write that lost its race with the user's erasure,
        services/erasure/user_fence.py) with their facts-index documents; returns how many."""
        erased = self._facts.erase_recorded_facts(tenant, user_id, fact_uuids)
        if self._fact_index is not None:
            for uuid in erased:
                self._fact_index.delete(tenant, uuid)
        return len(erased)

    def erased(self, tenant: str, memory_id: str) -> bool:
        """Whether an erasure of the memory has begun (its tombstone exists)."""
        return self._marks is not None and self._marks.erased(tenant, memory_id)

    def erased_among(self, tenant: str, memory_ids: Sequence[str]) -> set[str]:
        """Which of these memories have an erasure begun: one batch read (the worker's batch)."""
        return self._marks.erased_among(tenant, memory_ids) if self._marks is not None else set()

    def purge_derived(self, memory: Memory, index_ids: Sequence[str] = (), derived: Sequence[str] = ()) -> ErasureCounts:
        """Everything derived from the memory, but not the memory's own items: its index documents
        (also the copies `index_ids` names), every fact it ever produced that no other memory did,
        with its facts-index document (the timelines they were on recomputed, then nothing names
        them), entity nodes left unused, its entity postings and links in both directions. `derived`: fact uuids
        an enrichment racing the erasure derived, whose records the erasure may have deleted already."""
        tenant, now = memory.tenant, self._clock()
        copies = list(dict.fromkeys([*memory.index_ids, *index_ids]))
        self._index.delete(tenant, memory.id, copies)
        facts = self._facts.erase_memory(memory, now, also=derived)
        if self._fact_index is not None:
            for fact in facts.erased:  # its sentence leaves the facts index too
                self._fact_index.delete(tenant, fact.uuid)
        if facts.erased or facts.kept:
            if self._upkeep is not None:  # a value an erased fact had retired comes back, as after a retract
                self._upkeep.reconcile(self._upkeep.groups([*facts.erased, *facts.kept]), actor="erasure", at=now)
            self._facts.forget(tenant, facts.erased)  # then nothing names the erased uuids
        links = len(self._graph.links(tenant, memory.id))
        self._graph.clear(memory)
        return ErasureCounts(facts=len(facts.erased), entities=len(memory.entities), links=links, index_documents=max(1, len(copies)))
