"""Ablations of Mnemo's retrieval mechanisms on LoCoMo, in seconds instead of minutes.

Builds the local index straight from the turns (no DynamoDB, no queue) with the same pieces the
worker uses — the heuristic extractor, the MiniLM embedder, `date_words`, the link rules and
`mnemo.domain.scoring.fuse` — then toggles one mechanism at a time. Use it to decide mechanisms;
quote the numbers of `bench/locomo/run.py`, which goes through the public API.

Issue 54: recall@5 over categories 1-4 is also reported per fold. A question's key is
`<sample_id>:<index>`, its index being its place in the sample's `qa` list (skipped questions keep
their place), and its fold is `int(sha256(key).hexdigest()[:8], 16) % 4` (`fold_of`, shared with
bench/longmemeval.py). Per fold the table gives the mean recall@5 and its sum over the fold's
questions ("questions' worth": a question with 2 of its 4 evidence turns in the top 5 counts 0.5),
and each variant's gain over the first one run (the shipped one), in those questions' worth. Keep a
mechanism when it gains overall and loses no fold by more than two questions.

    PYTHONPATH=shared:. .venv/bin/python bench/ablation_locomo.py ../shared/bench/locomo-dev.json
    PYTHONPATH=shared:. .venv/bin/python bench/ablation_locomo.py DATA --only "default (shipped),bm25 text only"
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import sys
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench.locomo.data import load  # noqa: E402
from bench.locomo.metrics import HEADLINE, HEADLINE_CATEGORIES, by_category, score_question  # noqa: E402
from mnemo import ports  # noqa: E402
from mnemo.adapters.local import index as local_index  # noqa: E402
from mnemo.adapters.local.heuristic_extractor import HeuristicExtractor  # noqa: E402
from mnemo.adapters.local.minilm_embedder import LocalMiniLmEmbedder  # noqa: E402
from mnemo.domain import query, scoring  # noqa: E402
from mnemo.domain.models import Status  # noqa: E402
from mnemo.domain.namespace import NamespaceFilter  # noqa: E402
from mnemo.domain.repeats import demote_repeats  # noqa: E402
from mnemo.domain.text import answers  # noqa: E402
from mnemo.ports import IndexDocument, SearchQuery  # noqa: E402
from mnemo.services.enrichment.pipeline import (  # noqa: E402
    ENTITY_LINK_WEIGHT,
    ENTITY_LINKS,
    PREVIOUS_CONTEXT_WORDS,
    SEMANTIC_LINK_MIN_COSINE,
    SEMANTIC_LINKS,
    SEQUENCE_LINK_WEIGHT,
    date_words,
)
from mnemo.services.memory.search import SPARE_HITS  # noqa: E402

NOW = datetime(2026, 11, 30, tzinfo=UTC)
SCOPE = NamespaceFilter(tenant="t", user_id="u")
FOLDS = 4


def fold_of(key: str, folds: int = FOLDS) -> int:
    """A question's fold (issue 54): the first 8 hex digits of the SHA-256 of its key, modulo `folds`."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % folds


class Embeddings:
    """MiniLM vectors cached on disk by text hash (the model is the slow part)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cache: dict[str, np.ndarray] = {}
        if path.exists():  # two arrays (keys, vectors): one zip member per text loads far slower
            data = np.load(path)
            self.cache = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
        self.model = LocalMiniLmEmbedder(REPO / "models" / "minilm")

    def __call__(self, texts: list[str]) -> list[list[float]]:
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        missing = [(k, t) for k, t in zip(keys, texts, strict=False) if k not in self.cache]
        if missing:
            for (k, _), v in zip(missing, self.model.embed([t for _, t in missing]), strict=False):
                self.cache[k] = np.asarray(v, dtype=np.float32)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # written aside, then renamed: an interrupted run never leaves a truncated cache
            temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            with temporary.open("wb") as out:
                np.savez(out, keys=np.asarray(list(self.cache)), vectors=np.stack(list(self.cache.values())))
            os.replace(temporary, self.path)
        return [self.cache[k].tolist() for k in keys]


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    weights: scoring.Weights = scoring.DEFAULT_WEIGHTS
    fields: tuple[tuple[str, float], ...] = tuple(ports.LEXICAL_FIELDS.items())
    context: str = "previous+date"  # "" | "date" | "previous" | "previous+date"
    links: tuple[str, ...] = ("sequence", "semantic", "entity")
    expand: bool = True
    embed_previous: bool = False  # embed "previous turn + this turn" instead of the turn alone
    previous_words: int = PREVIOUS_CONTEXT_WORDS  # context keeps the last N words of the previous turn (0: all)
    previous_min_cosine: float = -1.0  # the previous turn is context only if its cosine to this turn reaches this
    reply_words: int | None = None  # a reply (text.answers) keeps this many of its question's words instead (0: all)
    repeats: bool = True  # mode=full's repeat demotion (domain/repeats.py)


def build(conv, variant: Variant, embed: Embeddings, extractor: HeuristicExtractor):
    index = local_index.LocalSearchIndex(fields=dict(variant.fields))
    contents = [t.content for t in conv.turns]
    embed_texts = [
        f"{contents[i - 1]} {c}" if variant.embed_previous and i > 0 and conv.turns[i - 1].session == t.session else c
        for i, (c, t) in enumerate(zip(contents, conv.turns, strict=False))
    ]
    vectors = embed(embed_texts)
    created = [NOW - timedelta(days=30) + timedelta(seconds=i) for i in range(len(contents))]
    ids = [t.dia_id for t in conv.turns]
    extractions = [extractor.extract(c) for c in contents]
    docs = []
    entity_posts: dict[str, list[str]] = defaultdict(list)
    matrix = np.asarray(vectors, dtype=np.float32)
    for i, (turn, ex) in enumerate(zip(conv.turns, extractions, strict=False)):
        previous = i > 0 and conv.turns[i - 1].session == turn.session
        context_parts = []
        related = previous and float(matrix[i - 1] @ matrix[i]) >= variant.previous_min_cosine
        if "previous" in variant.context and related:
            words = contents[i - 1].split()
            keep = variant.previous_words
            if variant.reply_words is not None and answers(contents[i - 1], contents[i]):
                keep = variant.reply_words
            context_parts.append(" ".join(words[-keep:] if keep else words))
        if "next" in variant.context and i + 1 < len(conv.turns) and conv.turns[i + 1].session == turn.session:
            context_parts.append(contents[i + 1])
        if "date" in variant.context:
            context_parts.append(date_words(turn.date))
        links: dict[str, float] = {}
        if "sequence" in variant.links and previous:
            links[ids[i - 1]] = SEQUENCE_LINK_WEIGHT
        if "semantic" in variant.links and i > 0:
            sims = matrix[:i] @ matrix[i]
            for j in np.argsort(-sims)[:SEMANTIC_LINKS]:
                if sims[j] >= SEMANTIC_LINK_MIN_COSINE:
                    links[ids[j]] = max(links.get(ids[j], 0), float(sims[j]))
        if "entity" in variant.links:
            for e in ex.entities:
                for other in entity_posts[e.name.casefold()][-(ENTITY_LINKS + 1):]:
                    links.setdefault(other, ENTITY_LINK_WEIGHT)
                entity_posts[e.name.casefold()].append(ids[i])
        docs.append(IndexDocument(tenant="t", memory_id=ids[i], user_id="u", author="user", status=Status.OPEN,
                                  text=ex.normalized_text, context=" ".join(context_parts),
                                  entities=[e.name for e in ex.entities], captured_at=turn.date, created_at=created[i],
                                  importance=ex.importance, vector=vectors[i], links=links))
    # links are stored both ways by the worker
    by_id = {d.memory_id: d for d in docs}
    for d in docs:
        for other, w in list(d.links.items()):
            by_id[other].links.setdefault(d.memory_id, w)
    index.upsert(docs)
    return index


def texts_of(conv, extractor) -> dict[str, str]:
    """Each turn's indexed text (what `build` stores), which the repeat demotion reads."""
    return {t.dia_id: extractor.extract(t.content).normalized_text for t in conv.turns}


def ranked(index, texts: dict[str, str], text: str, vector: list[float], variant: Variant, *, top_k: int,
           now: datetime = NOW) -> list[scoring.Ranked]:
    """The best `top_k` for a query, ranked as `MemorySearch` ranks (every neighbour is visible here:
    one user, all open): fusion, graph expansion, then the repeat demotion over the hits a search reads."""
    candidates = index.search(SearchQuery(scope=SCOPE, text=text, vector=vector, authors=["user", "agent"], top_k=top_k))
    window = top_k + SPARE_HITS
    hits = scoring.fuse(candidates, top_k=window, now=now, expand_graph=variant.expand, weights=variant.weights,
                        focus=query.focus(text, now))
    return (demote_repeats(hits, texts, window) if variant.repeats else hits)[:top_k]


def evaluate(conversations, variant: Variant, embed: Embeddings, extractor,
             per_question: dict[str, float] | None = None) -> dict[str, float]:
    """Recall@5 per category and over 1-4, MRR@10 per category; `per_question` (when given) receives
    each question's recall@5 under its key `<sample_id>:<index>`."""
    scores = []
    for conv in conversations:
        index, texts = build(conv, variant, embed, extractor), texts_of(conv, extractor)
        questions = [q for q in conv.questions if q.category in HEADLINE_CATEGORIES]
        qvecs = embed([q.question for q in questions])
        for q, qv in zip(questions, qvecs, strict=False):
            hits = ranked(index, texts, q.question, qv, variant, top_k=10)
            scores.append(score_question([h.memory_id for h in hits], q.evidence, q.category))
            if per_question is not None:
                per_question[question_key(conv, q)] = scores[-1].recall_at_5
    summary = by_category(scores)
    result = {f"cat{c}": summary[str(c)].recall_at_5 for c in HEADLINE_CATEGORIES}
    result["all"] = summary[HEADLINE].recall_at_5
    return result | {f"mrr{c}": summary[str(c)].mrr for c in HEADLINE_CATEGORIES}


def question_key(conv, q) -> str:
    """A LoCoMo question's key: its sample and its place in that sample's `qa` list."""
    return f"{conv.sample_id}:{q.index}"


def fold_table(results: list[tuple[str, dict[str, float]]], name_width: int = 44) -> str:
    """Recall@5 (1-4) overall and per fold: the mean, the sum over the fold's questions (questions'
    worth), and the change in that sum from the first row's variant (the reference: the shipped one)."""
    if not results:
        return ""
    keys = list(results[0][1])
    members = {f: [k for k in keys if fold_of(k) == f] for f in range(FOLDS)}
    groups = [("all", keys)] + [(f"fold {f}", members[f]) for f in range(FOLDS)]
    head = f"{'recall@5 (1-4), mean / sum':<{name_width}}" + "".join(
        f"{label + ' (' + str(len(ks)) + ')':>18}" for label, ks in groups)
    lines = [head]
    reference = results[0][1]
    for name, values in results:
        cells = []
        for _, ks in groups:
            total = sum(values[k] for k in ks)
            cells.append(f"{total / len(ks) if ks else 0:.3f} {total:6.1f}".rjust(18))
        lines.append(f"{name[:name_width]:<{name_width}}" + "".join(cells))
    if len(results) > 1:
        lines.append(f"change in questions' worth vs {results[0][0]!r}"
                     " (keep rule: gains overall, no fold loses more than 2)")
        for name, values in results[1:]:
            deltas = [sum(values[k] - reference[k] for k in ks) for _, ks in groups]
            verdict = "passes" if deltas[0] > 0 and min(deltas[1:]) >= -2 else ""
            lines.append(f"{name[:name_width]:<{name_width}}" + "".join(f"{d:>+18.1f}" for d in deltas)
                         + f"  {verdict}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    conversations, fixes = load(args.data)
    headline = [(c, q) for c in conversations for q in c.questions if q.category in HEADLINE_CATEGORIES]
    fold_sizes = [sum(fold_of(question_key(c, q)) == f for c, q in headline) for f in range(FOLDS)]
    print(f"LoCoMo: {len(conversations)} conversations, {sum(len(c.questions) for c in conversations)} questions "
          f"with evidence ({fixes.questions_skipped} skipped: no evidence left); evaluated: {len(headline)} of "
          f"categories 1-4 (category 5 not scored); folds by sha256(sample_id:qa index) % {FOLDS}: "
          f"{' / '.join(map(str, fold_sizes))}", file=sys.stderr, flush=True)
    embed = Embeddings(REPO / "bench" / "results" / "locomo-minilm.npz")
    extractor = HeuristicExtractor()
    W, D, R = scoring.Weights, scoring.DEFAULT_WEIGHTS, dataclasses.replace
    variants = [
        Variant("default (shipped)"),
        Variant("no repeat demotion (before round 4)", repeats=False),
        Variant("mode=fast (no graph expansion or repeat demotion)", expand=False, repeats=False),
        Variant("before issue 28: context holds the whole predecessor", previous_words=0),
        Variant("bm25 text only", W(1, 0, 0, 0), fields=(("text", 1.0),), context="", links=(), expand=False,
                repeats=False),
        Variant("dense only", W(0, 1, 0, 0, length_pivot=0.0), context="", links=(), expand=False, repeats=False),
        Variant("dense + length prior", W(0, 1, 0, 0), context="", links=(), expand=False, repeats=False),
        Variant("no context field", context=""),
        Variant("context: date words only", context="date"),
        Variant("context: predecessor only", context="previous"),
        Variant("context: predecessor + successor + date", context="previous+next+date"),
        Variant("context boost .3", fields=(("text", 1.0), ("entities", 0.25), ("context", 0.3))),
        Variant("context boost 1.0", fields=(("text", 1.0), ("entities", 0.25), ("context", 1.0))),
        Variant("entities boost .5", fields=(("text", 1.0), ("entities", 0.5), ("context", 0.7))),
        Variant("no graph expansion", expand=False),
        Variant("no length prior", R(D, length_pivot=0.0)),
        Variant("no length prior, lexical .55 / semantic .35", R(D, lexical=0.55, semantic=0.35, length_pivot=0.0)),
        Variant("length pivot 1× mean", R(D, length_pivot=1.0)),
        Variant("length pivot 3× mean", R(D, length_pivot=3.0)),
        Variant("lexical .55 / semantic .35", R(D, lexical=0.55, semantic=0.35)),
        Variant("lexical .45 / semantic .45", R(D, lexical=0.45, semantic=0.45)),
        Variant("lexical .65 / semantic .25", R(D, lexical=0.65, semantic=0.25)),
        Variant("no importance / recency", R(D, lexical=0.55, semantic=0.45, importance=0, recency=0)),
        Variant("embed predecessor + turn", embed_previous=True),
        Variant("context: predecessor's last 4 words + date", previous_words=4),
        Variant("context: predecessor's last 8 words + date", previous_words=8),
        Variant("context: predecessor's last 10 words + date", previous_words=10),
        Variant("context: predecessor's last 15 words + date", previous_words=15),
        Variant("context boost .5 (last 6 words)", fields=(("text", 1.0), ("entities", 0.25), ("context", 0.5))),
        Variant("context boost .85 (last 6 words)", fields=(("text", 1.0), ("entities", 0.25), ("context", 0.85))),
        Variant("context: predecessor's last 30 words + date", previous_words=30),
        Variant("context: predecessor's last 60 words + date", previous_words=60),
        Variant("context: predecessor only if cosine >= .5", previous_min_cosine=0.5),
    ]
    if args.only:
        variants = [v for v in variants if v.name in args.only.split(",")]
    columns = ("cat1", "cat2", "cat3", "cat4", "all", "mrr1", "mrr2", "mrr3", "mrr4")  # recall@5, then MRR@10
    print(f"{'variant':<44}" + "".join(f"{c:>8}" for c in columns))
    per_fold: list[tuple[str, dict[str, float]]] = []
    for variant in variants:
        per_question: dict[str, float] = {}
        r = evaluate(conversations, variant, embed, extractor, per_question)
        print(f"{variant.name:<44}" + "".join(f"{r.get(c, 0):>8.3f}" for c in columns), flush=True)
        per_fold.append((variant.name, per_question))
    print()
    print(fold_table(per_fold))
    return 0


if __name__ == "__main__":
    sys.exit(main())
