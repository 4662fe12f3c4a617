"""Issue 28, round 9: the late-interaction option (MNEMO_RERANKER=minilm) scoring the best fused
candidates from the index's stored token states before the store read (`Reranker.prescore`).

Round 7 measured depth 100 as the reranker reordering the best 100 hits after they were read;
production cannot read 100 memories a search within the latency budget (round 8: depth 50 read
after the store is 1.41x depth 20). `MemorySearch` now orders the best `PRESCORE_DEPTH` fused
candidates by the blend first, reads the first top_k + SPARE_HITS of that order (and the graph
neighbours within reach), then expands, demotes repeats and reranks what it read. The rows:

- "the option (depth 20 after the read)": round 7's `late()` (the shipped order before this round).
- "round 7 depth 100 (reads 100)": round 7's `late(depth=100)`, stored int8: what this mirrors.
- "prescored <n>": `MemorySearch`'s steps with a prescore depth of n (int8 states, as the local
  index keeps them), every turn indexed and visible (nothing hidden, so one hydration round).

    PYTHONPATH=shared:. .venv/bin/python bench/issue28_round9.py --locomo /work/shared/bench/locomo-dev.json \\
        --longmemeval /work/shared/bench/longmemeval-s-dev.json.gz
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench.issue28_round3 import DEPTH, Ranker, _search, arguments, run  # noqa: E402
from bench.issue28_round6 import TOKENS  # noqa: E402
from bench.issue28_round7 import _stored, late  # noqa: E402
from mnemo.adapters.local.late_interaction import LATE_INTERACTION_SHARE, _query_rows, max_sims  # noqa: E402
from mnemo.domain import query, scoring  # noqa: E402
from mnemo.domain.repeats import demote_repeats  # noqa: E402
from mnemo.services.memory.search import SPARE_HITS  # noqa: E402

Relevance = Callable[[np.ndarray, Sequence[np.ndarray]], list[float]]
States = Callable[[dict[str, Any], Sequence[str]], list[np.ndarray]]
Focus = Callable[[str, Any], tuple[date, date] | None]


def no_focus(question: str, now: Any) -> None:
    """The search before round 14 read the days a question names (`query.focus`)."""
    return None


def text_states(ctx: dict[str, Any], ids: Sequence[str]) -> list[np.ndarray]:
    """Each memory's token vectors, of its text, as the local index keeps them (int8)."""
    raw = ctx.setdefault("raw", {t.dia_id: t.content for t in ctx["turns"]})
    return [_stored(m, "int8") for m in TOKENS.token_states([raw[m] for m in ids])]


def prescored(depth: int, share: float = LATE_INTERACTION_SHARE, *, relevance: Relevance = max_sims,
              states: States = text_states, prescore: Callable[..., scoring.Scored] = scoring.prescored,
              rerank: Callable[..., list[scoring.Ranked]] = scoring.reranked, focus: Focus = query.focus,
              weights: scoring.Weights = scoring.DEFAULT_WEIGHTS, score: Callable[..., scoring.Scored] = scoring.score
              ) -> Ranker:
    """`MemorySearch.search`'s steps with a prescoring reranker (services/memory/search.py). The
    keywords are round 11's variations: how the relevance is computed, over which token vectors, and
    how the prescore and the rerank blend it; and round 14's: the days a question names (`focus`), the
    weights that lift what was captured in them, and how (`score`)."""
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        top_k = ctx["k"]  # what the REST benches ask: 10 on LoCoMo, 50 on LongMemEval (session recall@10)
        scored = score(_search(ctx, q, qv), now=now, weights=weights, focus=focus(q, now))
        head = scored.best_ids(depth)
        rows = _query_rows(TOKENS.token_states([q])[0])
        relevant = dict(zip(head, relevance(rows, states(ctx, head)), strict=True))
        order = prescore(scored, relevant, share, depth)
        reach = scoring.reach(scored)
        best = order.best_ids(top_k + SPARE_HITS)  # `_hydrate`: nothing hidden here, one round
        read = set(best) | set(scoring.within_reach(reach, scoring.kth(scored, best, top_k), exclude=set(best)))
        ranked = scoring.expand(scored, admitted=read & reach.keys(), among=read)
        window = top_k + SPARE_HITS
        ranked = demote_repeats(ranked, {r.memory_id: ctx["texts"][r.memory_id] for r in ranked[:window]}, window)
        chosen = [r for i, r in enumerate(ranked[:depth]) if i < scoring.RERANK_DEPTH or r.memory_id in relevant]
        missing = [r.memory_id for r in chosen if r.memory_id not in relevant]  # neighbours past the depth
        if missing:
            relevant |= dict(zip(missing, relevance(rows, states(ctx, missing)), strict=True))
        picked = {r.memory_id for r in chosen}
        rest = [r for r in ranked if r.memory_id not in picked]
        out = rerank(chosen, [relevant[r.memory_id] for r in chosen], share) + rest
        return [r.memory_id for r in out][:DEPTH]
    return rank


VARIANTS: dict[str, Ranker] = {
    "the option (depth 20 after the read)": late(),
    "round 7 depth 100 (reads 100)": late(depth=100, storage="int8"),
    **{f"prescored {n}": prescored(n) for n in (20, 50, 100, 150)},
}


def main() -> int:
    return run(VARIANTS, arguments(__doc__).parse_args())


if __name__ == "__main__":
    sys.exit(main())
