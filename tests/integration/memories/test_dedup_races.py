"""Deduplication racing other writes (issue 26 items 6 and 7). A write injected between dedup's read
and its archive (deterministically: a wrapper around the MemoryService dedup calls) is never
overwritten; a repeat erased or changed mid-run is reported skipped with the reason, beside what was
archived, in the synchronous answer and in a job's summary."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mnemo.domain.commands import EditCommand
from mnemo.services.jobs import service as jobs_module
from tests.integration.portability.test_jobs import run_jobs
from tests.integration.surfaces.test_profile_r3 import app, call, saved_id  # noqa: F401 - the fixture
from tests.integration.surfaces.test_profile_thrindex import enrich, text

TEXTS = ["The wifi password is hunter2.", "Wifi password is hunter2!", "the wifi password is hunter2.",
         "Dinner is at eight on Friday."]


class BeforeArchive:
    """The MemoryService as deduplication sees it: `before(memory_id)` runs once per id just ahead of
    dedup's archive of it, i.e. after dedup read the memory and before it writes."""

    def __init__(self, memories: Any, before: Callable[[str], None]) -> None:
        self._memories, self._before, self._seen = memories, before, set[str]()

    def archive(self, principal: Any, memory_id: str, **options: Any) -> Any:  # dedup archives (memory:delete), never edits
        if memory_id not in self._seen:
            self._seen.add(memory_id)
            self._before(memory_id)
        return self._memories.archive(principal, memory_id, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._memories, name)


def saved(server: Any, user: str, texts: list[str]) -> list[str]:
    return [saved_id(call(server, "add_memory", {"content": t, "user_id": user, "skip_duplicate_check": True})) for t in texts]


def test_a_patch_landing_between_dedups_read_and_its_archive_is_kept(app, aws, container, principal, monkeypatch) -> None:  # noqa: F811
    ids = saved(app, "rc", TEXTS)
    enrich(aws)
    acknowledged = {}

    def patch(memory_id: str) -> None:  # what PATCH /v1/memories/{id} {"metadata": ...} does, answered 200
        if memory_id == ids[1]:
            acknowledged[memory_id] = container.memories.edit(principal, memory_id, EditCommand(metadata={"room": "kitchen"}))

    monkeypatch.setattr(container.duplicates, "_memories", BeforeArchive(container.memories, patch))
    applied = call(app, "deduplicate_memories", {"user_id": "rc", "similarity_threshold": 0.9, "dry_run": False})
    assert acknowledged[ids[1]].version == 2
    raced = container.store.get("local", ids[1])
    assert raced.metadata == {"room": "kitchen", "duplicate_of": ids[0]}  # the PATCH is kept, then archived
    assert raced.status.value == "archived" and raced.version == 3
    assert [a.action for a in container.store.history("local", ids[1])] == ["created", "edited", "archived"]
    control = container.store.get("local", ids[2])  # the positive control: no race, archived as before
    assert control.status.value == "archived" and control.metadata == {"duplicate_of": ids[0]}
    assert sorted(applied.structured_content["archived"]) == sorted(ids[1:3]) and applied.structured_content["skipped"] == []
    assert container.store.get("local", ids[0]).status.value == "open" and container.store.get("local", ids[3]).version == 1


def test_a_repeat_whose_text_changed_meanwhile_is_skipped_not_archived(app, aws, container, principal, monkeypatch) -> None:  # noqa: F811
    ids = saved(app, "rt", TEXTS)
    enrich(aws)

    def rewrite(memory_id: str) -> None:
        if memory_id == ids[1]:
            container.memories.edit(principal, memory_id, EditCommand(raw_text="Our wifi password is now swordfish."))

    monkeypatch.setattr(container.duplicates, "_memories", BeforeArchive(container.memories, rewrite))
    applied = call(app, "deduplicate_memories", {"user_id": "rt", "similarity_threshold": 0.9, "dry_run": False})
    report = applied.structured_content
    assert report["archived"] == [ids[2]]
    assert report["skipped"] == [{"id": ids[1], "reason": "its text changed since the comparison; run deduplication again"}]
    changed = container.store.get("local", ids[1])
    assert changed.status.value == "open" and changed.raw == "Our wifi password is now swordfish." and "duplicate_of" not in changed.metadata
    assert "archived 1, skipped 1." in text(applied) and f"Skipped {ids[1]}: its text changed" in text(applied)


def test_a_dedup_interrupted_by_an_erasure_reports_what_it_archived_and_what_it_skipped(app, aws, container, principal, monkeypatch) -> None:  # noqa: F811
    ids = saved(app, "er", [*TEXTS, "Dinner is at eight on Friday!"])
    enrich(aws)

    def erase(memory_id: str) -> None:  # mid-run: a repeat, and the kept memory of the next group
        if memory_id == ids[1]:
            container.erasure.erase_memory(principal, ids[1])
            container.erasure.erase_memory(principal, ids[3])

    monkeypatch.setattr(container.duplicates, "_memories", BeforeArchive(container.memories, erase))
    applied = call(app, "deduplicate_memories", {"user_id": "er", "similarity_threshold": 0.9, "dry_run": False})
    assert not applied.is_error
    assert applied.structured_content["archived"] == [ids[2]]  # what was applied
    gone = f"the kept memory {ids[3]} was changed, archived or erased since the comparison"
    assert applied.structured_content["skipped"] == [{"id": ids[1], "reason": "erased since it was read"},
                                                     {"id": ids[4], "reason": gone}]
    assert text(applied).startswith("Found 2 duplicate groups among 5 memories; archived 1, skipped 2.")
    assert f"Skipped {ids[1]}: erased since it was read" in text(applied) and f"Skipped {ids[4]}: {gone}" in text(applied)
    assert container.store.get("local", ids[2]).status.value == "archived"
    assert container.store.get("local", ids[4]).status.value == "open"  # its original is gone: it stays live


def test_a_dedup_job_reports_per_memory_what_it_archived_and_skipped(app, aws, container, principal, monkeypatch) -> None:  # noqa: F811
    ids = saved(app, "jb", [*TEXTS, "Dinner is at eight on Friday!"])
    enrich(aws)
    monkeypatch.setattr(jobs_module, "SYNC_DEDUP_LIMIT", 2)  # 5 live memories: a job
    monkeypatch.setattr(jobs_module, "DEDUP_CHUNK", 5)

    def erase(memory_id: str) -> None:
        if memory_id == ids[1]:
            container.erasure.erase_memory(principal, memory_id)

    monkeypatch.setattr(container.duplicates, "_memories", BeforeArchive(container.memories, erase))
    job_id = call(app, "deduplicate_memories", {"user_id": "jb", "dry_run": False}).structured_content["job_id"]
    assert run_jobs(container, aws) == 2  # the plan, one chunk
    job = container.jobs.get(principal, job_id)
    assert job.status == "completed" and job.summary.archived == 2 and job.summary.skipped == 1
    assert job.summary.reasons == [f"memory {ids[1]}: erased since it was read"]
    assert container.store.get("local", ids[2]).metadata == {"duplicate_of": ids[0]}  # the positive controls
    assert container.store.get("local", ids[4]).metadata == {"duplicate_of": ids[3]}
