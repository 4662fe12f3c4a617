"""Long operations as jobs (docs/import-export.md "Jobs"): a large REST import answers 202 and the real
worker handler imports it chunk by chunk; `GET /v1/jobs/{job_id}` is tenant-scoped; a redelivered step
never redoes a checkpointed chunk; a whole-user deduplication above the synchronous size is a job that
archives what the synchronous grouping archives."""

from __future__ import annotations

from typing import Any

from mnemo.domain.jobs import JobStep
from mnemo.services.jobs import service as jobs_module
from mnemo.surfaces.worker import handle_batch
from tests.integration.conftest import OTHER_KEY, Context, auth
from tests.integration.erasure.test_erasure import every_item
from tests.integration.surfaces.test_profile_r3 import app, call  # noqa: F401 - the fixture
from tests.integration.surfaces.test_profile_thrindex import READER_KEY, enrich, text


def job_messages(sqs: Any, url: str) -> list[dict[str, Any]]:
    """Receive the queue's job steps as Lambda records; enrichment tasks are dropped (these tests read the store)."""
    records = []
    while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"]).get("Messages", []):
        for m in batch:
            if '"task":"job"' in m["Body"]:
                records.append({"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
                                "attributes": {"ApproximateReceiveCount": m["Attributes"]["ApproximateReceiveCount"]},
                                "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs", "awsRegion": "us-east-1",
                                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:mnemo-enrichment"})
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return records


def run_jobs(container: Any, aws: dict[str, str]) -> int:
    """Feed job steps to the real worker handler until none is queued; how many steps ran."""
    from mnemo.adapters.aws import client as aws_client

    sqs, ran = aws_client("sqs"), 0
    while records := job_messages(sqs, aws["EnrichmentQueue"]):
        assert handle_batch({"Records": records}, Context(), container)["batchItemFailures"] == []
        ran += len(records)
    return ran


def items(count: int, prefix: str = "src") -> list[dict[str, Any]]:
    return [{"id": f"{prefix}-{i}", "memory": f"Kite festival note number {i} for Pia."} for i in range(count)]


def test_a_large_import_is_a_job_checkpointed_per_chunk_and_read_only_by_its_tenant(http, container, aws) -> None:
    # Given an import above the synchronous limit, with one item that fails
    data = [*items(jobs_module.SYNC_IMPORT_LIMIT + 30), {"id": "bad", "memory": "x", "status": "lost"}]
    response = http.post("/v1/import", json={"user_id": "pia", "data": data}, headers=auth())
    assert response.status_code == 202, response.text
    job_id = response.json()["job_id"]
    assert response.headers["location"] == f"/v1/jobs/{job_id}"
    assert response.json()["status"] == "queued" and response.json()["progress"] == {"done": 0, "total": len(data)}
    parts = [i for i in every_item(aws) if i["pk"]["S"] == f"T#local#JOB#{job_id}" and i["sk"]["S"].startswith("P#")]
    assert sorted(p["sk"]["S"] for p in parts) == ["P#00000", "P#00001", "P#00002"]  # the items wait as job parts
    assert all(len(p["items"]["S"]) < 400_000 and int(p["expires_at"]["N"]) > 0 for p in parts)
    # When the first chunk runs, and its message is delivered again
    first = JobStep(tenant="local", job_id=job_id, step=0)
    container.jobs.run(first)
    after_one = http.get(f"/v1/jobs/{job_id}", headers=auth()).json()
    container.jobs.run(first)  # stale: the chunk is checkpointed
    assert http.get(f"/v1/jobs/{job_id}", headers=auth()).json() == after_one
    assert after_one["status"] == "running" and after_one["progress"]["done"] == jobs_module.IMPORT_CHUNK
    assert after_one["summary"]["imported"] == jobs_module.IMPORT_CHUNK
    # Then the worker finishes it (the queued step 0 is stale too), each item counted once
    assert run_jobs(container, aws) == 3  # the original step 0 (stale), steps 1 and 2
    done = http.get(f"/v1/jobs/{job_id}", headers=auth()).json()
    assert done["status"] == "completed" and done["progress"] == {"done": len(data), "total": len(data)}
    assert (done["summary"]["imported"], done["summary"]["skipped"], done["summary"]["failed"]) == (len(data) - 1, 0, 1)
    assert done["summary"]["reasons"] == [f"item {len(data) - 1}: status: must be one of open, completed, archived, not 'lost'"]
    listed = http.get("/v1/export?user_id=pia&limit=100", headers=auth()).json()
    assert len(listed["memories"]) == 100 and listed["next_cursor"]
    # Tenancy: another tenant's key gets 404 for the same id; a read-only key of this tenant reads it
    container.keys.ensure("local", "reader", ["memory:read"], READER_KEY)
    assert http.get(f"/v1/jobs/{job_id}", headers=auth(OTHER_KEY)).status_code == 404
    assert http.get(f"/v1/jobs/{job_id}", headers=auth(READER_KEY)).json()["summary"] == done["summary"]
    assert http.get("/v1/jobs/no-such-job", headers=auth()).status_code == 404
    # And a rerun of the whole import skips every item by its source id
    again = http.post("/v1/import", json={"user_id": "pia", "data": data}, headers=auth()).json()["job_id"]
    run_jobs(container, aws)
    summary = http.get(f"/v1/jobs/{again}", headers=auth()).json()["summary"]
    assert (summary["imported"], summary["skipped"], summary["failed"]) == (0, len(data) - 1, 1)


def test_a_small_import_stays_synchronous(http, container) -> None:
    response = http.post("/v1/import", json={"user_id": "pia", "data": items(3)}, headers=auth())
    assert response.status_code == 200 and len(response.json()["imported"]) == 3


def test_r3_import_above_the_limit_answers_the_job_id_and_how_to_check_it(app, container, aws) -> None:  # noqa: F811
    result = call(app, "import_memories", {"source": "json", "data": items(jobs_module.SYNC_IMPORT_LIMIT + 1, "r3"),
                                           "user_id": "quinn", "batch_size": 150})
    job_id = result.structured_content["job_id"]
    assert text(result).startswith(f"Started the import as job {job_id} (import, queued)")
    assert f"GET /v1/jobs/{job_id}" in text(result)
    assert run_jobs(container, aws) == 2  # batch_size chunks the job: 150 + 51
    principal = container.keys.authenticate("mn_testlocal_0123456789abcdefghijklmnop")
    assert container.jobs.get(principal, job_id).summary.imported == jobs_module.SYNC_IMPORT_LIMIT + 1


DUPLICATES = [
    "I am allergic to peanuts.",
    "Ola plays the cello on Sundays.",
    "  i am ALLERGIC to peanuts. ",  # exact repeat of the first
    "The boiler was serviced in March.",
    "Ola plays the cello on Sundays!",  # the second, punctuated otherwise (an allowed difference)
    "the boiler was serviced in march.",  # exact repeat of the fourth
]


def test_a_whole_user_deduplication_above_the_sync_size_is_a_job_archiving_what_the_sync_grouping_would(
        app, container, aws, monkeypatch) -> None:  # noqa: F811
    for content in DUPLICATES:
        call(app, "add_memory", {"content": content, "user_id": "ola", "skip_duplicate_check": True})
        call(app, "add_memory", {"content": content, "user_id": "olb", "skip_duplicate_check": True})  # the control
    enrich(aws)
    preview = call(app, "deduplicate_memories", {"user_id": "olb", "dry_run": True}).structured_content
    expected = sorted(d["memory"]["raw"] for g in preview["groups"] for d in g["repeats"])
    assert len(expected) == 3  # positive control: the synchronous grouping finds the three repeats
    monkeypatch.setattr(jobs_module, "SYNC_DEDUP_LIMIT", 4)  # 6 live memories: a job of 3 chunks
    monkeypatch.setattr(jobs_module, "DEDUP_CHUNK", 2)
    started = call(app, "deduplicate_memories", {"user_id": "ola", "dry_run": False})
    job_id = started.structured_content["job_id"]
    assert text(started).startswith(f"Started the deduplication as job {job_id} (deduplicate, queued)")
    assert run_jobs(container, aws) == 4  # the plan, then 3 chunks
    principal = container.keys.authenticate("mn_testlocal_0123456789abcdefghijklmnop")
    job = container.jobs.get(principal, job_id)
    assert job.status == "completed" and job.summary.archived == 3 and job.progress.done == 6
    listed = call(app, "get_all_memories", {"user_id": "ola", "prefer_cache": False}).structured_content["memories"]
    assert sorted(m["content"] for m in listed) == sorted(DUPLICATES[i] for i in (0, 1, 3))
    archived = sorted(set(DUPLICATES) - {m["content"] for m in listed})
    assert sorted(a.strip() for a in archived) == sorted(e.strip() for e in expected)
    olb = call(app, "get_all_memories", {"user_id": "olb", "prefer_cache": False}).structured_content["memories"]
    assert len(olb) == 6  # another user's repeats are untouched


def test_a_hop_that_dies_before_queueing_the_next_step_is_resumed_by_the_redelivery(http, container, aws, monkeypatch) -> None:
    from mnemo.errors import DependencyError

    data = items(jobs_module.SYNC_IMPORT_LIMIT + 1, "lost")
    job_id = http.post("/v1/import", json={"user_id": "rae", "data": data}, headers=auth()).json()["job_id"]
    queue = container.jobs._queue
    real = queue.send_step
    monkeypatch.setattr(queue, "send_step", lambda step: (_ for _ in ()).throw(DependencyError("enrichment queue unavailable")))
    try:
        container.jobs.run(JobStep(tenant="local", job_id=job_id, step=0))  # checkpointed, next step never sent
    except DependencyError:
        pass
    else:
        raise AssertionError("the send should have failed")
    monkeypatch.setattr(queue, "send_step", real)
    assert http.get(f"/v1/jobs/{job_id}", headers=auth()).json()["progress"]["done"] == jobs_module.IMPORT_CHUNK
    assert run_jobs(container, aws) == 3  # SQS redelivers step 0: stale, it re-sends step 1; then step 2
    done = http.get(f"/v1/jobs/{job_id}", headers=auth()).json()
    assert done["status"] == "completed" and done["summary"]["imported"] == len(data) and done["summary"]["skipped"] == 0


def test_a_chunk_failing_on_its_last_delivery_marks_the_job_failed_with_the_reason(http, container, aws, monkeypatch) -> None:
    from mnemo.errors import DependencyError

    job_id = http.post("/v1/import", json={"user_id": "sol", "data": items(jobs_module.SYNC_IMPORT_LIMIT + 1)},
                       headers=auth()).json()["job_id"]

    def down(*args, **kwargs):
        raise DependencyError("memory store unavailable (ThrottlingException)")

    monkeypatch.setattr(container.imports, "run", down)
    body = JobStep(tenant="local", job_id=job_id, step=0).model_dump_json()
    records = [{"messageId": f"m{count}", "receiptHandle": "r", "body": body, "attributes": {"ApproximateReceiveCount": str(count)},
                "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs", "awsRegion": "us-east-1",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:mnemo-enrichment"} for count in (1, 5)]
    assert handle_batch({"Records": records[:1]}, Context(), container)["batchItemFailures"] == [{"itemIdentifier": "m1"}]
    assert http.get(f"/v1/jobs/{job_id}", headers=auth()).json()["status"] == "running"  # not final: SQS retries
    assert handle_batch({"Records": records[1:]}, Context(), container)["batchItemFailures"] == [{"itemIdentifier": "m5"}]
    failed = http.get(f"/v1/jobs/{job_id}", headers=auth()).json()
    assert failed["status"] == "failed" and failed["error"].startswith("memory store unavailable (ThrottlingException)")
