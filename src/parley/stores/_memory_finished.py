"""The memory store's records of finished tasks: a finished task holds still, so it is
kept whole as one record, packed into ``bytes`` by ``parley._speedups.memory``, or, when
that declines, kept the plain way (``_Done``: its snapshot's JSON and its event objects).
Each reader here reads either kind."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from parley._speedups.memory import header, pack, snapshot, unpack
from parley.stores._memory_index import Place
from parley.stores._protocols import StoredEvent
from parley.types import Task


class _Done(NamedTuple):
    """A finished task kept the plain way (``pack`` declined)."""

    json: bytes
    """Its snapshot's wire JSON."""
    sequence: int
    events: list[StoredEvent]
    touched: float
    place: Place


Record = bytes | _Done
"""A finished task's record: packed, or kept the plain way."""


def read_header(record: Record) -> tuple[int, int, float, Place]:
    """The snapshot's sequence, the last event's, when last touched, and the place of a
    finished task's record."""
    if isinstance(record, bytes):
        return header(record)
    last = record.events[-1].sequence if record.events else 0
    return record.sequence, last, record.touched, record.place


def read_snapshot(task_id: str, record: Record) -> tuple[Task, int]:
    if isinstance(record, bytes):
        return snapshot(task_id, record)
    return Task.model_validate_json(record.json), record.sequence


def read_log(task_id: str, record: Record) -> tuple[bytes, int, list[StoredEvent]]:
    """The snapshot's JSON, its sequence and the event log of a finished task's record."""
    if isinstance(record, bytes):
        return unpack(task_id, record)
    return record.json, record.sequence, list(record.events)


def record_of(
    task: Task, sequence: int, events: Sequence[StoredEvent], touched: float, filed: float
) -> Record:
    """The record of a finished task: packed, or else kept as it is."""
    record = pack(task, sequence, events, touched, filed)
    if record is not None:
        return record
    place = Place(filed, task.status.state, task.context_id)
    return _Done(task.to_json(), sequence, list(events), touched, place)
