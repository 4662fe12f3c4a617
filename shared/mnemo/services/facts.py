"""Record, retract, invalidate and read facts: the fact graph as callers see it.

Recorded facts are their own aggregate: no memory's enrichment touches them. Derived facts are
written by the enrichment worker through the same `FactStore`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import datetime

from mnemo.domain.fact_commands import FactScope, RecordFactCommand
from mnemo.domain.graph import EntityMention, Fact, FactAudit, FactStatus, recorded_fact
from mnemo.domain.models import Permission, Principal, utcnow
from mnemo.domain.namespace import Namespace
from mnemo.errors import NotFoundError
from mnemo.ports import FactStore
from mnemo.services.memories import require


class FactService:
    def __init__(
        self,
        facts: FactStore,
        *,
        clock: Callable[[], datetime] = utcnow,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self._facts = facts
        self._clock = clock
        self._new_id = new_id

    # -- changes -------------------------------------------------------------------------
    def record(self, principal: Principal, command: RecordFactCommand) -> Fact:
        require(principal, Permission.WRITE)
        namespace = _namespace(principal, command)
        now = self._clock()
        nodes = self._facts.resolve(namespace, [EntityMention(name=command.subject), EntityMention(name=command.object)], now)
        fact = recorded_fact(
            self._new_id(), namespace, nodes[command.subject], command.predicate, nodes[command.object],
            valid_at=command.valid_at, at=now, intent_meta=command.intent_meta,
        )
        return self._facts.record(fact, actor=principal.key_prefix)

    def retract(self, principal: Principal, fact_uuid: str, reason: str | None = None) -> Fact:
        """Soft delete: the fact leaves every active read; its audit row says who, when and why."""
        require(principal, Permission.WRITE)
        self.get(principal, fact_uuid)
        return self._facts.retract(principal.tenant, fact_uuid, actor=principal.key_prefix, reason=reason, at=self._clock())

    def invalidate(
        self, principal: Principal, fact_uuid: str, *, invalid_at: datetime | None = None, invalidated_by: str | None = None
    ) -> Fact:
        """Stop believing a fact that was true until `invalid_at` (default: now)."""
        require(principal, Permission.WRITE)
        self.get(principal, fact_uuid)
        now = self._clock()
        return self._facts.invalidate(principal.tenant, fact_uuid, actor=principal.key_prefix, at=now,
                                      invalid_at=invalid_at or now, invalidated_by=invalidated_by)

    # -- reads ---------------------------------------------------------------------------
    def get(self, principal: Principal, fact_uuid: str) -> Fact:
        require(principal, Permission.READ)
        fact = self._facts.get(principal.tenant, fact_uuid)
        if fact is None:
            raise NotFoundError(f"fact {fact_uuid} not found")
        return fact

    def history(self, principal: Principal, fact_uuid: str) -> list[FactAudit]:
        self.get(principal, fact_uuid)
        return self._facts.audit(principal.tenant, fact_uuid)

    def about(
        self, principal: Principal, name: str, scope: FactScope | None = None,
        statuses: Sequence[FactStatus] = (FactStatus.ACTIVE,), limit: int = 100,
    ) -> list[Fact]:
        """The facts of one namespace whose subject or object is the entity `name` resolves to."""
        require(principal, Permission.READ)
        namespace = _namespace(principal, scope or FactScope())
        entity = self._facts.find_entity(namespace, name)
        if entity is None:
            return []
        return self._facts.for_entity(namespace, entity.id, statuses=statuses, limit=limit)


def _namespace(principal: Principal, scope: FactScope) -> Namespace:
    """The tenant comes from the key, never from arguments."""
    return Namespace(tenant=principal.tenant, user_id=scope.user_id, group_id=scope.group_id)
