"""The owner of the task lifecycle: the one way to hold a live task, take its run slot
(and lease) and start the agent's run on it.

Theory of operation
-------------------
Every operation that uses a task goes through ``TaskRuns``:

- ``hold(task_id, caller)`` holds the live task for a block (``TaskNotFoundError`` if
  there is none, or it is another caller's); ``hold_if_any`` yields ``None`` instead.
- ``turn(live)`` takes the run slot, synchronously on entering (no await between the
  caller's checks and it), then, with a shared store, the task's lease, bringing the
  task up to date with the store. It yields ``None`` when another process runs the
  task (the slot given back at once), and gives back the lease, then the slot, on
  every way out of the block, unless a run was started in it.
- ``start(live, turn, context)`` starts the agent's run in the turn: the run takes its
  own hold then, and gives back the lease, the slot and its hold when it ends
  (``run_over``). ``start_new`` makes a new task and starts its first run at once.

The modules it is made of each keep one concern: the registry of live tasks and their
holds (``_registry``), the phases of a live task and the table of their moves
(``_live``), the leases and catching up with other processes (``_leases``), the notes
of the bus (``_following``), the publish pipeline (``_publish``) and the run itself
(``_execute``). No other code reads or changes the registry.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Coroutine
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager
from threading import get_ident
from typing import TYPE_CHECKING, Any

from parley.protocol import TaskNotFoundError
from parley.server.agent._agent import AgentExecutor
from parley.server.agent._context import RequestContext
from parley.server.auth._tenancy import may_use
from parley.server.tasks._bus import Announcer, Bus, push_note
from parley.server.tasks._events import EventLog
from parley.server.tasks._execute import RunSink, run_turn, start_task
from parley.server.tasks._following import Following
from parley.server.tasks._leases import Leases
from parley.server.tasks._live import LiveTask, Turn
from parley.server.tasks._owners import Ownership
from parley.server.tasks._publish import Notifications, Publisher
from parley.server.tasks._registry import Registry
from parley.stores import Store
from parley.types import Message, TaskState

if TYPE_CHECKING:
    from parley.telemetry import Telemetry


class TaskRuns:
    """The lifecycle owner of this process's live tasks and the agent's runs on them."""

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
        self.registry = Registry(store)
        announcer = Announcer(bus) if bus is not None else None
        self.publisher = Publisher(self.registry, store, owners, announcer)
        self.leases = Leases(self.registry, store, owners, self.publisher.lost)
        self.follower = Following(self.registry, bus, self.leases.catch_up, self.spawn)
        """What this process hears over the bus (the bus's ``Listener``)."""
        self._background: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = 0
        """The loop runs were last started on, and its thread (see ``_running_loop``)."""

    @property
    def notifications(self) -> Notifications | None:
        """Push: the outbox entries each stored event causes (see ``parley.server.push``)."""
        return self.publisher.notifications

    @notifications.setter
    def notifications(self, notifications: Notifications | None) -> None:
        self.publisher.notifications = notifications

    @property
    def telemetry(self) -> Telemetry | None:
        """Spans and metrics of runs, events and writes (see ``parley.telemetry``)."""
        return self.publisher.telemetry

    @telemetry.setter
    def telemetry(self, telemetry: Telemetry | None) -> None:
        self.publisher.telemetry = telemetry

    # -- holding a task -----------------------------------------------------------

    @asynccontextmanager
    async def hold(self, task_id: str, caller: str | None = None) -> AsyncIterator[LiveTask]:
        """The live task, held for the block; ``TaskNotFoundError`` if there is none, or
        if it belongs to someone other than ``caller`` (``scope_of`` the call): another
        principal's task is not found, with no hint that it exists."""
        async with self.registry.hold(task_id) as live:
            # none, still being created (not a task yet), or not the caller's
            if live is None or live.task is None or not may_use(live.owner, caller):
                raise TaskNotFoundError(f"Task {task_id} was not found")
            yield live

    def hold_if_any(self, task_id: str) -> AbstractAsyncContextManager[LiveTask | None]:
        """The live task for ``task_id`` (brought back from the store if needed), held
        for the block; ``None``: there is no such task. Whoever owns it, made or not."""
        return self.registry.hold(task_id)

    def is_live(self, task_id: str) -> bool:
        """Whether ``task_id`` is live here now (held by a run, a call or a reader)."""
        return task_id in self.registry

    def peek(self, task_id: str) -> LiveTask | None:
        """The live task here, not held: a look at it now, used before the next await."""
        return self.registry.get(task_id)

    def running(self, task_id: str) -> LiveTask | None:
        """The live task, if a run of this process works on it now (not held)."""
        live = self.registry.get(task_id)
        return live if live is not None and live.turn is not None else None

    # -- the run slot and the lease ---------------------------------------------------

    @asynccontextmanager
    async def turn(self, live: LiveTask) -> AsyncIterator[Turn | None]:
        """The run slot of held ``live`` (and its lease, with a shared store), for the
        block; ``None`` when another process runs the task. Raises
        ``InvalidParamsError`` if a run here holds the slot."""
        turn = live.begin_turn(self.owners)  # taken before the first await
        try:
            owned = await self.leases.take(live, turn)
        except BaseException:
            await turn.close()
            raise
        if not owned:
            turn.end()
            yield None
            return
        try:
            yield turn
        finally:
            if not turn.handed:
                await turn.close()

    def start(self, live: LiveTask, turn: Turn, context: RequestContext) -> None:
        """Run the agent for ``context`` in the background, in ``turn``: the run holds
        the task and the turn from now on, and gives both back when it ends.

        On Python 3.12+ the run starts eagerly (``start_task``), so the log's loop is
        set before, for the run's end to clear, and a run over already is not kept
        (``run_over`` found no ``turn.run`` to forget). ``turn.run`` is ``None`` until
        the first step is over: only the run itself can act meanwhile, and
        ``Turn.stop`` and ``tasks/cancel`` leave the run alone when it is the caller."""
        self.registry.take_hold(live)  # the run's own hold
        turn.handed = True
        loop = self._running_loop()
        live.log.loop = loop  # the futures of the run's readers (``EventLog.first``)
        run = start_task(loop, run_turn(self, live, turn, context), f"parley-run-{live.task_id}")
        turn.run = run
        if not run.done():  # kept until ``run_over`` (a done callback costs a loop turn)
            self._background.add(run)

    def start_new(
        self,
        task_id: str,
        context_id: str,
        message: Message,
        owner: str | None,
        reply_scope: str | None,
        push_configs: tuple[tuple[str, str], ...] | None,
        context: RequestContext,
    ) -> LiveTask:
        """Make a new task of ``owner`` and start its first run, with no await: the task
        and its run slot are taken together. ``reply_scope`` and ``push_configs`` as
        ``LiveTask`` has them; the run takes the task's lease with its first write."""
        received = time.time_ns() // 1000
        live = LiveTask(
            task_id, context_id, None, EventLog(), owner, 0, message, received, reply_scope,
            push_configs,
        )  # fmt: skip
        # by position: no keywords (see ``CallContext.from_headers``)
        self.registry.add(live)
        self.start(live, live.begin_turn(self.owners), context)
        return live

    def run_over(self, live: LiveTask, turn: Turn) -> None:
        """``turn``'s run is ending (``run_turn``'s last step, its lease given back): the
        slot, then the run's hold are given back."""
        turn.end()
        if turn.run is not None:
            self._background.discard(turn.run)
        self.registry.let_go(live)
        if live.last_turn is turn:  # over: no cycle (live -> turn -> live) keeps the log
            live.last_turn = None
            live.log.loop = None  # known while a run is on it (``start``)

    def sink(self, live: LiveTask) -> RunSink:
        """What an agent's ``cancel`` emits into, outside any run's turn."""
        return RunSink(self.publisher, live)

    async def finish(self, live: LiveTask, state: TaskState, reason: str) -> None:
        """Record a final status the agent did not emit (failure, forced cancel)."""
        await self.publisher.finish(live, state, reason)

    # -- other processes ------------------------------------------------------------

    async def catch_up(self, live: LiveTask) -> None:
        """Bring held ``live`` up to date with what other processes stored."""
        await self.leases.catch_up(live)

    def maybe_elsewhere(self, live: LiveTask) -> bool:
        """Whether another process may run or have moved on ``live``."""
        return self.leases.maybe_elsewhere(live)

    async def elsewhere(self, live: LiveTask, fresh: bool = False) -> bool:
        """Whether ``live`` is active but not run here (see ``Leases.elsewhere``)."""
        return await self.leases.elsewhere(live, fresh)

    def following(self, task_id: str) -> AbstractContextManager[None]:
        """For the block, a reader here waits for the task's events, wherever it runs."""
        return self.follower.following(task_id)

    async def push_configs_changed(self, task_id: str) -> None:
        """One of the task's push configs was just stored or deleted: its next event reads
        them again, here and, through the bus, in the process that runs it."""
        self.follower.push_configs_changed(task_id)
        if self.bus is not None:
            await self.bus.send(push_note(task_id))

    # -- background work and shutdown --------------------------------------------------

    def spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(work, name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        """The running loop, as ``asyncio.get_running_loop()`` gives it, which on Python
        3.11 makes a ``getpid`` system call every time. The loop of the last run is it
        when it is running in this thread: a thread runs one loop at a time."""
        loop = self._loop
        if loop is None or self._thread != get_ident() or not loop.is_running():
            loop = self._loop = asyncio.get_running_loop()
            self._thread = get_ident()
        return loop

    async def forget_missing(self) -> None:
        """Close the readers of held tasks the store no longer has (retention removed
        them while a resubscriber waited for the next turn)."""
        for live in self.registry:
            idle = live.turn is None and live.task is not None
            if idle and await self.store.get(live.task_id) is None:
                self.registry.drop(live)
                live.log.close()

    async def aclose(self) -> None:
        """Cancel every run still going, and end every reader (server shutdown)."""
        if self.publisher.announcer is not None:
            await self.publisher.announcer.aclose()
        runs = list(self._background)
        for run in runs:
            run.cancel()
        await asyncio.gather(*runs, return_exceptions=True)
        self._background.difference_update(runs)  # one canceled before it began never ended
        self.registry.close()
