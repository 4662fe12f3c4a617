"""Erasing all of one user's memories in a tenant: an asynchronous job (docs/erasure.md).

`request_user` stores the job and queues its first hop; the worker runs each hop (`run`): plan one
page of the user's memories (newest first, from the cursor stored on the job), erase them one by
one, each recorded with its counts in one conditional transaction, then save the next step and
queue it. A hop stops early when the Lambda's time runs low and the next hop resumes the page.

At-least-once safe: the job runner (services/jobs/runner.py) runs each hop under the protocol every
job shares (a message whose step the job has passed is stale and does nothing, except re-sending the
current step if its message may have been lost; a finished job ignores every message); a memory's
erasure is repeatable and is counted once, when it is recorded.
"""

from __future__ import annotations

import contextlib
import logging
import math
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from mnemo.domain.erasure import ErasureCounts, ErasureJob, ErasureReceipt, ErasureStep, JobStatus
from mnemo.domain.models import Cursor, Principal, Status
from mnemo.domain.namespace import NamespaceFilter
from mnemo.domain.timestamps import utcnow
from mnemo.errors import DependencyError, MnemoError, NotFoundError
from mnemo.ports import BrowseQuery, ErasureFences, ErasureJobStore, JobQueue, JobStore, MemoryStore
from mnemo.services.erasure.memories import ErasureService
from mnemo.services.jobs.runner import Hop, JobRunner, TimeLeft, forever
from mnemo.services.tenancy.permissions import Operation, authorize

logger = logging.getLogger(__name__)

PAGE = 25  # memories planned per hop: a hop stays far inside the worker's 120 s even at ~1 s per memory
RECORDED_PAGE = 50  # recorded facts deleted per step: a few calls each (audit Query, deletes, orphan checks)
TIME_MARGIN_MS = 20_000  # stop erasing when less than this is left of the invocation; the next hop resumes


class ErasureJobService:
    def __init__(self, store: MemoryStore, jobs: ErasureJobStore, queue: JobQueue, erasure: ErasureService, *,
                 clock: Callable[[], datetime] = utcnow, new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
                 page: int = PAGE, fences: ErasureFences | None = None, settle: timedelta = timedelta(0),
                 work_jobs: JobStore | None = None, runner: JobRunner) -> None:
        self._store = store
        self._work_jobs = work_jobs  # the user's import, mem0 and deduplication jobs: their parts hold what was sent
        self._settle = settle  # the last listing waits this long after the request: the browse index lags
        self._fences = fences  # raised before anything is listed; writes in flight read it (services/erasure/user_fence.py)
        self._jobs = jobs
        self._queue = queue
        self._erasure = erasure
        self._clock = clock
        self._new_id = new_id
        self._page = page
        self._runner = runner
        runner.register("erasure", _ErasureJobs(jobs, self._finish), {"user": self._hop})

    def request_user(self, principal: Principal, user_id: str) -> ErasureReceipt:
        """Accept the erasure of every memory `user_id` has in the caller's tenant, including what writes
        already under way still write (their writers erase it, or the job lists it)."""
        authorize(principal, Operation.ERASE_USER)
        job = ErasureJob(tenant=principal.tenant, job_id=self._new_id(), user_id=user_id, requested_at=self._clock())
        self._jobs.create(job)
        try:
            if self._fences is not None:  # before the first hop can list anything
                self._fences.raise_fence(job.tenant, user_id, job.job_id, job.requested_at)
            self._queue.send_step(ErasureStep(tenant=job.tenant, job_id=job.job_id, step=0))
        except DependencyError:
            with contextlib.suppress(MnemoError):  # the caller sees the queue error; the job says it never ran
                self._finish(job, JobStatus.FAILED, error="the job could not be queued; request the erasure again")
            raise
        return job.receipt()

    def get(self, principal: Principal, job_id: str, *, erased_ids: bool = True) -> ErasureReceipt:
        """The job's receipt; without `erased_ids`, its `memory_ids` left empty (a listing: one read, not a Query)."""
        authorize(principal, Operation.READ_JOB)
        job = self._jobs.get(principal.tenant, job_id, erased_ids=erased_ids)
        if job is None:
            raise NotFoundError(f"job {job_id} not found", subject="job", ident=job_id)
        return job.receipt()

    def run(self, step: ErasureStep, time_left_ms: TimeLeft = forever) -> None:
        """One hop of the job, as the worker runs it (the runner's protocol). Raises on failure: SQS redelivers."""
        self._runner.run(step, time_left_ms)

    def fail(self, step: ErasureStep, error: Exception) -> None:
        """The step's last delivery failed: the job says so (the reason, never memory text)."""
        self._runner.fail(step, error)

    def _hop(self, job: ErasureJob, step: ErasureStep, time_left_ms: TimeLeft) -> Hop[ErasureJob]:
        """The step handler: plan a page if none is left, erase it while time lasts; then the user's
        recorded facts, her other jobs, and a last listing from the top once the browse index settled."""
        if not job.batch and not job.exhausted:
            job = self._plan(job)
        while job.batch and time_left_ms() > TIME_MARGIN_MS:
            memory_id = job.batch[0]
            counts = self._erase_one(job, memory_id)
            job = self._jobs.record_erased(job.model_copy(update={"counts": job.counts.plus(counts),
                                                                  "batch": job.batch[1:]}), memory_id)
        done = not job.batch and job.exhausted
        if done:  # every memory erased: then the facts recorded for the user, which no memory holds
            job, done = self._erase_recorded(job, time_left_ms)
        if done:  # and the user's other jobs: an import's parts are the items' text
            job, done = self._erase_work_jobs(job, time_left_ms)
        delay = 0
        if done:  # a last listing from the top: memories that writes in flight landed while the pages ran
            wait = (job.requested_at + self._settle - self._clock()).total_seconds()
            if wait > 0:  # a write that landed just before the fence may not be in the index yet
                done, delay = False, math.ceil(wait)
            else:
                job = self._plan(job.model_copy(update={"cursor": None}))
                done = not job.batch
        return Hop(job, "done") if done else Hop(job, "next", delay)

    # -- steps ---------------------------------------------------------------------------
    def _plan(self, job: ErasureJob) -> ErasureJob:
        """The next page of the user's memories (every status, both authors, any creation time: the fence
        stops new writes), newest first from the stored cursor (None: the newest); the cursor moves past
        it in the same write."""
        assert job.user_id is not None
        start = job.cursor
        page = self._store.browse(BrowseQuery(
            scope=NamespaceFilter(tenant=job.tenant, user_id=job.user_id), statuses=list(Status),
            authors=["user", "agent"], limit=self._page, cursor=start, salvage=True))
        cursor = Cursor(cursor_created_at=page.items[-1].created_at, cursor_id=page.items[-1].id) if page.items else start
        return self._jobs.save(job.model_copy(update={
            "batch": [m.id for m in page.items], "cursor": cursor, "exhausted": page.next_cursor is None}))

    def _erase_one(self, job: ErasureJob, memory_id: str) -> ErasureCounts:
        memory = self._store.get(job.tenant, memory_id, salvage=True)  # an undecodable item is erased too
        if memory is None:
            # Planned, so it existed; gone now: erased by an interrupted delivery of this hop (which could
            # not record it) or by a single hard delete. It counts as a memory; what went with it is unknown.
            return ErasureCounts(memories=1)
        if memory.user_id != job.user_id:  # cannot happen (planned from the user's index); never erase another's
            logger.error("planned memory belongs to another user; skipped", extra={"job_id": job.job_id})
            return ErasureCounts()
        return self._erasure.erase(memory)

    def _erase_recorded(self, job: ErasureJob, time_left_ms: Callable[[], float]) -> tuple[ErasureJob, bool]:
        """Erase the user's recorded facts a page at a time, each page counted on the job; whether
        none is left (False: time ran low, the next hop goes on)."""
        assert job.user_id is not None
        while time_left_ms() > TIME_MARGIN_MS:
            erased = self._erasure.erase_recorded(job.tenant, job.user_id, limit=RECORDED_PAGE)
            if not erased:
                return job, True
            job = self._jobs.save(job.model_copy(update={"counts": job.counts.plus(ErasureCounts(recorded_facts=erased))}))
        return job, False

    def _erase_work_jobs(self, job: ErasureJob, time_left_ms: Callable[[], float]) -> tuple[ErasureJob, bool]:
        """Every import, mem0 and deduplication job of the user, from the user's job listing: a finished one
        is deleted whole (record, parts, listing item); one still running loses its parts (its record
        ends as its own hops say: an import `failed`, user erased). Counted on the job; whether all were
        done (False: time ran low, the next hop goes on; a rerun finds nothing left to count)."""
        assert job.user_id is not None
        if self._work_jobs is None:
            return job, True
        erased, left = 0, True
        for job_id in self._work_jobs.of_user(job.tenant, job.user_id):
            if time_left_ms() <= TIME_MARGIN_MS:
                left = False
                break
            work = self._work_jobs.get(job.tenant, job_id)
            if work is not None and work.owner != job.user_id:  # cannot happen (listed under the user); never touch another's
                logger.error("listed job belongs to another user; skipped", extra={"job_id": job.job_id})
                continue
            erased += self._work_jobs.erase(job.tenant, job_id, job.user_id, whole=work is None or work.finished) > 0
        if erased:
            job = self._jobs.save(job.model_copy(update={"counts": job.counts.plus(ErasureCounts(jobs=erased))}))
        return job, left

    def _finish(self, job: ErasureJob, status: JobStatus, error: str | None = None) -> None:
        if self._fences is not None and job.user_id is not None:  # writes for the user are admitted again
            # A completed erasure re-listed everything, so earlier requests still running are done too.
            self._fences.lower(job.tenant, job.user_id, job.job_id, self._clock(), earlier_too=status is JobStatus.COMPLETED)
        # The user id leaves the record with the job: the receipt needs only the erased ids.
        self._jobs.save(job.model_copy(update={"status": status, "finished_at": self._clock(), "user_id": None,
                                               "batch": [], "cursor": None, "error": error}))


class _ErasureJobs:
    """The runner's ledger of erasure jobs (the ids a job erased are not read here); ending a job is the
    service's `_finish` (the fence comes down, the user id leaves the record)."""

    def __init__(self, jobs: ErasureJobStore, finish: Callable[[ErasureJob, JobStatus, str | None], None]) -> None:
        self._jobs = jobs
        self._finish = finish

    def load(self, tenant: str, job_id: str) -> ErasureJob | None:
        return self._jobs.get(tenant, job_id, erased_ids=False)

    def save(self, job: ErasureJob) -> ErasureJob:
        return self._jobs.save(job)

    def complete(self, job: ErasureJob) -> None:
        self._finish(job, JobStatus.COMPLETED, None)

    def fail(self, job: ErasureJob, reason: str) -> None:
        self._finish(job, JobStatus.FAILED, f"{reason}; memories erased so far stay erased, request the erasure again to finish")
