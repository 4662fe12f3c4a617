"""Issue 28, round 12: a reply's token states read after the words it answers, when speaker labels
say it is a reply (`mnemo.domain.text.answers`).

Round 11 measured the predecessor's last 6 words encoded before every memory (its rows kept, x1.0):
LoCoMo gained 0.011, LongMemEval lost a multi-session question, since there consecutive memories are
one user's messages (the assistant's replies between them are not memories). Here the words are read
only where both the memory and its predecessor start with a speaker label and the labels differ, as
`EnrichmentPipeline` and the local index now do: every LoCoMo turn after the first of a session
("Caroline: ...", "Melanie: ..." alternate), no LongMemEval turn (none carries a label and follows
another's). The rows:

- "prescored 100 (before)": round 9's ranking, each memory's states of its text alone.
- "replies after 10 words (shipped)": the gated states (`REPLY_LEAD_WORDS`), the rest unchanged;
  the same after 6, 8, 12, 16 words or the whole predecessor: the sweep that chose 10.
- "every memory after 6 words": round 11's ungated states, for comparison.

    PYTHONPATH=shared:. .venv/bin/python bench/issue28_round12.py --locomo /work/shared/bench/locomo-dev.json \\
        --longmemeval /work/shared/bench/longmemeval-s-dev.json.gz
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench import issue28_round9  # noqa: E402
from bench.issue28_round3 import Ranker, arguments, run  # noqa: E402
from bench.issue28_round6 import TOKENS  # noqa: E402
from bench.issue28_round7 import _stored  # noqa: E402
from bench.issue28_round9 import text_states  # noqa: E402
from mnemo.domain.text import answers  # noqa: E402
from mnemo.services.enrichment.pipeline import PREVIOUS_CONTEXT_WORDS, REPLY_LEAD_WORDS  # noqa: E402

# The rows are the ranking before round 14 read the days a question names, as the figures quoted for them.
before_focus = functools.partial(issue28_round9.prescored, focus=issue28_round9.no_focus)


def _leads(ctx: dict[str, Any], gated: bool, words: int | None) -> dict[str, str]:
    """Each memory's lead: its predecessor's last `words` (None: all of it), within the session (and,
    gated, only for a reply)."""
    turns, out = ctx["turns"], {}
    for i, t in enumerate(turns):
        before = turns[i - 1].content if i > 0 and turns[i - 1].session == t.session else ""
        lead = " ".join(before.split()[-words:]) if words else before
        out[t.dia_id] = lead if before and (not gated or answers(before, t.content)) else ""
    return out


def lead_states(gated: bool, words: int | None = REPLY_LEAD_WORDS) -> issue28_round9.States:
    """The local index's states: of the lead and the text in one pass, every row kept."""
    def states(ctx: dict[str, Any], ids: Sequence[str]) -> list[np.ndarray]:
        raw = ctx.setdefault("raw", {t.dia_id: t.content for t in ctx["turns"]})
        lead = ctx.setdefault(("lead", gated, words), _leads(ctx, gated, words))
        return [_stored(s, "int8") for s in TOKENS.token_states([f"{lead[m]} {raw[m]}".lstrip() for m in ids])]
    return states


# The late-interaction share round 12 measured at (round 13 moved the shipped one to 0.525).
SHARE = 0.5

VARIANTS: dict[str, Ranker] = {
    "prescored 100 (before)": before_focus(100, SHARE, states=text_states),
    f"replies after {REPLY_LEAD_WORDS} words (shipped)": before_focus(
        100, SHARE, states=lead_states(gated=True)),
    **{f"replies after {n or 'all the'} words": before_focus(100, SHARE, states=lead_states(True, n))
       for n in (PREVIOUS_CONTEXT_WORDS, 8, 12, 16, None)},
    f"every memory after {PREVIOUS_CONTEXT_WORDS} words": before_focus(
        100, SHARE, states=lead_states(False, PREVIOUS_CONTEXT_WORDS)),
}


def main() -> int:
    return run(VARIANTS, arguments(__doc__).parse_args())


if __name__ == "__main__":
    sys.exit(main())
