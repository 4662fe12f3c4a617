"""Issue 28, round 14: the days a question names ("a week ago", "last month", "on 13 October 2023"),
read against its `now`, lift the memories captured in them.

Round 1 measured a window lift on relative expressions only and found no gain: LongMemEval's haystacks
span a few weeks, and LoCoMo's questions, asked years after their conversations, name no relative
time that reaches them. But 97 of LoCoMo dev's 760 questions name an absolute day or month ("What
painting did Melanie show to Caroline on October 13, 2023?"), and LongMemEval's "a week ago" was read
as "in a week" (the date parser took "participated in a week" first). The rows:

- "round 13": the ranking before this round (share 0.525, prescore 100, no focus).
- "focus W margin M": the same with `scoring.score`'s focus: W added to the weighted sum of a memory
  captured inside the days `query.focus` reads from the question against `now` (`dates.window`; none
  when they start after `now`: "this weekend" asks about plans), fading over M + 1 days outside them;
  a hit whose score is its cosine's lift (`SEMANTIC_EVIDENCE`) gains it on the sum that lift stands
  for. Shipped: 0.1, 2.
- "focus 0.1 margin 2, absolute only" / "… relative only": the window only when the question names a
  year, or only when it names none.
- "… sum only": the lift added to the sum alone, a hit lifted by its cosine gaining nothing (the
  round's first form: two alike memories in a small store tie whatever day is asked about).
- "a share of the score W margin 2": the calibrated score × (1 + W × the day's fit) instead, so the
  day alone never carries an unrelated memory over the relevance floor.

    PYTHONPATH=shared:. .venv/bin/python bench/issue28_round14.py [--only 'round 13,focus 0.1 margin 2 (shipped)'] [--without-now]
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench import issue28_round9  # noqa: E402
from bench.issue28_round3 import Ranker  # noqa: E402
from bench.issue28_round9 import Focus  # noqa: E402
from bench.issue28_round12 import before_focus, lead_states  # noqa: E402
from bench.issue28_round13 import run_with_or_without_now  # noqa: E402
from mnemo.domain import query, scoring  # noqa: E402

STATES = lead_states(gated=True)
ROUND13 = before_focus(100, states=STATES)
SHIPPED = (scoring.DEFAULT_WEIGHTS.focus, scoring.DEFAULT_WEIGHTS.focus_margin_days)
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")


def absolute(question: str, now: Any) -> tuple[date, date] | None:
    """`query.focus` of a question that names a year."""
    return query.focus(question, now) if _YEAR.search(question) else None


def relative(question: str, now: Any) -> tuple[date, date] | None:
    """`query.focus` of a question that names no year."""
    return None if _YEAR.search(question) else query.focus(question, now)


def focused(weight: float, margin: int, focus: Focus = query.focus, *, form: str = "shipped") -> Ranker:
    weights = replace(scoring.DEFAULT_WEIGHTS, focus=weight, focus_margin_days=margin)
    score = scoring.score if form == "shipped" else functools.partial(other_form, form)
    return issue28_round9.prescored(100, states=STATES, focus=focus, weights=weights, score=score)


def other_form(form: str, candidates: Any, *, now: Any, weights: scoring.Weights, focus: tuple[date, date] | None
               ) -> scoring.Scored:
    """The lift in a form measured and not shipped: "share", the calibrated score × (1 + focus × the
    day's fit), so the day alone never carries an unrelated memory over the floor; "sum only", the
    shipped sum but not raising a hit whose score is its cosine's lift (`SEMANTIC_EVIDENCE`)."""
    scored = scoring.score(candidates, now=now, weights=weights)
    if focus is None:
        return scored
    c = scored.candidates
    when = [scoring.focus_score(t, focus, weights.focus_margin_days, now) for t in c.captured_at]
    if form == "share":
        scores = [min(1.0, v * (1.0 + weights.focus * w)) for v, w in zip(scored.scores, when, strict=True)]
    else:
        raw = [weights.lexical * a + weights.semantic * b + weights.importance * i + weights.recency * r
               for a, b, i, r in zip(*(scored.parts[k] for k in ("lexical", "semantic", "importance", "recency")),
                                     strict=True)]
        scores = [scoring.calibrate(v + weights.focus * w, weights.calibration, cosine=s if lx > 0 else None)
                  for v, w, s, lx in zip(raw, when, c.semantic, c.lexical, strict=True)]
    order = sorted(sorted(range(len(c.ids)), key=c.ids.__getitem__), key=lambda row: -scores[row])
    return replace(scored, scores=scores, order=order, _rows={})


VARIANTS: dict[str, Ranker] = {
    "round 13": ROUND13,
    **{f"focus {w} margin {m}{' (shipped)' if (w, m) == SHIPPED else ''}": focused(w, m)
       for w, m in ((0.05, 0), (0.05, 2), (0.1, 0), (0.1, 2), (0.1, 5), (0.15, 2), (0.2, 2))},
    **{f"focus 0.1 margin 2, {name} only": focused(0.1, 2, f) for name, f in (("absolute", absolute),
                                                                               ("relative", relative))},
    "focus 0.1 margin 2, sum only": focused(0.1, 2, form="sum only"),
    **{f"a share of the score {w} margin 2": focused(w, 2, form="share") for w in (0.2, 0.3, 0.5)},
}


def main() -> int:
    return run_with_or_without_now(VARIANTS, __doc__)


if __name__ == "__main__":
    sys.exit(main())
