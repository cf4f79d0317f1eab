"""Live tasks and agent runs: where every event is checked, numbered, folded and stored.

A ``LiveTask`` is a task while this process is working on it: the task object the events
fold into, its ``EventLog``, and a lock that lets only one agent run at a time (a second
message for a running task waits its turn, in arrival order). ``TaskRuns.publish`` is
the single path every event takes, whoever emits it (the agent, or the handler recording
a cancel or a failure): check it fits the task, number it in the log, fold it with the
shared reducer, append it to the store, and save the snapshot when the run ends.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from parley.protocol import (
    InvalidAgentResponseError,
    add_to_history,
    apply,
    can_move,
    ends_interaction,
    is_final,
    is_terminal,
)
from parley.server._agent import AgentExecutor
from parley.server._context import RequestContext
from parley.server._events import EventLog
from parley.server._ids import now
from parley.server._recovery import ResumableAgent
from parley.stores import OutboxEntry, Store, StoredEvent
from parley.types import (
    Event,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

logger = logging.getLogger("parley.server")

AGENT_FAILED = "The agent failed while working on this task."
AGENT_STOPPED = "The agent stopped without finishing the task."
CANCELED = "The task was canceled at the client's request."


@dataclass(slots=True, eq=False)
class LiveTask:
    """A task this process is working on."""

    task_id: str
    context_id: str
    task: Task | None
    log: EventLog
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    publishing: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while one event is stored and logged, so numbers are given out in order."""
    users: int = 0
    """Runs started or waiting for the lock; the task is retired when this drops to 0."""
    run: asyncio.Task[None] | None = None
    ended: bool = False
    """True once the latest event ended the interaction (see ``ends_interaction``)."""
    pending_user_message: Message | None = None
    """The incoming message of a new task, until the task exists to hold it."""
    push_configs: tuple[str, ...] | None = None
    """Ids of the task's push configs (``None``: not read from the store yet)."""


class Notifications(Protocol):
    """What an event of a task causes in the push outbox, written with the event."""

    async def entries(self, live: LiveTask, stored: StoredEvent) -> Sequence[OutboxEntry]: ...

    def wake(self) -> None:
        """Entries were written: deliver them."""


class RunSink:
    """The ``EventSink`` handed to the agent for one run (or one cancel)."""

    __slots__ = ("_live", "_runs")

    def __init__(self, runs: TaskRuns, live: LiveTask) -> None:
        self._runs = runs
        self._live = live

    async def emit(self, event: Event) -> None:
        await self._runs.publish(self._live, event)


class TaskRuns:
    """The registry of live tasks and the machinery that runs agents on them."""

    def __init__(self, agent: AgentExecutor, store: Store) -> None:
        self.agent = agent
        self.store = store
        self.live: dict[str, LiveTask] = {}
        self.notifications: Notifications | None = None
        """Push: the outbox entries each stored event causes (see ``parley.server.push``)."""
        self._background: set[asyncio.Task[None]] = set()

    async def attach(self, task_id: str) -> LiveTask | None:
        """The live task for ``task_id``, brought back from the store if needed."""
        live = self.live.get(task_id)
        if live is not None:
            return live
        snapshot = await self.store.get(task_id)
        if snapshot is None:
            return None
        live = self.live.get(task_id)  # another call may have attached it meanwhile
        if live is None:
            task = snapshot.task
            live = LiveTask(task.id, task.context_id, task, EventLog(snapshot.sequence))
            live.ended = is_final(task.status.state)
            self.live[task_id] = live
        return live

    def create(self, task_id: str, context_id: str, message: Message) -> LiveTask:
        live = LiveTask(task_id, context_id, None, EventLog(), pending_user_message=message)
        self.live[task_id] = live
        return live

    def release(self, live: LiveTask) -> None:
        """Drop the task from the registry when no run uses it any more."""
        if live.users == 0 and live.ended and self.live.get(live.task_id) is live:
            del self.live[live.task_id]
            if live.task is not None and is_terminal(live.task.status.state):
                live.log.close()

    async def publish(self, live: LiveTask, event: Event) -> int:
        """Check, number, fold and store one event; returns its sequence number.

        Raises ``InvalidAgentResponseError`` when the event does not fit the task.
        """
        if live.task is None and not isinstance(event, Message | Task):
            await self.publish(live, self._new_task(live))
        async with live.publishing:
            self._check(live, event)
            direct_reply = live.task is None and isinstance(event, Message)
            if not direct_reply:
                # Stored before any reader sees it: a sequence number a client was given
                # always names the same event, even after a crash and restart.
                stored = StoredEvent(live.log.last_sequence + 1, event)
                notifications = self.notifications
                outbox = await notifications.entries(live, stored) if notifications else ()
                await self.store.append(live.task_id, (stored,), outbox=outbox)
                if notifications and outbox:
                    notifications.wake()
            sequence = live.log.append(event)
            live.ended = ends_interaction(event)
            if direct_reply:
                return sequence  # a direct reply: no task, nothing to store
            task = live.task = apply(live.task, event)
            assert task is not None
            if live.ended:
                await self.store.save(task, sequence)
            return sequence

    def _new_task(self, live: LiveTask) -> Task:
        message = live.pending_user_message
        return Task(
            id=live.task_id,
            context_id=live.context_id,
            status=TaskStatus(state=TaskState.submitted, timestamp=now()),
            history=[message] if message is not None else None,
        )

    def _check(self, live: LiveTask, event: Event) -> None:
        task = live.task
        if isinstance(event, Task):
            if event.id != live.task_id or event.context_id != live.context_id:
                raise InvalidAgentResponseError(
                    f"The agent emitted task {event.id}, but this run is for task {live.task_id}"
                )
            if task is None and live.pending_user_message is not None and not event.history:
                event.history = [live.pending_user_message]
        elif isinstance(event, TaskStatusUpdateEvent | TaskArtifactUpdateEvent) and (
            event.task_id != live.task_id or event.context_id != live.context_id
        ):
            raise InvalidAgentResponseError(
                f"The agent emitted an event for task {event.task_id} in context "
                f"{event.context_id}, but this run is for task {live.task_id} in context "
                f"{live.context_id}"
            )
        if task is None:
            return
        current = task.status.state
        if is_terminal(current):
            raise InvalidAgentResponseError(
                f"Task {live.task_id} is already {current.value} and cannot change"
            )
        new = event.status.state if isinstance(event, Task | TaskStatusUpdateEvent) else None
        if new is not None and not can_move(current, new):
            raise InvalidAgentResponseError(
                f"A task cannot move from {current.value} to {new.value}"
            )

    def start(self, live: LiveTask, context: RequestContext) -> None:
        """Start an agent run for ``context`` in the background (queued behind a running one)."""
        live.users += 1
        run = asyncio.create_task(self._run(live, context), name=f"parley-run-{live.task_id}")
        self._background.add(run)
        run.add_done_callback(self._background.discard)

    async def _run(self, live: LiveTask, context: RequestContext) -> None:
        try:
            async with live.lock:
                if live.task is not None and is_terminal(live.task.status.state):
                    return  # canceled while this message waited for its turn
                if live.task is not None:
                    context.task = live.task.model_copy()
                    if context.message is not None:  # None: resumed after a restart
                        await self._record_user_message(live, context)
                live.ended = False
                live.run = asyncio.current_task()
                try:
                    await self._execute(live, context)
                finally:
                    live.run = None
        finally:
            live.users -= 1
            self.release(live)

    async def _record_user_message(self, live: LiveTask, context: RequestContext) -> None:
        assert live.task is not None
        assert context.message is not None
        task = live.task
        question = task.status.message
        if question is not None:  # answered: the question joins the history before the answer
            add_to_history(task, question)
            task.status = task.status.model_copy(update={"message": None})
        add_to_history(task, context.message)
        await self.store.save(live.task, live.log.last_sequence)

    async def _execute(self, live: LiveTask, context: RequestContext) -> None:
        agent = self.agent
        try:
            if context.message is None and isinstance(agent, ResumableAgent):
                await agent.resume(context, RunSink(self, live))
            else:
                await agent.execute(context, RunSink(self, live))
        except asyncio.CancelledError:
            if live.task is not None and is_terminal(live.task.status.state):
                return  # canceled by tasks/cancel: the canceled status is recorded
            raise
        except Exception:
            logger.exception("agent failed on task %s", live.task_id)
            await self.finish(live, TaskState.failed, AGENT_FAILED)
        else:
            if not live.ended:
                logger.warning("agent returned without finishing task %s", live.task_id)
                await self.finish(live, TaskState.failed, AGENT_STOPPED)

    async def finish(self, live: LiveTask, state: TaskState, reason: str) -> None:
        """Record a final status the agent did not emit (failure, forced cancel)."""
        if live.task is not None and is_terminal(live.task.status.state):
            return
        message = Message(
            message_id=f"{live.task_id}-{state.value}",
            role=Role.agent,
            parts=[TextPart(text=reason)],
            task_id=live.task_id,
            context_id=live.context_id,
        )
        try:
            await self.publish(
                live,
                TaskStatusUpdateEvent(
                    task_id=live.task_id,
                    context_id=live.context_id,
                    status=TaskStatus(state=state, message=message, timestamp=now()),
                    final=True,
                ),
            )
        except Exception:
            logger.exception("could not record %s for task %s", state.value, live.task_id)

    async def aclose(self) -> None:
        """Cancel every run still going (server shutdown)."""
        runs = list(self._background)
        for run in runs:
            run.cancel()
        await asyncio.gather(*runs, return_exceptions=True)
