"""The per-task event log: readers at their own pace, and ``first`` for a blocking wait."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from parley.protocol import ends_interaction
from parley.server import EventLog
from parley.stores import StoredEvent
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


async def test_take_gives_every_event_ready_and_stops_after_until() -> None:
    log = EventLog()
    events = [status(TaskState.working) for _ in range(3)]
    for event in events:
        log.append(event)
    reader = log.read(1, ends_interaction)
    assert reader.take() == [StoredEvent(2, events[1]), StoredEvent(3, events[2])]
    assert reader.take() == []
    waiting = asyncio.create_task(reader.wait())
    await asyncio.sleep(0)
    assert not waiting.done()
    done, after = status(TaskState.completed, final=True), status(TaskState.working)
    log.append(done)
    log.append(after)
    await waiting
    assert reader.take() == [StoredEvent(4, done)]  # never past the event that ends the reading
    assert reader.done
    assert reader.take() == []
    await reader.wait()  # returns at once: the reading ended


async def test_a_failed_log_raises_its_error_after_every_event_before_it() -> None:
    log = EventLog(start=5)
    event = status(TaskState.working)
    log.append(event)
    log.fail(RuntimeError("store gone"))
    taking, iterating = log.read(), log.read()
    assert taking.take() == [StoredEvent(6, event)]
    with pytest.raises(RuntimeError, match="store gone"):
        taking.take()
    assert await iterating.__anext__() == (6, event)
    with pytest.raises(RuntimeError, match="store gone"):
        await iterating.__anext__()
    assert taking.done
    assert iterating.done


async def test_extend_numbers_every_event_and_wakes_each_kind_of_reader() -> None:
    log = EventLog(start=4)
    waiting_for_end = asyncio.create_task(log.first(4, ends_interaction))
    waiting_for_next = asyncio.create_task(log.first(4))
    canceled = asyncio.create_task(log.first(4, ends_interaction))
    await asyncio.sleep(0)
    canceled.cancel()
    await asyncio.sleep(0)
    working, done = status(TaskState.working), status(TaskState.completed, final=True)
    assert log.extend([StoredEvent(5, working), StoredEvent(6, done)]) == 6
    assert await waiting_for_next is working
    assert await waiting_for_end is done
    assert [(sequence, event) async for sequence, event in _until_closed(log)] == [
        (5, working),
        (6, done),
    ]


async def _until_closed(log: EventLog) -> AsyncIterator[tuple[int, Event]]:
    log.close()
    async for item in log.read(4):
        yield item


def test_extend_refuses_events_that_do_not_follow_the_last() -> None:
    log = EventLog(start=2)
    log.append(status(TaskState.working))
    for sequence in (3, 5):  # a number taken, a gap
        with pytest.raises(ValueError, match=f"event {sequence} does not follow 3"):
            log.extend([StoredEvent(sequence, status(TaskState.working))])
    assert log.last_sequence == 3


def test_a_logged_event_is_encoded_once_for_everyone_who_sends_it() -> None:
    event = status(TaskState.working)
    stored = StoredEvent(1, event)
    assert stored.to_json() == event.to_json()
    assert stored.to_json() is stored.to_json()
    read_back = StoredEvent(1, event, wire=b'{"as":"stored"}')
    assert read_back.to_json() == b'{"as":"stored"}'
    assert read_back == stored  # the JSON is a cache, not part of the entry
