"""Capture order from the browse index `gsi1` (one user's memories, sorted by `created_at#id`): the
memory captured just before each of a batch's memories, read from the store (where a memory is before
its enrichment task exists) rather than from the search index (where it is only once enriched)."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

from mnemo.adapters.dynamodb.codec import browse_pk, browse_sk
from mnemo.domain.models import Memory, Status
from mnemo.ports import SIMILAR_AUTHORS

# (partition key, sort key, limit) -> up to `limit` memories sorted below the key, newest first, and
# whether the partition has no more below them: one Query of gsi1 (the store's own request wrapper).
Below = Callable[[str, str, int], tuple[list[Memory], bool]]


def preceding(below: Below, tenant: str, user_id: str, memories: Sequence[Memory]) -> dict[str, Memory | None]:
    """Per author partition of the user's open memories, one Query newest-first below the latest of
    `memories`, `len(memories) + 1` items: when the batch's memories are contiguous in capture order
    (the usual case) that read covers each one's predecessor. A memory the read did not reach below
    gets a Limit-1 Query of its own, so the answer is exact either way."""
    keys = {m.id: capture_key(m) for m in memories}
    found: dict[str, Memory | None] = {m.id: None for m in memories}
    for author in SIMILAR_AUTHORS:
        pk = browse_pk("gsi1", tenant, {"user_id": user_id}, Status.OPEN.value, author)
        read, exhausted = below(pk, max(keys.values()), len(memories) + 1)
        ascending = sorted(read, key=capture_key)
        sorted_keys = [capture_key(m) for m in ascending]
        for memory_id, key in keys.items():
            if exhausted or (sorted_keys and sorted_keys[0] < key):
                at = bisect.bisect_left(sorted_keys, key)  # the read's items strictly below `key`
                candidate = ascending[at - 1] if at else None
            else:  # the read stopped above this memory: ask for its own predecessor
                candidate = next(iter(below(pk, key, 1)[0]), None)
            current = found[memory_id]
            if candidate is not None and (current is None or capture_key(candidate) > capture_key(current)):
                found[memory_id] = candidate
    return found


def capture_key(memory: Memory) -> str:
    return browse_sk(memory.created_at, memory.id)
