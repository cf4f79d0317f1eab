"""The publish pipeline: where every event of a task is checked, numbered, folded and
stored, then handed to the task's readers.

``Publisher.publish`` is the single path every event takes: check it fits the task,
number it, store it (and, when it ends the interaction, the snapshot), then free the
slot and wake the readers. The slot is freed by the publish of the interaction-ending
event, *before* any reader is woken, so a client that answers at once always finds the
task free. A store write that fails fails the task's readers with an ``InternalError``,
settles the task as ``failed`` in the store if it can, and drops the task from the
registry (``Move.BREAK``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from parley.protocol import (
    InternalError,
    InvalidAgentResponseError,
    apply,
    ends_interaction,
    is_terminal,
)
from parley.protocol._fits import check_fits
from parley.server.agent._ids import now, timestamp
from parley.server.tasks._bus import Announcer
from parley.server.tasks._live import LiveTask, Move, Phase, Turn, move
from parley.server.tasks._owners import Ownership
from parley.server.tasks._registry import Registry
from parley.stores import Lease, LeaseLostError, OutboxEntry, Store, StoredEvent
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

if TYPE_CHECKING:
    from parley.telemetry import Telemetry

logger = logging.getLogger("parley.server")

STORE_FAILED = "The server could not store the task's progress, so the task was stopped."
MOVED = "Another server process took this task over; follow it there (tasks/resubscribe)."

_MADE = (Message, Task)


class Notifications(Protocol):
    """What an event of a task causes in the push outbox, written with the event."""

    async def entries(
        self, live: LiveTask, stored: StoredEvent, task: Task | None
    ) -> Sequence[OutboxEntry]:
        """The entries ``stored`` causes, for ``task`` as the events before it left it."""

    def wake(self) -> None:
        """Entries were written: deliver them."""


class Publisher:
    """Checks, numbers, folds and stores the events of live tasks."""

    def __init__(
        self,
        registry: Registry,
        store: Store,
        owners: Ownership | None,
        announcer: Announcer | None,
    ) -> None:
        self.registry = registry
        self.store = store
        self.owners = owners
        self.announcer = announcer
        self.notifications: Notifications | None = None
        """Push: the outbox entries each stored event causes (see ``parley.server.push``)."""
        self.telemetry: Telemetry | None = None
        """Spans and metrics of runs, events and writes (see ``parley.telemetry``)."""

    async def publish(self, live: LiveTask, event: Event, turn: Turn | None = None) -> int:
        """Check, number, fold and store one event; returns its sequence number.

        Raises ``InvalidAgentResponseError`` when the event does not fit the task or
        ``turn`` already ended, ``InternalError`` when the store fails.
        """
        return await self.publish_many(live, (event,), turn)

    async def publish_many(
        self, live: LiveTask, events: Sequence[Event], turn: Turn | None = None
    ) -> int:
        """``publish`` each of ``events`` in order, with one store write for all of them
        (and one wake-up of the readers); returns the last one's sequence number.

        Exactly as publishing them one by one: each is checked against the task as the
        ones before it left it, and an event that does not fit raises once the ones
        before it are stored. The events after one that ends the interaction are
        published on their own (and so refused: the turn has ended).
        """
        first = events[0]
        if live.task is None and type(first) is not Task and not isinstance(first, _MADE):
            await self.publish_many(live, (self._new_task(live),), turn)
        if not live.try_take():  # its publishing gate (``LiveTask.publishing``)
            await live.take()
        try:
            if (turn is not None and turn.ended) or live.phase is Phase.BROKEN:
                raise InvalidAgentResponseError(
                    f"This run on task {live.task_id} has ended: it can emit no more events"
                )
            # with no task yet, ``first`` is a Task or a Message (see above); asked as
            # the Task it usually is: a model's isinstance that fails is slow
            if live.task is None and not isinstance(first, Task):
                check_fits(live.task_id, live.context_id, first, None)
                if live.turn is not None:
                    live.turn.end()
                sequence = live.log.append(first)  # a direct reply: no task, nothing to store
                stored = 1
            else:
                stored, sequence = await self._store(live, events)
        finally:
            live.release()
        if live.task is None and live.reply_scope is not None:
            await self._keep_reply(live, first)
        if stored < len(events):
            for rest in events[stored:]:  # after the end of the interaction: refused
                sequence = await self.publish_many(live, (rest,), turn)
        return sequence

    async def _keep_reply(self, live: LiveTask, reply: Event) -> None:
        """Record the agent's direct reply for a repeat of the message it answers
        (``message/send`` and ``message/stream`` alike; see ``_idempotency``). The reply
        is out already: a failure costs a repeat its answer, and is logged."""
        message = live.pending_user_message
        assert live.reply_scope is not None
        assert message is not None
        assert isinstance(reply, Message)
        try:
            await self.store.save_reply(live.reply_scope, message.message_id, reply)
        except Exception:
            logger.exception("could not record the direct reply of task %s", live.task_id)

    async def _store(self, live: LiveTask, events: Sequence[Event]) -> tuple[int, int]:
        """Check, fold and store ``events`` up to the first that ends the interaction
        (``publishing`` held; see ``publish_many``): how many, and the last one's
        sequence number."""
        current = live.turn
        batch: list[StoredEvent] = []
        outbox: list[OutboxEntry] = []
        try:
            if self.notifications is None or live.push_configs == ():
                # no push config: nothing to await, so no coroutine a write
                task, ends, refused = _fold(live, events, batch)
            else:
                task, ends, refused = await self._fold_notified(live, events, batch, outbox)
            if not batch:
                raise refused or InvalidAgentResponseError("no event to publish")
            assert task is not None
            # Stored before any reader sees it: a sequence number a client was given
            # always names the same event, even after a crash and restart.
            lease = None if self.owners is None else self._writing_lease(current)
            write = self.store.append(
                live.task_id,
                batch,
                outbox=outbox,
                lease=lease,
                snapshot=task if ends else None,
                release=ends and lease is not None,  # before the slot is free
                owner=live.owner,
            )
            await (write if self.telemetry is None else self.telemetry.store_write(write, batch))
            if current is not None:
                current.lease = None if ends or lease is None else replace(lease, new=False)
            if outbox and self.notifications is not None:
                self.notifications.wake()
        except InvalidAgentResponseError:
            raise
        except LeaseLostError:
            self.lost(live, current)
            raise InternalError(MOVED) from None
        except Exception:
            await self.store_failed(live, live.log.last_sequence + len(batch))
            raise InternalError(STORE_FAILED) from None
        if self.telemetry is not None:
            self.telemetry.stored(batch, len(outbox))
        live.task = task
        if ends and live.turn is not None:
            live.turn.end()
        sequence = live.log.extend(batch, ends)
        if self.announcer is not None:
            self.announcer.announce(live.task_id, sequence)
        if refused is not None:
            raise refused
        return len(batch), sequence

    async def _fold_notified(
        self,
        live: LiveTask,
        events: Sequence[Event],
        batch: list[StoredEvent],
        outbox: list[OutboxEntry],
    ) -> tuple[Task | None, bool, InvalidAgentResponseError | None]:
        """``_fold``, with the push notifications each event causes put into ``outbox``."""
        notifications = self.notifications
        assert notifications is not None
        task = live.task
        sequence = live.log.last_sequence
        for event in events:
            try:
                check_fits(live.task_id, live.context_id, event, task)
            except InvalidAgentResponseError as error:
                return task, False, error
            if task is None:
                begun(live, event)
            sequence += 1
            stored = StoredEvent(sequence, event)
            batch.append(stored)
            # folds a copy: before the task changes. Asked again each event: the
            # entries' await may see the configs change (``push_configs_changed``)
            if live.push_configs != ():
                outbox.extend(await notifications.entries(live, stored, task))
            task = apply(task, event)
            if type(event) is not TaskArtifactUpdateEvent and ends_interaction(event):
                return task, True, None
        return task, False, None

    def _writing_lease(self, turn: Turn | None) -> Lease | None:
        """The lease an append of ``turn`` carries: a new task's, not stored yet, runs
        from now (however long the agent took to its first event)."""
        lease = turn.lease if turn is not None else None
        if lease is not None and lease.new and self.owners is not None:
            return self.owners.promise(lease.task_id)
        return lease

    def _break(self, live: LiveTask, reason: str) -> Turn | None:
        """Stop serving ``live`` from here: fail its readers, free its slot."""
        turn = live.turn
        move(live, Move.BREAK)
        if turn is not None:
            turn.end()
        self.registry.drop(live)
        live.log.fail(InternalError(reason))
        return turn

    def lost(self, live: LiveTask, turn: Turn | None) -> None:
        """Another process took the task over: stop its run here, write nothing more."""
        logger.warning("task %s was taken over by another process", live.task_id)
        if turn is not None:
            turn.lease = None
        self._break(live, MOVED)
        if turn is not None:
            turn.stop()

    async def store_failed(self, live: LiveTask, sequence: int) -> None:
        logger.exception("could not store an event of task %s", live.task_id)
        turn = self._break(live, STORE_FAILED)
        if live.task is None:
            return
        failed = final_status(live, TaskState.failed, STORE_FAILED)
        lease = turn.lease if turn is not None else None
        try:  # settle it where the store can still take it; recovery does it otherwise
            settled = (StoredEvent(sequence, failed),)
            await self.store.append(live.task_id, settled, lease=lease, owner=live.owner)
            task = apply(live.task, failed)
            assert task is not None
            await self.store.save(task, sequence, owner=live.owner)
            if self.announcer is not None:
                self.announcer.announce(live.task_id, sequence)
        except Exception:
            logger.exception("could not settle task %s after a store failure", live.task_id)

    def _new_task(self, live: LiveTask) -> Task:
        message = live.pending_user_message
        return Task(
            id=live.task_id,
            context_id=live.context_id,
            status=TaskStatus(
                state=TaskState.submitted,
                timestamp=timestamp(live.received) if live.received else now(),
            ),
            history=[message] if message is not None else None,
        )

    async def finish(self, live: LiveTask, state: TaskState, reason: str) -> None:
        """Record a final status the agent did not emit (failure, forced cancel)."""
        if live.phase is Phase.BROKEN or (
            live.task is not None and is_terminal(live.task.status.state)
        ):
            return
        try:
            await self.publish(live, final_status(live, state, reason))
        except Exception:
            logger.exception("could not record %s for task %s", state.value, live.task_id)


def _fold(
    live: LiveTask, events: Sequence[Event], batch: list[StoredEvent]
) -> tuple[Task | None, bool, InvalidAgentResponseError | None]:
    """Check, number and fold ``events`` into ``batch``, up to the first that ends the
    interaction or does not fit (``publishing`` held): the task as they leave it
    (``None``: none fit), whether the last ends the interaction, and why the one after
    it was refused. A task with no push config causes no notification: nothing here
    awaits (``TaskRuns._fold_notified`` does the same with them)."""
    task = live.task
    sequence = live.log.last_sequence
    for event in events:
        try:
            check_fits(live.task_id, live.context_id, event, task)
        except InvalidAgentResponseError as error:
            return task, False, error
        if task is None:
            begun(live, event)
        sequence += 1
        batch.append(StoredEvent(sequence, event))
        task = apply(task, event)
        # a chunk never ends it: no call for each of a stream's chunks
        if type(event) is not TaskArtifactUpdateEvent and ends_interaction(event):
            return task, True, None
    return task, False, None


def begun(live: LiveTask, event: Event) -> None:
    """Give a new task the message it began with: its first event, when that is the
    ``Task`` (with no history of its own)."""
    message = live.pending_user_message
    if message is not None and isinstance(event, Task) and not event.history:
        # set as ``copied`` sets fields: pydantic's ``__setattr__`` costs more
        event.__dict__["history"] = [message]
        event.__pydantic_fields_set__.add("history")


def final_status(live: LiveTask, state: TaskState, reason: str) -> Event:
    """The final status update of a task the agent did not end: ``reason`` as the
    status message."""
    message = Message(
        message_id=f"{live.task_id}-{state.value}",
        role=Role.agent,
        parts=[TextPart(text=reason)],
        task_id=live.task_id,
        context_id=live.context_id,
    )
    return TaskStatusUpdateEvent(
        task_id=live.task_id,
        context_id=live.context_id,
        status=TaskStatus(state=state, message=message, timestamp=now()),
        final=True,
    )
