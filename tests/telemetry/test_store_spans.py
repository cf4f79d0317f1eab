"""Store writes with the real SDK: each task's write a span in its turn, and a group
commit (SQLite, PostgreSQL) a span of its own linked to every write it carries."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from parley.client import connect
from parley.server import create_app
from parley.stores import Store
from parley.stores.sql import SQLStore
from parley.types import Task
from tests.server.agents import ScriptedAgent, card
from tests.stores.databases import postgres_engine, sqlite_url
from tests.telemetry.recording import Recording, recording

SENDS = 20


@pytest.fixture
def recorded() -> Iterator[Recording]:
    yield from recording()


@asynccontextmanager
async def _store(kind: str, directory: Path) -> AsyncIterator[Store]:
    if kind == "sqlite":
        store = SQLStore(sqlite_url(directory))
        try:
            yield store
        finally:
            await store.aclose()
        return
    async with postgres_engine() as engine:
        store = SQLStore(engine)
        try:
            yield store
        finally:
            await store.aclose()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def test_a_group_commit_links_the_writes_it_carries(
    kind: str, tmp_path: Path, recorded: Recording
) -> None:
    async with _store(kind, tmp_path) as store:
        app = create_app(ScriptedAgent(), card(), task_store=store, **recorded.providers)
        async with app.lifespan(), connect(app) as client:
            tasks = await asyncio.gather(*(client.send_message(f"echo {n}") for n in range(SENDS)))
    assert all(isinstance(task, Task) for task in tasks)
    writes = recorded.spans("parley.store.write")
    turns = {
        span.context.span_id: span
        for span in recorded.spans()
        if span.name.startswith("invoke_agent")
    }
    assert writes
    assert all(write.parent is not None and write.parent.span_id in turns for write in writes)
    commits = recorded.spans("parley.store.commit")
    linked = {link.context.span_id for commit in commits for link in commit.links}
    assert {write.context.span_id for write in writes} <= linked
    sizes = [int(str((commit.attributes or {})["parley.store.batch.size"])) for commit in commits]
    assert sum(sizes) >= len(writes)
    assert all(commit.parent is None for commit in commits)  # in no single request's trace
    assert recorded.points("parley.store.write.duration")
    assert recorded.points("parley.store.write.batch_size")
