"""Issue 26 item 2: a user's erasure against writes in flight (docs/erasure.md, "Writes in flight").
Every memory written for the user by a request or job that began before the erasure request is
erased, whenever its write lands, and such an import job ends `failed` with `user erased`; a write
that begins while the erasure runs is refused; after it, writes for the user are accepted again.
The steps are driven by hand around the erasure, so each interleaving is the same on every run."""

from __future__ import annotations

from typing import Any

from mnemo.domain.erasure import ErasureStep
from mnemo.domain.jobs import JobStep
from mnemo.services.jobs import service as jobs_module
from tests.integration.conftest import auth
from tests.integration.erasure.test_erasure import every_item, mentions
from tests.integration.erasure.test_erasure_jobs import index_ids
from tests.integration.surfaces.test_profile_thrindex import enrich


def erase_user(http, container, user: str) -> str:
    """Request the user's erasure and run every hop of its job by hand, to the end."""
    response = http.delete(f"/v1/users/{user}?hard=true", headers=auth())
    assert response.status_code == 202, response.text
    job_id = response.json()["job_id"]
    while not (job := container.erasure_jobs._jobs.get("local", job_id, erased_ids=False)).finished:
        container.erasure_jobs.run(ErasureStep(tenant="local", job_id=job_id, step=job.step))
    assert job.status == "completed"
    return job_id


def memories_of(aws: dict[str, str], user: str) -> list[dict[str, Any]]:
    """The user's memory items, by a raw scan of the table (what no read path filters)."""
    return [i for i in every_item(aws) if i["sk"]["S"] == "MEMORY" and i["user_id"]["S"] == user]


def items(user: str, count: int) -> list[dict[str, Any]]:
    return [{"id": f"{user}-{n}", "memory": f"{user.title()}'s harbour log entry {n}."} for n in range(count)]


def test_an_import_job_straddling_the_erasure_fails_user_erased_and_leaves_nothing(http, container, aws, monkeypatch) -> None:
    # Given: two import jobs of three chunks each (100, 100, 10 items), Ana's and Bob's
    count = jobs_module.SYNC_IMPORT_LIMIT + 10
    ana = http.post("/v1/import", json={"user_id": "ana", "data": items("ana", count)}, headers=auth()).json()["job_id"]
    bob = http.post("/v1/import", json={"user_id": "bob", "data": items("bob", count)}, headers=auth()).json()["job_id"]
    # Ana's first chunk lands before her erasure is requested
    container.jobs.run(JobStep(tenant="local", job_id=ana, step=0))
    assert len(memories_of(aws, "ana")) == 100
    # Her second chunk began before the request, but its write lands after the erasure job has completed
    store, real, erasures = container.imports._store, container.imports._store.put_new_many, []

    def late(created):
        if created and created[0][0].user_id == "ana" and not erasures:
            erasures.append(erase_user(http, container, "ana"))
        real(created)

    monkeypatch.setattr(store, "put_new_many", late)
    container.jobs.run(JobStep(tenant="local", job_id=ana, step=1))
    # Then: the import stops, failed with the reason, and its third chunk never runs
    job = http.get(f"/v1/jobs/{ana}", headers=auth()).json()
    assert (job["status"], job["error"], job["summary"]["imported"]) == ("failed", "user erased", 100)
    container.jobs.run(JobStep(tenant="local", job_id=ana, step=2))  # a late message: the job has ended
    enrich(aws)  # every queued message: Bob's chunks, enrichment tasks of Ana's erased memories, stale hops
    assert memories_of(aws, "ana") == [] and mentions(every_item(aws), "Ana's harbour") == []
    assert index_ids(container, "local", "ana", "harbour log entry") == set()
    receipt = http.get(f"/v1/jobs/{erasures[0]}", headers=auth()).json()
    assert receipt["status"] == "completed" and receipt["counts"]["memories"] == 100  # the first chunk, listed
    # Control: Bob's import in the same run completes intact
    done = http.get(f"/v1/jobs/{bob}", headers=auth()).json()
    assert (done["status"], done["summary"]["imported"]) == ("completed", count)
    assert len(memories_of(aws, "bob")) == count


def test_a_capture_that_lands_after_the_erasure_completed_is_erased_and_refused(http, container, aws, monkeypatch) -> None:
    store, real, erasures = container.memories._store, container.memories._store.put_new, []

    def late(memory, activity=None):
        if memory.user_id == "cara" and not erasures:  # the capture began; the whole erasure runs before its write
            erasures.append(erase_user(http, container, "cara"))
        real(memory, activity)

    monkeypatch.setattr(store, "put_new", late)
    response = http.post("/v1/memories", json={"content": "Cara's locker code is 5521.", "user_id": "cara"}, headers=auth())
    assert response.status_code == 409, response.text
    assert response.json()["error"] == {"code": "user_erased", "message": (
        'user_id: user "cara" was erased while this write was under way; what it wrote has been erased too')}
    assert memories_of(aws, "cara") == [] and mentions(every_item(aws), "locker code") == []
    # The same for a synchronous import that began before the request
    real_many = container.imports._store.put_new_many

    def late_many(created):
        erasures.append(erase_user(http, container, "cara"))
        real_many(created)

    monkeypatch.setattr(container.imports._store, "put_new_many", late_many)
    refused = http.post("/v1/import", json={"user_id": "cara", "data": items("cara", 3)}, headers=auth())
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "user_erased"
    assert memories_of(aws, "cara") == [] and mentions(every_item(aws), "harbour log") == []
    # Positive control: a capture that begins after the erasure ended is kept
    monkeypatch.setattr(store, "put_new", real)
    monkeypatch.setattr(container.imports._store, "put_new_many", real_many)
    kept = http.post("/v1/memories", json={"content": "Cara's new locker code is 7730.", "user_id": "cara"}, headers=auth())
    assert kept.status_code == 201 and http.get(f"/v1/memories/{kept.json()['id']}", headers=auth()).status_code == 200
    assert len(memories_of(aws, "cara")) == 1


def test_writes_that_begin_while_the_erasure_runs_are_refused_then_accepted_after_it(http, container, aws) -> None:
    before = http.post("/v1/memories", json={"content": "Dina's bike is blue.", "user_id": "dina"}, headers=auth()).json()["id"]
    job_id = http.delete("/v1/users/dina?hard=true", headers=auth()).json()["job_id"]  # queued: the fence is up
    lines = len(every_item(aws))
    for response in (
        http.post("/v1/memories", json={"content": "Dina's bike is red.", "user_id": "dina"}, headers=auth()),
        http.post("/v1/import", json={"user_id": "dina", "data": items("dina", 3)}, headers=auth()),
        http.post("/v1/import", json={"user_id": "dina", "data": items("dina", jobs_module.SYNC_IMPORT_LIMIT + 1)}, headers=auth()),
    ):
        assert response.status_code == 409, response.text
        assert response.json()["error"]["message"].startswith('user_id: user "dina" is being erased; nothing is written')
    assert len(every_item(aws)) == lines  # refused before any write: no memory, no history row, no job
    # Control: another user of the tenant writes as usual meanwhile
    assert http.post("/v1/memories", json={"content": "Eli's bike is green.", "user_id": "eli"}, headers=auth()).status_code == 201

    while not (job := container.erasure_jobs._jobs.get("local", job_id, erased_ids=False)).finished:
        container.erasure_jobs.run(ErasureStep(tenant="local", job_id=job_id, step=job.step))
    assert http.get(f"/v1/memories/{before}", headers=auth()).status_code == 404
    # Positive control: once the erasure has ended, writes for the user are accepted and kept
    after = http.post("/v1/memories", json={"content": "Dina's new bike is red.", "user_id": "dina"}, headers=auth())
    assert after.status_code == 201 and [m["id"]["S"] for m in memories_of(aws, "dina")] == [after.json()["id"]]


def test_the_last_listing_finds_a_memory_that_landed_while_the_pages_ran(http, container, aws, monkeypatch) -> None:
    """A writer that dies between its write and its check never erases what it wrote; the job's last
    listing from the newest memory down finds it (here it lands after the pages were listed)."""
    from mnemo.domain.commands import CaptureCommand
    from mnemo.services.memory.memories import new_memory

    ids = [http.post("/v1/memories", json={"content": f"Finn's note {n}.", "user_id": "finn"}, headers=auth()).json()["id"]
           for n in range(3)]
    monkeypatch.setattr(container.erasure_jobs, "_page", 2)
    jobs, real, landed = container.erasure_jobs, container.erasure_jobs._erase_recorded, []
    principal = container.keys.authenticate("mn_testlocal_0123456789abcdefghijklmnop")

    def straggler(job, time_left_ms):
        if not landed:  # the pages are done; a write admitted before the fence lands now, unchecked
            memory = new_memory(principal, CaptureCommand(raw="Finn's late note.", user_id="finn"), "f" * 8 + ids[0][8:],
                                now=container.clock())
            container.store.put_new(memory)
            landed.append(memory.id)
        return real(job, time_left_ms)

    monkeypatch.setattr(jobs, "_erase_recorded", straggler)
    job_id = erase_user(http, container, "finn")
    assert memories_of(aws, "finn") == []
    receipt = http.get(f"/v1/jobs/{job_id}", headers=auth()).json()
    assert sorted(receipt["memory_ids"]) == sorted([*ids, *landed]) and receipt["counts"]["memories"] == 4


def test_a_completed_erasure_ends_the_earlier_ones_a_failed_one_only_itself(container, aws) -> None:
    """A request whose first hop was never sent leaves its erasure `running` on the fence; requesting
    the erasure again and completing it lowers both (its last listing covered the earlier one)."""
    from datetime import timedelta

    fences = container.erasure_jobs._fences
    at = container.clock()
    fences.raise_fence("local", "ivo", "stuck", at)
    fences.raise_fence("local", "ivo", "retry", at + timedelta(seconds=1))
    fences.raise_fence("local", "ivo", "later", at + timedelta(seconds=2))
    fences.lower("local", "ivo", "later", at, earlier_too=False)  # failed: only itself
    assert [e.split("|")[1] for e in fences.read("local", "ivo").running] == ["stuck", "retry"]
    fences.lower("local", "ivo", "retry", at, earlier_too=True)  # completed: itself and the one before it
    fence = fences.read("local", "ivo")
    assert (fence.running, fence.up, fence.latest_job) == ([], False, "later")
    assert fences.read("local", "other").latest_job is None  # another user's fence: never raised
    assert not [i for i in every_item(aws) if "ivo" in i["pk"]["S"]]  # the key holds a hash, not the user id


def test_the_last_listing_waits_for_the_browse_index_to_settle(http, container, monkeypatch) -> None:
    """On AWS gsi1 lags its table: the job's last listing runs no sooner than `erasure_settle_seconds`
    after the request (a delayed SQS message, not a sleeping Lambda)."""
    from datetime import timedelta

    jobs = container.erasure_jobs
    memory_id = http.post("/v1/memories", json={"content": "Jon's note.", "user_id": "jon"}, headers=auth()).json()["id"]
    monkeypatch.setattr(jobs, "_settle", timedelta(seconds=5))
    sent: list[tuple[int, int]] = []
    real = jobs._queue.send_step
    monkeypatch.setattr(jobs._queue, "send_step", lambda step, delay=0: (sent.append((step.step, delay)), real(step, delay))[1])
    job_id = http.delete("/v1/users/jon?hard=true", headers=auth()).json()["job_id"]
    jobs.run(ErasureStep(tenant="local", job_id=job_id, step=0))
    # The memory is erased, but the job waits (5 s after the request by the service's clock) before its last listing
    assert http.get(f"/v1/memories/{memory_id}", headers=auth()).status_code == 404
    assert http.get(f"/v1/jobs/{job_id}", headers=auth()).json()["status"] == "running"
    assert sent == [(0, 0), (1, 5)]
    refused = http.post("/v1/memories", json={"content": "Jon's new note.", "user_id": "jon"}, headers=auth())
    assert refused.status_code == 409  # still fenced meanwhile
    monkeypatch.setattr(jobs, "_settle", timedelta(0))  # the delay has passed
    jobs.run(ErasureStep(tenant="local", job_id=job_id, step=1))
    assert http.get(f"/v1/jobs/{job_id}", headers=auth()).json()["status"] == "completed"
    assert http.post("/v1/memories", json={"content": "Jon's new note.", "user_id": "jon"}, headers=auth()).status_code == 201


def job_items(aws: dict[str, str], job_id: str) -> list[str]:
    """The sort keys stored under a job's partition (its record, its parts), by a raw scan."""
    return sorted(i["sk"]["S"] for i in every_item(aws) if i["pk"]["S"] == f"T#local#JOB#{job_id}")


def test_the_users_erasure_deletes_her_jobs_parts_and_finished_jobs_whole(http, container, aws) -> None:
    """Issue 26, "erasure means gone everywhere": an import job's parts hold the items' text (kept 30
    days for the TTL); the user's erasure finds her jobs through her job listing and deletes them."""
    count = jobs_module.SYNC_IMPORT_LIMIT + 10  # three parts: 100, 100, 10 items

    def ledger(user: str) -> list[dict[str, Any]]:
        return [{"id": f"{user}-q{n}", "memory": f"{user.title()}'s quay ledger line {n}."} for n in range(count)]

    def start(user: str, key: str | None = None) -> str:
        response = http.post("/v1/import", json={"user_id": user, "data": ledger(user)}, headers=auth(*filter(None, [key])))
        assert response.status_code == 202, response.text
        return str(response.json()["job_id"])

    ana, bob = start("ana"), start("bob")
    for job_id in (ana, bob):  # both complete; their parts stay (30 days' TTL)
        for step in range(3):
            container.jobs.run(JobStep(tenant="local", job_id=job_id, step=step))
        assert http.get(f"/v1/jobs/{job_id}", headers=auth()).json()["status"] == "completed"
    ana_key = "mn_anabound0_0123456789abcdefghijklmnop"
    container.keys.create("local", "ana", ["memory:read", "memory:write"], ana_key, user_id="ana")
    queued = start("ana", ana_key)  # requested with her own bound key, not yet run: its parts are her text too
    assert job_items(aws, ana) == ["JOB", "P#00000", "P#00001", "P#00002"] and len(mentions(every_item(aws), "Ana's quay")) > count

    erasure = erase_user(http, container, "ana")

    assert mentions(every_item(aws), "Ana's quay") == []  # no memory, no part, nothing holds her text
    assert job_items(aws, ana) == [] and http.get(f"/v1/jobs/{ana}", headers=auth()).status_code == 404
    assert job_items(aws, queued) == ["JOB"]  # not finished: its record stays, to say how it ended
    assert not [i for i in every_item(aws) if i["pk"]["S"] == "T#local#U#ana#JOBS" and i["sk"]["S"] == ana]
    receipt = http.get(f"/v1/jobs/{erasure}", headers=auth()).json()
    assert receipt["counts"]["jobs"] == 2 and receipt["counts"]["memories"] == count
    container.jobs.run(JobStep(tenant="local", job_id=queued, step=0))  # its first hop comes late
    late = http.get(f"/v1/jobs/{queued}", headers=auth()).json()
    assert (late["status"], late["error"], late["summary"]["imported"]) == ("failed", "user erased", 0)
    assert mentions(every_item(aws), "Ana's quay") == []
    # Control: Bob's completed import in the same run keeps its parts, its record and his memories
    assert job_items(aws, bob) == ["JOB", "P#00000", "P#00001", "P#00002"]
    assert http.get(f"/v1/jobs/{bob}", headers=auth()).json()["summary"]["imported"] == count
    assert len(memories_of(aws, "bob")) == count and len(mentions(every_item(aws), "Bob's quay")) > count


def test_a_job_created_before_the_listing_is_erased_once_the_reindex_listed_it(http, container, aws) -> None:
    from mnemo.adapters.aws import client

    data = [{"id": f"kai-{n}", "memory": f"Kai's tiller note {n}."} for n in range(jobs_module.SYNC_IMPORT_LIMIT + 1)]
    job_id = http.post("/v1/import", json={"user_id": "kai", "data": data}, headers=auth()).json()["job_id"]
    listing = {"pk": {"S": "T#local#U#kai#JOBS"}, "sk": {"S": job_id}}  # as a job made before the listing existed
    assert client("dynamodb").delete_item(TableName=aws["MemoriesTable"], Key=listing, ReturnValues="ALL_OLD")["Attributes"]
    erase_user(http, container, "kai")
    assert job_items(aws, job_id) == ["JOB", "P#00000", "P#00001", "P#00002"]  # unlisted: the erasure could not find it
    # The admin reindex lists every job for its user (twice: idempotent); a new erasure then deletes it
    assert container.recovery.list_jobs() == container.recovery.list_jobs() >= 1
    assert [i["sk"]["S"] for i in every_item(aws) if i["pk"]["S"] == "T#local#U#kai#JOBS"] == [job_id]
    erase_user(http, container, "kai")
    assert job_items(aws, job_id) == ["JOB"] and mentions(every_item(aws), "tiller note") == []  # queued: record kept
