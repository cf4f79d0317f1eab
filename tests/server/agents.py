"""Small agents the server tests drive, each showing one behaviour."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from parley.server import (
    A2AApp,
    AgentContext,
    EventSink,
    InputRequired,
    RequestContext,
    TaskUpdater,
    agent,
    create_app,
    text_message,
)
from parley.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Message,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)


def card(**overrides: object) -> AgentCard:
    fields: dict[str, object] = {
        "name": "test agent",
        "description": "An agent for tests.",
        "url": "",
        "version": "1.0.0",
        "capabilities": AgentCapabilities(streaming=True),
        "default_input_modes": ["text/plain"],
        "default_output_modes": ["text/plain"],
        "skills": [AgentSkill(id="s", name="s", description="d", tags=["t"])],
    }
    fields.update(overrides)
    return AgentCard.model_validate(fields)


NANOSECOND = "2026-12-07T20:22:50.123456789+00:00"
"""A time finer than the microsecond, as an agent may give it."""


class ScriptedAgent:
    """Behaviour chosen by the first word of the user's text.

    - ``echo X``: completes with artifact X;
    - ``reply X``: a direct Message reply, no task;
    - ``ask``: input-required; the next message completes with both texts;
    - ``slow``: works until ``release`` is set, then completes;
    - ``chunks N``: N artifact chunks appended to one artifact, then completes;
    - ``chunks-wait N``: the same, but waits for ``release`` before completing;
    - ``boom``: raises an exception with a secret in it;
    - ``refs``: completes with the ids of the referenced tasks it was given;
    - ``nanos``: a working status timed to the nanosecond (``NANOSECOND``), then completes;
    - ``quit``: returns without finishing the task.
    """

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.runs: list[str] = []
        self.canceled: list[str] = []

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        text = context.get_user_input()
        self.runs.append(text)
        command, _, rest = text.partition(" ")
        updater = TaskUpdater.for_context(events, context)
        if command == "reply":
            await events.emit(text_message(rest, context_id=context.context_id))
            return
        if command == "boom":
            raise RuntimeError("database password is hunter2")
        if command == "quit":
            await updater.start_work()
            return
        await updater.start_work()
        if command == "ask" and context.task is None:
            await updater.requires_input("What else?")
            return
        if command == "slow":
            await self.release.wait()
        if command in {"chunks", "chunks-wait"}:
            artifact_id = None
            for index in range(int(rest)):
                artifact_id = await updater.add_artifact(
                    f"{index},",
                    artifact_id=artifact_id,
                    append=index > 0,
                    last_chunk=index == int(rest) - 1,
                )
            if command == "chunks-wait":
                await self.release.wait()
        elif command == "nanos":
            await events.emit(
                TaskStatusUpdateEvent(
                    task_id=context.task_id,
                    context_id=context.context_id,
                    status=TaskStatus(state=TaskState.working, timestamp=NANOSECOND),
                    final=False,
                )
            )
        elif command == "refs":
            await updater.add_artifact(",".join(t.id for t in context.related_tasks) or "none")
        else:
            texts = [m.parts[0].text for m in context.history if m.role == "user"]  # type: ignore[union-attr]
            await updater.add_artifact(
                " | ".join([*texts, rest or text]) if context.task else (rest or text)
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        self.canceled.append(context.task_id)
        await TaskUpdater.for_context(events, context).cancel("Stopped.")


def scripted_app(**card_fields: object) -> tuple[A2AApp, ScriptedAgent]:
    scripted = ScriptedAgent()
    return create_app(scripted, card(**card_fields)), scripted


@agent
async def story(ctx: AgentContext) -> AsyncIterator[str | InputRequired | Message]:
    """For the @agent tests."""
    if ctx.text == "hello":
        yield text_message("hi there")
        return
    if ctx.text == "question" and ctx.task is None:
        yield InputRequired("Which one?")
        return
    await ctx.progress("thinking")
    yield "once"
    yield " upon"
    yield " a time"
