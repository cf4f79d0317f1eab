"""The in-memory task store: the library default, and what tests and benchmarks use."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from parley.protocol import ACTIVE_STATES, is_interrupted, is_terminal
from parley.stores._protocols import SentMessage, StoredEvent, TaskSnapshot, duplicate
from parley.stores._replay import replay
from parley.types import Message, Task, TaskState, TaskStatusUpdateEvent


@dataclass(slots=True)
class _Entry:
    snapshot: bytes | None = None
    sequence: int = 0
    events: list[StoredEvent] = field(default_factory=list)
    state: TaskState | None = None
    touched: float = field(default_factory=time.time)


_Finished = tuple[bytes, int, str, float]
"""A terminal task: snapshot, sequence, state value, last touched. Only atomic values, so
the garbage collector stops tracking it: a store of many finished tasks adds nothing to
the cost of a collection (the p99 of a busy server depends on it)."""


def _state_and_touched(item: _Entry | _Finished) -> tuple[TaskState | None, float]:
    if isinstance(item, tuple):
        return TaskState(item[2]), item[3]
    return item.state, item.touched


class MemoryTaskStore:
    """Tasks kept in this process, gone when it exits.

    Snapshots are kept as their wire JSON rather than as model objects: a small task is a
    few hundred bytes that way instead of several kilobytes of Python objects, and every
    ``get`` hands out a fresh copy that no one else can change. The event log of a task
    is kept until its terminal snapshot is saved, then dropped.
    """

    def __init__(self) -> None:
        self._tasks: dict[str, _Entry | _Finished] = {}
        self._sent: dict[tuple[str, str], SentMessage] = {}
        self._claimed: dict[tuple[str, str], float] = {}
        self._sent_to: dict[str, list[tuple[str, str]]] = {}

    async def get(self, task_id: str) -> TaskSnapshot | None:
        entry = self._tasks.get(task_id)
        if entry is None:
            return None
        if isinstance(entry, tuple):
            return TaskSnapshot(Task.model_validate_json(entry[0]), entry[1])
        task = None if entry.snapshot is None else Task.model_validate_json(entry.snapshot)
        return replay(task, entry.sequence, entry.events)

    async def save(self, task: Task, sequence: int) -> None:
        state = task.status.state
        if is_terminal(state):
            self._tasks[task.id] = (task.to_json(), sequence, state.value, time.time())
            return
        entry = self._entry(task.id)
        entry.snapshot, entry.sequence = task.to_json(), sequence
        entry.state, entry.touched = state, time.time()

    def _entry(self, task_id: str) -> _Entry:
        item = self._tasks.get(task_id)
        if isinstance(item, _Entry):
            return item
        entry = _Entry() if item is None else _Entry(item[0], item[1], [], TaskState(item[2]))
        self._tasks[task_id] = entry
        return entry

    async def append(self, task_id: str, events: Sequence[StoredEvent]) -> None:
        entry = self._entry(task_id)
        if events and entry.events and events[0].sequence <= entry.events[-1].sequence:
            raise ValueError(duplicate(task_id, events))
        entry.events.extend(events)
        entry.touched = time.time()
        for stored in events:
            event = stored.event
            if isinstance(event, Task | TaskStatusUpdateEvent):
                entry.state = event.status.state

    async def events(self, task_id: str, after: int = 0) -> list[StoredEvent]:
        entry = self._tasks.get(task_id)
        if not isinstance(entry, _Entry):
            return []
        return [stored for stored in entry.events if stored.sequence > after]

    async def delete(self, task_id: str) -> None:
        self._tasks.pop(task_id, None)
        for key in self._sent_to.pop(task_id, ()):
            self._sent.pop(key, None)
            self._claimed.pop(key, None)

    async def active(self) -> list[str]:
        return [
            task_id
            for task_id, item in self._tasks.items()
            if isinstance(item, _Entry) and item.state in ACTIVE_STATES
        ]

    async def find_message(self, scope: str, message_id: str) -> SentMessage | None:
        return self._sent.get((scope, message_id))

    async def claim_message(self, scope: str, message_id: str, task_id: str) -> SentMessage | None:
        earlier = self._sent.get((scope, message_id))
        if earlier is None:
            self._sent[(scope, message_id)] = SentMessage(task_id)
            self._sent_to.setdefault(task_id, []).append((scope, message_id))
            self._claimed[(scope, message_id)] = time.time()
        return earlier

    async def save_reply(self, scope: str, message_id: str, reply: Message) -> None:
        sent = self._sent.get((scope, message_id))
        if sent is not None:
            self._sent[(scope, message_id)] = SentMessage(sent.task_id, reply)

    async def expire(self, *, ended_before: datetime, waiting_before: datetime) -> int:
        ended, waiting = ended_before.timestamp(), waiting_before.timestamp()
        expired = []
        for task_id, item in self._tasks.items():
            state, touched = _state_and_touched(item)
            if state is not None and (
                (is_terminal(state) and touched < ended)
                or (is_interrupted(state) and touched < waiting)
            ):
                expired.append(task_id)
        for task_id in expired:
            await self.delete(task_id)
        # Claims that never led to a stored task (direct replies, runs that died early).
        for key, at in list(self._claimed.items()):
            sent = self._sent[key]
            if at < ended and sent.task_id not in self._tasks:
                del self._sent[key], self._claimed[key]
                self._sent_to.pop(sent.task_id, None)
        return len(expired)

    def __len__(self) -> int:
        return sum(1 for item in self._tasks.values() if isinstance(item, tuple) or item.snapshot)
