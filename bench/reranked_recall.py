"""The local default's ranking, with its late-interaction reranker, in process (issue 54): what the
embedded stack serves, where bench/ablation_locomo.py, bench/longmemeval.py and
bench/agent_query_recall.py measure the fused ranking alone (the AWS profile's, no reranker).

Each search is `MemorySearch`'s steps with a prescoring reranker (bench/issue28_round9.py `prescored`:
fusion, the reranker's relevance of the best 100 before the read, graph expansion, repeat demotion,
the best 20 and those it held reordered by `(1 - share) · fused + share · relevance`), over the ablation
harness's index and the MiniLM caches in bench/results/. Reported per reranker share:

- LoCoMo dev, categories 1-4: recall@5 summed over the 760 questions, per fold (`ablation_locomo.fold_of`);
- LongMemEval dev, both files (247 evaluable): turn all@5 as questions hit, per fold;
- the agent-query set (dev third; `--heldout` for the other): per class, the share of queries whose
  answer passes the floor when the blend, through the reranker's calibration, is the score (what
  `/mcp` `retrieve_thoughts` returns with its defaults), and when the fused score is (before issue 54),
  for a few blend floors; MRR@10 of the answer (r3 and Thrindex keep their top k); never-said queries
  with nothing passing;
- LoCoMo recall@5 with each floor applied to the top 10 (what the floor costs).

    PYTHONPATH=shared:. .venv/bin/python bench/reranked_recall.py [--shares 0.525,0.7] [--floors 0.3,0.36]
        [--heldout] [--skip locomo,longmemeval,agent]

The first share's first run builds every conversation's index (~8 min on a 2-core VM); each further
share takes seconds. To measure another checkout, run this file from a `git archive` of it with
models/ and bench/results/ linked.
"""

from __future__ import annotations

import argparse
import platform
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench import agent_query_recall as agents  # noqa: E402
from bench import issue28_round9  # noqa: E402
from bench.ablation_locomo import FOLDS, fold_of, question_key  # noqa: E402
from bench.issue28_round3 import NOW, Embeddings, _context, lme, load_locomo  # noqa: E402
from bench.issue28_round6 import TOKENS  # noqa: E402
from bench.issue28_round14 import STATES  # noqa: E402
from bench.locomo.metrics import HEADLINE, HEADLINE_CATEGORIES, by_category, score_question  # noqa: E402
from mnemo.adapters.local import late_interaction  # noqa: E402
from mnemo.adapters.local.late_interaction import LATE_INTERACTION_SHARE, _query_rows  # noqa: E402
from mnemo.domain import query, scoring  # noqa: E402
from mnemo.domain.repeats import demote_repeats  # noqa: E402

LOCOMO = REPO.parent / "shared" / "bench" / "locomo-dev.json"
LONGMEMEVAL = [REPO.parent / "shared" / "bench" / name
               for name in ("longmemeval-s-dev.json.gz", "longmemeval-s-dev-extra.json.gz")]
DEPTH = 100  # scoring.PRESCORE_DEPTH
# The reranker's knots (None in a checkout from before issue 54, where the fused score was the score).
CALIBRATION = getattr(late_interaction, "LATE_INTERACTION_CALIBRATION", None)


def ranked(ctx: dict[str, Any], q: str, qv: list[float], now: Any, share: float) -> list[scoring.Ranked]:
    """`issue28_round9.prescored`'s search, answering `Ranked` hits (relevance in `rerank`)."""
    top_k = ctx["k"]
    scored = scoring.score(issue28_round9._search(ctx, q, qv), now=now, focus=query.focus(q, now))
    head = scored.best_ids(DEPTH)
    rows = _query_rows(TOKENS.token_states([q])[0])
    relevant = dict(zip(head, issue28_round9.max_sims(rows, STATES(ctx, head)), strict=True))
    order = scoring.prescored(scored, relevant, share, DEPTH)
    reach = scoring.reach(scored)
    best = order.best_ids(top_k + 2)
    read = set(best) | set(scoring.within_reach(reach, scoring.kth(scored, best, top_k), exclude=set(best)))
    hits = scoring.expand(scored, admitted=read & reach.keys(), among=read)
    window = top_k + 2
    hits = demote_repeats(hits, {r.memory_id: ctx["texts"][r.memory_id] for r in hits[:window]}, window)
    chosen = [r for i, r in enumerate(hits[:DEPTH]) if i < scoring.RERANK_DEPTH or r.memory_id in relevant]
    missing = [r.memory_id for r in chosen if r.memory_id not in relevant]
    if missing:
        relevant |= dict(zip(missing, issue28_round9.max_sims(rows, STATES(ctx, missing)), strict=True))
    picked = {r.memory_id for r in chosen}
    return (scoring.reranked(chosen, [relevant[r.memory_id] for r in chosen], share)
            + [r for r in hits if r.memory_id not in picked])


def blended(hit: scoring.Ranked, share: float) -> float:
    """The hit's blend of fused score and relevance (its fused score past the reranked head)."""
    relevance = hit.components.get("rerank")
    return hit.score if relevance is None else scoring.blend(hit.score, relevance, share)


def folded(hit: scoring.Ranked, share: float) -> float:
    """The score the search shows: the blend through the reranker's calibration (the fused score before)."""
    return scoring.calibrate(blended(hit, share), CALIBRATION) if CALIBRATION else hit.score


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shares", default=str(LATE_INTERACTION_SHARE))
    parser.add_argument("--floors", default="0.3,0.32,0.34,0.36,0.38,0.4", help="floors on the blend")
    parser.add_argument("--heldout", action="store_true", help="the agent-query set's held-out third instead of dev")
    parser.add_argument("--skip", default="", help="comma-separated parts: locomo, longmemeval, agent")
    args = parser.parse_args()
    shares = [float(s) for s in args.shares.split(",")]
    floors = [float(f) for f in args.floors.split(",")]
    skip = set(args.skip.split(",")) - {""}
    print(f"{platform.machine()}, CPython {platform.python_version()}; shares {shares}; the reranker's calibration "
          f"{CALIBRATION}")
    extractor = lme.CachedExtractor()
    locomo: list[Any] = []
    if "locomo" not in skip:
        embed = Embeddings(REPO / "bench" / "results" / "locomo-minilm.npz")
        for conv in load_locomo(str(LOCOMO))[0]:
            questions = [q for q in conv.questions if q.category in HEADLINE_CATEGORIES]
            locomo.append((conv, _context(conv, embed, extractor, k=10), questions, embed([q.question for q in questions])))
    longmemeval: list[Any] = []
    if "longmemeval" not in skip:
        embed = Embeddings(REPO / "bench" / "results" / "longmemeval-minilm.npz")
        questions, _ = lme.load(LONGMEMEVAL)
        longmemeval = [(_context(q, embed, extractor, k=lme.DEPTH), q, embed([q.question])[0]) for q in questions]
    stores: list[Any] = []
    if "agent" not in skip:
        embed = Embeddings(REPO / "bench" / "results" / "agent-queries-minilm.npz")
        held = agents.heldout_keys()
        for store in agents.stores():
            ctx = _context(agents._Store(agents.store_turns(store, 0)), embed, extractor, k=10)
            chosen = [q for q in store["queries"] if (agents.key_of(q) in held) == args.heldout]
            stores.append((ctx, chosen, embed([q["text"] for q in chosen])))
    for share in shares:
        print(f"\nshare {share}")
        if locomo:
            folds, floored = [0.0] * FOLDS, defaultdict(list)
            for conv, ctx, questions, vectors in locomo:
                for q, qv in zip(questions, vectors, strict=True):
                    hits = ranked(ctx, q.question, qv, NOW, share)[:10]
                    folds[fold_of(question_key(conv, q))] += score_question([h.memory_id for h in hits], q.evidence,
                                                                            q.category).recall_at_5
                    floored["fused 0.3"].append(score_question([h.memory_id for h in hits if h.score >= 0.3],
                                                               q.evidence, q.category))
                    floored["its score 0.3"].append(score_question(
                        [h.memory_id for h in hits if folded(h, share) >= scoring.RELEVANCE_FLOOR], q.evidence, q.category))
                    for f in floors:
                        floored[f"blend {f}"].append(score_question([h.memory_id for h in hits if blended(h, share) >= f],
                                                                    q.evidence, q.category))
            print(f"  LoCoMo 1-4 recall@5 {sum(folds) / 760:.3f}: {sum(folds):.1f} of 760 (folds "
                  f"{' '.join(f'{v:.1f}' for v in folds)}); with a floor: "
                  + ", ".join(f"{k} {by_category(v)[HEADLINE].recall_at_5:.3f}" for k, v in floored.items()))
        if longmemeval:
            hit = [0] * FOLDS
            for ctx, q, qv in longmemeval:
                hit[fold_of(q.qid)] += int(lme.score([h.memory_id for h in ranked(ctx, q.question, qv, q.date, share)],
                                                     q)["turn_all@5"] >= 1.0)
            print(f"  LongMemEval turn all@5 {sum(hit)} of {len(longmemeval)} (folds {' '.join(map(str, hit))})")
        if stores:
            out: dict[str, list[float]] = defaultdict(list)
            for ctx, chosen, vectors in stores:
                for q, qv in zip(chosen, vectors, strict=True):
                    hits = ranked(ctx, q["text"], qv, agents.NOW, share)[:20]
                    cls = q["class"]
                    if cls == "never_said":
                        out[f"{cls} empty, fused 0.3"].append(float(all(h.score < 0.3 for h in hits)))
                        for f in floors:
                            out[f"{cls} empty, blend {f}"].append(float(all(blended(h, share) < f for h in hits)))
                        continue
                    answers = [h for h in hits if h.memory_id in set(q["answers"])]
                    rank = next((i for i, h in enumerate(hits[:10], 1) if h.memory_id in set(q["answers"])), None)
                    out[f"{cls} MRR@10"].append(1.0 / rank if rank else 0.0)
                    out[f"{cls} fused 0.3"].append(float(any(h.score >= 0.3 for h in answers)))
                    for f in floors:
                        out[f"{cls} blend {f}"].append(float(any(blended(h, share) >= f for h in answers)))
            split = "held-out" if args.heldout else "dev"
            print(f"  agent-query set ({split}): " + " | ".join(f"{k} {sum(v) / len(v):.3f} ({len(v)})" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
