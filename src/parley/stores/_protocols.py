"""The small protocols every task store implements.

A store keeps three things per task: the *snapshot* (the Task as of some event sequence
number), the *event log* (every event with its sequence number) and the ids of the
messages that started or continued it (so a repeated ``message/send`` finds the first).
The request handler appends each event as it happens and saves the snapshot at
checkpoints (when a run reaches a terminal or interrupted state, or records the user's
next message), so the cost per event stays flat however large a task grows; ``get``
returns the snapshot with the events logged after it folded in, so it is current even
after a crash between checkpoints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from parley.types import Event, Message, Task


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


@dataclass(frozen=True, slots=True)
class SentMessage:
    """What a message sent earlier (same ``messageId``, same task or context) led to."""

    task_id: str
    """The task the message started or continued."""
    reply: Message | None = None
    """The agent's direct reply, when it answered with a Message instead of a task."""


class TaskStore(Protocol):
    """Where tasks, their event logs and the ids of the messages sent to them live.

    Implementations must be safe to call concurrently from one event loop. A store may
    forget the event log of a task once that task's terminal snapshot is saved (the
    snapshot then is the whole truth); ``events`` then returns what it still has.
    """

    async def get(self, task_id: str) -> TaskSnapshot | None:
        """The task as of its last stored event (its snapshot with the events logged
        after the snapshot folded in), or ``None`` if the store has no such task."""
        ...

    async def save(self, task: Task, sequence: int) -> None:
        """Save ``task`` as its snapshot, current as of event ``sequence``."""
        ...

    async def append(self, task_id: str, events: Sequence[StoredEvent]) -> None:
        """Append events to the task's log, in order.

        Raises ``ValueError`` (and stores none of ``events``) if a sequence number is
        already in the log: a logged event is never overwritten."""
        ...

    async def events(self, task_id: str, after: int = 0) -> list[StoredEvent]:
        """The logged events of a task with a sequence number above ``after``, in order."""
        ...

    async def delete(self, task_id: str) -> None:
        """Forget a task, its events and its sent messages (no error if it is unknown)."""
        ...

    async def active(self) -> list[str]:
        """Ids of the tasks whose last stored state is ``submitted`` or ``working``: the
        tasks an agent was running on, as far as the store knows."""
        ...

    async def find_message(self, scope: str, message_id: str) -> SentMessage | None:
        """What message ``message_id`` sent in ``scope`` (a task or context id) led to,
        or ``None`` if it was never sent there."""
        ...

    async def claim_message(self, scope: str, message_id: str, task_id: str) -> SentMessage | None:
        """Record that message ``message_id`` in ``scope`` goes to ``task_id``, atomically:
        returns ``None`` when this call recorded it, or what the earlier send recorded."""
        ...

    async def save_reply(self, scope: str, message_id: str, reply: Message) -> None:
        """Record the agent's direct reply to a claimed message."""
        ...

    async def expire(self, *, ended_before: datetime, waiting_before: datetime) -> int:
        """Delete tasks (with their events and sent messages) in a terminal state with no
        activity since ``ended_before``, and in an interrupted state with no activity
        since ``waiting_before``; returns how many were deleted. Direct replies recorded
        before ``ended_before`` go too."""
        ...


def duplicate(task_id: str, events: Sequence[StoredEvent]) -> str:
    """The message of the ``ValueError`` for events whose sequence is already logged."""
    numbers = ", ".join(str(stored.sequence) for stored in events)
    return f"task {task_id} already has an event numbered {numbers} in its log"
