"""Concurrency on the real adapters over moto (issue 16): N concurrent edits of one memory and N
concurrent captures. The protocol itself is proven safe in tests/unit/test_version_protocol.py;
what fails here fails because of the store underneath."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from mnemo.adapters.aws import client
from mnemo.domain.commands import CaptureCommand, EditCommand
from mnemo.errors import ConflictError
from mnemo.local.poller import QueuePoller
from mnemo.local.server import load_function

N = 20


def test_concurrent_edits_every_acknowledged_edit_is_kept_or_was_refused(container, principal) -> None:
    service = container.memories
    memory = service.capture(principal, CaptureCommand(raw="start"))
    acknowledged: set[str] = set()
    refused: set[str] = set()

    def append(token: str) -> None:
        try:
            service.edit(principal, memory.id, EditCommand(edit_request=f"append: {token}"))
            acknowledged.add(token)
        except ConflictError:
            refused.add(token)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(append, [f"t{i:03d}" for i in range(N)]))
    final = service.get(principal, memory.id)
    assert acknowledged, "positive control: some edits win"
    assert acknowledged | refused == {f"t{i:03d}" for i in range(N)}
    assert sorted(final.raw.split()[1:]) == sorted(acknowledged), "an acknowledged edit was lost"


def test_concurrent_captures_are_all_stored_and_all_enriched(container, principal, aws) -> None:
    service = container.memories
    with ThreadPoolExecutor(max_workers=8) as pool:
        memories = list(pool.map(lambda i: service.capture(principal, CaptureCommand(raw=f"parallel note {i}", user_id="par")),
                                 range(N)))
    assert len({m.id for m in memories}) == N
    poller = QueuePoller(client("sqs"), aws["EnrichmentQueue"], load_function("worker").handler, wait_seconds=0)
    for _ in range(10):
        if not poller.poll_once():
            break
    stored = container.store.get_many(principal.tenant, [m.id for m in memories])
    assert sorted(m.raw for m in stored) == sorted(f"parallel note {i}" for i in range(N))
    assert {m.enrichment.state.value for m in stored} == {"enriched"}
