"""Two local pollers on one queue, as Lambda runs concurrent batches (`MaximumConcurrency`): every
task redelivered once more, both pollers racing over them, and still each memory is enriched once."""

from __future__ import annotations

import threading

from mnemo.adapters.aws import client
from mnemo.domain.commands import CaptureCommand
from mnemo.domain.models import EnrichmentState
from mnemo.local.poller import QueuePoller
from mnemo.local.server import load_function


def test_two_pollers_never_double_apply_a_redelivered_task(aws, container, principal) -> None:
    # Given ten captured memories whose tasks are each in the queue twice (an at-least-once redelivery)
    sqs, url = client("sqs"), aws["EnrichmentQueue"]
    captured = [container.memories.capture(principal, CaptureCommand(raw=f"Caroline met Melanie at the lake, day {i}",
                                                                     as_user=True)) for i in range(10)]
    bodies: dict[str, str] = {}
    while len(bodies) < 10:
        for message in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=0).get("Messages", []):
            bodies[message["MessageId"]] = message["Body"]
    for body in bodies.values():
        sqs.send_message(QueueUrl=url, MessageBody=body)
    # When two pollers (small batches, so they interleave) drain the queue at the same time
    handler = load_function("worker").handler
    pollers = [QueuePoller(sqs, url, handler, batch_size=3, wait_seconds=0) for _ in range(2)]
    handled: list[int] = []

    def drain(poller: QueuePoller) -> None:
        while (count := poller.poll_once()) > 0:
            handled.append(count)

    threads = [threading.Thread(target=drain, args=(p,)) for p in pollers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    # Then all twenty deliveries were handled and deleted, none failed into a retry loop
    assert sum(handled) == 20
    assert sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])[
        "Attributes"]["ApproximateNumberOfMessages"] == "0"
    # and each memory was enriched exactly once: one attempt recorded, one conditional save won
    for captured_memory in captured:
        memory_id = captured_memory.id
        memory = container.store.get("local", memory_id)
        assert memory.enrichment.state == EnrichmentState.ENRICHED
        assert memory.enrichment.attempts == 1
        assert memory.revision == captured_memory.revision + 1  # one write since the capture: the enrichment's
        links = container.graph.links("local", memory_id)
        assert len({link.other_id for link in links}) == len(links)


def test_the_poller_runs_the_configured_number_of_batches_at_once(aws) -> None:
    from mnemo.settings import MnemoSettings

    assert MnemoSettings().local_worker_concurrency == 2  # the local default (Lambda: template.yaml)
    poller = QueuePoller(client("sqs"), aws["EnrichmentQueue"], lambda event, context: {}, wait_seconds=0, concurrency=2)
    poller.start()
    try:
        names = {t.name for t in threading.enumerate()}
        assert {"mnemo-queue-poller-0", "mnemo-queue-poller-1"} <= names
    finally:
        poller.stop()
    assert not {"mnemo-queue-poller-0", "mnemo-queue-poller-1"} & {t.name for t in threading.enumerate()}
