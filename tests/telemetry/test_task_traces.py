"""A task's trace over its life: a follow-up message's turn is linked to the turn before
it, a resubscribe to the run it follows, the span events of a turn are bounded, and a
task taken over from a process whose lease lapsed is recorded and counted."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest

from parley.client import connect
from parley.server import (
    EventSink,
    RequestContext,
    RequestHandler,
    TaskUpdater,
    create_app,
)
from parley.server.tasks._recovery import recover
from parley.stores import StoredEvent
from parley.stores.sql import SQLStore
from parley.types import (
    Task,
    TaskState,
    TaskStatus,
)
from tests.server.agents import ScriptedAgent, card
from tests.stores.databases import postgres_engine, postgres_engines
from tests.telemetry.recording import Recording, recording


@pytest.fixture
def recorded() -> Iterator[Recording]:
    yield from recording()


async def test_a_follow_up_s_turn_is_linked_to_the_turn_before(recorded: Recording) -> None:
    app = create_app(ScriptedAgent(), card(), **recorded.providers)
    async with connect(app) as client:
        asked = await client.send_message("ask")
        assert isinstance(asked, Task)
        assert asked.status.state is TaskState.input_required
        answered = await client.send_message("the answer", task_id=asked.id)
        assert isinstance(answered, Task)
        assert answered.status.state is TaskState.completed
    first, second = sorted(
        recorded.spans("invoke_agent test agent"), key=lambda span: span.start_time or 0
    )
    assert first.context.trace_id != second.context.trace_id  # two requests, two traces
    assert [link.context.span_id for link in second.links] == [first.context.span_id]


async def test_a_resubscribe_is_linked_to_the_run_it_follows(recorded: Recording) -> None:
    agent = ScriptedAgent()
    app = create_app(agent, card(), **recorded.providers)
    async with connect(app) as client:
        task = await client.send_message("slow", blocking=False)
        assert isinstance(task, Task)
        followed = asyncio.create_task(_states(client.resubscribe(task.id)))
        await asyncio.sleep(0.05)
        agent.release.set()
        assert (await asyncio.wait_for(followed, 10))[-1] is TaskState.completed
    (turn,) = recorded.spans("invoke_agent test agent")
    follow = await recorded.finished("SubscribeToTask", a2a_task_id=task.id)
    assert [link.context.span_id for link in follow.links] == [turn.context.span_id]


async def _states(events: AsyncIterator[object]) -> list[TaskState]:
    return [e.status.state async for e in events if hasattr(e, "status")]


class Chatty:
    """Emits many more artifact chunks than a turn records as span events."""

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        updater = TaskUpdater.for_context(events, context)
        await updater.start_work()
        for n in range(200):
            await updater.add_artifact(f"chunk {n}", artifact_id="a", append=n > 0)
        await updater.complete()

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        raise NotImplementedError


async def test_a_turn_records_a_bounded_number_of_span_events(recorded: Recording) -> None:
    app = create_app(Chatty(), card(), **recorded.providers)
    async with connect(app) as client:
        task = await client.send_message("go")
    assert isinstance(task, Task)
    (turn,) = recorded.spans("invoke_agent test agent")
    assert len(turn.events) == 64
    assert (turn.attributes or {})["parley.turn.events_dropped"] == 203 - 64


@pytest.mark.postgres
async def test_a_task_taken_over_is_recorded_and_counted(recorded: Recording) -> None:
    async with postgres_engine() as engine:
        store = SQLStore(engine)
        try:
            left = Task(
                id="left-running", context_id="c", status=TaskStatus(state=TaskState.working)
            )
            await store.append("left-running", [StoredEvent(1, left)])  # no lease holds it
            server = RequestHandler(ScriptedAgent(), card(), task_store=store, **recorded.providers)
            assert await recover(server.runs) == 1
        finally:
            await store.aclose()
    (takeover,) = recorded.spans("parley.lease.takeover")
    assert (takeover.attributes or {})["a2a.task.id"] == "left-running"
    (point,) = recorded.points("parley.lease.takeovers")
    assert point.value == 1


@pytest.mark.postgres
async def test_another_process_links_to_the_task_s_last_turn(recorded: Recording) -> None:
    """Two apps on one PostgreSQL database, as two processes: the second's resubscribe
    and the follow-up it runs are linked to the turn the first ran."""
    async with postgres_engines(2) as (one, other):
        first, second = (
            create_app(ScriptedAgent(), card(), task_store=SQLStore(engine), **recorded.providers)
            for engine in (one, other)
        )
        async with (
            first.lifespan(),
            second.lifespan(),
            connect(first) as to_first,
            connect(second) as to_second,
        ):
            asked = await to_first.send_message("ask")
            assert isinstance(asked, Task)
            assert asked.status.state is TaskState.input_required
            events = [event async for event in to_second.resubscribe(asked.id)]
            assert [type(event) for event in events] == [Task]
            answered = await to_second.send_message("more", task_id=asked.id)
            assert isinstance(answered, Task)
            assert answered.status.state is TaskState.completed
        await first.handler.task_store.aclose()
        await second.handler.task_store.aclose()
    asked_turn, answered_turn = sorted(
        recorded.spans("invoke_agent test agent"), key=lambda span: span.start_time or 0
    )
    follow = await recorded.finished("SubscribeToTask", a2a_task_id=asked.id)
    assert [link.context.span_id for link in follow.links] == [asked_turn.context.span_id]
    assert [link.context.span_id for link in answered_turn.links] == [asked_turn.context.span_id]
