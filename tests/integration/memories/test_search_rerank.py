"""The reranking stage of `MemoryService.search` (issue 28): in mode=full a configured `Reranker`
orders the best fused hits (the score stays the calibrated fused one); mode=fast never calls it; it only
ever receives memories the caller may see; when it fails, the fused order stands. A reranker that holds
what it scores (`prescore`) orders the best PRESCORE_DEPTH before the store read, which then reads only
the first top_k of its order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
    calibration = None  # unmeasured, as Bedrock's: the fused score decides and is shown

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.fail = fail

    def prescore(self, query: str, tenant: str, memory_ids: Sequence[str]) -> Mapping[str, float]:
        return {}  # it holds nothing: it reads the texts it is sent, as Bedrock does

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


def test_full_mode_takes_the_rerankers_order_and_shows_the_fused_scores_in_order(stored, container, principal) -> None:
    fused = search(container, principal, None)
    reverse = Reverse()
    reranked = search(container, principal, reverse)
    assert len(fused) == 3 and [t for t, _ in reranked] == [t for t, _ in fused[::-1]]  # the reranker's order
    # An unmeasured reranker's relevance is no score: each hit shows its fused score, capped by the one
    # above it, so the answer reads in descending order (the first keeps its own; fused's were distinct)
    scores = [score for _, score in reranked]
    assert scores == [fused[-1][1]] * 3 and len({score for _, score in fused}) == 3
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


class Holding(Reverse):
    """Holds a relevance for every memory whose text names `favourite` (as the local reranker holds
    token states), and records the ids it is asked about before the store read."""

    def __init__(self, favourite: str) -> None:
        super().__init__()
        self.favourite = favourite
        self.asked: list[list[str]] = []
        self.texts: dict[str, str] = {}

    def prescore(self, query: str, tenant: str, memory_ids: Sequence[str]) -> Mapping[str, float]:
        self.asked.append(list(memory_ids))
        return {mid: float(self.favourite in self.texts[mid]) for mid in memory_ids if mid in self.texts}

    def rerank(self, query: str, memories: Sequence[Memory]) -> list[float]:
        self.calls.append([m.raw for m in memories])
        return [float(self.favourite in m.raw) for m in memories]


def test_a_holding_reranker_orders_the_best_hundred_before_the_store_read(container, principal, aws, monkeypatch) -> None:
    notes = [f"Standup note {i}: room {100 + i} is booked" for i in range(40)]
    for text in [*notes, BOB]:
        container.memories.capture(principal, CaptureCommand(raw=text, user_id="bob" if text == BOB else "alice",
                                                             as_user=True))
    enrich(aws)
    container.memories._reranker = None
    fused = [h.memory for h in container.memories.search(
        principal, RetrieveCommand(query="standup note", user_id="alice", top_k=40))]
    last = fused[-1]  # the fused order's 40th: past RERANK_DEPTH, where a reranker that reads texts never looks
    holding = Holding(favourite=last.raw)
    holding.texts = {m.id: m.raw for m in fused}
    reads: list[int] = []
    get_many = container.memories._store.get_many
    monkeypatch.setattr(container.memories._store, "get_many", lambda tenant, ids: reads.append(len(ids)) or get_many(tenant, ids))
    container.memories._reranker = holding
    hits = container.memories.search(principal, RetrieveCommand(query="standup note", user_id="alice", top_k=3))
    assert hits[0].memory.raw == last.raw  # its order first ...
    assert [h.memory.raw for h in hits[1:]] == [m.raw for m in fused[:2]]  # ... then the fused order
    assert sum(reads) <= 3 + 2  # top_k + SPARE_HITS read, not RERANK_DEPTH
    assert sorted(holding.asked[0]) == sorted(m.id for m in fused)  # alice's candidates, all 40 (< PRESCORE_DEPTH) ...
    assert all(BOB not in call for call in holding.calls)  # ... and bob's, with the same word, never
    bobs = container.memories.search(principal, RetrieveCommand(query="standup note", user_id="bob"))
    assert [h.memory.raw for h in bobs] == [BOB]  # control: the same query finds bob's memory in his namespace
    container.memories._reranker = Reverse()
    assert last.raw not in [h.memory.raw for h in container.memories.search(
        principal, RetrieveCommand(query="standup note", user_id="alice", top_k=3))]  # control: one that reads texts
