"""The per-task event log: readers at their own pace, and ``first`` for a blocking wait."""

from __future__ import annotations

import asyncio

from parley.protocol import ends_interaction
from parley.server import EventLog
from parley.types import Event, TaskState, TaskStatus, TaskStatusUpdateEvent


def status(state: TaskState, final: bool = False) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=TaskStatus(state=state), final=final
    )


async def test_first_waits_for_the_event_it_is_asked_for() -> None:
    log = EventLog()
    log.append(status(TaskState.working))
    waiting = asyncio.create_task(log.first(0, ends_interaction))
    await asyncio.sleep(0)
    assert not waiting.done()
    log.append(status(TaskState.working))
    await asyncio.sleep(0)
    assert not waiting.done()
    done = status(TaskState.completed, final=True)
    log.append(done)
    assert await waiting is done


async def test_first_without_a_condition_is_the_next_event_and_none_once_closed() -> None:
    log = EventLog()
    first = status(TaskState.working)
    log.append(first)
    assert await log.first(0) is first
    waiting = asyncio.create_task(log.first(1))
    await asyncio.sleep(0)
    log.close()
    assert await waiting is None


async def test_a_canceled_reader_does_not_disturb_the_others() -> None:
    log = EventLog()
    seen: list[Event] = []

    async def read_all() -> None:
        async for _, event in log.read():
            seen.append(event)

    gone = asyncio.create_task(log.first(0))
    staying = asyncio.create_task(read_all())
    await asyncio.sleep(0)
    gone.cancel()
    await asyncio.sleep(0)
    event = status(TaskState.working)
    log.append(event)
    log.close()
    await staying
    assert gone.cancelled()
    assert seen == [event]
