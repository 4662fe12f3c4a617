"""Issue 26 item 4: every imported field is checked before anything is written, on every surface
(REST, r3, an import job), and each refused item is reported failed with the field and the limit;
a stored item that no longer decodes never breaks a read and can always be erased."""

from __future__ import annotations

import json
from typing import Any

from mnemo.adapters.aws import client
from mnemo.adapters.dynamodb.codec import MEMORY_SK, memory_pk
from mnemo.services.jobs import service as jobs_module
from tests.integration.conftest import auth
from tests.integration.erasure.test_erasure import every_item
from tests.integration.portability.test_jobs import run_jobs
from tests.integration.surfaces.test_profile_r3 import app, call  # noqa: F401 - the fixture
from tests.integration.surfaces.test_profile_thrindex import text


def of_user(aws: dict[str, str], user: str) -> list[dict[str, Any]]:
    """Every memory and history item of `user` (a raw scan: what a read cannot see counts too)."""
    items = every_item(aws)
    memories = [i for i in items if i["sk"]["S"] == "MEMORY" and i.get("user_id", {}).get("S") == user]
    pks = {i["pk"]["S"] for i in memories}
    return memories + [i for i in items if i["sk"]["S"].startswith("H#") and i["pk"]["S"] in pks]


def history_rows(aws: dict[str, str]) -> set[str]:
    return {i["pk"]["S"] for i in every_item(aws) if i["sk"]["S"].startswith("H#")}


def test_a_source_id_over_the_limit_is_refused_per_item_and_writes_nothing(http, aws) -> None:
    before = history_rows(aws)
    # Given: an id of 20,000 characters, and one of 250,000 (the body still fits the 256 KiB limit)
    for length in (20_000, 250_000):
        response = http.post("/v1/import", json={"user_id": "ida", "data": [{"id": "x" * length, "content": "Ida's long id."}]},
                             headers=auth())
        # Then: a clear per-item failure naming the field and the limit, never 503 "retry shortly"
        assert response.status_code == 200, response.text
        report = response.json()
        assert report["imported"] == [] and report["failed"] == [
            {"index": 0, "reason": f"id: must be at most 256 characters (the limit); it is {length}"}]
    assert of_user(aws, "ida") == [] and history_rows(aws) == before  # nothing written, no orphan history row
    # Positive control: an id at the limit is imported and kept as the source id
    ok = http.post("/v1/import", json={"user_id": "ida", "data": [{"id": "y" * 256, "content": "Ida's long id."}]},
                   headers=auth()).json()
    assert len(ok["imported"]) == 1 and ok["failed"] == []
    stored = http.get(f"/v1/memories/{ok['imported'][0]}", headers=auth()).json()
    assert stored["metadata"]["source_id"] == "y" * 256


def test_metadata_is_held_to_16_kb_with_the_source_id_added(http, aws) -> None:
    blob = {"note": "m" * (16 * 1024 - 20)}  # within 16 KB alone, over it once source_id joins
    refused = http.post("/v1/import", json={"user_id": "ivo", "data": [{"id": "src-1", "content": "Ivo's note.", "metadata": blob}]},
                        headers=auth()).json()
    reason = refused["failed"][0]["reason"]
    assert refused["imported"] == [] and reason.startswith("metadata: must be at most 16384 bytes (16 KB) as JSON; it is ")
    assert reason.endswith("with the source id added as metadata.source_id")
    assert of_user(aws, "ivo") == []
    # Positive control: the same metadata without a source id fits, and is read back whole
    ok = http.post("/v1/import", json={"user_id": "ivo", "data": [{"content": "Ivo's note.", "metadata": blob}]},
                   headers=auth()).json()
    assert len(ok["imported"]) == 1
    assert http.get(f"/v1/memories/{ok['imported'][0]}", headers=auth()).json()["metadata"] == blob


def test_malformed_ids_are_refused_by_name(http) -> None:
    data = [{"id": {"nested": 1}, "content": "a"}, {"id": "  ", "content": "b"}, {"id": True, "content": "c"},
            {"id": 42, "content": "Ivy's numbered note."}]
    report = http.post("/v1/import", json={"user_id": "ivy", "data": data}, headers=auth()).json()
    assert [f["reason"].split(":")[0] for f in report["failed"]] == ["id", "id", "id"]
    assert report["failed"][1]["reason"] == "id: must not be empty; omit it for an item without a source id"
    assert len(report["imported"]) == 1  # positive control: an integer id (mem0, r3 numbering) is a source id


def test_r3_and_an_import_job_report_the_same_failure(app, container, aws, http) -> None:  # noqa: F811
    long_id = "z" * 20_000
    result = call(app, "import_memories", {"source": "json", "user_id": "una",
                                           "data": [{"id": long_id, "memory": "Una's note."}, {"id": "u-1", "memory": "Una's other note."}]})
    assert text(result).splitlines() == ["Imported 1, skipped 0, failed 1",
                                         "item 0: failed, id: must be at most 256 characters (the limit); it is 20000"]
    # A job (more than SYNC_IMPORT_LIMIT items): the item fails in the job's summary, the rest import
    data = [{"id": f"j-{i}", "memory": f"Una's job note {i}."} for i in range(jobs_module.SYNC_IMPORT_LIMIT)]
    data.insert(7, {"id": long_id, "memory": "Una's note."})
    job_id = http.post("/v1/import", json={"user_id": "una", "data": data}, headers=auth()).json()["job_id"]
    run_jobs(container, aws)
    job = http.get(f"/v1/jobs/{job_id}", headers=auth()).json()
    assert job["status"] == "completed"
    assert (job["summary"]["imported"], job["summary"]["failed"]) == (jobs_module.SYNC_IMPORT_LIMIT, 1)
    assert job["summary"]["reasons"] == ["item 7: id: must be at most 256 characters (the limit); it is 20000"]
    assert not [i for i in every_item(aws) if long_id in json.dumps(i) and not i["pk"]["S"].startswith("T#local#JOB#")]


def plant_oversized(aws: dict[str, str], memory_id: str) -> None:
    """What the issue found stored before these limits: a memory whose metadata.source_id is 20,000
    characters (over the 16 KB metadata limit), so it no longer decodes. Written with the client."""
    db = client("dynamodb")
    key = {"pk": {"S": memory_pk("local", memory_id)}, "sk": {"S": MEMORY_SK}}
    item = db.get_item(TableName=aws["MemoriesTable"], Key=key)["Item"]
    item["metadata_json"] = {"S": json.dumps({"source_id": "q" * 20_000})}
    item["source_id"] = {"S": "q" * 20_000}
    db.put_item(TableName=aws["MemoriesTable"], Item=item)


def under(aws: dict[str, str], memory_id: str) -> list[dict[str, Any]]:
    return [i for i in every_item(aws) if i["pk"]["S"] == memory_pk("local", memory_id)]


def test_an_unreadable_memory_never_breaks_reads_and_is_erased_by_id(http, aws, caplog) -> None:
    good = http.post("/v1/memories", json={"content": "Olga's kayak is green.", "user_id": "olga"}, headers=auth()).json()["id"]
    bad = http.post("/v1/memories", json={"content": "Olga's kayak paddle is red.", "user_id": "olga"}, headers=auth()).json()["id"]
    plant_oversized(aws, bad)  # still pending: every search's read of unindexed memories meets it

    caplog.clear()
    single = http.get(f"/v1/memories/{bad}", headers=auth())
    assert (single.status_code, single.json()["error"]["code"]) == (500, "unreadable_item")
    assert "can still be erased with a hard delete" in single.json()["error"]["message"]
    for _ in range(3):  # list and search skip it, logging it once, not once per search
        found = http.post("/v1/memories/search", json={"query": "Olga kayak", "user_id": "olga"}, headers=auth())
        assert found.status_code == 200 and [m["id"] for m in found.json()["results"]] == [good]
    page = http.get("/v1/memories", params={"user_id": "olga"}, headers=auth()).json()
    assert [m["id"] for m in page["results"]] == [good] and page["skipped"] == 1
    assert len([r for r in caplog.records if "unreadable memory item" in r.getMessage()]) == 1  # one report, not five

    # A hard delete erases it and counts it; nothing is left under its key
    erased = http.delete(f"/v1/memories/{bad}?hard=true", headers=auth())
    assert erased.status_code == 200, erased.text
    assert erased.json()["memory_ids"] == [bad] and erased.json()["counts"]["memories"] == 1
    assert under(aws, bad) == [] and http.get(f"/v1/memories/{bad}", headers=auth()).status_code == 404
    # Positive control: the readable memory of the same user is untouched
    assert http.get(f"/v1/memories/{good}", headers=auth()).status_code == 200 and under(aws, good)


def test_the_user_erasure_job_erases_and_counts_an_unreadable_memory(http, aws) -> None:
    from tests.integration.surfaces.test_profile_thrindex import enrich

    ids = [http.post("/v1/memories", json={"content": f"Pavel's note {n}.", "user_id": "pavel"}, headers=auth()).json()["id"]
           for n in range(2)]
    kept = http.post("/v1/memories", json={"content": "Rita's note.", "user_id": "rita"}, headers=auth()).json()["id"]
    plant_oversized(aws, ids[1])
    job_id = http.delete("/v1/users/pavel?hard=true", headers=auth()).json()["job_id"]
    enrich(aws)  # the worker runs the job's hops (and the enrichment tasks, the unreadable one failing)
    receipt = http.get(f"/v1/jobs/{job_id}", headers=auth()).json()
    assert receipt["status"] == "completed" and sorted(receipt["memory_ids"]) == sorted(ids)
    assert receipt["counts"]["memories"] == 2
    assert under(aws, ids[0]) == [] and under(aws, ids[1]) == []
    assert under(aws, kept) and http.get(f"/v1/memories/{kept}", headers=auth()).status_code == 200  # another user's
