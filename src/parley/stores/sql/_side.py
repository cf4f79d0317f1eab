"""The SQL store's push configs, delivery outbox and leases."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import Row, delete, exists, select, update

from parley.stores._protocols import Lease, OutboxEntry
from parley.stores.sql._base import SQLBase, insert
from parley.stores.sql._group import LeaseWrite
from parley.stores.sql._schema import leases, outbox, push_configs, task_traces
from parley.types import PushNotificationConfig


class SQLSide(SQLBase):
    """Push configs, outbox and leases, for ``SQLStore`` to inherit."""

    # -- push configs ----------------------------------------------------------------

    async def set_push_config(
        self, task_id: str, config: PushNotificationConfig, version: str = "0.3"
    ) -> None:
        engine = await self._connect()
        config_id = config.id or task_id
        async with engine.begin() as connection:
            upsert = insert(connection, push_configs).values(
                task_id=task_id,
                config_id=config_id,
                config=config.to_json().decode(),
                version=version,
                created=time.time(),
            )
            await connection.execute(
                upsert.on_conflict_do_update(
                    index_elements=[push_configs.c.task_id, push_configs.c.config_id],
                    set_={"config": upsert.excluded.config, "version": upsert.excluded.version},
                )
            )

    async def get_push_config(self, task_id: str, config_id: str) -> PushNotificationConfig | None:
        engine = await self._connect()
        query = select(push_configs.c.config).where(
            push_configs.c.task_id == task_id, push_configs.c.config_id == config_id
        )
        async with engine.connect() as connection:
            found = (await connection.execute(query)).scalar()
        return None if found is None else PushNotificationConfig.model_validate_json(found)

    async def list_push_configs(self, task_id: str) -> list[PushNotificationConfig]:
        engine = await self._connect()
        query = (
            select(push_configs.c.config)
            .where(push_configs.c.task_id == task_id)
            .order_by(push_configs.c.created, push_configs.c.config_id)
        )
        async with engine.connect() as connection:
            rows = (await connection.execute(query)).scalars()
            return [PushNotificationConfig.model_validate_json(row) for row in rows]

    async def delete_push_config(self, task_id: str, config_id: str) -> bool:
        engine = await self._connect()
        async with engine.begin() as connection:
            result = await connection.execute(
                delete(push_configs).where(
                    push_configs.c.task_id == task_id, push_configs.c.config_id == config_id
                )
            )
        return bool(result.rowcount)

    async def push_config_versions(self, task_id: str) -> dict[str, str]:
        engine = await self._connect()
        query = (
            select(push_configs.c.config_id, push_configs.c.version)
            .where(push_configs.c.task_id == task_id)
            .order_by(push_configs.c.created, push_configs.c.config_id)
        )
        async with engine.connect() as connection:
            rows = (await connection.execute(query)).all()
        return {config_id: version for config_id, version in rows}

    # -- outbox ----------------------------------------------------------------------

    async def outbox_due(self, now: float, limit: int = 100) -> list[OutboxEntry]:
        engine = await self._connect()
        query = select(outbox).where(outbox.c.due <= now).order_by(outbox.c.id).limit(limit)
        async with engine.connect() as connection:
            return [_entry(row) for row in await connection.execute(query)]

    async def outbox_claim(
        self, holder: str, now: float, lease: float, limit: int
    ) -> list[OutboxEntry]:
        engine = await self._connect()
        earlier = outbox.alias("earlier")
        heads = (
            select(outbox.c.id)
            .where(
                outbox.c.due <= now,
                outbox.c.leased_until <= now,
                ~exists().where(
                    earlier.c.task_id == outbox.c.task_id,
                    earlier.c.config_id == outbox.c.config_id,
                    earlier.c.id < outbox.c.id,
                ),
            )
            .order_by(outbox.c.id)
            .limit(limit)
        )
        if not self.is_sqlite:  # SQLite has one writer at a time: nothing to skip
            heads = heads.with_for_update(skip_locked=True, of=outbox)
        claim = (
            update(outbox)
            .where(outbox.c.id.in_(heads.scalar_subquery()), outbox.c.leased_until <= now)
            .values(holder=holder, leased_until=now + lease)
            .returning(*outbox.c)
        )
        due = select(outbox.c.id).where(outbox.c.due <= now, outbox.c.leased_until <= now)
        # The outbox is empty most of the time: look with a read before taking a write lock.
        async with engine.connect() as connection:
            if (await connection.execute(due.limit(1))).first() is None:
                return []
        async with engine.begin() as connection:
            rows = await connection.execute(claim)
            return sorted((_entry(row) for row in rows), key=lambda entry: entry.id)

    async def outbox_done(self, entry_id: int) -> None:
        engine = await self._connect()
        async with engine.begin() as connection:
            await connection.execute(delete(outbox).where(outbox.c.id == entry_id))

    async def outbox_retry(self, entry_id: int, due: float) -> None:
        engine = await self._connect()
        async with engine.begin() as connection:
            await connection.execute(
                update(outbox)
                .where(outbox.c.id == entry_id)
                .values(attempts=outbox.c.attempts + 1, due=due, holder=None, leased_until=0.0)
            )

    # -- traces --------------------------------------------------------------------

    async def save_trace(self, task_id: str, traceparent: str) -> None:
        """Keep ``traceparent`` as the task's latest traced turn (see ``task_traces``)."""
        engine = await self._connect()
        async with engine.begin() as connection:
            upsert = insert(connection, task_traces).values(
                task_id=task_id, traceparent=traceparent
            )
            await connection.execute(
                upsert.on_conflict_do_update(
                    index_elements=[task_traces.c.task_id],
                    set_={"traceparent": upsert.excluded.traceparent},
                )
            )

    async def trace_of(self, task_id: str) -> str | None:
        """The ``traceparent`` of the task's latest traced turn, if one was kept."""
        engine = await self._connect()
        query = select(task_traces.c.traceparent).where(task_traces.c.task_id == task_id)
        async with engine.connect() as connection:
            found: str | None = (await connection.execute(query)).scalar()
            return found

    # -- leases ----------------------------------------------------------------------

    async def acquire_lease(self, task_id: str, holder: str, ttl: float) -> Lease | None:
        if not self._ready:
            await self._connect()
        now = time.time()  # one statement, in the writer's next batch
        values = {"task_id": task_id, "holder": holder, "expires": now + ttl, "now": now}
        taken = await self.writer.submit(LeaseWrite(values))
        return None if taken is None else Lease(task_id, holder, *taken)

    async def renew_leases(self, holder: str, ttl: float) -> set[str]:
        engine = await self._connect()
        now = time.time()
        async with engine.begin() as connection:
            rows = await connection.execute(
                update(leases)
                .where(leases.c.holder == holder, leases.c.expires > now)
                .values(expires=now + ttl)
                .returning(leases.c.task_id)
            )
            return {task_id for (task_id,) in rows}

    async def release_lease(self, lease: Lease) -> None:
        engine = await self._connect()
        async with engine.begin() as connection:
            await connection.execute(
                update(leases)
                .where(leases.c.task_id == lease.task_id, leases.c.token == lease.token)
                .values(expires=0.0)
            )

    async def get_lease(self, task_id: str) -> Lease | None:
        engine = await self._connect()
        query = select(leases).where(leases.c.task_id == task_id)
        async with engine.connect() as connection:
            row = (await connection.execute(query)).first()
        return None if row is None else Lease(task_id, row.holder, row.token, row.expires)


def _entry(row: Row[Any]) -> OutboxEntry:
    return OutboxEntry(
        row.task_id,
        row.config_id,
        row.sequence,
        row.payload,
        row.id,
        row.attempts,
        row.due,
        row.created,
        row.traceparent,
    )
