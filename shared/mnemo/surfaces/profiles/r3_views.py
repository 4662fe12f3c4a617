"""r3's result texts (seed 004), with what r3 leaves out put back: ids, scores, the page itself.

r3 answers in plain text or serialized JSON in a text block; Mnemo keeps those texts (so prompts
and parsers written for r3 still work) and adds the same data as structured content.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from mnemo.domain.graph import Fact
from mnemo.domain.jobs import JobReceipt
from mnemo.domain.models import Memory, ScoredMemory
from mnemo.services.facts.connections import OVERVIEW_MEMORIES, OVERVIEW_RECORDED, Connection, Neighbourhood, Overview
from mnemo.services.memory.duplicates import DedupReport, Withheld
from mnemo.services.memory.search_cache import CacheStats, OptimizeReport
from mnemo.services.portability.imports import ImportReport
from mnemo.surfaces.views import one_line, user_scope

NO_MEMORIES = "No memories found"


def result(text: str, data: dict[str, Any] | BaseModel) -> CallToolResult:
    structured = data.model_dump(mode="json") if isinstance(data, BaseModel) else data
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def as_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


def memory(m: Memory) -> dict[str, Any]:
    return {
        "id": m.id, "content": m.raw, "metadata": m.metadata, "user_id": m.user_id, "status": m.status.value,
        "version": m.version, "enrichment": m.enrichment.state.value, "created_at": m.created_at.isoformat(),
        "updated_at": m.updated_at.isoformat(),
    }


def changed(m: Memory, content: str | None, metadata: dict[str, Any] | None) -> dict[str, Any]:
    """An update's answer to a key that may write but not read: what it just wrote, never the rest
    (the content a metadata-only change kept is a read)."""
    return {"id": m.id, "version": m.version, **({"content": m.raw} if content is not None else {}), **({"metadata": m.metadata} if metadata is not None else {})}


def found(hits: list[ScoredMemory], user_id: str, cache: str) -> CallToolResult:
    """`cache`: hit (served from the hot set), miss (computed, now cached) or off (prefer_cache false)."""
    data = {"user_id": user_id, "cache": cache, "results": [{**memory(h.memory), "score": round(h.score, 3)} for h in hits]}
    if not hits:
        return result(NO_MEMORIES, data)
    # each hit's text on one line (one_line): stored text cannot open a `---` / `[id: ...]` block of its own
    text = "\n---\n".join(f"[id: {h.memory.id} | score: {h.score:.3f}]\n{one_line(h.memory.raw)}" for h in hits)
    return result(text, data)


def listing(items: list[Memory], user_id: str, offset: int, next_offset: int | None, total: int | None,
            cache: str, stats: CacheStats | None) -> CallToolResult:
    data: dict[str, Any] = {"user_id": user_id, "memories": [memory(m) for m in items], "offset": offset,
                            "next_offset": next_offset, "total": total, "cache": cache}
    if stats is not None:
        data["cache_stats"] = stats.model_dump()
    if not items:
        return result(NO_MEMORIES if stats is None else f"{NO_MEMORIES}\n{cache_text(stats)}", data)
    return result(as_json(data), data)


def cache_text(s: CacheStats) -> str:
    return (f"Cache ({s.scope}, your tenant): {s.entries} entries holding {s.memories} memories; hits {s.hits}, "
            f"misses {s.misses} ({s.stale} stale), invalidations {s.invalidations}, evictions {s.evictions}; "
            f"entries live {s.ttl_seconds:.0f} s, at most {s.max_entries} per instance")


def optimized(report: OptimizeReport) -> CallToolResult:
    return result(f"Evicted {report.evicted_entries} cache entries; {report.entries} entries holding "
                  f"{report.memories} memories remain", report)


def fact(f: Fact) -> dict[str, Any]:
    return {"uuid": f.uuid, "subject": f.subject.name, "predicate": f.predicate, "object": f.object.name,
            "fact": f.fact, "origin": f.origin.value}


def graph(n: Neighbourhood) -> CallToolResult:
    data = {"entity": {"id": n.entity.id, "name": n.entity.name, "type": n.entity.type},
            "relationships": [fact(f) for f in n.facts]}
    return result(as_json(data), data)


def overview(o: Overview, user_id: str, limit: int) -> CallToolResult:
    """get_knowledge_graph with no entity named: the relationships, headed by how far it looked."""
    how = (f"Knowledge graph of user {user_id} (no entity named): the newest {len(o.facts)} active relationships, at most "
           f"{limit}, among the facts of their {o.memories_read} newest memories and {o.recorded_read} recorded facts "
           f"(at most {OVERVIEW_MEMORIES} memories and {OVERVIEW_RECORDED} recorded facts are read); name an entity (entity_name) to read its whole neighbourhood.")
    data = {"entity": None, "user_id": user_id, "relationships": [fact(f) for f in o.facts],
            "bounded_by": {"memories_read": o.memories_read, "recorded_facts_read": o.recorded_read, "limit": limit}}
    return result(f"{how}\n{as_json(data)}", data)


def queue_text(queue: dict[str, int]) -> str:
    """The deployment-wide queue depths (admin keys) in words."""
    return (f"Queue-wide, every tenant: {queue.get('queued', 0)} queued, {queue.get('in_flight', 0)} in flight, "
            f"{queue.get('dead_letters', 0)} in the dead-letter queue")


def connections(start: str, found_paths: list[Connection]) -> CallToolResult:
    data = {"from": start, "connections": [
        {"entity": c.entity, "entity_id": c.entity_id, "depth": c.depth, "path": [fact(f) for f in c.facts]}
        for c in found_paths]}
    if not found_paths:
        return result(f"No connections found from {start}", data)
    return result(as_json(data), data)


def _text(m: Memory | Withheld) -> str:
    return f": {one_line(m.raw)}" if isinstance(m, Memory) else ""  # Withheld: a key without memory:read


def deduplicated(report: DedupReport, scope: dict[str, str] | None = None) -> CallToolResult:
    """`scope`: where an applied deduplication (dry_run=false) archived; a dry run writes nothing."""
    repeats = sum(len(g.repeats) for g in report.groups)
    head = f"Found {len(report.groups)} duplicate groups among {report.scanned} memories; "
    head += f"would archive {repeats}." if report.dry_run else f"archived {len(report.archived)}, skipped {len(report.skipped)}."
    if report.more:
        head += " More memories remain beyond this scan: apply, then run again to continue."
    lines = [head]
    for group in report.groups:
        lines.append(f"Keep {group.keep.id} ({group.reason}){_text(group.keep)}")
        lines += [f"  - {d.memory.id} [{d.kind} {d.similarity:.3f}]{_text(d.memory)}" for d in group.repeats]
    lines += [f"Skipped {s.id}: {one_line(s.reason)}" for s in report.skipped]
    if report.similar:
        more = " (the most similar; more remain)" if report.similar_more else ""
        lines.append(f"Similar but not the same memory, both kept{more}:")
        lines += [f"  - {p.memory.id} ~ {p.like.id} [{p.similarity:.3f}]"
                  + (f": {one_line(p.difference)}" if p.difference else "") for p in report.similar]
    if report.archived:
        lines.append("Undo: reopen an archived duplicate (status open) on /mcp edit_thought or PATCH /v1/memories/{id}.")
    data = report.model_dump(mode="json")
    return result("\n".join(lines), data if scope is None else {**data, "scope": scope})


def imported(report: ImportReport, scope: dict[str, str]) -> CallToolResult:
    """`scope`: the tenant and user written (each item's agent_id and group_id say the rest)."""
    text = f"Imported {len(report.imported)}, skipped {len(report.skipped)}, failed {len(report.failed)}"
    if report.facts_imported:  # only an export's recorded facts bring any
        text += f"; recorded facts imported {len(report.facts_imported)}"
    if report.duplicate_check:
        text += f"; duplicate check {report.duplicate_check}"
    details = [f"item {f.index}: skipped, {one_line(f.reason)}" for f in report.skipped]  # a reason quotes item fields
    details += [f"item {f.index}: failed, {one_line(f.reason)}" for f in report.failed]
    return result("\n".join([text, *details]), {**report.model_dump(mode="json"), "scope": scope})


def job_started(receipt: JobReceipt, what: str, tenant: str) -> CallToolResult:
    """The job's receipt and `scope`, the tenant and user the job writes (the text stays as it was)."""
    return result(f"Started {what} as job {receipt.job_id} ({receipt.kind.value}, {receipt.status.value}). It runs in the "
                  f"background: check it with GET /v1/jobs/{receipt.job_id} (needs memory:read); it reports progress "
                  "and the imported/skipped/failed or archived counts with the first reasons."
                  + (f" Duplicate check {receipt.duplicate_check}." if receipt.duplicate_check else ""),
                  {**receipt.model_dump(mode="json"), "scope": user_scope(tenant, receipt.user_id)})
