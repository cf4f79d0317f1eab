"""Live tasks and agent runs: where every event is checked, numbered, folded and stored.

Theory of operation
-------------------
A ``LiveTask`` is a task this process is working on or someone here is following: the
task object the events fold into, its ``EventLog``, and its run slot. It stays in the
registry while anything *holds* it (``TaskRuns.hold``: a run, a call, a resubscriber),
and leaves it when the last holder lets go, so no entry outlives its use.

A task is worked on by one *turn* at a time: one agent run, from the message that
starts it to the event that ends the interaction (``input-required``,
``auth-required``, a terminal state, a direct reply). ``LiveTask.begin_turn`` takes the
slot synchronously (the caller has done its last await), or refuses with ``-32602``.
The slot is freed by the publish of the interaction-ending event, *before* any reader
is woken, so a client that answers at once always finds the task free; and at the
latest when the run's coroutine ends, whatever way it ends (``Turn`` is an async
context manager). A run that goes on after its turn ended (cleanup code, a late
event) can no longer emit: the next turn is someone else's.

``TaskRuns.publish`` is the single path every event takes: check it fits the task,
number it, store it (and, when it ends the interaction, the snapshot), then free the
slot and wake the readers. A store write that fails fails the task's readers with an
``InternalError``, settles the task as ``failed`` in the store if it can, and drops the
task from the registry.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import AsyncIterator, Coroutine, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace
from threading import get_ident
from typing import TYPE_CHECKING, Any, Protocol

from parley.protocol import (
    ACTIVE_STATES,
    InternalError,
    InvalidAgentResponseError,
    TaskNotFoundError,
    apply,
    ends_interaction,
    is_terminal,
)
from parley.server.agent._agent import AgentExecutor
from parley.server.agent._context import RequestContext
from parley.server.agent._ids import now, timestamp
from parley.server.tasks._bus import Announcer, Bus
from parley.server.tasks._events import EventLog
from parley.server.tasks._execute import MOVED, STORE_FAILED, final_status, run_turn
from parley.server.tasks._live import LiveTask, Turn, busy, check_fits, may_use
from parley.server.tasks._owners import Ownership
from parley.stores import Lease, LeaseLostError, OutboxEntry, Store, StoredEvent
from parley.types import (
    Event,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
)

if TYPE_CHECKING:
    from parley.telemetry import Telemetry

logger = logging.getLogger("parley.server")

_MADE = (Message, Task)


class Notifications(Protocol):
    """What an event of a task causes in the push outbox, written with the event."""

    async def entries(
        self, live: LiveTask, stored: StoredEvent, task: Task | None
    ) -> Sequence[OutboxEntry]:
        """The entries ``stored`` causes, for ``task`` as the events before it left it."""

    def wake(self) -> None:
        """Entries were written: deliver them."""


class TaskRuns:
    """The registry of live tasks and the machinery that runs agents on them."""

    def __init__(
        self,
        agent: AgentExecutor,
        store: Store,
        owners: Ownership | None = None,
        bus: Bus | None = None,
    ) -> None:
        self.agent = agent
        self.store = store
        self.owners = owners
        """This process's leases, when the store is shared with other processes."""
        self.bus = bus
        self.announcer = Announcer(bus) if bus is not None else None
        self.live: dict[str, LiveTask] = {}
        self.notifications: Notifications | None = None
        self.telemetry: Telemetry | None = None
        """Spans and metrics of runs, events and writes (see ``parley.telemetry``)."""
        """Push: the outbox entries each stored event causes (see ``parley.server.push``)."""
        self._background: set[asyncio.Task[None]] = set()
        self._drops = 0
        """How many live tasks left the registry: ``attach`` reads again if one did
        while it read the store."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = 0
        """The loop runs were last started on, and its thread (see ``_running_loop``)."""

    async def attach(self, task_id: str) -> LiveTask | None:
        """The live task for ``task_id`` (brought back from the store if needed), held:
        the caller must ``let_go`` of it."""
        while True:
            live = self.live.get(task_id)
            if live is not None:
                break
            drops = self._drops
            snapshot = await self.store.get(task_id)
            if snapshot is None:
                return None
            live = self.live.get(task_id)  # another call may have attached it meanwhile
            if live is not None:
                break
            if self._drops != drops:
                continue  # a live task left meanwhile: what was read may predate its end
            task = snapshot.task
            log = EventLog(snapshot.sequence)
            live = LiveTask(task.id, task.context_id, task, log, snapshot.owner)
            self.live[task_id] = live
            break
        live.holders += 1
        return live

    @asynccontextmanager
    async def hold(self, task_id: str, caller: str | None = None) -> AsyncIterator[LiveTask]:
        """The live task, held for the block; ``TaskNotFoundError`` if there is none, or
        if it belongs to someone other than ``caller`` (``owner_of`` the call): another
        principal's task is not found, with no hint that it exists."""
        live = await self.attach(task_id)
        if live is None:
            raise TaskNotFoundError(f"Task {task_id} was not found")
        try:
            # still being created (not a task yet), or not the caller's
            if live.task is None or not may_use(live.owner, caller):
                raise TaskNotFoundError(f"Task {task_id} was not found")
            yield live
        finally:
            self.let_go(live)

    def begin(self, live: LiveTask) -> Turn:
        """``live.begin_turn``, with this process's leases (synchronous)."""
        return live.begin_turn(self.owners)

    async def own(self, live: LiveTask, turn: Turn) -> None:
        """With a shared store: take the task's lease for ``turn`` and bring ``live`` up
        to date with the store (another process may have moved the task on; read only
        when the lease says the store is ahead, or cannot say). Raises
        ``InvalidParamsError`` (and frees the slot) if another process runs the task."""
        if self.owners is None:
            return
        lease = await self.owners.take(live.task_id)
        if lease is None:
            turn.end()
            raise busy(live.task_id)
        turn.lease = lease
        if lease.last_sequence is not None and lease.last_sequence <= live.log.last_sequence:
            return  # the store has nothing this process has not seen (a task made here)
        try:
            await self.catch_up(live)
        except BaseException:
            await turn.give_up_lease()
            turn.end()
            raise

    async def catch_up(self, live: LiveTask) -> None:
        """Hand ``live``'s readers the events other processes stored since it last
        looked, in order, and take the task as the store has it."""
        async with live.publishing:
            if live.broken or live.log.closed:
                return
            logged = await self.store.events(live.task_id, live.log.last_sequence)
            for stored in logged:
                if stored.sequence != live.log.last_sequence + 1:
                    break
                live.task = apply(live.task, stored.event)
                live.log.append(stored.event)
            if logged:  # the snapshot also holds what no event carries (answers)
                snapshot = await self.store.get(live.task_id)
                if snapshot is not None and snapshot.sequence == live.log.last_sequence:
                    live.task = snapshot.task

    def maybe_elsewhere(self, live: LiveTask) -> bool:
        """Whether another process may run or have moved on ``live`` (a shared store,
        and no run of it here): its copy here is only as fresh as the last note heard."""
        return self.owners is not None and live.turn is None and live.task is not None

    async def elsewhere(self, live: LiveTask, fresh: bool = False) -> bool:
        """With a shared store: bring ``live`` up to date (unless ``fresh``: just read
        from the store), and say whether the task is active but not run here. Another
        process runs it (its events come here through the bus while a reader here
        ``following`` it), or its process died and its lease expired, and the recovery
        sweep of some process (this one's too) settles it soon: either way there is
        more to wait for."""
        if not self.maybe_elsewhere(live):
            return False
        if not fresh:
            await self.catch_up(live)
        assert live.task is not None
        return live.turn is None and live.task.status.state in ACTIVE_STATES

    @contextmanager
    def following(self, task_id: str) -> Iterator[None]:
        """For the block, a reader here waits for the task's events, wherever it runs:
        the other processes note them (see ``Bus.follow``)."""
        bus = self.bus
        if bus is None:
            yield
            return
        bus.follow(task_id)
        try:
            yield
        finally:
            bus.unfollow(task_id)

    def heard(self, task_id: str, sequence: int | None) -> None:
        """A note from the bus: ``task_id`` has events up to ``sequence`` (``None``:
        maybe any; ``task_id`` ``"*"``: catch up on every task here)."""
        lives = [self.live.get(task_id)] if task_id != "*" else list(self.live.values())
        for live in lives:
            if live is None or _writes_here(live):
                continue  # not followed here, or run here: this process wrote them
            if sequence is not None and live.log.last_sequence >= sequence:
                continue
            self.spawn(self.catch_up(live), f"parley-catch-up-{live.task_id}")

    def holding(self) -> dict[str, int]:
        """The leases this process holds: task id -> fencing token."""
        return {
            live.task_id: live.turn.lease.token
            for live in self.live.values()
            if live.turn is not None and live.turn.lease is not None and not live.turn.lease.new
        }

    def lost_leases(self, lost: dict[str, int]) -> None:
        """The heartbeat could not renew these leases (task id -> token): stop their runs
        here, unless the task has been given up or taken again since (another token)."""
        for task_id, token in lost.items():
            live = self.live.get(task_id)
            turn = live.turn if live is not None else None
            lease = turn.lease if turn is not None else None
            if live is not None and lease is not None and lease.token == token:
                self.lost(live, turn)

    def spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(work, name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def create(
        self,
        task_id: str,
        context_id: str,
        message: Message,
        owner: str | None = None,
        reply_scope: str | None = None,
        push_configs: tuple[tuple[str, str], ...] | None = None,
    ) -> LiveTask:
        """A new task of ``owner``, held (the caller starts its first run or lets go);
        ``reply_scope`` and ``push_configs`` as ``LiveTask`` has them."""
        received = time.time_ns() // 1000
        live = LiveTask(
            task_id, context_id, None, EventLog(), owner, 1, message, received, reply_scope,
            push_configs,
        )  # fmt: skip
        # by position: no keywords (see ``CallContext.from_headers``)
        self.live[task_id] = live
        return live

    def let_go(self, live: LiveTask) -> None:
        """Drop a hold; the task leaves the registry when no one holds it."""
        live.holders -= 1
        if live.holders > 0:
            return
        self._drop(live)
        if live.task is None or is_terminal(live.task.status.state):
            live.log.close()

    def _drop(self, live: LiveTask) -> None:
        if self.live.get(live.task_id) is live:
            del self.live[live.task_id]
            self._drops += 1

    async def forget_missing(self) -> None:
        """Close the readers of held tasks the store no longer has (retention removed
        them while a resubscriber waited for the next turn)."""
        for live in list(self.live.values()):
            idle = live.turn is None and live.task is not None
            if idle and await self.store.get(live.task_id) is None:
                self._drop(live)
                live.log.close()

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
            if (turn is not None and turn.ended) or live.broken:
                raise InvalidAgentResponseError(
                    f"This run on task {live.task_id} has ended: it can emit no more events"
                )
            # with no task yet, ``first`` is a Task or a Message (see above); asked as
            # the Task it usually is: a model's isinstance that fails is slow
            if live.task is None and not isinstance(first, Task):
                check_fits(live, first, None)
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
                check_fits(live, event, task)
            except InvalidAgentResponseError as error:
                return task, False, error
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
        live.broken = True
        turn = live.turn
        if turn is not None:
            turn.end()
        self._drop(live)
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

    if sys.version_info >= (3, 12):

        def start(self, live: LiveTask, turn: Turn, context: RequestContext) -> None:
            """Run the agent for ``context`` in the background, in ``turn``; the run holds
            the task (the caller's hold passes to it).

            The run starts eagerly: its first step, up to its first real suspension,
            runs now, as the current task (timeouts and cancellation work as in any
            task), and a run that ends in it (an echo on the memory store) is never
            scheduled: no loop turn, no wake-up of the caller. So the log's loop is set
            before, for the run's end to clear, and a run over already is not kept
            (``ran`` found no ``turn.run`` to forget). ``turn.run`` is ``None`` until
            the first step is over: only the run itself can act meanwhile, and
            ``Turn.stop`` and ``tasks/cancel`` leave the run alone when it is the
            caller. A loop with a task factory of its own (a user's tracing) makes the
            run with it, started as the factory starts it."""
            loop = self._running_loop()
            live.log.loop = loop  # the futures of the run's readers (``EventLog.first``)
            work, name = run_turn(self, live, turn, context), f"parley-run-{live.task_id}"
            if loop.get_task_factory() is None:
                run = asyncio.Task(work, loop=loop, name=name, eager_start=True)
            else:
                run = loop.create_task(work, name=name)
            turn.run = run
            if not run.done():  # kept until ``ran`` (a done callback costs a loop turn)
                self._background.add(run)

    else:

        def start(self, live: LiveTask, turn: Turn, context: RequestContext) -> None:
            """Run the agent for ``context`` in the background, in ``turn``; the run holds
            the task (the caller's hold passes to it). Python 3.11 cannot start a task
            eagerly (the ``start`` of 3.12+, above): the run is scheduled. Which one is
            chosen when the class is made, not on every run."""
            loop = self._running_loop()
            live.log.loop = loop  # the futures of the run's readers (``EventLog.first``)
            run = loop.create_task(
                run_turn(self, live, turn, context), name=f"parley-run-{live.task_id}"
            )  # the loop's own: asyncio.create_task is one more call around it
            turn.run = run
            self._background.add(run)  # kept until ``ran`` (a done callback costs a loop turn)

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        """The running loop, as ``asyncio.get_running_loop()`` gives it, which on Python
        3.11 makes a ``getpid`` system call every time. The loop of the last run is it
        when it is running in this thread: a thread runs one loop at a time."""
        loop = self._loop
        if loop is None or self._thread != get_ident() or not loop.is_running():
            loop = self._loop = asyncio.get_running_loop()
            self._thread = get_ident()
        return loop

    def ran(self, turn: Turn) -> None:
        """``turn``'s run is ending (``run_turn``'s last step): no longer kept."""
        if turn.run is not None:
            self._background.discard(turn.run)

    async def finish(self, live: LiveTask, state: TaskState, reason: str) -> None:
        """Record a final status the agent did not emit (failure, forced cancel)."""
        if live.broken or (live.task is not None and is_terminal(live.task.status.state)):
            return
        try:
            await self.publish(live, final_status(live, state, reason))
        except Exception:
            logger.exception("could not record %s for task %s", state.value, live.task_id)

    async def aclose(self) -> None:
        """Cancel every run still going, and end every reader (server shutdown)."""
        if self.announcer is not None:
            await self.announcer.aclose()
        runs = list(self._background)
        for run in runs:
            run.cancel()
        await asyncio.gather(*runs, return_exceptions=True)
        self._background.difference_update(runs)  # one canceled before it began never ``ran``
        for live in list(self.live.values()):
            live.log.close()
        self.live.clear()


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
            check_fits(live, event, task)
        except InvalidAgentResponseError as error:
            return task, False, error
        sequence += 1
        batch.append(StoredEvent(sequence, event))
        task = apply(task, event)
        # a chunk never ends it: no call for each of a stream's chunks
        if type(event) is not TaskArtifactUpdateEvent and ends_interaction(event):
            return task, True, None
    return task, False, None


def _writes_here(live: LiveTask) -> bool:
    """Whether a run of this process holds ``live``'s lease, and so wrote its events. A
    run slot without a lease is not one: a send or a recovery sweep waiting to take the
    lease, which another process may hold and be writing with."""
    turn = live.turn
    return turn is not None and turn.lease is not None
