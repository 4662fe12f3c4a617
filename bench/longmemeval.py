"""LongMemEval_S retrieval at the turn level, LLM-free, with LongMemEval's official rules (issue 28).

The corpus of a question is its haystack's user turns (one memory per turn, captured at its session's
date; sessions sorted by date: the upstream order is not chronological). Abstention questions (`_abs`)
and questions with no user-side evidence turn are skipped. Reported per question type and overall:
turn recall_any/recall_all@{1,5,10} (some / every evidence turn in the top k) and session
recall_any/recall_all@{5,10} (the turn ranking read down until k distinct sessions are seen; an answer
session is one with a user evidence turn). BM25 over the same turns runs in the same run.

In process (default) the index is built straight from the turns with the ablation harness's pieces
(bench/ablation_locomo.py: `build`, `Variant`, `ranked`, the MiniLM cache), ranked as
`MemoryService.search` ranks: seconds per variant once the embeddings are cached (bench/results/).
Decide mechanisms here; quote the REST figures (`--via rest`: a running server; `--via local`: the
local stack in this process), which pass each question's `question_date` as `now` (and are also
reported without it).

Several data files may be given (issue 54: the 85 dev questions and the 171 of the extra file); a
question id seen twice is read once (the first file wins). The run states how many questions were
read, skipped (and why) and evaluated. Folds (issue 54): a question's fold is
`int(sha256(question_id).hexdigest()[:8], 16) % 4` (`fold_of`); after the variant table, turn
recall_all@5 of each variant overall and per fold, as a mean and as questions hit, and each variant's
gain in questions over the first one run (the shipped one): keep a mechanism when it gains overall
and loses no fold by more than two questions. The MiniLM cache is keyed by text (SHA-1), so one cache
file serves any set of data files. The run imports this tree's shared/: to measure committed code
while others edit the tree, run it from a `git archive HEAD` export with models/ and bench/results/
linked to this tree's.

    PYTHONPATH=shared:. .venv/bin/python bench/longmemeval.py ../shared/bench/longmemeval-s-dev.json.gz \
        ../shared/bench/longmemeval-s-dev-extra.json.gz --only "default (shipped)"
    PYTHONPATH=shared:. .venv/bin/python bench/longmemeval.py DATA --via rest --url https://... --key mn_... --limit 20
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench.ablation_locomo import FOLDS, Embeddings, Variant, build, fold_of, ranked, texts_of  # noqa: E402
from bench.locomo.baselines import Bm25Baseline  # noqa: E402
from mnemo.domain import scoring  # noqa: E402
from mnemo.domain.models import MAX_TEXT_BYTES  # noqa: E402

TURN_KS = (1, 5, 10)
SESSION_KS = (5, 10)
DEPTH = 50  # turns ranked per question: session recall@10 reads down until 10 distinct sessions
METRICS = tuple(f"turn_{m}@{k}" for k in TURN_KS for m in ("any", "all")) + tuple(
    f"session_{m}@{k}" for k in SESSION_KS for m in ("any", "all"))
SHORT = {"single-session-user": "ss-user", "single-session-assistant": "ss-asst",
         "single-session-preference": "ss-pref", "multi-session": "multi", "knowledge-update": "k-update",
         "temporal-reasoning": "temporal"}


@dataclass(frozen=True)
class Turn:
    """One user turn: one memory. `session` is the session's place in date order (the ablation
    harness links a turn to its predecessor in the same session)."""

    session: int
    session_id: str
    dia_id: str
    content: str
    date: datetime


@dataclass(frozen=True)
class Question:
    qid: str
    qtype: str
    question: str
    date: datetime
    turns: list[Turn]
    evidence: frozenset[str]  # dia_ids of the user turns with has_answer
    answer_sessions: frozenset[str] = field(default=frozenset())

    def session_of(self) -> dict[str, str]:
        return {t.dia_id: t.session_id for t in self.turns}


def parse_date(value: str) -> datetime:
    """`2023/05/20 (Sat) 02:21` -> an aware datetime (the data has no zone; read as UTC)."""
    return datetime.strptime(value.split(" (")[0] + " " + value.rsplit(" ", 1)[1], "%Y/%m/%d %H:%M").replace(tzinfo=UTC)


def cut(text: str, limit: int = MAX_TEXT_BYTES) -> str:
    """The first `limit` bytes of the trimmed text, never splitting a character."""
    text = text.strip()
    return text if len(text.encode()) <= limit else text.encode()[:limit].decode(errors="ignore").strip()


def read(path: Path) -> list[dict[str, Any]]:
    return json.loads(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_text())


def load(paths: str | Path | Sequence[str | Path]) -> tuple[list[Question], dict[str, int]]:
    """The evaluable questions of one data file or several, in file order; a question id already read
    is skipped (counted as `skipped_duplicate_id`)."""
    raw: list[dict[str, Any]] = []
    seen: set[str] = set()
    stats = {"questions": 0, "skipped_duplicate_id": 0, "skipped_abstention": 0, "skipped_no_user_evidence": 0,
             "turns_cut_to_8kb": 0}
    for path in [paths] if isinstance(paths, str | Path) else paths:
        for item in read(Path(path)):
            stats["questions"] += 1
            if item["question_id"] in seen:
                stats["skipped_duplicate_id"] += 1
                continue
            seen.add(item["question_id"])
            raw.append(item)
    questions = []
    for item in raw:
        if item["question_id"].endswith("_abs"):
            stats["skipped_abstention"] += 1
            continue
        sessions = sorted(zip(item["haystack_dates"], item["haystack_session_ids"], item["haystack_sessions"],
                              strict=True), key=lambda s: parse_date(s[0]))
        turns, evidence = [], set()
        for number, (date, sid, session) in enumerate(sessions):
            for index, turn in enumerate(session):
                if turn["role"] != "user" or not turn["content"].strip():
                    continue
                text = cut(turn["content"])
                stats["turns_cut_to_8kb"] += text != turn["content"].strip()
                turns.append(Turn(number, sid, f"{sid}:{index}", text, parse_date(date)))
                if turn.get("has_answer"):
                    evidence.add(turns[-1].dia_id)
        if not evidence:
            stats["skipped_no_user_evidence"] += 1
            continue
        sessions_of = {t.dia_id: t.session_id for t in turns}
        questions.append(Question(item["question_id"], item["question_type"], item["question"],
                                  parse_date(item["question_date"]), turns, frozenset(evidence),
                                  frozenset(sessions_of[d] for d in evidence)))
    stats["evaluated"] = len(questions)
    return questions, stats


def score(ranked: Sequence[str], q: Question) -> dict[str, float]:
    """The official metrics of one question from its turn ranking (best first)."""
    out: dict[str, float] = {}
    for k in TURN_KS:
        top = set(ranked[:k])
        out[f"turn_any@{k}"] = float(bool(q.evidence & top))
        out[f"turn_all@{k}"] = float(q.evidence <= top)
    session_of = q.session_of()
    seen = list(dict.fromkeys(session_of[d] for d in ranked))
    for k in SESSION_KS:
        top = set(seen[:k])
        out[f"session_any@{k}"] = float(bool(q.answer_sessions & top))
        out[f"session_all@{k}"] = float(q.answer_sessions <= top)
    return out


Row = tuple[str, dict[str, float]]  # (question type, metrics) of one question


def summarise(rows: Sequence[Row]) -> dict[str, dict[str, float]]:
    """Mean of every metric per question type and over all questions (`all`)."""
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    for qtype, metrics in rows:
        groups[qtype].append(metrics)
        groups["all"].append(metrics)
    return {g: {m: sum(r[m] for r in rs) / len(rs) for m in METRICS} | {"n": len(rs)} for g, rs in groups.items()}


def table(title: str, summary: dict[str, dict[str, float]]) -> str:
    order = [t for t in SHORT if t in summary] + ["all"]
    lines = [f"{title:<15}" + "".join(f"{SHORT.get(t, t) + ' (' + str(int(summary[t]['n'])) + ')':>15}" for t in order)]
    for m in METRICS:
        lines.append(f"{m:<15}" + "".join(f"{summary[t][m]:>15.3f}" for t in order))
    return "\n".join(lines)


def line(name: str, summary: dict[str, dict[str, float]]) -> str:
    """One variant's headline: overall metrics, then multi-session and temporal turn_all@5."""
    a = summary["all"]
    extra = "".join(f"{summary.get(t, {}).get('turn_all@5', float('nan')):>9.3f}" for t in
                    ("multi-session", "temporal-reasoning", "knowledge-update"))
    return f"{name:<54}" + "".join(f"{a[m]:>9.3f}" for m in METRICS) + extra


FOLD_METRIC = "turn_all@5"  # the headline the keep rule reads
FOLD_TYPES = ("multi-session", "temporal-reasoning")


def fold_counts(rows: dict[str, Row], qtype: str | None = None) -> list[tuple[int, int]]:
    """(questions hit, questions) of FOLD_METRIC overall, then per fold; of one question type if given."""
    chosen = {qid: m for qid, (t, m) in rows.items() if qtype is None or t == qtype}
    groups = [list(chosen)] + [[qid for qid in chosen if fold_of(qid) == f] for f in range(FOLDS)]
    return [(round(sum(chosen[qid][FOLD_METRIC] for qid in g)), len(g)) for g in groups]


def fold_table(results: list[tuple[str, dict[str, Row]]], name_width: int = 54) -> str:
    """Per variant, FOLD_METRIC overall and per fold (mean and questions hit/questions), then each
    variant's change in questions hit from the first variant (the reference: the shipped one), then
    the reference's multi-session and temporal figures per fold."""
    if not results:
        return ""

    def cells(counts: list[tuple[int, int]]) -> str:
        return "".join(f"{(h / n if n else float('nan')):.3f} {h:>3}/{n:<3}".rjust(16) for h, n in counts)

    sizes = fold_counts(results[0][1])
    lines = [f"{FOLD_METRIC + ', mean hits/n':<{name_width}}"
             + "".join(f"{label:>16}" for label in ["all"] + [f"fold {f}" for f in range(FOLDS)])]
    lines += [f"{name[:name_width]:<{name_width}}" + cells(fold_counts(rows)) for name, rows in results]
    if len(results) > 1:
        reference = fold_counts(results[0][1])
        lines.append(f"change in questions hit vs {results[0][0]!r} "
                     "(keep rule: gains overall, no fold loses more than 2)")
        for name, rows in results[1:]:
            deltas = [h - r for (h, _), (r, _) in zip(fold_counts(rows), reference, strict=True)]
            verdict = "passes" if deltas[0] > 0 and min(deltas[1:]) >= -2 else ""
            lines.append(f"{name[:name_width]:<{name_width}}" + "".join(f"{d:>+16d}" for d in deltas)
                         + f"  {verdict}")
    name, rows = results[0]
    for qtype in FOLD_TYPES:
        lines.append(f"{(name + ', ' + SHORT[qtype])[:name_width]:<{name_width}}" + cells(fold_counts(rows, qtype)))
    assert sum(n for _, n in sizes[1:]) == sizes[0][1]
    return "\n".join(lines)


HEADER = f"{'variant':<54}" + "".join(f"{m.replace('session_', 's_').replace('turn_', 't_'):>9}" for m in METRICS) + \
    f"{'multi@5':>9}{'temp@5':>9}{'kupd@5':>9}"  # the last three: turn_all@5 of those question types


# -- in process ----------------------------------------------------------------------------------
class CachedExtractor:
    """The heuristic extractor, memoised by text: every variant rebuilds every index."""

    def __init__(self) -> None:
        from mnemo.adapters.local.heuristic_extractor import HeuristicExtractor

        self._inner = HeuristicExtractor()
        self._seen: dict[str, Any] = {}

    def extract(self, text: str) -> Any:
        if text not in self._seen:
            self._seen[text] = self._inner.extract(text)
        return self._seen[text]


def rank_inprocess(q: Question, variant: Variant, embed: Embeddings, extractor: CachedExtractor, *,
                   use_now: bool = True) -> list[str]:
    index = build(q, variant, embed, extractor)
    (vector,) = embed([q.question])
    now = q.date if use_now else datetime.now(UTC)
    return [h.memory_id for h in ranked(index, texts_of(q, extractor), q.question, vector, variant, top_k=DEPTH, now=now)]


def rank_bm25(q: Question) -> list[str]:
    return [q.turns[i].dia_id for i in Bm25Baseline([t.content for t in q.turns]).rank(q.question, DEPTH)]


def evaluate(questions: Sequence[Question], ranker: Callable[[Question], list[str]]) -> dict[str, Row]:
    """Each question's type and metrics, by question id."""
    return {q.qid: (q.qtype, score(ranker(q), q)) for q in questions}


def warm(questions: Sequence[Question], embed: Embeddings, chunk: int = 2000) -> None:
    """Embed every turn and question once, in chunks (each chunk saves the cache)."""
    texts = list(dict.fromkeys([t.content for q in questions for t in q.turns] + [q.question for q in questions]))
    for start in range(0, len(texts), chunk):
        embed(texts[start:start + chunk])
        print(f"  embedded {min(start + chunk, len(texts))}/{len(texts)}", file=sys.stderr, flush=True)


def variants() -> list[Variant]:
    w, d = scoring.Weights, scoring.DEFAULT_WEIGHTS
    return [
        Variant("default (shipped)"),
        Variant("no repeat demotion (before round 4)", repeats=False),
        Variant("mode=fast (no graph expansion or repeat demotion)", expand=False, repeats=False),
        Variant("before issue 28: context holds the whole predecessor", previous_words=0),
        Variant("dense only", w(0, 1, 0, 0, length_pivot=0.0), context="", links=(), expand=False, repeats=False),
        Variant("no graph expansion", expand=False),
        Variant("no context field", context=""),
        Variant("context: date words only", context="date"),
        Variant("context: predecessor's last 4 words + date", previous_words=4),
        Variant("context: predecessor's last 8 words + date", previous_words=8),
        Variant("context: predecessor's last 10 words + date", previous_words=10),
        Variant("context: predecessor's last 15 words + date", previous_words=15),
        Variant("context boost .5 (last 6 words)", fields=(("text", 1.0), ("entities", 0.25), ("context", 0.5))),
        Variant("context boost .85 (last 6 words)", fields=(("text", 1.0), ("entities", 0.25), ("context", 0.85))),
        Variant("context: predecessor's last 30 words + date", previous_words=30),
        Variant("context: predecessor's last 60 words + date", previous_words=60),
        Variant("context: predecessor only if cosine >= .5", previous_min_cosine=0.5),
        Variant("lexical .45 / semantic .45", scoring.Weights(**{**d.__dict__, "lexical": 0.45, "semantic": 0.45})),
    ]


def run_inprocess(args: argparse.Namespace, questions: list[Question]) -> None:
    embed = Embeddings(args.cache)
    warm(questions, embed)
    extractor = CachedExtractor()
    chosen = [v for v in variants() if not args.only or v.name in args.only.split(",")]
    print(HEADER)
    start = time.perf_counter()
    bm25 = evaluate(questions, rank_bm25)
    print(line("bm25 (turn text)", summarise(list(bm25.values()))), flush=True)
    per_fold: list[tuple[str, dict[str, Row]]] = []
    for variant in chosen:
        start = time.perf_counter()
        rows = evaluate(questions, lambda q, v=variant: rank_inprocess(q, v, embed, extractor))
        print(line(variant.name, summarise(list(rows.values()))) + f"   ({time.perf_counter() - start:.0f} s)",
              flush=True)
        per_fold.append((variant.name, rows))
    without_now = evaluate(questions, lambda q: rank_inprocess(q, chosen[0], embed, extractor, use_now=False))
    print(line(f"{chosen[0].name}, without now", summarise(list(without_now.values()))))
    print()
    print(table("bm25", summarise(list(bm25.values()))))
    print(table(chosen[0].name[:12], summarise(list(per_fold[0][1].values()))))
    print()
    print(fold_table(per_fold + [(f"{chosen[0].name}, without now", without_now), ("bm25 (turn text)", bm25)]))


# -- through the public REST API ----------------------------------------------------------------
def run_rest(args: argparse.Namespace, questions: list[Question]) -> None:
    import httpx

    from bench.locomo.run import open_mnemo

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    rows: dict[str, dict[str, Row]] = {"with now": {}, "without now": {}, "bm25": {}}
    args.model_dir = os.environ.get("MNEMO_MODEL_DIR") or str(REPO / "models" / "minilm")
    via, args.via = args.via, "rest" if args.via == "rest" else "inprocess"  # open_mnemo's names
    with open_mnemo(args) as client:
        http: httpx.Client = client._http
        headers = client._headers
        for number, q in enumerate(questions, 1):
            user = f"lme-{stamp}-{q.qid}"
            for t in q.turns:
                body = {"content": t.content, "user_id": user, "metadata": {"turn": t.dia_id},
                        "captured_at": t.date.isoformat(), "as_user": True}
                if args.conversation_ids:  # the session each turn was said in (issue 28, round 10)
                    body["conversation_id"] = t.session_id
                response = http.post("/v1/memories", json=body, headers=headers)
                if response.status_code != 201:
                    raise RuntimeError(f"capture {t.dia_id}: {response.status_code} {response.text[:300]}")
            client.wait_for_enrichment(poll_seconds=2.0, timeout_seconds=args.enrich_timeout)
            for label, now in (("with now", q.date.isoformat()), ("without now", None)):
                body = {"query": q.question, "user_id": user, "top_k": DEPTH} | ({"now": now} if now else {})
                response = http.post("/v1/memories/search", json=body, headers=headers)
                if response.status_code != 200:
                    raise RuntimeError(f"search {q.qid}: {response.status_code} {response.text[:300]}")
                ranked = [(r.get("metadata") or {}).get("turn") for r in response.json()["results"]]
                rows[label][q.qid] = (q.qtype, score([r for r in ranked if r], q))
            rows["bm25"][q.qid] = (q.qtype, score(rank_bm25(q), q))
            print(f"  {number}/{len(questions)} {q.qid} ({len(q.turns)} turns)", file=sys.stderr, flush=True)
    print(HEADER)
    names = {label: f"{via} {label}" if label != "bm25" else "bm25 (turn text)" for label in rows}
    for label, result in rows.items():
        print(line(names[label], summarise(list(result.values()))))
    print()
    print(table("with now", summarise(list(rows["with now"].values()))))
    print()
    print(fold_table([(names[label], result) for label, result in rows.items()]))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, nargs="+", help="one or more LongMemEval files (ids read once)")
    parser.add_argument("--via", choices=["inprocess", "local", "rest"], default="inprocess",
                        help="inprocess: the ranking pieces (decide); local: the local stack's REST app in this "
                             "process; rest: a running server (--url, --key)")
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--key", default=os.environ.get("MNEMO_API_KEY"))
    parser.add_argument("--limit", type=int, default=0, help="the first N evaluable questions (REST on a subset)")
    parser.add_argument("--every", type=int, default=1, help="every K-th evaluable question (a subset across types)")
    parser.add_argument("--ids", default="", help="comma-separated question ids (a chosen subset)")
    parser.add_argument("--only", default="", help="comma-separated variant names (in process)")
    parser.add_argument("--cache", type=Path, default=REPO / "bench" / "results" / "longmemeval-minilm.npz")
    parser.add_argument("--enrich-timeout", type=float, default=1800.0)
    parser.add_argument("--no-conversation-ids", dest="conversation_ids", action="store_false",
                        help="REST: capture without naming each turn's session (as before issue 28, round 10)")
    args = parser.parse_args(argv)
    if args.via == "rest" and not args.key:
        parser.error("--via rest needs --key or MNEMO_API_KEY")
    questions, stats = load(args.data)
    questions = questions[:: max(1, args.every)]
    if args.ids:
        questions = [q for q in questions if q.qid in args.ids.split(",")]
    if args.limit:
        questions = questions[: args.limit]
    folds = [sum(fold_of(q.qid) == f for q in questions) for f in range(FOLDS)]
    print(f"LongMemEval: {', '.join(p.name for p in args.data)}: {stats}; evaluated {len(questions)} questions "
          f"(folds {' / '.join(map(str, folds))}), {sum(len(q.turns) for q in questions)} user turns",
          file=sys.stderr, flush=True)
    (run_inprocess if args.via == "inprocess" else run_rest)(args, questions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
