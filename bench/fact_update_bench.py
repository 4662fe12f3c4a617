"""Facts that change over time: does the graph keep the latest value of a single-valued relation,
keep every value of a multi-valued one, and answer `as_of` questions? No LLM: half of the subjects
are driven by `record_fact`, half by episodes the heuristic extractor understands ("Alice Moreno
moved to Lisbon.") through the real enrichment worker.

Per subject: `lives in` changes three times and `works at` twice (single-valued); `likes`,
`visited` and `knows` accumulate (multi-valued). Events carry their event time; about a quarter
arrive late (after newer ones), as episodes imported from an older chat would.

Three policies see the same triples in the same order, each in its own tenant of one local stack:
- `mnemo (shipped)`: the temporal rules of docs/facts.md (single-valued predicates, event time);
- `never invalidates`: every fact stays active (an add-only memory);
- `invalidates any same-subject`: a new fact retires every older (by event time) active fact of
  its subject, whatever the predicate (the over-eager rule).
Baselines record the triples the extractor finds in each episode with `record_fact` (valid_at =
the episode's time), so only the invalidation policy differs.

Metrics: current value (the top edge of fact search for "Where does X live now?" / "Where does X
work?" is the latest value; also: the first edge of that relation), over-invalidation (facts that
should be active and are not; target 0), stale (facts that should be retired and are still
active), `as_of` accuracy (one probe inside each value's interval), fact-search latency p50/p95.

    PYTHONPATH=shared:. .venv/bin/python bench/fact_update_bench.py [--subjects 30] [--seed 7]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "shared"))
sys.path.insert(0, str(REPO))

FIRST = ["Alice", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines", "Jonas", "Kavya", "Lars",
         "Maya", "Nikolai", "Olga", "Pavel", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wade", "Xenia", "Yusuf",
         "Zara", "Amir", "Bianca", "Cyrus", "Dalia"]
LAST = ["Moreno", "Schmidt", "Okafor", "Lindqvist", "Tanaka", "Haddad", "Novak", "Ferreira", "Kowalski", "Dubois"]
CITIES = ["Lisbon", "Berlin", "Madrid", "Oslo", "Vienna", "Prague", "Dublin", "Warsaw", "Athens", "Helsinki", "Zurich",
          "Porto", "Lyon", "Milan", "Krakow", "Seville", "Bergen", "Ghent", "Tallinn", "Riga"]
ORGS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne", "Tyrell", "Cyberdyne", "Soylent",
        "Wonka"]
HOBBIES = ["chess", "jazz", "hiking", "sailing", "pottery", "sushi", "tennis", "opera", "cycling", "baking"]
SINGLE = {"lives in": 3, "works at": 2}
POLICIES = ("mnemo (shipped)", "never invalidates", "invalidates any same-subject")
START = datetime(2024, 1, 1, tzinfo=UTC)


@dataclass
class Event:
    subject: str
    predicate: str  # the canonical predicate the truth is kept in
    obj: str
    at: datetime
    record: tuple[str, str, str]  # what record_fact is given
    sentence: str  # what an episode says


@dataclass
class Subject:
    name: str
    via_episodes: bool
    events: list[Event] = field(default_factory=list)


def scenario(subjects: int, rng: random.Random) -> tuple[list[Subject], list[Event], int]:
    """The subjects with their true histories, every event in arrival order, and how many arrive late."""
    people: list[Subject] = []
    names = [f"{f} {last}" for last in LAST for f in FIRST]
    rng.shuffle(names)
    for i, name in enumerate(names[:subjects]):
        person = Subject(name, via_episodes=i % 2 == 1)
        months = iter(sorted(rng.sample(range(0, 24), 12)))
        at = {}
        for city in rng.sample(CITIES, SINGLE["lives in"]):
            at[("lives in", city)] = next(months)
        for org in rng.sample(ORGS, SINGLE["works at"]):
            at[("works at", org)] = next(months)
        for hobby in rng.sample(HOBBIES, 3):
            at[("likes", hobby)] = next(months)
        for city in rng.sample(CITIES, 2):
            at[("visited", city)] = next(months)
        for friend in rng.sample([n for n in names[:subjects] if n != name], 2):
            at[("knows", friend)] = next(months)
        for (predicate, obj), month in sorted(at.items(), key=lambda kv: kv[1]):
            when = START + timedelta(days=30 * month + rng.randrange(0, 20))
            wording = {"lives in": "moved to", "works at": "joined"}.get(predicate, predicate)
            sentence = f"{name} {'likes' if predicate == 'likes' else wording} {obj}."
            person.events.append(Event(name, predicate, obj, when, (name, wording, obj), sentence))
        people.append(person)
    arrivals: list[Event] = []
    delayed = 0
    for person in people:
        ordered = list(person.events)
        late = [e for e in ordered if rng.random() < 0.25]  # imported later: arrive after newer events
        arrivals += [e for e in ordered if e not in late] + late
        delayed += sum(1 for e in late if e is not ordered[-1])
    return people, arrivals, delayed


def truth(person: Subject) -> tuple[dict[str, str], dict[str, list[tuple[datetime, datetime | None, str]]]]:
    """The latest value per single-valued predicate, and each value's event-time interval."""
    latest, spans = {}, {}
    for predicate in SINGLE:
        values = sorted((e for e in person.events if e.predicate == predicate), key=lambda e: e.at)
        latest[predicate] = values[-1].obj
        spans[predicate] = [(e.at, values[i + 1].at if i + 1 < len(values) else None, e.obj) for i, e in enumerate(values)]
    return latest, spans


class Policy:
    """One tenant of the stack, fed the same triples, retiring facts its own way."""

    def __init__(self, name: str, services: Any, tenant: str, drain: Callable[[], None]) -> None:
        from mnemo.domain.predicates import PredicateTable
        from mnemo.services.facts.service import FactService
        from mnemo.services.facts.upkeep import FactUpkeep

        self.name, self.services, self.drain = name, services, drain
        key = f"mn_factbench{tenant}_0123456789abcdefghijklmnop"
        services.keys.ensure(tenant, "bench", ["admin"], key)
        self.principal = services.keys.authenticate(key)
        if name == POLICIES[0]:
            self.facts = services.facts
        else:  # the same store, index and synonym table; nothing is single-valued, so nothing is retired
            table = PredicateTable(single_valued=frozenset())
            upkeep = FactUpkeep(services.fact_store, table, services.fact_index(), embedder=services.embedder)
            self.facts = FactService(services.fact_store, upkeep=upkeep, clock=services.clock)
        self.latencies: list[float] = []

    def feed(self, event: Event, via_episode: bool) -> None:
        from mnemo.domain.commands import CaptureCommand
        from mnemo.domain.fact_commands import RecordFactCommand

        if via_episode and self.name == POLICIES[0]:
            self.services.memories.capture(self.principal, CaptureCommand(raw=event.sentence, as_user=True,
                                                                          captured_at=event.at))
            self.drain()
            return
        triples = [event.record]
        if via_episode:  # what the worker would derive from the same episode
            found = self.services.extractor.extract(event.sentence).facts
            triples = [(f.subject, f.predicate, f.object) for f in found]
        for s, p, o in triples:
            recorded = self.facts.record_triple(self.principal, RecordFactCommand(subject=s, predicate=p, object=o,
                                                                                   valid_at=event.at)).edge
            if self.name == POLICIES[2]:
                self._retire_same_subject(recorded)

    def _retire_same_subject(self, new: Any) -> None:
        store, ns = self.services.fact_store, new.namespace
        for old in store.for_entity(ns, new.subject.id, limit=500):
            if old.uuid != new.uuid and old.subject.id == new.subject.id and (old.valid_at or old.created_at) <= new.valid_at:
                store.invalidate(ns.tenant, old.uuid, actor="bench", at=self.services.clock(), invalid_at=new.valid_at,
                                 invalidated_by=new.uuid)

    def search(self, query: str, as_of: datetime | None = None) -> list[Any]:
        from mnemo.services.facts.search import FactSearchQuery

        began = time.perf_counter()
        found = self.services.fact_search.search(self.principal, FactSearchQuery(query=query, limit=10, threshold=0.0, as_of=as_of))  # ranks, not the floor
        self.latencies.append((time.perf_counter() - began) * 1000)
        return [s.fact for s in found]

    def stored(self, subject: str) -> list[Any]:
        from mnemo.domain.graph import FactStatus

        return self.facts.about(self.principal, subject, statuses=(FactStatus.ACTIVE, FactStatus.INVALIDATED), limit=500)


QUESTIONS = {"lives in": "Where does {} live now?", "works at": "Where does {} work?"}
QUESTIONS_THEN = {"lives in": "Where did {} live?", "works at": "Where did {} work?"}


def judge(found: list[Any], predicate: str, expected: str) -> tuple[bool, bool]:
    """(the top edge is right, the first edge of that relation is right)."""
    top = bool(found) and found[0].predicate == predicate and found[0].object.name == expected
    first = next((f for f in found if f.predicate == predicate), None)
    return top, first is not None and first.object.name == expected


def evaluate(policy: Policy, people: list[Subject]) -> dict[str, Any]:
    from mnemo.domain.graph import FactStatus

    counts = {"current_top": 0, "current_first": 0, "current_n": 0, "as_of_top": 0, "as_of_first": 0, "as_of_n": 0,
              "over_invalidated": 0, "should_be_active": 0, "stale": 0, "should_be_retired": 0}
    for person in people:
        latest, spans = truth(person)
        for predicate, expected in latest.items():
            top, first = judge(policy.search(QUESTIONS[predicate].format(person.name)), predicate, expected)
            counts["current_top"] += top
            counts["current_first"] += first
            counts["current_n"] += 1
            counts[f"top {predicate}"] = counts.get(f"top {predicate}", 0) + top  # per relation: "work" vs "live"
            counts[f"n {predicate}"] = counts.get(f"n {predicate}", 0) + 1
            for begin, end, value in spans[predicate]:
                probe = begin + ((end - begin) / 2 if end else timedelta(days=15))
                top, first = judge(policy.search(QUESTIONS_THEN[predicate].format(person.name), as_of=probe), predicate, value)
                counts["as_of_top"] += top
                counts["as_of_first"] += first
                counts["as_of_n"] += 1
        for fact in policy.stored(person.name):
            if fact.subject.name != person.name:
                continue
            should_be_active = fact.predicate not in SINGLE or latest[fact.predicate] == fact.object.name
            active = fact.status == FactStatus.ACTIVE
            counts["should_be_active" if should_be_active else "should_be_retired"] += 1
            counts["over_invalidated"] += should_be_active and not active
            counts["stale"] += (not should_be_active) and active
    lat = sorted(policy.latencies)
    return {
        "current_value_top": round(counts["current_top"] / counts["current_n"], 3),
        "current_value_first_of_relation": round(counts["current_first"] / counts["current_n"], 3),
        "current_value_top_by_relation": {p: round(counts[f"top {p}"] / counts[f"n {p}"], 3) for p in SINGLE},
        "over_invalidated": counts["over_invalidated"], "should_be_active": counts["should_be_active"],
        "stale_active": counts["stale"], "should_be_retired": counts["should_be_retired"],
        "as_of_top": round(counts["as_of_top"] / counts["as_of_n"], 3),
        "as_of_first_of_relation": round(counts["as_of_first"] / counts["as_of_n"], 3),
        "search_p50_ms": round(statistics.median(lat), 1), "search_p95_ms": round(lat[int(0.95 * (len(lat) - 1))], 1),
        "searches": len(lat),
    }


def run(subjects: int, seed: int) -> dict[str, Any]:
    from mnemo.adapters.aws import client
    from mnemo.local.inprocess import answer_in_process
    from mnemo.local.poller import QueuePoller
    from mnemo.local.server import LocalStack

    people, arrivals, delayed = scenario(subjects, random.Random(seed))
    episodes = {p.name for p in people if p.via_episodes}
    with contextlib.redirect_stdout(sys.stderr):
        stack = LocalStack("mn_factbenchlocal_0123456789abcdefghijklmnop")
        stack.start()
    stack.poller.stop()
    services = stack.container
    sqs = answer_in_process(client("sqs"))
    poller = QueuePoller(sqs, services.settings.queue_url, stack.poller._handler, wait_seconds=0)

    def drain() -> None:
        with contextlib.redirect_stdout(sys.stderr):
            while poller.poll_once():
                pass

    results: dict[str, Any] = {}
    try:
        for i, name in enumerate(POLICIES):
            policy = Policy(name, services, f"t{i}", drain)
            began = time.perf_counter()
            for event in arrivals:
                policy.feed(event, event.subject in episodes)
            ingest = time.perf_counter() - began
            results[name] = {**evaluate(policy, people), "ingest_s": round(ingest, 1)}
    finally:
        stack.stop(forget=True)
    return {"subjects": subjects, "facts": len(arrivals), "late_arrivals": delayed,
            "via_episodes": len(episodes), "seed": seed, "policies": results}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subjects", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "fact_update.json")
    args = parser.parse_args()
    os.environ.update({"POWERTOOLS_LOG_LEVEL": "ERROR", "POWERTOOLS_METRICS_DISABLED": "true",
                       "MNEMO_MODEL_DIR": os.environ.get("MNEMO_MODEL_DIR", str(REPO / "models" / "minilm"))})
    result = run(args.subjects, args.seed)
    machine = f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    print(f"Fact updates: {result['subjects']} subjects ({result['via_episodes']} through episodes), {result['facts']} "
          f"facts, {result['late_arrivals']} arriving after newer facts of their subject; seed {result['seed']}; {machine}")
    print("| policy | current value (top edge) | current value (first of relation) | over-invalidated | stale active "
          "| as_of (top edge) | as_of (first of relation) | search p50 | search p95 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, r in result["policies"].items():
        print(f"| {name} | {r['current_value_top']:.3f} | {r['current_value_first_of_relation']:.3f} "
              f"| {r['over_invalidated']} of {r['should_be_active']} | {r['stale_active']} of {r['should_be_retired']} "
              f"| {r['as_of_top']:.3f} | {r['as_of_first_of_relation']:.3f} | {r['search_p50_ms']} ms | {r['search_p95_ms']} ms |")
    print("current value (top edge) per question:", {name: r["current_value_top_by_relation"]
                                                     for name, r in result["policies"].items()})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine, **result}, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
