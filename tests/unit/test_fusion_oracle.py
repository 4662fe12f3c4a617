"""Columnar fusion (`mnemo.domain.scoring`) ranks exactly as the scalar fusion it replaced
(`tests/unit/scoring_oracle.py`): same ids in the same order, same scores and components, on random
candidate sets, both as `fuse` (benches, tests) and as the memory service composes it (hydrate the
best, expand among the visible only)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemo.domain import scoring
from mnemo.domain.scoring import DEFAULT_WEIGHTS, Candidate, Candidates, Ranked
from tests.unit import scoring_oracle as oracle

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
IDS = [f"m{i:02d}" for i in range(40)]
WEIGHT_SETS = [DEFAULT_WEIGHTS, scoring.Weights(1, 0, 0, 0), scoring.Weights(0, 1, 0, 0, length_pivot=0.0),
               scoring.Weights(graph_parents=2, graph_decay=0.9), scoring.Weights(semantic_evidence=None)]


@st.composite
def candidate_sets(draw: st.DrawFn) -> list[Candidate]:
    ids = draw(st.lists(st.sampled_from(IDS), min_size=0, max_size=30, unique=True))
    signal = st.floats(0.0, 1.0, allow_nan=False)
    found = []
    for mid in ids:
        found.append(Candidate(
            memory_id=mid,
            lexical=draw(st.one_of(st.just(0.0), st.floats(0.0, 1.0, allow_nan=False))),
            semantic=draw(st.one_of(st.none(), st.floats(-1.0, 1.0, allow_nan=False))),
            importance=draw(st.one_of(st.none(), signal)),
            captured_at=draw(st.one_of(st.none(), st.integers(-10**9, 10**14).map(
                lambda us: NOW - timedelta(microseconds=us)))),
            text_tokens=draw(st.one_of(st.none(), st.integers(0, 120))),
            # links reach other candidates and memories that are not candidates; weights may tie
            links=tuple(draw(st.lists(st.tuples(st.sampled_from(IDS), st.sampled_from([0.3, 0.6, 1.0]) | signal),
                                      max_size=4, unique_by=lambda link: link[0]))),
            context_only=draw(st.booleans()),
        ))
    return found


def same(actual: list[Ranked], expected: list[Ranked]) -> None:
    assert [r.memory_id for r in actual] == [r.memory_id for r in expected]
    for a, e in zip(actual, expected, strict=True):
        assert a.score == pytest.approx(e.score, abs=1e-9)
        assert a.components.keys() == e.components.keys()
        assert a.components == pytest.approx(e.components, abs=1e-9)


@settings(max_examples=150)
@given(candidates=candidate_sets(), top_k=st.integers(1, 15), expand_graph=st.booleans(),
       weights=st.sampled_from(WEIGHT_SETS), admitted=st.one_of(st.none(), st.sets(st.sampled_from(IDS))))
def test_fuse_ranks_exactly_as_the_scalar_oracle(candidates: list[Candidate], top_k: int, expand_graph: bool,
                                                 weights: scoring.Weights, admitted: set[str] | None) -> None:
    expected = oracle.fuse(candidates, top_k=top_k, now=NOW, expand_graph=expand_graph, weights=weights,
                           admitted=admitted)
    # Given the same candidates as rows and as columns
    for given_as in (candidates, Candidates.of(candidates)):
        same(scoring.fuse(given_as, top_k=top_k, now=NOW, expand_graph=expand_graph, weights=weights,
                          admitted=admitted), expected)


@settings(max_examples=150)
@given(candidates=candidate_sets(), top_k=st.integers(1, 15), expand_graph=st.booleans(),
       hidden=st.sets(st.sampled_from(IDS)))
def test_the_service_composition_ranks_exactly_as_the_scalar_oracle(
        candidates: list[Candidate], top_k: int, expand_graph: bool, hidden: set[str]) -> None:
    """`MemoryService.search`: hydrate the best `top_k + 10` and every neighbour, keep the visible
    (here: all but `hidden`), expand among them, cut to `top_k`."""
    ranked = oracle.score(candidates, now=NOW)
    linked = oracle.neighbours(ranked, candidates) if expand_graph else set()
    best = [r.memory_id for r in ranked[: top_k + 10]]
    visible = (set(best) | linked) - hidden
    if expand_graph:
        ranked = oracle.expand(ranked, candidates, admitted=visible & linked)
    expected = [r for r in ranked if r.memory_id in visible][:top_k]

    scored = scoring.score(Candidates.of(candidates), now=NOW)
    assert (scoring.neighbours(scored) if expand_graph else set()) == linked
    assert scored.best_ids(top_k + 10) == best  # the same memories are hydrated
    actual = (scoring.expand(scored, admitted=visible & linked, among=visible) if expand_graph
              else scored.among(visible))
    same([r for r in actual if r.memory_id in visible][:top_k], expected)


def test_the_oracle_comparison_can_fail() -> None:
    """Positive control for the two tests above: a different ranking is caught."""
    candidates = [Candidate("a", lexical=1.0, links=(("b", 1.0),)), Candidate("b", lexical=0.1)]
    expected = oracle.fuse(candidates, top_k=2, now=NOW)
    same(scoring.fuse(candidates, top_k=2, now=NOW), expected)
    with pytest.raises(AssertionError):
        same(scoring.fuse(candidates, top_k=2, now=NOW, expand_graph=False), expected)  # b's lent score is missing
    with pytest.raises(AssertionError):
        same(list(reversed(expected)), expected)


def test_columns_read_back_as_the_rows_they_came_from() -> None:
    rows = [Candidate("a", 1.5, 0.2, 0.9, NOW, 7, (("b", 0.5), ("c", 0.1))), Candidate("b")]
    columns = Candidates.of(rows)
    assert list(columns) == rows and columns == rows and len(columns) == 2
    assert Candidates.concat([columns, Candidates.of([])]) == rows
    assert Candidates.of([]) == [] and columns != rows[:1]
