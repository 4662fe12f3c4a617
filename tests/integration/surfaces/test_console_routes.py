"""The REST routes the console needs (issue 30): `GET /v1/whoami` and `GET /v1/jobs`, and the
headers every page of the origin carries (/console and /docs: a strict CSP, no third-party script)."""

from __future__ import annotations

import re

from tests.conftest import TEST_KEY
from tests.integration.conftest import OTHER_KEY, auth


def test_whoami_tells_the_key_about_itself_never_its_secret(http, container) -> None:
    bound = container.keys.create("local", "ann's reader", ["memory:read"], user_id="ann").secret
    me = http.get("/v1/whoami", headers=auth(bound))
    assert me.status_code == 200 and me.headers["cache-control"] == "no-store"
    assert me.json() == {"tenant": "local", "key_prefix": bound[:len(me.json()["key_prefix"])], "name": "ann's reader",
                         "permissions": ["memory:read"], "user_id": "ann"}
    assert bound not in me.text
    admin = http.get("/v1/whoami", headers=auth()).json()  # control: the admin key is unbound
    assert admin["permissions"] == ["admin"] and admin["user_id"] is None and TEST_KEY not in str(admin)
    assert http.get("/v1/whoami").status_code == 401


def test_jobs_lists_work_jobs_to_readers_and_erasures_to_admins_only(http, container) -> None:
    reader = container.keys.create("local", "reader", ["memory:read"]).secret
    writer = container.keys.create("local", "writer", ["memory:write"]).secret
    bound = container.keys.create("local", "ann", ["memory:read", "memory:write"], user_id="ann").secret
    started = http.post("/v1/import", headers=auth(), json={"data": [{"content": f"note {i}"} for i in range(201)]})
    assert started.status_code == 202, started.text
    job = started.json()["job_id"]
    ann_job = http.post("/v1/import", headers=auth(bound), json={"data": [{"content": f"n {i}"} for i in range(201)]}).json()["job_id"]
    erasure = http.delete("/v1/users/zed?hard=true", headers=auth()).json()["job_id"]

    def listed(key: str, **params: str) -> list[tuple[str, str]]:
        response = http.get("/v1/jobs", headers=auth(key), params=params)
        assert response.status_code == 200, response.text
        return [(j["job_id"], j["kind"]) for j in response.json()["results"]]

    # admin: every job, newest first, the erasure without its (possibly long) id list
    assert listed(TEST_KEY) == [(erasure, "user"), (ann_job, "import"), (job, "import")]
    assert http.get("/v1/jobs", headers=auth()).json()["results"][0]["memory_ids"] == []
    assert listed(reader) == [(ann_job, "import"), (job, "import")]  # the same request, no erasure job
    assert listed(bound) == [(ann_job, "import")]  # a user-bound key: its user's only
    assert listed(OTHER_KEY) == []  # another tenant's admin: nothing of this tenant
    refused = http.get("/v1/jobs", headers=auth(writer))
    assert refused.status_code == 403 and "memory:read" in refused.json()["error"]["message"]


def test_jobs_pages_by_cursor_and_refuses_a_forged_one(http) -> None:
    ids = [http.delete(f"/v1/users/u{i}?hard=true", headers=auth()).json()["job_id"] for i in range(3)]
    first = http.get("/v1/jobs?limit=2", headers=auth()).json()
    assert [j["job_id"] for j in first["results"]] == ids[:0:-1] and first["next_cursor"]
    second = http.get("/v1/jobs", headers=auth(), params={"limit": 2, "cursor": first["next_cursor"]}).json()
    assert [j["job_id"] for j in second["results"]] == [ids[0]]
    bad = http.get("/v1/jobs?cursor=T%23other%23JOBS", headers=auth())
    assert bad.status_code == 400 and bad.json()["error"]["message"] == "cursor: must be the next_cursor of a previous page"


def test_console_and_docs_carry_a_strict_policy_and_load_no_third_party_script(http) -> None:
    for path in ("/console/", "/docs"):
        page = http.get(path)
        assert page.status_code == 200, path
        csp = page.headers["content-security-policy"]
        for directive in ("default-src 'self'", "script-src 'self'", "object-src 'none'", "frame-ancestors 'none'"):
            assert directive in csp, (path, csp)
        assert "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
        assert page.headers["x-content-type-options"] == "nosniff" and page.headers["referrer-policy"] == "no-referrer"
        sources = [s for s in re.findall(r'(?:src|href)="([^"]+)"', page.text) if not s.startswith("#")]  # not in-page links
        assert sources and all(s.startswith("/") and not s.startswith("//") for s in sources), (path, sources)  # same origin only
        assert "<script>" not in page.text  # no inline script: the policy would block it anyway
        for source in sources:
            asset = http.get(source)
            assert asset.status_code == 200 and asset.headers["x-content-type-options"] == "nosniff", source
    assert "content-security-policy" not in http.get("/v1/whoami", headers=auth()).headers  # control: JSON routes unchanged


def test_failed_enrichments_are_listed_with_reasons_and_an_admin_retries_this_tenants(http, container) -> None:
    from mnemo.domain.models import Enrichment, EnrichmentState

    reader = container.keys.create("local", "reader", ["memory:read"]).secret
    ann = container.keys.create("local", "ann", ["memory:read"], user_id="ann").secret
    bob = container.keys.create("local", "bob", ["memory:read"], user_id="bob").secret
    memory_id = http.post("/v1/memories", headers=auth(), json={"content": "Ann's note", "user_id": "ann"}).json()["id"]
    stored = container.store.get("local", memory_id)
    failed = Enrichment(state=EnrichmentState.FAILED, error="<b>embedder</b> unavailable", attempts=3)
    container.store.save(stored.model_copy(update={"enrichment": failed}), expected_version=stored.version)

    listed = http.get("/v1/status/failed", headers=auth(reader))
    assert listed.status_code == 200 and [(f["id"], f["user_id"], f["error"]) for f in listed.json()] == [
        (memory_id, "ann", "<b>embedder</b> unavailable")]
    assert [f["id"] for f in http.get("/v1/status/failed", headers=auth(ann)).json()] == [memory_id]  # its user's key
    assert http.get("/v1/status/failed", headers=auth(bob)).json() == []  # another user's bound key: none
    assert http.get("/v1/status/failed", headers=auth(OTHER_KEY)).json() == []  # another tenant: none
    refused = http.post("/v1/status/retry", headers=auth(reader))
    assert refused.status_code == 403 and "'admin'" in refused.json()["error"]["message"]
    assert container.store.get("local", memory_id).enrichment.state == EnrichmentState.FAILED  # the refusal changed nothing
    assert http.post("/v1/status/retry", headers=auth(OTHER_KEY)).json() == {"retried": 0, "left": 0}  # another tenant's admin
    assert http.post("/v1/status/retry", headers=auth()).json() == {"retried": 1, "left": 0}
    again = container.store.get("local", memory_id)
    assert again.enrichment.state == EnrichmentState.PENDING and again.version == stored.version
    assert http.get("/v1/status", headers=auth()).json()["pending"] >= 1


def test_a_users_erasure_takes_its_import_jobs_out_of_the_listing(http, aws, monkeypatch) -> None:
    from mnemo.services.jobs import service as jobs
    from tests.integration.erasure.test_erasure import every_item
    from tests.integration.surfaces.test_profile_thrindex import enrich

    monkeypatch.setattr(jobs, "SYNC_IMPORT_LIMIT", 2)  # three items make a job: the worker has little to enrich
    zed = http.post("/v1/import", headers=auth(), json={"user_id": "zed", "data": [{"content": f"z {i}"} for i in range(3)]})
    amy = http.post("/v1/import", headers=auth(), json={"user_id": "amy", "data": [{"content": f"a {i}"} for i in range(3)]})
    assert zed.status_code == amy.status_code == 202, zed.text
    zed_job, amy_job = zed.json()["job_id"], amy.json()["job_id"]
    assert {zed_job, amy_job} <= {j["job_id"] for j in http.get("/v1/jobs", headers=auth()).json()["results"]}  # control
    erasure = http.delete("/v1/users/zed?hard=true", headers=auth()).json()["job_id"]
    enrich(aws)  # the worker runs the imports, then the erasure, which deletes zed's jobs
    assert http.get(f"/v1/jobs/{erasure}", headers=auth()).json()["status"] == "completed"
    listed = [j["job_id"] for j in http.get("/v1/jobs", headers=auth()).json()["results"]]
    assert listed == [erasure, amy_job]  # amy's stays (control), zed's is gone with its record
    rows = [i for i in every_item(aws) if i["pk"]["S"] == "T#local#JOBS"]
    assert {r["job_id"]["S"] for r in rows} == {erasure, amy_job}
