"""The ports: what services need from the outside world, named by role. Adapters implement them."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, NamedTuple, Protocol, TypeVar

from pydantic import BaseModel, Field

from mnemo.domain.edits import EditPlan
from mnemo.domain.erasure import ErasureJob, UserFence
from mnemo.domain.extraction import Extraction
from mnemo.domain.graph import Adjacency, Entity, EntityMention, Fact, FactAudit, FactStatus, Link
from mnemo.domain.jobs import Job
from mnemo.domain.messages import (  # EnrichmentTask was defined here: importers keep the path
    EnrichmentTask,
    StepMessage,
)
from mnemo.domain.models import Activity, Author, Cursor, EnrichmentState, Memory, Page, Status
from mnemo.domain.namespace import Namespace, NamespaceFilter
from mnemo.domain.oauth_records import Grant, OAuthRecord
from mnemo.domain.scoring import Candidates
from mnemo.domain.tenancy import Counter, Tenant, TenantStatus


class ApiKeyRecord(BaseModel):
    """A stored API key: only the SHA-256 of the secret is kept."""

    key_hash: str
    prefix: str
    tenant: str
    name: str
    scopes: list[str]
    created_at: datetime
    revoked_at: datetime | None = None
    user_id: str | None = None  # bound: the key reads and writes this user's memories only
    expires_at: datetime | None = None
    last_used_at: datetime | None = None  # written at most once a minute per key (KeyService.TOUCH_EVERY)


class BrowseQuery(BaseModel):
    """Newest first within `scope`; an unset level of the scope means "any"."""

    scope: NamespaceFilter
    statuses: list[Status] = Field(default_factory=lambda: [Status.OPEN])
    authors: list[Author] = Field(default_factory=lambda: list[Author](["user"]))
    limit: int = 10
    cursor: Cursor | None = None
    salvage: bool = Field(default=False, description=(
        "Erasure only: items that no longer decode are listed too (their keys, no text) instead of skipped."))


class SearchQuery(BaseModel):
    """A scoped search. The tenant is mandatory: an index query is never unscoped."""

    scope: NamespaceFilter
    text: str
    vector: list[float] | None = None  # the query's embedding; None runs the lexical leg only
    authors: list[Author] = Field(default_factory=lambda: list[Author](["user"]))
    statuses: list[Status] = Field(default_factory=lambda: [Status.OPEN])
    top_k: int = 10  # how many results the caller will show; each leg returns `leg_size(top_k)` hits


class SearchHit(BaseModel):
    """A nearest neighbour (`similar`): its cosine clamped to [0, 1]."""

    memory_id: str
    score: float = Field(ge=0.0, le=1.0)
    components: dict[str, float] = Field(default_factory=dict)


# Lexical fields and their boosts: the lexical signal is the boosted sum of per-field BM25 scores.
# Measured on LoCoMo (docs/scoring.md): context carries real signal (the turn a reply answers),
# entity names mostly repeat words already in the text.
LEXICAL_FIELDS: dict[str, float] = {"text": 1.0, "entities": 0.25, "context": 0.7}


class IndexDocument(BaseModel):
    """What the search index holds for one memory (derived from the store; rebuildable)."""

    tenant: str
    memory_id: str
    version: int = 1
    user_id: str
    agent_id: str | None = None
    group_id: str = "default"
    author: Author
    status: Status
    text: str
    context: str = ""  # words that help find this memory but are not its text (neighbour turns, dates)
    category: str | None = None
    entities: list[str] = Field(default_factory=list)
    captured_at: datetime
    created_at: datetime
    importance: float | None = None
    vector: list[float] | None = None
    embedding_model: str | None = None
    links: dict[str, float] = Field(default_factory=dict)  # linked memory id -> link weight
    # Not indexed: the `_id`s an index that generates them (Serverless) gave this memory's earlier
    # copies (`Memory.index_ids`); the next write deletes them even before a refresh shows them.
    index_ids: list[str] = Field(default_factory=list)


class MemoryStore(Protocol):
    def put_new(self, memory: Memory, activity: Activity | None = None) -> None:
        """Create, with its first history line when given (a memory never exists without it);
        ConflictError if the id exists."""

    def put_new_many(self, created: Sequence[tuple[Memory, Activity]]) -> None:
        """Create memories with their first history lines in BatchWriteItem calls (25 items each;
        unprocessed items retried): every history line before any memory, so none exists without its
        line. Unconditional (a batch cannot hold conditions): the caller checks the ids are free."""

    def get(self, tenant: str, memory_id: str, *, salvage: bool = False) -> Memory | None:
        """UnreadableError for an item that no longer decodes; with `salvage` (erasure only) such an
        item comes back with what erasing it needs (keys, namespace, entities, index copies; no text)."""

    def get_many(self, tenant: str, memory_ids: Sequence[str], *, consistent: bool = False) -> list[Memory]:
        """Batch read, one round trip per 100 ids; missing ids are skipped; order follows `memory_ids`.
        `consistent`: strongly consistent (the worker must see the version its task names)."""

    def save(self, memory: Memory, *, expected_version: int, activity: Activity | None = None,
             duplicate_of: str | None = None) -> None:
        """Replace the memory if the stored one is still at `expected_version` and at the revision
        `memory` was read at (else ConflictError); the stored revision becomes `memory.revision + 1`.
        `duplicate_of` (deduplication's archive): also a pointer to the repeat in that kept memory's
        collection, in the same write; NotFoundError (ident: the kept id) if it is gone or being erased."""

    def browse(self, query: BrowseQuery) -> Page: ...

    def preceding(self, tenant: str, user_id: str, memories: Sequence[Memory]) -> dict[str, Memory | None]:
        """Per memory of `memories` (one user's), the open memory the user captured just before it, in
        capture order (created_at, then id), or None: the store owns that order, whatever is enriched."""

    def unindexed(self, tenant: str, limit: int) -> list[Memory]:
        """The tenant's memories whose enrichment is pending or failed (so the search index may not
        hold them, or holds an older version), most recently changed first, at most `limit` per state."""

    def erase(self, tenant: str, memory_id: str) -> int:
        """Permanently delete the memory and every item under its key (history included); returns the
        number of history items deleted. Derived items elsewhere are the graph's and fact store's."""

    def history(self, tenant: str, memory_id: str) -> list[Activity]: ...

    def repeats_of(self, tenant: str, kept_id: str) -> list[str]:
        """The repeats deduplication archived as `duplicate_of` this memory (its pointers; a repeat may
        have been reopened, edited or erased since)."""

    def forget_repeat(self, tenant: str, kept_id: str, repeat_id: str) -> None:
        """Delete the kept memory's pointer to this repeat (the repeat is being erased)."""

    def scrub_history(self, tenant: str, memory_id: str, detail: str, replacement: str) -> int:
        """Replace the detail of the memory's history lines that say exactly `detail`; how many."""

    def count_by_enrichment(self, tenant: str, state: EnrichmentState) -> int: ...

    def stale_pending(self, older_than: datetime, limit: int) -> list[Memory]:
        """Memories still pending enrichment since before `older_than`, across tenants (reconciler)."""

    def every_memory(self) -> Iterator[Memory]:
        """Every memory of every tenant: a full table Scan, for the admin reindex only (never a request path)."""


class KeyStore(Protocol):
    def put(self, record: ApiKeyRecord) -> None: ...

    def get(self, key_hash: str) -> ApiKeyRecord | None: ...

    def list(self, tenant: str) -> list[ApiKeyRecord]: ...

    def revoke(self, tenant: str, prefix: str, at: datetime) -> ApiKeyRecord | None: ...

    def touch(self, key_hash: str, at: datetime, before: datetime) -> None:
        """Set `last_used_at = at` unless a use at or after `before` is already recorded (a conditional
        write: many warm instances still record a key's use at most once a minute)."""


class TenantStore(Protocol):
    """Tenant records and their monthly counters (docs/tenancy.md)."""

    def get(self, tenant: str, month: str) -> tuple[Tenant, dict[Counter, int]]:
        """The tenant's plan (defaults when never configured) and `month`'s counters, in one read."""

    def configure(self, tenant: str, limits: dict[Counter, int | None], status: TenantStatus | None) -> Tenant:
        """Set the given limits (None: unlimited) and status; what is not given stays as it is."""

    def charge(self, tenant: str, month: str, counters: Sequence[Counter], amount: int = 1) -> Counter | TenantStatus | None:
        """Add `amount` to each counter atomically (one conditional write; a read before it when
        `amount` > 1), unless one would pass its limit or the tenant is not active: then nothing
        changes and the answer is why (the counter, or the status)."""

    def charge_units(self, tenant: str, month: str, counter: Counter, units: Sequence[str], *,
                     capped: bool) -> tuple[int, Counter | TenantStatus | None]:
        """Add one to `counter` per unit (an annotated edge's uuid) never counted before, whatever
        replays the call; `capped`: each only while the plan allows it (as `charge`), stopping at the
        first refusal. Returns how many were counted now, and why the plan refused (or None)."""


class EnrichmentQueue(Protocol):
    def send(self, task: EnrichmentTask) -> None: ...

    def send_many(self, tasks: Sequence[EnrichmentTask]) -> list[EnrichmentTask]:
        """Send in SendMessageBatch calls of 10; returns the tasks SQS did not accept (the caller
        leaves them to the reconciler, as after a failed `send`)."""

    def depths(self) -> dict[str, int]:
        """Queue-wide counts `queued`, `in_flight`, `dead_letters` (every tenant's: operators only)."""


# What `SearchIndex.similar` considers: every author's live memories (links may join a user's note to
# an agent's), never archived ones.
SIMILAR_AUTHORS: tuple[Author, ...] = ("user", "agent")
SIMILAR_STATUSES: tuple[Status, ...] = (Status.OPEN, Status.COMPLETED)


class SearchIndex(Protocol):
    def ensure_index(self) -> bool:
        """Create the index at the current mapping version if absent; True when it was created."""

    def upsert(self, documents: Sequence[IndexDocument]) -> dict[str, list[str]]:
        """Index the documents; returns memory id -> the generated `_id`s its copies now have, for an
        index that generates them (store them as `Memory.index_ids`), else an empty dict."""

    def delete(self, tenant: str, memory_id: str, index_ids: Sequence[str] = ()) -> None:
        """Remove the memory's documents, including the copies `index_ids` names (see `upsert`)."""

    def search(self, query: SearchQuery) -> Candidates:
        """The union of the lexical and (when `query.vector` is set) semantic legs, one `Candidates`
        row per memory with its raw signals (columns: an adapter need not build an object per hit), only documents inside `query.scope` with an allowed author
        and status. Unordered: ranking (fusion, graph expansion, threshold) is the service's."""

    def similar(self, tenant: str, user_id: str, vector: list[float], k: int, exclude: str | None = None) -> list[SearchHit]:
        """The `k` nearest documents of this scope by cosine (score = cosine clamped to [0, 1])."""


class Embedder(Protocol):
    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order; batched by the adapter."""


class Reranker(Protocol):
    """A second, finer relevance judgement of a search's best hits (mode=full only; docs/scoring.md
    "Reranking"). Production: Bedrock's rerank models; nothing local ships weights, so locally none."""

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """A relevance in [0, 1] per text, in input order."""


class Extractor(Protocol):
    def extract(self, text: str, *, speaker: str | None = None, captured_at: datetime | None = None) -> Extraction:
        """Normalised text, category, entities, facts and importance of one memory's text; `captured_at`
        (when it was said) anchors relative dates ("yesterday", "next Tuesday") in the facts' `valid_at`."""


class EditInterpreter(Protocol):
    """Turns a plain-language edit request plus the memory's current text into operations or a refusal
    (`mnemo.domain.edits`); the service applies the plan. `help` lists the forms it understands."""

    help: str

    def interpret(self, request: str, text: str) -> EditPlan:
        """The operations the whole request means, or `EditPlan.refuse(reason)`; never a partial reading."""


class DeadLetters(Protocol):
    def move_back(self, limit: int, before_send: Callable[[EnrichmentTask], None]) -> int:
        """Move up to `limit` DLQ messages to the main queue, calling `before_send` on each task
        before it is sent (so its memory is reset before a worker can pick it up); returns the count."""


@dataclass(frozen=True)
class GraphChange:
    """A planned `GraphStore.sync`: the memory's links afterwards, and the adapter's own write plan."""

    memory_id: str
    links: list[Link]
    writes: object = None


class GraphStore(Protocol):
    """Derived links between memories and entity postings, rewritten idempotently per enrichment.
    (Facts are their own aggregate: `FactStore`.)"""

    def sync(self, memory: Memory, entities: Sequence[str], links: Sequence[Link]) -> list[Link]:
        """Make the stored entity postings and links of `memory` exactly these (both link ends);
        returns every link of the memory afterwards: these plus the ones other memories made to it."""

    def plan(self, memory: Memory, entities: Sequence[str], links: Sequence[Link], dropped: Sequence[str] = ()) -> GraphChange:
        """`sync` without its write: reads what the memory owns now, returns the change and the links
        the memory will have; `apply` writes the changes of several memories together. `dropped`:
        entity names an older version named and this one does not, recorded in the memory's collection
        (never withdrawn) so its erasure still finds their nodes."""

    def apply(self, changes: Sequence[GraphChange]) -> None:
        """Write planned changes (batched across memories; every key is deterministic: replay-safe)."""

    def clear(self, memory: Memory) -> None:
        """Remove every entity posting and link of `memory` (archive)."""

    def unlink(self, tenant: str, memory_id: str, others: Sequence[str]) -> None:
        """Remove the links between `memory_id` and each of `others`, both stored ends (an erased
        neighbour: no item keyed by it may stay)."""

    def entity_neighbours(self, tenant: str, user_id: str, entities: Sequence[str], limit: int) -> list[str]:
        """Ids of memories of this scope that mention any of `entities`, most recent first."""

    def links(self, tenant: str, memory_id: str) -> list[Link]: ...


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


class FactStore(Protocol):
    """The fact graph: entity nodes with their alias table, facts (edges) with their audit rows, and
    the adjacency a traversal reads. Keyed by tenant, user and group. Design: docs/table-design.md."""

    def resolve(self, namespace: Namespace, mentions: Sequence[EntityMention], at: datetime) -> dict[str, Entity]:
        """The node each mention names in this namespace (keyed by the mention's name), created on
        first mention; a mention's aliases are mapped to its node unless they already name another."""

    def find_entity(self, namespace: Namespace, name: str) -> Entity | None:
        """The node `name` (or an alias of it) resolves to in this namespace; never creates one."""

    def entities(self, namespace: Namespace, entity_ids: Sequence[str]) -> list[Entity]:
        """The nodes of this namespace with these ids (missing ids skipped)."""

    def replace_derived(self, memory: Memory, facts: Sequence[Fact], at: datetime) -> DerivedFacts:
        """Make `facts` the active facts derived from `memory` (at its version): new ones are created,
        existing ones gain the memory as a source, a fact no memory says any more is deactivated.
        Facts that are not active (retracted, invalidated) and recorded facts are left as they are;
        so are the facts of other memories. Returns what the memory supported before (any status)
        and the active facts derived from it now. `facts=[]` withdraws the memory's support (archive)."""

    def record(self, fact: Fact, *, actor: str, at: datetime | None = None, reason: str = "") -> Fact:
        """Store a new recorded fact (ConflictError if the uuid exists) with its `created` audit row,
        dated `at` (default: the fact's `created_at`) with `reason` (an import says so), and list it
        among its user's recorded facts."""

    def recorded(self, tenant: str, user_id: str, *, limit: int, after: str | None = None) -> RecordedPage:
        """One page of the user's recorded facts (every group and status), in a stable order from
        position `after` (the `next` of the previous page): one Query of the user's listing."""

    def erase_recorded(self, tenant: str, user_id: str, *, limit: int) -> list[str]:
        """Erasure: delete up to `limit` of the user's recorded facts outright (item, audit rows,
        adjacency, listing) and entity nodes and names no edge uses any more; returns their uuids
        (empty when none is left)."""

    def erase_recorded_facts(self, tenant: str, user_id: str, fact_uuids: Sequence[str]) -> list[str]:
        """As `erase_recorded`, for these facts of the user only (recorded ones; others are left alone)."""

    def list_recorded(self, facts: Sequence[Fact]) -> int:
        """Write the listing of each recorded fact among `facts` (idempotent): the admin reindex
        backfills facts recorded before the listing existed. Returns how many it listed."""

    def record_producers(self, facts: Sequence[Fact]) -> int:
        """Record, for each derived fact among `facts`, every existing memory that produced it (its
        sources and the memories its audit rows name), so that memory's erasure finds it: the admin
        reindex backfills facts derived before those records existed. Idempotent; returns the count."""

    def retract(self, tenant: str, fact_uuid: str, *, actor: str, reason: str | None, at: datetime) -> Fact:
        """Soft-delete: status `retracted`, `expired_at` set, an audit row (who, when, why) kept;
        idempotent; NotFoundError if there is no such fact."""

    def invalidate(
        self, tenant: str, fact_uuid: str, *, actor: str, at: datetime, invalid_at: datetime | None,
        invalidated_by: str | None = None,
    ) -> Fact:
        """Stop believing an active fact (status `invalidated`, `invalid_at`, `expired_at`, and the
        fact that replaced it); a fact that is not active is returned unchanged."""

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

    def set_validity(
        self, tenant: str, fact_uuid: str, *, actor: str, at: datetime, active: bool, invalid_at: datetime | None = None,
        invalidated_by: str | None = None,
    ) -> Fact:
        """Move a fact along its timeline (docs/facts.md): `active` brings it back (audit `reactivated`),
        else it is invalid from `invalid_at` because of `invalidated_by` (audit `invalidated`). A
        retracted fact is returned unchanged; NotFoundError if there is no such fact."""

    def get(self, tenant: str, fact_uuid: str) -> Fact | None: ...

    def get_many(self, tenant: str, fact_uuids: Sequence[str]) -> list[Fact]:
        """Batch read; missing uuids skipped; order follows `fact_uuids`."""

    def audit(self, tenant: str, fact_uuid: str) -> list[FactAudit]:
        """The fact's history, oldest first (kept after a retract)."""

    def for_memory(self, tenant: str, memory_id: str) -> list[Fact]:
        """The facts this memory supports (its provenance records), whatever their status."""

    def every_fact(self) -> Iterator[Fact]:
        """Every fact of every tenant, whatever its origin and status: a full table Scan, for the
        admin reindex only (never a request path)."""

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
    """A candidate fact with its raw signals (`lexical`: BM25 over sentence, canonical form and names; `semantic`:
    cosine of the embedding of the sentence and canonical form, clamped to [0, 1])."""

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


class IntentAnnotator(Protocol):
    name: str  # recorded as `annotator` on the edge, also when the annotation failed

    def annotate(self, sentence: str, predicate: str, *, episode: str | None = None) -> dict[str, object] | None:
        """`{"label", "confidence", "evidence", "annotator"}` for a fact sentence (`episode`: the text
        it was derived from, when there is one), or None when no intent is found. Raises
        `DependencyError` when the annotator could not answer (services keep the fact: docs/facts.md)."""


class ErasureMarks(Protocol):
    """Tombstones of erased memories: written before an erasure deletes anything, so work already
    running for the memory (an enrichment) can see it was erased and undo what it wrote."""

    def mark(self, tenant: str, memory_id: str, at: datetime) -> None: ...

    def erased(self, tenant: str, memory_id: str) -> bool: ...

    def erased_among(self, tenant: str, memory_ids: Sequence[str]) -> set[str]:
        """Which of `memory_ids` have a tombstone: one batch read (the worker checks its whole batch)."""


class ErasureFences(Protocol):
    """One fence per (tenant, user), raised before a user's erasure lists anything and lowered when it
    ends; every write for the user reads it (strongly consistent) after it lands."""

    def raise_fence(self, tenant: str, user_id: str, job_id: str, at: datetime) -> None:
        """Mark erasure `job_id` (requested `at`) the user's latest and running."""

    def lower(self, tenant: str, user_id: str, job_id: str, at: datetime, *, earlier_too: bool) -> None:
        """The erasure ended: it stops running; with `earlier_too` (it completed, so it erased all an
        earlier one would have) so do the user's erasures requested before it."""

    def read(self, tenant: str, user_id: str) -> UserFence: ...


class ErasureJobStore(Protocol):
    """Erasure jobs, keyed by tenant and job id. Every write is conditional on `ErasureJob.revision`
    (ConflictError when another writer moved the job on) and returns the job as stored."""

    def create(self, job: ErasureJob) -> None: ...

    def get(self, tenant: str, job_id: str, *, erased_ids: bool = True) -> ErasureJob | None:
        """The job; with `erased_ids`, its `memory_ids` filled in (every memory it has erased so far)."""

    def save(self, job: ErasureJob) -> ErasureJob: ...

    def record_erased(self, job: ErasureJob, memory_id: str) -> ErasureJob:
        """Save `job` (its counts already include the memory) and list `memory_id` as erased, in one
        transaction: a memory is counted exactly once, however often its message is delivered."""


class JobListing(BaseModel):
    """One page of a tenant's job listing, newest first: (job id, kind) pairs (kind `user`: an erasure)."""

    jobs: list[tuple[str, str]]
    next_cursor: str | None = None


class JobStore(Protocol):
    """Import, mem0 and deduplicate jobs beside erasure jobs (same keys: tenant and job id). Writes of
    the job are conditional on `Job.revision` (ConflictError when another writer moved it on)."""

    def create(self, job: Job, parts: Sequence[list[Any]]) -> None:
        """Store the job queued with its chunks (job-part items, each under DynamoDB's 400 KB)."""

    def write_parts(self, tenant: str, job_id: str, parts: Sequence[list[Any]], first: int = 0) -> None:
        """Store chunks as parts `first`, `first + 1`, ... (a rewrite of the same parts replaces them)."""

    def get(self, tenant: str, job_id: str) -> Job | None:
        """The job, or None (also for an erasure job: that has its own store)."""

    def part(self, tenant: str, job_id: str, index: int) -> list[object]: ...

    def drop_parts(self, tenant: str, job_id: str, count: int) -> None:
        """Delete parts 0..count-1 now (an import stopped by its user's erasure: they hold the user's text)."""

    def of_user(self, tenant: str, user_id: str) -> list[str]:
        """Every job created for the user (`Job.owner`) still stored: the user's job listing, one Query."""

    def erase(self, tenant: str, job_id: str, user_id: str, *, whole: bool) -> int:
        """Delete the job's parts now; with `whole`, its record and its listing item too. How many items."""

    def list_every_job(self) -> int:
        """Write every job's user listing item (idempotent; a Scan: the admin reindex backfills jobs
        created before the listing existed). Returns how many jobs it listed."""

    def save(self, job: Job) -> Job: ...

    def listing(self, tenant: str, kinds: Sequence[str], *, limit: int, after: str | None = None) -> JobListing:
        """The tenant's jobs of these kinds, newest first, erasures (kind `user`) too: one Query of at most
        `limit` rows, so a page may hold fewer (rows of other kinds are filtered out after the limit)."""


class JobQueue(Protocol):
    """The worker queue as jobs use it: every kind's steps ride it (domain/messages.py)."""

    def send_step(self, step: StepMessage, delay_seconds: int = 0) -> None:
        """Queue the step, delivered no sooner than `delay_seconds` from now (at most 900)."""


class Mem0Page(BaseModel):
    items: list[dict[str, object]]
    total: int | None = None  # mem0's `count`, when it says
    last: bool


class Mem0Source(Protocol):
    """One page of a mem0 account's memories (mem0's platform API), retried on transient failures;
    DependencyError when it stays down, ValidationFailed when mem0 refuses the key."""

    def page(self, api_key: str, user_id: str, page: int, page_size: int) -> Mem0Page: ...


R = TypeVar("R", bound=OAuthRecord)


class OAuthStore(Protocol):
    """The authorization server's records (domain/oauth_records.py), each kind keyed by its `ident`.
    Reads are strongly consistent; a record past `expires_at` may still be returned (TTL deletes
    lazily), so the service checks expiry. Single-use steps are conditional writes."""

    def put(self, record: OAuthRecord) -> None:
        """Store a new record; ConflictError if its ident exists."""

    def get(self, kind: type[R], ident: str) -> R | None: ...

    def take(self, kind: type[R], ident: str, *, attempts: int | None = None) -> R | None:
        """Delete and return the record, or None if it was gone (or, given `attempts`, had moved past
        that count): of two concurrent takes exactly one gets it."""

    def bump(self, kind: type[OAuthRecord], ident: str, attempts: int) -> bool:
        """attempts → attempts + 1 if still `attempts` (a wrong credential); False if it moved or is gone."""

    def mark(self, kind: type[OAuthRecord], ident: str, field: str, at: datetime) -> bool:
        """Set the timestamp `field` (`used_at`, `revoked_at`) unless already set; False if it was."""

    def set_field(self, kind: type[OAuthRecord], ident: str, field: str, value: str) -> bool:
        """Overwrite a text field of an existing record (a consent request's csrf hash)."""

    def extend(self, kind: type[OAuthRecord], ident: str, expires_at: datetime) -> None:
        """Push an existing record's expiry later (a client in use stays registered)."""

    def grants_of(self, tenant: str, user_id: str) -> list[Grant]: ...

    def admit(self, counter: str, cap: int, expires_at: datetime) -> bool:
        """Count one event under `counter`; False (nothing counted) once `cap` is reached."""

    def count(self, counter: str) -> int:
        """Events counted under `counter` so far (0 if none)."""


class ClientMetadataFetcher(Protocol):
    """Fetches a Client ID Metadata Document (an https URL the operator allow-listed) as JSON.
    ValidationFailed when it is refused (address, size, redirect, shape); DependencyError when unreachable."""

    def fetch(self, url: str) -> dict[str, Any]: ...
