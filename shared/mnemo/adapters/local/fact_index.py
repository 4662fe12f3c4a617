"""`FactIndex` in process: BM25 over each fact's sentence, canonical form and entity names, as a share of
the query's own maximum (`ports.FACT_WEIGHT_FIELD`, `FACT_WEIGHT_SCALE`; the partition's statistics), exact
cosine over its embedding, partitioned by (tenant, user, group) so a query only ever reads its own graph.

Fact sets are small next to memories (a sentence each), so a partition is scored in full with plain
Python. The OpenSearch twin is `opensearch_facts.OpenSearchFactIndex` (MNEMO_INDEX=opensearch).
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Sequence

from mnemo.domain.namespace import Namespace
from mnemo.domain.scoring import bm25_idf, bm25_term, clamp01, lexical_share, query_weight
from mnemo.domain.text import tokenize
from mnemo.ports import FACT_LEXICAL_FIELDS, FACT_WEIGHT_FIELD, FACT_WEIGHT_SCALE, FactDocument, FactHit

Partition = tuple[str, str, str]
_FIELDS = ("sentence", "names", "canonical")  # the order of each row's term counts


class LocalFactIndex:
    def __init__(self) -> None:
        self._docs: dict[Partition, dict[str, tuple[FactDocument, Counter[str], Counter[str], Counter[str]]]] = {}
        self._where: dict[tuple[str, str], Partition] = {}  # (tenant, uuid) -> its partition
        self._lock = threading.Lock()

    def ensure_index(self) -> bool:
        return False  # nothing to create: the index lives in this process

    def upsert(self, documents: Sequence[FactDocument]) -> None:
        with self._lock:
            for doc in documents:
                if doc.vector is None:  # a lexical-only write keeps the vector stored before
                    part = self._where.get((doc.tenant, doc.fact_uuid))
                    before = self._docs.get(part, {}).get(doc.fact_uuid) if part else None
                    if before is not None and before[0].vector is not None:
                        doc = doc.model_copy(update={"vector": before[0].vector})
                self._remove(doc.tenant, doc.fact_uuid)
                part = (doc.tenant, doc.user_id, doc.group_id)
                terms = (Counter(tokenize(doc.sentence)), Counter(tokenize(" ".join(doc.names))),
                         Counter(tokenize(doc.canonical)))
                self._docs.setdefault(part, {})[doc.fact_uuid] = (doc, *terms)
                self._where[(doc.tenant, doc.fact_uuid)] = part

    def delete(self, tenant: str, fact_uuid: str) -> None:
        with self._lock:
            self._remove(tenant, fact_uuid)

    def _remove(self, tenant: str, fact_uuid: str) -> None:
        part = self._where.pop((tenant, fact_uuid), None)
        if part is not None:
            self._docs.get(part, {}).pop(fact_uuid, None)

    def search(self, namespace: Namespace, text: str, vector: list[float] | None, k: int) -> list[FactHit]:
        with self._lock:
            rows = list(self._docs.get((namespace.tenant, namespace.user_id, namespace.group_id), {}).values())
        if not rows:
            return []
        query = set(tokenize(text))
        counts = [(doc, dict(zip(_FIELDS, (sentence, names, canonical), strict=True)))
                  for doc, sentence, names, canonical in rows]
        fields = {name: _Stats(query, [terms[name] for _, terms in counts]) for name in _FIELDS}
        bm25 = {doc.fact_uuid: sum((FACT_LEXICAL_FIELDS[name] * fields[name].score(terms[name]) for name in _FIELDS), 0.0)
                for doc, terms in counts}
        most = fields[FACT_WEIGHT_FIELD].query_weight() * FACT_WEIGHT_SCALE
        lexical = {u: lexical_share(v, most) for u, v in bm25.items()}
        semantic = {row[0].fact_uuid: clamp01(_cosine(vector, row[0].vector)) for row in rows} if vector else {}
        top = [u for u, s in sorted(bm25.items(), key=lambda x: -x[1])[:k] if s > 0]  # the leg's order: BM25, uncapped
        top += sorted(semantic, key=lambda u: -semantic[u])[:k]
        docs = {row[0].fact_uuid: row[0] for row in rows}
        return [FactHit(fact_uuid=u, entity_ids=docs[u].entity_ids, names=docs[u].names, lexical=lexical[u],
                        semantic=semantic.get(u, 0.0)) for u in dict.fromkeys(top)]


class _Stats:
    """One field's BM25 statistics over a partition, for the query's terms only."""

    def __init__(self, query: set[str], counts: list[Counter[str]]) -> None:
        self.avg = sum(sum(c.values()) for c in counts) / max(len(counts), 1)
        self.idf = {t: bm25_idf(len(counts), sum(1 for c in counts if t in c)) for t in query}

    def query_weight(self) -> float:
        """The most the query can score in this field (`scoring.query_weight`): its terms' idf summed."""
        return query_weight(self.idf.values())

    def score(self, terms: Counter[str]) -> float:
        length = sum(terms.values())
        return sum(bm25_term(terms[t], idf, length, self.avg) for t, idf in self.idf.items() if terms.get(t))


def _cosine(a: list[float], b: list[float] | None) -> float:
    if not b or len(a) != len(b):
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
