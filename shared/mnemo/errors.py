"""Domain errors. Every surface maps these to its own error shape in one place."""

from __future__ import annotations


class MnemoError(Exception):
    """Root of every error Mnemo raises on purpose. `code` is machine-readable and stable."""

    code = "internal_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ValidationFailed(MnemoError):
    code = "validation_error"


class NotFoundError(MnemoError):
    code = "not_found"


class ConflictError(MnemoError):
    """A conditional write lost a race (the version moved on)."""

    code = "conflict"


class AuthenticationError(MnemoError):
    code = "unauthorized"


class ForbiddenError(MnemoError):
    """The key is valid but lacks the scope the operation needs."""

    code = "missing_scope"


class UnsupportedEditError(MnemoError):
    """An edit request the service cannot apply: an explicit error, never a silent no-op."""

    code = "unsupported_edit"


class DependencyError(MnemoError):
    """A backing service (store, queue, index, model) failed; the message never leaks internals."""

    code = "dependency_error"


class UnreadableError(MnemoError):
    """A stored item no longer decodes (written before a limit existed, or by hand): reported, logged,
    and skipped by every read that returns many items."""

    code = "unreadable_item"
