"""A task's outcome in an enrichment batch: a stage's failure fails every task it served, the
first skip or failure is the one the worker sees, and a task that had written keeps what it wrote
for the erasure-race check."""

from __future__ import annotations

from mnemo.domain.messages import EnrichmentTask
from mnemo.domain.models import Memory
from mnemo.services.enrichment.batch import Derived, Failed, Planned, Prepared, Skipped, failing


def task(memory_id: str) -> Prepared:
    return Prepared(task=EnrichmentTask(tenant="t", memory_id=memory_id, version=1))


def test_a_stage_failure_fails_the_tasks_it_served_and_the_first_outcome_stays() -> None:
    served, skipped, other = task("m1"), task("m2"), task("m3")
    skipped.settle(Skipped("stale task"))
    error = RuntimeError("batch read failed")
    with failing([served, skipped]):
        raise error
    assert served.error is error and served.outcome == Failed(error)
    assert skipped.error is None and skipped.skip_reason == "stale task"  # its skip stands
    assert other.ok and other.error is None  # positive control: a task the stage did not serve
    later = RuntimeError("a later stage")
    with failing([served]):
        raise later
    assert served.error is error  # the first failure is what SQS sees


def test_a_failed_write_keeps_what_the_task_wrote() -> None:
    item = task("m1")
    memory = Memory.model_construct(tenant="t", id="m1")  # only carried, never read
    wrote = Derived(None, ["Acme"], None, ["doc-1"])
    with failing([Planned(item, memory, wrote)]):
        raise RuntimeError("graph write failed")
    assert isinstance(item.outcome, Failed) and item.outcome.memory is memory and item.outcome.wrote is wrote
    with failing([item]):
        pass  # a stage that succeeds records nothing
    assert isinstance(item.outcome, Failed)
