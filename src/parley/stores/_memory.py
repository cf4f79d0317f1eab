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


class MemoryTaskStore:
    """Tasks kept in this process, gone when it exits.

    Snapshots are kept as their wire JSON rather than as model objects: a small task is a
    few hundred bytes that way instead of several kilobytes of Python objects, and every
    ``get`` hands out a fresh copy that no one else can change. The event log of a task
    is kept until its terminal snapshot is saved, then dropped.
    """

    def __init__(self) -> None:
        self._tasks: dict[str, _Entry] = {}
        self._sent: dict[tuple[str, str], SentMessage] = {}
        self._claimed: dict[tuple[str, str], float] = {}
        self._sent_to: dict[str, list[tuple[str, str]]] = {}

    async def get(self, task_id: str) -> TaskSnapshot | None:
        entry = self._tasks.get(task_id)
        if entry is None:
            return None
        task = None if entry.snapshot is None else Task.model_validate_json(entry.snapshot)
        return replay(task, entry.sequence, entry.events)

    async def save(self, task: Task, sequence: int) -> None:
        entry = self._tasks.setdefault(task.id, _Entry())
        entry.snapshot, entry.sequence = task.to_json(), sequence
        entry.state, entry.touched = task.status.state, time.time()
        if is_terminal(task.status.state):
            entry.events = []

    async def append(self, task_id: str, events: Sequence[StoredEvent]) -> None:
        entry = self._tasks.setdefault(task_id, _Entry())
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
        if entry is None:
            return []
        return [stored for stored in entry.events if stored.sequence > after]

    async def delete(self, task_id: str) -> None:
        self._tasks.pop(task_id, None)
        for key in self._sent_to.pop(task_id, ()):
            self._sent.pop(key, None)
            self._claimed.pop(key, None)

    async def active(self) -> list[str]:
        return [task_id for task_id, e in self._tasks.items() if e.state in ACTIVE_STATES]

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
        expired = [
            task_id
            for task_id, entry in self._tasks.items()
            if entry.state is not None
            and (
                (is_terminal(entry.state) and entry.touched < ended)
                or (is_interrupted(entry.state) and entry.touched < waiting)
            )
        ]
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
        return sum(1 for entry in self._tasks.values() if entry.snapshot is not None)
