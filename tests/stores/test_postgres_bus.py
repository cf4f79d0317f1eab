"""The event bus over PostgreSQL ``LISTEN/NOTIFY`` (``_notify``): notes reach every
other process listening, in order, and go out only while another process listens; two
processes that meet catch up on what either kept back before.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from parley.server import A2AApp, AgentContext, agent, create_app
from parley.stores.sql import PostgresBus, SQLStore
from parley.types import (
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from tests.server.agents import card
from tests.stores.databases import postgres_engines
from tests.stores.test_postgres_writer import _send, asks

pytestmark = pytest.mark.postgres


async def _until(done: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not done():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.01)


@asynccontextmanager
async def _overheard(engine: AsyncEngine, channel: str) -> AsyncIterator[list[str]]:
    """Every note on ``channel``, heard by a plain listener (not a bus: it says no
    hello, so no bus counts it)."""
    heard: list[str] = []
    async with engine.connect() as connection:
        raw: Any = (await connection.get_raw_connection()).driver_connection
        await raw.add_listener(channel, lambda *note: heard.append(note[3]))
        yield heard


def _byes(heard: list[str]) -> int:
    return sum(note.startswith("b ") for note in heard)


def _channel() -> str:
    return f"parley_test_{uuid.uuid4().hex[:12]}"


async def test_the_bus_delivers_every_note_sent_at_once() -> None:
    """Notes queued together go out in one statement (those queued while it is sent,
    in the next); every other process listening hears each, in order, and the sender
    does not hear its own."""
    channel = _channel()
    async with postgres_engines(2) as (first, second):
        sender, listener = PostgresBus(first, channel), PostgresBus(second, channel)
        heard: list[str] = []
        own: list[str] = []

        await listener.start(heard.append)
        await sender.start(own.append)
        try:
            await _until(lambda: sender.peers == listener.peers == 1, "the buses never met")
            for number in range(200):
                await sender.send(f"e {number} t{number % 7}")
                if number % 10 == 0:
                    await asyncio.sleep(0.001)  # some notes queue while others go out
            await _until(lambda: len([n for n in heard if n != "*"]) == 200, "notes lost")
            # committed after the sender's notes, so heard after them (were they heard)
            await listener.send("c answer")
            await _until(lambda: "c answer" in own, "the answer was lost")
        finally:
            await sender.aclose()
            await listener.aclose()
        assert [n for n in heard if n != "*"] == [f"e {n} t{n % 7}" for n in range(200)]
        assert [n for n in own if n != "*"] == ["c answer"]


async def test_a_bus_alone_sends_no_note_until_another_listens() -> None:
    """A process alone on its database sends nothing; once a second bus listens, the
    two know of each other (hello, answered) and notes go out; when the second closes
    (its bye), the first is alone again."""
    channel = _channel()
    async with postgres_engines(3) as (first, second, third):
        alone, later = PostgresBus(first, channel), PostgresBus(second, channel)
        async with _overheard(third, channel) as heard:
            await alone.start(lambda note: None)
            try:
                await alone.send("e 1 kept")
                assert alone.peers == 0
                await later.start(lambda note: None)
                await _until(lambda: alone.peers == later.peers == 1, "the buses never met")
                await alone.send("e 2 sent")
                await _until(lambda: "e 2 sent" in heard, "the note was lost")
                await later.aclose()
                await _until(lambda: alone.peers == 0, "the bye was lost")
                await alone.send("e 3 kept")
                # A third meets it: what it sent before its answering hello (and so
                # before this one's bye) is heard before that bye.
                again = PostgresBus(second, channel)
                await again.start(lambda note: None)
                await _until(lambda: again.peers == 1, "the buses never met")
                await again.aclose()
                await _until(lambda: _byes(heard) == 2, "a bye was lost")
            finally:
                await alone.aclose()
        assert [note for note in heard if note.startswith("e ")] == ["e 2 sent"]


async def test_a_follower_catches_up_on_what_a_process_alone_kept_back() -> None:
    """A process alone sends no note for its task's events; a second process that
    follows the task and then starts listening is caught up when the two meet."""
    channel = _channel()
    async with postgres_engines(2) as (first, second):
        one, other = SQLStore(first), SQLStore(second)
        here = create_app(asks, card(), task_store=one, bus=PostgresBus(first, channel))
        there = create_app(asks, card(), task_store=other, bus=PostgresBus(second, channel))
        await here.handler.start()
        try:
            made = await _send(here, "one")
            async with there.handler.runs.hold_if_any(
                made["id"]
            ) as kept:  # follows, not listening yet
                assert kept is not None
                before = kept.log.last_sequence
                moved = await _send(here, "two", made["id"])  # no note: nobody else listens
                assert moved["status"]["state"] == "input-required"
                assert kept.log.last_sequence == before
                logged = await one.events(made["id"])
                await there.handler.start()
                await _until(
                    lambda: kept.log.last_sequence == logged[-1].sequence, "never caught up"
                )
        finally:
            await there.handler.aclose()
            await here.handler.aclose()
            await one.aclose()
            await other.aclose()


async def test_an_answer_that_could_not_be_sent_is_made_good_by_a_hello() -> None:
    """The answer to a newcomer's hello is lost (the sending connection is gone): the
    bus says hello again once it can, and the newcomer learns of it from the answer."""
    channel = _channel()
    async with postgres_engines(3) as (first, second, third):
        old, new = PostgresBus(first, channel), PostgresBus(second, channel)
        await old.start(lambda note: None)
        try:
            await _until(lambda: old._sending_pid != 0, "the hello was never sent")
            async with third.connect() as admin:
                raw: Any = (await admin.get_raw_connection()).driver_connection
                assert await raw.fetchval("SELECT pg_terminate_backend($1)", old._sending_pid)
            await new.start(lambda note: None)
            await _until(lambda: old.peers == new.peers == 1, "the buses never met")
        finally:
            await new.aclose()
            await old.aclose()


# -- follows: events notes only for the tasks another process follows ----------------


def _told(orders: asyncio.Queue[str | None]) -> Any:
    """An agent that emits one chunk per text put in ``orders``, and ends at ``None``."""

    @agent
    async def told(ctx: AgentContext) -> AsyncIterator[str]:
        while (said := await orders.get()) is not None:
            yield said

    return told


@asynccontextmanager
async def _two_processes(
    orders: asyncio.Queue[str | None],
) -> AsyncIterator[tuple[A2AApp, A2AApp, list[str]]]:
    """Two apps (stores, buses) on one database, as two processes are, met; and what a
    plain listener hears on their channel."""
    channel = _channel()
    async with postgres_engines(3) as (first, second, third), _overheard(third, channel) as heard:
        stores = SQLStore(first), SQLStore(second)
        apps = [
            create_app(_told(orders), card(), task_store=store, bus=PostgresBus(engine, channel))
            for store, engine in zip(stores, (first, second), strict=True)
        ]
        for app in apps:
            await app.handler.start()
        try:
            buses = [_bus(app) for app in apps]
            await _until(lambda: buses[0].peers == buses[1].peers == 1, "never met")
            yield apps[0], apps[1], heard
        finally:
            for app in apps:
                await app.handler.aclose()
            for store in stores:
                await store.aclose()


def _bus(app: A2AApp) -> PostgresBus:
    bus = app.handler.runs.bus
    assert isinstance(bus, PostgresBus)
    return bus


async def _start(app: A2AApp) -> str:
    message = Message(role=Role.user, message_id=uuid.uuid4().hex, parts=[TextPart(text="go")])
    params = MessageSendParams(
        message=message, configuration=MessageSendConfiguration(blocking=False)
    )
    started = await app.handler.send_message(params)
    assert isinstance(started, Task)
    return started.id


async def _stored(app: A2AApp, task_id: str, count: int) -> None:
    store = app.handler.task_store
    await _until(
        lambda: (
            (live := app.handler.runs.registry.get(task_id)) is None
            or live.log.last_sequence >= count
        ),
        "the events were never stored",
    )
    assert len(await store.events(task_id)) >= count


def _noted(heard: list[str], task_id: str) -> list[int]:
    """The sequence numbers of the events notes heard of ``task_id``."""
    return [int(n.split(" ")[1]) for n in heard if n.startswith("e ") and n.endswith(task_id)]


async def test_events_notes_go_out_only_while_another_process_follows_the_task() -> None:
    """Two processes met: a task run in one, followed by nobody, is noted to nobody; a
    resubscriber in the other follows it and gets every event, in order, to the end;
    the notes went out only while it followed, and its unfollow stops them."""
    orders: asyncio.Queue[str | None] = asyncio.Queue()
    async with _two_processes(orders) as (here, there, heard):
        for said in ("one", "two"):
            orders.put_nowait(said)
        task_id = await _start(here)
        await _stored(here, task_id, 2)
        before = (await here.handler.task_store.events(task_id))[-1].sequence
        stream = await there.handler.resubscribe(TaskIdParams(id=task_id))
        first = await anext(stream)  # the task as stored, the follow said
        await _until(lambda: _bus(here).wanted(task_id), "the follow was never heard")
        for more in ("three", "four", None):
            orders.put_nowait(more)
        rest = [item async for item in stream]
        sequences = [first[0]] + [sequence for sequence, _ in rest]
        assert sequences == list(range(first[0], first[0] + len(sequences)))
        last = rest[-1][1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.final
        assert last.status.state is TaskState.completed
        await _until(lambda: not _bus(here).wanted(task_id), "the unfollow was never heard")
        assert all(sequence > before for sequence in _noted(heard, task_id)), heard
        assert _noted(heard, task_id), "no note went out while it was followed"
        orders.put_nowait(None)
        other = await _start(here)  # followed by nobody: no note
        await _until(lambda: other not in here.handler.runs.registry, "never ended")
        assert not _noted(heard, other)


async def test_a_follow_not_heard_is_made_good_when_the_runner_listens_again() -> None:
    """The process running the task is not listening when the other starts to follow
    it (its listening connection is cut), and so notes none of its events; once it
    listens again it says hello, is told of the follow again, and notes the task's
    events from then on: the follower reads the task to its end."""
    orders: asyncio.Queue[str | None] = asyncio.Queue()
    async with _two_processes(orders) as (here, there, _):
        orders.put_nowait("one")
        task_id = await _start(here)
        await _stored(here, task_id, 2)
        runner = _bus(here)
        listening = runner._listening_pid
        async with _bus(there)._engine.connect() as admin:
            raw: Any = (await admin.get_raw_connection()).driver_connection
            assert await raw.fetchval("SELECT pg_terminate_backend($1)", listening)
        stream = await there.handler.resubscribe(TaskIdParams(id=task_id))
        await anext(stream)
        orders.put_nowait("two")  # stored while the runner does not listen: not noted
        await _until(lambda: runner._listening_pid not in (0, listening), "never again")
        await _until(lambda: runner.wanted(task_id), "the follow was never heard")
        orders.put_nowait(None)
        rest = [item async for item in stream]  # ends only if it hears of the end
        chunks = [e.artifact for _, e in rest if isinstance(e, TaskArtifactUpdateEvent)]
        assert [chunk.parts[0] for chunk in chunks] == [TextPart(text="two")]
        last = rest[-1][1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.status.state is TaskState.completed


async def test_follows_survive_an_unfollow_in_between_and_end_with_a_bye() -> None:
    """A follow, an unfollow and a follow again of one task sent at once (PostgreSQL
    folds identical notes of one transaction into one) leave the task followed; the
    follower is told to read it once the other heard the follow; its bye ends its
    follows; a bus that starts later is told of the follows there are."""
    channel = _channel()
    async with postgres_engines(3) as (first, second, third):
        runner, follower = PostgresBus(first, channel), PostgresBus(second, channel)
        told: list[str] = []
        await runner.start(lambda note: None)
        await follower.start(told.append)
        later = PostgresBus(third, channel)
        try:
            await _until(lambda: runner.peers == follower.peers == 1, "never met")
            follower.follow("t")
            follower.unfollow("t")
            follower.follow("t")
            follower.follow("t 2")  # an id with a space in it
            await follower.send("c mark")
            await _until(lambda: "* t" in told and "* t 2" in told, "no answer")
            assert runner.wanted("t")
            assert runner.wanted("t 2")
            follower.unfollow("t 2")
            await _until(lambda: not runner.wanted("t 2"), "the unfollow was never heard")
            await later.start(lambda note: None)
            await _until(lambda: later.wanted("t"), "the newcomer was never told")
            await follower.aclose()
            await _until(lambda: not runner.wanted("t") and not later.wanted("t"), "no bye")
        finally:
            await later.aclose()
            await follower.aclose()
            await runner.aclose()


# -- liveness: a process that ends with no bye ----------------------------------------


async def _crash(bus: PostgresBus) -> None:
    """The bus's process ends with no bye (SIGKILL, a machine lost): it hears and says
    nothing more."""
    bus._closed = True  # queues nothing more, so no bye
    for running in (bus._beating, bus._listening):
        assert running is not None
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


async def test_a_follower_that_ends_with_no_bye_is_forgotten() -> None:
    """A follower that crashes says no bye: its silence past three beats ends its
    follows (and its place among the peers) in every other process, while a live
    follower's follows stay."""
    channel = _channel()
    async with postgres_engines(3) as engines:
        runner, follower, other = (PostgresBus(engine, channel, beat=0.2) for engine in engines)
        for bus in (runner, follower, other):
            await bus.start(lambda note: None)
        try:
            await _until(lambda: runner.peers == follower.peers == other.peers == 2, "never met")
            follower.follow("t")
            other.follow("u")
            await _until(lambda: runner.wanted("t") and runner.wanted("u"), "never followed")
            await _crash(follower)
            await _until(lambda: not runner.wanted("t"), "the dead follower's follow stayed")
            await _until(lambda: runner.peers == other.peers == 1, "the dead stayed a peer")
            await _until(lambda: runner.wanted("u"), "a live follower's follow was lost")
        finally:
            for bus in (other, follower, runner):
                await bus.aclose()


def _stall(seconds: float) -> None:
    """Block the event loop, as a process stalled (swapped out, paused) does."""
    time.sleep(seconds)


async def test_a_stall_past_the_silence_costs_a_catch_up_never_a_follow(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The event loop stalls past the silence (both buses here: each takes the other
    for gone): they meet again, the follow is heard again and answered, and the
    follower is told to read its task again, so nothing stored meanwhile is missed."""
    channel = _channel()
    async with postgres_engines(2) as (first, second):
        runner, follower = (PostgresBus(engine, channel, beat=0.05) for engine in (first, second))
        told: list[str] = []
        await runner.start(lambda note: None)
        await follower.start(told.append)
        try:
            await _until(lambda: runner.peers == follower.peers == 1, "never met")
            follower.follow("t")
            await _until(lambda: "* t" in told and runner.wanted("t"), "never followed")
            told.clear()
            _stall(0.5)  # no beat heard for ten
            await _until(lambda: "taken for gone" in caplog.text, "nobody was taken for gone")
            await _until(lambda: runner.peers == follower.peers == 1, "never met again")
            await _until(lambda: runner.wanted("t") and "* t" in told, "the follow was lost")
        finally:
            await follower.aclose()
            await runner.aclose()
