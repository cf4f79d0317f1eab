"""Idempotent send, retention and the per-event cost, against real servers and stores."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from parley.server import AgentContext, Retention, agent, create_app
from parley.stores import Store, StoredEvent
from parley.stores.sql import SQLStore
from parley.types import (
    AgentCapabilities,
    AgentCard,
    Artifact,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TextPart,
)
from tests.servers import running
from tests.stores.databases import postgres_engine, sqlite_url

CARD = AgentCard(
    name="counting agent",
    description="Counts its runs.",
    url="",
    version="0.1.0",
    capabilities=AgentCapabilities(streaming=True, push_notifications=False),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[],
)


@contextmanager
def _sqlite(tmp_path: Path) -> Iterator[SQLStore]:
    """A SQLite store, closed after the (threaded) server that used it has stopped."""
    store = SQLStore(sqlite_url(tmp_path))
    try:
        yield store
    finally:
        asyncio.run(store.aclose())


def _counting_app(store: Store, runs: list[str], **options: Any) -> Any:
    @agent
    async def counting(ctx: AgentContext) -> AsyncIterator[str]:
        runs.append(ctx.text)
        await asyncio.sleep(0.05)
        yield f"run {len(runs)}"

    return create_app(counting, CARD, task_store=store, **options)


def _send(text: str, message_id: str, context_id: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "user",
        "messageId": message_id,
        "kind": "message",
        "parts": [{"kind": "text", "text": text}],
    }
    if context_id:
        message["contextId"] = context_id
    return {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}


def test_a_repeated_message_send_returns_the_first_result(tmp_path: Path) -> None:
    runs: list[str] = []
    with _sqlite(tmp_path) as store, running(_counting_app(store, runs)) as base:
        first = httpx.post(f"{base}/", json=_send("hi", "m1", "ctx-1"), timeout=10).json()
        again = httpx.post(f"{base}/", json=_send("hi", "m1", "ctx-1"), timeout=10).json()
        other = httpx.post(f"{base}/", json=_send("hi", "m2", "ctx-1"), timeout=10).json()
    assert again["result"] == first["result"]
    assert first["result"]["status"]["state"] == "completed"
    assert other["result"]["id"] != first["result"]["id"]
    assert runs == ["hi", "hi"]  # m1 ran once, m2 once


def test_copies_sent_at_once_make_one_run(tmp_path: Path) -> None:
    runs: list[str] = []
    with _sqlite(tmp_path) as store, running(_counting_app(store, runs)) as base:

        async def send_all() -> list[Any]:
            async with httpx.AsyncClient(timeout=10) as client:
                replies = await asyncio.gather(
                    *(client.post(f"{base}/", json=_send("x", "m1", "ctx-2")) for _ in range(5))
                )
            return [reply.json()["result"]["id"] for reply in replies]

        ids = asyncio.run(send_all())
    assert len(set(ids)) == 1
    assert runs == ["x"]


def test_retention_removes_expired_tasks(tmp_path: Path) -> None:
    retention = Retention(
        ended=timedelta(seconds=0.3), waiting=timedelta(hours=1), interval=timedelta(seconds=0.1)
    )
    with _sqlite(tmp_path) as store, running(_counting_app(store, [], retention=retention)) as base:
        sent = httpx.post(f"{base}/", json=_send("old", "m1", "ctx-3"), timeout=10).json()
        task_id = sent["result"]["id"]
        get = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task_id}}
        assert "result" in httpx.post(f"{base}/", json=get, timeout=10).json()
        deadline = time.monotonic() + 10
        while "result" in (answer := httpx.post(f"{base}/", json=get, timeout=10).json()):
            assert time.monotonic() < deadline, "the task was never removed"
            time.sleep(0.1)
    assert answer["error"]["code"] == -32001  # TaskNotFoundError


async def _append_chunks(store: Store, chunks: int = 3000) -> None:
    task = Task(id="big", context_id="c", status=TaskStatus(state=TaskState.working))
    await store.append("big", [StoredEvent(1, task)])
    for n in range(chunks):
        event = TaskArtifactUpdateEvent(
            task_id="big",
            context_id="c",
            artifact=Artifact(artifact_id="a", parts=[TextPart(text=f"chunk {n:05d} " * 8)]),
            append=n > 0,
        )
        await store.append("big", [StoredEvent(n + 2, event)])
    snapshot = await store.get("big")
    assert snapshot is not None
    assert snapshot.sequence == chunks + 1
    assert snapshot.task.artifacts is not None
    assert len(snapshot.task.artifacts[0].parts) == chunks


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
async def test_3000_chunks_fold_into_one_artifact(backend: str, tmp_path: Path) -> None:
    """Spec 7.2.4 (append): every chunk of a long artifact is kept, in order."""
    if backend == "sqlite":
        store = SQLStore(sqlite_url(tmp_path))
        await _append_chunks(store)
        await store.aclose()
    else:
        async with postgres_engine() as engine:
            sql = SQLStore(engine)
            try:
                await _append_chunks(sql)
            finally:  # its group writer's drain holds a connection the dispose does not close
                await sql.aclose()
