"""The writes of ``SQLStore`` for its writer (``_writer`` for SQLite, ``_pg_writer`` for
PostgreSQL): append a task's events (checking its lease), several tasks' appends all or
none, save a task's snapshot, take a lease.

They are the store's one write path: the statements are SQLAlchemy Core, compiled once,
at import, for ``sqlite3`` and for asyncpg; the contract test runs them on both
databases.
"""

from __future__ import annotations

import functools
import itertools
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, case, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import asyncpg

from parley.stores._protocols import Lease, LeaseLostError, OutboxEntry, StoredEvent, lost
from parley.stores._protocols import duplicate as _duplicate
from parley.stores.sql._schema import events, leases, outbox, tasks
from parley.stores.sql._writer import Executes, Statement


def later_touched(new: Any) -> Any:
    """A task row's ``touched`` after an upsert: the later of the stored status time
    and ``new``'s (``status_time``; 0 when the write has no status), so a task never
    moves back in ListTasks' order and a cursor never meets it twice."""
    return case((new.touched > tasks.c.touched, new.touched), else_=tasks.c.touched)


def _touch(dialect: Any) -> Any:
    upsert = dialect.insert(tasks).values(
        id=bindparam("id"),
        state=bindparam("state"),
        context_id=bindparam("context_id"),
        touched=bindparam("touched"),
        owner=bindparam("owner"),
    )
    return upsert.on_conflict_do_update(
        index_elements=[tasks.c.id],
        set_={
            "touched": later_touched(upsert.excluded),
            "owner": func.coalesce(tasks.c.owner, upsert.excluded.owner),  # the first stays
            "state": func.coalesce(upsert.excluded.state, tasks.c.state),
            # a task's context is known from its first event, before any snapshot (ListTasks)
            "context_id": func.coalesce(tasks.c.context_id, upsert.excluded.context_id),
        },
    )


def _acquire(dialect: Any) -> Any:
    now: Any = bindparam("now")
    take = dialect.insert(leases).values(
        task_id=bindparam("task_id"),
        holder=bindparam("holder"),
        token=1,
        expires=bindparam("expires"),
    )
    mine = (leases.c.holder == take.excluded.holder) & (leases.c.expires > now)
    return take.on_conflict_do_update(
        index_elements=[leases.c.task_id],
        set_={
            "holder": take.excluded.holder,
            "token": case((mine, leases.c.token), else_=leases.c.token + 1),
            "expires": take.excluded.expires,
        },
        where=(leases.c.expires <= now) | (leases.c.holder == take.excluded.holder),
    ).returning(leases.c.token, leases.c.expires, leases.c.task_id)


def _release() -> Any:
    return (
        update(leases)
        .where(leases.c.task_id == bindparam("task_id"), leases.c.token == bindparam("token"))
        .values(expires=0.0)
    )


def _save(dialect: Any) -> Any:
    names = ("id", "context_id", "state", "snapshot", "snapshot_sequence", "touched", "owner")
    upsert = dialect.insert(tasks).values({name: bindparam(name) for name in names})
    kept = {name: upsert.excluded[name] for name in names if name not in ("id", "owner")}
    kept["touched"] = later_touched(upsert.excluded)
    return upsert.on_conflict_do_update(
        index_elements=[tasks.c.id],
        set_={**kept, "owner": func.coalesce(upsert.excluded.owner, tasks.c.owner)},
    )


_INSERT_EVENT = events.insert().values(
    task_id=bindparam("task_id"), sequence=bindparam("sequence"), event=bindparam("event")
)
_OUTBOX_COLUMNS = (
    "task_id", "config_id", "sequence", "payload", "attempts", "due", "created", "traceparent"
)  # fmt: skip
_INSERT_OUTBOX = (
    outbox.insert().values({name: bindparam(name) for name in _OUTBOX_COLUMNS}).inline()
)
_ASYNCPG_DIALECT: Any = asyncpg.dialect  # untyped in SQLAlchemy
_POSTGRES = _ASYNCPG_DIALECT()

INSERT_EVENT = Statement.of(_INSERT_EVENT)
INSERT_OUTBOX = Statement.of(_INSERT_OUTBOX)
TOUCH_TASK = Statement.of(_touch(sqlite))
SAVE_TASK = Statement.of(_save(sqlite))
LEASE_TOKEN = Statement.of(select(leases.c.token).where(leases.c.task_id == bindparam("task_id")))
RELEASE = Statement.of(_release())
ACQUIRE = Statement.of(_acquire(sqlite))

PG_INSERT_EVENT = Statement.of(_INSERT_EVENT, _POSTGRES)
PG_INSERT_OUTBOX = Statement.of(_INSERT_OUTBOX, _POSTGRES)
PG_TOUCH = Statement.of(_touch(postgresql), _POSTGRES)
PG_SAVE = Statement.of(_save(postgresql), _POSTGRES)
PG_RELEASE = Statement.of(_release(), _POSTGRES)
PG_START = Statement.of(
    postgresql.insert(tasks).values(
        {name: bindparam(name) for name in ("id", "state", "context_id", "touched", "owner")}
    ),
    _POSTGRES,
)
"""``PG_TOUCH`` for a task whose row does not exist yet (made here: ``Lease.new``), a
plain insert: no speculative insertion, so no confirmation record in the WAL (49 B)."""
PG_ACQUIRE = Statement.of(_acquire(postgresql), _POSTGRES)
PG_LAST_SEQUENCES = (
    f"SELECT {events.c.task_id.name}, max({events.c.sequence.name}) FROM {events.name} "
    f"WHERE {events.c.task_id.name} = ANY($1::text[]) GROUP BY {events.c.task_id.name}"
)
"""The last stored sequence number of each task (none: no events yet)."""
PG_LOGGED = (
    f"SELECT {events.c.task_id.name}, {events.c.sequence.name} FROM {events.name} "
    f"WHERE ({events.c.task_id.name}, {events.c.sequence.name}) IN "
    "(SELECT * FROM unnest($1::text[], $2::int[]))"
)
"""Which of the events ``$1``/``$2`` (task ids, sequence numbers) are logged already."""
PG_LEASES = (
    f"SELECT {leases.c.task_id.name}, {leases.c.token.name} FROM {leases.name} "
    f"WHERE {leases.c.task_id.name} = ANY($1::text[]) FOR SHARE"
)
"""The tokens of the leases an append batch is fenced by, locked until it commits."""

_LEASE_COLUMNS = ", ".join(
    column.name for column in (leases.c.task_id, leases.c.holder, leases.c.token, leases.c.expires)
)
PG_NEW_LEASE_STEPS = (
    f"stored_leases AS (INSERT INTO {leases.name} ({_LEASE_COLUMNS}) "
    "SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::float8[]) "
    "AS x(t, h, k, e) WHERE e <> 0 "
    f"ON CONFLICT ({leases.c.task_id.name}) DO NOTHING RETURNING {leases.c.task_id.name})",
    f"new_leases AS (SELECT {leases.c.task_id.name} FROM stored_leases UNION ALL "
    "SELECT t FROM unnest($1::text[], $4::float8[]) AS y(t, e) WHERE e = 0 AND NOT EXISTS "
    f"(SELECT FROM {leases.name} WHERE {leases.c.task_id.name} = y.t))",
)
"""The ``WITH`` steps that store the leases of new tasks (``Lease.new``; ``$1``-``$4``:
task ids, holders, tokens, expiries), ``new_leases`` the tasks whose lease holds (not
those that have one already). A lease whose expiry is 0 is given up by the append that
carries it (the task's run ends with its first write): it is not stored, only checked,
so such a task has no lease row (see ``Lease.new``)."""

PG_NEW_LEASES = f"WITH {', '.join(PG_NEW_LEASE_STEPS)} SELECT task_id FROM new_leases"
"""Store the leases of new tasks (``PG_NEW_LEASE_STEPS``), in one statement; returns
the tasks whose lease holds."""

for _statement in (INSERT_EVENT, PG_INSERT_EVENT):  # AppendWrite builds event rows so
    if _statement.names != ("task_id", "sequence", "event"):
        raise RuntimeError(f"unexpected parameter order {_statement.names}")


def starts_log(logged: Sequence[StoredEvent]) -> bool:
    """Whether an append of ``logged`` starts its task's log (sequence 1). Its snapshot, if
    it has one, is then the fold of these events from no task (``TaskRuns.start_new`` starts a
    task with none; its first event carries the user's message), the whole log, which ``get``
    and ``list_tasks`` replay from a row without one, as they do for a stream's task before
    its first checkpoint. So such an append need not store the snapshot (a task's JSON
    serialized, bound and written into the row's pages, fewer WAL frames a commit); the cost
    moves to a later ``get`` of the task (its events parsed rather than the snapshot).
    SQLite's store leaves it out (``SQLStore.append``), PostgreSQL's one-statement batch too
    (``parley._speedups._pg_batch``)."""
    return bool(logged) and logged[0].sequence == 1


class AppendWrite:
    """One task's events, ready to write: serialized on the caller's side, so the
    writer only runs statements. With ``snapshot`` (the values of a save) the
    task row is saved instead of touched; with ``release`` the lease is given up; with
    ``outbox`` the push deliveries the events cause are queued: all in the same
    transaction."""

    __slots__ = (
        "events", "lease", "logged", "outbox", "release", "snapshot", "task_id", "touch"
    )  # fmt: skip

    def __init__(
        self,
        task_id: str,
        logged: Sequence[StoredEvent],
        touch: dict[str, Any],
        lease: Lease | None,
        snapshot: dict[str, Any] | None = None,
        release: bool = False,
        outbox: Sequence[OutboxEntry] = (),
    ) -> None:
        self.task_id = task_id
        self.logged = logged
        self.events = [(task_id, s.sequence, s.to_json().decode()) for s in logged]
        self.touch = touch
        self.lease = lease
        self.snapshot = snapshot
        self.release = release and lease is not None
        self.outbox = [_outbox_row(entry) for entry in outbox] if outbox else []

    def __call__(self, connection: Executes) -> None:
        lease = self.lease
        if lease is not None:
            row = connection.execute(
                LEASE_TOKEN.sql, LEASE_TOKEN.parameters({"task_id": lease.task_id})
            ).fetchone()
            if row is None or row[0] != lease.token:
                raise LeaseLostError(lost(lease.task_id))
        events = self.events
        if events:
            try:
                if len(events) == 1:
                    connection.execute(INSERT_EVENT.sql, events[0])
                else:
                    for start in range(0, len(events), _ROWS_PER_INSERT):
                        rows = events[start : start + _ROWS_PER_INSERT]
                        flat = list(itertools.chain.from_iterable(rows))
                        connection.execute(_insert_rows(len(rows)), flat)
            except sqlite3.IntegrityError:
                raise ValueError(_duplicate(self.task_id, self.logged)) from None
        if self.snapshot is not None:
            connection.execute(SAVE_TASK.sql, SAVE_TASK.parameters(self.snapshot))
        elif self.events and self.moves_row():
            connection.execute(TOUCH_TASK.sql, TOUCH_TASK.parameters(self.touch))
        if self.release and lease is not None:
            connection.execute(
                RELEASE.sql, RELEASE.parameters({"task_id": lease.task_id, "token": lease.token})
            )
        if self.outbox:
            connection.executemany(INSERT_OUTBOX.sql, self.outbox)

    def moves_row(self) -> bool:
        """Whether the task row needs the append's touch. Not when its events carry no
        status and follow events stored before (sequence above 1): the row exists then,
        with the task's context and owner (stored with its first events; both are fixed
        when the task is made), and a touch without a status keeps its state and time,
        so it would only write the row again unchanged (SQLite: the row and its four
        indexes; PostgreSQL: a new row version) per chunk of a stream."""
        return self.touch["state"] is not None or self.events[0][1] == 1


class AppendMany:
    """Several appends written all or none (``SQLStore.append_many``): one write to the
    group writers, so when a shared transaction fails and each write runs again alone,
    its parts stay together. SQLite runs the parts in order (each checks its own lease);
    PostgreSQL's writer writes them with the rest of its batch, kind by kind."""

    __slots__ = ("parts",)

    def __init__(self, parts: Sequence[AppendWrite]) -> None:
        self.parts = parts

    def __call__(self, connection: Executes) -> None:
        for part in self.parts:
            part(connection)


def _outbox_row(entry: OutboxEntry) -> tuple[Any, ...]:
    """An outbox entry's row, its columns in ``_OUTBOX_COLUMNS``' order (``created``: now,
    when the entry has none)."""
    created = entry.created or time.time()
    return (
        entry.task_id, entry.config_id, entry.sequence, entry.payload, entry.attempts,
        entry.due, created, entry.traceparent,
    )  # fmt: skip


_ROWS_PER_INSERT = 16
"""Event rows one SQLite ``INSERT`` takes at most, as one multi-row ``VALUES``: a
stream's events are one statement step rather than one per row (``executemany``), and
each step has its own fixed cost."""


@functools.cache
def _insert_rows(count: int) -> str:
    """``INSERT_EVENT`` for ``count`` rows at once."""
    head, row = INSERT_EVENT.sql.split(" VALUES ")
    return f"{head} VALUES {', '.join([row] * count)}"


class LeaseWrite:
    """Take (or renew) a task's lease: the SQL of ``SQLSide.acquire_lease``, compiled;
    returns ``(token, expires)`` or ``None`` when another holder has it."""

    __slots__ = ("values",)

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def __call__(self, connection: Executes) -> tuple[int, float] | None:
        row = connection.execute(ACQUIRE.sql, ACQUIRE.parameters(self.values)).fetchone()
        return None if row is None else (int(row[0]), float(row[1]))


class SaveWrite:
    """A task's snapshot, ready to write."""

    __slots__ = ("values",)

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def __call__(self, connection: Executes) -> None:
        connection.execute(SAVE_TASK.sql, SAVE_TASK.parameters(self.values))
