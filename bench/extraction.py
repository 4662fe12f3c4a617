"""The labelled extraction set (tests/data/extraction_set.jsonl, issue 29) through an extractor: precision,
recall and F1 per kind of turn, on the held-out third (frozen by hash before any rule changed;
tests/unit/test_extraction_set.py) and on the rest, separately; how many dated facts get the right day.

    PYTHONPATH=shared:. .venv/bin/python bench/extraction.py [--extractor local|bedrock] [--show] [--json OUT]

`--extractor bedrock` calls the Bedrock model of the settings (MNEMO_LLM_MODEL_ID, AWS credentials and
region of the environment): it measures a deployment's model and costs one Converse call per turn; nothing
here can measure it offline.

Scoring: a predicted fact matches an expected one of the same turn when subject, predicate (both through the
synonym table of mnemo.domain.predicates), object and polarity agree; names compare by canonical_key with
the articles a/an/the dropped. Each expected fact matches at most one predicted fact. A turn of kind
"nothing" (questions, hypotheticals, sarcasm, small talk) expects no fact: its figure is the share of those
turns that yield none. A dated fact's day is its `valid_at` in the turn's own offset (none: the day it was
said, as enrichment stores it); "dates right" counts the matched dated facts with the right day.

Issue 54's "everyday" notes (appointments and their moves, schedules, people and places) are a kind of their own:
its `fp` column counts the facts the extractor invents on them, and "everyday notes expecting no fact" the share of
those notes that yield none ("Dentist appointment moved to Wednesday" must not live anywhere).
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from collections import defaultdict
from datetime import date, datetime
from typing import Any

from mnemo.domain.graph import canonical_key
from mnemo.domain.predicates import PredicateTable

KINDS = ("identity", "relation", "preference", "decision", "plan", "correction", "dated", "everyday")
_ARTICLES = frozenset({"a", "an", "the"})
_TABLE = PredicateTable()


def _name(text: str) -> str:
    return " ".join(w for w in canonical_key(text).split() if w not in _ARTICLES)


def _key(subject: str, predicate: str, obj: str, polarity: str) -> tuple[str, str, str, str]:
    return _name(subject), _TABLE.normalize(predicate), _name(obj), polarity


def _day(value: Any, said: datetime) -> date:
    """A predicted fact's day in the turn's own offset; none given is the day it was said."""
    if value is None:
        return said.date()
    if isinstance(value, datetime):
        return (value.astimezone(said.tzinfo) if value.tzinfo else value).date()
    if isinstance(value, date):
        return value
    return datetime.fromisoformat(str(value)).date()


def predicted(extractor: Any, item: dict[str, Any]) -> list[dict[str, Any]]:
    said = datetime.fromisoformat(item["captured_at"])
    takes_time = "captured_at" in inspect.signature(extractor.extract).parameters
    extraction = extractor.extract(item["text"], captured_at=said) if takes_time else extractor.extract(item["text"])
    return [{"subject": f.subject, "predicate": f.predicate, "object": f.object,
             "polarity": str(getattr(f, "polarity", "positive")), "day": _day(getattr(f, "valid_at", None), said)}
            for f in extraction.facts]


def score(item: dict[str, Any], facts: list[dict[str, Any]]) -> dict[str, int]:
    left = [(_key(f["subject"], f["predicate"], f["object"], f["polarity"]), f["day"]) for f in facts]
    out = {"tp": 0, "fp": 0, "fn": 0, "dated": 0, "dated_matched": 0, "dated_right": 0}
    for want in item["facts"]:
        key = _key(want["subject"], want["predicate"], want["object"], want["polarity"])
        hit = next((i for i, (k, _) in enumerate(left) if k == key), None)
        out["dated"] += "valid_at" in want
        if hit is None:
            out["fn"] += 1
            continue
        out["tp"] += 1
        _, day = left.pop(hit)
        if "valid_at" in want:
            out["dated_matched"] += 1
            out["dated_right"] += day == date.fromisoformat(want["valid_at"])
    out["fp"] = len(left)
    return out


def _prf(c: dict[str, int]) -> tuple[float, float, float]:
    p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 1.0
    r = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def report(items: list[dict[str, Any]], results: list[dict[str, int]], facts: list[list[dict[str, Any]]]) -> dict[str, Any]:
    per: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for item, res in zip(items, results, strict=True):
        for k, v in res.items():
            per[item["kind"]][k] += v
            per["all"][k] += v
        per[item["kind"]]["turns"] += 1
        per["all"]["turns"] += 1
    nothing = [f for item, f in zip(items, facts, strict=True) if item["kind"] == "nothing"]
    quiet = [f for item, f in zip(items, facts, strict=True) if item["kind"] == "everyday" and not item["facts"]]
    out: dict[str, Any] = {"kinds": {}}
    for kind in (*KINDS, "all"):
        c = per[kind]
        p, r, f1 = _prf(c)
        out["kinds"][kind] = {"turns": c["turns"], "tp": c["tp"], "fp": c["fp"], "fn": c["fn"],
                              "precision": round(p, 3), "recall": round(r, 3), "f1": round(f1, 3)}
    out["micro_f1"] = out["kinds"]["all"]["f1"]
    out["nothing_turns"] = len(nothing)
    out["nothing_precision"] = round(sum(not f for f in nothing) / len(nothing), 3) if nothing else 1.0
    out["everyday_quiet_turns"] = len(quiet)
    out["everyday_quiet_clean"] = sum(not f for f in quiet)
    out["invented"] = per["all"]["fp"]
    c = per["all"]
    out["dated_facts"] = c["dated"]
    out["dates_right_of_matched"] = round(c["dated_right"] / c["dated_matched"], 3) if c["dated_matched"] else 0.0
    out["dates_right_of_all"] = round(c["dated_right"] / c["dated"], 3) if c["dated"] else 0.0
    return out


def print_table(split: str, rep: dict[str, Any]) -> None:
    print(f"\n{split}: micro-F1 {rep['micro_f1']:.3f}; nothing-asserted turns with no fact "
          f"{rep['nothing_precision']:.3f} (of {rep['nothing_turns']}); dates right {rep['dates_right_of_matched']:.3f} "
          f"of matched dated facts, {rep['dates_right_of_all']:.3f} of all {rep['dated_facts']}")
    print(f"invented facts (fp, all kinds) {rep['invented']}; everyday notes expecting no fact that yield none "
          f"{rep['everyday_quiet_clean']} of {rep['everyday_quiet_turns']}")
    print(f"{'kind':<11} {'turns':>5} {'tp':>4} {'fp':>4} {'fn':>4} {'P':>6} {'R':>6} {'F1':>6}")
    for kind, r in rep["kinds"].items():
        print(f"{kind:<11} {r['turns']:>5} {r['tp']:>4} {r['fp']:>4} {r['fn']:>4} "
              f"{r['precision']:>6.3f} {r['recall']:>6.3f} {r['f1']:>6.3f}")


def build(name: str) -> Any:
    if name == "bedrock":
        from mnemo.adapters.bedrock.extraction import BedrockExtractor
        from mnemo.settings import MnemoSettings

        return BedrockExtractor.from_settings(MnemoSettings())
    from mnemo.adapters.local.heuristic_extractor import HeuristicExtractor

    return HeuristicExtractor()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--extractor", choices=("local", "bedrock"), default="local")
    parser.add_argument("--show", action="store_true", help="print every turn whose facts differ from the labels")
    parser.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    args = parser.parse_args()
    from tests.unit.test_extraction_set import is_held_out, load_set

    try:
        extractor = build(args.extractor)
    except Exception as exc:  # botocore's NoRegionError, NoCredentialsError...: say what is missing
        print(f"cannot build the {args.extractor} extractor: {exc} (it measures a deployment's model)", file=sys.stderr)
        return 2
    items = load_set()
    facts = [predicted(extractor, item) for item in items]
    results = [score(item, f) for item, f in zip(items, facts, strict=True)]
    if args.show:
        for item, f, res in zip(items, facts, results, strict=True):
            if res["fp"] or res["fn"] or res["dated_right"] != res["dated_matched"]:
                got = [(x["subject"], x["predicate"], x["object"], x["polarity"], str(x["day"])) for x in f]
                want = [(x["subject"], x["predicate"], x["object"], x["polarity"], x.get("valid_at", "")) for x in item["facts"]]
                print(f"[{item['kind']}{' H' if is_held_out(item) else ''}] {item['text']}\n  want {want}\n  got  {got}")
    figures = {}
    print(f"{args.extractor} extractor; {len(items)} turns, {sum(map(is_held_out, items))} held out")
    for split, keep in (("held-out", True), ("rest", False)):
        chosen = [i for i, item in enumerate(items) if is_held_out(item) == keep]
        figures[split] = report([items[i] for i in chosen], [results[i] for i in chosen], [facts[i] for i in chosen])
        print_table(split, figures[split])
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(figures, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
