"""`mnemo export|import`: a user's memories to and from JSON Lines, against the tables directly
(operator credentials; the tenant is named on the command line). The same services and format as
`GET /v1/export` and `POST /v1/import` (docs/import-export.md). A run longer than a second shows a
progress bar on stderr (tqdm); the closing summary line is always printed there."""

from __future__ import annotations

import json
import sys
from typing import IO, TYPE_CHECKING, Any

from mnemo.domain.limits import check_json_depth
from mnemo.domain.models import Permission, Principal
from mnemo.errors import ValidationFailed
from mnemo.services.portability.exports import ndjson
from mnemo.services.portability.imports import MAX_ITEMS, ImportReport, items_of

if TYPE_CHECKING:
    from tqdm import tqdm

    from mnemo.bootstrap import Container

PROGRESS_DELAY_S = 1.0  # a short run shows no bar at all
# Items per import call: a progress step every 100 items, each step still one batched chunk (one
# BatchGetItem, four BatchWriteItems, ten SendMessageBatches).
CLI_CHUNK = min(100, MAX_ITEMS)


def progress(total: int | None, unit: str) -> tqdm:
    from tqdm import tqdm  # only the CLI needs it (requirements-dev.txt)

    return tqdm(total=total, unit=f" {unit}", file=sys.stderr, delay=PROGRESS_DELAY_S, dynamic_ncols=True)


def operator(tenant: str) -> Principal:
    return Principal(tenant=tenant, key_prefix="cli", name="mnemo cli", permissions=frozenset({Permission.ADMIN}))


def export(services: Container, tenant: str, user_id: str, out: IO[str]) -> int:
    """Write every memory of the user, one JSON object per line, then one `{"recorded_fact": ...}`
    line per fact recorded for the user; returns how many lines."""
    count, facts, cursor = 0, 0, None
    with progress(None, "records") as bar:
        while True:
            page = services.exports.page(operator(tenant), user_id, limit=100, cursor=cursor)
            out.write(ndjson(page))
            count, facts = count + len(page.memories), facts + len(page.recorded_facts)
            bar.update(len(page.memories) + len(page.recorded_facts))
            cursor = page.next_cursor
            if cursor is None:
                break
    print(f"exported {count} memories, {facts} recorded facts", file=sys.stderr)
    return count + facts


def read_items(source: IO[str]) -> list[Any]:
    """JSON Lines (this export), or one JSON document in any shape import_memories takes."""
    text = source.read()
    try:  # the one nesting rule for client JSON (domain/limits.py), before any parser recurses into it
        check_json_depth(text)
    except ValueError as exc:
        raise ValidationFailed(f"file: {exc}") from exc
    try:
        return items_of(json.loads(text))
    except json.JSONDecodeError:
        pass
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValidationFailed(f"line {number}: is not valid JSON ({exc.msg})") from exc
    return items


def import_(services: Container, tenant: str, user_id: str, source: IO[str]) -> ImportReport:
    """Import in chunks; the report covers every item (its indexes count from the file's first item)."""
    items, total = read_items(source), ImportReport()
    with progress(len(items), "items") as bar:
        for start in range(0, len(items), CLI_CHUNK):
            part = services.imports.run(operator(tenant), items[start:start + CLI_CHUNK], user_id=user_id, skip_duplicates=True)
            total.imported += part.imported
            total.facts_imported += part.facts_imported
            total.skipped += [f.model_copy(update={"index": f.index + start}) for f in part.skipped]
            total.failed += [f.model_copy(update={"index": f.index + start}) for f in part.failed]
            bar.update(min(CLI_CHUNK, len(items) - start))
            bar.set_postfix(imported=len(total.imported), skipped=len(total.skipped), failed=len(total.failed))
    print(f"imported {len(total.imported)}, skipped {len(total.skipped)}, failed {len(total.failed)} of {len(items)}",
          file=sys.stderr)
    return total
