"""Throughput of LocalMiniLmEmbedder: one text per call vs batches of 32, in the same run.

    PYTHONPATH=shared python bench/embedder_bench.py [--model-dir DIR] [--texts N]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

SUBJECTS = ["The user", "Our billing service", "My manager", "The deploy pipeline", "Alice",
            "The on-call engineer", "This customer", "The search index", "Bob's team", "The agent"]
VERBS = ["prefers", "asked about", "migrated", "forgot", "reported a bug in", "wants to cancel",
         "scheduled a review of", "is allergic to", "renamed", "depends on"]
OBJECTS = ["dark mode", "the Frankfurt region", "oat milk in coffee", "the quarterly report",
           "two-factor authentication", "the legacy queue", "Python 3.12", "a vegetarian menu",
           "the load balancer health checks", "invoices in euros"]
TAILS = ["", " last week.", " because the old setup kept timing out under load.",
         " — remember this for every future conversation about travel plans and budgets.",
         (" after the incident in which a misconfigured probe drained every healthy instance "
          "for eleven minutes, and the team agreed to alert on ratios rather than counts.")]


def sentences(n: int, seed: int = 7) -> list[str]:
    """Varied lengths (a few to ~50 tokens), deterministic, so runs are comparable."""
    rng = random.Random(seed)
    return [f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}{rng.choice(TAILS)}"
            for _ in range(n)]


def rate(n: int, seconds: float) -> float:
    return n / seconds if seconds > 0 else float("inf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", default=os.environ.get("MNEMO_MODEL_DIR")
                        or str(REPO_ROOT / "models" / "minilm"))
    parser.add_argument("--texts", type=int, default=200)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO_ROOT / "shared"))  # runnable without PYTHONPATH=shared
    from mnemo.adapters.minilm_embedder import LocalMiniLmEmbedder

    texts = sentences(args.texts)
    embedder = LocalMiniLmEmbedder(args.model_dir, batch_size=32)

    start = time.perf_counter()
    embedder.embed(["warm-up"])
    cold = time.perf_counter() - start

    start = time.perf_counter()
    for text in texts:
        embedder.embed([text])
    single = rate(len(texts), time.perf_counter() - start)

    start = time.perf_counter()
    embedder.embed(texts)
    batched = rate(len(texts), time.perf_counter() - start)

    print(f"machine: {platform.platform()} | {platform.processor() or platform.machine()} | "
          f"cpus={os.cpu_count()} | python {platform.python_version()} | "
          f"load avg {os.getloadavg()[0]:.1f} (busy machines skew the numbers)")
    print(f"texts: {len(texts)} (avg {sum(map(len, texts)) / len(texts):.0f} chars) | "
          f"cold load + first embed: {cold:.2f} s")
    print(f"{'mode':<16}{'texts/s':>10}")
    print(f"{'one at a time':<16}{single:>10.1f}")
    print(f"{'batch of 32':<16}{batched:>10.1f}")
    print(f"{'ratio':<16}{batched / single:>10.2f}x")


if __name__ == "__main__":
    main()
