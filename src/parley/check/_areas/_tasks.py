"""Tasks: a plain text message answers a well-formed Task or Message; the task can be
read back (``historyLength`` honoured) on every binding; unknown and finished tasks get
the version's errors."""

from __future__ import annotations

from parley.check._areas._wire import unknown_task_id
from parley.check._model import EARLY, V0_3, V1_0, Failed, Level, Needs, Scope, Skipped, check
from parley.check._probe import Probe
from parley.protocol import (
    TERMINAL_STATES,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from parley.types import Message, Task, TaskState

GREETING = "Hello from parley check: please answer briefly."
_ENDED = TERMINAL_STATES - {TaskState.canceled}
_WITH_EARLY = (V1_0, V0_3, EARLY)


async def a_task(probe: Probe, text: str = GREETING) -> Task:
    """A task the agent made for a plain text message; ``Skipped`` when it answered
    with a Message instead (a task cannot be looked at then)."""
    client = await probe.client()
    result = await probe.ok("send_message", client.send_message(text))
    if isinstance(result, Message):
        raise Skipped("the agent answers a plain message with a Message, not a Task")
    return result


async def an_ended_task(probe: Probe) -> Task:
    task = await a_task(probe)
    if task.status.state not in _ENDED:
        raise Skipped(
            f"the agent's task for a plain message is {task.status.state.value}, "
            "not completed, failed or rejected"
        )
    return task


@check(
    "tasks.send",
    "A plain text message is answered with a well-formed Task or Message",
    Level.must,
    v03="7.1",
    v10="3.1.1",
    needs=Needs(versions=_WITH_EARLY),
)
async def send(probe: Probe) -> None:
    client = await probe.client()
    result = await probe.ok("send_message", client.send_message(GREETING))
    if isinstance(result, Task) and not (result.id and result.context_id):
        raise Failed("the Task has no id or no contextId")


@check(
    "tasks.get",
    "The task a send made can be read back with its id and contextId",
    Level.must,
    v03="7.3",
    v10="3.1.3",
    needs=Needs(versions=_WITH_EARLY),
)
async def get(probe: Probe) -> None:
    task = await a_task(probe)
    client = await probe.client()
    read = await probe.ok("get_task", client.get_task(task.id))
    if (read.id, read.context_id) != (task.id, task.context_id):
        raise Failed(
            f"get_task answered task {read.id} in context {read.context_id}, sent for "
            f"{task.id} in {task.context_id}"
        )


@check(
    "tasks.history-length",
    "get with historyLength 1 returns at most one message of history",
    Level.must,
    v03="7.3.1",
    v10="3.2.4",
    needs=Needs(versions=_WITH_EARLY),
)
async def history_length(probe: Probe) -> None:
    task = await a_task(probe)
    client = await probe.client()
    read = await probe.ok("get_task historyLength=1", client.get_task(task.id, history_length=1))
    if len(read.history or ()) > 1:
        raise Failed(f"historyLength 1 answered {len(read.history or ())} messages of history")


@check(
    "tasks.get-not-found",
    "get of an unknown task is TaskNotFoundError",
    Level.must,
    v03="7.3",
    v10="3.1.3",
    needs=Needs(versions=_WITH_EARLY),
)
async def get_not_found(probe: Probe) -> None:
    client = await probe.client()
    await probe.error("get_task", client.get_task(unknown_task_id()), TaskNotFoundError)


@check(
    "tasks.cancel-not-found",
    "cancel of an unknown task is TaskNotFoundError",
    Level.must,
    v03="7.4",
    v10="3.1.5",
    needs=Needs(versions=_WITH_EARLY),
)
async def cancel_not_found(probe: Probe) -> None:
    client = await probe.client()
    await probe.error("cancel_task", client.cancel_task(unknown_task_id()), TaskNotFoundError)


@check(
    "tasks.cancel-ended",
    "cancel of a completed, failed or rejected task is TaskNotCancelableError",
    Level.must,
    v03="7.4",
    v10="3.1.5",
)
async def cancel_ended(probe: Probe) -> None:
    task = await an_ended_task(probe)
    client = await probe.client()
    await probe.error("cancel_task", client.cancel_task(task.id), TaskNotCancelableError)


@check(
    "tasks.ended-refuses-message",
    "A message to a task in a terminal state is UnsupportedOperationError",
    Level.must,
    v10="3.1.1",
    needs=Needs(versions=(V1_0,)),
)
async def ended_refuses_message(probe: Probe) -> None:
    task = await an_ended_task(probe)
    client = await probe.client()
    await probe.error(
        "send_message to the ended task",
        client.send_message(GREETING, task_id=task.id, context_id=task.context_id),
        UnsupportedOperationError,
    )


@check(
    "bindings.same-task",
    "A task made over one binding reads the same over every other binding",
    Level.must,
    v03="3.4.1",
    v10="5.1",
    scope=Scope.version,
    needs=Needs(versions=(V1_0, V0_3)),
)
async def same_task(probe: Probe) -> None:
    surfaces = [s for s in probe.agent.surfaces if s.version == probe.version]
    if len(surfaces) < 2:
        raise Skipped(f"the agent offers one binding for {probe.version}")
    first = Probe(probe.agent, surfaces[0], probe.version, probe.exchanges)
    try:
        task = await a_task(first)
        for surface in surfaces[1:]:
            other = Probe(probe.agent, surface, probe.version, probe.exchanges)
            try:
                read = await other.ok("get_task", (await other.client()).get_task(task.id))
            finally:
                await other.aclose()
            if (read.id, read.status.state) != (task.id, task.status.state):
                raise Failed(
                    f"over {surface.binding} task {task.id} reads as {read.id} "
                    f"{read.status.state.value}, over {surfaces[0].binding} "
                    f"{task.status.state.value}"
                )
    finally:
        await first.aclose()
