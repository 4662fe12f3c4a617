"""Capture, read, search, edit and archive memories: the one service every surface calls."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import datetime

from mnemo.domain import scoring
from mnemo.domain.commands import CaptureCommand, EditCommand, RetrieveCommand
from mnemo.domain.edits import SetStatus, apply_text_edit, parse_edit_request
from mnemo.domain.graph import Fact, FactStatus, Link
from mnemo.domain.limits import check_text
from mnemo.domain.models import (
    Activity,
    Enrichment,
    EnrichmentState,
    Memory,
    Page,
    Permission,
    Principal,
    ScoredMemory,
    Status,
    content_hash,
    normalize_text,
    utcnow,
)
from mnemo.domain.namespace import NamespaceFilter
from mnemo.domain.scoring import RECIPES
from mnemo.errors import ConflictError, DependencyError, ForbiddenError, NotFoundError, ValidationFailed
from mnemo.ports import (
    BrowseQuery,
    Embedder,
    EnrichmentQueue,
    EnrichmentTask,
    FactStore,
    GraphStore,
    MemoryStore,
    SearchIndex,
    SearchQuery,
)
from mnemo.services import idempotency
from mnemo.services.permissions import Operation, authorize, status_change

logger = logging.getLogger(__name__)

_STATUS_ACTIONS = {Status.COMPLETED: "completed", Status.ARCHIVED: "archived", Status.OPEN: "reopened"}


def _retry_on_conflict[T](attempt: Callable[[], T], tries: int = 3) -> T:
    """Re-read and re-apply when a concurrent write (often the enrichment worker) moved the item on."""
    for _ in range(tries - 1):
        try:
            return attempt()
        except ConflictError:
            continue
    return attempt()


def _within_limits(text: str) -> str:
    """An edit's resulting text obeys the same limits as a capture (an `append:` cannot grow a memory
    past 8 KB): one validation path for every write."""
    try:
        return check_text(text)
    except ValueError as exc:
        raise ValidationFailed(f"the edited text {exc}; shorten it or replace it with raw_text") from exc


def require(principal: Principal, permission: Permission) -> None:
    if not principal.allows(permission):
        raise ForbiddenError(f"this API key lacks the {permission.value!r} scope")


class MemoryService:
    def __init__(
        self,
        store: MemoryStore,
        queue: EnrichmentQueue,
        index: Callable[[], SearchIndex],
        *,
        embedder: Callable[[], Embedder] | None = None,
        graph: GraphStore | None = None,
        facts: FactStore | None = None,
        clock: Callable[[], datetime] = utcnow,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self._store = store
        self._queue = queue
        # Factories: only searches pay for building the index client and loading the model.
        self._index = index
        self._embedder = embedder
        self._graph = graph
        self._facts = facts
        self._clock = clock
        self._new_id = new_id

    # -- tier 1: one DynamoDB write, one SQS send -------------------------------------------
    def capture(self, principal: Principal, command: CaptureCommand, *, idempotency_key: str | None = None) -> Memory:
        """Persist, then enqueue. Idempotent: a retry of the same request (same key, or botocore
        replaying the put) answers with the stored memory; see services/idempotency.py."""
        authorize(principal, Operation.CAPTURE)
        key = idempotency.check_key(idempotency_key)
        now = self._clock()
        memory = Memory(
            id=idempotency.memory_id_for(principal.tenant, key) if key else self._new_id(),
            tenant=principal.tenant,
            user_id=command.user_id,
            agent_id=command.agent_id or command.author or principal.key_prefix,
            group_id=command.group_id,
            author=command.author_kind,
            raw=command.raw,
            normalized_text=normalize_text(command.raw),
            metadata=command.metadata,
            captured_at=command.captured_at or now,
            created_at=now,
            updated_at=now,
            content_hash=content_hash(command.raw),
            enrichment=Enrichment(queued_at=now),
        )
        created = Activity(memory_id=memory.id, version=1, action="created", actor=principal.key_prefix, at=now,
                           detail="captured", request_key=key)
        try:
            self._store.put_new(memory, created)
        except ConflictError as exc:
            stored = self._store.get(principal.tenant, memory.id)
            if stored is None or not idempotency.same_capture(stored, memory, explicit_time=command.captured_at is not None):
                raise ConflictError("Idempotency-Key: already used for a different request; use a new key per request") from exc
            memory = stored  # stored by an earlier attempt whose answer was lost: success, and make sure it is queued
            if memory.enrichment.state != EnrichmentState.PENDING:
                return memory
        self._enqueue(memory)
        return memory

    def get(self, principal: Principal, memory_id: str) -> Memory:
        authorize(principal, Operation.READ)
        return self._load(principal, memory_id)

    def _load(self, principal: Principal, memory_id: str) -> Memory:
        """The caller's tenant's memory, for an operation whose permission was already checked."""
        memory = self._store.get(principal.tenant, memory_id)
        if memory is None:
            raise NotFoundError(f"thought {memory_id} not found")
        return memory

    def history(self, principal: Principal, memory_id: str) -> list[Activity]:
        self.get(principal, memory_id)
        return self._store.history(principal.tenant, memory_id)

    def detail(self, principal: Principal, memory_id: str) -> tuple[Memory, list[Link], list[Fact]]:
        """The memory with its links and the active facts it supports (derived by enrichment)."""
        memory = self.get(principal, memory_id)
        links = self._graph.links(principal.tenant, memory_id) if self._graph is not None else []
        facts = self._facts.for_memory(principal.tenant, memory_id) if self._facts is not None else []
        return memory, links, [f for f in facts if f.status == FactStatus.ACTIVE]

    # -- reads ---------------------------------------------------------------------------
    def scope(self, principal: Principal, command: RetrieveCommand) -> NamespaceFilter:
        """The namespace a read covers: the key's tenant, then the levels the command pins."""
        return NamespaceFilter(
            tenant=principal.tenant, user_id=command.user_id, agent_id=command.agent_id, group_id=command.group_id
        )

    def browse(self, principal: Principal, command: RetrieveCommand) -> Page:
        authorize(principal, Operation.BROWSE)
        return self._store.browse(
            BrowseQuery(
                scope=self.scope(principal, command),
                statuses=command.statuses,
                authors=command.authors,
                limit=command.top_k,
                cursor=command.cursor,
            )
        )

    def search(self, principal: Principal, command: RetrieveCommand) -> list[ScoredMemory]:
        """The index finds candidates; ranking (fusion, graph expansion, threshold) happens here,
        with the store deciding what is visible (the index is derived and may lag it)."""
        authorize(principal, Operation.SEARCH)
        assert command.query is not None
        recipe = RECIPES[command.mode]
        scope = self.scope(principal, command)
        vector = self._embedder().embed([command.query])[0] if self._embedder is not None else None
        candidates = self._index().search(
            SearchQuery(scope=scope, text=command.query, vector=vector, authors=command.authors,
                        statuses=command.statuses, top_k=command.top_k)
        )
        ranked = scoring.score(candidates, now=self._clock(), weights=recipe.weights)
        linked = scoring.neighbours(ranked, candidates, recipe.weights) if recipe.expand_graph else set()
        # One batch read hydrates the best hits (a few spare for ones the store no longer shows) and
        # every neighbour expansion may score, so neighbours are checked before they get a score.
        wanted = [r.memory_id for r in ranked[: command.top_k + 10]] + sorted(linked)
        memories = {m.id: m for m in self._store.get_many(principal.tenant, wanted)}
        visible = {
            mid for mid, m in memories.items()
            if scope.covers(m.namespace) and m.status in command.statuses and m.author in command.authors
        }
        if recipe.expand_graph:
            ranked = scoring.expand(ranked, candidates, admitted=visible & linked, weights=recipe.weights)
        results = [
            ScoredMemory(memory=memories[r.memory_id], score=r.score, components=r.components)
            for r in ranked
            if r.memory_id in visible and (command.threshold is None or r.score >= command.threshold)
        ]
        return results[: command.top_k]

    # -- changes -------------------------------------------------------------------------
    def edit(self, principal: Principal, memory_id: str, command: EditCommand, *, idempotency_key: str | None = None) -> Memory:
        authorize(principal, Operation.EDIT)
        key = idempotency.check_key(idempotency_key)
        return _retry_on_conflict(lambda: self._edit(principal, memory_id, command, key))

    def _edit(self, principal: Principal, memory_id: str, command: EditCommand, key: str | None = None) -> Memory:
        current = self._load(principal, memory_id)
        if key is not None and idempotency.applied(self._store.history(principal.tenant, memory_id), key):
            return current  # this request was applied already (its answer was lost): do not apply it twice
        text, status, action, detail = current.raw, current.status, "edited", ""
        if command.raw_text is not None:
            text, detail = command.raw_text, "text replaced"
        elif command.edit_request:
            parsed = parse_edit_request(command.edit_request)
            if isinstance(parsed, SetStatus):
                status = parsed.status
            else:
                text = apply_text_edit(current.raw, parsed)
            detail = command.edit_request.strip()[:200]
        if command.status is not None:
            status = command.status
        metadata = current.metadata if command.metadata is None else command.metadata
        if status != current.status:
            action = _STATUS_ACTIONS[status]
            extra = status_change(current.status, status)
            if extra is not None:
                authorize(principal, extra)
        if text != current.raw:
            text = _within_limits(text)
        if text == current.raw and status == current.status and metadata == current.metadata:
            return current  # already in the requested state: nothing to write
        return self._commit(principal, current, raw=text, status=status, metadata=metadata, action=action, detail=detail,
                            request_key=key)

    def archive(self, principal: Principal, memory_id: str) -> Memory:
        authorize(principal, Operation.ARCHIVE)

        def attempt() -> Memory:
            current = self._load(principal, memory_id)
            if current.status == Status.ARCHIVED:
                return current
            return self._commit(principal, current, status=Status.ARCHIVED, action="archived", detail="delete")

        return _retry_on_conflict(attempt)

    def _commit(self, principal: Principal, current: Memory, *, action: str, detail: str, request_key: str | None = None,
                **changes: object) -> Memory:
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
        self._store.save(updated, expected_version=current.version, activity=activity)
        self._enqueue(updated)
        return updated

    def _enqueue(self, memory: Memory) -> None:
        """Persisted is accepted: if the send fails, the reconciler re-enqueues the pending memory."""
        try:
            self._queue.send(EnrichmentTask(tenant=memory.tenant, memory_id=memory.id, version=memory.version))
        except DependencyError:
            logger.warning("enqueue failed; the reconciler will retry", extra={"memory_id": memory.id})
