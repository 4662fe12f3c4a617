"""Import memories from r3 / mem0 JSON or a Mnemo export: idempotent by source id, batched, and
summarised per item (docs/import-export.md).

Accepted shapes: an array of items, or an object holding it under `results` or `memories` (mem0's
export, and Mnemo's own export page, whose `recorded_facts` are imported too). Items are read by
`services/portability/import_items.py`; recorded facts by `services/portability/fact_imports.py`, after the memories.

Ids. An item's source id (`id`) is kept as the memory's id when it is a uuid free in this tenant (no
memory, no erasure tombstone): an export restored into a fresh tenant keeps its ids. Otherwise the
memory gets an id derived from (tenant, user, source id), with the source id in `metadata.source_id`.
Either way the memory records its `source_id`, so a rerun finds each item already there and skips it.
An item without a source id is compared by content with the user's memories when `skip_duplicates`.

Cost per chunk (at most MAX_ITEMS): one consistent BatchGetItem per 100 candidate ids, one per 100
tombstones, one metering read and write for the whole chunk, one bulk index write (lexical
documents: every imported memory is searchable at once, not only the newest few pending ones),
BatchWriteItem for memories and history lines (25 items a call), SendMessageBatch (10 a call).

A concurrent identical import can pass the same existence check before either writes (BatchWriteItem
takes no conditions): both then write the same ids with the same content and both enqueue their
tasks; the memory is stored once and enriched idempotently. Both reports list it as imported.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from mnemo.domain.models import Activity, Memory, Principal, content_hash
from mnemo.errors import DependencyError, RetrievalLimitError, ValidationFailed
from mnemo.ports import EnrichmentQueue, EnrichmentTask, IndexDocument, MemoryStore, SearchIndex
from mnemo.services.erasure.user_fence import Admission, WriteFence
from mnemo.services.memory.duplicates import DuplicateService
from mnemo.services.memory.memories import new_memory
from mnemo.services.portability.fact_imports import FactImports, is_recorded_fact
from mnemo.services.portability.import_items import ImportFailure, ImportReport, PlannedItem, items_of, plan_item
from mnemo.services.tenancy.metering import Meter
from mnemo.services.tenancy.permissions import CHECK_SKIPPED_AT_RETRIEVAL_CAP, Operation, authorize

__all__ = ["MAX_ITEMS", "ImportFailure", "ImportReport", "ImportService", "imported_id", "items_of"]

logger = logging.getLogger(__name__)

IMPORT_UUID_NAMESPACE = uuid.UUID("0d7cbd1e-55f3-4a8b-9c41-7a2e5d7f4b10")
MAX_ITEMS = 500  # per synchronous call: a few dozen batched calls, far inside API Gateway's 29 s


def imported_id(tenant: str, user_id: str, source_id: str) -> str:
    return str(uuid.uuid5(IMPORT_UUID_NAMESPACE, "\x1f".join([tenant, user_id, source_id])))


def _is_uuid(value: str) -> bool:
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False


class ImportService:
    def __init__(
        self, duplicates: DuplicateService, *, store: MemoryStore, queue: EnrichmentQueue,
        index: SearchIndex, erased_among: Callable[[str, Sequence[str]], set[str]], meter: Meter,
        clock: Callable[[], datetime], new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        recorded: FactImports | None = None, fence: WriteFence | None = None,
    ) -> None:
        self._fence = fence  # a user's erasure against imports in flight (services/erasure/user_fence.py)
        self._recorded = recorded  # None: an export's recorded facts are refused, each with the reason
        self._duplicates = duplicates
        self._store = store
        self._queue = queue
        self._index = index
        self._erased_among = erased_among  # erasure tombstones: an erased id is never reused in its tenant
        self._meter = meter
        self._clock = clock
        self._new_id = new_id

    def run(self, principal: Principal, data: Any, *, user_id: str | None, skip_duplicates: bool,
            admission: Admission | None = None) -> ImportReport:
        """Import one chunk (at most MAX_ITEMS items): each item imported, skipped or failed, with why.
        `user_id`: whose memories the items become (None: the key's own user if bound, else "default").
        `admission`: what a job saw of the user's erasure fence when it was requested (a call on its
        own is admitted here); UserErasedError if the user's erasure came first (nothing is left)."""
        authorize(principal, Operation.IMPORT)
        user_id = principal.user_for(user_id)
        items = items_of(data)
        if len(items) > MAX_ITEMS:
            raise ValidationFailed(f"data: must hold at most {MAX_ITEMS} items per call; it holds {len(items)}")
        if self._fence is not None:
            if admission is None:
                admission = self._fence.admit(principal.tenant, user_id)
            else:
                self._fence.check(admission)
        report = ImportReport()
        facts = [(i, item) for i, item in enumerate(items) if is_recorded_fact(item)]
        planned = [p for i, item in enumerate(items)
                   if not is_recorded_fact(item) and (p := plan_item(principal, i, item, user_id, report)) is not None]
        planned = self._assign_ids(principal, user_id, planned, report)
        if skip_duplicates:
            planned = self._without_duplicates(principal, user_id, planned, report)
        self._write(principal, planned, admission)
        report.imported = [p.memory_id for p in sorted(planned, key=lambda p: p.index)]
        if self._recorded is not None:
            self._recorded.run(principal, facts, user_id, report)
            if admission is not None and self._fence is not None and report.facts_imported:  # as `_write` does
                self._fence.settle_facts(admission, report.facts_imported)
        else:
            report.failed += [ImportFailure(index=i, reason="recorded_fact: this deployment cannot import recorded facts")
                              for i, _ in facts]
        return report

    def _assign_ids(self, principal: Principal, user_id: str, planned: list[PlannedItem],
                    report: ImportReport) -> list[PlannedItem]:
        """Give each item its memory id, skipping those a previous run imported (one batch read)."""
        tenant = principal.tenant
        sourced = [p for p in planned if p.source_id is not None]
        derived = {p.index: imported_id(tenant, user_id, p.source_id) for p in sourced if p.source_id}
        own = {p.index: p.source_id for p in sourced if p.source_id and _is_uuid(p.source_id)}
        stored = {m.id: m for m in self._store.get_many(tenant, [*derived.values(), *own.values()], consistent=True)}
        free = {i: s for i, s in own.items() if s not in stored}
        erased = self._erased_among(tenant, list(free.values())) if free else set()
        kept, seen = [], set[str]()
        for p in planned:
            if p.source_id is None:
                kept.append(p.assigned(self._new_id()))
                continue
            earlier = stored.get(own.get(p.index, ""))
            if derived[p.index] in stored or (earlier is not None and earlier.user_id == user_id and earlier.source_id == p.source_id):
                report.skipped.append(ImportFailure(index=p.index, reason=f"already imported (source id {p.source_id})"))
            elif p.source_id in seen:
                report.skipped.append(ImportFailure(index=p.index, reason=f"source id {p.source_id} appears earlier in this import"))
            elif p.index in free and free[p.index] not in erased:
                kept.append(p.assigned(p.source_id))
            else:  # the id is another memory's, or was erased here: a derived id, the source named in metadata
                kept.append(p.assigned(derived[p.index], metadata={**p.command.metadata, "source_id": p.source_id}))
            seen.add(p.source_id)
        return kept

    def _without_duplicates(self, principal: Principal, user_id: str, planned: list[PlannedItem],
                            report: ImportReport) -> list[PlannedItem]:
        """Items without a source id, compared by content with the user's memories (per item) and with
        the items before them in this call, which are not stored yet, so the store cannot say."""
        kept, earlier = [], dict[str, str]()
        checked = {content_hash(p.command.raw) for p in planned if p.source_id is None}
        self._meter.require_room(principal, Operation.CAPTURE, count=len(checked))  # no free checks at the cap
        try:  # one retrieval per distinct text compared (each a similarity search), all or none
            self._meter.charge(principal, Operation.FIND_DUPLICATES, count=len(checked))
        except RetrievalLimitError:  # a read quota never refuses the write: imported unchecked, saying so
            report.duplicate_check = CHECK_SKIPPED_AT_RETRIEVAL_CAP
            return planned
        for p in planned:
            if p.source_id is None:
                key = content_hash(p.command.raw)
                original = earlier.get(key) or self._stored_duplicate(principal, user_id, p.command.raw)
                if original is not None:
                    report.skipped.append(ImportFailure(index=p.index, reason=f"duplicate of {original}"))
                    earlier[key] = original  # the same text again in this call: one check, not one per copy
                    continue
                earlier[key] = p.memory_id
            kept.append(p)
        return kept

    def _stored_duplicate(self, principal: Principal, user_id: str, text: str) -> str | None:
        found = self._duplicates.find(principal, user_id, text, room_checked=True, charged=True)
        return found.memory.id if found is not None else None

    def _write(self, principal: Principal, planned: list[PlannedItem], admission: Admission | None) -> None:
        """Charge the chunk, index it lexically, store it, enqueue its enrichment: all batched. Between
        the store and the queue, the erasure fence: a chunk that lost the race to the user's erasure is
        erased and refused, and nothing of it is enqueued."""
        if not planned:
            return
        self._meter.charge(principal, Operation.CAPTURE, count=len(planned))
        now = self._clock()
        # A microsecond apart, in item order, as if captured one by one: browse order follows the items,
        # and enrichment finds each turn's predecessor (the turn it answers) among the ones before it.
        memories = [new_memory(principal, p.command, p.memory_id, now=now + timedelta(microseconds=n), status=p.status,
                               source_id=p.source_id) for n, p in enumerate(sorted(planned, key=lambda p: p.index))]
        memories = self._index_lexically(memories)
        self._store.put_new_many([(m, Activity(memory_id=m.id, version=1, action="created", actor=principal.key_prefix,
                                               at=m.created_at, detail="imported")) for m in memories])
        if admission is not None and self._fence is not None:
            self._fence.settle(admission, memories)
        tasks = [EnrichmentTask(tenant=m.tenant, memory_id=m.id, version=m.version) for m in memories]
        refused = self._queue.send_many(tasks)
        if refused:  # stored is accepted: the reconciler re-enqueues pending memories whose task was lost
            logger.warning("import enqueue failed; the reconciler will retry", extra={"memories": len(refused)})

    def _index_lexically(self, memories: list[Memory]) -> list[Memory]:
        """Lexical documents (no vector yet) for the whole chunk in one bulk write, so every imported
        memory is found at once; enrichment replaces each with its full document. If the index is
        down the import still stands: search reads the newest pending memories from the store."""
        documents = [IndexDocument(
            tenant=m.tenant, memory_id=m.id, version=m.version, user_id=m.user_id, agent_id=m.agent_id, group_id=m.group_id,
            author=m.author, status=m.status, text=m.normalized_text, captured_at=m.captured_at, created_at=m.created_at,
        ) for m in memories]
        try:
            copies = self._index.upsert(documents)
        except DependencyError:
            logger.warning("import could not index lexically; enrichment will", exc_info=True)
            return memories
        return [m.model_copy(update={"index_ids": copies.get(m.id, [])}) for m in memories]
