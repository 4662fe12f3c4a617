"""Issue 28, round 3: rank-time mechanisms measured on both dev files in one run (none shipped).

Each variant reorders what the shipped pieces find: the index built by bench/ablation_locomo.py's
`build` (the shipped `Variant`), its candidates, `scoring.fuse` as `MemoryService.search` ranks. A
variant adds a second ranked list, or a second query, and fuses by reciprocal rank (RRF, k = 60) or by
the best score. Printed per variant: LoCoMo dev recall@5 over categories 1–4 (then per category) and
LongMemEval_S dev turn recall_all@5 (then multi-session, temporal, session all@5 / any@5, turn all@10,
turn any@1). The table and what each row means: bench/README.md "Issue 28, round 3".

    PYTHONPATH=shared:. .venv/bin/python bench/issue28_round3.py --locomo /work/shared/bench/locomo-dev.json \
        --longmemeval /work/shared/bench/longmemeval-s-dev.json.gz [--only "shipped,session list rrf 1.0"]

Stemming is a tokenizer variant: `--stem porter` swaps the local index's tokenizer for the
Snowball Porter stemmer over `text.tokenize` (needs `snowballstemmer` importable, e.g. on PYTHONPATH;
it is not a dependency of the project).
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench import longmemeval as lme  # noqa: E402
from bench.ablation_locomo import NOW, SCOPE, Embeddings, Variant, build  # noqa: E402
from bench.locomo.baselines import Bm25Baseline  # noqa: E402
from bench.locomo.data import load as load_locomo  # noqa: E402
from bench.locomo.metrics import HEADLINE, HEADLINE_CATEGORIES, by_category, score_question  # noqa: E402
from mnemo.domain import scoring  # noqa: E402
from mnemo.ports import SearchQuery  # noqa: E402

DEPTH = 50  # hits ranked per question (LongMemEval's session recall reads down to 10 distinct sessions)
RRF_K = 60
SHIPPED = Variant("default (shipped)")
Ranker = Callable[[dict[str, Any], str, list[float], Any], list[str]]


def _search(ctx: dict[str, Any], text: str, vector: list[float]) -> Any:
    return ctx["index"].search(SearchQuery(scope=SCOPE, text=text, vector=vector, authors=["user", "agent"],
                                           top_k=ctx["k"]))


def _scores(ctx: dict[str, Any], text: str, vector: list[float], now: Any) -> dict[str, float]:
    return {h.memory_id: h.score for h in scoring.fuse(_search(ctx, text, vector), top_k=DEPTH * 4, now=now)}


def _order(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda m: (-scores[m], m))


def _unit(v: Any) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    return v / (np.linalg.norm(v) or 1.0)


def _rrf(primary: list[str], second: dict[str, int], weight: float) -> list[str]:
    """`primary` (best first) fused with a second list's ranks (`second`: id -> rank) by RRF."""
    acc = {m: 1 / (RRF_K + i + 1) + (weight / (RRF_K + second[m] + 1) if m in second else 0.0)
           for i, m in enumerate(primary)}
    return sorted(acc, key=lambda m: (-acc[m], m))[:DEPTH]


def shipped(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
    """The fused order before issue 28's round 4 (no repeat demotion): round 3's baseline."""
    return [h.memory_id for h in scoring.fuse(_search(ctx, q, qv), top_k=DEPTH, now=now)]


CLAUSE = re.compile(r",|;|\?|\b(?:and|or|but|while|before|after|when|then)\b", re.I)


def clauses(weight: float) -> Ranker:
    """Multi-query: the question and each clause of it (3+ words) as queries; a hit keeps its best score."""
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        parts = [p.strip() for p in CLAUSE.split(q) if p and len(p.split()) >= 3]
        best = _scores(ctx, q, qv, now)
        if len(parts) >= 2:
            for part, vector in zip(parts, ctx["embed"](parts), strict=True):
                for m, s in _scores(ctx, part, vector, now).items():
                    best[m] = max(best.get(m, 0.0), weight * s)
        return _order(best)[:DEPTH]
    return rank


def feedback(beta: float, top: int, weight: float) -> Ranker:
    """Pseudo-relevance feedback (Rocchio): a second query vector q + beta·mean(best `top` hits), RRF."""
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        first = _order(_scores(ctx, q, qv, now))
        moved = _unit(_unit(qv) + beta * np.mean([ctx["vecs"][m] for m in first[:top]], axis=0))
        second = _order(_scores(ctx, q, moved.tolist(), now))
        return _rrf(first, {m: i for i, m in enumerate(second)}, weight)
    return rank


def half_score(bm25: float) -> float:
    """The lexical leg's fixed half-score as these rounds measured it (`bm25 / (bm25 + 6)`; issue 54
    replaced it in the product with the share of the query's own maximum, `scoring.lexical_share`)."""
    return bm25 / (bm25 + 6.0) if bm25 > 0 else 0.0


def session_list(weight: float) -> Ranker:
    """A per-session representation (its turns' text concatenated: BM25 over sessions, and the cosine of
    its turns' mean vector, 0.5 each) ranks sessions; a turn gets its session's rank as a second list."""
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        if "sessions" not in ctx:
            groups: dict[Any, list[Any]] = {}
            for t in ctx["turns"]:
                groups.setdefault(t.session, []).append(t)
            keys = list(groups)
            texts = [" ".join(t.content for t in groups[k]) for k in keys]
            means = np.stack([_unit(np.mean([ctx["vecs"][t.dia_id] for t in groups[k]], axis=0)) for k in keys])
            ctx["sessions"] = keys, Bm25Baseline(texts), means
        keys, bm25, means = ctx["sessions"]
        lexical, cosine = bm25.scores(q), means @ _unit(qv)
        fused = {k: 0.5 * half_score(lexical.get(i, 0.0)) + 0.5 * max(0.0, float(cosine[i]))
                 for i, k in enumerate(keys)}
        place = {k: i for i, k in enumerate(sorted(fused, key=lambda k: (-fused[k], str(k))))}
        return _rrf(_order(_scores(ctx, q, qv, now)), {m: place[s] for m, s in ctx["session"].items()}, weight)
    return rank


def candidate_sessions(weight: float) -> Ranker:
    """The same from the candidates alone (what a search has in hand): a session is the candidates
    with one `captured_at`; lexical = half_score(sum of their lexical signals: BM25 when measured, shares
    since issue 54), semantic = their mean cosine."""
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        found = _search(ctx, q, qv)
        groups: dict[Any, tuple[list[float], list[float]]] = {}
        for lexical, cosine, at in zip(found.lexical, found.semantic, found.captured_at, strict=True):
            group = groups.setdefault(at, ([], []))
            group[0].append(lexical)
            group[1].append(cosine or 0.0)
        fused = {at: 0.5 * half_score(sum(lx)) + 0.5 * max(0.0, sum(cs) / len(cs))
                 for at, (lx, cs) in groups.items()}
        place = {at: i for i, at in enumerate(sorted(fused, key=lambda a: -fused[a]))}
        at_of = dict(zip(found.ids, found.captured_at, strict=True))
        scores = {h.memory_id: h.score for h in scoring.fuse(found, top_k=DEPTH * 4, now=now)}
        return _rrf(_order(scores), {m: place[a] for m, a in at_of.items()}, weight)
    return rank


def entities(weight: float) -> Ranker:
    """Entity-centric: the hits sharing an entity with the question (the heuristic extractor on both),
    in fused order, as a second list."""
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        asked = {e.name.casefold() for e in ctx["extractor"].extract(q).entities}
        order = _order(_scores(ctx, q, qv, now))
        sharing = [m for m in order if asked & ctx["entities"].get(m, set())]
        return _rrf(order, {m: i for i, m in enumerate(sharing)}, weight)
    return rank


AGGREGATE = re.compile(r"\b(how many|total|all|different|times|ways|ever|each|every)\b", re.I)


def diversity(delta: float, gated: bool) -> Ranker:
    """Greedy: a hit's score × delta^(hits of its session already placed); `gated`: only for questions
    that aggregate ("how many", "total", "all", ...)."""
    def rank(ctx: dict[str, Any], q: str, qv: list[float], now: Any) -> list[str]:
        scores = _scores(ctx, q, qv, now)
        order = _order(scores)
        if gated and not AGGREGATE.search(q):
            return order[:DEPTH]
        session, placed, out = ctx["session"], dict[Any, int](), list[str]()
        left = {m: i for i, m in enumerate(order)}
        while left and len(out) < DEPTH:
            best = max(left, key=lambda m: (scores[m] * delta ** placed.get(session.get(m), 0), -left[m]))
            del left[best]
            out.append(best)
            placed[session.get(best)] = placed.get(session.get(best), 0) + 1
        return out
    return rank


VARIANTS: dict[str, Ranker] = {
    "shipped": shipped,
    "clauses, best score": clauses(1.0),
    "feedback .3 / 5, rrf .5": feedback(0.3, 5, 0.5),
    "feedback .7 / 3, rrf 1": feedback(0.7, 3, 1.0),
    **{f"session list rrf {w}": session_list(w) for w in (0.5, 1.0, 2.0)},
    **{f"candidate sessions rrf {w}": candidate_sessions(w) for w in (0.5, 1.0)},
    **{f"entities rrf {w}": entities(w) for w in (0.3, 1.0)},
    **{f"diversity {d}{', gated' if g else ''}": diversity(d, g) for d in (0.9, 0.8) for g in (False, True)},
}


def _context(conv: Any, embed: Embeddings, extractor: Any, *, k: int) -> dict[str, Any]:
    """What a ranker may read: the index, the turns, their vectors, sessions and entities."""
    vectors = np.asarray(embed([t.content for t in conv.turns]), dtype=np.float32)
    return {"k": k, "index": build(conv, SHIPPED, embed, extractor), "turns": conv.turns, "embed": embed,
            "vecs": dict(zip([t.dia_id for t in conv.turns], vectors, strict=True)), "extractor": extractor,
            "texts": {t.dia_id: extractor.extract(t.content).normalized_text for t in conv.turns},
            "session": {t.dia_id: t.session for t in conv.turns},
            "entities": {t.dia_id: {e.name.casefold() for e in extractor.extract(t.content).entities}
                         for t in conv.turns}}


def arguments(description: str) -> argparse.ArgumentParser:
    """The options every round's script takes (rounds 4 and 5 reuse it): variants, and the two dev files."""
    parser = argparse.ArgumentParser(description=description.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated variant names")
    parser.add_argument("--locomo", type=Path, default=REPO.parent / "shared" / "bench" / "locomo-dev.json")
    parser.add_argument("--longmemeval", type=Path,
                        default=REPO.parent / "shared" / "bench" / "longmemeval-s-dev.json.gz")
    return parser


def run(variants: dict[str, Ranker], args: argparse.Namespace) -> int:
    """`measure` over the variants `--only` names (all of them without it)."""
    measure({n: r for n, r in variants.items() if not args.only or n in args.only.split(",")}, args.locomo,
            args.longmemeval)
    return 0


def main() -> int:
    parser = arguments(__doc__)
    parser.add_argument("--stem", default="", help="a Snowball algorithm (porter, english): stem the local index's tokens")
    args = parser.parse_args()
    if args.stem:
        import snowballstemmer  # type: ignore[import-not-found]

        from mnemo.adapters.local import index as local_index
        from mnemo.domain import text

        stem = functools.lru_cache(maxsize=None)(snowballstemmer.stemmer(args.stem).stemWord)
        local_index.tokenize = lambda s: [stem(w) for w in text.tokenize(s)]  # type: ignore[assignment]
    return run(VARIANTS, args)


def measure(chosen: dict[str, Ranker], locomo_path: Path, longmemeval_path: Path) -> None:
    """Prints one row per ranker: LoCoMo dev and LongMemEval dev, in the same run (round 4 reuses it)."""
    extractor = lme.CachedExtractor()
    embed = Embeddings(REPO / "bench" / "results" / "locomo-minilm.npz")
    conversations, _ = load_locomo(str(locomo_path))
    locomo = []
    for conv in conversations:
        questions = [q for q in conv.questions if q.category in HEADLINE_CATEGORIES]
        locomo.append((_context(conv, embed, extractor, k=10), questions, embed([q.question for q in questions])))
    embed_lme = Embeddings(REPO / "bench" / "results" / "longmemeval-minilm.npz")
    questions, _ = lme.load(longmemeval_path)
    lme_contexts = [(_context(q, embed_lme, extractor, k=DEPTH), q, embed_lme([q.question])[0]) for q in questions]
    print(f"{'variant':<34}{'LoCoMo 1-4':>11}{'multi-hop':>10}{'temporal':>9}{'open-dom':>9}{'single':>8}"
          f"{'LME all@5':>10}{'multi':>7}{'temp':>7}{'s_all@5':>8}{'s_any@5':>8}{'all@10':>8}{'any@1':>7}")
    for name, ranker in chosen.items():
        start = time.perf_counter()
        scores = [score_question(ranker(ctx, q.question, qv, NOW)[:10], q.evidence, q.category)
                  for ctx, qs, qvs in locomo for q, qv in zip(qs, qvs, strict=True)]
        s = by_category(scores)
        rows = [(q.qtype, lme.score(ranker(ctx, q.question, qv, q.date), q)) for ctx, q, qv in lme_contexts]
        m = lme.summarise(rows)
        a = m["all"]
        print(f"{name:<34}{s[HEADLINE].recall_at_5:>11.3f}"
              + "".join(f"{s[str(c)].recall_at_5:>{w}.3f}" for c, w in zip(HEADLINE_CATEGORIES, (10, 9, 9, 8), strict=True))
              + f"{a['turn_all@5']:>10.3f}{m['multi-session']['turn_all@5']:>7.3f}"
              f"{m['temporal-reasoning']['turn_all@5']:>7.3f}{a['session_all@5']:>8.3f}{a['session_any@5']:>8.3f}"
              f"{a['turn_all@10']:>8.3f}{a['turn_any@1']:>7.3f}   ({time.perf_counter() - start:.0f} s)", flush=True)

if __name__ == "__main__":
    sys.exit(main())
