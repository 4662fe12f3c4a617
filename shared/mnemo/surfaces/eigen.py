"""The default MCP profile: the Eigen Mesh thought tools of seed 000, argument for argument.

Declarative: names, argument types, defaults, ranges and response shapes mapped onto MemoryService.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from mnemo.domain.commands import CaptureCommand, EditCommand, RetrieveCommand
from mnemo.errors import DependencyError, MnemoError
from mnemo.services.memories import MemoryService
from mnemo.surfaces.errors import describe_validation
from mnemo.surfaces.principal import current_principal
from mnemo.surfaces.views import Thought, cursor_params, thought_view

INSTRUCTIONS = (
    "Mnemo is the user's long-term memory. Capture durable facts, decisions, preferences and tasks with "
    "capture_thought; before answering questions about the user's past, call retrieve_thoughts with the "
    "question as query and cite what comes back; keep memories current with edit_thought and delete_thought."
)


class CaptureResult(BaseModel):
    thought: Thought
    summary: str = Field(description="One sentence saying what was stored and what happens next.")


class RetrieveResult(BaseModel):
    results: list[Thought]
    next_cursor: dict[str, str] | None = Field(
        default=None, description="Pass these as cursor_created_at and cursor_id to get the next page (browse mode)."
    )


class EditResult(BaseModel):
    ok: bool
    thought: Thought


class DeleteResult(BaseModel):
    ok: bool
    id: str
    status: str
    message: str


T = TypeVar("T")


def _guard(call: Callable[[], T]) -> T:
    """Run a service call; turn anticipated failures into tool errors the model can read."""
    try:
        return call()
    except ValidationError as exc:
        raise ToolError(f"invalid arguments: {describe_validation(exc)}") from exc
    except DependencyError as exc:
        raise ToolError(f"{exc.message}; the request was not completed, retry shortly") from exc
    except MnemoError as exc:
        raise ToolError(exc.message) from exc


def build_eigen_server(memories: Callable[[], MemoryService]) -> MCPServer:
    server = MCPServer(name="mnemo", title="Mnemo memory", instructions=INSTRUCTIONS)

    def tool(annotations: ToolAnnotations) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Register with the docstring, dedented, as the description the agent routes on."""

        def register(fn: Callable[..., T]) -> Callable[..., T]:
            server.add_tool(fn, description=inspect.cleandoc(fn.__doc__ or ""), annotations=annotations)
            return fn

        return register

    @tool(ToolAnnotations(title="Capture a thought", read_only_hint=False, idempotent_hint=False))
    def capture_thought(
        raw: Annotated[str, Field(description="The thought, as text. Non-empty after trimming; at most 8 KB.")],
        captured_at: Annotated[
            str | None, Field(description="ISO-8601 time the thought was had, for backdated memories. Default: now.")
        ] = None,
        as_user: Annotated[
            bool | None,
            Field(description="true = the human user's own memory (they asked you to remember it). Omit for your own agent notes."),
        ] = None,
        author: Annotated[str | None, Field(description="API key prefix to attribute the thought to, overriding the caller's.")] = None,
    ) -> CaptureResult:
        """Store a new memory. Call when the user states a durable fact, preference, decision or task, or asks you to remember something.

        Returns right after the text is saved (id, normalizedText, category, metadata, enrichment state);
        classification, entities, embedding and links are added in the background within seconds."""

        def run() -> CaptureResult:
            command = CaptureCommand(raw=raw, captured_at=captured_at, as_user=as_user, author=author)
            memory = memories().capture(current_principal(), command)
            who = "the user's memory" if memory.author == "user" else "an agent note"
            return CaptureResult(
                thought=thought_view(memory),
                summary=f"Stored {who} {memory.id} ({len(memory.normalized_text)} chars); enrichment is queued.",
            )

        return _guard(run)

    @tool(ToolAnnotations(title="Search or browse thoughts", read_only_hint=True, idempotent_hint=True))
    def retrieve_thoughts(
        query: Annotated[str | None, Field(description="What to look for. Omit to browse the newest thoughts.")] = None,
        order: Annotated[
            Literal["relevance", "created_at"] | None,
            Field(description="relevance (default with a query; requires query) or created_at (newest first, browse)."),
        ] = None,
        top_k: Annotated[int, Field(ge=1, le=100, description="Maximum results, 1-100.")] = 10,
        threshold: Annotated[
            float | None, Field(ge=0.0, le=1.0, description="Drop results whose normalised score is below this, in [0, 1].")
        ] = None,
        mode: Annotated[Literal["fast", "full"], Field(description="fast skips graph-neighbour expansion.")] = "full",
        detail: Annotated[Literal["snippet", "full"], Field(description="snippet trims long texts; full returns them whole.")] = "snippet",
        author: Annotated[
            Literal["user", "agent", "all"], Field(description="Whose thoughts: user (default), agent, or all.")
        ] = "user",
        include_agent: Annotated[bool, Field(description="Shorthand for author=all.")] = False,
        cursor_created_at: Annotated[str | None, Field(description="Browse cursor: created_at of the last thought seen.")] = None,
        cursor_id: Annotated[str | None, Field(description="Browse cursor: id of the last thought seen.")] = None,
    ) -> RetrieveResult:
        """Find or list the user's stored thoughts. Call before answering anything about the user's past, preferences, plans or decisions.

        With a query: hybrid semantic + lexical + graph-neighbour search over open thoughts, best first, each with a score in [0, 1].
        Without one: the newest open thoughts first, with next_cursor for the next page. Defaults to the user's own
        open thoughts (excludes agent notes and completed/archived ones)."""

        def run() -> RetrieveResult:
            command = RetrieveCommand(
                query=query,
                order=order,
                top_k=top_k,
                threshold=threshold,
                mode=mode,
                detail=detail,
                author=author,
                include_agent=include_agent,
                cursor_created_at=cursor_created_at,
                cursor_id=cursor_id,
            )
            service, principal = memories(), current_principal()
            if command.is_browse:
                page = service.browse(principal, command)
                return RetrieveResult(
                    results=[thought_view(m, detail=detail) for m in page.items], next_cursor=cursor_params(page.next_cursor)
                )
            hits = service.search(principal, command)
            return RetrieveResult(results=[thought_view(h.memory, score=h.score, detail=detail) for h in hits])

        return _guard(run)

    @tool(ToolAnnotations(title="Edit a thought", read_only_hint=False, idempotent_hint=False))
    def edit_thought(
        thought_id: Annotated[str, Field(description="The thought's id (UUID) from capture or retrieve.")],
        edit_request: Annotated[
            str | None,
            Field(description="The change in plain language: 'mark complete', 'archive' / 'not relevant', 'reopen', 'replace X with Y', 'append: ...'."),
        ] = None,
        raw_text: Annotated[str | None, Field(description="New full text, replacing the old one directly.")] = None,
    ) -> EditResult:
        """Change a stored thought: correct its text or update its lifecycle (complete, archive, reopen).

        Returns {ok: true, thought} with the new version; re-enrichment is queued. Requests it cannot apply are errors."""

        def run() -> EditResult:
            command = EditCommand(edit_request=edit_request, raw_text=raw_text)
            memory = memories().edit(current_principal(), thought_id, command)
            return EditResult(ok=True, thought=thought_view(memory))

        return _guard(run)

    @tool(ToolAnnotations(title="Archive a thought", read_only_hint=False, destructive_hint=False, idempotent_hint=True))
    def delete_thought(
        thought_id: Annotated[str, Field(description="The thought's id (UUID).")],
    ) -> DeleteResult:
        """Archive (soft-remove) a thought that is wrong or no longer relevant. Reversible with edit_thought 'reopen'."""

        def run() -> DeleteResult:
            memory = memories().archive(current_principal(), thought_id)
            return DeleteResult(ok=True, id=memory.id, status=memory.status.value, message="archived; reopen with edit_thought")

        return _guard(run)

    return server
