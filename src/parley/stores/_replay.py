"""Bring a snapshot up to date by folding the events logged after it."""

from __future__ import annotations

from collections.abc import Iterable

from parley.protocol import apply
from parley.stores._protocols import StoredEvent, TaskSnapshot
from parley.types import Task


def replay(task: Task | None, sequence: int, events: Iterable[StoredEvent]) -> TaskSnapshot | None:
    """``task`` (current as of ``sequence``) with every later event folded in, or ``None``
    if there is still no task (no snapshot, and no ``Task`` event in the log)."""
    for entry in events:
        if entry.sequence > sequence:
            task = apply(task, entry.event)
            sequence = entry.sequence
    return None if task is None else TaskSnapshot(task, sequence)
