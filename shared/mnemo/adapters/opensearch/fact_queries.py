"""Request bodies of the facts index (`opensearch_facts.OpenSearchFactIndex`), as pure functions.

The facts index is a second physical index next to the memories index, `<MNEMO_OPENSEARCH_INDEX>-facts-
v<FACT_MAPPING_VERSION>`, so the deployment's `index/<collection>/<index>*` permissions cover it. It
shares the memories index's analyzer (`mnemo_text`) and k-NN method (faiss HNSW, innerproduct).
Every body that reads documents for a caller carries the tenant, user_id and group_id term filters.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from mnemo.adapters.opensearch import queries as q
from mnemo.domain.namespace import Namespace
from mnemo.ports import FACT_LEXICAL_FIELDS, FACT_WEIGHT_FIELD, FactDocument

# Bump on an incompatible mapping change; `python -m mnemo.cli reindex` fills the new index.
FACT_MAPPING_VERSION = 2  # 2: `canonical` (the fact in canonical words)
# A document's `version`: one with a vector outranks one without, so a lexical-only write (a worker
# batch whose embedding failed) never erases a vector an earlier write stored. Fact sentences never
# change for a uuid, so nothing else needs ordering.
LEXICAL_ONLY, EMBEDDED = 1, 2
FACT_HIT_SOURCE = ["fact_uuid", "entity_ids", "names", "version"]
_KEYWORD_FIELDS = ("tenant", "user_id", "group_id", "fact_uuid", "entity_ids", "embedding_model")


def physical_fact_index(base: str) -> str:
    return f"{base}-facts-v{FACT_MAPPING_VERSION}"


def fact_index_body(dimension: int) -> dict[str, Any]:
    """Settings and mapping (strict dynamic: an unknown field is a bug, not a new field)."""
    properties: dict[str, Any] = {name: {"type": "keyword"} for name in _KEYWORD_FIELDS}
    properties.update({
        "sentence": {"type": "text", "analyzer": "mnemo_text"},
        "canonical": {"type": "text", "analyzer": "mnemo_text"},
        "names": {"type": "text", "analyzer": "mnemo_text"},
        "vector": {"type": "knn_vector", "dimension": dimension, "method": q.KNN_METHOD},
        "version": {"type": "integer"},
    })
    return {"settings": {"index": {"knn": True}, "analysis": q.TEXT_ANALYSIS},
            "mappings": {"dynamic": "strict", "properties": properties}}


def fact_document_id(tenant: str, fact_uuid: str) -> str:
    """The `_id` on a managed domain or self-hosted cluster (never on Serverless VECTORSEARCH)."""
    return hashlib.sha256(f"fact\x00{tenant}\x00{fact_uuid}".encode()).hexdigest()


def fact_version(doc: FactDocument) -> int:
    return EMBEDDED if doc.vector is not None else LEXICAL_ONLY


def fact_source(doc: FactDocument, embedding_model: str) -> dict[str, Any]:
    source: dict[str, Any] = {
        "tenant": doc.tenant, "user_id": doc.user_id, "group_id": doc.group_id, "fact_uuid": doc.fact_uuid,
        "sentence": doc.sentence, "canonical": doc.canonical, "names": list(doc.names), "entity_ids": list(doc.entity_ids),
        "version": fact_version(doc),
    }
    if doc.vector is not None:
        source["vector"] = [float(x) for x in doc.vector]
        source["embedding_model"] = embedding_model
    return source


def fact_scope(namespace: Namespace, *, embedding_model: str | None = None) -> dict[str, Any]:
    """One graph: tenant, user and group (and, for the k-NN leg, the embedding model), as term filters."""
    if not namespace.tenant:
        raise ValueError("a fact query is never unscoped: the tenant is required")
    clauses: list[dict[str, Any]] = [{"term": {"tenant": namespace.tenant}}, {"term": {"user_id": namespace.user_id}},
                                     {"term": {"group_id": namespace.group_id}}]
    if embedding_model is not None:
        clauses.append({"term": {"embedding_model": embedding_model}})
    return {"bool": {"filter": clauses}}


def fact_knn_body(vector: Sequence[float], k: int, scope: dict[str, Any]) -> dict[str, Any]:
    """The scope filter INSIDE the knn clause (efficient filtering), like the memories index."""
    return q.knn_body(vector, k, scope, source=FACT_HIT_SOURCE)


def fact_lexical_body(text: str, k: int, scope: dict[str, Any]) -> dict[str, Any]:
    """BM25 over the sentence, the canonical form and (boosted down) the entity names, summed: the
    local index's signal; and, in the same request, the index's document count and each query term's
    document frequency in `FACT_WEIGHT_FIELD`, the sentence (`queries.query_weight_aggregation`), from which the query's maximum
    is made (`scoring.lexical_share`), as memories make theirs from `text`."""
    fields = [f"{name}^{boost}" for name, boost in FACT_LEXICAL_FIELDS.items()]
    body: dict[str, Any] = {
        "size": k,
        "track_total_hits": False,
        "_source": FACT_HIT_SOURCE,
        "query": {"bool": {
            "must": [{"multi_match": {"query": text, "fields": fields, "type": "most_fields"}}],
            "filter": scope["bool"]["filter"],
        }},
    }
    terms = q.query_terms(text)
    if terms:
        body["aggs"] = {"query_weight": q.query_weight_aggregation(FACT_WEIGHT_FIELD, terms)}
    return body


def fact_copies_body(fact_uuids: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Every indexed copy of these facts (tenant -> fact uuids): their generated `_id`s and versions."""
    return q.copies_body(fact_uuids, id_field="fact_uuid")
