"""docs/permissions.md and `services.permissions.REQUIRED` are the same table (issue 16, item 6)."""

from __future__ import annotations

import re
from pathlib import Path

from mnemo.domain.models import Permission, Principal, Status
from mnemo.errors import ForbiddenError
from mnemo.services.tenancy.permissions import REQUIRED, Operation, authorize, status_change

DOC = Path(__file__).resolve().parents[2] / "docs" / "permissions.md"


def documented() -> dict[str, str]:
    rows = {}
    for line in DOC.read_text().splitlines():
        match = re.match(r"\| ([^|`]+?) \| `([a-z:]+)` \|", line)
        if match:
            rows[match.group(1)] = match.group(2)
    return rows


def test_the_documented_table_is_the_enforced_table() -> None:
    assert documented() == {op.value: permission.value for op, permission in REQUIRED.items()}
    assert set(REQUIRED) == set(Operation)


def test_each_operation_needs_exactly_its_permission_and_admin_implies_all() -> None:
    for operation, needed in REQUIRED.items():
        authorize(Principal(tenant="t", key_prefix="k", permissions=frozenset({needed})), operation)  # positive control
        authorize(Principal(tenant="t", key_prefix="k", permissions=frozenset({Permission.ADMIN})), operation)
        others = frozenset(Permission) - {needed, Permission.ADMIN}
        try:
            authorize(Principal(tenant="t", key_prefix="k", permissions=others), operation)
        except ForbiddenError as exc:
            assert f"needs the {needed.value!r} scope" in exc.message and operation.value in exc.message
        else:
            raise AssertionError(f"{operation} allowed without {needed}")


def test_archiving_and_unarchiving_are_the_status_changes_that_need_more() -> None:
    assert status_change(Status.OPEN, Status.ARCHIVED) == Operation.ARCHIVE
    assert status_change(Status.COMPLETED, Status.ARCHIVED) == Operation.ARCHIVE
    assert status_change(Status.ARCHIVED, Status.OPEN) == Operation.UNARCHIVE
    assert status_change(Status.OPEN, Status.COMPLETED) is None
    assert status_change(Status.COMPLETED, Status.OPEN) is None
