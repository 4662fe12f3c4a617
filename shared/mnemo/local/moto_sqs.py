"""moto's SQS, made to receive in time that does not grow with the backlog.

Local stack and tests only (production talks to SQS). In moto 5.2 one `ReceiveMessage` of ten
costs O(ten × queue length): for every message it hands out it checks the retention period through
`get_queue_attributes`, which computes every attribute, including the three message counts that
each walk the whole queue and read the clock once per message. With 3,000 tasks queued this was a
fifth of the worker's time (cProfile of bench/local_stack_bench.py's drain), and it grew with the
backlog: the enrichment rate fell as the tenant's backlog grew.

The same walk made every other call grow with the backlog too (py-spy of a 1,200-turn import: a
tenth of the process's time): `SendMessage` computes every queue attribute (for one flag), and
`DeleteMessage` walks the whole queue twice per receipt, building a list per message.

`install()` patches moto's classes in this process (idempotent), answers unchanged:
- the retention check reads the queue's retention period directly (O(1));
- a queue's visible messages and its three message counts read the clock once per call, not once
  or twice per message;
- a delete stops at the message holding the receipt (handed-out messages sit at the queue's head).
"""

from __future__ import annotations

from typing import Any

from moto.core.utils import unix_time, unix_time_millis
from moto.sqs.exceptions import ReceiptHandleIsInvalid
from moto.sqs.models import Message, Queue, SQSBackend

__all__ = ["install", "installed"]

_original_messages = Queue.messages


def installed() -> bool:
    return Queue.messages is not _original_messages


def install() -> None:
    SQSBackend.is_message_valid_based_on_retention_period = _within_retention  # type: ignore[method-assign]
    Queue.messages = property(_visible_messages)  # type: ignore[method-assign,assignment]
    Queue.approximate_number_of_messages_delayed = property(_delayed_count)  # type: ignore[method-assign,assignment]
    Queue.approximate_number_of_messages_not_visible = property(_in_flight_count)  # type: ignore[method-assign,assignment]
    Queue.delete_message = _delete_message  # type: ignore[method-assign]


def _within_retention(self: SQSBackend, queue_name: str, message: Message) -> bool:
    """moto's own rule (sent + retention period > now), without computing every queue attribute."""
    retention_period = int(getattr(self.get_queue(queue_name), "message_retention_period"))  # noqa: B009 - set by moto via setattr
    return retention_period + message.sent_timestamp / 1000 > unix_time()  # type: ignore[operator]


def _visible_messages(self: Queue) -> list[Message]:
    """moto's `Queue.messages` (visible and not delayed), one clock read for the whole list."""
    now: Any = unix_time_millis()
    return [m for m in self._messages if now > m.visible_at and not now < m.delayed_until]


def _delayed_count(self: Queue) -> int:
    now: Any = unix_time_millis()
    return sum(1 for m in self._messages if now < m.delayed_until)


def _in_flight_count(self: Queue) -> int:
    now: Any = unix_time_millis()
    return sum(1 for m in self._messages if not now > m.visible_at)


def _delete_message(self: Queue, receipt_handle: str) -> None:
    """moto's delete (already deleted: nothing; unknown: ReceiptHandleIsInvalid), stopping at the match."""
    if receipt_handle in self.deleted_messages:
        return
    messages = self._messages
    for position, message in enumerate(messages):
        if message.receipt_handle == receipt_handle or receipt_handle in message._old_receipt_handles:
            self.pending_messages.discard(message)
            self.deleted_messages.update(message.all_receipt_handles)  # type: ignore[arg-type]
            self._messages = messages[:position] + messages[position + 1 :]  # rebound, as moto does: readers keep a whole list
            return
    raise ReceiptHandleIsInvalid()
