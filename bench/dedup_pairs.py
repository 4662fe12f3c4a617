"""The labelled duplicate pairs (tests/data/dedup_pairs.jsonl) through the shipped local MiniLM: how
many distinct pairs each decision merges and how many repeats it catches, on the development pairs
and on the held-out third (frozen by hash before the rule was written; tests/unit/test_dedup_pairs.py).

    PYTHONPATH=shared:. .venv/bin/python bench/dedup_pairs.py [--model-dir DIR] [--pairs PATH] [--show] [--kinds]
        [--cosines] [--locomo DATA]

Decisions: "cosine" is the old one (same content hash, or cosine at or above the threshold);
"rule" is mnemo.domain.duplicates.same_memory (the same hash, or the cosine and no distinguishing
token differing). Thresholds: 0.92 (add_memory's) and 0.85 (deduplicate_memories' default).
`--pairs PATH` reads another pair file of the same format and hold-out rule (e.g.
tests/data/dedup_strict_pairs.jsonl); `--kinds` also counts the distinct pairs merged per kind;
`--cosines` lists every pair's cosine and whether each decision merges it.
`--locomo DATA` (e.g. ../shared/bench/locomo-dev.json) also counts, over every pair of the distinct
conversation turns (unlabelled), the pairs at each threshold and at 0.75 on which the opposites rule
fires: what the antonym list costs on real chat.
"""

from __future__ import annotations

import argparse
import operator
import os
import platform
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
THRESHOLDS = (0.92, 0.85)


def cosines(pairs: list[dict[str, Any]], model_dir: str) -> list[float]:
    from mnemo.adapters.local.minilm_embedder import LocalMiniLmEmbedder

    texts = sorted({t for p in pairs for t in (p["a"], p["b"])})
    vectors = dict(zip(texts, LocalMiniLmEmbedder(model_dir, batch_size=32).embed(texts), strict=True))
    return [sum(map(operator.mul, vectors[p["a"]], vectors[p["b"]])) for p in pairs]


def decide(pair: dict[str, Any], cosine: float, threshold: float, rule: bool) -> bool:
    from mnemo.domain.duplicates import same_memory
    from mnemo.domain.models import content_hash

    same_hash = content_hash(pair["a"]) == content_hash(pair["b"])
    if rule:
        return same_memory(pair["a"], pair["b"], same_hash=same_hash, cosine=cosine, threshold=threshold)
    return same_hash or cosine >= threshold


def merged_by_kind(pairs: list[dict[str, Any]], scores: list[float]) -> None:
    decisions = [(rule, threshold) for rule in (False, True) for threshold in THRESHOLDS]
    print(f"    {'kind':<22} {'n':>3} " + " ".join(f"{('rule' if r else 'cosine') + f' {t:.2f}':>11}" for r, t in decisions))
    for kind in sorted({p["kind"] for p in pairs if p["label"] == "distinct"}):
        chosen = [(p, s) for p, s in zip(pairs, scores, strict=True) if p["kind"] == kind]
        counts = [sum(decide(p, s, t, r) for p, s in chosen) for r, t in decisions]
        print(f"    {kind:<22} {len(chosen):>3} " + " ".join(f"{c:>11}" for c in counts))


def figures(pairs: list[dict[str, Any]], scores: list[float], threshold: float, rule: bool) -> dict[str, Any]:
    merged = [decide(p, s, threshold, rule) for p, s in zip(pairs, scores, strict=True)]
    distinct = [m for p, m in zip(pairs, merged, strict=True) if p["label"] == "distinct"]
    exact = [m for p, m in zip(pairs, merged, strict=True) if p["kind"] == "exact_repeat"]
    para = [m for p, m in zip(pairs, merged, strict=True) if p["kind"] == "paraphrase"]
    wrong = [p for p, m in zip(pairs, merged, strict=True) if m and p["label"] == "distinct"]
    return {"distinct_merged": sum(distinct), "distinct": len(distinct), "exact_recall": sum(exact) / len(exact),
            "paraphrase_recall": sum(para) / len(para), "paraphrases": len(para), "wrong": wrong}


def locomo_opposites(path: str, model_dir: str) -> None:
    import json

    import numpy as np

    from mnemo.adapters.local.minilm_embedder import LocalMiniLmEmbedder
    from mnemo.domain.opposites import opposite, reversed_preference

    turns = sorted({t["text"] for c in json.loads(Path(path).read_text(encoding="utf-8"))
                    for k, session in c["conversation"].items() if k.startswith("session_") and isinstance(session, list)
                    for t in session if t.get("text")})
    vectors = np.array(LocalMiniLmEmbedder(model_dir, batch_size=64).embed(turns))
    rows, cols = np.triu_indices(len(turns), 1)
    scores = (vectors @ vectors.T)[rows, cols]
    print(f"LoCoMo: {len(turns)} distinct turns")
    for threshold in (*THRESHOLDS, 0.75):
        close = [(turns[rows[k]], turns[cols[k]]) for k in np.flatnonzero(scores >= threshold)]
        fired = [(a, b, opposite(a, b) or reversed_preference(a, b)) for a, b in close]
        fired = [f for f in fired if f[2]]
        print(f"  cosine >= {threshold:.2f}: {len(close)} pairs, opposites fire on {len(fired)}")
        for a, b, why in fired:
            print(f"    {why}: {a[:80]!r} / {b[:80]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default=os.environ.get("MNEMO_MODEL_DIR") or str(REPO_ROOT / "models" / "minilm"))
    parser.add_argument("--pairs", metavar="PATH", type=Path, help="pair file (default tests/data/dedup_pairs.jsonl)")
    parser.add_argument("--show", action="store_true", help="list every distinct pair a decision merges")
    parser.add_argument("--kinds", action="store_true", help="distinct pairs merged per kind, per split and decision")
    parser.add_argument("--cosines", action="store_true", help="every pair's cosine and decisions")
    parser.add_argument("--locomo", metavar="DATA", help="also count what opposites fire on in LoCoMo turns")
    args = parser.parse_args()
    import mnemo.domain.duplicates
    from tests.unit.test_dedup_pairs import PAIRS, is_held_out, load_pairs

    pairs = load_pairs(args.pairs or PAIRS)
    scores = cosines(pairs, args.model_dir)
    print(f"{platform.machine()}, CPython {platform.python_version()}; {args.pairs or PAIRS}: {len(pairs)} pairs, "
          f"{sum(map(is_held_out, pairs))} held out; rule from {mnemo.domain.duplicates.__file__}")
    print(f"{'split':<9} {'decision':<8} {'threshold':>9} {'distinct merged':>16} {'exact recall':>13} {'paraphrase recall':>18}")
    for split, chosen in (("dev", [not is_held_out(p) for p in pairs]), ("held-out", [is_held_out(p) for p in pairs])):
        subset = [p for p, c in zip(pairs, chosen, strict=True) if c]
        sub_scores = [s for s, c in zip(scores, chosen, strict=True) if c]
        for rule in (False, True):
            for threshold in THRESHOLDS:
                f = figures(subset, sub_scores, threshold, rule)
                print(f"{split:<9} {'rule' if rule else 'cosine':<8} {threshold:>9.2f} "
                      f"{f['distinct_merged']:>7} of {f['distinct']:<6} {f['exact_recall']:>13.2f} "
                      f"{f['paraphrase_recall']:>11.2f} of {f['paraphrases']:<3}")
                if args.show:
                    for p in f["wrong"]:
                        print(f"    merged {p['kind']}: {p['a']!r} / {p['b']!r}")
        if args.kinds:
            print(f"  {split}: distinct pairs merged per kind")
            merged_by_kind(subset, sub_scores)
    if args.cosines:
        print("split     label      kind                   cosine  merged by cosine/rule at 0.92, 0.85")
        for p, s in zip(pairs, scores, strict=True):
            marks = " ".join("".join("M" if decide(p, s, t, r) else "." for r in (False, True)) for t in THRESHOLDS)
            split = "held-out" if is_held_out(p) else "dev"
            print(f"{split:<9} {p['label']:<10} {p['kind']:<22} {s:.3f}  {marks}  {p['a']!r} / {p['b']!r}")
    if args.locomo:
        locomo_opposites(args.locomo, args.model_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
