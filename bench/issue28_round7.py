"""Issue 28, round 7: the late-interaction reranker (MNEMO_RERANKER=minilm) weighted by word, and
read deeper (measured, not shipped).

Round 6's reranker scores a memory by the plain mean, over the question's content words, of each
word's best cosine with the memory's token vectors, over the best `RERANK_DEPTH` (20) fused hits.
Two levers on it:

- "weight <how>": the mean weighted by word. `idf`: the word piece's inverse document frequency in
  the question's own corpus (log((N + 1) / (df + 0.5)), to a power); `std` / `spread`: how much the
  word's best cosine varies over the reranked hits (a word every hit matches as well says nothing).
- "depth <n>": the best `n` fused hits reranked instead of 20 (the rest keep the fused order). Read
  deeper, the reranker reaches evidence the fused order leaves past 20; at ~15 ms a text on two cores
  it is only affordable with token states computed once, at enrichment, which nothing does yet.
- "stored <how>": what storing them would cost in quality: the memory's vectors in float16, or int8
  with one scale per row, and `content`: only its content-word rows (about half of them), as the
  query keeps.

Columns as in bench/issue28_round3.py (same `measure`); the table: bench/README.md "Issue 28, round 7".

    PYTHONPATH=shared:. .venv/bin/python bench/issue28_round7.py --locomo /work/shared/bench/locomo-dev.json \
        --longmemeval /work/shared/bench/longmemeval-s-dev.json.gz
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench.issue28_round3 import DEPTH, Ranker, _search, arguments, run  # noqa: E402
from bench.issue28_round6 import TOKENS  # noqa: E402
from mnemo.adapters.local.late_interaction import (  # noqa: E402
    LATE_INTERACTION_SHARE,
    StoredStates,
    _query_rows,
    content_words,
)
from mnemo.adapters.local.minilm_embedder import TokenStates  # noqa: E402
from mnemo.domain import scoring  # noqa: E402
from mnemo.domain.repeats import demote_repeats  # noqa: E402
from mnemo.services.memory.search import SPARE_HITS  # noqa: E402


def _piece_df(ctx: dict[str, Any]) -> tuple[Counter[str], int]:
    """Document frequency of each word piece over the question's corpus (its raw turns)."""
    if "piece_df" not in ctx:
        tokenizer = TOKENS.model._load().tokenizer
        df: Counter[str] = Counter()
        for text in ctx["raw"].values():
            df.update(set(tokenizer.encode(text).tokens))
        ctx["piece_df"] = df
    return ctx["piece_df"], len(ctx["raw"])


def _weights(how: str, power: float, ctx: dict[str, Any], words: list[str], best: np.ndarray) -> np.ndarray:
    """One weight per query word; `best` is (hits, words): each word's best cosine in each hit."""
    if how == "idf":
        df, n = _piece_df(ctx)
        w = np.array([math.log((n + 1) / (df.get(t, 0) + 0.5)) for t in words])
    elif how == "std":
        w = best.std(axis=0)
    elif how == "spread":
        w = best.max(axis=0) - best.min(axis=0)
    else:
        w = np.ones(len(words))
    w = np.maximum(w ** power, 1e-6)
    return w / w.sum()


def _stored(memory: TokenStates, storage: str) -> np.ndarray:
    """A memory's token vectors as they would come back from storage: all rows in float32 (as computed),
    float16, or int8 with one scale per row; `content`: only its content-word rows (as the query's)."""
    vectors = memory.vectors
    if "content" in storage:
        keep = content_words(memory.tokens)
        vectors = vectors[keep] if keep.any() else vectors
    if "float16" in storage:
        vectors = vectors.astype(np.float16).astype(np.float32)
    elif "int8" in storage:
        vectors = StoredStates.of("", TokenStates(memory.tokens, vectors)).vectors()  # as the local index keeps them
    return vectors


def late(depth: int = scoring.RERANK_DEPTH, share: float = LATE_INTERACTION_SHARE, how: str = "none",
         power: float = 1.0, storage: str = "float32") -> Ranker:
    """Round 4's ranking (fusion, repeat demotion over the hits read), then the best `depth` hits
    reordered by `scoring.reranked` on the (weighted) MaxSim relevance."""
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        window = max(depth, DEPTH) + SPARE_HITS
        hits = demote_repeats(scoring.fuse(_search(ctx, q, qv), top_k=window, now=now), ctx["texts"], window)
        raw = ctx.setdefault("raw", {t.dia_id: t.content for t in ctx["turns"]})
        head = hits[:depth]
        query, *memories = TOKENS.token_states([q, *(raw[h.memory_id] for h in head)])
        rows = _query_rows(query)
        keep = content_words(query.tokens)
        words = [t for t, k in zip(query.tokens, keep, strict=True) if k] or list(query.tokens)  # as `rows`
        stored = [_stored(m, storage) for m in memories]
        best = np.array([(rows @ v.T).max(axis=1) if len(v) else np.zeros(len(rows))
                         for v in stored]).reshape(len(memories), len(rows))
        relevance = np.clip(best @ _weights(how, power, ctx, words, best), 0.0, 1.0).tolist()
        return [h.memory_id for h in scoring.reranked(head, relevance, share) + hits[depth:]][:DEPTH]
    return rank


VARIANTS: dict[str, Ranker] = {
    "late interaction (the option)": late(),
    **{f"weight idf^{p}": late(how="idf", power=p) for p in (0.5, 1.0, 2.0)},
    "weight idf share 0.6": late(how="idf", share=0.6),
    **{f"weight {how}^{p}": late(how=how, power=p) for how in ("std", "spread") for p in (0.5, 1.0)},
    **{f"depth {n}": late(depth=n) for n in (30, 50, 100, 200)},
    **{f"depth {n} share 0.35": late(depth=n, share=0.35) for n in (100, 200)},
    **{f"depth {n} stored {how}": late(depth=n, storage=how)
       for n in (20, 100) for how in ("float16", "int8", "content float16", "content int8")},
}


def main() -> int:
    return run(VARIANTS, arguments(__doc__).parse_args())


if __name__ == "__main__":
    sys.exit(main())
