"""Issue 28, round 17: the speaker a question names lifts what that speaker said (measured, not kept).

LoCoMo's multi-hop misses are questions about one person ("What activities has Melanie done with her
family?") whose first five hold the other speaker's turns: transcripts name the person they talk to
("Wow, Melanie!"), so the name's lexical match does not tell who spoke. A memory's speaker is its
speaker label (`text.speaker`: "Melanie: …"); before adding it to the index, this lifts the memories
whose speaker the question names, as the days a question names lift what was captured in them
(`scoring.score`'s focus): added through the calibration, and

- "speaker W": W × (1 − the share of the candidates that speaker said) (selective, as the focus);
- "speaker flat W": W on every memory that speaker said.

And the other way round, the question without the names of the speakers it names ("What activities has
done with her family?"): "names dropped from the vector" embeds that for the semantic leg only; "names
dropped" searches with it throughout.

Everything else is round 15's shipped search (the focus included). LongMemEval's turns carry no
label, so its figures cannot move. bench/README.md "Issue 28, round 17" has the table.

    PYTHONPATH=shared:. .venv/bin/python bench/issue28_round17.py [--only 'speaker 0.2']
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench import issue28_round9  # noqa: E402
from bench.issue28_round3 import Ranker, arguments, run  # noqa: E402
from bench.issue28_round14 import STATES  # noqa: E402
from bench.issue28_round15 import lifted, ranker  # noqa: E402
from mnemo.domain import scoring, text  # noqa: E402


def _who(ctx: dict[str, Any]) -> dict[str, str | None]:
    """Each turn's speaker (its label), read once per conversation."""
    if "who" not in ctx:
        ctx["who"] = {t.dia_id: text.speaker(t.content) for t in ctx["turns"]}
    return ctx["who"]


def _named(ctx: dict[str, Any], q: str) -> list[str]:
    """The conversation's speakers that the question names."""
    return [s for s in set(_who(ctx).values()) if s and re.search(rf"\b{re.escape(s)}\b", q, re.I)]


def speaker_lift(weight: float, *, selective: bool = True) -> Ranker:
    """Round 15's search with `weight` lifting what the speakers the question names said."""
    asked: dict[str, Any] = {"who": {}, "named": set()}  # the ranked conversation's speakers, the question's

    def score(candidates: Any, *, now: Any, weights: scoring.Weights, focus: Any = None) -> scoring.Scored:
        scored = scoring.score(candidates, now=now, weights=weights, focus=focus)
        said = [1.0 if asked["who"].get(m) in asked["named"] else 0.0 for m in scored.candidates.ids]
        if not any(said):
            return scored
        when = scored.parts.get("when") or [0.0] * len(said)
        in_days = weights.focus * (1.0 - sum(when) / len(when)) if focus else 0.0  # as `scoring.score`
        by_them = weight * (1.0 - sum(said) / len(said)) if selective else weight
        return lifted(scored, weights, when, [in_days * w + by_them * s for w, s in zip(when, said, strict=True)])

    inner = issue28_round9.prescored(100, states=STATES, score=score)

    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        asked["who"] = _who(ctx)
        asked["named"] = set(_named(ctx, q))
        return inner(ctx, q, qv, now)
    return rank


def names_dropped(*, vector_only: bool) -> Ranker:
    """Round 15's search for the question without the speakers' names it holds."""
    inner = ranker(scoring.DEFAULT_WEIGHTS.focus)

    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        named = _named(ctx, q)
        if not named:
            return inner(ctx, q, qv, now)
        bare = q
        for name in named:
            bare = re.sub(rf"\b{re.escape(name)}(?:'s)?\b", "", bare, flags=re.I)
        bare = " ".join(bare.split())
        vector = ctx["embed"]([bare])[0]
        return inner(ctx, q if vector_only else bare, vector, now)
    return rank


VARIANTS: dict[str, Ranker] = {
    "round 15 (shipped)": ranker(scoring.DEFAULT_WEIGHTS.focus),
    **{f"speaker {w}": speaker_lift(w) for w in (0.05, 0.1, 0.2, 0.3)},
    **{f"speaker flat {w}": speaker_lift(w, selective=False) for w in (0.05, 0.1)},
    "names dropped from the vector": names_dropped(vector_only=True),
    "names dropped": names_dropped(vector_only=False),
}


def main() -> int:
    return run(VARIANTS, arguments(__doc__).parse_args())


if __name__ == "__main__":
    sys.exit(main())
