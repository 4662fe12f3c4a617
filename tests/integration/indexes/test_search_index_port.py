"""The `SearchIndex` port contract: the behaviour every index adapter must share, run over each of them.

- `local`: `LocalSearchIndex`, always.
- `engine`, `engine-aoss`: `OpenSearchIndex` (self-hosted and Serverless write paths) against
  `opensearch_engine`, an in-memory engine that executes the query DSL subset Mnemo sends, k-NN
  included (no analyzers: it tokenizes like the local index). Always.
- `emulator`: `OpenSearchIndex` (self-hosted write path, and the Serverless write path with generated
  `_id`s) against `osmem-server`, an in-memory OpenSearch emulator started on a free loopback port
  for this module. It builds analyzers for real and runs BM25, but not k-NN: tests that need the
  semantic leg are skipped there (the recorded-transport contract tests pin those bodies).
- `live`: `OpenSearchIndex` against a real cluster when `OPENSEARCH_URL` is set (`OPENSEARCH_SERVICE` =
  none|es|aoss, default none); every test runs, k-NN included (docs/index-mapping.md, "Test layers").

Reads poll (`eventually`): Serverless makes a write searchable only after its refresh interval.
"""

from __future__ import annotations

import contextlib
import copy
import os
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest

from mnemo.adapters.local.index import LocalSearchIndex
from mnemo.adapters.opensearch import queries as q
from mnemo.adapters.opensearch.index import OpenSearchIndex
from mnemo.domain.models import Status
from mnemo.domain.namespace import NamespaceFilter
from mnemo.domain.scoring import Ranked, fuse
from mnemo.ports import IndexDocument, SearchIndex, SearchQuery
from mnemo.settings import MnemoSettings
from tests.conftest import REPO

T = TypeVar("T")
NOW = datetime(2026, 1, 1, tzinfo=UTC)
MODEL = "port-test-model"
DIM = 4
ADAPTERS = ["local", "engine", "engine-aoss", "emulator", "emulator-aoss",
            pytest.param("live", marks=pytest.mark.opensearch)]


def emulate_possessive_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    """osmem-server 0.1.6 accepts the `possessive_english` stemmer and `_analyze` applies it, but an index
    analysing with it matches every document for every word (measured: `match` "dark" finds "Coffee with
    Anna on Friday" with the same score as "I prefer dark roast coffee"). On the emulator only, the
    analyzer runs with the built-in `apostrophe` filter in its place; `indexes/test_opensearch_emulator.py`
    still creates the production body unchanged."""
    analysis = copy.deepcopy(q.TEXT_ANALYSIS)
    analysis["filter"]["mnemo_possessive"] = {"type": "apostrophe"}
    monkeypatch.setattr(q, "TEXT_ANALYSIS", analysis)


def opensearch_on(url: str, service: str, base: str) -> OpenSearchIndex:
    from opensearchpy import OpenSearch

    if service == "none":
        settings = MnemoSettings(opensearch_url=url, opensearch_service="none", opensearch_index=base,
                                 embedding_dimension=DIM)
        return OpenSearchIndex.from_settings(settings, embedding_model=MODEL)
    # The Serverless write path without SigV4 (the emulator has no IAM): same adapter, plain client.
    return OpenSearchIndex(OpenSearch(hosts=[url]), index=base, service="aoss", embedding_model=MODEL, dimension=DIM)


@pytest.fixture(params=ADAPTERS)
def adapter(request: pytest.FixtureRequest) -> Iterator[tuple[str, Callable[[], SearchIndex]]]:
    """(kind, factory): the factory builds a fresh adapter on one fresh physical index per test."""
    kind: str = request.param
    base = f"mnemo-port-{uuid.uuid4().hex[:8]}"
    made: list[OpenSearchIndex] = []
    if kind == "local":
        yield kind, LocalSearchIndex
        return
    if kind.startswith("engine"):
        from opensearchpy import OpenSearch

        from tests.integration.opensearch_engine import Engine, engine_connection

        engine, service = Engine(), ("aoss" if kind == "engine-aoss" else "none")
        yield kind, lambda: OpenSearchIndex(  # a fresh client per instance, one engine (one cluster) per test
            OpenSearch(hosts=[{"host": "engine.internal", "port": 9200}], connection_class=engine_connection(engine),
                       max_retries=0),
            index=base, service=service, embedding_model=MODEL, dimension=DIM, legs="msearch")  # type: ignore[arg-type]
        return
    if kind == "live":
        url = os.environ.get("OPENSEARCH_URL")
        if not url:
            pytest.skip("set OPENSEARCH_URL to run the port contract against a real cluster")
        service = os.environ.get("OPENSEARCH_SERVICE", "none")
        settings = MnemoSettings(opensearch_url=url, opensearch_service=service,  # type: ignore[arg-type]
                                 opensearch_index=base, embedding_dimension=DIM)
        factory: Callable[[], OpenSearchIndex] = lambda: OpenSearchIndex.from_settings(settings, embedding_model=MODEL)  # noqa: E731
    else:
        url = request.getfixturevalue("emulator_url")
        service = "aoss" if kind == "emulator-aoss" else "none"
        emulate_possessive_filter(request.getfixturevalue("monkeypatch"))
        factory = lambda: opensearch_on(url, service, base)  # noqa: E731

    def make() -> OpenSearchIndex:
        index = factory()
        made.append(index)
        return index

    yield kind, make
    if made:
        with contextlib.suppress(Exception):  # cleanup of a throwaway index must not mask the test's result
            made[0]._client.indices.delete(index=made[0].index_name, ignore=[404])


def needs_knn(kind: str) -> None:
    if kind.startswith("emulator"):
        pytest.skip("osmem-server does not execute k-NN; the contract tests pin the knn bodies")


def eventually[T](check: Callable[[], T], timeout: float | None = None) -> T:
    """Poll until `check()` is truthy: Serverless refreshes about once a minute and we never `_refresh`."""
    deadline = time.monotonic() + (timeout if timeout is not None else (90.0 if os.environ.get("OPENSEARCH_URL") else 5.0))
    while True:
        result = check()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(0.2)


def doc(memory_id: str, text: str, *, tenant: str = "t1", user: str = "u1", agent: str | None = None,
        group: str = "default", author: str = "user", status: Status = Status.OPEN, version: int = 1,
        vector: list[float] | None = None, created: float = 0.0, **kw: Any) -> IndexDocument:
    return IndexDocument(tenant=tenant, memory_id=memory_id, version=version, user_id=user, agent_id=agent,
                         group_id=group, author=author, status=status, text=text, captured_at=NOW - timedelta(days=1),
                         created_at=NOW + timedelta(minutes=created), vector=vector,
                         embedding_model=MODEL if vector is not None else None, **kw)


def query(text: str, *, tenant: str = "t1", user_id: str | None = "u1", agent_id: str | None = None,
          group_id: str | None = None, **kw: Any) -> SearchQuery:
    scope = NamespaceFilter(tenant=tenant, user_id=user_id, agent_id=agent_id, group_id=group_id)
    return SearchQuery(**{"scope": scope, "text": text, "authors": ["user", "agent"], **kw})


def ranked(index: SearchIndex, q: SearchQuery) -> list[Ranked]:
    """The adapter's candidates ranked as the memory service ranks them (graph expansion aside)."""
    return fuse(index.search(q), top_k=q.top_k, now=NOW, expand_graph=False)


def ids(index: SearchIndex, q: SearchQuery) -> list[str]:
    return [r.memory_id for r in ranked(index, q)]


# -- the contract ------------------------------------------------------------------------------
def test_ensure_index_is_idempotent(adapter) -> None:
    kind, make = adapter
    index = make()
    first = index.ensure_index()
    assert index.ensure_index() is False  # the second call finds it
    assert make().ensure_index() is False  # so does another instance (another Lambda)
    assert first is (kind != "local")


def test_lexical_search_finds_through_the_analyzer_with_scores_in_the_unit_interval(adapter) -> None:
    _, make = adapter
    index = make()
    index.upsert([doc("a", "Alice's cats sleep in the garden"), doc("b", "I prefer dark roast coffee"),
                  doc("c", "Coffee with Anna on Friday")])

    hits = eventually(lambda: ranked(index, query("dark roast coffee")))
    assert [h.memory_id for h in hits][:2] == ["b", "c"]
    assert all(0.0 <= h.score <= 1.0 for h in hits) and hits[0].score > hits[1].score
    # possessive and plural folded, stopwords dropped: the same tokens on both sides
    assert ids(index, query("cat")) == ["a"]
    assert ids(index, query("alice")) == ["a"]
    assert ids(index, query("the in")) == []


def test_the_lexical_signal_is_the_local_indexs_bm25_on_every_adapter(adapter) -> None:
    # Given the same three memories in the adapter and in a local index (the form every benchmark measured)
    kind, make = adapter
    docs = [doc("a", "renew my passport"), doc("b", "dark roast coffee"), doc("c", "passport photos for the visa")]
    index, reference = make(), LocalSearchIndex()
    index.upsert(docs)
    reference.upsert(docs)
    found = eventually(lambda: {c.memory_id: c.lexical for c in index.search(query("renew passport"))})
    expected = {c.memory_id: c.lexical for c in reference.search(query("renew passport"))}
    # Then the raw BM25 each candidate carries is the local index's: OpenSearch's Lucene scores lack the k1 + 1
    # factor (LUCENE-8563) and the adapter puts it back, or the lexical leg would count 2.2x less on AWS
    assert set(found) == set(expected) == {"a", "c"}
    if kind in ("local", "engine", "engine-aoss"):
        assert found == pytest.approx(expected, rel=1e-6)
    else:  # another BM25 implementation (its own length norms): the same scale, not the same digits
        assert found == pytest.approx(expected, rel=0.3)


def test_tenants_and_users_never_see_each_other(adapter) -> None:
    _, make = adapter
    index = make()
    index.upsert([doc("mine", "secret plan alpha"), doc("theirs", "secret plan alpha", tenant="t2"),
                  doc("other-user", "secret plan alpha", user="bob")])

    assert eventually(lambda: ids(index, query("secret plan"))) == ["mine"]  # the owner finds it...
    assert ids(index, query("secret plan", tenant="t2")) == ["theirs"]  # ...the other tenant only its own
    assert ids(index, query("secret plan", user_id="bob")) == ["other-user"]
    assert sorted(ids(index, query("secret plan", user_id=None))) == ["mine", "other-user"]  # tenant-wide, never t2


def test_agent_and_group_filters_combine_with_the_user(adapter) -> None:
    _, make = adapter
    index = make()
    index.upsert([doc("a", "deploy notes", agent="claude", group="team"), doc("b", "deploy notes", agent="claude"),
                  doc("c", "deploy notes", agent="cursor", group="team"),
                  doc("d", "deploy notes", user="bob", agent="claude")])

    def found(**scope: Any) -> set[str]:
        return set(ids(index, query("deploy", **scope)))

    assert eventually(lambda: found()) == {"a", "b", "c"}  # positive control: the user's three
    assert found(agent_id="claude") == {"a", "b"}
    assert found(group_id="team") == {"a", "c"}
    assert found(agent_id="claude", group_id="team") == {"a"}
    assert found(user_id=None, agent_id="claude") == {"a", "b", "d"}
    assert found(agent_id="nobody") == set()


def test_author_and_status_filters(adapter) -> None:
    _, make = adapter
    index = make()
    index.upsert([doc("u", "buy milk", author="user"), doc("g", "buy milk", author="agent"),
                  doc("done", "buy milk", status=Status.COMPLETED)])

    assert eventually(lambda: len(ids(index, query("milk"))) == 2)
    assert set(ids(index, query("milk", authors=["user"]))) == {"u"}
    assert set(ids(index, query("milk"))) == {"u", "g"}
    assert set(ids(index, query("milk", statuses=[Status.OPEN, Status.COMPLETED]))) == {"u", "g", "done"}


def test_upsert_replaces_and_delete_removes(adapter) -> None:
    _, make = adapter
    index = make()
    known = index.upsert([doc("a", "buy milk")]).get("a", [])
    assert eventually(lambda: ids(index, query("milk"))) == ["a"]

    known = index.upsert([doc("a", "buy bread", version=2, index_ids=known)]).get("a", [])

    assert eventually(lambda: ids(index, query("bread"))) == ["a"]
    assert eventually(lambda: ids(index, query("milk")) == [])
    index.delete("t1", "a", known)
    assert eventually(lambda: ids(index, query("bread")) == [])


def test_a_stale_version_never_replaces_a_newer_one(adapter) -> None:
    _, make = adapter  # a redelivered, older enrichment must not win, whatever the adapter
    index = make()
    index.upsert([doc("a", "buy bread", version=3)])
    assert eventually(lambda: ids(index, query("bread"))) == ["a"]

    index.upsert([doc("a", "buy milk", version=2)])

    assert ids(index, query("milk")) == [] and ids(index, query("bread")) == ["a"]


def test_reindex_into_a_new_index_makes_the_same_memories_searchable_once(adapter) -> None:
    # The reindex command re-enriches every memory into the (new, empty) index: the same upserts again.
    _, make = adapter
    index = make()
    documents = [doc(f"m{i}", f"note number {i} about gardening") for i in range(5)]
    index.upsert(documents)
    assert eventually(lambda: len(ids(index, query("gardening"))) == 5)

    rebuilt = make()
    rebuilt.upsert(documents)  # a reindex over an index that already holds them: no duplicates

    assert eventually(lambda: sorted(ids(rebuilt, query("gardening", top_k=20)))) == [f"m{i}" for i in range(5)]


def test_semantic_leg_and_similar(adapter) -> None:
    kind, make = adapter
    needs_knn(kind)
    index = make()
    unit, other = [0.5, 0.5, 0.5, 0.5], [0.5, -0.5, 0.5, -0.5]
    index.upsert([doc("near", "Alice moved to Lisbon", vector=unit), doc("far", "Bob likes tea", vector=other),
                  doc("theirs", "Alice moved to Lisbon", vector=unit, tenant="t2")])

    hits = eventually(lambda: ranked(index, query("Lisbon", vector=unit)))
    semantic = {h.memory_id: h.components["semantic"] for h in hits}
    assert hits[0].memory_id == "near" and semantic["near"] > semantic.get("far", 0.0)
    similar = index.similar("t1", "u1", unit, 5)
    assert [h.memory_id for h in similar][0] == "near" and "theirs" not in [h.memory_id for h in similar]
    assert [h.memory_id for h in index.similar("t1", "u1", unit, 5, exclude="near")][0] == "far"


def test_candidates_carry_raw_signals_from_both_legs(adapter) -> None:
    kind, make = adapter
    needs_knn(kind)
    index = make()
    east, north, north_east = [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.6, 0.8, 0.0, 0.0]
    index.upsert([
        doc("both", "Alice moved to Lisbon", vector=north_east, importance=0.7, links={"other": 0.4}),
        doc("lexical", "Lisbon trams are yellow", vector=north),
        doc("semantic", "a different topic entirely", vector=east),
    ])

    candidates = {c.memory_id: c for c in eventually(lambda: index.search(query("Alice Lisbon", vector=east)))}

    assert set(candidates) == {"both", "lexical", "semantic"}
    assert candidates["both"].semantic == pytest.approx(0.6, abs=1e-3)  # the cosine, not an engine score
    assert candidates["semantic"].semantic == pytest.approx(1.0, abs=1e-3)
    assert candidates["semantic"].lexical == 0.0  # found by the semantic leg only
    assert candidates["both"].lexical > candidates["lexical"].lexical > 0.0  # two query words beat one
    assert candidates["both"].importance == pytest.approx(0.7) and candidates["both"].text_tokens == 3
    assert candidates["both"].links == (("other", 0.4),)


def test_without_a_vector_only_the_lexical_leg_runs(adapter) -> None:
    _, make = adapter
    index = make()
    index.upsert([doc("a", "Lisbon", vector=[1.0, 0.0, 0.0, 0.0]), doc("b", "unrelated", vector=[1.0, 0.0, 0.0, 0.0])])
    candidates = eventually(lambda: index.search(query("Lisbon")))
    assert [(c.memory_id, c.semantic) for c in candidates] == [("a", None)]


# -- a LoCoMo slice ranked through OpenSearch next to the local index -----------------------------------
LOCOMO = REPO.parent / "shared" / "bench" / "locomo-dev.json"
SLICE_TURNS, SLICE_QUESTIONS = 150, 40


@pytest.mark.parametrize("kind", ["emulator", pytest.param("live", marks=pytest.mark.opensearch)])
def test_a_locomo_slice_ranks_alike_through_opensearch_and_the_local_index(
        kind: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the first conversation's first turns as memories and the questions they answer, when both
    # indexes rank them, then recall@5 through OpenSearch is within 0.1 of the local index's. On the
    # emulator the lexical leg only (BM25 alone; tokens differ as docs/index-mapping.md lists); live,
    # both legs with the local MiniLM embedder.
    if not LOCOMO.exists():
        pytest.skip(f"{LOCOMO} not present")
    from bench.locomo.data import load
    from bench.locomo.metrics import recall_at_k

    base = f"mnemo-locomo-{uuid.uuid4().hex[:8]}"
    embed = None
    if kind == "live":
        url = os.environ.get("OPENSEARCH_URL")
        if not url:
            pytest.skip("set OPENSEARCH_URL to rank the LoCoMo slice through a real cluster")
        from mnemo.adapters.local.minilm_embedder import LocalMiniLmEmbedder

        embedder = LocalMiniLmEmbedder(REPO / "models" / "minilm")
        embed = embedder.embed
        settings = MnemoSettings(opensearch_url=url, opensearch_service=os.environ.get("OPENSEARCH_SERVICE", "none"),  # type: ignore[arg-type]
                                 opensearch_index=base, embedding_dimension=embedder.dimension)
        remote = OpenSearchIndex.from_settings(settings, embedding_model=MODEL)
    else:
        emulate_possessive_filter(monkeypatch)
        remote = opensearch_on(request.getfixturevalue("emulator_url"), "none", base)
    conversation = load(LOCOMO)[0][0]
    turns = conversation.turns[:SLICE_TURNS]
    kept = {t.dia_id for t in turns}
    questions = [qn for qn in conversation.questions if set(qn.evidence) <= kept][:SLICE_QUESTIONS]
    vectors = embed([t.content for t in turns]) if embed else [None] * len(turns)
    documents = [doc(t.dia_id, t.content, vector=v, created=i) for i, (t, v) in enumerate(zip(turns, vectors, strict=True))]
    local = LocalSearchIndex()
    try:
        for index in (local, remote):
            for start in range(0, len(documents), 50):
                index.upsert(documents[start:start + 50])
        eventually(lambda: ids(remote, query(turns[-1].text)))  # Serverless: wait for the refresh

        def recall(index: SearchIndex) -> float:
            total = 0.0
            for qn in questions:
                vector = embed([qn.question])[0] if embed else None
                total += recall_at_k(ids(index, query(qn.question, vector=vector, top_k=5)), qn.evidence, 5)
            return total / len(questions)

        assert len(questions) >= 10
        local_recall, remote_recall = recall(local), recall(remote)
        print(f"LoCoMo slice ({kind}): recall@5 local {local_recall:.3f}, OpenSearch {remote_recall:.3f}")
        assert remote_recall >= local_recall - 0.1
    finally:
        remote._client.indices.delete(index=remote.index_name, ignore=[404])
