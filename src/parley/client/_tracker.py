"""``TaskTracker``: the current Task, rebuilt from a stream with the server's reducer."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable

from parley.protocol import apply, is_final, is_terminal
from parley.types import Event, Message, Task, TaskState, TaskStatusUpdateEvent


class TaskTracker:
    """Folds events into the current ``Task`` with ``parley.protocol.apply``.

    A direct ``Message`` reply (no task) is kept in ``message``. A stream that continues
    a task may start with a status update rather than the Task: pass the task you know
    (or keep one tracker for the conversation); ``state`` follows status updates anyway.
    """

    def __init__(self, task: Task | None = None) -> None:
        self.task = task
        self.message: Message | None = None
        self._state: TaskState | None = None

    def apply(self, event: Event) -> Task | None:
        """Fold one event in; returns the task as it now stands."""
        if isinstance(event, Message) and self.task is None:
            self.message = event
        if isinstance(event, TaskStatusUpdateEvent):
            # Known even when the stream continues a task whose Task object it never sent.
            self._state = event.status.state
        self.task = apply(self.task, event)
        return self.task

    async def follow(self, events: AsyncIterable[Event]) -> AsyncGenerator[Event, None]:
        """Pass ``events`` through, folding each in first."""
        async for event in events:
            self.apply(event)
            yield event

    @property
    def state(self) -> TaskState | None:
        return self.task.status.state if self.task is not None else self._state

    @property
    def done(self) -> bool:
        """The run is over: a direct reply, or the task is terminal or interrupted."""
        return self.message is not None or (self.state is not None and is_final(self.state))

    @property
    def terminal(self) -> bool:
        return self.state is not None and is_terminal(self.state)
