"""PostgreSQL's group-commit writer (``_pg_writer``): many tasks' writes in shared
transactions on several connections, each caller answered on its own; a lease taken
says how far the task's log is, so a process reads the store only when it is behind;
a task made in one process and continued in another (and back) keeps one log.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import literal_column, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from parley._speedups import enabled
from parley._speedups._pg_batch import one_statement
from parley.server import A2AApp, AgentContext, InputRequired, agent, create_app
from parley.stores import Lease, LeaseLostError, OutboxEntry, StoredEvent
from parley.stores._protocols import TaskQuery
from parley.stores.sql import SQLStore
from parley.stores.sql._group import AppendWrite, SaveWrite
from parley.stores.sql._pg_writer import ALONGSIDE, _commit
from parley.stores.sql._schema import tasks
from parley.stores.sql._store import _save_values, _touch_values
from parley.types import (
    Artifact,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from tests.server.agents import card
from tests.stores.databases import postgres_engines

pytestmark = pytest.mark.postgres

TASKS = 60


def _task(task_id: str) -> Task:
    return Task(id=task_id, context_id="c", status=TaskStatus(state=TaskState.working))


def _chunk(task_id: str, text: str) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=task_id,
        context_id="c",
        artifact=Artifact(artifact_id="a", parts=[TextPart(text=text)]),
    )


@pytest.fixture
async def stores() -> AsyncIterator[tuple[SQLStore, SQLStore]]:
    """Two stores on one database, as two processes have."""
    async with postgres_engines(2) as (first, second):
        one, other = SQLStore(first), SQLStore(second)
        try:
            yield one, other
        finally:
            await one.aclose()
            await other.aclose()


async def test_leased_appends_of_many_tasks_land_and_fail_alone(
    stores: tuple[SQLStore, SQLStore],
) -> None:
    """Leases and appends of many tasks at once all land; a repeated sequence number
    fails with ValueError and a lease taken over with LeaseLostError, each alone."""
    store, _ = stores
    ids = [f"t{number}" for number in range(TASKS)]
    leases = await asyncio.gather(*(store.acquire_lease(t, "p1", 60) for t in ids))
    assert all(lease is not None and lease.last_sequence == 0 for lease in leases)
    held = {lease.task_id: lease for lease in leases if lease is not None}
    await asyncio.gather(*(store.append(t, [StoredEvent(1, _task(t))], lease=held[t]) for t in ids))
    await store.release_lease(held["t3"])
    taken = await store.acquire_lease("t3", "p2", 60)
    assert taken is not None
    assert taken.last_sequence == 1
    writes = [
        store.append(t, [StoredEvent(2, _chunk(t, f"chunk of {t}"))], lease=held[t]) for t in ids
    ]
    writes.append(store.append("t7", [StoredEvent(1, _chunk("t7", "again"))], lease=held["t7"]))
    results = await asyncio.gather(*writes, return_exceptions=True)
    assert isinstance(results[3], LeaseLostError)
    assert isinstance(results[-1], ValueError)
    assert [r for i, r in enumerate(results[:-1]) if i != 3] == [None] * (TASKS - 1)
    for task_id in ids:
        logged = await store.events(task_id)
        assert [stored.sequence for stored in logged] == ([1] if task_id == "t3" else [1, 2])


async def test_events_without_a_status_leave_the_task_row_alone(
    stores: tuple[SQLStore, SQLStore],
) -> None:
    """A task's first events make its row; later events without a status (a stream's
    chunks) do not write it again (same row version), while a status moves it."""
    store, _ = stores
    await store.append("t", [StoredEvent(1, _task("t"))])

    async def row() -> tuple[Any, ...]:
        query = select(
            tasks.c.state, tasks.c.context_id, tasks.c.touched, literal_column("xmin::text")
        ).where(tasks.c.id == "t")
        async with store.engine.connect() as connection:
            return tuple((await connection.execute(query)).one())

    first = await row()
    assert first[:2] == ("working", "c")
    await store.append("t", [StoredEvent(2, _chunk("t", "a")), StoredEvent(3, _chunk("t", "b"))])
    assert await row() == first
    done = TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=TaskStatus(state=TaskState.completed), final=True
    )
    await store.append("t", [StoredEvent(4, done)])
    state, _, touched, version = await row()
    assert state == "completed"
    assert version != first[3]
    assert touched >= first[2]
    assert [stored.sequence for stored in await store.events("t")] == [1, 2, 3, 4]


async def test_a_few_writes_wait_for_the_batch_being_committed(
    stores: tuple[SQLStore, SQLStore],
) -> None:
    """While a batch is being committed, writes queued meanwhile wait for it and go in
    the next batch, rather than pay a batch (a statement and a commit) of their own;
    once ``ALONGSIDE`` of them wait, they make a batch alongside (a batch stuck on a
    lock holds up no more than that)."""
    store, other = stores
    lease = await store.acquire_lease("stuck", "p1", 60)
    assert lease is not None
    async with other.engine.connect() as holder:  # the lease row locked: the batch waits
        await holder.execute(text("SELECT 1 FROM parley_leases WHERE task_id = 'stuck' FOR UPDATE"))
        stuck = asyncio.create_task(
            store.append("stuck", [StoredEvent(1, _task("stuck"))], lease=lease)
        )
        await _waiting_for_a_lock(holder)
        ids = [f"w{number}" for number in range(ALONGSIDE)]
        few = [asyncio.create_task(store.append(t, [StoredEvent(1, _task(t))])) for t in ids[:-1]]
        done, _ = await asyncio.wait(few, timeout=0.5)
        assert not done  # they wait for the stuck batch
        last = asyncio.create_task(store.append(ids[-1], [StoredEvent(1, _task(ids[-1]))]))
        await asyncio.gather(*few, last)  # enough of them: a batch of their own
        assert not stuck.done()
        await holder.rollback()
    await stuck
    for task_id in ["stuck", *ids]:
        assert [stored.sequence for stored in await store.events(task_id)] == [1]


async def test_a_lease_says_how_far_the_log_is(stores: tuple[SQLStore, SQLStore]) -> None:
    """As the lease is taken, in the same transaction: 0 for a new task, the last
    sequence number another process stored otherwise, also when its holder renews."""
    one, other = stores
    first = await one.acquire_lease("t", "p1", 60)
    assert first is not None
    assert first.last_sequence == 0
    await one.append(
        "t", [StoredEvent(1, _task("t")), StoredEvent(2, _chunk("t", "x"))], lease=first
    )
    renewed = await one.acquire_lease("t", "p1", 60)
    assert renewed is not None
    assert renewed.last_sequence == 2
    assert await other.acquire_lease("t", "p2", 60) is None
    await one.append("t", [StoredEvent(3, _chunk("t", "y"))], lease=first, release=True)
    moved = await other.acquire_lease("t", "p2", 60)
    assert moved is not None
    assert (moved.token, moved.last_sequence) == (first.token + 1, 3)


def _new_lease(task_id: str, holder: str = "p1") -> Lease:
    return Lease(task_id, holder, 1, time.time() + 60, 0, new=True)


async def test_a_new_tasks_lease_is_stored_by_its_first_append(
    stores: tuple[SQLStore, SQLStore],
) -> None:
    """A new lease (``Lease.new``) is stored in the transaction of the append that
    carries it, and not at all when that append gives it up (the task's run ends with
    its first write: no lease row, another process takes the task as one never held);
    it is refused, with nothing stored, for a task that has a lease already, given up
    or not, while the others of the same batch land. Through the group writer and
    through the SQLAlchemy path (an append with outbox entries) alike."""
    store, other = stores
    ids = [f"n{number}" for number in range(TASKS)]
    refused = ("n4", "n5", "n6")  # n4 given up by its append, n6 too and with outbox rows
    given_up = ("n3", "n4", "n6", "n7")  # n3 with outbox rows
    taken = {t: await other.acquire_lease(t, "p2", 60) for t in refused}
    writes = [
        store.append(
            t,
            [StoredEvent(1, _task(t))],
            lease=_new_lease(t),
            release=t in given_up,
            outbox=[OutboxEntry(t, "config", 1, "{}")] if t in ("n3", "n6", "n9") else (),
        )
        for t in ids
    ]
    results = dict(zip(ids, await asyncio.gather(*writes, return_exceptions=True), strict=True))
    for task_id in ids:
        if task_id in refused:
            assert isinstance(results[task_id], LeaseLostError)
            assert await store.events(task_id) == []
            assert await store.get_lease(task_id) == taken[task_id]
            continue
        assert results[task_id] is None
        assert await store.last_sequence(task_id) == 1
        lease = await store.get_lease(task_id)
        if task_id in given_up:
            assert lease is None
            moved = await other.acquire_lease(task_id, "p2", 60)  # another may take it
            assert moved is not None
            assert (moved.holder, moved.token) == ("p2", 1)
            assert moved.last_sequence == 1
        else:
            assert lease is not None
            assert (lease.holder, lease.token) == ("p1", 1)
    assert await other.acquire_lease("n8", "p2", 60) is None  # held by p1
    again = store.append("n8", [StoredEvent(2, _chunk("n8", "x"))], lease=_new_lease("n8"))
    with pytest.raises(LeaseLostError):  # stored once: a second new lease is refused
        await again


async def test_a_batch_of_new_tasks_is_one_statement_that_fails_alone(
    stores: tuple[SQLStore, SQLStore],
) -> None:
    """A batch without leases to take or check, each task once, is written by one
    statement (``_pg_batch``): new leases, events, snapshots and touches all land; a
    task whose new lease another holder has gets ``LeaseLostError`` with nothing
    stored while the rest lands, given up by its append or not; a new lease given up
    by its append is not stored; a repeated sequence number fails that write alone
    (``ValueError``). A batch with a task twice, or a lease to check, is not one."""
    store, other = stores
    await store.append("old", [StoredEvent(1, _task("old"))])
    taken = await other.acquire_lease("held", "p2", 60)
    assert taken is not None
    held_too = await other.acquire_lease("held too", "p2", 60)
    assert held_too is not None
    done = Task(id="saved", context_id="c", status=TaskStatus(state=TaskState.completed))

    def append(
        task_id: str, sequence: int, lease: Lease | None, release: bool = False
    ) -> AppendWrite:
        event = _task(task_id) if sequence == 1 else _chunk(task_id, "x")
        touch = _touch_values(task_id, [StoredEvent(sequence, event)], None)
        return AppendWrite(task_id, [StoredEvent(sequence, event)], touch, lease, None, release)

    writes: list[Any] = [append(f"b{n}", 1, _new_lease(f"b{n}")) for n in range(5)]
    writes += [append("held", 1, _new_lease("held")), append("plain", 1, None)]
    writes.append(SaveWrite(_save_values(done, 0, None)))
    writes += [append("gone", 1, _new_lease("gone"), release=True)]
    writes += [append("held too", 1, _new_lease("held too"), release=True)]
    assert one_statement(writes)
    assert not one_statement([*writes, append("b1", 2, None)])
    assert not one_statement([*writes, append("old", 2, Lease("old", "p1", 1, 0.0))])

    async def commit(batch: list[Any]) -> list[Any]:
        futures = [asyncio.get_running_loop().create_future() for _ in batch]
        async with store.engine.connect() as connection:
            raw = (await connection.get_raw_connection()).driver_connection
            await _commit(raw, list(zip(batch, futures, strict=True)))
        return await asyncio.gather(*futures, return_exceptions=True)

    results = await commit(writes)
    assert isinstance(results[5], LeaseLostError)
    assert isinstance(results[9], LeaseLostError)
    assert [r for i, r in enumerate(results) if i not in (5, 9)] == [None] * (len(writes) - 2)
    assert await store.events("held") == []
    assert await store.get_lease("held") == taken
    assert await store.events("held too") == []
    assert await store.get_lease("held too") == held_too
    assert await store.last_sequence("gone") == 1
    assert await store.get_lease("gone") is None
    for task_id in ["b0", "b4", "plain"]:
        found = await store.get(task_id)
        assert found is not None
        assert found.task.status.state == TaskState.working
    saved = await store.get("saved")
    assert saved is not None
    assert saved.task.status.state == TaskState.completed
    lease = await store.get_lease("b2")
    assert lease is not None
    assert (lease.holder, lease.token) == ("p1", 1)
    results = await commit([append("again", 1, None), append("old", 1, None)])
    assert results[0] is None
    assert isinstance(results[1], ValueError)
    assert [stored.sequence for stored in await store.events("again")] == [1]


_PARTS = ("events", "saves", "touches", "created", "started")


@pytest.mark.skipif(not enabled(), reason="PARLEY_SPEEDUPS=0: no one-statement batch")
@pytest.mark.parametrize(
    "parts",
    list(itertools.product((False, True), repeat=len(_PARTS)))[1:],
    ids=lambda parts: "+".join(n for n, on in zip(_PARTS, parts, strict=True) if on),
)
async def test_a_one_statement_batch_leaves_out_the_parts_without_rows(
    stores: tuple[SQLStore, SQLStore], parts: tuple[bool, ...]
) -> None:
    """Whichever of events (a chunk after stored events: no touch), snapshots, touches
    (a first event), and the first writes of new tasks (with a new lease: plain
    inserts of the row; one that ends the run with a snapshot, stored without it, read
    back the same) a batch has, each lands, with the new lease an append carries: the
    statement has only the parts with rows, its parameters numbered to match."""
    store, _ = stores
    await store.append("chunked", [StoredEvent(1, _task("chunked"))])
    events, saves, touches, created, started = parts
    writes: list[Any] = []
    if events:
        chunk = [StoredEvent(2, _chunk("chunked", "x"))]
        touch = _touch_values("chunked", chunk, None)
        writes.append(AppendWrite("chunked", chunk, touch, _new_lease("chunked")))
    if saves:
        done = Task(id="saved", context_id="c", status=TaskStatus(state=TaskState.completed))
        writes.append(SaveWrite(_save_values(done, 0, None)))
    if touches:
        first = [StoredEvent(1, _task("touched"))]
        writes.append(AppendWrite("touched", first, _touch_values("touched", first, None), None))
    if created:
        ended = Task(id="created", context_id="c", status=TaskStatus(state=TaskState.completed))
        first = [StoredEvent(1, ended)]
        touch = _touch_values("created", first, "alice")
        snapshot = _save_values(ended, 1, "alice", touch["touched"])
        lease = _new_lease("created")
        writes.append(AppendWrite("created", first, touch, lease, snapshot, release=True))
    if started:
        first = [StoredEvent(1, _task("started"))]
        touch = _touch_values("started", first, "bob")
        writes.append(AppendWrite("started", first, touch, _new_lease("started")))
    await _commit_one_statement(store, writes)
    assert len(await store.events("chunked")) == (2 if events else 1)
    assert (await store.get_lease("chunked") is not None) == events
    assert (await store.get("saved") is not None) == saves
    for task_id, there in (("touched", touches), ("created", created), ("started", started)):
        assert [e.sequence for e in await store.events(task_id)] == ([1] if there else [])
    assert await store.get_lease("created") is None  # given up by its append
    assert (await store.get_lease("started") is not None) == started
    rows = select(tasks.c.id, tasks.c.state, tasks.c.owner, tasks.c.snapshot.is_(None))
    async with store.engine.connect() as connection:
        found = {row[0]: tuple(row[1:]) for row in await connection.execute(rows)}
    working, completed = TaskState.working.value, TaskState.completed.value
    assert found.get("touched") == ((working, None, True) if touches else None)
    assert found.get("created") == ((completed, "alice", True) if created else None)
    assert found.get("started") == ((working, "bob", True) if started else None)
    if created:
        stored = await store.get("created")
        assert stored is not None
        assert (stored.task, stored.sequence, stored.owner) == (ended, 1, "alice")
        listed = (await store.list_tasks(TaskQuery(state=TaskState.completed))).tasks
        assert [task for task in listed if task.id == "created"] == [ended]


async def test_a_new_tasks_row_found_stored_after_all_is_written_with_an_upsert(
    stores: tuple[SQLStore, SQLStore],
) -> None:
    """A new task's row is a plain insert in the one-statement batch; should the row be
    there after all, the batch fails and each write runs again alone (upserts): every
    write lands, the others of the batch too, and a batch of that write alone."""
    store, _ = stores
    for task_id in ("there", "alone"):
        await store.save(_task(task_id), 0)

    def first_write(task_id: str) -> AppendWrite:
        first = [StoredEvent(1, _task(task_id))]
        return AppendWrite(task_id, first, _touch_values(task_id, first, None), _new_lease(task_id))

    for writes in ([first_write("there"), first_write("fresh")], [first_write("alone")]):
        await _commit_one_statement(store, writes)
    for task_id in ("there", "fresh", "alone"):
        assert await store.last_sequence(task_id) == 1
        assert await store.get_lease(task_id) is not None


async def _commit_one_statement(store: SQLStore, writes: list[AppendWrite]) -> None:
    """Commit ``writes`` as the writer commits a batch it makes one statement of, on a
    connection of the store's own, and check every write was answered."""
    assert one_statement(writes)
    futures = [asyncio.get_running_loop().create_future() for _ in writes]
    async with store.engine.connect() as connection:
        raw = (await connection.get_raw_connection()).driver_connection
        await _commit(raw, list(zip(writes, futures, strict=True)))
    assert await asyncio.gather(*futures) == [None] * len(writes)


@agent
async def asks(ctx: AgentContext) -> AsyncIterator[str | InputRequired]:
    """Each message: an artifact saying what was heard, then a question."""
    yield f"heard {ctx.text}"
    yield InputRequired("And then?")


async def _send(app: A2AApp, text: str, task_id: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "user",
        "messageId": f"m-{text}",
        "parts": [{"kind": "text", "text": text}],
    }
    if task_id is not None:
        message["taskId"] = task_id
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as http:
        answer = (await http.post("/", json=body)).json()
    assert "result" in answer, answer
    result: dict[str, Any] = answer["result"]
    return result


def _said(task: dict[str, Any]) -> list[str]:
    return [m["parts"][0]["text"] for m in task["history"] if m["role"] == "user"]


async def test_a_task_moves_between_processes_and_back(
    stores: tuple[SQLStore, SQLStore],
) -> None:
    """Made in one process, continued in another (which finds the store no further than
    its own copy, and reads nothing more), then in the first again, which still holds
    its old copy: its lease says the store is ahead, so it catches up first."""
    one, other = stores
    here, there = (
        create_app(asks, card(), task_store=one),
        create_app(asks, card(), task_store=other),
    )
    try:
        made = await _send(here, "one")
        task_id = made["id"]
        assert made["status"]["state"] == "input-required"
        async with here.handler.runs.hold_if_any(
            task_id
        ) as kept:  # a follower here keeps the old copy
            assert kept is not None
            before = kept.log.last_sequence
            moved = await _send(there, "two", task_id)
            assert _said(moved) == ["one", "two"]
            assert kept.log.last_sequence == before  # this process heard nothing (no bus)
            back = await _send(here, "three", task_id)
        assert _said(back) == ["one", "two", "three"]
        assert [a["parts"][0]["text"] for a in back["artifacts"]] == [
            "heard one",
            "heard two",
            "heard three",
        ]
        logged = await other.events(task_id)
        assert [stored.sequence for stored in logged] == list(range(1, len(logged) + 1))
        assert kept.log.last_sequence == logged[-1].sequence
    finally:
        await here.handler.aclose()
        await there.handler.aclose()


async def test_new_tasks_on_two_processes_at_once_each_take_one_lease(
    stores: tuple[SQLStore, SQLStore],
) -> None:
    """Clients start tasks on two processes at once (each new task's lease stored with
    its first events, in shared batches), then continue each task on the other process
    at once: every turn lands, each log is whole and in order, and each task's lease
    is the other process's, its first (fencing token 1: the first turn ended with its
    first write, so its lease was never stored)."""
    one, other = stores
    apps = (create_app(asks, card(), task_store=one), create_app(asks, card(), task_store=other))
    try:
        made = await asyncio.gather(*(_send(apps[n % 2], f"start {n}") for n in range(TASKS)))
        assert {task["status"]["state"] for task in made} == {"input-required"}
        moved = await asyncio.gather(
            *(_send(apps[(n + 1) % 2], f"next {n}", task["id"]) for n, task in enumerate(made))
        )
        for n, task in enumerate(moved):
            assert _said(task) == [f"start {n}", f"next {n}"]
            assert task["status"]["state"] == "input-required"
            lease = await one.get_lease(task["id"])
            owners = apps[(n + 1) % 2].handler.runs.owners
            assert owners is not None
            assert lease is not None
            assert (lease.holder, lease.token) == (owners.holder, 1)
            logged = await one.events(task["id"])
            assert [stored.sequence for stored in logged] == list(range(1, len(logged) + 1))
    finally:
        for app in apps:
            await app.handler.aclose()


async def test_retention_leaves_a_task_resumed_while_it_waited_for_the_row() -> None:
    """Retention's batch locks the expired tasks it found (one statement, ``FOR
    UPDATE``): one a send is writing at that moment is checked again once the send
    commits, and kept if the send resumed it; the other expired tasks go, with their
    events and leases."""
    async with postgres_engines(2) as (first, second):
        store = SQLStore(first)
        try:
            for task_id in ("old-1", "old-2", "asked"):
                state = TaskState.input_required if task_id == "asked" else TaskState.completed
                task = Task(id=task_id, context_id="c", status=TaskStatus(state=state))
                await store.append(task_id, [StoredEvent(1, task)], lease=_new_lease(task_id))
            later = datetime.now(UTC) + timedelta(days=1)
            async with second.connect() as send:  # resumes "asked", not committed yet
                await send.execute(
                    update(tasks)
                    .where(tasks.c.id == "asked")
                    .values(state="working", touched=later.timestamp())
                )
                sweep = asyncio.create_task(store.expire(ended_before=later, waiting_before=later))
                await _waiting_for_a_lock(send)
                await send.commit()
            assert await sweep == 2
        finally:
            await store.aclose()
        assert await store.get("old-1") is None
        assert await store.events("old-2") == []
        assert await store.get_lease("old-2") is None
        kept = await store.get("asked")
        assert kept is not None
        assert await store.get_lease("asked") is not None


async def _waiting_for_a_lock(connection: AsyncConnection) -> None:
    """Until another session waits for a lock ``connection`` holds (bounded: 30 s)."""
    blocked = text(
        "SELECT count(*) FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))"
    )
    for _ in range(3_000):
        # pg_stat_activity is read once per transaction unless its snapshot is cleared
        await connection.execute(text("SELECT pg_stat_clear_snapshot()"))
        if (await connection.execute(blocked)).scalar():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("nothing waited for the row")
