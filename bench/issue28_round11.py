"""Issue 28, round 11: what the late-interaction relevance is computed over, and how it is blended
(measured, none kept).

Every row is round 9's "prescored 100" (`MemorySearch`'s steps with the embedded default's reranker:
the best 100 fused candidates ordered by the blend before the read, the read hits reranked), with one
thing changed:

- "length beta b": the relevance lowered by `b · ln(rows / 32)`: MaxSim takes each question word's
  best cosine among the memory's tokens, so a long memory (a pasted document) has more chances.
- "bidirectional l": `(1 - l)` of MaxSim plus `l` of the reverse (each memory token's best cosine with
  the question's words, averaged): how much of the memory is about the question.
- "top-2 mean": each question word's two best cosines averaged, not its best.
- "z blend": the fused score and the relevance standardised over the hits being ordered before the
  half-and-half blend (prescore and rerank, or the prescore only), instead of taken as they are.
- "predecessor + text": the memory's token states computed over its predecessor's last 6 words (the
  `context` the worker gives it; in the harness, the previous turn of the same session) followed by
  its text: keeping only the text's rows (contextualised by the predecessor), all rows, or all rows
  with the predecessor's scaled by w (its cosines count w times); "if it asks" takes the predecessor
  only when it ends with a question mark (the question a reply answers).
- "MaxSim alone over every turn": no fusion, no depth: every turn of the conversation (LoCoMo) or haystack
  (LongMemEval) ordered by its relevance alone. A diagnostic of what the relevance knows, not a
  candidate to ship (it reads every memory's states).

    PYTHONPATH=shared:. .venv/bin/python bench/issue28_round11.py --locomo /work/shared/bench/locomo-dev.json \\
        --longmemeval /work/shared/bench/longmemeval-s-dev.json.gz
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench import issue28_round9  # noqa: E402
from bench.issue28_round3 import DEPTH, Ranker, arguments, run  # noqa: E402
from bench.issue28_round6 import TOKENS  # noqa: E402
from bench.issue28_round7 import _stored  # noqa: E402
from bench.issue28_round9 import Relevance, text_states  # noqa: E402
from mnemo.adapters.local.late_interaction import _query_rows, max_sims  # noqa: E402
from mnemo.adapters.local.minilm_embedder import TokenStates  # noqa: E402
from mnemo.domain import scoring  # noqa: E402
from mnemo.services.enrichment.pipeline import PREVIOUS_CONTEXT_WORDS  # noqa: E402

REFERENCE_ROWS = 32


def _predecessors(ctx: dict[str, Any], asks: bool) -> dict[str, str]:
    turns, out = ctx["turns"], {}
    for i, t in enumerate(turns):
        before = turns[i - 1].content if i > 0 and turns[i - 1].session == t.session else ""
        out[t.dia_id] = " ".join(before.split()[-PREVIOUS_CONTEXT_WORDS:]) if not asks or before.rstrip().endswith("?") else ""
    return out


def states(ctx: dict[str, Any], ids: Sequence[str], rows: str, weight: float, asks: bool) -> list[np.ndarray]:
    """Each memory's token vectors: of its text ("text"), or of predecessor + text with the
    predecessor's rows dropped ("text rows") or scaled by `weight` ("all")."""
    if rows == "text":
        return text_states(ctx, ids)
    raw = ctx.setdefault("raw", {t.dia_id: t.content for t in ctx["turns"]})
    before = ctx.setdefault(("before", asks), _predecessors(ctx, asks))
    joined = TOKENS.token_states([f"{before[m]} {raw[m]}".strip() for m in ids])
    lead = TOKENS.token_states([before[m] for m in ids])  # token_states has no [CLS]/[SEP]: pieces only
    out = []
    for m, s, p in zip(ids, joined, lead, strict=True):
        n, vectors = (len(p.tokens) if before[m] else 0), s.vectors.copy()
        if rows == "text rows":
            vectors = vectors[n:]
        else:
            vectors[:n] *= weight
        out.append(_stored(TokenStates(s.tokens, vectors), "int8"))
    return out


def length(beta: float) -> Relevance:
    return lambda q, ms: [s - beta * math.log(max(len(m), 1) / REFERENCE_ROWS) for s, m in zip(max_sims(q, ms), ms, strict=True)]


def bidirectional(share: float) -> Relevance:
    def relevance(q: np.ndarray, ms: Sequence[np.ndarray]) -> list[float]:
        back = [float(np.clip((m @ q.T).max(axis=1).mean(), 0, 1)) if len(m) and len(q) else 0.0 for m in ms]
        return [(1 - share) * s + share * b for s, b in zip(max_sims(q, ms), back, strict=True)]
    return relevance


def top2(q: np.ndarray, ms: Sequence[np.ndarray]) -> list[float]:
    return [float(np.clip(np.sort(q @ m.T, axis=1)[:, -min(2, len(m)):].mean(), 0, 1)) if len(m) and len(q) else 0.0
            for m in ms]


def _z(values: Sequence[float]) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64)
    return (a - a.mean()) / a.std() if a.std() > 0 else a * 0


def z_prescored(scored: scoring.Scored, relevance: dict[str, float], share: float, depth: int) -> scoring.Scored:
    head, ids, scores = scored.order[:depth], scored.candidates.ids, scored.scores
    key = dict(zip(head, (1 - share) * _z([scores[r] for r in head])
                   + share * _z([relevance.get(ids[r], scores[r]) for r in head]), strict=True))
    return replace(scored, order=sorted(head, key=lambda r: -key[r]) + scored.order[depth:])


def z_reranked(hits: Sequence[scoring.Ranked], relevance: Sequence[float], share: float) -> list[scoring.Ranked]:
    key = (1 - share) * _z([h.score for h in hits]) + share * _z(relevance)
    return [hits[i] for i in sorted(range(len(hits)), key=lambda i: (-key[i], i))]


def prescored(relevance: Relevance = max_sims, rows: str = "text", weight: float = 1.0, asks: bool = False,
              z: str = "") -> Ranker:
    """bench/issue28_round9.py's `prescored(100)` with one of the round's hooks set."""
    return issue28_round9.prescored(
        100, relevance=relevance, states=lambda ctx, ids: states(ctx, ids, rows, weight, asks),
        prescore=z_prescored if z else scoring.prescored, rerank=z_reranked if z == "both" else scoring.reranked)


def maxsim_alone(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
    ids = [t.dia_id for t in ctx["turns"]]
    relevance = dict(zip(ids, max_sims(_query_rows(TOKENS.token_states([q])[0]), text_states(ctx, ids)),
                         strict=True))
    return sorted(ids, key=lambda m: -relevance[m])[:DEPTH]


VARIANTS: dict[str, Ranker] = {
    "prescored 100 (shipped)": prescored(),
    **{f"length beta {b}": prescored(length(b)) for b in (-0.02, -0.01, 0.01, 0.02, 0.04, 0.08)},
    **{f"bidirectional {s}": prescored(bidirectional(s)) for s in (0.2, 0.35)},
    "top-2 mean": prescored(top2),
    "z blend": prescored(z="both"),
    "z blend, prescore only": prescored(z="prescore"),
    "predecessor + text, text rows": prescored(rows="text rows"),
    **{f"predecessor + text, rows x{w}": prescored(rows="all", weight=w) for w in (1.0, 0.7, 0.5)},
    **{f"predecessor if it asks, rows x{w}": prescored(rows="all", weight=w, asks=True) for w in (1.0, 0.7)},
    "MaxSim alone over every turn": maxsim_alone,
}


def main() -> int:
    return run(VARIANTS, arguments(__doc__).parse_args())


if __name__ == "__main__":
    sys.exit(main())
