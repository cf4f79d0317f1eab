"""Retention removes exactly the expired tasks, a batch at a time, while sends go on;
a server starts on a store that already holds many tasks."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import update

from parley.server import AgentContext, Retention, agent, create_app
from parley.server.tasks._recovery import RESTARTED
from parley.server.tasks._retention import RetentionJob
from parley.stores import Append, Store, StoredEvent
from parley.stores.sql import SQLStore
from parley.stores.sql._schema import tasks
from parley.types import AgentCapabilities, AgentCard, Task, TaskState, TaskStatus
from tests.servers import running
from tests.stores.databases import served_store, sqlite_url

SQL_STORES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
CARD = AgentCard(
    name="echo",
    description="Echoes.",
    url="",
    version="0.1.0",
    capabilities=AgentCapabilities(),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[],
)


def _task(task_id: str, state: TaskState) -> Task:
    return Task(id=task_id, context_id=f"ctx-{task_id}", status=TaskStatus(state=state))


async def _stored(store: Store, task_id: str, state: TaskState) -> None:
    await store.claim_message(f"ctx-{task_id}", f"m-{task_id}", task_id)
    await store.append(task_id, [StoredEvent(1, _task(task_id, state))])


async def test_expire_with_a_limit_removes_exactly_the_expired_a_batch_at_a_time(
    store: Store,
) -> None:
    old = {f"done-{n}": TaskState.completed for n in range(23)}
    old |= {f"asked-{n}": TaskState.input_required for n in range(4)}
    kept = {f"run-{n}": TaskState.working for n in range(3)}
    for task_id, state in {**old, **kept}.items():
        await _stored(store, task_id, state)
    await store.claim_message("ctx-x", "m-reply", "never-stored")
    await asyncio.sleep(0.01)
    cutoff = datetime.now(UTC)
    await asyncio.sleep(0.01)
    recent = {f"new-{n}": TaskState.completed for n in range(5)}
    for task_id, state in recent.items():
        await _stored(store, task_id, state)

    counts: list[int] = []
    while not counts or counts[-1] == 5:
        counts.append(await store.expire(ended_before=cutoff, waiting_before=cutoff, limit=5))
    assert counts == [5, 5, 5, 5, 5, 2]
    for task_id in old:
        assert await store.get(task_id) is None
        assert await store.events(task_id) == []
        assert await store.find_message(f"ctx-{task_id}", f"m-{task_id}") is None
    for task_id in [*kept, *recent]:
        assert await store.get(task_id) is not None
        assert await store.find_message(f"ctx-{task_id}", f"m-{task_id}") is not None
    assert await store.find_message("ctx-x", "m-reply") is None  # went with the last call
    assert await store.expire(ended_before=cutoff, waiting_before=cutoff, limit=5) == 0


class _Counted(SQLStore):
    """A SQL store that notes each ``expire`` call's limit and result."""

    calls: list[tuple[int | None, int]]

    async def expire(self, **bounds: Any) -> int:
        removed = await super().expire(**bounds)
        self.calls.append((bounds.get("limit"), removed))
        return removed


@contextmanager
def _counted(kind: str, tmp_path: Path) -> Iterator[_Counted]:
    with served_store(kind, tmp_path) as plain:
        assert isinstance(plain, SQLStore)
        store = _Counted(plain.engine)
        store.calls = []
        try:
            yield store
        finally:  # after the server: the SQLite writer's thread stops
            asyncio.run(store.aclose())


async def _age(store: SQLStore, task_ids: list[str], days: float) -> None:
    engine = await store._connect()
    async with engine.begin() as connection:
        await connection.execute(
            update(tasks)
            .where(tasks.c.id.in_(task_ids))
            .values(touched=tasks.c.touched - days * 86_400)
        )


@agent
async def echo(ctx: AgentContext) -> AsyncIterator[str]:
    yield ctx.text


def _send(client: httpx.Client, base: str, n: int) -> dict[str, Any]:
    message = {
        "role": "user",
        "messageId": f"send-{n}",
        "kind": "message",
        "parts": [{"kind": "text", "text": f"hello {n}"}],
    }
    body = {"jsonrpc": "2.0", "id": n, "method": "message/send", "params": {"message": message}}
    answer: dict[str, Any] = client.post(f"{base}/", json=body, timeout=30).json()
    return answer


def _get(client: httpx.Client, base: str, task_id: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": task_id}}
    answer: dict[str, Any] = client.post(f"{base}/", json=body, timeout=30).json()
    return answer


@pytest.mark.parametrize("kind", SQL_STORES)
def test_retention_removes_expired_tasks_in_batches_while_sends_go_on(
    kind: str, tmp_path: Path
) -> None:
    expired = [f"old-{n}" for n in range(120)]
    with _counted(kind, tmp_path) as store:

        async def fill() -> None:
            for task_id in expired:
                await _stored(store, task_id, TaskState.completed)
            await _stored(store, "old-but-running", TaskState.working)
            await _stored(store, "fresh", TaskState.completed)
            await _age(store, [*expired, "old-but-running"], days=8)

        asyncio.run(fill())
        retention = Retention(batch=10, pause=timedelta(milliseconds=10))
        app = create_app(echo, CARD, task_store=store, retention=retention)
        with running(app) as base, httpx.Client() as client:
            sent = [_send(client, base, n) for n in range(40)]  # while the sweep runs
            deadline = time.monotonic() + 30
            while sum(removed for _, removed in store.calls) < len(expired):
                assert time.monotonic() < deadline, f"retention stopped at {store.calls}"
                time.sleep(0.05)
            answers = {
                task_id: _get(client, base, task_id)
                for task_id in ["fresh", *expired[:3], *expired[-3:]]
            }
            later = [_get(client, base, reply["result"]["id"]) for reply in sent]
        assert [limit for limit, _ in store.calls] == [10] * len(store.calls)
        assert [removed for _, removed in store.calls] == [10] * 12 + [0]
        assert answers["fresh"]["result"]["status"]["state"] == "completed"
        for task_id in [*expired[:3], *expired[-3:]]:
            assert answers[task_id]["error"]["code"] == -32001  # TaskNotFoundError
        assert all(reply["result"]["status"]["state"] == "completed" for reply in sent)
        assert all(answer["result"]["status"]["state"] == "completed" for answer in later)

        async def left() -> Any:
            running_task = await store.get("old-but-running")
            return running_task, [await store.get(task_id) for task_id in expired]

        running_task, gone = asyncio.run(left())
        assert gone == [None] * len(expired)
        # a task running when the server started is failed by recovery, not removed
        assert running_task is not None
        assert running_task.task.status.state == TaskState.failed


@pytest.mark.parametrize("kind", SQL_STORES)
def test_a_server_starts_on_a_store_with_many_tasks(kind: str, tmp_path: Path) -> None:
    finished = [f"done-{n}" for n in range(2_000)]
    left_running = [f"running-{n}" for n in range(3)]
    with served_store(kind, tmp_path) as store:

        async def fill() -> None:
            states = {task_id: TaskState.completed for task_id in finished}
            states |= {task_id: TaskState.working for task_id in left_running}
            parts = [
                Append(task_id, [StoredEvent(1, _task(task_id, state))])
                for task_id, state in states.items()
            ]
            for start in range(0, len(parts), 500):
                await store.append_many(parts[start : start + 500])

        asyncio.run(fill())
        app = create_app(echo, CARD, task_store=store)
        with running(app) as base, httpx.Client() as client:
            reply = _send(client, base, 1)
            states = {
                task_id: _get(client, base, task_id)["result"]["status"]
                for task_id in [*left_running, finished[0], finished[-1]]
            }
    assert reply["result"]["status"]["state"] == "completed"
    for task_id in left_running:
        assert states[task_id]["state"] == "failed"
        assert RESTARTED in str(states[task_id]["message"])
    assert states[finished[0]]["state"] == states[finished[-1]]["state"] == "completed"


def test_retention_refuses_an_empty_batch() -> None:
    with pytest.raises(ValueError, match="batch must be at least 1"):
        Retention(batch=0)


async def test_the_job_sweeps_every_store_in_batches(store: Store) -> None:
    for n in range(7):
        await _stored(store, f"t{n}", TaskState.completed)
    await asyncio.sleep(0.01)
    job = RetentionJob(store, Retention(ended=timedelta(0), batch=3, pause=timedelta(0)))
    assert await job.sweep() == 7
    assert [await store.get(f"t{n}") for n in range(7)] == [None] * 7


async def test_a_waiting_task_resumed_in_the_sweeps_batch_is_kept(tmp_path: Path) -> None:
    """On SQLite the sweep finds expired tasks in its own write of the group writer: a
    waiting task whose resume was queued first (the same turn of the loop: the same
    transaction) is no longer expired there, and stays; the others go."""
    store = SQLStore(sqlite_url(tmp_path))
    try:
        asked = [f"asked-{n}" for n in range(8)]
        for task_id in asked:
            await _stored(store, task_id, TaskState.input_required)
        await asyncio.sleep(0.01)
        cutoff = datetime.now(UTC)
        await asyncio.sleep(0.01)
        resumed = asked[::2]
        resumes = [
            store.append(task_id, [StoredEvent(2, _task(task_id, TaskState.working))])
            for task_id in resumed
        ]
        *_, removed = await asyncio.gather(
            *resumes, store.expire(ended_before=cutoff, waiting_before=cutoff)
        )
        assert removed == len(asked) - len(resumed)
        for task_id in asked:
            kept = await store.get(task_id)
            if task_id in resumed:
                assert kept is not None
                assert kept.task.status.state == TaskState.working
            else:
                assert kept is None
    finally:
        await store.aclose()
