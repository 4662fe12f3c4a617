"""Fact evidence hit@5 (issue 29): does facts search answer the questions the statements exist for?

Every turn of a LoCoMo conversation (or every user turn of a LongMemEval question's haystack) is posted
as an episode (`POST /v1/episodes`, its session time as `captured_at`) into a group of its own, on a
fresh in-process local stack (the REST app, the worker draining the queue for real); then each question
is asked with `POST /v1/search` (`limit` 5, `threshold` 0: the ranking) in that group. A question is a hit when
some returned fact has an evidence turn among its episodes; the same with no threshold (the server's default
floor, issue 54) is reported beside it. Beside it, in the same run and over the same turns: plain BM25
(bench/locomo/baselines.py, `speaker: text`) hit@5. `--code DIR` measures another checkout's shared/
(a `git archive` export of the commit before) with this same script.

    PYTHONPATH=shared:. .venv/bin/python bench/fact_evidence.py --locomo ../shared/bench/locomo-dev.json \
        [--longmemeval ../shared/bench/longmemeval-s-dev.json.gz --lme-questions 8] [--conversations N] [--code DIR]

LoCoMo: categories 1-4 (bench/locomo/data.py normalises the evidence). LongMemEval: abstention questions and
questions with no user-side evidence turn are skipped; the first `--lme-questions` in file order are used
(each haystack is hundreds of turns: enrichment time bounds how many a run can afford).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def stack() -> Iterator[tuple[Any, dict[str, str]]]:
    """The REST app on a fresh local stack in this process, and the headers of its key."""
    from starlette.testclient import TestClient

    from mnemo.local.server import LocalStack
    from mnemo.surfaces.app import create_app

    with contextlib.redirect_stdout(sys.stderr):
        local = LocalStack(None)
        key = local.start()
        try:
            with TestClient(create_app(local.container)) as http:
                yield http, {"authorization": f"Bearer {key}"}
        finally:
            local.stop(forget=True)


# A fact said in more turns than this is a catch-all ("user was wondering", said in 40 requests): its hit is
# reported apart, as "specific" hits count only facts said in at most this many turns.
SPECIFIC_TURNS = 3


def run_case(turns: list[tuple[str, str, datetime]], questions: list[tuple[str, set[str]]],
             group: str) -> tuple[int, int, int, int, int]:
    """(fact hits, BM25 hits, questions, specific fact hits, fact hits at the default floor) of one conversation:
    turns are (turn id, text, said at)."""
    from bench.locomo.baselines import Bm25Baseline

    with stack() as (http, headers):
        episode_turn: dict[str, str] = {}
        for turn_id, text, said in turns:
            content = text.encode()[:8000].decode(errors="ignore")  # the 8 KB limit of a memory
            body = {"content": content, "group_id": group, "captured_at": said.isoformat()}
            response = http.post("/v1/episodes", json=body, headers=headers)
            response.raise_for_status()
            episode_turn[response.json()["episode"]["uuid"]] = turn_id
        start = time.perf_counter()
        while http.get("/v1/status", headers=headers).json().get("pending", 0):
            time.sleep(1.0)
        log(f"  {group}: {len(turns)} episodes enriched in {time.perf_counter() - start:.0f} s")
        bm25 = Bm25Baseline([text for _, text, _ in turns])
        fact_hits = bm25_hits = specific_hits = served_hits = 0
        for question, evidence in questions:
            # threshold 0: the top 5 whatever their scores, the ranking (issue 54's floor is read apart, below)
            edges = http.post("/v1/search", json={"query": question, "group_id": group, "limit": 5, "threshold": 0},
                              headers=headers).json()["edges"][:5]
            fact_hits += any(episode_turn.get(e) in evidence for edge in edges for e in edge["episodes"])
            specific_hits += any(episode_turn.get(e) in evidence for edge in edges for e in edge["episodes"]
                                 if len(edge["episodes"]) <= SPECIFIC_TURNS)
            bm25_hits += any(turns[i][0] in evidence for i in bm25.rank(question, 5))
            served = http.post("/v1/search", json={"query": question, "group_id": group, "limit": 5},
                               headers=headers).json()["edges"][:5]  # as an agent asks: the server's default floor
            served_hits += any(episode_turn.get(e) in evidence for edge in served for e in edge["episodes"])
    return fact_hits, bm25_hits, len(questions), specific_hits, served_hits


def locomo_cases(path: str, limit: int | None) -> Iterator[tuple[str, list[tuple[str, str, datetime]], list[tuple[str, set[str]]]]]:
    from bench.locomo.data import load
    from bench.locomo.metrics import HEADLINE_CATEGORIES

    conversations, _ = load(path)
    for conv in conversations[:limit]:
        turns = [(t.dia_id, t.content, t.date) for t in conv.turns]
        questions = [(q.question, set(q.evidence)) for q in conv.questions if q.category in HEADLINE_CATEGORIES]
        yield conv.sample_id, turns, questions


def longmemeval_cases(path: str, limit: int) -> Iterator[tuple[str, list[tuple[str, str, datetime]], list[tuple[str, set[str]]]]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        items = json.load(fh)
    taken = 0
    for item in items:
        if item["question_id"].endswith("_abs") or taken >= limit:
            continue
        sessions = sorted(zip(item["haystack_dates"], item["haystack_sessions"], strict=True),
                          key=lambda pair: datetime.strptime(pair[0][:10] + pair[0][-5:], "%Y/%m/%d%H:%M"))
        turns, evidence = [], set()
        for s, (when, session) in enumerate(sessions):
            said = datetime.strptime(when[:10] + when[-5:], "%Y/%m/%d%H:%M").replace(tzinfo=UTC)
            for t, turn in enumerate(session):
                if turn["role"] != "user":
                    continue
                turns.append((f"{s}:{t}", turn["content"], said))
                if turn.get("has_answer"):
                    evidence.add(f"{s}:{t}")
        if evidence:
            taken += 1
            yield item["question_id"], turns, [(item["question"], evidence)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", help="LoCoMo JSON (dev split)")
    parser.add_argument("--conversations", type=int, help="only the first N LoCoMo conversations")
    parser.add_argument("--longmemeval", help="LongMemEval_S JSON.gz (dev split)")
    parser.add_argument("--lme-questions", type=int, default=8)
    parser.add_argument("--code", type=Path, default=REPO, help="the checkout whose shared/ is measured")
    parser.add_argument("--cases", type=Path, help="append each case's result here (JSON lines), so a cut run still counts")
    args = parser.parse_args()
    sys.path[:0] = [str(args.code / "shared"), str(REPO)]
    os.environ.update({"POWERTOOLS_LOG_LEVEL": "ERROR", "POWERTOOLS_METRICS_DISABLED": "true",
                       "MNEMO_MODEL_DIR": str(REPO / "models" / "minilm")})
    suites = []
    if args.locomo:
        suites.append(("LoCoMo dev", locomo_cases(args.locomo, args.conversations)))
    if args.longmemeval:
        suites.append(("LongMemEval_S dev", longmemeval_cases(args.longmemeval, args.lme_questions)))
    print(f"code: {args.code}")
    for name, cases in suites:
        totals = [0, 0, 0, 0, 0]
        start = time.perf_counter()
        for group, turns, questions in cases:
            result = run_case(turns, questions, group.replace("_", "-")[:60])
            log(f"  {group}: fact hits {result[0]} (specific {result[3]}; at the default floor {result[4]}), "
                f"BM25 hits {result[1]}, of {result[2]}")
            if args.cases:
                with args.cases.open("a", encoding="utf-8") as out:
                    out.write(json.dumps({"suite": name, "case": group, "facts": result[0], "bm25": result[1],
                                          "questions": result[2], "specific": result[3], "served": result[4]}) + "\n")
            totals = [a + b for a, b in zip(totals, result, strict=True)]
        facts, bm25, n, specific, served = totals
        print(f"{name}: {n} questions; fact evidence hit@5 {facts / n:.3f} ({facts}); of them by a fact said in at most "
              f"{SPECIFIC_TURNS} turns {specific / n:.3f} ({specific}); at the default floor {served / n:.3f} ({served}); "
              f"BM25 hit@5 {bm25 / n:.3f} ({bm25}); {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
