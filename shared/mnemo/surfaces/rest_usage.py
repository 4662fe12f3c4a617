"""`GET /v1/usage`: the caller's tenant's counters this month, its limits and status.

Any valid key may read its own tenant's usage (it is how a client learns why it was refused and
when the month resets); tenants themselves are managed by the operator's CLI only.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from mnemo.domain.models import Principal
from mnemo.domain.tenancy import Usage
from mnemo.surfaces.openapi import ERROR_RESPONSES
from mnemo.surfaces.rest import Container, principal, services

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)


@router.get("/usage", response_model=Usage)
def usage(caller: Annotated[Principal, Depends(principal)], container: Annotated[Container, Depends(services)]) -> Usage:
    return container.meter.usage(caller.tenant)
