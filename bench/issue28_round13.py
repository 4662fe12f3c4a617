"""Issue 28, round 13: the late-interaction blend's share and depth, re-swept now that replies are read
after the words they answer (round 12), and the lexical context of a reply.

Round 6 chose the share (0.5) and round 9 the prescore depth (100) on states of the text alone. A
reply's states now carry the question it answers, so its relevance means more than it did. The rows:

- "round 12 (share 0.5)": what round 12 shipped; "share S": the same at another share (0.525 shipped).
- "depth D": share 0.5, prescoring D candidates instead of 100.
- "reply context N words": share 0.5, the `context` field of a reply (text.answers) keeping N of its
  question's words instead of PREVIOUS_CONTEXT_WORDS (6); other memories keep 6.

The depth and context rows were measured before the share moved, so they stay at round 12's 0.5.

`--only` takes comma-separated names; `--without-now` reads LongMemEval alone with the clock as `now`
(the REST bench's "without now"), as the share was also checked.

    PYTHONPATH=shared:. .venv/bin/python bench/issue28_round13.py --locomo /work/shared/bench/locomo-dev.json \\
        --longmemeval /work/shared/bench/longmemeval-s-dev.json.gz [--only 'share 0.54,depth 60'] [--without-now]
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench import longmemeval as lme  # noqa: E402
from bench.ablation_locomo import Embeddings, Variant, build  # noqa: E402
from bench.issue28_round3 import DEPTH, Ranker, _context, arguments, run  # noqa: E402
from bench.issue28_round12 import SHARE as ROUND12_SHARE  # noqa: E402
from bench.issue28_round12 import before_focus, lead_states  # noqa: E402
from mnemo.adapters.local.late_interaction import LATE_INTERACTION_SHARE  # noqa: E402

SHIPPED = lead_states(gated=True)

VARIANTS: dict[str, Ranker] = {
    "round 12 (share 0.5)": before_focus(100, ROUND12_SHARE, states=SHIPPED),
    **{f"share {s}{' (shipped)' if s == LATE_INTERACTION_SHARE else ''}": before_focus(100, s, states=SHIPPED)
       for s in (0.4, 0.45, 0.525, 0.54, 0.55, 0.575, 0.6, 0.65, 0.7)},
    **{f"depth {d}": before_focus(d, ROUND12_SHARE, states=SHIPPED) for d in (60, 150)},
}


def reply_context(words: int) -> Ranker:
    """Round 12's ranker over an index whose replies keep `words` of their question's words in the
    `context` field (0: all of it); every other memory keeps PREVIOUS_CONTEXT_WORDS."""
    ranker = before_focus(100, ROUND12_SHARE, states=SHIPPED)

    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        key = ("reply context", words)
        if key not in ctx:
            ctx[key] = build(SimpleNamespace(turns=ctx["turns"]), Variant("reply", reply_words=words), ctx["embed"],
                             ctx["extractor"])
        shipped, ctx["index"] = ctx["index"], ctx[key]
        try:
            return ranker(ctx, q, qv, now)
        finally:
            ctx["index"] = shipped
    return rank


VARIANTS |= {f"reply context {n or 'all the'} words": reply_context(n) for n in (10, 16, 0)}


def without_now(chosen: dict[str, Ranker], longmemeval_path: Path) -> None:
    """LongMemEval with the clock as `now` instead of each question's date: the REST bench's second
    reading (`bench/longmemeval.py --via local`, "without now"), which the harness reproduces."""
    extractor = lme.CachedExtractor()
    embed = Embeddings(REPO / "bench" / "results" / "longmemeval-minilm.npz")
    questions, _ = lme.load(longmemeval_path)
    contexts = [(_context(q, embed, extractor, k=DEPTH), q, embed([q.question])[0]) for q in questions]
    clock = datetime.now(UTC)
    print(f"{'LongMemEval without now':<34}{'all@5':>7}{'multi':>7}{'temp':>7}{'s_all@5':>8}{'s_any@5':>8}{'all@10':>8}{'any@1':>7}")
    for name, ranker in chosen.items():
        m = lme.summarise([(q.qtype, lme.score(ranker(ctx, q.question, qv, clock), q)) for ctx, q, qv in contexts])
        a = m["all"]
        print(f"{name:<34}{a['turn_all@5']:>7.3f}{m['multi-session']['turn_all@5']:>7.3f}"
              f"{m['temporal-reasoning']['turn_all@5']:>7.3f}{a['session_all@5']:>8.3f}{a['session_any@5']:>8.3f}"
              f"{a['turn_all@10']:>8.3f}{a['turn_any@1']:>7.3f}", flush=True)


def run_with_or_without_now(variants: dict[str, Ranker], description: str) -> int:
    """A round's command line: both dev files with each question's `now`, or (`--without-now`)
    LongMemEval with the clock as `now`; `--only` picks variants in either (rounds 14 and 15 reuse it)."""
    parser = arguments(description)
    parser.add_argument("--without-now", action="store_true", help="LongMemEval only, the clock as `now`")
    args = parser.parse_args()
    if args.without_now:
        without_now({n: r for n, r in variants.items() if not args.only or n in args.only.split(",")}, args.longmemeval)
        return 0
    return run(variants, args)


def main() -> int:
    return run_with_or_without_now(VARIANTS, __doc__)


if __name__ == "__main__":
    sys.exit(main())
