"""Deduplication property test (issue 26, attack suite): the labelled pairs (tests/data/dedup_pairs.jsonl)
captured for a fresh user, then `deduplicate_memories dry_run=false` (the synchronous call, or the
whole-user job) while PATCHes of metadata and content land between dedup's reads and its archives
(deterministically: injected just before dedup's archive of a drawn memory; PATCHes whose trigger is
never archived land after the run). After each run:

- no acknowledged write is lost: every memory holds the text of its last acknowledged PATCH, and every
  key of its last acknowledged metadata, and its history lists every acknowledged version;
- no distinct pair is merged: neither memory of a pair labelled distinct is archived as a duplicate
  of the other (nor both of one kept memory);
- positive control: an exact-repeat pair (the same content hash) that no PATCH rewrote is merged, the later archived as
  `duplicate_of` the earlier.

Each pair's texts carry a marker unique to the pair (the same in both), so pairs never merge with one
another and the labels decide. Drawn from every labelled pair, of every kind: the rule is an allow-list
(docs/deduplication.md), so no kind of difference is left to the embedding. Bounded by the hypothesis
`ci` profile (tests/conftest.py)."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mnemo.domain.commands import CaptureCommand, EditCommand
from mnemo.domain.jobs import JobReceipt
from mnemo.domain.models import content_hash
from mnemo.services.jobs import service as jobs_module
from tests.integration.memories.test_dedup_races import BeforeArchive
from tests.integration.portability.test_jobs import run_jobs
from tests.integration.surfaces.test_profile_thrindex import enrich
from tests.unit.test_dedup_pairs import load_pairs, load_strict_pairs

PAIRS = load_pairs() + load_strict_pairs()  # units, swapped arguments, quantifiers, ... (issue 53 §1) too
_users = itertools.count()
STATS: Counter[str] = Counter()

patch = st.tuples(st.integers(0, 50), st.integers(0, 50), st.sampled_from(["metadata", "content"]))
RUNS = st.tuples(
    st.lists(st.sampled_from(PAIRS), min_size=2, max_size=5, unique_by=lambda p: (p["a"], p["b"])),
    st.lists(patch, max_size=4),
    st.sampled_from([0.85, 0.92]),
    st.booleans(),  # through the whole-user job instead of the synchronous call
)


@given(run=RUNS)
def test_concurrent_patches_during_deduplication_are_kept_and_no_distinct_pair_merges(container, aws, principal, run) -> None:
    pairs, patches, threshold, via_job = run
    n = next(_users)
    user = f"prop{n}"
    ids: list[tuple[str, str]] = []
    for number, pair in enumerate(pairs):
        tag = f"(ref zq{n:03d}{number:02d}x)"
        first, second = (container.memories.capture(principal, CaptureCommand(raw=f"{tag} {pair[side]}", user_id=user,
                                                                              as_user=True)).id for side in ("a", "b"))
        ids.append((first, second))
    enrich(aws)
    every = [i for pair in ids for i in pair]
    texts = {i: container.store.get("local", i).raw for i in every}
    metadata: dict[str, dict[str, Any]] = {i: {} for i in every}
    versions: dict[str, set[int]] = {i: {1} for i in every}
    rewritten: set[str] = set()
    # a trigger is a memory dedup may archive (the later of a duplicate pair) when there is one
    triggers = [b for pair, (_, b) in zip(pairs, ids, strict=True) if pair["label"] == "duplicate"] or every
    pending = [(triggers[t % len(triggers)], every[g % len(every)], kind) for t, g, kind in patches]

    def apply(target: str, kind: str) -> None:  # what PATCH /v1/memories/{id} does; its answer is the acknowledgement
        if kind == "metadata":
            command = EditCommand(metadata={"note": f"kept {n}-{target[:8]}"})
        else:
            command = EditCommand(raw_text=f"Rewritten zq{n}x while deduplicating {target[:8]}.")
        done = container.memories.edit(principal, target, command)
        texts[target], metadata[target] = done.raw, {k: v for k, v in done.metadata.items() if k != "duplicate_of"}
        versions[target].add(done.version)
        rewritten.update([target] if kind == "content" else [])
        STATS[f"patches ({kind})"] += 1

    def before(memory_id: str) -> None:
        for entry in [e for e in pending if e[0] == memory_id]:
            pending.remove(entry)
            apply(entry[1], entry[2])
            STATS["patches landing mid-run"] += 1

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(container.duplicates, "_memories", BeforeArchive(container.memories, before))
        if via_job:
            mp.setattr(jobs_module, "SYNC_DEDUP_LIMIT", 1)
            mp.setattr(jobs_module, "DEDUP_CHUNK", 3)
        outcome = container.jobs.deduplicate(principal, user, threshold)
        assert isinstance(outcome, JobReceipt) == via_job
        if via_job:
            run_jobs(container, aws)
            job = container.jobs.get(principal, outcome.job_id)
            assert job.status == "completed", job
            STATS["archived"] += job.summary.archived
            STATS["skipped"] += job.summary.skipped
        else:
            STATS["archived"] += len(outcome.archived)
            STATS["skipped"] += len(outcome.skipped)
    for target, _trigger_never_archived, kind in [(g, t, k) for t, g, k in pending]:
        apply(target, kind)  # the PATCHes whose trigger was never archived land after the run

    stored = {i: container.store.get("local", i) for i in every}
    for i, memory in stored.items():  # no acknowledged write lost
        assert memory is not None and memory.raw == texts[i], (i, texts[i])
        assert metadata[i].items() <= memory.metadata.items(), (i, metadata[i], memory.metadata)
        assert versions[i] <= {a.version for a in container.store.history("local", i)}
    for pair, (a, b) in zip(pairs, ids, strict=True):
        of_a, of_b = stored[a].metadata.get("duplicate_of"), stored[b].metadata.get("duplicate_of")
        if pair["label"] == "distinct":  # no distinct pair merged
            assert of_a != b and of_b != a and (of_a is None or of_a != of_b), pair
            STATS["distinct pairs checked"] += 1
        elif content_hash(pair["a"]) == content_hash(pair["b"]) and not {a, b} & rewritten:  # the positive control
            assert stored[b].status.value == "archived" and of_b == a, pair
            STATS["exact repeats merged"] += 1
    STATS["runs"] += 1
    STATS["runs via the job"] += via_job
    STATS["memories"] += len(every)
    print(dict(STATS))
