"""Search over facts: hybrid (embedding, BM25 over sentence, canonical form and entity names, graph
proximity to the entities the query names), hydrated from the store, which alone decides what is
active, and scored in [0, 1] (docs/facts.md).
"""

from __future__ import annotations

import logging
from datetime import datetime

from pydantic import BaseModel, Field, field_validator

from mnemo.domain.commands import as_utc
from mnemo.domain.fact_commands import FactScope
from mnemo.domain.graph import Fact, FactStatus, canonical_key, graph_key
from mnemo.domain.models import Principal
from mnemo.domain.namespace import Namespace
from mnemo.domain.scoring import clamp01
from mnemo.domain.timeline import valid_at_moment
from mnemo.errors import MnemoError
from mnemo.ports import Embedder, FactHit, FactIndex, FactStore
from mnemo.services.tenancy.metering import Meter
from mnemo.services.tenancy.permissions import Operation, authorize

logger = logging.getLogger(__name__)

# Fusion weights (sum 1, so the score stays in [0, 1]) of the signals in [0, 1]: the cosine, BM25 as a share of
# the query's own maximum (`FactHit.lexical`, `ports.FACT_WEIGHT_SCALE`), and graph proximity: 1 for a fact
# touching an entity the query names, 0.5 for one touching that entity's direct neighbour. Re-swept with the share
# (issue 54, bench/README.md "Issue 54: the facts floor"): moving weight to the cosine cut no more unrelated facts
# than a floor does and lost ranking (fact_update_bench current value 0.950 -> 0.900), so they stay.
WEIGHTS = {"semantic": 0.5, "lexical": 0.3, "graph": 0.2}
NAMED_ENTITIES = 5
NEIGHBOUR_PROXIMITY = 0.5
# A fact scoring below this is unrelated to the query: a search that gives no threshold drops it rather
# than filling its list to `limit`. Measured on the agent-query set's dev third (bench/README.md "Issue 54:
# the facts floor", bench/agent_queries.py: MiniLM, heuristic extractor), lexical signal as a share: never-said
# queries left with no fact 1.000 alone, answerable queries keeping an answering fact 0.253, unrelated among the
# facts returned 0.541 (the fixed half-score at 0.3: 0.990, 0.249, 0.600). The highest floor that keeps seed 001's
# own "what did I decide about ..." answers in a two-fact store (0.287 and 0.275; 0.3 drops them).
FACT_RELEVANCE_FLOOR = 0.25


class FactSearchQuery(FactScope):
    query: str = Field(min_length=1, max_length=2000)
    limit: int = Field(default=10, ge=1, le=100)
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)  # a score below it is not returned; None: the floor
    as_of: datetime | None = None  # event time: the facts true then, including ones invalidated since

    @field_validator("as_of")
    @classmethod
    def _as_of(cls, value: datetime | None) -> datetime | None:
        return as_utc(value) if value else None


class ScoredFact(BaseModel):
    fact: Fact
    score: float = Field(ge=0.0, le=1.0)


class FactSearchService:
    def __init__(self, facts: FactStore, index: FactIndex, embedder: Embedder | None = None,
                 *, meter: Meter | None = None) -> None:
        self._facts = facts
        self._meter = meter or Meter()
        self._index = index
        self._embedder = embedder

    def search(self, principal: Principal, query: FactSearchQuery) -> list[ScoredFact]:
        authorize(principal, Operation.READ_FACTS)
        self._meter.charge(principal, Operation.READ_FACTS)
        ns = Namespace(tenant=principal.tenant, user_id=principal.user_for(query.user_id),
                       group_id=query.group_id)
        statuses = (FactStatus.ACTIVE,) if query.as_of is None else (FactStatus.ACTIVE, FactStatus.INVALIDATED)
        hits = {h.fact_uuid: h for h in self._index.search(ns, query.query, self._vector(query.query), max(50, 5 * query.limit))}
        proximity = self._proximity(ns, query.query, list(hits.values()), statuses)
        facts = self._facts.get_many(ns.tenant, list(dict.fromkeys([*hits, *proximity])))
        scored = []
        for fact in facts:
            if graph_key(fact.namespace) != graph_key(ns) or not _wanted(fact, query.as_of):
                continue
            hit = hits.get(fact.uuid) or FactHit(fact_uuid=fact.uuid)
            score = (WEIGHTS["semantic"] * hit.semantic + WEIGHTS["lexical"] * hit.lexical
                     + WEIGHTS["graph"] * proximity.get(fact.uuid, 0.0))
            scored.append(ScoredFact(fact=fact, score=round(clamp01(score), 4)))
        floor = FACT_RELEVANCE_FLOOR if query.threshold is None else query.threshold
        passing = [s for s in scored if s.score >= floor]  # the score shown: what passes is what a reader sees
        passing.sort(key=lambda s: (s.score, s.fact.valid_at or s.fact.created_at), reverse=True)
        return passing[: query.limit]

    def _vector(self, text: str) -> list[float] | None:
        if self._embedder is None:
            return None
        try:
            return self._embedder.embed([text])[0]
        except MnemoError as exc:  # degrade to words and graph rather than fail the search
            logger.warning("fact search without embeddings: %s", exc.message)
            return None

    def _proximity(self, ns: Namespace, text: str, hits: list[FactHit], statuses: tuple[FactStatus, ...]) -> dict[str, float]:
        """Entities the query names (by a candidate's entity name appearing in it as words), and the
        facts around them: 1 for a fact at a named entity, 0.5 for one at a direct neighbour."""
        said = f" {canonical_key(text)} "
        named: dict[str, None] = {}
        for hit in hits:
            for entity_id, name in zip(hit.entity_ids, hit.names, strict=False):
                if f" {canonical_key(name)} " in said:
                    named[entity_id] = None
        proximity: dict[str, float] = {}
        neighbours: dict[str, None] = {}
        for entity_id in list(named)[:NAMED_ENTITIES]:
            for edge in self._facts.adjacency(ns, entity_id, statuses=statuses, limit=50):
                proximity[edge.fact_uuid] = 1.0
                neighbours[edge.other_id] = None
        for hit in hits:
            if hit.fact_uuid not in proximity and any(e in neighbours for e in hit.entity_ids):
                proximity[hit.fact_uuid] = NEIGHBOUR_PROXIMITY
        return proximity


def _wanted(fact: Fact, as_of: datetime | None) -> bool:
    if as_of is None:
        return fact.status == FactStatus.ACTIVE
    return valid_at_moment(fact, as_of)
