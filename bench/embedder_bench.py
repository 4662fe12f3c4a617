"""Throughput of LocalMiniLmEmbedder's engines (numpy, onnxruntime), in the same run: one text per
call, batches of 32, and batches of 32 while another Python thread is busy (the GIL's cost).

    PYTHONPATH=shared python bench/embedder_bench.py [--model-dir DIR] [--texts N] [--engines numpy,onnxruntime]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

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


def measure(embedder: Any, texts: list[str]) -> dict[str, float]:
    """Cold load, one text per call, batches of 32, and batches of 32 beside a busy Python thread
    (what the local stack's request threads are to its worker)."""
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

    stop = threading.Event()
    spins = [0]

    def busy() -> None:  # pure Python: holds the GIL whenever the embedder lets it go
        while not stop.is_set():
            spins[0] += 1

    thread = threading.Thread(target=busy)
    thread.start()
    start = time.perf_counter()
    embedder.embed(texts)
    elapsed = time.perf_counter() - start
    stop.set()
    thread.join()
    return {"cold": cold, "single": single, "batched": batched, "beside_busy": rate(len(texts), elapsed),
            "busy_spins_per_s": spins[0] / elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", default=os.environ.get("MNEMO_MODEL_DIR")
                        or str(REPO_ROOT / "models" / "minilm"))
    parser.add_argument("--texts", type=int, default=200)
    parser.add_argument("--engines", default="numpy,onnxruntime", help="comma-separated; the first is the baseline")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO_ROOT / "shared"))  # runnable without PYTHONPATH=shared
    from mnemo.adapters.local.minilm_embedder import LocalMiniLmEmbedder

    texts = sentences(args.texts)
    engines = args.engines.split(",")
    results = {e: measure(LocalMiniLmEmbedder(args.model_dir, batch_size=32, engine=e), texts)
               for e in engines}

    print(f"machine: {platform.platform()} | {platform.processor() or platform.machine()} | "
          f"cpus={os.cpu_count()} | python {platform.python_version()} | "
          f"load avg {os.getloadavg()[0]:.1f} (busy machines skew the numbers)")
    print(f"texts: {len(texts)} (avg {sum(map(len, texts)) / len(texts):.0f} chars); texts/s, ratio to {engines[0]}")
    base = results[engines[0]]
    rows = [("cold load + first embed (s)", "cold"), ("one at a time", "single"), ("batch of 32", "batched"),
            ("batch of 32 beside a busy thread", "beside_busy"), ("busy thread's loop (M/s)", "busy_spins_per_s")]
    print(f"{'':<34}" + "".join(f"{e:>22}" for e in engines))
    for label, key in rows:
        scale = 1e-6 if key == "busy_spins_per_s" else 1.0
        cells = "".join(f"{results[e][key] * scale:>12.2f} ({results[e][key] / base[key]:>5.2f}x)" for e in engines)
        print(f"{label:<34}{cells}")


if __name__ == "__main__":
    main()
