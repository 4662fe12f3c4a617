"""Issue 27 "Small": a job started with a user-bound key reports that user; an unknown job id, or one
the key may not read, is 404 for every key (the docs' answer), never a 403 that tells a job exists."""

from __future__ import annotations

from tests.integration.conftest import OTHER_KEY, auth


def test_unknown_and_unreadable_jobs_are_404_for_every_key(http, container) -> None:
    reader = container.keys.create("local", "reader", ["memory:read"]).secret
    writer = container.keys.create("local", "writer", ["memory:write"]).secret
    erasure = http.delete("/v1/users/zed?hard=true", headers=auth()).json()["job_id"]
    assert http.get(f"/v1/jobs/{erasure}", headers=auth()).json()["kind"] == "user"  # control: admin reads it
    for key in (reader, writer):
        for job_id in ("nope", erasure):  # unknown, and an erasure job (admin only): the same 404
            response = http.get(f"/v1/jobs/{job_id}", headers=auth(key))
            assert response.status_code == 404, response.text
            assert response.json()["error"] == {"code": "not_found", "message": f"job {job_id} not found"}
    assert http.get("/v1/jobs/nope", headers=auth()).status_code == 404  # admin: 404 too



def test_a_job_the_key_may_not_read_answers_as_an_unknown_id(http, container) -> None:
    """A key without memory:read, another tenant's key: an existing import job answers exactly what an
    unknown id answers (status and body), never a 403 that would confirm the id exists."""
    reader = container.keys.create("local", "reader", ["memory:read"]).secret
    writer = container.keys.create("local", "writer", ["memory:write"]).secret
    deleter = container.keys.create("local", "deleter", ["memory:delete"]).secret
    started = http.post("/v1/import", headers=auth(writer), json={"data": [{"content": f"note {i}"} for i in range(201)]})
    assert started.status_code == 202, started.text
    job = started.json()["job_id"]
    # control: a key with memory:read reads it (and the admin key)
    assert http.get(f"/v1/jobs/{job}", headers=auth(reader)).json()["kind"] == "import"
    assert http.get(f"/v1/jobs/{job}", headers=auth()).json()["kind"] == "import"
    for key in (writer, deleter, OTHER_KEY):  # OTHER_KEY: another tenant's admin  # the writer started it, yet may not read it: as if it did not exist
        refused = http.get(f"/v1/jobs/{job}", headers=auth(key))
        unknown = http.get("/v1/jobs/00000000-0000-4000-8000-000000000000", headers=auth(key))
        assert refused.status_code == unknown.status_code == 404, refused.text
        assert refused.json()["error"] == {"code": "not_found", "message": f"job {job} not found"}
        assert unknown.json()["error"]["message"] == "job 00000000-0000-4000-8000-000000000000 not found"


def test_a_job_started_by_a_user_bound_key_reports_its_user(http, container) -> None:
    bound = container.keys.create("local", "ann-key", ["memory:read", "memory:write"], user_id="ann").secret
    started = http.post("/v1/import", headers=auth(bound), json={"data": [{"content": f"n {i}"} for i in range(201)]})
    assert started.status_code == 202 and started.json()["user_id"] == "ann"
    assert http.get(f"/v1/jobs/{started.json()['job_id']}", headers=auth(bound)).json()["user_id"] == "ann"
    unbound = http.post("/v1/import", headers=auth(), json={"data": [{"content": f"m {i}"} for i in range(201)]})
    assert unbound.json()["user_id"] == "default"  # control: an unbound key naming no user
    # another user's job, to the bound key: the unknown job's 404
    other = http.get(f"/v1/jobs/{unbound.json()['job_id']}", headers=auth(bound))
    assert other.status_code == 404 and other.json()["error"]["message"] == f"job {unbound.json()['job_id']} not found"
