"""What follows a change of the fact graph, for recorded and derived facts alike: the timelines of
the single-valued groups it touched are recomputed (docs/facts.md), and new facts are indexed.

Timelines are recomputed from the store, not patched, so arrival order does not matter. Each
correction is a conditional write (the store retries a lost race); a second pass catches a fact that
a concurrent writer added to the same group meanwhile.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

from mnemo.domain.graph import (
    Fact,
    FactStatus,
    canonical_form,
    canonical_words,
    derived_fact_id,
    embedding_text,
    graph_key,
)
from mnemo.domain.namespace import Namespace
from mnemo.domain.predicates import PredicateTable
from mnemo.domain.timeline import changes
from mnemo.errors import MnemoError
from mnemo.ports import Embedder, FactDocument, FactIndex, FactStore, IntentAnnotator

logger = logging.getLogger(__name__)

GROUP_LIMIT = 200  # values of one subject's single-valued predicate a recomputation reads
PASSES = 2


class Group(NamedTuple):
    """One timeline: a subject's facts of one predicate. `if_negated`: the group is on it only when that
    negation exists (a positive fact of a multi-valued predicate has a timeline only through a negation of
    its object; whether one exists is read once for all such groups, in `reconcile`)."""

    namespace: Namespace
    subject_id: str
    predicate: str
    if_negated: str | None = None


class FactUpkeep:
    def __init__(self, facts: FactStore, predicates: PredicateTable, index: FactIndex,
                 embedder: Embedder | None = None, annotator: IntentAnnotator | None = None) -> None:
        self.annotator = annotator
        self._facts = facts
        self.predicates = predicates
        self._index = index
        self._embedder = embedder

    def groups(self, facts: Iterable[Fact]) -> set[Group]:
        """The timelines these facts are on: every single-valued predicate's, any predicate's a
        negation is on (a negation retires the positive fact of its object whatever the cardinality),
        and a positive fact's of a multi-valued predicate if its negation exists (a later positive
        retires the negation): `if_negated`, settled by `reconcile` without a read here."""
        return {Group(f.namespace, f.subject.id, f.predicate,
                      None if f.predicate in self.predicates.single_valued or f.polarity == "negative"
                      else derived_fact_id(f.namespace, f.subject.id, f.predicate, f.object.id, "negative"))
                for f in facts}

    def _settled(self, groups: Iterable[Group]) -> set[Group]:
        """The groups on a timeline, without their condition: an `if_negated` group is kept when its
        negation is stored (one BatchGetItem per tenant for all of them)."""
        wanted: set[Group] = set()
        conditional: dict[str, dict[str, Group]] = {}
        for g in groups:
            if g.if_negated is None:
                wanted.add(Group(*g[:3]))
            else:
                conditional.setdefault(g.namespace.tenant, {})[g.if_negated] = Group(*g[:3])
        for tenant, by_negation in conditional.items():
            wanted |= {by_negation[f.uuid] for f in self._facts.get_many(tenant, list(by_negation))}
        return wanted

    def reconcile(self, groups: Iterable[Group], *, actor: str, at: datetime) -> list[Fact]:
        """Bring every fact of these groups to the validity its timeline gives; returns the facts
        this retired (active before, invalidated now)."""
        retired: dict[str, Fact] = {}
        for group in self._settled(groups):
            for _ in range(PASSES):
                members = self._members(group.namespace, group.subject_id, group.predicate)
                wanted = changes(members, single_valued=group.predicate in self.predicates.single_valued)
                if not wanted:
                    break
                before = {f.uuid: f for f in members}
                for fact_uuid, validity in wanted.items():
                    active = validity.status == FactStatus.ACTIVE
                    moved = self._facts.set_validity(
                        group.namespace.tenant, fact_uuid, actor=actor, at=at, active=active, invalid_at=validity.invalid_at,
                        invalidated_by=validity.invalidated_by)
                    if not active and before[fact_uuid].status == FactStatus.ACTIVE:
                        retired[fact_uuid] = moved
                    elif active:
                        retired.pop(fact_uuid, None)
        return list(retired.values())

    def _members(self, namespace: Namespace, subject_id: str, predicate: str) -> list[Fact]:
        edges = self._facts.adjacency(namespace, subject_id, statuses=(FactStatus.ACTIVE, FactStatus.INVALIDATED),
                                      direction="out", predicate=predicate, limit=GROUP_LIMIT)
        facts = self._facts.get_many(namespace.tenant, [e.fact_uuid for e in edges])
        return [f for f in facts if graph_key(f.namespace) == graph_key(namespace) and f.predicate == predicate]

    def embedding_text(self, sentence: str, subject: str, predicate: str, obj: str) -> str:
        """What the vector of a fact still to be derived embeds (the worker embeds its batch at once)."""
        return embedding_text(sentence, canonical_words(sentence, subject, self.predicates.normalize(predicate), obj))

    def index(self, facts: Sequence[Fact], vectors: Mapping[str, list[float]] | None = None) -> None:
        """Index the facts' sentences and canonical forms with their embeddings (of `embedding_text`), in
        one write; when the embedder fails they are indexed lexically (findable by words and by graph)
        and the failure is logged. `vectors` (sentence -> embedding) are ones the caller already
        computed (the worker's batch, of `self.embedding_text`). One write
        per call: on Serverless a second write within the refresh interval could not see the first."""
        if not facts:
            return
        docs = [FactDocument(tenant=f.namespace.tenant, user_id=f.namespace.user_id, group_id=f.namespace.group_id,
                             fact_uuid=f.uuid, sentence=f.fact, canonical=canonical_form(f), names=[f.subject.name, f.object.name],
                             entity_ids=[f.subject.id, f.object.id]) for f in facts]
        if vectors is None and self._embedder is not None:
            try:
                texts = [embedding_text(d.sentence, d.canonical) for d in docs]
                vectors = dict(zip([d.sentence for d in docs], self._embedder.embed(texts), strict=True))
            except MnemoError as exc:
                logger.warning("fact embeddings unavailable; indexed lexically only: %s", exc.message)
        if vectors:
            docs = [d.model_copy(update={"vector": vectors.get(d.sentence)}) for d in docs]
        self._index.upsert(docs)
