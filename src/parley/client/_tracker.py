"""``TaskTracker``: the current Task, rebuilt from a stream with the server's reducer."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator

from parley.protocol import apply, is_final, is_terminal
from parley.types import Event, Message, Task, TaskState


class TaskTracker:
    """Folds events into the current ``Task`` with ``parley.protocol.apply``.

    A direct ``Message`` reply (no task) is kept in ``message``.
    """

    def __init__(self, task: Task | None = None) -> None:
        self.task = task
        self.message: Message | None = None

    def apply(self, event: Event) -> Task | None:
        """Fold one event in; returns the task as it now stands."""
        if isinstance(event, Message) and self.task is None:
            self.message = event
        self.task = apply(self.task, event)
        return self.task

    async def follow(self, events: AsyncIterable[Event]) -> AsyncIterator[Event]:
        """Pass ``events`` through, folding each in first."""
        async for event in events:
            self.apply(event)
            yield event

    @property
    def state(self) -> TaskState | None:
        return self.task.status.state if self.task is not None else None

    @property
    def done(self) -> bool:
        """The run is over: a direct reply, or the task is terminal or interrupted."""
        return self.message is not None or (self.state is not None and is_final(self.state))

    @property
    def terminal(self) -> bool:
        return self.state is not None and is_terminal(self.state)
