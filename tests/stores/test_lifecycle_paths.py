"""Every path of a task's lifecycle ends, on every store (spec 7.1, 7.4, 7.9).

A failed store write fails the waiting call with an A2A error and settles the task; a
resubscriber that joins while a run winds down follows the next run; a resubscriber
to a task no run of this process works on gets the task and an end; no registry entry
outlives its use.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text

from parley.protocol import InternalError, TaskNotFoundError
from parley.server import CallContext, EventSink, RequestContext, RequestHandler, TaskUpdater
from parley.server.tasks._recovery import recover
from parley.stores import Store, StoredEvent
from parley.stores.sql import SQLStore
from parley.types import (
    Event,
    Message,
    MessageSendParams,
    Role,
    Task,
    TaskIdParams,
    TaskQueryParams,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from tests.server.agents import card

BOUND = 10.0
"""Seconds any single wait here may take before the test fails instead of hanging."""


class WindingDownAgent:
    """``ask``: asks for input, then keeps running until ``release`` (winding down);
    anything else completes at once. ``chunk``: one artifact chunk, then completes."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.wound_down = asyncio.Event()

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        updater = TaskUpdater.for_context(events, context)
        said = context.get_user_input()
        await updater.start_work()
        if said == "ask":
            await updater.requires_input("what now?")
            await self.release.wait()
            self.wound_down.set()
            return
        if said == "chunk":
            await updater.add_artifact([TextPart(text="a chunk")])
        await updater.complete()

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        await TaskUpdater.for_context(events, context).cancel()


def _params(said: str, task_id: str | None = None) -> MessageSendParams:
    message = Message(
        message_id=f"m-{said}-{id(object())}",
        role=Role.user,
        parts=[TextPart(text=said)],
        task_id=task_id,
    )
    return MessageSendParams(message=message)


@pytest.fixture
async def handler(store: Store) -> AsyncIterator[tuple[RequestHandler, WindingDownAgent]]:
    agent = WindingDownAgent()
    handler = RequestHandler(agent, card(), task_store=store, retention=None)
    await handler.start()
    try:
        yield handler, agent
    finally:
        agent.release.set()
        await handler.aclose()


async def _collect(stream: AsyncIterator[tuple[int, Event]]) -> list[tuple[int, Event]]:
    return [item async for item in stream]


async def test_a_resubscriber_joining_a_winding_down_run_follows_the_next_run(
    handler: tuple[RequestHandler, WindingDownAgent],
) -> None:
    server, agent = handler
    asked = await asyncio.wait_for(server.send_message(_params("ask")), BOUND)
    assert isinstance(asked, Task)
    assert asked.status.state is TaskState.input_required
    stream = await server.resubscribe(TaskIdParams(id=asked.id), CallContext())
    first = await asyncio.wait_for(anext(stream), BOUND)
    assert isinstance(first[1], Task)
    assert first[1].status.state is TaskState.input_required
    rest = asyncio.create_task(_collect(stream))
    answered = await asyncio.wait_for(server.send_message(_params("done", asked.id)), BOUND)
    assert isinstance(answered, Task)
    assert answered.status.state is TaskState.completed
    followed = await asyncio.wait_for(rest, BOUND)
    states = [e.status.state for _, e in followed if isinstance(e, TaskStatusUpdateEvent)]
    assert states == [TaskState.working, TaskState.completed]
    sequences = [first[0]] + [n for n, _ in followed]
    assert sequences == list(range(first[0], first[0] + len(sequences)))  # no gap
    agent.release.set()
    await asyncio.wait_for(agent.wound_down.wait(), BOUND)
    await asyncio.sleep(0)
    assert len(server.runs.registry) == 0


async def test_resubscribe_to_a_task_no_run_here_works_on_ends(
    handler: tuple[RequestHandler, WindingDownAgent], store: Store
) -> None:
    """A task left working that no run here will move on: the Task, then the end of the
    stream. With a shared store it may be another process's, or its process died and the
    recovery sweep (any process's) fails it: the stream follows it to that end."""
    server, _ = handler
    task = Task(id="elsewhere", context_id="c", status=TaskStatus(state=TaskState.working))
    await store.append("elsewhere", [StoredEvent(1, task)])
    stream = await server.resubscribe(TaskIdParams(id="elsewhere"), CallContext())
    if not store.shared:
        events = await asyncio.wait_for(_collect(stream), BOUND)
        assert [(n, type(e)) for n, e in events] == [(1, Task)]
    else:
        first = await asyncio.wait_for(anext(stream), BOUND)
        assert (first[0], type(first[1])) == (1, Task)
        await recover(server.runs)  # as the heartbeat's sweep does
        rest = await asyncio.wait_for(_collect(stream), BOUND)
        states = [(n, e.status.state) for n, e in rest if isinstance(e, TaskStatusUpdateEvent)]
        assert states == [(2, TaskState.failed)]
        assert len(rest) == 1
    assert len(server.runs.registry) == 0
    with pytest.raises(TaskNotFoundError):
        await server.resubscribe(TaskIdParams(id="nowhere"), CallContext())


async def test_the_first_submitted_time_is_not_after_the_working_time(
    handler: tuple[RequestHandler, WindingDownAgent],
) -> None:
    server, _ = handler
    done = await asyncio.wait_for(server.send_message(_params("hi")), BOUND)
    assert isinstance(done, Task)
    events = await server.task_store.events(done.id)
    times = [
        e.event.status.timestamp
        for e in events
        if isinstance(e.event, Task | TaskStatusUpdateEvent) and e.event.status.timestamp
    ]
    assert [type(e.event).__name__ for e in events][:2] == ["Task", "TaskStatusUpdateEvent"]
    assert times == sorted(times)


async def test_get_and_cancel_of_finished_tasks_leave_no_entry(
    handler: tuple[RequestHandler, WindingDownAgent],
) -> None:
    server, _ = handler
    done = await asyncio.wait_for(server.send_message(_params("hi")), BOUND)
    assert isinstance(done, Task)
    for _ in range(5):
        await server.get_task(TaskQueryParams(id=done.id))
        stream = await server.resubscribe(TaskIdParams(id=done.id), CallContext())
        assert len(await asyncio.wait_for(_collect(stream), BOUND)) == 1
    assert len(server.runs.registry) == 0


async def _break_artifact_writes(store: SQLStore) -> None:
    """A real failure of the database for one kind of write: a trigger refuses to log
    artifact events (the agent's first chunk), and nothing else."""
    async with store.engine.begin() as connection:
        if store.is_sqlite:
            await connection.execute(
                text(
                    "CREATE TRIGGER refuse_chunks BEFORE INSERT ON parley_events "
                    "WHEN NEW.event LIKE '%artifact-update%' "
                    "BEGIN SELECT RAISE(ABORT, 'disk full'); END"
                )
            )
            return
        await connection.execute(
            text(
                "CREATE FUNCTION refuse_chunks() RETURNS trigger AS $$ BEGIN "
                "IF NEW.event LIKE '%artifact-update%' THEN RAISE EXCEPTION 'disk full'; "
                "END IF; RETURN NEW; END $$ LANGUAGE plpgsql"
            )
        )
        await connection.execute(
            text(
                "CREATE TRIGGER refuse_chunks BEFORE INSERT ON parley_events "
                "FOR EACH ROW EXECUTE FUNCTION refuse_chunks()"
            )
        )


async def test_a_failed_store_write_fails_the_call_and_settles_the_task(
    handler: tuple[RequestHandler, WindingDownAgent], store: Store
) -> None:
    if not isinstance(store, SQLStore):
        pytest.skip("the memory store has no write that can fail")
    server, _ = handler
    await server.send_message(_params("hi"))  # the schema exists
    await _break_artifact_writes(store)
    with pytest.raises(InternalError, match="could not store"):
        await asyncio.wait_for(server.send_message(_params("chunk")), BOUND)
    stream = await server.stream_message(_params("chunk"))
    with pytest.raises(InternalError, match="could not store"):
        await asyncio.wait_for(_collect(stream), BOUND)
    await asyncio.sleep(0.05)  # let the failed runs unwind
    assert len(server.runs.registry) == 0
    states = []
    for task_id in await _task_ids(store):
        snapshot = await store.get(task_id)
        assert snapshot is not None
        states.append(snapshot.task.status.state)
        message = snapshot.task.status.message
        if snapshot.task.status.state is TaskState.failed:
            assert message is not None
            assert "could not store" in message.parts[0].text  # type: ignore[union-attr]
    assert sorted(states) == [TaskState.completed, TaskState.failed, TaskState.failed]


async def _task_ids(store: SQLStore) -> list[str]:
    async with store.engine.connect() as connection:
        rows = await connection.execute(text("SELECT id FROM parley_tasks"))
        return [task_id for (task_id,) in rows]
