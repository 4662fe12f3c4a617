"""OpenSearch request bodies as pure functions: data in, dicts out, no I/O and no opensearch-py.

`opensearch_index.OpenSearchIndex` sends them; the contract tests pin them. Every body that reads
documents for a caller carries the tenant and user_id term filters (`scope_filter`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mnemo.domain import scoring
from mnemo.domain.scoring import BM25_K1, bm25_idf
from mnemo.domain.text import STOPWORDS, tokenize
from mnemo.ports import LEXICAL_FIELDS, IndexDocument

# The physical index is `<MNEMO_OPENSEARCH_INDEX>-v<MAPPING_VERSION>`. Bump the version on any
# incompatible mapping change: the adapter then writes to a new, empty index, which the reindex
# command fills from DynamoDB (the source of truth) before the old version is dropped.
MAPPING_VERSION = 2  # 2: text_tokens

# faiss HNSW, inner product. Why faiss: OpenSearch Serverless VECTORSEARCH collections build faiss
# HNSW (the AWS guide's "Filtered search" example for vector collections uses faiss; its limitations
# list excluded the lucene engine; the AWS Migration Assistant converts knn_vector mappings to faiss
# HNSW "for serverless compatibility"), and faiss HNSW supports efficient filtering (the filter
# inside the knn clause) since OpenSearch 2.9 (docs.opensearch.org, "Efficient k-NN filtering").
# nmslib is deprecated and cannot filter efficiently. Why innerproduct: our vectors are unit length,
# so the inner product is the cosine, without the per-query normalisation cosinesimil costs.
KNN_METHOD: dict[str, Any] = {
    "name": "hnsw",
    "engine": "faiss",
    "space_type": "innerproduct",
    "parameters": {"m": 16, "ef_construction": 128},
}

_KEYWORD_FIELDS = ("memory_id", "tenant", "user_id", "agent_id", "group_id", "author", "status", "category",
                   "embedding_model")


def physical_index(base: str) -> str:
    return f"{base}-v{MAPPING_VERSION}"


def index_body(dimension: int) -> dict[str, Any]:
    """Settings and mapping of the physical index (strict: an unknown field is a bug, not a new field)."""
    properties: dict[str, Any] = {name: {"type": "keyword"} for name in _KEYWORD_FIELDS}
    properties.update({
        "vector": {"type": "knn_vector", "dimension": dimension, "method": KNN_METHOD},
        "text": {"type": "text", "analyzer": "mnemo_text"},
        "context": {"type": "text", "analyzer": "mnemo_text"},
        "entities": {"type": "text", "analyzer": "mnemo_text",
                     "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}},
        "captured_at": {"type": "date"},
        "created_at": {"type": "date"},
        "importance": {"type": "float"},
        "version": {"type": "integer"},
        "text_tokens": {"type": "integer"},  # length of `text` in mnemo_text tokens, for fusion's length prior
        "links": {"type": "object", "enabled": False},  # memory id -> weight, kept in _source only
    })
    return {"settings": {"index": {"knn": True}, "analysis": TEXT_ANALYSIS},
            "mappings": {"dynamic": "strict", "properties": properties}}


# The same tokens as `mnemo.domain.text.tokenize` (what the local index scores): lower case, no
# possessive 's, our stopword list, plurals folded (minimal_english is an s-stemmer).
TEXT_ANALYSIS: dict[str, Any] = {
    "filter": {
        # OpenSearch has no built-in filter named for the possessive stemmer: define it here.
        "mnemo_possessive": {"type": "stemmer", "language": "possessive_english"},
        "mnemo_stop": {"type": "stop", "stopwords": sorted(STOPWORDS)},
        "mnemo_plural": {"type": "stemmer", "language": "minimal_english"},
    },
    "analyzer": {
        "mnemo_text": {
            "type": "custom",
            "tokenizer": "standard",
            "filter": ["mnemo_possessive", "lowercase", "mnemo_stop", "mnemo_plural"],
        }
    },
}


def document_id(tenant: str, memory_id: str) -> str:
    """The `_id` on a managed domain or self-hosted cluster (never on Serverless VECTORSEARCH).

    A digest rather than `tenant:memory_id`: tenants may contain ':', and a digest cannot collide
    across tenants whatever either id contains."""
    return hashlib.sha256(f"{tenant}\x00{memory_id}".encode()).hexdigest()


def document_source(doc: IndexDocument) -> dict[str, Any]:
    """The stored document: every IndexDocument field but `replies_to` (only the local reranker reads
    it), `vector` only when there is one, and `text_tokens` (what the local index counts; the
    mnemo_text analyzer yields the same tokens)."""
    source = doc.model_dump(mode="json", exclude={"vector", "index_ids", "replies_to"})
    source["text_tokens"] = len(tokenize(doc.text))
    if doc.vector is not None:
        source["vector"] = list(doc.vector)
    return source


def scope_filter(
    levels: Mapping[str, str],
    authors: Iterable[str],
    statuses: Iterable[str],
    *,
    embedding_model: str | None = None,
    exclude: str | None = None,
) -> dict[str, Any]:
    """The namespace levels a read pins (`NamespaceFilter.levels()`: tenant always, then user, agent,
    group when set) plus author/status (and the embedding model for k-NN legs), as term filters."""
    if "tenant" not in levels:
        raise ValueError("an index query is never unscoped: the tenant is required")
    clauses: list[dict[str, Any]] = [{"term": {name: value}} for name, value in levels.items()]
    clauses += [
        {"terms": {"author": _distinct(authors)}},
        {"terms": {"status": _distinct(statuses)}},
    ]
    if embedding_model is not None:
        clauses.append({"term": {"embedding_model": embedding_model}})
    query: dict[str, Any] = {"filter": clauses}
    if exclude is not None:
        query["must_not"] = [{"term": {"memory_id": exclude}}]
    return {"bool": query}


def knn_body(vector: Sequence[float], size: int, scope: dict[str, Any], *,
             source: Any = None) -> dict[str, Any]:
    """Approximate k-NN with the scope filter INSIDE the knn clause (efficient filtering: the graph
    search only visits allowed documents, so a small tenant still gets `size` neighbours)."""
    return {
        "size": size,
        "track_total_hits": False,
        "_source": source if source is not None else {"excludes": ["vector"]},
        "query": {"knn": {"vector": {"vector": [float(x) for x in vector], "k": size, "filter": scope}}},
    }


# What fusion reads from a hit: the legs are deep (hundreds of hits), so they carry no text.
CANDIDATE_SOURCE = ["memory_id", "version", "importance", "captured_at", "text_tokens", "links"]


def lexical_body(text: str, size: int, scope: dict[str, Any], *, source: Any = None) -> dict[str, Any]:
    """BM25 over the lexical fields, the same signal the local index computes: the boosted per-field
    scores summed, as two named clauses (`text`; the other fields as `context`), so a hit says whether
    its text matched (`matched_queries`); and, in the same request, the index's document count and each
    query term's document frequency in `text` (`query_weight_aggregation`), which the share of the
    query's maximum needs (`scoring.lexical_share`)."""
    others = [f"{name}^{boost}" for name, boost in LEXICAL_FIELDS.items() if name != "text"]
    body: dict[str, Any] = {
        "size": size,
        "track_total_hits": False,
        "_source": source if source is not None else {"excludes": ["vector"]},
        "query": {"bool": {
            "should": [
                {"multi_match": {"query": text, "fields": [f"text^{LEXICAL_FIELDS['text']}"], "type": "most_fields",
                                 "_name": "text"}},
                {"multi_match": {"query": text, "fields": others, "type": "most_fields", "_name": "context"}},
            ],
            "minimum_should_match": 1,
            "filter": scope["bool"]["filter"],
        }},
    }
    terms = query_terms(text)
    if terms:
        body["aggs"] = {"query_weight": query_weight_aggregation("text", terms)}
    return body


def query_terms(text: str) -> list[str]:
    """The distinct terms the `mnemo_text` analyzer makes of a query (`tokenize` is its mirror)."""
    return sorted(set(tokenize(text)))


def query_weight_aggregation(field: str, terms: Sequence[str]) -> dict[str, Any]:
    """Over the whole index, as BM25's own statistics are (it reads every tenant's documents and
    returns two numbers per term, never a document): the document count, and per term how many
    documents hold it in `field`."""
    return {"global": {}, "aggs": {"per_term": {"filters": {"filters": {t: {"term": {field: t}} for t in terms}}}}}


def query_weight(response: Mapping[str, Any], terms: Sequence[str]) -> float:
    """`scoring.query_weight` from a response carrying `query_weight_aggregation`: the sum of the
    terms' idf, as Lucene's BM25 computes each (`bm25_idf`). 0 when the response has none."""
    found = (response.get("aggregations") or {}).get("query_weight")
    if not found:
        return 0.0
    buckets = found.get("per_term", {}).get("buckets", {})
    count = int(found.get("doc_count") or 0)
    return scoring.query_weight(bm25_idf(count, int(buckets.get(t, {}).get("doc_count") or 0)) for t in terms)


def copies_body(ids_by_tenant: Mapping[str, Sequence[str]], id_field: str = "memory_id") -> dict[str, Any]:
    """Every indexed copy of these documents (tenant -> ids in `id_field`; memories by default, facts
    with `fact_uuid`): their generated `_id`s and versions."""
    per_tenant = [
        {"bool": {"filter": [{"term": {"tenant": tenant}}, {"terms": {id_field: _distinct(ids)}}]}}
        for tenant, ids in ids_by_tenant.items()
    ]
    count = sum(len(set(ids)) for ids in ids_by_tenant.values())
    return {
        "size": min(10_000, max(10, 10 * count)),
        "track_total_hits": False,
        "_source": ["tenant", id_field, "version"],
        "query": {"bool": {"should": per_tenant, "minimum_should_match": 1}},
    }


def bm25_from_lucene(score: float) -> float:
    """OpenSearch's BM25 in the form the local index computes and the ranking was measured with (memories and facts alike). Lucene
    dropped `k1 + 1` from BM25's numerator in Lucene 8 (LUCENE-8563), so OpenSearch's scores are the
    textbook ones over `k1 + 1` (2.2): read as they come, the lexical leg counted 2.2x less on AWS than
    in every benchmark."""
    return score * (BM25_K1 + 1.0)


def cosine_from_knn_score(score: float) -> float:
    """Invert faiss innerproduct's score (docs.opensearch.org, "Spaces"): with d = -ip,
    score = 1 / (1 + d) when d >= 0 (ip <= 0) and score = 1 - d when d < 0 (ip > 0)."""
    if score >= 1.0:
        ip = score - 1.0
    elif score > 0.0:
        ip = 1.0 - 1.0 / score
    else:
        ip = -1.0
    return max(-1.0, min(1.0, ip))


def _distinct(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(str(v) for v in values))
