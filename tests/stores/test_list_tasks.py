"""``TaskStore.list_tasks`` (ListTasks, v1.0.1 §3.1.4), run against every store: filters,
the order by status timestamp, cursor pages that neither repeat nor skip (concurrent
writes included), the total."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime

from parley.stores import Store, StoredEvent
from parley.stores._protocols import TaskQuery
from parley.types import (
    Artifact,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)


def _task(number: int, context: str, state: TaskState) -> Task:
    return Task(id=f"t{number:02d}", context_id=context, status=TaskStatus(state=state))


async def _fill(store: Store) -> list[Task]:
    """Nine tasks in three contexts, each touched after the one before."""
    made = []
    states = (TaskState.completed, TaskState.working, TaskState.input_required)
    for number in range(9):
        task = _task(number, f"c{number % 3}", states[number // 3])
        if task.status.state is TaskState.working:
            await store.append(task.id, [StoredEvent(1, task)])  # logged, never saved
        else:
            await store.save(task, 1)
        made.append(task)
        await asyncio.sleep(0.002)  # distinct times of last activity
    return made


async def test_all_tasks_latest_first(store: Store) -> None:
    """§3.1.4: sorted by last update, most recent first; the total counts every match."""
    made = await _fill(store)
    page = await store.list_tasks(TaskQuery(limit=50))
    assert [task.id for task in page.tasks] == [task.id for task in reversed(made)]
    assert page.total == 9
    assert page.last is None


async def test_pages_follow_the_cursor(store: Store) -> None:
    """§3.1.4: cursor pagination; every task once, in order, the last page says so."""
    made = await _fill(store)
    seen: list[str] = []
    after = None
    for _ in range(5):
        page = await store.list_tasks(TaskQuery(limit=4, after=after))
        assert page.total == 9
        seen += [task.id for task in page.tasks]
        if page.last is None:
            break
        after = page.last
    assert seen == [task.id for task in reversed(made)]


async def test_filters(store: Store) -> None:
    """§3.1.4: by context, by state, by both, and by time of the last status change."""
    made = await _fill(store)
    in_c1 = await store.list_tasks(TaskQuery(context_id="c1"))
    assert [task.id for task in in_c1.tasks] == ["t07", "t04", "t01"]
    assert in_c1.total == 3
    working = await store.list_tasks(TaskQuery(state=TaskState.working))
    assert [task.id for task in working.tasks] == ["t05", "t04", "t03"]
    both = await store.list_tasks(TaskQuery(context_id="c1", state=TaskState.working))
    assert [task.id for task in both.tasks] == ["t04"]
    assert both.total == 1
    first = await store.list_tasks(TaskQuery(limit=50))
    middle = first.tasks[4].id  # made[4]
    assert middle == made[4].id
    cut = (await store.list_tasks(TaskQuery(limit=5))).last
    assert cut is not None
    later = await store.list_tasks(TaskQuery(touched_after=cut[0]))  # at or after
    assert [task.id for task in later.tasks] == ["t08", "t07", "t06", "t05", "t04"]
    assert later.total == 5


async def test_deleted_tasks_leave_the_list(store: Store) -> None:
    await _fill(store)
    await store.delete("t08")
    await store.delete("t04")
    page = await store.list_tasks(TaskQuery(context_id="c1"))
    assert [task.id for task in page.tasks] == ["t07", "t01"]
    assert (await store.list_tasks(TaskQuery())).total == 7


async def test_a_task_moves_to_the_front_when_it_changes(store: Store) -> None:
    made = await _fill(store)
    await store.save(made[0].model_copy(update={"status": TaskStatus(state=TaskState.failed)}), 2)
    page = await store.list_tasks(TaskQuery(limit=2))
    assert [task.id for task in page.tasks] == ["t00", "t08"]
    assert page.tasks[0].status.state is TaskState.failed
    assert (await store.list_tasks(TaskQuery(state=TaskState.completed))).total == 2


def _at(second: float) -> str:
    return datetime.fromtimestamp(1_800_000_000 + second, UTC).isoformat()


def _stamped(task_id: str, state: TaskState, second: float) -> Task:
    return Task(id=task_id, context_id="c", status=TaskStatus(state=state, timestamp=_at(second)))


def _status(task_id: str, state: TaskState, second: float) -> StoredEvent:
    return StoredEvent(
        0,  # numbered by _log
        TaskStatusUpdateEvent(
            task_id=task_id,
            context_id="c",
            status=TaskStatus(state=state, timestamp=_at(second)),
        ),
    )


class _Log:
    """Appends events to each task's log with the next sequence numbers."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.last: dict[str, int] = {}

    async def add(self, task_id: str, *events: StoredEvent, snapshot: Task | None = None) -> None:
        first = self.last.get(task_id, 0) + 1
        numbered = [StoredEvent(first + i, e.event) for i, e in enumerate(events)]
        self.last[task_id] = first + len(events) - 1
        await self.store.append(task_id, numbered, snapshot=snapshot)


def _ids(page_tasks: list[Task]) -> list[str]:
    return [task.id for task in page_tasks]


async def test_the_order_is_the_status_timestamp(store: Store) -> None:
    """§3.1.4 "sorted by their status timestamp time in descending order", whatever the
    order of the writes: an artifact does not move a task, a status update does (its
    state unchanged too), a status stamped earlier does not move it back; the filter
    ``statusTimestampAfter`` is "greater than or equal"."""
    log = _Log(store)
    for task_id, second in (("a", 30), ("b", 10), ("c", 20)):  # written out of order
        task = _stamped(task_id, TaskState.submitted, second)
        await log.add(task_id, StoredEvent(0, task))
    assert _ids((await store.list_tasks(TaskQuery())).tasks) == ["a", "c", "b"]
    artifact = TaskArtifactUpdateEvent(
        task_id="b", context_id="c", artifact=Artifact(artifact_id="x", parts=[TextPart(text="x")])
    )
    await log.add("b", StoredEvent(0, artifact))
    assert _ids((await store.list_tasks(TaskQuery())).tasks) == ["a", "c", "b"]
    await log.add("b", _status("b", TaskState.working, 40))
    await log.add("c", _status("c", TaskState.submitted, 50))  # same state, later
    assert _ids((await store.list_tasks(TaskQuery())).tasks) == ["c", "b", "a"]
    await log.add("c", _status("c", TaskState.working, 5))  # stamped earlier: stays
    page = await store.list_tasks(TaskQuery())
    assert _ids(page.tasks) == ["c", "b", "a"]
    assert page.tasks[0].status.state is TaskState.working
    done = _stamped("a", TaskState.completed, 60)
    await log.add("a", _status("a", TaskState.completed, 60), snapshot=done)
    assert _ids((await store.list_tasks(TaskQuery())).tasks) == ["a", "c", "b"]
    since = datetime.fromisoformat(_at(40)).timestamp()
    assert _ids((await store.list_tasks(TaskQuery(touched_after=since))).tasks) == ["a", "c", "b"]
    since = datetime.fromisoformat(_at(41)).timestamp()
    assert _ids((await store.list_tasks(TaskQuery(touched_after=since))).tasks) == ["a", "c"]
    working = await store.list_tasks(TaskQuery(state=TaskState.working))
    assert _ids(working.tasks) == ["c", "b"]


async def test_a_task_written_in_one_append_is_filed_as_event_by_event(store: Store) -> None:
    """A task begun and finished in one write (what a blocking send to a simple agent
    makes) is listed as writing its events one by one lists it: at the latest status
    time among them (a status stamped earlier does not move it back), in its last state."""
    log = _Log(store)
    await log.add("a", StoredEvent(0, _stamped("a", TaskState.working, 30)))
    await log.add(
        "b",
        StoredEvent(0, _stamped("b", TaskState.submitted, 10)),
        _status("b", TaskState.working, 50),
        _status("b", TaskState.working, 20),
        _status("b", TaskState.completed, 60),
        snapshot=_stamped("b", TaskState.completed, 60),
    )
    page = await store.list_tasks(TaskQuery())
    assert _ids(page.tasks) == ["b", "a"]
    assert page.tasks[0].status.state is TaskState.completed
    assert _ids((await store.list_tasks(TaskQuery(state=TaskState.completed))).tasks) == ["b"]
    assert _ids((await store.list_tasks(TaskQuery(state=TaskState.working))).tasks) == ["a"]
    since = datetime.fromisoformat(_at(60)).timestamp()
    assert _ids((await store.list_tasks(TaskQuery(touched_after=since))).tasks) == ["b"]
    assert [stored.sequence for stored in await store.events("b")] == [1, 2, 3, 4]


async def test_an_append_files_at_its_latest_status_time_not_its_last(store: Store) -> None:
    """An append whose earlier status is stamped later than its last one (and than the
    snapshot saved with it) files the task at that later time, with a snapshot or
    without: every store as the memory store, as if the events came one by one."""
    log = _Log(store)
    await log.add("a", StoredEvent(0, _stamped("a", TaskState.working, 65)))
    await log.add(
        "b",
        StoredEvent(0, _stamped("b", TaskState.submitted, 10)),
        _status("b", TaskState.working, 70),
        _status("b", TaskState.completed, 60),
        snapshot=_stamped("b", TaskState.completed, 60),
    )
    await log.add("c", StoredEvent(0, _stamped("c", TaskState.submitted, 10)))
    await log.add(
        "c", _status("c", TaskState.working, 80), _status("c", TaskState.input_required, 40)
    )
    page = await store.list_tasks(TaskQuery())
    assert _ids(page.tasks) == ["c", "b", "a"]
    assert [task.status.state for task in page.tasks[:2]] == [
        TaskState.input_required,
        TaskState.completed,
    ]
    since = datetime.fromisoformat(_at(70)).timestamp()
    assert _ids((await store.list_tasks(TaskQuery(touched_after=since))).tasks) == ["c", "b"]


async def test_pages_stay_true_under_concurrent_writes(store: Store) -> None:
    """Cursor pages while other writers move tasks to the front: no task is listed
    twice, and every task that was not moved during the walk is listed, in order."""
    log = _Log(store)
    count = 30
    for number in range(count):
        task_id = f"t{number:02d}"
        await log.add(task_id, StoredEvent(0, _stamped(task_id, TaskState.working, number)))
    clock = [float(count)]
    times = {f"t{n:02d}": float(n) for n in range(count)}
    rng = random.Random(7)
    for _trial in range(8):
        moved: set[str] = set()
        walking = asyncio.Event()
        walking.set()

        async def writer(moved: set[str] = moved, walking: asyncio.Event = walking) -> None:
            while walking.is_set():
                task_id = f"t{rng.randrange(count):02d}"
                clock[0] += 1
                moved.add(task_id)
                times[task_id] = clock[0]
                await log.add(task_id, _status(task_id, TaskState.working, clock[0]))
                await asyncio.sleep(0)

        writers = [asyncio.create_task(writer()) for _ in range(3)]
        seen: list[str] = []
        after = None
        try:
            while True:
                page = await store.list_tasks(TaskQuery(limit=4, after=after))
                seen += _ids(page.tasks)
                if page.last is None:
                    break
                after = page.last
                await asyncio.sleep(0)
        finally:
            walking.clear()
            await asyncio.gather(*writers)
        assert len(seen) == len(set(seen)), f"listed twice: {seen}"
        untouched = [f"t{n:02d}" for n in range(count) if f"t{n:02d}" not in moved]
        assert set(untouched) <= set(seen)
        in_order = sorted(untouched, key=lambda task_id: times[task_id], reverse=True)
        assert [task_id for task_id in seen if task_id in untouched] == in_order
