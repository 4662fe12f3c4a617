"""`FactIndex` on OpenSearch: a second physical index next to the memories index
(`<MNEMO_OPENSEARCH_INDEX>-facts-v2`, bodies in `opensearch_fact_queries`), on the same kind of client
(`opensearch_base`: SigV4, version check, index created before the first write).

Ids and writes follow the memories index (docs/index-mapping.md, "Ids, writes and no refresh"):

- `es` / `none`: `_id` = a digest of (tenant, fact uuid); upsert = one `_bulk` of index actions with
  `version_type=external_gte` on the document's version (2 with a vector, 1 without: a lexical-only
  write never erases a stored vector); delete = one `_bulk` delete by `_id`.
- `aoss` (no custom `_id` on VECTORSEARCH): upsert = one `_search` for the visible copies of the facts,
  then one `_bulk` that deletes them and the copies this instance wrote (remembered in process: a copy
  written less than a refresh ago is invisible to the lookup) and indexes the new documents without
  `_id`. A copy written by another instance within its refresh interval can survive as a duplicate;
  a fact's sentence never changes, so a duplicate carries the same words, `search` collapses hits by
  fact uuid, the next write or delete of that fact removes it, and a reindex rebuilds the index.

No status is indexed: hydration from DynamoDB decides which facts are active (the port's contract),
because a status copied here could lag a conditional write in the store and hide a fact brought back.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from mnemo.adapters.opensearch import fact_queries as fq
from mnemo.adapters.opensearch import queries as q
from mnemo.adapters.opensearch.base import Legs, OpenSearchBase, Service, build_client
from mnemo.domain.namespace import Namespace
from mnemo.domain.scoring import clamp01, lexical_share
from mnemo.errors import DependencyError
from mnemo.ports import FACT_WEIGHT_SCALE, FactDocument, FactHit

if TYPE_CHECKING:
    from mnemo.settings import MnemoSettings

logger = logging.getLogger(__name__)
_REMEMBERED = 20_000  # generated ids of the facts this instance wrote last (Serverless only)
Key = tuple[str, str]  # (tenant, fact uuid)


class OpenSearchFactIndex(OpenSearchBase):
    def __init__(self, client: Any, *, index: str, service: Service, embedding_model: str, dimension: int,
                 legs: Legs = "auto") -> None:
        super().__init__(client, index_name=fq.physical_fact_index(index), service=service, dimension=dimension,
                         legs=legs)
        self._embedding_model = embedding_model
        self._written: OrderedDict[Key, list[str]] = OrderedDict()

    @classmethod
    def from_settings(cls, settings: MnemoSettings, *, embedding_model: str, dimension: int, client: Any = None,
                      connection_class: Any = None) -> OpenSearchFactIndex:
        """`client`: share the memories index's client (one connection pool, one signer)."""
        return cls(client or build_client(settings, connection_class), index=settings.opensearch_index,
                   service=settings.opensearch_service, embedding_model=embedding_model, dimension=dimension,
                   legs=settings.opensearch_legs)

    def _index_body(self) -> dict[str, Any]:
        return fq.fact_index_body(self._dimension)

    # -- writes ---------------------------------------------------------------------------
    def upsert(self, documents: Sequence[FactDocument]) -> None:
        latest: dict[Key, FactDocument] = {}
        for doc in documents:  # one document per fact: the embedded one wins, else the last
            key = (doc.tenant, doc.fact_uuid)
            if key not in latest or fq.fact_version(doc) >= fq.fact_version(latest[key]):
                latest[key] = doc
        if not latest:
            return
        for doc in latest.values():
            if doc.vector is not None and len(doc.vector) != self._dimension:
                raise DependencyError(f"embedding has {len(doc.vector)} dimensions but the facts index expects "
                                      f"{self._dimension}; reindex with the new model")
        self._ensure_once()
        actions: list[dict[str, Any]] = []
        if not self._generated_ids:
            for doc in latest.values():
                meta = {"_id": fq.fact_document_id(doc.tenant, doc.fact_uuid), "version": fq.fact_version(doc),
                        "version_type": "external_gte"}
                actions += [{"index": meta}, fq.fact_source(doc, self._embedding_model)]
            self._bulk(actions)
            return
        copies = self._copies(latest.keys())
        indexed: list[Key] = []
        for key, doc in latest.items():
            found = copies.get(key, [])
            old_ids = list(dict.fromkeys([*self._remembered(key), *(doc_id for doc_id, _ in found)]))
            if any(version > fq.fact_version(doc) for _, version in found):
                continue  # an embedded copy is visible: a lexical-only write adds nothing
            actions += [{"delete": {"_id": doc_id}} for doc_id in old_ids]
            actions += [{"index": {}}, fq.fact_source(doc, self._embedding_model)]
            indexed.append(key)
        items = self._bulk(actions)
        new_ids = [result.get("_id") for op, result in items if op == "index"]
        if len(new_ids) != len(indexed) or not all(new_ids):
            raise DependencyError("facts index returned no document ids for a bulk write")
        with self._lock:
            for key, doc_id in zip(indexed, new_ids, strict=True):
                self._written[key] = [str(doc_id)]
                self._written.move_to_end(key)
            while len(self._written) > _REMEMBERED:
                self._written.popitem(last=False)

    def delete(self, tenant: str, fact_uuid: str) -> None:
        self._ensure_once()
        key = (tenant, fact_uuid)
        if not self._generated_ids:
            self._bulk([{"delete": {"_id": fq.fact_document_id(tenant, fact_uuid)}}])
            return
        found = [doc_id for doc_id, _ in self._copies([key]).get(key, [])]
        ids = list(dict.fromkeys([*self._remembered(key), *found]))
        self._bulk([{"delete": {"_id": doc_id}} for doc_id in ids])
        with self._lock:
            self._written.pop(key, None)

    def _remembered(self, key: Key) -> list[str]:
        with self._lock:
            return list(self._written.get(key, []))

    def _copies(self, keys: Iterable[Key]) -> dict[Key, list[tuple[str, int]]]:
        """Visible copies per (tenant, fact uuid): (generated _id, version)."""
        by_tenant: dict[str, list[str]] = {}
        for tenant, fact_uuid in keys:
            by_tenant.setdefault(tenant, []).append(fact_uuid)
        body = fq.fact_copies_body(by_tenant)
        response = self._call(lambda c: c.search(index=self.index_name, body=body), missing=self._lookup_missing())
        copies: dict[Key, list[tuple[str, int]]] = {}
        for hit in response.get("hits", {}).get("hits", []):
            src = hit.get("_source") or {}
            copies.setdefault((src.get("tenant", ""), src.get("fact_uuid", "")), []).append(
                (hit["_id"], int(src.get("version") or 0)))
        return copies

    # -- reads ----------------------------------------------------------------------------
    def search(self, namespace: Namespace, text: str, vector: list[float] | None, k: int) -> list[FactHit]:
        """The BM25 leg and (with `vector`) the k-NN leg, `k` hits each, one hit per fact; its BM25 as a share
        of the query's maximum, which the lexical leg's aggregation gives (`fact_queries.fact_lexical_body`)."""
        if k <= 0:
            return []
        bodies: list[dict[str, Any]] = []
        if vector is not None:
            self._check_query_vector(vector)
            scope = fq.fact_scope(namespace, embedding_model=self._embedding_model)
            bodies.append(fq.fact_knn_body(vector, k, scope))
        bodies.append(fq.fact_lexical_body(text, k, fq.fact_scope(namespace)))
        items = self._run_legs(bodies)
        legs = [self._hits(item) for item in items]
        semantic_hits, lexical_hits = (legs[0], legs[1]) if vector is not None else ([], legs[0])
        most = q.query_weight(items[-1], q.query_terms(text)) * FACT_WEIGHT_SCALE  # from the lexical leg's own aggregation
        found: dict[str, FactHit] = {}
        for leg, hits in (("lexical", lexical_hits), ("semantic", semantic_hits)):
            for hit in hits:
                src = hit.get("_source") or {}
                uuid = src.get("fact_uuid")
                if not uuid:
                    continue
                raw = float(hit.get("_score") or 0.0)
                value = (lexical_share(q.bm25_from_lucene(raw), most) if leg == "lexical"
                         else clamp01(q.cosine_from_knn_score(raw)))
                current = found.get(uuid) or FactHit(fact_uuid=uuid, entity_ids=list(src.get("entity_ids") or []),
                                                     names=list(src.get("names") or []))
                found[uuid] = current.model_copy(update={leg: max(getattr(current, leg), value)})
        return list(found.values())
