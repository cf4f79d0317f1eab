"""``SQLStore``: tasks, event logs and sent messages in SQLite or PostgreSQL (push
configs, outbox and leases in ``_side``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter
from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from parley._speedups import encode_task
from parley.protocol import ACTIVE_STATES
from parley.stores._protocols import (
    Append,
    Lease,
    OutboxEntry,
    SentMessage,
    StoredEvent,
    TaskPage,
    TaskQuery,
    TaskSnapshot,
    context_of,
    status_time,
)
from parley.stores._replay import replay
from parley.stores.sql import _expire
from parley.stores.sql._base import insert
from parley.stores.sql._group import AppendMany, AppendWrite, SaveWrite, starts_log
from parley.stores.sql._pg_writer import PostgresWriter
from parley.stores.sql._schema import events, sent_messages, tasks
from parley.stores.sql._side import SQLSide
from parley.types import Event, Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent

_EVENT: TypeAdapter[Event] = TypeAdapter(Event)


_STATUSED = (TaskStatusUpdateEvent, Task)


def _touch_values(task_id: str, logged: Sequence[StoredEvent], owner: str | None) -> dict[str, Any]:
    """The task row an append without a snapshot writes: the state of its last status
    and the latest status time among them, as the memory store files it (none: state
    kept, time 0, ``later_touched`` keeps the stored)."""
    status = None
    touched = 0.0
    for stored in logged:
        event = stored.event
        # by exact type first: a model class's isinstance that fails is slow (its
        # metaclass's ``__instancecheck__``); an artifact (a stream's chunk) failed twice
        if type(event) is Task or (
            type(event) is not TaskArtifactUpdateEvent and isinstance(event, _STATUSED)
        ):
            status = event.status
            touched = max(touched, status_time(status))
    return {
        "id": task_id,
        "state": None if status is None else status.state.value,
        "context_id": context_of(logged),
        "touched": touched,
        "owner": owner,
    }


class SQLStore(SQLSide):
    """Every store protocol, in SQLite or PostgreSQL.

    ``database`` is a SQLAlchemy URL (see ``database_url``) or an ``AsyncEngine`` you
    configured. On first use the store brings the schema up to date (``migrate=True``)
    or checks that it is, raising ``SchemaError`` if not (``migrate=False``, for
    deployments that run ``parley db upgrade`` themselves). Event logs are kept as long
    as their task, so ``Last-Event-ID`` replay works for finished tasks too.
    """

    async def get(self, task_id: str) -> TaskSnapshot | None:
        engine = await self._connect()
        async with engine.connect() as connection:
            query = select(tasks.c.snapshot, tasks.c.snapshot_sequence, tasks.c.owner).where(
                tasks.c.id == task_id
            )
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
        found = replay(task, row.snapshot_sequence, later)
        return found if found is None else TaskSnapshot(found.task, found.sequence, row.owner)

    async def context_owner(self, context_id: str) -> str | None:
        engine = await self._connect()
        query = (
            select(tasks.c.owner)
            .where(tasks.c.context_id == context_id, tasks.c.owner.is_not(None))
            .limit(1)
        )
        async with engine.connect() as connection:
            owner: str | None = (await connection.execute(query)).scalar()
        return owner

    async def save(self, task: Task, sequence: int, *, owner: str | None = None) -> None:
        if not self._ready:
            await self._connect()
        await self.writer.submit(SaveWrite(_save_values(task, sequence, owner)))

    async def append(
        self,
        task_id: str,
        events: Sequence[StoredEvent],
        *,
        outbox: Sequence[OutboxEntry] = (),
        lease: Lease | None = None,
        snapshot: Task | None = None,
        release: bool = False,
        owner: str | None = None,
    ) -> None:
        if not (events or outbox or lease is not None or snapshot is not None):
            return
        if not self._ready:
            await self._connect()
        write = self._append_write(task_id, events, outbox, lease, snapshot, release, owner)
        await self.writer.submit(write)

    async def append_many(self, batch: Sequence[Append]) -> None:
        parts = [
            self._append_write(
                part.task_id,
                part.events,
                part.outbox,
                part.lease,
                part.snapshot,
                part.release,
                part.owner,
            )
            for part in batch
            if part.events or part.outbox or part.lease is not None or part.snapshot is not None
        ]
        if not parts:
            return
        if not self._ready:
            await self._connect()
        await self.writer.submit(AppendMany(parts))

    def _append_write(
        self,
        task_id: str,
        events: Sequence[StoredEvent],
        outbox: Sequence[OutboxEntry],
        lease: Lease | None,
        snapshot: Task | None,
        release: bool,
        owner: str | None,
    ) -> AppendWrite:
        """One task's append, serialized for the writer. On SQLite an append that starts
        the log touches the task row without its snapshot (``starts_log``); PostgreSQL's
        writer decides that itself."""
        touch = _touch_values(task_id, events, owner)
        saved = None
        if snapshot is not None and not (
            starts_log(events) and not isinstance(self.writer, PostgresWriter)
        ):
            sequence = events[-1].sequence if events else 0
            saved = _save_values(snapshot, sequence, owner, touch["touched"])
        return AppendWrite(task_id, events, touch, lease, saved, release, outbox)

    async def events(self, task_id: str, after: int = 0) -> list[StoredEvent]:
        engine = await self._connect()
        async with engine.connect() as connection:
            logged = await connection.execute(
                select(events.c.sequence, events.c.event)
                .where(events.c.task_id == task_id, events.c.sequence > after)
                .order_by(events.c.sequence)
            )
            return [StoredEvent(seq, _EVENT.validate_json(data)) for seq, data in logged]

    async def last_sequence(self, task_id: str) -> int:
        engine = await self._connect()
        query = select(func.max(events.c.sequence)).where(events.c.task_id == task_id)
        async with engine.connect() as connection:
            return (await connection.execute(query)).scalar() or 0

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

    async def list_tasks(self, query: TaskQuery) -> TaskPage:
        engine = await self._connect()
        filters = _list_filters(query)
        page = filters.copy()
        if query.after is not None:
            touched, task_id = query.after
            page.append(
                or_(
                    tasks.c.touched < touched,
                    and_(tasks.c.touched == touched, tasks.c.id < task_id),
                )
            )
        async with engine.connect() as connection:
            rows = (
                await connection.execute(
                    select(tasks.c.id, tasks.c.snapshot, tasks.c.snapshot_sequence, tasks.c.touched)
                    .where(*page)
                    .order_by(tasks.c.touched.desc(), tasks.c.id.desc())
                    .limit(query.limit + 1)
                )
            ).all()
            total = (await connection.execute(select(func.count()).where(*filters))).scalar_one()
            shown = rows[: query.limit]
            logged = await connection.execute(
                select(events.c.task_id, events.c.sequence, events.c.event)
                .where(events.c.task_id.in_([row.id for row in shown]))
                .order_by(events.c.task_id, events.c.sequence)
            )
            later: dict[str, list[StoredEvent]] = {}
            for task_id, sequence, data in logged:
                later.setdefault(task_id, []).append(
                    StoredEvent(sequence, _EVENT.validate_json(data))
                )
        found = []
        for row in shown:
            task = None if row.snapshot is None else Task.model_validate_json(row.snapshot)
            after = [e for e in later.get(row.id, ()) if e.sequence > row.snapshot_sequence]
            snapshot = replay(task, row.snapshot_sequence, after)
            if snapshot is not None:
                found.append(snapshot.task)
        last = (shown[-1].touched, shown[-1].id) if len(rows) > query.limit else None
        return TaskPage(found, total, last)

    async def find_message(self, scope: str, message_id: str) -> SentMessage | None:
        engine = await self._connect()
        async with engine.connect() as connection:
            return await _sent(connection, scope, message_id)

    async def claim_message(self, scope: str, message_id: str, task_id: str) -> SentMessage | None:
        engine = await self._connect()
        async with engine.begin() as connection:
            claim = insert(connection, sent_messages).values(
                scope=scope, message_id=message_id, task_id=task_id, created=time.time()
            )
            result = await connection.execute(claim.on_conflict_do_nothing())
            if result.rowcount == 1:
                return None
            return await _sent(connection, scope, message_id)

    async def release_message(self, scope: str, message_id: str) -> None:
        engine = await self._connect()
        async with engine.begin() as connection:
            await connection.execute(
                delete(sent_messages).where(
                    sent_messages.c.scope == scope, sent_messages.c.message_id == message_id
                )
            )

    async def save_reply(self, scope: str, message_id: str, reply: Message) -> None:
        engine = await self._connect()
        async with engine.begin() as connection:
            await connection.execute(
                update(sent_messages)
                .where(sent_messages.c.scope == scope, sent_messages.c.message_id == message_id)
                .values(reply=reply.to_json().decode())
            )

    async def expire(
        self, *, ended_before: datetime, waiting_before: datetime, limit: int | None = None
    ) -> int:
        return await _expire.expire(
            self, ended_before.timestamp(), waiting_before.timestamp(), limit
        )


def _save_values(
    task: Task, sequence: int, owner: str | None, touched: float = 0.0
) -> dict[str, Any]:
    """The task row a save writes; ``touched``: the latest status time of the events
    appended with it, when later than the snapshot's own."""
    return {
        "id": task.id,
        "context_id": task.context_id,
        "state": task.status.state.value,
        "snapshot": (encode_task(task, "0.3") or task.to_json()).decode(),
        "snapshot_sequence": sequence,
        "touched": max(status_time(task.status), touched),
        "owner": owner,
    }


def _list_filters(query: TaskQuery) -> list[Any]:
    """The WHERE terms of a ``TaskQuery`` (the cursor aside); only tasks that have a
    state, i.e. that some event or snapshot described."""
    filters: list[Any] = [tasks.c.state.isnot(None)]
    if query.context_id is not None:
        filters.append(tasks.c.context_id == query.context_id)
    if query.owner == "":  # the default tenant: no tenant's (``/{tenant}/...``) tasks
        filters.append(or_(tasks.c.owner.is_(None), ~tasks.c.owner.startswith("/")))
    elif query.owner is not None:
        filters.append(tasks.c.owner == query.owner)
    if query.state is not None:
        filters.append(tasks.c.state == query.state.value)
    if query.touched_after is not None:
        filters.append(tasks.c.touched >= query.touched_after)
    return filters


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
    if task_ids:
        for table in _expire.TASK_TABLES:
            await connection.execute(delete(table).where(table.c.task_id.in_(task_ids)))
        await connection.execute(delete(tasks).where(tasks.c.id.in_(task_ids)))
