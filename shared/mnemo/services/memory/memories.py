"""Capture, read, search, edit and archive memories: the one service every surface calls."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from mnemo.domain.commands import CaptureCommand, EditCommand, RetrieveCommand
from mnemo.domain.edits import EditPlan, Revision, SetStatus, apply_plan
from mnemo.domain.graph import Fact, FactStatus, Link
from mnemo.domain.limits import check_metadata, check_text
from mnemo.domain.models import (
    Activity,
    Enrichment,
    EnrichmentState,
    Memory,
    Page,
    Principal,
    ScoredMemory,
    Status,
    content_hash,
    normalize_text,
)
from mnemo.domain.namespace import NamespaceFilter
from mnemo.domain.timestamps import utcnow
from mnemo.errors import (
    ConflictError,
    DependencyError,
    NotFoundError,
    UnsupportedEditError,
    ValidationFailed,
    retry_on_conflict,
)
from mnemo.ports import (
    BrowseQuery,
    EditInterpreter,
    Embedder,
    EnrichmentQueue,
    EnrichmentTask,
    FactStore,
    GraphStore,
    MemoryStore,
    Reranker,
    SearchIndex,
)
from mnemo.services.erasure.user_fence import Admission, WriteFence
from mnemo.services.memory import idempotency
from mnemo.services.memory.search import MemorySearch, SearchHits
from mnemo.services.tenancy.metering import Meter
from mnemo.services.tenancy.permissions import Operation, authorize, blind_plan, status_change

logger = logging.getLogger(__name__)

_STATUS_ACTIONS = {Status.COMPLETED: "completed", Status.ARCHIVED: "archived", Status.OPEN: "reopened"}


def _within_limits(text: str) -> str:
    """An edit's resulting text obeys the same limits as a capture (an `append:` cannot grow a memory
    past 8 KB): one validation path for every write."""
    try:
        return check_text(text)
    except ValueError as exc:
        raise ValidationFailed(f"the edited text {exc}; shorten it or replace it with raw_text", fields=("raw_text",)) from exc


def new_memory(principal: Principal, command: CaptureCommand, memory_id: str, *, now: datetime,
               status: Status = Status.OPEN, source_id: str | None = None) -> Memory:
    """A memory as a capture (or an import, which sets its status and source) first stores it."""
    return Memory(
        id=memory_id, tenant=principal.tenant, user_id=principal.user_for(command.user_id),
        agent_id=command.agent_id or command.author or principal.key_prefix, group_id=command.group_id,
        author=command.author_kind, raw=command.raw, normalized_text=normalize_text(command.raw), status=status,
        metadata=command.metadata, confidence=command.confidence, extract=command.extract,
        captured_at=command.captured_at or now, created_at=now, updated_at=now, content_hash=content_hash(command.raw),
        enrichment=Enrichment(queued_at=now), source_id=source_id, conversation_id=command.conversation_id,
    )


class MemoryService:
    def __init__(
        self,
        store: MemoryStore,
        queue: EnrichmentQueue,
        index: SearchIndex,
        *,
        embedder: Embedder | None = None,
        graph: GraphStore | None = None,
        facts: FactStore | None = None,
        interpreter: EditInterpreter | None = None,
        reranker: Reranker | None = None,
        clock: Callable[[], datetime] = utcnow,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        meter: Meter | None = None,
        fence: WriteFence | None = None,
    ) -> None:
        self._store = store
        self._fence = fence  # a user's erasure against captures in flight (services/erasure/user_fence.py)
        self._meter = meter or Meter()  # counts writes and retrievals against the tenant's month
        self._queue = queue
        # Deferred by the composition root (adapters/lazy.py): only searches build the index client and the model.
        self._index = index
        self._embedder = embedder
        self._graph = graph
        self._facts = facts
        self._interpreter = interpreter  # deferred too: only edit requests build an LLM client
        self._reranker = reranker  # None: no reranking stage (the default on AWS)
        self._clock = clock
        self._new_id = new_id

    # -- tier 1: one DynamoDB write, one SQS send -------------------------------------------
    def capture(self, principal: Principal, command: CaptureCommand, *, idempotency_key: str | None = None,
                memory_id: str | None = None) -> Memory:
        """Persist, then enqueue. Idempotent: a retry of the same request (same key, or botocore
        replaying the put) answers with the stored memory; see services/memory/idempotency.py. `memory_id`:
        a caller-derived id (imports derive it from the source id, so a rerun conflicts instead of
        duplicating); default a fresh uuid4."""
        authorize(principal, Operation.CAPTURE)
        key = idempotency.check_key(idempotency_key)
        now = self._clock()
        keyed = idempotency.memory_id_for(principal.tenant, principal.key_prefix, key) if key and memory_id is None else None
        memory = new_memory(principal, command, memory_id or keyed or self._new_id(), now=now)
        explicit_time = command.captured_at is not None
        if keyed is not None and (first := self._store.get(principal.tenant, keyed)) is not None:
            # A replay is looked up before metering: it answers as the first request did, even at the cap.
            return self._replayed(first, memory, explicit_time=explicit_time)
        admission = self._fence.admit(principal.tenant, memory.user_id) if self._fence else None
        self._meter.charge(principal, Operation.CAPTURE)
        created = Activity(memory_id=memory.id, version=1, action="created", actor=principal.key_prefix, at=now,
                           detail="captured", request_key=key)
        try:
            self._store.put_new(memory, created)
        except ConflictError as exc:
            if memory_id is not None:  # the caller chose the id: its existing is the answer (an import's rerun)
                raise ConflictError(f"memory {memory_id} already exists") from exc
            stored = self._store.get(principal.tenant, memory.id)
            if stored is None:
                raise ConflictError(idempotency.REUSED) from exc
            # an earlier attempt's answer was lost: its answer, held to the erasure fence as a first write is
            return self._replayed(stored, memory, explicit_time=explicit_time, admission=admission)
        if admission is not None:  # after the write landed: an erasure of the user since admission erases it
            self._fence.settle(admission, [memory])  # type: ignore[union-attr]
        self._enqueue(memory)
        return memory

    def _replayed(self, stored: Memory, attempt: Memory, *, explicit_time: bool, admission: Admission | None = None) -> Memory:
        """The answer to a repeat of the capture that stored `stored`: that memory (queued again if its
        enrichment is still pending: the first attempt may have died before its send), or 409 when the
        key was used for a different request. `admission`: this attempt's, when its own put found the
        memory (the first attempt's answer was lost, perhaps before it checked the erasure fence)."""
        if not idempotency.same_capture(stored, attempt, explicit_time=explicit_time):
            raise ConflictError(idempotency.REUSED)
        if admission is not None:
            self._fence.settle(admission, [stored])  # type: ignore[union-attr]
        if stored.enrichment.state == EnrichmentState.PENDING:
            self._enqueue(stored)
        return stored

    def get(self, principal: Principal, memory_id: str, *, owner: str | None = None) -> Memory:
        """`owner`: the user the caller named (r3's user_id); another user's memory is not found."""
        authorize(principal, Operation.READ)
        self._meter.charge(principal, Operation.READ)
        return self._load(principal, memory_id, owner)

    def _load(self, principal: Principal, memory_id: str, owner: str | None = None) -> Memory:
        """The caller's tenant's memory, for an operation whose permission was already checked.
        `owner`: the user the caller named (r3's user_id); another user's memory is not there either."""
        memory = self._store.get(principal.tenant, memory_id)
        if memory is None or not principal.sees(memory.user_id) or owner not in (None, memory.user_id):
            raise NotFoundError(f"memory {memory_id} not found", subject="memory", ident=memory_id)
        return memory

    def history(self, principal: Principal, memory_id: str) -> list[Activity]:
        self.get(principal, memory_id)
        return self._store.history(principal.tenant, memory_id)

    def detail(self, principal: Principal, memory_id: str, *, include_inactive: bool = False,
               ) -> tuple[Memory, list[Link], list[Fact]]:
        """The memory with its links and the facts it supports (derived by enrichment): the active
        ones, or with `include_inactive` also those a later fact invalidated or a caller retracted."""
        memory = self.get(principal, memory_id)
        links = self._graph.links(principal.tenant, memory_id) if self._graph is not None else []
        facts = self._facts.for_memory(principal.tenant, memory_id) if self._facts is not None else []
        return memory, links, [f for f in facts if include_inactive or f.status == FactStatus.ACTIVE]

    # -- reads ---------------------------------------------------------------------------
    def scope(self, principal: Principal, command: RetrieveCommand) -> NamespaceFilter:
        """The namespace a read covers: the key's tenant, then the levels the command pins. A user_id the
        caller did not give (the command's "default") is the key's own user for a user-bound key."""
        named = "user_id" in command.model_fields_set
        return NamespaceFilter(
            tenant=principal.tenant, user_id=principal.confine(command.user_id) if named else principal.user_for(None),
            agent_id=command.agent_id,
            group_id=command.group_id,
        )

    def browse(self, principal: Principal, command: RetrieveCommand, *, operation: Operation = Operation.BROWSE) -> Page:
        """A page of memories. `operation`: the one the page serves (applying a deduplication reads the
        user's memories to archive repeats: `memory:delete`, the table's one permission for it)."""
        authorize(principal, operation)
        self._meter.charge(principal, Operation.BROWSE)
        return self._store.browse(
            BrowseQuery(
                scope=self.scope(principal, command),
                statuses=command.statuses,
                authors=command.authors,
                limit=command.top_k,
                cursor=command.cursor,
            )
        )

    def search(self, principal: Principal, command: RetrieveCommand, *, context: str | None = None) -> list[ScoredMemory]:
        """The index finds candidates; ranking (fusion, graph expansion, threshold) happens in
        services/memory/search.py, with the store deciding what is visible (the index is derived and
        may lag it). `context`: what the caller is trying to do (Thrindex `task_context`), blended
        into the query."""
        return self.search_hits(principal, command, context=context).results

    def search_hits(self, principal: Principal, command: RetrieveCommand, *, context: str | None = None) -> SearchHits:
        """`search`, with the best hits below the threshold beside the results (`SearchHits.weaker`)."""
        authorize(principal, Operation.SEARCH)
        assert command.query is not None
        self._meter.charge(principal, Operation.SEARCH)
        search = MemorySearch(self._store, self._index, embedder=self._embedder, reranker=self._reranker, clock=self._clock)
        return search.search(principal, command, self.scope(principal, command), context=context)

    # -- changes -------------------------------------------------------------------------
    def edit(self, principal: Principal, memory_id: str, command: EditCommand, *, idempotency_key: str | None = None,
             expected_version: int | None = None, owner: str | None = None) -> Memory:
        return self.revise(principal, memory_id, command, idempotency_key=idempotency_key,
                           expected_version=expected_version, owner=owner).memory

    def revise(self, principal: Principal, memory_id: str, command: EditCommand, *,
               idempotency_key: str | None = None, expected_version: int | None = None, owner: str | None = None) -> Revision:
        """Apply an edit and say what was applied. An edit request is interpreted against the current
        text (once per distinct text, however often a concurrent write makes us re-read) and applied
        whole or not at all; a keyed request already applied is not applied twice.
        `expected_version`: the edit was computed from that version (deduplication's metadata is): it
        applies only to it, once, and a memory that moved on raises ConflictError (never re-applied
        to a newer version, which would overwrite what was written in between). `owner`: the user the
        caller says the memory is of (another user's is not found); the edit needs only `memory:write`."""
        authorize(principal, Operation.EDIT)
        key = idempotency.check_key(idempotency_key)
        if key is not None:  # a replay is looked up before metering: it answers as the first did, even at the cap
            current = self._load(principal, memory_id, owner)
            if idempotency.applied(self._store.history(principal.tenant, memory_id), key, principal.key_prefix):
                return Revision(current, [], changed=False)
        self._meter.charge(principal, Operation.EDIT)
        plans: dict[str, EditPlan] = {}
        if expected_version is not None:
            return self._edit(principal, memory_id, command, plans, key, expected_version, owner)
        return retry_on_conflict(lambda: self._edit(principal, memory_id, command, plans, key, owner=owner))

    def _plan(self, request: str, text: str, plans: dict[str, EditPlan]) -> EditPlan:
        if self._interpreter is None:
            raise UnsupportedEditError("edit_request: no edit interpreter is configured; pass raw_text instead")
        if text not in plans:
            plans[text] = self._interpreter.interpret(request, text)
        return plans[text]

    def _edit(self, principal: Principal, memory_id: str, command: EditCommand, plans: dict[str, EditPlan],
              key: str | None = None, expected_version: int | None = None, owner: str | None = None) -> Revision:
        current = self._load(principal, memory_id, owner)
        if expected_version is not None and current.version != expected_version:
            raise ConflictError(f"memory {memory_id} is at version {current.version}, not the {expected_version} "
                                "this change was computed from")
        if key is not None and idempotency.applied(self._store.history(principal.tenant, memory_id), key, principal.key_prefix):
            return Revision(current, [], changed=False)  # applied already (its answer was lost): not twice
        text, status, action, detail, applied = current.raw, current.status, "edited", "", list[str]()
        if command.raw_text is not None:
            text, detail = command.raw_text, "text replaced"
            applied.append("replaced the whole text (raw_text)")
        elif command.edit_request:
            plan = blind_plan(principal, command.edit_request, self._plan(command.edit_request, current.raw, plans))
            outcome = apply_plan(current.raw, current.status, plan, help_text=self._interpreter.help)  # type: ignore[union-attr]
            asked = {op.status for op in plan.operations if isinstance(op, SetStatus)}
            if command.status is not None and asked and asked != {command.status}:
                raise ValidationFailed("status and edit_request: they ask for different statuses; give one of them")
            text, status, applied = outcome.text, outcome.status, outcome.applied
            detail = "; ".join(applied)[:200]
        if command.status is not None and command.status != status:
            applied.append(f"status {status.value} -> {command.status.value}")
            status = command.status
        metadata = current.metadata if command.metadata is None else command.metadata
        if metadata != current.metadata:
            applied.append("replaced the metadata")
        if status != current.status:
            action = _STATUS_ACTIONS[status]
            extra = status_change(current.status, status)
            if extra is not None:
                authorize(principal, extra)
        if text != current.raw:
            text = _within_limits(text)
        if text == current.raw and status == current.status and metadata == current.metadata:
            return Revision(current, applied, changed=False)  # already in the requested state: nothing to write
        updated = self._commit(principal, current, raw=text, status=status, metadata=metadata, action=action,
                               detail=detail, request_key=key)
        return Revision(updated, applied, changed=True)

    def archive(self, principal: Principal, memory_id: str, *, metadata: dict[str, Any] | None = None,
                expected_version: int | None = None, detail: str = "delete", duplicate_of: str | None = None) -> Memory:
        """Archive a memory: a versioned status change, never metered (docs/tenancy.md "What counts":
        deletion stays possible at the write cap), whoever archives (a DELETE, a profile's delete tool,
        deduplication). `metadata` replaces the metadata in the same write (deduplication adds
        `duplicate_of` to the metadata it read), so with it `expected_version` is the version it was
        computed from: the archive applies only to that version, once, and a memory that moved on
        raises ConflictError (never re-applied over a newer write). `duplicate_of`: the kept memory,
        which gets a pointer to this one in the same write (its erasure follows it to take
        `duplicate_of` off); NotFoundError naming it if it is gone or being erased."""
        authorize(principal, Operation.ARCHIVE)
        changes: dict[str, Any] = {"status": Status.ARCHIVED}
        if metadata is not None:
            changes["metadata"] = check_metadata(metadata)

        def attempt() -> Memory:
            current = self._load(principal, memory_id)
            if expected_version is not None and current.version != expected_version:
                raise ConflictError(f"memory {memory_id} is at version {current.version}, not the {expected_version} "
                                    "this change was computed from")
            if current.status == Status.ARCHIVED:
                return current
            return self._commit(principal, current, action="archived", detail=detail, duplicate_of=duplicate_of, **changes)

        return attempt() if expected_version is not None else retry_on_conflict(attempt)

    def _commit(self, principal: Principal, current: Memory, *, action: str, detail: str, request_key: str | None = None,
                duplicate_of: str | None = None, **changes: object) -> Memory:
        now = self._clock()
        raw = str(changes.get("raw", current.raw))
        updated = current.model_copy(
            update={
                **changes,
                "normalized_text": normalize_text(raw),
                "content_hash": content_hash(raw),
                "version": current.version + 1,
                "updated_at": now,
                "enrichment": Enrichment(queued_at=now),  # re-embed, re-link, re-index the new version
            }
        )
        activity = Activity(
            memory_id=current.id, version=updated.version, action=action, actor=principal.key_prefix, at=now, detail=detail,
            request_key=request_key,
        )
        self._store.save(updated, expected_version=current.version, activity=activity, duplicate_of=duplicate_of)
        self._enqueue(updated)
        return updated

    def _enqueue(self, memory: Memory) -> None:
        """Persisted is accepted: if the send fails, the reconciler re-enqueues the pending memory."""
        try:
            self._queue.send(EnrichmentTask(tenant=memory.tenant, memory_id=memory.id, version=memory.version))
        except DependencyError:
            logger.warning("enqueue failed; the reconciler will retry", extra={"memory_id": memory.id})
