"""What happens, on startup, to the tasks a previous process was running.

A task whose agent was running when the process stopped (crash, SIGKILL, deploy) is
``submitted`` or ``working`` in the store, with no one working on it. With a store
several processes share, this runs at start-up and then on every process's heartbeat,
and touches only tasks whose owner's lease has expired. It must not stay
that way: by default it is failed with a status message saying the server restarted
during the run. An agent that can pick its work up again says so by implementing
``ResumableAgent`` (a ``resume`` method); it is then called for each such task instead.
"""

from __future__ import annotations

import logging

from parley.protocol import ACTIVE_STATES
from parley.server.agent._agent import ResumableAgent
from parley.server.agent._context import RequestContext
from parley.server.tasks._live import LiveTask
from parley.server.tasks._runs import TaskRuns
from parley.types import TaskState

logger = logging.getLogger("parley.server")

RESTARTED = (
    "The server restarted while the agent was working on this task, and the work was "
    "lost. Send the request again to start a new task."
)


async def recover(runs: TaskRuns) -> int:
    """Fail (or resume, for a ``ResumableAgent``) every task the store says an agent was
    running on and no live process runs; returns how many there were. With a shared
    store a task is settled only once its owner's lease has expired."""
    settled = 0
    for task_id in await runs.store.active():
        if runs.running(task_id) is not None:
            continue  # run by this process
        async with runs.hold_if_any(task_id) as live:
            if live is not None:  # else gone meanwhile
                settled += await _settle(runs, live)
    return settled


async def _settle(runs: TaskRuns, live: LiveTask) -> int:
    # Run here, or moved on since the store was asked: not a task left behind.
    if live.task is None or live.turn is not None:
        return 0
    if live.task.status.state not in ACTIVE_STATES:
        return 0
    async with runs.turn(live) as turn:
        if turn is None:
            return 0  # a live process runs it
        if live.task is None or live.task.status.state not in ACTIVE_STATES:
            return 0
        if runs.telemetry is not None and runs.owners is not None:  # another process's lease
            await runs.telemetry.lease_takeover(live.task_id)
        if isinstance(runs.agent, ResumableAgent):
            logger.info("resuming task %s after a restart", live.task_id)
            context = RequestContext(
                message=None, task_id=live.task_id, context_id=live.context_id, task=None
            )
            runs.start(live, turn, context)
            return 1
        logger.warning("task %s was running when its server stopped: failing it", live.task_id)
        await runs.finish(live, TaskState.failed, RESTARTED)
        return 1
