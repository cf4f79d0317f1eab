"""A PostgreSQL writer batch in one statement: one round trip instead of five.

Theory of operation
-------------------
The batch of a busy server is mostly the first (and often only) write of new tasks: a
new lease, the events, the snapshot. Written as a transaction, that is ``BEGIN``, a
statement per kind and ``COMMIT``: five round trips, each a wait for the server and a
wake-up of the event loop. ``WRITE_BATCH`` does it all in one statement, whose
data-modifying ``WITH`` parts PostgreSQL runs as one: a statement outside a transaction
block is its own transaction, so the batch is still written whole or not at all.

The parts of one statement see the same snapshot of the tables and not each other's
rows, so the batch goes this way only when no two of its writes are for the same task
(``one_statement``), and only with what needs no reading first: a lease to take, or an
append fenced by a stored lease, goes the transaction's way (``_pg_writer._apply``).

A new task's lease (``Lease.new``) is stored with ``ON CONFLICT DO NOTHING``; the rows
of a task whose lease was not stored (another has it) are left out (the ``WHERE`` of
each part), and its caller gets ``LeaseLostError``, while the rest of the batch is
written: the result each caller would get with its write alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from parley.stores._protocols import LeaseLostError, lost
from parley.stores.sql._group import AppendWrite, LeaseWrite, SaveWrite
from parley.stores.sql._schema import events, leases, tasks

_T = tasks.name
_LATER = f"CASE WHEN excluded.touched > {_T}.touched THEN excluded.touched ELSE {_T}.touched END"
_KEPT = "NOT (t = ANY($1::text[])) OR t IN (SELECT task_id FROM new_leases)"
"""Rows of a task without a new lease, or whose new lease was stored."""

WRITE_BATCH = f"""
WITH new_leases AS (
    INSERT INTO {leases.name} (task_id, holder, token, expires)
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::float8[])
    ON CONFLICT (task_id) DO NOTHING RETURNING task_id
), logged AS (
    INSERT INTO {events.name} (task_id, sequence, event)
    SELECT t, s, e FROM unnest($5::text[], $6::int4[], $7::text[]) AS x(t, s, e)
    WHERE {_KEPT}
), saved AS (
    INSERT INTO {_T} (id, context_id, state, snapshot, snapshot_sequence, touched, owner)
    SELECT * FROM unnest(
        $8::text[], $9::text[], $10::text[], $11::text[], $12::int4[], $13::float8[],
        $14::text[]
    ) AS x(t, c, st, sn, sq, tt, o)
    WHERE {_KEPT}
    ON CONFLICT (id) DO UPDATE SET
        context_id = excluded.context_id, state = excluded.state,
        snapshot = excluded.snapshot, snapshot_sequence = excluded.snapshot_sequence,
        touched = {_LATER}, owner = coalesce(excluded.owner, {_T}.owner)
), touched AS (
    INSERT INTO {_T} (id, state, context_id, touched, owner)
    SELECT * FROM unnest($15::text[], $16::text[], $17::text[], $18::float8[], $19::text[])
        AS x(t, st, c, tt, o)
    WHERE {_KEPT}
    ON CONFLICT (id) DO UPDATE SET
        touched = {_LATER}, owner = coalesce({_T}.owner, excluded.owner),
        state = coalesce(excluded.state, {_T}.state),
        context_id = coalesce({_T}.context_id, excluded.context_id)
)
SELECT task_id FROM new_leases
"""
"""Store new leases, events, snapshots and touches; returns the new leases stored."""

Write = AppendWrite | SaveWrite | LeaseWrite

_SAVED = ("id", "context_id", "state", "snapshot", "snapshot_sequence", "touched", "owner")
_TOUCHED = ("id", "state", "context_id", "touched", "owner")


def one_statement(writes: Sequence[Write]) -> bool:
    """Whether ``WRITE_BATCH`` can write the batch: no lease to take or check, and
    each task once."""
    seen = set()
    for write in writes:
        if isinstance(write, LeaseWrite):
            return False
        if isinstance(write, AppendWrite):
            if write.lease is not None and not write.lease.new:
                return False
            task_id = write.task_id
        else:
            task_id = write.values["id"]
        if task_id in seen:
            return False
        seen.add(task_id)
    return True


async def write_at_once(raw: Any, writes: Sequence[Write], moves_row: Any) -> dict[Write, Any]:
    """Write a batch ``one_statement`` accepts; returns ``LeaseLostError`` for each
    append whose new lease another holder has (its rows are not written)."""
    held: list[tuple[Any, ...]] = []
    logged: list[tuple[Any, ...]] = []
    saved: list[dict[str, Any]] = []
    touched: list[dict[str, Any]] = []
    for write in writes:
        if isinstance(write, SaveWrite):
            saved.append(write.values)
            continue
        assert isinstance(write, AppendWrite)
        lease = write.lease
        if lease is not None:  # new (one_statement): stored released if the append ends it
            expires = 0.0 if write.release else lease.expires
            held.append((lease.task_id, lease.holder, lease.token, expires))
        logged += write.events
        if write.snapshot is not None:
            saved.append(write.snapshot)
        elif write.events and moves_row(write):
            touched.append(write.touch)
    rows = await raw.fetch(
        WRITE_BATCH,
        *_columns(held, 4),
        *_columns(logged, 3),
        *_columns([tuple(values[name] for name in _SAVED) for values in saved], 7),
        *_columns([tuple(values[name] for name in _TOUCHED) for values in touched], 5),
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


def _columns(rows: list[tuple[Any, ...]], width: int) -> list[list[Any]]:
    """Rows as columns (``unnest``'s arrays); ``width`` empty ones for no rows."""
    if not rows:
        return [[] for _ in range(width)]
    return [list(column) for column in zip(*rows, strict=True)]
