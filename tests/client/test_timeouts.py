"""Time limits: waiting for an agent is not an error (spec 7.1 blocking send, 7.2 streams)."""

from __future__ import annotations

import pytest

from parley.client import ClientTimeoutError, Timeouts, connect, text_of
from parley.types import Task, TaskState
from tests.client.agents import slow_app
from tests.servers import running

READ = 0.5
SLOW = 1.5  # the agent takes three times the read limit


async def test_blocking_send_outlives_the_read_limit() -> None:
    """Spec 7.1: a blocking message/send waits for the task's end, however long; the
    read limit applies to quick calls only."""
    with running(slow_app(SLOW)) as url:
        async with connect(url, timeouts=Timeouts(read=READ)) as client:
            task = await client.send_message("work")
            assert isinstance(task, Task)
            assert task.status.state is TaskState.completed
            assert text_of(task) == f"done after {SLOW} s"


async def test_stream_outlives_the_read_limit() -> None:
    """Spec 7.2: a stream may stay silent while the agent works."""
    with running(slow_app(SLOW)) as url:
        async with connect(url, timeouts=Timeouts(read=READ)) as client:
            events = [event async for event in client.stream_message("work")]
    assert events[-1].kind == "status-update"


async def test_wait_limit_when_asked_for() -> None:
    """A caller who wants a bound on waiting sets Timeouts.wait."""
    with running(slow_app(SLOW)) as url:
        async with connect(url, timeouts=Timeouts(read=READ, wait=READ)) as client:
            with pytest.raises(ClientTimeoutError):
                await client.send_message("work")
