"""The memory store holds finished tasks where the garbage collector does not look
(``parley._speedups.memory``; skipped where the seam is off, ``PARLEY_SPEEDUPS=0``).

A full collection walks every container it tracks; a store that kept each finished task
(or each sent message) in a tracked container would make every collection, and so the
tail latency of a busy server, grow with the number of tasks it has stored.
"""

from __future__ import annotations

import gc
from types import FunctionType, ModuleType

import pytest

from parley._speedups import enabled
from parley.stores import MemoryStore, StoredEvent
from parley.types import Message, Role, Task, TaskState, TaskStatus, TextPart

TASKS = 3000
pytestmark = pytest.mark.skipif(not enabled(), reason="PARLEY_SPEEDUPS=0: the plain path")


def task(number: int, state: TaskState) -> Task:
    message = Message(
        message_id=f"m{number}", role=Role.user, parts=[TextPart(text=f"hello {number}")]
    )
    return Task(
        id=f"t{number}",
        context_id=f"c{number}",
        status=TaskStatus(state=state, timestamp="2026-11-21T10:00:00+00:00"),
        history=[message],
    )


def largest_tracked_container(root: object) -> int:
    """The size of the largest container the collector walks among what ``root`` holds:
    the containers reachable from it through tracked objects (its class, modules and
    functions are not its own, and not followed)."""
    gc.collect()
    largest, seen, stack = 0, set(), [root]
    while stack:
        held = stack.pop()
        if id(held) in seen or not gc.is_tracked(held):
            continue
        seen.add(id(held))
        if isinstance(held, type | ModuleType | FunctionType):
            continue
        if isinstance(held, dict | list | set | tuple):
            largest = max(largest, len(held))
        stack.extend(gc.get_referents(held))
    return largest


async def test_finished_tasks_and_sent_messages_are_not_walked_by_the_collector() -> None:
    store = MemoryStore()
    for number in range(TASKS):
        working = task(number, TaskState.working)
        await store.claim_message(f"c{number}", f"m{number}", working.id)
        await store.append(working.id, (StoredEvent(1, working),))
        await store.save(task(number, TaskState.completed), 2)
        if number % 2:
            reply = Message(message_id=f"r{number}", role=Role.agent, parts=[TextPart(text="hi")])
            await store.save_reply(f"c{number}", f"r{number}", reply)
    live = task(TASKS, TaskState.working)
    await store.append(live.id, (StoredEvent(1, live),))  # one task still in progress

    assert largest_tracked_container(store) < TASKS
    # And what it holds is all still there.
    assert len(store) == TASKS  # (the one in progress has no snapshot yet)
    snapshot = await store.get("t7")
    assert snapshot is not None
    assert snapshot.sequence == 2
    assert snapshot.task.status.state is TaskState.completed
    sent = await store.find_message("c7", "m7")
    assert sent is not None
    assert sent.task_id == "t7"
    assert await store.active() == [live.id]


async def test_message_keys_do_not_collide_across_scope_and_id() -> None:
    """The scope and message id are joined into one key; no split of one string into a
    scope and an id may reach another's record."""
    store = MemoryStore()
    assert await store.claim_message("a:b", "c", "t1") is None
    assert await store.claim_message("a", "b:c", "t2") is None
    assert await store.claim_message("a:", "bc", "t3") is None
    first = await store.find_message("a:b", "c")
    second = await store.find_message("a", "b:c")
    assert first is not None
    assert second is not None
    assert (first.task_id, second.task_id) == ("t1", "t2")
    await store.delete("t2")
    assert await store.find_message("a", "b:c") is None
    assert await store.find_message("a:b", "c") is not None
