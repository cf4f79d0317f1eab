"""``SQLTaskStore``: tasks and their event logs in SQLite or PostgreSQL."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter
from sqlalchemy import and_, delete, event, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from parley.protocol import ACTIVE_STATES, INTERRUPTED_STATES, TERMINAL_STATES
from parley.stores._protocols import SentMessage, StoredEvent, TaskSnapshot
from parley.stores._protocols import duplicate as _duplicate
from parley.stores._replay import replay
from parley.stores.sql._extras import require
from parley.stores.sql._migrations import check, upgrade
from parley.stores.sql._schema import events, sent_messages, tasks
from parley.types import Event, Message, Task, TaskState, TaskStatusUpdateEvent

_EVENT: TypeAdapter[Event] = TypeAdapter(Event)
_DRIVERS = {"sqlite": "sqlite+aiosqlite", "postgresql": "postgresql+asyncpg"}
_EXTRAS = {"aiosqlite": "sql", "asyncpg": "postgresql"}
_BATCH = 500


def database_url(url: str) -> str:
    """``url`` with the async driver parley uses: ``sqlite:///x.db`` becomes
    ``sqlite+aiosqlite:///x.db``, ``postgresql://...`` (or ``postgres://``) becomes
    ``postgresql+asyncpg://...``. Raises ``ValueError`` for anything else."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url.removeprefix("postgres://")
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend not in _DRIVERS:
        raise ValueError(f"parley stores tasks in SQLite or PostgreSQL, not {backend!r}")
    driver = _DRIVERS[backend]
    if parsed.drivername not in (backend, driver):
        raise ValueError(f"use the driver {driver!r} for {backend}, not {parsed.drivername!r}")
    return parsed.set(drivername=driver).render_as_string(hide_password=False)


def _engine(url: str) -> AsyncEngine:
    url = database_url(url)
    driver = make_url(url).get_driver_name()
    require(driver, extra=_EXTRAS[driver])
    if driver != "aiosqlite":
        return create_async_engine(url, pool_pre_ping=True)
    engine = create_async_engine(url, connect_args={"timeout": 30})
    event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(connection: Any, record: Any) -> None:
    # WAL: readers never wait for the writer; synchronous=NORMAL survives a process
    # crash (only an OS crash or power loss can lose the last transactions).
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _upsert_task(
    connection: AsyncConnection, values: dict[str, Any], changed: Callable[[Any], dict[str, Any]]
) -> Any:
    """INSERT the task row, or UPDATE the columns ``changed(excluded)`` names."""
    dialect: Any = postgresql if connection.dialect.name == "postgresql" else sqlite
    insert = dialect.insert(tasks).values(values)
    return insert.on_conflict_do_update(index_elements=[tasks.c.id], set_=changed(insert.excluded))


def _state_of(logged: Sequence[StoredEvent]) -> str | None:
    state: TaskState | None = None
    for stored in logged:
        if isinstance(stored.event, Task | TaskStatusUpdateEvent):
            state = stored.event.status.state
    return None if state is None else state.value


class SQLTaskStore:
    """Tasks, event logs and sent message ids in SQLite or PostgreSQL.

    ``database`` is a SQLAlchemy URL (see ``database_url``) or an ``AsyncEngine`` you
    configured. On first use the store brings the schema up to date (``migrate=True``)
    or checks that it is, raising ``SchemaError`` if not (``migrate=False``, for
    deployments that run ``parley db upgrade`` themselves). Event logs are kept after a
    task ends, so ``Last-Event-ID`` replay works for finished tasks too, until retention
    removes the task.
    """

    def __init__(self, database: str | AsyncEngine, *, migrate: bool = True) -> None:
        owns = not isinstance(database, AsyncEngine)
        self.engine = _engine(database) if isinstance(database, str) else database
        self._owns_engine = owns
        self._migrate = migrate
        self._ready = False
        self._ready_lock = asyncio.Lock()

    async def _connect(self) -> AsyncEngine:
        if not self._ready:
            async with self._ready_lock:
                if not self._ready:
                    await (upgrade(self.engine) if self._migrate else check(self.engine))
                    self._ready = True
        return self.engine

    async def aclose(self) -> None:
        """Close the connections (and the engine, when the store made it)."""
        if self._owns_engine:
            await self.engine.dispose()

    async def get(self, task_id: str) -> TaskSnapshot | None:
        engine = await self._connect()
        async with engine.connect() as connection:
            query = select(tasks.c.snapshot, tasks.c.snapshot_sequence).where(tasks.c.id == task_id)
            row = (await connection.execute(query)).first()
            if row is None:
                return None
            logged = await connection.execute(
                select(events.c.sequence, events.c.event)
                .where(events.c.task_id == task_id, events.c.sequence > row.snapshot_sequence)
                .order_by(events.c.sequence)
            )
            later = [StoredEvent(seq, _EVENT.validate_json(data)) for seq, data in logged]
        task = None if row.snapshot is None else Task.model_validate_json(row.snapshot)
        return replay(task, row.snapshot_sequence, later)

    async def save(self, task: Task, sequence: int) -> None:
        engine = await self._connect()
        values = {
            "id": task.id,
            "context_id": task.context_id,
            "state": task.status.state.value,
            "snapshot": task.to_json().decode(),
            "snapshot_sequence": sequence,
            "touched": time.time(),
        }
        async with engine.begin() as connection:
            await connection.execute(
                _upsert_task(
                    connection, values, lambda new: {k: new[k] for k in values if k != "id"}
                )
            )

    async def append(self, task_id: str, logged: Sequence[StoredEvent]) -> None:
        if not logged:
            return
        engine = await self._connect()
        rows = [
            {"task_id": task_id, "sequence": s.sequence, "event": s.event.to_json().decode()}
            for s in logged
        ]
        values = {"id": task_id, "state": _state_of(logged), "touched": time.time()}
        async with engine.begin() as connection:
            try:
                await connection.execute(events.insert(), rows)
            except IntegrityError:
                raise ValueError(_duplicate(task_id, logged)) from None
            await connection.execute(
                _upsert_task(
                    connection,
                    values,
                    lambda new: {
                        "touched": new.touched,
                        "state": func.coalesce(new.state, tasks.c.state),
                    },
                )
            )

    async def events(self, task_id: str, after: int = 0) -> list[StoredEvent]:
        engine = await self._connect()
        async with engine.connect() as connection:
            logged = await connection.execute(
                select(events.c.sequence, events.c.event)
                .where(events.c.task_id == task_id, events.c.sequence > after)
                .order_by(events.c.sequence)
            )
            return [StoredEvent(seq, _EVENT.validate_json(data)) for seq, data in logged]

    async def delete(self, task_id: str) -> None:
        engine = await self._connect()
        async with engine.begin() as connection:
            await _delete_tasks(connection, [task_id])

    async def active(self) -> list[str]:
        engine = await self._connect()
        states = [state.value for state in ACTIVE_STATES]
        async with engine.connect() as connection:
            rows = await connection.execute(select(tasks.c.id).where(tasks.c.state.in_(states)))
            return [task_id for (task_id,) in rows]

    async def find_message(self, scope: str, message_id: str) -> SentMessage | None:
        engine = await self._connect()
        async with engine.connect() as connection:
            return await _sent(connection, scope, message_id)

    async def claim_message(self, scope: str, message_id: str, task_id: str) -> SentMessage | None:
        engine = await self._connect()
        async with engine.begin() as connection:
            dialect: Any = postgresql if connection.dialect.name == "postgresql" else sqlite
            claim = dialect.insert(sent_messages).values(
                scope=scope, message_id=message_id, task_id=task_id, created=time.time()
            )
            result = await connection.execute(claim.on_conflict_do_nothing())
            if result.rowcount == 1:
                return None
            return await _sent(connection, scope, message_id)

    async def save_reply(self, scope: str, message_id: str, reply: Message) -> None:
        engine = await self._connect()
        async with engine.begin() as connection:
            await connection.execute(
                update(sent_messages)
                .where(sent_messages.c.scope == scope, sent_messages.c.message_id == message_id)
                .values(reply=reply.to_json().decode())
            )

    async def expire(self, *, ended_before: datetime, waiting_before: datetime) -> int:
        engine = await self._connect()
        ended, waiting = ended_before.timestamp(), waiting_before.timestamp()
        expired = or_(
            and_(tasks.c.state.in_([s.value for s in TERMINAL_STATES]), tasks.c.touched < ended),
            and_(
                tasks.c.state.in_([s.value for s in INTERRUPTED_STATES]),
                tasks.c.touched < waiting,
            ),
        )
        removed = 0
        while True:  # in batches, so no transaction holds the database for long
            async with engine.begin() as connection:
                rows = await connection.execute(select(tasks.c.id).where(expired).limit(_BATCH))
                batch = [task_id for (task_id,) in rows]
                await _delete_tasks(connection, batch)
            removed += len(batch)
            if len(batch) < _BATCH:
                break
        async with engine.begin() as connection:  # claims that never led to a stored task
            await connection.execute(
                delete(sent_messages).where(
                    sent_messages.c.created < ended,
                    ~select(tasks.c.id).where(tasks.c.id == sent_messages.c.task_id).exists(),
                )
            )
        return removed


async def _sent(connection: AsyncConnection, scope: str, message_id: str) -> SentMessage | None:
    row = (
        await connection.execute(
            select(sent_messages.c.task_id, sent_messages.c.reply).where(
                sent_messages.c.scope == scope, sent_messages.c.message_id == message_id
            )
        )
    ).first()
    if row is None:
        return None
    reply = None if row.reply is None else Message.model_validate_json(row.reply)
    return SentMessage(row.task_id, reply)


async def _delete_tasks(connection: AsyncConnection, task_ids: list[str]) -> None:
    if not task_ids:
        return
    await connection.execute(delete(events).where(events.c.task_id.in_(task_ids)))
    await connection.execute(delete(sent_messages).where(sent_messages.c.task_id.in_(task_ids)))
    await connection.execute(delete(tasks).where(tasks.c.id.in_(task_ids)))
