"""The version protocol, modelled (issue 16, item 2): is the application logic alone safe?

The store here is a model of what DynamoDB guarantees and nothing more: each conditional write is
atomic (checked and applied under one lock), a read returns some committed state. Threads then race
real `MemoryService.edit` calls on one memory. The property: every edit the service acknowledged is
in the final text, every other one was refused with ConflictError, and the history has one line
per acknowledged edit. If this holds, a lost write on the local stack is the store's fault (moto),
not the protocol's."""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from hypothesis import given
from hypothesis import strategies as st

from mnemo.adapters.local.rule_edit_interpreter import RuleEditInterpreter
from mnemo.domain.commands import CaptureCommand, EditCommand
from mnemo.domain.models import Activity, Memory, Permission, Principal
from mnemo.errors import ConflictError
from mnemo.services.memory.memories import MemoryService

CALLER = Principal(tenant="t", key_prefix="mn_model", permissions=frozenset({Permission.ADMIN}))


class AtomicStore:
    """DynamoDB's guarantees for one partition: conditional puts and transactions are atomic; reads
    may interleave with writes anywhere (a random pause widens every race window)."""

    def __init__(self) -> None:
        self._items: dict[str, Memory] = {}
        self._history: dict[str, list[Activity]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _jitter() -> None:
        time.sleep(random.random() / 2000)

    def put_new(self, memory: Memory, activity: Activity | None = None) -> None:
        with self._lock:
            if memory.id in self._items:
                raise ConflictError("exists")
            self._items[memory.id] = memory
            self._history[memory.id] = [activity] if activity else []

    def get(self, tenant: str, memory_id: str) -> Memory | None:
        self._jitter()
        with self._lock:
            return self._items.get(memory_id)

    def save(self, memory: Memory, *, expected_version: int, activity: Activity | None = None,
             duplicate_of: str | None = None) -> None:
        self._jitter()
        with self._lock:
            current = self._items.get(memory.id)
            if current is None or current.version != expected_version or current.revision != memory.revision:
                raise ConflictError("changed concurrently")
            self._items[memory.id] = memory.model_copy(update={"revision": memory.revision + 1})
            if activity is not None:
                self._history[memory.id].append(activity)

    def history(self, tenant: str, memory_id: str) -> list[Activity]:
        with self._lock:
            return list(self._history.get(memory_id, []))


class Queue:
    def __init__(self) -> None:
        self.sent: list[object] = []

    def send(self, task: object) -> None:
        self.sent.append(task)


def race(edits: int, workers: int) -> tuple[str, set[str], set[str], list[Activity]]:
    store = AtomicStore()
    interpreter = RuleEditInterpreter()
    service = MemoryService(store, Queue(), None, interpreter=interpreter)  # type: ignore[arg-type]
    memory = service.capture(CALLER, CaptureCommand(raw="start"))
    acknowledged: set[str] = set()
    refused: set[str] = set()

    def append(token: str) -> None:
        try:
            service.edit(CALLER, memory.id, EditCommand(edit_request=f"append: {token}"))
            acknowledged.add(token)
        except ConflictError:
            refused.add(token)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(append, [f"t{i:03d}" for i in range(edits)]))
    final = store.get("t", memory.id)
    assert final is not None
    return final.raw, acknowledged, refused, store.history("t", memory.id)


@given(edits=st.integers(2, 24), workers=st.integers(2, 8))
def test_every_acknowledged_edit_survives_on_an_atomic_store(edits: int, workers: int) -> None:
    text, acknowledged, refused, history = race(edits, workers)
    words = text.split()[1:]
    assert acknowledged | refused == {f"t{i:03d}" for i in range(edits)} and not acknowledged & refused
    assert sorted(words) == sorted(acknowledged), "an acknowledged edit is missing, or a refused one was applied"
    assert len(words) == len(set(words)), "an edit was applied twice"
    assert [a.action for a in history] == ["created"] + ["edited"] * len(acknowledged)
    assert acknowledged  # positive control: the race is won by someone every time
