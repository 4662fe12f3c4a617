"""Domain errors. Every surface maps these to its own error shape in one place."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime


class MnemoError(Exception):
    """Root of every error Mnemo raises on purpose. `code` is machine-readable and stable.

    `fields`: the service's field names the message uses (`raw_text`); each surface words them its own
    way (`worded`: REST and r3 call that field `content`), so a message never names another surface's field."""

    code = "internal_error"
    fields: tuple[str, ...] = ()

    def __init__(self, message: str, *, fields: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        if fields:
            self.fields = fields

    def worded(self, names: Mapping[str, str]) -> str:
        """The message with each of its service field names renamed as `names` says (whole words only)."""
        message = self.message
        for name in self.fields:
            if name in names:
                message = re.sub(rf"\b{re.escape(name)}\b", names[name], message)
        return message


class ValidationFailed(MnemoError):
    code = "validation_error"


class NotFoundError(MnemoError):
    """`subject` (memory, job, fact, entity) and `ident` (the id asked for): what a surface words its own
    way ("thought <id> not found" on /mcp, "Memory not found: <id>" on r3 and Thrindex)."""

    code = "not_found"

    def __init__(self, message: str, *, subject: str | None = None, ident: str | None = None) -> None:
        super().__init__(message)
        self.subject = subject
        self.ident = ident


class ConflictError(MnemoError):
    """A conditional write lost a race (the version moved on)."""

    code = "conflict"


class UserErasedError(ConflictError):
    """A write for a user whose erasure is running, or was requested while the write was under way:
    refused, and whatever it wrote is erased (docs/erasure.md, "Writes in flight")."""

    code = "user_erased"


def retry_on_conflict[T](attempt: Callable[[], T], tries: int = 3) -> T:
    """Run `attempt` (which re-reads and re-applies) until a conditional write wins, `tries` times at
    most: the last ConflictError reaches the caller (409), never a silently dropped write."""
    for _ in range(tries - 1):
        try:
            return attempt()
        except ConflictError:
            continue
    return attempt()


class AuthenticationError(MnemoError):
    code = "unauthenticated"


class ForbiddenError(MnemoError):
    """The key is valid but lacks the scope the operation needs."""

    code = "missing_scope"


class BoundKeyError(ForbiddenError):
    """A user-bound key named another user: refused, never silently redirected to its own user (an
    answer about "bob" that is really alice's, or a duplicate check against bob's text, misleads or leaks)."""

    code = "bound_to_user"


class QuotaExceededError(MnemoError):
    """A monthly cap (writes, intents, retrievals) is reached; `resets_at` is when the month ends and
    `retry_after` the whole seconds until then, by the service's clock."""

    code = "quota_exceeded"

    def __init__(self, message: str, resets_at: datetime | None = None, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.resets_at = resets_at
        self.retry_after = retry_after


class WriteLimitError(QuotaExceededError):
    """The monthly write cap is reached (a profile may word it its own way)."""


class RetrievalLimitError(QuotaExceededError):
    """The monthly retrieval cap is reached."""


class IntentLimitError(QuotaExceededError):
    """The monthly intent-annotation cap is reached."""


class PaymentRequiredError(MnemoError):
    """The tenant's subscription is past due (`mnemo.cli tenants set --status past_due`)."""

    code = "payment_required"


class TenantSuspendedError(MnemoError):
    """The tenant is suspended by its operator."""

    code = "tenant_suspended"


class UnsupportedEditError(MnemoError):
    """An edit request the service cannot apply: an explicit error, never a silent no-op. Its message
    may tell the caller to replace the whole text instead (the service's field `raw_text`)."""

    code = "unsupported_edit"
    fields = ("raw_text",)


class DependencyError(MnemoError):
    """A backing service (store, queue, index, model) failed; the message never leaks internals."""

    code = "dependency_error"


class UnreadableError(MnemoError):
    """A stored item no longer decodes (written before a limit existed, or by hand): reported, logged,
    and skipped by every read that returns many items."""

    code = "unreadable_item"


class OAuthError(MnemoError):
    """An OAuth request refused with an RFC 6749 error code (`error`: invalid_grant, invalid_scope,
    invalid_target, invalid_request, access_denied, ...); the message is said to the client or the person."""

    code = "oauth_error"

    def __init__(self, error: str, message: str) -> None:
        super().__init__(message)
        self.error = error


class RateLimitedError(MnemoError):
    """Too many of one kind of request in a window (client registrations): try again after `retry_after` s."""

    code = "rate_limited"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
