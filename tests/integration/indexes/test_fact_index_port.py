"""The `FactIndex` port contract: what every facts index must do, run over each adapter.

- `local`: `LocalFactIndex`, always.
- `engine`, `engine-aoss`: `OpenSearchFactIndex` (self-hosted and Serverless write paths) against the
  in-memory engine that executes the DSL Mnemo sends, k-NN included (`opensearch_engine`). Always.
- `emulator`, `emulator-aoss`: against `osmem-server` (real analyzers and BM25; no k-NN: the semantic
  tests skip there).
- `live`: against a real cluster when `OPENSEARCH_URL` is set (`OPENSEARCH_SERVICE` = none|es|aoss),
  marker `opensearch`; reads poll up to 90 s for Serverless's refresh (docs/index-mapping.md).

Every isolation check has its positive control: the same query from the owner's scope finds the fact.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mnemo.adapters.local.fact_index import LocalFactIndex
from mnemo.adapters.opensearch.facts import OpenSearchFactIndex
from mnemo.domain.namespace import Namespace
from mnemo.ports import FactDocument, FactHit, FactIndex
from mnemo.settings import MnemoSettings
from tests.integration.indexes.test_search_index_port import (
    DIM,
    MODEL,
    emulate_possessive_filter,
    eventually,
    needs_knn,
)

ADAPTERS = ["local", "engine", "engine-aoss", "emulator", "emulator-aoss",
            pytest.param("live", marks=pytest.mark.opensearch)]
NS = Namespace(tenant="t1", user_id="u1", group_id="default")
EAST, NORTH, NORTH_EAST = [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.6, 0.8, 0.0, 0.0]


@pytest.fixture(params=ADAPTERS)
def adapter(request: pytest.FixtureRequest) -> Iterator[tuple[str, Callable[[], FactIndex]]]:
    """(kind, factory): the factory builds a fresh adapter instance (another Lambda) on one index per test."""
    kind: str = request.param
    base = f"mnemo-factport-{uuid.uuid4().hex[:8]}"
    if kind == "local":
        shared = LocalFactIndex()  # in process: "another instance" is the same object
        yield kind, lambda: shared
        return
    from opensearchpy import OpenSearch

    made: list[OpenSearchFactIndex] = []
    if kind.startswith("engine"):
        from tests.integration.opensearch_engine import Engine, engine_connection

        engine = Engine()

        def client() -> Any:
            return OpenSearch(hosts=[{"host": "engine.internal", "port": 9200}],
                              connection_class=engine_connection(engine), max_retries=0)
        service = "aoss" if kind == "engine-aoss" else "none"
        factory: Callable[[], OpenSearchFactIndex] = lambda: OpenSearchFactIndex(  # noqa: E731
            client(), index=base, service=service, embedding_model=MODEL, dimension=DIM, legs="msearch")
    elif kind == "live":
        url = os.environ.get("OPENSEARCH_URL")
        if not url:
            pytest.skip("set OPENSEARCH_URL to run the facts index contract against a real cluster")
        settings = MnemoSettings(opensearch_url=url, opensearch_service=os.environ.get("OPENSEARCH_SERVICE", "none"),  # type: ignore[arg-type]
                                 opensearch_index=base, embedding_dimension=DIM)
        factory = lambda: OpenSearchFactIndex.from_settings(settings, embedding_model=MODEL, dimension=DIM)  # noqa: E731
    else:
        url = request.getfixturevalue("emulator_url")
        emulate_possessive_filter(request.getfixturevalue("monkeypatch"))
        service = "aoss" if kind == "emulator-aoss" else "none"
        factory = lambda: OpenSearchFactIndex(OpenSearch(hosts=[url]), index=base, service=service,  # noqa: E731
                                              embedding_model=MODEL, dimension=DIM)

    def make() -> OpenSearchFactIndex:
        index = factory()
        made.append(index)
        return index

    yield kind, make
    if made:
        with contextlib.suppress(Exception):
            made[0]._client.indices.delete(index=made[0].index_name, ignore=[404])


def fact(fact_uuid: str, sentence: str, names: tuple[str, str], *, ns: Namespace = NS,
         vector: list[float] | None = None, canonical: str = "") -> FactDocument:
    return FactDocument(tenant=ns.tenant, user_id=ns.user_id, group_id=ns.group_id, fact_uuid=fact_uuid,
                        sentence=sentence, canonical=canonical, names=list(names),
                        entity_ids=[f"e-{n.lower()}" for n in names], vector=vector)


def hits(index: FactIndex, text: str, *, ns: Namespace = NS, vector: list[float] | None = None,
         k: int = 10) -> dict[str, FactHit]:
    return {h.fact_uuid: h for h in index.search(ns, text, vector, k)}


def found(index: FactIndex, text: str, **kw: Any) -> set[str]:
    return set(hits(index, text, **kw))


# -- the contract ------------------------------------------------------------------------------
def test_ensure_index_is_idempotent(adapter) -> None:
    kind, make = adapter
    index = make()
    first = index.ensure_index()
    assert index.ensure_index() is False and make().ensure_index() is False
    assert first is (kind != "local")


def test_words_of_the_sentence_and_of_the_entity_names_find_a_fact(adapter) -> None:
    _, make = adapter
    index = make()
    index.upsert([fact("f1", "Alice moved to Lisbon", ("Alice", "Lisbon")), fact("f2", "Bob likes tea", ("Bob", "tea")),
                  fact("f3", "She works at Acme", ("Carol", "Acme"))])

    lisbon = eventually(lambda: hits(index, "where is Lisbon"))
    assert set(lisbon) == {"f1"} and lisbon["f1"].lexical > 0 and lisbon["f1"].semantic == 0.0
    assert lisbon["f1"].names == ["Alice", "Lisbon"] and lisbon["f1"].entity_ids == ["e-alice", "e-lisbon"]
    assert found(index, "Carol") == {"f3"}  # a name the sentence does not say
    assert found(index, "teas") == {"f2"}  # plural folded on both sides
    assert found(index, "the in") == set()  # stopwords only: nothing
    both = hits(index, "Alice likes tea")
    assert both["f2"].lexical > both["f1"].lexical > 0  # two query words beat one


def test_the_lexical_signal_is_the_local_indexs_share_of_the_querys_maximum_on_every_adapter(adapter) -> None:
    # Given the same facts in the adapter and in a local fact index (the form every benchmark measured)
    kind, make = adapter
    docs = [fact("a", "Alice will renew her passport", ("Alice", "passport")),
            fact("b", "Bob likes dark roast coffee", ("Bob", "coffee")),
            fact("c", "Carol needs passport photos for the visa", ("Carol", "visa"))]
    index, reference = make(), LocalFactIndex()
    index.upsert(docs)
    reference.upsert(docs)
    found = eventually(lambda: {h.fact_uuid: h.lexical for h in index.search(NS, "renew passport", None, 10)})
    expected = {h.fact_uuid: h.lexical for h in reference.search(NS, "renew passport", None, 10)}
    # Then each fact's lexical signal is its BM25 as a share of the query's maximum (the idf of "renew" and
    # "passport" in the sentences), the local index's figure: half the query matched is about half of it
    assert set(found) == set(expected) == {"a", "c"}
    assert 0 < expected["c"] < expected["a"] <= 1.0
    if kind in ("local", "engine", "engine-aoss"):
        assert found == pytest.approx(expected, rel=1e-6)
    else:  # another BM25 implementation (its own length norms): the same scale, not the same digits
        assert found == pytest.approx(expected, rel=0.3)
    # A one-word query's exact hit (in the sentence and the names) is about a whole match in a three-fact store,
    # as it would be among thousands (the emulator's own BM25 gives this one about half: 0.53 against 0.96)
    coffee = eventually(lambda: hits(index, "coffee").get("b", FactHit(fact_uuid="")).lexical)
    assert coffee >= (0.9 if kind in ("local", "engine", "engine-aoss") else 0.5)


def test_a_fact_that_only_names_the_person_asked_about_scores_less_than_the_one_that_answers(adapter) -> None:
    # Given two facts of one person: the names field repeats her name, so without `FACT_WEIGHT_SCALE` both
    # would reach the query's maximum and tie at 1
    _, make = adapter
    index = make()
    index.upsert([fact("work", "Kavya Schmidt works at Stark", ("Kavya Schmidt", "Stark")),
                  fact("home", "Kavya Schmidt lives in Lisbon", ("Kavya Schmidt", "Lisbon")),
                  fact("other", "Elena Moreno works at Tyrell", ("Elena Moreno", "Tyrell"))])
    # When asked where she worked, then the fact that says it has the stronger lexical signal, under 1
    found = eventually(lambda: hits(index, "Where did Kavya Schmidt work?"))
    assert 1.0 >= found["work"].lexical > found["home"].lexical > found["other"].lexical > 0


def test_the_canonical_form_finds_a_fact_said_in_other_words(adapter) -> None:
    # Given Alice's facts, one said as "joined" (canonical: works at), others about her in other relations
    _, make = adapter
    index = make()
    index.upsert([fact("joined", "Alice joined Acme", ("Alice", "Acme"), canonical="Alice works at Acme"),
                  fact("visited", "Alice visited Rome", ("Alice", "Rome")),
                  fact("likes", "Alice loves jazz", ("Alice", "jazz"), canonical="Alice likes jazz"),
                  fact("bob", "Bob works at Initech", ("Bob", "Initech"))])
    # When asking where she works, in words the sentence does not contain
    work = eventually(lambda: hits(index, "Where does Alice work?"))
    # Then the fact found through its canonical form ranks above her other facts and above Bob's
    assert max(work, key=lambda u: work[u].lexical) == "joined"
    assert work["joined"].lexical > work["visited"].lexical > 0 and work["joined"].lexical > work["bob"].lexical
    # and its own words still find it (positive control), while a word of neither finds nothing
    assert "joined" in found(index, "who joined Acme") and found(index, "employment") == set()


def test_tenant_user_and_group_never_see_each_other(adapter) -> None:
    _, make = adapter
    index = make()
    other_tenant = Namespace(tenant="t2", user_id="u1", group_id="default")
    other_user = Namespace(tenant="t1", user_id="bob", group_id="default")
    other_group = Namespace(tenant="t1", user_id="u1", group_id="team")
    index.upsert([fact("mine", "secret plan alpha", ("Plan", "Alpha")),
                  fact("t2", "secret plan alpha", ("Plan", "Alpha"), ns=other_tenant),
                  fact("bob", "secret plan alpha", ("Plan", "Alpha"), ns=other_user),
                  fact("team", "secret plan alpha", ("Plan", "Alpha"), ns=other_group)])

    assert eventually(lambda: found(index, "secret plan")) == {"mine"}  # positive control: the owner's
    for ns, own in ((other_tenant, "t2"), (other_user, "bob"), (other_group, "team")):
        assert eventually(lambda ns=ns: found(index, "secret plan", ns=ns)) == {own}  # each only its own
    assert found(index, "secret plan", ns=Namespace(tenant="t3", user_id="u1")) == set()


def test_the_semantic_leg_reports_the_cosine_within_the_graph_only(adapter) -> None:
    kind, make = adapter
    needs_knn(kind)
    index = make()
    theirs = Namespace(tenant="t2", user_id="u1", group_id="default")
    # Many nearer vectors in another tenant: a post-filter would return none of ours (filter inside knn).
    index.upsert([fact(f"t2-{i}", "an unrelated sentence", ("X", "Y"), ns=theirs, vector=EAST) for i in range(30)])
    index.upsert([fact("near", "Alice moved to Lisbon", ("Alice", "Lisbon"), vector=NORTH_EAST),
                  fact("far", "Bob likes tea", ("Bob", "tea"), vector=NORTH)])

    mine = eventually(lambda: hits(index, "zzz", vector=EAST, k=2))
    assert set(mine) == {"near", "far"}
    assert mine["near"].semantic == pytest.approx(0.6, abs=1e-3) and mine["near"].lexical == 0.0
    assert mine["far"].semantic == pytest.approx(0.0, abs=1e-3)
    # positive control: the other tenant's query does find its own nearer vectors
    assert len(eventually(lambda: found(index, "zzz", ns=theirs, vector=EAST, k=5))) == 5
    assert all(u.startswith("t2-") for u in found(index, "zzz", ns=theirs, vector=EAST, k=5))


def test_each_leg_returns_at_most_k_and_both_legs_union_one_hit_per_fact(adapter) -> None:
    kind, make = adapter
    index = make()
    index.upsert([fact(f"g{i}", f"note {i} about gardening", ("Note", f"G{i}")) for i in range(6)])

    assert eventually(lambda: len(found(index, "gardening", k=10)) == 6)
    assert len(found(index, "gardening", k=2)) == 2
    if kind.startswith("emulator"):
        return
    index.upsert([fact("v", "gardening tools", ("Tools", "Garden"), vector=EAST)])
    both = eventually(lambda: hits(index, "gardening tools", vector=EAST, k=3).get("v"))
    assert both is not None and both.lexical > 0 and both.semantic == pytest.approx(1.0, abs=1e-3)


def test_writing_again_replaces_and_delete_removes(adapter) -> None:
    kind, make = adapter
    index = make()
    index.upsert([fact("f1", "Alice moved to Lisbon", ("Alice", "Lisbon"))])
    assert eventually(lambda: found(index, "Lisbon")) == {"f1"}  # positive control before the delete
    index.upsert([fact("f1", "Alice moved to Lisbon", ("Alice", "Lisbon"), vector=NORTH_EAST)])  # the embedded copy

    if not kind.startswith("emulator"):
        assert eventually(lambda: hits(index, "Lisbon", vector=EAST).get("f1", FactHit(fact_uuid="")).semantic > 0.5)
    index.delete("t1", "f1")
    assert eventually(lambda: found(index, "Lisbon") == set())
    index.delete("t1", "never-indexed")  # deleting what is not there is fine


def test_a_lexical_only_write_never_erases_a_stored_vector(adapter) -> None:
    kind, make = adapter
    needs_knn(kind)
    index = make()
    index.upsert([fact("f1", "Alice moved to Lisbon", ("Alice", "Lisbon"), vector=NORTH_EAST)])
    assert eventually(lambda: hits(index, "Lisbon", vector=EAST).get("f1"))

    make().upsert([fact("f1", "Alice moved to Lisbon", ("Alice", "Lisbon"))])  # a worker whose embedder failed

    hit = eventually(lambda: hits(index, "Lisbon", vector=EAST).get("f1"))
    assert hit is not None and hit.semantic == pytest.approx(0.6, abs=1e-3)


def test_a_reindex_over_a_full_index_leaves_one_copy_per_fact(adapter) -> None:
    _, make = adapter
    documents = [fact(f"m{i}", f"fact number {i} about gardening", ("Note", f"G{i}")) for i in range(5)]
    make().upsert(documents)
    first = make()
    assert eventually(lambda: len(found(first, "gardening")) == 5)

    rebuilt = make()  # another instance: it remembers no ids, the lookup finds the copies
    rebuilt.upsert(documents)

    def copies() -> int:
        return len(rebuilt.search(NS, "gardening", None, 50))
    assert eventually(lambda: copies() == 5) and copies() == 5
    if isinstance(rebuilt, OpenSearchFactIndex):  # no duplicate documents behind the collapsed hits
        response = rebuilt._client.search(index=rebuilt.index_name, body={"size": 50, "query": {"bool": {"filter": [
            {"term": {"tenant": "t1"}}]}}})
        assert len(response["hits"]["hits"]) == 5
