"""One turn of the agent: its run, from the message to the event that ends the
interaction, and how the run starts.

``TaskRuns.start`` runs ``run_turn`` as a task of its own (``start_task``: on Python
3.12+ started eagerly, its first step running before ``start`` returns, as that task;
Python 3.11 schedules it). The run records the user's message in a task that already
exists, hands the agent a ``RunSink`` (every event it emits goes through
``Publisher.publish``), and settles what the agent leaves unsettled: an agent that
raises, or returns before its turn ended, leaves the task ``failed`` with a status
message saying so. Whatever way the run ends, it gives back the task's lease, then the
owner takes back the run slot and the run's hold (``TaskRuns.run_over``).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from parley.protocol import InternalError, add_to_history, copy_task
from parley.server.agent._agent import ResumableAgent
from parley.server.agent._context import RequestContext
from parley.server.tasks._live import LiveTask, Turn
from parley.server.tasks._publish import STORE_FAILED, Publisher
from parley.types import Event, TaskState

if TYPE_CHECKING:
    from parley.server.tasks._runs import TaskRuns
    from parley.telemetry import TurnRecord

logger = logging.getLogger("parley.server")

AGENT_FAILED = "The agent failed while working on this task."
AGENT_STOPPED = "The agent stopped without finishing the task."
CANCELED = "The task was canceled at the client's request."


class RunSink:
    """The ``EventSink`` handed to the agent for one turn (or one cancel: no turn)."""

    __slots__ = ("_live", "_publisher", "_turn")

    def __init__(self, publisher: Publisher, live: LiveTask, turn: Turn | None = None) -> None:
        self._publisher = publisher
        self._live = live
        self._turn = turn

    async def emit(self, event: Event) -> None:
        await self._publisher.publish(self._live, event, self._turn)

    def emit_many(self, events: Sequence[Event]) -> Coroutine[Any, Any, int]:
        """Emit ``events`` in order, as ``emit`` one by one would, in one store write:
        the publish itself to await (a coroutine of its own around it cost each run's
        write a frame)."""
        return self._publisher.publish_many(self._live, events, self._turn)


if sys.version_info >= (3, 12):

    def start_task(
        loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, None], name: str
    ) -> asyncio.Task[None]:
        """``work`` as a task of ``loop``, started eagerly: its first step, up to its
        first real suspension, runs now, as the current task (timeouts and cancellation
        work as in any task), and a run that ends in it (an echo on the memory store) is
        never scheduled: no loop turn, no wake-up of the caller. A loop with a task
        factory of its own (a user's tracing) makes the run with it, started as the
        factory starts it."""
        if loop.get_task_factory() is None:
            return asyncio.Task(work, loop=loop, name=name, eager_start=True)
        return loop.create_task(work, name=name)

else:

    def start_task(
        loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, None], name: str
    ) -> asyncio.Task[None]:
        """``work`` as a task of ``loop``, scheduled: Python 3.11 cannot start a task
        eagerly. Which one is chosen when the module is loaded, not on every run."""
        return loop.create_task(work, name=name)  # asyncio.create_task is one more call


async def run_turn(runs: TaskRuns, live: LiveTask, turn: Turn, context: RequestContext) -> None:
    """Run the agent for ``context`` in ``turn``, holding ``live`` (let go at the end).

    One coroutine for the run and what settles it (a second one, awaited, cost every
    send its frame)."""
    turn.began = True
    traced: TurnRecord | None = None
    try:
        if runs.telemetry is not None:  # the agent's code in the turn's span
            traced = await runs.telemetry.begin_turn(live.task_id, live.context_id)
        if turn.ended:  # stopped before it began (``Turn.stop``): nothing to run
            return
        runs.leases.promise(turn, live.task_id)  # a new task's lease, with a shared store
        agent = runs.agent
        sink = RunSink(runs.publisher, live, turn)
        try:
            if live.task is not None:  # a turn of a task that exists
                await _record_user_message(runs, live, context)
            if context.message is None and isinstance(agent, ResumableAgent):
                await agent.resume(context, sink)
            else:
                await agent.execute(context, sink)
        except asyncio.CancelledError:
            if not turn.ended:
                raise
            # canceled by tasks/cancel: the canceled status is recorded
        except Exception:
            await _failed(runs, live, turn)
        else:
            if not turn.ended:
                logger.warning("agent returned without finishing task %s", live.task_id)
                await runs.publisher.finish(live, TaskState.failed, AGENT_STOPPED)
    finally:
        try:
            if turn.lease is not None:  # the lease first, then the slot (``Turn.close``)
                await turn.close()
        finally:
            runs.run_over(live, turn)
            if traced is not None:
                traced.end()


async def _failed(runs: TaskRuns, live: LiveTask, turn: Turn) -> None:
    """The agent raised: the task fails, unless its turn was over already."""
    if turn.ended:  # after its turn (or the store failed): nothing to settle
        logger.warning("agent failed after its run on task %s ended", live.task_id)
        return
    logger.exception("agent failed on task %s", live.task_id)
    await runs.publisher.finish(live, TaskState.failed, AGENT_FAILED)


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
        await runs.publisher.store_failed(live, live.log.last_sequence + 1)
        raise InternalError(STORE_FAILED) from None
