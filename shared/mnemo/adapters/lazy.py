"""Deferred construction as an adapter: `lazy(resolve)` stands in for a port (`SearchIndex`,
`Embedder`, an LLM client, ...) and asks `resolve` for the real adapter at each use, never before.

Services take the port itself; the composition root hands them `lazy(...)` of its own cached
accessor, so building the container builds nothing heavy and a capture never pays for the search
index client, the embedding model or a model client (docs/architecture.md, "cold start"). The
stand-in holds no adapter: the container's cache is the only one, so what a SnapStart restore
rebuilds (`Container.forget_connections`) is what the next call reaches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast


class _Resolved:
    __slots__ = ("_resolve",)

    def __init__(self, resolve: Callable[[], object]) -> None:
        self._resolve = resolve

    def __getattr__(self, name: str) -> Any:
        return getattr(self._resolve(), name)

    def __repr__(self) -> str:
        return f"lazy({self._resolve!r})"


def lazy[P](resolve: Callable[[], P]) -> P:
    """`resolve`'s adapter in the shape of port P: every attribute read (a method call) is answered
    by `resolve()` at that moment. `resolve` should be cheap after its first call (a cached accessor)."""
    return cast(P, _Resolved(resolve))
