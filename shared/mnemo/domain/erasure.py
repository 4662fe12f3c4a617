"""Permanent erasure (GDPR) as data: what a receipt reports (ids and counts, never erased text) and
the record of an erasure job (all of one user's memories, erased page by page by the worker)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

from mnemo.domain.models import Cursor


class ErasureCounts(BaseModel):
    memories: int = 0
    history: int = 0
    facts: int = Field(default=0, description="Derived facts deleted (facts other memories also say only lose this source).")
    entities: int = Field(default=0, description="Entity postings (memory mentions entity) deleted.")
    links: int = Field(default=0, description="Links to or from the memory deleted (each stored at both ends).")
    index_documents: int = Field(default=0, description="Search index copies addressed by the delete.")
    recorded_facts: int = Field(default=0, description=(
        "A user's erasure: facts recorded for the user (record_fact, POST /v1/facts, an import) deleted."))
    jobs: int = Field(default=0, description=(
        "A user's erasure: the user's import, mem0 and deduplication jobs whose stored input (job parts) or record was deleted."))

    def plus(self, other: ErasureCounts) -> ErasureCounts:
        return ErasureCounts(**{name: getattr(self, name) + getattr(other, name) for name in type(self).model_fields})


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


class ErasureReceipt(BaseModel):
    """What was erased, as ids and counts only. A memory's erasure answers it completed; a user's
    erasure job answers it `queued` at once and reports progress at `GET /v1/jobs/{job_id}`."""

    job_id: str | None = None
    kind: Literal["memory", "user"]
    memory_ids: list[str]
    counts: ErasureCounts
    started_at: datetime | None = Field(description="When the erasure began (a job: when the worker first ran it).")
    finished_at: datetime | None = None
    status: JobStatus = JobStatus.COMPLETED
    error: str | None = Field(default=None, description="Why a job failed (no memory text).")


class ErasureJob(BaseModel):
    """The stored state of one user's erasure. The worker advances it one hop (one queue message) at
    a time; every change is a conditional write on `revision`, so a redelivered or concurrent message
    can neither count a memory twice nor move the job backwards."""

    tenant: str
    job_id: str
    kind: Literal["user"] = "user"
    user_id: str | None = Field(description="Whose memories; cleared when the job ends (the receipt needs only ids).")
    status: JobStatus = JobStatus.QUEUED
    requested_at: datetime = Field(description="When the erasure was requested (its fence was raised just before).")
    started_at: datetime | None = None
    finished_at: datetime | None = None
    counts: ErasureCounts = Field(default_factory=ErasureCounts)
    memory_ids: list[str] = Field(default_factory=list, description="Erased so far (stored as one row each, not on the job item).")
    cursor: Cursor | None = Field(default=None, description="Browse position after the last page planned (newest first).")
    batch: list[str] = Field(default_factory=list, description="Memories of the planned page not yet erased.")
    exhausted: bool = Field(default=False, description="No memory older than the cursor is left to plan.")
    step: int = Field(default=0, description="The hop the next message must carry; older messages are stale.")
    dispatched: int = Field(default=0, description="The highest step a message was sent for.")
    revision: int = 0
    error: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in (JobStatus.COMPLETED, JobStatus.FAILED)

    def receipt(self) -> ErasureReceipt:
        return ErasureReceipt(job_id=self.job_id, kind="user", memory_ids=self.memory_ids, counts=self.counts,
                              started_at=self.started_at, finished_at=self.finished_at, status=self.status,
                              error=self.error)


class UserFence(BaseModel):
    """A user's erasure fence, read by every write for the user after it lands (docs/erasure.md,
    "Writes in flight"): which erasure was requested last, and which have not ended yet."""

    latest_job: str | None = Field(default=None, description="The erasure requested last for the user (None: never).")
    requested_at: datetime | None = None
    running: list[str] = Field(default_factory=list, description="Erasures not ended, as '<requested_at>|<job id>'.")

    @property
    def up(self) -> bool:
        """An erasure of the user is running: every write for the user is refused."""
        return bool(self.running)


class ErasureStep(BaseModel):
    """The queue message that advances a job by one hop."""

    task: Literal["erasure"] = "erasure"
    tenant: str
    job_id: str
    step: int
