"""Retention's deletes for ``SQLStore.expire``: expired tasks, a batch at a time.

On SQLite each batch is one write of the store's group writer, in line with the sends'
writes: it finds up to a batch of expired tasks and deletes them by key with everything
of theirs, in the writer's transaction, so a waiting task resumed by a write queued
before it is no longer expired there, and stays. Not on a connection of its own: SQLite
has one write lock, and a busy server's writer takes it again as soon as it lets it go,
so another connection waiting for it (SQLite's busy handler sleeps and retries) hardly
ever gets it: under load, retention on its own connection would delete almost nothing.

The write runs on the event loop (the writer's ``flush``), so every request in flight
waits for it: its statements are compiled once (``_FIND``; the deletes once for each
number of tasks, ``_sqlite_deletes``), and the tasks are found in the same write, not
with a read through SQLAlchemy (aiosqlite's thread): compiling the deletes in each batch
took as long as deleting, and left objects in reference cycles for the collector.

An in-memory SQLite database has no group writer: there a batch is found with a read,
then deleted in a transaction that checks again that each task is expired.

On PostgreSQL a batch is one statement (``PG_EXPIRE``), through asyncpg on a connection
of the engine, in a transaction of its own: it finds the expired tasks and locks them
(``FOR UPDATE``: a task a send is writing is checked again once that send commits, so
a task resumed meanwhile is left), and deletes them with everything of theirs. One
round trip and no client-side work per batch, where the SQLAlchemy statements took
about fifteen round trips (two pool pings, a find, BEGIN, six deletes, COMMIT) and
their work on the server's event loop, in the middle of the sends it serves;
its row locks are held for the statement only.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import (
    ColumnElement,
    and_,
    bindparam,
    case,
    delete,
    false,
    literal,
    or_,
    select,
    tuple_,
)
from sqlalchemy.dialects import sqlite

from parley.protocol import INTERRUPTED_STATES, TERMINAL_STATES
from parley.stores.sql._schema import (
    events,
    leases,
    outbox,
    push_configs,
    sent_messages,
    task_traces,
    tasks,
)
from parley.stores.sql._writer import SQLiteWriter, Statement, Write

if TYPE_CHECKING:
    from parley.stores.sql._store import SQLStore

BATCH = 500
"""Tasks per transaction when ``expire`` is given no ``limit``."""

TASK_TABLES = (events, push_configs, outbox, leases, sent_messages, task_traces)
"""The tables whose rows belong to a task (by ``task_id``), besides ``parley_tasks``."""

Run = Callable[[Any], Sequence[Any]]
"""Runs one statement in the batch's transaction; returns the rows it returned."""

T = TypeVar("T")

Batch = Callable[[int], Awaitable[tuple[int, int]]]
"""Deletes up to ``want`` expired tasks: how many it found, and how many of those went."""


async def expire(store: SQLStore, ended: float, waiting: float, limit: int | None) -> int:
    """Delete up to ``limit`` expired tasks (all, ``BATCH`` per transaction, when
    ``None``); in the call that finds no more, the claims that never led to a task."""
    if store.shared:
        return await _expire_postgres(store, ended, waiting, limit)
    await store._connect()
    if isinstance(store.writer, SQLiteWriter):
        return await _expire_sqlite(store, store.writer, ended, waiting, limit)
    condition, recheck = _expired(ended, waiting), _still_expired(ended, waiting)

    async def batch(want: int) -> tuple[int, int]:
        engine = await store._connect()
        async with engine.connect() as connection:
            query = select(tasks.c.id).where(condition).limit(want)
            found = list((await connection.execute(query)).scalars())
        return len(found), await _write(store, _deleting(found, recheck)) if found else 0

    return await _in_batches(store, ended, limit, batch)


async def _in_batches(store: SQLStore, ended: float, limit: int | None, batch: Batch) -> int:
    """Run ``batch`` until it finds fewer expired tasks than it was asked for (then the
    claims that never led to a task go too) or ``limit`` tasks are gone; how many went."""
    removed = 0
    while True:
        want = BATCH if limit is None else min(BATCH, limit - removed)
        found, gone = await batch(want)
        removed += gone
        if found < want:  # none left: now the claims that never led to a task
            await _forget_claims(store, ended, BATCH)
            return removed
        if limit is not None and removed >= limit:
            return removed


async def _expire_sqlite(
    store: SQLStore, writer: SQLiteWriter, ended: float, waiting: float, limit: int | None
) -> int:
    async def batch(want: int) -> tuple[int, int]:
        gone: int = await writer.submit(_sqlite_batch(ended, waiting, want))
        return gone, gone

    return await _in_batches(store, ended, limit, batch)


async def _expire_postgres(store: SQLStore, ended: float, waiting: float, limit: int | None) -> int:
    engine = await store._connect()
    async with engine.connect() as connection:
        raw: Any = (await connection.get_raw_connection()).driver_connection

        async def batch(want: int) -> tuple[int, int]:
            gone = int(await raw.fetchval(PG_EXPIRE, _TERMINAL, ended, _INTERRUPTED, waiting, want))
            return gone, gone

        return await _in_batches(store, ended, limit, batch)


_GONE_ROWS = ",\n".join(
    f"gone_{table.name} AS (DELETE FROM {table.name} WHERE task_id IN (SELECT id FROM gone))"
    for table in TASK_TABLES
)
PG_EXPIRE = f"""WITH found AS (
    SELECT id FROM {tasks.name}
    WHERE (state = ANY($1::text[]) AND touched < $2) OR (state = ANY($3::text[]) AND touched < $4)
    LIMIT $5 FOR UPDATE
),
gone AS (DELETE FROM {tasks.name} WHERE id IN (SELECT id FROM found) RETURNING id),
{_GONE_ROWS}
SELECT count(*) FROM gone"""
"""Delete up to $5 expired tasks (terminal states $1 before $2, interrupted states $3
before $4) with their rows in ``TASK_TABLES``; returns how many."""


def _expired(ended: Any, waiting: Any) -> ColumnElement[bool]:
    """Which tasks have expired, for finding them (through the index on state and
    last activity)."""
    return or_(
        and_(tasks.c.state.in_(_each(_TERMINAL)), tasks.c.touched < ended),
        and_(tasks.c.state.in_(_each(_INTERRUPTED)), tasks.c.touched < waiting),
    )


def _still_expired(ended: float, waiting: float) -> ColumnElement[bool]:
    """The same test, for checking the tasks found by key: as a CASE, which no index
    serves, so the delete goes by the primary key. (Given ``_expired`` beside the keys,
    SQLite, which has no statistics, read every expired task through the index on
    state: seconds per batch with a million stored.)"""
    return case(
        (tasks.c.state.in_(_TERMINAL), tasks.c.touched < ended),
        (tasks.c.state.in_(_INTERRUPTED), tasks.c.touched < waiting),
        else_=false(),
    )


def _each(states: list[str]) -> list[Any]:
    """The states as one parameter each, so the statement compiles once (``_FIND``)
    with no list left to expand when it runs."""
    return [literal(state) for state in states]


_TERMINAL = [state.value for state in TERMINAL_STATES]
_INTERRUPTED = [state.value for state in INTERRUPTED_STATES]

_FIND = Statement.of(
    select(tasks.c.id)
    .where(_expired(bindparam("ended"), bindparam("waiting")))
    .limit(bindparam("want"))
)
"""Up to ``want`` expired tasks, on SQLite's group writer (``_sqlite_batch``)."""


def _deleting(found: list[str], condition: ColumnElement[bool]) -> Callable[[Run], int]:
    """The work of deleting those of ``found`` still expired (where there is no group
    writer: ``_sqlite_batch`` otherwise); returns how many."""

    def work(run: Run) -> int:
        query = delete(tasks).where(tasks.c.id.in_(found), condition).returning(tasks.c.id)
        gone = [task_id for (task_id,) in run(query)]
        if gone:
            for table in TASK_TABLES:
                run(delete(table).where(table.c.task_id.in_(gone)))
        return len(gone)

    return work


def _sqlite_batch(ended: float, waiting: float, want: int) -> Write:
    """The work of finding up to ``want`` expired tasks and deleting them with
    everything of theirs, in the group writer's transaction (so they are still expired
    when deleted); returns how many."""

    def work(connection: sqlite3.Connection) -> int:
        values = {"ended": ended, "waiting": waiting, "want": want}
        found = [task_id for (task_id,) in connection.execute(_FIND.sql, _FIND.parameters(values))]
        if found:
            ids = dict(zip(_ID_NAMES, found, strict=False))
            for statement in _sqlite_deletes(len(found)):
                connection.execute(statement.sql, statement.parameters(ids))
        return len(found)

    return work


_ID_NAMES = [f"id_{n}" for n in range(BATCH)]


@functools.cache
def _sqlite_deletes(count: int) -> tuple[Statement, ...]:
    """The deletes of ``count`` tasks named ``id_0``... and of their rows in
    ``TASK_TABLES``; compiled once for each count (at most ``BATCH``)."""
    ids: list[Any] = [bindparam(name) for name in _ID_NAMES[:count]]
    return tuple(
        Statement.of(delete(table).where(column.in_(ids)))
        for table, column in ((tasks, tasks.c.id), *((t, t.c.task_id) for t in TASK_TABLES))
    )


def _no_task() -> Any:
    return ~select(tasks.c.id).where(tasks.c.id == sent_messages.c.task_id).exists()


async def _forget_claims(store: SQLStore, ended: float, count: int) -> None:
    """Remove sent-message claims made before ``ended`` that never led to a stored
    task, up to ``count`` of them (the rest at the next sweep)."""
    orphans = select(sent_messages.c.scope, sent_messages.c.message_id).where(
        sent_messages.c.created < ended, _no_task()
    )
    engine = await store._connect()
    async with engine.connect() as connection:
        keys = [tuple(key) for key in await connection.execute(orphans.limit(count))]
    if keys:
        key = tuple_(sent_messages.c.scope, sent_messages.c.message_id)
        forget = delete(sent_messages).where(key.in_(keys), _no_task())
        await _write(store, lambda run: run(forget))


async def _write(store: SQLStore, work: Callable[[Run], T]) -> T:
    """Run ``work``'s statements in one transaction: through the group writer on SQLite,
    on a connection of the engine otherwise."""
    writer = store.writer
    if isinstance(writer, SQLiteWriter):
        result: T = await writer.submit(lambda connection: work(_on_sqlite3(connection)))
        return result
    engine = await store._connect()
    async with engine.begin() as connection:
        return await connection.run_sync(lambda sync: work(lambda s: _rows(sync.execute(s))))


def _rows(result: Any) -> Sequence[Any]:
    return result.all() if result.returns_rows else ()


def _on_sqlite3(connection: sqlite3.Connection) -> Run:
    def run(statement: Any) -> Sequence[Any]:
        compiled = statement.compile(dialect=_SQLITE, compile_kwargs={"render_postcompile": True})
        values = compiled.params
        names = compiled.positiontup or ()
        return connection.execute(str(compiled), [values[name] for name in names]).fetchall()

    return run


_SQLITE = sqlite.dialect()
