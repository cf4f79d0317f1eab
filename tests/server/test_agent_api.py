"""The agent-writing API: @agent and TaskUpdater, driven through the request handler."""

from __future__ import annotations

import pytest

from parley.protocol import InvalidAgentResponseError
from parley.server import (
    EventSink,
    RequestContext,
    RequestHandler,
    TaskUpdater,
)
from parley.types import Message, MessageSendParams, Role, Task, TaskState, TextPart
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
