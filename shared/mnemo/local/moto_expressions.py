"""moto's expression parsing, remembered per expression string.

Local stack and tests only. moto 5.2 parses every expression afresh: an UpdateItem's
UpdateExpression twice per request (the handler checks its placeholders, the backend validates and
applies it) and a ConditionExpression by a regex lexer, token by token, per request. Our adapters
send a handful of distinct expressions over and over, and parsing was a third of an UpdateItem's
cost and a fifth of a capture's (cProfile of the local stack's drain and captures, bench/README.md).
So each expression's parse is kept (a bounded LRU per kind):

- UpdateExpression: the parsed tree. Sharing it is safe because nothing changes it: the handler only
  reads it (`find_clauses`) and the backend's validator works on a deep copy (`Validator.__init__`),
  which it then normalises and executes.
- ConditionExpression (and KeyConditionExpression, FilterExpression: the same lexer): the token
  list, before names and values are substituted. Tokens are immutable namedtuples whose `children`
  nothing appends to; each parse gets its own deque of them to consume.

An expression that fails to parse raises every time (a raise is never cached).
tests/integration/local/test_local_stack_guarantees.py reapplies remembered expressions and checks each
result. `install()` patches moto's classes in this process (idempotent).
"""

from __future__ import annotations

import functools
from collections import deque
from typing import Any

from moto.dynamodb.comparisons import ConditionExpressionParser
from moto.dynamodb.parsing.expressions import UpdateExpressionParser  # type: ignore[attr-defined]  # moto marks the module untyped

__all__ = ["install", "installed"]

_parse_update = UpdateExpressionParser.make  # bound to the class: callable with the expression alone
_lex_condition = ConditionExpressionParser._lex_condition_expression
_installed = False


def installed() -> bool:
    return _installed


@functools.lru_cache(maxsize=512)
def _parsed_update(expression: str) -> Any:
    return _parse_update(expression)


@functools.lru_cache(maxsize=512)
def _lexed_condition(expression: str) -> tuple[Any, ...]:
    return tuple(_lex_condition(ConditionExpressionParser(expression, {}, {})))  # the lexer reads the text alone


def _make(cls: type, expression: str) -> Any:
    return _parsed_update(expression)


def _lex(self: ConditionExpressionParser) -> deque[Any]:
    return deque(_lexed_condition(self.condition_expression))


def install() -> None:
    global _installed
    if not _installed:
        UpdateExpressionParser.make = classmethod(_make)
        ConditionExpressionParser._lex_condition_expression = _lex  # type: ignore[method-assign]
        _installed = True
