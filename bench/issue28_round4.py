"""Issue 28, round 4: the repeat demotion (mnemo/domain/repeats.py) and its alternatives, on both dev
files in one run.

A hit that restates a better-placed one loses `λ · (s − τ) / (1 − τ)` of its score (clamped to [0, 1])
where `s` is its greatest similarity to a better-placed hit above the bar `τ`, over the first `window`
hits; the list is sorted again and nothing is dropped. Varied: the similarity (Jaccard of the
tokenised texts, or the cosine of the turns' vectors), `τ`, `λ`, the window, and the guard (a pair that
`duplicates.difference` tells apart is never a repeat). "shipped" runs the production function;
"jaccard .4 λ2 guard w+2" is the same rule written out here (λ 2: all of the score is lost at
Jaccard 0.7, `REPEAT_ALL`), so the two rows must agree. Columns as
in bench/issue28_round3.py (same `measure`); the table: bench/README.md "Issue 28, round 4".

    PYTHONPATH=shared:. .venv/bin/python bench/issue28_round4.py --locomo /work/shared/bench/locomo-dev.json \
        --longmemeval /work/shared/bench/longmemeval-s-dev.json.gz [--only "shipped,no demotion (before)"]
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench.issue28_round3 import DEPTH, Ranker, _search, arguments, run, shipped  # noqa: E402
from mnemo.domain import scoring  # noqa: E402
from mnemo.domain.duplicates import difference  # noqa: E402
from mnemo.domain.repeats import demote_repeats, overlap  # noqa: E402
from mnemo.domain.text import tokenize  # noqa: E402
from mnemo.services.memory.search import SPARE_HITS  # noqa: E402

Similarity = Callable[[dict[str, Any], str, str], float]


def jaccard(ctx: dict[str, Any], a: str, b: str) -> float:
    words = ctx.setdefault("words", {})
    for mid in (a, b):
        if mid not in words:
            words[mid] = frozenset(tokenize(ctx["texts"][mid]))
    return overlap(words[a], words[b])


def cosine(ctx: dict[str, Any], a: str, b: str) -> float:
    va, vb = ctx["vecs"][a], ctx["vecs"][b]
    return float(va @ vb / ((np.linalg.norm(va) * np.linalg.norm(vb)) or 1.0))


def production_hits(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[scoring.Ranked]:
    """What `MemorySearch` ranks in mode=full, over a search's `top_k` + 2 hits (here top_k = DEPTH)."""
    window = DEPTH + SPARE_HITS
    return demote_repeats(scoring.fuse(_search(ctx, q, qv), top_k=window, now=now), ctx["texts"], window)


def production(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
    return [h.memory_id for h in production_hits(ctx, q, qv, now)][:DEPTH]


def demotion(similarity: Similarity, tau: float, strength: float, *, guard: bool = True, window: int = DEPTH + SPARE_HITS,
             greedy: bool = False) -> Ranker:
    """`greedy`: the hits are placed one at a time, best lowered score first, and a hit is compared with
    those placed before it (a hit that fell below it no longer counts); else with those above it in
    the fused order."""
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        hits = scoring.fuse(_search(ctx, q, qv), top_k=max(window, DEPTH), now=now)
        head = hits[:window]
        texts = ctx["texts"]

        @functools.cache
        def repeats(i: int, j: int) -> float:  # how far hit i repeats hit j (0: not a repeat)
            x = similarity(ctx, head[j].memory_id, head[i].memory_id)
            if x <= tau or (guard and difference(texts[head[j].memory_id], texts[head[i].memory_id]) is not None):
                return 0.0
            return x

        def lowered(i: int, above: list[int]) -> float:
            s = max((repeats(i, j) for j in above), default=0.0)
            return head[i].score * (1 - (scoring.clamp01(strength * (s - tau) / (1 - tau)) if s > tau else 0.0))

        if greedy:
            placed: list[int] = []
            scores: dict[int, float] = {}
            left = list(range(len(head)))
            while left:
                best = max(left, key=lambda i: (lowered(i, placed), -i))
                scores[best] = lowered(best, placed)
                placed.append(best)
                left.remove(best)
        else:
            scores = {i: lowered(i, list(range(i))) for i in range(len(head))}
        order = [(scores[i], i) for i in range(len(head))] + [(h.score, window + i) for i, h in enumerate(hits[window:])]
        every = head + hits[window:]
        return [every[i].memory_id for _, i in sorted(order, key=lambda x: (-x[0], x[1]))][:DEPTH]
    return rank


VARIANTS: dict[str, Ranker] = {
    "shipped": production,
    "no demotion (before)": shipped,
    "jaccard .4 λ2 guard w+2": demotion(jaccard, 0.4, 2.0),
    "jaccard .4 λ2 guard greedy": demotion(jaccard, 0.4, 2.0, greedy=True),
    "jaccard .4 λ2 guard window 7": demotion(jaccard, 0.4, 2.0, window=7),
    "jaccard .4 λ2 guard window 12": demotion(jaccard, 0.4, 2.0, window=12),
    "jaccard .4 λ2 no guard": demotion(jaccard, 0.4, 2.0, guard=False),
    "jaccard .3 λ1 no guard": demotion(jaccard, 0.3, 1.0, guard=False),
    "jaccard .25 λ1 guard": demotion(jaccard, 0.25, 1.0),
    "jaccard .3 λ1 guard": demotion(jaccard, 0.3, 1.0),
    "jaccard .35 λ1 guard": demotion(jaccard, 0.35, 1.0),
    "jaccard .4 λ1 guard": demotion(jaccard, 0.4, 1.0),
    "jaccard .5 λ1 guard": demotion(jaccard, 0.5, 1.0),
    "jaccard .3 λ1.5 guard": demotion(jaccard, 0.3, 1.5),
    "jaccard .4 λ1.5 guard": demotion(jaccard, 0.4, 1.5),
    "jaccard .3 λ2 guard": demotion(jaccard, 0.3, 2.0),
    "jaccard .45 λ2 guard": demotion(jaccard, 0.45, 2.0),
    "jaccard .5 λ2 guard": demotion(jaccard, 0.5, 2.0),
    "jaccard .6 λ2 guard": demotion(jaccard, 0.6, 2.0),
    "jaccard .4 λ3 guard": demotion(jaccard, 0.4, 3.0),
    "cosine .7 λ1 guard": demotion(cosine, 0.7, 1.0),
    "cosine .8 λ1 guard": demotion(cosine, 0.8, 1.0),
    "cosine .8 λ1 no guard": demotion(cosine, 0.8, 1.0, guard=False),
    "cosine .8 λ2 guard": demotion(cosine, 0.8, 2.0),
    "cosine .9 λ1 guard": demotion(cosine, 0.9, 1.0),
    "cosine .9 λ2 guard": demotion(cosine, 0.9, 2.0),
}


def main() -> int:
    return run(VARIANTS, arguments(__doc__).parse_args())

if __name__ == "__main__":
    sys.exit(main())
