"""The Thrindex memory tools (seed 003 "Tool Reference"), served at /mcp/thrindex.

| tool | seed arguments (defaults, ranges) | scope | service call |
|---|---|---|---|
| store_memory | content (≤ 8 KB), agent_id="mcp-client", user_id="default", confidence=1.0 [0, 1], extract=true | memory:write | memories.capture |
| search_memories | query (≤ 2048 chars), agent_id?, user_id?, k=10 [1, 50], task_context? | memory:read | memories.search |
| list_memories | agent_id?, user_id?, limit=20 [1, 50], cursor? | memory:read | memories.browse |
| get_memory | id | memory:read | memories.get |
| delete_memory | id | memory:delete | memories.archive (soft: `deprecated`) |

An omitted (or empty) agent_id/user_id on a read means every agent/user of the organisation (the
key's tenant); for a user-bound key, its own user (as store_memory's default "default" does), and naming
another user is refused. Results are the seed's text, line for line (`thrindex_views`), plus the same data as
structured content. Errors are the seed's messages, as `isError` results.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field, StringConstraints

from mnemo.domain.commands import CaptureCommand, RetrieveCommand
from mnemo.domain.models import Status
from mnemo.domain.namespace import DEFAULT
from mnemo.errors import (
    DependencyError,
    ForbiddenError,
    NotFoundError,
    PaymentRequiredError,
    RetrievalLimitError,
    TenantSuspendedError,
    WriteLimitError,
)
from mnemo.services.tenancy.permissions import REQUIRED, Operation
from mnemo.surfaces.profiles import thrindex_views as views
from mnemo.surfaces.profiles.toolkit import ProfileServer, Wording, caller

if TYPE_CHECKING:
    from mnemo.surfaces.facade import ServiceFacade

INSTRUCTIONS = (
    "Thrindex memory tools. At the start of every conversation call search_memories with a broad query "
    "about the user; call store_memory whenever you learn something meaningful about the user; call "
    "delete_memory when asked to forget. Pass a consistent agent_id and the user's stable user_id."
)
WORDING = Wording(
    texts={"content:missing": "content is required", "confidence": "confidence must be between 0.0 and 1.0"},
    names={"raw": "content"},
    errors={
        NotFoundError: "Memory not found: {id}",
        ForbiddenError: "{message}",
        WriteLimitError: "Monthly write limit reached.",
        RetrievalLimitError: "Monthly search limit reached.",
        PaymentRequiredError: "payment_required: {message}",
        TenantSuspendedError: "tenant_suspended: {message}",
        DependencyError: "{message}; the request was not completed, retry shortly",
    },
)
VISIBLE = [Status.OPEN, Status.COMPLETED]  # deprecated (soft-deleted) memories are out of search and list

Query = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2048)]
MemoryId = Annotated[str, Field(max_length=128, description="The UUID of the memory.")]


def need(operation: Operation) -> None:
    """The permission table's check (services/tenancy/permissions.py) in the seed's wording, before any work."""
    permission = REQUIRED[operation]
    if not caller().allows(permission):
        raise ForbiddenError(f"API key is missing the {permission.value} scope.")


def result(text: str, data: BaseModel) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data.model_dump(mode="json"))


def any_level(value: str | None) -> str | None:
    """Empty means "all", as the seed says ("Leave empty to search across all agents")."""
    return value.strip() or None if value is not None else None


def build(services: ServiceFacade) -> ProfileServer:
    server = ProfileServer(name="thrindex", title="Thrindex memory", instructions=INSTRUCTIONS, wording=WORDING)

    @server.tool(title="Store a memory", read_only=False, destructive=False, idempotent=False)
    def store_memory(
        content: Annotated[str, Field(description="The information to store, specific and self-contained. Max 8 KB.")],
        agent_id: Annotated[str, Field(description="The agent storing this memory; keep it consistent across sessions.")] = "mcp-client",
        user_id: Annotated[str, Field(description="The user this memory belongs to: a stable, unique value per person.")] = "default",
        confidence: Annotated[float, Field(ge=0.0, le=1.0, description="Confidence in the information's accuracy, 0.0-1.0.")] = 1.0,
        extract: Annotated[bool, Field(description=(
            "true: the text is stored exactly as given, and the extractor (Bedrock's LLM when configured; locally a rule-based "
            "one, no LLM) reads it for entities, a category, an importance and subject-predicate-object facts, which are "
            "stored beside it; false: no extractor call, the text is only indexed. The stored text is never rewritten."))] = True,
    ) -> Annotated[CallToolResult, views.Stored]:
        """Persist a fact, preference, or piece of context for a user. Call after learning something meaningful about the user, or when asked to remember something.

        Returns the memory's ID with status queued; it is searchable at once by its words, and by meaning within seconds.
        The content is stored as given, never rewritten: extract=true adds the extracted facts beside it, it does not replace it."""
        need(Operation.CAPTURE)
        # The seed's default "default" stands for "no user given": a user-bound key's own user (Principal.user_for).
        command = CaptureCommand(raw=content, agent_id=agent_id, user_id=None if user_id == DEFAULT else user_id,
                                 confidence=confidence, extract=extract)
        return result(*views.stored(services.memories.capture(caller(), command)))

    @server.tool(title="Search memories", read_only=True, destructive=False, idempotent=True)
    def search_memories(
        query: Annotated[Query, Field(description="What you are looking for: a question, a topic, or the context you need. Max 2048 characters.")],
        agent_id: Annotated[str | None, Field(description="Only memories written by this agent. Leave empty for all agents.")] = None,
        user_id: Annotated[str | None, Field(description="Only memories of this user. Leave empty for all users.")] = None,
        k: Annotated[int, Field(ge=1, le=50, description="Maximum number of memories to return, 1-50.")] = 10,
        task_context: Annotated[
            str | None, Field(max_length=2048, description="What you are trying to accomplish; improves ranking beyond the query alone.")
        ] = None,
    ) -> Annotated[CallToolResult, views.Found]:
        """Search memories by meaning and words. Call at the start of a conversation to load user context, before answering questions that past context could inform, or when asked "do you remember...".

        Ranked by semantic relevance, word match, importance and recency; the score compares results within one response only."""
        started = time.perf_counter()
        need(Operation.SEARCH)
        command = RetrieveCommand(query=query, order="relevance", top_k=k, author="all", statuses=VISIBLE,
                                  user_id=any_level(user_id), agent_id=any_level(agent_id))
        hits = services.memories.search(caller(), command, context=task_context)
        scope = services.memories.scope(caller(), command).levels()
        return result(*views.found(hits, round((time.perf_counter() - started) * 1000), scope))

    @server.tool(title="List memories", read_only=True, destructive=False, idempotent=True)
    def list_memories(
        agent_id: Annotated[str | None, Field(description="Only memories written by this agent. Leave empty for all agents.")] = None,
        user_id: Annotated[str | None, Field(description="Only memories of this user. Leave empty for all users.")] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="Memories per page, 1-50.")] = 20,
        cursor: Annotated[str | None, Field(max_length=1024, description="next_cursor from a previous list_memories response.")] = None,
    ) -> Annotated[CallToolResult, views.Listing]:
        """List memories newest first, without their content (call get_memory for that). Use for an overview of a user's or agent's memories.

        Ends with next_cursor: <value> when more remain; pass it as cursor for the next page."""
        need(Operation.BROWSE)
        tenant, users, agents = caller().tenant, any_level(user_id), any_level(agent_id)
        position = views.decode_cursor(cursor, tenant, users, agents) if cursor else None
        command = RetrieveCommand(
            top_k=limit, author="all", statuses=VISIBLE, user_id=users, agent_id=agents,
            cursor_created_at=position.cursor_created_at if position else None,
            cursor_id=position.cursor_id if position else None,
        )
        page = services.memories.browse(caller(), command)
        return result(*views.listing(page.items, views.encode_cursor(page.next_cursor, tenant, users, agents)))

    @server.tool(title="Get a memory", read_only=True, destructive=False, idempotent=True)
    def get_memory(id: MemoryId) -> Annotated[CallToolResult, views.Record]:
        """Retrieve the full content and metadata of one memory by its ID (from search_memories or list_memories)."""
        need(Operation.READ)
        return result(*views.record(services.memories.get(caller(), id)))

    @server.tool(title="Delete a memory", read_only=False, destructive=True, idempotent=True)
    def delete_memory(id: MemoryId) -> Annotated[CallToolResult, views.Deleted]:
        """Delete a memory that is outdated or wrong, or that the user asked to forget. Soft delete: status deprecated, excluded from search at once.

        Permanent erasure (GDPR) is DELETE /v1/memories/{id}?hard=true on the REST API."""
        need(Operation.ARCHIVE)
        return result(*views.deleted(services.memories.archive(caller(), id)))

    return server
