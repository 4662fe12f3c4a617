"""Contract tests of `OpenSearchIndex`: the exact requests it sends and how it reads the answers.

A recording transport (an `opensearchpy.Connection` subclass) stands in for the cluster: it records
method, URL, params and the parsed JSON/NDJSON body of every request and answers with canned JSON
scripted per test. No network. What runs against osmem-server or a real cluster is in
`indexes/test_search_index_port.py` and `indexes/test_opensearch_emulator.py` (docs/index-mapping.md, "Test layers").
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from opensearchpy import Connection, OpenSearch
from opensearchpy.exceptions import ConnectionError as TransportConnectionError

from mnemo.adapters.opensearch import queries as q
from mnemo.adapters.opensearch.index import OpenSearchIndex
from mnemo.domain.models import Status
from mnemo.domain.namespace import NamespaceFilter
from mnemo.domain.scoring import BM25_K1, Candidate, bm25_idf, lexical_share
from mnemo.domain.text import STOPWORDS
from mnemo.errors import DependencyError
from mnemo.ports import IndexDocument, SearchQuery
from mnemo.settings import MnemoSettings
from tests.conftest import REPO

NOW = datetime(2025, 6, 1, tzinfo=UTC)
INDEX = "mnemo-memories-v2"
MODEL = "test-model"
DIM = 4
ALREADY_EXISTS = {"error": {"type": "resource_already_exists_exception", "reason": "index [x] already exists"},
                  "status": 400}
INDEX_NOT_FOUND = {"error": {"type": "index_not_found_exception", "reason": "no such index"}, "status": 404}


def cluster_info(number: str = "2.19.1", distribution: str | None = "opensearch") -> dict[str, Any]:
    """`GET /`, as a managed domain or self-hosted cluster answers it (Serverless has no version)."""
    version: dict[str, Any] = {"number": number, "build_type": "tar"}
    if distribution is not None:
        version["distribution"] = distribution
    return {"name": "node-1", "cluster_name": "c", "version": version, "tagline": "The OpenSearch Project"}


# -- the recording transport ----------------------------------------------------------------
@dataclass
class Request:
    method: str
    path: str
    params: dict[str, Any]
    body: Any
    headers: dict[str, str]


@dataclass
class Recorder:
    requests: list[Request] = field(default_factory=list)
    replies: deque[Any] = field(default_factory=deque)
    connection_kwargs: dict[str, Any] = field(default_factory=dict)
    # Answers by request instead of in order (for requests sent concurrently): (status, payload).
    responder: Callable[[Request], tuple[int, Any]] | None = None

    def reply(self, payload: Any, status: int = 200) -> Recorder:
        self.replies.append((status, payload))
        return self

    def fail(self, exc: Exception) -> Recorder:
        self.replies.append(exc)
        return self

    def reads(self) -> list[dict[str, Any]]:
        """Every search body sent (each `_msearch` body and each `_search` body)."""
        bodies: list[dict[str, Any]] = []
        for r in self.requests:
            if r.path.endswith("/_msearch"):
                bodies += r.body[1::2]
            elif r.path.endswith("/_search"):
                bodies.append(r.body)
        return bodies


def recording_connection(recorder: Recorder) -> type[Connection]:
    class RecordingConnection(Connection):
        def __init__(self, **kwargs: Any) -> None:
            recorder.connection_kwargs = dict(kwargs)
            self.http_auth = kwargs.pop("http_auth", None)
            kwargs.pop("verify_certs", None)
            super().__init__(**kwargs)

        def perform_request(self, method, url, params=None, body=None, timeout=None, ignore=(), headers=None):
            sent = dict(headers or {})
            if callable(self.http_auth):  # what a SigV4 signer adds
                sent.update(self.http_auth(method, self.host + url, body))
            request = Request(method, url, dict(params or {}), _parse(url, body), sent)
            recorder.requests.append(request)
            if recorder.responder is not None:
                reply: Any = recorder.responder(request)
            elif not recorder.replies:
                raise AssertionError(f"unscripted request {method} {url}")
            else:
                reply = recorder.replies.popleft()
            if isinstance(reply, Exception):
                raise reply
            status, payload = reply
            raw = json.dumps(payload)
            if not (200 <= status < 300) and status not in ignore:
                self._raise_error(status, raw, "application/json")
            return status, {"content-type": "application/json"}, raw

    return RecordingConnection


def _parse(url: str, body: Any) -> Any:
    if body is None:
        return None
    text = body.decode() if isinstance(body, bytes) else body
    if url.endswith(("/_bulk", "/_msearch")):
        assert text.endswith("\n"), "NDJSON must end with a newline"
        return [json.loads(line) for line in text.splitlines() if line]
    return json.loads(text)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def make_index(recorder: Recorder, service: str = "aoss", *, ensured: bool = True,
               legs: str = "msearch") -> OpenSearchIndex:
    client = OpenSearch(hosts=[{"host": "search.internal", "port": 9200}],
                        connection_class=recording_connection(recorder), max_retries=0)
    index = OpenSearchIndex(client, index="mnemo-memories", service=service,  # type: ignore[arg-type]
                            embedding_model=MODEL, dimension=DIM, legs=legs)  # type: ignore[arg-type]
    if service != "aoss":
        recorder.reply(cluster_info())  # the first request of an instance checks the version
    if ensured:
        recorder.reply(ALREADY_EXISTS, status=400)  # the first write ensures the index exists
    return index


# -- canned data ------------------------------------------------------------------------------
def doc(memory_id: str = "m1", *, tenant: str = "t1", user_id: str = "u1", version: int = 1, **kw: Any) -> IndexDocument:
    fields: dict[str, Any] = {
        "tenant": tenant, "memory_id": memory_id, "version": version, "user_id": user_id, "author": "user",
        "status": Status.OPEN, "text": f"text of {memory_id}", "context": "Monday 3 March 2025",
        "category": "preference", "entities": ["Alice"], "captured_at": NOW - timedelta(days=10),
        "created_at": NOW - timedelta(days=9), "importance": 0.6, "vector": [0.5, 0.5, 0.5, 0.5],
        "embedding_model": MODEL, "links": {"m9": 0.8},
    }
    fields.update(kw)
    return IndexDocument(**fields)


def source(memory_id: str, *, version: int = 1, days: float = 10, importance: float = 0.5,
           links: dict[str, float] | None = None, tenant: str = "t1", text_tokens: int = 12) -> dict[str, Any]:
    return {"tenant": tenant, "memory_id": memory_id, "version": version, "user_id": "u1", "author": "user",
            "status": "open", "importance": importance, "text_tokens": text_tokens,
            "captured_at": (NOW - timedelta(days=days)).isoformat().replace("+00:00", "Z"), "links": links or {}}


def hit(src: dict[str, Any], score: float, _id: str | None = None, matched: tuple[str, ...] = ("text",)) -> dict[str, Any]:
    """A hit; a lexical one names the clauses it matched (`queries.lexical_body`), its text by default."""
    return {"_index": INDEX, "_id": _id or f"gen-{src['memory_id']}-{src['version']}", "_score": score, "_source": src,
            "matched_queries": list(matched)}


# What the lexical leg's aggregation answers for "where does Alice live" (terms alice, live): 100
# documents, alice in 5, live in 10; and the query's maximum they make (`scoring.query_weight`).
QUERY_WEIGHT = {"query_weight": {"doc_count": 100, "per_term": {"buckets": {
    "alice": {"doc_count": 5}, "live": {"doc_count": 10}}}}}
MOST = bm25_idf(100, 5) + bm25_idf(100, 10)


def share(score: float) -> Any:
    """The candidate's lexical signal of an OpenSearch BM25 score, as `queries.lexical_body`'s reader makes it."""
    return pytest.approx(lexical_share(score * LUCENE, MOST))


def msearch(*legs: list[dict[str, Any]]) -> dict[str, Any]:
    """A `_msearch` answer; the last leg (the lexical one) carries `QUERY_WEIGHT`."""
    responses: list[dict[str, Any]] = [{"status": 200, "hits": {"hits": hits}} for hits in legs]
    if responses:
        responses[-1]["aggregations"] = QUERY_WEIGHT
    return {"took": 3, "responses": responses}


def found(*hits: dict[str, Any]) -> dict[str, Any]:
    return {"took": 1, "hits": {"hits": list(hits)}}


def bulk_ok(*ops: str) -> dict[str, Any]:
    """A successful `_bulk` answer; index item n carries the generated `_id` `new-<n>`."""
    items = [{op: {"status": 200, "_id": f"old-{n}"} if op != "index" else {"status": 201, "_id": f"new-{n}"}}
             for n, op in enumerate(ops)]
    return {"took": 5, "errors": False, "items": items}


def query(*, tenant: str = "t1", user_id: str | None = "u1", agent_id: str | None = None,
          group_id: str | None = None, **kw: Any) -> SearchQuery:
    fields: dict[str, Any] = {"text": "where does Alice live", "vector": [0.1, 0.2, 0.3, 0.4],
                              "scope": NamespaceFilter(tenant=tenant, user_id=user_id, agent_id=agent_id,
                                                       group_id=group_id)}
    fields.update(kw)
    return SearchQuery(**fields)


def terms_of(bool_filter: dict[str, Any]) -> dict[str, Any]:
    """{field: value(s)} of a bool filter's term/terms clauses."""
    out: dict[str, Any] = {}
    for clause in bool_filter["bool"]["filter"]:
        spec = next(iter(clause.values()))  # {"term": {name: value}} or {"terms": {name: [values]}}
        out.update(spec)
    return out


# -- mapping ---------------------------------------------------------------------------------
EXPECTED_MAPPING = {
    "settings": {"index": {"knn": True}, "analysis": {
        "filter": {"mnemo_possessive": {"type": "stemmer", "language": "possessive_english"},
                   "mnemo_stop": {"type": "stop", "stopwords": sorted(STOPWORDS)},
                   "mnemo_plural": {"type": "stemmer", "language": "minimal_english"}},
        "analyzer": {"mnemo_text": {"type": "custom", "tokenizer": "standard", "filter": [
            "mnemo_possessive", "lowercase", "mnemo_stop", "mnemo_plural"]}},
    }},
    "mappings": {
        "dynamic": "strict",
        "properties": {
            "vector": {"type": "knn_vector", "dimension": DIM, "method": {
                "name": "hnsw", "engine": "faiss", "space_type": "innerproduct",
                "parameters": {"m": 16, "ef_construction": 128}}},
            "text": {"type": "text", "analyzer": "mnemo_text"},
            "context": {"type": "text", "analyzer": "mnemo_text"},
            "entities": {"type": "text", "analyzer": "mnemo_text",
                         "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}},
            "memory_id": {"type": "keyword"}, "tenant": {"type": "keyword"}, "user_id": {"type": "keyword"},
            "agent_id": {"type": "keyword"}, "group_id": {"type": "keyword"}, "author": {"type": "keyword"},
            "status": {"type": "keyword"}, "category": {"type": "keyword"}, "embedding_model": {"type": "keyword"},
            "captured_at": {"type": "date"}, "created_at": {"type": "date"},
            "importance": {"type": "float"}, "version": {"type": "integer"}, "text_tokens": {"type": "integer"},
            "links": {"type": "object", "enabled": False},
        },
    },
}


def test_ensure_index_creates_the_versioned_index_with_the_exact_mapping(recorder: Recorder) -> None:
    index = make_index(recorder, ensured=False)
    recorder.reply({"acknowledged": True, "index": INDEX})

    assert index.ensure_index() is True

    (request,) = recorder.requests
    assert (request.method, request.path) == ("PUT", f"/{INDEX}")
    assert request.body == EXPECTED_MAPPING
    vector = request.body["mappings"]["properties"]["vector"]
    assert vector["method"]["engine"] == "faiss" and "nmslib" not in json.dumps(request.body)


# -- rule-based validation of every body (what OpenSearch checks when it parses them) ----------------
# Token filter and tokenizer TYPES and the names a custom analyzer may use without defining them, from
# OpenSearch's source: modules/analysis-common/src/main/java/org/opensearch/analysis/common/
# CommonAnalysisModulePlugin.java (getTokenFilters, getTokenizers) and
# server/src/main/java/org/opensearch/indices/analysis/AnalysisModule.java ("stop", "standard").
# A subset: the ones a Mnemo analyzer could plausibly use.
BUILTIN_TOKEN_FILTERS = {"apostrophe", "asciifolding", "classic", "decimal_digit", "kstem", "length", "limit",
                         "lowercase", "pattern_replace", "porter_stem", "remove_duplicates", "reverse", "snowball",
                         "stemmer", "stop", "trim", "unique", "uppercase", "word_delimiter_graph"}
BUILTIN_TOKENIZERS = {"standard", "classic", "letter", "whitespace", "keyword", "pattern", "simple_pattern",
                      "uax_url_email", "char_group"}
# `stemmer` languages we may name: modules/analysis-common/.../StemmerTokenFilterFactory.java.
STEMMER_LANGUAGES = {"english", "light_english", "minimal_english", "possessive_english", "porter2", "lovins"}
# knn_vector `method` per engine: k-NN src/main/java/org/opensearch/knn/index/engine/faiss/FaissHNSWMethod.java
# and .../engine/lucene/LuceneHNSWMethod.java (spaces and parameters each engine's HNSW accepts).
KNN_METHODS = {
    ("faiss", "hnsw"): ({"l2", "innerproduct", "cosinesimil"}, {"m", "ef_construction", "ef_search", "encoder"}),
    ("lucene", "hnsw"): ({"l2", "innerproduct", "cosinesimil"}, {"m", "ef_construction", "encoder"}),
}
LUCENE = BM25_K1 + 1.0  # what the adapter multiplies OpenSearch's BM25 by (Lucene 8 dropped it from the numerator)
QUERYABLE = {  # clause -> the mapping types it may address
    "term": {"keyword", "integer", "float", "date"}, "terms": {"keyword", "integer", "float", "date"},
    "range": {"date", "integer", "float"}, "multi_match": {"text"}, "knn": {"knn_vector"},
    "token": {"text"},  # a `term` holding one analysed token (`queries.query_weight_aggregation`)
    "sort": {"keyword", "date", "integer", "float"},
}


def test_every_filter_and_tokenizer_the_analyzers_name_is_defined_or_built_in() -> None:
    # Given the index settings, when OpenSearch builds each custom analyzer, then every name it
    # references resolves (an undefined filter makes `PUT <index>` fail with 400) and every filter or
    # tokenizer it defines has a known type with valid options.
    analysis = q.index_body(DIM)["settings"]["analysis"]
    filters, tokenizers = analysis.get("filter", {}), analysis.get("tokenizer", {})
    for name, spec in filters.items():
        assert spec["type"] in BUILTIN_TOKEN_FILTERS, name
        if spec["type"] == "stemmer":
            assert spec["language"] in STEMMER_LANGUAGES, name
        if spec["type"] == "stop":
            assert all(isinstance(w, str) and w == w.lower() for w in spec["stopwords"]), name  # after lowercase
    for name, spec in tokenizers.items():
        assert spec["type"] in BUILTIN_TOKENIZERS, name
    for name, analyzer in analysis["analyzer"].items():
        assert analyzer["type"] == "custom"
        assert analyzer["tokenizer"] in BUILTIN_TOKENIZERS | set(tokenizers), name
        unknown = [f for f in analyzer["filter"] if f not in set(filters) | BUILTIN_TOKEN_FILTERS]
        assert unknown == [], f"{name} names undefined filters {unknown}"
        assert analyzer["filter"].index("lowercase") < analyzer["filter"].index("mnemo_stop")  # stopwords are lower case


def test_an_undefined_filter_is_caught_by_the_rule() -> None:
    # The rule above would have caught issue 17's defect 1 (`english_possessive_stemmer`).
    assert "english_possessive_stemmer" not in BUILTIN_TOKEN_FILTERS


def test_the_knn_vector_method_is_valid_for_its_engine_and_space() -> None:
    vector = q.index_body(DIM)["mappings"]["properties"]["vector"]
    method = vector["method"]
    spaces, parameters = KNN_METHODS[(method["engine"], method["name"])]
    assert method["space_type"] in spaces
    assert set(method["parameters"]) <= parameters
    assert 2 <= method["parameters"]["m"] <= 100 and method["parameters"]["ef_construction"] >= 2
    assert 1 <= vector["dimension"] <= 16_000 and q.index_body(1024)["mappings"]["properties"]["vector"]["dimension"] == 1024
    assert q.index_body(DIM)["settings"]["index"]["knn"] is True


def _field_uses(node: Any, clause: str | None = None) -> list[tuple[str, str]]:
    """(clause, field) for every field a query body addresses."""
    uses: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("term", "terms", "range", "knn"):
                uses += [(key, name) for name in value]
                uses += [u for inner in value.values() if isinstance(inner, dict) for u in _field_uses(inner)]
            elif key == "multi_match":
                uses += [("multi_match", f.split("^")[0]) for f in value["fields"]]
            elif key == "filters" and isinstance(value, dict) and "filters" in value:  # a `filters` aggregation
                uses += [("token", name) for clause in value["filters"].values() for name in clause["term"]]
            elif key == "sort":
                uses += [("sort", name) for item in value for name in item]
            elif key == "_source" and isinstance(value, list):
                uses += [("_source", name) for name in value]
            elif key == "_source" and isinstance(value, dict):
                uses += [("_source", name) for name in value.get("excludes", [])]
            else:
                uses += _field_uses(value)
    elif isinstance(node, list):
        for item in node:
            uses += _field_uses(item)
    return uses


def test_every_query_body_uses_only_mapped_fields_of_the_right_type() -> None:
    properties = q.index_body(DIM)["mappings"]["properties"]
    every_level = {"tenant": "t1", "user_id": "u1", "agent_id": "a1", "group_id": "g1"}
    scope = q.scope_filter(every_level, ["user"], ["open"], embedding_model=MODEL, exclude="m1")
    plain = q.scope_filter(every_level, ["user"], ["open"])
    bodies = [
        q.knn_body([0.1, 0.2, 0.3, 0.4], 10, scope, source=q.CANDIDATE_SOURCE),
        q.lexical_body("where does Alice live", 10, plain),
        q.copies_body({"t1": ["m1", "m2"], "t2": ["m3"]}),
        q.knn_body([0.1, 0.2, 0.3, 0.4], 5, scope, source=["memory_id", "version"]),
    ]
    for body in bodies:
        uses = _field_uses(body)
        assert uses, body
        for clause, name in uses:
            assert name in properties, f"{clause} names unmapped field {name}"
            if clause in QUERYABLE:
                assert properties[name]["type"] in QUERYABLE[clause], f"{clause} on {name} ({properties[name]['type']})"
        assert body["size"] <= 10_000  # index.max_result_window


def test_mapping_covers_every_index_document_field_under_strict_dynamic() -> None:
    # Given strict dynamic mapping, a document field missing from the mapping would fail every write.
    properties = q.index_body(DIM)["mappings"]["properties"]
    # Not indexed: the earlier copies' ids, and the words a reply answers (the local reranker's only).
    assert set(IndexDocument.model_fields) - {"index_ids", "replies_to"} | {"text_tokens"} == set(properties)
    assert set(q.document_source(doc())) <= set(properties)
    assert set(q.document_source(doc().model_copy(update={"replies_to": "how often do you run?"}))) <= set(properties)


def test_document_source_counts_the_text_tokens_the_analyzer_indexes() -> None:
    # "Alice's" -> alice, "the" is a stopword, "cats" -> cat: the mnemo_text analyzer's steps
    source = q.document_source(doc("m1").model_copy(update={"text": "Alice's cats love the garden"}))
    assert source["text_tokens"] == 4


def test_ensure_index_is_idempotent_when_the_index_exists(recorder: Recorder) -> None:
    index = make_index(recorder, ensured=False)
    recorder.reply(ALREADY_EXISTS, status=400)

    assert index.ensure_index() is False


def test_ensure_index_surfaces_other_rejections(recorder: Recorder) -> None:
    index = make_index(recorder, ensured=False)
    recorder.reply({"error": {"type": "mapper_parsing_exception", "reason": "bad"}, "status": 400}, status=400)

    with pytest.raises(DependencyError, match="HTTP 400 mapper_parsing_exception"):
        index.ensure_index()


def test_physical_index_name_carries_the_mapping_version() -> None:
    assert q.MAPPING_VERSION == 2
    assert q.physical_index("mnemo-memories") == INDEX


# -- search: the request -----------------------------------------------------------------------
def test_search_sends_one_msearch_with_the_knn_and_lexical_legs(recorder: Recorder) -> None:
    index = make_index(recorder, ensured=False)
    recorder.reply(msearch([], []))

    index.search(query(authors=["user", "agent"], statuses=[Status.OPEN, Status.COMPLETED], top_k=10))

    (request,) = recorder.requests
    assert (request.method, request.path) == ("POST", f"/{INDEX}/_msearch")
    header_1, knn, header_2, lexical = request.body
    assert header_1 == {} and header_2 == {}
    scope = [{"term": {"tenant": "t1"}}, {"term": {"user_id": "u1"}}, {"terms": {"author": ["user", "agent"]}},
             {"terms": {"status": ["open", "completed"]}}]
    assert knn == {
        "size": 400, "track_total_hits": False, "_source": q.CANDIDATE_SOURCE,
        "query": {"knn": {"vector": {"vector": [0.1, 0.2, 0.3, 0.4], "k": 400,
                                     "filter": {"bool": {"filter": [*scope, {"term": {"embedding_model": MODEL}}]}}}}},
    }
    assert lexical == {
        "size": 400, "track_total_hits": False, "_source": q.CANDIDATE_SOURCE,
        "query": {"bool": {
            "should": [
                {"multi_match": {"query": "where does Alice live", "fields": ["text^1.0"], "type": "most_fields",
                                 "_name": "text"}},
                {"multi_match": {"query": "where does Alice live", "fields": ["entities^0.25", "context^0.7"],
                                 "type": "most_fields", "_name": "context"}},
            ],
            "minimum_should_match": 1,
            "filter": scope,
        }},
        # the query's maximum: the index's document count and each analysed term's document frequency
        "aggs": {"query_weight": {"global": {}, "aggs": {"per_term": {"filters": {"filters": {
            "alice": {"term": {"text": "alice"}}, "live": {"term": {"text": "live"}}}}}}}},
    }


def test_both_legs_are_deep_forty_times_top_k_between_400_and_1000(recorder: Recorder) -> None:
    index = make_index(recorder, ensured=False)
    recorder.reply(msearch([], []))

    index.search(query(top_k=30))

    _, knn, _, lexical = recorder.requests[0].body
    assert knn["size"] == knn["query"]["knn"]["vector"]["k"] == lexical["size"] == 1000


def test_search_without_a_vector_runs_the_lexical_leg_only(recorder: Recorder) -> None:
    index = make_index(recorder, ensured=False)
    recorder.reply(msearch([hit(source("m1"), 3.0)]))

    hits = index.search(query(vector=None))

    (request,) = recorder.requests
    header, lexical = request.body
    assert header == {}
    assert "multi_match" in lexical["query"]["bool"]["should"][0]
    assert [(c.memory_id, c.lexical, c.semantic) for c in hits] == [("m1", share(3.0), None)]


# -- search: reading the answer ----------------------------------------------------------------
def test_search_turns_engine_scores_into_candidates_with_raw_signals(recorder: Recorder) -> None:
    index = make_index(recorder, ensured=False)
    knn_leg = [hit(source("m1", days=2, importance=0.9, links={"m7": 0.5}, text_tokens=30), 1.8),  # cosine 0.8
               hit(source("m2", days=30, text_tokens=4), 1 / 1.25)]  # cosine -0.25
    lexical_leg = [hit(source("m1", days=2, importance=0.9, links={"m7": 0.5}, text_tokens=30), 1.5),
                   hit(source("m3", days=400, importance=0.1, text_tokens=8), 0.5, matched=("context",))]
    recorder.reply(msearch(knn_leg, lexical_leg))

    candidates = index.search(query(top_k=10))

    # Then the adapter ranks nothing: it hands the service one candidate per memory, both legs' signals
    # (Lucene's BM25 in the local index's form, times k1 + 1 (LUCENE-8563), as a share of the query's
    # maximum), and whether the words matched only the memory's context
    assert 0 < lexical_share(1.5 * LUCENE, MOST) < 1
    assert sorted(candidates, key=lambda c: c.memory_id) == [
        Candidate("m1", lexical=share(1.5), semantic=pytest.approx(0.8), importance=0.9,
                  captured_at=NOW - timedelta(days=2), text_tokens=30, links=(("m7", 0.5),)),
        Candidate("m2", lexical=0.0, semantic=pytest.approx(-0.25), importance=0.5,
                  captured_at=NOW - timedelta(days=30), text_tokens=4),
        Candidate("m3", lexical=share(0.5), semantic=None, importance=0.1,
                  captured_at=NOW - timedelta(days=400), text_tokens=8, context_only=True),
    ]


def test_agent_and_group_filters_sit_inside_the_knn_clause(recorder: Recorder) -> None:
    index = make_index(recorder, ensured=False)
    recorder.reply(msearch([], []))

    index.search(query(user_id=None, agent_id="claude", group_id="team"))

    _, knn, _, lexical = recorder.requests[0].body
    knn_scope = terms_of(knn["query"]["knn"]["vector"]["filter"])
    assert {k: knn_scope[k] for k in ("tenant", "agent_id", "group_id")} == {
        "tenant": "t1", "agent_id": "claude", "group_id": "team"}
    assert "user_id" not in knn_scope  # user omitted: every user of the tenant
    assert terms_of(lexical["query"])["agent_id"] == "claude"


def test_search_collapses_duplicates_keeping_the_highest_version(recorder: Recorder) -> None:
    # Given an unrefreshed Serverless upsert left the old copy (v1) beside the new one (v2)
    index = make_index(recorder, ensured=False)
    knn_leg = [hit(source("m1", version=2), 1.5), hit(source("m1", version=1), 1.9)]
    lexical_leg = [hit(source("m1", version=1), 9.0), hit(source("m1", version=2), 2.0), hit(source("m2"), 1.0)]
    recorder.reply(msearch(knn_leg, lexical_leg))

    hits = {c.memory_id: c for c in index.search(query())}

    # Then m1 appears once, with the signals of its newest copy only
    assert set(hits) == {"m1", "m2"}
    assert hits["m1"].lexical == share(2.0)
    assert hits["m1"].semantic == pytest.approx(0.5)


@pytest.mark.parametrize("cosine", [-1.0, -0.6, -0.1, 0.0, 0.3, 0.75, 1.0])
def test_cosine_is_recovered_exactly_from_the_faiss_innerproduct_score(cosine: float) -> None:
    distance = -cosine  # faiss innerproduct: d = -ip; score = 1/(1+d) if d >= 0 else 1 - d
    score = 1 / (1 + distance) if distance >= 0 else 1 - distance
    assert q.cosine_from_knn_score(score) == pytest.approx(cosine)


def test_a_missing_index_finds_nothing(recorder: Recorder) -> None:
    index = make_index(recorder, ensured=False)
    missing = {"error": {"type": "index_not_found_exception", "reason": "no such index"}, "status": 404}
    recorder.reply(missing, status=404)
    recorder.reply({"responses": [{**missing}, {**missing}]})

    assert index.search(query()) == []
    assert index.search(query()) == []


# -- writes ---------------------------------------------------------------------------------
def test_serverless_upsert_deletes_visible_copies_and_indexes_without_an_id(recorder: Recorder) -> None:
    index = make_index(recorder, "aoss")
    recorder.reply(found(hit(source("m1", version=1), 1.0, _id="gen-a"), hit(source("m1", version=1), 1.0, _id="gen-b")))
    recorder.reply(bulk_ok("delete", "delete", "index", "index"))
    first, second = doc("m1", version=2), doc("m2", tenant="t2")

    generated = index.upsert([first, second])

    ensure, lookup, bulk = recorder.requests
    assert (ensure.method, ensure.path) == ("PUT", f"/{INDEX}")
    assert (lookup.method, lookup.path) == ("POST", f"/{INDEX}/_search")
    assert lookup.body["_source"] == ["tenant", "memory_id", "version"]
    assert lookup.body["query"]["bool"]["should"] == [
        {"bool": {"filter": [{"term": {"tenant": "t1"}}, {"terms": {"memory_id": ["m1"]}}]}},
        {"bool": {"filter": [{"term": {"tenant": "t2"}}, {"terms": {"memory_id": ["m2"]}}]}},
    ]
    assert (bulk.method, bulk.path) == ("POST", f"/{INDEX}/_bulk")
    assert bulk.body == [
        {"delete": {"_id": "gen-a"}}, {"delete": {"_id": "gen-b"}},
        {"index": {}}, q.document_source(first),
        {"index": {}}, q.document_source(second),
    ]
    assert generated == {"m1": ["new-2"], "m2": ["new-3"]}  # the `_id`s the bulk answer gave
    stored = bulk.body[3]
    assert "index_ids" not in stored
    assert stored["vector"] == [0.5, 0.5, 0.5, 0.5] and stored["links"] == {"m9": 0.8}
    assert stored["captured_at"].startswith("2025-05-22T00:00:00") and stored["status"] == "open"
    assert stored["embedding_model"] == MODEL and stored["version"] == 2


def test_serverless_upsert_never_replaces_a_newer_version(recorder: Recorder) -> None:
    index = make_index(recorder, "aoss")
    recorder.reply(found(hit(source("m1", version=3), 1.0, _id="gen-new")))

    index.upsert([doc("m1", version=2)])

    assert [r.path for r in recorder.requests] == [f"/{INDEX}", f"/{INDEX}/_search"]  # no _bulk


def test_the_index_is_ensured_once_per_instance(recorder: Recorder) -> None:
    index = make_index(recorder, "es")
    recorder.reply(bulk_ok("index")).reply(bulk_ok("index"))

    index.upsert([doc("m1")])
    index.upsert([doc("m2")])

    assert [r.method for r in recorder.requests] == ["GET", "PUT", "POST", "POST"]


def test_managed_domain_upsert_uses_a_deterministic_id_and_external_versions(recorder: Recorder) -> None:
    index = make_index(recorder, "es")
    recorder.reply(bulk_ok("index"))
    document = doc("m1", version=4)

    index.upsert([doc("m1", version=3), document])  # same memory twice: the newest wins

    _, _, bulk = recorder.requests
    assert bulk.body == [
        {"index": {"_id": q.document_id("t1", "m1"), "version": 4, "version_type": "external_gte"}},
        q.document_source(document),
    ]
    assert q.document_id("t1", "m1") != q.document_id("t1:m", "1") != q.document_id("t2", "m1")


def test_managed_domain_ignores_a_version_conflict_from_a_stale_write(recorder: Recorder) -> None:
    index = make_index(recorder, "es")
    recorder.reply({"errors": True, "items": [{"index": {"status": 409, "error": {
        "type": "version_conflict_engine_exception", "reason": "current version [5] is higher"}}}]})

    index.upsert([doc("m1", version=4)])  # no error


def test_serverless_delete_removes_every_visible_copy(recorder: Recorder) -> None:
    index = make_index(recorder, "aoss")
    recorder.reply(found(hit(source("m1"), 1.0, _id="gen-a"), hit(source("m1", version=2), 1.0, _id="gen-b")))
    recorder.reply(bulk_ok("delete", "delete"))

    index.delete("t1", "m1")

    _, lookup, bulk = recorder.requests
    assert lookup.body["query"]["bool"]["should"] == [
        {"bool": {"filter": [{"term": {"tenant": "t1"}}, {"terms": {"memory_id": ["m1"]}}]}}]
    assert bulk.body == [{"delete": {"_id": "gen-a"}}, {"delete": {"_id": "gen-b"}}]


def test_serverless_delete_of_an_unindexed_memory_sends_no_bulk(recorder: Recorder) -> None:
    index = make_index(recorder, "aoss")
    recorder.reply(found())

    index.delete("t1", "m1")

    assert [r.path for r in recorder.requests] == [f"/{INDEX}", f"/{INDEX}/_search"]


def test_managed_domain_delete_is_one_bulk_by_id_and_tolerates_not_found(recorder: Recorder) -> None:
    index = make_index(recorder, "none")
    recorder.reply({"errors": False, "items": [{"delete": {"status": 404, "result": "not_found"}}]})

    index.delete("t1", "m1")

    _, _, bulk = recorder.requests
    assert bulk.body == [{"delete": {"_id": q.document_id("t1", "m1")}}]


def test_a_vector_of_the_wrong_dimension_is_refused_before_any_request(recorder: Recorder) -> None:
    index = make_index(recorder, ensured=False)

    with pytest.raises(DependencyError, match="3 dimensions"):
        index.upsert([doc("m1", vector=[1.0, 0.0, 0.0])])
    with pytest.raises(DependencyError, match="3 dimensions"):
        index.search(query(vector=[1.0, 0.0, 0.0]))
    assert recorder.requests == []


# -- issue 17, defect 2: a new Serverless index is not searchable at once -----------------------
def test_a_just_created_serverless_index_that_is_not_searchable_yet_has_no_copies(recorder: Recorder) -> None:
    # Given this instance has just created the index and Serverless does not serve searches on it yet
    index = make_index(recorder, "aoss", ensured=False)
    recorder.reply({"acknowledged": True, "index": INDEX})
    recorder.reply(INDEX_NOT_FOUND, status=404)
    recorder.reply(bulk_ok("index"))

    # When the first upsert looks up the copies, then nothing is indexed yet and the write goes on
    assert index.upsert([doc("m1")]) == {"m1": ["new-0"]}
    assert [r.method for r in recorder.requests] == ["PUT", "POST", "POST"]


def test_a_missing_index_this_instance_did_not_create_still_fails_the_write(recorder: Recorder) -> None:
    # Given the index existed at start-up and is gone now (deleted by hand): writing would auto-create a
    # dynamic mapping without knn_vector, so the write fails instead
    index = make_index(recorder, "aoss")
    recorder.reply(INDEX_NOT_FOUND, status=404)

    with pytest.raises(DependencyError, match="HTTP 404 index_not_found_exception"):
        index.upsert([doc("m1")])


# -- issue 17, defect 3: copies a refresh does not show yet -----------------------------------------
def test_serverless_upsert_deletes_the_copies_it_was_told_of_even_when_the_lookup_misses_them(
        recorder: Recorder) -> None:
    # Given v1 was indexed seconds ago as gen-a (not refreshed: the lookup finds nothing)
    index = make_index(recorder, "aoss")
    recorder.reply(found())
    recorder.reply(bulk_ok("delete", "index"))

    generated = index.upsert([doc("m1", version=2, index_ids=["gen-a"])])

    _, _, bulk = recorder.requests
    assert bulk.body[:2] == [{"delete": {"_id": "gen-a"}}, {"index": {}}]
    assert generated == {"m1": ["new-1"]}


def test_serverless_delete_removes_the_copies_it_was_told_of(recorder: Recorder) -> None:
    index = make_index(recorder, "aoss")
    recorder.reply(found(hit(source("m1"), 1.0, _id="gen-b")))
    recorder.reply(bulk_ok("delete", "delete"))

    index.delete("t1", "m1", ["gen-a", "gen-b"])

    _, _, bulk = recorder.requests
    assert bulk.body == [{"delete": {"_id": "gen-a"}}, {"delete": {"_id": "gen-b"}}]  # gen-b once


def test_a_skipped_stale_write_keeps_every_known_id(recorder: Recorder) -> None:
    index = make_index(recorder, "aoss")
    recorder.reply(found(hit(source("m1", version=3), 1.0, _id="gen-new")))

    assert index.upsert([doc("m1", version=2, index_ids=["gen-a"])]) == {"m1": ["gen-a", "gen-new"]}


def test_managed_domains_return_no_ids_to_remember(recorder: Recorder) -> None:
    index = make_index(recorder, "es")
    recorder.reply(bulk_ok("index"))

    assert index.upsert([doc("m1", index_ids=["ignored"])]) == {}


# -- issue 17, defect 4: the engine version -----------------------------------------------------------
@pytest.mark.parametrize("service", ["es", "none"])
def test_a_cluster_below_2_13_is_refused_clearly(recorder: Recorder, service: str) -> None:
    index = make_index(recorder, service, ensured=False)
    recorder.replies.clear()
    recorder.reply(cluster_info("2.11.0")).reply(cluster_info("2.11.0"))

    with pytest.raises(DependencyError, match=r"OpenSearch 2\.11\.0; Mnemo needs 2\.13 or later"):
        index.search(query())
    with pytest.raises(DependencyError, match="2.13"):
        index.upsert([doc("m1")])
    assert [(r.method, r.path) for r in recorder.requests] == [("GET", "/"), ("GET", "/")]  # nothing else sent


def test_the_version_is_checked_once_per_instance_and_never_on_import(recorder: Recorder) -> None:
    index = make_index(recorder, "es", ensured=False)  # scripted GET / answers 2.19.1
    recorder.reply(msearch([], [])).reply(msearch([], []))

    index.search(query())
    index.search(query())

    assert [r.method + " " + r.path for r in recorder.requests] == [
        "GET /", f"POST /{INDEX}/_msearch", f"POST /{INDEX}/_msearch"]


def test_serverless_has_no_version_to_check(recorder: Recorder) -> None:
    index = make_index(recorder, "aoss", ensured=False)
    recorder.reply(msearch([], []))

    index.search(query())

    assert [r.path for r in recorder.requests] == [f"/{INDEX}/_msearch"]


@pytest.mark.parametrize(("info", "accepted"), [
    (cluster_info("7.10.2"), True),  # a managed domain in compatibility mode: the real version is hidden
    (cluster_info("3.1.0"), True),
    (cluster_info("2.13.0"), True),
    (cluster_info("8.15.0", distribution=None), True),  # no distribution field: treated as OpenSearch
    (cluster_info("2.9.0"), False),
    (cluster_info("1.3.19"), False),
    (cluster_info("2.19.0", distribution="elasticsearch"), False),
])
def test_which_versions_pass(recorder: Recorder, info: dict[str, Any], accepted: bool) -> None:
    index = make_index(recorder, "none", ensured=False)
    recorder.replies.clear()
    recorder.reply(info).reply(msearch([], []))

    if accepted:
        assert index.search(query()) == []
    else:
        with pytest.raises(DependencyError, match="2.13"):
            index.search(query())


# -- issue 17, defect 5: how the two legs travel ---------------------------------------------------------
def _legs_by_body(knn_hits: list[dict[str, Any]], lexical_hits: list[dict[str, Any]]) -> Callable[[Request], Any]:
    def answer(request: Request) -> tuple[int, Any]:
        assert request.path.endswith("/_search"), request.path
        if "knn" in request.body["query"]:
            return 200, found(*knn_hits)
        return 200, {**found(*lexical_hits), "aggregations": QUERY_WEIGHT}
    return answer


def test_serverless_sends_the_legs_as_two_concurrent_searches_and_ranks_as_msearch_does(recorder: Recorder) -> None:
    knn_leg = [hit(source("m1", days=2), 1.8), hit(source("m2", days=30), 1 / 1.25)]
    lexical_leg = [hit(source("m1", days=2), 7.5), hit(source("m3", days=400), 2.0)]
    via_msearch = make_index(Recorder().reply(msearch(knn_leg, lexical_leg)), "aoss", ensured=False, legs="msearch")
    index = make_index(recorder, "aoss", ensured=False, legs="auto")
    recorder.responder = _legs_by_body(knn_leg, lexical_leg)

    hits = index.search(query())

    assert sorted(r.path for r in recorder.requests) == [f"/{INDEX}/_search", f"/{INDEX}/_search"]
    knn, lexical = sorted((r.body for r in recorder.requests), key=lambda b: "knn" not in b["query"])
    assert hits == via_msearch.search(query())
    assert knn["query"]["knn"]["vector"]["k"] == 400 and "multi_match" in lexical["query"]["bool"]["should"][0]


def test_legs_default_to_msearch_on_managed_domains_and_can_be_chosen(recorder: Recorder) -> None:
    index = make_index(recorder, "es", ensured=False, legs="auto")
    recorder.reply(msearch([], []))
    index.search(query())
    assert recorder.requests[-1].path == f"/{INDEX}/_msearch"

    settings = MnemoSettings(opensearch_url="http://localhost:9200", opensearch_service="none",
                             opensearch_legs="concurrent", embedding_dimension=DIM)
    chosen = Recorder()
    chosen.responder = lambda r: (200, cluster_info()) if r.path == "/" else _legs_by_body([], [])(r)
    OpenSearchIndex.from_settings(settings, connection_class=recording_connection(chosen)).search(query())
    assert sorted(r.path for r in chosen.requests) == ["/", "/mnemo-memories-v2/_search", "/mnemo-memories-v2/_search"]


def test_concurrent_legs_read_a_missing_index_as_empty_and_surface_other_failures(recorder: Recorder) -> None:
    index = make_index(recorder, "aoss", ensured=False, legs="concurrent")
    recorder.responder = lambda r: (404, INDEX_NOT_FOUND)
    assert index.search(query()) == []

    recorder.responder = lambda r: (503, {"error": {"type": "unavailable"}}) if "knn" in r.body["query"] else (200, found())
    with pytest.raises(DependencyError, match="HTTP 503"):
        index.search(query())


# -- similar ---------------------------------------------------------------------------------
def test_similar_is_one_knn_search_with_the_scope_and_exclusion_inside(recorder: Recorder) -> None:
    index = make_index(recorder, ensured=False)
    recorder.reply(found(
        hit(source("m2"), 1.9), hit(source("m3", version=2), 1.4), hit(source("m3", version=1), 1.95),
        hit(source("m4"), 0.5),
    ))

    hits = index.similar("t1", "u1", [0.5, 0.5, 0.5, 0.5], 5, exclude="m1")

    (request,) = recorder.requests
    assert (request.method, request.path) == ("POST", f"/{INDEX}/_search")
    assert request.body == {
        "size": 5, "track_total_hits": False, "_source": ["memory_id", "version"],
        "query": {"knn": {"vector": {"vector": [0.5, 0.5, 0.5, 0.5], "k": 5, "filter": {"bool": {
            "filter": [{"term": {"tenant": "t1"}}, {"term": {"user_id": "u1"}},
                       {"terms": {"author": ["user", "agent"]}}, {"terms": {"status": ["open", "completed"]}},
                       {"term": {"embedding_model": MODEL}}],
            "must_not": [{"term": {"memory_id": "m1"}}],
        }}}}},
    }
    assert [(h.memory_id, h.score) for h in hits] == [
        ("m2", pytest.approx(0.9)), ("m3", pytest.approx(0.4)), ("m4", 0.0)]  # m3: its newest copy; m4 clamped


# -- errors ---------------------------------------------------------------------------------
def test_a_partial_bulk_failure_surfaces_with_its_count_and_first_reason(recorder: Recorder) -> None:
    index = make_index(recorder, "es")
    recorder.reply({"errors": True, "items": [
        {"index": {"status": 201}},
        {"index": {"status": 400, "error": {"type": "mapper_parsing_exception", "reason": "failed to parse [vector]"}}},
        {"index": {"status": 429, "error": {"type": "es_rejected_execution_exception", "reason": "queue full"}}},
    ]})

    with pytest.raises(DependencyError) as caught:
        index.upsert([doc("m1"), doc("m2"), doc("m3")])

    assert "2 of 3" in caught.value.message
    assert "mapper_parsing_exception: failed to parse [vector]" in caught.value.message


def test_an_msearch_item_error_surfaces(recorder: Recorder) -> None:
    index = make_index(recorder, ensured=False)
    recorder.reply({"responses": [
        {"status": 200, "hits": {"hits": []}},
        {"status": 400, "error": {"type": "search_phase_execution_exception", "reason": "all shards failed"}},
    ]})

    with pytest.raises(DependencyError, match="search_phase_execution_exception"):
        index.search(query())


@pytest.mark.parametrize(("failure", "message"), [
    (TransportConnectionError("N/A", "connection refused", None), "search index unavailable (connection failed)"),
    ((503, {"error": {"type": "unavailable", "reason": "node search.internal down"}}), "search index unavailable (HTTP 503)"),
    ((429, {"error": {"type": "throttled", "reason": "slow down"}}), "search index unavailable (throttled, HTTP 429)"),
    ((403, {"message": "User: arn:aws:iam::123456789012:role/x is not authorized"}), "search index rejected the request (HTTP 403"),
])
def test_transport_failures_become_dependency_errors_without_internals(recorder: Recorder, failure: Any,
                                                                        message: str) -> None:
    index = make_index(recorder, ensured=False)
    if isinstance(failure, Exception):
        recorder.fail(failure)
    else:
        recorder.reply(failure[1], status=failure[0])

    with pytest.raises(DependencyError) as caught:
        index.search(query())

    assert caught.value.message.startswith(message)
    assert "search.internal" not in caught.value.message and "arn:" not in caught.value.message


# -- isolation -------------------------------------------------------------------------------
def test_every_read_carries_the_tenant_and_user_filters(recorder: Recorder) -> None:
    index = make_index(recorder, "aoss", ensured=False)
    recorder.reply(msearch([], [])).reply(msearch([])).reply(found())
    recorder.reply(ALREADY_EXISTS, status=400).reply(found()).reply(bulk_ok("index")).reply(found())

    index.search(query(tenant="acme", user_id="alice"))
    index.search(query(tenant="acme", user_id="alice", vector=None))
    index.similar("acme", "alice", [0.1, 0.2, 0.3, 0.4], 5)
    index.upsert([doc("m1", tenant="acme", user_id="alice")])  # the copies lookup
    index.delete("acme", "m1")

    reads = recorder.reads()
    assert len(reads) == 6
    for body in reads:
        if "knn" in body["query"]:
            scope = terms_of(body["query"]["knn"]["vector"]["filter"])
            assert scope["tenant"] == "acme" and scope["user_id"] == "alice"
        elif "minimum_should_match" not in body["query"]["bool"] or "aggs" in body:  # the lexical leg
            scope = terms_of(body["query"])
            assert scope["tenant"] == "acme" and scope["user_id"] == "alice"
        else:
            # The write path's copies lookup: keyed by (tenant, memory_id), and it returns only ids and
            # versions, never a document to a caller (the memory's user may have changed since).
            assert body["_source"] == ["tenant", "memory_id", "version"]
            for clause in body["query"]["bool"]["should"]:
                assert terms_of(clause)["tenant"] == "acme"


# -- construction ----------------------------------------------------------------------------
def test_from_settings_signs_serverless_requests_with_sigv4(recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    settings = MnemoSettings(opensearch_url="https://abc123.eu-west-1.aoss.amazonaws.com",
                             opensearch_service="aoss", opensearch_index="mem", embedding_dimension=DIM)
    index = OpenSearchIndex.from_settings(settings, connection_class=recording_connection(recorder))
    recorder.reply(found()).reply(found())  # Serverless: the two legs as two `_search` calls

    index.search(query())

    assert [r.path for r in recorder.requests] == ["/mem-v2/_search", "/mem-v2/_search"]
    kwargs = recorder.connection_kwargs
    assert kwargs["host"] == "abc123.eu-west-1.aoss.amazonaws.com" and kwargs["port"] == 443
    assert kwargs["use_ssl"] is True and kwargs["verify_certs"] is True and kwargs["timeout"] == 5
    assert index.index_name == "mem-v2"
    authorization = recorder.requests[0].headers["Authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256") and "/eu-west-1/aoss/aws4_request" in authorization
    assert "X-Amz-Content-SHA256" in recorder.requests[0].headers


def test_from_settings_retries_a_connection_failure_once(recorder: Recorder) -> None:
    settings = MnemoSettings(opensearch_url="http://localhost:9200", opensearch_service="none",
                             embedding_dimension=DIM)
    index = OpenSearchIndex.from_settings(settings, connection_class=recording_connection(recorder))
    for _ in range(2):
        recorder.fail(TransportConnectionError("N/A", "refused", None))

    with pytest.raises(DependencyError, match="connection failed"):
        index.search(query())
    assert len(recorder.requests) == 2  # one retry: two 5 s attempts fit the 25 s tool budget


def test_from_settings_uses_basic_auth_from_the_url_for_self_hosted(recorder: Recorder) -> None:
    settings = MnemoSettings(opensearch_url="https://admin:p%40ss@localhost:9200/", opensearch_service="none",
                             embedding_model_id="local-minilm", embedding_dimension=384)
    index = OpenSearchIndex.from_settings(settings, connection_class=recording_connection(recorder),
                                          embedding_model=MODEL, dimension=DIM)

    assert recorder.connection_kwargs["http_auth"] == ("admin", "p@ss")
    assert recorder.connection_kwargs["port"] == 9200
    assert (index._embedding_model, index._dimension) == (MODEL, DIM)


def test_importing_the_adapter_does_not_import_opensearch_py() -> None:
    import subprocess
    import sys

    code = ("import sys; import mnemo.adapters.opensearch.index; "
            "sys.exit(int('opensearchpy' in sys.modules or 'boto3' in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(REPO / "shared")}
    assert subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO).returncode == 0
