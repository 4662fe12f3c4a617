"""Keys and item mapping of the fact graph on the memories table. Layout: docs/table-design.md.

Everything a lookup by name or by entity starts from is keyed by the graph namespace (tenant, user,
group); a fact is addressed by tenant and uuid (a caller retracting an edge knows only its uuid),
and carries its namespace as attributes that every read checks.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from mnemo.domain.graph import Adjacency, Entity, Fact, FactAudit, FactStatus, canonical_key
from mnemo.domain.namespace import Namespace

FACT_SK = "FACT"
AUDIT_PREFIX = "A#"
NODE_SK = "NODE"
NAME_SK = "NAME"
EDGE_PREFIX = "E#"
PROVENANCE_PREFIX = "P#"  # under the memory's partition: "this memory supports that fact"
DERIVED_PREFIX = "D#"  # under the memory's partition: "this memory once produced that fact" (kept until erasure)
NAMED_PREFIX = "G#"  # under the memory's partition: "an older version named this entity" (kept until erasure)
RECORDED_SUFFIX = "#RFACT"  # a user's recorded facts: `T#<tenant>#U#<user>#RFACT` / `<group>#<uuid>`


def graph_pk(namespace: Namespace) -> str:
    return f"T#{namespace.tenant}#U#{namespace.user_id}#G#{namespace.group_id}"


def fact_pk(tenant: str, fact_uuid: str) -> str:
    return f"T#{tenant}#FACT#{fact_uuid}"


def recorded_pk(tenant: str, user_id: str) -> str:
    """The partition listing a user's recorded facts (user ids hold no `#`, so it meets no graph key)."""
    return f"T#{tenant}#U#{user_id}{RECORDED_SUFFIX}"


def recorded_item(fact: Fact) -> dict[str, Any]:
    """The listing item of a recorded fact: its key says whose it is, its body names the fact."""
    ns = fact.namespace
    return {"pk": recorded_pk(ns.tenant, ns.user_id), "sk": f"{ns.group_id}#{fact.uuid}", "fact_uuid": fact.uuid}


def entity_pk(namespace: Namespace, entity_id: str) -> str:
    return f"{graph_pk(namespace)}#ENT#{entity_id}"


def name_pk(namespace: Namespace, key: str) -> str:
    return f"{graph_pk(namespace)}#NAME#{key}"


def audit_sk(revision: int) -> str:
    return f"{AUDIT_PREFIX}{revision:010d}"


def edge_prefix(status: str, direction: str, predicate: str | None = None) -> str:
    prefix = f"{EDGE_PREFIX}{status}#{direction}#"
    return prefix if predicate is None else f"{prefix}{predicate.replace('#', ' ')}#"


def fact_to_item(fact: Fact) -> dict[str, Any]:
    """The fact's JSON form plus its keys; `intent_meta` as a JSON string (DynamoDB has no float)."""
    body = fact.model_dump(mode="json", exclude={"intent_meta"})
    item: dict[str, Any] = json.loads(json.dumps(body), parse_float=Decimal)
    if fact.intent_meta is not None:
        item["intent_meta_json"] = json.dumps(fact.intent_meta, separators=(",", ":"), sort_keys=True)
    item["pk"], item["sk"] = fact_pk(fact.namespace.tenant, fact.uuid), FACT_SK
    return _strip_none(item)


def item_to_fact(item: dict[str, Any]) -> Fact:
    data = {k: v for k, v in item.items() if k not in ("pk", "sk", "intent_meta_json")}
    if "intent_meta_json" in item:
        data["intent_meta"] = json.loads(item["intent_meta_json"])
    return Fact.model_validate(data)


def edge_items(fact: Fact) -> list[dict[str, Any]]:
    """The fact's two adjacency items: under its subject (`out`) and under its object (`in`)."""
    ns = fact.namespace
    common = {"fact_uuid": fact.uuid, "predicate": fact.predicate, "status": fact.status.value}
    if fact.polarity == "negative":  # walks skip it (services/facts/traversal.py); positive edges stay as they were
        common["polarity"] = fact.polarity
    return [
        {"pk": entity_pk(ns, end.id), "sk": edge_prefix(fact.status, direction, fact.predicate) + fact.uuid,
         "entity_id": end.id, "direction": direction, "other_id": other.id, **common}
        for end, other, direction in ((fact.subject, fact.object, "out"), (fact.object, fact.subject, "in"))
    ]


def item_to_adjacency(item: dict[str, Any]) -> Adjacency:
    return Adjacency(
        entity_id=item["entity_id"], fact_uuid=item["fact_uuid"], direction=item["direction"],
        predicate=item["predicate"], other_id=item["other_id"], status=FactStatus(item["status"]),
        polarity=item.get("polarity", "positive"),
    )


def audit_to_item(tenant: str, audit: FactAudit) -> dict[str, Any]:
    item = _strip_none(audit.model_dump(mode="json"))
    item["pk"], item["sk"] = fact_pk(tenant, audit.fact_uuid), audit_sk(audit.revision)
    return item


def item_to_audit(item: dict[str, Any]) -> FactAudit:
    return FactAudit.model_validate({k: v for k, v in item.items() if k not in ("pk", "sk")})


def item_to_entity(item: dict[str, Any]) -> Entity:
    key = item["key"]
    # One spelling per canonical name (two resolvers racing for one name may both have added theirs).
    by_key = {canonical_key(a): a for a in sorted(item.get("aliases", set()), reverse=True)}
    aliases = sorted(a for k, a in by_key.items() if k != key)
    namespace = Namespace(tenant=item["tenant"], user_id=item["user_id"], group_id=item["group_id"])
    return Entity(id=item["entity_id"], namespace=namespace, name=item["name"], key=key,
                  type=item.get("type", "other"), aliases=aliases, created_at=item["created_at"])


def _strip_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_none(v) for v in value]
    return value
