"""import_memories (idempotent by source id, summarised per item) and the knowledge-graph tools at
/mcp/r3 (read the fact graph outward from a named entity, inside the caller's namespace)."""

from __future__ import annotations

import json
from pathlib import Path

from mnemo.services.portability.import_files import OFF, REFUSED
from tests.integration.conftest import OTHER_KEY
from tests.integration.surfaces.test_profile_r3 import app, call  # noqa: F401 - the fixture
from tests.integration.surfaces.test_profile_thrindex import enrich, error_text, text

MEM0_EXPORT = {"results": [
    {"id": "m-1", "memory": "Gina's favourite colour is teal.", "metadata": {"category": "preference"}},
    {"id": "m-2", "memory": "Gina works at Acme Corp."},
    {"memory": "   "},
    "not an object",
]}


def test_import_is_idempotent_by_source_id_and_reports_each_item(app, container) -> None:  # noqa: F811
    first = call(app, "import_memories", {"source": "json", "data": MEM0_EXPORT, "user_id": "gina"})
    assert text(first).splitlines() == ["Imported 2, skipped 1, failed 1", "item 2: skipped, no memory or content text",
                                        "item 3: failed, not an object"]
    again = call(app, "import_memories", {"source": "json", "data": MEM0_EXPORT, "user_id": "gina"})
    assert text(again).splitlines()[0] == "Imported 0, skipped 3, failed 1"
    ids = first.structured_content["imported"]
    found = call(app, "search_memory", {"query": "favourite colour teal", "user_id": "gina"}).structured_content["results"]
    assert [r["id"] for r in found] == ids[:1] and found[0]["metadata"] == {"category": "preference", "source_id": "m-1"}
    other = call(app, "import_memories", {"source": "json", "data": MEM0_EXPORT, "user_id": "gina"}, key=OTHER_KEY)
    assert text(other).startswith("Imported 2,")  # another tenant's import is its own, not "already imported"


def test_import_from_a_local_file_and_its_limits(app, container, tmp_path: Path) -> None:  # noqa: F811
    container.settings.import_dir = str(tmp_path)  # what MNEMO_IMPORT_DIR sets (read when first used)
    path = tmp_path / "r3-import.json"
    path.write_text(json.dumps([{"content": "The documentation example project uses TypeScript.",
                                 "metadata": {"category": "project"}}]))
    done = call(app, "import_memories", {"source": "json_file", "file_path": str(path), "user_id": "r3-quickstart",
                                         "batch_size": 50, "skip_duplicates": True})
    assert text(done) == "Imported 1, skipped 0, failed 0"
    repeat = call(app, "import_memories", {"source": "json_file", "file_path": str(path), "user_id": "r3-quickstart"})
    assert text(repeat).startswith("Imported 0, skipped 1") and "duplicate of" in text(repeat)  # no source id: by content
    small = call(app, "import_memories", {"source": "json", "data": [{"content": "Pia likes kites."}] * 3, "batch_size": 2})
    assert text(small).startswith("Imported 1, skipped 2")  # batch_size chunks a job; a small import runs at once
    assert error_text(call(app, "import_memories", {"source": "mem0_api"})) == "api_key: used with source mem0_api, and only there"
    assert error_text(call(app, "import_memories", {"source": "json_file", "file_path": str(tmp_path / "none.json")})
                      ) == REFUSED


def test_knowledge_graph_and_connections_read_the_fact_graph_within_the_tenant(app, aws) -> None:  # noqa: F811
    for fact in ["Hana works at Acme Corp.", "Ivo works at Acme Corp."]:
        call(app, "add_memory", {"content": fact})
    enrich(aws)
    extracted = call(app, "extract_entities", {"text": "Hana works at Acme Corp."}).structured_content
    assert {"Hana", "Acme Corp"} <= {e["name"] for e in extracted["entities"]}
    graph = call(app, "get_knowledge_graph", {"entity_name": "Hana"}).structured_content
    assert graph["entity"]["name"] == "Hana"
    assert [(r["subject"], r["object"]) for r in graph["relationships"]] == [("Hana", "Acme Corp")]
    paths = call(app, "find_connections", {"from_entity": "Hana", "to_entity": "Ivo"}).structured_content
    assert [(c["entity"], c["depth"]) for c in paths["connections"]] == [("Ivo", 2)]
    assert all(len(step["uuid"]) == 36 for step in paths["connections"][0]["path"])
    one_hop = call(app, "find_connections", {"from_entity": "Hana", "to_entity": "Ivo", "max_depth": 1})
    assert text(one_hop) == "No connections found from Hana"
    assert error_text(call(app, "get_knowledge_graph", {"entity_name": "Hana"}, key=OTHER_KEY)) == "entity 'Hana' not found"


def test_json_file_reads_only_inside_the_import_directory_with_one_answer_for_every_refusal(
        app, container, tmp_path: Path) -> None:  # noqa: F811
    inside, outside = tmp_path / "imports", tmp_path / "private"
    inside.mkdir()
    outside.mkdir()
    secret = outside / "secrets.json"
    secret.write_text(json.dumps([{"content": "the server's private note"}]))
    (inside / "escape.json").symlink_to(secret)
    (inside / "ok.json").write_text(json.dumps([{"content": "Quillon imports from the import directory."}]))
    arguments = {"source": "json_file", "user_id": "files"}
    off = call(app, "import_memories", {**arguments, "file_path": "ok.json"})
    assert error_text(off) == OFF  # unset: json_file is off, naming the setting
    container.settings.import_dir = str(inside)
    del container.__dict__["import_files"]  # built from the setting on first use: rebuild it with the directory set
    refused = [str(secret), "escape.json", "../private/secrets.json", "missing.json", str(outside / "missing.json"),
               "/etc/passwd", ".", "ok.json\x00"]
    for path in refused:
        assert error_text(call(app, "import_memories", {**arguments, "file_path": path})) == REFUSED, path
    assert "private note" not in str(call(app, "get_all_memories", {"user_id": "files"}))
    done = call(app, "import_memories", {**arguments, "file_path": "ok.json"})  # positive control: inside works
    assert text(done) == "Imported 1, skipped 0, failed 0"
    assert text(call(app, "import_memories", {**arguments, "file_path": str(inside / "ok.json")})).startswith("Imported 0")


def test_get_knowledge_graph_with_no_arguments_is_the_users_graph_bounded_and_says_how(app, aws, container, principal) -> None:  # noqa: F811
    import inspect

    from mnemo.domain.fact_commands import RecordFactCommand
    from mnemo.services.facts.connections import OVERVIEW_MEMORIES, OVERVIEW_RECORDED
    from mnemo.surfaces.profiles import r3

    container.facts.record_triple(principal, RecordFactCommand(subject="Nell", predicate="plays", object="cello"))

    call(app, "add_memory", {"content": "Lena works at Acme Corp."})
    call(app, "add_memory", {"content": "Olaf lives in Oslo."})
    call(app, "add_memory", {"content": "Mira works at Initech.", "user_id": "mira"})  # another user's graph
    call(app, "add_memory", {"content": "Pavel moved to Prague."})
    enrich(aws)
    whole = call(app, "get_knowledge_graph", {})  # all four arguments are optional in the seed
    pairs = {(r["subject"], r["predicate"], r["object"]) for r in whole.structured_content["relationships"]}
    assert {("Lena", "works at", "Acme Corp"), ("Olaf", "lives in", "Oslo"), ("Pavel", "lives in", "Prague"),
            ("Nell", "plays", "cello")} <= pairs  # derived from memories, and recorded
    assert all(s != "Mira" for s, _, _ in pairs)  # never another user's
    assert whole.structured_content["entity"] is None and whole.structured_content["user_id"] == "default"
    assert whole.structured_content["bounded_by"] == {"memories_read": 3, "recorded_facts_read": 1, "limit": 50}
    # the description states the bounds the service applies
    assert f"user's {OVERVIEW_MEMORIES} newest memories and up to {OVERVIEW_RECORDED} of their recorded" in inspect.getsource(r3)
    head = text(whole).splitlines()[0]
    assert head.startswith("Knowledge graph of user default (no entity named): the newest ")
    assert "at most 50, among the facts of their 3 newest memories" in head and OVERVIEW_MEMORIES >= 3
    # the filters and the bound apply to the overview too
    one = call(app, "get_knowledge_graph", {"limit": 1}).structured_content["relationships"]
    assert len(one) == 1
    works = call(app, "get_knowledge_graph", {"relationship_type": "works_at"}).structured_content["relationships"]
    assert [(r["subject"], r["object"]) for r in works] == [("Lena", "Acme Corp")]


def test_graph_tools_read_the_named_user_and_default_as_the_other_tools_do(app, aws) -> None:  # noqa: F811
    call(app, "add_memory", {"content": "Ada works at Cyberdyne.", "user_id": "gu1"})
    call(app, "add_memory", {"content": "Bea works at Cyberdyne.", "user_id": "gu1"})
    enrich(aws)
    found = call(app, "find_connections", {"from_entity": "Ada", "user_id": "gu1"}).structured_content
    assert {c["entity"] for c in found["connections"]} == {"Cyberdyne", "Bea"}
    graph = call(app, "get_knowledge_graph", {"entity_name": "Ada", "user_id": "gu1"}).structured_content
    assert [(r["subject"], r["object"]) for r in graph["relationships"]] == [("Ada", "Cyberdyne")]
    mine = call(app, "get_knowledge_graph", {"user_id": "gu1"}).structured_content
    assert mine["user_id"] == "gu1" and {r["subject"] for r in mine["relationships"]} == {"Ada", "Bea"}
    # negative controls: omitted, the user is "default", whose graph has no Ada
    assert error_text(call(app, "find_connections", {"from_entity": "Ada"})) == "entity 'Ada' not found"
    assert error_text(call(app, "get_knowledge_graph", {"entity_name": "Ada"})) == "entity 'Ada' not found"
    assert call(app, "get_knowledge_graph", {}).structured_content["relationships"] == []
