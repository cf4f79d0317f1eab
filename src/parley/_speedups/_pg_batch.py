"""A PostgreSQL writer batch in one statement: one round trip instead of five.

Theory of operation
-------------------
The batch of a busy server is mostly the first (and often only) write of new tasks: a
new lease, the events, the snapshot. Written as a transaction, that is ``BEGIN``, a
statement per kind and ``COMMIT``: five round trips, each a wait for the server and a
wake-up of the event loop. ``write_batch`` does it all in one statement, whose
data-modifying ``WITH`` parts PostgreSQL runs as one: a statement outside a transaction
block is its own transaction, so the batch is still written whole or not at all.

The parts of one statement see the same snapshot of the tables and not each other's rows,
so the batch goes this way only when no two of its writes are for the same task
(``one_statement``), and only with what needs no reading first: a lease to take, or an
append fenced by a stored lease, goes the transaction's way
(``parley.stores.sql._pg_writer._apply``).

A new task's lease (``Lease.new``) is stored with ``ON CONFLICT DO NOTHING``, or, when
the append gives it up (the run ends with the task's first write), only checked for:
not stored at all. The rows of a task whose lease does not hold (another has one) are
left out (the ``WHERE`` of each part), and its caller gets ``LeaseLostError``, while
the rest of the batch is written: the result each caller would get with its write
alone.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from parley.stores._protocols import LeaseLostError, lost
from parley.stores.sql._group import (
    PG_INSERT_EVENT,
    PG_NEW_LEASE_STEPS,
    PG_SAVE,
    PG_START,
    PG_TOUCH,
    AppendMany,
    AppendWrite,
    LeaseWrite,
    SaveWrite,
    starts_log,
)

_KEPT = "NOT (c0 = ANY($1::text[])) OR c0 IN (SELECT task_id FROM new_leases)"
"""Rows of a task (``c0``: the first column, the task's id) without a new lease, or
whose new lease was stored."""


def _of_arrays(statement: str, first: int) -> str:
    """``statement``, a one-row ``INSERT ... VALUES (...) [ON CONFLICT ...]`` compiled
    for asyncpg (``_group``), as the insert of the rows of its columns' arrays
    ``$first``, ``$first + 1``, ... that ``_KEPT`` keeps: the very statement the
    transaction's way runs row by row, with its conflict rules, made once at import."""
    head, rest = statement.split(" VALUES (", 1)
    values, _, tail = rest.partition(")")
    kinds = [value.split("::", 1)[1] for value in values.split(", ")]
    arrays = ", ".join(f"${first + n}::{kind}[]" for n, kind in enumerate(kinds))
    names = ", ".join(f"c{n}" for n in range(len(kinds)))
    if "$" in tail:
        raise RuntimeError(f"a parameter after the values of {statement}")
    return f"{head} SELECT * FROM unnest({arrays}) AS x({names}) WHERE {_KEPT}{tail}"


_PARTS = (
    ("logged", PG_INSERT_EVENT),
    ("saved", PG_SAVE),
    ("touched", PG_TOUCH),
    ("started", PG_START),
)
"""The parts after the new leases (``$1``-``$4``): events, snapshots, touches, and the
rows of new tasks (``starts_log``)."""


@functools.cache
def write_batch(parts: tuple[bool, bool, bool, bool]) -> str:
    """The statement that stores new leases (``$1``-``$4``, ``PG_NEW_LEASE_STEPS``)
    and the ``_PARTS`` that ``parts`` says the batch has rows for, their columns'
    arrays from ``$5`` on, in that order; returns the tasks whose new lease holds. A
    part without rows is left out rather than given empty arrays: each array is a
    parameter that asyncpg checks and encodes and PostgreSQL decodes, each part an
    insert that PostgreSQL sets up and runs, for nothing (an echo's batch touches no
    task row). Each combination is one text, so asyncpg prepares it once per
    connection."""
    steps = list(PG_NEW_LEASE_STEPS)
    first = 5
    for (name, statement), present in zip(_PARTS, parts, strict=True):
        if present:
            steps.append(f"{name} AS ({_of_arrays(statement.sql, first)})")
            first += len(statement.names)
    return "WITH " + ",\n".join(steps) + "\nSELECT task_id FROM new_leases"


Write = AppendWrite | AppendMany | SaveWrite | LeaseWrite


def one_statement(writes: Sequence[Write]) -> bool:
    """Whether ``write_batch`` can write the batch: no lease to take or check, no push
    delivery to queue, no appends that must be written all or none, and each task
    once."""
    seen = set()
    for write in writes:
        if not isinstance(write, AppendWrite | SaveWrite):  # a lease, several appends
            return False
        if isinstance(write, AppendWrite):
            if (write.lease is not None and not write.lease.new) or write.outbox:
                return False
            task_id = write.task_id
        else:
            task_id = write.values["id"]
        if task_id in seen:
            return False
        seen.add(task_id)
    return True


async def write_batch_at_once(raw: Any, writes: Sequence[Write]) -> dict[Write, Any]:
    """Write a batch ``one_statement`` accepts; returns ``LeaseLostError`` for each
    append whose new lease another holder has (its rows are not written)."""
    held: list[tuple[Any, ...]] = []
    logged: list[tuple[Any, ...]] = []
    saved: list[dict[str, Any]] = []
    touched: list[dict[str, Any]] = []
    started: list[dict[str, Any]] = []
    for write in writes:
        if isinstance(write, SaveWrite):
            saved.append(write.values)
            continue
        assert isinstance(write, AppendWrite)
        lease = write.lease
        if lease is not None:  # new (one_statement): expiry 0, not stored, if the append ends it
            expires = 0.0 if write.release else lease.expires
            held.append((lease.task_id, lease.holder, lease.token, expires))
        logged += write.events
        # A new lease (the task made here) and the log's start: the task's row is new, a
        # plain insert of the touch's columns (``PG_START``: an upsert's speculative
        # insertion writes a confirmation record to the WAL too), without the snapshot
        # (``starts_log``). Should the row exist after all, the statement fails and each
        # write runs again alone, with upserts and its snapshot (``_pg_writer._commit``).
        if lease is not None and starts_log(write.logged):
            started.append(write.touch)
        elif write.snapshot is not None:
            saved.append(write.snapshot)
        elif write.events and write.moves_row():
            touched.append(write.touch)
    rows = await raw.fetch(
        write_batch((bool(logged), bool(saved), bool(touched), bool(started))),
        *_columns(held, 4),
        *(_columns(logged) if logged else ()),
        *(_columns([PG_SAVE.parameters(values) for values in saved]) if saved else ()),
        *(_columns([PG_TOUCH.parameters(values) for values in touched]) if touched else ()),
        *(_columns([PG_START.parameters(values) for values in started]) if started else ()),
    )
    if len(rows) == len(held):
        return {}
    stored = {row[0] for row in rows}
    return {
        write: LeaseLostError(lost(write.task_id))
        for write in writes
        if isinstance(write, AppendWrite)
        and write.lease is not None
        and write.lease.task_id not in stored
    }


def _columns(rows: list[tuple[Any, ...]], width: int = 0) -> list[list[Any]]:
    """Rows as columns (``unnest``'s arrays); ``width`` empty ones for no rows."""
    if not rows:
        return [[] for _ in range(width)]
    return [list(column) for column in zip(*rows, strict=True)]
