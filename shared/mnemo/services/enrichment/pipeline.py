"""Tier-2 enrichment: extract, embed (batched across the SQS batch), link, index, mark enriched.

At-least-once safe: a task for an outdated version is skipped, derived items have deterministic
keys (a replay rewrites the same items), and the final write is conditional on the revision read.

Explicit stages over each task's outcome (`enrichment_batch.Outcome`: ok, skipped with a reason,
failed with the error, recorded only by `enrichment_batch.failing`); a stage works on the tasks
still ok. `prepare`: load → check and extract → embed. `complete_batch`: sequence → write →
graph → timelines → the erasure-race check → mark enriched.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import cast

from pydantic import ValidationError

from mnemo.domain.extraction import CATEGORIES, Category, Entity, Extraction
from mnemo.domain.graph import Link, canonical_key, entity_key, graph_key
from mnemo.domain.models import Enrichment, EnrichmentState, Memory, Status
from mnemo.domain.text import answers
from mnemo.domain.timestamps import utcnow
from mnemo.errors import ConflictError, MnemoError
from mnemo.ports import (
    Embedder,
    EnrichmentTask,
    Extractor,
    FactStore,
    GraphStore,
    IndexDocument,
    MemoryStore,
    SearchIndex,
)
from mnemo.services.enrichment.batch import Batch, Derived, Failed, Planned, Prepared, Skipped, by_tenant, failing
from mnemo.services.enrichment.facts_stage import EnrichmentFacts, mentions
from mnemo.services.erasure.memories import ErasureService
from mnemo.services.facts.upkeep import FactUpkeep
from mnemo.services.tenancy.metering import Meter

logger = logging.getLogger(__name__)

SEMANTIC_LINKS = 5
SEMANTIC_LINK_MIN_COSINE = 0.5
ENTITY_LINKS = 5
ENTITY_LINK_WEIGHT = 0.4
SEQUENCE_LINK_WEIGHT = 0.6
# The memory captured just before, by the same user, within this window, is its conversational
# context (the question a turn answers, the topic a note continues), unless the two name different
# conversations: a chat import captures one session's first turn seconds after the previous session's
# last, hours apart in said time or not (issue 28, round 10).
SEQUENCE_WINDOW = timedelta(minutes=30)
# Of that memory, only its last words are context: a reply answers the end of what came before (the
# question closing a turn), while the body of a long predecessor is about its own subject and lent its
# words to whatever followed it, crowding a search's first hits with the followers of the real ones
# (issue 28: LongMemEval_S dev turn recall_all@5 0.724 -> 0.829, LoCoMo dev recall@5 0.661 -> 0.659;
# bench/README.md).
PREVIOUS_CONTEXT_WORDS = 6
# Of a message another speaker's reply answers, the last words the local index reads the reply after
# (`IndexDocument.replies_to`): 6 to 16 give LoCoMo dev 0.696-0.701, 10 the most, the whole message
# 0.694 (bench/README.md "Issue 28, round 12").
REPLY_LEAD_WORDS = 10
SAME_MOMENT = timedelta(hours=6)


def previous_words(text: str, count: int = PREVIOUS_CONTEXT_WORDS) -> str:
    """That memory's last `count` words: the context a memory takes from the one captured before it,
    or (`REPLY_LEAD_WORDS`) the lead a reply is read after."""
    return " ".join(text.split()[-count:])


def reading_on_record(memory: Memory) -> Extraction:
    """What the last enrichment stored of its reading: the text, category, entity names, importance.
    A refresh indexes and links from it, so an unrelated erasure never asks the extractor (an LLM)
    for a second, possibly different reading of a memory. A stored name `Entity` refuses is left out."""
    entities: list[Entity] = []
    for name in memory.entities:
        with contextlib.suppress(ValidationError):
            entities.append(Entity(name=name))
    category = memory.category if memory.category in CATEGORIES else "note"
    return Extraction(normalized_text=memory.normalized_text, category=cast(Category, category), entities=entities,
                      importance=0.5 if memory.importance is None else memory.importance)


def date_words(moment: datetime) -> str:
    """`8 May 2023 Monday` — lets a lexical query for a month or weekday find the memory."""
    return f"{moment.day} {moment:%B %Y %A}"


class EnrichmentService:
    def __init__(
        self,
        store: MemoryStore,
        graph: GraphStore,
        index: SearchIndex,
        embedder: Embedder,
        extractor: Extractor,
        *,
        facts: FactStore,
        upkeep: FactUpkeep,
        erasure: ErasureService,
        meter: Meter,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._erasure = erasure
        self._store = store
        self._graph = graph
        self._facts = facts
        self._fact_stage = EnrichmentFacts(facts, upkeep, meter, clock)
        self._index = index
        self._embedder = embedder
        self._extractor = extractor
        self._clock = clock

    # -- prepare: the batch-wide stages ------------------------------------------------------
    def prepare(self, tasks: Sequence[EnrichmentTask]) -> list[Prepared]:
        """Load (one consistent BatchGetItem per tenant), check tombstones (one more), extract and
        embed a whole batch; one embedding call for all live memories."""
        return self._embed([self._check_and_extract(item) for item in self._load(tasks)])

    def _load(self, tasks: Sequence[EnrichmentTask]) -> list[Prepared]:
        """Stage 1: the batch's memories and tombstones, per tenant; an erased memory is skipped.
        Failing fails that tenant's tasks."""
        items = [Prepared(task=t) for t in tasks]
        loaded: dict[int, Prepared] = {}
        for tenant, group in by_tenant(items).items():
            found: dict[str, Memory] = {}
            with failing(group):
                ids = [p.task.memory_id for p in group]
                found = {m.id: m for m in self._store.get_many(tenant, ids, consistent=True)}
                erased = self._erasure.erased_among(tenant, ids)
                for item in group:
                    if item.task.memory_id in erased:
                        item.settle(Skipped("memory erased"))
            loaded.update((id(item), replace(item, memory=found.get(item.task.memory_id))) for item in group)
        return [loaded[id(item)] for item in items]

    def _check_and_extract(self, item: Prepared) -> Prepared:
        """Stage 2: skip a task with nothing to do (gone, stale, already enriched); extract a live
        memory (an archived one has nothing to extract: its derived writes are removed)."""
        if not item.ok:
            return item
        memory, extraction = item.memory, None
        with failing([item]):
            # missing from the batch read, or unreadable: the single read says which (and raises)
            memory = memory if memory is not None else self._store.get(item.task.tenant, item.task.memory_id)
            if memory is None:
                item.settle(Skipped("memory no longer exists"))
            elif memory.version != item.task.version:
                item.settle(Skipped(f"stale task (v{item.task.version}, memory at v{memory.version})"))
            elif memory.enrichment.state == EnrichmentState.ENRICHED and not (item.task.reindex or item.task.refresh):
                item.settle(Skipped("already enriched"))  # redelivery after success
            elif memory.status != Status.ARCHIVED:
                if item.task.refresh and memory.enrichment.state == EnrichmentState.ENRICHED:
                    return replace(item, memory=memory, extraction=reading_on_record(memory), on_record=True)
                extraction = self._extract(memory)  # a refresh of a memory never enriched is a whole enrichment
        return replace(item, memory=memory, extraction=extraction)

    def _embed(self, items: list[Prepared]) -> list[Prepared]:
        """Stage 3: one embedding call for the batch: each memory's text, then its facts (for the
        facts index, keyed by sentence). Failing fails every task it served."""
        live = [p for p in items if p.ok and p.extraction is not None]
        if not live:
            return items
        texts = [p.extraction.normalized_text for p in live if p.extraction]
        facts = [self._fact_stage.embedding_texts(p.extraction) if p.extraction else [] for p in live]
        embedded: dict[int, Prepared] = {}
        with failing(live):
            # keep_states: the index takes each memory's token states from this pass (the local reranker's)
            vectors = self._embedder.embed(texts + [text for mine in facts for _, text in mine], keep_states=True)
            sentences = [(id(item), sentence) for item, mine in zip(live, facts, strict=True) for sentence, _ in mine]
            fact_vectors: dict[int, dict[str, list[float]]] = {}
            for (key, sentence), vector in zip(sentences, vectors[len(live):], strict=True):
                fact_vectors.setdefault(key, {})[sentence] = vector
            for item, vector in zip(live, vectors[: len(live)], strict=True):
                embedded[id(item)] = replace(item, vector=vector, fact_vectors=fact_vectors.get(id(item), {}))
        return [embedded.get(id(item), item) if item.ok else item for item in items]

    def _extract(self, memory: Memory) -> Extraction:
        """The extractor's reading, or (`extract=False`, the writer controls the phrasing) the text
        verbatim: no LLM call, no derived facts, still embedded, indexed and linked."""
        if memory.extract:
            return self._extractor.extract(memory.raw, captured_at=memory.said_at)
        return Extraction(normalized_text=memory.normalized_text)

    # -- complete: the writing stages --------------------------------------------------------
    def complete(self, item: Prepared) -> None:
        """`complete_batch` of one; raises the task's error."""
        self.complete_batch([item])
        if item.error is not None:
            raise item.error

    def complete_batch(self, items: Sequence[Prepared]) -> None:
        """Facts, graph, index and the enriched state for each prepared task; a failure is kept on its
        task (`error`, re-raised by the worker so SQS retries that message alone).

        The graph's writes of the whole batch go out together after every task has planned its own
        (shared BatchWriteItem calls); entity postings are read once per entity and batch. An erasure
        can land while this runs: tombstones were checked in `prepare` (skip), and are checked again
        once, for every task that wrote (`_erasure_race`), also when it failed after writing (undo:
        whatever this enrichment wrote is deleted again), so nothing derived outlives the erasure."""
        batch = Batch()
        for item in items:
            if item.memory is not None and item.extraction is not None and item.extraction.facts:
                batch.mention(graph_key(item.memory.namespace), mentions(item.extraction))
        self._sequence(items, batch)
        planned = [p for p in (self._write(item, batch) for item in items if item.ok) if p is not None]
        self._apply_graph(planned)
        self._reconcile(planned)
        self._erasure_race(items, planned)

    def _sequence(self, items: Sequence[Prepared], batch: Batch) -> None:
        """Stage 4: each live memory's predecessor in capture order, from the store (one read per user
        and batch): the index would miss one a concurrent batch has not indexed yet, and then neither
        memory of the pair would link the other. Failing fails that user's tasks (SQS retries them)."""
        users: dict[tuple[str, str], list[Prepared]] = {}
        for item in items:
            if item.ok and item.memory is not None and item.extraction is not None:
                users.setdefault((item.memory.tenant, item.memory.user_id), []).append(item)
        for (tenant, user_id), group in users.items():
            with failing(group):
                batch.previous.update(self._store.preceding(tenant, user_id, [i.memory for i in group if i.memory]))

    def _write(self, item: Prepared, batch: Batch) -> Planned | None:
        """Stage 5: one task's derived writes; failing fails the task, keeping the entities it named
        for the erasure-race check."""
        memory = item.memory
        assert memory is not None
        named = [e.name for e in item.extraction.entities] if item.extraction else []
        with failing([Planned(item, memory, Derived(None, named, None, []))]):
            return Planned(item, memory, self._write_derived(item, memory, batch))
        return None  # failed: recorded on the task by `failing`

    def _apply_graph(self, planned: list[Planned]) -> None:
        """Stage 6: the graph's writes of the whole batch; failing fails the tasks in it."""
        changed = [p for p in planned if p.item.ok and p.derived.change is not None]
        if changed:
            with failing(changed):
                self._graph.apply([p.derived.change for p in changed if p.derived.change is not None])

    def _reconcile(self, planned: list[Planned]) -> None:
        """Stage 7: the timelines the batch's fact changes touched, recomputed once for the batch;
        failing fails the tasks that touched them (a replay redoes it)."""
        touched = [p for p in planned if p.item.ok and p.derived.groups]
        if touched:
            with failing(touched):
                self._fact_stage.reconcile({group for p in touched for group in p.derived.groups})

    def _erasure_race(self, items: Sequence[Prepared], planned: list[Planned]) -> None:
        """Stage 8, the one check of the erasure race: after the writes, one tombstone read per tenant
        over every task that wrote (also those that failed since) and every neighbour a write named (a
        link's other end, the context). An erased memory's writes are undone; the links and context
        to an erased neighbour go; the rest is marked enriched (an erasure beginning later finds
        those writes and deletes them itself). Failing to read the tombstones fails the tasks still
        ok: unsure whether erased, they retry."""
        wrote = [p for p in planned if p.item.ok] + [
            Planned(item, o.memory, o.wrote) for item in items
            if isinstance(o := item.outcome, Failed) and o.memory is not None and o.wrote is not None]
        tenants: dict[str, list[Planned]] = {}
        for p in wrote:
            tenants.setdefault(p.memory.tenant, []).append(p)
        for tenant, group in tenants.items():
            ids = [p.memory.id for p in group] + [n for p in group if p.item.ok for n in p.derived.neighbours]
            erased: set[str] | None = None
            with failing([p.item for p in group]):
                erased = self._erasure.erased_among(tenant, list(dict.fromkeys(ids)))
            if erased is None:
                continue
            for p in group:
                with failing([p.item]):
                    if p.memory.id in erased:
                        self._purge(p.memory, p.derived)
                    elif p.item.ok:
                        gone = [n for n in p.derived.neighbours if n in erased]
                        self._mark_enriched(p.memory, self._forget(p.memory, p.derived, gone) if gone else p.derived)

    def _purge(self, memory: Memory, derived: Derived) -> None:
        """The memory was erased while this enrichment wrote: delete what it wrote (the erasure's own
        purge, over the entities this enrichment named too, and the facts it derived)."""
        named = list(dict.fromkeys([*memory.entities, *derived.entities]))
        self._erasure.purge_derived(memory.model_copy(update={"entities": named}), derived.index_ids, derived.facts)
        logger.info("memory erased during enrichment; its derived writes were undone", extra={"memory_id": memory.id})

    def record_failure(self, task: EnrichmentTask, error: Exception, *, final: bool) -> None:
        """Make a failure visible on the memory: `failed` with the reason once retries are exhausted."""
        memory = self._store.get(task.tenant, task.memory_id)
        if memory is None or memory.version != task.version or memory.enrichment.state == EnrichmentState.ENRICHED:
            return
        reason = error.message if isinstance(error, MnemoError) else f"{type(error).__name__}: {error}"[:500]
        state = EnrichmentState.FAILED if final else EnrichmentState.PENDING
        attempts = memory.enrichment.attempts + 1
        updated = memory.model_copy(update={"enrichment": Enrichment(state=state, error=reason, attempts=attempts)})
        with contextlib.suppress(ConflictError):
            self._store.save(updated, expected_version=memory.version)

    # -- one task's derived writes -----------------------------------------------------------
    def _write_derived(self, item: Prepared, memory: Memory, batch: Batch) -> Derived:
        """The derived writes (facts, index) and the graph's planned change; `_mark_enriched` records them."""
        if memory.status == Status.ARCHIVED:  # archived: out of the index and the graph
            self._index.delete(memory.tenant, memory.id, memory.index_ids)
            groups = self._fact_stage.replace(memory, [])  # its facts lose this source
            self._graph.clear(memory)
            return Derived(memory.category, memory.entities, memory.importance, [], groups=groups)
        extraction, vector = item.extraction, item.vector
        assert extraction is not None and vector is not None
        entities = [e.name for e in extraction.entities]
        previous = self._previous(memory, batch)
        links = self._links(memory, entities, vector, previous, batch)
        facts, groups = [], set()  # a refresh keeps the facts on record (what an erasure took is gone from them)
        if not item.on_record:
            facts = self._fact_stage.derive(memory, extraction, batch)
            groups = self._fact_stage.replace(memory, facts, item.fact_vectors)
        kept = {canonical_key(e) for e in entities}  # names the older version said and this one does not: recorded
        dropped = [name for name in memory.entities if canonical_key(name) not in kept]  # (its erasure finds their nodes)
        change = self._graph.plan(memory, entities, links, dropped)
        all_links = {link.other_id: link.weight for link in batch.with_incoming(memory, change.links)}
        context = " ".join(filter(None, [previous_words(previous.normalized_text) if previous else "",
                                         date_words(memory.said_at)]))
        replies_to = previous_words(previous.normalized_text, REPLY_LEAD_WORDS) if previous and answers(
            previous.normalized_text, extraction.normalized_text) else ""
        document = self._document(memory, extraction, entities, vector, context, all_links, replies_to)
        index_ids = self._index.upsert([document])
        batch.planned(memory, entities, links)
        return Derived(extraction.category, entities, extraction.importance, index_ids.get(memory.id, []), change, groups,
                       document=document, previous_id=previous.id if previous else None, facts=[f.uuid for f in facts])

    def _forget(self, memory: Memory, derived: Derived, gone: list[str]) -> Derived:
        """Neighbours erased while this enrichment wrote about them (checked after its writes, so an
        erasure that began later finds those writes and deletes them itself): the links to them go,
        both stored ends, and the document is indexed again without their ids and text."""
        self._graph.unlink(memory.tenant, memory.id, gone)
        document = derived.document
        if document is None:
            return derived
        previous_kept = derived.previous_id not in gone  # else its words leave the context and replies_to
        context = document.context if previous_kept else date_words(memory.said_at)
        rebuilt = document.model_copy(update={
            "links": {k: v for k, v in document.links.items() if k not in gone}, "context": context,
            "replies_to": document.replies_to if previous_kept else "",
            "index_ids": [*document.index_ids, *derived.index_ids]})  # the copy just written goes too
        index_ids = self._index.upsert([rebuilt]).get(memory.id, derived.index_ids)
        logger.info("neighbour erased during enrichment; links and context to it were undone", extra={"memory_id": memory.id})
        return replace(derived, index_ids=index_ids, document=rebuilt)

    def _previous(self, memory: Memory, batch: Batch) -> Memory | None:
        """The memory captured just before this one by the same user, if close enough in time and said
        in the same conversation (neither naming one counts as the same)."""
        previous = batch.previous.get(memory.id)
        if previous is None:
            return None
        close = memory.created_at - previous.created_at <= SEQUENCE_WINDOW
        same_moment = abs(memory.captured_at - previous.captured_at) <= SAME_MOMENT
        same_conversation = memory.conversation_id == previous.conversation_id
        return previous if close and same_moment and same_conversation else None

    def _links(self, memory: Memory, entities: list[str], vector: list[float], previous: Memory | None,
               batch: Batch) -> list[Link]:
        weights: dict[str, tuple[float, str]] = {}

        def offer(other: str, weight: float, reason: str) -> None:
            if other != memory.id and weight > weights.get(other, (0.0, ""))[0]:
                weights[other] = (round(weight, 4), reason)

        for hit in self._index.similar(memory.tenant, memory.user_id, vector, SEMANTIC_LINKS, exclude=memory.id):
            if hit.score >= SEMANTIC_LINK_MIN_COSINE:
                offer(hit.memory_id, hit.score, "semantic")
        if entities:
            for other in self._entity_neighbours(memory, entities, batch):
                offer(other, ENTITY_LINK_WEIGHT, "entity")
        if previous is not None:
            offer(previous.id, SEQUENCE_LINK_WEIGHT, "sequence")
        return [Link(memory_id=memory.id, other_id=o, weight=w, reason=r) for o, (w, r) in weights.items()]

    def _entity_neighbours(self, memory: Memory, entities: list[str], batch: Batch) -> list[str]:
        """Memories naming any of `entities`: each entity's postings read once per batch, plus the
        batch's earlier memories naming it (their postings are written with the batch's graph writes)."""
        found: list[str] = []
        for name in list(dict.fromkeys(entity_key(e) for e in entities))[:10]:
            key = (memory.tenant, memory.user_id, name)
            if key not in batch.postings:
                batch.postings[key] = self._graph.entity_neighbours(memory.tenant, memory.user_id, [name], ENTITY_LINKS + 1)
            found += batch.postings[key] + batch.peers.get(key, [])
        return list(dict.fromkeys(found))

    def _mark_enriched(self, memory: Memory, derived: Derived) -> None:
        enriched = memory.model_copy(
            update={
                "index_ids": derived.index_ids,
                "category": derived.category,
                "entities": derived.entities,
                "importance": derived.importance,
                "enrichment": Enrichment(
                    state=EnrichmentState.ENRICHED, attempts=memory.enrichment.attempts + 1,
                    model_id=self._embedder.model_id,
                ),
            }
        )
        try:
            self._store.save(enriched, expected_version=memory.version)
        except ConflictError:
            logger.info("memory changed during enrichment; the newer version has its own task", extra={"memory_id": memory.id})

    def _document(
        self, memory: Memory, extraction: Extraction, entities: list[str], vector: list[float], context: str,
        links: dict[str, float], replies_to: str,
    ) -> IndexDocument:
        return IndexDocument(
            tenant=memory.tenant,
            memory_id=memory.id,
            version=memory.version,
            user_id=memory.user_id,
            agent_id=memory.agent_id,
            group_id=memory.group_id,
            author=memory.author,
            status=memory.status,
            text=extraction.normalized_text,
            context=context,
            replies_to=replies_to,
            category=extraction.category,
            entities=entities,
            captured_at=memory.captured_at,
            created_at=memory.created_at,
            importance=extraction.importance,
            vector=vector,
            embedding_model=self._embedder.model_id,
            links=links,
            index_ids=memory.index_ids,
        )
