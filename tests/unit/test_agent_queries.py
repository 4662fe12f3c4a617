"""The agent-query set of issue 54 (bench/agent_queries/*.json): personal stores in the styles agents capture,
queries naming the memories that answer them, and the held-out third frozen by hash before any tuning.

A store file is {store, language, persona, memories: [{id, text, supersedes?}], queries: [{id, class, text,
answers}]}. Memory ids are m001, m002, ... in order; query ids are "<store number>-q001", ... in order. A
memory with `supersedes` corrects or moves an earlier one ("Dentist appointment moved to Wednesday 10am");
the superseded memory answers nothing (a result list that shows only the stale value has not answered).

Classes: `keyword` (one or two words; its answers include every current memory containing its content words),
`phrase` (a short phrase), `question` (shares at least one content word with an answering memory),
`paraphrase` (shares no content word with any answering memory) and `never_said` (about something the store
never says; shares no content word with any memory of its store; no answers).

Content words: mnemo.domain.text.tokenize (lower case, the project's stopwords, light plural folding) minus
the English and German function words below, each folded by `stem` (one common suffix off, a stem of at
least four letters kept), so "meeting" and "meet" or "Termine" and "Termin" count as one word.

The held-out rule (the one tests/unit/test_dedup_pairs.py uses for pairs): a query's key is the sha256 of
its canonical JSON (keys sorted, separators "," and ":", UTF-8, ensure_ascii false); the query is held out
when the first 8 hex digits of its key, read as an integer, are divisible by 3. bench/agent_queries/heldout.txt
lists the held-out keys, one a line, sorted; it was committed with the set, before anything was tuned on it.

tests/data/agent_queries_slice.jsonl is a small slice for a fast end-to-end test: the stores 003 (English)
and 006 (German), one a line, with their dev (not held-out) queries only."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

from mnemo.domain.text import tokenize

ROOT = Path(__file__).resolve().parents[2]
SET_DIR = ROOT / "bench" / "agent_queries"
HELD_OUT = SET_DIR / "heldout.txt"
SLICE = ROOT / "tests" / "data" / "agent_queries_slice.jsonl"
SLICE_STORES = ("003_new_user_small", "006_studentin_berlin_de")
ANSWERABLE = ("keyword", "phrase", "question", "paraphrase")
CLASSES = (*ANSWERABLE, "never_said")
# frozen with the set (2189c16, "... frozen before tuning"): the counts, and digests of every query's key and
# of every store's memories, so that no query or memory changes unseen after tuning began
FROZEN_QUERIES, FROZEN_HELD_OUT = 594, 211
FROZEN_QUERY_DIGEST = "ed5d39e10d85c87093f4ff97f75a5a4ee0bdf2694415984137724e0dd134038c"
FROZEN_MEMORY_DIGEST = "da10352662e1116bd489c48235ba69640627396025a344b08659bbb8f3691588"

EN_FUNCTION_WORDS = frozenset(["am", "can", "can't", "cannot", "cant", "not", "no", "do", "don't", "dont", "does", "doesn't", "did", "didn't", "i'm", "im", "i've", "ive", "i'll", "ill", "i'd", "it's", "let's", "about", "all", "any", "some", "also", "again", "up", "down", "out", "off", "over", "under", "just", "only", "very", "really", "much", "many", "more", "most", "other", "own", "same", "such", "too", "should", "could", "may", "might", "must", "shall", "each", "every", "both", "few", "here", "now", "what's", "where's", "who's", "whats", "yet", "still", "ever", "after", "before", "while", "during", "until", "through", "above", "below", "between", "further", "once", "nor", "being", "having", "doing", "mine", "myself", "us", "we're", "you're", "there's", "which", "got", "get", "gets", "anything", "something", "someone", "anyone", "one", "ones"])
DE_FUNCTION_WORDS = frozenset(["ich", "du", "er", "sie", "es", "wir", "ihr", "mein", "meine", "meinen", "meinem", "meiner", "meines", "dein", "deine", "deinen", "deinem", "deiner", "sein", "seine", "seinen", "seinem", "seiner", "ihre", "ihren", "ihrem", "ihrer", "unser", "unsere", "unseren", "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer", "eines", "und", "oder", "aber", "nicht", "kein", "keine", "keinen", "keinem", "ist", "bin", "bist", "sind", "war", "waren", "hat", "habe", "hast", "haben", "hatte", "wird", "werden", "wurde", "zu", "zum", "zur", "im", "in", "am", "an", "auf", "aus", "bei", "beim", "mit", "nach", "von", "vom", "vor", "für", "über", "unter", "um", "bis", "durch", "gegen", "ohne", "als", "wie", "wo", "wann", "was", "wer", "wen", "wem", "warum", "welche", "welcher", "welches", "welchen", "wohin", "woher", "dass", "ob", "weil", "wenn", "auch", "noch", "schon", "nur", "sehr", "so", "da", "hier", "dort", "jetzt", "mir", "mich", "dir", "dich", "sich", "uns", "euch", "ihm", "ihn", "ihnen", "man", "doch", "ja", "nein", "mal", "denn", "dann", "also", "kann", "muss", "soll", "will", "darf", "gibt", "gerade", "etwa", "ganz"])
FUNCTION_WORDS = EN_FUNCTION_WORDS | DE_FUNCTION_WORDS
_SUFFIXES = ("ungen", "ung", "ing", "ed", "es", "er", "en", "ly", "e", "n", "s")


def stem(token: str) -> str:
    if token.endswith("ies") and len(token) > 5:
        token = token[:-3] + "y"
    if token.endswith("ie") and len(token) > 4:  # tokenize folds "replies" to "replie"
        token = token[:-2] + "y"
    for suffix in _SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) >= 4:
            return token[: -len(suffix)]
    return token


def content_words(text: str) -> set[str]:
    return {stem(t) for t in tokenize(text) if t not in FUNCTION_WORDS}


def load_stores() -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(SET_DIR.glob("*.json"))]


def digest(value: Any) -> str:
    """sha256 of the canonical JSON (keys sorted, separators "," and ":", UTF-8, ensure_ascii false)."""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def query_key(query: dict[str, Any]) -> str:
    return digest(query)


def is_held_out(query: dict[str, Any]) -> bool:
    return int(query_key(query)[:8], 16) % 3 == 0


def superseded(store: dict[str, Any]) -> set[str]:
    return {m["supersedes"] for m in store["memories"] if "supersedes" in m}


def test_the_stores_are_well_formed() -> None:
    stores = load_stores()
    assert len(stores) >= 10
    names = [s["store"] for s in stores]
    assert len(set(names)) == len(names)
    assert [p.stem for p in sorted(SET_DIR.glob("*.json"))] == names
    sizes = [len(s["memories"]) for s in stores]
    assert all(20 <= n <= 200 for n in sizes) and min(sizes) == 20 and max(sizes) >= 150
    assert {s["language"] for s in stores} == {"en", "de"}
    assert next(s for s in stores if s["store"].startswith("002_"))["language"] == "de"
    for store in stores:
        number = store["store"].split("_")[0]
        assert [m["id"] for m in store["memories"]] == [f"m{i:03d}" for i in range(1, len(store["memories"]) + 1)]
        assert [q["id"] for q in store["queries"]] == [f"{number}-q{i:03d}" for i in range(1, len(store["queries"]) + 1)]
        texts = [m["text"] for m in store["memories"]]
        assert len(set(texts)) == len(texts) and all(t.strip() == t and t for t in texts)
        for memory in store["memories"]:
            assert set(memory) <= {"id", "text", "supersedes"}
            if "supersedes" in memory:
                assert memory["supersedes"] < memory["id"]  # a correction comes after what it corrects
        for query in store["queries"]:
            assert set(query) == {"id", "class", "text", "answers"} and query["class"] in CLASSES
        # every class in every store, and no query asked twice in a store
        assert {q["class"] for q in store["queries"]} == set(CLASSES), store["store"]
        asked = [q["text"].casefold() for q in store["queries"]]
        assert len(set(asked)) == len(asked), store["store"]


def test_the_counts_meet_the_issue() -> None:
    stores = load_stores()
    queries = [q for s in stores for q in s["queries"]]
    by_class = Counter(q["class"] for q in queries)
    assert sum(by_class[c] for c in ANSWERABLE) >= 400
    assert all(by_class[c] >= 100 for c in ANSWERABLE), by_class
    assert by_class["never_said"] >= 150
    assert sum(len(s["memories"]) for s in stores) >= 600


def test_every_answer_exists_and_is_current() -> None:
    for store in load_stores():
        ids, stale = {m["id"] for m in store["memories"]}, superseded(store)
        for query in store["queries"]:
            answers = query["answers"]
            assert answers == sorted(set(answers)), query["id"]
            if query["class"] == "never_said":
                assert answers == [], query["id"]
            else:
                assert answers and set(answers) <= ids and not set(answers) & stale, query["id"]


def test_keywords_are_short_and_name_every_memory_that_contains_them() -> None:
    for store in load_stores():
        stale = superseded(store)
        for query in (q for q in store["queries"] if q["class"] == "keyword"):
            assert 1 <= len(query["text"].split()) <= 2, query["id"]
            words = content_words(query["text"])
            containing = {m["id"] for m in store["memories"] if words <= content_words(m["text"])} - stale
            assert containing <= set(query["answers"]), query["id"]  # and maybe more: "Chor" answers "Kirchenchor"


def test_each_class_shares_words_as_its_definition_says() -> None:
    for store in load_stores():
        text = {m["id"]: m["text"] for m in store["memories"]}
        store_words = set().union(*(content_words(t) for t in text.values()))
        for query in store["queries"]:
            words = content_words(query["text"])
            assert words, query["id"]
            shared = [words & content_words(text[a]) for a in query["answers"]]
            if query["class"] == "paraphrase":
                assert not any(shared), (query["id"], shared)
            elif query["class"] == "never_said":
                assert not words & store_words, (query["id"], words & store_words)
            else:
                assert any(shared), query["id"]


def test_the_held_out_third_is_the_one_the_fixed_rule_picks() -> None:
    queries = [q for s in load_stores() for q in s["queries"]]
    listed = HELD_OUT.read_text(encoding="utf-8").split()
    assert listed == sorted(listed) and len(set(listed)) == len(listed)
    assert set(listed) == {query_key(q) for q in queries if is_held_out(q)}
    assert (len(queries), len(listed)) == (FROZEN_QUERIES, FROZEN_HELD_OUT)
    held = Counter(q["class"] for q in queries if is_held_out(q))
    assert all(held[c] >= 20 for c in CLASSES), held  # every class has held-out queries


def test_no_query_or_memory_changed_since_the_freeze() -> None:
    """Editing a dev query or a memory moves no held-out key, so the counts alone would not see it."""
    stores = load_stores()
    assert digest(sorted(query_key(q) for s in stores for q in s["queries"])) == FROZEN_QUERY_DIGEST
    assert digest([[s["store"], s["language"], s["memories"]] for s in stores]) == FROZEN_MEMORY_DIGEST


def test_the_slice_is_two_stores_with_their_dev_queries() -> None:
    lines = [json.loads(line) for line in SLICE.read_text(encoding="utf-8").splitlines() if line.strip()]
    stores = {s["store"]: s for s in load_stores()}
    assert [s["store"] for s in lines] == list(SLICE_STORES)
    for piece in lines:
        full = stores[piece["store"]]
        assert piece["memories"] == full["memories"] and piece["language"] == full["language"]
        assert piece["queries"] == [q for q in full["queries"] if not is_held_out(q)]
    assert 30 <= sum(len(s["queries"]) for s in lines) <= 60
