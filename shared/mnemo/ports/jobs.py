"""Queues and jobs: the enrichment queue, erasure marks, fences and jobs, import jobs and their sources."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel

from mnemo.domain.erasure import ErasureJob, UserFence
from mnemo.domain.jobs import Job
from mnemo.domain.messages import (  # EnrichmentTask was defined here: importers keep the path
    EnrichmentTask,
    StepMessage,
)


class EnrichmentQueue(Protocol):
    def send(self, task: EnrichmentTask) -> None: ...

    def send_many(self, tasks: Sequence[EnrichmentTask]) -> list[EnrichmentTask]:
        """Send in SendMessageBatch calls of 10; returns the tasks SQS did not accept (the caller
        leaves them to the reconciler, as after a failed `send`)."""

    def depths(self) -> dict[str, int]:
        """Queue-wide counts `queued`, `in_flight`, `dead_letters` (every tenant's: operators only)."""


class DeadLetters(Protocol):
    def move_back(self, limit: int, before_send: Callable[[EnrichmentTask], None]) -> int:
        """Move up to `limit` DLQ messages to the main queue, calling `before_send` on each task
        before it is sent (so its memory is reset before a worker can pick it up); returns the count."""


class ErasureMarks(Protocol):
    """Tombstones of erased memories: written before an erasure deletes anything, so work already
    running for the memory (an enrichment) can see it was erased and undo what it wrote."""

    def mark(self, tenant: str, memory_id: str, at: datetime) -> None: ...

    def erased(self, tenant: str, memory_id: str) -> bool: ...

    def erased_among(self, tenant: str, memory_ids: Sequence[str]) -> set[str]:
        """Which of `memory_ids` have a tombstone: one batch read (the worker checks its whole batch)."""


class ErasureFences(Protocol):
    """One fence per (tenant, user), raised before a user's erasure lists anything and lowered when it
    ends; every write for the user reads it (strongly consistent) after it lands."""

    def raise_fence(self, tenant: str, user_id: str, job_id: str, at: datetime) -> None:
        """Mark erasure `job_id` (requested `at`) the user's latest and running."""

    def lower(self, tenant: str, user_id: str, job_id: str, at: datetime, *, earlier_too: bool) -> None:
        """The erasure ended: it stops running; with `earlier_too` (it completed, so it erased all an
        earlier one would have) so do the user's erasures requested before it."""

    def read(self, tenant: str, user_id: str) -> UserFence: ...


class ErasureJobStore(Protocol):
    """Erasure jobs, keyed by tenant and job id. Every write is conditional on `ErasureJob.revision`
    (ConflictError when another writer moved the job on) and returns the job as stored."""

    def create(self, job: ErasureJob) -> None: ...

    def get(self, tenant: str, job_id: str, *, erased_ids: bool = True) -> ErasureJob | None:
        """The job; with `erased_ids`, its `memory_ids` filled in (every memory it has erased so far)."""

    def save(self, job: ErasureJob) -> ErasureJob: ...

    def record_erased(self, job: ErasureJob, memory_id: str) -> ErasureJob:
        """Save `job` (its counts already include the memory) and list `memory_id` as erased, in one
        transaction: a memory is counted exactly once, however often its message is delivered."""


class JobListing(BaseModel):
    """One page of a tenant's job listing, newest first: (job id, kind) pairs (kind `user`: an erasure)."""

    jobs: list[tuple[str, str]]
    next_cursor: str | None = None


class JobStore(Protocol):
    """Import, mem0 and deduplicate jobs beside erasure jobs (same keys: tenant and job id). Writes of
    the job are conditional on `Job.revision` (ConflictError when another writer moved it on)."""

    def create(self, job: Job, parts: Sequence[list[Any]]) -> None:
        """Store the job queued with its chunks (job-part items, each under DynamoDB's 400 KB)."""

    def write_parts(self, tenant: str, job_id: str, parts: Sequence[list[Any]], first: int = 0) -> None:
        """Store chunks as parts `first`, `first + 1`, ... (a rewrite of the same parts replaces them)."""

    def get(self, tenant: str, job_id: str) -> Job | None:
        """The job, or None (also for an erasure job: that has its own store)."""

    def part(self, tenant: str, job_id: str, index: int) -> list[object]: ...

    def drop_parts(self, tenant: str, job_id: str, count: int) -> None:
        """Delete parts 0..count-1 now (an import stopped by its user's erasure: they hold the user's text)."""

    def of_user(self, tenant: str, user_id: str) -> list[str]:
        """Every job created for the user (`Job.owner`) still stored: the user's job listing, one Query."""

    def erase(self, tenant: str, job_id: str, user_id: str, *, whole: bool) -> int:
        """Delete the job's parts now; with `whole`, its record and its listing item too. How many items."""

    def list_every_job(self) -> int:
        """Write every job's user listing item (idempotent; a Scan: the admin reindex backfills jobs
        created before the listing existed). Returns how many jobs it listed."""

    def save(self, job: Job) -> Job: ...

    def listing(self, tenant: str, kinds: Sequence[str], *, limit: int, after: str | None = None) -> JobListing:
        """The tenant's jobs of these kinds, newest first, erasures (kind `user`) too: one Query of at most
        `limit` rows, so a page may hold fewer (rows of other kinds are filtered out after the limit)."""


class JobQueue(Protocol):
    """The worker queue as jobs use it: every kind's steps ride it (domain/messages.py)."""

    def send_step(self, step: StepMessage, delay_seconds: int = 0) -> None:
        """Queue the step, delivered no sooner than `delay_seconds` from now (at most 900)."""


class Mem0Page(BaseModel):
    items: list[dict[str, object]]
    total: int | None = None  # mem0's `count`, when it says
    last: bool


class Mem0Source(Protocol):
    """One page of a mem0 account's memories (mem0's platform API), retried on transient failures;
    DependencyError when it stays down, ValidationFailed when mem0 refuses the key."""

    def page(self, api_key: str, user_id: str, page: int, page_size: int) -> Mem0Page: ...
