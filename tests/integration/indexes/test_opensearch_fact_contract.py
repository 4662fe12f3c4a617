"""Contract tests of `OpenSearchFactIndex`: rule tests of its bodies (only mapped fields of the right
type, analyzers defined, a valid k-NN method) and the exact requests it sends, over the recording
transport of `test_opensearch_contract`. Behaviour against an engine: `indexes/test_fact_index_port.py`."""

from __future__ import annotations

import re
from typing import Any

import pytest
from opensearchpy import OpenSearch

from mnemo.adapters.opensearch import fact_queries as fq
from mnemo.adapters.opensearch import queries as q
from mnemo.adapters.opensearch.facts import OpenSearchFactIndex
from mnemo.domain.namespace import Namespace
from mnemo.domain.scoring import BM25_K1, bm25_idf
from mnemo.errors import DependencyError
from mnemo.ports import FACT_WEIGHT_SCALE, FactDocument
from tests.conftest import TEMPLATE
from tests.integration.indexes.test_opensearch_contract import (
    ALREADY_EXISTS,
    BUILTIN_TOKEN_FILTERS,
    BUILTIN_TOKENIZERS,
    INDEX_NOT_FOUND,
    KNN_METHODS,
    QUERYABLE,
    Recorder,
    _field_uses,
    bulk_ok,
    cluster_info,
    found,
    msearch,
    recorder,  # noqa: F401 - the fixture
    recording_connection,
    terms_of,
)

FACTS = "mnemo-memories-facts-v2"
MODEL, DIM = "test-model", 4
NS = Namespace(tenant="t1", user_id="u1", group_id="team")


def make(recorder: Recorder, service: str = "aoss", *, ensured: bool = True) -> OpenSearchFactIndex:  # noqa: F811
    client = OpenSearch(hosts=[{"host": "search.internal", "port": 9200}],
                        connection_class=recording_connection(recorder), max_retries=0)
    index = OpenSearchFactIndex(client, index="mnemo-memories", service=service,  # type: ignore[arg-type]
                                embedding_model=MODEL, dimension=DIM, legs="msearch")
    if service != "aoss":
        recorder.reply(cluster_info())
    if ensured:
        recorder.reply(ALREADY_EXISTS, status=400)
    return index


def doc(fact_uuid: str = "f1", *, tenant: str = "t1", vector: list[float] | None = None) -> FactDocument:
    return FactDocument(tenant=tenant, user_id="u1", group_id="team", fact_uuid=fact_uuid,
                        sentence="Alice moved to Lisbon", names=["Alice", "Lisbon"], entity_ids=["e1", "e2"],
                        vector=vector)


def fact_hit(fact_uuid: str, score: float, _id: str | None = None, version: int = 2) -> dict[str, Any]:
    return {"_id": _id or f"gen-{fact_uuid}", "_score": score,
            "_source": {"tenant": "t1", "fact_uuid": fact_uuid, "entity_ids": ["e1"], "names": ["Alice"],
                        "version": version}}


# -- rules -------------------------------------------------------------------------------------
def test_every_fact_body_uses_only_mapped_fields_of_the_right_type() -> None:
    properties = fq.fact_index_body(DIM)["mappings"]["properties"]
    bodies = [
        fq.fact_knn_body([0.1, 0.2, 0.3, 0.4], 10, fq.fact_scope(NS, embedding_model=MODEL)),
        fq.fact_lexical_body("where does Alice live", 10, fq.fact_scope(NS)),
        fq.fact_copies_body({"t1": ["f1", "f2"], "t2": ["f3"]}),
    ]
    for body in bodies:
        uses = _field_uses(body)
        assert uses, body
        for clause, name in uses:
            assert name in properties, f"{clause} names unmapped field {name}"
            if clause in QUERYABLE:
                assert properties[name]["type"] in QUERYABLE[clause], f"{clause} on {name}"
        assert body["size"] <= 10_000


def test_the_rule_catches_an_unmapped_field() -> None:  # positive control of the rule above
    properties = fq.fact_index_body(DIM)["mappings"]["properties"]
    uses = _field_uses({"query": {"bool": {"filter": [{"term": {"status": "active"}}]}}})
    assert [name for _, name in uses if name not in properties] == ["status"]


def test_the_mapping_covers_every_stored_field_under_strict_dynamic() -> None:
    body = fq.fact_index_body(DIM)
    assert body["mappings"]["dynamic"] == "strict" and body["settings"]["index"]["knn"] is True
    properties = body["mappings"]["properties"]
    assert set(fq.fact_source(doc(vector=[0.5] * DIM), MODEL)) == set(properties)
    assert set(fq.fact_source(doc(), MODEL)) == set(properties) - {"vector", "embedding_model"}


def test_every_analyzer_and_filter_the_fact_mapping_names_is_defined() -> None:
    body = fq.fact_index_body(DIM)
    analysis = body["settings"]["analysis"]
    for name, spec in body["mappings"]["properties"].items():
        if spec["type"] == "text":
            assert spec["analyzer"] in analysis["analyzer"], name
    for analyzer in analysis["analyzer"].values():
        assert analyzer["tokenizer"] in BUILTIN_TOKENIZERS
        assert all(f in analysis["filter"] or f in BUILTIN_TOKEN_FILTERS for f in analyzer["filter"])


def test_the_fact_vector_uses_the_memories_index_method() -> None:
    vector = fq.fact_index_body(1024)["mappings"]["properties"]["vector"]
    spaces, parameters = KNN_METHODS[(vector["method"]["engine"], vector["method"]["name"])]
    assert vector["method"] == q.KNN_METHOD and vector["method"]["space_type"] in spaces
    assert set(vector["method"]["parameters"]) <= parameters and vector["dimension"] == 1024


def test_the_facts_index_name_is_covered_by_the_deployments_index_permissions() -> None:
    # template.yaml grants index/<collection>/<OpenSearchIndexName>* (and the domain's <name>-facts*)
    assert fq.physical_fact_index("mnemo-memories") == FACTS != q.physical_index("mnemo-memories")
    template = TEMPLATE.read_text()
    assert "index/${OpenSearchCollectionName}/${OpenSearchIndexName}*" in template
    assert re.search(r"index/\$\{OpenSearchCollectionName\}/\$\{OpenSearchIndexName\}-facts\*", template)
    assert FACTS.startswith("mnemo-memories-facts")


# -- requests ----------------------------------------------------------------------------------
# The query's maximum for "Alice" from the lexical leg's aggregation (`QUERY_WEIGHT` of test_opensearch_contract's
# `msearch`: 100 documents, alice in the sentence of 5).
ALICE_MOST = bm25_idf(100, 5) * FACT_WEIGHT_SCALE


def test_search_puts_the_graph_filter_inside_knn_and_on_the_lexical_leg(recorder: Recorder) -> None:  # noqa: F811
    index = make(recorder, "none", ensured=False)
    recorder.reply(msearch([fact_hit("f1", 1.6), fact_hit("f2", 0.5)],
                           [fact_hit("f1", 0.8, _id="dup"), fact_hit("f3", 2.5)]))

    hits = {h.fact_uuid: h for h in index.search(NS, "Alice", [0.5] * DIM, 7)}

    knn, lexical = recorder.reads()
    assert knn["size"] == 7 and "query" in knn and set(knn["query"]) == {"knn"}
    spec = knn["query"]["knn"]["vector"]
    assert spec["k"] == 7 and terms_of(spec["filter"]) == {"tenant": "t1", "user_id": "u1", "group_id": "team",
                                                           "embedding_model": MODEL}
    assert lexical == {
        "size": 7, "track_total_hits": False, "_source": fq.FACT_HIT_SOURCE,
        "query": {"bool": {
            "must": [{"multi_match": {"query": "Alice", "fields": ["sentence^1.0", "canonical^1.0", "names^0.5"],
                                      "type": "most_fields"}}],
            "filter": [{"term": {"tenant": "t1"}}, {"term": {"user_id": "u1"}}, {"term": {"group_id": "team"}}],
        }},
        # the query's maximum: the whole index's document count and each analysed term's document frequency in
        # the sentence (FACT_WEIGHT_FIELD), in the same request
        "aggs": {"query_weight": {"global": {}, "aggs": {"per_term": {"filters": {"filters": {
            "alice": {"term": {"sentence": "alice"}}}}}}}},
    }
    assert set(hits) == {"f1", "f2", "f3"}  # one hit per fact, both legs merged
    # Lucene's BM25 times k1 + 1 (the local fact index's form, LUCENE-8563), as a share of the query's maximum,
    # capped at 1
    assert hits["f1"].lexical == pytest.approx(0.8 * (BM25_K1 + 1) / ALICE_MOST) and 0 < hits["f1"].lexical < 1
    assert hits["f3"].lexical == 1.0 and 2.5 * (BM25_K1 + 1) > ALICE_MOST
    assert hits["f1"].semantic == pytest.approx(0.6)
    assert hits["f2"].semantic == 0.0 and hits["f2"].lexical == 0.0
    assert hits["f1"].names == ["Alice"] and hits["f1"].entity_ids == ["e1"]


def test_a_lexical_leg_answered_without_its_aggregation_counts_no_words(recorder: Recorder) -> None:  # noqa: F811
    # Given a lexical leg whose answer lacks the query's maximum (a proxy stripping aggregations), the words
    # count nothing rather than an unscaled BM25 (the fused score's [0, 1] would not hold); the semantic leg stands
    index = make(recorder, "none", ensured=False)
    answer = msearch([fact_hit("f1", 1.6)], [fact_hit("f1", 0.8)])
    del answer["responses"][-1]["aggregations"]
    recorder.reply(answer)
    (hit,) = index.search(NS, "Alice", [0.5] * DIM, 7)
    assert hit.lexical == 0.0 and hit.semantic == pytest.approx(0.6)


def test_a_query_of_stopwords_only_asks_for_no_aggregation() -> None:
    # The positive control is the pinned body above: a query with a term carries `aggs`
    assert "aggs" not in fq.fact_lexical_body("the in", 5, fq.fact_scope(NS))
    assert set(fq.fact_lexical_body("Alice", 5, fq.fact_scope(NS))["aggs"]) == {"query_weight"}


def test_search_without_a_vector_sends_the_lexical_leg_only_and_a_missing_index_finds_nothing(
        recorder: Recorder) -> None:  # noqa: F811
    index = make(recorder, "none", ensured=False)
    recorder.reply(INDEX_NOT_FOUND, status=404)
    assert index.search(NS, "Alice", None, 5) == []
    assert len(recorder.reads()) == 1 and "multi_match" in str(recorder.reads()[0])


def test_managed_domain_writes_by_digest_id_with_the_vector_outranking_a_lexical_copy(recorder: Recorder) -> None:  # noqa: F811
    index = make(recorder, "es")
    recorder.reply(bulk_ok("index", "index"))
    index.upsert([doc("f1", vector=[0.5] * DIM), doc("f2")])
    bulk = recorder.requests[-1]
    assert bulk.body[0] == {"index": {"_id": fq.fact_document_id("t1", "f1"), "version": 2,
                                      "version_type": "external_gte"}}
    assert bulk.body[2]["index"]["version"] == 1 and "vector" not in bulk.body[3]
    assert bulk.body[1]["embedding_model"] == MODEL and fq.fact_document_id("t1", "f1") != fq.fact_document_id("t2", "f1")


def test_serverless_upsert_deletes_visible_and_remembered_copies_and_never_sends_an_id(recorder: Recorder) -> None:  # noqa: F811
    index = make(recorder)
    recorder.reply(found(fact_hit("f1", 1.0, _id="gen-a", version=1)))
    recorder.reply(bulk_ok("delete", "index"))
    index.upsert([doc("f1")])
    lookup, bulk = recorder.requests[-2:]
    assert lookup.body["_source"] == ["tenant", "fact_uuid", "version"]
    assert bulk.body == [{"delete": {"_id": "gen-a"}}, {"index": {}}, fq.fact_source(doc("f1"), MODEL)]

    # the embedded write right after: the lookup cannot see new-1 yet (refresh), the instance remembers it
    recorder.reply(found()).reply(bulk_ok("delete", "index"))
    index.upsert([doc("f1", vector=[0.5] * DIM)])
    assert recorder.requests[-1].body[0] == {"delete": {"_id": "new-1"}}

    recorder.reply(found()).reply(bulk_ok("delete"))
    index.delete("t1", "f1")
    assert recorder.requests[-1].body == [{"delete": {"_id": "new-1"}}]


def test_serverless_skips_a_lexical_write_over_a_visible_embedded_copy(recorder: Recorder) -> None:  # noqa: F811
    index = make(recorder)
    recorder.reply(found(fact_hit("f1", 1.0, _id="gen-a", version=2)))
    index.upsert([doc("f1")])
    assert [r.path for r in recorder.requests][-1].endswith("/_search")  # no bulk


def test_a_vector_of_the_wrong_dimension_is_refused_before_any_request(recorder: Recorder) -> None:  # noqa: F811
    index = make(recorder, ensured=False)
    with pytest.raises(DependencyError, match="dimensions"):
        index.upsert([doc(vector=[0.1, 0.2])])
    with pytest.raises(DependencyError, match="dimensions"):
        index.search(NS, "x", [0.1, 0.2], 5)
    assert recorder.requests == []
