"""Score distributions behind the calibration in `mnemo.domain.scoring` (docs/scoring.md, issue 13).

On LoCoMo dev, ranked exactly as `ablation_locomo.py` ranks (the shipped recipe), it collects:
- relevant: scores of evidence turns among a question's top 10;
- irrelevant: scores of the other turns in that top 10 (hard negatives: the best wrong hits);
- unrelated: the top-10 scores of questions asked of *another* conversation (nothing there answers them);
- near-verbatim: the score of a turn when the query is its own text minus the last word (every 7th turn).
Prints percentiles of the calibrated and the raw (uncalibrated) score, recall@5 with and without the
thought tools' floor, and writes a histogram PNG. Run:
  PYTHONPATH=shared:. .venv/bin/python bench/score_calibration.py ../shared/bench/locomo-dev.json
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from bench.ablation_locomo import REPO, Embeddings, Variant, build, ranked, texts_of
from bench.locomo.metrics import HEADLINE, HEADLINE_CATEGORIES, by_category, score_question
from mnemo.adapters.local.heuristic_extractor import HeuristicExtractor
from mnemo.domain import scoring

OUT = Path(__file__).resolve().parent / "results" / "score_calibration.png"
PERCENTILES = (5, 25, 50, 75, 90, 95)


def table(title: str, groups: dict[str, list[float]], floor: float) -> None:
    print(f"\n{title}\n{'group':<14}{'n':>7}" + "".join(f"{f'p{p}':>7}" for p in PERCENTILES) + f"{'<floor':>9}")
    for name, values in groups.items():
        arr = np.asarray(values)
        below = float((arr < floor).mean()) if len(arr) else 0.0
        print(f"{name:<14}{len(arr):>7}" + "".join(f"{np.percentile(arr, p):>7.3f}" for p in PERCENTILES) + f"{below:>9.1%}")


def main() -> int:
    from bench.locomo.data import load

    conversations, _ = load(sys.argv[1])
    embed, extractor, variant = Embeddings(REPO / "bench" / "results" / "locomo-minilm.npz"), HeuristicExtractor(), Variant("default")
    groups: dict[str, list[float]] = {"relevant": [], "irrelevant": [], "unrelated": [], "near-verbatim": []}
    raw: dict[str, list[float]] = {name: [] for name in groups}
    plain, floored = [], []  # per question: recall@5 of the top 10, and of the top 10 cut at the floor

    def keep(name: str, hit: scoring.Ranked) -> None:
        groups[name].append(hit.score)
        raw[name].append(hit.components.get("raw", 0.0))  # a graph-lent neighbour has no own raw score

    for n, conv in enumerate(conversations):
        index, texts = build(conv, variant, embed, extractor), texts_of(conv, extractor)

        def search(text: str, vector: list[float], index=index, texts=texts) -> list[scoring.Ranked]:
            return ranked(index, texts, text, vector, variant, top_k=10)

        questions = [q for q in conv.questions if q.category in HEADLINE_CATEGORIES]
        for q, vector in zip(questions, embed([q.question for q in questions]), strict=True):
            hits = search(q.question, vector)
            for hit in hits:
                keep("relevant" if hit.memory_id in q.evidence else "irrelevant", hit)
            plain.append(score_question([h.memory_id for h in hits], q.evidence, q.category))
            above = [h.memory_id for h in hits if h.score >= scoring.RELEVANCE_FLOOR]
            floored.append(score_question(above, q.evidence, q.category))
        other = conversations[(n + 1) % len(conversations)]
        foreign = [q.question for q in other.questions if q.category in HEADLINE_CATEGORIES][:60]
        for text, vector in zip(foreign, embed(foreign), strict=True):
            for hit in search(text, vector):
                keep("unrelated", hit)
        turns = conv.turns[::7]
        queries = [" ".join(t.content.split()[:-1]) or t.content for t in turns]
        for turn, text, vector in zip(turns, queries, embed(queries), strict=True):
            for hit in search(text, vector):
                if hit.memory_id == turn.dia_id:
                    keep("near-verbatim", hit)
    table(f"calibrated score (knots {scoring.DEFAULT_WEIGHTS.calibration})", groups, scoring.RELEVANCE_FLOOR)
    floor_raw = next(x for x, y in scoring.DEFAULT_WEIGHTS.calibration if y >= scoring.RELEVANCE_FLOOR)
    table(f"raw weighted sum (the floor's knot: raw {floor_raw})", raw, floor_raw)
    for label, scores in (("recall@5", plain), ("recall@5, floor applied", floored)):
        summary = by_category(scores)
        print(f"{label:<24}" + " ".join(f"cat{c} {summary[str(c)].recall_at_5:.3f}" for c in HEADLINE_CATEGORIES)
              + f"  all {summary[HEADLINE].recall_at_5:.3f}")
    plot(groups)
    return 0


def plot(groups: dict[str, list[float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    bins = np.linspace(0, 1, 41)
    for name, values in groups.items():
        ax.hist(values, bins=bins, density=True, histtype="step", linewidth=1.6, label=f"{name} (n={len(values)})")
    ax.axvline(scoring.RELEVANCE_FLOOR, color="black", linestyle="--", linewidth=1, label=f"floor {scoring.RELEVANCE_FLOOR}")
    ax.axvline(0.9, color="grey", linestyle=":", linewidth=1, label="0.9")
    ax.set_xlabel("calibrated score")
    ax.set_ylabel("density")
    ax.set_title("LoCoMo dev: scores of top-10 hits by kind (shipped recipe)")
    ax.legend(fontsize=8)
    OUT.parent.mkdir(exist_ok=True)
    fig.tight_layout()
    fig.savefig(OUT, dpi=110)
    print(f"wrote {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    sys.exit(main())
