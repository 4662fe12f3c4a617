"""The r3 memory tools (seed 004 "MCP tools"), served at /mcp/r3, with r3's documented defects fixed.

| tool | seed arguments (defaults) | service call |
|---|---|---|
| add_memory | content \\| messages, user_id, metadata, priority, async=true, skip_duplicate_check=false | adding.add: the duplicate check (none for a key without memory:read), the capture, the wait (async=false) |
| search_memory | query, limit=10, prefer_cache=true, user_id | reads.search: memories.search (user_id forwarded), through search_cache when prefer_cache |
| get_memory | memory_id, user_id | memories.get with owner |
| update_memory | memory_id, content, metadata, user_id | memories.edit with owner (memory:write only; metadata-only keeps content; content re-embeds) |
| get_all_memories | user_id, limit=100, offset=0, prefer_cache, include_cache_stats | reads.page: offset paging over memories.browse, through search_cache when prefer_cache |
| delete_memory | memory_id | memories.archive (soft) |
| deduplicate_memories | user_id, similarity_threshold=0.85, dry_run=true | duplicates.deduplicate; dry_run=false: jobs.deduplicate (a job above 300 live memories) |
| cache_stats, optimize_cache | -, force_refresh, max_memories | search_cache.stats, search_cache.optimize (this instance's hot set) |
| sync_status | - | status.read (memory:read) |
| extract_entities | text | extraction.extract (memory:write, one writes unit); stores nothing |
| get_knowledge_graph | entity_type, entity_name, relationship_type, limit, user_id (extension) | connections.neighbourhood; no entity_name: connections.overview |
| find_connections | from_entity, to_entity, max_depth=2, user_id (extension) | connections.connections |
| import_memories | source, data, file_path, api_key, user_id, batch_size, skip_duplicates | jobs.import_items (a job above 200 items), jobs.import_mem0 (always a job) |

An omitted user_id is r3's configured user: "default", or a user-bound key's own user; a bound key
that names another user is refused (`Principal.confine`, applied by every service). Reads never cross users.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field

from mnemo.domain.commands import CaptureCommand, EditCommand, RetrieveCommand
from mnemo.domain.jobs import JobReceipt
from mnemo.domain.models import NamespaceId, Status
from mnemo.domain.namespace import Namespace
from mnemo.errors import (
    DependencyError,
    ForbiddenError,
    NotFoundError,
    PaymentRequiredError,
    QuotaExceededError,
    TenantSuspendedError,
    ValidationFailed,
)
from mnemo.services.facts.connections import MAX_DEPTH, OVERVIEW_MEMORIES, OVERVIEW_RECORDED
from mnemo.services.memory.awaiting import WAIT_SECONDS
from mnemo.services.memory.duplicates import Duplicate
from mnemo.services.portability.imports import items_of
from mnemo.services.tenancy.permissions import may_read
from mnemo.surfaces.profiles import r3_views as views
from mnemo.surfaces.profiles.toolkit import ProfileServer, Wording, caller, given
from mnemo.surfaces.views import user_scope, written_scope

if TYPE_CHECKING:
    from mnemo.surfaces.facade import ServiceFacade

INSTRUCTIONS = (
    "r3 memory tools. Call search_memory before answering questions that past context could inform; call "
    "add_memory when the user shares something worth keeping; every answer carries the memory ids that "
    "get_memory, update_memory and delete_memory take."
)
WORDING = Wording(
    names={"raw": "content", "raw_text": "content"},
    errors={
        QuotaExceededError: "quota_exceeded: {message}",
        PaymentRequiredError: "payment_required: {message}",
        TenantSuspendedError: "tenant_suspended: {message}",
        NotFoundError: "{message}",
        ForbiddenError: "{message}",
        DependencyError: "{message}; nothing was changed, retry shortly",
    },
)
LIVE = [Status.OPEN, Status.COMPLETED]
UserId = Annotated[NamespaceId | None, Field(description=(
    'The user whose memories these are; omitted: "default" (a key bound to a user: that user, and it may name no other).'))]
MemoryId = Annotated[str, Field(max_length=128, description="The memory's id, from add_memory, search_memory or get_all_memories.")]
PreferCache = Annotated[bool, Field(description=(
    "true: a repeat of the same request for the same user within 60 s is answered from this server instance's hot set, "
    "after checking in the store that nothing it holds changed (structured `cache`: hit or miss); false: always read live (`cache`: off)."))]


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant", "system"]
    content: str


def keyword_safe[F: Callable[..., Any]](fn: F) -> F:
    """The SDK passes an argument under its alias (`async`, a Python keyword); the function's
    parameter is `async_`. The schema still comes from `fn`'s signature (`functools.wraps`)."""

    @functools.wraps(fn)
    def call(**arguments: Any) -> Any:
        if "async" in arguments:
            arguments["async_"] = arguments.pop("async")
        return fn(**arguments)

    return call  # type: ignore[return-value]


def user(user_id: str | None) -> str:
    """The user a call acts for (omitted: "default", or a bound key's own user; another user named by a
    bound key is refused): the services apply the same rule, the answers echo the user it gives."""
    return caller().user_for(user_id)


def graph_namespace(user_id: str | None) -> Namespace:
    """The graph tools' namespace: the named user's default group; omitted, the user is left to the
    traversal, which applies the same rule as `user` (so an answer and the graph read agree)."""
    if user_id is None:
        return Namespace(tenant=caller().tenant)
    return Namespace(tenant=caller().tenant, user_id=user_id)


def build(services: ServiceFacade) -> ProfileServer:
    server = ProfileServer(name="r3", title="r3 memory", instructions=INSTRUCTIONS, wording=WORDING)

    def owned(memory_id: str, user_id: str | None) -> Any:
        owner = None if user_id is None else user(user_id)  # a bound key naming another user: refused first
        try:  # another user's memory: the same answer as a missing id, nothing leaks
            return services.memories.get(caller(), memory_id, owner=owner)
        except NotFoundError as exc:
            raise NotFoundError(f"Memory not found: {memory_id}") from exc

    @server.tool(title="Add a memory", read_only=False, destructive=False, idempotent=False)
    @keyword_safe
    def add_memory(
        content: Annotated[str | None, Field(description="The text to remember. Give this or messages.")] = None,
        messages: Annotated[list[Message] | None, Field(description="A conversation: role user/assistant/system + content. Assistant messages are dropped, as in r3; the rest are saved as one memory.")] = None,
        user_id: UserId = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Free-form metadata stored with the memory.")] = None,
        priority: Annotated[Literal["high", "medium", "low"] | None, Field(description="high, medium or low; stored in metadata.priority.")] = None,
        async_: Annotated[bool, Field(alias="async", description=f"true: answer at once, enrichment runs in the background; false: wait for it up to {WAIT_SECONDS:.0f} s.")] = True,
        skip_duplicate_check: Annotated[bool, Field(description="true: save even if the user already has this memory. A key without memory:read saves without the check (the answer says so); false from such a key is refused.")] = False,
    ) -> CallToolResult:
        """Save a memory for a user: content, or messages (assistant messages are dropped; the user and system messages are saved as one memory). Answers "Saved (id: <uuid>)", or "Already saved (id: <uuid>)" with the existing memory when the user already has the same text, differing at most in case, punctuation, articles, contractions or spelling (a reworded, reordered or corrected statement is saved as its own memory; skip_duplicate_check=true saves anyway)."""
        if (content is None) == (messages is None):
            raise ValidationFailed("content and messages: give exactly one of them")
        text = content if content is not None else "\n".join(m.content for m in messages or [] if m.role != "assistant")
        if messages is not None and not text.strip():
            raise ValidationFailed("messages: no user or system message with content (assistant messages are dropped)")
        meta = {**(metadata or {}), **({"priority": priority} if priority else {})}
        command = CaptureCommand(raw=text, user_id=user(user_id), as_user=True, metadata=meta)
        added = services.adding.add(caller(), command, argument="skip_duplicate_check", wait=not async_,
                                    skip_duplicates=skip_duplicate_check if given("skip_duplicate_check") else None)
        if isinstance(added, Duplicate):
            return views.result(f"Already saved (id: {added.memory.id})",
                                {"id": added.memory.id, "duplicate": added.kind, "similarity": added.similarity})
        memory = added.memory
        scope = written_scope(memory.namespace)
        skipped = {"duplicate_check": added.skipped} if added.skipped else {}
        said = f"Saved (id: {memory.id})" + (f"; duplicate check {added.skipped}" if added.skipped else "")
        if async_:
            return views.result(said, {"id": memory.id, "enrichment": "queued", **skipped, "scope": scope})
        state = memory.enrichment.state.value
        note = {"pending": f"; enrichment not finished after {WAIT_SECONDS:.0f} s, it continues in the background",
                "failed": f"; enrichment failed: {memory.enrichment.error}"}.get(state, "; enriched")
        return views.result(f"{said}{note}", {"id": memory.id, "enrichment": state, **skipped, "scope": scope})

    @server.tool(title="Search memories", read_only=True, destructive=False, idempotent=True)
    def search_memory(
        query: Annotated[str, Field(min_length=1, max_length=2048, description="What to look for.")],
        limit: Annotated[int, Field(ge=1, le=100, description="Maximum results, 1-100.")] = 10,
        prefer_cache: PreferCache = True,
        user_id: UserId = None,
    ) -> CallToolResult:
        """Search one user's memories by meaning and words. Hits are separated by ---, each headed [id: <uuid> | score: 0.812] (score in [0, 1]); "No memories found" when nothing matches."""
        command = RetrieveCommand(query=query, top_k=limit, author="all", statuses=LIVE, user_id=user(user_id))
        hits, cache = services.reads.search(caller(), user(user_id), command, prefer_cache=prefer_cache)
        return views.found(hits, user(user_id), cache)

    @server.tool(title="Get a memory", read_only=True, destructive=False, idempotent=True)
    def get_memory(memory_id: MemoryId, user_id: UserId = None) -> CallToolResult:
        """One memory as JSON: id, content, metadata, user_id, status, version, timestamps. A missing id is an error."""
        data = views.memory(owned(memory_id, user_id))
        return views.result(views.as_json(data), data)

    @server.tool(title="Update a memory", read_only=False, destructive=False, idempotent=True)
    def update_memory(
        memory_id: MemoryId,
        content: Annotated[str | None, Field(description="New full text; the memory is re-embedded and re-enriched.")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="New metadata, replacing the old; content is kept when omitted.")] = None,
        user_id: UserId = None,
    ) -> CallToolResult:
        """Change a memory's content and/or metadata (at least one). The version goes up and the change is kept in its history; the answer is the updated memory as JSON (a key without memory:read: only its id, version and what this call changed)."""
        if content is None and metadata is None:
            raise ValidationFailed("content and metadata: give at least one of them")
        owner = None if user_id is None else user(user_id)  # a bound key naming another user: refused first
        try:  # memory:write alone (the table): the service finds the memory, no read and no retrieval charged
            updated = services.memories.edit(caller(), memory_id, EditCommand(raw_text=content, metadata=metadata), owner=owner)
        except NotFoundError as exc:
            raise NotFoundError(f"Memory not found: {memory_id}") from exc
        data = views.memory(updated) if may_read(caller()) else views.changed(updated, content, metadata)
        return views.result(views.as_json(data), {**data, "scope": written_scope(updated.namespace)})

    @server.tool(title="List memories", read_only=True, destructive=False, idempotent=True)
    def get_all_memories(
        user_id: UserId = None,
        limit: Annotated[int, Field(ge=1, le=100, description="Memories per page, 1-100.")] = 100,
        offset: Annotated[int, Field(ge=0, le=10_000, description="How many to skip (next_offset of the previous page).")] = 0,
        prefer_cache: PreferCache = True,
        include_cache_stats: Annotated[bool, Field(description="true: add the cache status to the answer.")] = False,
    ) -> CallToolResult:
        """One page of a user's memories, newest first, as JSON: the memories, next_offset (null on the last page) and total (known once the listing reaches its end, else null)."""
        page = services.reads.page(caller(), user(user_id), offset, limit, prefer_cache=prefer_cache)
        stats = services.search_cache.stats(caller()) if include_cache_stats else None
        return views.listing(page.items, user(user_id), offset, page.next_offset, page.total, page.cache, stats)

    @server.tool(title="Delete a memory", read_only=False, destructive=True, idempotent=True)
    def delete_memory(memory_id: MemoryId) -> CallToolResult:
        """Delete a memory: soft (archived; out of search and listings at once; reopen it to undo). Answers "Deleted"."""
        try:  # memory:delete alone (the table): no read of the memory first
            memory = services.memories.archive(caller(), memory_id)
        except NotFoundError as exc:
            raise NotFoundError(f"Memory not found: {memory_id}") from exc
        return views.result("Deleted", {"id": memory.id, "status": memory.status.value, "scope": written_scope(memory.namespace)})

    @server.tool(title="Find duplicate memories", read_only=False, destructive=True, idempotent=True)
    def deduplicate_memories(
        user_id: UserId = None,
        similarity_threshold: Annotated[float, Field(ge=0.5, le=1.0, description="Cosine at or above which two memories are near-duplicates, 0.5-1.0.")] = 0.85,
        dry_run: Annotated[bool, Field(description="true: only report; false: archive the repeats (never erased; reopen to undo).")] = True,
    ) -> CallToolResult:
        """Group a user's exact and near-duplicate memories; each group keeps its earliest memory. dry_run=false archives the others, marks them duplicate_of the kept one and records it in their history: at once for a user with up to 300 live memories, as a background job (answered with its job id) for more."""
        if dry_run:
            return views.deduplicated(services.duplicates.deduplicate(caller(), user(user_id), similarity_threshold, dry_run=True))
        done = services.jobs.deduplicate(caller(), user(user_id), similarity_threshold)
        if isinstance(done, JobReceipt):
            return views.job_started(done, "the deduplication", caller().tenant)
        return views.deduplicated(done, user_scope(caller().tenant, done.user_id))

    @server.tool(title="Cache statistics", read_only=True, destructive=False, idempotent=True)
    def cache_stats() -> CallToolResult:
        """This server instance's hot set for your tenant: entries (recent search answers and listing pages), the memories they hold, hits, misses, stale entries, invalidations and evictions since the instance started."""
        stats = services.search_cache.stats(caller())
        return views.result(views.cache_text(stats), stats)

    @server.tool(title="Sync status", read_only=True, destructive=False, idempotent=True)
    def sync_status() -> CallToolResult:
        """Background enrichment of your memories, from the store: pending and failed counts (failed ones sit in the dead-letter queue); admin keys also see the queue-wide depths."""
        status = services.status.read(caller(), queue=True)  # memory:read, as GET /v1/status
        text = ("All operations complete" if not status.pending and not status.failed
                else f"Pending: {status.pending}; failed (in the dead-letter queue): {status.failed}")
        if status.queue is not None:
            text += "\n" + views.queue_text(status.queue)
        return views.result(text, status)

    @server.tool(title="Optimize the cache", read_only=False, destructive=False, idempotent=True)
    def optimize_cache(
        force_refresh: Annotated[bool, Field(description="true: evict every entry of your tenant (the next requests read live and refill it).")] = False,
        max_memories: Annotated[int | None, Field(ge=1, description="Evict the least recently used entries until at most this many distinct memories remain.")] = None,
    ) -> CallToolResult:
        """Trim your tenant's share of this instance's hot set: expired entries always; every entry with force_refresh; least recently used ones beyond max_memories. Answers what was evicted and what remains."""
        return views.optimized(services.search_cache.optimize(caller(), force_refresh=force_refresh, max_memories=max_memories))

    @server.tool(title="Extract entities", read_only=True, destructive=False, idempotent=True)
    def extract_entities(text: Annotated[str, Field(min_length=1, max_length=8192, description="The text to analyse.")]) -> CallToolResult:
        """Run the configured extractor on the text and return its entities and relationships (subject, predicate, object). Stores nothing; needs memory:write and counts one write (the extractor is the model a capture's enrichment calls)."""
        found = services.extraction.extract(caller(), text)  # memory:write, one writes unit (the table)
        data = {"entities": [e.model_dump() for e in found.entities], "relationships": [f.model_dump(mode="json") for f in found.facts]}
        return views.result(views.as_json(data), data)

    @server.tool(title="Knowledge graph", read_only=True, destructive=False, idempotent=True)
    def get_knowledge_graph(
        entity_type: Annotated[str | None, Field(description="Only relationships with an entity of this type (person, place, ...); with entity_name: the other entity's type.")] = None,
        entity_name: Annotated[str | None, Field(min_length=1, description=f"The entity to read the graph from. Omitted: an overview of the user's graph, the facts of their {OVERVIEW_MEMORIES} newest memories and up to {OVERVIEW_RECORDED} recorded facts.")] = None,
        relationship_type: Annotated[str | None, Field(description="Only this relationship (predicate), e.g. works_at.")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="Maximum relationships, 1-200.")] = 50,
        user_id: UserId = None,
    ) -> CallToolResult:
        """A user's knowledge graph. With entity_name: that entity and its active relationships. Without: an overview, bounded: the newest active relationships (at most limit) among the facts of the user's 20 newest memories and up to 200 of their recorded facts; the answer says so. Each relationship carries its fact uuid."""
        namespace = graph_namespace(user_id)
        if entity_name is None:
            overview = services.connections.overview(caller(), namespace, entity_type=entity_type,
                                                     predicate=relationship_type, limit=limit)
            return views.overview(overview, user(user_id), limit)
        return views.graph(services.connections.neighbourhood(caller(), namespace, entity_name, entity_type=entity_type,
                                                              predicate=relationship_type, limit=limit))

    @server.tool(title="Find connections", read_only=True, destructive=False, idempotent=True)
    def find_connections(
        from_entity: Annotated[str, Field(min_length=1, description="The entity to start from.")],
        to_entity: Annotated[str | None, Field(description="Only the path to this entity.")] = None,
        max_depth: Annotated[int, Field(ge=1, le=MAX_DEPTH, description=f"Hops to follow, 1-{MAX_DEPTH}.")] = 2,
        user_id: UserId = None,
    ) -> CallToolResult:
        """Entities connected to from_entity within max_depth hops in a user's knowledge graph, each with the shortest path of facts (uuids included)."""
        namespace = graph_namespace(user_id)
        return views.connections(from_entity, services.connections.connections(caller(), namespace, from_entity, to_entity, max_depth))

    @server.tool(title="Import memories", read_only=False, destructive=False, idempotent=True)
    def import_memories(
        source: Annotated[Literal["json", "json_file", "mem0_api"], Field(description="json: items in data; json_file: a file on the local server; mem0_api: pull a mem0 account (when the deployment enables it).")],
        data: Annotated[list[Any] | dict[str, Any] | None, Field(description="source=json: an array of items, or an object with results or memories.")] = None,
        file_path: Annotated[str | None, Field(max_length=4096, description="source=json_file: a JSON file in the server's import directory (MNEMO_IMPORT_DIR; a path relative to it, or inside it). Off unless the operator sets it.")] = None,
        api_key: Annotated[str | None, Field(max_length=512, description="source=mem0_api: your mem0 api key (used by the job, never stored).")] = None,
        user_id: UserId = None,
        batch_size: Annotated[int, Field(ge=1, le=500, description="Items per chunk when the import runs as a job, 1-500.")] = 50,
        skip_duplicates: Annotated[bool, Field(description="true: skip items the user already has (by source id, else by content). A key without memory:read compares by source id only (the answer says so); true from such a key is refused.")] = True,
    ) -> CallToolResult:
        """Import memories: each item needs memory or content, optional metadata and id (its source id: a rerun skips items already imported). Up to 200 items: imported at once, answering imported/skipped/failed counts with reasons. More, and every mem0_api pull (all pages, no 1,000 cap): a background job, answered with its job id; GET /v1/jobs/{job_id} reports progress and the counts."""
        asked = skip_duplicates if given("skip_duplicates") else None  # None: the default (permissions.content_check)
        if (api_key is not None) != (source == "mem0_api"):
            raise ValidationFailed("api_key: used with source mem0_api, and only there")
        if source == "mem0_api":
            if data is not None or file_path is not None:
                raise ValidationFailed("source: mem0_api takes api_key (and neither data nor file_path)")
            return views.job_started(services.jobs.import_mem0(caller(), api_key or "", user_id=user(user_id),
                                                               skip_duplicates=asked), "the mem0 import", caller().tenant)
        if (source == "json") != (data is not None) or (source == "json_file") != (file_path is not None):
            raise ValidationFailed(f"source: {source} takes {'data' if source == 'json' else 'file_path'} (and not the other)")
        payload = data if source == "json" else services.import_files.read(file_path or "")
        done = services.jobs.import_items(caller(), items_of(payload), user_id=user(user_id),
                                          skip_duplicates=asked, chunk=batch_size)
        if isinstance(done, JobReceipt):
            return views.job_started(done, "the import", caller().tenant)
        return views.imported(done, user_scope(caller().tenant, user(user_id)))

    return server
