"""Deduplication at /mcp/r3: add_memory's check (exact, then the allow-list rule at CAPTURE_THRESHOLD, in the
caller's user) and deduplicate_memories (preview, then archive with a link back, undoable)."""

from __future__ import annotations

from tests.integration.surfaces.test_profile_r3 import app, call, saved_id  # noqa: F401 - the fixture
from tests.integration.surfaces.test_profile_thrindex import enrich, text


def test_add_memory_finds_exact_and_semantic_repeats_in_the_same_user_only(app, aws) -> None:  # noqa: F811
    first = saved_id(call(app, "add_memory", {"content": "I am allergic to peanuts.", "user_id": "ann"}))
    exact = call(app, "add_memory", {"content": "  i am ALLERGIC to peanuts. ", "user_id": "ann"})  # not indexed yet
    assert text(exact) == f"Already saved (id: {first})" and exact.structured_content["duplicate"] == "exact"
    enrich(aws)
    reworded = call(app, "add_memory", {"content": "I'm allergic to peanuts.", "user_id": "ann"})
    assert text(reworded) == f"Already saved (id: {first})" and reworded.structured_content["duplicate"] == "semantic"
    different = call(app, "add_memory", {"content": "I am allergic to cats.", "user_id": "ann"})
    other_user = call(app, "add_memory", {"content": "I am allergic to peanuts.", "user_id": "ben"})
    forced = call(app, "add_memory", {"content": "I am allergic to peanuts.", "user_id": "ann", "skip_duplicate_check": True})
    assert len({first, saved_id(different), saved_id(other_user), saved_id(forced)}) == 4
    assert text(different).startswith("Saved (id:") and text(other_user).startswith("Saved (id:")


def test_deduplicate_previews_then_archives_with_a_link_and_can_be_undone(app, aws, container) -> None:  # noqa: F811
    texts = ["The wifi password is hunter2.", "Wifi password is hunter2!", "The wifi password is hunter2.",
             "Dinner is at eight on Friday.", "Our wifi password is hunter2."]
    ids = [saved_id(call(app, "add_memory", {"content": t, "user_id": "cy", "skip_duplicate_check": True})) for t in texts]
    enrich(aws)
    preview = call(app, "deduplicate_memories", {"user_id": "cy", "similarity_threshold": 0.9})
    report = preview.structured_content
    assert [g["keep"]["id"] for g in report["groups"]] == [ids[0]] and report["archived"] == []
    assert {(r["memory"]["id"], r["kind"]) for r in report["groups"][0]["repeats"]} == {(ids[1], "semantic"), (ids[2], "exact")}
    assert text(preview).startswith("Found 1 duplicate groups among 5 memories; would archive 2.")
    # "our" is content: as close as the repeats, listed as similar with where it differs, and kept
    assert report["similar"] and {(p["memory"]["id"], p["difference"]) for p in report["similar"]} == {
        (ids[4], "only the second says 'our'")}
    assert f"{ids[4]} ~ {ids[0]}" in text(preview) and "Similar but not the same memory, both kept:" in text(preview)
    assert len(call(app, "get_all_memories", {"user_id": "cy"}).structured_content["memories"]) == 5  # dry run: nothing changed
    applied = call(app, "deduplicate_memories", {"user_id": "cy", "similarity_threshold": 0.9, "dry_run": False})
    assert sorted(applied.structured_content["archived"]) == sorted(ids[1:3])
    left = [m["id"] for m in call(app, "get_all_memories", {"user_id": "cy"}).structured_content["memories"]]
    assert sorted(left) == sorted([ids[0], ids[3], ids[4]])  # the kept one, the similar and the unrelated one stay
    repeat = container.store.get("local", ids[1])
    assert repeat.status.value == "archived" and repeat.metadata["duplicate_of"] == ids[0]
    assert container.store.history("local", ids[1])[-1].action == "archived"
    from mnemo.domain.commands import EditCommand
    from mnemo.domain.models import Status

    principal = container.keys.authenticate("mn_testlocal_0123456789abcdefghijklmnop")
    container.memories.edit(principal, ids[1], EditCommand(status=Status.OPEN))  # the documented undo
    assert call(app, "get_memory", {"memory_id": ids[1]}).structured_content["status"] == "open"


CORRECTIONS = [  # issue 26 item 5: each pair is two memories, however close their embeddings
    ("The team meeting is on Monday at 3pm.", "The team meeting is on Tuesday at 3pm."),
    ("I am allergic to peanuts", "I am not allergic to peanuts"),
    ("The release is on 2025-03-01.", "The release is on 2025-04-15."),
    ("Invoice 1001 is paid.", "Invoice 1003 is paid."),
]


def test_add_memory_stores_a_correction_as_its_own_memory_and_leaves_the_earlier_one(app, aws, container) -> None:  # noqa: F811
    firsts = [saved_id(call(app, "add_memory", {"content": a, "user_id": "cor"})) for a, _ in CORRECTIONS]
    enrich(aws)
    for (first_text, second_text), first in zip(CORRECTIONS, firsts, strict=True):
        second = call(app, "add_memory", {"content": second_text, "user_id": "cor"})
        assert text(second).startswith("Saved (id:"), (second_text, text(second))
        assert saved_id(second) != first and container.store.get("local", saved_id(second)).raw == second_text
        assert container.store.get("local", first).raw == first_text and container.store.get("local", first).version == 1
    # the control: the same words, punctuated and spelled otherwise, are still found
    again = call(app, "add_memory", {"content": "the team meeting is on Monday at 3 p.m.!", "user_id": "cor"})
    assert text(again) == f"Already saved (id: {firsts[0]})" and again.structured_content["duplicate"] == "semantic"


def test_deduplicate_archives_only_true_repeats_of_a_near_identical_template(app, aws, container) -> None:  # noqa: F811
    facts = [f"Note {i:02d}: the cobalt{i:02d} lighthouse keeps its lamp lit all night." for i in range(25)]
    ids = [[saved_id(call(app, "add_memory", {"content": t, "user_id": "cob", "skip_duplicate_check": True}))
            for t in (fact, fact.upper())] for fact in facts]  # two copies of each of 25 distinct facts
    enrich(aws)
    preview = call(app, "deduplicate_memories", {"user_id": "cob"}).structured_content  # default threshold 0.85
    assert len(preview["groups"]) == 25 and all(len(g["repeats"]) == 1 for g in preview["groups"])
    applied = call(app, "deduplicate_memories", {"user_id": "cob", "dry_run": False}).structured_content
    assert sorted(applied["archived"]) == sorted(second for _, second in ids)  # the copies, one per fact
    for first, second in ids:
        assert container.store.get("local", first).status.value == "open"  # every distinct fact stays
        assert container.store.get("local", second).metadata["duplicate_of"] == first
