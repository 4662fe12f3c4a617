"""DELETE /v1/users/{user_id}?hard=true: one user's memories erased by an asynchronous job that the
real worker handler runs hop by hop from the queue. After it, a walk of every table item and every
index document finds nothing of that user, while another user of the tenant (saying the same thing)
and the same user id in another tenant keep everything (positive controls). Redelivered and
interrupted messages neither double-count nor resurrect."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mnemo.domain.erasure import ErasureStep
from mnemo.domain.namespace import Namespace, NamespaceFilter
from mnemo.ports import EnrichmentTask, SearchQuery
from mnemo.services.erasure.memories import ErasureService
from tests.integration.conftest import OTHER_KEY, auth
from tests.integration.erasure.test_erasure import every_item, mentions
from tests.integration.surfaces.test_profile_thrindex import READER_KEY, enrich

SAME = "Ana Kowalczyk works at Fernhollow Bank."
ANA_ONLY = "Quorvale"  # a word only Ana's memories use


def capture(http, content: str, key: str | None = None, **fields: Any) -> str:
    response = http.post("/v1/memories", json={"content": content, **fields}, headers=auth(key) if key else auth())
    assert response.status_code == 201, response.text
    return response.json()["id"]


def index_ids(container, tenant: str, user: str | None, words: str) -> set[str]:
    query = SearchQuery(scope=NamespaceFilter(tenant=tenant, user_id=user), text=words, authors=["user", "agent"],
                        statuses=["open", "completed", "archived"])
    return {c.memory_id for c in container.index().search(query)}


def fact_hits(container, tenant: str, user: str, words: str) -> list[str]:
    namespace = Namespace(tenant=tenant, user_id=user)
    return [h.fact_uuid for h in container.fact_index().search(namespace, words, None, 10)]


def of_user(items: list[dict[str, Any]], tenant: str, user: str) -> list[dict[str, Any]]:
    """Items keyed or indexed under the user's namespace (postings, entity nodes, names, facts' edges, browse keys)."""
    return [i for i in items if f"T#{tenant}#U#{user}#" in json.dumps(i)]


@pytest.fixture
def people(http, container, principal, aws) -> dict[str, Any]:
    """Ana: five memories across statuses, authors, agents and groups, two of them saying one fact
    (within her namespace they support one fact); Ben, in the same tenant, says Ana's fact too (his
    own namespace: his own fact); another tenant has a user `ana` of its own."""
    ana = [
        capture(http, SAME, user_id="ana", as_user=True),
        capture(http, "Ana Kowalczyk works at Fernhollow Bank in Quorvale.", user_id="ana", agent_id="helper"),
        capture(http, "Ana booked a Quorvale ferry for Friday.", user_id="ana", as_user=True, group_id="trips"),
        capture(http, "Ana's Quorvale dentist appointment is on Monday.", user_id="ana", as_user=True),
        capture(http, "Quorvale marathon training plan for Ana.", user_id="ana", agent_id="coach"),
    ]
    ben = [capture(http, SAME, user_id="ben", as_user=True), capture(http, "Ben likes Tindrel cheese.", user_id="ben")]
    elsewhere = capture(http, "Ana's Quorvale notes in another tenant.", key=OTHER_KEY, user_id="ana", as_user=True)
    enrich(aws)
    assert http.patch(f"/v1/memories/{ana[3]}", json={"status": "completed"}, headers=auth()).status_code == 200
    assert http.delete(f"/v1/memories/{ana[4]}", headers=auth()).json()["status"] == "archived"
    assert http.patch(f"/v1/memories/{ana[2]}", json={"content": "Ana booked a Quorvale ferry for Saturday."},
                      headers=auth()).status_code == 200  # history now holds the old text
    enrich(aws)
    before = every_item(aws)
    # the walk sees what it looks for: Ana's text, her namespace's items, her facts in both indexes
    assert mentions(before, ANA_ONLY) and of_user(before, "local", "ana") and fact_hits(container, "local", "ana", "Fernhollow")
    assert set(ana[:4]) <= index_ids(container, "local", "ana", "Ana Quorvale Fernhollow")  # archived: out of the index
    return {"ana": ana, "ben": ben, "elsewhere": elsewhere}


def erase_ana(http) -> str:
    response = http.delete("/v1/users/ana?hard=true", headers=auth())
    assert response.status_code == 202, response.text
    job_id = response.json()["job_id"]
    assert response.headers["location"] == f"/v1/jobs/{job_id}"
    assert response.json()["status"] == "queued" and response.json()["memory_ids"] == []
    return job_id


def assert_ana_gone(http, container, aws, people: dict[str, Any]) -> None:
    everything = every_item(aws)
    after = [i for i in everything if not i["pk"]["S"].startswith("T#other#")]  # the other tenant's `ana` stays
    assert mentions([i for i in everything if i not in after], ANA_ONLY)
    assert mentions(after, ANA_ONLY) == [] and mentions(after, "Friday", "Saturday", "dentist") == []
    assert of_user(after, "local", "ana") == []
    for memory_id in people["ana"]:  # only the job's receipt rows and the tombstones name her memories
        assert {i["pk"]["S"].split("#")[2] for i in mentions(after, memory_id)} == {"JOB", "ERASED"}
        assert http.get(f"/v1/memories/{memory_id}", headers=auth()).status_code == 404
    found = index_ids(container, "local", None, "Ana Quorvale Fernhollow Kowalczyk ferry dentist marathon")
    assert people["ben"][0] in found and found <= set(people["ben"])  # Ben's say the same words; Ana's are gone
    assert fact_hits(container, "local", "ana", "Ana Kowalczyk Fernhollow") == []
    # positive controls: Ben's memories, facts and index documents, and the other tenant's `ana`
    assert of_user(after, "local", "ben") and mentions(after, "Tindrel")
    found = http.post("/v1/memories/search", json={"query": "where does Ana Kowalczyk work", "user_id": "ben"}, headers=auth()).json()
    assert people["ben"][0] in [m["id"] for m in found["results"]]
    assert http.get(f"/v1/memories/{people['ben'][0]}", headers=auth()).json()["facts"]
    assert fact_hits(container, "local", "ben", "Ana Kowalczyk Fernhollow")
    assert http.get(f"/v1/memories/{people['elsewhere']}", headers=auth(OTHER_KEY)).status_code == 200
    assert index_ids(container, "other", "ana", ANA_ONLY) == {people["elsewhere"]}


def test_a_user_erasure_job_leaves_nothing_of_the_user_and_everything_of_others(http, container, aws, people, monkeypatch) -> None:
    monkeypatch.setattr(container.erasure_jobs, "_page", 2)  # five memories: three hops, each re-enqueuing the next
    job_id = erase_ana(http)
    assert http.get(f"/v1/jobs/{job_id}", headers=auth()).json()["status"] == "queued"
    enrich(aws)  # the real worker handler, fed by the queue poller as Lambda's event source mapping would

    response = http.get(f"/v1/jobs/{job_id}", headers=auth())
    receipt = response.json()
    assert receipt["status"] == "completed" and receipt["kind"] == "user" and receipt["job_id"] == job_id
    assert sorted(receipt["memory_ids"]) == sorted(people["ana"])
    counts = receipt["counts"]
    # history: five "created" lines (capture records creation) and three edits
    assert counts["memories"] == 5 and counts["history"] == 8 and counts["index_documents"] >= 5
    assert counts["facts"] >= 1 and counts["entities"] >= 1
    assert receipt["started_at"] and receipt["finished_at"] >= receipt["started_at"]
    assert ANA_ONLY not in response.text and "Fernhollow" not in response.text  # ids and counts only
    job_item = next(i for i in every_item(aws) if i["pk"]["S"] == f"T#local#JOB#{job_id}" and i["sk"]["S"] == "JOB")
    assert json.loads(job_item["job"]["S"])["user_id"] is None  # the person's id left the record with the job
    assert_ana_gone(http, container, aws, people)


def test_jobs_are_tenant_scoped_and_the_route_demands_hard_and_admin(http, container, aws, people) -> None:
    container.keys.ensure("local", "reader", ["memory:read", "memory:delete"], READER_KEY)
    for query in ("", "?hard=false"):
        response = http.delete(f"/v1/users/ana{query}", headers=auth())
        assert response.status_code == 400 and response.json()["error"]["message"].startswith("hard: must be true")
    assert http.delete("/v1/users/ana?hard=true", headers=auth(READER_KEY)).status_code == 403
    assert http.delete("/v1/users/a%20b?hard=true", headers=auth()).status_code in (400, 422)
    assert index_ids(container, "local", "ana", ANA_ONLY)  # nothing was erased by the refused calls

    job_id = erase_ana(http)
    assert http.get(f"/v1/jobs/{job_id}", headers=auth(OTHER_KEY)).status_code == 404  # another tenant: no such job
    assert http.get(f"/v1/jobs/{job_id}", headers=auth()).status_code == 200  # positive control: its own tenant
    assert http.get(f"/v1/jobs/{job_id}", headers=auth(READER_KEY)).status_code == 404  # not admin: as no job (issue 27)
    assert http.get("/v1/jobs/no-such-job", headers=auth()).status_code == 404
    # another tenant erasing its own `ana` touches nothing of this tenant's
    other = http.delete("/v1/users/ana?hard=true", headers=auth(OTHER_KEY)).json()["job_id"]
    enrich(aws)
    assert http.get(f"/v1/jobs/{other}", headers=auth(OTHER_KEY)).json()["memory_ids"] == [people["elsewhere"]]
    assert sorted(http.get(f"/v1/jobs/{job_id}", headers=auth()).json()["memory_ids"]) == sorted(people["ana"])


def test_an_interrupted_and_redelivered_job_counts_each_memory_once_and_resurrects_nothing(
        http, container, aws, people, monkeypatch) -> None:
    monkeypatch.setattr(container.erasure_jobs, "_page", 3)
    job_id = erase_ana(http)
    jobs = container.erasure_jobs
    first = ErasureStep(tenant="local", job_id=job_id, step=0)
    # The Lambda dies inside the hop: the second memory is erased but the job never records it.
    real_record, calls = container.erasure_jobs._jobs.record_erased, []

    def dying(job, memory_id):
        calls.append(memory_id)
        if len(calls) == 2:
            raise TimeoutError("Task timed out after 120.00 seconds")
        return real_record(job, memory_id)

    monkeypatch.setattr(jobs._jobs, "record_erased", dying)
    with pytest.raises(TimeoutError):
        jobs.run(first)
    monkeypatch.setattr(jobs._jobs, "record_erased", real_record)
    assert http.get(f"/v1/jobs/{job_id}", headers=auth()).json()["memory_ids"] == [calls[0]]

    # SQS redelivers the same message; this time the invocation runs short of time after one memory
    budget = iter([60_000, 5_000])
    jobs.run(first, time_left_ms=lambda: next(budget, 5_000))
    progress = http.get(f"/v1/jobs/{job_id}", headers=auth()).json()
    assert progress["status"] == "running" and sorted(progress["memory_ids"]) == sorted(calls[:2])
    jobs.run(first)  # a late duplicate of the hop already done: stale, changes nothing
    assert http.get(f"/v1/jobs/{job_id}", headers=auth()).json() == progress

    enrich(aws)  # the queued next hop finishes the page and the rest through the worker handler
    receipt = http.get(f"/v1/jobs/{job_id}", headers=auth()).json()
    assert receipt["status"] == "completed" and sorted(receipt["memory_ids"]) == sorted(people["ana"])
    assert receipt["counts"]["memories"] == 5  # the memory the dead run erased counts once, not zero or twice

    # every old message delivered again after the job: old hops and enrichment tasks of erased memories
    for step in range(4):
        jobs._queue.send_step(ErasureStep(tenant="local", job_id=job_id, step=step))
    for memory_id in people["ana"]:
        container.queue.send(EnrichmentTask(tenant="local", memory_id=memory_id, version=1))
    enrich(aws)
    assert http.get(f"/v1/jobs/{job_id}", headers=auth()).json() == receipt
    assert_ana_gone(http, container, aws, people)


def test_a_memory_erased_meanwhile_by_a_single_hard_delete_is_listed_once(http, container, aws, people) -> None:
    job_id = erase_ana(http)
    assert http.delete(f"/v1/memories/{people['ana'][0]}?hard=true", headers=auth()).status_code == 200
    enrich(aws)
    receipt = http.get(f"/v1/jobs/{job_id}", headers=auth()).json()
    assert receipt["status"] == "completed" and sorted(receipt["memory_ids"]) == sorted(people["ana"][1:])
    assert receipt["counts"]["memories"] == 4
    assert isinstance(container.erasure, ErasureService)


def test_a_hop_failing_on_its_last_delivery_marks_the_job_failed(http, container, aws, people, monkeypatch) -> None:
    from mnemo.errors import DependencyError
    from mnemo.surfaces.worker import handle_batch
    from tests.integration.conftest import Context

    job_id = erase_ana(http)

    def down(memory):
        raise DependencyError("search index unavailable (HTTP 503)")

    monkeypatch.setattr(container.erasure, "erase", down)
    body = ErasureStep(tenant="local", job_id=job_id, step=0).model_dump_json()
    records = [{"messageId": f"m{count}", "receiptHandle": "r", "body": body, "attributes": {"ApproximateReceiveCount": str(count)},
                "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs", "awsRegion": "us-east-1",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:mnemo-enrichment"} for count in (1, 3)]
    assert handle_batch({"Records": records[:1]}, Context(), container)["batchItemFailures"] == [{"itemIdentifier": "m1"}]
    assert http.get(f"/v1/jobs/{job_id}", headers=auth()).json()["status"] == "running"  # not final: SQS retries
    assert handle_batch({"Records": records[1:]}, Context(), container)["batchItemFailures"] == [{"itemIdentifier": "m3"}]
    receipt = http.get(f"/v1/jobs/{job_id}", headers=auth()).json()
    assert receipt["status"] == "failed" and receipt["error"].startswith("search index unavailable (HTTP 503)")
    assert receipt["memory_ids"] == [] and receipt["finished_at"]
    assert http.get(f"/v1/memories/{people['ana'][0]}", headers=auth()).status_code == 200  # nothing half-erased


def test_recorded_facts_are_erased_a_page_a_hop_when_time_runs_low_and_counted_once(http, container, principal,
                                                                                    monkeypatch) -> None:
    from mnemo.domain.fact_commands import RecordFactCommand
    from mnemo.services.erasure import users as erasure_jobs

    monkeypatch.setattr(erasure_jobs, "RECORDED_PAGE", 2)
    ivy = [container.facts.record(principal, RecordFactCommand(user_id="ivy", subject="Ivy", predicate="visited",
                                                               object=f"Quorvale port {n}")).uuid for n in range(5)]
    jon = container.facts.record(principal, RecordFactCommand(user_id="jon", subject="Jon", predicate="visited",
                                                              object="Quorvale port 0")).uuid
    assert http.get(f"/v1/facts/{ivy[0]}", headers=auth()).status_code == 200  # positive control
    assert sorted(fact_hits(container, "local", "ivy", "Quorvale port")) == sorted(ivy)
    job_id = http.delete("/v1/users/ivy?hard=true", headers=auth()).json()["job_id"]
    first = ErasureStep(tenant="local", job_id=job_id, step=0)
    budget = iter([60_000])  # time for one page of recorded facts, then too little
    container.erasure_jobs.run(first, time_left_ms=lambda: next(budget, 5_000))
    progress = http.get(f"/v1/jobs/{job_id}", headers=auth()).json()
    assert progress["status"] == "running" and progress["counts"]["recorded_facts"] == 2
    container.erasure_jobs.run(first)  # a late duplicate: stale, erases and counts nothing more
    container.erasure_jobs.run(ErasureStep(tenant="local", job_id=job_id, step=1))
    done = http.get(f"/v1/jobs/{job_id}", headers=auth()).json()
    assert done["status"] == "completed" and done["counts"]["recorded_facts"] == 5 and done["memory_ids"] == []
    assert [http.get(f"/v1/facts/{u}", headers=auth()).status_code for u in ivy] == [404] * 5
    assert http.get(f"/v1/facts/{jon}", headers=auth()).status_code == 200  # another user's fact on the same node name
    assert fact_hits(container, "local", "jon", "Quorvale port") == [jon] and fact_hits(container, "local", "ivy", "Quorvale port") == []
