"""What happens, on startup, to the tasks a previous process was running.

A task whose agent was running when the process stopped (crash, SIGKILL, deploy) is
``submitted`` or ``working`` in the store, with no one working on it. It must not stay
that way: by default it is failed with a status message saying the server restarted
during the run. An agent that can pick its work up again says so by implementing
``ResumableAgent`` (a ``resume`` method); it is then called for each such task instead.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from parley.server._agent import EventSink
from parley.server._context import RequestContext
from parley.types import TaskState

if TYPE_CHECKING:
    from parley.server._runs import TaskRuns

logger = logging.getLogger("parley.server")

RESTARTED = (
    "The server restarted while the agent was working on this task, and the work was "
    "lost. Send the request again to start a new task."
)


@runtime_checkable
class ResumableAgent(Protocol):
    """An agent that can continue a task after a restart (opt-in, next to ``execute``)."""

    async def resume(self, context: RequestContext, events: EventSink) -> None:
        """Continue work on ``context.task`` (as stored: status, history, artifacts so
        far), emitting events as ``execute`` does. ``context.message`` is ``None``: no
        new message came; the last user message is the last ``user`` entry of the
        task's history. An exception fails the task, as in ``execute``."""
        ...


async def recover(runs: TaskRuns) -> int:
    """Fail (or resume, for a ``ResumableAgent``) every task the store says an agent was
    running on; returns how many there were."""
    task_ids = await runs.store.active()
    resumable = isinstance(runs.agent, ResumableAgent)
    for task_id in task_ids:
        live = await runs.attach(task_id)
        if live is None or live.task is None or live.run is not None or live.users:
            continue  # gone, or already being worked on in this process
        if resumable:
            logger.info("resuming task %s after a restart", task_id)
            context = RequestContext(
                message=None, task_id=live.task_id, context_id=live.context_id, task=None
            )
            runs.start(live, context)
        else:
            logger.warning("task %s was running when the server stopped: failing it", task_id)
            await runs.finish(live, TaskState.failed, RESTARTED)
            runs.release(live)
    return len(task_ids)
