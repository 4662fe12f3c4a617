"""moto's UpdateExpression parser, remembered per expression.

Local stack and tests only. moto 5.2 parses an UpdateItem's expression twice per request (the
handler checks its placeholders, the backend validates and applies it) and again for every
transaction item, and parsing is a third of an UpdateItem's cost: the metering charge on every
capture and the entity upsert of enrichment took 10-17 ms each (bench/README.md). Our adapters send
a handful of distinct expressions over and over, so the parse of each is kept (a bounded LRU).

Sharing the tree is safe because nothing changes it: the handler only reads it (`find_clauses`),
and the backend's validator works on a deep copy (`Validator.__init__`), which it then normalises
and executes. An expression that fails to parse raises every time (a raise is never cached).
tests/integration/test_local_stack_guarantees.py applies cached expressions repeatedly and checks
each result.

`install()` patches moto's class in this process (idempotent).
"""

from __future__ import annotations

import functools
from typing import Any

from moto.dynamodb.parsing.expressions import UpdateExpressionParser  # type: ignore[attr-defined]  # moto marks the module untyped

__all__ = ["install", "installed"]

_original = UpdateExpressionParser.make  # bound to the class: callable with the expression alone
_installed = False


def installed() -> bool:
    return _installed


@functools.lru_cache(maxsize=512)
def _parsed(expression: str) -> Any:
    return _original(expression)


def _make(cls: type, expression: str) -> Any:
    return _parsed(expression)


def install() -> None:
    global _installed
    if not _installed:
        UpdateExpressionParser.make = classmethod(_make)
        _installed = True
