"""The in-process index: BM25 candidates, namespace masks, and partitions no query can cross."""

from __future__ import annotations

from datetime import UTC, datetime

from mnemo.adapters.local.index import LocalSearchIndex
from mnemo.domain.models import Status
from mnemo.domain.namespace import NamespaceFilter
from mnemo.domain.scoring import fuse
from mnemo.ports import IndexDocument, SearchQuery

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def doc(memory_id: str, text: str, *, tenant: str = "t1", user: str = "default", author: str = "user",
        status: Status = Status.OPEN, agent: str | None = None, group: str = "default") -> IndexDocument:
    return IndexDocument(tenant=tenant, memory_id=memory_id, user_id=user, author=author, status=status, text=text,
                         captured_at=NOW, created_at=NOW, agent_id=agent, group_id=group)


def query(text: str, *, tenant: str = "t1", user_id: str | None = "default", agent_id: str | None = None,
          group_id: str | None = None, **kwargs: object) -> SearchQuery:
    scope = NamespaceFilter(tenant=tenant, user_id=user_id, agent_id=agent_id, group_id=group_id)
    return SearchQuery(**{"scope": scope, "text": text, "authors": ["user", "agent"], **kwargs})


def ids(index: LocalSearchIndex, q: SearchQuery) -> list[str]:
    """Ids best first, ranked as the service ranks them."""
    return [r.memory_id for r in fuse(index.search(q), top_k=10, now=NOW, expand_graph=False)]


def test_ranks_the_matching_memory_first_with_scores_in_unit_interval() -> None:
    index = LocalSearchIndex()
    index.upsert([doc("a", "Standups are on Tuesdays at 10am"), doc("b", "I prefer dark roast coffee"),
                  doc("c", "Coffee with Anna on Friday")])
    hits = fuse(index.search(query("dark roast coffee")), top_k=10, now=NOW)
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
    assert ids(index, query("secret plan")) == ["mine"]
    assert ids(index, query("secret plan", tenant="t2")) == ["theirs"]
    assert ids(index, query("secret plan", user_id="bob")) == ["other-user"]
    # A tenant-wide read (no user) finds both users of t1, and still nothing of t2
    assert sorted(ids(index, query("secret plan", user_id=None))) == ["mine", "other-user"]


def test_author_and_status_filters() -> None:
    index = LocalSearchIndex()
    index.upsert([doc("u", "buy milk", author="user"), doc("g", "buy milk", author="agent"),
                  doc("done", "buy milk", status=Status.COMPLETED)])
    assert set(ids(index, query("milk", authors=["user"]))) == {"u"}
    assert set(ids(index, query("milk"))) == {"u", "g"}


def test_upsert_replaces_and_delete_removes() -> None:
    index = LocalSearchIndex()
    index.upsert([doc("a", "buy milk")])
    index.upsert([doc("a", "buy bread")])
    assert index.search(query("milk")) == []
    assert ids(index, query("bread")) == ["a"]
    index.delete("t1", "a")
    assert index.search(query("bread")) == []


def test_agent_and_group_filters_are_row_masks() -> None:
    index = LocalSearchIndex()
    index.upsert([doc("claude-team", "deploy notes", agent="claude", group="team"),
                  doc("claude-solo", "deploy notes", agent="claude"),
                  doc("cursor-team", "deploy notes", agent="cursor", group="team"),
                  doc("bob-claude", "deploy notes", user="bob", agent="claude")])
    assert sorted(ids(index, query("deploy"))) == ["claude-solo", "claude-team", "cursor-team"]  # positive control
    assert sorted(ids(index, query("deploy", agent_id="claude"))) == ["claude-solo", "claude-team"]
    assert sorted(ids(index, query("deploy", group_id="team"))) == ["claude-team", "cursor-team"]
    assert ids(index, query("deploy", agent_id="claude", group_id="team")) == ["claude-team"]
    assert sorted(ids(index, query("deploy", user_id=None, agent_id="claude"))) == [
        "bob-claude", "claude-solo", "claude-team"]
    assert ids(index, query("deploy", agent_id="never-seen")) == []


def test_a_search_after_a_new_version_reads_the_new_signals_not_the_cached_row() -> None:
    # Given a searched index (its column cache now holds v1's row) and a new version of one memory
    index = LocalSearchIndex()
    index.upsert([doc("a", "harbour ferry timetable").model_copy(update={"importance": 0.1, "links": {"x": 0.5}}),
                  doc("b", "harbour ferry tickets")])
    before = {c.memory_id: c for c in index.search(query("harbour ferry"))}
    index.upsert([doc("a", "harbour ferry timetable").model_copy(
        update={"version": 2, "importance": 0.9, "links": {"y": 0.7}})])
    index.delete("t1", "b")

    after = {c.memory_id: c for c in index.search(query("harbour ferry"))}

    # Then the new version's signals are read, the deleted memory is gone, and v1's were read before
    assert (before["a"].importance, before["a"].links, "b" in before) == (0.1, (("x", 0.5),), True)
    assert (after["a"].importance, after["a"].links, set(after)) == (0.9, (("y", 0.7),), {"a"})
    assert after["a"].text_tokens == 3 and after["a"].lexical > 0
