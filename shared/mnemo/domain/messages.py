"""What rides the worker queue (docs/architecture.md "Jobs"): one union of every message, told apart
by its `task` field, parsed once by the worker.

| message | `task` | sent by |
|---|---|---|
| `EnrichmentTask` | none on the wire (`"enrichment"` is accepted too) | every write that needs tier-2 enrichment |
| `JobStep` | `"job"` | import, mem0 pull and deduplication jobs (domain/jobs.py) |
| `ErasureStep` | `"erasure"` | a user's erasure job (domain/erasure.py) |

Enrichment tasks were the queue's first messages and have never carried a `task`: a body without
one is an enrichment task, so messages in flight across a deploy still parse either way. Anything
else (not JSON, not an object, an unknown `task`, a missing field) fails to parse: a poison message.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Discriminator, Tag, TypeAdapter

from mnemo.domain.erasure import ErasureStep
from mnemo.domain.jobs import JobStep

ENRICHMENT = "enrichment"  # the tag of a body without `task`


class EnrichmentTask(BaseModel):
    """The queue message: which memory at which version needs tier-2 enrichment."""

    tenant: str
    memory_id: str
    version: int
    reindex: bool = False  # re-derive even if already enriched (index rebuilds, model changes)
    # Re-link and re-index an enriched memory from the reading on record: no extractor call, its facts
    # untouched (an erased neighbour's id and words leave its links and document; services/erasure).
    refresh: bool = False


StepMessage = JobStep | ErasureStep  # a message that advances a job by one step (services/jobs/runner.py)


def _task(value: Any) -> str | None:
    """The union's tag: the body's `task`, `enrichment` when it has none; None (a parse error) for a
    body that is not an object or whose `task` is not a string."""
    if isinstance(value, BaseModel):
        task = getattr(value, "task", ENRICHMENT)  # a model: JobStep, ErasureStep or EnrichmentTask (no `task`)
        return task if isinstance(task, str) else None
    if not isinstance(value, dict):
        return None
    task = value.get("task", ENRICHMENT)
    return task if isinstance(task, str) else None


QueueMessage = Annotated[
    Annotated[EnrichmentTask, Tag(ENRICHMENT)] | Annotated[JobStep, Tag("job")] | Annotated[ErasureStep, Tag("erasure")],
    Discriminator(_task),
]

_MESSAGES: TypeAdapter[EnrichmentTask | JobStep | ErasureStep] = TypeAdapter(QueueMessage)


def parse_message(body: str | bytes) -> EnrichmentTask | JobStep | ErasureStep:
    """The message a queue body holds; pydantic's ValidationError when it holds none of them."""
    return _MESSAGES.validate_json(body)
