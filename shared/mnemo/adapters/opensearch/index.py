"""`SearchIndex` on OpenSearch: Serverless VECTORSEARCH (`aoss`), a managed domain (`es`) or a
self-hosted cluster (`none`). Request bodies live in `opensearch_queries`; ranking is the memory service's.

Documents and ids. OpenSearch Serverless VECTORSEARCH collections reject a custom `_id` on
index/create (the AWS "Supported operations" page marks `PUT <index>/_doc/<id>` and `_create/<id>`
"for search collection types only") and do not serve `_delete_by_query`; `_bulk` with generated ids,
`_search`/`_msearch` and deletes by generated `_id` work. Our id is therefore the `memory_id` field,
and the write path depends on the service (inside this adapter only):

- `aoss`: upsert = one `_search` for the visible copies of the memories (tenant + memory_id), then one
  `_bulk` that deletes them and the copies the caller remembers (`IndexDocument.index_ids`) and indexes
  the new documents (no `_id`), returning the generated `_id`s to remember; a visible copy with a higher
  `version` wins (the write is stale and skipped). delete = the same lookup + a `_bulk` of deletes.
- `es` / `none`: `_id` = a digest of (tenant, memory_id); upsert = one `_bulk` of index actions with
  `version_type=external_gte` on our version (a stale write gets 409 and is dropped); delete = one
  `_bulk` delete by `_id`.

No `_refresh` anywhere (Serverless has none; a vector collection refreshes about once a minute).
So on Serverless a copy indexed less than a refresh ago is invisible to the lookup (the remembered ids
cover it) and, when its id was not remembered, can survive as a duplicate: `search` and `similar` collapse hits by `memory_id`, keeping the highest version,
and the next upsert/delete of that memory (or a reindex) removes it. Search results are hydrated from
DynamoDB, which decides status and content. opensearch-py is imported lazily (import cost ~0.5 s).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from mnemo.adapters.opensearch import queries as q
from mnemo.adapters.opensearch.base import NO_INDEX, Legs, OpenSearchBase, Service, build_client
from mnemo.domain.scoring import Candidates, clamp01, leg_size, lexical_share
from mnemo.errors import DependencyError
from mnemo.ports import SIMILAR_AUTHORS, SIMILAR_STATUSES, IndexDocument, SearchHit, SearchQuery

if TYPE_CHECKING:
    from mnemo.settings import MnemoSettings

logger = logging.getLogger(__name__)


class OpenSearchIndex(OpenSearchBase):
    """`SearchIndex` over one physical index (`index_name`); `service` picks the write path (module docstring)."""

    def __init__(self, client: Any, *, index: str, service: Service, embedding_model: str, dimension: int,
                 legs: Legs = "auto") -> None:
        super().__init__(client, index_name=q.physical_index(index), service=service, dimension=dimension, legs=legs)
        self._embedding_model = embedding_model

    @classmethod
    def from_settings(cls, settings: MnemoSettings, *, embedding_model: str | None = None,
                      dimension: int | None = None, connection_class: Any = None,
                      client: Any = None) -> OpenSearchIndex:
        """A client for `MNEMO_OPENSEARCH_URL`: SigV4 for `aoss`/`es`, the URL's userinfo (basic auth) for `none`.

        `embedding_model`/`dimension` default to the settings; pass the embedder's when it is not Bedrock.
        `client`: an existing one (the container shares one with the facts index)."""
        client = client or build_client(settings, connection_class)
        return cls(client, index=settings.opensearch_index, service=settings.opensearch_service,
                   embedding_model=embedding_model or settings.embedding_model_id,
                   dimension=dimension or settings.embedding_dimension, legs=settings.opensearch_legs)

    def _index_body(self) -> dict[str, Any]:
        return q.index_body(self._dimension)

    # -- writes ---------------------------------------------------------------------------
    def upsert(self, documents: Sequence[IndexDocument]) -> dict[str, list[str]]:
        """Returns, on Serverless, memory id -> the generated `_id`s its copies have after this write."""
        latest: dict[tuple[str, str], IndexDocument] = {}
        for doc in documents:  # one document per memory: the highest version (the last on a tie)
            key = (doc.tenant, doc.memory_id)
            if key not in latest or doc.version >= latest[key].version:
                latest[key] = doc
        if not latest:
            return {}
        for doc in latest.values():
            if doc.vector is not None and len(doc.vector) != self._dimension:
                raise DependencyError(f"embedding has {len(doc.vector)} dimensions but the search index expects "
                                      f"{self._dimension}; reindex with the new model")
        self._ensure_once()
        actions: list[dict[str, Any]] = []
        if not self._generated_ids:
            for doc in latest.values():
                meta = {"_id": q.document_id(doc.tenant, doc.memory_id), "version": doc.version,
                        "version_type": "external_gte"}
                actions += [{"index": meta}, q.document_source(doc)]
            self._bulk(actions)
            return {}
        # Serverless: delete every copy we know of (the ids earlier writes returned, which a refresh may
        # not show yet, plus the visible ones), index without an `_id`, and hand back the new `_id`s.
        copies = self._copies(latest.keys())
        kept: dict[str, list[str]] = {}
        indexed: list[str] = []  # memory id of each index action, in order
        for key, doc in latest.items():
            found = copies.get(key, [])
            old_ids = list(dict.fromkeys([*doc.index_ids, *(doc_id for doc_id, _ in found)]))
            if any(version > doc.version for _, version in found):
                logger.info("stale index write skipped", extra={"memory_id": doc.memory_id})
                kept[doc.memory_id] = old_ids
                continue
            actions += [{"delete": {"_id": doc_id}} for doc_id in old_ids]
            actions += [{"index": {}}, q.document_source(doc)]
            indexed.append(doc.memory_id)
        items = self._bulk(actions)
        new_ids = [result.get("_id") for op, result in items if op == "index"]
        if len(new_ids) != len(indexed) or not all(new_ids):
            raise DependencyError("search index returned no document ids for a bulk write")
        for memory_id, doc_id in zip(indexed, new_ids, strict=True):
            kept.setdefault(memory_id, []).append(str(doc_id))
        return kept

    def delete(self, tenant: str, memory_id: str, index_ids: Sequence[str] = ()) -> None:
        self._ensure_once()
        if self._generated_ids:
            found = [doc_id for doc_id, _ in self._copies([(tenant, memory_id)]).get((tenant, memory_id), [])]
            ids = list(dict.fromkeys([*index_ids, *found]))
        else:
            ids = [q.document_id(tenant, memory_id)]
        self._bulk([{"delete": {"_id": doc_id}} for doc_id in ids])

    def _copies(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[tuple[str, int]]]:
        """Visible copies per (tenant, memory id): (generated _id, version). Returns ids, never documents."""
        by_tenant: dict[str, list[str]] = {}
        for tenant, memory_id in keys:
            by_tenant.setdefault(tenant, []).append(memory_id)
        body = q.copies_body(by_tenant)
        response = self._call(lambda c: c.search(index=self.index_name, body=body), missing=self._lookup_missing())
        copies: dict[tuple[str, str], list[tuple[str, int]]] = {}
        for hit in response.get("hits", {}).get("hits", []):
            src = hit.get("_source") or {}
            key = (src.get("tenant", ""), src.get("memory_id", ""))
            copies.setdefault(key, []).append((hit["_id"], int(src.get("version") or 0)))
        return copies

    # -- reads ----------------------------------------------------------------------------
    def search(self, query: SearchQuery) -> Candidates:
        """The k-NN leg (when the query has a vector) and the BM25 leg (`_run_legs`), as candidates."""
        levels = query.scope.levels()
        scope = q.scope_filter(levels, query.authors, query.statuses)
        bodies: list[dict[str, Any]] = []
        if query.vector is not None:
            self._check_query_vector(query.vector)
            knn_scope = q.scope_filter(levels, query.authors, query.statuses, embedding_model=self._embedding_model)
            bodies.append(q.knn_body(query.vector, leg_size(query.top_k), knn_scope, source=q.CANDIDATE_SOURCE))
        bodies.append(q.lexical_body(query.text, leg_size(query.top_k), scope, source=q.CANDIDATE_SOURCE))
        items = self._run_legs(bodies)
        legs = [self._hits(item) for item in items]
        semantic_hits, lexical_hits = (legs[0], legs[1]) if query.vector is not None else ([], legs[0])
        return _candidates(semantic_hits, lexical_hits, q.query_weight(items[-1], q.query_terms(query.text)))

    def similar(self, tenant: str, user_id: str, vector: list[float], k: int,
                exclude: str | None = None) -> list[SearchHit]:
        if k <= 0:
            return []
        self._check_query_vector(vector)
        self._check_once()
        scope = q.scope_filter({"tenant": tenant, "user_id": user_id}, SIMILAR_AUTHORS, SIMILAR_STATUSES,
                               embedding_model=self._embedding_model, exclude=exclude)
        body = q.knn_body(vector, k, scope, source=["memory_id", "version"])
        response = self._call(lambda c: c.search(index=self.index_name, body=body), missing=NO_INDEX)
        best: dict[str, tuple[int, float]] = {}
        for hit in response.get("hits", {}).get("hits", []):
            src = hit.get("_source") or {}
            mid, version = src.get("memory_id"), int(src.get("version") or 0)
            cosine = q.cosine_from_knn_score(float(hit.get("_score") or 0.0))
            if mid and (mid not in best or (version, cosine) > best[mid]):
                best[mid] = (version, cosine)
        ordered = sorted(best.items(), key=lambda kv: (-kv[1][1], kv[0]))[:k]
        return [SearchHit(memory_id=mid, score=clamp01(cos)) for mid, (_, cos) in ordered]


def _candidates(semantic_hits: list[dict[str, Any]], lexical_hits: list[dict[str, Any]], most: float) -> Candidates:
    """The union of both legs, one candidate per memory, the lexical score as a share of the query's
    maximum `most`. Transient duplicates (see the module docstring) collapse to the highest version
    seen; a stale copy contributes no signal."""
    newest: dict[str, int] = {}
    for hit in (*semantic_hits, *lexical_hits):
        src = hit.get("_source") or {}
        if src.get("memory_id"):
            newest[src["memory_id"]] = max(newest.get(src["memory_id"], 0), int(src.get("version") or 0))
    sources: dict[str, dict[str, Any]] = {}

    def best(hits: list[dict[str, Any]], convert: Callable[[float], float]) -> dict[str, float]:
        signal: dict[str, float] = {}
        for hit in hits:
            src = hit.get("_source") or {}
            mid = src.get("memory_id")
            if mid and int(src.get("version") or 0) == newest[mid]:
                value = convert(float(hit.get("_score") or 0.0))
                signal[mid] = max(signal.get(mid, value), value)
                sources[mid] = src
        return signal

    lexical = best(lexical_hits, lambda score: lexical_share(q.bm25_from_lucene(score), most))
    semantic = best(semantic_hits, q.cosine_from_knn_score)
    in_text = {(hit.get("_source") or {}).get("memory_id") for hit in lexical_hits if "text" in hit.get("matched_queries", ())}
    ids = list(sources)
    return Candidates(
        ids,
        lexical=[lexical.get(mid, 0.0) for mid in ids],
        semantic=[semantic.get(mid) for mid in ids],
        importance=[sources[mid].get("importance") for mid in ids],
        captured_at=[_parse_time(sources[mid].get("captured_at")) for mid in ids],
        text_tokens=[sources[mid].get("text_tokens") for mid in ids],
        links=[{str(other): float(weight) for other, weight in (sources[mid].get("links") or {}).items()} for mid in ids],
        context_only=[mid in lexical and mid not in in_text for mid in ids],
    )


def _parse_time(value: Any) -> datetime | None:
    if not value:
        return None
    parsed = datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
