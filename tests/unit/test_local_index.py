"""The in-process index: BM25 ranking, [0, 1] scores, and partitions no query can cross."""

from __future__ import annotations

from datetime import UTC, datetime

from mnemo.adapters.local_index import LocalSearchIndex
from mnemo.domain.models import Status
from mnemo.ports import IndexDocument, SearchQuery

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def doc(memory_id: str, text: str, *, tenant: str = "t1", user: str = "default", author: str = "user",
        status: Status = Status.OPEN) -> IndexDocument:
    return IndexDocument(tenant=tenant, memory_id=memory_id, user_id=user, author=author, status=status, text=text,
                         captured_at=NOW, created_at=NOW)


def query(text: str, **kwargs: object) -> SearchQuery:
    return SearchQuery(**{"tenant": "t1", "user_id": "default", "text": text, "authors": ["user", "agent"], **kwargs})


def test_ranks_the_matching_memory_first_with_scores_in_unit_interval() -> None:
    index = LocalSearchIndex()
    index.upsert([doc("a", "Standups are on Tuesdays at 10am"), doc("b", "I prefer dark roast coffee"),
                  doc("c", "Coffee with Anna on Friday")])
    hits = index.search(query("dark roast coffee"))
    assert [h.memory_id for h in hits][:2] == ["b", "c"]
    assert all(0.0 < h.score < 1.0 for h in hits)
    assert hits[0].score > hits[1].score


def test_no_match_returns_nothing() -> None:
    index = LocalSearchIndex()
    index.upsert([doc("a", "Standups are on Tuesdays")])
    assert index.search(query("quantum chromodynamics")) == []


def test_tenants_and_users_never_see_each_other() -> None:
    index = LocalSearchIndex()
    index.upsert([doc("mine", "secret plan alpha"), doc("theirs", "secret plan alpha", tenant="t2"),
                  doc("other-user", "secret plan alpha", user="bob")])
    assert [h.memory_id for h in index.search(query("secret plan"))] == ["mine"]
    assert [h.memory_id for h in index.search(query("secret plan", tenant="t2"))] == ["theirs"]
    assert [h.memory_id for h in index.search(query("secret plan", user_id="bob"))] == ["other-user"]


def test_author_and_status_filters() -> None:
    index = LocalSearchIndex()
    index.upsert([doc("u", "buy milk", author="user"), doc("g", "buy milk", author="agent"),
                  doc("done", "buy milk", status=Status.COMPLETED)])
    assert {h.memory_id for h in index.search(query("milk", authors=["user"]))} == {"u"}
    assert {h.memory_id for h in index.search(query("milk"))} == {"u", "g"}


def test_upsert_replaces_and_delete_removes() -> None:
    index = LocalSearchIndex()
    index.upsert([doc("a", "buy milk")])
    index.upsert([doc("a", "buy bread")])
    assert index.search(query("milk")) == []
    assert [h.memory_id for h in index.search(query("bread"))] == ["a"]
    index.delete("t1", "a")
    assert index.search(query("bread")) == []
