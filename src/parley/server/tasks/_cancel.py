"""``tasks/cancel``: idempotent, and delivered to the process that runs the task.

A cancel is one of three cases. The task's run is in this process: the agent's
``cancel`` is called, ``canceled`` is recorded if the agent did not, and the run is
stopped. No run works on it anywhere: the cancel takes the run slot (and the lease,
with a shared store) and does the same. Another process runs it: the cancel asks that
process over the bus and waits to see ``canceled`` in the store; if that process died
meanwhile, its lease expires and the cancel takes the task over.

A cancel that arrives while another is under way answers what that one answers.
"""

from __future__ import annotations

import asyncio
import logging

from parley.protocol import (
    A2AError,
    InternalError,
    TaskNotCancelableError,
    copy_task,
    is_cancelable,
    is_terminal,
)
from parley.protocol._rules import VersionRules, rules_for
from parley.server.agent._agent import AgentExecutor
from parley.server.agent._context import CallContext, RequestContext
from parley.server.auth._tenancy import scope_of
from parley.server.tasks._bus import cancel_note
from parley.server.tasks._execute import CANCELED
from parley.server.tasks._live import LiveTask
from parley.server.tasks._runs import TaskRuns
from parley.types import Event, Task, TaskState, TaskStatusUpdateEvent

logger = logging.getLogger("parley.server")


def _ends_task(event: Event) -> bool:
    if isinstance(event, Task | TaskStatusUpdateEvent):
        return is_terminal(event.status.state)
    return False


class Cancels:
    """Cancels tasks for the request handler."""

    def __init__(self, agent: AgentExecutor, runs: TaskRuns) -> None:
        self.agent = agent
        self.runs = runs

    async def cancel(
        self, task_id: str, metadata: dict[str, object] | None, call: CallContext
    ) -> Task:
        """The canceled task. Raises ``TaskNotFoundError``, or ``TaskNotCancelableError``
        for a task that ended otherwise (or whose agent refuses), or that was canceled
        already where the call's version says so (``VersionRules.cancel_canceled``)."""
        rules = rules_for(call.protocol_version)
        async with self.runs.hold(task_id, scope_of(call)) as live:
            canceling = live.canceling
            if canceling is not None:  # another cancel is under way: its outcome is ours
                refused = await asyncio.shield(canceling)
                if refused is not None:
                    raise refused
            else:
                done = live.canceling = asyncio.get_running_loop().create_future()
                outcome: BaseException | None = None
                try:
                    await self._cancel(live, metadata, call, rules)
                except A2AError as error:
                    outcome = error
                    raise
                finally:
                    live.canceling = None
                    done.set_result(outcome)
            assert live.task is not None
            return live.task

    def heard(self, task_id: str) -> None:
        """Another process asks to cancel ``task_id``: act if its run is here."""
        live = self.runs.running(task_id)
        if live is not None and live.canceling is None:
            self.runs.spawn(self._quietly(task_id), f"parley-cancel-{task_id}")

    async def _quietly(self, task_id: str) -> None:
        try:
            await self.cancel(task_id, None, CallContext())
        except A2AError as error:
            logger.info("cancel of task %s asked by another process: %s", task_id, error)

    async def _cancel(
        self,
        live: LiveTask,
        metadata: dict[str, object] | None,
        call: CallContext,
        rules: VersionRules,
    ) -> None:
        if _settled(live, rules):
            return
        if live.turn is not None:  # its run is here
            await self._cancel_here(live, metadata, call)
            return
        async with self.runs.turn(live) as turn:
            if turn is not None:
                if not _settled(live, rules):  # as the store has it now
                    await self._cancel_here(live, metadata, call)
                return
        with self.runs.following(live.task_id):  # another process runs it: noted here
            await self._cancel_elsewhere(live, metadata, call)

    async def _cancel_here(
        self, live: LiveTask, metadata: dict[str, object] | None, call: CallContext
    ) -> None:
        assert live.task is not None
        context = RequestContext(
            message=None,
            task_id=live.task_id,
            context_id=live.context_id,
            task=copy_task(live.task),
            metadata=metadata,
            call=call,
        )
        turn = live.turn
        run = turn.run if turn is not None else None
        # not the run canceling itself (``None``: the cancel's own turn, or a run in its
        # eager first step, which is then the caller)
        if run is asyncio.current_task():
            turn = run = None
        try:
            await self.agent.cancel(context, self.runs.sink(live))
        except A2AError:
            raise
        except Exception:
            logger.exception("agent failed to cancel task %s", live.task_id)
        await self.runs.finish(live, TaskState.canceled, CANCELED)
        if turn is not None and run is not None and not run.done():
            turn.stop()
            await asyncio.wait([run])

    async def _cancel_elsewhere(
        self, live: LiveTask, metadata: dict[str, object] | None, call: CallContext
    ) -> None:
        owners, bus = self.runs.owners, self.runs.bus
        assert owners is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 3 * owners.ttl
        while True:
            if bus is not None:
                await bus.send(cancel_note(live.task_id))
            try:
                after = live.log.last_sequence
                await asyncio.wait_for(live.log.first(after, _ends_task), owners.ttl / 2)
            except TimeoutError:
                pass
            await self.runs.catch_up(live)
            if _settled(live):
                return
            if loop.time() > deadline:
                raise InternalError(
                    f"The server process running task {live.task_id} did not confirm the "
                    "cancel; try again"
                )
            if live.turn is None:  # its process may have died: take it over if so
                async with self.runs.turn(live) as turn:
                    if turn is None:
                        continue
                    if not _settled(live):
                        await self._cancel_here(live, metadata, call)
                return


def _settled(live: LiveTask, rules: VersionRules | None = None) -> bool:
    """True if the task is canceled already; raises if it cannot be canceled, or, with
    the ``rules`` of the call's version, if they refuse to cancel a canceled task (asked
    before this cancel acts, never of the canceled status it recorded itself)."""
    task = live.task
    assert task is not None
    if task.status.state is TaskState.canceled:
        refused = rules.cancel_canceled if rules is not None else None
        if refused is not None:
            raise refused(f"Task {task.id} is canceled already")
        return True
    if not is_cancelable(task.status.state):
        raise TaskNotCancelableError(
            f"Task {task.id} is {task.status.state.value} and can no longer be canceled"
        )
    return False
