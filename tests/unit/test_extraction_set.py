"""The labelled extraction set of issue 29 (tests/data/extraction_set.jsonl): well formed, labelled with
canonical predicates, and the held-out third is exactly what the fixed rule picks, so nobody re-picks
it after tuning the rules.

Each line is one chat turn: `text`, `captured_at` (ISO 8601 with its own offset: relative dates resolve
against it), `kind` (what the turn mainly says) and `facts`, each {subject, predicate (canonical, after the
synonym table), object, polarity, valid_at (a local day, only where a date is said or implied)}. The first
person is the subject "user".

The held-out rule (docs/extraction.md "The labelled set"): an item's key is the sha256 of its canonical
JSON (keys sorted, separators "," and ":", UTF-8, ensure_ascii false); the item is held out when the first
8 hex digits of its key, read as an integer, are divisible by 3. tests/data/extraction_set_heldout.txt
lists the held-out keys, one a line, sorted; it was committed with the set, before any rule changed.

Issue 54 appended the kind "everyday": notes agents capture (appointments and their moves, schedules, people and
places, plans, corrections), most of which assert no fact in the set's vocabulary ("Dentist appointment moved to
Wednesday") and some of which do ("We moved to Porto last year"). They were appended, and their held-out keys
listed by the same rule, before the extractor changed (the old items and their keys are untouched)."""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from pathlib import Path
from typing import Any

from mnemo.domain.predicates import PredicateTable

DATA = Path(__file__).resolve().parents[1] / "data"
SET = DATA / "extraction_set.jsonl"
HELD_OUT = DATA / "extraction_set_heldout.txt"
KINDS = ("identity", "relation", "preference", "decision", "plan", "correction", "dated", "nothing", "everyday")
# Kinds whose turns may expect no fact: "nothing" never expects one, "everyday" often does not.
MAY_BE_EMPTY = ("nothing", "everyday")


def load_set() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]


def item_key(item: dict[str, Any]) -> str:
    canonical = json.dumps(item, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def is_held_out(item: dict[str, Any]) -> bool:
    return int(item_key(item)[:8], 16) % 3 == 0


def test_the_set_is_labelled_and_varied() -> None:
    items = load_set()
    assert len(items) >= 300
    assert len({i["text"] for i in items}) == len(items)  # no turn twice
    assert all(set(i) == {"text", "captured_at", "kind", "facts"} and i["kind"] in KINDS for i in items)
    assert {i["kind"] for i in items} == set(KINDS)
    assert all(datetime.fromisoformat(i["captured_at"]).utcoffset() is not None for i in items)  # never naive
    table = PredicateTable()
    facts = [f for i in items for f in i["facts"]]
    for fact in facts:
        assert set(fact) - {"valid_at"} == {"subject", "predicate", "object", "polarity"}, fact
        assert fact["polarity"] in ("positive", "negative")
        assert table.normalize(fact["predicate"]) == fact["predicate"], fact  # canonical, after the synonym table
        if "valid_at" in fact:
            date.fromisoformat(fact["valid_at"])
    # nothing-asserted turns expect no fact; every other kind but everyday expects at least one (the control)
    assert all(not i["facts"] for i in items if i["kind"] == "nothing")
    assert all(i["facts"] for i in items if i["kind"] not in MAY_BE_EMPTY)
    everyday = [i for i in items if i["kind"] == "everyday"]
    # issue 54: at least 60 everyday notes, both those that assert nothing and real facts (the control)
    assert len(everyday) >= 60 and sum(not i["facts"] for i in everyday) >= 40 and sum(bool(i["facts"]) for i in everyday) >= 15
    assert sum(f["polarity"] == "negative" for f in facts) >= 40 and sum("valid_at" in f for f in facts) >= 60


def test_the_held_out_third_is_the_one_the_fixed_rule_picks() -> None:
    items = load_set()
    listed = HELD_OUT.read_text(encoding="utf-8").split()
    assert listed == sorted(listed) and len(set(listed)) == len(listed)
    assert set(listed) == {item_key(i) for i in items if is_held_out(i)}
    assert set(listed) <= {item_key(i) for i in items}  # the control: every listed key names an item
    share = len(listed) / len(items)
    assert 0.25 < share < 0.42, share  # about a third
