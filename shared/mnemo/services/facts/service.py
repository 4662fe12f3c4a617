"""Record, retract, invalidate and read facts: the fact graph as callers see it.

Recorded facts are their own aggregate: no memory's enrichment touches them. Derived facts are
written by the enrichment worker through the same `FactStore`. After every change, `FactUpkeep`
recomputes the timelines it touched (docs/facts.md) and indexes new facts.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import NamedTuple

from mnemo.domain.fact_commands import FactScope, RecordFactCommand
from mnemo.domain.graph import Entity, EntityMention, Fact, FactAudit, FactStatus, fact_sentence, recorded_fact
from mnemo.domain.intents import is_annotated
from mnemo.domain.models import Principal
from mnemo.domain.namespace import Namespace
from mnemo.domain.timestamps import utcnow
from mnemo.errors import NotFoundError, PaymentRequiredError, QuotaExceededError, TenantSuspendedError
from mnemo.ports import FactStore, IntentAnnotator
from mnemo.services.enrichment.intents import annotate_edge
from mnemo.services.erasure.user_fence import WriteFence
from mnemo.services.facts.upkeep import FactUpkeep
from mnemo.services.tenancy.metering import Meter
from mnemo.services.tenancy.permissions import Operation, authorize


class Recorded(NamedTuple):
    edge: Fact
    invalidated: list[Fact]  # the facts this one retired


class FactService:
    def __init__(
        self,
        facts: FactStore,
        *,
        upkeep: FactUpkeep | None = None,
        annotator: IntentAnnotator | None = None,
        clock: Callable[[], datetime] = utcnow,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        meter: Meter | None = None,
        fence: WriteFence | None = None,
    ) -> None:
        self._facts = facts
        self._fence = fence  # a user's erasure against facts recorded in flight (services/erasure/user_fence.py)
        self._meter = meter or Meter()
        self._upkeep = upkeep
        self._annotator = annotator
        self._clock = clock
        self._new_id = new_id

    # -- changes -------------------------------------------------------------------------
    def record(self, principal: Principal, command: RecordFactCommand) -> Fact:
        return self.record_triple(principal, command).edge

    def record_triple(self, principal: Principal, command: RecordFactCommand, *, extract_intent: bool = False) -> Recorded:
        """Store the triple (predicate through the synonym table), retire what it replaces, index it."""
        authorize(principal, Operation.RECORD_FACT)
        namespace = _namespace(principal, command)
        # Refused (before any charge or write) while the user's erasure runs; checked again once all below landed.
        admission = self._fence.admit(principal.tenant, namespace.user_id) if self._fence is not None else None
        self._meter.charge(principal, Operation.RECORD_FACT)
        now = self._clock()
        nodes = self._facts.resolve(namespace, [EntityMention(name=command.subject), EntityMention(name=command.object)], now)
        predicate = self._upkeep.predicates.normalize(command.predicate) if self._upkeep else command.predicate
        sentence = fact_sentence(nodes[command.subject].name, command.predicate, nodes[command.object].name)
        fact_uuid, intent, refused = self._new_id(), command.intent_meta, None
        if extract_intent and intent is None and self._annotator is not None:
            intent = annotate_edge(self._annotator, sentence, predicate)
            # One credit per labelled edge, counted before the edge is stored: past the plan's limit
            # the edge is still stored, without intent_meta, and the refusal reported (docs/tenancy.md).
            try:
                if is_annotated(intent):
                    self._meter.count_intents(principal.tenant, [fact_uuid], capped=True)
            except (QuotaExceededError, PaymentRequiredError, TenantSuspendedError) as exc:
                intent, refused = None, exc
        fact = recorded_fact(
            fact_uuid, namespace, nodes[command.subject], predicate, nodes[command.object],
            valid_at=command.valid_at, at=now, intent_meta=intent,
        ).model_copy(update={"fact": sentence})
        stored = self._facts.record(fact, actor=principal.key_prefix)
        recorded = Recorded(stored, [])
        if self._upkeep is not None:
            self._upkeep.index([stored])
            retired = self._upkeep.reconcile(self._upkeep.groups([stored]), actor=principal.key_prefix, at=now)
            edge = self._facts.get(principal.tenant, stored.uuid) or stored
            recorded = Recorded(edge, [f for f in retired if f.uuid != stored.uuid])
        if admission is not None and self._fence is not None:  # the erasure came first: the fact goes, and 409
            self._fence.settle_facts(admission, [stored.uuid])
        if refused is not None:
            refused.message = f"{refused.message}; edge {stored.uuid} was stored without intent_meta"
            raise refused
        return recorded

    def retract(self, principal: Principal, fact_uuid: str, reason: str | None = None) -> Fact:
        """Soft delete (admin keys): the fact leaves every active read; its audit row says who, when
        and why; a fact it had retired comes back unless another one retires it."""
        authorize(principal, Operation.RETRACT_FACT)
        self._fact(principal, fact_uuid)
        now = self._clock()
        retracted = self._facts.retract(principal.tenant, fact_uuid, actor=principal.key_prefix, reason=reason, at=now)
        if self._upkeep is not None:
            self._upkeep.reconcile(self._upkeep.groups([retracted]), actor=principal.key_prefix, at=now)
        return retracted

    def invalidate(
        self, principal: Principal, fact_uuid: str, *, invalid_at: datetime | None = None, invalidated_by: str | None = None
    ) -> Fact:
        """Stop believing a fact that was true until `invalid_at` (default: now)."""
        authorize(principal, Operation.INVALIDATE_FACT)
        self._fact(principal, fact_uuid)
        now = self._clock()
        return self._facts.invalidate(principal.tenant, fact_uuid, actor=principal.key_prefix, at=now,
                                      invalid_at=invalid_at or now, invalidated_by=invalidated_by)

    # -- reads ---------------------------------------------------------------------------
    def get(self, principal: Principal, fact_uuid: str) -> Fact:
        authorize(principal, Operation.READ_FACTS)
        self._meter.charge(principal, Operation.READ_FACTS)
        return self._fact(principal, fact_uuid)

    def _fact(self, principal: Principal, fact_uuid: str) -> Fact:
        """The caller's tenant's fact, for an operation whose permission was already checked."""
        fact = self._facts.get(principal.tenant, fact_uuid)
        if fact is None or not principal.sees(fact.namespace.user_id):
            raise NotFoundError(f"fact {fact_uuid} not found", subject="fact", ident=fact_uuid)
        return fact

    def history(self, principal: Principal, fact_uuid: str) -> list[FactAudit]:
        self.get(principal, fact_uuid)
        return self._facts.audit(principal.tenant, fact_uuid)

    def about(
        self, principal: Principal, name: str, scope: FactScope | None = None,
        statuses: Sequence[FactStatus] = (FactStatus.ACTIVE,), limit: int = 100,
    ) -> list[Fact]:
        """The facts of one namespace whose subject or object is the entity `name` resolves to."""
        authorize(principal, Operation.READ_FACTS)
        self._meter.charge(principal, Operation.READ_FACTS)
        namespace = _namespace(principal, scope or FactScope())
        entity = self._facts.find_entity(namespace, name)
        if entity is None:
            return []
        return self._facts.for_entity(namespace, entity.id, statuses=statuses, limit=limit)

    def entity(self, principal: Principal, entity_id: str, scope: FactScope | None = None,
               limit: int = 100) -> tuple[Entity, list[Fact]]:
        """A node of one namespace and its active edges."""
        authorize(principal, Operation.READ_FACTS)
        self._meter.charge(principal, Operation.READ_FACTS)
        namespace = _namespace(principal, scope or FactScope())
        found = self._facts.entities(namespace, [entity_id])
        if not found:
            raise NotFoundError(f"entity {entity_id} not found", subject="entity", ident=entity_id)
        return found[0], self._facts.for_entity(namespace, entity_id, limit=limit)


def _namespace(principal: Principal, scope: FactScope) -> Namespace:
    """The tenant comes from the key, never from arguments."""
    return Namespace(tenant=principal.tenant, user_id=principal.user_for(scope.user_id),
                     group_id=scope.group_id)
