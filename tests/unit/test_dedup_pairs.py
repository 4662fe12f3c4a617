"""The labelled pairs of issue 26 item 5 (tests/data/dedup_pairs.jsonl): well formed, and the held-out
third is exactly what the fixed rule picks, so nobody re-picks it after tuning.

The rule (docs/deduplication.md "The labelled pairs"): a pair's key is the sha256 of its canonical
JSON (keys sorted, separators "," and ":", UTF-8, ensure_ascii false); the pair is held out when the
first 8 hex digits of its key, read as an integer, are divisible by 3.
tests/data/dedup_pairs_heldout.txt lists the held-out keys, one a line, sorted; it was committed
with the pairs, before the duplicate rule was written."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from mnemo.domain.models import content_hash

DATA = Path(__file__).resolve().parents[1] / "data"
PAIRS = DATA / "dedup_pairs.jsonl"
HELD_OUT = DATA / "dedup_pairs_heldout.txt"
KINDS = {"exact_repeat", "paraphrase", "number", "date", "month", "weekday", "time", "name", "identifier",
         "negation", "template", "substitution", "unrelated", "antonym", "preference", "tense"}
FIRST_SET = 234  # the pairs of commit 02b43d1 (the first 234 lines), 77 of them held out; later pairs are appended


def load_pairs() -> list[dict[str, Any]]:
    return [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]


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


def test_the_held_out_third_is_the_one_the_fixed_rule_picks() -> None:
    pairs = load_pairs()
    listed = HELD_OUT.read_text(encoding="utf-8").split()
    assert listed == sorted(listed) and len(set(listed)) == len(listed)
    assert set(listed) == {pair_key(p) for p in pairs if is_held_out(p)}
    assert set(listed) <= {pair_key(p) for p in pairs}  # the control: every listed key names a pair
    share = len(listed) / len(pairs)
    assert 0.25 < share < 0.42, share  # about a third
    held = [p for p in pairs if is_held_out(p)]
    assert {"exact_repeat", "paraphrase", "negation", "template", "antonym"} <= {p["kind"] for p in held}
    # appending pairs never moves an earlier one in or out: the first set keeps its 77
    assert sum(map(is_held_out, pairs[:FIRST_SET])) == 77
