"""`mnemo export|import`: a user's memories to and from JSON Lines, against the tables directly
(operator credentials; the tenant is named on the command line). The same services and format as
`GET /v1/export` and `POST /v1/import` (docs/import-export.md); progress goes to stderr."""

from __future__ import annotations

import json
import sys
from typing import IO, TYPE_CHECKING, Any

from mnemo.domain.models import Permission, Principal
from mnemo.errors import ValidationFailed
from mnemo.services.imports import MAX_ITEMS, ImportReport, items_of

if TYPE_CHECKING:
    from mnemo.bootstrap import Container


def operator(tenant: str) -> Principal:
    return Principal(tenant=tenant, key_prefix="cli", name="mnemo cli", permissions=frozenset({Permission.ADMIN}))


def export(services: Container, tenant: str, user_id: str, out: IO[str]) -> int:
    """Write every memory of the user, one JSON object per line; returns how many."""
    count, cursor = 0, None
    while True:
        page = services.exports.page(operator(tenant), user_id, limit=100, cursor=cursor)
        out.writelines(m.model_dump_json() + "\n" for m in page.memories)
        count += len(page.memories)
        print(f"\rexported {count} memories", end="", file=sys.stderr, flush=True)
        cursor = page.next_cursor
        if cursor is None:
            print(file=sys.stderr)
            return count


def read_items(source: IO[str]) -> list[Any]:
    """JSON Lines (this export), or one JSON document in any shape import_memories takes."""
    text = source.read()
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
    """Import in batches of the service's maximum; the report covers every item (indexes are global)."""
    items, total = read_items(source), ImportReport()
    for start in range(0, len(items), MAX_ITEMS):
        part = services.imports.run(operator(tenant), items[start:start + MAX_ITEMS], user_id=user_id, skip_duplicates=True)
        total.imported += part.imported
        total.skipped += [f.model_copy(update={"index": f.index + start}) for f in part.skipped]
        total.failed += [f.model_copy(update={"index": f.index + start}) for f in part.failed]
        print(f"\rimported {len(total.imported)}, skipped {len(total.skipped)}, failed {len(total.failed)} "
              f"of {len(items)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return total
