"""REST for erasing a whole user (GDPR) as an asynchronous job, and reading any job (erasure, import,
mem0 import, deduplication: one resource, `GET /v1/jobs/{job_id}`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Response

from mnemo.domain.jobs import JobReceipt
from mnemo.domain.models import NamespaceId, Principal
from mnemo.errors import ValidationFailed
from mnemo.services.erasure.memories import ErasureReceipt
from mnemo.services.jobs.service import JOB_PAGE, JobPage
from mnemo.surfaces.facade import ServiceFacade
from mnemo.surfaces.rest.api import principal, services
from mnemo.surfaces.rest.openapi import ERROR_RESPONSES

router = APIRouter(prefix="/v1", tags=["erasure"], responses=ERROR_RESPONSES)
Caller = Annotated[Principal, Depends(principal)]
Services = Annotated[ServiceFacade, Depends(services)]


@router.delete("/users/{user_id}", status_code=202, response_model=ErasureReceipt)
def erase_user(
    user_id: Annotated[NamespaceId, Path(description="Whose memories (every agent, group, status and author).")],
    caller: Caller, container: Services, response: Response,
    hard: Annotated[bool | None, Query(description="Must be true: the erasure is permanent (GDPR).")] = None,
) -> ErasureReceipt:
    """Erase every memory of `user_id` in the caller's tenant, and all derived from them, as a job:
    202 with `Location: /v1/jobs/{job_id}`; the receipt there fills in as the job runs."""
    if hard is not True:
        raise ValidationFailed("hard: must be true; erasing a user's memories is permanent and there is no soft form "
                               "(archive memories one by one with DELETE /v1/memories/{id})")
    receipt = container.erasure_jobs.request_user(caller, user_id)
    response.headers["location"] = f"/v1/jobs/{receipt.job_id}"
    return receipt


@router.get("/jobs/{job_id}", response_model=JobReceipt | ErasureReceipt)
def job(job_id: Annotated[str, Path(max_length=64)], caller: Caller, container: Services,
        response: Response) -> JobReceipt | ErasureReceipt:
    """A job of the caller's tenant (another tenant's id is 404): an erasure receipt (`kind: user`), or
    an import / mem0_import / deduplicate job with its status, progress (done/total) and summary."""
    response.headers["cache-control"] = "no-store"
    return container.jobs.get(caller, job_id)


@router.get("/jobs", response_model=JobPage)
def jobs(caller: Caller, container: Services, response: Response,
         limit: Annotated[int, Query(ge=1, le=100)] = JOB_PAGE,
         cursor: Annotated[str | None, Query(max_length=128, description="next_cursor of the previous page.")] = None) -> JobPage:
    """The caller's tenant's jobs, newest first: import, mem0 import and deduplication jobs to a key with
    memory:read (a user-bound key: its user's), user erasures to an admin key. A page reads `limit` jobs
    and may show fewer (those the key may not read are left out); go on while `next_cursor` is set."""
    response.headers["cache-control"] = "no-store"
    return container.jobs.listing(caller, limit=limit, cursor=cursor)
