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

from parley.server import create_app
from parley.stores.sql import PostgresBus, SQLStore
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
            kept = await there.handler.runs.attach(made["id"])  # follows, not listening yet
            assert kept is not None
            try:
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
                there.handler.runs.let_go(kept)
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
