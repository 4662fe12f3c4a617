"""The fact graph: entities (nodes) and facts (edges between them), and the links between memories.

Facts are their own aggregate. A fact is either *derived* (an extractor found it in one or more
memories; it follows them: re-derived on edit, deactivated when none of them says it any more) or
*recorded* (an agent wrote the triple itself; only an explicit retract or invalidate changes it).
Every fact carries event time (`valid_at`/`invalid_at`: when it was true in the world) and
transaction time (`created_at`/`expired_at`: when Mnemo learned it / stopped believing it).

Entities are resolved to one node per canonical name within a namespace (tenant, user, group):
`canonical_key` folds case, whitespace and punctuation, and an alias table maps the other names the
extractor reports for the same entity onto that node.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field

from mnemo.domain.namespace import Namespace

# uuid5 namespace of every id the fact graph derives (entities, derived facts): stable across
# deployments, so a replayed enrichment addresses the same items.
GRAPH_UUID_NAMESPACE = uuid.UUID("5b0f6f0e-6d2c-4a8e-9a59-2f1f3c0de7a1")
RECORDED = "recorded"

_JOINERS = re.compile(r"[-_/\\·–—]+")  # word joiners: "Jean-Luc" and "Jean Luc" are one name
_PUNCTUATION = re.compile(r"[^\w\s]+")


Polarity = Literal["positive", "negative"]


class FactStatus(StrEnum):
    ACTIVE = "active"
    INVALIDATED = "invalidated"  # superseded, or no longer said by any memory (see `Fact.invalidated_by`)
    RETRACTED = "retracted"  # soft-deleted by a caller; never comes back on its own


class FactOrigin(StrEnum):
    DERIVED = "derived"
    RECORDED = RECORDED


def canonical_key(name: str) -> str:
    """The form two names must share to be one entity: NFKC, case folded, punctuation dropped,
    word joiners and runs of whitespace made one space (`"Acme  Corp."` == `"acme corp"`)."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _PUNCTUATION.sub("", _JOINERS.sub(" ", text))
    key = " ".join(text.split())
    return key or " ".join(name.casefold().split())  # a name made only of punctuation keeps its own form


def entity_key(name: str) -> str:
    """The key of a memory-graph entity (its postings, and the entity links of the memories naming
    it): case and whitespace folded, punctuation kept. Not `canonical_key`: stored posting keys have
    this form, and changing it would orphan them."""
    return " ".join(name.casefold().split())


def canonical_predicate(predicate: str) -> str:
    """Underscores become spaces, case and whitespace folded (`"lives_in"` == `"Lives in"`)."""
    return " ".join(predicate.replace("_", " ").casefold().split())


def graph_key(namespace: Namespace) -> tuple[str, str, str]:
    """The levels that key the fact graph: tenant, user and group (the agent is not a level of the
    graph; who wrote a fact is in its audit rows)."""
    return namespace.tenant, namespace.user_id, namespace.group_id


def entity_id(namespace: Namespace, name: str) -> str:
    """Deterministic: the same canonical name in the same namespace is always the same node."""
    return str(uuid.uuid5(GRAPH_UUID_NAMESPACE, "\x1f".join(["entity", *graph_key(namespace), canonical_key(name)])))


def derived_fact_id(namespace: Namespace, subject_id: str, predicate: str, object_id: str,
                    polarity: Polarity = "positive") -> str:
    """Deterministic: every memory of a namespace that says the same triple supports the same fact; its
    negation ("not so") is another fact (a positive fact's id is the one it always had)."""
    parts = ["fact", *graph_key(namespace), subject_id, canonical_predicate(predicate), object_id]
    parts += ["negative"] if polarity == "negative" else []
    return str(uuid.uuid5(GRAPH_UUID_NAMESPACE, "\x1f".join(parts)))


def graph_namespace(namespace: Namespace) -> Namespace:
    """The namespace a fact or entity is written to: the given one without its agent level."""
    return Namespace(tenant=namespace.tenant, user_id=namespace.user_id, group_id=namespace.group_id)


class Entity(BaseModel):
    """A node: one per canonical name within a namespace."""

    id: str
    namespace: Namespace
    name: str  # the display form first seen
    key: str  # canonical_key(name): what resolution compares
    type: str = "other"
    aliases: list[str] = Field(default_factory=list)  # other names resolved to this node
    created_at: datetime


class EntityRef(BaseModel):
    """An edge end as a fact carries it (denormalised, so reading an edge needs no node read)."""

    id: str
    name: str
    type: str = "other"


class EntityMention(BaseModel):
    """A name an extractor (or a caller) used, with the other names it said mean the same entity."""

    name: str
    type: str = "other"
    aliases: list[str] = Field(default_factory=list)


class FactSource(BaseModel):
    """Provenance of a derived fact: which memory, at which content version, said it."""

    memory_id: str
    version: int


class Fact(BaseModel):
    """An edge: subject -predicate-> object, with provenance, both times and a status."""

    uuid: str
    namespace: Namespace
    subject: EntityRef
    predicate: str  # canonical_predicate form
    object: EntityRef
    fact: str  # the fact as a sentence
    origin: FactOrigin
    sources: list[FactSource] = Field(default_factory=list)  # derived facts only
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    created_at: datetime
    expired_at: datetime | None = None
    status: FactStatus = FactStatus.ACTIVE
    polarity: Polarity = "positive"  # negative: "it is not (or no longer) so"; retires the positive fact
    invalidated_by: str | None = None  # the fact that superseded this one (None: no memory says it any more)
    retracted_reason: str | None = None
    intent_meta: dict[str, Any] | None = None
    revision: int = 0  # the item's write counter: every conditional write checks and bumps it

    @property
    def provenance(self) -> list[str]:
        """The memory ids this fact came from, or `["recorded"]`."""
        if self.origin == FactOrigin.RECORDED:
            return [RECORDED]
        return [s.memory_id for s in self.sources]

    def source_version(self, memory_id: str) -> int | None:
        return next((s.version for s in self.sources if s.memory_id == memory_id), None)

    @property
    def unsupported(self) -> bool:
        """Derived, and deactivated because no memory says it any more (a re-derivation revives it)."""
        return (
            self.origin == FactOrigin.DERIVED and self.status == FactStatus.INVALIDATED
            and not self.sources and self.invalidated_by is None
        )


AuditAction = Literal["created", "source_added", "source_removed", "deactivated", "reactivated", "invalidated", "retracted"]


class FactAudit(BaseModel):
    """One line of a fact's history, kept whatever happens to the fact (retract is soft)."""

    fact_uuid: str
    revision: int  # the fact's revision this change produced
    action: AuditAction
    actor: str  # API key prefix, or "enrichment" for the worker
    at: datetime
    reason: str = ""
    memory_id: str | None = None
    invalidated_by: str | None = None


class Adjacency(BaseModel):
    """One edge end as a traversal reads it from an entity: no fact read needed to take the hop."""

    entity_id: str
    fact_uuid: str
    direction: Literal["out", "in"]  # "out": the entity is the subject; "in": it is the object
    predicate: str
    other_id: str
    status: FactStatus
    polarity: Polarity = "positive"  # a negation ("Bob is not allergic to peanuts") is a fact, never a link to walk


def fact_sentence(subject: str, predicate: str, obj: str, polarity: Polarity = "positive") -> str:
    negation = "not " if polarity == "negative" else ""
    return f"{subject} {negation}{canonical_predicate(predicate)} {obj}"


def canonical_words(sentence: str, subject: str, predicate: str, obj: str, polarity: Polarity = "positive") -> str:
    """The triple in canonical words (`predicate` already through the synonym table), for the facts
    index; empty when the sentence says just that (its words would count twice)."""
    canonical = fact_sentence(subject, predicate, obj, polarity)
    return "" if canonical.casefold() == " ".join(sentence.split()).casefold() else canonical


def canonical_form(fact: Fact) -> str:
    return canonical_words(fact.fact, fact.subject.name, fact.predicate, fact.object.name, fact.polarity)


def embedding_text(sentence: str, canonical: str) -> str:
    """What a fact's vector embeds: its own words, then its canonical form when that differs, so a
    question in the canonical words ("where does Alice work") is near "Alice joined Acme" too."""
    return f"{sentence}; {canonical}" if canonical else sentence


def _ref(entity: Entity) -> EntityRef:
    return EntityRef(id=entity.id, name=entity.name, type=entity.type)


def derived_fact(
    namespace: Namespace, subject: Entity, predicate: str, obj: Entity, *, valid_at: datetime | None, at: datetime,
    sentence: str | None = None, polarity: Polarity = "positive",
) -> Fact:
    """A fact an extractor found: its id follows from the triple (and its polarity), so every memory
    saying it supports one fact (the store adds the memory as a source)."""
    ns = graph_namespace(namespace)
    return Fact(
        uuid=derived_fact_id(ns, subject.id, predicate, obj.id, polarity), namespace=ns, subject=_ref(subject),
        predicate=canonical_predicate(predicate), object=_ref(obj),
        fact=sentence or fact_sentence(subject.name, predicate, obj.name, polarity), origin=FactOrigin.DERIVED,
        valid_at=valid_at, created_at=at, polarity=polarity,
    )


def recorded_fact(
    fact_uuid: str, namespace: Namespace, subject: Entity, predicate: str, obj: Entity, *, valid_at: datetime | None,
    at: datetime, intent_meta: dict[str, Any] | None = None,
) -> Fact:
    """A triple a caller wrote itself: its own aggregate, untouched by any memory's enrichment."""
    return Fact(
        uuid=fact_uuid, namespace=graph_namespace(namespace), subject=_ref(subject),
        predicate=canonical_predicate(predicate), object=_ref(obj), fact=fact_sentence(subject.name, predicate, obj.name),
        origin=FactOrigin.RECORDED, valid_at=valid_at or at, created_at=at, intent_meta=intent_meta,
    )


class Link(BaseModel):
    """An undirected edge between two memories of one scope, stored at both ends."""

    memory_id: str
    other_id: str
    weight: float = Field(ge=0.0, le=1.0)
    reason: str  # "semantic" | "entity" | "sequence"
