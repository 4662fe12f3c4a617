"""The ports: what services need from the outside world, named by role. Adapters implement them."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, Field

from mnemo.domain.extraction import Extraction
from mnemo.domain.models import Activity, Author, Cursor, EnrichmentState, Memory, Page, Status


class ApiKeyRecord(BaseModel):
    """A stored API key: only the SHA-256 of the secret is kept."""

    key_hash: str
    prefix: str
    tenant: str
    name: str
    scopes: list[str]
    created_at: datetime
    revoked_at: datetime | None = None


class EnrichmentTask(BaseModel):
    """The queue message: which memory at which version needs tier-2 enrichment."""

    tenant: str
    memory_id: str
    version: int
    reindex: bool = False  # re-derive even if already enriched (index rebuilds, model changes)


class BrowseQuery(BaseModel):
    tenant: str
    user_id: str
    statuses: list[Status] = Field(default_factory=lambda: [Status.OPEN])
    authors: list[Author] = Field(default_factory=lambda: ["user"])
    limit: int = 10
    cursor: Cursor | None = None


class SearchQuery(BaseModel):
    """A scoped search. Tenant and user are mandatory: an index query is never unscoped."""

    tenant: str
    user_id: str
    text: str
    vector: list[float] | None = None  # the query's embedding; None runs the lexical leg only
    authors: list[Author] = Field(default_factory=lambda: ["user"])
    statuses: list[Status] = Field(default_factory=lambda: [Status.OPEN])
    top_k: int = 10
    expand_graph: bool = True  # mode=full; mode=fast skips graph-neighbour expansion


class SearchHit(BaseModel):
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
    def put_new(self, memory: Memory) -> None:
        """Create; fails with ConflictError if the id exists."""

    def get(self, tenant: str, memory_id: str) -> Memory | None: ...

    def get_many(self, tenant: str, memory_ids: Sequence[str]) -> list[Memory]:
        """Batch read, one round trip per 100 ids; missing ids are skipped; order follows `memory_ids`."""

    def save(self, memory: Memory, *, expected_version: int, activity: Activity | None = None) -> None:
        """Replace the memory if the stored one is still at `expected_version` and at the revision
        `memory` was read at (else ConflictError); the stored revision becomes `memory.revision + 1`."""

    def browse(self, query: BrowseQuery) -> Page: ...

    def history(self, tenant: str, memory_id: str) -> list[Activity]: ...

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


class EnrichmentQueue(Protocol):
    def send(self, task: EnrichmentTask) -> None: ...

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

    def search(self, query: SearchQuery) -> list[SearchHit]:
        """Hits best first, scores normalised to [0, 1]; only `query.tenant`/`query.user_id` documents.

        Runs the lexical and (when `query.vector` is set) semantic legs and ranks their union with
        `mnemo.domain.scoring.fuse`, so every adapter scores identically."""

    def similar(self, tenant: str, user_id: str, vector: list[float], k: int, exclude: str | None = None) -> list[SearchHit]:
        """The `k` nearest documents of this scope by cosine (score = cosine clamped to [0, 1])."""

    def preceding(self, tenant: str, user_id: str, before: datetime) -> IndexDocument | None:
        """The open document of this scope created last before `before` (its conversational predecessor)."""


class Embedder(Protocol):
    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order; batched by the adapter."""


class Extractor(Protocol):
    def extract(self, text: str, *, speaker: str | None = None) -> Extraction:
        """Normalised text, category, entities, facts and importance of one memory's text."""


class DeadLetters(Protocol):
    def move_back(self, limit: int, before_send: Callable[[EnrichmentTask], None]) -> int:
        """Move up to `limit` DLQ messages to the main queue, calling `before_send` on each task
        before it is sent (so its memory is reset before a worker can pick it up); returns the count."""


class Link(BaseModel):
    """An undirected edge between two memories of one scope, stored at both ends."""

    memory_id: str
    other_id: str
    weight: float = Field(ge=0.0, le=1.0)
    reason: str  # "semantic" | "entity" | "sequence"


class StoredFact(BaseModel):
    """A fact with its provenance: which memory, at which version, said it."""

    fact_id: str
    subject: str
    predicate: str
    object: str
    memory_id: str
    version: int


class GraphStore(Protocol):
    """Derived graph data (facts, entity postings, links), rewritten idempotently per enrichment."""

    def sync(
        self, memory: Memory, facts: Sequence[StoredFact], entities: Sequence[str], links: Sequence[Link]
    ) -> list[Link]:
        """Make the stored facts, entity postings and links of `memory` exactly these (both link ends);
        returns every link of the memory afterwards: these plus the ones other memories made to it."""

    def clear(self, memory: Memory) -> None:
        """Remove every fact, entity posting and link of `memory` (archive)."""

    def entity_neighbours(self, tenant: str, user_id: str, entities: Sequence[str], limit: int) -> list[str]:
        """Ids of memories of this scope that mention any of `entities`, most recent first."""

    def links(self, tenant: str, memory_id: str) -> list[Link]: ...

    def facts(self, tenant: str, memory_id: str) -> list[StoredFact]: ...
