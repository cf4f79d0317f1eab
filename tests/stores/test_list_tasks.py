"""``TaskStore.list_tasks`` (ListTasks, v1.0.1 §3.1.4), run against every store: filters,
the order by last activity, cursor pages that neither repeat nor skip, the total."""

from __future__ import annotations

import asyncio

from parley.stores import Store, StoredEvent
from parley.stores._protocols import TaskQuery
from parley.types import Task, TaskState, TaskStatus


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
    later = await store.list_tasks(TaskQuery(touched_after=cut[0]))
    assert [task.id for task in later.tasks] == ["t08", "t07", "t06", "t05"]
    assert later.total == 4


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
