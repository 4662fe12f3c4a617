"""One engine for every job on the worker queue (docs/architecture.md "Jobs"): the at-least-once step
protocol, written once; what a step does is the kind's step handler.

A job is a record (a family's ledger keeps it: work jobs in services/jobs/service.py, user erasure in
services/erasure/users.py) advanced one step per queue message. For each message the runner:
1. loads the job; a missing or finished job ignores every message;
2. ignores a message for any other step (stale) — except that when the hop that saved the current
   step died before sending it (`dispatched < step`), a message of an earlier step re-sends it;
3. marks the job running and the current step dispatched (its message arrived), in one write
   conditional on the revision it read (a concurrent duplicate gets ConflictError and SQS retries it);
4. runs the kind's handler, which does one chunk and says what follows (`Hop`): the next step (the
   runner checkpoints `step + 1`, conditional on the revision, then sends it and records the send),
   the end (the ledger completes the job), or nothing (the handler recorded the job's end itself).

`fail` runs on a message's last delivery: the job fails with the reason unless the message is stale,
by the same rule (the current step, or the one before it whose hop saved the step but never sent it).
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol, Self

from mnemo.domain.erasure import JobStatus
from mnemo.domain.messages import StepMessage
from mnemo.domain.timestamps import utcnow
from mnemo.errors import ConflictError, MnemoError
from mnemo.ports import JobQueue

logger = logging.getLogger(__name__)

TimeLeft = Callable[[], float]  # milliseconds left of the invocation


def forever() -> float:
    return math.inf


class SteppedJob(Protocol):
    """What the runner reads of a job record (domain `Job`, `ErasureJob`)."""

    @property
    def tenant(self) -> str: ...
    @property
    def job_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def step(self) -> int: ...
    @property
    def dispatched(self) -> int: ...
    @property
    def started_at(self) -> datetime | None: ...
    @property
    def finished(self) -> bool: ...
    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self: ...


class JobLedger[J: SteppedJob](Protocol):
    """One family of job records: how the runner reads, checkpoints and ends them."""

    def load(self, tenant: str, job_id: str) -> J | None: ...

    def save(self, job: J) -> J:
        """Write the job conditional on the revision it was read at (ConflictError otherwise); the job as stored."""

    def complete(self, job: J) -> None:
        """The last step ran: the job is completed (the family says what else ends with it)."""

    def fail(self, job: J, reason: str) -> None:
        """The job failed for `reason` (the family adds what stays done and what to do)."""


@dataclass(frozen=True)
class Hop[J: SteppedJob]:
    """What a step handler did: the job as it checkpointed it, and what follows."""

    job: J
    then: Literal["next", "done", "ended"] = "next"  # ended: the handler already recorded how the job ended
    delay: int = 0  # seconds before the next step is delivered (the queue allows up to 900)


type StepHandler[J: SteppedJob] = Callable[[J, Any, TimeLeft], Hop[J]]  # (the job marked running, its message, time left)


@dataclass(frozen=True)
class _Family[J: SteppedJob]:
    ledger: JobLedger[J]
    handlers: Mapping[str, StepHandler[J]]


class JobRunner:
    """The protocol above over one queue; families register their ledger and a step handler per kind."""

    def __init__(self, queue: JobQueue, *, clock: Callable[[], datetime] = utcnow,
                 builders: Mapping[str, Callable[[], object]] | None = None) -> None:
        """`builders`: per task, what builds the service that registers that family, called on the task's
        first message (the composition root stays lazy: a worker that only erases never builds imports)."""
        self._queue = queue
        self._clock = clock
        self._builders = dict(builders or {})
        self._families: dict[str, _Family[Any]] = {}

    def register[J: SteppedJob](self, task: str, ledger: JobLedger[J], handlers: Mapping[str, StepHandler[J]]) -> None:
        """Messages whose `task` is `task` load their job from `ledger` and run `handlers[job.kind]`."""
        self._families[task] = _Family(ledger, dict(handlers))

    def run(self, message: StepMessage, time_left_ms: TimeLeft = forever) -> None:
        """One step (the worker calls it per message). Raises on failure: SQS redelivers."""
        family = self._family(message)
        job = family.ledger.load(message.tenant, message.job_id)
        if job is None or job.finished:
            logger.info(f"{message.task} step ignored: no such job or job finished", extra={"job_id": message.job_id})
            return
        if message.step != job.step:
            if message.step < job.step and job.dispatched < job.step:
                self._dispatch(family.ledger, job, message)  # the hop that saved this step died before sending it
            logger.info(f"stale {message.task} step", extra={"job_id": job.job_id, "step": message.step, "at": job.step})
            return
        job = family.ledger.save(job.model_copy(update={
            "status": JobStatus.RUNNING, "started_at": job.started_at or self._clock(), "dispatched": job.step}))
        hop = family.handlers[job.kind](job, message, time_left_ms)
        if hop.then == "done":
            family.ledger.complete(hop.job)
        elif hop.then == "next":
            self._dispatch(family.ledger, family.ledger.save(hop.job.model_copy(update={"step": hop.job.step + 1})),
                           message, hop.delay)

    def fail(self, message: StepMessage, error: Exception) -> None:
        """The step's last delivery failed: the job says why (what it did so far stays done)."""
        ledger = self._family(message).ledger
        job = ledger.load(message.tenant, message.job_id)
        if job is None or job.finished:
            return
        # This step's hop, or the hop before it that saved the step but could never send it.
        undelivered = message.step == job.step - 1 and job.dispatched < job.step
        if message.step != job.step and not undelivered:
            return  # a stale duplicate failed; the job's current hop is alive elsewhere
        reason = error.message if isinstance(error, MnemoError) else type(error).__name__
        with contextlib.suppress(ConflictError):
            ledger.fail(job, reason)

    def _family(self, message: StepMessage) -> _Family[Any]:
        if message.task not in self._families and message.task in self._builders:
            self._builders[message.task]()
        family = self._families.get(message.task)
        if family is None:  # a wiring fault (bootstrap registers every family), never a message's
            raise LookupError(f"no job family registered for task {message.task!r}")
        return family

    def _dispatch[J: SteppedJob](self, ledger: JobLedger[J], job: J, message: StepMessage, delay: int = 0) -> None:
        """Send the job's current step (the message carries on what the last one carried: a mem0 pull's
        key), then record that it was sent; the next hop may have recorded it first."""
        step = message.model_copy(update={"step": job.step})
        if delay:  # only the erasure's last listing waits; every other send is the one-argument call it always was
            self._queue.send_step(step, delay)
        else:
            self._queue.send_step(step)
        with contextlib.suppress(ConflictError):  # the next hop already started (and recorded the dispatch)
            ledger.save(job.model_copy(update={"dispatched": job.step}))
