"""Tier-2 enrichment: extract, embed (batched across the SQS batch), index, mark enriched.

At-least-once safe: a task for an outdated version is skipped, every write is conditional on the
version it read, and repeating a task rewrites the same derived state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from mnemo.domain.extraction import Extraction
from mnemo.domain.models import Enrichment, EnrichmentState, Memory, Status, utcnow
from mnemo.errors import ConflictError, MnemoError
from mnemo.ports import Embedder, EnrichmentTask, Extractor, IndexDocument, MemoryStore, SearchIndex

logger = logging.getLogger(__name__)


@dataclass
class Prepared:
    """One task after the batch-wide steps; `error` is set when those failed for this task."""

    task: EnrichmentTask
    memory: Memory | None = None
    extraction: Extraction | None = None
    vector: list[float] | None = None
    error: Exception | None = None
    skip_reason: str | None = None


class EnrichmentService:
    def __init__(
        self,
        store: MemoryStore,
        index: Callable[[], SearchIndex],
        embedder: Embedder,
        extractor: Extractor,
        *,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._store = store
        self._index = index
        self._embedder = embedder
        self._extractor = extractor
        self._clock = clock

    def prepare(self, tasks: Sequence[EnrichmentTask]) -> list[Prepared]:
        """Load, extract and embed a whole batch; one embedding call for all live memories."""
        prepared = [Prepared(task=t) for t in tasks]
        for item in prepared:
            try:
                item.memory = self._store.get(item.task.tenant, item.task.memory_id)
                if item.memory is None:
                    item.skip_reason = "memory no longer exists"
                elif item.memory.version != item.task.version:
                    item.skip_reason = f"stale task (v{item.task.version}, memory at v{item.memory.version})"
                elif item.memory.enrichment.state == EnrichmentState.ENRICHED:
                    item.skip_reason = "already enriched"  # redelivery after success
                else:
                    item.extraction = self._extractor.extract(item.memory.raw)
            except Exception as exc:  # noqa: BLE001 - kept per task, re-raised by complete()
                item.error = exc
        live = [p for p in prepared if p.extraction is not None and p.memory and p.memory.status != Status.ARCHIVED]
        if live:
            try:
                vectors = self._embedder.embed([p.extraction.normalized_text for p in live])  # type: ignore[union-attr]
                for item, vector in zip(live, vectors, strict=True):
                    item.vector = vector
            except Exception as exc:  # noqa: BLE001 - the embedder failing fails every live task
                for item in live:
                    item.error = exc
        return prepared

    def complete(self, item: Prepared) -> None:
        """Index and mark enriched; raises (so the message is retried) if any step failed."""
        if item.error is not None:
            raise item.error
        if item.skip_reason is not None:
            logger.info("enrichment skipped", extra={"memory_id": item.task.memory_id, "reason": item.skip_reason})
            return
        memory, extraction = item.memory, item.extraction
        assert memory is not None and extraction is not None
        index = self._index()
        if memory.status == Status.ARCHIVED:
            index.delete(memory.tenant, memory.id)
        else:
            index.upsert([self._document(memory, extraction, item.vector)])
        enriched = memory.model_copy(
            update={
                "category": extraction.category,
                "entities": [e.name for e in extraction.entities],
                "importance": extraction.importance,
                "enrichment": Enrichment(
                    state=EnrichmentState.ENRICHED, attempts=memory.enrichment.attempts + 1, model_id=self._embedder.model_id
                ),
            }
        )
        try:
            self._store.save(enriched, expected_version=memory.version)
        except ConflictError:
            logger.info("memory changed during enrichment; the newer version has its own task", extra={"memory_id": memory.id})

    def record_failure(self, task: EnrichmentTask, error: Exception, *, final: bool) -> None:
        """Make a failure visible on the memory: `failed` with the reason once retries are exhausted."""
        memory = self._store.get(task.tenant, task.memory_id)
        if memory is None or memory.version != task.version or memory.enrichment.state == EnrichmentState.ENRICHED:
            return
        reason = error.message if isinstance(error, MnemoError) else f"{type(error).__name__}: {error}"[:500]
        state = EnrichmentState.FAILED if final else EnrichmentState.PENDING
        updated = memory.model_copy(
            update={
                "enrichment": Enrichment(state=state, error=reason, attempts=memory.enrichment.attempts + 1),
                "updated_at": memory.updated_at,
            }
        )
        try:
            self._store.save(updated, expected_version=memory.version)
        except ConflictError:
            pass

    @staticmethod
    def _document(memory: Memory, extraction: Extraction, vector: list[float] | None) -> IndexDocument:
        return IndexDocument(
            tenant=memory.tenant,
            memory_id=memory.id,
            user_id=memory.user_id,
            agent_id=memory.agent_id,
            group_id=memory.group_id,
            author=memory.author,
            status=memory.status,
            text=extraction.normalized_text,
            category=extraction.category,
            entities=[e.name for e in extraction.entities],
            captured_at=memory.captured_at,
            created_at=memory.created_at,
            importance=extraction.importance,
            vector=vector,
        )
