"""A task begun and finished in one append, which the memory store keeps packed at once
(``parley._speedups.memory.finish``), reads back as the plain way (append the events, then
save the snapshot) leaves it: the same snapshot, events, last sequence, owners, and the
same place in ListTasks, whatever the times of its statuses."""

from __future__ import annotations

import pytest

from parley._speedups import enabled
from parley.stores import MemoryStore, StoredEvent
from parley.stores._protocols import TaskQuery
from parley.types import Task, TaskState, TaskStatus, TaskStatusUpdateEvent
from tests.speedups import plain
from tests.types.shapes import finished

pytestmark = pytest.mark.skipif(not enabled(), reason="PARLEY_SPEEDUPS=0: the plain path")

EARLY, MIDDLE, LATE = (f"2026-11-24T16:00:0{n}.000000+00:00" for n in (1, 2, 3))


def _appends() -> list[tuple[str, list[StoredEvent], Task, str | None]]:
    """Tasks begun and finished in one append: statuses stamped before, at and after the
    snapshot's, unstamped, none at all; with an owner and without."""
    appends = []
    cases: list[tuple[str | None, list[str | None]]] = [
        (LATE, [MIDDLE, EARLY]),
        (MIDDLE, [EARLY, MIDDLE]),
        (EARLY, [LATE]),
        (None, [EARLY]),
        (MIDDLE, [None]),
        (LATE, []),
        (None, []),
    ]
    for n, (stamp, statuses) in enumerate(cases):
        ids = (f"t{n}", f"c{n % 3}", f"m{n}", f"a{n}")
        task = finished(f"text {n}", ids=ids, stamp=stamp)
        submitted = task.copied(status=TaskStatus(state=TaskState.submitted, timestamp=EARLY))
        events = [StoredEvent(1, submitted)]
        for at in statuses:
            status = TaskStatus(state=TaskState.working, timestamp=at)
            event = TaskStatusUpdateEvent(
                task_id=task.id, context_id=task.context_id, status=status, final=False
            )
            events.append(StoredEvent(len(events) + 1, event))
        appends.append((task.id, events, task, "alice" if n % 2 else None))
    return appends


async def _kept() -> tuple[MemoryStore, list[object]]:
    store = MemoryStore()
    for task_id, events, task, owner in _appends():
        await store.append(task_id, events, snapshot=task, owner=owner)
    read: list[object] = []
    for task_id, _, task, _ in _appends():
        read += [await store.get(task_id), await store.last_sequence(task_id)]
        read += [[(e.sequence, e.event) for e in await store.events(task_id)]]
        read += [await store.context_owner(task.context_id)]
    for query in (TaskQuery(), TaskQuery(owner="alice"), TaskQuery(context_id="c1")):
        page = await store.list_tasks(query)
        read += [[task.id for task in page.tasks], page.total, page.last]
    return store, read


async def test_a_task_finished_in_one_append_reads_as_the_plain_way_leaves_it() -> None:
    fast_store, fast = await _kept()
    with plain():
        _, plainly = await _kept()
    assert fast == plainly
    assert len(fast_store._done) == len(_appends())  # kept at once: no task in progress
    assert all(isinstance(record, bytes) for record in fast_store._done.values())
