"""Importing an export's recorded facts (docs/import-export.md): each is recorded again for the
importing user, in its group, with its sentence, times, status and retraction reason.

Ids follow the memories' rule: the exported uuid when no fact of the tenant has it, else one derived
from (tenant, user, exported uuid). A fact of this user found at either id was imported before and
is skipped, so a rerun records nothing twice. Statuses are written as exported, not recomputed: the
export carries the timeline as it was, so nothing here reconciles one (the next change of the
group does, as for any fact). Derived facts are never imported: enrichment derives them again from
the imported memories.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from mnemo.domain.graph import EntityMention, Fact, FactOrigin, FactStatus, recorded_fact
from mnemo.domain.models import Principal
from mnemo.domain.namespace import Namespace
from mnemo.errors import ConflictError, ForbiddenError
from mnemo.ports import FactStore
from mnemo.services.facts.upkeep import FactUpkeep
from mnemo.services.portability.exports import ExportedRecordedFact
from mnemo.services.portability.import_items import ImportFailure, ImportReport
from mnemo.services.tenancy.metering import Meter
from mnemo.services.tenancy.permissions import Operation, authorize

FACT_IMPORT_NAMESPACE = uuid.UUID("7c1f3a52-0b8e-4d6e-a1f4-93d2c5b8e017")
RECORDED_FACT = "recorded_fact"  # the key an import item holding a recorded fact has (and only it)
# What importing a fact with this status takes beyond recording it: the same scope as doing it by hand.
_STATUS_OPERATION = {FactStatus.RETRACTED: Operation.RETRACT_FACT, FactStatus.INVALIDATED: Operation.INVALIDATE_FACT}


def is_recorded_fact(item: Any) -> bool:
    return isinstance(item, dict) and RECORDED_FACT in item


def imported_fact_id(tenant: str, user_id: str, exported_uuid: str) -> str:
    return str(uuid.uuid5(FACT_IMPORT_NAMESPACE, "\x1f".join([tenant, user_id, exported_uuid])))


@dataclass(frozen=True)
class _Planned:
    index: int
    record: ExportedRecordedFact
    fact_uuid: str = ""


class FactImports:
    def __init__(self, facts: FactStore, *, upkeep: FactUpkeep | None, meter: Meter, clock: Callable[[], datetime]) -> None:
        self._facts = facts
        self._upkeep = upkeep
        self._meter = meter
        self._clock = clock

    def run(self, principal: Principal, items: Sequence[tuple[int, Any]], user_id: str, report: ImportReport) -> None:
        """Record each `(index, item)` again, or add to `report` why it is skipped or failed."""
        user = principal.user_for(user_id)
        planned = [p for index, item in items if (p := _plan(principal, index, item, report)) is not None]
        planned = self._assign(principal.tenant, user, planned, report)
        if not planned:
            return
        self._meter.charge(principal, Operation.RECORD_FACT, count=len(planned))
        now, restored = self._clock(), []
        for p in planned:
            fact = self._restore(principal, user, p, now)
            if fact is None:  # a concurrent import recorded it between the read and the write
                report.skipped.append(ImportFailure(index=p.index, reason=f"already imported (fact uuid {p.record.uuid})"))
                continue
            restored.append(fact)
            report.facts_imported.append(fact.uuid)
        if self._upkeep is not None:  # as the reindex does: what a search can return
            self._upkeep.index([f for f in restored if f.status != FactStatus.RETRACTED])

    def _assign(self, tenant: str, user_id: str, planned: list[_Planned], report: ImportReport) -> list[_Planned]:
        """Each fact's uuid here, skipping those a previous run imported (one batch read)."""
        derived = {p.index: imported_fact_id(tenant, user_id, p.record.uuid) for p in planned}
        own = {p.index: p.record.uuid for p in planned if _is_uuid(p.record.uuid)}
        stored = {f.uuid: f for f in self._facts.get_many(tenant, [*derived.values(), *own.values()])}
        kept, seen = [], set[str]()
        for p in planned:
            earlier = stored.get(own.get(p.index, ""))
            mine = earlier is not None and earlier.origin == FactOrigin.RECORDED and earlier.namespace.user_id == user_id
            if derived[p.index] in stored or mine:
                report.skipped.append(ImportFailure(index=p.index, reason=f"already imported (fact uuid {p.record.uuid})"))
            elif p.record.uuid in seen:
                report.skipped.append(ImportFailure(index=p.index, reason=f"fact uuid {p.record.uuid} appears earlier in this import"))
            else:  # the exported uuid when free in this tenant; else (another's fact holds it) a derived one
                free = p.index in own and own[p.index] not in stored
                kept.append(_Planned(p.index, p.record, own[p.index] if free else derived[p.index]))
            seen.add(p.record.uuid)
        return kept

    def _restore(self, principal: Principal, user_id: str, planned: _Planned, now: datetime) -> Fact | None:
        record, actor, tenant = planned.record, principal.key_prefix, principal.tenant
        namespace = Namespace(tenant=tenant, user_id=user_id, group_id=record.group_id)
        nodes = self._facts.resolve(namespace, [EntityMention(name=record.subject), EntityMention(name=record.object)], now)
        predicate = self._upkeep.predicates.normalize(record.predicate) if self._upkeep else record.predicate
        fact = recorded_fact(planned.fact_uuid, namespace, nodes[record.subject], predicate, nodes[record.object],
                             valid_at=record.valid_at, at=record.created_at, intent_meta=record.intent_meta)
        fact = fact.model_copy(update={"fact": record.fact, "invalid_at": record.invalid_at})
        try:
            stored = self._facts.record(fact, actor=actor, at=now, reason="imported")
        except ConflictError:
            return None
        if record.status == FactStatus.RETRACTED:
            return self._facts.retract(tenant, fact.uuid, actor=actor, reason=record.retracted_reason, at=now)
        if record.status == FactStatus.INVALIDATED:
            return self._facts.invalidate(tenant, fact.uuid, actor=actor, at=now, invalid_at=record.invalid_at)
        return stored


def _plan(principal: Principal, index: int, item: Any, report: ImportReport) -> _Planned | None:
    """The checked record of one item, or None after adding to `report` why it failed."""
    if set(item) != {RECORDED_FACT}:
        report.failed.append(ImportFailure(index=index, reason=f"{RECORDED_FACT}: an item holding one holds nothing else"))
        return None
    try:
        record = ExportedRecordedFact.model_validate(item[RECORDED_FACT])
        for operation in [Operation.RECORD_FACT, *[op for s, op in _STATUS_OPERATION.items() if s == record.status]]:
            authorize(principal, operation)  # checked before any write: a fact is imported whole or not at all
    except ValidationError as exc:
        first = exc.errors()[0]
        report.failed.append(ImportFailure(index=index, reason=f"{'.'.join(map(str, [RECORDED_FACT, *first['loc']]))}: {first['msg']}"))
        return None
    except ForbiddenError as exc:
        report.failed.append(ImportFailure(index=index, reason=f"{RECORDED_FACT}.status: {exc.message}"))
        return None
    return _Planned(index, record)


def _is_uuid(value: str) -> bool:
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False
