"""A live task and its run slot: what ``TaskRuns`` (``_runs``) works with.

A ``LiveTask`` is a task this process is working on or someone here is following. Its
``Turn`` is the run slot: taken synchronously by ``begin_turn`` (or refused with
``-32602``), freed by the event that ends the interaction or when the run ends.
``check_fits`` says whether an event the agent emits fits the task as it is.
"""

from __future__ import annotations

import asyncio
from collections import deque
from types import TracebackType
from urllib.parse import quote

from parley.protocol import (
    TERMINAL_STATES,
    InvalidAgentResponseError,
    InvalidParamsError,
    can_move,
)
from parley.protocol._states import _WITH_STATUS
from parley.server.agent._context import CallContext, Principal
from parley.server.tasks._events import EventLog
from parley.server.tasks._owners import Ownership
from parley.stores import Lease
from parley.types import (
    Event,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)


class Gate:
    """One task's publishing, one at a time, in the order they came: an ``asyncio.Lock``
    that a caller finding it free takes with no await (``try_take``), as nearly every
    publish does. Released by ``release``, which hands it straight to the first waiter,
    so no one can slip in between."""

    __slots__ = ("_held", "_waiting")

    def __init__(self) -> None:
        self._held = False
        self._waiting: deque[asyncio.Future[None]] | None = None
        """Made by the first caller that has to wait: most tasks' never does."""

    def try_take(self) -> bool:
        """Take the gate if it is free; whether it was."""
        if self._held:
            return False
        self._held = True
        return True

    async def take(self) -> None:
        """Take the gate, waiting for it if it is held."""
        if self.try_take():
            return
        handed = asyncio.get_running_loop().create_future()
        if self._waiting is None:
            self._waiting = deque()
        self._waiting.append(handed)
        try:
            await handed
        except asyncio.CancelledError:
            if handed.done() and not handed.cancelled():  # handed over, but leaving
                self.release()
            raise

    def release(self) -> None:
        """Free the gate, or hand it to the first caller still waiting."""
        waiting = self._waiting
        while waiting:
            handed = waiting.popleft()
            if not handed.done():  # a canceled waiter is skipped
                handed.set_result(None)
                return
        self._held = False

    async def __aenter__(self) -> None:
        await self.take()

    async def __aexit__(self, *exc_info: object) -> None:
        self.release()


class Turn:
    """The run slot of one task, held by one agent run (see the module docs); with a
    shared store, also the task's lease. As an async context manager it gives both
    back on exit, the lease first."""

    __slots__ = ("_live", "_owners", "began", "ended", "lease", "run")

    def __init__(self, live: LiveTask, owners: Ownership | None = None) -> None:
        self._live: LiveTask | None = live
        self._owners = owners
        self.ended = False
        self.run: asyncio.Task[None] | None = None
        """Set by ``TaskRuns.start`` once the run's task exists: ``None`` while a run
        started eagerly takes its first step, when no one but the run can act."""
        self.began = False
        """Whether ``run`` has taken its first step (``run_turn`` sets it)."""
        self.lease: Lease | None = None

    def stop(self) -> None:
        """Cancel the run, from outside it. One that has not begun is ended instead: an
        asyncio task canceled before its first step never runs ``run_turn``'s
        ``finally``, so its slot and its task would stay held; ended, it begins, finds
        its turn over, and lets go."""
        run = self.run
        if run is None or run.done() or run is asyncio.current_task():
            return
        if self.began:
            run.cancel()
        else:
            self.end()

    def end(self) -> None:
        """Free the slot (idempotent)."""
        self.ended = True
        live, self._live = self._live, None  # no cycle with the task's ``last_turn``
        if live is not None and live.turn is self:
            live.turn = None

    async def give_up_lease(self) -> None:
        lease, self.lease = self.lease, None
        if lease is not None and self._owners is not None:
            await self._owners.give_up(lease)

    async def __aenter__(self) -> Turn:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            await self.give_up_lease()
        finally:
            self.end()


class LiveTask(Gate):
    """A task this process is working on, or someone here follows.

    It is its own publishing ``Gate`` (``publishing``): one object a task rather than
    two, one object less made for each new task. Made by hand rather than as a dataclass
    of 17 fields: what ``TaskRuns.create`` sets comes in by position (see
    ``CallContext.from_headers``), and nothing is set twice."""

    __slots__ = (
        "broken",
        "canceling",
        "context_id",
        "holders",
        "last_turn",
        "log",
        "owner",
        "pending_user_message",
        "push_changes",
        "push_configs",
        "received",
        "reply_scope",
        "task",
        "task_id",
        "turn",
    )

    task_id: str
    context_id: str
    task: Task | None
    log: EventLog
    turn: Turn | None
    """The run working on the task until the interaction ends; ``None``: free."""
    last_turn: Turn | None
    """The latest run, which may still be winding down after its turn ended."""
    holders: int
    canceling: asyncio.Future[BaseException | None] | None
    """Set while a ``tasks/cancel`` is under way; what it ended with."""
    broken: bool
    """A store write failed: the task is settled and no longer served from here."""
    pending_user_message: Message | None
    """The incoming message of a new task, until the task exists to hold it."""
    received: int
    """When the message that created the task arrived (its ``submitted`` time), in epoch
    microseconds (``_ids.timestamp``): text only if parley makes the ``submitted`` task
    (an ``@agent`` run makes its own); 0: not known."""
    push_configs: tuple[tuple[str, str], ...] | None
    """The task's push configs, as (config id, the A2A version it was set in)
    (``None``: not read from the store yet, or changed since)."""
    push_changes: int
    """How often the task's push configs were changed here: a read of them that saw
    this move meanwhile may miss a change, and is not kept (``PushService.entries``)."""
    owner: str | None
    """The principal the task belongs to (``owner_of``), ``None``: open to every caller."""
    reply_scope: str | None
    """Where the message that created the task was sent (its ``taskId``, else its
    ``contextId``; ``None``: neither): an agent that answers it with a Message instead
    of a task has that reply recorded there, for a repeat of the message."""

    def __init__(
        self,
        task_id: str,
        context_id: str,
        task: Task | None,
        log: EventLog,
        owner: str | None = None,
        holders: int = 0,
        pending_user_message: Message | None = None,
        received: int = 0,
        reply_scope: str | None = None,
        push_configs: tuple[tuple[str, str], ...] | None = None,
    ) -> None:
        self._held = False  # the gate's (``Gate.__init__``, written out)
        self._waiting = None
        self.task_id = task_id
        self.context_id = context_id
        self.task = task
        self.log = log
        self.turn = None
        self.last_turn = None
        self.holders = holders
        self.canceling = None
        self.broken = False
        self.pending_user_message = pending_user_message
        self.received = received
        self.push_configs = push_configs
        self.push_changes = 0
        self.owner = owner
        self.reply_scope = reply_scope

    @property
    def publishing(self) -> Gate:
        """Held while events are stored and logged, so numbers are given out in order."""
        return self

    def push_configs_changed(self) -> None:
        """Forget the push configs read before: one was stored or deleted just now."""
        self.push_configs = None
        self.push_changes += 1

    def begin_turn(self, owners: Ownership | None = None) -> Turn:
        """Take the run slot, or raise ``InvalidParamsError`` if a run holds it. No
        await may come between the caller's checks and this call."""
        if self.turn is not None:
            raise busy(self.task_id)
        self.turn = self.last_turn = Turn(self, owners)
        return self.turn

    @property
    def winding_down(self) -> bool:
        """Whether the latest run's turn ended but its code still runs."""
        last = self.last_turn
        return last is not None and last.run is not None and not last.run.done()


def owner_of(principal: Principal | None) -> str | None:
    """The owner a caller's tasks get, ``scheme:name`` (``None`` when the agent declares
    no security: there is no principal, and tasks are open to every caller)."""
    return None if principal is None else f"{principal.scheme}:{principal.name}"


DEFAULT_TENANT = ""
"""``scope_of`` a call with no principal and no tenant (an agent without security, a
v0.3 request): every task but the tenants' (``may_use``). Its tasks get no owner."""


def scope_of(call: CallContext | None) -> str | None:
    """The owner a call's tasks get, and so the tasks it may use (``may_use``): the
    caller's ``owner_of`` within its tenant (v1.0's ``tenant``). Without a tenant, the
    owner as before (``scheme:name``; ``DEFAULT_TENANT`` when the agent declares no
    security); with one, ``/{tenant, percent-encoded}/{scheme:name, or nothing}``, so
    tenants never share a task, with or without security. ``None`` (no call, a call the
    server makes itself): every task."""
    if call is None:
        return None
    owner = owner_of(call.principal)
    if call.tenant is None:
        return DEFAULT_TENANT if owner is None else owner
    return f"/{quote(call.tenant, safe='')}/{owner or ''}"


def may_use(owner: str | None, caller: str | None) -> bool:
    """Whether ``caller`` (``scope_of`` the call) may see and use a task of ``owner``:
    its owner may; a call with no principal and no tenant (``DEFAULT_TENANT``) may use
    every task but the tenants' (``/...``: an agent without security keeps its open
    behaviour within the default tenant); a call the server makes itself (``None``)
    every task. A task with no owner is not open to a principal: it was made before the
    agent declared security."""
    if caller is None:
        return True
    if not caller:
        return owner is None or not owner.startswith("/")
    return owner == caller


def busy(task_id: str) -> InvalidParamsError:
    return InvalidParamsError(
        f"Task {task_id} is still working on an earlier message; send again once it "
        "asks for input or finishes, or cancel it first."
    )


_UPDATES = (TaskArtifactUpdateEvent, TaskStatusUpdateEvent)


def check_fits(live: LiveTask, event: Event, task: Task | None) -> None:
    """Refuse ``event`` (``InvalidAgentResponseError``) unless it fits ``task``: the
    live task as the events before it in the same batch leave it."""
    # The kinds parley's models are, by exact type first: a model class's isinstance
    # that fails is ABCMeta's, several times slower (subclasses take the slower way).
    kind = type(event)  # mypy does not narrow by it: the ignores below
    if kind is TaskArtifactUpdateEvent or kind is TaskStatusUpdateEvent:
        _check_ids(live, event)  # type: ignore[arg-type]
    elif kind is Task:
        _check_task(live, event, task)  # type: ignore[arg-type]
    elif isinstance(event, _UPDATES):
        _check_ids(live, event)
    elif isinstance(event, Task):
        _check_task(live, event, task)
    if task is None:
        return
    current = task.status.state
    if current in TERMINAL_STATES:
        raise InvalidAgentResponseError(
            f"Task {live.task_id} is already {current.value} and cannot change"
        )
    if kind is TaskArtifactUpdateEvent:
        return
    if kind is TaskStatusUpdateEvent or kind is Task or isinstance(event, _WITH_STATUS):
        new = event.status.state  # type: ignore[union-attr]
        if new is not current and not can_move(current, new):
            raise InvalidAgentResponseError(
                f"A task cannot move from {current.value} to {new.value}"
            )


def _check_ids(live: LiveTask, event: TaskArtifactUpdateEvent | TaskStatusUpdateEvent) -> None:
    if event.task_id != live.task_id or event.context_id != live.context_id:
        raise InvalidAgentResponseError(
            f"The agent emitted an event for task {event.task_id} in context "
            f"{event.context_id}, but this run is for task {live.task_id} in context "
            f"{live.context_id}"
        )


def _check_task(live: LiveTask, event: Task, task: Task | None) -> None:
    """``check_fits`` of a ``Task`` event; gives a new task the message it began with."""
    if event.id != live.task_id or event.context_id != live.context_id:
        raise InvalidAgentResponseError(
            f"The agent emitted task {event.id}, but this run is for task {live.task_id}"
        )
    if task is None and live.pending_user_message is not None and not event.history:
        # set as ``copied`` sets fields: pydantic's ``__setattr__`` costs more
        event.__dict__["history"] = [live.pending_user_message]
        event.__pydantic_fields_set__.add("history")
