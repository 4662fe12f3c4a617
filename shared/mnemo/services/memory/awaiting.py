"""Waiting, bounded, for a memory's enrichment to finish (r3's `async=false`)."""

from __future__ import annotations

import time
from collections.abc import Callable

from mnemo.domain.models import EnrichmentState, Memory
from mnemo.ports import MemoryStore

WAIT_SECONDS = 10.0  # well inside API Gateway's 30 s; the worker usually finishes in 1-3 s
POLL_SECONDS = 0.25


def wait_for_enrichment(
    store: MemoryStore, memory: Memory, *, timeout: float = WAIT_SECONDS,
    sleep: Callable[[float], object] = time.sleep, monotonic: Callable[[], float] = time.monotonic,
) -> Memory:
    """The memory once its enrichment is no longer pending, or as it stands when `timeout` runs out
    (the caller says so; the work continues in the background either way). One GetItem per poll."""
    deadline = monotonic() + timeout
    current = memory
    while True:
        latest = store.get(memory.tenant, memory.id)
        current = latest or current
        if current.enrichment.state != EnrichmentState.PENDING or monotonic() >= deadline:
            return current
        sleep(POLL_SECONDS)
