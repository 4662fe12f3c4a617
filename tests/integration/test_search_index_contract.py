"""The `SearchIndex` port contract: every adapter must pass every test here.

Parametrised over the local index and the OpenSearch adapter (both write paths: Serverless with
generated ids, managed/self-hosted with our ids) running against `opensearch_engine`, an in-memory
engine that executes the bodies the adapter sends. Every negative check has its positive control in
the same test: the owner finds what the others must not.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from opensearchpy import OpenSearch

from mnemo.adapters.local_index import LocalSearchIndex
from mnemo.adapters.opensearch_index import OpenSearchIndex
from mnemo.domain.models import Status
from mnemo.domain.namespace import NamespaceFilter
from mnemo.ports import IndexDocument, SearchIndex, SearchQuery
from tests.integration.opensearch_engine import Engine, engine_connection

NOW = datetime(2025, 6, 1, tzinfo=UTC)
MODEL = "contract-model"
EAST, NORTH, NE = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.6, 0.8, 0.0]


def local() -> SearchIndex:
    return LocalSearchIndex()


def opensearch(service: str) -> Callable[[], SearchIndex]:
    def build() -> SearchIndex:
        client = OpenSearch(hosts=[{"host": "engine.internal", "port": 9200}],
                            connection_class=engine_connection(Engine()), max_retries=0)
        return OpenSearchIndex(client, index="contract", service=service,  # type: ignore[arg-type]
                               embedding_model=MODEL, dimension=3)
    return build


@pytest.fixture(params=[local, opensearch("aoss"), opensearch("es")], ids=["local", "opensearch-aoss", "opensearch-es"])
def index(request: pytest.FixtureRequest) -> SearchIndex:
    return request.param()


def doc(memory_id: str, text: str, *, tenant: str = "t1", user: str = "u1", agent: str | None = None,
        group: str = "default", author: str = "user", status: Status = Status.OPEN, vector: list[float] | None = None,
        version: int = 1, minutes: int = 0, **kw: Any) -> IndexDocument:
    at = NOW + timedelta(minutes=minutes)
    return IndexDocument(tenant=tenant, memory_id=memory_id, user_id=user, agent_id=agent, group_id=group,
                         author=author, status=status, text=text, vector=vector, embedding_model=MODEL,
                         version=version, captured_at=at, created_at=at, **kw)


def found(index: SearchIndex, text: str, *, tenant: str = "t1", user: str | None = "u1", agent: str | None = None,
          group: str | None = None, vector: list[float] | None = None, **kw: Any) -> set[str]:
    scope = NamespaceFilter(tenant=tenant, user_id=user, agent_id=agent, group_id=group)
    query = SearchQuery(scope=scope, text=text, vector=vector, authors=["user", "agent"], **kw)
    return {c.memory_id for c in index.search(query)}


def test_ensure_index_is_idempotent(index: SearchIndex) -> None:
    index.ensure_index()
    assert index.ensure_index() is False


def test_tenants_and_users_are_isolated_and_a_tenant_wide_read_spans_its_users(index: SearchIndex) -> None:
    index.upsert([doc("mine", "secret plan alpha"), doc("bobs", "secret plan alpha", user="bob"),
                  doc("theirs", "secret plan alpha", tenant="t2")])
    assert found(index, "secret plan") == {"mine"}  # the owner finds it...
    assert found(index, "secret plan", user="bob") == {"bobs"}  # ...another user only their own...
    assert found(index, "secret plan", tenant="t2") == {"theirs"}  # ...another tenant only its own
    assert found(index, "secret plan", user=None) == {"mine", "bobs"}  # the whole tenant, never t2


def test_agent_and_group_filters_combine_with_the_user(index: SearchIndex) -> None:
    index.upsert([doc("a", "deploy notes", agent="claude", group="team"), doc("b", "deploy notes", agent="claude"),
                  doc("c", "deploy notes", agent="cursor", group="team"), doc("d", "deploy notes", user="bob", agent="claude")])
    assert found(index, "deploy") == {"a", "b", "c"}  # positive control: the user's three
    assert found(index, "deploy", agent="claude") == {"a", "b"}
    assert found(index, "deploy", group="team") == {"a", "c"}
    assert found(index, "deploy", agent="claude", group="team") == {"a"}
    assert found(index, "deploy", user=None, agent="claude") == {"a", "b", "d"}
    assert found(index, "deploy", agent="nobody") == set()


def test_author_and_status_filters(index: SearchIndex) -> None:
    index.upsert([doc("u", "buy milk"), doc("g", "buy milk", author="agent"),
                  doc("done", "buy milk", status=Status.COMPLETED)])
    scope = NamespaceFilter(tenant="t1", user_id="u1")
    assert {c.memory_id for c in index.search(SearchQuery(scope=scope, text="milk", authors=["user"]))} == {"u"}
    both = SearchQuery(scope=scope, text="milk", authors=["user", "agent"], statuses=[Status.OPEN, Status.COMPLETED])
    assert {c.memory_id for c in index.search(both)} == {"u", "g", "done"}


def test_upsert_replaces_and_delete_removes(index: SearchIndex) -> None:
    index.upsert([doc("a", "buy milk")])
    assert found(index, "milk") == {"a"}
    index.upsert([doc("a", "buy bread", version=2)])
    assert found(index, "milk") == set() and found(index, "bread") == {"a"}
    index.delete("t1", "a")
    assert found(index, "bread") == set()


def test_a_stale_version_never_replaces_a_newer_one(index: SearchIndex) -> None:
    index.upsert([doc("a", "buy bread", version=2)])
    index.upsert([doc("a", "buy milk", version=1)])  # a redelivered, older enrichment
    assert found(index, "bread") == {"a"} and found(index, "milk") == set()


def test_candidates_carry_raw_signals_from_both_legs(index: SearchIndex) -> None:
    index.upsert([
        doc("both", "Alice moved to Lisbon", vector=NE, importance=0.7, links={"other": 0.4}),
        doc("lexical", "Lisbon trams are yellow", vector=NORTH),
        doc("semantic", "a different topic entirely", vector=EAST),
    ])
    scope = NamespaceFilter(tenant="t1", user_id="u1")
    candidates = {c.memory_id: c for c in index.search(SearchQuery(scope=scope, text="Alice Lisbon", vector=EAST))}
    assert set(candidates) == {"both", "lexical", "semantic"}
    assert candidates["both"].semantic == pytest.approx(0.6, abs=1e-6)  # the cosine, not an engine score
    assert candidates["semantic"].semantic == pytest.approx(1.0, abs=1e-6)
    assert candidates["semantic"].lexical == 0.0  # found by the semantic leg only
    assert candidates["both"].lexical > candidates["lexical"].lexical > 0.0  # two query words beat one
    assert candidates["both"].importance == 0.7 and candidates["both"].captured_at == NOW
    assert candidates["both"].text_tokens == 3 and candidates["both"].links == (("other", 0.4),)


def test_without_a_vector_only_the_lexical_leg_runs(index: SearchIndex) -> None:
    index.upsert([doc("a", "Lisbon", vector=EAST), doc("b", "unrelated", vector=EAST)])
    scope = NamespaceFilter(tenant="t1", user_id="u1")
    candidates = index.search(SearchQuery(scope=scope, text="Lisbon"))
    assert [(c.memory_id, c.semantic) for c in candidates] == [("a", None)]


def test_similar_is_scoped_excludes_and_orders_by_cosine(index: SearchIndex) -> None:
    index.upsert([doc("self", "x", vector=EAST), doc("near", "x", vector=NE), doc("far", "x", vector=NORTH),
                  doc("gone", "x", vector=EAST, status=Status.ARCHIVED), doc("bobs", "x", user="bob", vector=EAST)])
    hits = index.similar("t1", "u1", EAST, 5, exclude="self")
    assert [h.memory_id for h in hits] == ["near", "far"]
    assert hits[0].score == pytest.approx(0.6, abs=1e-6)
    assert [h.memory_id for h in index.similar("t1", "bob", EAST, 5)] == ["bobs"]  # positive control for bob


def test_preceding_is_the_newest_open_document_of_the_user_before_a_time(index: SearchIndex) -> None:
    index.upsert([doc("first", "x", minutes=1), doc("second", "x", minutes=2), doc("later", "x", minutes=5),
                  doc("archived", "x", minutes=3, status=Status.ARCHIVED), doc("bobs", "x", user="bob", minutes=4)])
    before = index.preceding("t1", "u1", NOW + timedelta(minutes=4))
    assert before is not None and before.memory_id == "second"
    assert index.preceding("t1", "u1", NOW) is None
