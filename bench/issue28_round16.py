"""Issue 28, round 16: the days a memory states ("last month I watched…") beside the day it was captured
(measured, not kept).

Round 15 left three of LongMemEval dev's nine dated windows missing their evidence, two of them told in
May about April ("which shoes did I clean last month?"). Facts carry the day their text states
(`valid_at`); memories in the index carry only their capture time. Before adding an index field, this
measures what the field would buy: each turn's stated days are `dates.window` of its text against its
capture time (what the extractor would store), and the focus fit of a memory becomes

- "stated days count too": the better of its capture day's fit and its stated days' fit;
- "stated days instead": its stated days' fit where it states any, else its capture day's.

Everything else is round 15's shipped search (`issue28_round15.ranker`, weight 0.4, scaled by what the
window leaves out). bench/README.md "Issue 28, round 16" has the table.

    PYTHONPATH=shared:. .venv/bin/python bench/issue28_round16.py [--only 'stated days count too'] [--without-now]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench import issue28_round9  # noqa: E402
from bench.issue28_round3 import Ranker  # noqa: E402
from bench.issue28_round13 import run_with_or_without_now  # noqa: E402
from bench.issue28_round14 import STATES  # noqa: E402
from bench.issue28_round15 import lifted, ranker  # noqa: E402
from mnemo.domain import dates, scoring  # noqa: E402

Window = tuple[date, date]
Fit = Callable[[float, float | None], float]  # (capture day's fit, stated days' fit or None) -> the fit


def window_fit(stated: Window, focus: Window, margin_days: int) -> float:
    """`scoring.focus_score` for a span of days: 1 if it meets the focus, falling to 0 `margin_days` + 1 out."""
    (first, last), (start, end) = stated, focus
    gap = (start - last).days if last < start else (first - end).days if first > end else 0
    return max(0.0, 1.0 - gap / (margin_days + 1))


def stated_days(fit: Fit) -> Ranker:
    """Round 15's search with each memory's focus fit by `fit` over its capture day and its stated days."""
    said: dict[str, Window | None] = {}  # the ranked conversation's turns (dia_ids repeat across them)

    def score(candidates: Any, *, now: Any, weights: scoring.Weights, focus: Window | None = None) -> scoring.Scored:
        scored = scoring.score(candidates, now=now, weights=weights)
        if focus is None:
            return scored
        c = scored.candidates
        when = []
        for mid, captured in zip(c.ids, c.captured_at, strict=True):
            stated = said.get(mid)
            when.append(fit(scoring.focus_score(captured, focus, weights.focus_margin_days, now),
                            None if stated is None else window_fit(stated, focus, weights.focus_margin_days)))
        selective = weights.focus * (1.0 - sum(when) / len(when))  # as `scoring.score` scales it
        return lifted(scored, weights, when, [selective * w for w in when])

    inner = issue28_round9.prescored(100, states=STATES, score=score)

    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        if "stated" not in ctx:
            ctx["stated"] = {t.dia_id: dates.window(t.content, t.date, future=False) for t in ctx["turns"]}
        said.clear()
        said.update(ctx["stated"])
        return inner(ctx, q, qv, now)
    return rank


VARIANTS: dict[str, Ranker] = {
    "round 15 (shipped)": ranker(scoring.DEFAULT_WEIGHTS.focus),
    "stated days count too": stated_days(lambda captured, stated: max(captured, stated or 0.0)),
    "stated days instead": stated_days(lambda captured, stated: captured if stated is None else stated),
}


def main() -> int:
    return run_with_or_without_now(VARIANTS, __doc__)


if __name__ == "__main__":
    sys.exit(main())
