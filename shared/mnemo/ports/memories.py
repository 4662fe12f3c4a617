"""Memories: the store, the search index and its queries, the links between memories."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, Field

from mnemo.domain.graph import Link
from mnemo.domain.models import Activity, Author, Cursor, EnrichmentState, Memory, Page, Status
from mnemo.domain.namespace import NamespaceFilter
from mnemo.domain.scoring import Candidates


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
    # The last words of the message this memory answers (another speaker's, just before it:
    # `text.answers`), or "". The local reranker reads the memory after them; OpenSearch does not hold it.
    replies_to: str = ""
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
