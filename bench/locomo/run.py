"""Run the LoCoMo retrieval benchmark: Mnemo (through its REST API) next to BM25 and dense baselines.

    PYTHONPATH=shared:. python -m bench.locomo.run ../shared/bench/locomo-dev.json
    PYTHONPATH=shared:. python -m bench.locomo.run DATA --via rest --url http://127.0.0.1:8000 --key mn_...

See bench/locomo/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from bench.locomo import data as locomo_data
from bench.locomo.baselines import Bm25Baseline, DenseBaseline
from bench.locomo.client import MnemoClient
from bench.locomo.metrics import by_category, latency_summary, score_question
from bench.locomo.report import (
    REPO,
    SYSTEMS,
    QuestionResult,
    format_machine,
    format_table,
    headline,
    machine_info,
    summaries_json,
    write_chart,
    write_failures,
    write_json,
)

if TYPE_CHECKING:
    from mnemo.ports import Embedder


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    parser = argparse.ArgumentParser(prog="python -m bench.locomo.run", description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="a LoCoMo JSON file, e.g. ../shared/bench/locomo-dev.json")
    parser.add_argument("--via", choices=["inprocess", "rest"], default="inprocess",
                        help="inprocess: start Mnemo's local stack in this process (default); rest: a running server")
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="--via rest: the server's base URL")
    parser.add_argument("--key", default=os.environ.get("MNEMO_API_KEY"),
                        help="--via rest: API key (default $MNEMO_API_KEY)")
    parser.add_argument("--conversations", default="", help="comma-separated sample_ids (default: all)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / f"locomo-{stamp}.json",
                        help="the JSON result; the PNG chart and the failure dump are written beside it")
    parser.add_argument("--top-k", type=int, default=10, help="results asked of every system (at least 10)")
    parser.add_argument("--user-prefix", default=None,
                        help="prepended to each sample_id to make its user_id (default: none in-process; "
                             "'locomo-<timestamp>-' with --via rest, so reruns against one server never mix)")
    parser.add_argument("--model-dir", default=os.environ.get("MNEMO_MODEL_DIR") or str(REPO / "models" / "minilm"),
                        help="MiniLM files for the dense baseline (and for Mnemo in-process)")
    parser.add_argument("--dump-failures", type=int, default=0, metavar="N",
                        help="write N questions per category where Mnemo's recall@5 is 0 (asks search for explain)")
    parser.add_argument("--shared-stack", action="store_true",
                        help="in-process: one stack for every conversation (default: a fresh stack per "
                             "conversation, same results, much faster on moto)")
    parser.add_argument("--enrich-timeout", type=float, default=3600.0, help="seconds to wait for pending == 0")
    args = parser.parse_args(argv)
    if args.top_k < 10:
        parser.error("--top-k must be at least 10 (recall@10 and hit@10 are reported)")
    if args.via == "rest" and not args.key:
        parser.error("--via rest needs --key or MNEMO_API_KEY")
    if args.user_prefix is None:
        args.user_prefix = f"locomo-{stamp}-" if args.via == "rest" else ""
    return args


@contextlib.contextmanager
def open_mnemo(args: argparse.Namespace) -> Iterator[MnemoClient]:
    """A client of the public REST API: of a running server, or of the app and a fresh stack in this process."""
    if args.via == "rest":
        with httpx.Client(base_url=args.url, timeout=120.0) as http:
            yield MnemoClient(http, args.key)
        return
    # Quiet in-process: no per-invocation metrics JSON or INFO logs from the worker on our stdout.
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    os.environ.setdefault("MNEMO_MODEL_DIR", args.model_dir)
    from starlette.testclient import TestClient

    from mnemo.local.server import LocalStack
    from mnemo.surfaces.app import create_app

    # Powertools prints EMF metrics (every 100 records, and the cold start) to stdout whatever
    # POWERTOOLS_METRICS_DISABLED says; keep stdout for the table and send the stack's output to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        stack = LocalStack(None)
        key = stack.start()
        try:
            with TestClient(create_app(stack.container)) as http:
                yield MnemoClient(http, key)
        finally:
            stack.stop(forget=True)  # the next conversation's stack starts from nothing


def sessions(
    args: argparse.Namespace, conversations: Sequence[locomo_data.Conversation]
) -> Iterator[tuple[locomo_data.Conversation, MnemoClient]]:
    """Each conversation with the client to use for it. In-process, each conversation gets a fresh
    stack unless --shared-stack: moto scans a whole table per DynamoDB Query, so one table holding
    every conversation makes enrichment several times slower, while the results cannot differ
    (search, the index partition and the graph are all per user_id)."""
    if args.via == "rest" or args.shared_stack:
        with open_mnemo(args) as client:
            for conversation in conversations:
                yield conversation, client
        return
    for conversation in conversations:
        with open_mnemo(args) as client:
            yield conversation, client


def ingest(client: MnemoClient, conversation: locomo_data.Conversation, user_id: str, timeout: float) -> dict[str, Any]:
    """Post every turn, then wait until enrichment has nothing pending."""
    start = time.perf_counter()
    client.ingest(user_id, conversation)
    posted = time.perf_counter() - start
    log(f"  {conversation.sample_id}: {len(conversation.turns)} turns posted in {posted:.1f} s")
    last = [0.0]

    def report(status: dict[str, Any], elapsed: float) -> None:
        if elapsed - last[0] >= 30 or status.get("pending") == 0:
            last[0] = elapsed
            log(f"  enrichment: pending {status.get('pending')}, failed {status.get('failed')} ({elapsed:.0f} s)")

    wait = client.wait_for_enrichment(poll_seconds=3.0, timeout_seconds=timeout, report=report)
    if wait.timed_out:
        log(f"  WARNING: enrichment still pending after {timeout:.0f} s; searching anyway")
    if wait.status.get("failed"):
        log(f"  WARNING: {wait.status['failed']} memories failed enrichment")
    return {
        "memories": len(conversation.turns),
        "post_seconds": round(posted, 2),
        "enrichment_wait_seconds": round(wait.seconds, 2),
        "enrichment_timed_out": wait.timed_out,
        "status": wait.status,
    }


def evaluate(args: argparse.Namespace, conversation: locomo_data.Conversation, client: MnemoClient,
             embedder: Embedder, user_id: str) -> list[QuestionResult]:
    """Mnemo's search for every question, then the baselines on the same turns and questions."""
    t0 = time.perf_counter()
    outcomes = [
        client.search(q.question, user_id, args.top_k, explain=args.dump_failures > 0) for q in conversation.questions
    ]
    searched = time.perf_counter() - t0
    t0 = time.perf_counter()
    turns = conversation.turns
    texts = [t.plain_text for t in turns]
    bm25 = Bm25Baseline(texts)
    dense = DenseBaseline(embedder.embed(texts))
    query_vectors = embedder.embed([q.question for q in conversation.questions])
    log(f"  {conversation.sample_id}: {len(outcomes)} searches in {searched:.1f} s; "
        f"baselines in {time.perf_counter() - t0:.1f} s")
    results: list[QuestionResult] = []
    for question, outcome, vector in zip(conversation.questions, outcomes, query_vectors, strict=True):
        ranked = {
            "mnemo": outcome.dia_ids[: args.top_k],
            "bm25": [turns[i].dia_id for i in bm25.rank(question.question, args.top_k)],
            "dense": [turns[i].dia_id for i in dense.rank(vector, args.top_k)],
        }
        scores = {s: score_question(ids, question.evidence, question.category) for s, ids in ranked.items()}
        results.append(QuestionResult(conversation, question, outcome, ranked, scores))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = datetime.now(UTC)
    wall = time.perf_counter()
    machine = machine_info()  # at the start: the commit is the code this run loads
    only = {c.strip() for c in args.conversations.split(",") if c.strip()} or None
    conversations, fixes = locomo_data.load(args.data, only)
    n_questions = sum(len(c.questions) for c in conversations)
    log(f"LoCoMo: {len(conversations)} conversations, {sum(len(c.turns) for c in conversations)} turns, "
        f"{n_questions} questions; evidence fixes: split {fixes.split_joined}, extra colon {fixes.extra_colon}, "
        f"zero-padded {fixes.zero_padded}, dropped {fixes.dropped_unknown} {fixes.dropped}, "
        f"duplicates {fixes.duplicates}, questions skipped {fixes.questions_skipped}")
    log(f"Mnemo via {args.via}" + (f" at {args.url}" if args.via == "rest" else ""))
    from mnemo.adapters.local.minilm_embedder import LocalMiniLmEmbedder

    embedder = LocalMiniLmEmbedder(args.model_dir)  # the dense baseline's, loaded once
    ingestion: dict[str, dict[str, Any]] = {}
    results: list[QuestionResult] = []
    for conversation, client in sessions(args, conversations):
        user_id = args.user_prefix + conversation.sample_id
        ingestion[conversation.sample_id] = ingest(client, conversation, user_id, args.enrich_timeout)
        results += evaluate(args, conversation, client, embedder, user_id)
    posted = sum(i["post_seconds"] for i in ingestion.values())
    waited = sum(i["enrichment_wait_seconds"] for i in ingestion.values())
    failed = sum(int(i["status"].get("failed", 0)) for i in ingestion.values())
    summaries = {system: by_category(r.scores[system] for r in results) for system in SYSTEMS}
    latency = latency_summary([r.mnemo.seconds for r in results])
    machine["load_avg_1m_at_end"] = machine_info().get("load_avg_1m")
    wall_seconds = time.perf_counter() - wall

    print(format_table(summaries, latency))
    print(format_machine(machine))
    print(f"conversations: {', '.join(c.sample_id for c in conversations)} | via {args.via} | "
          f"ingest {posted:.0f} s + enrichment wait {waited:.0f} s (failed {failed}) | wall {wall_seconds:.0f} s")

    out: Path = args.out
    chart = out.with_suffix(".png")
    document = {
        "benchmark": "locomo-retrieval",
        "started": started.isoformat(),
        "wall_seconds": round(wall_seconds, 1),
        "via": args.via,
        "url": args.url if args.via == "rest" else None,
        "data": {
            "path": str(args.data),
            "conversations": [c.sample_id for c in conversations],
            "turns": sum(len(c.turns) for c in conversations),
            "questions": n_questions,
            "evidence_fixes": fixes.as_dict(),
        },
        "top_k": args.top_k,
        "user_prefix": args.user_prefix,
        "machine": machine,
        "shared_stack": args.shared_stack,
        "ingestion": {"post_seconds": round(posted, 2), "enrichment_wait_seconds": round(waited, 2), "failed": failed,
                      "per_conversation": ingestion},
        "metrics": summaries_json(summaries),
        "latency": {"mnemo_search": latency},
        "questions": [r.record() for r in results],
    }
    write_json(out, document)
    log(f"results: {out}")
    title = f"LoCoMo recall@5 ({', '.join(c.sample_id for c in conversations)}; {n_questions} questions)"
    if write_chart(chart, summaries, title if len(title) < 90 else f"LoCoMo recall@5 ({n_questions} questions)"):
        log(f"chart: {chart}")
    else:
        log("chart skipped: matplotlib is not installed (pip install -r bench/requirements.txt)")
    if args.dump_failures > 0:
        dump = out.with_name(out.stem + ".failures.md")
        written = write_failures(dump, results, args.dump_failures)
        log(f"failures: {written} questions in {dump}")
    log(f"recall@5 over categories 1-4: {headline(summaries)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
