"""The small protocols every task store implements.

A store keeps two things per task: the *snapshot* (the Task as of some event sequence
number) and the *event log* (every event with its sequence number). The request handler
appends each event as it happens and saves the snapshot at checkpoints (when a run
reaches a terminal or interrupted state), so the cost per event stays flat however large
a task grows; a reader that needs the current state after a crash takes the snapshot and
folds the events after its sequence number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from parley.types import Event, Task


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One entry of a task's event log."""

    sequence: int
    """Position in the task's log: 1, 2, 3, ... with no gaps."""
    event: Event


@dataclass(frozen=True, slots=True)
class TaskSnapshot:
    """A task as stored, with the sequence number of the last event folded into it."""

    task: Task
    sequence: int


class TaskStore(Protocol):
    """Where tasks and their event logs live.

    Implementations must be safe to call concurrently from one event loop. A store may
    forget the event log of a task once that task's terminal snapshot is saved (the
    snapshot then is the whole truth); ``events`` then returns what it still has.
    """

    async def get(self, task_id: str) -> TaskSnapshot | None:
        """The latest snapshot of a task, or ``None`` if the store has no such task."""
        ...

    async def save(self, task: Task, sequence: int) -> None:
        """Save ``task`` as its snapshot, current as of event ``sequence``."""
        ...

    async def append(self, task_id: str, events: Sequence[StoredEvent]) -> None:
        """Append events to the task's log, in order."""
        ...

    async def events(self, task_id: str, after: int = 0) -> list[StoredEvent]:
        """The logged events of a task with a sequence number above ``after``, in order."""
        ...

    async def delete(self, task_id: str) -> None:
        """Forget a task and its events (no error if it is unknown)."""
        ...
