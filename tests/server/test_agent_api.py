"""The agent-writing API: @agent and TaskUpdater, driven through the request handler."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from parley.protocol import InvalidAgentResponseError
from parley.server import (
    AgentContext,
    EventSink,
    RequestContext,
    RequestHandler,
    TaskUpdater,
    agent,
)
from parley.stores import MemoryStore
from parley.types import (
    Message,
    MessageSendParams,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from tests.server.agents import card, story


def params(text: str, **fields: object) -> MessageSendParams:
    return MessageSendParams(
        message=Message(
            message_id=f"m-{text}", role=Role.user, parts=[TextPart(text=text)], **fields
        )
    )


async def test_agent_function_streams_one_growing_artifact() -> None:
    handler = RequestHandler(story, card())
    stream = await handler.stream_message(params("tell"))
    events = [event async for _, event in stream]
    kinds = [event.kind for event in events]
    assert kinds == [
        "task",
        "artifact-update",
        "artifact-update",
        "artifact-update",
        "status-update",
    ]
    # Spec 6.3: a task may start in working; @agent creates it so, with the user's message.
    assert isinstance(events[0], Task)
    assert events[0].status.state is TaskState.working
    assert [m.message_id for m in events[0].history or []] == ["m-tell"]
    final = await handler.send_message(params("tell again"))
    assert isinstance(final, Task)
    assert final.status.state is TaskState.completed
    assert final.artifacts is not None
    assert [p.text for p in final.artifacts[0].parts] == ["once", " upon", " a time"]  # type: ignore[union-attr]
    assert final.artifacts[0].name == "response"
    await handler.aclose()


async def test_agent_function_direct_reply_and_input_required() -> None:
    handler = RequestHandler(story, card())
    reply = await handler.send_message(params("hello"))
    assert isinstance(reply, Message)
    assert reply.parts[0].text == "hi there"  # type: ignore[union-attr]
    assert reply.task_id is None  # a direct reply belongs to no task
    assert reply.context_id is not None
    waiting = await handler.send_message(params("question"))
    assert isinstance(waiting, Task)
    assert waiting.status.state is TaskState.input_required
    done = await handler.send_message(params("that one", task_id=waiting.id))
    assert isinstance(done, Task)
    assert done.status.state is TaskState.completed
    await handler.aclose()


class WrongTaskAgent:
    """Emits an event for another task: the sink refuses it."""

    refused: list[str] = []

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        updater = TaskUpdater(events, "another-task", context.context_id)
        try:
            await updater.start_work()
        except InvalidAgentResponseError as error:
            self.refused.append(error.message)
        own = TaskUpdater.for_context(events, context)
        await own.complete()
        with pytest.raises(InvalidAgentResponseError, match="already completed"):
            await own.start_work()

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        raise NotImplementedError


async def test_events_that_do_not_fit_the_task_are_refused() -> None:
    agent = WrongTaskAgent()
    handler = RequestHandler(agent, card())
    task = await handler.send_message(params("go"))
    assert isinstance(task, Task)
    assert task.status.state is TaskState.completed
    assert agent.refused
    assert "another-task" in agent.refused[0]
    await handler.aclose()


async def test_task_updater_writes_every_state() -> None:
    seen: list[object] = []

    class Sink:
        async def emit(self, event: object) -> None:
            seen.append(event)

    updater = TaskUpdater(Sink(), "t", "c")
    for method in (
        updater.submit,
        updater.start_work,
        updater.requires_input,
        updater.requires_auth,
        updater.complete,
        updater.failed,
        updater.reject,
        updater.cancel,
    ):
        await method("note")
    states = [event.status.state.value for event in seen]  # type: ignore[attr-defined]
    assert states == [
        "submitted",
        "working",
        "input-required",
        "auth-required",
        "completed",
        "failed",
        "rejected",
        "canceled",
    ]
    finals = [event.final for event in seen]  # type: ignore[attr-defined]
    assert finals == [False, False, True, True, True, True, True, True]
    assert all(event.status.timestamp for event in seen)  # type: ignore[attr-defined]


async def test_outputs_held_while_the_function_runs_reach_readers_before_it_waits() -> None:
    # The outputs of a function that runs on are emitted together, but never held
    # while it waits: a reader sees the first chunk while the function is stuck on a gate.
    gate = asyncio.Event()

    @agent
    async def gated(ctx: AgentContext) -> AsyncIterator[str]:
        yield "before"
        await gate.wait()
        yield "after"

    handler = RequestHandler(gated, card())
    stream = await handler.stream_message(params("go"))
    seen = []

    async def read() -> None:
        async for _, event in stream:
            seen.append(event)
            if isinstance(event, TaskArtifactUpdateEvent) and not gate.is_set():
                assert event.artifact.parts[0].text == "before"  # type: ignore[union-attr]
                gate.set()

    await asyncio.wait_for(read(), 10)  # held past the wait, "before" never comes
    assert [event.kind for event in seen] == [
        "task",
        "artifact-update",
        "artifact-update",
        "status-update",
    ]
    await handler.aclose()


async def test_what_the_function_emits_itself_is_stored_at_once_after_its_outputs() -> None:
    store = MemoryStore()
    stored_when_progress_returned: list[int] = []

    @agent
    async def reporting(ctx: AgentContext) -> AsyncIterator[str]:
        yield "part one"
        await ctx.progress("halfway")  # EventSink's promise: stored when it returns
        stored_when_progress_returned.append(len(await store.events(ctx.task_id)))
        yield "part two"

    handler = RequestHandler(reporting, card(), task_store=store)
    task = await handler.send_message(params("go"))
    assert isinstance(task, Task)
    assert stored_when_progress_returned == [3]  # the task, "part one", "halfway"
    kinds = [stored.event.kind for stored in await store.events(task.id)]
    assert kinds == ["task", "artifact-update", "status-update", "artifact-update", "status-update"]
    await handler.aclose()


async def test_outputs_before_a_failure_are_kept() -> None:
    @agent
    async def breaking(ctx: AgentContext) -> AsyncIterator[str]:
        yield "partial"
        raise ValueError("boom")

    handler = RequestHandler(breaking, card())
    task = await handler.send_message(params("go"))
    assert isinstance(task, Task)
    assert task.status.state is TaskState.failed
    assert task.artifacts is not None
    assert task.artifacts[0].parts[0].text == "partial"  # type: ignore[union-attr]
    await handler.aclose()


async def test_a_function_that_waits_after_its_last_output_ends_or_fails_there() -> None:
    # Each way a step that waited can end: with an output, with the function's end, with
    # its error (``execute`` drives the generator by hand, ``_Run.wait`` past a wait).
    @agent
    async def waiting(ctx: AgentContext) -> AsyncIterator[str]:
        await asyncio.sleep(0)
        yield "one"
        await asyncio.sleep(0)
        yield "two"
        await asyncio.sleep(0)
        if ctx.text == "fail":
            raise ValueError("boom")

    handler = RequestHandler(waiting, card())
    done = await handler.send_message(params("end"))
    assert isinstance(done, Task)
    assert done.status.state is TaskState.completed
    assert done.artifacts is not None
    assert [part.text for part in done.artifacts[0].parts] == ["one", "two"]  # type: ignore[union-attr]
    failed = await handler.send_message(params("fail"))
    assert isinstance(failed, Task)
    assert failed.status.state is TaskState.failed
    assert failed.artifacts is not None
    assert len(failed.artifacts[0].parts) == 2
    await handler.aclose()


class ManyAtOnceAgent:
    """Emits three events in one ``emit_many``; the second is for another task."""

    refused: list[str] = []

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        mine = TaskUpdater.for_context(events, context)
        other = TaskUpdater(events, "another-task", context.context_id)
        batch = [
            TaskStatusUpdateEvent(
                task_id=task_id,
                context_id=context.context_id,
                status=TaskStatus(state=TaskState.working),
            )
            for task_id in (mine.task_id, other.task_id, mine.task_id)
        ]
        try:
            await events.emit_many(batch)  # type: ignore[attr-defined]
        except InvalidAgentResponseError as error:
            self.refused.append(error.message)
        await mine.complete()

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        raise NotImplementedError


async def test_emit_many_stores_the_events_before_one_that_does_not_fit() -> None:
    store = MemoryStore()
    agent_ = ManyAtOnceAgent()
    handler = RequestHandler(agent_, card(), task_store=store)
    task = await handler.send_message(params("go"))
    assert isinstance(task, Task)
    assert task.status.state is TaskState.completed
    assert agent_.refused
    assert "another-task" in agent_.refused[0]
    logged = await store.events(task.id)
    # a submitted Task (the first event is a status), the first working status, completed
    assert [stored.sequence for stored in logged] == [1, 2, 3]
    assert [stored.event.kind for stored in logged] == ["task", "status-update", "status-update"]
    await handler.aclose()


class TwoTurnAgent:
    """First turn: a chunk of artifact ``a`` and a question. Second turn: notes what
    ``context.task`` holds, adds a chunk to ``a`` and a message, and notes it again."""

    def __init__(self) -> None:
        self.seen: list[tuple[list[str], list[int]]] = []

    def note(self, task: Task | None) -> None:
        assert task is not None
        history = [message.message_id for message in task.history or []]
        self.seen.append((history, [len(artifact.parts) for artifact in task.artifacts or []]))

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        updater = TaskUpdater.for_context(events, context)
        if context.task is None:
            await updater.add_artifact("one", artifact_id="a")
            await updater.requires_input("more?")
            return
        self.note(context.task)
        await updater.add_artifact("two", artifact_id="a", append=True)
        await updater.add_artifact("other", artifact_id="b")
        await updater.complete("done")
        self.note(context.task)

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        raise NotImplementedError


async def test_context_task_is_the_task_before_the_message_and_stays_so() -> None:
    # context.task is "the task as it was before this message": neither the answer
    # recorded into the live task's history nor the chunks the run appends reach it.
    agent_ = TwoTurnAgent()
    handler = RequestHandler(agent_, card())
    waiting = await handler.send_message(params("first"))
    assert isinstance(waiting, Task)
    done = await handler.send_message(params("second", task_id=waiting.id))
    assert isinstance(done, Task)
    assert done.status.state is TaskState.completed
    assert [len(artifact.parts) for artifact in done.artifacts or []] == [2, 1]
    assert "m-second" in [message.message_id for message in done.history or []]
    before = (["m-first"], [1])
    assert agent_.seen == [before, before]
    await handler.aclose()


def test_user_input_is_the_text_parts_joined() -> None:
    """``get_user_input`` (``ctx.text``): the text parts in order, joined by the separator,
    other parts left out; a message of one text part is its text."""
    from parley.types import DataPart

    def user_input(*parts: TextPart | DataPart, separator: str = "\n") -> str:
        message = Message(message_id="m", role=Role.user, parts=list(parts))
        context = RequestContext(message=message, task_id="t", context_id="c", task=None)
        return context.get_user_input(separator)

    assert user_input(TextPart(text="hello")) == "hello"
    assert user_input(TextPart(text="a"), TextPart(text="b")) == "a\nb"
    assert user_input(TextPart(text="a"), TextPart(text="b"), separator=" ") == "a b"
    assert user_input(DataPart(data={"x": 1}), TextPart(text="b")) == "b"
    assert user_input(DataPart(data={"x": 1})) == ""
    assert (
        RequestContext(message=None, task_id="t", context_id="c", task=None).get_user_input() == ""
    )
