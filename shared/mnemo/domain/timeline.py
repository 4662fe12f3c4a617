"""Event-time validity of the facts of one (subject, predicate): a pure function.

The facts of a group are ordered by event time (`valid_at`, then `created_at`: at the same moment the
one learned later wins). For a single-valued predicate each positive fact is valid until the next
positive fact in that order whose object differs; that fact retired it. Whatever the cardinality, a
negation ("no longer works at Acme", polarity negative) retires the positive fact of the same object
before it, and a later positive fact of that object retires the negation. The last value has no successor and is active. Because the whole group is
recomputed, an older fact arriving late is stored already invalid, a fact slotted between two others
re-points the earlier one, and retracting the fact that retired another brings the other back.

Outside the timeline (never moved by it): retracted facts, and facts ended by something other than
a successor (`invalidated_by` unset: invalidated by a caller, or no memory says them any more).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from mnemo.domain.graph import Fact, FactStatus


class Validity(NamedTuple):
    """What a fact's event-time fields must be: active, or invalid from `invalid_at` because of `invalidated_by`."""

    status: FactStatus
    invalid_at: datetime | None
    invalidated_by: str | None


ACTIVE = Validity(FactStatus.ACTIVE, None, None)


def on_timeline(fact: Fact) -> bool:
    if fact.status == FactStatus.RETRACTED:
        return False
    return fact.status == FactStatus.ACTIVE or fact.invalidated_by is not None


def _moment(fact: Fact) -> tuple[datetime, datetime, str]:
    return (fact.valid_at or fact.created_at, fact.created_at, fact.uuid)


def _retires(later: Fact, fact: Fact, single_valued: bool) -> bool:
    if later.object.id == fact.object.id:
        return later.polarity != fact.polarity  # a negation retires the positive, a re-assertion the negation
    return single_valued and later.polarity == fact.polarity == "positive"


def timeline(facts: Sequence[Fact], *, single_valued: bool = True) -> dict[str, Validity]:
    """The validity every fact of one group should have (facts off the timeline are left out)."""
    ordered = sorted((f for f in facts if on_timeline(f)), key=_moment)
    wanted: dict[str, Validity] = {}
    for i, fact in enumerate(ordered):
        successor = next((g for g in ordered[i + 1:] if _retires(g, fact, single_valued)), None)
        if successor is None:
            wanted[fact.uuid] = ACTIVE
        else:
            wanted[fact.uuid] = Validity(FactStatus.INVALIDATED, successor.valid_at or successor.created_at, successor.uuid)
    return wanted


def current(fact: Fact) -> Validity:
    return Validity(fact.status, fact.invalid_at, fact.invalidated_by)


def changes(facts: Sequence[Fact], *, single_valued: bool = True) -> dict[str, Validity]:
    """Only the facts whose stored validity differs from what the timeline says."""
    by_id = {f.uuid: f for f in facts}
    return {uuid: v for uuid, v in timeline(facts, single_valued=single_valued).items() if current(by_id[uuid]) != v}


def valid_at_moment(fact: Fact, as_of: datetime) -> bool:
    """True in the world at `as_of` (event time): `valid_at <= as_of < invalid_at`; retracted facts
    and facts no memory says any more never are."""
    if fact.status == FactStatus.RETRACTED or fact.unsupported:
        return False
    start = fact.valid_at or fact.created_at
    return start <= as_of and (fact.invalid_at is None or as_of < fact.invalid_at)
