"""The r3 cache (services/memory/search_cache.py) at /mcp/r3: a repeated identical search or listing of one
user is served from this instance's hot set, marked `cache: hit`, and counted; any write of that
user (on any surface, or by an erasure) makes the next repeat a miss that reads live, and the
answer shows the write. Controls: another user's entries survive a write; another tenant sees
neither the counters nor the entries; `prefer_cache=false` never touches the cache."""

from __future__ import annotations

from typing import Any

from mnemo.domain.commands import CaptureCommand
from mnemo.domain.models import Permission, Principal
from mnemo.services.memory.memories import MemoryService
from tests.integration.conftest import OTHER_KEY, auth
from tests.integration.surfaces.test_profile_r3 import call, saved_id
from tests.integration.surfaces.test_profile_thrindex import enrich, text

BEES = {"query": "who keeps bees", "user_id": "dana"}


def search(app: Any, arguments: dict[str, Any], key: str | None = None) -> dict[str, Any]:
    result = call(app, "search_memory", arguments, **({"key": key} if key else {}))
    text(result)
    return result.structured_content


def stats(app: Any, key: str | None = None) -> dict[str, Any]:
    return call(app, "cache_stats", {}, **({"key": key} if key else {})).structured_content


def test_a_repeat_is_served_from_the_cache_until_a_write_of_that_user(http, container, aws) -> None:
    app = http.app
    bees = saved_id(call(app, "add_memory", {"content": "Dana keeps bees on her roof.", "user_id": "dana"}))
    eli = saved_id(call(app, "add_memory", {"content": "Eli keeps bees in the orchard.", "user_id": "eli"}))
    enrich(aws)
    # Given: each search once (misses), then again (hits: the same ids, marked cache-served)
    first = search(app, BEES)
    assert (first["cache"], [r["id"] for r in first["results"]]) == ("miss", [bees])
    assert search(app, {**BEES, "user_id": "eli"})["cache"] == "miss"
    again = search(app, BEES)
    assert (again["cache"], again["results"]) == ("hit", first["results"])
    assert search(app, {**BEES, "limit": 5})["cache"] == "miss"  # a different request is a different entry
    assert search(app, {**BEES, "prefer_cache": False})["cache"] == "off"
    before = stats(app)
    assert (before["hits"], before["misses"], before["entries"]) == (1, 3, 3) and before["memories"] == 2

    # When: Dana's memory is edited on /v1; Then: her repeat reads live and shows the edit; Eli's entry stays
    assert http.patch(f"/v1/memories/{bees}", json={"content": "Dana keeps bees and hens on her roof."},
                      headers=auth()).status_code == 200
    edited = search(app, BEES)
    assert edited["cache"] == "miss" and edited["results"][0]["content"] == "Dana keeps bees and hens on her roof."
    assert search(app, {**BEES, "user_id": "eli"})["cache"] == "hit"  # positive control: another user's entry survives
    enrich(aws)
    assert search(app, BEES)["cache"] == "miss"  # enrichment changed her memory's revision: proved stale, not served

    # When: Dana adds a memory on another surface; Then: the repeat is a miss and finds it
    assert search(app, BEES)["cache"] == "hit"
    more = http.post("/v1/memories", json={"content": "Dana's bees made honey.", "user_id": "dana", "as_user": True},
                     headers=auth()).json()["id"]
    enrich(aws)
    found = search(app, BEES)
    assert found["cache"] == "miss" and more in [r["id"] for r in found["results"]]

    # When: a memory is added behind this cache's back (straight into the store, as another instance would);
    # Then: the check of the user's newest memory still catches it
    assert search(app, BEES)["cache"] == "hit"
    elsewhere = MemoryService(container.store, container.queue, container.index(), embedder=container.embedder,
                              clock=container.clock)  # the bare store: no hook into this instance's cache
    owner = Principal(tenant="local", key_prefix="other-instance", permissions=[Permission.ADMIN])
    late = elsewhere.capture(owner, CaptureCommand(raw="Dana sold bees to Eli.", user_id="dana", as_user=True)).id
    assert late in [r["id"] for r in search(app, BEES)["results"]]

    # When: Dana is erased; Then: her entries go, the repeat finds nothing; Eli's still answers
    job = http.delete("/v1/users/dana?hard=true", headers=auth()).json()["job_id"]
    enrich(aws)
    assert http.get(f"/v1/jobs/{job}", headers=auth()).json()["status"] == "completed"
    gone = search(app, BEES)
    assert gone["cache"] == "miss" and gone["results"] == []
    assert [r["id"] for r in search(app, {**BEES, "user_id": "eli"})["results"]] == [eli]


def test_listings_cache_stats_and_optimize_are_real_and_per_tenant(http) -> None:
    app = http.app
    ids = [saved_id(call(app, "add_memory", {"content": f"Fay's note number {n}.", "user_id": "fay"})) for n in range(3)]
    first = call(app, "get_all_memories", {"user_id": "fay", "limit": 2}).structured_content
    again = call(app, "get_all_memories", {"user_id": "fay", "limit": 2, "include_cache_stats": True}).structured_content
    assert (first["cache"], again["cache"]) == ("miss", "hit") and again["memories"] == first["memories"]
    assert again["cache_stats"]["hits"] == 1
    # an archive of a memory in the listing makes the repeat a miss that no longer lists it
    call(app, "delete_memory", {"memory_id": ids[2]})
    after = call(app, "get_all_memories", {"user_id": "fay", "limit": 2}).structured_content
    assert after["cache"] == "miss" and ids[2] not in [m["id"] for m in after["memories"]]
    # another tenant: its own counters, none of ours; optimize evicts only its own
    assert (stats(app, OTHER_KEY)["entries"], stats(app, OTHER_KEY)["hits"]) == (0, 0)
    assert call(app, "optimize_cache", {"force_refresh": True}, key=OTHER_KEY).structured_content["evicted_entries"] == 0
    ours = stats(app)
    assert ours["entries"] == 1 and ours["memories"] == 2  # the two live notes the listing read
    trimmed = call(app, "optimize_cache", {"max_memories": 1})
    assert text(trimmed) == "Evicted 1 cache entries; 0 entries holding 0 memories remain"
    assert call(app, "get_all_memories", {"user_id": "fay", "limit": 2}).structured_content["cache"] == "miss"
    assert call(app, "optimize_cache", {"force_refresh": True}).structured_content == {
        "evicted_entries": 1, "entries": 0, "memories": 0}
    assert stats(app)["entries"] == 0
