"""`Reranker` from the local MiniLM's token states: late interaction (MaxSim, as ColBERT scores).

A memory's single vector is the mean of its tokens, so an aside in a message about something else
("…By the way, I just ran a charity bake sale") barely moves it. Here each content word of the query
looks for its best match among the memory's contextual token vectors, and the relevance is the mean
of those best cosines: the aside's tokens answer the query's words wherever they sit in the memory.

No other weights: the embedder's model (all-MiniLM-L6-v2, which a package ships) gives the token
states, so nothing downloads. It runs the model over the query and every reranked memory, about
15 ms a memory on two cores (0.3 s a search), so it is a configuration (`MNEMO_RERANKER=minilm`),
not the default: bench/README.md "Issue 28, round 6" and "round 7" have its quality and latency. Nothing is cached
between searches, so no search's cost tells anything about another namespace's memories.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from mnemo.adapters.local.minilm_embedder import TokenStates
from mnemo.domain.text import STOPWORDS

# The reranker's share of the order (scoring.reranked): order by (1 - share) · fused score + share ·
# relevance. Half and half: MaxSim alone (share 1) loses on both dev files, it misses what the fused
# score knows (recency, graph, the exact-word bonus); the ablation is bench/issue28_round6.py.
LATE_INTERACTION_SHARE = 0.5


class TokenEncoder(Protocol):
    def token_states(self, texts: Sequence[str]) -> list[TokenStates]: ...


def content_words(tokens: Sequence[str]) -> np.ndarray:
    """Which tokens are content words: whole-word pieces that are not stopwords or punctuation."""
    return np.array([t.isalnum() and t not in STOPWORDS for t in tokens], dtype=bool)


def _query_rows(query: TokenStates) -> np.ndarray:
    """The query's content words (a question's scaffolding, "what did I", would otherwise find a match
    in every memory). All tokens if none is."""
    keep = content_words(query.tokens)
    return query.vectors[keep] if keep.any() else query.vectors


def max_sim(query_rows: np.ndarray, memory: TokenStates) -> float:
    """The mean, over the query's rows, of the best cosine with any of the memory's tokens, in [0, 1]."""
    if len(query_rows) == 0 or len(memory.vectors) == 0:
        return 0.0
    best = (query_rows @ memory.vectors.T).max(axis=1)
    return float(min(1.0, max(0.0, best.mean())))


class LateInteractionReranker:
    share = LATE_INTERACTION_SHARE

    def __init__(self, encoder: TokenEncoder) -> None:
        self._encoder = encoder

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        states = self._encoder.token_states([query, *texts])
        rows = _query_rows(states[0])
        return [max_sim(rows, memory) for memory in states[1:]]
