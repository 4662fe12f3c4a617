"""Import memories from r3 / mem0 JSON: idempotent by source id, summarised per item.

Accepted shapes (r3's importer's): an array of items, or an object holding it under `results` or
`memories` (mem0's export), and Mnemo's own export (`GET /v1/export`). Each item needs a non-empty
`memory` or `content`; `metadata` (object), `id` (the source id), `captured_at` (else `created_at`),
`agent_id`, `group_id`, `author` (`user`, the default, or `agent`) and `status` (`open`, the default,
`completed` or `archived`) are optional, so an export imports back as the memories it held. An item with a source id is stored under an id
derived from (tenant, user, source id), so a rerun finds it already there and skips it; an item
without one is compared by content with the user's memories when `skip_duplicates` is on.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from mnemo.domain.commands import CaptureCommand, EditCommand
from mnemo.domain.models import Principal, Status
from mnemo.errors import ConflictError, ForbiddenError, ValidationFailed
from mnemo.services.duplicates import DuplicateService
from mnemo.services.memories import MemoryService
from mnemo.services.permissions import Operation, authorize, status_change

IMPORT_UUID_NAMESPACE = uuid.UUID("0d7cbd1e-55f3-4a8b-9c41-7a2e5d7f4b10")
MAX_ITEMS = 500  # per synchronous call: ~1 write + 1 send each stays far inside API Gateway's 29 s
MAX_FILE_BYTES = 5 * 1024 * 1024


class ImportFailure(BaseModel):
    index: int
    reason: str


class ImportReport(BaseModel):
    imported: list[str] = Field(default_factory=list)  # the new memory ids
    skipped: list[ImportFailure] = Field(default_factory=list)
    failed: list[ImportFailure] = Field(default_factory=list)


def imported_id(tenant: str, user_id: str, source_id: str) -> str:
    return str(uuid.uuid5(IMPORT_UUID_NAMESPACE, "\x1f".join([tenant, user_id, source_id])))


def items_of(data: Any) -> list[Any]:
    if isinstance(data, dict):
        for key in ("results", "memories"):
            if isinstance(data.get(key), list):
                return list(data[key])
        raise ValidationFailed("data: an object must hold the items under 'results' or 'memories'")
    if isinstance(data, list):
        return data
    raise ValidationFailed("data: must be an array of items, or an object with 'results' or 'memories'")


class ImportService:
    def __init__(self, memories: MemoryService, duplicates: Callable[[], DuplicateService], *, files_allowed: bool) -> None:
        self._memories = memories
        self._duplicates = duplicates
        self._files_allowed = files_allowed  # only the local stack has a file system worth reading

    def read_file(self, file_path: str) -> Any:
        if not self._files_allowed:
            raise ValidationFailed("file_path: this deployment runs on AWS Lambda, which has no server file system "
                                   "to read; send the items inline with source \"json\" and data")
        path = Path(file_path)
        if not path.is_file():
            raise ValidationFailed(f"file_path: no such file: {file_path}")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ValidationFailed(f"file_path: must be at most {MAX_FILE_BYTES} bytes")
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValidationFailed(f"file_path: is not valid JSON ({exc})") from exc

    def run(self, principal: Principal, data: Any, *, user_id: str, skip_duplicates: bool) -> ImportReport:
        authorize(principal, Operation.IMPORT)
        items = items_of(data)
        if len(items) > MAX_ITEMS:
            raise ValidationFailed(f"data: must hold at most {MAX_ITEMS} items per call; it holds {len(items)}")
        report = ImportReport()
        for index, item in enumerate(items):
            self._one(principal, index, item, user_id, skip_duplicates, report)
        return report

    def _one(self, principal: Principal, index: int, item: Any, user_id: str, skip_duplicates: bool, report: ImportReport) -> None:
        if not isinstance(item, dict):
            report.failed.append(ImportFailure(index=index, reason="not an object"))
            return
        text = item.get("memory") or item.get("content")
        if not isinstance(text, str) or not text.strip():
            report.skipped.append(ImportFailure(index=index, reason="no memory or content text"))
            return
        source_id = item.get("id")
        metadata = item.get("metadata") or {}
        if not isinstance(metadata, dict):
            report.failed.append(ImportFailure(index=index, reason="metadata: must be an object"))
            return
        if source_id is not None:
            metadata = {**metadata, "source_id": str(source_id)}
        status = item.get("status", Status.OPEN.value)
        if status not in {s.value for s in Status}:
            report.failed.append(ImportFailure(index=index, reason=f"status: must be one of open, completed, archived, not {status!r}"))
            return
        if item.get("author", "user") not in ("user", "agent"):
            report.failed.append(ImportFailure(index=index, reason="author: must be user or agent"))
            return
        try:
            command = CaptureCommand(raw=text, user_id=user_id, as_user=item.get("author", "user") == "user",
                                     metadata=metadata, captured_at=item.get("captured_at") or item.get("created_at"),
                                     agent_id=item.get("agent_id"), group_id=item.get("group_id") or "default")
            extra = status_change(Status.OPEN, Status(status))
            if extra is not None:  # checked before the write: an item is imported whole or not at all
                authorize(principal, extra)
        except ValidationError as exc:
            first = exc.errors()[0]
            report.failed.append(ImportFailure(index=index, reason=f"{'.'.join(map(str, first['loc']))}: {first['msg']}"))
            return
        except ForbiddenError as exc:
            report.failed.append(ImportFailure(index=index, reason=f"status: {exc.message}"))
            return
        if source_id is None and skip_duplicates:
            found = self._duplicates().find(principal, user_id, command.raw)
            if found is not None:
                report.skipped.append(ImportFailure(index=index, reason=f"duplicate of {found.memory.id}"))
                return
        memory_id = imported_id(principal.tenant, user_id, str(source_id)) if source_id is not None else None
        try:
            memory = self._memories.capture(principal, command, memory_id=memory_id)
        except ConflictError:
            report.skipped.append(ImportFailure(index=index, reason=f"already imported (source id {source_id})"))
            return
        if status != Status.OPEN.value:
            memory = self._memories.edit(principal, memory.id, EditCommand(status=Status(status)))
        report.imported.append(memory.id)
