"""REST API under /v1: the same services and validation as MCP, JSON errors with a stable code."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, field_validator, model_validator

from mnemo.domain.commands import CaptureCommand, EditCommand, RetrieveCommand, check_text
from mnemo.domain.models import MAX_TEXT_BYTES, Activity, ConversationId, Memory, NamespaceId, Principal, Status
from mnemo.domain.timestamps import ISO_HINT, IsoTimestamp, SaidAt
from mnemo.errors import ForbiddenError
from mnemo.services.enrichment.status import StatusService
from mnemo.services.erasure.memories import ErasureReceipt
from mnemo.services.memory.memories import MemoryService
from mnemo.services.tenancy.permissions import REQUIRED, Operation, may_read
from mnemo.surfaces.auth import authenticate
from mnemo.surfaces.facade import ServiceFacade
from mnemo.surfaces.rest.openapi import ERROR_RESPONSES
from mnemo.surfaces.views import (
    SCOPE_WRITTEN,
    MemoryDetail,
    MemoryView,
    cursor_params,
    memory_detail,
    memory_view,
    written_scope,
)

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)


def services(request: Request) -> ServiceFacade:
    """The container `create_app` was given: every route's services come through this dependency."""
    return request.app.state.services()


def principal(request: Request, container: Annotated[ServiceFacade, Depends(services)]) -> Principal:
    """Authenticated by `RestGate` before the body was read; the lookup here serves apps built without it."""
    found = getattr(request.state, "principal", None)
    return found if isinstance(found, Principal) else authenticate(container.keys, request.headers)


def memories(container: Annotated[ServiceFacade, Depends(services)]) -> MemoryService:
    return container.memories


def status_service(container: Annotated[ServiceFacade, Depends(services)]) -> StatusService:
    return container.status


Caller = Annotated[Principal, Depends(principal)]
Memories = Annotated[MemoryService, Depends(memories)]

# Body fields are strict JSON types, as MCP arguments are (README): a boolean is true or false, never "yes",
# "true" or 1, and a number is never a string or a boolean. Strict per field (StrictBool, StrictInt,
# StrictFloat), not per model: FastAPI validates the parsed dict, where a strict model would refuse the
# JSON string of an enum (`status: "completed"`). tests/integration/surfaces/test_strict_bodies.py
# walks /openapi.json for any body field this misses.


class CreateMemory(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str = Field(description="The memory text; non-empty after trimming, at most 8 KB.")
    user_id: NamespaceId | None = Field(default=None, description=(
        "Whose memory: default `default`; a key bound to a user: that user (naming another is 403)."))
    agent_id: NamespaceId | None = None
    group_id: NamespaceId = "default"
    conversation_id: ConversationId | None = Field(default=None, description=(
        "The conversation it was said in (a chat, a session). The memory captured just before it lends it "
        "context only if both name the same conversation (or neither names one); nothing is filtered by it."))
    metadata: dict[str, Any] = Field(default_factory=dict)
    captured_at: SaidAt | None = None
    as_user: StrictBool | None = None

    @field_validator("content")
    @classmethod
    def _content(cls, value: str) -> str:
        return check_text(value, "content")


class UpdateMemory(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str | None = None
    edit_request: str | None = Field(default=None, max_length=2000)
    metadata: dict[str, Any] | None = None
    status: Status | None = None

    @field_validator("content")
    @classmethod
    def _content(cls, value: str | None) -> str | None:
        return None if value is None else check_text(value, "content")

    @model_validator(mode="after")
    def _one_text_change(self) -> UpdateMemory:
        if self.content is not None and self.edit_request is not None:
            raise ValueError("content and edit_request: give one of them; content replaces the whole text as given, "
                             "edit_request describes a change in plain language")
        if self.content is None and not (self.edit_request and self.edit_request.strip()) and self.metadata is None and self.status is None:
            # checked here, not left to EditCommand, whose message names the thought tools' raw_text
            raise ValueError("give content (replaces the whole text), edit_request (a change in plain language), metadata or status")
        return self


ALL_USERS = "*"
UserFilter = NamespaceId | Literal["*"]
USER_FILTER = ("Whose memories: a user id (default `default`; a key bound to a user: that user, naming another is 403), "
               "or `*` for every user of the tenant (admin keys).")


class SearchMemories(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_TEXT_BYTES)
    user_id: UserFilter | None = Field(default=None, description=USER_FILTER)
    agent_id: NamespaceId | None = Field(default=None, description="Only memories this agent wrote.")
    group_id: NamespaceId | None = Field(default=None, description="Only memories of this group.")
    top_k: StrictInt = Field(default=10, ge=1, le=100)
    threshold: StrictFloat | None = Field(default=None, ge=0.0, le=1.0)
    mode: Literal["fast", "full"] = Field(default="full", description=(
        "`full`: hybrid search, graph neighbours, a hit restating a better-placed one moved down, and the "
        "reranker where one is configured; `fast`: the hybrid search alone."))
    author: Literal["user", "agent", "all"] = "all"
    explain: StrictBool = Field(default=False, description="Return each component of the score.")
    now: IsoTimestamp | None = Field(default=None, description=(
        "The search's reference time (default: the current time): recency and relative dates in the query "
        "(`last week`, `two months ago`) are read against it."))


class MemoryList(BaseModel):
    results: list[MemoryView]
    next_cursor: dict[str, str] | None = None
    skipped: int = Field(default=0, description="Stored items left out because they no longer decode (logged for an operator).")
    scope: dict[str, str] = Field(description="The effective namespace read (tenant, then each pinned level) and author.")


class SearchResults(BaseModel):
    results: list[MemoryView]
    scope: dict[str, str] = Field(description="The effective namespace searched (tenant, then each pinned level) and author.")


def user_filter(caller: Principal, user_id: str | None) -> str | None:
    """`*` reads every user of the tenant: an operator's view, so only admin keys may ask for it. Any
    other value (or none) is the user `Principal.user_for` allows."""
    if user_id != ALL_USERS:
        return caller.user_for(user_id)
    needed = REQUIRED[Operation.READ_ALL_USERS]
    if not caller.allows(needed):
        raise ForbiddenError(f"user_id: '*' (every user of the tenant) needs a key with the {needed.value!r} scope")
    return None


def scope_view(service: MemoryService, caller: Principal, command: RetrieveCommand, author: str) -> dict[str, str]:
    return {**service.scope(caller, command).levels(), "author": author}


IDEMPOTENCY_KEY = ("A unique value per logical request (1-128 printable ASCII characters), scoped to your API key: a "
                   "retry with the same key returns the first answer instead of writing again (also at the write cap, "
                   "uncounted); the same key with a different body is 409.")
IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key", description=IDEMPOTENCY_KEY)]


class WrittenMemory(MemoryView):
    scope: dict[str, str] = Field(description=SCOPE_WRITTEN)


def written(memory: Memory) -> WrittenMemory:
    return WrittenMemory(**memory_view(memory).model_dump(), scope=written_scope(memory.namespace))


@router.post("/memories", status_code=201, response_model=WrittenMemory)
def create_memory(body: CreateMemory, caller: Caller, service: Memories, idempotency_key: IdempotencyKey = None) -> WrittenMemory:
    command = CaptureCommand(raw=body.content, **body.model_dump(exclude={"content"}))
    return written(service.capture(caller, command, idempotency_key=idempotency_key))


@router.get("/memories", response_model=MemoryList)
def list_memories(
    caller: Caller,
    service: Memories,
    user_id: Annotated[UserFilter | None, Query(description=USER_FILTER)] = None,
    agent_id: Annotated[NamespaceId | None, Query(description="Only memories this agent wrote.")] = None,
    group_id: Annotated[NamespaceId | None, Query(description="Only memories of this group.")] = None,
    author: Literal["user", "agent", "all"] = "all",
    status: Annotated[list[Status] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor_created_at: Annotated[str | None, Query(description=ISO_HINT)] = None,  # strict: RetrieveCommand parses it
    cursor_id: str | None = None,
) -> MemoryList:
    command = RetrieveCommand(
        user_id=user_filter(caller, user_id),
        agent_id=agent_id,
        group_id=group_id,
        author=author,
        statuses=status or [Status.OPEN],
        top_k=limit,
        cursor_created_at=cursor_created_at,  # validated strictly by the command
        cursor_id=cursor_id,
    )
    page = service.browse(caller, command)
    return MemoryList(results=[memory_view(m) for m in page.items], next_cursor=cursor_params(page.next_cursor),
                      skipped=page.skipped,
                      scope=scope_view(service, caller, command, author))


@router.get("/memories/{memory_id}", response_model=MemoryDetail)
def get_memory(memory_id: str, caller: Caller, service: Memories, include_inactive: Annotated[bool, Query(
        description="Also the facts of this memory that a later fact invalidated or a caller retracted.")] = False,
               ) -> MemoryDetail:
    return memory_detail(*service.detail(caller, memory_id, include_inactive=include_inactive))


@router.get("/memories/{memory_id}/history", response_model=list[Activity])
def memory_history(memory_id: str, caller: Caller, service: Memories) -> list[Activity]:
    return service.history(caller, memory_id)


class UpdatedMemory(WrittenMemory):
    applied: list[str] = Field(description="What the update changed, one line per change (empty: it was already so).")


class ChangedMemory(BaseModel):
    """The answer to a key without memory:read (docs/permissions.md): what its call changed, never the
    rest of the memory (the text a metadata-only PATCH kept, or an archived memory's text, is a read)."""

    id: str
    version: int
    status: Status | None = Field(default=None, exclude_if=lambda v: v is None, description="When the call could set it (status, edit_request, DELETE).")
    content: str | None = Field(default=None, exclude_if=lambda v: v is None, description="When the call replaced the whole text.")
    metadata: dict[str, Any] | None = Field(default=None, exclude_if=lambda v: v is None, description="When the call set it.")
    applied: list[str] = Field(default_factory=list, description="What the call changed, one line per change.")
    scope: dict[str, str] = Field(description=SCOPE_WRITTEN)


@router.patch("/memories/{memory_id}", response_model=UpdatedMemory | ChangedMemory)
def update_memory(memory_id: str, body: UpdateMemory, caller: Caller, service: Memories,
                  idempotency_key: IdempotencyKey = None) -> UpdatedMemory | ChangedMemory:
    """The updated memory; to a key without memory:read only its id, version, what the body set and the applied lines."""
    command = EditCommand(raw_text=body.content, edit_request=body.edit_request, metadata=body.metadata, status=body.status)
    revision = service.revise(caller, memory_id, command, idempotency_key=idempotency_key)
    memory = revision.memory
    if not may_read(caller):
        return ChangedMemory(id=memory.id, version=memory.version, applied=revision.applied,
                             status=memory.status if body.status is not None or body.edit_request is not None else None,
                             content=memory.raw if body.content is not None else None,
                             metadata=memory.metadata if body.metadata is not None else None,
                             scope=written_scope(memory.namespace))
    return UpdatedMemory(**written(memory).model_dump(), applied=revision.applied)


@router.delete("/memories/{memory_id}", response_model=WrittenMemory | ChangedMemory | ErasureReceipt)
def delete_memory(
    memory_id: str, caller: Caller, service: Memories, container: Annotated[ServiceFacade, Depends(services)],
    hard: Annotated[bool, Query(description="true: erase permanently (GDPR), answering with a receipt.")] = False,
) -> WrittenMemory | ChangedMemory | ErasureReceipt:
    """Archive (the memory; to a key without memory:read only its id, version and status), or erase with hard=true."""
    if hard:
        return container.erasure.erase_memory(caller, memory_id)
    archived = service.archive(caller, memory_id)
    if not may_read(caller):
        return ChangedMemory(id=archived.id, version=archived.version, status=archived.status,
                             scope=written_scope(archived.namespace))
    return written(archived)


@router.post("/memories/search", response_model=SearchResults)
def search_memories(body: SearchMemories, caller: Caller, service: Memories) -> SearchResults:
    command = RetrieveCommand(
        query=body.query, order="relevance", user_id=user_filter(caller, body.user_id), agent_id=body.agent_id,
        group_id=body.group_id, top_k=body.top_k, threshold=body.threshold, mode=body.mode, author=body.author,
        now=body.now,
    )
    hits = service.search(caller, command)
    return SearchResults(
        results=[memory_view(h.memory, score=h.score, explain=h.components if body.explain else None) for h in hits],
        scope=scope_view(service, caller, command, body.author),
    )


@router.get("/status")
def enrichment_status(
    caller: Caller, response: Response, status: Annotated[StatusService, Depends(status_service)]
) -> dict[str, Any]:
    response.headers["cache-control"] = "no-store"
    # Queue-wide depths count every tenant's messages: operators see them in the CLI, not here.
    return status.read(caller).model_dump(exclude_none=True)
