"""Long operations as jobs (docs/import-export.md "Jobs"): an import of many items, a mem0 pull and a
deduplication over a whole user run on the worker chunk by chunk, and report at `GET /v1/jobs/{job_id}`
beside user erasure (domain/erasure.py), which keeps its own record and receipt."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

from mnemo.domain.erasure import JobStatus
from mnemo.domain.models import Principal

FIRST_REASONS = 20  # reasons a summary keeps: enough to act on, small enough for the job item


class JobKind(StrEnum):
    IMPORT = "import"
    MEM0_IMPORT = "mem0_import"
    DEDUPLICATE = "deduplicate"


class JobProgress(BaseModel):
    done: int = Field(default=0, description="Items (import), mem0 memories read, or memories compared (deduplicate).")
    total: int | None = Field(default=None, description="Known at the start for an import; for a mem0 pull once its "
                                                        "first page says how many; for a deduplication once it is planned.")


class JobSummary(BaseModel):
    imported: int = 0
    facts_imported: int = Field(default=0, description="Import: recorded facts of an export recorded again.")
    skipped: int = 0
    failed: int = 0
    reasons: list[str] = Field(default_factory=list, description=f"The first {FIRST_REASONS} skips and failures, "
                                                                 "as 'item <n>: <reason>' (deduplicate: 'memory <id>: <reason>').")
    groups: int = Field(default=0, description="Deduplicate: memories kept that others repeat.")
    archived: int = Field(default=0, description="Deduplicate: repeats archived (duplicate_of the kept one).")

    def plus(self, other: JobSummary) -> JobSummary:
        return JobSummary(imported=self.imported + other.imported, facts_imported=self.facts_imported + other.facts_imported,
                          skipped=self.skipped + other.skipped,
                          failed=self.failed + other.failed, reasons=(self.reasons + other.reasons)[:FIRST_REASONS],
                          groups=self.groups + other.groups, archived=self.archived + other.archived)


class JobReceipt(BaseModel):
    """What `GET /v1/jobs/{job_id}` answers for an import, mem0 pull or deduplication job."""

    job_id: str
    kind: JobKind
    status: JobStatus
    user_id: str
    progress: JobProgress
    summary: JobSummary
    requested_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    error: str | None = Field(default=None, description="Why the job failed; what it did before stays done.")
    duplicate_check: str | None = Field(default=None, description=(
        "Import: set when items without a source id are not compared with stored memories, and why (a key without memory:read)."))


class Job(BaseModel):
    """The stored state of one job. `step` is the chunk the next message must carry: a message for a
    chunk the job has passed is stale, so a redelivery never redoes a checkpointed chunk. Every write is
    conditional on `revision`."""

    tenant: str
    job_id: str
    kind: JobKind
    principal: Principal = Field(description="The caller's key as it was at the request: the worker acts with its scopes.")
    user_id: str
    status: JobStatus = JobStatus.QUEUED
    requested_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    parts: int = Field(default=0, description=(
        "Steps the job has: an import's chunks (parts 0..n-1); a deduplication's plan (step 0) and its chunks (parts 1..n)."))
    skip_duplicates: bool = True
    duplicate_check: str | None = None  # JobReceipt.duplicate_check
    threshold: float = 0.85
    key_hint: str | None = Field(default=None, description="mem0: the api key's last 4 characters (the key itself is never stored).")
    erasure_seen: str | None = Field(default=None, description=(
        "Import: the user's latest erasure job when the import was requested; a later one stops it (docs/erasure.md)."))
    progress: JobProgress = Field(default_factory=JobProgress)
    summary: JobSummary = Field(default_factory=JobSummary)
    step: int = 0
    dispatched: int = 0
    revision: int = 0
    error: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in (JobStatus.COMPLETED, JobStatus.FAILED)

    @property
    def owner(self) -> str:
        """Whose data the job holds (a bound key's own user, whatever it named): the user's erasure finds
        the job by it (docs/erasure.md, "Jobs of the user"). Not `Principal.confine`, which may refuse:
        a stored job is never refused, only found."""
        return self.principal.user_id or self.user_id

    def receipt(self) -> JobReceipt:
        return JobReceipt(job_id=self.job_id, kind=self.kind, status=self.status, user_id=self.user_id,
                          progress=self.progress, summary=self.summary, requested_at=self.requested_at,
                          started_at=self.started_at, finished_at=self.finished_at, error=self.error,
                          duplicate_check=self.duplicate_check)


class JobStep(BaseModel):
    """The queue message that runs one chunk. A mem0 pull's api key rides here, in the (SSE-encrypted)
    message body only, re-sent with each next step: it is never written to the table or logged."""

    task: Literal["job"] = "job"
    tenant: str
    job_id: str
    step: int
    api_key: str | None = Field(default=None, repr=False)
