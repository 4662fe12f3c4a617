"""Which permission each operation needs: the one table (docs/permissions.md prints it, a test keeps
the two equal) and the one check every service entry makes.

Each operation needs exactly one permission; `admin` implies every other. No operation needs two,
so a write+delete key can edit and delete without also holding read. Archiving is deletion
whichever way it is asked for (DELETE, PATCH status, `edit_request "archive"`), and bringing an
archived memory back undoes one, so both need `memory:delete`.
"""

from __future__ import annotations

from enum import StrEnum

from mnemo.domain.edits import DeleteSpan, EditPlan, ReplaceSpan, SetText
from mnemo.domain.models import Permission, Principal, Status
from mnemo.errors import ForbiddenError

__all__ = ["CHECK_SKIPPED", "CHECK_SKIPPED_AT_RETRIEVAL_CAP", "REQUIRED", "TOOL_PERMISSIONS", "Operation", "authorize",
           "blind_plan", "content_check", "missing_for_tool", "status_change"]


class Operation(StrEnum):
    CAPTURE = "capture a memory"
    READ = "read a memory or its history"
    BROWSE = "browse memories"
    SEARCH = "search memories"
    STATUS = "read the enrichment status"
    RETRY_ENRICHMENT = "retry this tenant's failed enrichments"
    EDIT = "edit a memory's text, metadata or status"
    ARCHIVE = "archive (delete) a memory"
    UNARCHIVE = "reopen an archived memory"
    READ_ALL_USERS = "read every user of the tenant (user_id '*')"
    RECORD_FACT = "record a fact"
    INVALIDATE_FACT = "invalidate a fact"
    RETRACT_FACT = "retract a fact"
    READ_FACTS = "search or read facts and entities"
    TRAVERSE_FACTS = "walk the fact graph (neighbours, paths, connections)"
    ERASE = "permanently erase a memory"
    ERASE_USER = "permanently erase every memory of a user"
    READ_JOB = "read an erasure job"
    READ_WORK_JOB = "read an import, mem0 import or deduplication job"
    IMPORT = "import memories"
    FIND_DUPLICATES = "find duplicate memories"
    EXPORT = "export a user's memories"
    READ_CACHE = "read or evict the r3 cache"
    EXTRACT = "extract entities from a text"
    MANAGE_KEYS = "create, list or revoke the tenant's API keys"


REQUIRED: dict[Operation, Permission] = {
    Operation.CAPTURE: Permission.WRITE,
    Operation.READ: Permission.READ,
    Operation.BROWSE: Permission.READ,
    Operation.SEARCH: Permission.READ,
    Operation.STATUS: Permission.READ,
    Operation.RETRY_ENRICHMENT: Permission.ADMIN,
    Operation.EDIT: Permission.WRITE,
    Operation.ARCHIVE: Permission.DELETE,
    Operation.UNARCHIVE: Permission.DELETE,
    Operation.READ_ALL_USERS: Permission.ADMIN,
    Operation.RECORD_FACT: Permission.WRITE,
    Operation.INVALIDATE_FACT: Permission.WRITE,
    Operation.RETRACT_FACT: Permission.ADMIN,
    Operation.READ_FACTS: Permission.READ,
    Operation.TRAVERSE_FACTS: Permission.READ,
    Operation.ERASE: Permission.DELETE,
    Operation.ERASE_USER: Permission.ADMIN,
    Operation.READ_JOB: Permission.ADMIN,
    Operation.READ_WORK_JOB: Permission.READ,
    Operation.IMPORT: Permission.WRITE,
    Operation.FIND_DUPLICATES: Permission.READ,
    Operation.EXPORT: Permission.READ,
    Operation.READ_CACHE: Permission.READ,
    Operation.EXTRACT: Permission.WRITE,
    Operation.MANAGE_KEYS: Permission.ADMIN,
}


def authorize(principal: Principal, operation: Operation) -> None:
    """Raise ForbiddenError naming the operation and the one permission it needs."""
    needed = REQUIRED[operation]
    if not principal.allows(needed):
        held = ", ".join(sorted(p.value for p in principal.permissions)) or "none"
        raise ForbiddenError(f"to {operation.value}, this API key needs the {needed.value!r} scope (it has: {held})")


CHECK_SKIPPED = ("skipped: this API key has no 'memory:read' scope, so no text was compared with stored memories "
                 "(an import still skips items by their source id)")
# The same check skipped because the tenant's retrievals are used up: a check is a similarity search, so
# it is charged as one (docs/tenancy.md "Duplicate checks"), but a read quota never refuses a write.
CHECK_SKIPPED_AT_RETRIEVAL_CAP = ("skipped: this tenant's monthly retrieval limit is reached, so no text was compared "
                                  "with stored memories (an import still skips items by their source id)")


def may_read(principal: Principal) -> bool:
    """Whether a write's answer may carry stored text the call did not send (the memory as it now
    stands): only for a key that may read; otherwise it names the id, version and what the call set."""
    return principal.allows(REQUIRED[Operation.READ])


def content_check(principal: Principal, asked: bool | None, argument: str) -> tuple[bool, str | None]:
    """Whether a write compares its text with the user's stored memories (a duplicate check), and the
    note its answer carries when it does not for lack of scope. The comparison is a read (it finds and
    names a stored memory), so it needs what finding duplicates needs. `asked`: the caller's explicit
    choice (True: compare, False: do not), None for the default (compare when the key may read). A key
    that may not read saves without comparing, saying so; asking it explicitly to compare is refused
    naming `argument` and the scope."""
    needed = REQUIRED[Operation.FIND_DUPLICATES]
    if principal.allows(needed):
        return asked is not False, None
    if asked:
        held = ", ".join(sorted(p.value for p in principal.permissions)) or "none"
        raise ForbiddenError(f"{argument}: comparing with stored memories reads them; this API key needs the "
                             f"{needed.value!r} scope for that (it has: {held}); omit {argument} to save without comparing")
    return False, CHECK_SKIPPED if asked is None else None


def status_change(before: Status, after: Status) -> Operation | None:
    """The extra operation a status change is: archiving, or undoing an archive; None otherwise."""
    if before != Status.ARCHIVED and after == Status.ARCHIVED:
        return Operation.ARCHIVE
    if before == Status.ARCHIVED and after != Status.ARCHIVED:
        return Operation.UNARCHIVE
    return None


BLIND_REFUSAL = ("the interpreter did not apply it (its reason is not shown to an API key without 'memory:read': "
                 "it may quote the memory's text)")


def blind_plan(principal: Principal, request: str, plan: EditPlan) -> EditPlan:
    """The edit plan a key may apply, checked before the plan meets the text. Editing needs only
    `memory:write`, but a key without `memory:read` must not learn the text through an edit: a span edit
    ("replace 'X' with ...", "delete 'X'") succeeds or fails by whether X occurs (and how often), so it
    is refused for such a key whatever the text says, naming edit_request and the scope; so is a
    whole-text rewrite the request does not itself contain (an LLM's rewrite of the old text). Appending,
    setting a text the request gives, and status changes read nothing. An interpreter's refusal reason
    may quote the text, so such a key gets a fixed one."""
    if principal.allows(REQUIRED[Operation.READ]):
        return plan
    if plan.refusal is not None:
        return EditPlan.refuse(BLIND_REFUSAL)
    given = " ".join(request.split())
    for op in plan.operations:
        if isinstance(op, ReplaceSpan | DeleteSpan) or (isinstance(op, SetText) and " ".join(op.text.split()) not in given):
            held = ", ".join(sorted(p.value for p in principal.permissions)) or "none"
            raise ForbiddenError(
                f"edit_request: changing part of the text finds words in the memory's text, which reads it; this API "
                f"key needs the 'memory:read' scope for that (it has: {held}); pass raw_text to replace the whole text, "
                "or ask to append text, archive, complete or reopen; nothing was changed", fields=("raw_text",))
    return plan


# The permission a tool's name alone decides (the least any call of it needs), per MCP profile ("" is
# `/mcp`). The MCP gate answers an OAuth token without it with HTTP 403 `insufficient_scope` before
# dispatch, so that clients step up (they do so only on an HTTP 403; docs/oauth.md). Left out: tools
# whose permission depends on their arguments (edit_thought: text or archive; deduplicate_memories:
# dry run or not) or that need `admin` (retract): those answer as the tool's own error.
TOOL_PERMISSIONS: dict[str, dict[str, Permission]] = {
    "": {"capture_thought": Permission.WRITE, "retrieve_thoughts": Permission.READ, "delete_thought": Permission.DELETE},
    "facts": {"add_episode": Permission.WRITE, "record_fact": Permission.WRITE, "search": Permission.READ},
    "thrindex": {"store_memory": Permission.WRITE, "search_memories": Permission.READ, "list_memories": Permission.READ,
                 "get_memory": Permission.READ, "delete_memory": Permission.DELETE},
    "r3": {"add_memory": Permission.WRITE, "search_memory": Permission.READ, "get_memory": Permission.READ,
           "update_memory": Permission.WRITE, "get_all_memories": Permission.READ, "delete_memory": Permission.DELETE,
           "cache_stats": Permission.READ, "sync_status": Permission.READ, "optimize_cache": Permission.READ,
           "extract_entities": Permission.WRITE, "get_knowledge_graph": Permission.READ,
           "find_connections": Permission.READ, "import_memories": Permission.WRITE},
}


def missing_for_tool(principal: Principal, profile: str, tool: str) -> Permission | None:
    """The permission `principal` lacks for any call of `tool`, when the name alone decides it."""
    needed = TOOL_PERMISSIONS.get(profile, {}).get(tool)
    return needed if needed is not None and not principal.allows(needed) else None
