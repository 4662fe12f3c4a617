"""moto as the local stack runs it: every patch in one place, for `make dev` and the tests alike.

Each patch keeps moto's answers and fixes a guarantee or a cost (its module says which, and its test
shows the answers unchanged). The tests' `aws` fixture and the local stack call `install()`, so a
patch added here reaches both: the tests once ran without the item-read patch, a third slower.
"""

from __future__ import annotations

from mnemo.local import inprocess, moto_dynamodb, moto_expressions, moto_reads, moto_sqs

__all__ = ["install"]


def install() -> None:
    """Patch moto's classes in this process (idempotent)."""
    moto_dynamodb.install()  # DynamoDB's transaction and isolation guarantees, O(key) queries
    moto_reads.install()  # item reads as plain JSON: a search's hydration 240 ms -> a few ms
    moto_sqs.install()  # a receive in O(batch), not O(batch x backlog)
    moto_expressions.install()  # each expression parsed once, not once or twice per request
    inprocess.remember_handler_methods()  # a handler class's methods listed once, not per request
