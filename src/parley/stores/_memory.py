"""The in-memory task store: the library default, and what tests and benchmarks use."""

from __future__ import annotations

from collections.abc import Sequence

from parley.protocol import is_terminal
from parley.stores._protocols import StoredEvent, TaskSnapshot
from parley.types import Task


class MemoryTaskStore:
    """Tasks kept in this process, gone when it exits.

    Snapshots are kept as their wire JSON rather than as model objects: a small task is a
    few hundred bytes that way instead of several kilobytes of Python objects, and every
    ``get`` hands out a fresh copy that no one else can change. The event log of a task
    is kept until its terminal snapshot is saved, then dropped.
    """

    def __init__(self) -> None:
        self._snapshots: dict[str, tuple[bytes, int]] = {}
        self._events: dict[str, list[StoredEvent]] = {}

    async def get(self, task_id: str) -> TaskSnapshot | None:
        stored = self._snapshots.get(task_id)
        if stored is None:
            return None
        data, sequence = stored
        return TaskSnapshot(Task.model_validate_json(data), sequence)

    async def save(self, task: Task, sequence: int) -> None:
        self._snapshots[task.id] = (task.to_json(), sequence)
        if is_terminal(task.status.state):
            self._events.pop(task.id, None)

    async def append(self, task_id: str, events: Sequence[StoredEvent]) -> None:
        log = self._events.get(task_id)
        if log is None:
            self._events[task_id] = list(events)
        else:
            log.extend(events)

    async def events(self, task_id: str, after: int = 0) -> list[StoredEvent]:
        return [entry for entry in self._events.get(task_id, ()) if entry.sequence > after]

    async def delete(self, task_id: str) -> None:
        self._snapshots.pop(task_id, None)
        self._events.pop(task_id, None)

    def __len__(self) -> int:
        return len(self._snapshots)
