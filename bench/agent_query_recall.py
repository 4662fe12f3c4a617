"""What `/mcp` `retrieve_thoughts` returns with its defaults on the agent-query set, in process, in seconds.

Each store of bench/agent_queries/ becomes one user's index, built as bench/ablation_locomo.py builds
LoCoMo's (the worker's pieces: heuristic extractor, MiniLM, links), each memory captured an hour after
the one before; a query is ranked as `MemorySearch` ranks (`ablation_locomo.ranked`), then the
default threshold applies. Reported per class, dev and held-out apart: the share of queries whose
answering memory (any named one) is in `results`, in the top 10 with no threshold, and in `results`
or `weaker`; the reciprocal rank of the first answer in the top 10 with no threshold (what r3's
`search_memory` and Thrindex's `search_memories` show: top-k, no floor); for never-said queries, the
share with empty `results`. `--buried` adds 2,000 LoCoMo dev
turns to every store's user (the first conversations' turns, a week before the store's memories).
Decide mechanisms here; bench/agent_queries.py measures the same through the official MCP client.

    PYTHONPATH=shared:. .venv/bin/python bench/agent_query_recall.py [--buried] [--show CLASS] [--heldout]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import sys
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench.ablation_locomo import NOW, Embeddings, Variant, build, ranked  # noqa: E402
from bench.locomo.data import load as load_locomo  # noqa: E402
from mnemo.adapters.local.heuristic_extractor import HeuristicExtractor  # noqa: E402
from mnemo.domain import scoring  # noqa: E402

SET = REPO / "bench" / "agent_queries"
LOCOMO = Path("/work/shared/bench/locomo-dev.json")
CLASSES = ("keyword", "phrase", "question", "paraphrase", "never_said")
FILLER = 2000
TOP_K = 10
WEAKER = 3


@dataclass(frozen=True)
class _Turn:  # what ablation_locomo.build reads of a turn: each memory its own session (no predecessor)
    session: int
    dia_id: str
    content: str
    date: datetime


@dataclass(frozen=True)
class _Store:
    turns: list[_Turn]


def heldout_keys() -> set[str]:
    return set((SET / "heldout.txt").read_text().split())


def key_of(query: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(query, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                          .encode()).hexdigest()


def stores() -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(SET.glob("*.json"))]


def filler_turns() -> list[_Turn]:
    turns = [t for conv in load_locomo(LOCOMO)[0] for t in conv.turns][:FILLER]
    start = NOW - timedelta(days=60)
    return [_Turn(i, f"filler-{i}", t.content, start + timedelta(minutes=i)) for i, t in enumerate(turns)]


def store_turns(store: dict[str, Any], offset: int) -> list[_Turn]:
    start = NOW - timedelta(hours=len(store["memories"]) + 1)
    return [_Turn(offset + i, m["id"], m["text"], start + timedelta(hours=i)) for i, m in enumerate(store["memories"])]


def evaluate(variant: Variant, *, buried: bool, embed: Embeddings, extractor: HeuristicExtractor,
             threshold: float = scoring.RELEVANCE_FLOOR, show: str = "") -> dict[str, dict[str, list[float]]]:
    """Per split ("dev", "held-out") and class: one 0/1 per query for each measure."""
    held = heldout_keys()
    filler = filler_turns() if buried else []
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for store in stores():
        turns = filler + store_turns(store, len(filler))
        index = build(_Store(turns), variant, embed, extractor)
        texts = {t.dia_id: extractor.extract(t.content).normalized_text for t in turns}
        queries = store["queries"]
        vectors = embed([q["text"] for q in queries])
        for q, vector in zip(queries, vectors, strict=True):
            hits = ranked(index, texts, q["text"], vector, variant, top_k=TOP_K + WEAKER + 5)
            passed = [h for h in hits if h.score >= threshold][:TOP_K]
            below = [h for h in hits if h.score < threshold][:WEAKER] if len(passed) < TOP_K else []
            split = "held-out" if key_of(q) in held else "dev"
            cls = q["class"]
            if cls == "never_said":
                out[split][f"{cls} empty"].append(float(not passed))
            else:
                answers = set(q["answers"])
                found = float(bool(answers & {h.memory_id for h in passed}))
                out[split][f"{cls} in results"].append(found)
                out[split][f"{cls} top10"].append(float(bool(answers & {h.memory_id for h in hits[:TOP_K]})))
                out[split][f"{cls} results+weaker"].append(float(bool(answers & {h.memory_id for h in passed + below})))
                # r3 search_memory and Thrindex search_memories show the top k with no floor: where the answer stands
                rank = next((i for i, h in enumerate(hits[:TOP_K], start=1) if h.memory_id in answers), None)
                out[split][f"{cls} MRR@10"].append(1.0 / rank if rank else 0.0)
                if show == cls and not found:
                    best = {h.memory_id: h.score for h in hits}
                    print(f"  miss {q['id']} {q['text']!r}: answers {[(a, round(best.get(a, -1), 3)) for a in answers]}"
                          f" best {[(h.memory_id, round(h.score, 3)) for h in hits[:3]]}")
            if show == "never_said" and cls == "never_said" and passed:
                print(f"  said {q['id']} {q['text']!r}: {[(h.memory_id, round(h.score, 3)) for h in passed[:3]]}")
    return out


def table(name: str, results: dict[str, dict[str, list[float]]], splits: tuple[str, ...] = ("dev",)) -> str:
    lines = [f"{name}"]
    for split in splits:
        row = results[split]
        cells = [f"{m} {sum(v) / len(v):.3f} ({len(v)})" for m, v in row.items()]
        lines.append(f"  {split:9}" + " | ".join(cells))
    return "\n".join(lines)


VARIANTS = {"shipped": Variant("shipped")}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--buried", action="store_true", help=f"add {FILLER} LoCoMo dev turns to each store")
    parser.add_argument("--only", default="", help="comma-separated variant names")
    parser.add_argument("--show", default="", choices=("", *CLASSES), help="print the misses of one class")
    parser.add_argument("--heldout", action="store_true", help="also the held-out third (report, never tune on it)")
    parser.add_argument("--cache", type=Path, default=REPO / "bench" / "results" / "agent-queries-minilm.npz")
    args = parser.parse_args()
    embed, extractor = Embeddings(args.cache), HeuristicExtractor()
    print(f"{platform.machine()}, CPython {platform.python_version()}; {len(stores())} stores"
          f"{', buried in ' + str(FILLER) + ' LoCoMo turns' if args.buried else ''}")
    for name, variant in VARIANTS.items():
        if args.only and name not in args.only.split(","):
            continue
        splits = ("dev", "held-out") if args.heldout else ("dev",)
        print(table(name, evaluate(variant, buried=args.buried, embed=embed, extractor=extractor, show=args.show), splits))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
