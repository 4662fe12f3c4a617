"""Mapping between domain models and DynamoDB items (keys, timestamps, numbers)."""

from __future__ import annotations

import json
import logging
import zlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from mnemo.domain.limits import check_metadata
from mnemo.domain.models import Activity, EnrichmentState, Memory
from mnemo.errors import DependencyError, MnemoError, ValidationFailed

MEMORY_SK = "MEMORY"
HISTORY_PREFIX = "H#"
RECONCILE_SHARDS = 4

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def ts(value: datetime) -> str:
    """Fixed-width UTC ISO timestamp: lexicographic order equals time order (sort keys rely on it)."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def memory_pk(tenant: str, memory_id: str) -> str:
    return f"T#{tenant}#M#{memory_id}"


# The browse GSIs: which namespace levels each one's partition key pins. All share gsi1sk.
BROWSE_INDEXES: dict[str, tuple[str, ...]] = {
    "gsi1": ("user_id",),
    "gsi4": ("user_id", "agent_id"),
    "gsi5": ("user_id", "group_id"),
    "gsi6": (),
}
_LEVEL_TAGS = {"user_id": "U", "agent_id": "AG", "group_id": "G"}


def browse_pk(index: str, tenant: str, levels: dict[str, str], status: str, author: str) -> str:
    """The partition key of browse index `index` for these pinned levels (`T#<tenant>#U#<user>#S#..#A#..`)."""
    pinned = "".join(f"#{_LEVEL_TAGS[name]}#{levels[name]}" for name in BROWSE_INDEXES[index])
    return f"T#{tenant}{pinned}#S#{status}#A#{author}"


def browse_sk(created_at: datetime, memory_id: str) -> str:
    return f"{ts(created_at)}#{memory_id}"


def enrichment_pk(tenant: str, state: str) -> str:
    return f"T#{tenant}#E#{state}"


def reconcile_pk(memory_id: str) -> str:
    return f"PENDING#{zlib.crc32(memory_id.encode()) % RECONCILE_SHARDS}"


def memory_to_item(memory: Memory) -> dict[str, Any]:
    """The stored item: the model's JSON form plus the key attributes of the table and its GSIs.

    Metadata is kept as a JSON string so it round-trips exactly (DynamoDB has no float type).
    """
    body = memory.model_dump(mode="json", exclude={"metadata"})
    item: dict[str, Any] = json.loads(json.dumps(body), parse_float=Decimal)
    item["metadata_json"] = json.dumps(memory.metadata, separators=(",", ":"), sort_keys=True)
    item["pk"] = memory_pk(memory.tenant, memory.id)
    item["sk"] = MEMORY_SK
    item["gsi1sk"] = browse_sk(memory.created_at, memory.id)
    levels = {"user_id": memory.user_id, "group_id": memory.group_id}
    if memory.agent_id is not None:  # sparse: a memory without an agent is in no agent's partition
        levels["agent_id"] = memory.agent_id
    for index, pinned in BROWSE_INDEXES.items():
        if all(name in levels for name in pinned):
            item[f"{index}pk"] = browse_pk(index, memory.tenant, levels, memory.status, memory.author)
    state = memory.enrichment.state
    if state != EnrichmentState.ENRICHED:  # sparse: only unfinished work is indexed
        item["gsi2pk"] = enrichment_pk(memory.tenant, state)
        item["gsi2sk"] = f"{ts(memory.updated_at)}#{memory.id}"
    if state == EnrichmentState.PENDING and memory.enrichment.attempts == 0:
        # Pending and never attempted: the only memories that can have lost their task.
        queued_at = memory.enrichment.queued_at or memory.updated_at
        item["gsi3pk"] = reconcile_pk(memory.id)
        item["gsi3sk"] = f"{ts(queued_at)}#{memory.tenant}#{memory.id}"
    return _strip_none(item)


class UnreadableItemError(ValueError):
    """A stored item that does not decode into a valid memory (written before today's limits, or by hand)."""


def item_to_memory(item: dict[str, Any]) -> Memory:
    """The memory of a stored item; metadata is held to the same limits as on write, so whatever a
    read returns can be encoded into a response. Raises UnreadableItemError, never anything else."""
    try:
        data = {k: _plain(v) for k, v in item.items() if not k.startswith(("pk", "sk", "gsi"))}
        data["metadata"] = check_metadata(json.loads(data.pop("metadata_json", "{}")))
        return Memory.model_validate(data)
    except (ValueError, TypeError, RecursionError) as exc:  # pydantic's ValidationError is a ValueError
        raise UnreadableItemError(f"{item.get('pk')}: {type(exc).__name__}") from exc


def salvage_memory(item: dict[str, Any]) -> Memory:
    """For erasure only: the memory of a stored item, or, when it no longer decodes, what erasing it
    needs (its id, tenant, namespace, entities and index copies; no text, no metadata). Any item that
    exists can then be erased and counted, however malformed (issue 26 item 4)."""
    try:
        return item_to_memory(item)
    except UnreadableItemError:
        pass

    def text(name: str, default: str) -> str:
        value = item.get(name)
        return value if isinstance(value, str) and value else default

    def texts(name: str) -> list[str]:
        value = item.get(name)
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    pk = str(item.get("pk", ""))
    sort_key = str(item.get("gsi1sk", ""))
    created = _timestamp(item.get("created_at")) or _timestamp(sort_key.partition("#")[0]) or datetime.fromtimestamp(0, UTC)
    agent = item.get("agent_id")
    return Memory(id=pk.partition("#M#")[2] or text("id", ""), tenant=text("tenant", pk.removeprefix("T#").partition("#M#")[0]),
                  user_id=text("user_id", "default"), agent_id=agent if isinstance(agent, str) else None,
                  group_id=text("group_id", "default"), raw="", normalized_text="", captured_at=created, created_at=created,
                  updated_at=created, content_hash="", entities=texts("entities"), index_ids=texts("index_ids"))


def _timestamp(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def activity_to_item(tenant: str, activity: Activity) -> dict[str, Any]:
    item = activity.model_dump(mode="json")
    item["pk"] = memory_pk(tenant, activity.memory_id)
    item["sk"] = f"{HISTORY_PREFIX}{activity.version:010d}"
    return item


def item_to_activity(item: dict[str, Any]) -> Activity:
    return Activity.model_validate({k: _plain(v) for k, v in item.items() if k not in ("pk", "sk")})


def serialize(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _serializer.serialize(v) for k, v in item.items()}


def deserialize(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _deserializer.deserialize(v) for k, v in item.items()}


def all_items(call: Callable[..., dict[str, Any]], operation: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
    """Every item of a Query or Scan, page after page, deserialized; `call(operation, **kwargs)` is the
    adapter's own request wrapper (so its error mapping applies)."""
    while True:
        response = call(operation, **kwargs)
        yield from (deserialize(item) for item in response.get("Items", []))
        if "LastEvaluatedKey" not in response:
            return
        kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def _strip_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_none(v) for v in value]
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


_THROTTLED = {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def dependency_error(exc: Exception, what: str) -> MnemoError:
    """A failed DynamoDB call as the caller sees it: `what` is busy (throttled) or unavailable, or, for a
    request DynamoDB refuses as malformed (`ValidationException`: an item past 400 KB, an attribute past
    a key limit), a permanent validation error: a retry would fail the same way, so "retry shortly"
    would be a lie (issue 26 item 4). The edge validates every known limit first; this is the backstop.
    The AWS error code goes to the operator's log, never into the caller's message."""
    code = error_code(exc) if isinstance(exc, ClientError) else type(exc).__name__
    logging.getLogger(__name__).warning("%s call failed", what, extra={"error_code": code})
    if code == "ValidationException":
        return ValidationFailed(f"request: {what} refused it as invalid (an item over DynamoDB's 400 KB limit, or a "
                                "value past a key limit); nothing was changed, and retrying will not help")
    if code in _THROTTLED:
        return DependencyError(f"{what} is busy (throttled); retry after a short wait")
    return DependencyError(f"{what} unavailable; retry shortly")

