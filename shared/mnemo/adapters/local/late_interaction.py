"""`Reranker` from the local MiniLM's token states: late interaction (MaxSim, as ColBERT scores).

A memory's single vector is the mean of its tokens, so an aside in a message about something else
("…By the way, I just ran a charity bake sale") barely moves it. Here each content word of the query
looks for its best match among the memory's contextual token vectors, and the relevance is the mean
of those best cosines: the aside's tokens answer the query's words wherever they sit in the memory.

No other weights: the embedder's model (all-MiniLM-L6-v2, which a package ships) gives the token
states, so nothing downloads. A memory's states are computed once, when enrichment indexes it: the
local index keeps them beside its document as int8 with a scale per row (`StoredStates`, ranking as
float32 does: bench/README.md "round 7"), and they go when the document goes (erasure, a new text).
A search then runs the model over the query alone, and over a memory only if the index holds no
states for its current text (not enriched yet, or another index). It is the embedded default
(`MNEMO_RERANKER=auto` with the local embedder and index; `minilm` names it): bench/README.md "Issue 28,
round 6" to "round 10" have its quality and latency. States are looked up by memory id in the caller's tenant, only for the index's
candidates (found inside the caller's namespace) and the memories the caller sees, so no search's
cost tells anything about another namespace's memories. Before the store read, `prescore` scores the
best 100 candidates from their states, so the search reads the memories this order puts first
(bench/README.md "round 9").
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from mnemo.adapters.local.minilm_embedder import TokenStates
from mnemo.domain.models import Memory
from mnemo.domain.text import STOPWORDS

# The reranker's share of the order (scoring.reranked): order by (1 - share) · fused score + share ·
# relevance. MaxSim alone (share 1) misses what the fused score knows (recency, graph, the exact-word
# bonus; bench/issue28_round6.py). Re-swept when the lexical signal became a share of the query's own
# maximum (issue 54): LoCoMo dev gains as the share grows (0.525: 544.9 of 760 questions' recall@5, 0.6:
# 549.6, 0.7: 553.0, 0.8: 556.1) and LongMemEval dev (both files, 247) peaks at 0.625-0.7 (180, 184, 185,
# 183); 0.7 gains on every fold of both against the shipped 0.525 (bench/README.md "Issue 54, round 2").
LATE_INTERACTION_SHARE = 0.7
# Its blend is the score (scoring.reranked): a blend of 0.36 reads as the floor. On the agent-query
# set's dev third that keeps never-said queries empty as often as the fused floor did (0.827) and finds
# paraphrases 0.29 (0.04), and LoCoMo dev recall@5 with the floor 0.727 of 0.728 without it (the fused
# floor under this reranker's order: 0.695). Above it, linear to 1: a near-verbatim hit's blend (~0.95)
# reads ~0.94.
LATE_INTERACTION_CALIBRATION = ((0.0, 0.0), (0.36, 0.3), (1.0, 1.0))


class TokenEncoder(Protocol):
    def token_states(self, texts: Sequence[str]) -> list[TokenStates]: ...


@dataclass(frozen=True)
class StoredStates:
    """One text's token vectors as int8 with a float32 scale per row (a quarter of float32's bytes)."""

    text: str  # what they were computed from: a memory whose text has changed since is encoded afresh
    codes: npt.NDArray[np.int8]
    scales: npt.NDArray[np.float32]
    # The words read before the text (IndexDocument.replies_to: the message a reply answers), whose
    # rows come first and count as the text's do; a reply's words alone rarely name what they are about.
    lead: str = ""

    @classmethod
    def of(cls, text: str, states: TokenStates, lead: str = "") -> StoredStates:
        peak = np.abs(states.vectors).max(axis=1, initial=0.0).astype(np.float32)
        scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
        codes = np.rint(states.vectors / scales[:, None]).astype(np.int8)
        return cls(text, codes, scales, lead)

    def vectors(self) -> npt.NDArray[np.float32]:
        return self.codes.astype(np.float32) * self.scales[:, None]


class StateSource(Protocol):
    def token_states_of(self, tenant: str, memory_ids: Sequence[str]) -> Mapping[str, StoredStates]:
        """The states held for those of `memory_ids` the tenant's index has (the local index)."""


def content_words(tokens: Sequence[str]) -> np.ndarray:
    """Which tokens are content words: whole-word pieces that are not stopwords or punctuation."""
    return np.array([t.isalnum() and t not in STOPWORDS for t in tokens], dtype=bool)


def _query_rows(query: TokenStates) -> np.ndarray:
    """The query's content words (a question's scaffolding, "what did I", would otherwise find a match
    in every memory). All tokens if none is."""
    keep = content_words(query.tokens)
    return query.vectors[keep] if keep.any() else query.vectors


def max_sim(query_rows: np.ndarray, memory: np.ndarray) -> float:
    """The mean, over the query's rows, of the best cosine with any of the memory's token vectors, in [0, 1]."""
    return max_sims(query_rows, [memory])[0]


def max_sims(query_rows: np.ndarray, memories: Sequence[np.ndarray]) -> list[float]:
    """`max_sim` of each memory, from one matrix product over all their rows (a search scores up to
    PRESCORE_DEPTH memories: a loop of small products would cost more than the product)."""
    kept = [m for m in memories if len(m)]
    cosines = query_rows @ np.concatenate(kept).T if kept and len(query_rows) else None
    return _best_means(cosines, [len(m) for m in memories])


def stored_max_sims(query_rows: np.ndarray, memories: Sequence[StoredStates]) -> list[float]:
    """`max_sims` of stored states, their int8 codes converted in one go and each row's scale applied
    to its cosines after the product (the same numbers, without a float copy of each memory first)."""
    kept = [m for m in memories if len(m.codes)]
    cosines = None
    if kept and len(query_rows):
        codes = np.concatenate([m.codes for m in kept]).astype(np.float32)
        cosines = (query_rows @ codes.T) * np.concatenate([m.scales for m in kept])
    return _best_means(cosines, [len(m.codes) for m in memories])


def _best_means(cosines: np.ndarray | None, sizes: Sequence[int]) -> list[float]:
    """Per memory (its `sizes` columns of `cosines`, the empty ones having none), the mean over the
    query's rows of the best cosine, in [0, 1]."""
    scores = [0.0] * len(sizes)
    kept = [i for i, n in enumerate(sizes) if n]
    if cosines is None or not kept:
        return scores
    starts = np.cumsum([0] + [sizes[i] for i in kept[:-1]])
    for i, value in zip(kept, np.maximum.reduceat(cosines, starts, axis=1).mean(axis=0), strict=True):
        scores[i] = float(min(1.0, max(0.0, value)))
    return scores


class LateInteractionReranker:
    share = LATE_INTERACTION_SHARE
    calibration: tuple[tuple[float, float], ...] | None = LATE_INTERACTION_CALIBRATION

    def __init__(self, encoder: TokenEncoder, stored: StateSource | None = None) -> None:
        self._encoder = encoder
        self._stored = stored  # None: every memory is encoded at search time
        self._prescored = threading.local()  # .query: (query, rows) from this thread's prescore, for its rerank

    def prescore(self, query: str, tenant: str, memory_ids: Sequence[str]) -> Mapping[str, float]:
        """The relevance of the candidates whose states the index holds, whatever text they are of (the
        index's own text lags the store as these do); `rerank` checks them against the memories read."""
        found = self._stored.token_states_of(tenant, memory_ids) if self._stored is not None and memory_ids else {}
        if not found:
            return {}
        rows, _ = self._encoded(query, [])
        self._prescored.query = (query, rows)  # the search's rerank comes next, on this thread
        return dict(zip(found, stored_max_sims(rows, list(found.values())), strict=True))

    def rerank(self, query: str, memories: Sequence[Memory]) -> list[float]:
        if not memories:
            return []
        held = self._held(memories)
        rows, fresh = self._encoded(query, [m.normalized_text for m in memories if m.id not in held])
        missing = iter(fresh)
        return max_sims(rows, [held[m.id].vectors() if m.id in held else next(missing) for m in memories])

    def _encoded(self, query: str, texts: list[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        """The query's rows and the token vectors of `texts`, in one model call, or none: the query's
        states come from its embedding's pass, and its rows from this search's prescore (taken once)."""
        prescored = getattr(self._prescored, "query", None)
        self._prescored.query = None
        if prescored is not None and prescored[0] == query:
            return prescored[1], [s.vectors for s in self._encoder.token_states(texts)] if texts else []
        first, *rest = self._encoder.token_states([query, *texts])
        return _query_rows(first), [s.vectors for s in rest]

    def _held(self, memories: Sequence[Memory]) -> dict[str, StoredStates]:
        """The stored states that are of each memory's current text (the index may lag an edit). A
        search's memories are of one tenant: a lookup never leaves it."""
        if self._stored is None:
            return {}
        found = self._stored.token_states_of(memories[0].tenant, [m.id for m in memories])
        return {m.id: found[m.id] for m in memories if m.id in found and found[m.id].text == m.normalized_text}
