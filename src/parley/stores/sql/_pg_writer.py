"""Group commit for PostgreSQL: the writes of many tasks in one transaction, through
asyncpg directly.

Theory of operation
-------------------
``submit`` queues a write (``AppendWrite``, ``AppendMany``, ``SaveWrite`` or
``LeaseWrite``, from ``_group``) and waits. A *drain* takes everything queued, writes it
in one transaction with one statement per kind (every lease taken, one lease check for
all leased appends, every event row, every task-row touch that changes the row, every
snapshot, every release), commits, and only then ends each caller's wait; then it takes
what was queued meanwhile, until the queue is empty. It holds one connection of the
engine's pool throughout, so a busy writer pays one checkout for many batches, and keeps
it for ``linger`` seconds after the queue empties, for the next write: a checkout pings
the server (three round trips with asyncpg: BEGIN, a statement, ROLLBACK) and the return
rolls back (one more), which at one send at a time was most of a send's round trips.

A commit waits for PostgreSQL to flush its WAL (milliseconds on a real disk), so up to
``connections`` drains run at once, each with its own batch: while one batch waits for
its flush, the next is written, and PostgreSQL flushes concurrent commits together. But
a batch costs about as much again as the writes in it (the statement's set-up and the
commit in PostgreSQL, a round trip and its wake-ups here), paid by the same two CPUs
under load, so while one batch is being committed the writes queued meanwhile wait for
it and go in the next, unless ``ALONGSIDE`` of them wait (a batch's worth): then (and
for a batch stuck on a lock) another drain takes them. A new drain starts only when
every running one is busy with a batch. A caller waits for one write at a time, so one
task's writes still commit in the order it made them.

A drain ends when no write has come for ``linger`` seconds (or at ``aclose``), and the
next ``submit`` starts another, so no task outlives the work by more, nor its event
loop (a loop that ends cancels it, and it gives its connection back). A caller that is
cancelled leaves its write in the batch (it may still be committed), and never cancels
anyone else's.

A batch of new tasks' writes (new leases, events, snapshots; no lease to take or
check, no task twice) is one statement instead (``parley._speedups.postgres``): one
round trip, not ``BEGIN``, a statement per kind and ``COMMIT``.

If the shared transaction (or statement) fails, each write of the batch runs again in
a transaction of its own, so each caller gets its own result (``ValueError`` for a
repeated sequence number, ``LeaseLostError`` for a lost lease); an ``AppendMany`` is one
write, its parts written together or not at all. If the connection
fails, the batch's callers get the error and the drain gives the connection up.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from parley._speedups.postgres import write_at_once
from parley.stores._protocols import LeaseLostError, lost
from parley.stores._protocols import duplicate as _duplicate
from parley.stores.sql._group import (
    PG_ACQUIRE,
    PG_INSERT_EVENT,
    PG_INSERT_OUTBOX,
    PG_LAST_SEQUENCES,
    PG_LEASES,
    PG_LOGGED,
    PG_NEW_LEASES,
    PG_RELEASE,
    PG_SAVE,
    PG_TOUCH,
    AppendMany,
    AppendWrite,
    LeaseWrite,
    SaveWrite,
)

if TYPE_CHECKING:
    from parley.telemetry import Telemetry

Write = AppendWrite | AppendMany | SaveWrite | LeaseWrite
Batch = list[tuple[Write, "asyncio.Future[Any]"]]

CONNECTIONS = 4
"""Batches in flight at once (each drain holds a connection of the engine's pool)."""

ALONGSIDE = 64
"""Writes queued before a batch starts while another is being committed; fewer wait
for that commit and go in the next batch. Fewer would make more, smaller batches, each
with its own round trip and commit."""

LINGER = 1.0
"""Seconds a drain keeps its connection, once the queue is empty, for the next write."""


class PostgresWriter:
    """Batches the store's hot writes into shared transactions (see the module docs)."""

    def __init__(
        self, engine: AsyncEngine, connections: int = CONNECTIONS, linger: float = LINGER
    ) -> None:
        self.engine = engine
        self.connections = connections
        self.linger = linger
        self._queue: Batch = []
        self._drains: set[asyncio.Task[None]] = set()
        self._starting = 0
        """Drains started (or woken) that have not looked at the queue yet: they take
        what is queued."""
        self._committing = 0
        """Drains writing a batch now."""
        self._idle: list[asyncio.Future[bool]] = []
        """Drains waiting, with their connection, for writes (``True``) or the end of
        their linger (``False``)."""
        self.telemetry: Telemetry | None = None
        """When set, each commit is a span linked to the writes it carries."""
        self._origins: weakref.WeakKeyDictionary[asyncio.Future[Any], Any] = (
            weakref.WeakKeyDictionary()
        )
        """The span each queued write was submitted in (while ``telemetry`` is set)."""

    async def submit(self, write: Write) -> Any:
        """Write in the next batch; returns once it is committed (with what a
        ``LeaseWrite`` took: ``(token, expires, last sequence)`` or ``None``), or raises
        its error."""
        future = asyncio.get_running_loop().create_future()
        if self.telemetry is not None:
            self._origins[future] = self.telemetry.origin()
        self._queue.append((write, future))
        self._wake()
        return await future

    def _wake(self) -> None:
        """Wake an idle drain for the queue, or start one, unless one is about to take
        it, or all the connections are busy (a running drain takes it next)."""
        if not self._queue or self._starting or not self._leads():
            return
        while self._idle:
            idle = self._idle.pop()
            if not idle.done():
                self._starting += 1
                idle.set_result(True)
                return
        if len(self._drains) >= self.connections:
            return
        self._starting += 1
        drain = asyncio.get_running_loop().create_task(
            self._drain_queue(), name="parley-postgres-writer"
        )
        self._drains.add(drain)
        drain.add_done_callback(self._ended)

    def _leads(self) -> bool:
        """Whether the queue makes a batch now: no batch is being committed (the
        queue's writes would only wait), or enough writes wait for a batch of their
        own. A batch costs about as much again as its writes (PostgreSQL's statement
        and commit, the event loop's turns and asyncpg's work): a batch of the few
        writes queued right after another started would double that cost for them."""
        return not self._committing or len(self._queue) >= ALONGSIDE

    def _taken(self, woken: bool) -> Batch:
        """The queue, for a drain woken for it or if it makes a batch now; else
        nothing (the batch being committed takes it next)."""
        if not (woken or self._leads()):
            return []
        batch, self._queue = self._queue, []
        return batch

    def _ended(self, drain: asyncio.Task[None]) -> None:
        self._drains.discard(drain)
        if not drain.cancelled():
            self._wake()  # what was queued while it gave its connection back

    async def aclose(self) -> None:
        """End the idle drains and wait for the batches being written (those running on
        this event loop)."""
        idle, self._idle = self._idle, []
        for waiter in idle:
            if not waiter.done():
                waiter.set_result(False)
        loop = asyncio.get_running_loop()
        drains = [d for d in self._drains if not d.done() and d.get_loop() is loop]
        if drains:
            await asyncio.wait(drains)

    async def _drain_queue(self) -> None:
        taking = True  # counted in _starting until it takes its first batch
        batch: Batch = []
        connection: AsyncConnection | None = None
        try:
            connection, raw = await self._connect()
            while True:
                batch = self._taken(taking)
                if taking:
                    taking = False
                    self._starting -= 1
                if batch:
                    await self._write(raw, batch)
                    batch = []
                elif await self._wait_for_writes():
                    taking = True  # woken for the queue: counted in _starting
                    held, connection = connection, None
                    connection, raw = await self._reopened(held, raw)
                else:
                    break
            done, connection = connection, None
            await done.close()
        except Exception as error:  # no connection, or it failed: these callers learn it
            if taking:  # could not connect: nor can the writes queued meanwhile
                batch, self._queue = self._queue, []
            for _, future in batch:
                _finish(future, error)
        except BaseException:  # the loop is shutting down: the callers are cancelled
            for _, future in batch:
                future.cancel()
            raise
        finally:
            if taking:
                self._starting -= 1
            if connection is not None:
                await _give_back(connection)

    async def _write(self, raw: Any, batch: Batch) -> None:
        self._committing += 1
        try:
            telemetry = self.telemetry
            if telemetry is None:
                await _commit(raw, batch)
                return
            origins = [self._origins.pop(future, None) for _, future in batch]
            with telemetry.store_batch(origins):
                await _commit(raw, batch)
        finally:
            self._committing -= 1

    async def _connect(self) -> tuple[AsyncConnection, Any]:
        """A connection of the engine's pool, and asyncpg's connection in it."""
        connection = await self.engine.connect()
        try:
            return connection, (await connection.get_raw_connection()).driver_connection
        except BaseException:
            await connection.close()
            raise

    async def _reopened(self, connection: AsyncConnection, raw: Any) -> tuple[AsyncConnection, Any]:
        """The connection, or a new one if the server closed it while it waited."""
        if not raw.is_closed():
            return connection, raw
        await _give_back(connection)
        return await self._connect()

    async def _wait_for_writes(self) -> bool:
        """Wait, holding the connection, for writes (``True``) for ``linger`` seconds."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[bool] = loop.create_future()
        self._idle.append(waiter)
        timer = loop.call_later(self.linger, _settle, waiter, False)
        try:
            return await waiter
        finally:
            timer.cancel()
            if waiter in self._idle:
                self._idle.remove(waiter)


def _settle(waiter: asyncio.Future[bool], result: bool) -> None:
    if not waiter.done():
        waiter.set_result(result)


async def _give_back(connection: AsyncConnection) -> None:
    """Give a connection that failed (or whose drain was cancelled) back, unusable."""
    try:
        await connection.invalidate()
    finally:
        await connection.close()


async def _commit(raw: Any, batch: Batch) -> None:
    """Write ``batch`` in one transaction, or each write alone if that fails; raises
    only when the connection fails."""
    writes = [write for write, _ in batch]
    at_once = True
    try:
        taken = await write_at_once(raw, writes)  # ``None``: declined, nothing written
        if taken is None:
            at_once = False
            async with raw.transaction():
                taken = await _apply(raw, writes)
    except Exception as error:
        if raw.is_closed():
            raise
        if len(batch) == 1 and not at_once:  # the statement's plain inserts: see _speedups
            _finish(batch[0][1], await _translated(raw, error, batch[0][0]))
            return
        for write, future in batch:
            try:
                async with raw.transaction():
                    alone_taken = await _apply(raw, [write])
            except Exception as alone:
                if raw.is_closed():
                    raise
                _finish(future, await _translated(raw, alone, write))
            else:
                _finish(future, None, alone_taken.get(write))
        return
    for write, future in batch:
        result = taken.get(write)
        if isinstance(result, LeaseLostError):
            _finish(future, result)
        else:
            _finish(future, None, result)


async def _apply(raw: Any, writes: list[Write]) -> dict[Write, Any]:
    """Write the batch; returns what each ``LeaseWrite`` took."""
    acquires = [write for write in writes if isinstance(write, LeaseWrite)]
    taken = await _acquire(raw, acquires) if acquires else {}
    appends = [part for write in writes for part in _appends(write)]
    new = [write for write in appends if write.lease is not None and write.lease.new]
    if new:
        await _store_new_leases(raw, new)
    leased = [w.lease for w in appends if w.lease is not None and not w.lease.new]
    if leased:
        rows = await raw.fetch(PG_LEASES, [lease.task_id for lease in leased])
        tokens = {row[0]: row[1] for row in rows}
        for lease in leased:
            if tokens.get(lease.task_id) != lease.token:
                raise LeaseLostError(lost(lease.task_id))
    logged = [row for write in appends for row in write.events]
    if logged:
        await raw.executemany(PG_INSERT_EVENT.sql, logged)
    touched = [
        PG_TOUCH.parameters(w.touch)
        for w in appends
        if w.events and w.snapshot is None and w.moves_row()
    ]
    if touched:
        await raw.executemany(PG_TOUCH.sql, touched)
    saves = [PG_SAVE.parameters(w.values) for w in writes if isinstance(w, SaveWrite)]
    saves += [PG_SAVE.parameters(w.snapshot) for w in appends if w.snapshot is not None]
    if saves:
        await raw.executemany(PG_SAVE.sql, saves)
    released = [
        PG_RELEASE.parameters({"task_id": w.lease.task_id, "token": w.lease.token})
        for w in appends
        if w.release and w.lease is not None and not w.lease.new  # a new one: never stored
    ]
    if released:
        await raw.executemany(PG_RELEASE.sql, released)
    queued = [row for write in appends for row in write.outbox]
    if queued:
        await raw.executemany(PG_INSERT_OUTBOX.sql, queued)
    return taken


async def _acquire(raw: Any, acquires: list[LeaseWrite]) -> dict[Write, Any]:
    """Take the leases ``acquires`` ask for; what each took (``None``: another holds it)."""
    taken: dict[Write, Any] = {}
    rows = await raw.fetchmany(
        PG_ACQUIRE.sql, [PG_ACQUIRE.parameters(write.values) for write in acquires]
    )
    got = {row[2]: (int(row[0]), float(row[1])) for row in rows}
    # Read after the leases are taken (a statement of its own, so it sees every commit
    # before): an append by the previous holder either committed before, or waits for
    # this transaction and then finds its lease gone.
    held = [write.values["task_id"] for write in acquires if write.values["task_id"] in got]
    last = dict(await raw.fetch(PG_LAST_SEQUENCES, held)) if held else {}
    for write in acquires:
        task_id = write.values["task_id"]
        taken[write] = (*got[task_id], last.get(task_id) or 0) if task_id in got else None
    return taken


async def _store_new_leases(raw: Any, appends: list[AppendWrite]) -> None:
    """Store the new leases the appends carry, but not one the append gives up (a run
    that ends with its first write: only checked); ``LeaseLostError`` if a task has a
    lease already."""
    held = [(write.lease, write.release) for write in appends if write.lease is not None]
    rows = await raw.fetch(
        PG_NEW_LEASES,
        [lease.task_id for lease, _ in held],
        [lease.holder for lease, _ in held],
        [lease.token for lease, _ in held],
        [0.0 if release else lease.expires for lease, release in held],
    )
    stored = {row[0] for row in rows}
    for lease, _ in held:
        if lease.task_id not in stored:
            raise LeaseLostError(lost(lease.task_id))


def _appends(write: Write) -> Sequence[AppendWrite]:
    """The appends a write makes: its parts, for an ``AppendMany``."""
    if isinstance(write, AppendWrite):
        return (write,)
    return write.parts if isinstance(write, AppendMany) else ()


async def _translated(raw: Any, error: Exception, write: Write) -> Exception:
    """The error a write's caller gets: ``ValueError`` naming the task and the event
    numbers for a sequence number already logged (for an ``AppendMany``, the first part
    with one logged before, found by asking, or by a part before it)."""
    if type(error).__name__ != "UniqueViolationError":
        return error
    if isinstance(write, AppendWrite):
        return ValueError(_duplicate(write.task_id, write.logged))
    if isinstance(write, AppendMany):
        logged = [(part, stored) for part in write.parts for stored in part.logged]
        found = set(
            map(
                tuple,
                await raw.fetch(
                    PG_LOGGED,
                    [part.task_id for part, _ in logged],
                    [stored.sequence for _, stored in logged],
                ),
            )
        )
        for part in write.parts:  # logged before, or by a part before it
            keys = [(part.task_id, stored.sequence) for stored in part.logged]
            if any(key in found for key in keys):
                return ValueError(_duplicate(part.task_id, part.logged))
            found.update(keys)
    return error


def _finish(future: asyncio.Future[Any], error: Exception | None, result: Any = None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)
