"""Issue 28, round 15: which days a question names, and how much their lift can tell apart.

Round 14's windows missed their evidence on 5 of LongMemEval dev's 8 questions that name past days.
Two were misread: "in the last month" / "in the past month" / "the past few months" read as the
calendar month before (or nothing), where they mean the period up to `now`; and "my Sunday group
rides" read as last Sunday. `dates` now reads "the last/past [N, few, couple of] <unit>s" as the
trailing period and a weekday after my/our/the/every/each as a habit (no day). Then a window that
holds most of what the search found ("the past few months" over a few months of notes) tells nothing
apart, and lifting it only reshuffles: `scoring.score` now scales `Weights.focus` by the share of the
candidates the window leaves out, and the weight is re-swept. The rows:

- "round 14 lift (0.1 unscaled)": 0.1 added to the sum of a memory said in the days (the lift round 14
  shipped, over the new windows).
- "selective W": W × (1 − the share of the candidates the window holds) (shipped: 0.4).
- "selective by kind (0.3 no year; 0.1 a year)": W by whether the question names a year (measured, not
  kept: LoCoMo's dated windows are as reliable as LongMemEval's relative ones, so nothing justifies two
  weights).

    PYTHONPATH=shared:. .venv/bin/python bench/issue28_round15.py [--only 'selective 0.4 (shipped)'] [--without-now]
"""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench import issue28_round9  # noqa: E402
from bench.issue28_round3 import Ranker  # noqa: E402
from bench.issue28_round13 import run_with_or_without_now  # noqa: E402
from bench.issue28_round14 import _YEAR, STATES  # noqa: E402
from mnemo.domain import scoring  # noqa: E402

SHIPPED = scoring.DEFAULT_WEIGHTS.focus


def lifted(scored: scoring.Scored, weights: scoring.Weights, when: list[float], lift: list[float]) -> scoring.Scored:
    """`scored` (no focus) with each row's `lift` added as `scoring.score` adds the focus lift (through the
    calibration, in `best_first` order), `when` its fit: the lift as a variant computes it (round 16 reuses it)."""
    c = scored.candidates
    raw = [weights.lexical * a + weights.semantic * b + weights.importance * i + weights.recency * r
           for a, b, i, r in zip(*(scored.parts[k] for k in ("lexical", "semantic", "importance", "recency")),
                                 strict=True)]
    scores = [scoring.calibrate(v, weights.calibration, cosine=s if lx > 0 else None, lift=f)
              for v, f, s, lx in zip(raw, lift, c.semantic, c.lexical, strict=True)]
    kept = scored.parts["raw"]
    order = sorted(range(len(c.ids)), key=lambda row: (-scores[row], -kept[row], c.ids[row]))  # `best_first`
    return replace(scored, scores=scores, order=order, parts={**scored.parts, "when": when}, _rows={})


def plain(candidates: Any, *, now: Any, weights: scoring.Weights, focus: tuple[date, date] | None) -> scoring.Scored:
    """Round 14's lift: `weights.focus` × the day's fit on every memory, however much the window holds."""
    scored = scoring.score(candidates, now=now, weights=weights)
    if focus is None:
        return scored
    when = [scoring.focus_score(t, focus, weights.focus_margin_days, now) for t in scored.candidates.captured_at]
    return lifted(scored, weights, when, [weights.focus * w for w in when])


def ranker(weight: float, score: Any = scoring.score) -> Ranker:
    weights = replace(scoring.DEFAULT_WEIGHTS, focus=weight)
    return issue28_round9.prescored(100, states=STATES, weights=weights, score=score)


def by_kind(relative: float, absolute: float) -> Ranker:
    """One weight for a question that names a year, another for one that names none."""
    named, unnamed = ranker(absolute), ranker(relative)
    return lambda ctx, q, qv, now: (named if _YEAR.search(q) else unnamed)(ctx, q, qv, now)


VARIANTS: dict[str, Ranker] = {
    "round 14 lift (0.1 unscaled)": ranker(0.1, plain),
    **{f"selective {w}{' (shipped)' if w == SHIPPED else ''}": ranker(w) for w in (0.1, 0.2, 0.25, 0.3, 0.4, 0.5)},
    "selective by kind (0.3 no year; 0.1 a year)": by_kind(0.3, 0.1),
}


def main() -> int:
    return run_with_or_without_now(VARIANTS, __doc__)


if __name__ == "__main__":
    sys.exit(main())
