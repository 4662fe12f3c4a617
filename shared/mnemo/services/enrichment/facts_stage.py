"""The facts stage of an enrichment: an extraction's triples become derived facts between resolved
entities, replace what the memory said before, are indexed, and the timelines they touch are
recomputed once for the batch."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from mnemo.domain.extraction import Extraction
from mnemo.domain.extraction import Fact as ExtractedFact
from mnemo.domain.graph import EntityMention, Fact, canonical_key, derived_fact, graph_key
from mnemo.domain.intents import is_annotated
from mnemo.domain.models import Memory
from mnemo.ports import FactStore
from mnemo.services.enrichment.batch import Batch
from mnemo.services.enrichment.intents import annotate_edge
from mnemo.services.facts.upkeep import FactUpkeep, Group
from mnemo.services.tenancy.metering import Meter

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


class EnrichmentFacts:
    def __init__(self, facts: FactStore, upkeep: FactUpkeep, meter: Meter, clock: Callable[[], datetime]) -> None:
        self._facts = facts
        self._upkeep = upkeep
        self._meter = meter  # counts the intents credits of annotated edges
        self._clock = clock

    def embedding_texts(self, extraction: Extraction) -> list[tuple[str, str]]:
        """Each fact's sentence and what the facts index embeds for it (sentence and canonical form,
        `FactUpkeep.embedding_text`): the batch's one embedding call covers them too."""
        return [(fact_text(f), self._upkeep.embedding_text(fact_text(f), f.subject, f.predicate, f.object))
                for f in extraction.facts]

    def derive(self, memory: Memory, extraction: Extraction, batch: Batch) -> list[Fact]:
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
        normalize = self._upkeep.predicates.normalize
        facts = [
            derived_fact(memory.namespace, nodes[canonical_key(f.subject)], normalize(f.predicate), nodes[canonical_key(f.object)],
                         valid_at=f.valid_at or memory.captured_at, at=now, sentence=fact_text(f), polarity=f.polarity)
            for f in extraction.facts
        ]
        if self._upkeep.annotator and memory.metadata.get("extract_intent") is True:
            annotator = self._upkeep.annotator  # asked for by add_episode(extract_intent=true)
            facts = [f.model_copy(update={"intent_meta": annotate_edge(annotator, f.fact, f.predicate, memory.raw)})
                     for f in facts]
        return list({f.uuid: f for f in facts}.values())

    def replace(self, memory: Memory, facts: list[Fact], vectors: Mapping[str, list[float]] | None = None) -> set[Group]:
        """The memory's derived facts become `facts` (one provenance Query and one BatchGetItem, then a
        transaction per fact that changes; nothing for a memory captured with extract=False); new facts
        are indexed. Returns the timelines of what it said before and says now, which `reconcile`
        recomputes once for the whole batch (a withdrawn fact gives back what it had retired)."""
        if not memory.extract:  # its text never reaches the extractor, so no fact was ever derived from it
            return set()
        derived = self._facts.replace_derived(memory, facts, self._clock())
        self._upkeep.index(derived.after, vectors or {})  # idempotent; a reindex also rebuilds the facts index
        self._meter.count_intents(memory.tenant, [f.uuid for f in derived.after if is_annotated(f.intent_meta)])  # once per edge
        return self._upkeep.groups([*derived.before, *derived.after])

    def reconcile(self, groups: set[Group]) -> None:
        """The timelines the batch's fact changes touched, recomputed once for the batch (a group two
        memories share is read once)."""
        self._upkeep.reconcile(groups, actor="enrichment", at=self._clock())
