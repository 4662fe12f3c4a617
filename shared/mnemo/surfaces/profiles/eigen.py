"""The Eigen Mesh thought tools (seed 000 "MCP tools reference"; 002 is the same page in German),
served at /mcp and /api/mcp.

| tool | seed arguments | service call |
|---|---|---|
| capture_thought | raw, captured_at?, as_user?, author? | memories.capture |
| retrieve_thoughts | query?, order?, top_k=10, threshold? [0, 1], mode?, detail?, author=user, include_agent?, cursor_created_at?, cursor_id? | memories.search / memories.browse |
| edit_thought | thought_id, edit_request?, raw_text? | memories.edit |
| delete_thought | thought_id | memories.archive |

Results use the seed's words: thoughts with `normalizedText`, `category`, `score`; `{ok, thought}` for edits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, Field

from mnemo.domain.commands import CaptureCommand, EditCommand, RetrieveCommand
from mnemo.domain.scoring import RELEVANCE_FLOOR
from mnemo.errors import (
    DependencyError,
    NotFoundError,
    PaymentRequiredError,
    QuotaExceededError,
    TenantSuspendedError,
)
from mnemo.services.tenancy.permissions import REQUIRED, Operation
from mnemo.surfaces.profiles.toolkit import ProfileServer, Wording, caller
from mnemo.surfaces.views import SCOPE_WRITTEN, Thought, cursor_params, snippet, thought_view, written_scope

if TYPE_CHECKING:
    from mnemo.surfaces.facade import ServiceFacade

INSTRUCTIONS = (
    "Mnemo is the user's long-term memory. Capture durable facts, decisions, preferences and tasks with "
    "capture_thought; before answering questions about the user's past, call retrieve_thoughts with the "
    "question as query and cite what comes back; keep memories current with edit_thought and delete_thought."
)
WORDING = Wording(
    errors={
        QuotaExceededError: "quota_exceeded: {message}",
        PaymentRequiredError: "payment_required: {message}",
        TenantSuspendedError: "tenant_suspended: {message}",
        NotFoundError: "thought {thought_id} not found",
        DependencyError: "{message}; the request was not completed, retry shortly",
    },
)


class CaptureResult(BaseModel):
    thought: Thought
    summary: str = Field(description="One sentence saying what was stored and what happens next.")
    scope: dict[str, str] = Field(description=SCOPE_WRITTEN)


class Weaker(BaseModel):
    """A thought that scored below the threshold: a weaker match, not a confirmed answer."""

    id: str
    score: float
    snippet: str


class RetrieveResult(BaseModel):
    results: list[Thought]
    next_cursor: dict[str, str] | None = Field(
        default=None, description="Pass these as cursor_created_at and cursor_id to get the next page (browse mode)."
    )
    weaker: list[Weaker] = Field(
        default_factory=list, description="Search with fewer than top_k results: the best thoughts below the threshold "
                                          "(at most 3, best first). Weaker matches: check them before relying on them.")
    note: str | None = Field(default=None, description="Search with fewer than top_k results: what passed and what lies below.")


class Changed(BaseModel):
    """What an edit changed, for a key without memory:read (docs/permissions.md): never the rest of the thought."""

    id: str
    version: int
    status: str
    raw_text: str | None = Field(default=None, description="The new text, when the call replaced the whole text.")


class EditResult(BaseModel):
    ok: bool
    thought: Thought | None = Field(description="The thought as changed; null to a key without memory:read (see changed).")
    changed: Changed | None = Field(default=None, description="To a key without memory:read only: what the call changed.")
    applied: list[str] = Field(description="What was changed, one line per operation, to confirm to the user "
                                           "(empty: the thought was already in the requested state).")
    scope: dict[str, str] = Field(description=SCOPE_WRITTEN)


class DeleteResult(BaseModel):
    ok: bool
    id: str
    status: str
    message: str
    scope: dict[str, str] = Field(description=SCOPE_WRITTEN)


def _below_note(passed: int, below: int, command: RetrieveCommand) -> str | None:
    """One line, so that an empty `results` is never read as "nothing remembered" (issue 54)."""
    if not below:
        return None
    floor = f"the threshold {command.threshold:g}"
    if not passed:
        return (f"No thought scored {floor} or more; the {below} closest below it are in weaker: "
                "weaker matches, check them before relying on them.")
    return f"{passed} of top_k={command.top_k} scored {floor} or more; the {below} best below it are in weaker."


def build(services: ServiceFacade) -> ProfileServer:
    server = ProfileServer(name="mnemo", title="Mnemo memory", instructions=INSTRUCTIONS, wording=WORDING)

    @server.tool(title="Capture a thought", read_only=False, destructive=False, idempotent=False)
    def capture_thought(
        raw: Annotated[str, Field(description="The thought, as text. Non-empty after trimming; at most 8 KB.")],
        captured_at: Annotated[
            str | None,
            Field(description="When the thought was had, for backdated memories: an ISO-8601 date (2024-05-08) or "
                              "date-time (2024-05-08T13:56:00+02:00); without an offset it is UTC. Default: now."),
        ] = None,
        as_user: Annotated[
            bool | None,
            Field(description="true = the human user's own memory: pass it when the user states something about "
                              "themselves or asks you to remember it. Omitted or false = an agent note, which "
                              "retrieve_thoughts hides unless asked with author=agent/all or include_agent=true."),
        ] = None,
        author: Annotated[str | None, Field(description="API key prefix to attribute the thought to, overriding the caller's.")] = None,
    ) -> CaptureResult:
        """Store a new memory. Call when the user states a durable fact, preference, decision or task, or asks you to remember something.

        Pass as_user=true for the user's own facts, preferences and requests to remember: without it the thought
        is stored as your agent note, which default retrieval (author=user) does not return.
        Returns right after the text is saved (id, normalizedText, category, metadata, enrichment state);
        classification, entities, embedding and links are added in the background within seconds."""
        command = CaptureCommand(raw=raw, captured_at=captured_at, as_user=as_user, author=author)
        memory = services.memories.capture(caller(), command)
        who = "the user's memory" if memory.author == "user" else "an agent note"
        return CaptureResult(
            thought=thought_view(memory),
            summary=f"Stored {who} {memory.id} ({len(memory.normalized_text)} chars); enrichment is queued.",
            scope=written_scope(memory.namespace),
        )

    @server.tool(title="Search or browse thoughts", read_only=True, destructive=False, idempotent=True)
    def retrieve_thoughts(
        query: Annotated[str | None, Field(description="What to look for. Omit to browse the newest thoughts.")] = None,
        order: Annotated[
            Literal["relevance", "created_at"] | None,
            Field(description="relevance (default with a query; requires query) or created_at: newest first (with a "
                              "query, the hits that pass the threshold, newest first, one page; without, a browse)."),
        ] = None,
        top_k: Annotated[int, Field(ge=1, le=100, description="Maximum results, 1-100.")] = 10,
        threshold: Annotated[
            float | None,
            Field(ge=0.0, le=1.0, description=f"Drop results scoring below this, in [0, 1]. Default {RELEVANCE_FLOOR}: "
                                              "below it a thought is unrelated to the query. 0 returns every hit."),
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

        With a query: hybrid semantic + lexical + graph-neighbour search over open thoughts, best first, each with a score in [0, 1]:
        about 0.9 or more is a near-verbatim match; thoughts scoring below 0.3 (unrelated) are dropped unless you pass a
        lower threshold, so fewer than top_k results, or none, means nothing else matched (a thought captured seconds
        ago, not indexed yet, is matched on its words alone and not dropped).
        With a query and order=created_at: the same hits, newest first (one page, no cursor).
        Without a query: the newest open thoughts first, with next_cursor for the next page. Defaults to the user's own
        open thoughts (excludes agent notes and completed/archived ones)."""
        command = RetrieveCommand(
            query=query, order=order, top_k=top_k, mode=mode,
            threshold=RELEVANCE_FLOOR if threshold is None and query is not None else threshold, detail=detail, author=author,
            include_agent=include_agent, cursor_created_at=cursor_created_at, cursor_id=cursor_id,
        )
        if command.is_browse:
            page = services.memories.browse(caller(), command)
            return RetrieveResult(
                results=[thought_view(m, detail=detail) for m in page.items], next_cursor=cursor_params(page.next_cursor)
            )
        hits = services.memories.search_hits(caller(), command)
        weaker = [Weaker(id=h.memory.id, score=round(h.score, 6), snippet=snippet(h.memory.normalized_text)) for h in hits.weaker]
        return RetrieveResult(results=[thought_view(h.memory, score=h.score, detail=detail) for h in hits.results],
                              weaker=weaker, note=_below_note(len(hits.results), len(weaker), command))

    def edit_thought(
        thought_id: Annotated[str, Field(description="The thought's id (UUID) from capture or retrieve.")],
        edit_request: Annotated[
            str | None,
            Field(description="The change in plain language, applied whole or refused with the reason; "
                              "the tool description lists what is understood. Not together with raw_text."),
        ] = None,
        raw_text: Annotated[
            str | None, Field(description="New full text, replacing the old one as given. Not together with edit_request.")
        ] = None,
    ) -> EditResult:
        revision = services.memories.revise(caller(), thought_id, EditCommand(edit_request=edit_request, raw_text=raw_text))
        memory = revision.memory
        scope = written_scope(memory.namespace)
        if not caller().allows(REQUIRED[Operation.READ]):  # it may change the thought, not read the rest of it
            changed = Changed(id=memory.id, version=memory.version, status=memory.status.value,
                              raw_text=memory.raw if raw_text is not None else None)
            return EditResult(ok=True, thought=None, changed=changed, applied=revision.applied, scope=scope)
        return EditResult(ok=True, thought=thought_view(memory), applied=revision.applied, scope=scope)

    # The description names what the configured interpreter understands, so it is written here, not as a literal.
    edit_thought.__doc__ = (
        "Change a stored thought: correct its text or update its lifecycle (complete, archive, reopen).\n\n"
        f"edit_request is applied only when all of it is understood; {services.edit_help}. Anything else "
        "(negations, 'the second sentence', statements such as 'the standup is on Mondays now') is refused "
        "with the reason and nothing changes: then ask the user, or pass raw_text with the full new text.\n"
        "Returns {ok: true, thought, applied: [what changed]}: confirm `applied` to the user. "
        "Completed and archived thoughts leave default retrieval; 'reopen' brings them back."
    )
    server.tool(title="Edit a thought", read_only=False, destructive=True, idempotent=False)(edit_thought)

    @server.tool(title="Archive a thought", read_only=False, destructive=False, idempotent=True)
    def delete_thought(
        thought_id: Annotated[str, Field(description="The thought's id (UUID).")],
    ) -> DeleteResult:
        """Archive (soft-remove) a thought that is wrong or no longer relevant. Reversible with edit_thought 'reopen'."""
        memory = services.memories.archive(caller(), thought_id)
        return DeleteResult(ok=True, id=memory.id, status=memory.status.value, message="archived; reopen with edit_thought",
                            scope=written_scope(memory.namespace))

    return server
