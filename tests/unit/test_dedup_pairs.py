"""The labelled pairs of issue 26 item 5 (tests/data/dedup_pairs.jsonl): well formed, and the held-out
third is exactly what the fixed rule picks, so nobody re-picks it after tuning.

The rule (docs/deduplication.md "The labelled pairs"): a pair's key is the sha256 of its canonical
JSON (keys sorted, separators "," and ":", UTF-8, ensure_ascii false); the pair is held out when the
first 8 hex digits of its key, read as an integer, are divisible by 3.
tests/data/dedup_pairs_heldout.txt lists the held-out keys, one a line, sorted; it was committed
with the pairs, before the duplicate rule was written.

tests/data/dedup_strict_pairs.jsonl is a second, adversarial set: distinct statements a
token-category rule (numbers, dates, names, negation, antonyms, tense) would not tell apart (units,
currencies, swapped arguments, quantifiers, degree words, contractions without the apostrophe, pronouns,
prepositions, auxiliaries, symbols, questions, reorderings...). Its held-out third is picked by the
same rule and listed in tests/data/dedup_strict_pairs_heldout.txt, committed with the pairs before the
rule was rewritten."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

from mnemo.domain.models import content_hash

DATA = Path(__file__).resolve().parents[1] / "data"
PAIRS = DATA / "dedup_pairs.jsonl"
HELD_OUT = DATA / "dedup_pairs_heldout.txt"
KINDS = {"exact_repeat", "paraphrase", "number", "date", "month", "weekday", "time", "name", "identifier",
         "negation", "template", "substitution", "unrelated", "antonym", "preference", "tense"}
FIRST_SET = 234  # the pairs of commit 02b43d1 (the first 234 lines), 77 of them held out; later pairs are appended


STRICT_PAIRS = DATA / "dedup_strict_pairs.jsonl"
STRICT_HELD_OUT = DATA / "dedup_strict_pairs_heldout.txt"
STRICT_DUPLICATE_KINDS = {"exact_repeat", "paraphrase"}
STRICT_DISTINCT_KINDS = {"unit", "currency", "swapped_arguments", "quantifier", "degree", "state", "negation_unmarked",
                         "pronoun", "preposition", "auxiliary", "substitution", "qualifier_added", "symbol", "question",
                         "same_words_reordered", "number_word", "ordinal", "relative_time", "lowercase_name",
                         "conditional", "plan_vs_done"}
STRICT_COUNT, STRICT_HELD_OUT_COUNT = 331, 116  # frozen with the pairs (commit "frozen before the rule changes")
# the issue's own examples, each a distinct pair of the strict set (either order)
ISSUE_EXAMPLES = [
    ("The trail is 5 km long.", "The trail is 5 miles long."),
    ("I lost 3 kg since January.", "I lost 3 lb since January."),
    ("The concert ticket costs 50 dollars.", "The concert ticket costs 50 euros."),
    ("Alice owes Bob 50 dollars.", "Bob owes Alice 50 dollars."),
    ("The meeting was moved from Monday to Tuesday.", "The meeting was moved from Tuesday to Monday."),
    ("Ana is taller than Bob.", "Bob is taller than Ana."),
    ("Ana cant swim.", "Ana can swim."),
    ("The build isnt stable.", "The build is stable."),
    ("All the unit tests pass.", "Some of the unit tests pass."),
    ("I barely passed the exam.", "I passed the exam."),
    ("The printer is working.", "The printer is broken."),
    ("My flight to Paris is on Friday.", "My flight from Paris is on Friday."),
    ("The standup is at 10.", "The standup was at 10."),
    ("She called him yesterday.", "He called her yesterday."),
]


def load_pairs(path: Path = PAIRS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_strict_pairs() -> list[dict[str, Any]]:
    return load_pairs(STRICT_PAIRS)


def plain(text: str) -> str:
    """What an exact repeat of the strict set may differ by, removed: case, whitespace, apostrophes,
    sentence punctuation (.,!;: before a space or the end, never inside 5.5 or 9:30), a/an/the. Keeps
    ? % # + - and the like, which the distinct pairs of kind symbol and question differ by."""
    text = unicodedata.normalize("NFC", text).casefold().replace("'", "").replace("\u2019", "")
    text = re.sub(r"[.,!;:]+(?=\s|$)", "", text)
    return " ".join(word for word in text.split() if word not in {"a", "an", "the"})


def pair_key(pair: dict[str, Any]) -> str:
    canonical = json.dumps(pair, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def is_held_out(pair: dict[str, Any]) -> bool:
    return int(pair_key(pair)[:8], 16) % 3 == 0


def test_the_pairs_are_labelled_and_varied() -> None:
    pairs = load_pairs()
    assert len(pairs) >= 200
    assert all(set(p) == {"a", "b", "label", "kind"} and p["kind"] in KINDS for p in pairs)
    assert len({(p["a"], p["b"]) for p in pairs}) == len(pairs)  # no pair twice
    assert {p["kind"] for p in pairs} == KINDS
    duplicates = [p for p in pairs if p["label"] == "duplicate"]
    assert {p["kind"] for p in duplicates} == {"exact_repeat", "paraphrase"}  # every other kind is distinct
    assert all(p["label"] == "distinct" for p in pairs if p["kind"] not in {"exact_repeat", "paraphrase"})
    # an exact repeat is one by content_hash, and nothing else is (the control)
    assert all((content_hash(p["a"]) == content_hash(p["b"])) == (p["kind"] == "exact_repeat") for p in pairs)


def check_held_out_list(path: Path, pairs: list[dict[str, Any]]) -> None:
    """The keys listed in `path`: sorted, each once, exactly the pairs the fixed rule holds out, about a third."""
    listed = path.read_text(encoding="utf-8").split()
    assert listed == sorted(listed) and len(set(listed)) == len(listed)
    assert set(listed) == {pair_key(p) for p in pairs if is_held_out(p)}
    assert set(listed) <= {pair_key(p) for p in pairs}  # the control: every listed key names a pair
    share = len(listed) / len(pairs)
    assert 0.25 < share < 0.42, share  # about a third


def test_the_held_out_third_is_the_one_the_fixed_rule_picks() -> None:
    pairs = load_pairs()
    check_held_out_list(HELD_OUT, pairs)
    held = [p for p in pairs if is_held_out(p)]
    assert {"exact_repeat", "paraphrase", "negation", "template", "antonym"} <= {p["kind"] for p in held}
    # appending pairs never moves an earlier one in or out: the first set keeps its 77
    assert sum(map(is_held_out, pairs[:FIRST_SET])) == 77


def test_the_strict_pairs_are_labelled_and_varied() -> None:
    pairs = load_strict_pairs()
    assert len(pairs) >= STRICT_COUNT  # later pairs are appended; the frozen ones keep their place
    assert all(set(p) == {"a", "b", "label", "kind"} for p in pairs)
    assert len({(p["a"], p["b"]) for p in pairs}) == len(pairs)  # no pair twice
    assert not {(p["a"], p["b"]) for p in pairs} & {(p["a"], p["b"]) for p in load_pairs()}  # none from the first set
    assert {p["kind"] for p in pairs} == STRICT_DUPLICATE_KINDS | STRICT_DISTINCT_KINDS
    assert all((p["label"] == "duplicate") == (p["kind"] in STRICT_DUPLICATE_KINDS) for p in pairs)
    assert all(p["label"] == "distinct" for p in pairs if p["kind"] in STRICT_DISTINCT_KINDS)
    kinds = Counter(p["kind"] for p in pairs)
    assert kinds["exact_repeat"] >= 30 and kinds["paraphrase"] >= 30 and kinds["same_words_reordered"] >= 20
    assert min(kinds[k] for k in STRICT_DISTINCT_KINDS) >= 8
    # an exact repeat differs only by what plain() removes, and no other pair does (the control)
    assert all((plain(p["a"]) == plain(p["b"])) == (p["kind"] == "exact_repeat") for p in pairs)
    # the issue's examples are there, as distinct pairs
    distinct = {frozenset((p["a"], p["b"])) for p in pairs if p["label"] == "distinct"}
    assert all(frozenset(example) in distinct for example in ISSUE_EXAMPLES)


def test_the_strict_held_out_third_is_the_one_the_fixed_rule_picks() -> None:
    pairs = load_strict_pairs()
    check_held_out_list(STRICT_HELD_OUT, pairs)
    # appending pairs never moves an earlier one in or out: the frozen set keeps its held-out count
    assert sum(map(is_held_out, pairs[:STRICT_COUNT])) == STRICT_HELD_OUT_COUNT
    held = Counter(p["label"] for p in pairs if is_held_out(p))
    assert held["duplicate"] >= 15 and held["distinct"] >= 60
