"""One turn of the agent: its run, from the message to the event that ends the
interaction, and the final status recorded when the agent does not give one.

``TaskRuns.start`` runs ``run_turn`` as a task of its own (on Python 3.12+ started
eagerly: its first step runs before ``start`` returns, as that task). The run records
the user's message in a task that already exists, hands the agent a ``RunSink`` (every
event it emits goes through ``TaskRuns.publish``), and settles what the agent leaves
unsettled: an agent that raises, or returns before its turn ended, leaves the task
``failed`` with a status message saying so. Whatever way the run ends, it gives up the
task's lease, then frees the run slot, then lets go of the task.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from parley.protocol import InternalError, add_to_history, copy_task
from parley.server.agent._agent import ResumableAgent
from parley.server.agent._context import RequestContext
from parley.server.agent._ids import now
from parley.server.tasks._live import LiveTask, Turn
from parley.types import (
    Event,
    Message,
    Role,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

if TYPE_CHECKING:
    from parley.server.tasks._runs import TaskRuns
    from parley.telemetry import TurnRecord

logger = logging.getLogger("parley.server")

AGENT_FAILED = "The agent failed while working on this task."
AGENT_STOPPED = "The agent stopped without finishing the task."
CANCELED = "The task was canceled at the client's request."
STORE_FAILED = "The server could not store the task's progress, so the task was stopped."
MOVED = "Another server process took this task over; follow it there (tasks/resubscribe)."


class RunSink:
    """The ``EventSink`` handed to the agent for one turn (or one cancel: no turn)."""

    __slots__ = ("_live", "_runs", "_turn")

    def __init__(self, runs: TaskRuns, live: LiveTask, turn: Turn | None = None) -> None:
        self._runs = runs
        self._live = live
        self._turn = turn

    async def emit(self, event: Event) -> None:
        await self._runs.publish(self._live, event, self._turn)

    def emit_many(self, events: Sequence[Event]) -> Coroutine[Any, Any, int]:
        """Emit ``events`` in order, as ``emit`` one by one would, in one store write:
        the publish itself to await (a coroutine of its own around it cost each run's
        write a frame)."""
        return self._runs.publish_many(self._live, events, self._turn)


async def run_turn(runs: TaskRuns, live: LiveTask, turn: Turn, context: RequestContext) -> None:
    """Run the agent for ``context`` in ``turn``, holding ``live`` (let go at the end).

    One coroutine for the run and what settles it (a second one, awaited, cost every
    send its frame)."""
    turn.began = True
    traced = None
    try:
        if runs.telemetry is not None:  # the agent's code in the turn's span
            traced = await runs.telemetry.begin_turn(live.task_id, live.context_id)
        if turn.ended:  # stopped before it began (``Turn.stop``): nothing to run
            return
        if runs.owners is not None and turn.lease is None:
            # a new task's lease: stored with its first events (``Lease.new``)
            turn.lease = runs.owners.promise(live.task_id)
        agent = runs.agent
        try:
            if live.task is not None:  # a turn of a task that exists
                await _record_user_message(runs, live, context)
            if context.message is None and isinstance(agent, ResumableAgent):
                await agent.resume(context, RunSink(runs, live, turn))
            else:
                await agent.execute(context, RunSink(runs, live, turn))
        except asyncio.CancelledError:
            if not turn.ended:
                raise
            # canceled by tasks/cancel: the canceled status is recorded
        except Exception:
            await _failed(runs, live, turn)
        else:
            if not turn.ended:
                logger.warning("agent returned without finishing task %s", live.task_id)
                await runs.finish(live, TaskState.failed, AGENT_STOPPED)
    finally:
        try:
            if turn.lease is not None:  # the lease first, then the slot (``Turn``)
                await turn.give_up_lease()
        finally:
            _over(runs, live, turn, traced)


def _over(runs: TaskRuns, live: LiveTask, turn: Turn, traced: TurnRecord | None) -> None:
    """The run is over: free its slot, forget it, let go of the task, end its span."""
    turn.end()
    runs.ran(turn)
    runs.let_go(live)
    if live.last_turn is turn:  # over: no cycle (live -> turn -> live) keeps the log
        live.last_turn = None
        live.log.loop = None  # known while a run is on it (``TaskRuns.start``)
    if traced is not None:
        traced.end()


async def _failed(runs: TaskRuns, live: LiveTask, turn: Turn) -> None:
    """The agent raised: the task fails, unless its turn was over already."""
    if turn.ended:  # after its turn (or the store failed): nothing to settle
        logger.warning("agent failed after its run on task %s ended", live.task_id)
        return
    logger.exception("agent failed on task %s", live.task_id)
    await runs.finish(live, TaskState.failed, AGENT_FAILED)


async def _record_user_message(runs: TaskRuns, live: LiveTask, context: RequestContext) -> None:
    """Give the agent the task as it was before this message, then add the message (if
    there is one: a resumed run has none) to its history and store it."""
    assert live.task is not None
    context.task = copy_task(live.task)
    if context.message is None:
        return
    task = live.task
    question = task.status.message
    if question is not None:  # answered: the question joins the history before the answer
        add_to_history(task, question)
        task.status = task.status.copied(message=None)
    add_to_history(task, context.message)
    try:
        await runs.store.save(live.task, live.log.last_sequence, owner=live.owner)
    except Exception:
        await runs.store_failed(live, live.log.last_sequence + 1)
        raise InternalError(STORE_FAILED) from None


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
