"""The reranking stage of `MemoryService.search` (issue 28): in mode=full a configured `Reranker`
orders the best fused hits (the score stays the calibrated fused one); mode=fast never calls it; it only
ever receives memories the caller may see; when it fails, the fused order stands."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from mnemo.domain.commands import CaptureCommand, RetrieveCommand
from mnemo.domain.models import Memory
from mnemo.errors import DependencyError
from tests.integration.surfaces.test_profile_thrindex import enrich

ALICE = ["Standup moved to Tuesday mornings", "The standup notes live in the wiki", "Standup with the design team"]
BOB = "Standup secret: Bob is leaving the company"


class Reverse:
    """Ranks the texts in the reverse of the order it is given them; records every call."""

    share = 1.0  # its order alone, as a cross-encoder's

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.fail = fail

    def rerank(self, query: str, memories: Sequence[Memory]) -> list[float]:
        texts = [m.raw for m in memories]
        self.calls.append(texts)
        if self.fail:
            raise DependencyError("Bedrock rerank failed after 3 attempts: ThrottlingException")
        return [i / len(texts) for i in range(len(texts))]


@pytest.fixture
def stored(container, principal, aws) -> None:
    for text in ALICE:
        container.memories.capture(principal, CaptureCommand(raw=text, user_id="alice", as_user=True))
    container.memories.capture(principal, CaptureCommand(raw=BOB, user_id="bob", as_user=True))
    enrich(aws)


def search(container, principal, reranker: Reverse | None, mode: str = "full") -> list[tuple[str, float]]:
    container.memories._reranker = reranker
    hits = container.memories.search(principal, RetrieveCommand(query="standup", user_id="alice", mode=mode, top_k=3))
    return [(h.memory.raw, round(h.score, 6)) for h in hits]  # the test clock ticks between searches


def test_full_mode_takes_the_rerankers_order_and_keeps_the_fused_scores(stored, container, principal) -> None:
    fused = search(container, principal, None)
    reverse = Reverse()
    reranked = search(container, principal, reverse)
    assert len(fused) == 3 and reranked == fused[::-1]  # same hits, same scores, the reranker's order
    assert [sorted(call) for call in reverse.calls] == [sorted(ALICE)]  # alice's (the owner's) memories reach it ...
    assert all(BOB not in call for call in reverse.calls)  # ... bob's, with the same word, never do
    bobs = container.memories.search(principal, RetrieveCommand(query="standup", user_id="bob"))
    assert [h.memory.raw for h in bobs] == [BOB]  # control: the same query finds bob's memory in his namespace


def test_fast_mode_never_reranks_and_a_failing_reranker_leaves_the_fused_order(stored, container, principal) -> None:
    fused = search(container, principal, None)
    unused = Reverse()
    assert search(container, principal, unused, mode="fast") == search(container, principal, None, mode="fast")
    assert unused.calls == []
    failing = Reverse(fail=True)
    assert search(container, principal, failing) == fused and len(failing.calls) == 1


def test_the_reranker_orders_the_best_twenty_whatever_top_k(container, principal, aws) -> None:
    notes = [f"Standup note {i}: room {100 + i} is booked" for i in range(25)]  # numbers differ: 25 memories
    for text in notes:
        container.memories.capture(principal, CaptureCommand(raw=text, user_id="alice", as_user=True))
    enrich(aws)

    def raws(top_k: int) -> list[str]:
        hits = container.memories.search(principal, RetrieveCommand(query="standup note", user_id="alice", top_k=top_k))
        return [h.memory.raw for h in hits]

    container.memories._reranker = None
    fused = raws(25)
    assert sorted(fused) == sorted(notes)
    reverse = container.memories._reranker = Reverse()
    ordered = raws(25)
    assert reverse.calls == [fused[:20]]  # the best 20 reach it (RERANK_DEPTH), not all 25 asked for
    assert ordered == fused[:20][::-1] + fused[20:]  # its order for those, the fused order after them
    assert raws(5) == ordered[:5] and reverse.calls[1] == fused[:20]  # a shorter search: the same first hits
