"""REST export and import round trip: a user's memories exported page by page, the user erased by
the real erasure job (worker handler fed from the queue), the export imported back: the same
contents, metadata, namespaces, statuses and capture times return and are searchable. Controls:
another user of the tenant and the same user id in another tenant are never exported, erased or
written; the export never carries embeddings; a rerun imports nothing twice."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from mnemo.domain.fact_commands import RecordFactCommand
from tests.integration.conftest import OTHER_KEY, auth
from tests.integration.erasure.test_erasure import every_item
from tests.integration.erasure.test_erasure_jobs import capture, fact_hits
from tests.integration.surfaces.test_profile_thrindex import READER_KEY, enrich

WRITER_KEY = "mn_writeronly_0123456789abcdefghijklmnop"
KEPT = ("content", "metadata", "user_id", "agent_id", "group_id", "conversation_id", "author", "status", "captured_at")


def export_both(http, user: str, key: str | None = None, limit: int = 2) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every page of the JSON export, following next_cursor (checked against the header each time):
    the memories and the recorded facts."""
    found, facts, cursor = [], [], None
    while True:
        params = {"user_id": user, "limit": limit, **({"cursor": cursor} if cursor else {})}
        response = http.get("/v1/export", params=params, headers=auth(key) if key else auth())
        assert response.status_code == 200, response.text
        page = response.json()
        assert not (facts and page["memories"])  # recorded facts come after the last memories
        found += page["memories"]
        facts += page["recorded_facts"]
        cursor = page["next_cursor"]
        assert response.headers.get("x-next-cursor") == cursor
        if cursor is None:
            return found, facts


def export_all(http, user: str, key: str | None = None, limit: int = 2) -> list[dict[str, Any]]:
    return export_both(http, user, key, limit)[0]


def comparable(memories: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    rows = [tuple(str({k: v for k, v in m["metadata"].items() if k != "source_id"}) if f == "metadata" else m[f]
                  for f in KEPT) for m in memories]
    return sorted(rows, key=str)


def search_ids(http, query: str, user: str) -> list[str]:
    response = http.post("/v1/memories/search", json={"query": query, "user_id": user}, headers=auth())
    return [m["id"] for m in response.json()["results"]]


def test_export_erase_import_brings_a_user_back_and_touches_no_one_else(http, aws) -> None:
    # Given: Ana's memories across statuses, authors, agents and groups; Ben in the same tenant; an `ana` elsewhere
    ana = [
        capture(http, "Ana's Quorvale allotment grows purple carrots.", user_id="ana", as_user=True,
                metadata={"topic": "garden", "tags": ["veg"]}, captured_at="2024-05-01T08:00:00Z", conversation_id="garden-chat"),
        capture(http, "Quorvale ferry leaves at nine on Saturdays.", user_id="ana", agent_id="helper", group_id="trips"),
        capture(http, "Ana renewed her Quorvale library card.", user_id="ana", as_user=True),
        capture(http, "Ana's old Quorvale phone number.", user_id="ana", as_user=True),
    ]
    ben = capture(http, "Ben's Quorvale allotment grows beans.", user_id="ben", as_user=True)
    elsewhere = capture(http, "Ana's Quorvale notes in another tenant.", key=OTHER_KEY, user_id="ana", as_user=True)
    enrich(aws)
    assert http.patch(f"/v1/memories/{ana[2]}", json={"status": "completed"}, headers=auth()).status_code == 200
    assert http.delete(f"/v1/memories/{ana[3]}", headers=auth()).json()["status"] == "archived"

    # When: exported (two per page), as JSON pages and as NDJSON
    exported = export_all(http, "ana")
    assert sorted(m["id"] for m in exported) == sorted(ana)  # every status; not Ben's, not the other tenant's
    assert {m["status"] for m in exported} == {"open", "completed", "archived"}
    assert {m["id"]: m["conversation_id"] for m in exported if m["conversation_id"]} == {ana[0]: "garden-chat"}
    record = {"id", "version", "created_at", "updated_at", "history", "facts", "provenance", *KEPT}
    assert all(set(m) == record for m in exported)  # no vectors, no index copies
    ndjson = http.get("/v1/export", params={"user_id": "ana", "format": "ndjson"}, headers=auth())
    assert ndjson.headers["content-type"].startswith("application/x-ndjson") and "x-next-cursor" not in ndjson.headers
    assert comparable([json.loads(line) for line in ndjson.text.splitlines()]) == comparable(exported)
    assert [m["id"] for m in export_all(http, "ana", key=OTHER_KEY)] == [elsewhere]  # tenants never mix

    # When: Ana is erased by the job, which the real worker runs
    job = http.delete("/v1/users/ana?hard=true", headers=auth()).json()["job_id"]
    enrich(aws)
    assert http.get(f"/v1/jobs/{job}", headers=auth()).json()["status"] == "completed"
    assert export_all(http, "ana") == [] and search_ids(http, "Quorvale allotment carrots", "ana") == []

    # Then: importing the export brings back the same memories, searchable once enriched
    report = http.post("/v1/import", json={"user_id": "ana", "data": {"memories": exported}}, headers=auth())
    assert report.status_code == 200, report.text
    assert len(report.json()["imported"]) == 4 and report.json()["skipped"] == report.json()["failed"] == []
    enrich(aws)
    back = export_all(http, "ana")
    assert comparable(back) == comparable(exported)
    assert sorted(m["metadata"]["source_id"] for m in back) == sorted(ana)  # each names the memory it restores
    restored = {m["metadata"]["source_id"]: m["id"] for m in back}
    assert search_ids(http, "purple carrots allotment", "ana")[0] == restored[ana[0]]
    assert restored[ana[3]] not in search_ids(http, "old phone number", "ana")  # archived stays out of search
    rerun = http.post("/v1/import", json={"user_id": "ana", "data": {"memories": exported}}, headers=auth()).json()
    assert rerun["imported"] == [] and len(rerun["skipped"]) == 4 and len(export_all(http, "ana")) == 4

    # Controls: Ben and the other tenant's `ana` were never touched, and still answer
    assert search_ids(http, "allotment beans", "ben")[0] == ben
    assert [m["id"] for m in export_all(http, "ben")] == [ben]
    assert [m["id"] for m in export_all(http, "ana", key=OTHER_KEY)] == [elsewhere]


def test_import_and_export_refuse_what_they_cannot_do(http, container) -> None:
    container.keys.ensure("local", "reader", ["memory:read"], READER_KEY)
    bad = http.get("/v1/export", params={"cursor": "not-a-cursor"}, headers=auth())
    assert bad.status_code == 400 and "cursor: is not a cursor this export returned" in bad.text
    assert http.get("/v1/export", params={"user_id": "*"}, headers=auth()).status_code in (400, 422)
    denied = http.post("/v1/import", json={"data": [{"content": "x"}]}, headers=auth(READER_KEY))
    assert denied.status_code == 403 and "memory:write" in denied.text
    assert http.get("/v1/export", headers=auth(READER_KEY)).status_code == 200  # positive control: reading is allowed
    container.keys.ensure("local", "writer", ["memory:write"], WRITER_KEY)
    archived = http.post("/v1/import", json={"user_id": "cy", "data": [{"content": "Cy's old flat.", "status": "archived"}]},
                         headers=auth(WRITER_KEY)).json()
    assert archived["imported"] == [] and "memory:delete" in archived["failed"][0]["reason"]
    mixed = http.post("/v1/import", json={"user_id": "cy", "data": [
        {"content": "Cy likes tea.", "status": "completed"}, {"content": "Cy likes figs.", "status": "lost"},
        {"content": "Cy likes jam.", "author": "robot"}]}, headers=auth()).json()
    assert [f["reason"] for f in mixed["failed"]] == ["status: must be one of open, completed, archived, not 'lost'",
                                                      "author: must be user or agent"]
    assert [m["status"] for m in export_all(http, "cy")] == ["completed"]  # the good item went in, whole
    many = http.post("/v1/import", json={"data": [{"content": "x"}] * 501}, headers=auth())  # not refused: a job
    assert many.status_code == 202 and many.headers["location"] == f"/v1/jobs/{many.json()['job_id']}"


def test_the_cli_exports_json_lines_and_imports_them_into_another_user(http, container, principal, tmp_path, capsys) -> None:
    from mnemo import cli

    for n in range(3):
        capture(http, f"Gus's Quorvale recipe number {n}.", user_id="gus", as_user=True, metadata={"n": n})
    archived = capture(http, "Gus's retired Quorvale recipe.", user_id="gus", as_user=True)
    assert http.delete(f"/v1/memories/{archived}", headers=auth()).status_code == 200
    recipe = container.facts.record(principal, RecordFactCommand(user_id="gus", subject="Gus", predicate="bakes",
                                                                 object="Quorvale rye"))
    dump = tmp_path / "gus.ndjson"
    assert cli.main(["export", "--tenant", "local", "--user-id", "gus", "--out", str(dump)]) == 0
    every = [json.loads(line) for line in dump.read_text().splitlines()]
    lines = [m for m in every if "recorded_fact" not in m]
    assert sorted(m["id"] for m in lines) == sorted(m["id"] for m in export_all(http, "gus"))  # every status, once
    assert [f["recorded_fact"] for f in every[len(lines):]] == export_both(http, "gus")[1]  # the fact's line, last
    assert every[-1]["recorded_fact"]["uuid"] == recipe.uuid
    assert "exported 4 memories, 1 recorded facts" in capsys.readouterr().err

    assert cli.main(["import", "--tenant", "local", "--user-id", "gus-copy", str(dump)]) == 0
    assert json.loads(capsys.readouterr().out) == {"imported": 4, "facts_imported": 1, "skipped": 0, "failed": 0, "problems": []}
    without_user = [{**m, "user_id": None} for m in export_all(http, "gus-copy")]
    assert comparable(without_user) == comparable([{**m, "user_id": None} for m in lines])
    [copied] = export_both(http, "gus-copy")[1]  # Gus's uuid is taken in this tenant: a derived one, the same fact
    assert copied["uuid"] != recipe.uuid and (copied["subject"], copied["object"]) == ("Gus", "Quorvale rye")
    assert cli.main(["import", "--tenant", "local", "--user-id", "gus-copy", str(dump)]) == 0
    rerun = json.loads(capsys.readouterr().out)
    assert rerun["skipped"] == 5 and rerun["facts_imported"] == 0  # a rerun imports nothing twice
    assert len(export_all(http, "gus")) == 4 and len(export_all(http, "gus-copy")) == 4  # the source user untouched
    assert export_all(http, "gus", key=OTHER_KEY) == []  # and nothing landed in another tenant
    bad = tmp_path / "bad.ndjson"
    bad.write_text('{"content": "ok"}\nnot json\n')
    assert cli.main(["import", "--tenant", "local", "--user-id", "gus-copy", str(bad)]) == 1
    assert "line 2: is not valid JSON" in capsys.readouterr().err


FRESH_KEY = "mn_freshtenant_0123456789abcdefghijklmnop"


def record_for(container, principal, user: str, subject: str, predicate: str, obj: str, **fields: Any) -> str:
    command = RecordFactCommand(user_id=user, subject=subject, predicate=predicate, object=obj, **fields)
    return container.facts.record(principal, command).uuid


def test_an_export_restored_into_a_fresh_tenant_keeps_ids_statuses_and_capture_times(http, aws, container, principal) -> None:
    # Given: Dee's memories (one completed, one with a fact the worker derives), and Eve's in the same tenant
    dee = [capture(http, "Dee Marlowe works at Quillbright Foundry.", user_id="dee", as_user=True,
                   metadata={"topic": "job", "n": 1.5}, captured_at="2023-02-03T04:05:06Z"),
           capture(http, "Dee's Quillbright badge renewal is due in June.", user_id="dee", agent_id="helper", group_id="work")]
    eve = capture(http, "Eve's Quillbright desk is by the window.", user_id="eve", as_user=True)
    # and facts recorded for Dee (one active, one retracted, one invalidated), and one for Eve
    cello = record_for(container, principal, "dee", "Dee Marlowe", "plays", "Brindlewood cello",
                       valid_at=datetime(2021, 3, 4, tzinfo=UTC))
    kayak = record_for(container, principal, "dee", "Dee Marlowe", "owns", "Tarrow kayak", group_id="work")
    container.facts.retract(principal, kayak, "sold it")
    tea = record_for(container, principal, "dee", "Dee Marlowe", "likes", "Vellum tea")
    container.facts.invalidate(principal, tea, invalid_at=datetime(2022, 5, 6, tzinfo=UTC))
    oboe = record_for(container, principal, "eve", "Eve", "plays", "Brindlewood oboe")
    enrich(aws)
    assert http.patch(f"/v1/memories/{dee[1]}", json={"status": "completed"}, headers=auth()).status_code == 200
    memories, recorded = export_both(http, "dee")
    exported = {m["id"]: m for m in memories}
    by_uuid = {f["uuid"]: f for f in recorded}
    assert set(by_uuid) == {cello, kayak, tea}  # every status, every group; never Eve's
    assert {u: (f["status"], f["group_id"]) for u, f in by_uuid.items()} == {
        cello: ("active", "default"), kayak: ("retracted", "work"), tea: ("invalidated", "default")}
    assert by_uuid[cello]["valid_at"] == "2021-03-04T00:00:00Z" and by_uuid[kayak]["retracted_reason"] == "sold it"
    assert by_uuid[tea]["invalid_at"] == "2022-05-06T00:00:00Z" and by_uuid[cello]["subject"] == "Dee Marlowe"
    ndjson = http.get("/v1/export", params={"user_id": "dee", "format": "ndjson"}, headers=auth()).text.splitlines()
    assert sorted((json.loads(line).get("recorded_fact") or {}).get("uuid", "") for line in ndjson)[-3:] == sorted(by_uuid)
    assert http.get(f"/v1/facts/{cello}", headers=auth()).status_code == 200  # positive control for the erasure below
    assert fact_hits(container, "local", "dee", "Brindlewood cello") == [cello]

    # Then: each record carries its history, the facts it supports and its provenance
    first, second = exported[dee[0]], exported[dee[1]]
    assert [h["action"] for h in second["history"]] == ["created", "completed"] and second["history"][0]["actor"]
    assert first["provenance"] == {"origin": "captured", "source_id": None, "created_by": first["history"][0]["actor"]}
    derived = [f for f in first["facts"] if f["origin"] == "derived"]
    assert derived and all(f["memory_ids"] == [dee[0]] for f in derived), first["facts"]
    assert any("Quillbright" in f["fact"] for f in derived)

    # When: Dee is erased by the job: her recorded facts go too, with their index documents and items
    job = http.delete("/v1/users/dee?hard=true", headers=auth()).json()["job_id"]
    enrich(aws)
    receipt = http.get(f"/v1/jobs/{job}", headers=auth()).json()
    assert receipt["status"] == "completed" and receipt["counts"]["recorded_facts"] == 3
    assert [http.get(f"/v1/facts/{u}", headers=auth()).status_code for u in (cello, kayak, tea)] == [404] * 3
    assert fact_hits(container, "local", "dee", "Brindlewood cello") == [] and export_both(http, "dee") == ([], [])
    assert not [i for i in every_item(aws) if any(u in json.dumps(i) for u in (cello, kayak, tea))]
    assert not [i for i in every_item(aws) if "Tarrow" in json.dumps(i) or "Vellum" in json.dumps(i)]  # no orphan nodes
    assert http.get(f"/v1/facts/{oboe}", headers=auth()).json()["edge"]["status"] == "active"  # Eve's stays
    assert fact_hits(container, "local", "eve", "Brindlewood oboe") == [oboe]

    # and the export is imported into a fresh tenant
    container.keys.ensure("fresh", "fresh", ["admin"], FRESH_KEY)
    body = {"user_id": "dee", "data": {"memories": list(exported.values()), "recorded_facts": recorded}}
    report = http.post("/v1/import", json=body, headers=auth(FRESH_KEY)).json()

    # Then: the same ids, texts, metadata, capture times and statuses, recorded as imported
    assert sorted(report["imported"]) == sorted(dee) and report["skipped"] == report["failed"] == []
    assert sorted(report["facts_imported"]) == sorted(by_uuid)  # the recorded facts keep their uuids
    _, back_facts = export_both(http, "dee", key=FRESH_KEY)
    assert sorted(back_facts, key=lambda f: f["uuid"]) == sorted(recorded, key=lambda f: f["uuid"])  # status, names, times
    restored = http.get(f"/v1/facts/{kayak}", headers=auth(FRESH_KEY)).json()
    assert restored["edge"]["status"] == "retracted" and [h["action"] for h in restored["history"]] == ["created", "retracted"]
    assert restored["history"][0]["reason"] == "imported"
    assert fact_hits(container, "fresh", "dee", "Brindlewood cello") == [cello]  # searchable; retracted ones are not indexed
    enrich(aws)
    back = {m["id"]: m for m in export_all(http, "dee", key=FRESH_KEY)}
    assert set(back) == set(dee)
    for memory_id, before in exported.items():
        for field in ("content", "metadata", "captured_at", "status", "user_id", "agent_id", "group_id", "conversation_id", "author"):
            assert back[memory_id][field] == before[field], field
        assert back[memory_id]["provenance"]["origin"] == "imported" and back[memory_id]["provenance"]["source_id"] == memory_id
    assert any("Quillbright" in f["fact"] for f in back[dee[0]]["facts"])  # derived facts rebuilt by enrichment
    hits = http.post("/v1/memories/search", json={"query": "Quillbright Foundry job", "user_id": "dee"},
                     headers=auth(FRESH_KEY)).json()["results"]
    assert hits[0]["id"] == dee[0]
    # and a rerun imports nothing
    rerun = http.post("/v1/import", json=body, headers=auth(FRESH_KEY)).json()
    assert rerun["imported"] == rerun["facts_imported"] == []
    assert [s["reason"] for s in rerun["skipped"]] == [f"already imported (source id {i})" for i in exported] + [
        f"already imported (fact uuid {f['uuid']})" for f in recorded]
    assert len(export_both(http, "dee", key=FRESH_KEY)[1]) == 3

    # Same tenant, where the ids were erased (tombstones): derived ids, the source in metadata; a rerun skips
    same = http.post("/v1/import", json=body, headers=auth()).json()
    assert len(same["imported"]) == 2 and not set(same["imported"]) & set(dee)
    assert sorted(same["facts_imported"]) == sorted(by_uuid)  # erased fact uuids are free again: no tombstone holds them
    assert sorted(m["metadata"]["source_id"] for m in export_all(http, "dee")) == sorted(dee)
    again = http.post("/v1/import", json=body, headers=auth()).json()
    assert again["imported"] == again["facts_imported"] == []
    # Controls: Eve, in the source tenant, is untouched; nothing of Dee's went to the other tenant
    assert [m["id"] for m in export_all(http, "eve")] == [eve] and [f["uuid"] for f in export_both(http, "eve")[1]] == [oboe]
    assert export_both(http, "dee", key=OTHER_KEY) == ([], [])


def test_the_cli_shows_a_progress_bar_on_long_runs_only(http, tmp_path, capsys, monkeypatch) -> None:
    from mnemo import cli, cli_portability

    dump = tmp_path / "many.ndjson"
    dump.write_text("".join(json.dumps({"id": f"n-{n}", "content": f"Note {n} about Quorvale tides."}) + "\n" for n in range(250)))
    # A short run (well under PROGRESS_DELAY_S) prints its summary line only
    assert cli.main(["export", "--tenant", "local", "--user-id", "nobody", "--out", str(tmp_path / "empty")]) == 0
    assert capsys.readouterr().err == "exported 0 memories, 0 recorded facts\n"
    # A long one (here: any run, with the delay at 0) draws the bar as chunks go in, then the summary
    monkeypatch.setattr(cli_portability, "PROGRESS_DELAY_S", 0)
    assert cli.main(["import", "--tenant", "local", "--user-id", "tides", str(dump)]) == 0
    printed = capsys.readouterr()
    err = printed.err
    assert json.loads(printed.out)["imported"] == 250
    assert "100/250" in err and "200/250" in err and "250/250" in err and "imported=250" in err
    assert err.rstrip().endswith("imported 250, skipped 0, failed 0 of 250")
    assert len(export_all(http, "tides", limit=100)) == 250


def test_the_cli_import_refuses_a_file_nested_past_the_limit_by_name(http, tmp_path, capsys) -> None:
    from mnemo import cli
    from mnemo.domain.limits import MAX_JSON_DEPTH

    deep, within = tmp_path / "deep.json", tmp_path / "within.json"
    deep.write_text('{"id": "d-1", "content": "Deep", "metadata": {"x": ' + "[" * 10_000 + "]" * 10_000 + "}}\n")
    within.write_text(json.dumps([{"id": "w-1", "content": "Shallow enough", "metadata": {"x": [[["ok"]]]}}]))
    # a file nested 10,000 levels: refused naming the file and the limit, not a RecursionError traceback
    assert cli.main(["import", "--tenant", "local", "--user-id", "deep", str(deep)]) == 1
    assert f"file: must be nested at most {MAX_JSON_DEPTH} levels deep" in capsys.readouterr().err
    assert export_all(http, "deep") == []
    # the control: the same shape within the limit imports
    assert cli.main(["import", "--tenant", "local", "--user-id", "deep", str(within)]) == 0
    assert json.loads(capsys.readouterr().out)["imported"] == 1
    assert [m["content"] for m in export_all(http, "deep")] == ["Shallow enough"]


def test_reindex_lists_facts_recorded_before_the_listing_and_a_job_imports_them(http, container, principal, aws) -> None:
    from mnemo.adapters.aws import client
    from mnemo.services.jobs.service import SYNC_IMPORT_LIMIT
    from tests.integration.portability.test_jobs import run_jobs

    # Given a fact recorded for Hal before the user listing existed (its listing item is not there)
    stamps = record_for(container, principal, "hal", "Hal", "collects", "Quorvale stamps")
    listing = {"pk": {"S": "T#local#U#hal#RFACT"}, "sk": {"S": f"default#{stamps}"}}
    assert client("dynamodb").delete_item(TableName=aws["MemoriesTable"], Key=listing, ReturnValues="ALL_OLD")["Attributes"]
    assert export_both(http, "hal")[1] == []  # export reads the listing: without it the fact is missed
    # When the admin reindex runs (twice: idempotent), the listing is backfilled
    container.recovery.reindex_facts()
    container.recovery.reindex_facts()
    [listed] = export_both(http, "hal")[1]
    assert (listed["uuid"], listed["subject"], listed["predicate"], listed["object"]) == (stamps, "Hal", "collects", "Quorvale stamps")

    # And an export page too large for one request is imported by a job: its recorded facts too
    data = {"memories": [{"id": f"hal-{n}", "content": f"Hal's Quorvale stamp number {n}."} for n in range(SYNC_IMPORT_LIMIT)],
            "recorded_facts": [listed]}
    response = http.post("/v1/import", json={"user_id": "hal-copy", "data": data}, headers=auth())
    assert response.status_code == 202, response.text
    run_jobs(container, aws)
    summary = http.get(f"/v1/jobs/{response.json()['job_id']}", headers=auth()).json()["summary"]
    assert (summary["imported"], summary["facts_imported"], summary["skipped"], summary["failed"]) == (SYNC_IMPORT_LIMIT, 1, 0, 0)
    [copied] = export_both(http, "hal-copy", limit=100)[1]
    assert copied["uuid"] != stamps and (copied["subject"], copied["object"]) == ("Hal", "Quorvale stamps")
    # A malformed or unauthorised recorded fact fails alone, with the field and the reason
    bad = http.post("/v1/import", json={"user_id": "hal-copy", "data": {"memories": [], "recorded_facts": [
        {**listed, "status": "lost"}, {**listed, "subject": ""}]}}, headers=auth()).json()
    assert [f["reason"].split(":")[0] for f in bad["failed"]] == ["recorded_fact.status", "recorded_fact.subject"]
    container.keys.ensure("local", "writer", ["memory:write"], WRITER_KEY)
    retracted = {**listed, "uuid": "4d1f0c8e-3a5b-4c2d-9e7f-1a2b3c4d5e6f", "status": "retracted"}
    denied = http.post("/v1/import", json={"user_id": "hal-copy", "data": {"memories": [], "recorded_facts": [retracted]}},
                       headers=auth(WRITER_KEY)).json()
    assert denied["facts_imported"] == [] and denied["failed"][0]["reason"].startswith("recorded_fact.status: ")
    assert "admin" in denied["failed"][0]["reason"]


def test_an_imported_fact_whose_uuid_is_not_a_uuid_gets_a_derived_one_and_stays_retractable(http, container, principal) -> None:
    import uuid

    from mnemo.services.portability.fact_imports import imported_fact_id

    record_for(container, principal, "ivo", "Ivo", "collects", "Brassel maps")
    [listed] = export_both(http, "ivo")[1]
    legacy = {**listed, "uuid": "legacy-fact-7"}  # another system's id
    body = {"user_id": "ivo-copy", "data": {"memories": [], "recorded_facts": [legacy]}}
    report = http.post("/v1/import", json=body, headers=auth()).json()
    [imported] = report["facts_imported"]
    assert imported == imported_fact_id("local", "ivo-copy", "legacy-fact-7") == str(uuid.UUID(imported))
    assert http.post("/v1/import", json=body, headers=auth()).json()["skipped"][0]["reason"].startswith("already imported")
    # every stored fact stays retractable: retract takes only UUIDs, and this one is
    assert http.post("/v1/retract", json={"edge_uuid": imported, "reason": "old"}, headers=auth()).json()["edge"]["status"] == "retracted"
    refused = http.post("/v1/retract", json={"edge_uuid": "legacy-fact-7"}, headers=auth())
    assert refused.status_code == 400 and refused.json()["error"]["message"].startswith("edge_uuid: must be a UUID")
