"""Issue 26 item 4: an item that exists can always be erased, however malformed. `salvage_memory`
gives erasure what it needs from any memory item; every other read still refuses it."""

from __future__ import annotations

import json

import pytest

from mnemo.adapters.dynamodb.codec import UnreadableItemError, item_to_memory, memory_to_item, salvage_memory
from mnemo.domain.models import Memory

GOOD = Memory(id="m-1", tenant="acme", user_id="ana", agent_id="bot", group_id="trips", raw="Ana's note.",
              normalized_text="ana's note.", captured_at="2025-06-07T09:00:00Z", created_at="2025-06-07T09:00:00Z",
              updated_at="2025-06-07T09:00:00Z", content_hash="h", entities=["ana"], index_ids=["x1"])


def test_a_readable_item_salvages_to_itself() -> None:
    item = memory_to_item(GOOD)
    assert salvage_memory(item) == item_to_memory(item) == GOOD


@pytest.mark.parametrize("damage", [
    {"metadata_json": json.dumps({"source_id": "q" * 20_000})},  # over 16 KB: written before the limit
    {"metadata_json": "{not json", "raw": 7},
    {"created_at": "yesterday", "status": "lost", "entities": "ana"},
])
def test_a_damaged_item_keeps_what_erasing_it_needs(damage: dict) -> None:
    item = {**memory_to_item(GOOD), **damage}
    with pytest.raises(UnreadableItemError):
        item_to_memory(item)  # every read but erasure refuses it
    salvaged = salvage_memory(item)
    assert (salvaged.id, salvaged.tenant, salvaged.user_id, salvaged.group_id, salvaged.agent_id) == ("m-1", "acme", "ana", "trips", "bot")
    assert salvaged.raw == "" and salvaged.metadata == {}  # never the damaged text or metadata
    assert salvaged.index_ids == ["x1"] and salvaged.entities == ([] if damage.get("entities") == "ana" else ["ana"])


def test_an_item_holding_only_its_keys_is_still_erasable() -> None:
    salvaged = salvage_memory({"pk": "T#acme#M#m-2", "sk": "MEMORY", "gsi1sk": "2025-06-07T09:00:00.000000Z#m-2"})
    assert (salvaged.id, salvaged.tenant, salvaged.user_id) == ("m-2", "acme", "default")
    assert salvaged.created_at.isoformat().startswith("2025-06-07T09:00:00")
