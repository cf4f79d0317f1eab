"""A live task, its run slot, and the one table of how a live task moves.

A ``LiveTask`` is a task this process is working on or someone here is following (the
registry, ``_registry``, keeps it while anything holds it). Its *phase* says whether a
run here works on it, and only the moves of ``MOVES`` change it:

=========  =========================  =========================  ==================
phase      BEGIN (a run takes slot)   END (interaction/run over) BREAK (not served)
=========  =========================  =========================  ==================
IDLE       RUNNING                    IDLE                       BROKEN
RUNNING    refused: busy (-32602)     IDLE                       BROKEN
BROKEN     refused: send again        BROKEN                     BROKEN
=========  =========================  =========================  ==================

A run's ``Turn`` is the slot: taken synchronously by ``begin_turn`` (no await between a
caller's checks and it), given back by ``Turn.end``. A task is BROKEN when a store write
failed or another process took it over: its readers are failed and the copy here is
not served again (a later call reads the task anew).
"""

from __future__ import annotations

import asyncio
from collections import deque
from enum import StrEnum
from typing import Final

from parley.protocol import InvalidParamsError
from parley.server.tasks._events import EventLog
from parley.server.tasks._owners import Ownership
from parley.stores import Lease
from parley.types import Message, Task


class Phase(StrEnum):
    """Whether a run here works on a live task."""

    IDLE = "idle"
    """No run here holds the slot."""
    RUNNING = "running"
    """A run here holds the slot (and, with a shared store, the task's lease)."""
    BROKEN = "broken"
    """A store write failed or another process took the task over: not served here."""


class Move(StrEnum):
    BEGIN = "begin"
    """A run takes the slot."""
    END = "end"
    """The interaction ended, or the run did: the slot is free."""
    BREAK = "break"
    """Stop serving the task from here."""


MOVES: Final[dict[Phase, dict[Move, Phase]]] = {
    Phase.IDLE: {Move.BEGIN: Phase.RUNNING, Move.END: Phase.IDLE, Move.BREAK: Phase.BROKEN},
    Phase.RUNNING: {Move.END: Phase.IDLE, Move.BREAK: Phase.BROKEN},
    Phase.BROKEN: {Move.END: Phase.BROKEN, Move.BREAK: Phase.BROKEN},
}
"""The phase a live task moves to, by phase and move; a move not listed is refused."""


def move(live: LiveTask, step: Move) -> None:
    """Move ``live`` by ``step`` (see ``MOVES``); a move the table refuses is an
    ``InvalidParamsError`` saying why (the caller may send again)."""
    phase = MOVES[live.phase].get(step)
    if phase is None:
        if live.phase is Phase.RUNNING:
            raise busy(live.task_id)
        raise InvalidParamsError(
            f"Task {live.task_id} was just stopped on this server; send again to continue it"
        )
    live.phase = phase


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
    shared store, also the task's lease. Taken and given back only by the lifecycle
    owner (``TaskRuns.turn``), or by the run it was handed to (``TaskRuns.start``)."""

    __slots__ = ("_live", "_owners", "began", "ended", "handed", "lease", "run")

    def __init__(self, live: LiveTask, owners: Ownership | None = None) -> None:
        self._live: LiveTask | None = live
        self._owners = owners
        self.ended = False
        self.run: asyncio.Task[None] | None = None
        """Set by ``TaskRuns.start`` once the run's task exists: ``None`` while a run
        started eagerly takes its first step, when no one but the run can act."""
        self.began = False
        """Whether ``run`` has taken its first step (``run_turn`` sets it)."""
        self.handed = False
        """Whether a run was started in it: the run gives it back when it ends."""
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
            move(live, Move.END)

    async def close(self) -> None:
        """Give back the lease, then the slot, whatever giving back the lease meets."""
        lease, self.lease = self.lease, None
        try:
            if lease is not None and self._owners is not None:
                await self._owners.give_up(lease)
        finally:
            self.end()


class LiveTask(Gate):
    """A task this process is working on, or someone here follows.

    It is its own publishing ``Gate`` (``publishing``): one object a task rather than
    two, one object less made for each new task. Made by hand rather than as a dataclass
    of 17 fields: what ``TaskRuns.start_new`` sets comes in by position (see
    ``CallContext.from_headers``), and nothing is set twice."""

    __slots__ = (
        "canceling",
        "context_id",
        "holders",
        "last_turn",
        "log",
        "owner",
        "pending_user_message",
        "phase",
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
    phase: Phase
    """Whether a run here works on it (see ``MOVES``)."""
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
        self.phase = Phase.IDLE
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

    @property
    def broken(self) -> bool:
        """Whether the task is no longer served from here (``Phase.BROKEN``)."""
        return self.phase is Phase.BROKEN

    def begin_turn(self, owners: Ownership | None = None) -> Turn:
        """Take the run slot (``Move.BEGIN``), or raise ``InvalidParamsError`` if a run
        holds it. No await may come between the caller's checks and this call."""
        move(self, Move.BEGIN)
        self.turn = self.last_turn = Turn(self, owners)
        return self.turn

    @property
    def winding_down(self) -> bool:
        """Whether the latest run's turn ended but its code still runs."""
        last = self.last_turn
        return last is not None and last.run is not None and not last.run.done()


def busy(task_id: str) -> InvalidParamsError:
    return InvalidParamsError(
        f"Task {task_id} is still working on an earlier message; send again once it "
        "asks for input or finishes, or cancel it first."
    )
