"""The demo agent's ``count to N`` in the 2025-early dialect: a long task to cancel
("tasks/cancel": the Task with state "canceled"; the stream ends with a final status),
and more than it counts to is refused (``rejected``, which this dialect calls
``failed``). Real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from parley.client import connect
from parley.demo import create_demo_app
from parley.types import Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent
from tests.dialects.early import call, has_no_v0_3_member, request, send_params
from tests.servers import running


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    with running(create_demo_app()) as url:
        yield url


async def test_count_streams_then_cancel_ends_it(demo_url: str) -> None:
    body = request("tasks/sendSubscribe", send_params("count-early", "count to 30", "count"))
    results: list[dict[str, Any]] = []
    async with (
        httpx.AsyncClient(base_url=demo_url, timeout=60) as http,
        http.stream("POST", "/", json=body) as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = response.aiter_lines()
        async for line in lines:
            if line.startswith("data:"):
                results.append(json.loads(line[5:])["result"])
                if "artifact" in results[-1]:
                    break
        cancel = {"id": "count-early", "sessionId": "count"}
        async with httpx.AsyncClient(base_url=demo_url, timeout=60) as other:
            canceled = await call(other, request("tasks/cancel", cancel))
        async for line in lines:
            if line.startswith("data:"):
                results.append(json.loads(line[5:])["result"])
    task = canceled["result"]
    assert task["id"] == "count-early"
    assert task["status"]["state"] == "canceled"
    assert has_no_v0_3_member(task)
    first = next(r["artifact"] for r in results if "artifact" in r)
    assert first["parts"] == [{"type": "text", "text": "1\n"}]
    assert first["index"] == 0
    assert first["append"] is False
    assert results[-1]["status"]["state"] == "canceled"
    assert results[-1]["final"] is True
    assert all(has_no_v0_3_member(result) for result in results)


async def test_count_beyond_the_limit_is_failed_in_this_dialect(demo_url: str) -> None:
    async with httpx.AsyncClient(base_url=demo_url, timeout=60) as http:
        answer = await call(
            http, request("tasks/send", send_params("count-too-far", "count to 301", "count"))
        )
    assert answer["result"]["status"]["state"] == "failed"


async def test_parleys_client_counts_and_cancels_in_the_dialect(demo_url: str) -> None:
    async with connect(demo_url, protocol="2025-early") as client:
        events = client.stream_message("count to 30")
        seen = []
        async for event in events:
            seen.append(event)
            if isinstance(event, TaskArtifactUpdateEvent):
                break
        first = seen[0]
        assert isinstance(first, Task)
        canceled = await client.cancel_task(first.id)
        rest = [event async for event in events]
    assert canceled.status.state == TaskState.canceled
    last = rest[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state == TaskState.canceled
    assert last.final is True
