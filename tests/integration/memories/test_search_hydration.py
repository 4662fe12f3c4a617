"""A search reads from the store only the hits that can reach its answer (issue 14): the best hits and
the graph neighbours whose reach could place them in the first top_k. The oracle is the same search
reading every neighbour (`reach` answering +inf for each): the answers must be identical, scores
included (to 6 places: the test clock ticks between the two), while fewer memories are read. Real worker, moto, local index underneath.

The property is the fused order's, so the reranker is off here (`MNEMO_RERANKER=off`). A reranker
reorders what was read, and a neighbour the fused reach leaves unread could have been lifted; its
own read bound (`top_k` + 2 of the prescored order) is test_search_rerank.py's, and the quality of
that bound is the benches' (bench/README.md "Issue 28, round 9")."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from mnemo.domain import scoring
from mnemo.domain.commands import CaptureCommand, RetrieveCommand
from tests.integration.surfaces.test_profile_thrindex import enrich

PEOPLE = ["Alice", "Bob", "Carol", "Dmitri", "Esther"]
PLACES = ["Lisbon", "Oslo", "Nairobi", "Kyoto"]
DOINGS = ["went hiking with", "cooked dinner for", "painted a mural with", "argued about chess with",
          "planned a trip to {place} with", "adopted a puppy with"]
QUERIES = ["hiking trip", "who cooked dinner", "Alice in Lisbon", "chess argument", "a puppy",
           "painting a mural in Kyoto", "Esther", "what did Bob plan", "dinner in Oslo", "unrelated quantum physics"]


_reach = scoring.reach


def every_neighbour(scored: scoring.Scored, weights: scoring.Weights = scoring.DEFAULT_WEIGHTS) -> dict[str, float]:
    """The oracle: every neighbour may reach the answer, so every one is read."""
    return dict.fromkeys(_reach(scored, weights), float("inf"))


@pytest.fixture(autouse=True)
def _fused_order(aws, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_RERANKER", "off")  # before `container` reads the settings


@pytest.fixture
def store(container, principal, aws) -> list[str]:
    ids = []
    for n, (person, other, doing, place) in enumerate(itertools.islice(
            zip(itertools.cycle(PEOPLE), itertools.cycle(PEOPLE[2:] + PEOPLE[:2]), itertools.cycle(DOINGS),
                itertools.cycle(PLACES)), 48)):
        text = f"{person} {doing.format(place=place)} {other} in {place} (day {n})"
        ids.append(container.memories.capture(principal, CaptureCommand(raw=text, as_user=True)).id)
    enrich(aws)
    return ids


def searches(container, principal, reads: list[int], **arguments: Any) -> list[list[tuple[str, float]]]:
    read = container.memories._store.get_many

    def counted(tenant: str, ids: Any, **kwargs: Any) -> Any:
        reads.append(len(ids))
        return read(tenant, ids, **kwargs)

    container.memories._store.get_many = counted
    try:
        return [[(hit.memory.id, round(hit.score, 6)) for hit in container.memories.search(principal, RetrieveCommand(query=q, **arguments))]
                for q in QUERIES]
    finally:
        del container.memories._store.get_many


@pytest.mark.parametrize("arguments", [{"top_k": 5}, {"top_k": 10}, {"top_k": 3, "threshold": 0.3}, {"top_k": 20}],
                         ids=["top5", "top10", "top3-floor", "top20"])
def test_reading_only_what_can_reach_the_answer_changes_no_answer(store, container, principal, monkeypatch, arguments) -> None:
    bounded_reads: list[int] = []
    bounded = searches(container, principal, bounded_reads, **arguments)
    monkeypatch.setattr(scoring, "reach", every_neighbour)
    full_reads: list[int] = []
    full = searches(container, principal, full_reads, **arguments)

    assert bounded == full
    assert any(bounded), "positive control: the searches find memories"
    assert sum(bounded_reads) < sum(full_reads), (bounded_reads, full_reads)


def test_hidden_best_hits_let_lower_neighbours_in(store, container, principal, monkeypatch) -> None:
    """Archived best hits are hidden from an open-only search: fewer than top_k of the best hits are
    shown, the bar drops, and the neighbours the first guess left out are read in a second call, then
    ranked exactly as reading every neighbour would rank them."""
    first = container.memories.search(principal, RetrieveCommand(query="hiking trip", top_k=15))
    archived = {hit.memory.id for hit in first[:13]}
    for memory_id in archived:
        container.memories.archive(principal, memory_id)
    reads: list[int] = []
    bounded = searches(container, principal, reads, top_k=5)
    assert len(reads) > len(QUERIES), "some search read a second time"
    monkeypatch.setattr(scoring, "reach", every_neighbour)
    assert bounded == searches(container, principal, [], top_k=5)
    assert not archived & {mid for answer in bounded for mid, _ in answer}
    # Positive control: the archived ones are still found when the search asks for archived memories
    found = container.memories.search(principal, RetrieveCommand(query="hiking trip", top_k=15, statuses=["archived"]))
    assert archived <= {hit.memory.id for hit in found}
