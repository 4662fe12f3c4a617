"""Issue 26 item 2 for facts: a fact recorded for a user (POST /v1/facts, the facts profile's
record_fact, an import restoring recorded facts) against the user's erasure, as
erasure/test_erasure_writes.py does for captures. A recording that begins while the erasure runs is refused
before it writes; one that began before the request and lands after it is erased and refused, and
only what it wrote goes (a fact recorded after the erasure ended stays); after the erasure, facts for
the user are accepted again."""

from __future__ import annotations

from typing import Any

import pytest

from mcp import Client
from tests.integration.conftest import auth
from tests.integration.erasure.test_erasure import every_item, mentions
from tests.integration.erasure.test_erasure_writes import erase_user
from tests.integration.surfaces.test_profile_eigen import error_text
from tests.integration.surfaces.test_profile_facts import facts as call_facts

GIA_KEY = "mn_giabound0_0123456789abcdefghijklmnop"  # bound to user "gia": facts are recorded for the key's user
HAL_KEY = "mn_halbound0_0123456789abcdefghijklmnop"


@pytest.fixture
def bound(container) -> None:
    for name, secret in (("gia", GIA_KEY), ("hal", HAL_KEY)):
        container.keys.create("local", name, ["memory:read", "memory:write"], secret, user_id=name)


@pytest.fixture
def app(container, principal):
    from mnemo.surfaces.app import create_app

    return create_app(container)


def post_fact(http, subject: str, obj: str, key: str = GIA_KEY) -> Any:
    return http.post("/v1/facts", json={"subject": subject, "predicate": "moors at", "object": obj}, headers=auth(key))


def indexed(container, needle: str) -> list[str]:
    """Facts-index documents (the local index's own store) that hold `needle`."""
    index = container.fact_index()
    return [doc.fact_uuid for part in index._docs.values() for doc, *_ in part.values() if needle in doc.model_dump_json()]


def test_a_fact_that_lands_after_the_erasure_completed_is_erased_and_refused(http, container, aws, bound, monkeypatch) -> None:
    store, real, erasures, later = container.fact_store, container.fact_store.record, [], []

    def late(recorded, **kwargs):
        if recorded.namespace.user_id == "gia" and not erasures:  # began before the request; the whole erasure runs first
            erasures.append(erase_user(http, container, "gia"))
            # Once the erasure has ended, another recording for Gia is admitted and kept (positive control)
            later.append(post_fact(http, "Gia", "Larchquay pier"))
        return real(recorded, **kwargs)

    monkeypatch.setattr(store, "record", late)
    response = post_fact(http, "Gia", "Quokkamere wharf")
    assert response.status_code == 409, response.text
    assert response.json()["error"] == {"code": "user_erased", "message": (
        'user_id: user "gia" was erased while this write was under way; what it wrote has been erased too')}
    # Nothing of the late fact remains: no fact item, audit row, adjacency, listing, node or name, index document
    assert mentions(every_item(aws), "Quokkamere") == []
    assert indexed(container, "Quokkamere") == []
    # Control: the fact recorded after the erasure ended, for the same user, is intact
    assert later[0].status_code == 201, later[0].text
    kept = later[0].json()["edge"]["uuid"]
    assert http.get(f"/v1/facts/{kept}", headers=auth(GIA_KEY)).json()["edge"]["fact"] == "Gia moors at Larchquay pier"
    assert mentions(every_item(aws), "Larchquay") and indexed(container, "Larchquay") == [kept]


def test_an_import_restoring_a_recorded_fact_that_lands_after_the_erasure_is_erased_and_refused(http, container, aws, monkeypatch) -> None:
    recorded = {"uuid": "0b9e6a52-5d7f-4b1e-8f0a-2c3d4e5f6a7b", "group_id": "default", "subject": "Ivo",
                "predicate": "moors at", "object": "Quokkamere wharf", "fact": "Ivo moors at Quokkamere wharf",
                "status": "active", "created_at": "2026-11-30T10:00:00Z"}
    store, real, erasures = container.fact_store, container.fact_store.record, []

    def late(fact, **kwargs):
        if fact.namespace.user_id == "ivo" and not erasures:
            erasures.append(erase_user(http, container, "ivo"))
        return real(fact, **kwargs)

    monkeypatch.setattr(store, "record", late)
    body = {"user_id": "ivo", "data": {"memories": [{"id": "ivo-1", "content": "Ivo's skiff is green."}], "recorded_facts": [recorded]}}
    refused = http.post("/v1/import", json=body, headers=auth())
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "user_erased", refused.text
    assert mentions(every_item(aws), "Quokkamere") == []
    # Control: the same import for another user, in the same run, restores the fact
    imported = http.post("/v1/import", json={**body, "user_id": "jan"}, headers=auth())
    assert imported.status_code == 200 and len(imported.json()["facts_imported"]) == 1, imported.text
    assert mentions(every_item(aws), "Quokkamere")


def test_facts_recorded_while_the_erasure_runs_are_refused_on_every_surface_then_accepted(http, app, container, aws, bound) -> None:
    job_id = http.delete("/v1/users/gia?hard=true", headers=auth()).json()["job_id"]  # queued: the fence is up
    lines = len(every_item(aws))
    running = 'user_id: user "gia" is being erased; nothing is written for the user'
    rest = post_fact(http, "Gia", "Quokkamere wharf")
    assert rest.status_code == 409 and rest.json()["error"]["message"].startswith(running), rest.text

    async def record(client: Client) -> Any:
        return await client.call_tool("record_fact", {"subject": "Gia", "predicate": "moors at", "object": "Quokkamere wharf"})

    assert running in error_text(call_facts(app, record, key=GIA_KEY))
    restored = {"uuid": "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", "group_id": "default", "subject": "Gia", "predicate": "moors at",
                "object": "Quokkamere wharf", "fact": "Gia moors at Quokkamere wharf", "status": "active",
                "created_at": "2026-11-30T10:00:00Z"}
    imported = http.post("/v1/import", json={"user_id": "gia", "data": {"memories": [], "recorded_facts": [restored]}},
                         headers=auth())
    assert imported.status_code == 409 and imported.json()["error"]["message"].startswith(running), imported.text
    assert len(every_item(aws)) == lines and mentions(every_item(aws), "Quokkamere") == []  # refused before any write
    # Control: another user of the tenant records a fact meanwhile, on both surfaces
    assert post_fact(http, "Hal", "Quokkamere wharf", key=HAL_KEY).status_code == 201

    async def hal(client: Client) -> Any:
        return await client.call_tool("record_fact", {"subject": "Hal", "predicate": "moors at", "object": "Brindle quay"})

    assert not call_facts(app, hal, key=HAL_KEY).is_error

    from mnemo.domain.erasure import ErasureStep

    while not (job := container.erasure_jobs._jobs.get("local", job_id, erased_ids=False)).finished:
        container.erasure_jobs.run(ErasureStep(tenant="local", job_id=job_id, step=job.step))
    # Positive control: once the erasure has ended, facts for Gia are accepted and kept
    after = post_fact(http, "Gia", "Quokkamere wharf")
    assert after.status_code == 201, after.text
    assert http.get(f"/v1/facts/{after.json()['edge']['uuid']}", headers=auth(GIA_KEY)).status_code == 200
