"""An agent's run started eagerly on Python 3.12+ (``TaskRuns.start``): its first step
runs inside the request's call, as the run's own task, and a run that ends in it (an echo
on the memory store) is never scheduled.

The same tests run on 3.11, where the run is a scheduled task: every path gives the
same protocol result either way, on every store (SQLite and PostgreSQL suspend the run
at its first append, and the rest of it runs as a normal task). Only the assertions on
eagerness itself depend on the version.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from parley.protocol import A2AError
from parley.server import (
    EventSink,
    RequestContext,
    RequestHandler,
    TaskUpdater,
    create_app,
    text_message,
)
from parley.server.tasks._runs import TaskRuns
from parley.types import (
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    Role,
    Task,
    TaskIdParams,
    TaskState,
    TextPart,
)
from tests.server.agents import card
from tests.server.rpc import result, sse, user_message
from tests.servers import running
from tests.stores.databases import STORES, served_store

EAGER = sys.version_info >= (3, 12)
"""Whether runs start eagerly here (and so whether a run that never waits makes a send
that never gives the loop a turn)."""

_ids = itertools.count(1)


class FirstSteps:
    """Records the task each run's first step runs as; behaviour by the first word:

    - ``echo X``: completes with X, never waiting;
    - ``reply X``: a direct reply X (no task), never waiting;
    - ``later X``: suspends at once (a loop turn), then as ``echo``;
    - ``ask``: input-required; the answer completes with what it says;
    - ``boom``: raises in its first step;
    - ``cancel-self``: working, then cancels its own task (``tasks/cancel``, in process);
    - ``send-again``: working, then sends its own task another message, which its own
      run holds: completes with the error's code;
    - ``hold``: working, then waits for ``go`` (set from another thread) to complete;
    - ``timeout``: working, then times out waiting (``asyncio.timeout``, entered in the
      first step: it binds to the run's task, not the request's): completes saying so.
    """

    def __init__(self) -> None:
        self.handler: RequestHandler | None = None
        self.first_steps: list[tuple[str, str]] = []
        """(task id, the name of the task its run's first step ran as)."""
        self.go = threading.Event()

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        current = asyncio.current_task()
        assert current is not None
        self.first_steps.append((context.task_id, current.get_name()))
        command, _, rest = context.get_user_input().partition(" ")
        updater = TaskUpdater.for_context(events, context)
        if command == "reply":
            await events.emit(text_message(rest, context_id=context.context_id))
            return
        if command == "boom":
            raise RuntimeError("failed in its first step")
        if command == "later":
            await asyncio.sleep(0)
        if command == "ask" and context.task is None:
            await updater.requires_input("What else?")
            return
        await updater.start_work()
        if command == "cancel-self":
            assert self.handler is not None
            await self.handler.cancel_task(TaskIdParams(id=context.task_id))
            return
        if command == "send-again":
            rest = await self._send_again(context.task_id)
        if command == "hold":
            await asyncio.to_thread(self.go.wait, 30)
        if command == "timeout":
            try:
                async with asyncio.timeout(0.01):
                    await asyncio.sleep(30)
            except TimeoutError:
                rest = "timed out"
        await updater.add_artifact(rest or command)
        await updater.complete()

    async def _send_again(self, task_id: str) -> str:
        assert self.handler is not None
        try:
            await self.handler.send_message(MessageSendParams(message=_user("more", task_id)))
        except A2AError as error:
            return str(error.code)
        return "taken"

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        await TaskUpdater.for_context(events, context).cancel("Stopped.")


def _user(text: str, task_id: str | None = None) -> Message:
    return Message(
        role=Role.user,
        message_id=f"eager-{next(_ids)}",
        parts=[TextPart(text=text)],
        task_id=task_id,
    )


def _app(**stores: Any) -> tuple[Any, FirstSteps]:
    agent = FirstSteps()
    app = create_app(agent, card(), **stores)
    agent.handler = app.handler
    return app, agent


def _state(answer: Task | Message) -> TaskState:
    assert isinstance(answer, Task)
    return answer.status.state


def _artifact(task: dict[str, Any]) -> str:
    text: str = task["artifacts"][0]["parts"][0]["text"]
    return text


# -- in process, the memory store: where a run ends in its first step ------------------


async def test_an_echo_run_is_over_before_the_send_would_wait() -> None:
    app, agent = _app()
    runs = app.handler.runs
    async with app.lifespan():
        turned: list[bool] = []
        asyncio.get_running_loop().call_soon(turned.append, True)
        task = await app.handler.send_message(MessageSendParams(message=_user("echo hi")))
        # eager: the run began, ran and ended within the send, which never waited
        assert turned == ([] if EAGER else [True])
        assert isinstance(task, Task)
        assert task.status.state is TaskState.completed
        assert task.model_dump(mode="json")["artifacts"][0]["parts"][0]["text"] == "hi"
        # its first step ran as the run's own task, not as this one (the request's)
        assert agent.first_steps == [(task.id, f"parley-run-{task.id}")]
        assert len(runs.registry) == 0
        assert not runs._background  # nothing done is kept


async def test_a_continued_run_over_in_its_first_step_leaves_nothing_set() -> None:
    """The log's loop is set before the run starts: a run that ends in its first step
    clears it (set after, it stayed on a finished run's log)."""
    app, _ = _app()
    runs: TaskRuns = app.handler.runs
    async with app.lifespan():
        asked = await app.handler.send_message(MessageSendParams(message=_user("ask")))
        assert _state(asked) is TaskState.input_required
        async with runs.hold_if_any(asked.id) as live:
            assert live is not None
            answer = MessageSendParams(message=_user("echo Oslo", asked.id))
            answered = await app.handler.send_message(answer)
            assert _state(answered) is TaskState.completed
            assert live.log.loop is None
            assert live.turn is None
            assert live.last_turn is None
            assert not runs._background
        assert len(runs.registry) == 0


@pytest.mark.parametrize(
    ("text", "state", "said"),
    [
        ("cancel-self", TaskState.canceled, "Stopped."),
        ("send-again", TaskState.completed, "-32602"),
    ],
)
async def test_a_cancel_or_a_send_the_run_makes_in_its_first_step(
    text: str, state: TaskState, said: str
) -> None:
    """Within an eager first step ``turn.run`` is not set yet, and only the run itself
    can act: a ``tasks/cancel`` of its own task records the agent's ``canceled`` and
    leaves the run to return (as when the run cancels its task from a later step); a
    second message for its task is refused, its slot being the run's."""
    app, _ = _app()
    runs = app.handler.runs
    async with app.lifespan():
        turned: list[bool] = []
        asyncio.get_running_loop().call_soon(turned.append, True)
        task = await app.handler.send_message(MessageSendParams(message=_user(text)))
        assert turned == ([] if EAGER else [True])  # all of it in the first step
        assert isinstance(task, Task)
        assert task.status.state is state
        dumped = task.model_dump(mode="json")
        said_in = (
            dumped["status"]["message"] if state is TaskState.canceled else dumped["artifacts"][0]
        )
        assert said_in["parts"][0]["text"] == said
        assert len(runs.registry) == 0
        assert not runs._background


async def test_a_loop_with_a_task_factory_makes_the_run_with_it() -> None:
    """A user's factory (tracing, say) gets every run to make: the run is then started
    as the factory starts it, here scheduled."""
    loop = asyncio.get_running_loop()
    made: list[asyncio.Task[Any]] = []

    def traced(loop: asyncio.AbstractEventLoop, coro: Any, **options: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.Task(coro, loop=loop, **options)
        made.append(task)
        return task

    app, agent = _app()
    async with app.lifespan():
        before = loop.get_task_factory()
        loop.set_task_factory(traced)
        try:
            turned: list[bool] = []
            loop.call_soon(turned.append, True)
            task = await app.handler.send_message(MessageSendParams(message=_user("echo hi")))
        finally:
            loop.set_task_factory(before)
    assert _state(task) is TaskState.completed
    assert f"parley-run-{task.id}" in [made_task.get_name() for made_task in made]
    assert turned == [True]  # the send waited for the run: it was not started eagerly
    assert agent.first_steps == [(task.id, f"parley-run-{task.id}")]


async def test_what_the_run_published_before_a_reader_came_is_read() -> None:
    """The events an eager first step published are in the log before the caller reads
    it: a blocking send, a non-blocking one and a stream each find them."""
    app, _ = _app()
    async with app.lifespan():
        handler = app.handler
        blocking = await handler.send_message(MessageSendParams(message=_user("echo one")))
        at_once = await handler.send_message(
            MessageSendParams(
                message=_user("echo two"), configuration=MessageSendConfiguration(blocking=False)
            )
        )
        stream = await handler.stream_message(MessageSendParams(message=_user("echo three")))
        streamed = [event async for _, event in stream]
    assert _state(blocking) is TaskState.completed
    # the memory store never suspends the run: done before the answer either way
    assert _state(at_once) is TaskState.completed
    assert [type(event).__name__ for event in streamed] == [
        "Task",
        "TaskStatusUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]


# -- over HTTP, on every store: each path's protocol result --------------------------


def _send(text: str, **fields: Any) -> dict[str, Any]:
    configuration = fields.pop("configuration", None)
    params: dict[str, Any] = {"message": user_message(text, **fields)}
    if configuration is not None:
        params["configuration"] = configuration
    return params


async def _paths(base: str, agent: FirstSteps) -> dict[str, Any]:
    """Every path once; what each answered."""
    seen: dict[str, Any] = {}
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        seen["echo"] = await result(client, "message/send", _send("echo hi"))
        seen["later"] = await result(client, "message/send", _send("later hi"))
        seen["reply"] = await result(client, "message/send", _send("reply hi"))
        seen["boom"] = await result(client, "message/send", _send("boom"))
        seen["cancel-self"] = await result(client, "message/send", _send("cancel-self"))
        seen["timeout"] = await result(client, "message/send", _send("timeout"))
        seen["send-again"] = await result(client, "message/send", _send("send-again"))
        asked = await result(client, "message/send", _send("ask"))
        seen["ask"] = asked
        seen["answer"] = await result(
            client, "message/send", _send("echo Oslo", taskId=asked["id"])
        )
        at_once = await result(
            client, "message/send", _send("echo hi", configuration={"blocking": False})
        )
        seen["non-blocking"] = at_once
        seen["non-blocking then"] = await sse(client, "tasks/resubscribe", {"id": at_once["id"]})
        seen["stream"] = await sse(client, "message/stream", _send("echo hi"))
        held = await result(
            client, "message/send", _send("hold", configuration={"blocking": False})
        )
        first = asyncio.Event()
        following = asyncio.create_task(
            sse(client, "tasks/resubscribe", {"id": held["id"]}, first=first)
        )
        await first.wait()
        agent.go.set()
        seen["resubscribe"] = await following
        seen["replay"] = await sse(
            client, "tasks/resubscribe", {"id": held["id"]}, {"Last-Event-ID": "0"}
        )
    return seen


def _states(events: list[tuple[int | None, dict[str, Any]]]) -> list[str]:
    return [
        answer["result"]["status"]["state"] for _, answer in events if "status" in answer["result"]
    ]


@pytest.mark.parametrize("kind", STORES)
def test_every_path_answers_as_a_scheduled_run_did(kind: str, tmp_path: Path) -> None:
    with served_store(kind, tmp_path) as store:
        app, agent = _app(task_store=store)
        with running(app) as base:
            seen = asyncio.run(_paths(base, agent))
            live, background = (
                {live.task_id: live for live in app.handler.runs.registry},
                set(app.handler.runs._background),
            )
    assert live == {}
    assert not background
    # every first step ran as its run's own task
    assert agent.first_steps
    assert all(name == f"parley-run-{task_id}" for task_id, name in agent.first_steps)

    assert seen["echo"]["status"]["state"] == "completed"
    assert _artifact(seen["echo"]) == "hi"
    assert seen["reply"]["kind"] == "message"
    assert seen["reply"]["parts"][0]["text"] == "hi"
    assert seen["later"]["status"]["state"] == "completed"
    assert _artifact(seen["later"]) == "hi"
    failed = seen["boom"]["status"]
    assert failed["state"] == "failed"
    assert failed["message"]["parts"][0]["text"] == "The agent failed while working on this task."
    canceled = seen["cancel-self"]["status"]
    assert canceled["state"] == "canceled"
    assert canceled["message"]["parts"][0]["text"] == "Stopped."  # by the agent's cancel
    assert seen["timeout"]["status"]["state"] == "completed"
    assert _artifact(seen["timeout"]) == "timed out"
    # the run holds its task's slot from its first step: a second send is refused
    assert seen["send-again"]["status"]["state"] == "completed"
    assert _artifact(seen["send-again"]) == "-32602"
    assert seen["ask"]["status"]["state"] == "input-required"
    assert seen["answer"]["status"]["state"] == "completed"
    assert _artifact(seen["answer"]) == "Oslo"

    # non-blocking: answered at the run's first event (which, on a store that suspends
    # the run, may be before the rest), then followed to its end
    assert seen["non-blocking"]["status"]["state"] in {"submitted", "working", "completed"}
    then = seen["non-blocking then"]
    assert _states(then)[-1] == "completed"

    streamed = seen["stream"]
    assert [event_id for event_id, _ in streamed] == [1, 2, 3, 4]
    kinds = [answer["result"]["kind"] for _, answer in streamed]
    assert kinds == ["task", "status-update", "artifact-update", "status-update"]
    assert _states(streamed) == ["submitted", "working", "completed"]

    followed = seen["resubscribe"]
    assert followed[0][1]["result"]["kind"] == "task"
    assert _states(followed)[-1] == "completed"
    assert _states(seen["replay"]) == ["submitted", "working", "completed"]
