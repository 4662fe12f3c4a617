"""Tier-2 enrichment: extract, embed (batched across the SQS batch), link, index, mark enriched.

At-least-once safe: a task for an outdated version is skipped, derived items have deterministic
keys (a replay rewrites the same items), and the final write is conditional on the revision read.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from mnemo.domain.extraction import Extraction
from mnemo.domain.extraction import Fact as ExtractedFact
from mnemo.domain.graph import EntityMention, Fact, Link, canonical_key, derived_fact, graph_key
from mnemo.domain.intents import is_annotated
from mnemo.domain.models import Enrichment, EnrichmentState, Memory, Status
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
from mnemo.services.enrichment_batch import Batch, Derived, by_tenant, entity_key
from mnemo.services.erasure import ErasureService
from mnemo.services.fact_upkeep import FactUpkeep, Group
from mnemo.services.intents import annotate_edge
from mnemo.services.metering import Meter

logger = logging.getLogger(__name__)

SEMANTIC_LINKS = 5
SEMANTIC_LINK_MIN_COSINE = 0.5
ENTITY_LINKS = 5
ENTITY_LINK_WEIGHT = 0.4
SEQUENCE_LINK_WEIGHT = 0.6
# The memory captured just before, by the same user, within this window, is its conversational
# context (the question a turn answers, the topic a note continues).
SEQUENCE_WINDOW = timedelta(minutes=30)
# Of that memory, only its last words are context: a reply answers the end of what came before (the
# question closing a turn), while the body of a long predecessor is about its own subject and lent its
# words to whatever followed it, crowding a search's first hits with the followers of the real ones
# (issue 28: LongMemEval_S dev turn recall_all@5 0.724 -> 0.829, LoCoMo dev recall@5 0.661 -> 0.659;
# bench/README.md).
PREVIOUS_CONTEXT_WORDS = 6
SAME_MOMENT = timedelta(hours=6)


@dataclass
class Prepared:
    """One task after the batch-wide steps; `error` is set when those failed for this task."""

    task: EnrichmentTask
    memory: Memory | None = None
    extraction: Extraction | None = None
    vector: list[float] | None = None
    fact_vectors: dict[str, list[float]] = field(default_factory=dict)  # fact sentence -> its embedding
    error: Exception | None = None
    skip_reason: str | None = None


MAX_ALIASES = 10  # per entity and memory: an extractor's aliases become keys of the name table
MAX_ALIAS_CHARS = 200


def mentions(extraction: Extraction) -> dict[str, EntityMention]:
    """The entities an extraction's facts need, by canonical name: its entities (with their
    aliases), then each fact's subject and object."""
    found: dict[str, EntityMention] = {}
    for entity in extraction.entities:
        found.setdefault(canonical_key(entity.name), EntityMention(
            name=entity.name, type=entity.kind,
            aliases=[a for a in entity.aliases if a.strip() and len(a) <= MAX_ALIAS_CHARS][:MAX_ALIASES]))
    for name in (n for f in extraction.facts for n in (f.subject, f.object)):
        found.setdefault(canonical_key(name), EntityMention(name=name))
    return found


def fact_text(fact: ExtractedFact) -> str:
    """A derived fact's sentence: the memory's own words for the triple ("not" before a negation's predicate)."""
    return f"{fact.subject} {'not ' if fact.polarity == 'negative' else ''}{fact.predicate} {fact.object}"


def previous_words(text: str) -> str:
    """The context a memory takes from the one captured before it: that memory's last words."""
    return " ".join(text.split()[-PREVIOUS_CONTEXT_WORDS:])


def date_words(moment: datetime) -> str:
    """`8 May 2023 Monday` — lets a lexical query for a month or weekday find the memory."""
    return f"{moment.day} {moment:%B %Y %A}"


class EnrichmentService:
    def __init__(
        self,
        store: MemoryStore,
        graph: GraphStore,
        index: Callable[[], SearchIndex],
        embedder: Embedder,
        extractor: Extractor,
        *,
        facts: FactStore,
        upkeep: FactUpkeep | None = None,
        erasure: ErasureService | None = None,
        clock: Callable[[], datetime] = utcnow,
        meter: Meter | None = None,
    ) -> None:
        self._meter = meter or Meter()  # counts the intents credits of annotated edges
        self._upkeep = upkeep
        self._erasure = erasure
        self._store = store
        self._graph = graph
        self._facts = facts
        self._index = index
        self._embedder = embedder
        self._extractor = extractor
        self._clock = clock

    def prepare(self, tasks: Sequence[EnrichmentTask]) -> list[Prepared]:
        """Load (one consistent BatchGetItem per tenant), check tombstones (one more), extract and
        embed a whole batch; one embedding call for all live memories."""
        prepared = [Prepared(task=t) for t in tasks]
        for tenant, items in by_tenant(prepared).items():
            try:
                ids = [p.task.memory_id for p in items]
                found = {m.id: m for m in self._store.get_many(tenant, ids, consistent=True)}
                erased = self._erasure.erased_among(tenant, ids) if self._erasure is not None else set()
            except Exception as exc:  # noqa: BLE001 - the batch read failing fails its tasks
                for item in items:
                    item.error = exc
                continue
            for item in items:
                item.memory = found.get(item.task.memory_id)
                if item.task.memory_id in erased:
                    item.skip_reason = "memory erased"
        for item in prepared:
            if item.error is not None or item.skip_reason is not None:
                continue
            try:
                if item.memory is None:  # missing, or unreadable: the single read says which (and raises)
                    item.memory = self._store.get(item.task.tenant, item.task.memory_id)
                if item.memory is None:
                    item.skip_reason = "memory no longer exists"
                elif item.memory.version != item.task.version:
                    item.skip_reason = f"stale task (v{item.task.version}, memory at v{item.memory.version})"
                elif item.memory.enrichment.state == EnrichmentState.ENRICHED and not item.task.reindex:
                    item.skip_reason = "already enriched"  # redelivery after success
                elif item.memory.status != Status.ARCHIVED:
                    item.extraction = self._extract(item.memory)
            except Exception as exc:  # noqa: BLE001 - kept per task, re-raised by complete()
                item.error = exc
        live = [p for p in prepared if p.extraction is not None]
        if live:
            # One embedding call for the batch: each memory's text, then its facts (sentence and
            # canonical form, FactUpkeep.embedding_text) for the facts index, keyed by sentence.
            texts = [p.extraction.normalized_text for p in live]  # type: ignore[union-attr]
            sentences = [(p, fact_text(f)) for p in live for f in p.extraction.facts] if self._upkeep else []  # type: ignore[union-attr]
            fact_texts = [self._upkeep.embedding_text(fact_text(f), f.subject, f.predicate, f.object)
                          for p in live for f in p.extraction.facts] if self._upkeep else []  # type: ignore[union-attr]
            try:
                vectors = self._embedder.embed(texts + fact_texts)
                for item, vector in zip(live, vectors[: len(live)], strict=True):
                    item.vector = vector
                for (item, sentence), vector in zip(sentences, vectors[len(live):], strict=True):
                    item.fact_vectors[sentence] = vector
            except Exception as exc:  # noqa: BLE001 - the embedder failing fails every live task
                for item in live:
                    item.error = exc
        return prepared

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
        for the batch after the derived writes, also when they fail (undo: whatever this enrichment
        wrote is deleted again), so nothing derived outlives the erasure."""
        batch = Batch()
        for item in items:
            if item.memory is not None and item.extraction is not None and item.extraction.facts:
                batch.mention(graph_key(item.memory.namespace), mentions(item.extraction))
        self._sequence(items, batch)
        planned: list[tuple[Prepared, Memory, Derived]] = []
        for item in items:
            if item.error is not None:
                continue
            if item.skip_reason is not None:
                logger.info("enrichment skipped", extra={"memory_id": item.task.memory_id, "reason": item.skip_reason})
                continue
            memory = item.memory
            assert memory is not None
            try:
                planned.append((item, memory, self._write_derived(item, memory, batch)))
            except Exception as exc:  # noqa: BLE001 - kept per task
                item.error = exc
                mentioned = [e.name for e in item.extraction.entities] if item.extraction else []
                self._undo_failed(item, memory, mentioned)
        changes = [derived.change for _, _, derived in planned if derived.change is not None]
        if changes:
            try:
                self._graph.apply(changes)
            except Exception as exc:  # noqa: BLE001 - the shared write failing fails the tasks in it
                for item, memory, derived in [p for p in planned if p[2].change is not None]:
                    item.error = exc
                    self._undo_failed(item, memory, derived.entities, derived.index_ids)
                planned = [p for p in planned if p[2].change is None]
        planned = self._reconcile(planned)
        for tenant, group in by_tenant([item for item, _, _ in planned]).items():
            mine = [p for p in planned if p[0].task.tenant == tenant]
            # the batch's memories, and every neighbour a write named (a link's other end, the context)
            ids = [i.task.memory_id for i in group] + [n for _, _, derived in mine for n in derived.neighbours]
            try:
                erased = self._erasure.erased_among(tenant, list(dict.fromkeys(ids))) if self._erasure else set()
            except Exception as exc:  # noqa: BLE001 - unsure whether erased: retry the tasks
                for item in group:
                    item.error = exc
                continue
            for item, memory, derived in mine:
                if item.error is not None:
                    continue
                if memory.id in erased:
                    self._purge(memory, derived.entities, derived.index_ids, derived.facts)
                    continue
                try:
                    gone = [n for n in derived.neighbours if n in erased]
                    self._mark_enriched(memory, self._forget(memory, derived, gone) if gone else derived)
                except Exception as exc:  # noqa: BLE001 - kept per task
                    item.error = exc

    def _write_derived(self, item: Prepared, memory: Memory, batch: Batch) -> Derived:
        """The derived writes (facts, index) and the graph's planned change; `_mark_enriched` records them."""
        if memory.status == Status.ARCHIVED:  # archived: out of the index and the graph
            self._index().delete(memory.tenant, memory.id, memory.index_ids)
            groups = self._replace_facts(memory, [])  # its facts lose this source
            self._graph.clear(memory)
            return Derived(memory.category, memory.entities, memory.importance, [], groups=groups)
        extraction, vector = item.extraction, item.vector
        assert extraction is not None and vector is not None
        entities = [e.name for e in extraction.entities]
        previous = self._previous(memory, batch)
        links = self._links(memory, entities, vector, previous, batch)
        facts = self._derive_facts(memory, extraction, batch)
        kept = {canonical_key(e) for e in entities}  # names the older version said and this one does not: recorded
        dropped = [name for name in memory.entities if canonical_key(name) not in kept]  # (its erasure finds their nodes)
        groups = self._replace_facts(memory, facts, item.fact_vectors)
        change = self._graph.plan(memory, entities, links, dropped)
        all_links = {link.other_id: link.weight for link in batch.with_incoming(memory, change.links)}
        context = " ".join(filter(None, [previous_words(previous.normalized_text) if previous else "",
                                         date_words(memory.captured_at)]))
        document = self._document(memory, extraction, entities, vector, context, all_links)
        index_ids = self._index().upsert([document])
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
        context = date_words(memory.captured_at) if derived.previous_id in gone else document.context
        rebuilt = document.model_copy(update={
            "links": {k: v for k, v in document.links.items() if k not in gone}, "context": context,
            "index_ids": [*document.index_ids, *derived.index_ids]})  # the copy just written goes too
        index_ids = self._index().upsert([rebuilt]).get(memory.id, derived.index_ids)
        logger.info("neighbour erased during enrichment; links and context to it were undone", extra={"memory_id": memory.id})
        return replace(derived, index_ids=index_ids, document=rebuilt)

    def _reconcile(self, planned: list[tuple[Prepared, Memory, Derived]]) -> list[tuple[Prepared, Memory, Derived]]:
        """The timelines the batch's fact changes touched, recomputed once for the batch (a group two
        memories share is read once); failing fails the tasks that touched them (a replay redoes it)."""
        groups = {group for _, _, derived in planned for group in derived.groups}
        if self._upkeep is None or not groups:
            return planned
        try:
            self._upkeep.reconcile(groups, actor="enrichment", at=self._clock())
        except Exception as exc:  # noqa: BLE001 - kept per task
            for item, memory, derived in [p for p in planned if p[2].groups]:
                item.error = exc
                self._undo_failed(item, memory, derived.entities, derived.index_ids)
            return [p for p in planned if not p[2].groups]
        return planned

    def _undo_failed(self, item: Prepared, memory: Memory, entities: list[str], index_ids: list[str] | None = None) -> None:
        try:
            if self._erasure is not None and self._erasure.erased(memory.tenant, memory.id):
                self._purge(memory, entities, index_ids or [])
        except Exception:  # noqa: BLE001 - the task's own error is what SQS must see
            logger.exception("could not check the erasure of a failed enrichment", extra={"memory_id": memory.id})

    def _purge(self, memory: Memory, entities: list[str], index_ids: list[str], facts: Sequence[str] = ()) -> None:
        """The memory was erased while this enrichment wrote: delete what it wrote (the erasure's own
        purge, over the entities this enrichment named too)."""
        assert self._erasure is not None
        named = list(dict.fromkeys([*memory.entities, *entities]))
        self._erasure.purge_derived(memory.model_copy(update={"entities": named}), index_ids, facts)
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

    # -- steps ---------------------------------------------------------------------------
    def _extract(self, memory: Memory) -> Extraction:
        """The extractor's reading, or (`extract=False`, the writer controls the phrasing) the text
        verbatim: no LLM call, no derived facts, still embedded, indexed and linked."""
        if memory.extract:
            return self._extractor.extract(memory.raw, captured_at=memory.captured_at)
        return Extraction(normalized_text=memory.normalized_text)

    def _replace_facts(self, memory: Memory, facts: list[Fact], vectors: dict[str, list[float]] | None = None) -> set[Group]:
        """The memory's derived facts become `facts` (one provenance Query and one BatchGetItem, then a
        transaction per fact that changes; nothing for a memory captured with extract=False); new facts are indexed. Returns the timelines of what it
        said before and says now, which `complete_batch` recomputes once for the whole batch (a
        withdrawn fact gives back what it had retired)."""
        if not memory.extract:  # its text never reaches the extractor, so no fact was ever derived from it
            return set()
        now = self._clock()
        derived = self._facts.replace_derived(memory, facts, now)
        if self._upkeep is None:
            return set()
        self._upkeep.index(derived.after, vectors or {})  # idempotent; a reindex also rebuilds the facts index
        self._meter.count_intents(memory.tenant, [f.uuid for f in derived.after if is_annotated(f.intent_meta)])  # once per edge
        return self._upkeep.groups([*derived.before, *derived.after])

    def _derive_facts(self, memory: Memory, extraction: Extraction, batch: Batch) -> list[Fact]:
        """The extraction's triples as facts between resolved entities of the memory's namespace;
        event time is when the memory was captured. The first memory of a namespace resolves the
        entities every memory of the batch names there (one `resolve`, shared)."""
        if not extraction.facts:
            return []
        now = self._clock()
        space = graph_key(memory.namespace)
        wanted = {**mentions(extraction), **batch.mentions.get(space, {})}
        unresolved = [m for key, m in wanted.items() if (space, key) not in batch.entities]
        if unresolved:
            for name, entity in self._facts.resolve(memory.namespace, unresolved, now).items():
                batch.entities[(space, canonical_key(name))] = entity
        nodes = {key: batch.entities[(space, key)] for key in mentions(extraction)}
        normalize = self._upkeep.predicates.normalize if self._upkeep else (lambda p: p)
        facts = [
            derived_fact(memory.namespace, nodes[canonical_key(f.subject)], normalize(f.predicate), nodes[canonical_key(f.object)],
                         valid_at=f.valid_at or memory.captured_at, at=now, sentence=fact_text(f), polarity=f.polarity)
            for f in extraction.facts
        ]
        if self._upkeep and self._upkeep.annotator and memory.metadata.get("extract_intent") is True:
            annotator = self._upkeep.annotator  # asked for by add_episode(extract_intent=true)
            facts = [f.model_copy(update={"intent_meta": annotate_edge(annotator, f.fact, f.predicate, memory.raw)})
                     for f in facts]
        return list({f.uuid: f for f in facts}.values())

    def _sequence(self, items: Sequence[Prepared], batch: Batch) -> None:
        """Each live memory's predecessor in capture order, from the store (one read per user and batch):
        the index would miss one a concurrent batch has not indexed yet, and then neither memory of the
        pair would link the other. Failing fails that user's tasks (SQS retries them)."""
        users: dict[tuple[str, str], list[Prepared]] = {}
        for item in items:
            if item.error is None and item.skip_reason is None and item.memory is not None and item.extraction is not None:
                users.setdefault((item.memory.tenant, item.memory.user_id), []).append(item)
        for (tenant, user_id), group in users.items():
            try:
                batch.previous.update(self._store.preceding(tenant, user_id, [i.memory for i in group if i.memory]))
            except Exception as exc:  # noqa: BLE001 - kept per task
                for item in group:
                    item.error = exc

    def _previous(self, memory: Memory, batch: Batch) -> Memory | None:
        """The memory captured just before this one by the same user, if close enough in time."""
        previous = batch.previous.get(memory.id)
        if previous is None:
            return None
        close = memory.created_at - previous.created_at <= SEQUENCE_WINDOW
        same_moment = abs(memory.captured_at - previous.captured_at) <= SAME_MOMENT
        return previous if close and same_moment else None

    def _links(self, memory: Memory, entities: list[str], vector: list[float], previous: Memory | None,
               batch: Batch) -> list[Link]:
        weights: dict[str, tuple[float, str]] = {}

        def offer(other: str, weight: float, reason: str) -> None:
            if other != memory.id and weight > weights.get(other, (0.0, ""))[0]:
                weights[other] = (round(weight, 4), reason)

        for hit in self._index().similar(memory.tenant, memory.user_id, vector, SEMANTIC_LINKS, exclude=memory.id):
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
        links: dict[str, float],
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
