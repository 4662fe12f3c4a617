"""Local index at scale: search latency at 1k, 10k and 100k memories in one tenant, and with the
same 100k spread over 100 tenants, plus the memory the index holds. In process, no AWS.

Texts are drawn from a 5,000-word Zipf vocabulary (realistic posting-list skew); vectors are random
unit vectors of MiniLM's 384 dimensions (cosine cost does not depend on their content). BLAS runs on
one thread, as in the local stack (the MiniLM embedder sizes the pool when it loads, before any search).

    PYTHONPATH=shared .venv/bin/python bench/index_scale.py [--queries 200] [--cases 100000x1] [--code DIR]

`--code DIR` measures another checkout's `shared/` with this script (a baseline: `git archive <commit>
| tar -x -C DIR`); run it and this checkout one after the other for a same-run comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
CODE = Path(sys.argv[sys.argv.index("--code") + 1]) if "--code" in sys.argv else REPO  # before the imports below
sys.path.insert(0, str(CODE / "shared"))

from mnemo.adapters.local.index import LocalSearchIndex  # noqa: E402
from mnemo.domain.models import Status  # noqa: E402
from mnemo.domain.namespace import NamespaceFilter  # noqa: E402
from mnemo.domain.scoring import fuse  # noqa: E402
from mnemo.ports import IndexDocument, SearchQuery  # noqa: E402

NOW = datetime(2026, 11, 30, tzinfo=UTC)
rng = np.random.default_rng(7)
VOCAB = [f"w{i}" for i in range(5000)]
ZIPF = 1.0 / np.arange(1, len(VOCAB) + 1)
ZIPF /= ZIPF.sum()


def text(n_words: int = 14) -> str:
    return " ".join(rng.choice(VOCAB, size=n_words, p=ZIPF))


def unit(n: int) -> np.ndarray:
    v = rng.standard_normal((n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def build(total: int, tenants: int) -> tuple[LocalSearchIndex, float, float]:
    index = LocalSearchIndex()
    vectors = unit(total)
    rss_before = rss_mib()
    started = time.perf_counter()
    batch = []
    for i in range(total):
        # model_construct: the bench measures the index, not pydantic validating 384 floats per document
        batch.append(IndexDocument.model_construct(
            tenant=f"t{i % tenants}", memory_id=f"m{i}", user_id="u", author="user" if i % 3 else "agent",
            status=Status.OPEN if i % 10 else Status.COMPLETED, text=text(), context=text(6),
            entities=[], captured_at=NOW - timedelta(days=i % 400), created_at=NOW, importance=0.5,
            vector=vectors[i].tolist(), links={}, group_id="default", agent_id=None, version=1,
            embedding_model="bench", category=None,
        ))
        if len(batch) == 1000:
            index.upsert(batch)
            batch = []
    index.upsert(batch)
    seconds = time.perf_counter() - started
    return index, seconds, rss_mib() - rss_before


def rss_mib() -> float:
    """Resident memory of this process (Linux /proc), so the index's footprint is a before/after delta."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure(index: LocalSearchIndex, tenants: int, queries: int) -> dict[str, float]:
    vectors = unit(queries)
    latencies = []
    for q in range(queries):
        query = SearchQuery(scope=NamespaceFilter(tenant=f"t{q % tenants}", user_id="u"), text=text(6),
                            vector=vectors[q].tolist(), top_k=10)
        started = time.perf_counter()
        fuse(index.search(query), top_k=10, now=NOW)  # candidates, then the service's ranking
        latencies.append((time.perf_counter() - started) * 1000)
    latencies.sort()
    return {"p50_ms": round(statistics.median(latencies), 2), "p95_ms": round(latencies[int(0.95 * len(latencies)) - 1], 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cases", default="1000x1,10000x1,100000x1,100000x100", help="memories x tenants, comma-separated")
    parser.add_argument("--code", type=Path, default=REPO, help="the checkout whose shared/ is measured")
    parser.add_argument("--blas-threads", type=int, default=1, help="BLAS pool size (the local stack's: 1)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "index_scale.json")
    args = parser.parse_args()
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=args.blas_threads, user_api="blas")
    rows = []
    cases = [tuple(int(n) for n in case.split("x")) for case in args.cases.split(",")]
    print(f"code: {args.code.resolve()}, load average {os.getloadavg()[0]:.1f}", flush=True)
    for total, tenants in cases:
        index, build_s, mib = build(total, tenants)
        row = {"memories": total, "tenants": tenants, "per_tenant": total // tenants, "build_s": round(build_s, 1),
               "index_mib": round(mib, 1), **measure(index, tenants, args.queries)}
        rows.append(row)
        print(f"{total:>7,} memories, {tenants:>3} tenant(s): p50 {row['p50_ms']:>7.2f} ms  p95 {row['p95_ms']:>7.2f} ms  "
              f"index {row['index_mib']:>7.1f} MiB  (built in {row['build_s']} s)", flush=True)
        del index
    machine = (f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
               f"BLAS threads {args.blas_threads}, load average {os.getloadavg()[0]:.1f}")
    print(machine)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine, "code": str(args.code), "queries": args.queries, "rows": rows},
                                   indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
