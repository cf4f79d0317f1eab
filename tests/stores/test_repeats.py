"""An idempotent send sent again (same ``messageId``, a ``Repeat``) through a process
that does not run the task: two apps with their own engines, stores and buses on one
real PostgreSQL, as two processes are, with ``LISTEN/NOTIFY`` and with Redis as the bus.

The repeat answers the task as stored, not the copy the other process holds (which no
note updates unless a reader there follows it); a blocking repeat of a run still going
waits for it to end and answers what the first send got; a streaming repeat streams the
task and its live events to the end, as ``tasks/resubscribe`` does.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from parley.server import A2AApp, AgentContext, Bus, RedisBus, agent, create_app
from parley.stores.sql import PostgresBus, SQLStore
from parley.types import (
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from tests.server.agents import card
from tests.stores.databases import postgres_engines
from tests.stores.test_postgres_bus import _told, _until

pytestmark = pytest.mark.postgres

REDIS = "redis://127.0.0.1:6379/0"
BUSES = ["listen-notify", "redis"]


@asynccontextmanager
async def _two_processes(
    kind: str, orders: asyncio.Queue[str | None], executor: Any = None
) -> AsyncIterator[tuple[A2AApp, A2AApp]]:
    """Two apps (engines, stores, buses) on one database, as two processes are, met;
    their agent ``_told(orders)``, or ``executor``."""
    channel = f"parley_test_{uuid.uuid4().hex[:12]}"
    async with postgres_engines(2) as engines:
        stores = [SQLStore(engine) for engine in engines]
        buses: list[Bus] = [
            PostgresBus(engine, channel) if kind == "listen-notify" else RedisBus(REDIS, channel)
            for engine in engines
        ]
        apps = [
            create_app(executor or _told(orders), card(), task_store=store, bus=bus)
            for store, bus in zip(stores, buses, strict=True)
        ]
        for app in apps:
            await app.handler.start()
        try:
            if kind == "listen-notify":
                met = [bus for bus in buses if isinstance(bus, PostgresBus)]
                await _until(lambda: all(bus.peers == 1 for bus in met), "never met")
            yield apps[0], apps[1]
        finally:
            for app in apps:
                await app.handler.aclose()
            for store in stores:
                await store.aclose()


def _params(message_id: str, context_id: str, blocking: bool = True) -> MessageSendParams:
    """A message in ``context_id`` (a scope: sent again, it is a repeat)."""
    message = Message(
        role=Role.user,
        message_id=message_id,
        context_id=context_id,
        parts=[TextPart(text="go")],
    )
    return MessageSendParams(
        message=message, configuration=MessageSendConfiguration(blocking=blocking)
    )


async def _stored(app: A2AApp, task_id: str, count: int) -> None:
    """Until the task's store has ``count`` events."""
    store = app.handler.task_store
    for _ in range(3000):
        if len(await store.events(task_id)) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the events were never stored")


def _chunks(task: Task) -> list[str]:
    texts = []
    for artifact in task.artifacts or ():
        for part in artifact.parts:
            assert isinstance(part, TextPart)
            texts.append(part.text)
    return texts


@pytest.mark.parametrize("kind", BUSES)
async def test_a_blocking_repeat_waits_for_the_run_elsewhere_and_answers_as_the_first(
    kind: str,
) -> None:
    """Sent again through the other process while the run goes on: it waits for the
    run to end (following the task there) and answers the ended task, the very answer
    the first send got."""
    orders: asyncio.Queue[str | None] = asyncio.Queue()
    async with _two_processes(kind, orders) as (here, there):
        params = _params(uuid.uuid4().hex, uuid.uuid4().hex)
        orders.put_nowait("one")
        first = asyncio.create_task(here.handler.send_message(params))
        await _until(lambda: bool(here.handler.runs.registry), "never started")
        task_id = next(iter(here.handler.runs.registry)).task_id
        await _stored(here, task_id, 2)
        repeat = asyncio.create_task(there.handler.send_message(params))
        await _until(lambda: task_id in there.handler.runs.registry, "the repeat never looked")
        runner = here.handler.runs.bus
        if isinstance(runner, PostgresBus):  # RedisBus notes every task: no follows
            await _until(lambda: runner.wanted(task_id), "the repeat never followed")
        orders.put_nowait("two")
        await _stored(here, task_id, 3)
        assert not repeat.done(), "answered before the run ended"
        orders.put_nowait(None)
        answered, repeated = await first, await repeat
        assert isinstance(answered, Task)
        assert isinstance(repeated, Task)
        assert repeated.status.state is TaskState.completed
        assert _chunks(repeated) == ["one", "two"]
        assert repeated.model_dump(mode="json") == answered.model_dump(mode="json")
        assert task_id not in there.handler.runs.registry  # let go, unfollowed
        if isinstance(runner, PostgresBus):
            await _until(lambda: not runner.wanted(task_id), "never unfollowed")


@pytest.mark.parametrize("kind", BUSES)
async def test_a_repeat_answers_the_task_as_stored_not_a_stale_copy(kind: str) -> None:
    """The other process holds a copy of the task that no reader there follows (so no
    note updates it): a non-blocking repeat through it answers the task as stored."""
    orders: asyncio.Queue[str | None] = asyncio.Queue()
    async with _two_processes(kind, orders) as (here, there):
        params = _params(uuid.uuid4().hex, uuid.uuid4().hex, blocking=False)
        orders.put_nowait("one")
        started = await here.handler.send_message(params)
        assert isinstance(started, Task)
        await _stored(here, started.id, 2)
        async with there.handler.runs.hold_if_any(started.id) as kept:
            assert kept is not None
            orders.put_nowait("two")
            await _stored(here, started.id, 3)
            repeated = await there.handler.send_message(params)
            assert isinstance(repeated, Task)
            assert _chunks(repeated) == ["one", "two"]
            orders.put_nowait(None)
            blocking = _params(params.message.message_id, started.context_id)
            ended = await there.handler.send_message(blocking)
            assert isinstance(ended, Task)
            assert ended.status.state is TaskState.completed


@pytest.mark.parametrize("kind", BUSES)
async def test_a_streaming_repeat_streams_the_run_elsewhere_to_its_end(kind: str) -> None:
    """``message/stream`` sent again through the other process: the task as stored,
    then every live event of the run going on in the first, in order, to the end."""
    orders: asyncio.Queue[str | None] = asyncio.Queue()
    async with _two_processes(kind, orders) as (here, there):
        params = _params(uuid.uuid4().hex, uuid.uuid4().hex)
        orders.put_nowait("one")
        stream = await here.handler.stream_message(params)
        _, started = await anext(stream)
        assert isinstance(started, Task)
        task_id = started.id
        await _stored(here, task_id, 2)  # the task, "one"
        repeated = await there.handler.stream_message(params)
        position, task = await anext(repeated)
        assert isinstance(task, Task)
        assert _chunks(task) == ["one"]
        for more in ("two", "three", None):
            orders.put_nowait(more)
        rest = [item async for item in repeated]
        sequences = [position] + [sequence for sequence, _ in rest]
        assert sequences == list(range(position, position + len(sequences)))
        chunks = [e.artifact for _, e in rest if isinstance(e, TaskArtifactUpdateEvent)]
        assert [chunk.parts[0] for chunk in chunks] == [
            TextPart(text="two"),
            TextPart(text="three"),
        ]
        last = rest[-1][1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.status.state is TaskState.completed
        assert [item async for item in stream][-1] == rest[-1]
        assert task_id not in there.handler.runs.registry


@pytest.mark.parametrize("kind", BUSES)
async def test_a_repeat_finds_a_task_another_process_is_still_starting(kind: str) -> None:
    """The first send claimed the message in one process, whose agent has emitted
    nothing yet (the task is stored with its first event): a repeat through the other
    looks for it again until it is stored, and answers it, not "no longer kept"."""
    orders: asyncio.Queue[str | None] = asyncio.Queue()
    async with _two_processes(kind, orders) as (here, there):
        params = _params(uuid.uuid4().hex, uuid.uuid4().hex, blocking=False)
        first = asyncio.create_task(here.handler.send_message(params))
        await _until(lambda: bool(here.handler.runs.registry), "never started")
        task_id = next(iter(here.handler.runs.registry)).task_id
        assert await here.handler.task_store.get(task_id) is None
        repeat = asyncio.create_task(there.handler.send_message(params))
        await asyncio.sleep(0.2)  # it looked, and found nothing yet
        assert not repeat.done(), repeat
        orders.put_nowait("one")
        answered, repeated = await first, await repeat
        assert isinstance(repeated, Task)
        assert isinstance(answered, Task)
        assert repeated.id == answered.id == task_id
        orders.put_nowait(None)


async def test_a_streaming_repeat_closed_early_unfollows_at_once() -> None:
    """The reader of a streaming repeat goes away (its stream closed after the task):
    the task is let go of and unfollowed then, not when the garbage collector gets to
    it; the process running it stops noting its events."""
    orders: asyncio.Queue[str | None] = asyncio.Queue()
    async with _two_processes("listen-notify", orders) as (here, there):
        params = _params(uuid.uuid4().hex, uuid.uuid4().hex)
        orders.put_nowait("one")
        stream = await here.handler.stream_message(params)
        _, started = await anext(stream)
        assert isinstance(started, Task)
        await _stored(here, started.id, 2)
        repeated = await there.handler.stream_message(params)
        assert isinstance(repeated, AsyncGenerator)
        await anext(repeated)
        follower, runner = there.handler.runs.bus, here.handler.runs.bus
        assert isinstance(follower, PostgresBus)
        assert isinstance(runner, PostgresBus)
        assert follower._following == {started.id: 1}
        await repeated.aclose()
        assert follower._following == {}
        assert started.id not in there.handler.runs.registry
        await _until(lambda: not runner.wanted(started.id), "never unfollowed")
        orders.put_nowait(None)
        assert [item async for item in stream]


@pytest.mark.parametrize("kind", BUSES)
async def test_a_repeat_gets_the_direct_reply_another_process_is_still_making(
    kind: str,
) -> None:
    """The first send's agent answers with a Message (no task is ever stored) in one
    process; a repeat through the other, sent before the reply was, looks again until
    the reply is recorded, and answers it."""
    go = asyncio.Event()

    @agent
    async def replies(ctx: AgentContext) -> AsyncIterator[Message]:
        await go.wait()
        yield Message(role=Role.agent, message_id=uuid.uuid4().hex, parts=[TextPart(text="hi")])

    async with _two_processes(kind, asyncio.Queue(), replies) as (here, there):
        params = _params(uuid.uuid4().hex, uuid.uuid4().hex)
        first = asyncio.create_task(here.handler.send_message(params))
        await _until(lambda: bool(here.handler.runs.registry), "never started")
        repeat = asyncio.create_task(there.handler.send_message(params))
        await asyncio.sleep(0.2)  # it looked, and found nothing yet
        assert not repeat.done(), repeat
        go.set()
        answered, repeated = await first, await repeat
        assert isinstance(answered, Message)
        assert repeated == answered
