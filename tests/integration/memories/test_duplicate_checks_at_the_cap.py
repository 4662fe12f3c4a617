"""Duplicate checks are no free work at the write cap (issue 26 item 8, docs/tenancy.md "Duplicate
checks"): a check runs only when the write limit has room for the captures it precedes, so a tenant at
its cap importing 150 copies of an existing memory is refused before any embedding or k-NN query;
under the cap the same import skips them as duplicates (the control)."""

from __future__ import annotations

from typing import Any

from mnemo.domain.tenancy import Counter
from tests.integration.conftest import auth
from tests.integration.tenancy.test_tenancy import call as mcp_call  # JSON-RPC over the app
from tests.integration.tenancy.test_tenancy import text


class Counting:
    """Counts the embedder's calls (each a batch the duplicate check would embed)."""

    def __init__(self, embedder: Any) -> None:
        self.calls, self._embed = 0, embedder.embed

    def embed(self, texts: list[str], *, keep_states: bool = False) -> list[list[float]]:
        self.calls += 1
        return self._embed(texts, keep_states=keep_states)


def test_at_the_write_cap_an_import_of_copies_is_refused_before_any_embedding(http, container, monkeypatch) -> None:
    original = http.post("/v1/memories", json={"content": "My bank PIN is 4471.", "user_id": "cap"}, headers=auth())
    assert original.status_code == 201, original.text
    counting = Counting(container.embedder)
    monkeypatch.setattr(container.embedder, "embed", counting.embed)
    copies = {"user_id": "cap", "data": [{"content": "My bank PIN is 4471."}] * 150}

    container.meter.configure("local", {Counter.WRITES: 1}, None)  # at the cap: the capture above used it
    refused = http.post("/v1/import", json=copies, headers=auth())
    assert refused.status_code == 429, refused.text[:300]
    assert refused.json() == {"error": {"code": "quota_exceeded", "message": "monthly write limit reached"}}
    assert counting.calls == 0  # no embedding, hence no k-NN query either
    assert container.meter.usage("local").used[Counter.WRITES] == 1

    container.meter.configure("local", {Counter.WRITES: None}, None)  # the control: under the cap
    report = http.post("/v1/import", json=copies, headers=auth())
    assert report.status_code == 200, report.text
    body = report.json()
    assert body["imported"] == [] and len(body["skipped"]) == 150
    assert {s["reason"] for s in body["skipped"]} == {f"duplicate of {original.json()['id']}"}
    assert counting.calls == 1  # one check: the 149 others repeat the first within the call
    assert container.meter.usage("local").used[Counter.WRITES] == 1  # a skipped duplicate is never charged


def test_at_the_write_cap_add_memory_is_refused_before_its_duplicate_check(http, container, monkeypatch) -> None:
    assert http.post("/v1/memories", json={"content": "My bank PIN is 4471."}, headers=auth()).status_code == 201
    counting = Counting(container.embedder)
    monkeypatch.setattr(container.embedder, "embed", counting.embed)
    container.meter.configure("local", {Counter.WRITES: 1}, None)
    refused = mcp_call(http, "/mcp/r3", "add_memory", {"content": "My bank PIN is 4471."})
    assert refused["isError"] and text(refused) == "quota_exceeded: monthly write limit reached" and counting.calls == 0
    container.meter.configure("local", {Counter.WRITES: 2}, None)  # the control: room for one capture
    found = mcp_call(http, "/mcp/r3", "add_memory", {"content": "My bank PIN is 4471."})
    assert not found.get("isError") and text(found).startswith("Already saved (id: ")
    assert counting.calls == 1


def test_at_the_write_cap_deduplication_still_archives_repeats_while_a_capture_is_refused(http, container) -> None:
    """Archiving is never counted (docs/tenancy.md "What counts"), deduplication's archives included:
    at the write cap a tenant can still clean up its repeats, while its next capture is refused."""
    texts = ["My bank PIN is 4471.", "my bank PIN is 4471.", "The gym is closed on Sundays."]
    ids = [http.post("/v1/memories", json={"content": t, "user_id": "capd"}, headers=auth()).json()["id"] for t in texts]
    container.meter.configure("local", {Counter.WRITES: 3}, None)  # at the cap: the three captures used it

    refused = http.post("/v1/memories", json={"content": "A fourth memory.", "user_id": "capd"}, headers=auth())
    assert refused.status_code == 429 and refused.json()["error"]["message"] == "monthly write limit reached"
    applied = mcp_call(http, "/mcp/r3", "deduplicate_memories", {"user_id": "capd", "dry_run": False})
    assert not applied.get("isError"), text(applied)
    assert applied["structuredContent"]["archived"] == [ids[1]] and applied["structuredContent"]["skipped"] == []
    archived = container.store.get("local", ids[1])
    assert archived.status.value == "archived" and archived.metadata == {"duplicate_of": ids[0]}
    assert [container.store.get("local", i).status.value for i in (ids[0], ids[2])] == ["open", "open"]
    assert container.meter.usage("local").used[Counter.WRITES] == 3  # the archive counted nothing


SKIPPED_AT_CAP = ("skipped: this tenant's monthly retrieval limit is reached, so no text was compared with stored "
                  "memories (an import still skips items by their source id)")


def test_a_duplicate_check_costs_one_retrieval_and_at_the_retrieval_cap_is_skipped_never_refusing_the_write(
        http, container) -> None:
    """A duplicate check is a similarity search: charged one `retrievals` unit, also when it finds the
    duplicate (nothing stored). At the retrievals cap the check is skipped and the write proceeds,
    saying so, as for a key without memory:read (docs/tenancy.md "Duplicate checks")."""
    original = http.post("/v1/memories", json={"content": "My bank PIN is 4471.", "user_id": "rc"}, headers=auth()).json()["id"]

    def used() -> dict[Counter, int]:
        return container.meter.usage("local").used

    before = used()
    found = mcp_call(http, "/mcp/r3", "add_memory", {"content": "My bank PIN is 4471.", "user_id": "rc"})
    assert text(found) == f"Already saved (id: {original})"
    assert used()[Counter.RETRIEVALS] == before[Counter.RETRIEVALS] + 1  # the check that found it is charged
    assert used()[Counter.WRITES] == before[Counter.WRITES]  # and nothing stored

    copies = {"user_id": "rc", "data": [{"content": "My bank PIN is 4471."}] * 5 + [{"content": "The gym opens at 6."}]}
    report = http.post("/v1/import", json=copies, headers=auth()).json()
    assert len(report["skipped"]) == 5 and len(report["imported"]) == 1 and report.get("duplicate_check") is None
    assert used()[Counter.RETRIEVALS] == before[Counter.RETRIEVALS] + 3  # one per distinct text compared

    container.meter.configure("local", {Counter.RETRIEVALS: used()[Counter.RETRIEVALS]}, None)  # at the cap
    saved = mcp_call(http, "/mcp/r3", "add_memory", {"content": "My bank PIN is 4471.", "user_id": "rc"})
    assert not saved.get("isError") and text(saved).startswith("Saved (id: ")
    assert text(saved).endswith(f"; duplicate check {SKIPPED_AT_CAP}")
    assert saved["structuredContent"]["duplicate_check"] == SKIPPED_AT_CAP
    imported = http.post("/v1/import", json=copies, headers=auth())
    assert imported.status_code == 200, imported.text
    assert len(imported.json()["imported"]) == 6 and imported.json()["duplicate_check"] == SKIPPED_AT_CAP
    assert used()[Counter.RETRIEVALS] == before[Counter.RETRIEVALS] + 3  # the cap: nothing more charged
    assert used()[Counter.WRITES] == before[Counter.WRITES] + 1 + 1 + 6  # the writes all proceeded
    # the control: a search at the same cap is refused, so the cap is real and only the check is spared
    search = http.post("/v1/search", json={"query": "bank PIN"}, headers=auth())
    assert search.status_code == 429 and search.json()["error"]["message"] == "monthly retrieval limit reached"


def test_at_the_retrieval_cap_an_import_job_imports_each_chunk_unchecked_and_says_so(http, container, aws) -> None:
    from mnemo.services.jobs import service as jobs_module
    from tests.integration.portability.test_jobs import run_jobs

    original = http.post("/v1/memories", json={"content": "My bank PIN is 4471.", "user_id": "rj"}, headers=auth())
    copies = [{"content": "My bank PIN is 4471."}] * (jobs_module.SYNC_IMPORT_LIMIT + 1)
    container.meter.configure("local", {Counter.RETRIEVALS: container.meter.usage("local").used[Counter.RETRIEVALS]}, None)
    job = http.post("/v1/import", json={"user_id": "rj", "data": copies}, headers=auth())
    assert job.status_code == 202, job.text
    run_jobs(container, aws)
    done = http.get(f"/v1/jobs/{job.json()['job_id']}", headers=auth()).json()
    assert done["status"] == "completed" and done["summary"]["imported"] == len(copies), done
    chunk = jobs_module.IMPORT_CHUNK
    assert done["summary"]["reasons"][0] == f"items 0-{chunk - 1}: duplicate check {SKIPPED_AT_CAP}"
    assert f"duplicate of {original.json()['id']}" not in str(done["summary"])  # nothing was compared
