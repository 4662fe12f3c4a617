"""Score distributions behind the calibration in `mnemo.domain.scoring` (docs/scoring.md, issue 13).

On LoCoMo dev, ranked exactly as `ablation_locomo.py` ranks (the shipped recipe), it collects:
- relevant: scores of evidence turns among a question's top 10;
- irrelevant: scores of the other turns in that top 10 (hard negatives: the best wrong hits);
- unrelated: the top-10 scores of questions asked of *another* conversation (nothing there answers them);
- near-verbatim: the score of a turn when the query is its own text minus the last word (every 7th turn).
Prints percentiles of the calibrated and the raw (uncalibrated) score, recall@5 with and without the
thought tools' floor, and writes a histogram PNG. Run:
  PYTHONPATH=shared:. .venv/bin/python bench/score_calibration.py ../shared/bench/locomo-dev.json

`--via rest --url URL --key KEY` measures a deployment's embedder instead (issue 54: the semantic threshold
is a property of the embedder, domain/semantic_thresholds.py): it captures LoCoMo dev conversations through
the public REST API (users `calib-<timestamp>-<sample_id>` of the key's tenant: erase them afterwards,
docs/erasure.md), asks each store its own questions and another conversation's with `explain`, and prints
the percentiles of the hits' raw cosine (`explain.cosine`), raw sum and score, with the table entry to
write. `--via local` runs the same against the local stack in this process (how it is tested here).
  PYTHONPATH=shared:. python bench/score_calibration.py ../shared/bench/locomo-dev.json --via rest \
      --url https://<api-id>.execute-api.<region>.amazonaws.com --key mn_... --model amazon.titan-embed-text-v2:0 --dimension 1024
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
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


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return in_process(args.data) if args.via == "inprocess" else through_rest(args)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/score_calibration.py", description=__doc__.splitlines()[0])
    parser.add_argument("data", help="a LoCoMo JSON file, e.g. ../shared/bench/locomo-dev.json")
    parser.add_argument("--via", choices=["inprocess", "rest", "local"], default="inprocess",
                        help="inprocess: the ablation index, as the knots were fitted (default); rest: a deployment "
                             "through its REST API; local: the same REST calls on the local stack in this process")
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="--via rest: the deployment's base URL")
    parser.add_argument("--key", default=os.environ.get("MNEMO_API_KEY"), help="--via rest: an API key (memory write/read)")
    parser.add_argument("--conversations", default="",
                        help="--via rest/local: comma-separated sample_ids to capture (default: all); each is asked "
                             "the next conversation's questions in the file as well as its own")
    parser.add_argument("--model", default=None, help="the deployment's embedding model id, for the table entry "
                        "(default: the template's, amazon.titan-embed-text-v2:0; MiniLM's with --via local)")
    parser.add_argument("--dimension", type=int, default=None, help="its dimension (default 1024; 384 with --via local)")
    parser.add_argument("--enrich-timeout", type=float, default=3600.0, help="seconds to wait for pending == 0")
    args = parser.parse_args(argv)
    if args.via == "rest" and not args.key:
        parser.error("--via rest needs --key or MNEMO_API_KEY")
    return args


def in_process(data: str) -> int:
    """The ablation index's ranking on LoCoMo dev, the shipped recipe with MiniLM (how the knots were fitted)."""
    from bench.locomo.data import load

    conversations, _ = load(data)
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


COSINE_PERCENTILES = (50, 90, 95, 99, 100)
MINILM_MARGIN = 0.09  # SEMANTIC_EVIDENCE 0.59 over the 0.50 the in-process run measured for MiniLM


def through_rest(args: argparse.Namespace) -> int:
    """The deployment's own distributions, through `POST /v1/memories/search` with `explain`: what its
    embedder's semantic threshold (domain/semantic_thresholds.py) must be measured on."""
    from bench.locomo.data import load
    from bench.locomo.run import ingest, log, open_mnemo

    conversations, _ = load(args.data)
    only = {c.strip() for c in args.conversations.split(",") if c.strip()}
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    # Per group, one row per top-10 hit: (cosine or None, lexical, raw sum, score).
    hits: dict[str, list[tuple[float | None, float, float, float]]] = {"relevant": [], "irrelevant": [], "unrelated": []}
    stack = argparse.Namespace(via="rest" if args.via == "rest" else "inprocess", url=args.url, key=args.key,
                               model_dir=os.environ.get("MNEMO_MODEL_DIR") or str(REPO / "models" / "minilm"))
    with open_mnemo(stack) as client:
        for n, conv in enumerate(conversations):
            if only and conv.sample_id not in only:
                continue
            user = f"calib-{stamp}-{conv.sample_id}"
            ingest(client, conv, user, args.enrich_timeout)
            other = conversations[(n + 1) % len(conversations)]
            own = [q for q in conv.questions if q.category in HEADLINE_CATEGORIES]
            foreign = [q.question for q in other.questions if q.category in HEADLINE_CATEGORIES][:60]
            for q in own:
                for hit in client.search(q.question, user, 10, explain=True).hits:
                    keep_hit(hits["relevant" if hit.dia_id in q.evidence else "irrelevant"], hit.explain or {}, hit.score)
            for text in foreign:
                for hit in client.search(text, user, 10, explain=True).hits:
                    keep_hit(hits["unrelated"], hit.explain or {}, hit.score)
            log(f"  {conv.sample_id}: {len(own)} own questions, {len(foreign)} of {other.sample_id}")
    if not hits["unrelated"]:
        print("no conversation searched (check --conversations)")
        return 1
    report_rest(hits, args)
    return 0


def keep_hit(rows: list[tuple[float | None, float, float, float]], explain: dict[str, float], score: float | None) -> None:
    rows.append((explain.get("cosine"), explain.get("lexical", 0.0), explain.get("raw", 0.0), score or 0.0))


def report_rest(hits: dict[str, list[tuple[float | None, float, float, float]]], args: argparse.Namespace) -> None:
    cosines = {name: [c for c, *_ in rows if c is not None] for name, rows in hits.items()}
    if not any(cosines.values()):
        print("the deployment's explain has no `cosine`: it predates issue 54's semantic threshold per embedder")
        return
    # The lift applies only to a hit that shares a word with the query (explain.lexical > 0).
    worded = {f"{name}, a word": [c for c, lexical, *_ in rows if c is not None and lexical > 0]
              for name, rows in hits.items()}
    print(f"\ncosine to the query (explain.cosine) of top-10 hits\n{'group':<22}{'n':>7}"
          + "".join(f"{'max' if p == 100 else f'p{p}':>7}" for p in COSINE_PERCENTILES))
    for name, values in {**cosines, **worded}.items():
        print(f"{name:<22}{len(values):>7}" + "".join(
            f"{np.percentile(values, p):>7.3f}" if values else f"{'-':>7}" for p in COSINE_PERCENTILES))
    floor_raw = next(x for x, y in scoring.DEFAULT_WEIGHTS.calibration if y >= scoring.RELEVANCE_FLOOR)
    table(f"raw weighted sum (explain.raw; the floor's knot: raw {floor_raw})",
          {name: [raw for _, _, raw, _ in rows] for name, rows in hits.items()}, floor_raw)
    table("score returned", {name: [score for *_, score in rows] for name, rows in hits.items()}, scoring.RELEVANCE_FLOOR)
    local = args.via == "local"
    model = args.model or ("sentence-transformers/all-MiniLM-L6-v2" if local else "amazon.titan-embed-text-v2:0")
    dimension = args.dimension or (384 if local else 1024)
    unrelated = cosines["unrelated"]
    top, p99 = max(unrelated), float(np.percentile(unrelated, 99))
    least = math.floor(top * 100) / 100 + 0.01  # the first 0.01 step above every unrelated hit measured
    value = round(top + MINILM_MARGIN, 2)  # MiniLM's margin over its own max
    print(f"\nUnrelated hits (another conversation's questions) reach cosine p99 {p99:.2f}, max {top:.2f}: the "
          f"threshold must sit above them, at least {least:.2f}. MiniLM's 0.59 sits {MINILM_MARGIN} above its max "
          f"(0.50 on LoCoMo dev; recall@5 swept 0.55-0.60), so this embedder's, with the same margin, is {value:.2f}.")
    print(f"Put in shared/mnemo/domain/semantic_thresholds.py SEMANTIC_THRESHOLDS (--model/--dimension must name "
          f"the deployment's embedder) and redeploy:\n"
          f"    ({model!r}, {dimension}): SemanticThreshold({model!r}, {dimension}, {value:.2f},\n"
          f"        \"LoCoMo dev via REST, {len(unrelated)} unrelated top-10 hits: cosine p99 {p99:.2f}, max {top:.2f}\"),")

if __name__ == "__main__":
    sys.exit(main())
