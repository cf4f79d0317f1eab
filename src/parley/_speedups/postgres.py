"""The PostgreSQL writer's entry (``parley.stores.sql._pg_writer``): a batch written in
one statement, one round trip instead of a transaction's five (``_pg_batch``). The plain
way beside it is the writer's transaction (``_pg_writer._apply``), which writes any
batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from parley._speedups import _switch
from parley._speedups._pg_batch import Write, one_statement, write_batch_at_once

__all__ = ["write_at_once"]


async def write_at_once(raw: Any, writes: Sequence[Write]) -> dict[Write, Any] | None:
    """Write ``writes`` (a writer's batch) on asyncpg connection ``raw`` in one statement,
    outside a transaction block; returns ``LeaseLostError`` for each append whose new
    lease another holder has (its rows are not written). ``None``, before any I/O: the
    seam is off, or the batch needs a transaction (a lease to take or check, a task
    twice)."""
    if not _switch.on or not one_statement(writes):
        return None
    return await write_batch_at_once(raw, writes)
