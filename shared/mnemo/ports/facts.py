"""Facts: the fact graph, one port an aggregate (entity nodes and names, derived facts, recorded facts,
timeline and audit, erasure, backfill), `FactStore` their union; and the facts index."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, NamedTuple, Protocol

from pydantic import BaseModel, Field

from mnemo.domain.graph import Adjacency, Entity, EntityMention, Fact, FactAudit, FactStatus
from mnemo.domain.models import Memory
from mnemo.domain.namespace import Namespace


@dataclass(frozen=True)
class DerivedFacts:
    """A memory's derived facts around `FactStore.replace_derived`: what it supported before (any
    status) and the active facts it supports now."""

    before: list[Fact]
    after: list[Fact]


@dataclass(frozen=True)
class ErasedFacts:
    """What `FactStore.erase_memory` did to the facts a memory ever produced: deleted outright (no
    other memory produced them), or kept (another existing memory did) without naming it."""

    erased: list[Fact]
    kept: list[Fact]


class RecordedPage(NamedTuple):
    facts: list[Fact]
    next: str | None  # pass back as `after`; None on the last page


class FactReader(Protocol):
    """Facts by uuid: the read every aggregate below shares."""

    def get(self, tenant: str, fact_uuid: str) -> Fact | None: ...

    def get_many(self, tenant: str, fact_uuids: Sequence[str]) -> list[Fact]:
        """Batch read; missing uuids skipped; order follows `fact_uuids`."""


class EntityGraph(FactReader, Protocol):
    """Entity nodes with their name (alias) table, and the adjacency a traversal reads. Keyed by
    tenant, user and group. Used by enrichment, the facts service, imports, traversal, search, upkeep."""

    def resolve(self, namespace: Namespace, mentions: Sequence[EntityMention], at: datetime) -> dict[str, Entity]:
        """The node each mention names in this namespace (keyed by the mention's name), created on
        first mention; a mention's aliases are mapped to its node unless they already name another."""

    def find_entity(self, namespace: Namespace, name: str) -> Entity | None:
        """The node `name` (or an alias of it) resolves to in this namespace; never creates one."""

    def entities(self, namespace: Namespace, entity_ids: Sequence[str]) -> list[Entity]:
        """The nodes of this namespace with these ids (missing ids skipped)."""

    def adjacency(
        self, namespace: Namespace, entity_id: str, *, statuses: Sequence[FactStatus] = (FactStatus.ACTIVE,),
        direction: Literal["out", "in"] | None = None, predicate: str | None = None, limit: int = 100,
    ) -> list[Adjacency]:
        """The edge ends at one entity (one Query per status and direction, at most `limit` in all):
        what a traversal needs to take a hop without reading the facts."""

    def for_entity(
        self, namespace: Namespace, entity_id: str, *, statuses: Sequence[FactStatus] = (FactStatus.ACTIVE,),
        limit: int = 100,
    ) -> list[Fact]:
        """The facts with this entity as subject or object, newest first."""


class DerivedFactStore(Protocol):
    """The facts enrichment derives from memories, each with the memories that say it (provenance).
    Used by enrichment, memories (a memory's facts), connections, exports."""

    def replace_derived(self, memory: Memory, facts: Sequence[Fact], at: datetime) -> DerivedFacts:
        """Make `facts` the active facts derived from `memory` (at its version): new ones are created,
        existing ones gain the memory as a source, a fact no memory says any more is deactivated.
        Facts that are not active (retracted, invalidated) and recorded facts are left as they are;
        so are the facts of other memories. Returns what the memory supported before (any status)
        and the active facts derived from it now. `facts=[]` withdraws the memory's support (archive)."""

    def for_memory(self, tenant: str, memory_id: str) -> list[Fact]:
        """The facts this memory supports (its provenance records), whatever their status."""


class RecordedFactStore(Protocol):
    """Facts a caller records (not derived from a memory), listed per user. Used by the facts
    service, imports, connections, exports."""

    def record(self, fact: Fact, *, actor: str, at: datetime | None = None, reason: str = "") -> Fact:
        """Store a new recorded fact (ConflictError if the uuid exists) with its `created` audit row,
        dated `at` (default: the fact's `created_at`) with `reason` (an import says so), and list it
        among its user's recorded facts."""

    def recorded(self, tenant: str, user_id: str, *, limit: int, after: str | None = None) -> RecordedPage:
        """One page of the user's recorded facts (every group and status), in a stable order from
        position `after` (the `next` of the previous page): one Query of the user's listing."""


class FactTimeline(FactReader, Protocol):
    """Each fact's life after it is written: retract, invalidate, validity, and its audit rows. Used
    by the facts service, imports, upkeep (the timeline's recomputation)."""

    def retract(self, tenant: str, fact_uuid: str, *, actor: str, reason: str | None, at: datetime) -> Fact:
        """Soft-delete: status `retracted`, `expired_at` set, an audit row (who, when, why) kept;
        idempotent; NotFoundError if there is no such fact."""

    def invalidate(
        self, tenant: str, fact_uuid: str, *, actor: str, at: datetime, invalid_at: datetime | None,
        invalidated_by: str | None = None,
    ) -> Fact:
        """Stop believing an active fact (status `invalidated`, `invalid_at`, `expired_at`, and the
        fact that replaced it); a fact that is not active is returned unchanged."""

    def set_validity(
        self, tenant: str, fact_uuid: str, *, actor: str, at: datetime, active: bool, invalid_at: datetime | None = None,
        invalidated_by: str | None = None,
    ) -> Fact:
        """Move a fact along its timeline (docs/facts.md): `active` brings it back (audit `reactivated`),
        else it is invalid from `invalid_at` because of `invalidated_by` (audit `invalidated`). A
        retracted fact is returned unchanged; NotFoundError if there is no such fact."""

    def audit(self, tenant: str, fact_uuid: str) -> list[FactAudit]:
        """The fact's history, oldest first (kept after a retract)."""


class FactErasure(Protocol):
    """Permanent erasure (GDPR): a memory's facts, a user's recorded facts. Used by the erasure service."""

    def erase_memory(self, memory: Memory, at: datetime, also: Sequence[str] = ()) -> ErasedFacts:
        """Erasure, over every fact the memory ever produced (any version, any status): one no other
        existing memory produced is deleted outright (item, audit rows, adjacency of every status);
        one another memory also said loses this source (deactivated if none is left) and no audit
        row of it names the memory any more. Then entity nodes and names no edge uses any more.
        `also`: more fact uuids to treat so (an enrichment's, written after the records were read).
        The caller recomputes the timelines of both lists, then calls `forget` with the deleted."""

    def forget(self, tenant: str, facts: Sequence[Fact]) -> None:
        """After `erase_memory` deleted `facts` and their timelines were recomputed: no fact of their
        (subject, predicate) groups, nor any audit row of one, names their uuids any more."""

    def erase_recorded(self, tenant: str, user_id: str, *, limit: int) -> list[str]:
        """Erasure: delete up to `limit` of the user's recorded facts outright (item, audit rows,
        adjacency, listing) and entity nodes and names no edge uses any more; returns their uuids
        (empty when none is left)."""

    def erase_recorded_facts(self, tenant: str, user_id: str, fact_uuids: Sequence[str]) -> list[str]:
        """As `erase_recorded`, for these facts of the user only (recorded ones; others are left alone)."""


class FactBackfill(Protocol):
    """The admin reindex: every fact, and the listing and producer records of facts written before
    those existed. Used by the recovery service."""

    def every_fact(self) -> Iterator[Fact]:
        """Every fact of every tenant, whatever its origin and status: a full table Scan, for the
        admin reindex only (never a request path)."""

    def list_recorded(self, facts: Sequence[Fact]) -> int:
        """Write the listing of each recorded fact among `facts` (idempotent): the admin reindex
        backfills facts recorded before the listing existed. Returns how many it listed."""

    def record_producers(self, facts: Sequence[Fact]) -> int:
        """Record, for each derived fact among `facts`, every existing memory that produced it (its
        sources and the memories its audit rows name), so that memory's erasure finds it: the admin
        reindex backfills facts derived before those records existed. Idempotent; returns the count."""


class FactStore(EntityGraph, DerivedFactStore, RecordedFactStore, FactTimeline, FactErasure, FactBackfill, Protocol):
    """The whole fact graph, every aggregate above, as one adapter (`DynamoDbFactStore`) implements it.
    A service that needs one aggregate takes that port. Design: docs/table-design.md."""


# The facts index's lexical fields and their boosts, read by both indexes (local and OpenSearch): the
# lexical signal is the boosted sum of per-field BM25 scores. The canonical words are the fact's
# meaning, worth its own words; entity names mostly repeat the sentence's words and only break ties
# (docs/facts.md).
FACT_LEXICAL_FIELDS: dict[str, float] = {"sentence": 1.0, "canonical": 1.0, "names": 0.5}
# A query's maximum, the lexical signal's denominator (`scoring.lexical_share`): its terms' idf summed over
# FACT_WEIGHT_FIELD, as memories sum theirs over `text`, times FACT_WEIGHT_SCALE. The field is the sentence,
# every fact's own words; not the canonical form (empty when the sentence already says it that way, so its
# document frequencies are a fraction of the facts') nor the names (the subject and object only). The scale is
# what a fact holding the query's words scores besides: its names repeat the sentence's subject and object at
# their boost, so at x1 a fact that only names the query's person ("Kavya Schmidt lives in Lisbon" for "Where
# did Kavya Schmidt work?") capped at 1 like the answer and the cosine decided (bench/fact_update_bench.py:
# `as_of` top edge 0.873 before the share, 0.833 at x1, 0.980 at x1.5; bench/README.md "Issue 54: the facts floor").
FACT_WEIGHT_FIELD = "sentence"
FACT_WEIGHT_SCALE = FACT_LEXICAL_FIELDS["sentence"] + FACT_LEXICAL_FIELDS["names"]


class FactDocument(BaseModel):
    """What the facts index holds for one fact: its sentence, its canonical form, its entity names
    and ids, its vector. No status: a search hydrates the facts from the store, which alone says
    which are active."""

    tenant: str
    user_id: str
    group_id: str
    fact_uuid: str
    sentence: str
    # The fact in canonical words (subject, predicate after the synonym table, object: "Alice works at
    # Acme" for "Alice joined Acme"), so a question in other words finds it; empty when the sentence
    # already says it that way (its words would count twice).
    canonical: str = ""
    names: list[str] = Field(default_factory=list)  # subject and object names
    entity_ids: list[str] = Field(default_factory=list)
    vector: list[float] | None = None


class FactHit(BaseModel):
    """A candidate fact with its signals, each in [0, 1]: `lexical`, BM25 over sentence, canonical form and names
    as a share of the query's own maximum (`scoring.lexical_share`: its terms' idf summed over the sentence
    field, the index's own statistics, times `FACT_WEIGHT_SCALE`); `semantic`, the cosine of the embedding of the sentence and canonical
    form, clamped."""

    fact_uuid: str
    entity_ids: list[str] = Field(default_factory=list)
    names: list[str] = Field(default_factory=list)
    lexical: float = 0.0
    semantic: float = 0.0


class FactIndex(Protocol):
    """The facts index, next to the memories index (docs/facts.md). Every query is scoped to one
    tenant, user and group."""

    def ensure_index(self) -> bool:
        """Create the index unless it exists; True when it was created (the reindex command's first step)."""

    def upsert(self, documents: Sequence[FactDocument]) -> None:
        """Index or replace each fact's document. A document without a vector never erases the
        vector an earlier write of the same fact stored (a fact's sentence never changes)."""

    def delete(self, tenant: str, fact_uuid: str) -> None: ...

    def search(self, namespace: Namespace, text: str, vector: list[float] | None, k: int) -> list[FactHit]:
        """The union of the lexical and (with `vector`) semantic legs, at most `k` hits from each."""
