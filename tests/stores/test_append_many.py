"""``append_many`` under contention: several tasks' appends are stored all or none, also
when concurrent writers share a group commit whose shared transaction fails and each of
its writes runs again alone, and when several stores (as several processes have) write
to one database."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from parley.stores import Append, LeaseLostError, OutboxEntry, Store, StoredEvent
from parley.stores.sql import SQLStore
from parley.types import TaskState, TaskStatus, TaskStatusUpdateEvent
from tests.stores.databases import postgres_engines, sqlite_url

WRITERS = 8
"""Concurrent appenders in a trial."""

APPENDS = 5
"""Appends each writer makes (retrying the ones another writer's beat)."""

TRIALS = 4

ATTEMPTS = 200
"""Tries a writer gets for one append before the test gives up on it."""


def _event(task_id: str, writer: int) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id=task_id,
        context_id="c1",
        status=TaskStatus(state=TaskState.working),
        final=False,
        metadata={"writer": writer},
    )


def _writers(log: list[StoredEvent]) -> list[tuple[int, int]]:
    """Each logged event's sequence number and the writer that appended it."""
    found = []
    for stored in log:
        assert isinstance(stored.event, TaskStatusUpdateEvent)
        assert stored.event.metadata is not None
        found.append((stored.sequence, stored.event.metadata["writer"]))
    return found


async def _write_pairs(store: Store, writer: int, first: str, second: str) -> int:
    """Append ``APPENDS`` events to both tasks, each pair in one ``append_many`` at the
    next sequence number, trying again when another writer took that number; returns
    how many tries were refused."""
    refused = 0
    for _ in range(APPENDS):
        for _attempt in range(ATTEMPTS):
            sequence = await store.last_sequence(first) + 1
            await asyncio.sleep(0)  # the others read the same number meanwhile
            delivery = OutboxEntry(second, "hook", sequence, f'{{"writer":{writer}}}')
            try:
                await store.append_many(
                    [
                        Append(first, [StoredEvent(sequence, _event(first, writer))]),
                        Append(second, [StoredEvent(sequence, _event(second, writer))], [delivery]),
                    ]
                )
            except ValueError:
                refused += 1
                await asyncio.sleep(0)
                continue
            break
        else:
            pytest.fail(f"writer {writer} never got an append in")
    return refused


async def _contend(stores: list[Store], trial: int) -> int:
    first, second = f"a{trial}", f"b{trial}"
    refused = await asyncio.gather(
        *(_write_pairs(stores[w % len(stores)], w, first, second) for w in range(WRITERS))
    )
    store = stores[0]
    logged = _writers(await store.events(first))
    assert [sequence for sequence, _ in logged] == list(range(1, WRITERS * APPENDS + 1))
    # every append_many stored both of its parts, or neither: the logs are twins
    assert _writers(await store.events(second)) == logged
    due = [e for e in await store.outbox_due(time.time(), limit=1000) if e.task_id == second]
    assert [(e.sequence, e.payload) for e in due] == [
        (sequence, f'{{"writer":{writer}}}') for sequence, writer in logged
    ]
    return sum(refused)


async def test_concurrent_append_many_stores_each_whole(store: Store) -> None:
    """Writers racing for the next sequence number of two tasks: the refused
    ``append_many`` stores nothing (neither the other task's event nor its delivery)."""
    refused = 0
    for trial in range(TRIALS):
        refused += await _contend([store], trial)
    assert refused > 0  # the writers did collide


@asynccontextmanager
async def _two_stores(kind: str, directory: Path) -> AsyncIterator[list[Store]]:
    """Two stores on one database, as two servers (or processes) have."""
    if kind == "sqlite":  # one process: each store has its own writer and connections
        stores = [SQLStore(sqlite_url(directory)), SQLStore(sqlite_url(directory))]
        try:
            yield list(stores)
        finally:
            for store in stores:
                await store.aclose()
        return
    async with postgres_engines(2) as engines:
        stores = [SQLStore(engine) for engine in engines]
        try:
            yield list(stores)
        finally:
            for store in stores:
                await store.aclose()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def test_append_many_from_two_stores_on_one_database(kind: str, tmp_path: Path) -> None:
    """The same race with the writers split between two stores on one database: each
    store's writer commits its own batches, and the database settles who wins."""
    async with _two_stores(kind, tmp_path) as stores:
        refused = 0
        for trial in range(TRIALS):
            refused += await _contend(stores, trial)
        assert refused > 0


async def test_a_lost_lease_refuses_the_whole_append_many(store: Store) -> None:
    """An ``append_many`` one of whose parts is fenced by a lease another holder took
    stores none of its parts, while the appends committed beside it (in the same group
    commit, on the SQL stores) are stored."""
    for trial in range(TRIALS):
        leased, free = f"leased{trial}", f"free{trial}"
        stale = await store.acquire_lease(leased, "p1", 60)
        assert stale is not None
        await store.release_lease(stale)
        assert await store.acquire_lease(leased, "p2", 60) is not None
        others = [f"other{trial}-{n}" for n in range(WRITERS)]
        results = await asyncio.gather(
            store.append_many(
                [
                    Append(free, [StoredEvent(1, _event(free, 0))]),
                    Append(leased, [StoredEvent(1, _event(leased, 0))], lease=stale),
                ]
            ),
            *(
                store.append(task, [StoredEvent(1, _event(task, n))])
                for n, task in enumerate(others)
            ),
            return_exceptions=True,
        )
        assert isinstance(results[0], LeaseLostError)
        assert results[1:] == [None] * WRITERS
        assert await store.events(free) == []
        assert await store.events(leased) == []
        for task in others:
            assert await store.last_sequence(task) == 1


async def test_a_repeated_number_in_one_part_refuses_the_others(store: Store) -> None:
    """An ``append_many`` refused for one part's sequence number stores none of its other
    parts, also batched with other writers' appends; the error names that part's task."""
    for trial in range(TRIALS):
        taken, free = f"taken{trial}", f"free{trial}"
        await store.append(taken, [StoredEvent(1, _event(taken, 0))])
        others = [f"other{trial}-{n}" for n in range(WRITERS)]
        results = await asyncio.gather(
            *(
                store.append(task, [StoredEvent(1, _event(task, n))])
                for n, task in enumerate(others)
            ),
            store.append_many(
                [
                    Append(
                        free, [StoredEvent(1, _event(free, 1))], [OutboxEntry(free, "h", 1, "{}")]
                    ),
                    Append(taken, [StoredEvent(1, _event(taken, 1))]),
                ]
            ),
            return_exceptions=True,
        )
        refused = results[-1]
        assert isinstance(refused, ValueError)
        assert f"task {taken} already has" in str(refused)
        assert results[:-1] == [None] * WRITERS
        assert await store.events(free) == []
        assert [e for e in await store.outbox_due(time.time()) if e.task_id == free] == []
        assert _writers(await store.events(taken)) == [(1, 0)]


async def test_one_task_twice_in_one_append_many(store: Store) -> None:
    """A task's parts in one ``append_many`` follow each other; a part that repeats a
    number an earlier part of the same call takes refuses the call."""
    await store.append_many(
        [
            Append("t1", [StoredEvent(1, _event("t1", 1))]),
            Append("t2", [StoredEvent(1, _event("t2", 1))]),
            Append("t1", [StoredEvent(2, _event("t1", 2))]),
        ]
    )
    assert _writers(await store.events("t1")) == [(1, 1), (2, 2)]
    with pytest.raises(ValueError, match="task t3 already has an event numbered 1"):
        await store.append_many(
            [
                Append("t3", [StoredEvent(1, _event("t3", 1))]),
                Append("t3", [StoredEvent(1, _event("t3", 2))]),
            ]
        )
    assert await store.events("t3") == []
