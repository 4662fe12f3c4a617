"""The authenticated caller of the current request, set by the HTTP layer before any tool runs."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

from mnemo.errors import AuthenticationError

if TYPE_CHECKING:
    from mnemo.domain.models import Principal

_current: ContextVar[Principal | None] = ContextVar("mnemo_principal", default=None)


def set_principal(principal: Principal | None) -> object:
    return _current.set(principal)


def reset_principal(token: object) -> None:
    _current.reset(token)  # type: ignore[arg-type]


def current_principal() -> Principal:
    principal = _current.get()
    if principal is None:  # the HTTP layer refuses unauthenticated calls; this is a second lock
        raise AuthenticationError("not authenticated")
    return principal
