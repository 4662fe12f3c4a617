"""REST import and export: `POST /v1/import` takes what `import_memories` (/mcp/r3) takes, and
`GET /v1/export` pages out a user's memories in the shape the import reads back (docs/import-export.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from mnemo.domain.jobs import JobReceipt
from mnemo.domain.models import NamespaceId, Principal
from mnemo.services.jobs.service import SYNC_IMPORT_LIMIT
from mnemo.services.portability.exports import ExportPage, ndjson
from mnemo.services.portability.imports import ImportReport, items_of
from mnemo.surfaces.facade import ServiceFacade
from mnemo.surfaces.rest.api import principal, services
from mnemo.surfaces.rest.openapi import ERROR_RESPONSES
from mnemo.surfaces.views import user_scope

router = APIRouter(prefix="/v1", tags=["import and export"], responses=ERROR_RESPONSES)
Caller = Annotated[Principal, Depends(principal)]
Services = Annotated[ServiceFacade, Depends(services)]
NDJSON = "application/x-ndjson"
NEXT_CURSOR_HEADER = "x-next-cursor"


class ImportRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    data: list[Any] | dict[str, Any] = Field(description=(
        f"An array of items (more than {SYNC_IMPORT_LIMIT}: imported by a job, answered 202), or an object holding it under `results` or `memories` (mem0's export; "
        "`memories` is also this API's export page, whose `recorded_facts` are recorded again). Each item: `memory` or "
        "`content`, optional `id` (source id: a rerun skips it), `metadata`, `captured_at`, `agent_id`, `group_id`, "
        "`author`, `status`; or `{\"recorded_fact\": ...}` (an NDJSON export's line)."))
    user_id: NamespaceId | None = Field(default=None, description=(
        "Whose memories the items become: default `default`; a key bound to a user: that user (naming another is 403)."))
    # strict JSON types, as every REST body (rest/api.py): "yes" or 1 is not true
    skip_duplicates: StrictBool = Field(default=True, description=(
        "Items without an id: skip those the user already has (same text, or near it). A key without memory:read imports "
        "them without comparing (the answer's duplicate_check says so); asking it for true is 403."))


class ImportAnswer(ImportReport):
    scope: dict[str, str] = Field(description=(
        "The effective namespace written: tenant and user (each item's agent_id and group_id say the rest)."))


class StartedJob(JobReceipt):
    scope: dict[str, str] = Field(description="The effective namespace the job writes: tenant and user.")


@router.post("/import", response_model=ImportAnswer, responses={202: {"model": StartedJob, "description": (
    f"More than {SYNC_IMPORT_LIMIT} items: a job, read at the Location (GET /v1/jobs/{{job_id}}).")}})
def import_memories(body: ImportRequest, caller: Caller, container: Services) -> Any:
    """Import memories: each item is imported, skipped or failed, with the reason; the answer lists each.
    More than the synchronous limit: 202 with the job (its summary counts them, with the first reasons)."""
    asked = body.skip_duplicates if "skip_duplicates" in body.model_fields_set else None  # None: the default
    result = container.jobs.import_items(caller, items_of(body.data), user_id=body.user_id, skip_duplicates=asked)
    if isinstance(result, JobReceipt):
        started = StartedJob(**result.model_dump(), scope=user_scope(caller.tenant, result.user_id))
        return JSONResponse(started.model_dump(mode="json"), status_code=202,
                            headers={"location": f"/v1/jobs/{result.job_id}", "cache-control": "no-store"})
    return ImportAnswer(**result.model_dump(), scope=user_scope(caller.tenant, caller.user_for(body.user_id)))


@router.get("/export", response_model=ExportPage, responses={200: {"content": {NDJSON: {}}}})
def export_memories(
    caller: Caller, container: Services, response: Response,
    user_id: Annotated[NamespaceId | None, Query(description=(
        "Whose memories (every status, author, agent and group): default `default`; a key bound to a user: that user."))] = None,
    format: Annotated[Literal["json", "ndjson"], Query(description=(
        "json: one page object; ndjson: one memory per line, then one {\"recorded_fact\": ...} line per recorded "
        "fact, the next cursor in the X-Next-Cursor header."))] = "json",
    limit: Annotated[int, Query(ge=1, le=100)] = 100,
    cursor: Annotated[str | None, Query(max_length=512, description="next_cursor of the previous page.")] = None,
) -> Any:
    """One page of a user's memories with content, metadata, namespace, status and timestamps (never embeddings);
    after the last memories, the facts recorded for the user (`recorded_facts`), `limit` a page."""
    page = container.exports.page(caller, user_id, limit=limit, cursor=cursor)
    headers = {"cache-control": "no-store", **({NEXT_CURSOR_HEADER: page.next_cursor} if page.next_cursor else {})}
    if format == "ndjson":
        return PlainTextResponse(ndjson(page), media_type=NDJSON, headers=headers)
    response.headers.update(headers)
    return page
