"""Long operations as jobs on the worker queue (docs/import-export.md "Jobs"): an import of more than
`SYNC_IMPORT_LIMIT` items, every mem0 pull, and a deduplication (dry_run=false) of a user with more than
`SYNC_DEDUP_LIMIT` live memories. Erasure of a user is a job too (services/erasure/users.py); `get`
answers for every kind at `GET /v1/jobs/{job_id}`.

Each hop runs one chunk: an import part (stored as a job-part item), one mem0 page, or one part of a
deduplication plan; here are the kinds' step handlers, and the job runner (services/jobs/runner.py)
runs them under the protocol every job shares: the job saves its checkpoint (`step + 1`, progress,
summary) in one write conditional on its revision and queues the next step; a message for a step
the job has passed is stale and does nothing (except re-sending the current step if the hop that
saved it died before sending it), so a redelivery never redoes a checkpointed chunk. A chunk
interrupted before its checkpoint runs again: imports skip items already imported by source id,
deduplication skips memories already archived.
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from mnemo.domain.erasure import ErasureReceipt, JobStatus
from mnemo.domain.jobs import Job, JobKind, JobProgress, JobReceipt, JobStep, JobSummary
from mnemo.domain.models import Principal
from mnemo.domain.timestamps import utcnow
from mnemo.errors import ConflictError, DependencyError, MnemoError, NotFoundError, UserErasedError, ValidationFailed
from mnemo.ports import JobQueue, JobStore, Mem0Source
from mnemo.services.erasure.user_fence import Admission, WriteFence
from mnemo.services.erasure.users import ErasureJobService
from mnemo.services.jobs.runner import Hop, JobRunner, StepHandler, TimeLeft
from mnemo.services.memory.duplicates import SCAN_LIMIT, DedupReport, DuplicateService
from mnemo.services.portability.imports import ImportReport, ImportService
from mnemo.services.tenancy.permissions import REQUIRED, Operation, authorize, content_check

SYNC_IMPORT_LIMIT = 200  # items one request imports itself; more become a job
IMPORT_CHUNK = 100  # items per job part (one hop): ~1 write + 1 send each, far inside the worker's 120 s
PART_BYTES = 300_000  # a job part's JSON stays under DynamoDB's 400 KB item limit with room for its keys
MEM0_PAGE_SIZE = 100  # memories per mem0 page, one page per hop
SYNC_DEDUP_LIMIT = SCAN_LIMIT  # live memories a deduplicate call compares pairwise itself; more become a job
DEDUP_CHUNK = 50  # memories per deduplication hop: one embedding call and 50 k-NN queries
USER_ERASED = "user erased"  # an import job's error when its user's erasure was requested after it began
MEM0_DISABLED = ("source: mem0_api is not enabled on this deployment: it sends your mem0 key to api.mem0.ai and "
                 "brings data into the account; an operator enables it with MNEMO_MEM0_IMPORT_ENABLED=true "
                 "(template parameter Mem0ImportEnabled). Meanwhile export from mem0 and import the file with source json")


WORK_KINDS = [kind.value for kind in JobKind]
ERASURE_KIND = "user"
JOB_PAGE = 50  # jobs a listing page reads at most
# A listing cursor is the sort key of the last row read: `<fixed-width UTC time>#<job id>`.
LISTING_CURSOR = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z#[A-Za-z0-9-]{1,64}")


class JobPage(BaseModel):
    results: list[JobReceipt | ErasureReceipt] = Field(description=(
        "Newest first. Erasure receipts here leave `memory_ids` empty (GET /v1/jobs/{job_id} lists them)."))
    next_cursor: str | None = Field(default=None, description="Pass as `cursor` for the next page; absent on the last.")


def parts_of(items: Sequence[Any], size: int) -> list[list[Any]]:
    """Chunks of at most `size` items and `PART_BYTES` of JSON each (an item too large alone is refused)."""
    parts: list[list[Any]] = [[]]
    used = 0
    for index, item in enumerate(items):
        length = len(json.dumps(item))
        if length > PART_BYTES:
            raise ValidationFailed(f"data: item {index} is {length} bytes of JSON, more than {PART_BYTES}")
        if len(parts[-1]) >= size or used + length > PART_BYTES:
            parts.append([])
            used = 0
        parts[-1].append(item)
        used += length
    return [p for p in parts if p]


class JobService:
    def __init__(self, jobs: JobStore, queue: JobQueue, imports: ImportService, duplicates: DuplicateService,
                 erasure_jobs: ErasureJobService, mem0: Mem0Source | None, *,
                 clock: Callable[[], datetime] = utcnow, new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
                 fence: WriteFence | None = None, runner: JobRunner) -> None:
        self._jobs = jobs
        self._fence = fence  # an import job stops when its user's erasure is requested after it (erasure/user_fence.py)
        self._queue = queue
        self._imports = imports
        self._duplicates = duplicates
        self._erasure_jobs = erasure_jobs
        self._mem0 = mem0  # None: the mem0 pull is switched off (the default)
        self._clock = clock
        self._new_id = new_id
        self._runner = runner
        runner.register("job", _WorkJobs(jobs, clock), {JobKind.IMPORT: self._handler(self._import_chunk),
                                                          JobKind.MEM0_IMPORT: self._handler(self._mem0_chunk),
                                                          JobKind.DEDUPLICATE: self._handler(self._dedup_chunk)})

    # -- requests --------------------------------------------------------------------------
    def import_items(self, principal: Principal, items: list[Any], *, user_id: str | None, skip_duplicates: bool | None,
                     chunk: int = IMPORT_CHUNK) -> ImportReport | JobReceipt:
        """Up to SYNC_IMPORT_LIMIT items: imported now (the report). More: a job (its receipt). The user
        is resolved (and a bound key's naming of another user refused) before any job is created.
        `skip_duplicates`: the caller's explicit choice, None for the default (`permissions.content_check`:
        a key without memory:read imports without comparing content, and the answer says so)."""
        authorize(principal, Operation.IMPORT)
        user_id = principal.user_for(user_id)
        compare, note = content_check(principal, skip_duplicates, "skip_duplicates")
        if len(items) <= SYNC_IMPORT_LIMIT:
            report = self._imports.run(principal, items, user_id=user_id, skip_duplicates=compare)
            return report.model_copy(update={"duplicate_check": note or report.duplicate_check})
        parts = parts_of(items, chunk)
        job = self._new(principal, JobKind.IMPORT, user_id, parts=len(parts), skip_duplicates=compare, duplicate_check=note,
                        progress=JobProgress(total=len(items)), erasure_seen=self._admitted(principal, user_id))
        return self._start(job, parts)

    def import_mem0(self, principal: Principal, api_key: str, *, user_id: str | None, skip_duplicates: bool | None) -> JobReceipt:
        authorize(principal, Operation.IMPORT)
        user_id = principal.user_for(user_id)
        compare, note = content_check(principal, skip_duplicates, "skip_duplicates")
        if self._mem0 is None:
            raise ValidationFailed(MEM0_DISABLED)
        if not api_key.strip():
            raise ValidationFailed("api_key: must be your mem0 api key (non-empty)")
        job = self._new(principal, JobKind.MEM0_IMPORT, user_id, skip_duplicates=compare, duplicate_check=note, key_hint=api_key[-4:],
                        erasure_seen=self._admitted(principal, user_id))
        return self._start(job, [], api_key=api_key)

    def deduplicate(self, principal: Principal, user_id: str | None, threshold: float) -> DedupReport | JobReceipt:
        """Archive a user's repeats: up to SYNC_DEDUP_LIMIT live memories now (the report), more as a job."""
        authorize(principal, Operation.ARCHIVE)
        user_id = principal.user_for(user_id)
        if len(self._duplicates.live_ids(principal, user_id, limit=SYNC_DEDUP_LIMIT)) <= SYNC_DEDUP_LIMIT:
            return self._duplicates.deduplicate(principal, user_id, threshold, dry_run=False)
        # The plan (every live id) is read by the job's first hop, not here: a large user takes many Queries.
        return self._start(self._new(principal, JobKind.DEDUPLICATE, user_id, threshold=threshold), [])

    def get(self, principal: Principal, job_id: str) -> JobReceipt | ErasureReceipt:
        """Any job of the caller's tenant. An unknown id, and a job the key may not read (another tenant's;
        another user's, to a user-bound key; an import or deduplication job, to a key without
        `memory:read`; an erasure job, to a key without admin), is the same 404 for every key: a
        different answer would tell that a job with that id exists (an existence oracle)."""
        job = self._jobs.get(principal.tenant, job_id)
        if job is not None and principal.sees(job.user_id) and principal.allows(REQUIRED[Operation.READ_WORK_JOB]):
            return job.receipt()
        if job is None and principal.allows(REQUIRED[Operation.READ_JOB]):
            return self._erasure_jobs.get(principal, job_id)  # NotFoundError when it is no job at all
        raise NotFoundError(f"job {job_id} not found", subject="job", ident=job_id)

    def listing(self, principal: Principal, *, limit: int = JOB_PAGE, cursor: str | None = None) -> JobPage:
        """The tenant's jobs newest first, those the key may read (`get`'s rule): import, mem0 and
        deduplication jobs with `memory:read` (a user-bound key: its user's), erasure jobs with admin.
        A page reads `limit` listing rows, so it may hold fewer jobs than `limit` and still go on."""
        kinds = WORK_KINDS if principal.allows(REQUIRED[Operation.READ_WORK_JOB]) else []
        if principal.allows(REQUIRED[Operation.READ_JOB]):
            kinds = [*kinds, ERASURE_KIND]
        if not kinds:
            authorize(principal, Operation.READ_WORK_JOB)  # raises, naming the scope
        if cursor is not None and not LISTING_CURSOR.fullmatch(cursor):
            raise ValidationFailed("cursor: must be the next_cursor of a previous page")
        page = self._jobs.listing(principal.tenant, kinds, limit=limit, after=cursor)
        results: list[JobReceipt | ErasureReceipt] = []
        for job_id, kind in page.jobs:
            if kind == ERASURE_KIND:
                with contextlib.suppress(NotFoundError):
                    results.append(self._erasure_jobs.get(principal, job_id, erased_ids=False))
                continue
            job = self._jobs.get(principal.tenant, job_id)
            if job is not None and principal.sees(job.user_id):  # None: erased with its user
                results.append(job.receipt())
        return JobPage(results=results, next_cursor=page.next_cursor)

    # -- the worker (services/jobs/runner.py runs the protocol; these are the kinds' step handlers) --
    def run(self, step: JobStep) -> None:
        """One chunk, as the worker runs it (the runner's protocol). Raises on failure: SQS redelivers."""
        self._runner.run(step)

    def fail(self, step: JobStep, error: Exception) -> None:
        """The step's last delivery failed: the job says why (what it did so far stays done)."""
        self._runner.fail(step, error)

    def _handler(self, chunk: Callable[[Job, JobStep], tuple[Job, bool]]) -> StepHandler[Job]:
        """A kind's step handler: run its chunk (the job with its progress and summary, and whether it was
        the last); an import whose user's erasure came first stops here, its input erased with it."""
        def step(job: Job, message: JobStep, time_left_ms: TimeLeft) -> Hop[Job]:
            try:
                job, last = chunk(job, message)
            except UserErasedError:  # what this chunk wrote is erased; nothing to retry
                with contextlib.suppress(ConflictError):  # a duplicate hop recorded it first
                    self._jobs.save(job.model_copy(update={"status": JobStatus.FAILED, "finished_at": self._clock(),
                                                           "error": USER_ERASED}))
                self._jobs.drop_parts(job.tenant, job.job_id, job.parts)  # the input left is the erased user's text
                return Hop(job, "ended")
            return Hop(job, "done" if last else "next")
        return step

    def _import_chunk(self, job: Job, message: JobStep) -> tuple[Job, bool]:
        try:
            items = self._jobs.part(job.tenant, job.job_id, job.step)
        except DependencyError:  # a missing part: the user's erasure deletes an import's parts; if so, say that
            if self._fence is not None:
                self._fence.check(Admission(tenant=job.tenant, user_id=job.owner, latest_job=job.erasure_seen))
            raise
        return self._advanced(job, self._import(job, items, job.progress.done), len(items)), job.step + 1 >= job.parts

    def _mem0_chunk(self, job: Job, message: JobStep) -> tuple[Job, bool]:
        if self._mem0 is None:
            raise ValidationFailed(MEM0_DISABLED)
        if not message.api_key:
            raise ValidationFailed("api_key: the job's message lost it; request the import again")
        page = self._mem0.page(message.api_key, job.user_id, job.step + 1, MEM0_PAGE_SIZE)
        summary = self._import(job, page.items, job.progress.done)
        progress = JobProgress(done=job.progress.done + len(page.items), total=page.total)
        return job.model_copy(update={"summary": job.summary.plus(summary), "progress": progress}), page.last

    def _dedup_chunk(self, job: Job, message: JobStep) -> tuple[Job, bool]:
        if job.step == 0:
            planned = self._plan(job)
            return planned, planned.parts <= 1  # nothing live left to compare: done
        items = self._jobs.part(job.tenant, job.job_id, job.step)
        groups, archived, skipped = self._duplicates.archive_repeats(
            job.principal, job.user_id, [str(i) for i in items], job.threshold)
        summary = JobSummary(groups=groups, archived=archived, skipped=len(skipped),
                             reasons=[f"memory {s.id}: {s.reason}" for s in skipped])
        return self._advanced(job, summary, len(items)), job.step + 1 >= job.parts

    @staticmethod
    def _advanced(job: Job, summary: JobSummary, done: int) -> Job:
        progress = job.progress.model_copy(update={"done": job.progress.done + done})
        return job.model_copy(update={"summary": job.summary.plus(summary), "progress": progress})

    def _plan(self, job: Job) -> Job:
        """Deduplication's first hop: every live id of the user, oldest first, stored as parts 1..n
        (step n runs part n); a rerun of this hop rewrites the same parts."""
        live = self._duplicates.live_ids(job.principal, job.user_id)
        parts = [live[i : i + DEDUP_CHUNK] for i in range(0, len(live), DEDUP_CHUNK)]
        self._jobs.write_parts(job.tenant, job.job_id, parts, first=1)
        return job.model_copy(update={"parts": len(parts) + 1, "progress": JobProgress(total=len(live))})

    def _admitted(self, principal: Principal, user_id: str) -> str | None:
        """The user's latest erasure when an import is requested (refused while one runs)."""
        if self._fence is None:
            return None
        return self._fence.admit(principal.tenant, user_id).latest_job  # user_id: resolved by the caller (user_for)

    def _import(self, job: Job, items: list[Any], offset: int) -> JobSummary:
        admission = None if self._fence is None else Admission(
            tenant=job.tenant, user_id=job.owner, latest_job=job.erasure_seen)
        report = self._imports.run(job.principal, items, user_id=job.user_id, skip_duplicates=job.skip_duplicates,
                                   admission=admission)
        reasons = [f"item {offset + p.index}: {p.reason}" for p in sorted([*report.skipped, *report.failed], key=lambda p: p.index)]
        if report.duplicate_check:  # this chunk was imported without the comparison (the retrievals cap)
            reasons.insert(0, f"items {offset}-{offset + len(items) - 1}: duplicate check {report.duplicate_check}")
        return JobSummary(imported=len(report.imported), facts_imported=len(report.facts_imported), skipped=len(report.skipped),
                          failed=len(report.failed), reasons=reasons)

    # -- bookkeeping -------------------------------------------------------------------------
    def _new(self, principal: Principal, kind: JobKind, user_id: str, **fields: Any) -> Job:
        return Job(tenant=principal.tenant, job_id=self._new_id(), kind=kind, principal=principal, user_id=user_id,
                   requested_at=self._clock(), **fields)

    def _start(self, job: Job, parts: Sequence[list[Any]], api_key: str | None = None) -> JobReceipt:
        self._jobs.create(job, parts)
        try:
            self._queue.send_step(JobStep(tenant=job.tenant, job_id=job.job_id, step=0, api_key=api_key))
        except DependencyError:
            with contextlib.suppress(MnemoError):  # the caller sees the queue error; the job says it never ran
                self._jobs.save(job.model_copy(update={"status": JobStatus.FAILED, "finished_at": self._clock(),
                                                       "error": "the job could not be queued; request it again"}))
            raise
        return job.receipt()


class _WorkJobs:
    """The runner's ledger of import, mem0 and deduplication jobs (`JobStore`)."""

    def __init__(self, jobs: JobStore, clock: Callable[[], datetime]) -> None:
        self._jobs = jobs
        self._clock = clock

    def load(self, tenant: str, job_id: str) -> Job | None:
        return self._jobs.get(tenant, job_id)

    def save(self, job: Job) -> Job:
        return self._jobs.save(job)

    def complete(self, job: Job) -> None:
        self._jobs.save(job.model_copy(update={"step": job.step + 1, "status": JobStatus.COMPLETED, "finished_at": self._clock()}))

    def fail(self, job: Job, reason: str) -> None:
        self._jobs.save(job.model_copy(update={"status": JobStatus.FAILED, "finished_at": self._clock(),
                                               "error": f"{reason}; what was done stays done, run it again to finish"}))
