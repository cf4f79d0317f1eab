"""Group commit for PostgreSQL: the writes of many tasks in one transaction, through
asyncpg directly.

Theory of operation
-------------------
``submit`` queues a write (``AppendWrite`` or ``SaveWrite``, from ``_group``) and waits.
One drain task per store takes everything queued, writes it in one transaction with one
statement per kind (``executemany`` of every event row, every task-row touch, every
snapshot of the batch, plus one lease check for all leased appends), commits, and only
then ends each caller's wait. Writes queued while a batch commits form the next batch;
the task ends when the queue is empty and the next ``submit`` starts another, so no
task outlives the work or its event loop. A caller that is cancelled leaves its write
in the batch (it may still be committed), and never cancels anyone else's.

If the shared transaction fails, each write of the batch runs again in a transaction of
its own, so each caller gets its own result (``ValueError`` for a repeated sequence
number, ``LeaseLostError`` for a lost lease).
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from parley.stores._protocols import LeaseLostError, lost
from parley.stores._protocols import duplicate as _duplicate
from parley.stores.sql._group import (
    PG_ACQUIRE,
    PG_INSERT_EVENT,
    PG_LEASES,
    PG_NOTIFY,
    PG_RELEASE,
    PG_SAVE,
    PG_TOUCH,
    AppendWrite,
    LeaseWrite,
    SaveWrite,
)

Write = AppendWrite | SaveWrite | LeaseWrite


class PostgresWriter:
    """Batches the store's hot writes into shared transactions (see the module docs)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.channel: str | None = None
        """``pg_notify`` this channel with ``e <sequence> <task id>`` for every append,
        in the batch's transaction (the store's ``notify_channel``)."""
        self._queue: list[tuple[Write, asyncio.Future[Any]]] = []
        self._drain: asyncio.Task[None] | None = None

    async def submit(self, write: Write) -> Any:
        """Write in the next batch; returns once it is committed (with the lease a
        ``LeaseWrite`` took), or raises its error."""
        future = asyncio.get_running_loop().create_future()
        self._queue.append((write, future))
        if self._drain is None or self._drain.done():
            self._drain = asyncio.get_running_loop().create_task(
                self._drain_queue(), name="parley-postgres-writer"
            )
        return await future

    async def aclose(self) -> None:
        """Wait for the batch being written (when it runs on this event loop)."""
        drain = self._drain
        if (
            drain is not None
            and not drain.done()
            and drain.get_loop() is asyncio.get_running_loop()
        ):
            await asyncio.wait([drain])

    async def _drain_queue(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                await self._commit(batch)
            except Exception as error:  # the connection failed: every caller learns it
                for _, future in batch:
                    _finish(future, error)
            except BaseException:  # the loop is shutting down: the callers are cancelled
                for _, future in batch:
                    future.cancel()
                raise

    async def _commit(self, batch: list[tuple[Write, asyncio.Future[Any]]]) -> None:
        async with self.engine.connect() as connection:
            raw: Any = (await connection.get_raw_connection()).driver_connection
            try:
                async with raw.transaction():
                    taken = await _apply(raw, [write for write, _ in batch], self.channel)
            except Exception as error:
                if len(batch) == 1:
                    _finish(batch[0][1], _translated(error, batch[0][0]))
                    return
                for write, future in batch:
                    try:
                        async with raw.transaction():
                            alone_taken = await _apply(raw, [write], self.channel)
                    except Exception as alone:
                        _finish(future, _translated(alone, write))
                    else:
                        _finish(future, None, alone_taken.get(write))
                return
        for write, future in batch:
            _finish(future, None, taken.get(write))


async def _apply(raw: Any, writes: list[Write], channel: str | None) -> dict[Write, Any]:
    """Write the batch; returns what each ``LeaseWrite`` took."""
    taken: dict[Write, Any] = {}
    for write in writes:
        if isinstance(write, LeaseWrite):
            row = await raw.fetchrow(PG_ACQUIRE.sql, *PG_ACQUIRE.parameters(write.values))
            taken[write] = None if row is None else (int(row[0]), float(row[1]))
    appends = [write for write in writes if isinstance(write, AppendWrite)]
    leased = [write.lease for write in appends if write.lease is not None]
    if leased:
        rows = await raw.fetch(PG_LEASES, [lease.task_id for lease in leased])
        tokens = {row[0]: row[1] for row in rows}
        for lease in leased:
            if tokens.get(lease.task_id) != lease.token:
                raise LeaseLostError(lost(lease.task_id))
    logged = [row for write in appends for row in write.events]
    if logged:
        await raw.executemany(PG_INSERT_EVENT.sql, logged)
    touched = [PG_TOUCH.parameters(w.touch) for w in appends if w.events and w.snapshot is None]
    if touched:
        await raw.executemany(PG_TOUCH.sql, touched)
    saves = [PG_SAVE.parameters(w.values) for w in writes if isinstance(w, SaveWrite)]
    saves += [PG_SAVE.parameters(w.snapshot) for w in appends if w.snapshot is not None]
    if saves:
        await raw.executemany(PG_SAVE.sql, saves)
    released = [
        PG_RELEASE.parameters({"task_id": w.lease.task_id, "token": w.lease.token})
        for w in appends
        if w.release and w.lease is not None
    ]
    if released:
        await raw.executemany(PG_RELEASE.sql, released)
    if channel is not None:
        notes = [f"e {w.logged[-1].sequence} {w.task_id}" for w in appends if w.logged]
        if notes:
            await raw.execute(PG_NOTIFY, channel, notes)
    return taken


def _translated(error: Exception, write: Write) -> Exception:
    if isinstance(write, AppendWrite) and type(error).__name__ == "UniqueViolationError":
        return ValueError(_duplicate(write.task_id, write.logged))
    return error


def _finish(future: asyncio.Future[Any], error: Exception | None, result: Any = None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)
