"""The memory store's entries (``parley.stores.MemoryStore``): a finished task packed into
one ``bytes`` (``_memory_pack``; ``finish`` for a task begun and finished in one append),
and a sorted index for ListTasks (``_memory_index``).

Both exist so that what a busy server accumulates costs the garbage collector nothing
(a dict of ``bytes`` and strings is not tracked) and a page of ListTasks does not read
every task. The store keeps the plain way beside each: a finished task as its snapshot's
JSON and its event objects, and an index that reads every task for a page.
"""

from __future__ import annotations

from collections.abc import Sequence

from parley._speedups import _switch
from parley._speedups._memory_index import TaskIndex as SortedTaskIndex
from parley._speedups._memory_pack import Finished, header, snapshot, unpack
from parley._speedups._memory_pack import pack as _pack
from parley.stores._memory_index import moves
from parley.stores._protocols import StoredEvent, status_time
from parley.types import Task

__all__ = [
    "Finished",
    "SortedTaskIndex",
    "finish",
    "header",
    "pack",
    "snapshot",
    "sorted_index",
    "unpack",
]


def pack(
    task: Task, sequence: int, events: Sequence[StoredEvent], touched: float, filed: float
) -> bytes | None:
    """The record of a finished ``task`` (its terminal snapshot, current as of
    ``sequence``), logged as ``events``, last touched at ``touched``, filed in the index
    at ``filed``; or ``None``: the store keeps it the plain way. ``header``, ``snapshot``
    and ``unpack`` read a record back, whatever the switch says by then."""
    if not _switch.on:
        return None
    return _pack(task, sequence, events, touched, filed)


def sorted_index() -> SortedTaskIndex | None:
    """A sorted index of tasks for ListTasks, or ``None``: the store reads every task."""
    return SortedTaskIndex() if _switch.on else None


def finish(task: Task, events: Sequence[StoredEvent], touched: float) -> tuple[bytes, float] | None:
    """The record of a ``task`` begun and finished in one append of ``events`` (a blocking
    send to a simple agent), packed at once, and the status time it is filed at: what
    appending the events and then saving the snapshot would leave, without the store's
    entry of a task in progress; or ``None``: the store appends, then saves."""
    if not _switch.on:
        return None
    status = task.status
    moved = moves(events, None, None)
    if moved is None or moved[2] is not status.state or moved[3] != status.timestamp:
        when = status_time(status)
        filed = when if moved is None else max(moved[0], when)
    else:
        filed = moved[0]
    sequence = events[-1].sequence if events else 0
    return _pack(task, sequence, events, touched, filed), filed
