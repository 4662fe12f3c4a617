"""The job runner's protocol (services/jobs/runner.py) on in-memory fakes: checkpoint and dispatch,
stale steps, the re-send when the hop that saved a step died before sending it, a conflicting
checkpoint, and the rules for failing a job on a message's last delivery."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from pydantic import BaseModel

from mnemo.domain.erasure import JobStatus
from mnemo.domain.jobs import JobStep
from mnemo.errors import ConflictError, DependencyError, ValidationFailed
from mnemo.services.jobs.runner import Hop, JobRunner, TimeLeft
from tests.conftest import FixedClock


class Record(BaseModel):
    tenant: str = "t"
    job_id: str = "j"
    kind: str = "count"
    status: JobStatus = JobStatus.QUEUED
    started_at: datetime | None = None
    step: int = 0
    dispatched: int = 0
    revision: int = 0
    chunks: list[int] = []
    error: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in (JobStatus.COMPLETED, JobStatus.FAILED)


class Ledger:
    """One record, every write conditional on its revision (as the DynamoDB stores)."""

    def __init__(self, record: Record) -> None:
        self.stored = record

    def load(self, tenant: str, job_id: str) -> Record | None:
        return self.stored if (tenant, job_id) == (self.stored.tenant, self.stored.job_id) else None

    def save(self, job: Record) -> Record:
        if job.revision != self.stored.revision:
            raise ConflictError("job changed concurrently")
        self.stored = job.model_copy(update={"revision": job.revision + 1})
        return self.stored

    def complete(self, job: Record) -> None:
        self.save(job.model_copy(update={"status": JobStatus.COMPLETED}))

    def fail(self, job: Record, reason: str) -> None:
        self.save(job.model_copy(update={"status": JobStatus.FAILED, "error": reason}))


class Queue:
    def __init__(self) -> None:
        self.sent: list[tuple[int, str | None, int]] = []  # (step, api key, delay)
        self.down = False

    def send_step(self, step: Any, delay_seconds: int = 0) -> None:
        if self.down:
            raise DependencyError("enrichment queue unavailable")
        self.sent.append((step.step, step.api_key, delay_seconds))


class Counting:
    """A kind of three chunks: each records its step on the job; the last one is done."""

    def __init__(self, delay: int = 0) -> None:
        self.ran: list[int] = []
        self.delay = delay

    def __call__(self, job: Record, message: JobStep, time_left_ms: TimeLeft) -> Hop[Record]:
        self.ran.append(job.step)
        job = job.model_copy(update={"chunks": [*job.chunks, job.step]})
        return Hop(job, "done") if job.step == 2 else Hop(job, "next", self.delay)


def runner_with(record: Record | None = None, handler: Any = None) -> tuple[JobRunner, Ledger, Queue, Any]:
    queue, ledger, handler = Queue(), Ledger(record or Record()), handler or Counting()
    runner = JobRunner(queue, clock=FixedClock())
    runner.register("job", ledger, {"count": handler})
    return runner, ledger, queue, handler


def step(n: int) -> JobStep:
    return JobStep(tenant="t", job_id="j", step=n, api_key="m0-key")


def test_each_step_checkpoints_then_sends_the_next_and_the_last_completes() -> None:
    runner, ledger, queue, handler = runner_with()
    runner.run(step(0))
    assert (ledger.stored.status, ledger.stored.step, ledger.stored.dispatched, ledger.stored.chunks) == (JobStatus.RUNNING, 1, 1, [0])
    assert ledger.stored.started_at is not None
    assert queue.sent == [(1, "m0-key", 0)]  # the next step carries what the message carried (a mem0 key)
    runner.run(step(1))
    runner.run(step(2))
    assert (ledger.stored.status, ledger.stored.chunks, handler.ran) == (JobStatus.COMPLETED, [0, 1, 2], [0, 1, 2])
    assert queue.sent == [(1, "m0-key", 0), (2, "m0-key", 0)]  # nothing after the last step
    runner.run(step(2))  # a finished job ignores every message
    assert handler.ran == [0, 1, 2] and ledger.stored.status is JobStatus.COMPLETED


def test_a_handler_delays_the_next_step() -> None:
    runner, _, queue, _ = runner_with(handler=Counting(delay=5))
    runner.run(step(0))
    assert queue.sent == [(1, "m0-key", 5)]


def test_a_stale_step_does_nothing() -> None:
    runner, ledger, queue, handler = runner_with()
    runner.run(step(0))
    assert handler.ran == [0]  # positive control: the same message ran once
    before = ledger.stored
    runner.run(step(0))  # redelivered: the job has passed it, and its next step was sent
    runner.run(step(5))  # a step the job has not reached
    assert handler.ran == [0] and ledger.stored == before and queue.sent == [(1, "m0-key", 0)]


def test_a_hop_that_died_before_sending_is_resent_by_a_redelivery() -> None:
    runner, ledger, queue, handler = runner_with()
    queue.down = True
    with pytest.raises(DependencyError):
        runner.run(step(0))  # checkpointed step 1, could not send it
    assert (ledger.stored.step, ledger.stored.dispatched, ledger.stored.chunks) == (1, 0, [0])
    queue.down = False
    runner.run(step(0))  # SQS redelivers step 0: stale, but it re-sends step 1 without redoing chunk 0
    assert handler.ran == [0] and queue.sent == [(1, "m0-key", 0)] and ledger.stored.dispatched == 1
    runner.run(step(0))  # once sent, a further redelivery sends nothing
    assert queue.sent == [(1, "m0-key", 0)]


def test_a_conflicting_checkpoint_raises_and_sends_nothing() -> None:
    def racing(job: Record, message: JobStep, time_left_ms: TimeLeft) -> Hop[Record]:
        ledger.save(ledger.stored.model_copy(update={"chunks": [99]}))  # a concurrent duplicate hop writes first
        return Hop(job.model_copy(update={"chunks": [0]}))

    runner, ledger, queue, _ = runner_with(handler=racing)
    with pytest.raises(ConflictError):
        runner.run(step(0))
    assert (ledger.stored.step, ledger.stored.chunks, queue.sent) == (0, [99], [])  # the newer state stays; SQS retries


@pytest.mark.parametrize(("record", "message", "fails"), [
    (Record(step=1, dispatched=1, status=JobStatus.RUNNING), 1, True),  # the current step
    (Record(step=1, dispatched=0, status=JobStatus.RUNNING), 0, True),  # the step before, whose hop never sent step 1
    (Record(step=1, dispatched=1, status=JobStatus.RUNNING), 0, False),  # a stale duplicate: step 1 is alive elsewhere
    (Record(step=2, dispatched=1, status=JobStatus.RUNNING), 0, False),  # two steps back: stale
    (Record(step=1, dispatched=1, status=JobStatus.COMPLETED), 1, False),  # a finished job
])
def test_the_last_delivery_fails_the_job_unless_the_message_is_stale(record: Record, message: int, fails: bool) -> None:
    runner, ledger, _, _ = runner_with(record)
    runner.fail(step(message), ValidationFailed("api_key: mem0 refused it (HTTP 401)"))
    if fails:
        assert (ledger.stored.status, ledger.stored.error) == (JobStatus.FAILED, "api_key: mem0 refused it (HTTP 401)")
    else:
        assert ledger.stored == record


def test_a_failure_names_a_foreign_error_by_its_type_and_a_conflict_leaves_the_newer_state() -> None:
    runner, ledger, _, _ = runner_with(Record(step=1, dispatched=1, status=JobStatus.RUNNING))
    runner.fail(step(1), TimeoutError("the text of a foreign error is not shown"))
    assert ledger.stored.error == "TimeoutError"

    class Moved(Ledger):
        def load(self, tenant: str, job_id: str) -> Record | None:  # read before another writer moved the job on
            return self.stored.model_copy(update={"revision": self.stored.revision - 1})

    moved = Moved(Record(step=1, dispatched=1, status=JobStatus.RUNNING, revision=3))
    runner.register("job", moved, {"count": Counting()})
    runner.fail(step(1), TimeoutError())  # the failure's write conflicts: no error escapes, the newer state stays
    assert (moved.stored.status, moved.stored.revision) == (JobStatus.RUNNING, 3)


def test_a_handler_that_ended_the_job_itself_leaves_it_as_it_wrote_it() -> None:
    def stopped(job: Record, message: JobStep, time_left_ms: TimeLeft) -> Hop[Record]:
        ledger.save(job.model_copy(update={"status": JobStatus.FAILED, "error": "user erased"}))
        return Hop(job, "ended")

    runner, ledger, queue, _ = runner_with(handler=stopped)
    runner.run(step(0))
    assert (ledger.stored.status, ledger.stored.step, ledger.stored.error, queue.sent) == (JobStatus.FAILED, 0, "user erased", [])


def test_a_message_of_an_unregistered_family_is_a_wiring_fault() -> None:
    from mnemo.domain.erasure import ErasureStep

    runner, _, _, handler = runner_with()
    runner.run(step(0))
    assert handler.ran == [0]  # positive control: a registered family runs
    with pytest.raises(LookupError, match="no job family registered for task 'erasure'"):
        runner.run(ErasureStep(tenant="t", job_id="j", step=0))


def test_a_family_is_built_on_its_first_message_only() -> None:
    """The composition root stays lazy: the service that registers a family is built when it is needed."""
    ledger, built = Ledger(Record()), []

    def build() -> None:
        built.append("job")
        runner.register("job", ledger, {"count": Counting()})

    runner = JobRunner(Queue(), clock=FixedClock(), builders={"job": build})
    assert built == []
    runner.run(step(0))
    runner.run(step(1))
    assert built == ["job"] and ledger.stored.step == 2
