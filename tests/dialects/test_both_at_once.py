"""A 2025-early client and a v0.3 client on one agent at the same time, each seeing only
its own shapes (docs/dialect-2025-early.md, "How requests are told apart"); and the
race of two requests creating the same client-chosen task id. Real HTTP, bounded."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from parley.client import connect, text_of
from parley.demo import create_demo_app
from parley.types import Task, TaskState
from tests.dialects.early import (
    call,
    early_app,
    has_no_v0_3_member,
    request,
    send_params,
    stream,
    text_message,
)
from tests.schema import validate_wire
from tests.servers import running

ROUNDS = 8
_ids = itertools.count()


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    with running(create_demo_app()) as url:
        yield url


@pytest.fixture
async def http(demo_url: str) -> AsyncIterator[httpx.AsyncClient]:
    limits = httpx.Limits(max_connections=50)
    async with httpx.AsyncClient(base_url=demo_url, timeout=60, limits=limits) as client:
        yield client


def v03_message(text: str, **fields: Any) -> dict[str, Any]:
    return {
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        "messageId": f"m-{next(_ids)}",
        **fields,
    }


def assert_early_shapes(result: dict[str, Any]) -> None:
    assert has_no_v0_3_member(result), result
    for part in _parts(result):
        assert part["type"] in ("text", "file", "data"), part


def _parts(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        for name, item in value.items():
            if name == "parts":
                yield from item
            else:
                yield from _parts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _parts(item)


async def early_report(http: httpx.AsyncClient, round_: int) -> None:
    events = await stream(
        http,
        request("tasks/sendSubscribe", send_params(f"early-report-{round_}", "write a report")),
    )
    results = [event["result"] for event in events]
    for result in results:
        assert_early_shapes(result)
    assert results[-1]["status"]["state"] == "completed"
    assert results[-1]["final"] is True
    chunks = [r["artifact"] for r in results if "artifact" in r]
    assert {chunk["index"] for chunk in chunks} == {0}
    assert [chunk["append"] for chunk in chunks] == [False] + [True] * (len(chunks) - 1)


async def early_flight(http: httpx.AsyncClient, round_: int) -> None:
    task_id, session = f"early-flight-{round_}", f"early-session-{round_}"
    turns = ["book a flight to Helsinki", "from Berlin on 2025-06-01", "yes"]
    states = []
    for text in turns:
        answer = await call(http, request("tasks/send", send_params(task_id, text, session)))
        task = answer["result"]
        assert_early_shapes(task)
        assert task["id"] == task_id
        assert task["sessionId"] == session
        states.append(task["status"]["state"])
    assert states == ["input-required", "input-required", "completed"]
    assert task["artifacts"][0]["parts"][0]["data"]["to"] == "Helsinki"
    assert task["history"][0] == text_message(turns[0])


async def v03_report(http: httpx.AsyncClient) -> None:
    params = {"message": v03_message("write a report")}
    events = await stream(http, request("message/stream", params))
    for event in events:
        validate_wire("SendStreamingMessageSuccessResponse", event)
        assert "sessionId" not in str(event)
    assert events[-1]["result"]["status"]["state"] == "completed"


async def v03_flight(http: httpx.AsyncClient) -> None:
    params: dict[str, Any] = {"message": v03_message("book a flight to Helsinki")}
    answer = await call(http, request("message/send", params))
    for text in ("from Berlin on 2025-06-01", "yes"):
        validate_wire("SendMessageSuccessResponse", answer)
        task = answer["result"]
        message = v03_message(text, taskId=task["id"], contextId=task["contextId"])
        answer = await call(http, request("message/send", {"message": message}))
    validate_wire("SendMessageSuccessResponse", answer)
    assert answer["result"]["status"]["state"] == "completed"
    got = await call(http, request("tasks/get", {"id": answer["result"]["id"]}))
    validate_wire("GetTaskSuccessResponse", got)


async def test_both_dialects_at_once_each_in_its_own_shapes(http: httpx.AsyncClient) -> None:
    """Interleaved streams and multi-turn tasks in both dialects on the demo agent."""
    work = []
    for round_ in range(ROUNDS):
        work += [
            early_report(http, round_),
            early_flight(http, round_),
            v03_report(http),
            v03_flight(http),
        ]
    await asyncio.wait_for(asyncio.gather(*work), 120)


async def test_parleys_client_in_both_protocols_at_once(demo_url: str) -> None:
    """The same Client methods in both protocols against one agent, concurrently."""

    async def book(protocol: str | None) -> Task:
        async with connect(demo_url, protocol=protocol) as client:
            task = await client.send_message("book a flight to Oslo")
            for text in ("from Rome on tomorrow", "yes"):
                assert isinstance(task, Task)
                task = await client.send_message(text, task_id=task.id)
            assert isinstance(task, Task)
            return task

    tasks = await asyncio.wait_for(
        asyncio.gather(*(book(p) for p in ["2025-early", None] * ROUNDS)), 120
    )
    for task in tasks:
        assert task.status.state == TaskState.completed
        assert "Oslo" in str(task.artifacts)
    async with connect(demo_url, protocol="2025-early") as early:
        async for _ in early.stream_message("write a report"):
            pass
        report = await early.send_message("write a report")
    assert isinstance(report, Task)
    assert text_of(report).startswith("# Report")


async def test_concurrent_sends_creating_one_client_chosen_id() -> None:
    """Two or three tasks/send naming the same new id at once: one task is created with
    that id; every other request gets a clear -32602 (or, if it came after the first
    finished setting up, continues or is refused as any message to that task would be);
    never a 500, never two tasks. 25 trials."""
    app, _ = early_app()
    with running(app) as url:
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            for trial in range(25):
                task_id = f"race-{trial}"
                senders = 2 + trial % 2
                answers = await asyncio.wait_for(
                    asyncio.gather(
                        *(
                            call(http, request("tasks/send", send_params(task_id, f"m{n}")))
                            for n in range(senders)
                        )
                    ),
                    30,
                )
                results = [a["result"] for a in answers if "result" in a]
                errors = [a["error"] for a in answers if "error" in a]
                assert results, answers
                assert all(error["code"] == -32602 for error in errors), errors
                assert all(result["id"] == task_id for result in results)
                found = await call(
                    http, request("tasks/get", {"id": task_id, "sessionId": "session-1"})
                )
                users = [m for m in found["result"]["history"] if m["role"] == "user"]
                assert len(users) == len(results)
