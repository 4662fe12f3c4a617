"""Issue 28, round 5 (measured, not shipped): sentence-level lexical signals, and query-word novelty.

What round 4 left: evidence said in an aside inside a long message about something else ("By the way,
I just helped organize a charity…"), at ranks 6 to 14. The turn's BM25 is diluted by its length and
its vector by its main topic; one sentence of it matches. Each variant scores a turn by its best
sentence's BM25 (sentences split at . ! ?, at least `min_words` tokens, statistics over all the
sentences of the corpus), then either fuses that list with the shipped ranking (round 4's, repeat
demotion included) by reciprocal rank (k = 60, the second list weighted: "sentences rrf"), or lifts a
hit's raw sum where its best sentence matches better than the whole turn ("sentence lift"). "novelty"
moves down a hit whose matched query words a better-placed hit (of its session) already matches. Columns as in
bench/issue28_round3.py (same `measure`); the table: bench/README.md "Issue 28, round 5".

    PYTHONPATH=shared:. .venv/bin/python bench/issue28_round5.py --locomo /work/shared/bench/locomo-dev.json \
        --longmemeval /work/shared/bench/longmemeval-s-dev.json.gz
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench.issue28_round3 import DEPTH, Ranker, _rrf, _search, arguments, half_score, run  # noqa: E402
from bench.issue28_round4 import production, production_hits  # noqa: E402
from bench.locomo.baselines import Bm25Baseline  # noqa: E402
from mnemo.domain import scoring  # noqa: E402
from mnemo.domain.repeats import demote_repeats  # noqa: E402
from mnemo.domain.text import tokenize  # noqa: E402
from mnemo.services.memory.search import SPARE_HITS  # noqa: E402

SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _sentences(ctx: dict[str, Any], min_words: int) -> tuple[Bm25Baseline, list[str]]:
    key = f"sentences{min_words}"
    if key not in ctx:
        texts, owners = [], []
        for mid, text in ctx["texts"].items():
            for sentence in SENTENCE.split(text):
                if len(tokenize(sentence)) >= min_words:
                    texts.append(sentence)
                    owners.append(mid)
        ctx[key] = (Bm25Baseline(texts), owners)
    return ctx[key]


def sentence_list(weight: float, min_words: int = 3) -> Ranker:
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        primary = production(ctx, q, qv, now)
        bm25, owners = _sentences(ctx, min_words)
        second: dict[str, int] = {}
        for s in bm25.rank(q, DEPTH * 4):
            mid = owners[s]
            if mid not in second:
                second[mid] = len(second)
        return _rrf(primary, second, weight)
    return rank


def sentence_lift(gamma: float, min_words: int = 3) -> Ranker:
    """Score level: a hit whose best sentence matches the query better than the whole turn does (both
    BM25 through the half-score the lexical leg then had) gains `gamma` × the lexical weight × the difference on its raw
    sum, recalibrated; then round 4's demotion, as production."""
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        window = DEPTH + SPARE_HITS
        hits = scoring.fuse(_search(ctx, q, qv), top_k=window, now=now)
        bm25, owners = _sentences(ctx, min_words)
        best: dict[str, float] = {}
        for s, value in bm25.scores(q).items():
            best[owners[s]] = max(best.get(owners[s], 0.0), half_score(value))
        lifted = []
        for h in hits:
            gain = max(0.0, best.get(h.memory_id, 0.0) - h.components.get("lexical", 0.0))
            raw = h.components.get("raw", 0.0) + gamma * scoring.DEFAULT_WEIGHTS.lexical * gain
            score = max(h.score, scoring.calibrate(raw)) if gain > 0 else h.score
            lifted.append(scoring.Ranked(h.memory_id, score, h.components))
        lifted.sort(key=lambda r: -r.score)
        return [h.memory_id for h in demote_repeats(lifted, ctx["texts"], window)][:DEPTH]
    return rank


def novelty(delta: float, *, same_session: bool = True) -> Ranker:
    """A hit whose matched query words are all matched by a better-placed hit (of its own session when
    `same_session`) adds nothing the question asks for: its score × `delta` (after round 4's demotion)."""
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        hits = production_hits(ctx, q, qv, now)
        asked = set(tokenize(q))
        matched = [asked & set(tokenize(ctx["texts"][h.memory_id])) for h in hits]
        out = []
        for i, h in enumerate(hits):
            covered = any(matched[i] <= matched[j] for j in range(i)
                          if not same_session or ctx["session"][hits[j].memory_id] == ctx["session"][h.memory_id])
            out.append((h.score * (delta if covered and matched[i] else 1.0), i))
        return [hits[i].memory_id for _, i in sorted(out, key=lambda x: (-x[0], x[1]))][:DEPTH]
    return rank


VARIANTS: dict[str, Ranker] = {
    "shipped (round 4)": production,
    "novelty 0.9 same session": novelty(0.9),
    "novelty 0.8 same session": novelty(0.8),
    "novelty 0.6 same session": novelty(0.6),
    "novelty 0.9 any": novelty(0.9, same_session=False),
    "novelty 0.8 any": novelty(0.8, same_session=False),
    "sentence lift 0.25": sentence_lift(0.25),
    "sentence lift 0.5": sentence_lift(0.5),
    "sentence lift 1.0": sentence_lift(1.0),
    "sentence lift 0.5 min 5 words": sentence_lift(0.5, 5),
    "sentences rrf 0.3": sentence_list(0.3),
    "sentences rrf 0.5": sentence_list(0.5),
    "sentences rrf 1.0": sentence_list(1.0),
    "sentences rrf 0.5 min 5 words": sentence_list(0.5, 5),
}


def main() -> int:
    return run(VARIANTS, arguments(__doc__).parse_args())

if __name__ == "__main__":
    sys.exit(main())
