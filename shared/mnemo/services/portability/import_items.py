"""Reading import items: the shapes an import accepts, each item checked into a planned capture or a
reason it is skipped or failed (the report's entries). Nothing here touches storage.

Each item needs a non-empty `memory` or `content`; `metadata` (object), `id` (the source id),
`captured_at` (else `created_at`), `agent_id`, `group_id`, `conversation_id`, `author` (`user`, the default, or `agent`)
and `status` (`open`, the default, `completed` or `archived`) are optional, so an export imports back
as the memories it held. An export's `history`, `facts` and `provenance` are read by no one: the
history of an imported memory starts at its import, and derived facts are rebuilt by enrichment.
An item `{"recorded_fact": ...}` (an export's recorded facts) is read by `services/portability/fact_imports.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from mnemo.domain.commands import CaptureCommand
from mnemo.domain.limits import check_metadata, check_unicode
from mnemo.domain.models import Principal, Status
from mnemo.errors import BoundKeyError, ForbiddenError, ValidationFailed
from mnemo.services.tenancy.permissions import authorize, status_change

# A source id is kept on the memory and in `metadata.source_id`, and keys the derived id: bounded so a
# memory item always fits DynamoDB's 400 KB and its metadata the 16 KB limit (issue 26 item 4).
MAX_SOURCE_ID_CHARS = 256


class ImportFailure(BaseModel):
    index: int
    reason: str


class ImportReport(BaseModel):
    imported: list[str] = Field(default_factory=list)  # the new memory ids
    facts_imported: list[str] = Field(default_factory=list)  # the recorded facts' uuids here (an export's recorded_facts)
    skipped: list[ImportFailure] = Field(default_factory=list)
    failed: list[ImportFailure] = Field(default_factory=list)
    duplicate_check: str | None = Field(default=None, description=(
        "Set when items without a source id were not compared with stored memories, and why (a key without memory:read, "
        "or the tenant's monthly retrieval limit reached)."))


@dataclass(frozen=True)
class PlannedItem:
    """An item that passed every check: what to capture, with which status, from which source."""

    index: int
    command: CaptureCommand
    status: Status
    source_id: str | None
    memory_id: str = ""

    def assigned(self, memory_id: str, *, metadata: dict[str, Any] | None = None) -> PlannedItem:
        command = self.command if metadata is None else self.command.model_copy(update={"metadata": metadata})
        return replace(self, memory_id=memory_id, command=command)


def items_of(data: Any) -> list[Any]:
    """The items, memories first; an export page's `recorded_facts` follow, each as the item
    `{"recorded_fact": ...}` (the form an NDJSON export writes them in)."""
    if isinstance(data, dict):
        facts = data.get("recorded_facts", [])
        if not isinstance(facts, list):
            raise ValidationFailed("recorded_facts: must be an array (an export page's recorded_facts)")
        recorded = [{"recorded_fact": fact} for fact in facts]
        for key in ("results", "memories"):
            if isinstance(data.get(key), list):
                return [*data[key], *recorded]
        if "recorded_facts" in data:
            return recorded
        raise ValidationFailed("data: an object must hold the items under 'results', 'memories' or 'recorded_facts'")
    if isinstance(data, list):
        return data
    raise ValidationFailed("data: must be an array of items, or an object with 'results' or 'memories'")


def plan_item(principal: Principal, index: int, item: Any, user_id: str, report: ImportReport) -> PlannedItem | None:
    """The planned capture of one item, or None after adding to `report` why it is skipped or failed."""

    def fail(reason: str) -> PlannedItem | None:
        report.failed.append(ImportFailure(index=index, reason=reason))
        return None

    if not isinstance(item, dict):
        return fail("not an object")
    try:  # an export's item names its user: the call's user_id decides, but a bound key may name no other
        principal.confine(None if item.get("user_id") is None else str(item["user_id"]))
    except BoundKeyError as exc:
        return fail(exc.message)
    text = item.get("memory") or item.get("content")
    if not isinstance(text, str) or not text.strip():
        report.skipped.append(ImportFailure(index=index, reason="no memory or content text"))
        return None
    metadata = item.get("metadata") or {}
    if not isinstance(metadata, dict):
        return fail("metadata: must be an object")
    status = item.get("status", Status.OPEN.value)
    if status not in {s.value for s in Status}:
        return fail(f"status: must be one of open, completed, archived, not {status!r}")
    if item.get("author", "user") not in ("user", "agent"):
        return fail("author: must be user or agent")
    try:
        command = CaptureCommand(raw=text, user_id=user_id, as_user=item.get("author", "user") == "user",
                                 metadata=metadata, captured_at=item.get("captured_at") or item.get("created_at"),
                                 agent_id=item.get("agent_id"), group_id=item.get("group_id") or "default",
                                 conversation_id=item.get("conversation_id"))
        extra = status_change(Status.OPEN, Status(status))
        if extra is not None:  # checked before any write: an item is imported whole or not at all
            authorize(principal, extra)
    except ValidationError as exc:
        first = exc.errors()[0]
        return fail(f"{'.'.join(map(str, first['loc']))}: {first['msg']}")
    except ForbiddenError as exc:
        return fail(f"status: {exc.message}")
    source_id, problem = _source_id(item.get("id"))
    if problem is not None:
        return fail(problem)
    if source_id is not None:
        # Checked whether or not the id ends up in the metadata (that depends on the tenant's data), so
        # an item is accepted or refused for what it holds, never for where it is imported.
        try:
            check_metadata({**command.metadata, "source_id": source_id})
        except ValueError as exc:
            return fail(f"metadata: {exc} with the source id added as metadata.source_id")
    return PlannedItem(index=index, command=command, status=Status(status), source_id=source_id)


def _source_id(value: Any) -> tuple[str | None, str | None]:
    """The item's source id as text, or why it is refused: every id is checked before anything is
    written (a 250 KB id once reached DynamoDB and failed there as a 503 "retry shortly")."""
    if value is None:
        return None, None
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None, "id: must be a string or an integer (the item's id in its source)"
    text = str(value)
    try:
        check_unicode(text)
    except ValueError as exc:
        return None, f"id: {exc}"
    if not text.strip():
        return None, "id: must not be empty; omit it for an item without a source id"
    if len(text) > MAX_SOURCE_ID_CHARS:
        return None, f"id: must be at most {MAX_SOURCE_ID_CHARS} characters (the limit); it is {len(text)}"
    return text, None
