"""Search over a tenant's memories: the index finds candidates, ranking happens here (fusion, graph
expansion, threshold, an optional reranker), and the store decides what is visible (the index is
derived and may lag it). `MemoryService.search` checks the permission, meters, scopes and delegates."""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Container, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime
from typing import NamedTuple

from mnemo.domain import query as query_input
from mnemo.domain import scoring
from mnemo.domain.commands import RetrieveCommand
from mnemo.domain.models import EnrichmentState, Memory, Principal, ScoredMemory
from mnemo.domain.namespace import NamespaceFilter
from mnemo.domain.repeats import demote_repeats
from mnemo.domain.scoring import RECIPES
from mnemo.domain.semantic_thresholds import semantic_threshold
from mnemo.errors import DependencyError
from mnemo.ports import Embedder, MemoryStore, Reranker, SearchIndex, SearchQuery

logger = logging.getLogger(__name__)

# Per enrichment state (pending, failed), how many of a tenant's newest unindexed memories a search reads.
UNINDEXED_READ = 50
# A search reads its top_k best hits and this many more, deeper by one per hit the store no longer
# shows, in at most this many rounds (the index lags the store by seconds: hidden hits are rare).
SPARE_HITS = 2
_HYDRATION_ROUNDS = 3

# The store's read of the unindexed memories runs beside the query's embedding (a model pass or a Bedrock
# call) instead of after it: neither needs the other. One pool per process, started by the first search;
# a thread per concurrent search (the local server's), up to 8; a ninth waits for a free one.
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _beside(read: Callable[[], list[Memory]]) -> Future[list[Memory]]:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="search-store-read")
    return _pool.submit(read)


def _meets(threshold: float | None, score: float, memory: Memory) -> bool:
    return scoring.meets(threshold, score, enriched=memory.enrichment.state is EnrichmentState.ENRICHED)


def _shown_in_order(results: list[ScoredMemory]) -> list[ScoredMemory]:
    """`results` with the scores `scoring.shown_descending` shows in their order; a capped hit keeps its
    calibrated score as the `fused` component."""
    shown = scoring.shown_descending([r.score for r in results])
    return [r if score == r.score else ScoredMemory(memory=r.memory, score=score, components={**r.components, "fused": r.score})
            for r, score in zip(results, shown, strict=True)]


@functools.cache
def _with_threshold(weights: scoring.Weights, model_id: str, dimension: int) -> scoring.Weights:
    """`weights` with the semantic threshold measured for this embedder (None where unmeasured: no lift)."""
    return replace(weights, semantic_evidence=semantic_threshold(model_id, dimension).value)


class SearchHits(NamedTuple):
    """A search's answer: the hits that pass its threshold, and the best of those it read that do not
    (at most WEAKER, best first), so a caller can say what lies below instead of answering nothing."""

    results: list[ScoredMemory]
    weaker: list[ScoredMemory]


WEAKER = 3


class MemorySearch:
    """The search half of `MemoryService` (services/memory/memories.py): it owns the collaborators and builds
    one of these per search (a plain object over the same collaborators, lazy adapters: nothing is built twice)."""

    def __init__(self, store: MemoryStore, index: SearchIndex, *,
                 embedder: Embedder | None, reranker: Reranker | None,
                 clock: Callable[[], datetime]) -> None:
        self._store = store
        self._index = index
        self._embedder = embedder
        self._reranker = reranker  # None: no reranking stage (the default on AWS)
        self._clock = clock

    def search(self, principal: Principal, command: RetrieveCommand, scope: NamespaceFilter, *,
               context: str | None = None) -> SearchHits:
        """The ranked hits of `command` inside `scope` (the caller checked the permission and metered)."""
        assert command.query is not None
        recipe = RECIPES[command.mode]
        rerank = recipe.rerank and self._reranker is not None
        # -- read-your-writes: what the index does not hold yet, found lexically from the store ----
        # Read while the query is embedded; the embedding stays on this thread (the local model keeps
        # its token states here for the reranker).
        unindexed = _beside(lambda: self._unindexed(scope, command)) if self._embedder is not None else None
        probe = self._probe(scope, command, context, keep_states=rerank)
        recent = unindexed.result() if unindexed is not None else self._unindexed(scope, command)
        candidates = query_input.merge(self._index.search(probe), query_input.unindexed_candidates(recent, probe.text))
        now = command.now or self._clock()
        # Scored with the semantic threshold of the embedder that embedded the query (a property of the model).
        weights = recipe.weights if self._embedder is None else _with_threshold(
            recipe.weights, self._embedder.model_id, self._embedder.dimension)
        scored = scoring.score(candidates, now=now, weights=weights, focus=query_input.focus(command.query, now))
        reach = scoring.reach(scored, weights) if recipe.expand_graph else {}
        # A reranker that holds what it scores orders the best PRESCORE_DEPTH before the store read, and
        # the first top_k of that order are read; any other reads the best RERANK_DEPTH visible hits.
        held = self._prescore(command.query, scope.tenant, scored) if rerank else {}
        order = scoring.prescored(scored, held, self._reranker.share) if held else scored  # type: ignore[union-attr]
        wide = command.model_copy(update={"top_k": max(command.top_k, scoring.RERANK_DEPTH)}) if rerank and not held else command
        memories, visible = self._hydrate(principal, wide, scope, order, reach, recent)
        # Only what the caller may see becomes `Ranked` (the rest of the candidates stay columns).
        if recipe.expand_graph:
            ranked = scoring.expand(scored, admitted=visible & reach.keys(), among=visible, weights=weights)
        else:
            ranked = scored.among(visible)
        if recipe.repeats:  # over the hits a search reads; the threshold then applies to the lowered score
            window = wide.top_k + SPARE_HITS
            ranked = demote_repeats(ranked, {r.memory_id: memories[r.memory_id].normalized_text for r in ranked[:window]},
                                    window)
        hits = [ScoredMemory(memory=memories[r.memory_id], score=r.score, components=r.components)
                for r in ranked if r.memory_id in visible]
        folded = rerank and self._reranker.calibration is not None  # type: ignore[union-attr]
        if folded:  # the reranker's blend is the score: it decides what passes, over everything read
            hits = self._reranked(command.query, hits, held)
        results: list[ScoredMemory] = []
        below: list[ScoredMemory] = []  # under the threshold, among what was read anyway (no further store call)
        for hit in hits:
            (results if _meets(command.threshold, hit.score, hit.memory) else below).append(hit)
        weaker = below[:WEAKER] if len(results) < command.top_k else []
        if rerank and not folded:  # at most PRESCORE_DEPTH, whatever top_k: a bounded cost, the order the benches measure
            results = self._reranked(command.query, results, held)
        results = results[: command.top_k]
        if command.order == "created_at":  # the same hits, newest first ("what did I say last about ...")
            results = sorted(results, key=lambda r: (r.memory.created_at, r.memory.id), reverse=True)
        return SearchHits(results, weaker)

    def _prescore(self, query: str, tenant: str, scored: scoring.Scored) -> Mapping[str, float]:
        """The reranker's relevance of the best PRESCORE_DEPTH candidates it holds (found by the index
        query, inside the caller's namespace), before anything is read; empty if it holds none."""
        try:
            return self._reranker.prescore(query, tenant, scored.best_ids(scoring.PRESCORE_DEPTH))  # type: ignore[union-attr]
        except DependencyError as exc:
            logger.warning("prescore failed; the fused order stands", extra={"reason": str(exc)})
            return {}

    def _reranked(self, query: str, results: list[ScoredMemory], held: Container[str]) -> list[ScoredMemory]:
        """The reranker's order of the best RERANK_DEPTH `results`, and of those it `held` down to
        PRESCORE_DEPTH (so a backlog of unindexed memories, which it would encode, never costs more than
        RERANK_DEPTH texts); the others keep their place after them. Only memories the caller sees reach
        it. It refines an answer the fused ranking already gives: if it fails, that answer stands (logged).
        With its calibration it also scores them, a lone hit too, and the answer is in order of score."""
        head = [r for i, r in enumerate(results[: scoring.PRESCORE_DEPTH])
                if i < scoring.RERANK_DEPTH or r.memory.id in held]
        if len(head) < (2 if self._reranker.calibration is None else 1):  # type: ignore[union-attr]
            return results
        chosen = {r.memory.id for r in head}
        answer = self._reorder(query, head) + [r for r in results if r.memory.id not in chosen]
        if self._reranker.calibration is None:  # type: ignore[union-attr]
            return _shown_in_order(answer)
        return sorted(answer, key=lambda r: -r.score)  # stable: the reranker's order, then the fused one past it

    def _reorder(self, query: str, results: list[ScoredMemory]) -> list[ScoredMemory]:
        """`results` by `scoring.reranked` on the reranker's relevance (scored by it where the reranker
        brings its calibration; otherwise the score stays the fused one)."""
        try:
            relevance = self._reranker.rerank(query, [r.memory for r in results])  # type: ignore[union-attr]
        except DependencyError as exc:
            logger.warning("rerank failed; the fused order stands", extra={"reason": str(exc)})
            return results
        by_id = {r.memory.id: r.memory for r in results}
        order = scoring.reranked([scoring.Ranked(r.memory.id, r.score, r.components) for r in results], relevance,
                                 self._reranker.share, calibration=self._reranker.calibration)  # type: ignore[union-attr]
        return [ScoredMemory(memory=by_id[o.memory_id], score=o.score, components=o.components) for o in order]

    def _hydrate(self, principal: Principal, command: RetrieveCommand, scope: NamespaceFilter, scored: scoring.Scored,
                 reach: dict[str, float], read: list[Memory]) -> tuple[dict[str, Memory], set[str]]:
        """Reads the best hits and only the graph neighbours whose reach could still place them in the
        first top_k; `read`: memories already in hand (the unindexed ones). The index may lag the store
        (a hit archived, moved or erased since): the first read guesses every hit shown, each hidden hit
        makes it read one deeper, and neighbours are then checked against the bar the shown hits set.
        One BatchGetItem unless hits were hidden. Returns the memories read and the ids the caller sees."""
        def visible(memory: Memory) -> bool:
            return scope.covers(memory.namespace) and memory.status in command.statuses and memory.author in command.authors

        def counts(mid: str) -> bool:  # shown, and kept by the threshold
            memory = memories.get(mid)
            return memory is not None and visible(memory) and _meets(command.threshold, scored.score_of(mid), memory)

        memories = {m.id: m for m in read}
        asked = set(memories)
        best: list[str] = []
        depth = command.top_k + SPARE_HITS
        for _ in range(_HYDRATION_ROUNDS):
            best = scored.best_ids(depth)
            guess = [mid for mid in best if mid not in asked or counts(mid)]
            wanted = [mid for mid in best if mid not in asked]
            wanted += scoring.within_reach(reach, scoring.kth(scored, guess, command.top_k), exclude=asked | set(best))
            asked.update(wanted)
            if wanted:
                memories.update((m.id, m) for m in self._store.get_many(principal.tenant, wanted))
            hidden = sum(1 for mid in best if mid not in memories or not visible(memories[mid]))
            if not hidden or depth >= len(scored.order) or sum(map(counts, best)) >= command.top_k:
                break
            depth += hidden
        bar = scoring.kth(scored, [mid for mid in best if counts(mid)], command.top_k)
        missed = scoring.within_reach(reach, bar, exclude=asked)
        if missed:
            memories.update((m.id, m) for m in self._store.get_many(principal.tenant, missed))
        return memories, {mid for mid, memory in memories.items() if visible(memory)}

    def _probe(self, scope: NamespaceFilter, command: RetrieveCommand, context: str | None, *,
               keep_states: bool) -> SearchQuery:
        assert command.query is not None
        vector = None
        if self._embedder is not None:
            texts = [command.query, context] if context and context.strip() else [command.query]
            vectors = self._embedder.embed(texts, keep_states=keep_states)  # the reranker takes the query's states
            vector = query_input.blend(vectors[0], vectors[1]) if len(vectors) == 2 else vectors[0]
        return SearchQuery(scope=scope, text=query_input.lexical_text(command.query, context), vector=vector,
                           authors=command.authors, statuses=command.statuses, top_k=command.top_k)

    def _unindexed(self, scope: NamespaceFilter, command: RetrieveCommand) -> list[Memory]:
        """Every accepted memory is findable from tier 1 on: the newest memories whose enrichment is
        unfinished (pending, or failed for good) are read from the store and matched lexically; their
        semantic and graph signals join once enrichment indexes them. Costs two Queries and one
        BatchGetItem per search, bounded by UNINDEXED_READ whatever the backlog (docs/scoring.md)."""
        return [
            m for m in self._store.unindexed(scope.tenant, UNINDEXED_READ)
            if scope.covers(m.namespace) and m.status in command.statuses and m.author in command.authors
        ]
