"""Deduplication's `duplicate_of` never outlives the kept memory (issue 26, allowed traces;
docs/erasure.md "What remains"): archiving a repeat puts a `DUP#<repeat id>` pointer in the kept
memory's item collection in the same transaction; erasing the kept memory follows the pointers and
removes `duplicate_of` from each repeat that still names it (a versioned edit, its history saying so
without an id) and rewords the repeat's archive line; erasing a repeat deletes its pointer. An archive
whose kept memory is being erased is refused whole: no pointer under an erased key, no reference."""

from __future__ import annotations

import json

from tests.integration.conftest import auth
from tests.integration.erasure.test_erasure import every_item

RELEASED = "duplicate_of removed: the kept memory was erased"  # the repeat's history line: no id, no text
ERASED_ORIGINAL = "duplicate of an erased memory"  # its archive line, instead of the erased id


def capture(http, content: str, user: str) -> str:
    response = http.post("/v1/memories", json={"content": content, "user_id": user}, headers=auth())
    assert response.status_code == 201, response.text
    return response.json()["id"]


def naming(aws, memory_id: str) -> list[str]:
    """The keys of every item of the memories table whose content names `memory_id`, beyond its tombstone."""
    return [f'{i["pk"]["S"]} {i["sk"]["S"]}' for i in every_item(aws)
            if memory_id in json.dumps(i) and i["sk"]["S"] != "ERASED"]


def test_erasing_the_kept_memory_takes_duplicate_of_off_its_repeats_and_a_kept_one_keeps_it(http, container, principal, aws) -> None:
    kept, repeat = capture(http, "My locker code is 5521.", "dx"), capture(http, "my locker code is 5521.", "dx")
    other, other_repeat = capture(http, "The boiler is serviced in May.", "dx"), capture(http, "the boiler is serviced in May.", "dx")
    report = container.duplicates.deduplicate(principal, "dx", 0.95, dry_run=False)
    assert sorted(report.archived) == sorted([repeat, other_repeat]) and report.skipped == []
    pointers = {f'{i["pk"]["S"]} {i["sk"]["S"]}' for i in every_item(aws) if i["sk"]["S"].startswith("DUP#")}
    assert pointers == {f"T#local#M#{kept} DUP#{repeat}", f"T#local#M#{other} DUP#{other_repeat}"}
    before = container.store.get("local", repeat)
    assert before.metadata == {"duplicate_of": kept} and before.version == 2

    assert http.delete(f"/v1/memories/{kept}?hard=true", headers=auth()).status_code == 200

    after = container.store.get("local", repeat)
    assert after.metadata == {} and after.version == 3 and after.status.value == "archived"
    lines = container.store.history("local", repeat)
    assert [(a.action, a.detail) for a in lines][-2:] == [("archived", ERASED_ORIGINAL), ("edited", RELEASED)]
    assert lines[-1].actor == "erasure"
    assert naming(aws, kept) == []  # nothing but the tombstone names the erased memory
    # the control in the same run: a kept memory that was not erased keeps its repeat's reference
    untouched = container.store.get("local", other_repeat)
    assert untouched.metadata == {"duplicate_of": other} and untouched.version == 2
    assert f"T#local#M#{other} DUP#{other_repeat}" in naming(aws, other_repeat)

    # erasing a repeat deletes the pointer to it from the kept memory's collection
    assert http.delete(f"/v1/memories/{other_repeat}?hard=true", headers=auth()).status_code == 200
    assert naming(aws, other_repeat) == []
    assert container.store.get("local", other) is not None  # the kept memory itself stays (control)


def test_an_archive_whose_kept_memory_is_being_erased_is_refused_whole(http, container, principal, aws, monkeypatch) -> None:
    kept, repeat = capture(http, "The spare key is under the blue pot.", "dy"), capture(http, "the spare key is under the blue pot.", "dy")
    control, control_repeat = capture(http, "Bins go out on Tuesday.", "dy"), capture(http, "bins go out on Tuesday.", "dy")
    marks = container.erasure._marks
    real_get = container.duplicates._store.get

    def get(tenant: str, memory_id: str, **options: object):
        found = real_get(tenant, memory_id, **options)
        if memory_id == kept:
            marks.mark("local", kept, container.clock())
        return found

    monkeypatch.setattr(container.duplicates._store, "get", get)
    report = container.duplicates.deduplicate(principal, "dy", 0.95, dry_run=False)
    assert report.archived == [control_repeat]  # the control: its kept memory is not being erased
    assert [(s.id, s.reason) for s in report.skipped] == [
        (repeat, f"the kept memory {kept} was changed, archived or erased since the comparison")]
    refused = container.store.get("local", repeat)
    assert refused.status.value == "open" and refused.metadata == {} and refused.version == 1
    assert not [i for i in every_item(aws) if i["sk"]["S"] == f"DUP#{repeat}"]  # no pointer under the erased key
    assert container.store.get("local", control_repeat).metadata == {"duplicate_of": control}
