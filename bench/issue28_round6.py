"""Issue 28, round 6: the lexical leg's BM25 constants, lexical feedback, a question stripped of its
scaffolding for the semantic leg (measured, not shipped), and late interaction over MiniLM's token
states as a reranker (shipped as an option: `MNEMO_RERANKER=minilm`).

Four levers not tried in rounds 1 to 5, each over round 4's shipped ranking (fusion, graph expansion,
repeat demotion: `issue28_round4.production`):

- "bm25 k1 <k1> b <b>": BM25's saturation and length normalisation (`scoring.BM25_K1`, `BM25_B`;
  OpenSearch's defaults, 1.2 and 0.75, are what ships). A lower `b` penalises long turns less, which is
  where an aside sits.
- "feedback <m> / <n> ...": relevance feedback on the words (RM3-like, where round 3 moved the vector):
  the `n` words of the best `m` hits with the greatest tf-idf that the question lacks are appended to
  it; the search is run again, and either that ranking is taken ("append") or fused with the first by
  reciprocal rank ("rrf 0.5", round 3's `_rrf`).
- "question <how> <mix>": the query vector mixed with the vector of the question without its
  scaffolding ("How many hours have I spent playing games in total?" -> "hours have I spent playing
  games"; `tokens`: only the indexed words), `mix` its share.
- "late interaction top <n> share <s>": the production reranker (adapters/local/late_interaction.py)
  over the best `n` hits' raw texts, ordered by `scoring.reranked` with its share `s` (the shipped
  configuration: top 20 = `scoring.RERANK_DEPTH`, share 0.5); "... all tokens": the question's
  stopwords and punctuation kept in its rows.

Columns as in bench/issue28_round3.py (same `measure`); the table: bench/README.md "Issue 28, round 6".

    PYTHONPATH=shared:. .venv/bin/python bench/issue28_round6.py --locomo /work/shared/bench/locomo-dev.json \
        --longmemeval /work/shared/bench/longmemeval-s-dev.json.gz
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench.issue28_round3 import DEPTH, Ranker, _rrf, _unit, arguments, run  # noqa: E402
from bench.issue28_round4 import production, production_hits  # noqa: E402
from mnemo.adapters.local import late_interaction  # noqa: E402
from mnemo.adapters.local.minilm_embedder import LocalMiniLmEmbedder, TokenStates  # noqa: E402
from mnemo.domain import scoring  # noqa: E402
from mnemo.domain.text import tokenize  # noqa: E402

SCAFFOLD = re.compile(r"^\s*(?:how (?:many|much|long|often)|what|which|who|whom|where|when|why|did|do|does|is|are|"
                      r"was|were|can|could|would|should)\b", re.I)
TOTAL = re.compile(r"\b(?:the total number of|in total|total|so far)\b", re.I)


def bm25(k1: float, b: float) -> Ranker:
    """The shipped ranking with other BM25 constants (the local index reads them at query time)."""
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        shipped = scoring.BM25_K1, scoring.BM25_B
        scoring.BM25_K1, scoring.BM25_B = k1, b
        try:
            return production(ctx, q, qv, now)
        finally:
            scoring.BM25_K1, scoring.BM25_B = shipped
    return rank


def _expansion(ctx: dict[str, Any], q: str, first: list[str], best: int, words: int) -> list[str]:
    """The `words` words of the `best` first hits with the greatest tf-idf, not in the question."""
    if "df" not in ctx:
        ctx["tokens"] = {m: tokenize(t) for m, t in ctx["texts"].items()}
        ctx["df"] = Counter(w for ws in ctx["tokens"].values() for w in set(ws))
    df, total = ctx["df"], len(ctx["texts"])
    asked = set(tokenize(q))
    weight: Counter[str] = Counter()
    for mid in first[:best]:
        counts = Counter(ctx["tokens"][mid])
        length = sum(counts.values()) or 1
        for w, tf in counts.items():
            if w not in asked and df[w] > 1:  # a word of one turn only cannot bring another
                weight[w] += tf / length * math.log(total / df[w])
    return [w for w, _ in weight.most_common(words)]


def feedback(best: int, words: int, rrf: float | None) -> Ranker:
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        first = production(ctx, q, qv, now)
        second = production(ctx, f"{q} {' '.join(_expansion(ctx, q, first, best, words))}", qv, now)
        return second if rrf is None else _rrf(first, {m: i for i, m in enumerate(second)}, rrf)
    return rank


def stripped(q: str, how: str) -> str:
    if how == "tokens":
        return " ".join(tokenize(q))
    return TOTAL.sub("", SCAFFOLD.sub("", q)).strip(" ?") or q


def question(how: str, mix: float) -> Ranker:
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        (sv,) = ctx["embed"]([stripped(q, how)])
        return production(ctx, q, _unit(mix * _unit(sv) + (1 - mix) * _unit(qv)).tolist(), now)
    return rank


class CachedTokens:
    """Token states remembered by text, so variants that rerank the same hits run the model once (a
    benchmark's cache: production keeps nothing between searches)."""

    def __init__(self) -> None:
        self.model = LocalMiniLmEmbedder(REPO / "models" / "minilm")
        self.cache: dict[str, TokenStates] = {}

    def token_states(self, texts: Sequence[str]) -> list[TokenStates]:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        self.cache.update(zip(missing, self.model.token_states(missing), strict=True))
        return [self.cache[t] for t in texts]


TOKENS = CachedTokens()


def late(top: int, share: float, *, all_tokens: bool = False) -> Ranker:
    """The production reranker's relevance (its query rows and MaxSim) over the best `top` hits."""
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        hits = production_hits(ctx, q, qv, now)
        raw = ctx.setdefault("raw", {t.dia_id: t.content for t in ctx["turns"]})
        head = hits[:top]
        query, *memories = TOKENS.token_states([q, *(raw[h.memory_id] for h in head)])
        rows = query.vectors if all_tokens else late_interaction._query_rows(query)
        relevance = [late_interaction.max_sim(rows, m.vectors) for m in memories]
        return [h.memory_id for h in scoring.reranked(head, relevance, share) + hits[top:]][:DEPTH]
    return rank


VARIANTS: dict[str, Ranker] = {
    "shipped (round 4)": production,
    **{f"bm25 k1 {k1} b {b}": bm25(k1, b) for k1 in (0.9, 1.2, 1.6) for b in (0.3, 0.5, 0.75, 0.9)},
    **{f"feedback {m} / {n} append": feedback(m, n, None) for m in (3, 5) for n in (3, 5, 10)},
    **{f"feedback {m} / {n} rrf 0.5": feedback(m, n, 0.5) for m in (3, 5) for n in (3, 5, 10)},
    **{f"question {how} {mix}": question(how, mix) for how in ("scaffold", "tokens") for mix in (0.3, 0.5, 1.0)},
    **{f"late interaction top {n} share {s}": late(n, s) for n in (10, 20, 30) for s in (0.5,)},
    **{f"late interaction top 20 share {s}": late(20, s) for s in (0.2, 0.33, 0.6, 0.67, 1.0)},
    "late interaction top 20 share 0.5 all tokens": late(20, 0.5, all_tokens=True),
}


def main() -> int:
    return run(VARIANTS, arguments(__doc__).parse_args())


if __name__ == "__main__":
    sys.exit(main())
