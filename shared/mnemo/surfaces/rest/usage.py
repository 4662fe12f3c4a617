"""`GET /v1/usage`: the caller's tenant's counters this month, its limits and status; and this
tenant's failed enrichments (`GET /v1/status/failed`) with their retry (`POST /v1/status/retry`).

Any valid key may read its own tenant's usage (it is how a client learns why it was refused and
when the month resets); tenants themselves are managed by the operator's CLI only.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from mnemo.domain.models import Principal
from mnemo.domain.tenancy import Usage
from mnemo.services.enrichment.status import FAILED_PAGE, FailedMemory, Retried
from mnemo.surfaces.facade import ServiceFacade
from mnemo.surfaces.rest.api import principal, services
from mnemo.surfaces.rest.openapi import ERROR_RESPONSES

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)


@router.get("/usage", response_model=Usage)
def usage(caller: Annotated[Principal, Depends(principal)], container: Annotated[ServiceFacade, Depends(services)]) -> Usage:
    return container.meter.usage(caller.tenant)


@router.get("/status/failed", response_model=list[FailedMemory])
def failed_enrichments(caller: Annotated[Principal, Depends(principal)], container: Annotated[ServiceFacade, Depends(services)],
                       response: Response, limit: Annotated[int, Query(ge=1, le=FAILED_PAGE)] = FAILED_PAGE) -> list[FailedMemory]:
    """This tenant's memories whose enrichment failed after every retry, with the reason, most recently
    changed first (a user-bound key: its user's). Needs memory:read."""
    response.headers["cache-control"] = "no-store"
    return container.status.failures(caller, limit)


@router.post("/status/retry", response_model=Retried)
def retry_failed_enrichments(caller: Annotated[Principal, Depends(principal)], container: Annotated[ServiceFacade, Depends(services)],
                             limit: Annotated[int, Query(ge=1, le=FAILED_PAGE)] = FAILED_PAGE) -> Retried:
    """Queue this tenant's failed memories again (at most `limit`, newest change first; admin keys).
    The dead-letter queue holds every tenant's messages: redriving it stays the operator's CLI command."""
    return container.status.retry_failed(caller, limit)
